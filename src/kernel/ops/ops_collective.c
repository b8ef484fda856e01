/* Global collectives on the experiment's communicator (MPI_COMM_WORLD's duplicate for topology
   none). The v/w variants use equal counts, so they do the same job as the regular ones, unless
   the experiment's count pattern (v-operations only) makes ctx->counts irregular: rank i then
   contributes or receives counts[i] elements, and the total stays size * count. */
#include "ops/ops_collective.h"

#include "check.h"
#include "ops/op_buffers.h"
#include "ops/op_verify.h"

static const int any_receiver = PATTERN_ANY_RECEIVER;
static const int first_block = 0;

static int is_root(const struct op_context *ctx)
{
    return ctx->rank == ctx->root;
}

/* Bytes of this rank's own block under the count pattern (block with equal counts). */
static size_t own_bytes(const struct op_context *ctx)
{
    return (size_t)ctx->counts[ctx->rank] * ctx->type_size;
}

/* The one block this rank sends or receives, at the start of its buffer. */
static const int *own_count(const struct op_context *ctx)
{
    return &ctx->counts[ctx->rank];
}

void barrier_run(struct op_context *ctx)
{
    OP_CALL(ctx, MPI_Barrier(ctx->comm));
}

/* One buffer of msg_size bytes, the root's content reaches everyone. */
void bcast_setup(struct op_context *ctx)
{
    op_alloc_inplace(ctx, ctx->block);
    if (is_root(ctx))
        op_expect_blocks(ctx, &any_receiver, 1, NULL, 0, 0);
    else
        op_expect_blocks(ctx, NULL, 0, &ctx->root, 1, 0);
}

void bcast_run(struct op_context *ctx)
{
    OP_CALL(ctx, MPI_Bcast(ctx->recvbuf, ctx->count, ctx->dtype, ctx->root, ctx->comm));
}

void scatter_setup(struct op_context *ctx)
{
    const int root = is_root(ctx);
    op_alloc_buffers(ctx, root ? (size_t)ctx->size * ctx->block : 0, own_bytes(ctx));
    op_expect_blocks(ctx, ctx->all_ranks, root ? ctx->size : 0, &ctx->root, 1, 1);
    op_expect_layout(ctx, ctx->counts, ctx->displs, own_count(ctx), &first_block);
}

void scatter_run(struct op_context *ctx)
{
    OP_CALL(ctx, MPI_Scatter(ctx->sendbuf, ctx->count, ctx->dtype, ctx->recvbuf, ctx->count,
                             ctx->dtype, ctx->root, ctx->comm));
}

void scatterv_run(struct op_context *ctx)
{
    OP_CALL(ctx, MPI_Scatterv(ctx->sendbuf, ctx->counts, ctx->displs, ctx->dtype, ctx->recvbuf,
                              ctx->counts[ctx->rank], ctx->dtype, ctx->root, ctx->comm));
}

void gather_setup(struct op_context *ctx)
{
    const int root = is_root(ctx);
    op_alloc_buffers(ctx, own_bytes(ctx), root ? (size_t)ctx->size * ctx->block : 0);
    op_expect_blocks(ctx, &ctx->root, 1, ctx->all_ranks, root ? ctx->size : 0, 1);
    op_expect_layout(ctx, own_count(ctx), &first_block, ctx->counts, ctx->displs);
}

void gather_run(struct op_context *ctx)
{
    OP_CALL(ctx, MPI_Gather(ctx->sendbuf, ctx->count, ctx->dtype, ctx->recvbuf, ctx->count,
                            ctx->dtype, ctx->root, ctx->comm));
}

void gatherv_run(struct op_context *ctx)
{
    OP_CALL(ctx, MPI_Gatherv(ctx->sendbuf, ctx->counts[ctx->rank], ctx->dtype, ctx->recvbuf,
                             ctx->counts, ctx->displs, ctx->dtype, ctx->root, ctx->comm));
}

void allgather_setup(struct op_context *ctx)
{
    op_alloc_buffers(ctx, own_bytes(ctx), (size_t)ctx->size * ctx->block);
    op_expect_blocks(ctx, &any_receiver, 1, ctx->all_ranks, ctx->size, 0);
    op_expect_layout(ctx, own_count(ctx), &first_block, ctx->counts, ctx->displs);
}

void allgather_run(struct op_context *ctx)
{
    OP_CALL(ctx, MPI_Allgather(ctx->sendbuf, ctx->count, ctx->dtype, ctx->recvbuf, ctx->count,
                               ctx->dtype, ctx->comm));
}

void allgatherv_run(struct op_context *ctx)
{
    OP_CALL(ctx, MPI_Allgatherv(ctx->sendbuf, ctx->counts[ctx->rank], ctx->dtype, ctx->recvbuf,
                                ctx->counts, ctx->displs, ctx->dtype, ctx->comm));
}

