#ifndef MPIGUIDE_INJECT_FATAL_H
#define MPIGUIDE_INJECT_FATAL_H

/* Reports a failure of the injection machinery itself and aborts the MPI job: carrying on would
 * measure something other than what the user asked for. */
_Noreturn void inject_fatal(const char *what);

#endif
