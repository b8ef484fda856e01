/* Callbacks of the operation table, one section per operation file. */
#ifndef MPIGUIDE_OPS_H
#define MPIGUIDE_OPS_H

#include "operations.h"

/* ops_overhead.c */
void empty_run(struct op_context *ctx);
void topo_create_run(struct op_context *ctx);
void topo_create_after_run(struct op_context *ctx);
void topo_create_setup(struct op_context *ctx);
void topo_create_free(struct op_context *ctx);

/* ops_neighbor.c: msg_size bytes per neighbour block */
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

/* ops_collective.c: global collectives on the experiment's communicator */
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
