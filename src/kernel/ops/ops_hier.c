/* Hierarchical decompositions of collectives, <op>_as_hier (MPINPC GL2/GL3): the experiment's
   communicator split by node (node_layout.h) plus a communicator of node leaders (node-local
   rank 0). Buffers, msg_size and --verify expectations are those of the decomposed op (its
   setup runs first); the communicators are built in setup and freed in hier_free, outside the
   timed region.

   Blocks of per-process ops are ordered by rank of ctx->comm. The algorithms work in node-major
   order; when a topology's reordering makes the two differ, layout->order maps between them
   (packing steps or one local permutation). */
#include "ops/ops_hier.h"

#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "ops/node_layout.h"
#include "ops/op_buffers.h"
#include "ops/ops_collective.h"

enum { HIER_TAG = 4711 };

struct hier_state {
    struct node_layout layout;
    MPI_Comm leaders;                /* the node leaders; MPI_COMM_NULL elsewhere */
    int *counts, *displs;            /* per node, in elements (node_vectors) */
    unsigned char *tmp, *tmp2;       /* scratch, from ctx->buffers */
};

/* The node layout and the leaders' communicator. A node's position in the layout is its
   leader's rank in leaders: both order nodes by their lowest rank. */
static struct hier_state *hier_state_new(struct op_context *ctx)
{
    struct hier_state *hier = xcalloc(1, sizeof *hier);
    hier->leaders = MPI_COMM_NULL;
    ctx->state = hier;
    node_layout_create(ctx, &hier->layout);
    MPI_CHECK(MPI_Comm_split(ctx->comm, hier->layout.local == 0 ? 0 : MPI_UNDEFINED, ctx->rank,
                             &hier->leaders));
    return hier;
}

void hier_free(struct op_context *ctx)
{
    struct hier_state *hier = ctx->state;
    if (!hier)
        return;
    node_layout_free(&hier->layout);
    if (hier->leaders != MPI_COMM_NULL)
        MPI_CHECK(MPI_Comm_free(&hier->leaders));
    free(hier->counts);
    free(hier->displs);
    free(hier);
    ctx->state = NULL;
}

static int is_leader(const struct hier_state *hier)
{
    return hier->leaders != MPI_COMM_NULL;
}

/* Per node: `blocks_per_rank` blocks of count elements for each of its ranks. */
static void node_vectors(struct op_context *ctx, int blocks_per_rank)
{
    struct hier_state *hier = ctx->state;
    const struct node_layout *layout = &hier->layout;
    hier->counts = xmalloc((size_t)layout->nodes * sizeof *hier->counts);
    hier->displs = xmalloc((size_t)layout->nodes * sizeof *hier->displs);
    for (int n = 0; n < layout->nodes; n++) {
        hier->counts[n] = op_int_count((size_t)blocks_per_rank * (size_t)layout->node_size[n] *
                                       (size_t)ctx->count);
        hier->displs[n] = op_int_count((size_t)blocks_per_rank * (size_t)layout->node_first[n] *
                                       (size_t)ctx->count);
    }
}

void bcast_as_hier_setup(struct op_context *ctx)
{
    bcast_setup(ctx);
    hier_state_new(ctx);
}

/* Root to its node's leader, leaders' bcast, bcast in every node. */
void bcast_as_hier_run(struct op_context *ctx)
{
    const struct hier_state *hier = ctx->state;
    const struct node_layout *layout = &hier->layout;
    const int root_node = layout->rank_node[ctx->root], root_local = layout->rank_local[ctx->root];
    if (root_local != 0 && layout->node_pos == root_node) {
        if (layout->local == root_local)
            MPI_CHECK(MPI_Send(ctx->recvbuf, ctx->count, ctx->dtype, 0, HIER_TAG, layout->node));
        else if (layout->local == 0)
            MPI_CHECK(MPI_Recv(ctx->recvbuf, ctx->count, ctx->dtype, root_local, HIER_TAG,
                               layout->node, MPI_STATUS_IGNORE));
    }
    if (is_leader(hier))
        MPI_CHECK(MPI_Bcast(ctx->recvbuf, ctx->count, ctx->dtype, root_node, hier->leaders));
    MPI_CHECK(MPI_Bcast(ctx->recvbuf, ctx->count, ctx->dtype, 0, layout->node));
}

