/* Collective mock-ups with MPI arguments: the job of a collective done with other MPI
   operations. One implementation, built once into libmpiguide-mockups.a and linked by both the
   kernel (its <op>_as_<how> operations, which it measures and checks under --verify) and
   libmpiguide-tune (which runs them in place of the collective), so --verify covers exactly
   what the tuning library runs.

   Each function takes the arguments of the collective it replaces, the datatype contiguous
   (size = extent, lower bound 0), the op commutative, no MPI_IN_PLACE; callers guarantee that.
   Scratch is the caller's, so that a timed repetition allocates nothing. Each returns
   MPI_SUCCESS or the error code of the first MPI call that failed: the kernel aborts on it, the
   tuning library returns it as the collective would. */
#ifndef MPIGUIDE_MOCKUPS_H
#define MPIGUIDE_MOCKUPS_H

#include <mpi.h>

/* ---- bcast ---- */
/* Only the root contributes to an allgatherv: counts, displs: scratch of comm size ints. */
int mockup_bcast_as_allgatherv(void *buffer, int count, MPI_Datatype datatype, int root,
                               MPI_Comm comm, int *counts, int *displs);
/* The buffer holds size * chunk elements, split into equal parts: the root scatters part k to
   rank k, then an allgather in place. */
int mockup_bcast_as_scatter_allgather(void *buffer, int chunk, MPI_Datatype datatype, int root,
                                      MPI_Comm comm);

/* ---- allgather ---- */
/* The own block, copied once per destination into tmp (size * count elements), is an
   alltoall's send vector. */
int mockup_allgather_as_alltoall(const void *sendbuf, void *recvbuf, int count,
                                 MPI_Datatype datatype, MPI_Comm comm, void *tmp);
/* allgather has no root: rank 0 gathers and broadcasts. */
int mockup_allgather_as_gather_bcast(const void *sendbuf, void *recvbuf, int count,
                                     MPI_Datatype datatype, MPI_Comm comm);

/* ---- reductions ---- */
/* allreduce has no root: rank 0 reduces and broadcasts. */
int mockup_allreduce_as_reduce_bcast(const void *sendbuf, void *recvbuf, int count,
                                     MPI_Datatype datatype, MPI_Op op, MPI_Comm comm);
/* Both buffers hold size * chunk elements: part `rank` of the reduction is reduced into place
   (reduce_scatter_block), then an allgather in place. */
int mockup_allreduce_as_reduce_scatter_block_allgather(const void *sendbuf, void *recvbuf,
                                                       int chunk, MPI_Datatype datatype,
                                                       MPI_Op op, MPI_Comm comm);
/* As above with MPI_Reduce_scatter, counts (scratch of comm size ints) all chunk: Manwade &
   Kulkarni's Reducescatter. */
int mockup_allreduce_as_reduce_scatter_allgather(const void *sendbuf, void *recvbuf, int chunk,
                                                 MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                                                 int *counts);
/* Inclusive = exclusive prefix, then the own contribution reduced locally; rank 0's exscan
   result is undefined, its inclusive prefix is its own contribution. */
int mockup_scan_as_exscan_reduce_local(const void *sendbuf, void *recvbuf, int count,
                                       MPI_Datatype datatype, MPI_Op op, MPI_Comm comm);

#endif
