/* Collective mock-ups (Träff/Gropp/Thakur 2010, Hunold's MPINPC, Manwade & Kulkarni, Parker
   et al.): <op>_as_<how> does exactly the job of <op> with other MPI operations, with <op>'s
   buffers, msg_size meaning and --verify expectations: each setup starts with <op>'s own setup
   and adds only private scratch (struct mockup_state), so the same checks prove the same job.
   Those that libmpiguide-tune can run in place of a collective are implemented once in
   src/mockups (mockups.h), with MPI arguments; their run callbacks here only pass the
   context's buffers and scratch, so --verify checks the code the tuning library runs. */
#include "ops/ops_mockup.h"

#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "mockups.h"
#include "ops/op_buffers.h"
#include "ops/op_split.h"
#include "ops/ops_collective.h"

struct mockup_state {
    unsigned char *tmp;    /* scratch, from ctx->buffers */
    MPI_Comm graph;        /* the full graph of the neighbourhood-collective mock-ups */
    int *counts, *displs;  /* per-rank vectors in elements */
    size_t chunk;          /* elements per part of a split buffer */
};

static struct mockup_state *mockup_state_new(struct op_context *ctx)
{
    struct mockup_state *mock = xcalloc(1, sizeof *mock);
    mock->graph = MPI_COMM_NULL;
    ctx->state = mock;
    return mock;
}

void mockup_free(struct op_context *ctx)
{
    struct mockup_state *mock = ctx->state;
    if (!mock)
        return;
    if (mock->graph != MPI_COMM_NULL)
        MPI_CHECK(MPI_Comm_free(&mock->graph));
    free(mock->counts);
    free(mock->displs);
    free(mock);
    ctx->state = NULL;
}

static int is_root(const struct op_context *ctx)
{
    return ctx->rank == ctx->root;
}

/* Bytes of the whole per-process vector of a per_process op: size blocks. */
static size_t all_blocks(const struct op_context *ctx)
{
    return (size_t)ctx->size * ctx->block;
}

/* State with one zeroed scratch buffer. */
static struct mockup_state *with_tmp(struct op_context *ctx, size_t bytes)
{
    struct mockup_state *mock = mockup_state_new(ctx);
    mock->tmp = op_alloc_scratch(ctx, bytes);
    return mock;
}

/* gather_as_reduce, allgather_as_allreduce: this rank's block in an otherwise zeroed vector of
   size blocks, so a bitwise OR over ranks assembles the gathered vector. MPI_BOR on MPI_BYTE
   keeps every bit pattern (a float sum would not keep NaN payloads or -0). */
static void place_own_block(const struct op_context *ctx, unsigned char *vec)
{
    memset(vec, 0, all_blocks(ctx));
    memcpy(vec + (size_t)ctx->rank * ctx->block, ctx->sendbuf, ctx->block);
}

/* ---- bcast ------------------------------------------------------------------------------ */

/* Only the root contributes: every count but the root's is 0, all displacements 0. */
void bcast_as_allgatherv_setup(struct op_context *ctx)
{
    bcast_setup(ctx);
    struct mockup_state *mock = mockup_state_new(ctx);
    mock->counts = xcalloc((size_t)ctx->size, sizeof *mock->counts);
    mock->displs = xcalloc((size_t)ctx->size, sizeof *mock->displs);
    mock->counts[ctx->root] = ctx->count;
}

void bcast_as_allgatherv_run(struct op_context *ctx)
{
    struct mockup_state *mock = ctx->state;
    MPI_CHECK(mockup_bcast_as_allgatherv(ctx->recvbuf, ctx->count, ctx->dtype, ctx->root,
                                         ctx->comm, mock->counts, mock->displs));
}

/* The buffer is padded to size equal parts (zeros past msg_size), so any msg_size works. */
void bcast_as_scatter_allgather_setup(struct op_context *ctx)
{
    bcast_setup(ctx);
    struct mockup_state *mock = mockup_state_new(ctx);
    mock->chunk = split_chunk((size_t)ctx->count, ctx->size);
    op_pad_buffers(ctx, 0, (size_t)ctx->size * mock->chunk * ctx->type_size);
}

void bcast_as_scatter_allgather_run(struct op_context *ctx)
{
    struct mockup_state *mock = ctx->state;
    MPI_CHECK(mockup_bcast_as_scatter_allgather(ctx->recvbuf, op_int_count(mock->chunk),
                                                ctx->dtype, ctx->root, ctx->comm));
}

