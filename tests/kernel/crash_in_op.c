/* A PMPI library that crashes one collective: MPI_Allgather of CRASH_ALLGATHER_COUNT elements
   dies of SIGSEGV, as a library's own bug would, on every rank or only on rank CRASH_RANK; every
   other call goes to the library. For tests/kernel/test_crash_names_experiment.py and
   tests/slurm/test_two_nodes.py. */
#include <signal.h>
#include <stdlib.h>

#include <mpi.h>

int MPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    const char *count = getenv("CRASH_ALLGATHER_COUNT");
    const char *crash_rank = getenv("CRASH_RANK");
    int rank = 0;
    if (crash_rank && PMPI_Comm_rank(comm, &rank) != MPI_SUCCESS)
        return MPI_ERR_COMM;
    if (count && atoi(count) == sendcount && (!crash_rank || atoi(crash_rank) == rank))
        raise(SIGSEGV);
    return PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}
