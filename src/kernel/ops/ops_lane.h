/* Multi-lane decompositions, <op>_as_lane: node-local communicators and one lane communicator
   per node-local rank. */
#ifndef MPIGUIDE_OPS_LANE_H
#define MPIGUIDE_OPS_LANE_H

#include "ops/op_context.h"

void bcast_as_lane_setup(struct op_context *ctx);
void bcast_as_lane_run(struct op_context *ctx);
void reduce_as_lane_setup(struct op_context *ctx);
void reduce_as_lane_run(struct op_context *ctx);
void allreduce_as_lane_setup(struct op_context *ctx);
void allreduce_as_lane_run(struct op_context *ctx);
void allgather_as_lane_setup(struct op_context *ctx);
void allgather_as_lane_run(struct op_context *ctx);
void alltoall_as_lane_setup(struct op_context *ctx);
void alltoall_as_lane_run(struct op_context *ctx);
void reduce_scatter_block_as_lane_setup(struct op_context *ctx);
void reduce_scatter_block_as_lane_run(struct op_context *ctx);
void gather_as_lane_setup(struct op_context *ctx);
void gather_as_lane_run(struct op_context *ctx);
void scatter_as_lane_setup(struct op_context *ctx);
void scatter_as_lane_run(struct op_context *ctx);
/* Frees the family's private state (ctx->state). */
void lane_free(struct op_context *ctx);

#endif
