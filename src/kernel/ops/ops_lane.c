/* Multi-lane decompositions of collectives, <op>_as_lane (Träff & Hunold, "Decomposing MPI
   collectives for exploiting multi-lane communication"): the experiment's communicator split by
   node (node_layout.h) plus lane communicators of the ranks with equal node-local rank, one per
   node-local rank. Buffers, msg_size and --verify expectations are those of the decomposed op
   (its setup runs first); the communicators and the datatype are built in setup and freed in
   lane_free, outside the timed region.

   Blocks of per-process ops are ordered by rank of ctx->comm. The algorithms work in node-major
   order; when a topology's reordering makes the two differ, layout->order maps between them
   (packing steps or one local permutation). */
#include "ops/ops_lane.h"

#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "ops/node_layout.h"
#include "ops/op_buffers.h"
#include "ops/op_split.h"
#include "ops/ops_collective.h"

struct lane_state {
    struct node_layout layout;
    MPI_Comm lanes;                  /* the ranks of every node with this node-local rank */
    MPI_Datatype strided;            /* every local_size-th block, extent one block */
    size_t chunk;                    /* elements per part of a split buffer */
    unsigned char *tmp, *tmp2;       /* scratch, from ctx->buffers */
};

/* The node layout and the lane communicators. */
static struct lane_state *lane_state_new(struct op_context *ctx)
{
    struct lane_state *lane = xcalloc(1, sizeof *lane);
    lane->lanes = MPI_COMM_NULL;
    lane->strided = MPI_DATATYPE_NULL;
    ctx->state = lane;
    struct node_layout *layout = &lane->layout;
    node_layout_create(ctx, layout);
    /* Lane algorithms split buffers into local_size parts, one per lane: every node must have
       the same number of ranks. Validation rejects lane ops otherwise (OP_EQUAL_NODES); this
       guards the algorithms should a communicator ever span other nodes. */
    if (!node_layout_regular(layout))
        fail_abort("exp_id %lld: lane decompositions need nodes of equal size (node 0 "
                   "has %d ranks); use --node-size with a divisor of the rank count",
                   (long long)ctx->exp->exp_id, layout->node_size[0]);
    MPI_CHECK(MPI_Comm_split(ctx->comm, layout->local, layout->node_pos, &lane->lanes));
    return lane;
}

void lane_free(struct op_context *ctx)
{
    struct lane_state *lane = ctx->state;
    if (!lane)
        return;
    node_layout_free(&lane->layout);
    if (lane->lanes != MPI_COMM_NULL)
        MPI_CHECK(MPI_Comm_free(&lane->lanes));
    if (lane->strided != MPI_DATATYPE_NULL)
        MPI_CHECK(MPI_Type_free(&lane->strided));
    free(lane);
    ctx->state = NULL;
}

/* Split-buffer lane ops: msg_size padded to local_size equal parts (one per lane). */
static struct lane_state *lane_parts(struct op_context *ctx, int pad_send, int pad_recv)
{
    struct lane_state *lane = lane_state_new(ctx);
    const struct node_layout *layout = &lane->layout;
    lane->chunk = split_chunk((size_t)ctx->count, layout->local_size);
    const size_t padded = (size_t)layout->local_size * lane->chunk * ctx->type_size;
    op_pad_buffers(ctx, pad_send ? padded : 0, pad_recv ? padded : 0);
    return lane;
}

void bcast_as_lane_setup(struct op_context *ctx)
{
    bcast_setup(ctx);
    lane_parts(ctx, 0, 1);
}

