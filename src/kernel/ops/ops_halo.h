/* halo: MPI_Irecv/MPI_Isend to every neighbour of the topology, MPI_Waitall. */
#ifndef MPIGUIDE_OPS_HALO_H
#define MPIGUIDE_OPS_HALO_H

#include "ops/op_context.h"

void halo_setup(struct op_context *ctx);
void halo_run(struct op_context *ctx);
/* Frees the family's private state (ctx->state). */
void halo_free(struct op_context *ctx);

#endif
