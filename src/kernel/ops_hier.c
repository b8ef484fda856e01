/* Hierarchical (<op>_as_hier) and multi-lane (<op>_as_lane) decompositions of collectives
   (MPINPC GL2/GL3; Träff & Hunold, "Decomposing MPI collectives for exploiting multi-lane
   communication"). Both split the experiment's communicator by node (node.c: shared memory or
   --node-size): hier adds a communicator of node leaders (node-local rank 0), lane adds lane
   communicators of the ranks with equal node-local rank, one per node-local rank. Buffers,
   msg_size and --verify expectations are those of the decomposed op (its setup runs first);
   the communicators are built in setup and freed in aux_free, outside the timed region.

   Blocks of per-process ops are ordered by rank of ctx->comm. The algorithms work in node-major
   order (node by node, nodes ordered by their lowest rank); when a topology's reordering makes
   the two differ, aux->order maps between them (packing steps or one local permutation). */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "ops.h"
#include "ops_aux.h"

enum { HIER_TAG = 4711 };

/* ---- node layout -------------------------------------------------------------------------- */

/* Communicators and the node layout of ctx->comm; lanes: also the lane communicators. */
static struct aux *layout_create(struct op_context *ctx, int lanes)
{
    struct aux *a = aux_new(ctx);
    const int p = ctx->size;
    MPI_CHECK(MPI_Comm_split(ctx->comm, ctx->node->node_index, ctx->rank, &a->node));
    MPI_CHECK(MPI_Comm_rank(a->node, &a->local));
    MPI_CHECK(MPI_Comm_size(a->node, &a->local_size));
    MPI_CHECK(MPI_Comm_split(ctx->comm, a->local == 0 ? 0 : MPI_UNDEFINED, ctx->rank,
                             &a->leaders));

    /* Node of every rank, numbered by lowest rank: that node's leader's rank in a->leaders,
       which orders leaders by rank. Node-local ranks follow rank order (split key). */
    int *node_index = xmalloc((size_t)p * sizeof *node_index);
    MPI_CHECK(MPI_Allgather(&ctx->node->node_index, 1, MPI_INT, node_index, 1, MPI_INT,
                            ctx->comm));
    a->rank_node = xmalloc((size_t)p * sizeof *a->rank_node);
    a->rank_local = xmalloc((size_t)p * sizeof *a->rank_local);
    a->node_size = xcalloc((size_t)p, sizeof *a->node_size);
    a->node_first = xcalloc((size_t)p, sizeof *a->node_first);
    for (int r = 0; r < p; r++) {
        int n = 0;
        while (n < a->nodes && node_index[a->node_first[n]] != node_index[r])
            n++;
        if (n == a->nodes)
            a->node_first[a->nodes++] = r; /* the lowest rank, for now */
        a->rank_node[r] = n;
        a->rank_local[r] = a->node_size[n]++;
    }
    free(node_index);
    /* node_first becomes the node-major position of each node's first rank. */
    a->regular = 1;
    for (int n = 0, first = 0; n < a->nodes; first += a->node_size[n++]) {
        a->node_first[n] = first;
        a->regular &= a->node_size[n] == a->node_size[0];
    }
    a->node_pos = a->rank_node[ctx->rank];
    a->order = xmalloc((size_t)p * sizeof *a->order);
    int identity = 1;
    for (int r = 0; r < p; r++) {
        int pos = a->node_first[a->rank_node[r]] + a->rank_local[r];
        a->order[pos] = r;
        identity &= pos == r;
    }
    if (identity) {
        free(a->order);
        a->order = NULL;
    }
    if (lanes) {
        /* Lane algorithms split buffers into local_size parts, one per lane: every node must
           have the same number of ranks. Validation rejects lane ops otherwise (OP_EQUAL_NODES);
           this guards the algorithms should a communicator ever span other nodes. */
        if (!a->regular)
            fail_runtime("exp_id %lld: lane decompositions need nodes of equal size (node 0 "
                         "has %d ranks); use --node-size with a divisor of the rank count",
                         (long long)ctx->exp->exp_id, a->node_size[0]);
        MPI_CHECK(MPI_Comm_split(ctx->comm, a->local, a->node_pos, &a->lanes));
    }
    return a;
}

