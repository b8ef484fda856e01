/* The MPI_Init and MPI_Init_thread of a PMPI library loaded before the MPI library
   (libmpiguide-inject, libmpiguide-tune): each reads the library's settings, starts the MPI
   library and has rank 0 say that the library is active, so nobody mistakes its run for a plain
   one. A library links preload.c and supplies the functions below. */
#ifndef MPIGUIDE_PRELOAD_H
#define MPIGUIDE_PRELOAD_H

#include <mpi.h>

/* What the library exports: every other symbol stays hidden (-fvisibility=hidden). */
#define PRELOAD_EXPORT __attribute__((visibility("default")))

/* Reads the library's settings before the MPI library starts, so that none of its MPI state is
   made under half-read settings. Bad settings are refused with preload_refuse. Not done in a
   library constructor: LD_PRELOAD also reaches mpirun and other tools that never call MPI_Init. */
void preload_configure(void);

/* For preload_configure, on bad settings: prints "NAME: <message>" at once, and the MPI_Init that
   called preload_configure then starts the MPI library and exits with status 2 (bad input, as
   for the kernel) instead of returning; preload_configure returns after it, configuring nothing.
   Not an exit before the MPI library starts: MPICH's mpiexec, still starting the job, can write
   to a launcher process that already left with the ranks and die of SIGPIPE, every rank's
   output unread. A rank's start needs the launcher's answers, so it has started the job when
   MPI_Init returns; a rank that exits then ends the job like any failed rank, its output
   forwarded. Every rank prints before it starts: the launcher may kill a slower rank as soon
   as the first one exits. And a rank exits only once every rank has started the MPI library (a
   bounded wait, preload.c): one that left while another was still in MPICH's MPI_Init failed that start, which
   exited 1, and mpiexec then ended the job with status 1 (with the cores busy: measured in
   docs/measurements/selftest.md). */
void preload_refuse(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* One line on stderr, from rank 0 once the MPI library has started. */
void preload_announce(void);

/* What starts the MPI library after preload_configure: PMPI_Init and PMPI_Init_thread unless
   preload_configure points them at the next tool's (so that PMPI tools stack). */
extern int (*preload_next_init)(int *argc, char ***argv);
extern int (*preload_next_init_thread)(int *argc, char ***argv, int required, int *provided);

#endif
