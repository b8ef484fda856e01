/* What libmpiguide-tune can run in place of which collective: the mock-ups of src/mockups, one
   row each, with what a call must satisfy for the mock-up to do the collective's job. */
#ifndef MPIGUIDE_TUNE_REPLACEMENTS_H
#define MPIGUIDE_TUNE_REPLACEMENTS_H

#include <stddef.h>

#include <mpi.h>

enum tune_collective { TUNE_BCAST, TUNE_ALLGATHER, TUNE_ALLREDUCE, TUNE_SCAN, TUNE_COLLECTIVES };

/* One call of a replaceable collective as the checks of whether to replace it see it: count
   elements of datatype (per process for allgather); root: bcast's (0 for the others); op: the
   reductions' (MPI_OP_NULL for the others). */
struct tune_call {
    const void *sendbuf; /* NULL for bcast */
    int count;
    MPI_Datatype datatype;
    MPI_Op op;
    int root;
    MPI_Comm comm;
    int size; /* of comm */
};

/* Scratch a replacement needs besides the call's buffers. */
struct tune_scratch {
    void *blocks;         /* `size` blocks of count elements, where the row asks for them */
    int *counts, *displs; /* `size` ints each */
};

enum tune_needs {
    NEEDS_REDUCTION = 1u << 0,   /* op must be a predefined reduction op */
    NEEDS_EQUAL_PARTS = 1u << 1, /* count must split into `size` equal parts (no padding: the
                                    caller's buffers are what they are) */
    NEEDS_BLOCKS = 1u << 2,      /* tune_scratch.blocks */
};

/* A mock-up run in place of a call: the collective's own arguments (allgather's one count and
   datatype), then the communicator's size and the scratch. Taken as they come, with no struct
   built per call: a replaced call costs little more than calling the mock-up directly. */
typedef int tune_bcast_run(void *buffer, int count, MPI_Datatype datatype, int root,
                           MPI_Comm comm, int size, const struct tune_scratch *scratch);
typedef int tune_allgather_run(const void *sendbuf, void *recvbuf, int count,
                               MPI_Datatype datatype, MPI_Comm comm, int size,
                               const struct tune_scratch *scratch);
/* MPI_Allreduce's and MPI_Scan's. */
typedef int tune_reduction_run(const void *sendbuf, void *recvbuf, int count,
                               MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, int size,
                               const struct tune_scratch *scratch);

struct tune_replacement {
    const char *name; /* the kernel's operation name, <collective>_as_<how> */
    enum tune_collective collective;
    unsigned needs;
    union {
        tune_bcast_run *bcast;
        tune_allgather_run *allgather;
        tune_reduction_run *reduction; /* allreduce, scan */
    } run;                             /* the member of `collective` */
};

extern const struct tune_replacement tune_replacements[];
extern const size_t tune_replacement_count;
/* MPI_<Name> of a collective, e.g. "MPI_Allreduce". */
extern const char *const tune_collective_names[TUNE_COLLECTIVES];

/* Index of the named replacement, -1 if there is none. */
int tune_replacement_find(const char *name);

#endif
