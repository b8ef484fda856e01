/* Builds and frees the context of one experiment ("OP MSG_SIZE" on the command line, dtype
   char) on MPI_COMM_WORLD without running it: setup only (which maps and touches the buffers,
   but moves no data). Compiled with -fsanitize=undefined, it shows arithmetic the setup must not do. */
#include <stdio.h>
#include <stdlib.h>

#include <mpi.h>

#include "check.h"
#include "ops/op_context.h"
#include "ops/op_table.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    if (argc != 3 || operation_find(argv[1]) < 0) {
        fprintf(stderr, "usage: context_driver OP MSG_SIZE\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    struct experiment exp = {.exp_id = 1, .line = 2, .op = operation_find(argv[1]),
                             .msg_size = atoll(argv[2]), .dtype = DTYPE_CHAR, .nrep = 1};
    struct op_context ctx;
    op_context_create(&ctx, &exp, MPI_COMM_WORLD, MPI_COMM_WORLD, NULL, NULL);
    op_context_free(&ctx);
    MPI_Finalize();
    puts("ok");
    return EXIT_OK;
}
