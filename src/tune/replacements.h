/* What libmpiguide-tune can run in place of which collective: the mock-ups of src/mockups, one
   row each, with what a call must satisfy for the mock-up to do the collective's job. */
#ifndef MPIGUIDE_TUNE_REPLACEMENTS_H
#define MPIGUIDE_TUNE_REPLACEMENTS_H

#include <stddef.h>

#include <mpi.h>

enum tune_collective { TUNE_BCAST, TUNE_ALLGATHER, TUNE_ALLREDUCE, TUNE_SCAN, TUNE_COLLECTIVES };

/* One call of a replaceable collective, in the collective's own terms: count elements of
   datatype (per process for allgather); root: bcast's; op: the reductions'. */
struct tune_call {
    const void *sendbuf;
    void *recvbuf;
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

struct tune_replacement {
    const char *name; /* the kernel's operation name, <collective>_as_<how> */
    enum tune_collective collective;
    unsigned needs;
    int (*run)(const struct tune_call *call, const struct tune_scratch *scratch);
};

extern const struct tune_replacement tune_replacements[];
extern const size_t tune_replacement_count;
/* MPI_<Name> of a collective, e.g. "MPI_Allreduce". */
extern const char *const tune_collective_names[TUNE_COLLECTIVES];

/* Index of the named replacement, -1 if there is none. */
int tune_replacement_find(const char *name);

#endif
