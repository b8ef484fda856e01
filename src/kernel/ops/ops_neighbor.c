/* Neighbourhood collectives on the experiment's topology; msg_size = bytes per neighbour block. */
#include "ops/ops_neighbor.h"

#include "check.h"
#include "ops/op_buffers.h"
#include "ops/op_nonblocking.h"
#include "ops/op_verify.h"

static const int any_receiver = PATTERN_ANY_RECEIVER;

/* allgather-like: one block to every destination, one block from every source. */
void neighbor_gather_setup(struct op_context *ctx)
{
    const struct neighbours *nb = ctx->nb;
    op_alloc_buffers(ctx, ctx->block, (size_t)nb->indegree * ctx->block);
    op_expect_blocks(ctx, &any_receiver, 1, nb->sources, nb->indegree, 0);
}

/* alltoall-like: block i to destination i, block j from source j. */
void neighbor_exchange_setup(struct op_context *ctx)
{
    const struct neighbours *nb = ctx->nb;
    op_alloc_buffers(ctx, (size_t)nb->outdegree * ctx->block, (size_t)nb->indegree * ctx->block);
    op_expect_blocks(ctx, nb->destinations, nb->outdegree, nb->sources, nb->indegree, 1);
}

void neighbor_allgather_run(struct op_context *ctx)
{
    MPI_CHECK(MPI_Neighbor_allgather(ctx->sendbuf, ctx->count, ctx->dtype, ctx->recvbuf,
                                     ctx->count, ctx->dtype, ctx->comm));
}

void neighbor_allgatherv_run(struct op_context *ctx)
{
    MPI_CHECK(MPI_Neighbor_allgatherv(ctx->sendbuf, ctx->count, ctx->dtype, ctx->recvbuf,
                                      ctx->counts, ctx->displs, ctx->dtype, ctx->comm));
}

void neighbor_alltoall_run(struct op_context *ctx)
{
    MPI_CHECK(MPI_Neighbor_alltoall(ctx->sendbuf, ctx->count, ctx->dtype, ctx->recvbuf,
                                    ctx->count, ctx->dtype, ctx->comm));
}

void neighbor_alltoallv_run(struct op_context *ctx)
{
    MPI_CHECK(MPI_Neighbor_alltoallv(ctx->sendbuf, ctx->counts, ctx->displs, ctx->dtype,
                                     ctx->recvbuf, ctx->counts, ctx->displs, ctx->dtype,
                                     ctx->comm));
}

void neighbor_alltoallw_run(struct op_context *ctx)
{
    MPI_CHECK(MPI_Neighbor_alltoallw(ctx->sendbuf, ctx->counts, ctx->aint_displs, ctx->types,
                                     ctx->recvbuf, ctx->counts, ctx->aint_displs, ctx->types,
                                     ctx->comm));
}

void ineighbor_allgather_run(struct op_context *ctx)
{
    MPI_Request request;
    MPI_CHECK(MPI_Ineighbor_allgather(ctx->sendbuf, ctx->count, ctx->dtype, ctx->recvbuf,
                                      ctx->count, ctx->dtype, ctx->comm, &request));
    op_work_and_wait(ctx, &request);
}

void ineighbor_allgatherv_run(struct op_context *ctx)
{
    MPI_Request request;
    MPI_CHECK(MPI_Ineighbor_allgatherv(ctx->sendbuf, ctx->count, ctx->dtype, ctx->recvbuf,
                                       ctx->counts, ctx->displs, ctx->dtype, ctx->comm,
                                       &request));
    op_work_and_wait(ctx, &request);
}

void ineighbor_alltoall_run(struct op_context *ctx)
{
    MPI_Request request;
    MPI_CHECK(MPI_Ineighbor_alltoall(ctx->sendbuf, ctx->count, ctx->dtype, ctx->recvbuf,
                                     ctx->count, ctx->dtype, ctx->comm, &request));
    op_work_and_wait(ctx, &request);
}

void ineighbor_alltoallv_run(struct op_context *ctx)
{
    MPI_Request request;
    MPI_CHECK(MPI_Ineighbor_alltoallv(ctx->sendbuf, ctx->counts, ctx->displs, ctx->dtype,
                                      ctx->recvbuf, ctx->counts, ctx->displs, ctx->dtype,
                                      ctx->comm, &request));
    op_work_and_wait(ctx, &request);
}

void ineighbor_alltoallw_run(struct op_context *ctx)
{
    MPI_Request request;
    MPI_CHECK(MPI_Ineighbor_alltoallw(ctx->sendbuf, ctx->counts, ctx->aint_displs, ctx->types,
                                      ctx->recvbuf, ctx->counts, ctx->aint_displs, ctx->types,
                                      ctx->comm, &request));
    op_work_and_wait(ctx, &request);
}
