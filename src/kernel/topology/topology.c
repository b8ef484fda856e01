#include "topology/topology.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "topology/dims.h"
#include "topology/nodecart.h"
#include "topology/random.h"

long long topology_max_degree(const struct experiment *exp, int nprocs)
{
    switch (exp->topology) {
    case TOPO_CART:
        return 2LL * exp->ndim;
    case TOPO_VONNEUMANN: /* bounded by the Moore neighbourhood that contains it */
    case TOPO_MOORE: {
        long long edge = 2LL * exp->radius + 1, points = 1;
        for (int d = 0; d < exp->ndim; d++) {
            if (points > INT32_MAX / edge)
                return INT32_MAX;
            points *= edge;
        }
        return points - 1;
    }
    case TOPO_FULL:
        return nprocs;
    default:
        return 0;
    }
}

/* Offsets of the neighbourhood, ndims ints each, in FMAJ (dimension 0 changes slowest) or LMAJ
   (dimension ndims-1 changes slowest) order. Returns how many. */
static int stencil_offsets(const struct experiment *exp, int *offsets)
{
    const int r = exp->radius, edge = 2 * r + 1, nd = exp->ndim;
    long long points = 1;
    for (int d = 0; d < nd; d++)
        points *= edge;
    int n = 0;
    for (long long idx = 0; idx < points; idx++) {
        int o[MAX_DIMS];
        long long rest = idx;
        int manhattan = 0;
        /* Decode idx with the slowest-changing dimension as the most significant digit. */
        for (int k = nd - 1; k >= 0; k--) {
            int d = exp->ordering == ORDER_LMAJ ? nd - 1 - k : k;
            o[d] = (int)(rest % edge) - r;
            rest /= edge;
            manhattan += abs(o[d]);
        }
        if (manhattan == 0 || (exp->topology == TOPO_VONNEUMANN && manhattan > r))
            continue;
        memcpy(offsets + (size_t)n * nd, o, (size_t)nd * sizeof *o);
        n++;
    }
    return n;
}

/* Rank of coords + sign*offset in the intermediate Cartesian communicator, or -1 when the
   target lies across a non-periodic border. */
static int stencil_target(const struct topology *topo, MPI_Comm cart, const int *coords,
                          const int *offset, int sign)
{
    int target[MAX_DIMS];
    for (int d = 0; d < topo->ndims; d++) {
        int c = coords[d] + sign * offset[d];
        if (!topo->periods[d] && (c < 0 || c >= topo->dims[d]))
            return -1;
        target[d] = ((c % topo->dims[d]) + topo->dims[d]) % topo->dims[d];
    }
    int rank;
    MPI_CHECK(MPI_Cart_rank(cart, target, &rank));
    return rank;
}

static void plan_stencil(const struct experiment *exp, MPI_Comm world, struct topology *topo)
{
    MPI_Comm cart;
    int rank, coords[MAX_DIMS];
    MPI_CHECK(MPI_Comm_rank(world, &rank));
    MPI_CHECK(MPI_Cart_create(world, topo->ndims, topo->dims, topo->periods, 0, &cart));
    MPI_CHECK(MPI_Cart_coords(cart, rank, topo->ndims, coords));

    long long max_points = topology_max_degree(exp, 0);
    int *offsets = xmalloc((size_t)max_points * (size_t)topo->ndims * sizeof *offsets);
    int n = stencil_offsets(exp, offsets);
    if (exp->ordering == ORDER_RAND) {
        struct random rng = random_seeded(exp->exp_id, rank);
        random_shuffle_blocks(&rng, offsets, n, topo->ndims);
    }
    struct neighbours *plan = &topo->plan;
    plan->sources = xmalloc((size_t)n * sizeof *plan->sources);
    plan->destinations = xmalloc((size_t)n * sizeof *plan->destinations);
    plan->indegree = plan->outdegree = 0;
    for (int i = 0; i < n; i++) {
        const int *o = offsets + (size_t)i * topo->ndims;
        int dest = stencil_target(topo, cart, coords, o, +1);
        int src = stencil_target(topo, cart, coords, o, -1);
        if (dest >= 0)
            plan->destinations[plan->outdegree++] = dest;
        if (src >= 0)
            plan->sources[plan->indegree++] = src;
    }
    free(offsets);
    MPI_CHECK(MPI_Comm_free(&cart));
}

/* LINEAR: sources ascending from the process itself, destinations descending, modulo P.
   RAND: both permuted independently. */
