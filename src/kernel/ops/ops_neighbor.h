/* Neighbourhood collectives on the experiment's topology: msg_size bytes per neighbour block. */
#ifndef MPIGUIDE_OPS_NEIGHBOR_H
#define MPIGUIDE_OPS_NEIGHBOR_H

#include "ops/op_context.h"

void neighbor_gather_setup(struct op_context *ctx);
void neighbor_exchange_setup(struct op_context *ctx);
void neighbor_allgather_run(struct op_context *ctx);
void neighbor_allgatherv_run(struct op_context *ctx);
void neighbor_alltoall_run(struct op_context *ctx);
void neighbor_alltoallv_run(struct op_context *ctx);
void neighbor_alltoallw_run(struct op_context *ctx);
void ineighbor_allgather_run(struct op_context *ctx);
void ineighbor_allgatherv_run(struct op_context *ctx);
void ineighbor_alltoall_run(struct op_context *ctx);
void ineighbor_alltoallv_run(struct op_context *ctx);
void ineighbor_alltoallw_run(struct op_context *ctx);

#endif
