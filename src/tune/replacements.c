/* The dispatch table of libmpiguide-tune: each row adapts a collective's call to one mock-up of
   src/mockups. A mock-up is here only if it is safe for every call it accepts: its decision
   depends only on arguments that are the same on every rank of a correct program, so all ranks
   replace a call or none do. Rooted mock-ups whose collective allows MPI_IN_PLACE at the root
   only (reduce_as_allreduce, gather_as_allgather, scatter_as_bcast) are left out: the root
   would fall through while the others run the mock-up. */
#include "replacements.h"

#include <string.h>

#include "mockups.h"

const char *const tune_collective_names[TUNE_COLLECTIVES] = {
    [TUNE_BCAST] = "MPI_Bcast",
    [TUNE_ALLGATHER] = "MPI_Allgather",
    [TUNE_ALLREDUCE] = "MPI_Allreduce",
    [TUNE_SCAN] = "MPI_Scan",
};

static int bcast_as_allgatherv(void *buffer, int count, MPI_Datatype datatype, int root,
                               MPI_Comm comm, int size, const struct tune_scratch *s)
{
    (void)size;
    return mockup_bcast_as_allgatherv(buffer, count, datatype, root, comm, s->counts, s->displs);
}

static int bcast_as_scatter_allgather(void *buffer, int count, MPI_Datatype datatype, int root,
                                      MPI_Comm comm, int size, const struct tune_scratch *s)
{
    (void)s;
    return mockup_bcast_as_scatter_allgather(buffer, count / size, datatype, root, comm);
}

static int allgather_as_alltoall(const void *sendbuf, void *recvbuf, int count,
                                 MPI_Datatype datatype, MPI_Comm comm, int size,
                                 const struct tune_scratch *s)
{
    (void)size;
    return mockup_allgather_as_alltoall(sendbuf, recvbuf, count, datatype, comm, s->blocks);
}

static int allgather_as_gather_bcast(const void *sendbuf, void *recvbuf, int count,
                                     MPI_Datatype datatype, MPI_Comm comm, int size,
                                     const struct tune_scratch *s)
{
    (void)size, (void)s;
    return mockup_allgather_as_gather_bcast(sendbuf, recvbuf, count, datatype, comm);
}

static int allreduce_as_reduce_bcast(const void *sendbuf, void *recvbuf, int count,
                                     MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, int size,
                                     const struct tune_scratch *s)
{
    (void)size, (void)s;
    return mockup_allreduce_as_reduce_bcast(sendbuf, recvbuf, count, datatype, op, comm);
}

static int allreduce_as_reduce_scatter_block_allgather(const void *sendbuf, void *recvbuf,
                                                       int count, MPI_Datatype datatype,
                                                       MPI_Op op, MPI_Comm comm, int size,
                                                       const struct tune_scratch *s)
{
    (void)s;
    return mockup_allreduce_as_reduce_scatter_block_allgather(sendbuf, recvbuf, count / size,
                                                              datatype, op, comm);
}

static int allreduce_as_reduce_scatter_allgather(const void *sendbuf, void *recvbuf, int count,
                                                 MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                                                 int size, const struct tune_scratch *s)
{
    return mockup_allreduce_as_reduce_scatter_allgather(sendbuf, recvbuf, count / size, datatype,
                                                        op, comm, s->counts);
}

static int scan_as_exscan_reduce_local(const void *sendbuf, void *recvbuf, int count,
                                       MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, int size,
                                       const struct tune_scratch *s)
{
    (void)size, (void)s;
    return mockup_scan_as_exscan_reduce_local(sendbuf, recvbuf, count, datatype, op, comm);
}

#define ROW(name, collective, member, needs) {#name, collective, needs, {.member = name}}
const struct tune_replacement tune_replacements[] = {
    ROW(bcast_as_allgatherv, TUNE_BCAST, bcast, 0),
    ROW(bcast_as_scatter_allgather, TUNE_BCAST, bcast, NEEDS_EQUAL_PARTS),
    ROW(allgather_as_alltoall, TUNE_ALLGATHER, allgather, NEEDS_BLOCKS),
    ROW(allgather_as_gather_bcast, TUNE_ALLGATHER, allgather, 0),
    ROW(allreduce_as_reduce_bcast, TUNE_ALLREDUCE, reduction, NEEDS_REDUCTION),
    ROW(allreduce_as_reduce_scatter_block_allgather, TUNE_ALLREDUCE, reduction,
        NEEDS_REDUCTION | NEEDS_EQUAL_PARTS),
    ROW(allreduce_as_reduce_scatter_allgather, TUNE_ALLREDUCE, reduction,
        NEEDS_REDUCTION | NEEDS_EQUAL_PARTS),
    ROW(scan_as_exscan_reduce_local, TUNE_SCAN, reduction, NEEDS_REDUCTION),
};
#undef ROW
const size_t tune_replacement_count = sizeof tune_replacements / sizeof tune_replacements[0];

int tune_replacement_find(const char *name)
{
    for (size_t i = 0; i < tune_replacement_count; i++)
        if (strcmp(tune_replacements[i].name, name) == 0)
            return (int)i;
    return -1;
}
