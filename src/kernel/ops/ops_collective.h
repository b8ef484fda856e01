/* Global collectives on the experiment's communicator. The mock-ups and decompositions start
   their setups with these setups (the job of the op they emulate). */
#ifndef MPIGUIDE_OPS_COLLECTIVE_H
#define MPIGUIDE_OPS_COLLECTIVE_H

#include "ops/op_context.h"

void barrier_run(struct op_context *ctx);
void bcast_setup(struct op_context *ctx);
void bcast_run(struct op_context *ctx);
void scatter_setup(struct op_context *ctx);
void scatter_run(struct op_context *ctx);
void scatterv_run(struct op_context *ctx);
void gather_setup(struct op_context *ctx);
void gather_run(struct op_context *ctx);
void gatherv_run(struct op_context *ctx);
void allgather_setup(struct op_context *ctx);
void allgather_run(struct op_context *ctx);
void allgatherv_run(struct op_context *ctx);
void alltoall_setup(struct op_context *ctx);
void alltoall_run(struct op_context *ctx);
void alltoallv_run(struct op_context *ctx);
void alltoallw_run(struct op_context *ctx);
void reduce_setup(struct op_context *ctx);
void reduce_run(struct op_context *ctx);
void allreduce_setup(struct op_context *ctx);
void allreduce_run(struct op_context *ctx);
void reduce_scatter_setup(struct op_context *ctx);
void reduce_scatter_run(struct op_context *ctx);
void reduce_scatter_block_run(struct op_context *ctx);
void scan_setup(struct op_context *ctx);
void scan_run(struct op_context *ctx);
void exscan_setup(struct op_context *ctx);
void exscan_run(struct op_context *ctx);

#endif
