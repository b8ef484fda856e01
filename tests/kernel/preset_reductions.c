/* For tests/kernel/test_intelmpi_presets.py: on which ranks MPI_Allreduce reduces. A user-defined
   sum counts its invocations on this rank; each rank prints "rank <R> reductions <N>" after one
   MPI_Allreduce of 4 doubles, and exits 1 if the result is not the sum. Intel MPI's preset
   (I_MPI_ADJUST_ALLREDUCE) decides the algorithm: Reduce + Bcast reduces on one rank only. */
#include <stdio.h>
#include <stdlib.h>

#include <mpi.h>

static int reductions;

static void counting_sum(void *in, void *inout, int *len, MPI_Datatype *type)
{
    (void)type;
    reductions++;
    for (int i = 0; i < *len; i++)
        ((double *)inout)[i] += ((double *)in)[i];
}

static void check(int rc, const char *what)
{
    if (rc != MPI_SUCCESS) {
        fprintf(stderr, "preset_reductions: %s failed (%d)\n", what, rc);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
}

int main(int argc, char **argv)
{
    check(MPI_Init(&argc, &argv), "MPI_Init");
    int rank, size;
    check(MPI_Comm_rank(MPI_COMM_WORLD, &rank), "MPI_Comm_rank");
    check(MPI_Comm_size(MPI_COMM_WORLD, &size), "MPI_Comm_size");
    MPI_Op op;
    check(MPI_Op_create(counting_sum, 1, &op), "MPI_Op_create");
    double send[4] = {1, 2, 3, 4}, receive[4] = {0};
    check(MPI_Allreduce(send, receive, 4, MPI_DOUBLE, op, MPI_COMM_WORLD), "MPI_Allreduce");
    int wrong = 0;
    for (int i = 0; i < 4; i++)
        wrong |= receive[i] != send[i] * size;
    printf("rank %d reductions %d\n", rank, reductions);
    check(MPI_Op_free(&op), "MPI_Op_free");
    check(MPI_Finalize(), "MPI_Finalize");
    return wrong ? EXIT_FAILURE : EXIT_SUCCESS;
}
