#include "sync.h"

#include "check.h"

/* Tag of the dissemination rounds; comm is the kernel's private duplicate of the world, so no
   operation's message can match it. */
enum { DISSEMINATION_TAG = 7411 };

/* Hand-written dissemination barrier (Hensgen, Finkel, Manber): ceil(log2 P) rounds, in round k
   each process signals rank + 2^k and waits for rank - 2^k. Identical on every MPI library,
   unlike MPI_Barrier, whose algorithm the library chooses. */
static void dissemination_barrier(MPI_Comm comm)
{
    int rank, size;
    MPI_CHECK(MPI_Comm_rank(comm, &rank));
    MPI_CHECK(MPI_Comm_size(comm, &size));
    for (int distance = 1; distance < size; distance *= 2) {
        int to = (rank + distance) % size, from = (rank - distance + size) % size;
        MPI_CHECK(MPI_Sendrecv(NULL, 0, MPI_BYTE, to, DISSEMINATION_TAG, NULL, 0, MPI_BYTE, from,
                               DISSEMINATION_TAG, comm, MPI_STATUS_IGNORE));
    }
}

static void mpi_barrier(MPI_Comm comm)
{
    MPI_CHECK(MPI_Barrier(comm));
}

static const struct sync_method methods[SYNC_COUNT] = {
    [SYNC_DISSEMINATION] = {"dissemination", dissemination_barrier, dissemination_barrier},
    [SYNC_BARRIER] = {"barrier", mpi_barrier, mpi_barrier},
};

const struct sync_method *sync_method_get(enum sync_kind kind)
{
    return &methods[kind];
}
