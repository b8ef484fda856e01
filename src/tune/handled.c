/* The checks of handled.h. They call PMPI_ only and treat a failing query as "not handled":
   the call then goes to the library, which reports the error as it would without us. */
#include "handled.h"

#include <stddef.h>
#include <stdint.h>

#include "thread_cache.h"

/* A predefined datatype lives as long as MPI does and keeps its handle, so what the check found
   about one holds for good: each thread remembers the datatypes it found contiguous last. The
   others are checked on every call; they fall through to the library anyway. */
#define REMEMBERED 8 /* datatypes per thread, a power of two */
static TUNE_THREAD_LOCAL struct remembered {
    MPI_Datatype datatype;
    int bytes; /* > 0; 0 in a slot never written */
} remembered[REMEMBERED];

static int checked_contiguous_bytes(MPI_Datatype datatype)
{
    int integers, addresses, datatypes, combiner;
    if (datatype == MPI_DATATYPE_NULL ||
        PMPI_Type_get_envelope(datatype, &integers, &addresses, &datatypes, &combiner) !=
            MPI_SUCCESS ||
        combiner != MPI_COMBINER_NAMED)
        return 0;
    int size;
    MPI_Aint lb, extent;
    if (PMPI_Type_size(datatype, &size) != MPI_SUCCESS ||
        PMPI_Type_get_extent(datatype, &lb, &extent) != MPI_SUCCESS)
        return 0;
    return size > 0 && lb == 0 && extent == (MPI_Aint)size ? size : 0;
}

int tune_contiguous_bytes(MPI_Datatype datatype)
{
    struct remembered *slot = &remembered[tune_slot((uintptr_t)datatype, REMEMBERED)];
    if (slot->bytes > 0 && slot->datatype == datatype)
        return slot->bytes;
    const int bytes = checked_contiguous_bytes(datatype);
    if (bytes > 0)
        *slot = (struct remembered){datatype, bytes};
    return bytes;
}

bool tune_predefined_reduction(MPI_Op op)
{
    /* One comparison after another rather than a table: Open MPI's ops are addresses in its
       library, and a table would load all ten on every call. */
    return op == MPI_SUM || op == MPI_PROD || op == MPI_MAX || op == MPI_MIN || op == MPI_LAND ||
           op == MPI_LOR || op == MPI_LXOR || op == MPI_BAND || op == MPI_BOR || op == MPI_BXOR;
}

bool tune_intra_communicator(MPI_Comm comm)
{
    int inter = 1;
    return comm != MPI_COMM_NULL && PMPI_Comm_test_inter(comm, &inter) == MPI_SUCCESS && !inter;
}