static void plan_full(const struct experiment *exp, MPI_Comm world, struct topology *topo)
{
    int rank, size;
    MPI_CHECK(MPI_Comm_rank(world, &rank));
    MPI_CHECK(MPI_Comm_size(world, &size));
    struct neighbours *plan = &topo->plan;
    plan->indegree = plan->outdegree = size;
    plan->sources = xmalloc((size_t)size * sizeof *plan->sources);
    plan->destinations = xmalloc((size_t)size * sizeof *plan->destinations);
    for (int i = 0; i < size; i++) {
        plan->sources[i] = (rank + i) % size;
        plan->destinations[i] = (rank - i + size) % size;
    }
    if (exp->ordering == ORDER_RAND) {
        struct random rng = random_seeded(exp->exp_id, rank);
        random_shuffle_blocks(&rng, plan->sources, size, 1);
        random_shuffle_blocks(&rng, plan->destinations, size, 1);
    }
}

/* GCC 11+ sees MPI_UNWEIGHTED (a tiny sentinel array in Open MPI's mpi.h) as an array read out
   of bounds through the prototype's array parameters: a false -Wstringop-overread. */
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 11
#define SILENCE_UNWEIGHTED_BEGIN                                                               \
    _Pragma("GCC diagnostic push") _Pragma("GCC diagnostic ignored \"-Wstringop-overread\"")
#define SILENCE_UNWEIGHTED_END _Pragma("GCC diagnostic pop")
#else
#define SILENCE_UNWEIGHTED_BEGIN
#define SILENCE_UNWEIGHTED_END
#endif

void topology_construct(const struct topology *topo, MPI_Comm world, MPI_Comm *out)
{
    const struct neighbours *plan = &topo->plan;
    switch (topo->constructor) {
    case CONSTRUCTOR_CART:
        MPI_CHECK(MPI_Cart_create(world, topo->ndims, topo->dims, topo->periods, topo->reorder,
                                  out));
        return;
    case CONSTRUCTOR_GRAPH: {
        int rank, degree = plan->outdegree;
        MPI_CHECK(MPI_Comm_rank(world, &rank));
        SILENCE_UNWEIGHTED_BEGIN
        MPI_CHECK(MPI_Dist_graph_create(world, 1, &rank, &degree, plan->destinations,
                                        MPI_UNWEIGHTED, MPI_INFO_NULL, topo->reorder, out));
        SILENCE_UNWEIGHTED_END
        return;
    }
    case CONSTRUCTOR_GRAPH_ADJ:
        SILENCE_UNWEIGHTED_BEGIN
        MPI_CHECK(MPI_Dist_graph_create_adjacent(world, plan->indegree, plan->sources,
                                                 MPI_UNWEIGHTED, plan->outdegree,
                                                 plan->destinations, MPI_UNWEIGHTED,
                                                 MPI_INFO_NULL, topo->reorder, out));
        SILENCE_UNWEIGHTED_END
        return;
    case CONSTRUCTOR_NODECART:
    case CONSTRUCTOR_NODECART_GREEDY:
        nodecart_create(topo, world, out);
        return;
    default:
        fail_abort("constructor %d has no implementation", (int)topo->constructor);
    }
}

static void query_neighbours(MPI_Comm comm, struct neighbours *nb)
{
    int status;
    MPI_CHECK(MPI_Topo_test(comm, &status));
    if (status == MPI_CART) {
        int ndims;
        MPI_CHECK(MPI_Cartdim_get(comm, &ndims));
        nb->indegree = nb->outdegree = 2 * ndims;
        nb->sources = xmalloc((size_t)nb->indegree * sizeof *nb->sources);
        nb->destinations = xmalloc((size_t)nb->outdegree * sizeof *nb->destinations);
        /* MPI's order for Cartesian neighbourhoods: per dimension, the - then the + neighbour. */
        for (int d = 0; d < ndims; d++) {
            MPI_CHECK(MPI_Cart_shift(comm, d, 1, &nb->sources[2 * d], &nb->sources[2 * d + 1]));
            nb->destinations[2 * d] = nb->sources[2 * d];
            nb->destinations[2 * d + 1] = nb->sources[2 * d + 1];
        }
        return;
    }
    int weighted;
    MPI_CHECK(MPI_Dist_graph_neighbors_count(comm, &nb->indegree, &nb->outdegree, &weighted));
    nb->sources = xmalloc((size_t)nb->indegree * sizeof *nb->sources);
    nb->destinations = xmalloc((size_t)nb->outdegree * sizeof *nb->destinations);
    /* Output weight arrays instead of MPI_UNWEIGHTED: their contents are unused. */
    int *weights = xmalloc((size_t)(nb->indegree + nb->outdegree) * sizeof *weights);
    MPI_CHECK(MPI_Dist_graph_neighbors(comm, nb->indegree, nb->sources, weights, nb->outdegree,
                                       nb->destinations, weights + nb->indegree));
    free(weights);
}

