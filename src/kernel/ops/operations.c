/* The operation table: the single source of truth for op names (--list-ops, operations.tsv).
   One row per operation, its callbacks from the family's ops_<family>.h. */
#include "ops/op_table.h"

#include <string.h>

#include "ops/op_verify.h"
#include "ops/ops_collective.h"
#include "ops/ops_halo.h"
#include "ops/ops_hier.h"
#include "ops/ops_lane.h"
#include "ops/ops_mockup.h"
#include "ops/ops_neighbor.h"
#include "ops/ops_overhead.h"
#include "ops/ops_p2p.h"

#define REQ OP_TOPOLOGY_REQUIRED
#define NB OP_NONBLOCKING

/* Fields left out of a row are zero: no flags, no such callback. */
const struct operation operation_table[] = {
    {.name = "empty", .family = "overhead", .msg_size = MSG_NONE, .run = empty_run},
    {.name = "topo_create", .family = "topology", .msg_size = MSG_NONE, .flags = REQ,
     .setup = topo_create_setup, .run = topo_create_run, .after_run = topo_create_after_run,
     .free = topo_create_free},
#define NEIGHBOR(op, op_flags, op_setup)                                                        \
    {.name = #op, .family = "neighbor", .msg_size = MSG_PER_NEIGHBOR, .flags = REQ | (op_flags), \
     .setup = op_setup, .run = op##_run, .fill = op_fill_blocks, .check = op_check_blocks}
    NEIGHBOR(neighbor_allgather, 0, neighbor_gather_setup),
    NEIGHBOR(neighbor_allgatherv, 0, neighbor_gather_setup),
    NEIGHBOR(neighbor_alltoall, 0, neighbor_exchange_setup),
    NEIGHBOR(neighbor_alltoallv, 0, neighbor_exchange_setup),
    NEIGHBOR(neighbor_alltoallw, 0, neighbor_exchange_setup),
    NEIGHBOR(ineighbor_allgather, NB, neighbor_gather_setup),
    NEIGHBOR(ineighbor_allgatherv, NB, neighbor_gather_setup),
    NEIGHBOR(ineighbor_alltoall, NB, neighbor_exchange_setup),
    NEIGHBOR(ineighbor_alltoallv, NB, neighbor_exchange_setup),
    NEIGHBOR(ineighbor_alltoallw, NB, neighbor_exchange_setup),
#undef NEIGHBOR
    {.name = "barrier", .family = "collective", .msg_size = MSG_NONE, .algorithm_of = "barrier",
     .run = barrier_run},
#define COLLECTIVE(op, msg, op_flags, op_setup)                                                 \
    {.name = #op, .family = "collective", .msg_size = msg, .flags = op_flags,                    \
     .algorithm_of = #op, .setup = op_setup, .run = op##_run, .fill = op_fill_blocks,            \
     .check = op_check_blocks}
#define REDUCTION(op, msg, op_flags, op_setup)                                                  \
    {.name = #op, .family = "collective", .msg_size = msg, .flags = OP_REDUCTION | (op_flags),   \
     .algorithm_of = #op, .setup = op_setup, .run = op##_run, .fill = op_fill_reduction,         \
     .check = op_check_reduction}
    COLLECTIVE(bcast, MSG_BUFFER, OP_ROOT, bcast_setup),
    COLLECTIVE(scatter, MSG_PER_PROCESS, OP_ROOT, scatter_setup),
    COLLECTIVE(scatterv, MSG_PER_PROCESS, OP_ROOT | OP_COUNTS, scatter_setup),
    COLLECTIVE(gather, MSG_PER_PROCESS, OP_ROOT, gather_setup),
    COLLECTIVE(gatherv, MSG_PER_PROCESS, OP_ROOT | OP_COUNTS, gather_setup),
    COLLECTIVE(allgather, MSG_PER_PROCESS, 0, allgather_setup),
    COLLECTIVE(allgatherv, MSG_PER_PROCESS, OP_COUNTS, allgather_setup),
    COLLECTIVE(alltoall, MSG_PER_PROCESS, 0, alltoall_setup),
    COLLECTIVE(alltoallv, MSG_PER_PROCESS, OP_COUNTS, alltoall_setup),
    COLLECTIVE(alltoallw, MSG_PER_PROCESS, 0, alltoall_setup),
    REDUCTION(reduce, MSG_BUFFER, OP_ROOT, reduce_setup),
    REDUCTION(allreduce, MSG_BUFFER, 0, allreduce_setup),
    REDUCTION(reduce_scatter, MSG_PER_PROCESS, OP_COUNTS, reduce_scatter_setup),
    REDUCTION(reduce_scatter_block, MSG_PER_PROCESS, 0, reduce_scatter_setup),
    REDUCTION(scan, MSG_BUFFER, 0, scan_setup),
    REDUCTION(exscan, MSG_BUFFER, 0, exscan_setup),
#undef COLLECTIVE
#undef REDUCTION
/* The derived families (mock-ups, decompositions, halo, and p2p below) each keep private state,
   freed by the family's <family>_free. A mock-up or decomposition checks exactly what the op it
   emulates checks: blocks or sums. */
#define DERIVED(op_family, op, msg, op_flags, op_setup, op_run, verify)                         \
    {.name = #op, .family = #op_family, .msg_size = msg, .flags = op_flags, .setup = op_setup,   \
     .run = op_run, .fill = op_fill_##verify, .check = op_check_##verify,                        \
     .free = op_family##_free}
#define MOCKUP(name, msg, flags, setup, run, verify)                                           \
    DERIVED(mockup, name, msg, flags, setup, run, verify)
#define SUM OP_REDUCTION
    MOCKUP(bcast_as_allgatherv, MSG_BUFFER, OP_ROOT, bcast_as_allgatherv_setup,
           bcast_as_allgatherv_run, blocks),
    MOCKUP(bcast_as_scatter_allgather, MSG_BUFFER, OP_ROOT, bcast_as_scatter_allgather_setup,
           bcast_as_scatter_allgather_run, blocks),
    MOCKUP(scatter_as_bcast, MSG_PER_PROCESS, OP_ROOT, scatter_as_bcast_setup,
           scatter_as_bcast_run, blocks),
    MOCKUP(gather_as_allgather, MSG_PER_PROCESS, OP_ROOT, gather_as_allgather_setup,
           gather_as_allgather_run, blocks),
    MOCKUP(gather_as_reduce, MSG_PER_PROCESS, OP_ROOT, gather_as_reduce_setup,
           gather_as_reduce_run, blocks),
    MOCKUP(allgather_as_alltoall, MSG_PER_PROCESS, 0, allgather_as_alltoall_setup,
           allgather_as_alltoall_run, blocks),
    MOCKUP(allgather_as_gather_bcast, MSG_PER_PROCESS, 0, allgather_setup,
           allgather_as_gather_bcast_run, blocks),
    MOCKUP(allgather_as_allreduce, MSG_PER_PROCESS, 0, allgather_setup,
           allgather_as_allreduce_run, blocks),
    MOCKUP(reduce_as_allreduce, MSG_BUFFER, OP_ROOT | SUM, reduce_as_allreduce_setup,
           reduce_as_allreduce_run, reduction),
    MOCKUP(reduce_as_reduce_scatter_block_gather, MSG_BUFFER, OP_ROOT | SUM,
           reduce_as_reduce_scatter_block_gather_setup,
           reduce_as_reduce_scatter_block_gather_run, reduction),
    MOCKUP(reduce_as_reduce_scatter_gather, MSG_BUFFER, OP_ROOT | SUM,
           reduce_as_reduce_scatter_gather_setup, reduce_as_reduce_scatter_gather_run,
           reduction),
    MOCKUP(allreduce_as_reduce_bcast, MSG_BUFFER, SUM, allreduce_setup,
           allreduce_as_reduce_bcast_run, reduction),
    MOCKUP(allreduce_as_reduce_scatter_block_allgather, MSG_BUFFER, SUM,
           allreduce_as_reduce_scatter_block_allgather_setup,
           allreduce_as_reduce_scatter_block_allgather_run, reduction),
    MOCKUP(allreduce_as_reduce_scatter_allgather, MSG_BUFFER, SUM,
           allreduce_as_reduce_scatter_allgather_setup, allreduce_as_reduce_scatter_allgather_run,
           reduction),
    /* reduce_scatter with equal counts is the mock-up itself */
    MOCKUP(reduce_scatter_block_as_reduce_scatter, MSG_PER_PROCESS, SUM, reduce_scatter_setup,
           reduce_scatter_run, reduction),
    MOCKUP(reduce_scatter_as_reduce_scatterv, MSG_PER_PROCESS, SUM | OP_COUNTS,
           reduce_scatter_as_reduce_scatterv_setup, reduce_scatter_as_reduce_scatterv_run,
           reduction),
    MOCKUP(reduce_scatter_as_allreduce, MSG_PER_PROCESS, SUM, reduce_scatter_as_allreduce_setup,
           reduce_scatter_as_allreduce_run, reduction),
    MOCKUP(scan_as_exscan_reduce_local, MSG_BUFFER, SUM, scan_setup,
           scan_as_exscan_reduce_local_run, reduction),
    /* alltoallv with equal counts is the mock-up itself */
    MOCKUP(alltoall_as_alltoallv, MSG_PER_PROCESS, 0, alltoall_setup, alltoallv_run, blocks),
    MOCKUP(allgather_as_neighbor_allgather, MSG_PER_PROCESS, 0,
           allgather_as_neighbor_allgather_setup, allgather_as_neighbor_allgather_run, blocks),
    MOCKUP(alltoall_as_neighbor_alltoall, MSG_PER_PROCESS, 0,
           alltoall_as_neighbor_alltoall_setup, alltoall_as_neighbor_alltoall_run, blocks),
    /* Hunold 2023, Figure 5: Allreduce of the whole vector, each keeping its block; with equal
       blocks it is reduce_scatter_as_allreduce itself */
    MOCKUP(reduce_scatter_block_as_allreduce, MSG_PER_PROCESS, SUM,
           reduce_scatter_as_allreduce_setup, reduce_scatter_as_allreduce_run, reduction),
#undef MOCKUP
/* hier_flags: what only the hierarchical variant needs (alltoall: the leader gathers its
   node's send vectors). */
#define DECOMPOSED(op, msg, flags, hier_flags, verify)                                         \
    DERIVED(hier, op##_as_hier, msg, (flags) | (hier_flags), op##_as_hier_setup,               \
            op##_as_hier_run, verify),                                                         \
    DERIVED(lane, op##_as_lane, msg, (flags) | OP_EQUAL_NODES, op##_as_lane_setup,            \
            op##_as_lane_run, verify)
    DECOMPOSED(bcast, MSG_BUFFER, OP_ROOT, 0, blocks),
    DECOMPOSED(reduce, MSG_BUFFER, OP_ROOT | SUM, 0, reduction),
    DECOMPOSED(allreduce, MSG_BUFFER, SUM, 0, reduction),
    DECOMPOSED(allgather, MSG_PER_PROCESS, 0, 0, blocks),
    DECOMPOSED(alltoall, MSG_PER_PROCESS, 0, OP_NODE_VECTORS, blocks),
    DECOMPOSED(reduce_scatter_block, MSG_PER_PROCESS, SUM, 0, reduction),
    DECOMPOSED(gather, MSG_PER_PROCESS, OP_ROOT, 0, blocks),
    DECOMPOSED(scatter, MSG_PER_PROCESS, OP_ROOT, 0, blocks),
#undef DECOMPOSED
#define P2P(op, op_setup, op_before_sync)                                                      \
    {.name = #op, .family = "p2p", .msg_size = MSG_PER_PAIR, .setup = op_setup, .run = op##_run, \
     .fill = op_fill_blocks, .check = op_check_blocks, .free = p2p_free,                         \
     .before_sync = op_before_sync}
    P2P(send, p2p_oneway_setup, NULL),
    P2P(ssend, p2p_oneway_setup, NULL),
    P2P(rsend, p2p_oneway_setup, rsend_before_sync),
    P2P(isend_wait, p2p_oneway_setup, NULL),
    P2P(sendrecv, p2p_exchange_setup, NULL),
    P2P(isend_recv_wait, p2p_exchange_setup, NULL),
    P2P(send_irecv_wait, p2p_exchange_setup, NULL),
#undef P2P
    DERIVED(halo, halo, MSG_PER_NEIGHBOR, REQ, halo_setup, halo_run, blocks),
#undef DERIVED
#undef SUM
};
const size_t operation_count = sizeof operation_table / sizeof operation_table[0];

int operation_find(const char *name)
{
    for (size_t i = 0; i < operation_count; i++)
        if (strcmp(operation_table[i].name, name) == 0)
            return (int)i;
    return -1;
}

int operation_has(const struct operation *op, unsigned flag)
{
    return (op->flags & flag) != 0;
}

const char *msg_semantics_name(enum msg_semantics m)
{
    static const char *const names[] = {"none", "per_neighbor", "per_process", "per_pair",
                                        "buffer"};
    return names[m];
}

const char *operation_algorithm_of(const struct operation *op)
{
    return op->algorithm_of ? op->algorithm_of : "none";
}

void operations_list(FILE *out)
{
    fputs("op\tfamily\tmsg_size\troot\twork\ttopology\treduction\tcounts\tnode_vectors\t"
          "algorithm_of\n",
          out);
    for (size_t i = 0; i < operation_count; i++) {
        const struct operation *op = &operation_table[i];
        fprintf(out, "%s\t%s\t%s\t%d\t%d\t%s\t%d\t%d\t%d\t%s\n", op->name, op->family,
                msg_semantics_name(op->msg_size), operation_has(op, OP_ROOT),
                operation_has(op, OP_NONBLOCKING),
                operation_has(op, OP_TOPOLOGY_REQUIRED) ? "required" : "optional",
                operation_has(op, OP_REDUCTION), operation_has(op, OP_COUNTS),
                operation_has(op, OP_NODE_VECTORS), operation_algorithm_of(op));
    }
}