/* Scatter in the root's node, bcast of part l on lane l, allgather in every node. */
void bcast_as_lane_run(struct op_context *ctx)
{
    const struct lane_state *lane = ctx->state;
    const struct node_layout *layout = &lane->layout;
    const int root_node = layout->rank_node[ctx->root];
    unsigned char *part = ctx->recvbuf + (size_t)layout->local * lane->chunk * ctx->type_size;
    if (layout->node_pos == root_node)
        split_scatter(ctx, ctx->recvbuf, lane->chunk, layout->rank_local[ctx->root], layout->node);
    MPI_CHECK(MPI_Bcast(part, op_int_count(lane->chunk), ctx->dtype, root_node, lane->lanes));
    split_allgather(ctx, ctx->recvbuf, lane->chunk, layout->node);
}

void reduce_as_lane_setup(struct op_context *ctx)
{
    reduce_setup(ctx);
    struct lane_state *lane = lane_parts(ctx, 1, ctx->rank == ctx->root);
    const struct node_layout *layout = &lane->layout;
    lane->tmp = op_alloc_scratch(ctx, (size_t)layout->local_size * lane->chunk * ctx->type_size);
}

/* Reduce_scatter_block in every node, reduce of part l on lane l to the root's node, gather
   there at the root. */
void reduce_as_lane_run(struct op_context *ctx)
{
    const struct lane_state *lane = ctx->state;
    const struct node_layout *layout = &lane->layout;
    const int root_node = layout->rank_node[ctx->root];
    const size_t offset = (size_t)layout->local * lane->chunk * ctx->type_size;
    const int n = op_int_count(lane->chunk);
    split_reduce_scatter(ctx, ctx->sendbuf, lane->tmp, lane->chunk, layout->node);
    MPI_CHECK(MPI_Reduce(layout->node_pos == root_node ? MPI_IN_PLACE : lane->tmp + offset,
                         lane->tmp + offset, n, ctx->dtype, MPI_SUM, root_node, lane->lanes));
    if (layout->node_pos == root_node)
        MPI_CHECK(MPI_Gather(lane->tmp + offset, n, ctx->dtype, ctx->recvbuf, n, ctx->dtype,
                             layout->rank_local[ctx->root], layout->node));
}

void allreduce_as_lane_setup(struct op_context *ctx)
{
    allreduce_setup(ctx);
    lane_parts(ctx, 1, 1);
}

/* Reduce_scatter_block in every node, allreduce of part l on lane l, allgather in every
   node. */
void allreduce_as_lane_run(struct op_context *ctx)
{
    const struct lane_state *lane = ctx->state;
    const struct node_layout *layout = &lane->layout;
    split_reduce_scatter(ctx, ctx->sendbuf, ctx->recvbuf, lane->chunk, layout->node);
    MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE,
                            ctx->recvbuf + (size_t)layout->local * lane->chunk * ctx->type_size,
                            op_int_count(lane->chunk), ctx->dtype, MPI_SUM, lane->lanes));
    split_allgather(ctx, ctx->recvbuf, lane->chunk, layout->node);
}

/* A datatype selecting one block per node (nodes blocks, every local_size-th, extent one block):
   the k-th instance covers the blocks of node-local rank k in a node-major vector. */
static struct lane_state *lane_blocks(struct op_context *ctx)
{
    struct lane_state *lane = lane_state_new(ctx);
    const struct node_layout *layout = &lane->layout;
    MPI_Datatype vector;
    MPI_CHECK(MPI_Type_vector(layout->nodes, ctx->count,
                              op_int_count((size_t)layout->local_size * ctx->count), ctx->dtype,
                              &vector));
    MPI_CHECK(MPI_Type_create_resized(vector, 0, (MPI_Aint)ctx->block, &lane->strided));
    MPI_CHECK(MPI_Type_free(&vector));
    MPI_CHECK(MPI_Type_commit(&lane->strided));
    return lane;
}

void allgather_as_lane_setup(struct op_context *ctx)
{
    allgather_setup(ctx);
    struct lane_state *lane = lane_blocks(ctx);
    const struct node_layout *layout = &lane->layout;
    lane->tmp = op_alloc_scratch(ctx, (size_t)layout->nodes * ctx->block);
    if (layout->order)
        lane->tmp2 = op_alloc_scratch(ctx, (size_t)ctx->size * ctx->block);
}

