/* A rank that dies of a signal (the MPI library crashed, or the launcher or a job's time limit
   stopped a hung run) first says which experiment it was running: the input line and the
   experiment's leading values, so that the run's log names what to leave out with `where:` or
   to reproduce (docs/kernel.md, "When the library crashes or hangs"). */
#ifndef MPIGUIDE_CRASH_H
#define MPIGUIDE_CRASH_H

#include "experiment.h"

/* After MPI_Init (the library installs its own handlers there): on SIGSEGV, SIGBUS, SIGFPE,
   SIGILL, SIGABRT, SIGTERM and SIGINT write the experiment's line, then hand the signal to the
   handler that was there before (the library's, or the default). */
void crash_handlers_install(int rank);

/* The experiment the rank runs from now on (`input`: INPUT.csv's path); NULL: none. */
void crash_note_experiment(const char *input, const struct experiment *exp);

#endif
