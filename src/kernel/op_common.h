/* Helpers shared by the operation files: buffers, start-work-wait, generic --verify. */
#ifndef MPIGUIDE_OP_COMMON_H
#define MPIGUIDE_OP_COMMON_H

#include "operations.h"

/* Allocates zeroed send and receive buffers (freed with the context). */
void op_alloc_buffers(struct op_context *ctx, size_t send_bytes, size_t recv_bytes);
/* One buffer that is both send and receive buffer (bcast). */
void op_alloc_inplace(struct op_context *ctx, size_t bytes);

/* Nonblocking operations after their start: the experiment's work, then MPI_Wait. */
void op_work_and_wait(struct op_context *ctx, MPI_Request *request);

/* Describes a data movement for --verify (ctx->send_to ... ctx->addressed). */
void op_expect_blocks(struct op_context *ctx, const int *send_to, int nsend,
                      const int *recv_from, int nrecv, int addressed);
/* Irregular blocks of such a movement (v-operations with a count pattern): element counts and
   displacements of send block i and receive block j; NULL keeps the regular layout. */
void op_expect_layout(struct op_context *ctx, const int *send_counts, const int *send_displs,
                      const int *recv_counts, const int *recv_displs);
/* Describes a reduction for --verify: the result holds elements first.. of ranks lo..hi. */
void op_expect_reduction(struct op_context *ctx, size_t send_elems, size_t first, int lo, int hi);

/* fill/check callbacks for ops described by op_expect_blocks. */
void op_fill_blocks(struct op_context *ctx);
size_t op_check_blocks(struct op_context *ctx);
/* fill/check callbacks for ops described by op_expect_reduction. */
void op_fill_reduction(struct op_context *ctx);
size_t op_check_reduction(struct op_context *ctx);

#endif
