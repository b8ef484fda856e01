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

/* ops_mockup.c: <op>_as_<how>, the job of <op> with its setup's buffers (ops_aux.h state) */
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

/* ops_hier.c: <op>_as_hier (node + leaders) and <op>_as_lane (node + lanes) */
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
void gather_as_hier_setup(struct op_context *ctx);
void gather_as_hier_run(struct op_context *ctx);
void scatter_as_hier_setup(struct op_context *ctx);
void scatter_as_hier_run(struct op_context *ctx);
void gather_as_lane_setup(struct op_context *ctx);
void gather_as_lane_run(struct op_context *ctx);
void scatter_as_lane_setup(struct op_context *ctx);
void scatter_as_lane_run(struct op_context *ctx);

/* ops_p2p.c: rank pairs (2i, 2i+1), msg_size bytes per message */
void p2p_oneway_setup(struct op_context *ctx);
void p2p_exchange_setup(struct op_context *ctx);
void send_run(struct op_context *ctx);
void ssend_run(struct op_context *ctx);
void rsend_before_sync(struct op_context *ctx);
void rsend_run(struct op_context *ctx);
void isend_wait_run(struct op_context *ctx);
void sendrecv_run(struct op_context *ctx);
void isend_recv_wait_run(struct op_context *ctx);
void send_irecv_wait_run(struct op_context *ctx);

/* ops_halo.c: Irecv/Isend to every neighbour, Waitall */
void halo_setup(struct op_context *ctx);
void halo_run(struct op_context *ctx);

#endif
