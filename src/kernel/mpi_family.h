/* The MPI library the kernel is built with, as the build's mpi.h names it: exactly one of
   BUILT_WITH_OPENMPI, BUILT_WITH_INTELMPI and BUILT_WITH_MPICH, or none (another library, or the
   standard MPI ABI's mpi.h, which names no implementation). Intel MPI's mpi.h defines
   MPICH_VERSION too, the version of the MPICH it derives from ("3.4a2" in 2021.19), so
   I_MPI_VERSION is tested first. BUILT_LIBRARY and BUILT_VERSION name the library and its version
   in messages ("Open MPI", "4.1.4"). */
#ifndef MPIGUIDE_MPI_FAMILY_H
#define MPIGUIDE_MPI_FAMILY_H

#include <mpi.h>

#define BUILT_STRING_(x) #x
#define BUILT_STRING(x) BUILT_STRING_(x)

#if defined(OPEN_MPI)
#define BUILT_WITH_OPENMPI 1
#define BUILT_LIBRARY "Open MPI"
#define BUILT_VERSION                                                                          \
    BUILT_STRING(OMPI_MAJOR_VERSION) "." BUILT_STRING(OMPI_MINOR_VERSION) "." BUILT_STRING(     \
        OMPI_RELEASE_VERSION)
#elif defined(I_MPI_VERSION)
#define BUILT_WITH_INTELMPI 1
#define BUILT_LIBRARY "Intel MPI"
#define BUILT_VERSION I_MPI_VERSION
#elif defined(MPICH_VERSION)
#define BUILT_WITH_MPICH 1
#define BUILT_LIBRARY "MPICH"
#define BUILT_VERSION MPICH_VERSION
#endif

#endif