/* Allgather on the lane (one block per node), then allgather in the node, each lane's blocks
   landing strided at their node-major positions. */
void allgather_as_lane_run(struct op_context *ctx)
{
    const struct lane_state *lane = ctx->state;
    const struct node_layout *layout = &lane->layout;
    unsigned char *all = layout->order ? lane->tmp2 : ctx->recvbuf;
    MPI_CHECK(MPI_Allgather(ctx->sendbuf, ctx->count, ctx->dtype, lane->tmp, ctx->count,
                            ctx->dtype, lane->lanes));
    MPI_CHECK(MPI_Allgather(lane->tmp, layout->nodes * ctx->count, ctx->dtype, all, 1,
                            lane->strided, layout->node));
    if (layout->order)
        node_layout_permute(ctx, layout, ctx->recvbuf, all, 0);
}

void alltoall_as_lane_setup(struct op_context *ctx)
{
    alltoall_setup(ctx);
    struct lane_state *lane = lane_blocks(ctx);
    const struct node_layout *layout = &lane->layout;
    lane->tmp = op_alloc_scratch(ctx, (size_t)ctx->size * ctx->block);
    if (layout->order)
        lane->tmp2 = op_alloc_scratch(ctx, (size_t)ctx->size * ctx->block);
}

/* Alltoall in the node (to local rank j: the blocks for every node's rank j), then alltoall on
   the lane (to node m: the blocks of every local rank for m's rank on this lane). */
void alltoall_as_lane_run(struct op_context *ctx)
{
    const struct lane_state *lane = ctx->state;
    const struct node_layout *layout = &lane->layout;
    unsigned char *send = ctx->sendbuf, *recv = ctx->recvbuf;
    if (layout->order) {
        node_layout_permute(ctx, layout, lane->tmp2, ctx->sendbuf, 1);
        send = recv = lane->tmp2;
    }
    MPI_CHECK(MPI_Alltoall(send, 1, lane->strided, lane->tmp, 1, lane->strided, layout->node));
    const int per_node = layout->local_size * ctx->count;
    MPI_CHECK(MPI_Alltoall(lane->tmp, per_node, ctx->dtype, recv, per_node, ctx->dtype,
                           lane->lanes));
    if (layout->order)
        node_layout_permute(ctx, layout, ctx->recvbuf, recv, 0);
}

void reduce_scatter_block_as_lane_setup(struct op_context *ctx)
{
    reduce_scatter_setup(ctx);
    struct lane_state *lane = lane_state_new(ctx);
    const struct node_layout *layout = &lane->layout;
    lane->tmp = op_alloc_scratch(ctx, (size_t)ctx->size * ctx->block);
    lane->tmp2 = op_alloc_scratch(ctx, (size_t)layout->nodes * ctx->block);
}

/* Transpose to lane-major order, reduce_scatter_block in the node (local rank l: the blocks of
   every node's rank l), reduce_scatter_block on the lane. */
void reduce_scatter_block_as_lane_run(struct op_context *ctx)
{
    const struct lane_state *lane = ctx->state;
    const struct node_layout *layout = &lane->layout;
    const size_t nodes = (size_t)layout->nodes, s = (size_t)layout->local_size;
    for (size_t m = 0; m < nodes; m++)
        for (size_t j = 0; j < s; j++)
            memcpy(op_block_at(lane->tmp, ctx, j * nodes + m),
                   op_block_at(ctx->sendbuf, ctx,
                               (size_t)node_layout_rank_at(layout, (int)(m * s + j))),
                   ctx->block);
    MPI_CHECK(MPI_Reduce_scatter_block(lane->tmp, lane->tmp2, layout->nodes * ctx->count,
                                       ctx->dtype, MPI_SUM, layout->node));
    MPI_CHECK(MPI_Reduce_scatter_block(lane->tmp2, ctx->recvbuf, ctx->count, ctx->dtype, MPI_SUM,
                                       lane->lanes));
}

