/* What every nonblocking operation does after its start (OP_NONBLOCKING). */
#ifndef MPIGUIDE_OP_NONBLOCKING_H
#define MPIGUIDE_OP_NONBLOCKING_H

#include <mpi.h>

#include "ops/op_context.h"

/* The experiment's work, then MPI_Wait. */
void op_work_and_wait(struct op_context *ctx, MPI_Request *request);

#endif
