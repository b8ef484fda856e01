/* The checks of handled.h. They call PMPI_ only and treat a failing query as "not handled":
   the call then goes to the library, which reports the error as it would without us. */
#include "handled.h"

#include <stddef.h>

bool tune_contiguous_predefined(MPI_Datatype datatype)
{
    int integers, addresses, datatypes, combiner;
    if (datatype == MPI_DATATYPE_NULL ||
        PMPI_Type_get_envelope(datatype, &integers, &addresses, &datatypes, &combiner) !=
            MPI_SUCCESS ||
        combiner != MPI_COMBINER_NAMED)
        return false;
    int size;
    MPI_Aint lb, extent;
    if (PMPI_Type_size(datatype, &size) != MPI_SUCCESS ||
        PMPI_Type_get_extent(datatype, &lb, &extent) != MPI_SUCCESS)
        return false;
    return size > 0 && lb == 0 && extent == (MPI_Aint)size;
}

bool tune_predefined_reduction(MPI_Op op)
{
    const MPI_Op allowed[] = {MPI_SUM,  MPI_PROD, MPI_MAX,  MPI_MIN,  MPI_LAND,
                              MPI_LOR,  MPI_LXOR, MPI_BAND, MPI_BOR,  MPI_BXOR};
    for (size_t i = 0; i < sizeof allowed / sizeof allowed[0]; i++)
        if (op == allowed[i])
            return true;
    return false;
}

bool tune_intra_communicator(MPI_Comm comm)
{
    int inter = 1;
    return comm != MPI_COMM_NULL && PMPI_Comm_test_inter(comm, &inter) == MPI_SUCCESS && !inter;
}
