/* Split-buffer building blocks (bcast as scatter + allgather, allreduce as
   reduce_scatter_block + allgather, and their lane versions): buf holds parts * chunk elements
   of ctx->dtype, part k at k * chunk, padded with zeros past msg_size (op_pad_buffers). */
#ifndef MPIGUIDE_OP_SPLIT_H
#define MPIGUIDE_OP_SPLIT_H

#include <stddef.h>

#include <mpi.h>

#include "ops/op_context.h"

/* ceil(n / parts): the chunk of a buffer of n elements split into parts equal pieces. */
size_t split_chunk(size_t n, int parts);
/* The root (rank root of comm) keeps its own part in place and sends part k to rank k. */
void split_scatter(const struct op_context *ctx, unsigned char *buf, size_t chunk, int root,
                   MPI_Comm comm);
/* Every rank of comm contributes its part in place; afterwards every rank holds all parts. */
void split_allgather(const struct op_context *ctx, unsigned char *buf, size_t chunk,
                     MPI_Comm comm);
/* Sums send (parts * chunk elements on every rank of comm) and leaves part `rank` of the sum in
   place in buf. */
void split_reduce_scatter(const struct op_context *ctx, const unsigned char *send,
                          unsigned char *buf, size_t chunk, MPI_Comm comm);

#endif