/* ---- scatter, gather ---------------------------------------------------------------------- */

/* Everyone receives the root's whole vector and keeps its own block. */
void scatter_as_bcast_setup(struct op_context *ctx)
{
    scatter_setup(ctx);
    with_tmp(ctx, is_root(ctx) ? 0 : all_blocks(ctx));
}

void scatter_as_bcast_run(struct op_context *ctx)
{
    struct mockup_state *mock = ctx->state;
    unsigned char *all = is_root(ctx) ? ctx->sendbuf : mock->tmp;
    MPI_CHECK(MPI_Bcast(all, ctx->size * ctx->count, ctx->dtype, ctx->root, ctx->comm));
    memcpy(ctx->recvbuf, all + (size_t)ctx->rank * ctx->block, ctx->block);
}

/* Everyone gathers; the non-roots into scratch. */
void gather_as_allgather_setup(struct op_context *ctx)
{
    gather_setup(ctx);
    with_tmp(ctx, is_root(ctx) ? 0 : all_blocks(ctx));
}

void gather_as_allgather_run(struct op_context *ctx)
{
    struct mockup_state *mock = ctx->state;
    MPI_CHECK(MPI_Allgather(ctx->sendbuf, ctx->count, ctx->dtype,
                            is_root(ctx) ? ctx->recvbuf : mock->tmp, ctx->count, ctx->dtype,
                            ctx->comm));
}

void gather_as_reduce_setup(struct op_context *ctx)
{
    gather_setup(ctx);
    with_tmp(ctx, all_blocks(ctx));
}

void gather_as_reduce_run(struct op_context *ctx)
{
    struct mockup_state *mock = ctx->state;
    place_own_block(ctx, mock->tmp);
    MPI_CHECK(MPI_Reduce(mock->tmp, ctx->recvbuf, op_int_count(all_blocks(ctx)), MPI_BYTE, MPI_BOR,
                         ctx->root, ctx->comm));
}

/* ---- allgather ---------------------------------------------------------------------------- */

/* The own block, copied once per destination, is the alltoall's send vector. */
void allgather_as_alltoall_setup(struct op_context *ctx)
{
    allgather_setup(ctx);
    with_tmp(ctx, all_blocks(ctx));
}

void allgather_as_alltoall_run(struct op_context *ctx)
{
    struct mockup_state *mock = ctx->state;
    MPI_CHECK(mockup_allgather_as_alltoall(ctx->sendbuf, ctx->recvbuf, ctx->count, ctx->dtype,
                                           ctx->comm, mock->tmp));
}

/* allgather has no root: rank 0 gathers and broadcasts. */
void allgather_as_gather_bcast_run(struct op_context *ctx)
{
    MPI_CHECK(mockup_allgather_as_gather_bcast(ctx->sendbuf, ctx->recvbuf, ctx->count, ctx->dtype,
                                               ctx->comm));
}

void allgather_as_allreduce_run(struct op_context *ctx)
{
    place_own_block(ctx, ctx->recvbuf);
    MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, ctx->recvbuf, op_int_count(all_blocks(ctx)), MPI_BYTE,
                            MPI_BOR, ctx->comm));
}

/* ---- reductions --------------------------------------------------------------------------- */

void reduce_as_allreduce_setup(struct op_context *ctx)
{
    reduce_setup(ctx);
    with_tmp(ctx, is_root(ctx) ? 0 : ctx->block);
}

void reduce_as_allreduce_run(struct op_context *ctx)
{
    struct mockup_state *mock = ctx->state;
    MPI_CHECK(MPI_Allreduce(ctx->sendbuf, is_root(ctx) ? ctx->recvbuf : mock->tmp, ctx->count,
                            ctx->dtype, MPI_SUM, ctx->comm));
}

/* The vector is padded to size equal parts: zeros past msg_size add nothing to the sums. */
static void pad_to_parts(struct op_context *ctx, int recv_padded)
{
    struct mockup_state *mock = ctx->state;
    const size_t padded = (size_t)ctx->size * mock->chunk * ctx->type_size;
    op_pad_buffers(ctx, padded, recv_padded ? padded : 0);
}