void topology_create(const struct experiment *exp, MPI_Comm world, const struct node_info *node,
                     struct topology *topo)
{
    memset(topo, 0, sizeof *topo);
    topo->kind = exp->topology;
    topo->constructor = exp->constructor;
    topo->reorder = exp->reorder;
    topo->node = node;
    if (exp->topology == TOPO_CART || exp->topology == TOPO_VONNEUMANN ||
        exp->topology == TOPO_MOORE) {
        int size;
        MPI_CHECK(MPI_Comm_size(world, &size));
        topo->ndims = exp->ndim;
        if (dims_create(size, exp->ndim, topo->dims) != 0)
            fail_abort("cannot factor %d processes into %d dimensions", size, exp->ndim);
        for (int d = 0; d < exp->ndim; d++)
            topo->periods[d] = d >= exp->nfin;
    }
    if (exp->topology == TOPO_VONNEUMANN || exp->topology == TOPO_MOORE)
        plan_stencil(exp, world, topo);
    else if (exp->topology == TOPO_FULL)
        plan_full(exp, world, topo);

    if (topo->constructor == CONSTRUCTOR_NODECART ||
        topo->constructor == CONSTRUCTOR_NODECART_GREEDY)
        topo->note = nodecart_fallback(topo);
    topology_construct(topo, world, &topo->comm);
    query_neighbours(topo->comm, &topo->nb);
    int order;
    MPI_CHECK(MPI_Comm_compare(world, topo->comm, &order));
    topo->reordered = order != MPI_CONGRUENT && order != MPI_IDENT;
}

void topology_free(struct topology *topo)
{
    MPI_CHECK(MPI_Comm_free(&topo->comm));
    free(topo->plan.sources);
    free(topo->plan.destinations);
    free(topo->nb.sources);
    free(topo->nb.destinations);
}

static void print_ranks(FILE *out, const int *ranks, int n)
{
    fputc('\t', out);
    for (int i = 0; i < n; i++) {
        if (i)
            fputc(',', out);
        if (ranks[i] == MPI_PROC_NULL)
            fputs("null", out);
        else
            fprintf(out, "%d", ranks[i]);
    }
}

void topology_dump(FILE *out, const struct experiment *exp, const struct topology *topo)
{
    /* Gathered over the world, so that world rank 0 prints every line (after the header it
       printed); comm's rank 0 may be another process when reorder moved ranks. */
    int rank, world_rank, size;
    MPI_CHECK(MPI_Comm_rank(topo->comm, &rank));
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &world_rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    const int mine[3] = {rank, topo->nb.indegree, topo->nb.outdegree};
    int *heads = world_rank == 0 ? xmalloc(3 * (size_t)size * sizeof *heads) : NULL;
    MPI_CHECK(MPI_Gather(mine, 3, MPI_INT, heads, 3, MPI_INT, 0, MPI_COMM_WORLD));
    const int length = topo->nb.indegree + topo->nb.outdegree;
    int *lists = xmalloc((size_t)length * sizeof *lists);
    for (int i = 0; i < topo->nb.indegree; i++)
        lists[i] = topo->nb.sources[i];
    for (int i = 0; i < topo->nb.outdegree; i++)
        lists[topo->nb.indegree + i] = topo->nb.destinations[i];
    int *lengths = NULL, *displs = NULL, *all = NULL, *world_of = NULL;
    if (world_rank == 0) {
        lengths = xmalloc((size_t)size * sizeof *lengths);
        displs = xmalloc((size_t)size * sizeof *displs);
        world_of = xmalloc((size_t)size * sizeof *world_of);
        long long total = 0;
        for (int w = 0; w < size; w++) {
            lengths[w] = heads[3 * w + 1] + heads[3 * w + 2];
            displs[w] = (int)total;
            total += lengths[w];
            world_of[heads[3 * w]] = w;
        }
        if (total > INT32_MAX)
            fail_abort("--dump-topology: %lld neighbours are too many to gather", total);
        all = xmalloc((size_t)total * sizeof *all);
    }
    MPI_CHECK(MPI_Gatherv(lists, length, MPI_INT, all, lengths, displs, MPI_INT, 0,
                          MPI_COMM_WORLD));
    if (world_rank == 0) {
        for (int r = 0; r < size; r++) {
            const int w = world_of[r], *head = heads + 3 * w;
            fprintf(out, "%lld\t%d\t%d", (long long)exp->exp_id, r, w);
            print_ranks(out, all + displs[w], head[1]);
            print_ranks(out, all + displs[w] + head[1], head[2]);
            fputc('\n', out);
        }
        fflush(out);
    }
    free(heads);
    free(lists);
    free(lengths);
    free(displs);
    free(world_of);
    free(all);
}