/* Rank of ctx->comm at node-major position pos. */
static int rank_at(const struct aux *a, int pos)
{
    return a->order ? a->order[pos] : pos;
}

static unsigned char *block_at(unsigned char *buf, const struct op_context *ctx, size_t i)
{
    return buf + i * ctx->block;
}

/* dst[pos] = src[rank_at(pos)] (to node-major order) or the inverse (from it). */
static void permute_blocks(const struct op_context *ctx, unsigned char *dst,
                           unsigned char *src, int to_node_major)
{
    const struct aux *a = ctx->state;
    for (int pos = 0; pos < ctx->size; pos++) {
        size_t r = (size_t)rank_at(a, pos);
        if (to_node_major)
            memcpy(block_at(dst, ctx, (size_t)pos), block_at(src, ctx, r), ctx->block);
        else
            memcpy(block_at(dst, ctx, r), block_at(src, ctx, (size_t)pos), ctx->block);
    }
}

static int is_leader(const struct aux *a)
{
    return a->leaders != MPI_COMM_NULL;
}

/* Per node: `blocks_per_rank` blocks of count elements for each of its ranks. */
static void node_vectors(struct op_context *ctx, int blocks_per_rank)
{
    struct aux *a = ctx->state;
    a->counts = xmalloc((size_t)a->nodes * sizeof *a->counts);
    a->displs = xmalloc((size_t)a->nodes * sizeof *a->displs);
    for (int n = 0; n < a->nodes; n++) {
        a->counts[n] = aux_int((size_t)blocks_per_rank * (size_t)a->node_size[n] *
                               (size_t)ctx->count);
        a->displs[n] = aux_int((size_t)blocks_per_rank * (size_t)a->node_first[n] *
                               (size_t)ctx->count);
    }
}

static unsigned char *scratch(struct op_context *ctx, size_t bytes)
{
    return buffer_alloc(&ctx->buffers, bytes);
}

/* ---- hierarchical ------------------------------------------------------------------------- */

void bcast_as_hier_setup(struct op_context *ctx)
{
    bcast_setup(ctx);
    layout_create(ctx, 0);
}

/* Root to its node's leader, leaders' bcast, bcast in every node. */
void bcast_as_hier_run(struct op_context *ctx)
{
    const struct aux *a = ctx->state;
    const int root_node = a->rank_node[ctx->root], root_local = a->rank_local[ctx->root];
    if (root_local != 0 && a->node_pos == root_node) {
        if (a->local == root_local)
            MPI_CHECK(MPI_Send(ctx->recvbuf, ctx->count, ctx->dtype, 0, HIER_TAG, a->node));
        else if (a->local == 0)
            MPI_CHECK(MPI_Recv(ctx->recvbuf, ctx->count, ctx->dtype, root_local, HIER_TAG,
                               a->node, MPI_STATUS_IGNORE));
    }
    if (is_leader(a))
        MPI_CHECK(MPI_Bcast(ctx->recvbuf, ctx->count, ctx->dtype, root_node, a->leaders));
    MPI_CHECK(MPI_Bcast(ctx->recvbuf, ctx->count, ctx->dtype, 0, a->node));
}

void reduce_as_hier_setup(struct op_context *ctx)
{
    reduce_setup(ctx);
    struct aux *a = layout_create(ctx, 0);
    a->tmp = scratch(ctx, ctx->block);
    a->tmp2 = scratch(ctx, ctx->block);
}

/* Reduce in every node, reduce of the leaders to the root's node, its leader to the root. */
void reduce_as_hier_run(struct op_context *ctx)
{
    const struct aux *a = ctx->state;
    const int root_node = a->rank_node[ctx->root], root_local = a->rank_local[ctx->root];
    MPI_CHECK(MPI_Reduce(ctx->sendbuf, a->tmp, ctx->count, ctx->dtype, MPI_SUM, 0, a->node));
    if (is_leader(a)) {
        void *result = ctx->rank == ctx->root ? ctx->recvbuf : a->tmp2;
        MPI_CHECK(MPI_Reduce(a->tmp, result, ctx->count, ctx->dtype, MPI_SUM, root_node,
                             a->leaders));
    }
    if (root_local != 0 && a->node_pos == root_node) {
        if (a->local == 0)
            MPI_CHECK(MPI_Send(a->tmp2, ctx->count, ctx->dtype, root_local, HIER_TAG, a->node));
        else if (a->local == root_local)
            MPI_CHECK(MPI_Recv(ctx->recvbuf, ctx->count, ctx->dtype, 0, HIER_TAG, a->node,
                               MPI_STATUS_IGNORE));
    }
}