void reduce_as_reduce_scatter_block_gather_setup(struct op_context *ctx)
{
    reduce_setup(ctx);
    struct mockup_state *mock = mockup_state_new(ctx);
    mock->chunk = split_chunk((size_t)ctx->count, ctx->size);
    mock->tmp = op_alloc_scratch(ctx, mock->chunk * ctx->type_size);
    pad_to_parts(ctx, is_root(ctx));
}

void reduce_as_reduce_scatter_block_gather_run(struct op_context *ctx)
{
    struct mockup_state *mock = ctx->state;
    const int n = op_int_count(mock->chunk);
    MPI_CHECK(MPI_Reduce_scatter_block(ctx->sendbuf, mock->tmp, n, ctx->dtype, MPI_SUM, ctx->comm));
    MPI_CHECK(MPI_Gather(mock->tmp, n, ctx->dtype, ctx->recvbuf, n, ctx->dtype, ctx->root,
                         ctx->comm));
}

/* Manwade & Kulkarni's Reducescatter is MPI_Reduce_scatter, which takes one count per
   process: here every count is the chunk of the padded vector, so the parts are those of the
   _block variant. */
static void chunk_counts(struct op_context *ctx)
{
    struct mockup_state *mock = ctx->state;
    mock->counts = xmalloc((size_t)ctx->size * sizeof *mock->counts);
    for (int i = 0; i < ctx->size; i++)
        mock->counts[i] = op_int_count(mock->chunk);
}

void reduce_as_reduce_scatter_gather_setup(struct op_context *ctx)
{
    reduce_as_reduce_scatter_block_gather_setup(ctx);
    chunk_counts(ctx);
}

void reduce_as_reduce_scatter_gather_run(struct op_context *ctx)
{
    struct mockup_state *mock = ctx->state;
    const int n = op_int_count(mock->chunk);
    MPI_CHECK(MPI_Reduce_scatter(ctx->sendbuf, mock->tmp, mock->counts, ctx->dtype, MPI_SUM,
                                 ctx->comm));
    MPI_CHECK(MPI_Gather(mock->tmp, n, ctx->dtype, ctx->recvbuf, n, ctx->dtype, ctx->root,
                         ctx->comm));
}

/* allreduce has no root: rank 0 reduces and broadcasts. */
void allreduce_as_reduce_bcast_run(struct op_context *ctx)
{
    MPI_CHECK(mockup_allreduce_as_reduce_bcast(ctx->sendbuf, ctx->recvbuf, ctx->count, ctx->dtype,
                                               MPI_SUM, ctx->comm));
}

void allreduce_as_reduce_scatter_block_allgather_setup(struct op_context *ctx)
{
    allreduce_setup(ctx);
    struct mockup_state *mock = mockup_state_new(ctx);
    mock->chunk = split_chunk((size_t)ctx->count, ctx->size);
    pad_to_parts(ctx, 1);
}

void allreduce_as_reduce_scatter_block_allgather_run(struct op_context *ctx)
{
    struct mockup_state *mock = ctx->state;
    MPI_CHECK(mockup_allreduce_as_reduce_scatter_block_allgather(
        ctx->sendbuf, ctx->recvbuf, op_int_count(mock->chunk), ctx->dtype, MPI_SUM, ctx->comm));
}

void allreduce_as_reduce_scatter_allgather_setup(struct op_context *ctx)
{
    allreduce_as_reduce_scatter_block_allgather_setup(ctx);
    chunk_counts(ctx);
}

void allreduce_as_reduce_scatter_allgather_run(struct op_context *ctx)
{
    struct mockup_state *mock = ctx->state;
    MPI_CHECK(mockup_allreduce_as_reduce_scatter_allgather(ctx->sendbuf, ctx->recvbuf,
                                                           op_int_count(mock->chunk), ctx->dtype,
                                                           MPI_SUM, ctx->comm, mock->counts));
}

/* Rank 0 reduces the whole vector and scatters it, with the op's counts. */
void reduce_scatter_as_reduce_scatterv_setup(struct op_context *ctx)
{
    reduce_scatter_setup(ctx);
    with_tmp(ctx, ctx->rank == 0 ? all_blocks(ctx) : 0);
}

