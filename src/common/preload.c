/* preload.h: the start of a preloaded PMPI library. */
#include "preload.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>

#include "fail.h"

int (*preload_next_init)(int *, char ***) = PMPI_Init;
int (*preload_next_init_thread)(int *, char ***, int, int *) = PMPI_Init_thread;

/* Set by preload_refuse, before the MPI library starts; read once it has. */
static bool refused;

void preload_refuse(const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    fail_vsay(fmt, args);
    va_end(args);
    refused = true;
}

/* How long a refusing rank waits for the others to start the MPI library, in polls 1 ms apart. */
enum { START_POLLS = 10000 };

/* The end of a refusing rank once the MPI library started: when every rank has started it (an
   MPI_Ibarrier, which no blocking collective of a rank that did not refuse can match), or after
   START_POLLS polls (preload.h). */
static _Noreturn void leave_refused(int init_status)
{
    MPI_Request started;
    if (init_status == MPI_SUCCESS && PMPI_Ibarrier(MPI_COMM_WORLD, &started) == MPI_SUCCESS) {
        const struct timespec poll_interval = {0, 1000000};
        for (int poll = 0; poll < START_POLLS; poll++) {
            int done = 0;
            if (PMPI_Test(&started, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS || done)
                break;
            nanosleep(&poll_interval, NULL);
        }
    }
    exit(EXIT_BAD_INPUT);
}

/* The MPI library's start status, after rank 0's announcement once it started; the end of the
   process instead if the settings were refused (preload.h says why only now). */
static int announced(int init_status)
{
    if (refused)
        leave_refused(init_status);
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
