/* The MPI library the kernel starts with is the one it was built with: what the build's mpi.h
   said (mpi_family.h) against what the library loaded at run time says of itself
   (MPI_Get_library_version). Two libraries can share a shared object's name (MPICH and Intel MPI
   both ship libmpi.so.12): a kernel started with the other one's folder first on
   LD_LIBRARY_PATH would run and measure that library without a word. */
#ifndef MPIGUIDE_LIBRARY_CHECK_H
#define MPIGUIDE_LIBRARY_CHECK_H

/* Before MPI_Init, on every rank: 0 when the two agree, or when either one cannot be told (a
   library whose version text the kernel does not know, a build with neither library's
   macros); on a mismatch the rank prints one line naming both and the result is non-zero.
   The MPI standard lets MPI_Get_library_version be called before MPI_Init; a library that fails
   it then is asked again by library_check_started. */
int library_check(void);

/* Right after MPI_Init, with library_check's result: returns when the libraries agree, else
   exits with status 2 (bad input). Only now, not before MPI_Init: see preload_refuse
   (src/common/preload.h) for why a rank exits only once the MPI library has started, and why
   it prints before. */
void library_check_started(int status);

#endif
