#include "ops/op_buffers.h"

#include <limits.h>
#include <string.h>

#include "check.h"

void op_alloc_buffers(struct op_context *ctx, size_t send_bytes, size_t recv_bytes)
{
    ctx->sendbuf = buffer_alloc(&ctx->buffers, send_bytes);
    ctx->recvbuf = buffer_alloc(&ctx->buffers, recv_bytes);
    ctx->send_bytes = send_bytes;
    ctx->recv_bytes = recv_bytes;
}

void op_alloc_inplace(struct op_context *ctx, size_t bytes)
{
    ctx->recvbuf = ctx->sendbuf = buffer_alloc(&ctx->buffers, bytes);
    ctx->recv_bytes = ctx->send_bytes = bytes;
}

unsigned char *op_alloc_scratch(struct op_context *ctx, size_t bytes)
{
    return buffer_alloc(&ctx->buffers, bytes);
}

static unsigned char *grown(struct buffer_pool *pool, unsigned char *old, size_t used,
                            size_t total)
{
    unsigned char *buf = buffer_alloc(pool, total);
    if (old && used)
        memcpy(buf, old, used);
    buffer_release(pool, old);
    return buf;
}

void op_pad_buffers(struct op_context *ctx, size_t send_total, size_t recv_total)
{
    if (ctx->sendbuf == ctx->recvbuf) {
        ctx->sendbuf = ctx->recvbuf =
            grown(&ctx->buffers, ctx->recvbuf, ctx->recv_bytes, recv_total);
        return;
    }
    if (send_total > ctx->send_bytes)
        ctx->sendbuf = grown(&ctx->buffers, ctx->sendbuf, ctx->send_bytes, send_total);
    if (recv_total > ctx->recv_bytes)
        ctx->recvbuf = grown(&ctx->buffers, ctx->recvbuf, ctx->recv_bytes, recv_total);
}

int op_int_count(size_t n)
{
    if (n > (size_t)INT_MAX)
        fail_abort("a padded buffer of %zu elements exceeds what an int count addresses", n);
    return (int)n;
}
