/* Generic --verify of an operation: its setup describes the data movement or reduction, and the
   table's fill/check callbacks compare against it (docs/kernel.md, "Adding an operation"). */
#ifndef MPIGUIDE_OP_VERIFY_H
#define MPIGUIDE_OP_VERIFY_H

#include <stddef.h>

#include "ops/op_context.h"

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
