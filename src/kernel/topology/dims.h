/* MPI_Dims_create replacement giving the same grid on every MPI library. */
#ifndef MPIGUIDE_DIMS_H
#define MPIGUIDE_DIMS_H

/* Splits nnodes into ndims factors, non-increasing, as balanced as possible: of all
   non-increasing factorisations the lexicographically smallest one (smallest largest
   dimension, then smallest second, ...). Returns 0, or -1 if nnodes < 1 or ndims < 1. */
int dims_create(int nnodes, int ndims, int dims[]);

#endif
