/* Synchronisation before and after each repetition, behind one interface (ReproMPI-style), so
   a clock-synchronised start (a window per repetition) can be added as one more method. */
#ifndef MPIGUIDE_SYNC_H
#define MPIGUIDE_SYNC_H

#include <mpi.h>

#include "experiment.h"

struct sync_method {
    const char *name;
    /* Called right before t0 and right after the repetition's time is taken. */
    void (*begin)(MPI_Comm comm);
    void (*end)(MPI_Comm comm);
};

/* The method of a sync column value. */
const struct sync_method *sync_method_get(enum sync_kind kind);

#endif