void allreduce_as_hier_setup(struct op_context *ctx)
{
    allreduce_setup(ctx);
    layout_create(ctx, 0);
}

void allreduce_as_hier_run(struct op_context *ctx)
{
    const struct aux *a = ctx->state;
    MPI_CHECK(MPI_Reduce(ctx->sendbuf, ctx->recvbuf, ctx->count, ctx->dtype, MPI_SUM, 0,
                         a->node));
    if (is_leader(a))
        MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, ctx->recvbuf, ctx->count, ctx->dtype, MPI_SUM,
                                a->leaders));
    MPI_CHECK(MPI_Bcast(ctx->recvbuf, ctx->count, ctx->dtype, 0, a->node));
}

void allgather_as_hier_setup(struct op_context *ctx)
{
    allgather_setup(ctx);
    struct aux *a = layout_create(ctx, 0);
    node_vectors(ctx, 1);
    if (a->order)
        a->tmp = scratch(ctx, (size_t)ctx->size * ctx->block);
}

/* Gather in every node into its segment, leaders' allgatherv of the segments, bcast of the
   whole vector in every node. */
void allgather_as_hier_run(struct op_context *ctx)
{
    const struct aux *a = ctx->state;
    unsigned char *all = a->order ? a->tmp : ctx->recvbuf;
    MPI_CHECK(MPI_Gather(ctx->sendbuf, ctx->count, ctx->dtype,
                         block_at(all, ctx, (size_t)a->node_first[a->node_pos]), ctx->count,
                         ctx->dtype, 0, a->node));
    if (is_leader(a))
        MPI_CHECK(MPI_Allgatherv(MPI_IN_PLACE, 0, ctx->dtype, all, a->counts, a->displs,
                                 ctx->dtype, a->leaders));
    MPI_CHECK(MPI_Bcast(all, ctx->size * ctx->count, ctx->dtype, 0, a->node));
    if (a->order)
        permute_blocks(ctx, ctx->recvbuf, all, 0);
}

void alltoall_as_hier_setup(struct op_context *ctx)
{
    alltoall_setup(ctx);
    struct aux *a = layout_create(ctx, 0);
    node_vectors(ctx, a->local_size);
    const size_t node_bytes = (size_t)a->local_size * (size_t)ctx->size * ctx->block;
    a->tmp = scratch(ctx, is_leader(a) ? node_bytes : 0);
    a->tmp2 = scratch(ctx, is_leader(a) ? node_bytes : 0);
}

/* Gather of the node's send vectors at the leader, leaders' alltoallv of what goes from node
   to node, scatter in every node. The leader packs twice: by destination node, then by
   destination rank (in rank order of ctx->comm). */
void alltoall_as_hier_run(struct op_context *ctx)
{
    const struct aux *a = ctx->state;
    const size_t p = (size_t)ctx->size, s = (size_t)a->local_size;
    MPI_CHECK(MPI_Gather(ctx->sendbuf, ctx->size * ctx->count, ctx->dtype, a->tmp,
                         ctx->size * ctx->count, ctx->dtype, 0, a->node));
    if (is_leader(a)) {
        /* tmp[i][q]: from local rank i to rank q  ->  tmp2[node m][i][j]: to m's rank j. */
        for (int m = 0; m < a->nodes; m++)
            for (size_t i = 0; i < s; i++)
                for (int j = 0; j < a->node_size[m]; j++)
                    memcpy(block_at(a->tmp2, ctx, s * (size_t)a->node_first[m] +
                                                      i * (size_t)a->node_size[m] + (size_t)j),
                           block_at(a->tmp, ctx,
                                    i * p + (size_t)rank_at(a, a->node_first[m] + j)),
                           ctx->block);
        MPI_CHECK(MPI_Alltoallv(a->tmp2, a->counts, a->displs, ctx->dtype, a->tmp, a->counts,
                                a->displs, ctx->dtype, a->leaders));
        /* tmp[node n][i'][j]: from n's rank i' to local rank j  ->  tmp2[j][rank of (n, i')]. */
        for (int n = 0; n < a->nodes; n++)
            for (int i = 0; i < a->node_size[n]; i++)
                for (size_t j = 0; j < s; j++)
                    memcpy(block_at(a->tmp2, ctx,
                                    j * p + (size_t)rank_at(a, a->node_first[n] + i)),
                           block_at(a->tmp, ctx, s * (size_t)a->node_first[n] + (size_t)i * s + j),
                           ctx->block);
    }
    MPI_CHECK(MPI_Scatter(a->tmp2, ctx->size * ctx->count, ctx->dtype, ctx->recvbuf,
                          ctx->size * ctx->count, ctx->dtype, 0, a->node));
}

