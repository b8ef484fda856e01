/* PMPI interposer for the --verify test: MPI_Neighbor_alltoall and MPI_Allreduce work, then
   rank 1 damages one byte of what it received, as a broken MPI library would. */
#include <mpi.h>

static void damage(void *recvbuf, int count, MPI_Comm comm)
{
    int rank;
    PMPI_Comm_rank(comm, &rank);
    if (rank == 1 && count > 0)
        ((unsigned char *)recvbuf)[0] ^= 0x5a;
}

int MPI_Neighbor_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                          void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    int rc = PMPI_Neighbor_alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                                    comm);
    damage(recvbuf, recvcount, comm);
    return rc;
}

int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                  MPI_Op op, MPI_Comm comm)
{
    int rc = PMPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm);
    damage(recvbuf, count, comm);
    return rc;
}
