/* Whether libmpiguide-tune may run a mock-up for a call: only for what the mock-ups are written
   and verified for; everything else falls through to the MPI library. */
#ifndef MPIGUIDE_TUNE_HANDLED_H
#define MPIGUIDE_TUNE_HANDLED_H

#include <stdbool.h>

#include <mpi.h>

/* The size in bytes of a predefined datatype whose elements lie back to back (size = extent,
   lower bound 0), 0 for any other datatype. */
int tune_contiguous_bytes(MPI_Datatype datatype);
/* A predefined, commutative reduction op other than MPI_MAXLOC/MPI_MINLOC (which need pair
   types) and MPI_REPLACE/MPI_NO_OP (one-sided only). */
bool tune_predefined_reduction(MPI_Op op);
/* An intra-communicator. */
bool tune_intra_communicator(MPI_Comm comm);

#endif