/* Lane-major (local rank l's blocks of every node, node by node) from or to rank order. */
static void lane_major(const struct op_context *ctx, unsigned char *lanes, unsigned char *ranks,
                       int to_lanes)
{
    const struct lane_state *lane = ctx->state;
    const struct node_layout *layout = &lane->layout;
    const size_t nodes = (size_t)layout->nodes, s = (size_t)layout->local_size;
    for (size_t l = 0; l < s; l++)
        for (size_t m = 0; m < nodes; m++) {
            unsigned char *lane_block = op_block_at(lanes, ctx, l * nodes + m);
            unsigned char *rank_block =
                op_block_at(ranks, ctx, (size_t)node_layout_rank_at(layout, (int)(m * s + l)));
            memcpy(to_lanes ? lane_block : rank_block, to_lanes ? rank_block : lane_block,
                   ctx->block);
        }
}

void gather_as_lane_setup(struct op_context *ctx)
{
    gather_setup(ctx);
    struct lane_state *lane = lane_state_new(ctx);
    const struct node_layout *layout = &lane->layout;
    lane->tmp = op_alloc_scratch(ctx, (size_t)layout->nodes * ctx->block);
    lane->tmp2 = op_alloc_scratch(ctx, ctx->rank == ctx->root ? (size_t)ctx->size * ctx->block : 0);
}

/* Gather on the lane to the root's node (one block per node), gather in that node at the root
   (lane by lane), local transpose into rank order. */
void gather_as_lane_run(struct op_context *ctx)
{
    const struct lane_state *lane = ctx->state;
    const struct node_layout *layout = &lane->layout;
    const int root_node = layout->rank_node[ctx->root];
    const int per_lane = layout->nodes * ctx->count;
    MPI_CHECK(MPI_Gather(ctx->sendbuf, ctx->count, ctx->dtype, lane->tmp, ctx->count, ctx->dtype,
                         root_node, lane->lanes));
    if (layout->node_pos != root_node)
        return;
    MPI_CHECK(MPI_Gather(lane->tmp, per_lane, ctx->dtype, lane->tmp2, per_lane, ctx->dtype,
                         layout->rank_local[ctx->root], layout->node));
    if (ctx->rank == ctx->root)
        lane_major(ctx, lane->tmp2, ctx->recvbuf, 0);
}

void scatter_as_lane_setup(struct op_context *ctx)
{
    scatter_setup(ctx);
    struct lane_state *lane = lane_state_new(ctx);
    const struct node_layout *layout = &lane->layout;
    lane->tmp = op_alloc_scratch(ctx, (size_t)layout->nodes * ctx->block);
    lane->tmp2 = op_alloc_scratch(ctx, ctx->rank == ctx->root ? (size_t)ctx->size * ctx->block : 0);
}

/* Local transpose into lane-major order at the root, scatter in the root's node (to local rank
   l: the blocks of every node's rank l), scatter on the lane. */
void scatter_as_lane_run(struct op_context *ctx)
{
    const struct lane_state *lane = ctx->state;
    const struct node_layout *layout = &lane->layout;
    const int root_node = layout->rank_node[ctx->root];
    const int per_lane = layout->nodes * ctx->count;
    if (ctx->rank == ctx->root)
        lane_major(ctx, lane->tmp2, ctx->sendbuf, 1);
    if (layout->node_pos == root_node)
        MPI_CHECK(MPI_Scatter(lane->tmp2, per_lane, ctx->dtype, lane->tmp, per_lane, ctx->dtype,
                              layout->rank_local[ctx->root], layout->node));
    MPI_CHECK(MPI_Scatter(lane->tmp, ctx->count, ctx->dtype, ctx->recvbuf, ctx->count, ctx->dtype,
                          root_node, lane->lanes));
}
