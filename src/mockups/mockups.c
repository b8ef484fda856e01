/* Collective mock-ups with MPI arguments (mockups.h): Träff, Gropp & Thakur 2010, Hunold's
   MPINPC, Manwade & Kulkarni. They call MPI_, not PMPI_: in the kernel a profiler or
   libmpiguide-inject sees the operations a mock-up is made of, and libmpiguide-tune, which
   interposes some of them, lets every call made while a mock-up runs through to the library. */
#include "mockups.h"

#include <stddef.h>
#include <string.h>

#include "fail.h"

/* Bytes of count elements of a contiguous datatype. */
static int bytes_of(MPI_Datatype datatype, int count, size_t *bytes)
{
    MPI_Aint lb, extent;
    MPI_TRY(MPI_Type_get_extent(datatype, &lb, &extent));
    *bytes = (size_t)count * (size_t)extent;
    return MPI_SUCCESS;
}

int mockup_bcast_as_allgatherv(void *buffer, int count, MPI_Datatype datatype, int root,
                               MPI_Comm comm, int *counts, int *displs)
{
    int size;
    MPI_TRY(MPI_Comm_size(comm, &size));
    for (int i = 0; i < size; i++)
        counts[i] = displs[i] = 0;
    counts[root] = count;
    return MPI_Allgatherv(MPI_IN_PLACE, 0, datatype, buffer, counts, displs, datatype, comm);
}

int mockup_bcast_as_scatter_allgather(void *buffer, int chunk, MPI_Datatype datatype, int root,
                                      MPI_Comm comm)
{
    int rank;
    size_t part;
    MPI_TRY(MPI_Comm_rank(comm, &rank));
    MPI_TRY(bytes_of(datatype, chunk, &part));
    if (rank == root)
        MPI_TRY(MPI_Scatter(buffer, chunk, datatype, MPI_IN_PLACE, chunk, datatype, root, comm));
    else
        MPI_TRY(MPI_Scatter(NULL, chunk, datatype, (unsigned char *)buffer + (size_t)rank * part,
                            chunk, datatype, root, comm));
    return MPI_Allgather(MPI_IN_PLACE, chunk, datatype, buffer, chunk, datatype, comm);
}

int mockup_allgather_as_alltoall(const void *sendbuf, void *recvbuf, int count,
                                 MPI_Datatype datatype, MPI_Comm comm, void *tmp)
{
    int size;
    size_t block;
    MPI_TRY(MPI_Comm_size(comm, &size));
    MPI_TRY(bytes_of(datatype, count, &block));
    for (int i = 0; i < size; i++)
        memcpy((unsigned char *)tmp + (size_t)i * block, sendbuf, block);
    return MPI_Alltoall(tmp, count, datatype, recvbuf, count, datatype, comm);
}

int mockup_allgather_as_gather_bcast(const void *sendbuf, void *recvbuf, int count,
                                     MPI_Datatype datatype, MPI_Comm comm)
{
    int size;
    MPI_TRY(MPI_Comm_size(comm, &size));
    MPI_TRY(MPI_Gather(sendbuf, count, datatype, recvbuf, count, datatype, 0, comm));
    return MPI_Bcast(recvbuf, size * count, datatype, 0, comm);
}

int mockup_allreduce_as_reduce_bcast(const void *sendbuf, void *recvbuf, int count,
                                     MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    MPI_TRY(MPI_Reduce(sendbuf, recvbuf, count, datatype, op, 0, comm));
    return MPI_Bcast(recvbuf, count, datatype, 0, comm);
}

/* Where part `rank` of a buffer of equal parts of chunk elements starts. */
static int own_part(void *buffer, int chunk, MPI_Datatype datatype, MPI_Comm comm,
                    void **part)
{
    int rank;
    size_t bytes;
    MPI_TRY(MPI_Comm_rank(comm, &rank));
    MPI_TRY(bytes_of(datatype, chunk, &bytes));
    *part = (unsigned char *)buffer + (size_t)rank * bytes;
    return MPI_SUCCESS;
}

int mockup_allreduce_as_reduce_scatter_block_allgather(const void *sendbuf, void *recvbuf,
                                                       int chunk, MPI_Datatype datatype,
                                                       MPI_Op op, MPI_Comm comm)
{
    void *part;
    MPI_TRY(own_part(recvbuf, chunk, datatype, comm, &part));
    MPI_TRY(MPI_Reduce_scatter_block(sendbuf, part, chunk, datatype, op, comm));
    return MPI_Allgather(MPI_IN_PLACE, chunk, datatype, recvbuf, chunk, datatype, comm);
}

int mockup_allreduce_as_reduce_scatter_allgather(const void *sendbuf, void *recvbuf, int chunk,
                                                 MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                                                 int *counts)
{
    int size;
    void *part;
    MPI_TRY(MPI_Comm_size(comm, &size));
    MPI_TRY(own_part(recvbuf, chunk, datatype, comm, &part));
    for (int i = 0; i < size; i++)
        counts[i] = chunk;
    MPI_TRY(MPI_Reduce_scatter(sendbuf, part, counts, datatype, op, comm));
    return MPI_Allgather(MPI_IN_PLACE, chunk, datatype, recvbuf, chunk, datatype, comm);
}

int mockup_scan_as_exscan_reduce_local(const void *sendbuf, void *recvbuf, int count,
                                       MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    int rank;
    size_t bytes;
    MPI_TRY(MPI_Comm_rank(comm, &rank));
    MPI_TRY(MPI_Exscan(sendbuf, recvbuf, count, datatype, op, comm));
    if (rank != 0)
        return MPI_Reduce_local(sendbuf, recvbuf, count, datatype, op);
    MPI_TRY(bytes_of(datatype, count, &bytes));
    memcpy(recvbuf, sendbuf, bytes);
    return MPI_SUCCESS;
}