void reduce_scatter_block_as_hier_setup(struct op_context *ctx)
{
    reduce_scatter_setup(ctx);
    struct aux *a = layout_create(ctx, 0);
    node_vectors(ctx, 1);
    a->tmp = scratch(ctx, is_leader(a) ? (size_t)ctx->size * ctx->block : 0);
    a->tmp2 = scratch(ctx, is_leader(a) ? (size_t)ctx->size * ctx->block : 0);
}

/* Reduce of the whole vector at every leader, leaders' reduce_scatter by node, scatter in
   every node. */
void reduce_scatter_block_as_hier_run(struct op_context *ctx)
{
    const struct aux *a = ctx->state;
    MPI_CHECK(MPI_Reduce(ctx->sendbuf, a->tmp, ctx->size * ctx->count, ctx->dtype, MPI_SUM, 0,
                         a->node));
    unsigned char *node_major = a->tmp;
    if (is_leader(a)) {
        if (a->order) {
            permute_blocks(ctx, a->tmp2, a->tmp, 1);
            node_major = a->tmp2;
        }
        /* The node's segment lands at the start of the other buffer. */
        unsigned char *segment = node_major == a->tmp ? a->tmp2 : a->tmp;
        MPI_CHECK(MPI_Reduce_scatter(node_major, segment, a->counts, ctx->dtype, MPI_SUM,
                                     a->leaders));
        node_major = segment;
    }
    MPI_CHECK(MPI_Scatter(node_major, ctx->count, ctx->dtype, ctx->recvbuf, ctx->count,
                          ctx->dtype, 0, a->node));
}

void gather_as_hier_setup(struct op_context *ctx)
{
    gather_setup(ctx);
    struct aux *a = layout_create(ctx, 0);
    node_vectors(ctx, 1);
    a->tmp = scratch(ctx, (size_t)ctx->size * ctx->block);
}

/* Gather in every node into its segment at the leader, leaders' gatherv of the segments to the
   root's node, its leader's vector to the root. */
void gather_as_hier_run(struct op_context *ctx)
{
    const struct aux *a = ctx->state;
    const int root_node = a->rank_node[ctx->root], root_local = a->rank_local[ctx->root];
    unsigned char *all = ctx->rank == ctx->root && !a->order ? ctx->recvbuf : a->tmp;
    unsigned char *segment = block_at(all, ctx, (size_t)a->node_first[a->node_pos]);
    MPI_CHECK(MPI_Gather(ctx->sendbuf, ctx->count, ctx->dtype, segment, ctx->count, ctx->dtype,
                         0, a->node));
    if (is_leader(a))
        MPI_CHECK(MPI_Gatherv(a->node_pos == root_node ? MPI_IN_PLACE : segment,
                              a->counts[a->node_pos], ctx->dtype, all, a->counts, a->displs,
                              ctx->dtype, root_node, a->leaders));
    if (root_local != 0 && a->node_pos == root_node) {
        if (a->local == 0)
            MPI_CHECK(MPI_Send(all, ctx->size * ctx->count, ctx->dtype, root_local, HIER_TAG,
                               a->node));
        else if (a->local == root_local)
            MPI_CHECK(MPI_Recv(all, ctx->size * ctx->count, ctx->dtype, 0, HIER_TAG, a->node,
                               MPI_STATUS_IGNORE));
    }
    if (ctx->rank == ctx->root && a->order)
        permute_blocks(ctx, ctx->recvbuf, all, 0);
}