void reduce_scatter_as_reduce_scatterv_run(struct op_context *ctx)
{
    struct mockup_state *mock = ctx->state;
    MPI_CHECK(MPI_Reduce(ctx->sendbuf, mock->tmp, ctx->size * ctx->count, ctx->dtype, MPI_SUM, 0,
                         ctx->comm));
    MPI_CHECK(MPI_Scatterv(mock->tmp, ctx->counts, ctx->displs, ctx->dtype, ctx->recvbuf,
                           ctx->counts[ctx->rank], ctx->dtype, 0, ctx->comm));
}

/* Everyone reduces the whole vector and keeps its own block. */
void reduce_scatter_as_allreduce_setup(struct op_context *ctx)
{
    reduce_scatter_setup(ctx);
    with_tmp(ctx, all_blocks(ctx));
}

void reduce_scatter_as_allreduce_run(struct op_context *ctx)
{
    struct mockup_state *mock = ctx->state;
    MPI_CHECK(MPI_Allreduce(ctx->sendbuf, mock->tmp, ctx->size * ctx->count, ctx->dtype, MPI_SUM,
                            ctx->comm));
    memcpy(ctx->recvbuf, mock->tmp + (size_t)ctx->rank * ctx->block, ctx->block);
}

/* Inclusive = exclusive prefix + own contribution; rank 0's exscan result is undefined, its
   inclusive prefix is its own contribution. */
void scan_as_exscan_reduce_local_run(struct op_context *ctx)
{
    MPI_CHECK(mockup_scan_as_exscan_reduce_local(ctx->sendbuf, ctx->recvbuf, ctx->count,
                                                 ctx->dtype, MPI_SUM, ctx->comm));
}

/* ---- on the full graph -------------------------------------------------------------------- */

/* A distributed graph in which every rank is source and destination of every rank, listed in
   rank order, so the neighbourhood collectives' block j is rank j's, as in allgather/alltoall.
   Built here, not taken from the experiment's topology, whose neighbour order (full: LINEAR or
   RAND) is not rank order. Real weights: Open MPI's MPI_UNWEIGHTED trips
   -Wstringop-overread. Made from a communicator of the same ranks in the same order without a
   topology: Open MPI 5.0 (5.0.11 included, open-mpi/ompi#14438) gives a distributed graph made
   from a Cartesian or graph communicator that one's topology as well, and its neighbourhood
   collectives then fail (MPI_ERR_ARG, MPI_ERR_INTERN). */
static void full_graph(struct op_context *ctx)
{
    struct mockup_state *mock = mockup_state_new(ctx);
    int topology;
    MPI_CHECK(MPI_Topo_test(ctx->comm, &topology));
    MPI_Comm plain = MPI_COMM_NULL;
    if (topology != MPI_UNDEFINED)
        MPI_CHECK(MPI_Comm_split(ctx->comm, 0, ctx->rank, &plain));
    int *weights = xmalloc((size_t)ctx->size * sizeof *weights);
    for (int i = 0; i < ctx->size; i++)
        weights[i] = 1;
    MPI_CHECK(MPI_Dist_graph_create_adjacent(plain != MPI_COMM_NULL ? plain : ctx->comm,
                                             ctx->size, ctx->all_ranks, weights, ctx->size,
                                             ctx->all_ranks, weights, MPI_INFO_NULL, 0,
                                             &mock->graph));
    free(weights);
    if (plain != MPI_COMM_NULL)
        MPI_CHECK(MPI_Comm_free(&plain));
}

void allgather_as_neighbor_allgather_setup(struct op_context *ctx)
{
    allgather_setup(ctx);
    full_graph(ctx);
}

void allgather_as_neighbor_allgather_run(struct op_context *ctx)
{
    struct mockup_state *mock = ctx->state;
    MPI_CHECK(MPI_Neighbor_allgather(ctx->sendbuf, ctx->count, ctx->dtype, ctx->recvbuf,
                                     ctx->count, ctx->dtype, mock->graph));
}

void alltoall_as_neighbor_alltoall_setup(struct op_context *ctx)
{
    alltoall_setup(ctx);
    full_graph(ctx);
}

void alltoall_as_neighbor_alltoall_run(struct op_context *ctx)
{
    struct mockup_state *mock = ctx->state;
    MPI_CHECK(MPI_Neighbor_alltoall(ctx->sendbuf, ctx->count, ctx->dtype, ctx->recvbuf,
                                    ctx->count, ctx->dtype, mock->graph));
}
