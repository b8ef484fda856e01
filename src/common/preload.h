/* The MPI_Init and MPI_Init_thread of a PMPI library loaded before the MPI library
   (libmpiguide-inject, libmpiguide-tune): each reads the library's settings, starts the MPI
   library and has rank 0 say that the library is active, so nobody mistakes its run for a plain
   one. A library links preload.c and supplies the functions below. */
#ifndef MPIGUIDE_PRELOAD_H
#define MPIGUIDE_PRELOAD_H

#include <mpi.h>

/* What the library exports: every other symbol stays hidden (-fvisibility=hidden). */
#define PRELOAD_EXPORT __attribute__((visibility("default")))

/* Reads the library's settings before the MPI library starts: bad settings end the process with
   exit status 2 (bad input, as for the kernel) before any MPI state exists. Not done in a
   library constructor: LD_PRELOAD also reaches mpirun and other tools that never call MPI_Init. */
void preload_configure(void);

/* One line on stderr, from rank 0 once the MPI library has started. */
void preload_announce(void);

/* What starts the MPI library after preload_configure: PMPI_Init and PMPI_Init_thread unless
   preload_configure points them at the next tool's (so that PMPI tools stack). */
extern int (*preload_next_init)(int *argc, char ***argv);
extern int (*preload_next_init_thread)(int *argc, char ***argv, int required, int *provided);

#endif
