/* For tests/kernel/test_intelmpi_env_file.py: which ranks reduce in MPI_Allreduce. Per count of
   MPI_INT elements given on the command line, one MPI_Allreduce with a user-defined sum that
   counts its invocations on this rank; each rank prints `count <C> invocations <N>` per call,
   after checking the sum. An algorithm that reduces on one rank and broadcasts (Intel MPI's
   Reduce + Bcast preset) invokes it on the root alone, recursive doubling on every rank. */
#include <stdio.h>
#include <stdlib.h>

#include <mpi.h>

static long long invocations;

static void counting_sum(void *in, void *inout, int *len, MPI_Datatype *datatype) {
    (void)datatype;
    const int *a = in;
    int *b = inout;
    for (int i = 0; i < *len; i++) {
        b[i] += a[i];
    }
    invocations++;
}

static void check(int code, const char *call) {
    if (code != MPI_SUCCESS) {
        fprintf(stderr, "allreduce_op_count: %s failed (%d)\n", call, code);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

int main(int argc, char **argv) {
    check(MPI_Init(&argc, &argv), "MPI_Init");
    int rank = 0, size = 0;
    check(MPI_Comm_rank(MPI_COMM_WORLD, &rank), "MPI_Comm_rank");
    check(MPI_Comm_size(MPI_COMM_WORLD, &size), "MPI_Comm_size");
    MPI_Op op;
    check(MPI_Op_create(counting_sum, 1, &op), "MPI_Op_create");
    for (int arg = 1; arg < argc; arg++) {
        int count = atoi(argv[arg]);
        int *send = malloc((size_t)count * sizeof *send);
        int *recv = malloc((size_t)count * sizeof *recv);
        if (count <= 0 || !send || !recv) {
            fprintf(stderr, "allreduce_op_count: bad count %s\n", argv[arg]);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        for (int i = 0; i < count; i++) {
            send[i] = rank + 1;
        }
        long long before = invocations;
        check(MPI_Allreduce(send, recv, count, MPI_INT, op, MPI_COMM_WORLD), "MPI_Allreduce");
        for (int i = 0; i < count; i++) {
            if (recv[i] != size * (size + 1) / 2) {
                fprintf(stderr, "allreduce_op_count: wrong sum at %d of %d\n", i, count);
                MPI_Abort(MPI_COMM_WORLD, 3);
            }
        }
        printf("rank %d count %d invocations %lld\n", rank, count, invocations - before);
        free(send);
        free(recv);
    }
    check(MPI_Op_free(&op), "MPI_Op_free");
    check(MPI_Finalize(), "MPI_Finalize");
    return 0;
}