void reduce_as_hier_setup(struct op_context *ctx)
{
    reduce_setup(ctx);
    struct hier_state *hier = hier_state_new(ctx);
    hier->tmp = op_alloc_scratch(ctx, ctx->block);
    hier->tmp2 = op_alloc_scratch(ctx, ctx->block);
}

/* Reduce in every node, reduce of the leaders to the root's node, its leader to the root. */
void reduce_as_hier_run(struct op_context *ctx)
{
    const struct hier_state *hier = ctx->state;
    const struct node_layout *layout = &hier->layout;
    const int root_node = layout->rank_node[ctx->root], root_local = layout->rank_local[ctx->root];
    MPI_CHECK(MPI_Reduce(ctx->sendbuf, hier->tmp, ctx->count, ctx->dtype, MPI_SUM, 0,
                         layout->node));
    if (is_leader(hier)) {
        void *result = ctx->rank == ctx->root ? ctx->recvbuf : hier->tmp2;
        MPI_CHECK(MPI_Reduce(hier->tmp, result, ctx->count, ctx->dtype, MPI_SUM, root_node,
                             hier->leaders));
    }
    if (root_local != 0 && layout->node_pos == root_node) {
        if (layout->local == 0)
            MPI_CHECK(MPI_Send(hier->tmp2, ctx->count, ctx->dtype, root_local, HIER_TAG,
                               layout->node));
        else if (layout->local == root_local)
            MPI_CHECK(MPI_Recv(ctx->recvbuf, ctx->count, ctx->dtype, 0, HIER_TAG, layout->node,
                               MPI_STATUS_IGNORE));
    }
}

void allreduce_as_hier_setup(struct op_context *ctx)
{
    allreduce_setup(ctx);
    hier_state_new(ctx);
}

void allreduce_as_hier_run(struct op_context *ctx)
{
    const struct hier_state *hier = ctx->state;
    const struct node_layout *layout = &hier->layout;
    MPI_CHECK(MPI_Reduce(ctx->sendbuf, ctx->recvbuf, ctx->count, ctx->dtype, MPI_SUM, 0,
                         layout->node));
    if (is_leader(hier))
        MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, ctx->recvbuf, ctx->count, ctx->dtype, MPI_SUM,
                                hier->leaders));
    MPI_CHECK(MPI_Bcast(ctx->recvbuf, ctx->count, ctx->dtype, 0, layout->node));
}

void allgather_as_hier_setup(struct op_context *ctx)
{
    allgather_setup(ctx);
    struct hier_state *hier = hier_state_new(ctx);
    const struct node_layout *layout = &hier->layout;
    node_vectors(ctx, 1);
    if (layout->order)
        hier->tmp = op_alloc_scratch(ctx, (size_t)ctx->size * ctx->block);
}

/* Gather in every node into its segment, leaders' allgatherv of the segments, bcast of the
   whole vector in every node. */
void allgather_as_hier_run(struct op_context *ctx)
{
    const struct hier_state *hier = ctx->state;
    const struct node_layout *layout = &hier->layout;
    unsigned char *all = layout->order ? hier->tmp : ctx->recvbuf;
    unsigned char *segment = op_block_at(all, ctx, (size_t)layout->node_first[layout->node_pos]);
    MPI_CHECK(MPI_Gather(ctx->sendbuf, ctx->count, ctx->dtype, segment, ctx->count, ctx->dtype,
                         0, layout->node));
    if (is_leader(hier))
        MPI_CHECK(MPI_Allgatherv(MPI_IN_PLACE, 0, ctx->dtype, all, hier->counts, hier->displs,
                                 ctx->dtype, hier->leaders));
    MPI_CHECK(MPI_Bcast(all, ctx->size * ctx->count, ctx->dtype, 0, layout->node));
    if (layout->order)
        node_layout_permute(ctx, layout, ctx->recvbuf, all, 0);
}

void alltoall_as_hier_setup(struct op_context *ctx)
{
    alltoall_setup(ctx);
    struct hier_state *hier = hier_state_new(ctx);
    const struct node_layout *layout = &hier->layout;
    node_vectors(ctx, layout->local_size);
    const size_t node_bytes = (size_t)layout->local_size * (size_t)ctx->size * ctx->block;
    hier->tmp = op_alloc_scratch(ctx, is_leader(hier) ? node_bytes : 0);
    hier->tmp2 = op_alloc_scratch(ctx, is_leader(hier) ? node_bytes : 0);
}

