/* preload.h: the start of a preloaded PMPI library. */
#include "preload.h"

#include "fail.h"

int (*preload_next_init)(int *, char ***) = PMPI_Init;
int (*preload_next_init_thread)(int *, char ***, int, int *) = PMPI_Init_thread;

/* The MPI library's start status, after rank 0's announcement once it started. */
static int announced(int init_status)
{
    MPI_TRY(init_status);
    int rank = 0;
    MPI_TRY(PMPI_Comm_rank(MPI_COMM_WORLD, &rank));
    if (rank == 0)
        preload_announce();
    return MPI_SUCCESS;
}

PRELOAD_EXPORT int MPI_Init(int *argc, char ***argv)
{
    preload_configure();
    return announced(preload_next_init(argc, argv));
}

PRELOAD_EXPORT int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    preload_configure();
    return announced(preload_next_init_thread(argc, argv, required, provided));
}
