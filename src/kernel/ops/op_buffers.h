/* The communication buffers of an operation, from the context's pool (freed with the context):
   the send and receive buffers --verify fills and checks, scratch, and their padding. */
#ifndef MPIGUIDE_OP_BUFFERS_H
#define MPIGUIDE_OP_BUFFERS_H

#include <stddef.h>

#include "ops/op_context.h"

/* Allocates zeroed send and receive buffers. */
void op_alloc_buffers(struct op_context *ctx, size_t send_bytes, size_t recv_bytes);
/* One buffer that is both send and receive buffer (bcast). */
void op_alloc_inplace(struct op_context *ctx, size_t bytes);
/* A zeroed scratch buffer, private to the op. */
unsigned char *op_alloc_scratch(struct op_context *ctx, size_t bytes);
/* Grows the op's buffers to the given sizes (zero padding), keeping send_bytes/recv_bytes, the
   sizes --verify fills and checks. An in-place buffer stays in place. */
void op_pad_buffers(struct op_context *ctx, size_t send_total, size_t recv_total);
/* An int count or displacement; aborts when a padded buffer outgrows int. */
int op_int_count(size_t n);

/* Block i of a buffer of blocks of msg_size bytes. */
static inline unsigned char *op_block_at(unsigned char *buf, const struct op_context *ctx,
                                         size_t i)
{
    return buf + i * ctx->block;
}

#endif