/* Gather of the node's send vectors at the leader, leaders' alltoallv of what goes from node
   to node, scatter in every node. The leader packs twice: by destination node, then by
   destination rank (in rank order of ctx->comm). */
void alltoall_as_hier_run(struct op_context *ctx)
{
    const struct hier_state *hier = ctx->state;
    const struct node_layout *layout = &hier->layout;
    const size_t p = (size_t)ctx->size, s = (size_t)layout->local_size;
    MPI_CHECK(MPI_Gather(ctx->sendbuf, ctx->size * ctx->count, ctx->dtype, hier->tmp,
                         ctx->size * ctx->count, ctx->dtype, 0, layout->node));
    if (is_leader(hier)) {
        /* tmp[i][q]: from local rank i to rank q  ->  tmp2[node m][i][j]: to m's rank j. */
        for (int m = 0; m < layout->nodes; m++)
            for (size_t i = 0; i < s; i++)
                for (int j = 0; j < layout->node_size[m]; j++)
                    memcpy(op_block_at(hier->tmp2, ctx, s * (size_t)layout->node_first[m] +
                                                            i * (size_t)layout->node_size[m] +
                                                            (size_t)j),
                           op_block_at(hier->tmp, ctx,
                                       i * p + (size_t)node_layout_rank_at(
                                                   layout, layout->node_first[m] + j)),
                           ctx->block);
        MPI_CHECK(MPI_Alltoallv(hier->tmp2, hier->counts, hier->displs, ctx->dtype, hier->tmp,
                                hier->counts, hier->displs, ctx->dtype, hier->leaders));
        /* tmp[node n][i'][j]: from n's rank i' to local rank j  ->  tmp2[j][rank of (n, i')]. */
        for (int n = 0; n < layout->nodes; n++)
            for (int i = 0; i < layout->node_size[n]; i++)
                for (size_t j = 0; j < s; j++)
                    memcpy(op_block_at(hier->tmp2, ctx,
                                       j * p + (size_t)node_layout_rank_at(
                                                   layout, layout->node_first[n] + i)),
                           op_block_at(hier->tmp, ctx,
                                       s * (size_t)layout->node_first[n] + (size_t)i * s + j),
                           ctx->block);
    }
    MPI_CHECK(MPI_Scatter(hier->tmp2, ctx->size * ctx->count, ctx->dtype, ctx->recvbuf,
                          ctx->size * ctx->count, ctx->dtype, 0, layout->node));
}

void reduce_scatter_block_as_hier_setup(struct op_context *ctx)
{
    reduce_scatter_setup(ctx);
    struct hier_state *hier = hier_state_new(ctx);
    node_vectors(ctx, 1);
    hier->tmp = op_alloc_scratch(ctx, is_leader(hier) ? (size_t)ctx->size * ctx->block : 0);
    hier->tmp2 = op_alloc_scratch(ctx, is_leader(hier) ? (size_t)ctx->size * ctx->block : 0);
}

/* Reduce of the whole vector at every leader, leaders' reduce_scatter by node, scatter in
   every node. */
void reduce_scatter_block_as_hier_run(struct op_context *ctx)
{
    const struct hier_state *hier = ctx->state;
    const struct node_layout *layout = &hier->layout;
    MPI_CHECK(MPI_Reduce(ctx->sendbuf, hier->tmp, ctx->size * ctx->count, ctx->dtype, MPI_SUM, 0,
                         layout->node));
    unsigned char *node_major = hier->tmp;
    if (is_leader(hier)) {
        if (layout->order) {
            node_layout_permute(ctx, layout, hier->tmp2, hier->tmp, 1);
            node_major = hier->tmp2;
        }
        /* The node's segment lands at the start of the other buffer. */
        unsigned char *segment = node_major == hier->tmp ? hier->tmp2 : hier->tmp;
        MPI_CHECK(MPI_Reduce_scatter(node_major, segment, hier->counts, ctx->dtype, MPI_SUM,
                                     hier->leaders));
        node_major = segment;
    }
    MPI_CHECK(MPI_Scatter(node_major, ctx->count, ctx->dtype, ctx->recvbuf, ctx->count,
                          ctx->dtype, 0, layout->node));
}

