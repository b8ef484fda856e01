#include "ops/node_layout.h"

#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "ops/op_buffers.h"

void node_layout_create(const struct op_context *ctx, struct node_layout *layout)
{
    const int p = ctx->size;
    memset(layout, 0, sizeof *layout);
    MPI_CHECK(MPI_Comm_split(ctx->comm, ctx->node->node_index, ctx->rank, &layout->node));
    MPI_CHECK(MPI_Comm_rank(layout->node, &layout->local));
    MPI_CHECK(MPI_Comm_size(layout->node, &layout->local_size));

    /* Node of every rank, numbered by lowest rank (the order of the node leaders' ranks).
       Node-local ranks follow rank order (split key). */
    int *node_index = xmalloc((size_t)p * sizeof *node_index);
    MPI_CHECK(MPI_Allgather(&ctx->node->node_index, 1, MPI_INT, node_index, 1, MPI_INT,
                            ctx->comm));
    layout->rank_node = xmalloc((size_t)p * sizeof *layout->rank_node);
    layout->rank_local = xmalloc((size_t)p * sizeof *layout->rank_local);
    layout->node_size = xcalloc((size_t)p, sizeof *layout->node_size);
    layout->node_first = xcalloc((size_t)p, sizeof *layout->node_first);
    for (int r = 0; r < p; r++) {
        int n = 0;
        while (n < layout->nodes && node_index[layout->node_first[n]] != node_index[r])
            n++;
        if (n == layout->nodes)
            layout->node_first[layout->nodes++] = r; /* the lowest rank, for now */
        layout->rank_node[r] = n;
        layout->rank_local[r] = layout->node_size[n]++;
    }
    free(node_index);
    /* node_first becomes the node-major position of each node's first rank. */
    for (int n = 0, first = 0; n < layout->nodes; first += layout->node_size[n++])
        layout->node_first[n] = first;
    layout->node_pos = layout->rank_node[ctx->rank];
    layout->order = xmalloc((size_t)p * sizeof *layout->order);
    int identity = 1;
    for (int r = 0; r < p; r++) {
        int pos = layout->node_first[layout->rank_node[r]] + layout->rank_local[r];
        layout->order[pos] = r;
        identity &= pos == r;
    }
    if (identity) {
        free(layout->order);
        layout->order = NULL;
    }
}

void node_layout_free(struct node_layout *layout)
{
    MPI_CHECK(MPI_Comm_free(&layout->node));
    free(layout->node_size);
    free(layout->node_first);
    free(layout->rank_node);
    free(layout->rank_local);
    free(layout->order);
}

int node_layout_regular(const struct node_layout *layout)
{
    int regular = 1;
    for (int n = 0; n < layout->nodes; n++)
        regular &= layout->node_size[n] == layout->node_size[0];
    return regular;
}

void node_layout_permute(const struct op_context *ctx, const struct node_layout *layout,
                         unsigned char *dst, unsigned char *src, int to_node_major)
{
    for (int pos = 0; pos < ctx->size; pos++) {
        size_t r = (size_t)node_layout_rank_at(layout, pos);
        if (to_node_major)
            memcpy(op_block_at(dst, ctx, (size_t)pos), op_block_at(src, ctx, r), ctx->block);
        else
            memcpy(op_block_at(dst, ctx, r), op_block_at(src, ctx, (size_t)pos), ctx->block);
    }
}
