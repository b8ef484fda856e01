/* PMPI interposer for the --verify test: MPI_Neighbor_alltoall and MPI_Allreduce work, then
   rank 1 damages one byte of what it received, as a broken MPI library would. When
   CORRUPT_RECEIVE_LOG names a file, each damage appends a line naming the call to it, so that
   a run without --verify can show the damage was done. Failing to write that line fails the
   call: a test never counts damage that went unrecorded. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define LOG_VARIABLE "CORRUPT_RECEIVE_LOG"

/* 0, or -1 when the line could not be written. */
static int note(const char *call)
{
    const char *path = getenv(LOG_VARIABLE);
    if (path == NULL)
        return 0;
    FILE *log = fopen(path, "a");
    if (log == NULL)
        return -1;
    int written = fprintf(log, "%s: rank 1's receive buffer damaged\n", call);
    int closed = fclose(log);
    return written < 0 || closed != 0 ? -1 : 0;
}

static int damage(const char *call, int rc, void *recvbuf, int count, MPI_Comm comm)
{
    if (rc != MPI_SUCCESS)
        return rc;
    int rank;
    rc = PMPI_Comm_rank(comm, &rank);
    if (rc != MPI_SUCCESS || rank != 1 || count <= 0)
        return rc;
    ((unsigned char *)recvbuf)[0] ^= 0x5a;
    if (note(call) != 0) {
        fprintf(stderr, "corrupt_receive: cannot append to $%s\n", LOG_VARIABLE);
        return MPI_ERR_OTHER;
    }
    return MPI_SUCCESS;
}

int MPI_Neighbor_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                          void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    int rc = PMPI_Neighbor_alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                                    comm);
    return damage("MPI_Neighbor_alltoall", rc, recvbuf, recvcount, comm);
}

int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                  MPI_Op op, MPI_Comm comm)
{
    int rc = PMPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm);
    return damage("MPI_Allreduce", rc, recvbuf, count, comm);
}
