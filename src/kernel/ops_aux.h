/* Private state shared by the operation families of issue 5 (mock-ups, hierarchical and lane
   decompositions, point-to-point, halo): scratch buffers, extra communicators and datatypes
   built in setup (untimed) and released by one free callback, aux_free. */
#ifndef MPIGUIDE_OPS_AUX_H
#define MPIGUIDE_OPS_AUX_H

#include "operations.h"

struct aux {
    unsigned char *tmp, *tmp2;       /* scratch buffers, from ctx->buffers */
    MPI_Comm comm;                   /* a derived communicator (full graph, ...) */
    MPI_Comm node, leaders, lanes;   /* decomposition of ctx->comm by node */
    MPI_Datatype strided;            /* every s-th block, extent one block (lane ops) */
    int *counts, *displs;            /* per-peer vectors in elements */
    /* Node layout of ctx->comm (hier, lane): "node-major order" lists the ranks node by node
       (nodes ordered by their lowest rank, ranks ascending within a node). */
    int nodes;                       /* number of nodes */
    int node_pos;                    /* this rank's node, 0 .. nodes-1 */
    int local, local_size;           /* rank and size in aux->node */
    int *node_size, *node_first;     /* per node: ranks, position of its first rank */
    int *rank_node, *rank_local;     /* per rank of ctx->comm: its node and node-local rank */
    int *order;                      /* rank at each node-major position; NULL if identity */
    int regular;                     /* every node has the same number of ranks */
    size_t chunk;                    /* elements per chunk of a split buffer */
    int partner;                     /* point-to-point peer; MPI_PROC_NULL when idle */
    MPI_Request request;             /* rsend: the receive posted before the synchronisation */
    MPI_Request *requests;           /* halo: one per neighbour */
    MPI_Status *statuses;            /* halo: MPICH's headers make GCC reject MPI_STATUSES_IGNORE */
};

/* A zeroed aux as ctx->state: communicators MPI_COMM_NULL, datatype MPI_DATATYPE_NULL. */
struct aux *aux_new(struct op_context *ctx);
/* The free callback of every op using struct aux. */
void aux_free(struct op_context *ctx);

/* ceil(n / parts): the chunk of a buffer of n elements split into parts equal pieces. */
size_t aux_chunk(size_t n, int parts);
/* Grows the op's buffers to the given sizes (zero padding), keeping send_bytes/recv_bytes, the
   sizes --verify fills and checks. An in-place buffer stays in place. */
void aux_pad_buffers(struct op_context *ctx, size_t send_total, size_t recv_total);
/* An int count or displacement; aborts when a padded buffer outgrows int. */
int aux_int(size_t n);

/* Building blocks shared by the split-buffer algorithms (bcast as scatter + allgather, allreduce
   as reduce_scatter_block + allgather, and their lane versions). buf holds parts * chunk
   elements of ctx->dtype; part k lives at k * chunk. */
/* The root (rank root of comm) keeps its own part in place and sends part k to rank k. */
void aux_scatter_parts(const struct op_context *ctx, unsigned char *buf, size_t chunk, int root,
                       MPI_Comm comm);
/* Every rank of comm contributes its part in place; afterwards every rank holds all parts. */
void aux_allgather_parts(const struct op_context *ctx, unsigned char *buf, size_t chunk,
                         MPI_Comm comm);
/* Sums send (parts * chunk elements on every rank of comm) and leaves part `rank` of the sum in
   place in buf. */
void aux_reduce_scatter_parts(const struct op_context *ctx, const unsigned char *send,
                              unsigned char *buf, size_t chunk, MPI_Comm comm);

#endif
