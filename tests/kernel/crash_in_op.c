/* A PMPI library that crashes one collective: MPI_Allgather of CRASH_ALLGATHER_COUNT elements
   dies of SIGSEGV, as a library's own bug would; every other call goes to the library. For
   tests/kernel/test_crash_names_experiment.py. */
#include <signal.h>
#include <stdlib.h>

#include <mpi.h>

int MPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    const char *count = getenv("CRASH_ALLGATHER_COUNT");
    if (count && atoi(count) == sendcount)
        raise(SIGSEGV);
    return PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}