void scatter_as_hier_setup(struct op_context *ctx)
{
    scatter_setup(ctx);
    struct aux *a = layout_create(ctx, 0);
    node_vectors(ctx, 1);
    a->tmp = scratch(ctx, (size_t)ctx->size * ctx->block);
}

/* The root's vector (node-major) to its node's leader, leaders' scatterv of the segments,
   scatter in every node. */
void scatter_as_hier_run(struct op_context *ctx)
{
    const struct aux *a = ctx->state;
    const int root_node = a->rank_node[ctx->root], root_local = a->rank_local[ctx->root];
    unsigned char *all = a->tmp;
    if (ctx->rank == ctx->root) {
        if (a->order)
            permute_blocks(ctx, all, ctx->sendbuf, 1);
        else
            all = ctx->sendbuf;
    }
    if (root_local != 0 && a->node_pos == root_node) {
        if (a->local == root_local)
            MPI_CHECK(MPI_Send(all, ctx->size * ctx->count, ctx->dtype, 0, HIER_TAG, a->node));
        else if (a->local == 0)
            MPI_CHECK(MPI_Recv(all, ctx->size * ctx->count, ctx->dtype, root_local, HIER_TAG,
                               a->node, MPI_STATUS_IGNORE));
    }
    unsigned char *segment = block_at(all, ctx, (size_t)a->node_first[a->node_pos]);
    if (is_leader(a))
        MPI_CHECK(MPI_Scatterv(all, a->counts, a->displs, ctx->dtype,
                               a->node_pos == root_node ? MPI_IN_PLACE : segment,
                               a->counts[a->node_pos], ctx->dtype, root_node, a->leaders));
    MPI_CHECK(MPI_Scatter(segment, ctx->count, ctx->dtype, ctx->recvbuf, ctx->count, ctx->dtype,
                          0, a->node));
}

/* ---- lanes -------------------------------------------------------------------------------- */

/* Split-buffer lane ops: msg_size padded to local_size equal parts (one per lane). */
static struct aux *lane_parts(struct op_context *ctx, int pad_send, int pad_recv)
{
    struct aux *a = layout_create(ctx, 1);
    a->chunk = aux_chunk((size_t)ctx->count, a->local_size);
    const size_t padded = (size_t)a->local_size * a->chunk * ctx->type_size;
    aux_pad_buffers(ctx, pad_send ? padded : 0, pad_recv ? padded : 0);
    return a;
}

void bcast_as_lane_setup(struct op_context *ctx)
{
    bcast_setup(ctx);
    lane_parts(ctx, 0, 1);
}

/* Scatter in the root's node, bcast of part l on lane l, allgather in every node. */
void bcast_as_lane_run(struct op_context *ctx)
{
    const struct aux *a = ctx->state;
    const int root_node = a->rank_node[ctx->root];
    unsigned char *part = ctx->recvbuf + (size_t)a->local * a->chunk * ctx->type_size;
    if (a->node_pos == root_node)
        aux_scatter_parts(ctx, ctx->recvbuf, a->chunk, a->rank_local[ctx->root], a->node);
    MPI_CHECK(MPI_Bcast(part, aux_int(a->chunk), ctx->dtype, root_node, a->lanes));
    aux_allgather_parts(ctx, ctx->recvbuf, a->chunk, a->node);
}

void reduce_as_lane_setup(struct op_context *ctx)
{
    reduce_setup(ctx);
    struct aux *a = lane_parts(ctx, 1, ctx->rank == ctx->root);
    a->tmp = scratch(ctx, (size_t)a->local_size * a->chunk * ctx->type_size);
}

/* Reduce_scatter_block in every node, reduce of part l on lane l to the root's node, gather
   there at the root. */
