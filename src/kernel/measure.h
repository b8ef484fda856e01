/* The timing loop of DESIGN.md §2, and the --verify run before it. */
#ifndef MPIGUIDE_MEASURE_H
#define MPIGUIDE_MEASURE_H

#include "operations.h"

/* Runs up to nrep repetitions, each between sync begin/end on sync_comm, writing this rank's
   times to dt. With max_time > 0, rank 0 decides after each repetition (outside the timed
   region) whether the budget is spent, and broadcasts it. Returns the repetitions done, equal
   on every rank. */
int measure_run(struct op_context *ctx, MPI_Comm sync_comm, double *dt);

/* Runs the operation once on patterned data and checks what every rank received. Returns the
   number of wrong bytes over all ranks; ranks with wrong bytes report the first on stderr. */
unsigned long long measure_verify(struct op_context *ctx, MPI_Comm sync_comm);

#endif
