/* The MPI tool interface's control variables (cvars) as the algorithm switch uses them: found by
   name, read and written as one int (an int or a bool cvar), their description and enumeration
   read. The MPI_T calls
   are checked like any other (their error codes are not MPI error classes: a failure names the
   code). */
#ifndef MPIGUIDE_MPIT_H
#define MPIGUIDE_MPIT_H

#include <mpi.h>

struct mpit_cvar {
    int index;
    MPI_T_cvar_handle handle; /* bound to no object: the library's one value */
    MPI_Datatype type;        /* MPI_INT or MPI_C_BOOL */
};

/* Starts the tool interface (once; later calls do nothing) and ends it. */
void mpit_start(void);
void mpit_stop(void);

/* The cvar of that name, with a handle: 0, or -1 when the library has none of that name. A cvar
   of another type than int or bool ends the job. */
int mpit_cvar_find(const char *name, struct mpit_cvar *cvar);
void mpit_cvar_free(struct mpit_cvar *cvar);
int mpit_cvar_read(const struct mpit_cvar *cvar);
void mpit_cvar_write(const struct mpit_cvar *cvar, int value);

/* The cvar's description (malloc'ed) and its enumeration (MPI_T_ENUM_NULL when it has none). */
char *mpit_cvar_description(int index, MPI_T_enum *enumeration);

#endif
