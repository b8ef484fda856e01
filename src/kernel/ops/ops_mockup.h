/* Collective mock-ups, <op>_as_<how>: the job of <op> with other MPI operations, with <op>'s
   buffers and --verify expectations. */
#ifndef MPIGUIDE_OPS_MOCKUP_H
#define MPIGUIDE_OPS_MOCKUP_H

#include "ops/op_context.h"

void bcast_as_allgatherv_setup(struct op_context *ctx);
void bcast_as_allgatherv_run(struct op_context *ctx);
void bcast_as_scatter_allgather_setup(struct op_context *ctx);
void bcast_as_scatter_allgather_run(struct op_context *ctx);
void scatter_as_bcast_setup(struct op_context *ctx);
void scatter_as_bcast_run(struct op_context *ctx);
void gather_as_allgather_setup(struct op_context *ctx);
void gather_as_allgather_run(struct op_context *ctx);
void gather_as_reduce_setup(struct op_context *ctx);
void gather_as_reduce_run(struct op_context *ctx);
void allgather_as_alltoall_setup(struct op_context *ctx);
void allgather_as_alltoall_run(struct op_context *ctx);
void allgather_as_gather_bcast_run(struct op_context *ctx);
void allgather_as_allreduce_run(struct op_context *ctx);
void reduce_as_allreduce_setup(struct op_context *ctx);
void reduce_as_allreduce_run(struct op_context *ctx);
void reduce_as_reduce_scatter_block_gather_setup(struct op_context *ctx);
void reduce_as_reduce_scatter_block_gather_run(struct op_context *ctx);
void reduce_as_reduce_scatter_gather_setup(struct op_context *ctx);
void reduce_as_reduce_scatter_gather_run(struct op_context *ctx);
void allreduce_as_reduce_bcast_run(struct op_context *ctx);
void allreduce_as_reduce_scatter_block_allgather_setup(struct op_context *ctx);
void allreduce_as_reduce_scatter_block_allgather_run(struct op_context *ctx);
void allreduce_as_reduce_scatter_allgather_setup(struct op_context *ctx);
void allreduce_as_reduce_scatter_allgather_run(struct op_context *ctx);
void reduce_scatter_as_reduce_scatterv_setup(struct op_context *ctx);
void reduce_scatter_as_reduce_scatterv_run(struct op_context *ctx);
void reduce_scatter_as_allreduce_setup(struct op_context *ctx);
void reduce_scatter_as_allreduce_run(struct op_context *ctx);
void scan_as_exscan_reduce_local_run(struct op_context *ctx);
void allgather_as_neighbor_allgather_setup(struct op_context *ctx);
void allgather_as_neighbor_allgather_run(struct op_context *ctx);
void alltoall_as_neighbor_alltoall_setup(struct op_context *ctx);
void alltoall_as_neighbor_alltoall_run(struct op_context *ctx);
/* Frees the family's private state (ctx->state). */
void mockup_free(struct op_context *ctx);

#endif