void gather_as_hier_setup(struct op_context *ctx)
{
    gather_setup(ctx);
    struct hier_state *hier = hier_state_new(ctx);
    node_vectors(ctx, 1);
    hier->tmp = op_alloc_scratch(ctx, (size_t)ctx->size * ctx->block);
}

/* Gather in every node into its segment at the leader, leaders' gatherv of the segments to the
   root's node, its leader's vector to the root. */
void gather_as_hier_run(struct op_context *ctx)
{
    const struct hier_state *hier = ctx->state;
    const struct node_layout *layout = &hier->layout;
    const int root_node = layout->rank_node[ctx->root], root_local = layout->rank_local[ctx->root];
    unsigned char *all = ctx->rank == ctx->root && !layout->order ? ctx->recvbuf : hier->tmp;
    unsigned char *segment = op_block_at(all, ctx, (size_t)layout->node_first[layout->node_pos]);
    MPI_CHECK(MPI_Gather(ctx->sendbuf, ctx->count, ctx->dtype, segment, ctx->count, ctx->dtype,
                         0, layout->node));
    if (is_leader(hier))
        MPI_CHECK(MPI_Gatherv(layout->node_pos == root_node ? MPI_IN_PLACE : segment,
                              hier->counts[layout->node_pos], ctx->dtype, all, hier->counts,
                              hier->displs, ctx->dtype, root_node, hier->leaders));
    if (root_local != 0 && layout->node_pos == root_node) {
        if (layout->local == 0)
            MPI_CHECK(MPI_Send(all, ctx->size * ctx->count, ctx->dtype, root_local, HIER_TAG,
                               layout->node));
        else if (layout->local == root_local)
            MPI_CHECK(MPI_Recv(all, ctx->size * ctx->count, ctx->dtype, 0, HIER_TAG, layout->node,
                               MPI_STATUS_IGNORE));
    }
    if (ctx->rank == ctx->root && layout->order)
        node_layout_permute(ctx, layout, ctx->recvbuf, all, 0);
}

void scatter_as_hier_setup(struct op_context *ctx)
{
    scatter_setup(ctx);
    struct hier_state *hier = hier_state_new(ctx);
    node_vectors(ctx, 1);
    hier->tmp = op_alloc_scratch(ctx, (size_t)ctx->size * ctx->block);
}

/* The root's vector (node-major) to its node's leader, leaders' scatterv of the segments,
   scatter in every node. */
void scatter_as_hier_run(struct op_context *ctx)
{
    const struct hier_state *hier = ctx->state;
    const struct node_layout *layout = &hier->layout;
    const int root_node = layout->rank_node[ctx->root], root_local = layout->rank_local[ctx->root];
    unsigned char *all = hier->tmp;
    if (ctx->rank == ctx->root) {
        if (layout->order)
            node_layout_permute(ctx, layout, all, ctx->sendbuf, 1);
        else
            all = ctx->sendbuf;
    }
    if (root_local != 0 && layout->node_pos == root_node) {
        if (layout->local == root_local)
            MPI_CHECK(MPI_Send(all, ctx->size * ctx->count, ctx->dtype, 0, HIER_TAG, layout->node));
        else if (layout->local == 0)
            MPI_CHECK(MPI_Recv(all, ctx->size * ctx->count, ctx->dtype, root_local, HIER_TAG,
                               layout->node, MPI_STATUS_IGNORE));
    }
    unsigned char *segment = op_block_at(all, ctx, (size_t)layout->node_first[layout->node_pos]);
    if (is_leader(hier))
        MPI_CHECK(MPI_Scatterv(all, hier->counts, hier->displs, ctx->dtype,
                               layout->node_pos == root_node ? MPI_IN_PLACE : segment,
                               hier->counts[layout->node_pos], ctx->dtype, root_node,
                               hier->leaders));
    MPI_CHECK(MPI_Scatter(segment, ctx->count, ctx->dtype, ctx->recvbuf, ctx->count, ctx->dtype,
                          0, layout->node));
}
