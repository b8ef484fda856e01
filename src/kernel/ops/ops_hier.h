/* Hierarchical decompositions, <op>_as_hier: node-local communicators and a communicator of
   node leaders. */
#ifndef MPIGUIDE_OPS_HIER_H
#define MPIGUIDE_OPS_HIER_H

#include "ops/op_context.h"

void bcast_as_hier_setup(struct op_context *ctx);
void bcast_as_hier_run(struct op_context *ctx);
void reduce_as_hier_setup(struct op_context *ctx);
void reduce_as_hier_run(struct op_context *ctx);
void allreduce_as_hier_setup(struct op_context *ctx);
void allreduce_as_hier_run(struct op_context *ctx);
void allgather_as_hier_setup(struct op_context *ctx);
void allgather_as_hier_run(struct op_context *ctx);
void alltoall_as_hier_setup(struct op_context *ctx);
void alltoall_as_hier_run(struct op_context *ctx);
void reduce_scatter_block_as_hier_setup(struct op_context *ctx);
void reduce_scatter_block_as_hier_run(struct op_context *ctx);
void gather_as_hier_setup(struct op_context *ctx);
void gather_as_hier_run(struct op_context *ctx);
void scatter_as_hier_setup(struct op_context *ctx);
void scatter_as_hier_run(struct op_context *ctx);
/* Frees the family's private state (ctx->state). */
void hier_free(struct op_context *ctx);

#endif