void reduce_as_lane_run(struct op_context *ctx)
{
    const struct aux *a = ctx->state;
    const int root_node = a->rank_node[ctx->root];
    const size_t offset = (size_t)a->local * a->chunk * ctx->type_size;
    aux_reduce_scatter_parts(ctx, ctx->sendbuf, a->tmp, a->chunk, a->node);
    MPI_CHECK(MPI_Reduce(a->node_pos == root_node ? MPI_IN_PLACE : a->tmp + offset,
                         a->tmp + offset, aux_int(a->chunk), ctx->dtype, MPI_SUM, root_node,
                         a->lanes));
    if (a->node_pos == root_node)
        MPI_CHECK(MPI_Gather(a->tmp + offset, aux_int(a->chunk), ctx->dtype, ctx->recvbuf,
                             aux_int(a->chunk), ctx->dtype, a->rank_local[ctx->root], a->node));
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
    const struct aux *a = ctx->state;
    aux_reduce_scatter_parts(ctx, ctx->sendbuf, ctx->recvbuf, a->chunk, a->node);
    MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE,
                            ctx->recvbuf + (size_t)a->local * a->chunk * ctx->type_size,
                            aux_int(a->chunk), ctx->dtype, MPI_SUM, a->lanes));
    aux_allgather_parts(ctx, ctx->recvbuf, a->chunk, a->node);
}

/* A datatype selecting one block per node (nodes blocks, every local_size-th, extent one block):
   the k-th instance covers the blocks of node-local rank k in a node-major vector. */
static struct aux *lane_blocks(struct op_context *ctx)
{
    struct aux *a = layout_create(ctx, 1);
    MPI_Datatype vector;
    MPI_CHECK(MPI_Type_vector(a->nodes, ctx->count, aux_int((size_t)a->local_size * ctx->count),
                              ctx->dtype, &vector));
    MPI_CHECK(MPI_Type_create_resized(vector, 0, (MPI_Aint)ctx->block, &a->strided));
    MPI_CHECK(MPI_Type_free(&vector));
    MPI_CHECK(MPI_Type_commit(&a->strided));
    return a;
}

void allgather_as_lane_setup(struct op_context *ctx)
{
    allgather_setup(ctx);
    struct aux *a = lane_blocks(ctx);
    a->tmp = scratch(ctx, (size_t)a->nodes * ctx->block);
    if (a->order)
        a->tmp2 = scratch(ctx, (size_t)ctx->size * ctx->block);
}

/* Allgather on the lane (one block per node), then allgather in the node, each lane's blocks
   landing strided at their node-major positions. */
void allgather_as_lane_run(struct op_context *ctx)
{
    const struct aux *a = ctx->state;
    unsigned char *all = a->order ? a->tmp2 : ctx->recvbuf;
    MPI_CHECK(MPI_Allgather(ctx->sendbuf, ctx->count, ctx->dtype, a->tmp, ctx->count,
                            ctx->dtype, a->lanes));
    MPI_CHECK(MPI_Allgather(a->tmp, a->nodes * ctx->count, ctx->dtype, all, 1, a->strided,
                            a->node));
    if (a->order)
        permute_blocks(ctx, ctx->recvbuf, all, 0);
}

void alltoall_as_lane_setup(struct op_context *ctx)
{
    alltoall_setup(ctx);
    struct aux *a = lane_blocks(ctx);
    a->tmp = scratch(ctx, (size_t)ctx->size * ctx->block);
    if (a->order)
        a->tmp2 = scratch(ctx, (size_t)ctx->size * ctx->block);
}

/* Alltoall in the node (to local rank j: the blocks for every node's rank j), then alltoall on
   the lane (to node m: the blocks of every local rank for m's rank on this lane). */
void alltoall_as_lane_run(struct op_context *ctx)
{
    const struct aux *a = ctx->state;
    unsigned char *send = ctx->sendbuf, *recv = ctx->recvbuf;
    if (a->order) {
        permute_blocks(ctx, a->tmp2, ctx->sendbuf, 1);
        send = recv = a->tmp2;
    }
    MPI_CHECK(MPI_Alltoall(send, 1, a->strided, a->tmp, 1, a->strided, a->node));
    const int per_node = a->local_size * ctx->count;
    MPI_CHECK(MPI_Alltoall(a->tmp, per_node, ctx->dtype, recv, per_node, ctx->dtype, a->lanes));
    if (a->order)
        permute_blocks(ctx, ctx->recvbuf, recv, 0);
}

void reduce_scatter_block_as_lane_setup(struct op_context *ctx)
{
    reduce_scatter_setup(ctx);
    struct aux *a = layout_create(ctx, 1);
    a->tmp = scratch(ctx, (size_t)ctx->size * ctx->block);
    a->tmp2 = scratch(ctx, (size_t)a->nodes * ctx->block);
}

