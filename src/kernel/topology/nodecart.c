#include "topology/nodecart.h"

#include "check.h"

/* Depth-first over the divisors of the remaining node size for dimension d. */
static void search(int d, int ndims, const int dims[], int node_size, int remaining, int *box,
                   int *best, long long *best_faces)
{
    if (d == ndims) {
        if (remaining != 1)
            return;
        long long faces = 0;
        for (int k = 0; k < ndims; k++)
            faces += node_size / box[k];
        if (*best_faces < 0 || faces < *best_faces) {
            *best_faces = faces;
            for (int k = 0; k < ndims; k++)
                best[k] = box[k];
        }
        return;
    }
    for (int f = remaining; f >= 1; f--)
        if (remaining % f == 0 && dims[d] % f == 0) {
            box[d] = f;
            search(d + 1, ndims, dims, node_size, remaining / f, box, best, best_faces);
        }
}

int nodecart_intradims(int ndims, const int dims[], int node_size, int intradims[])
{
    int box[MAX_DIMS];
    long long best_faces = -1;
    search(0, ndims, dims, node_size, node_size, box, intradims, &best_faces);
    return best_faces < 0 ? -1 : 0;
}

int nodecart_greedy_intradims(int ndims, const int dims[], int node_size, int intradims[])
{
    int remain[MAX_DIMS];
    for (int d = 0; d < ndims; d++) {
        intradims[d] = 1;
        remain[d] = dims[d];
    }
    /* Dividing out the smallest primes first leaves the factors to distribute, largest last:
       collected first, then taken from the end. A prime factor of an int is below 2^31, and an
       int has at most 31 of them. */
    int factors[31], count = 0;
    for (int n = node_size, p = 2; n > 1; p++) {
        if ((long long)p * p > n)
            p = n;
        while (n % p == 0) {
            factors[count++] = p;
            n /= p;
        }
    }
    while (count > 0) {
        const int fac = factors[--count];
        int j = -1;
        /* ">=" takes the last of equal remaining sizes: the paper says only "larger than
           remaindims[k] for any k", and the last is the choice that gives its Table 3 row for
           the 3-D grid MPI_Dims_create returns (32 x 32 x 16: box 2 x 4 x 2). */
        for (int d = 0; d < ndims; d++)
            if (remain[d] % fac == 0 && (j < 0 || remain[d] >= remain[j]))
                j = d;
        if (j < 0)
            return -1;
        intradims[j] *= fac;
        remain[j] /= fac;
    }
    return 0;
}

/* The box of the experiment's constructor. */
static int constructor_intradims(const struct topology *topo, int intradims[])
{
    if (topo->constructor == CONSTRUCTOR_NODECART_GREEDY)
        return nodecart_greedy_intradims(topo->ndims, topo->dims, topo->node->node_size,
                                         intradims);
    return nodecart_intradims(topo->ndims, topo->dims, topo->node->node_size, intradims);
}

const char *nodecart_fallback(const struct topology *topo)
{
    const struct node_info *node = topo->node;
    for (int n = 1; n < node->node_count; n++)
        if (node->ranks_per_node[n] != node->ranks_per_node[0])
            return "nodecart fell back to MPI_Cart_create: nodes differ in size";
    int intradims[MAX_DIMS];
    if (constructor_intradims(topo, intradims) != 0)
        return "nodecart fell back to MPI_Cart_create: the node size has no factorisation into "
               "divisors of dims";
    /* Gropp (§4): reorder = false is how a user keeps the rank order, e.g. one chosen by an
       external rank-mapping tool. */
    if (!topo->reorder)
        return "nodecart with reorder 0 keeps the rank order (MPI_Cart_create, reorder 0)";
    return NULL;
}

/* Row-major coordinates of rank in a grid of dims, and back. */
static void coords_of(int ndims, const int dims[], int rank, int coords[])
{
    for (int d = ndims - 1; d >= 0; d--) {
        coords[d] = rank % dims[d];
        rank /= dims[d];
    }
}

static int rank_of(int ndims, const int dims[], const int coords[])
{
    int rank = 0;
    for (int d = 0; d < ndims; d++)
        rank = rank * dims[d] + coords[d];
    return rank;
}

void nodecart_create(const struct topology *topo, MPI_Comm world, MPI_Comm *out)
{
    const struct node_info *node = topo->node;
    if (nodecart_fallback(topo)) {
        MPI_CHECK(MPI_Cart_create(world, topo->ndims, topo->dims, topo->periods, topo->reorder,
                                  out));
        return;
    }
    /* node_info is Gropp's node communicator and leaders, computed once per run (he caches
       them on the communicator as an attribute): the node's index is its leader's rank. */
    const int nd = topo->ndims;
    int intradims[MAX_DIMS], interdims[MAX_DIMS], inter[MAX_DIMS], intra[MAX_DIMS],
        coords[MAX_DIMS];
    constructor_intradims(topo, intradims);
    for (int d = 0; d < nd; d++)
        interdims[d] = topo->dims[d] / intradims[d];
    coords_of(nd, interdims, node->node_index, inter);
    coords_of(nd, intradims, node->node_rank, intra);
    for (int d = 0; d < nd; d++)
        coords[d] = inter[d] * intradims[d] + intra[d];
    /* Ranks in the order of their grid positions; MPI_Cart_create without reordering then
       attaches the grid (and the neighbourhood the collectives use) to exactly that order. */
    MPI_Comm ordered;
    MPI_CHECK(MPI_Comm_split(world, 0, rank_of(nd, topo->dims, coords), &ordered));
    MPI_CHECK(MPI_Cart_create(ordered, nd, topo->dims, topo->periods, 0, out));
    MPI_CHECK(MPI_Comm_free(&ordered));
}