/* Rank i sends counts[j] elements to rank j, so it receives counts[i] from everyone. */
void alltoall_setup(struct op_context *ctx)
{
    op_alloc_buffers(ctx, (size_t)ctx->size * ctx->block, (size_t)ctx->size * own_bytes(ctx));
    op_expect_blocks(ctx, ctx->all_ranks, ctx->size, ctx->all_ranks, ctx->size, 1);
    op_expect_layout(ctx, ctx->counts, ctx->displs, ctx->own_counts, ctx->own_displs);
}

void alltoall_run(struct op_context *ctx)
{
    OP_CALL(ctx, MPI_Alltoall(ctx->sendbuf, ctx->count, ctx->dtype, ctx->recvbuf, ctx->count,
                              ctx->dtype, ctx->comm));
}

void alltoallv_run(struct op_context *ctx)
{
    OP_CALL(ctx, MPI_Alltoallv(ctx->sendbuf, ctx->counts, ctx->displs, ctx->dtype, ctx->recvbuf,
                               ctx->own_counts, ctx->own_displs, ctx->dtype, ctx->comm));
}

void alltoallw_run(struct op_context *ctx)
{
    OP_CALL(ctx, MPI_Alltoallw(ctx->sendbuf, ctx->counts, ctx->byte_displs, ctx->types,
                               ctx->recvbuf, ctx->counts, ctx->byte_displs, ctx->types, ctx->comm));
}

/* Reductions: msg_size bytes of dtype per process (the buffer), summed. */
void reduce_setup(struct op_context *ctx)
{
    const int root = is_root(ctx);
    op_alloc_buffers(ctx, ctx->block, root ? ctx->block : 0);
    op_expect_reduction(ctx, (size_t)ctx->count, 0, 0, root ? ctx->size - 1 : -1);
}

void reduce_run(struct op_context *ctx)
{
    OP_CALL(ctx, MPI_Reduce(ctx->sendbuf, ctx->recvbuf, ctx->count, ctx->dtype, MPI_SUM, ctx->root,
                            ctx->comm));
}

void allreduce_setup(struct op_context *ctx)
{
    op_alloc_buffers(ctx, ctx->block, ctx->block);
    op_expect_reduction(ctx, (size_t)ctx->count, 0, 0, ctx->size - 1);
}

void allreduce_run(struct op_context *ctx)
{
    OP_CALL(ctx, MPI_Allreduce(ctx->sendbuf, ctx->recvbuf, ctx->count, ctx->dtype, MPI_SUM,
                               ctx->comm));
}

/* msg_size bytes of result per process (counts[i] elements for rank i under a count
   pattern): every process contributes size blocks. */
void reduce_scatter_setup(struct op_context *ctx)
{
    op_alloc_buffers(ctx, (size_t)ctx->size * ctx->block, own_bytes(ctx));
    op_expect_reduction(ctx, (size_t)ctx->size * (size_t)ctx->count,
                        (size_t)ctx->displs[ctx->rank], 0, ctx->size - 1);
}

void reduce_scatter_run(struct op_context *ctx)
{
    OP_CALL(ctx, MPI_Reduce_scatter(ctx->sendbuf, ctx->recvbuf, ctx->counts, ctx->dtype, MPI_SUM,
                                    ctx->comm));
}

void reduce_scatter_block_run(struct op_context *ctx)
{
    OP_CALL(ctx, MPI_Reduce_scatter_block(ctx->sendbuf, ctx->recvbuf, ctx->count, ctx->dtype,
                                          MPI_SUM, ctx->comm));
}

void scan_setup(struct op_context *ctx)
{
    op_alloc_buffers(ctx, ctx->block, ctx->block);
    op_expect_reduction(ctx, (size_t)ctx->count, 0, 0, ctx->rank);
}

void scan_run(struct op_context *ctx)
{
    OP_CALL(ctx, MPI_Scan(ctx->sendbuf, ctx->recvbuf, ctx->count, ctx->dtype, MPI_SUM, ctx->comm));
}

/* Rank 0's exscan result is undefined: the empty range 0 .. -1 leaves it unchecked. */
void exscan_setup(struct op_context *ctx)
{
    op_alloc_buffers(ctx, ctx->block, ctx->block);
    op_expect_reduction(ctx, (size_t)ctx->count, 0, 0, ctx->rank - 1);
}

void exscan_run(struct op_context *ctx)
{
    OP_CALL(ctx, MPI_Exscan(ctx->sendbuf, ctx->recvbuf, ctx->count, ctx->dtype, MPI_SUM,
                            ctx->comm));
}
