#include "ops/op_verify.h"

void op_expect_blocks(struct op_context *ctx, const int *send_to, int nsend,
                      const int *recv_from, int nrecv, int addressed)
{
    ctx->send_to = send_to;
    ctx->nsend = nsend;
    ctx->recv_from = recv_from;
    ctx->nrecv = nrecv;
    ctx->addressed = addressed;
}

void op_expect_layout(struct op_context *ctx, const int *send_counts, const int *send_displs,
                      const int *recv_counts, const int *recv_displs)
{
    ctx->send_counts = send_counts;
    ctx->send_displs = send_displs;
    ctx->recv_counts = recv_counts;
    ctx->recv_displs = recv_displs;
}

void op_expect_reduction(struct op_context *ctx, size_t send_elems, size_t first, int lo, int hi)
{
    ctx->send_elems = send_elems;
    ctx->result_first = first;
    ctx->result_lo = lo;
    ctx->result_hi = hi;
}

/* The receiver named in the pattern of a block sent to / received by `receiver`. */
static int pattern_receiver(const struct op_context *ctx, int receiver)
{
    return ctx->addressed ? receiver : PATTERN_ANY_RECEIVER;
}

/* Byte offset and length of block i: from the layout's element counts, or regular. */
static size_t block_offset(const struct op_context *ctx, const int *displs, int i)
{
    return displs ? (size_t)displs[i] * ctx->type_size : (size_t)i * ctx->block;
}

static size_t block_length(const struct op_context *ctx, const int *counts, int i)
{
    return counts ? (size_t)counts[i] * ctx->type_size : ctx->block;
}

void op_fill_blocks(struct op_context *ctx)
{
    for (int i = 0; i < ctx->nsend; i++)
        if (ctx->send_to[i] != MPI_PROC_NULL)
            pattern_fill(ctx->sendbuf + block_offset(ctx, ctx->send_displs, i),
                         block_length(ctx, ctx->send_counts, i), ctx->rank,
                         pattern_receiver(ctx, ctx->send_to[i]));
    for (int j = 0; j < ctx->nrecv; j++)
        if (ctx->recv_from[j] != MPI_PROC_NULL)
            pattern_poison(ctx->recvbuf + block_offset(ctx, ctx->recv_displs, j),
                           block_length(ctx, ctx->recv_counts, j), ctx->recv_from[j],
                           pattern_receiver(ctx, ctx->rank));
}

/* Blocks from MPI_PROC_NULL are not checked: MPI leaves them alone. */
size_t op_check_blocks(struct op_context *ctx)
{
    for (int j = 0; j < ctx->nrecv; j++)
        if (ctx->recv_from[j] != MPI_PROC_NULL) {
            const size_t offset = block_offset(ctx, ctx->recv_displs, j);
            pattern_check(ctx->recvbuf + offset, block_length(ctx, ctx->recv_counts, j),
                          ctx->recv_from[j], pattern_receiver(ctx, ctx->rank), offset,
                          &ctx->mismatch);
        }
    return ctx->mismatch.count;
}

void op_fill_reduction(struct op_context *ctx)
{
    reduction_fill(ctx->sendbuf, ctx->exp->dtype, ctx->size, ctx->send_elems, ctx->rank, 0);
    if (ctx->result_lo <= ctx->result_hi)
        reduction_poison(ctx->recvbuf, ctx->exp->dtype, ctx->size,
                         ctx->recv_bytes / ctx->type_size,
                         ctx->result_first, ctx->result_lo, ctx->result_hi);
}

size_t op_check_reduction(struct op_context *ctx)
{
    if (ctx->result_lo <= ctx->result_hi)
        reduction_check(ctx->recvbuf, ctx->exp->dtype, ctx->size,
                        ctx->recv_bytes / ctx->type_size,
                        ctx->result_first, ctx->result_lo, ctx->result_hi, &ctx->mismatch);
    return ctx->mismatch.count;
}
