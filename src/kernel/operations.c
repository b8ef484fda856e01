/* The operation table: the single source of truth for op names (--list-ops, operations.tsv). */
#include "operations.h"

#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "op_common.h"
#include "ops.h"
#include "ops_aux.h"

#define REQ OP_TOPOLOGY_REQUIRED
#define NB OP_NONBLOCKING

/* name, family, msg_size, flags, setup, run, after_run, fill, check, free, before_sync */
const struct operation operation_table[] = {
    {"empty", "overhead", MSG_NONE, 0, NULL, empty_run, NULL, NULL, NULL, NULL, NULL},
    {"topo_create", "topology", MSG_NONE, REQ, topo_create_setup, topo_create_run,
     topo_create_after_run, NULL, NULL, topo_create_free, NULL},
#define NEIGHBOR(name, flags, setup)                                                           \
    {#name, "neighbor", MSG_PER_NEIGHBOR, REQ | (flags), setup, name##_run, NULL,               \
     op_fill_blocks, op_check_blocks, NULL, NULL}
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
    {"barrier", "collective", MSG_NONE, 0, NULL, barrier_run, NULL, NULL, NULL, NULL, NULL},
#define COLLECTIVE(name, msg, flags, setup)                                                    \
    {#name, "collective", msg, flags, setup, name##_run, NULL, op_fill_blocks, op_check_blocks,  \
     NULL, NULL}
#define REDUCTION(name, msg, flags, setup)                                                     \
    {#name, "collective", msg, OP_REDUCTION | (flags), setup, name##_run, NULL,               \
     op_fill_reduction, op_check_reduction, NULL, NULL}
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
/* Issue 5's families share ops_aux.h state (aux_free). A mock-up/decomposition checks exactly
   what the op it emulates checks: blocks or sums. */
#define DERIVED(family, name, msg, flags, setup, run, verify)                                  \
    {#name, family, msg, flags, setup, run, NULL, op_fill_##verify, op_check_##verify, aux_free, \
     NULL}
#define MOCKUP(name, msg, flags, setup, run, verify)                                           \
    DERIVED("mockup", name, msg, flags, setup, run, verify)
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
    DERIVED("hier", op##_as_hier, msg, (flags) | (hier_flags), op##_as_hier_setup,             \
            op##_as_hier_run, verify),                                                         \
    DERIVED("lane", op##_as_lane, msg, (flags) | OP_EQUAL_NODES, op##_as_lane_setup,          \
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
#define P2P(name, setup, before_sync)                                                          \
    {#name, "p2p", MSG_PER_PAIR, 0, setup, name##_run, NULL, op_fill_blocks, op_check_blocks,    \
     aux_free, before_sync}
    P2P(send, p2p_oneway_setup, NULL),
    P2P(ssend, p2p_oneway_setup, NULL),
    P2P(rsend, p2p_oneway_setup, rsend_before_sync),
    P2P(isend_wait, p2p_oneway_setup, NULL),
    P2P(sendrecv, p2p_exchange_setup, NULL),
    P2P(isend_recv_wait, p2p_exchange_setup, NULL),
    P2P(send_irecv_wait, p2p_exchange_setup, NULL),
#undef P2P
    DERIVED("halo", halo, MSG_PER_NEIGHBOR, REQ, halo_setup, halo_run, blocks),
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

void operations_list(FILE *out)
{
    fputs("op\tfamily\tmsg_size\troot\twork\ttopology\treduction\tcounts\n", out);
    for (size_t i = 0; i < operation_count; i++) {
        const struct operation *op = &operation_table[i];
        fprintf(out, "%s\t%s\t%s\t%d\t%d\t%s\t%d\t%d\n", op->name, op->family,
                msg_semantics_name(op->msg_size), operation_has(op, OP_ROOT),
                operation_has(op, OP_NONBLOCKING),
                operation_has(op, OP_TOPOLOGY_REQUIRED) ? "required" : "optional",
                operation_has(op, OP_REDUCTION), operation_has(op, OP_COUNTS));
    }
}

MPI_Datatype dtype_mpi(enum dtype d)
{
    switch (d) {
    case DTYPE_CHAR:
        return MPI_UNSIGNED_CHAR;
    case DTYPE_INT:
        return MPI_INT;
    case DTYPE_FLOAT:
        return MPI_FLOAT;
    default:
        return MPI_DOUBLE;
    }
}

/* ramp: the first k ranks hold floor(count k (k + 1) / (size + 1)) elements together, so rank i
   holds about 2 (i + 1) / (size + 1) equal counts and all hold size * count, as with equal
   counts. q, r split k (k + 1) by size + 1 so that nothing overflows 64 bits. */
static void counts_ramp(int *counts, int *displs, int size, int count)
{
    long long before = 0;
    for (int k = 1; k <= size; k++) {
        const long long pairs = (long long)k * (k + 1), q = pairs / (size + 1),
                        r = pairs % (size + 1);
        const long long upto = count * q + count * r / (size + 1);
        counts[k - 1] = (int)(upto - before);
        displs[k - 1] = (int)before;
        before = upto;
    }
}

void operations_context_create(struct op_context *ctx, const struct experiment *exp, MPI_Comm comm,
                               MPI_Comm world, const struct topology *topo,
                               const struct node_info *node)
{
    memset(ctx, 0, sizeof *ctx);
    ctx->exp = exp;
    ctx->comm = comm;
    ctx->world = world;
    MPI_CHECK(MPI_Comm_rank(comm, &ctx->rank));
    MPI_CHECK(MPI_Comm_size(comm, &ctx->size));
    ctx->topo = topo;
    ctx->nb = topo ? &topo->nb : NULL;
    ctx->node = node;
    ctx->dtype = dtype_mpi(exp->dtype);
    ctx->type_size = dtype_size(exp->dtype);
    ctx->block = (size_t)exp->msg_size;
    ctx->count = (int)(ctx->block / ctx->type_size);
    ctx->root = exp->root;

    int *all_ranks = xmalloc((size_t)ctx->size * sizeof *all_ranks);
    for (int i = 0; i < ctx->size; i++)
        all_ranks[i] = i;
    ctx->all_ranks = all_ranks;

    /* One entry per block the op's buffers hold: validation keeps exactly those blocks below
       INT_MAX bytes, so every displacement fits an int. Entries past them (all ranks for a
       per-neighbour op, or a whole buffer of msg_size per rank) would overflow. */
    const struct operation *op = &operation_table[exp->op];
    int blocks = 0;
    if (op->msg_size == MSG_PER_PROCESS)
        blocks = ctx->size;
    else if (op->msg_size == MSG_PER_NEIGHBOR && ctx->nb)
        blocks = ctx->nb->indegree > ctx->nb->outdegree ? ctx->nb->indegree
                                                         : ctx->nb->outdegree;
    ctx->counts = xmalloc((size_t)blocks * sizeof *ctx->counts);
    ctx->displs = xmalloc((size_t)blocks * sizeof *ctx->displs);
    ctx->byte_displs = xmalloc((size_t)blocks * sizeof *ctx->byte_displs);
    ctx->aint_displs = xmalloc((size_t)blocks * sizeof *ctx->aint_displs);
    ctx->types = xmalloc((size_t)blocks * sizeof *ctx->types);
    for (int i = 0; i < blocks; i++) {
        ctx->counts[i] = ctx->count;
        ctx->displs[i] = i * ctx->count;
        ctx->byte_displs[i] = (int)((size_t)i * ctx->block);
        ctx->aint_displs[i] = (MPI_Aint)((size_t)i * ctx->block);
        ctx->types[i] = ctx->dtype;
    }
    if (exp->counts == COUNTS_RAMP)
        counts_ramp(ctx->counts, ctx->displs, ctx->size, ctx->count);
    ctx->own_counts = xmalloc((size_t)blocks * sizeof *ctx->own_counts);
    ctx->own_displs = xmalloc((size_t)blocks * sizeof *ctx->own_displs);
    for (int i = 0; i < blocks; i++) {
        const int own = op->msg_size == MSG_PER_PROCESS ? ctx->counts[ctx->rank] : ctx->count;
        ctx->own_counts[i] = own;
        ctx->own_displs[i] = i * own;
    }

    buffer_pool_init(&ctx->buffers, (size_t)exp->buffer_offset);
    if (op->setup)
        op->setup(ctx);
}

void operations_context_free(struct op_context *ctx)
{
    const struct operation *op = &operation_table[ctx->exp->op];
    if (op->free)
        op->free(ctx);
    buffer_pool_free(&ctx->buffers);
    free((void *)ctx->all_ranks);
    free(ctx->counts);
    free(ctx->displs);
    free(ctx->own_counts);
    free(ctx->own_displs);
    free(ctx->byte_displs);
    free(ctx->aint_displs);
    free(ctx->types);
}
