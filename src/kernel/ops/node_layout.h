/* The layout of an experiment's communicator by node (node.c: shared memory or --node-size),
   which the hierarchical and lane decompositions share. "Node-major order" lists the ranks node
   by node (nodes ordered by their lowest rank, ranks ascending within a node). */
#ifndef MPIGUIDE_NODE_LAYOUT_H
#define MPIGUIDE_NODE_LAYOUT_H

#include <mpi.h>

#include "ops/op_context.h"

struct node_layout {
    MPI_Comm node;                   /* this rank's node: ctx->comm split by node */
    int nodes;                       /* number of nodes */
    int node_pos;                    /* this rank's node, 0 .. nodes-1 */
    int local, local_size;           /* rank and size in node */
    int *node_size, *node_first;     /* per node: ranks, position of its first rank */
    int *rank_node, *rank_local;     /* per rank of ctx->comm: its node and node-local rank */
    int *order;                      /* rank at each node-major position; NULL if identity */
};

/* Splits ctx->comm by node and gathers the layout (collective over ctx->comm). */
void node_layout_create(const struct op_context *ctx, struct node_layout *layout);
/* Frees what node_layout_create built. */
void node_layout_free(struct node_layout *layout);
/* Every node has the same number of ranks. */
int node_layout_regular(const struct node_layout *layout);

/* Rank of ctx->comm at node-major position pos. */
static inline int node_layout_rank_at(const struct node_layout *layout, int pos)
{
    return layout->order ? layout->order[pos] : pos;
}

/* Blocks of a per-process vector: dst[pos] = src[rank at pos] (to node-major order) or the
   inverse (from it). */
void node_layout_permute(const struct op_context *ctx, const struct node_layout *layout,
                         unsigned char *dst, unsigned char *src, int to_node_major);

#endif