/* Transpose to lane-major order, reduce_scatter_block in the node (local rank l: the blocks of
   every node's rank l), reduce_scatter_block on the lane. */
void reduce_scatter_block_as_lane_run(struct op_context *ctx)
{
    const struct aux *a = ctx->state;
    const size_t nodes = (size_t)a->nodes, s = (size_t)a->local_size;
    for (size_t m = 0; m < nodes; m++)
        for (size_t j = 0; j < s; j++)
            memcpy(block_at(a->tmp, ctx, j * nodes + m),
                   block_at(ctx->sendbuf, ctx, (size_t)rank_at(a, (int)(m * s + j))),
                   ctx->block);
    MPI_CHECK(MPI_Reduce_scatter_block(a->tmp, a->tmp2, a->nodes * ctx->count, ctx->dtype,
                                       MPI_SUM, a->node));
    MPI_CHECK(MPI_Reduce_scatter_block(a->tmp2, ctx->recvbuf, ctx->count, ctx->dtype, MPI_SUM,
                                       a->lanes));
}

/* Lane-major (local rank l's blocks of every node, node by node) from or to rank order. */
static void lane_major(const struct op_context *ctx, unsigned char *lanes, unsigned char *ranks,
                       int to_lanes)
{
    const struct aux *a = ctx->state;
    const size_t nodes = (size_t)a->nodes, s = (size_t)a->local_size;
    for (size_t l = 0; l < s; l++)
        for (size_t m = 0; m < nodes; m++) {
            unsigned char *lane = block_at(lanes, ctx, l * nodes + m);
            unsigned char *rank = block_at(ranks, ctx, (size_t)rank_at(a, (int)(m * s + l)));
            memcpy(to_lanes ? lane : rank, to_lanes ? rank : lane, ctx->block);
        }
}

void gather_as_lane_setup(struct op_context *ctx)
{
    gather_setup(ctx);
    struct aux *a = layout_create(ctx, 1);
    a->tmp = scratch(ctx, (size_t)a->nodes * ctx->block);
    a->tmp2 = scratch(ctx, ctx->rank == ctx->root ? (size_t)ctx->size * ctx->block : 0);
}

/* Gather on the lane to the root's node (one block per node), gather in that node at the root
   (lane by lane), local transpose into rank order. */
void gather_as_lane_run(struct op_context *ctx)
{
    const struct aux *a = ctx->state;
    const int root_node = a->rank_node[ctx->root];
    const int per_lane = a->nodes * ctx->count;
    MPI_CHECK(MPI_Gather(ctx->sendbuf, ctx->count, ctx->dtype, a->tmp, ctx->count, ctx->dtype,
                         root_node, a->lanes));
    if (a->node_pos != root_node)
        return;
    MPI_CHECK(MPI_Gather(a->tmp, per_lane, ctx->dtype, a->tmp2, per_lane, ctx->dtype,
                         a->rank_local[ctx->root], a->node));
    if (ctx->rank == ctx->root)
        lane_major(ctx, a->tmp2, ctx->recvbuf, 0);
}

void scatter_as_lane_setup(struct op_context *ctx)
{
    scatter_setup(ctx);
    struct aux *a = layout_create(ctx, 1);
    a->tmp = scratch(ctx, (size_t)a->nodes * ctx->block);
    a->tmp2 = scratch(ctx, ctx->rank == ctx->root ? (size_t)ctx->size * ctx->block : 0);
}

/* Local transpose into lane-major order at the root, scatter in the root's node (to local rank
   l: the blocks of every node's rank l), scatter on the lane. */
void scatter_as_lane_run(struct op_context *ctx)
{
    const struct aux *a = ctx->state;
    const int root_node = a->rank_node[ctx->root];
    const int per_lane = a->nodes * ctx->count;
    if (ctx->rank == ctx->root)
        lane_major(ctx, a->tmp2, ctx->sendbuf, 1);
    if (a->node_pos == root_node)
        MPI_CHECK(MPI_Scatter(a->tmp2, per_lane, ctx->dtype, a->tmp, per_lane, ctx->dtype,
                              a->rank_local[ctx->root], a->node));
    MPI_CHECK(MPI_Scatter(a->tmp, ctx->count, ctx->dtype, ctx->recvbuf, ctx->count, ctx->dtype,
                          root_node, a->lanes));
}
