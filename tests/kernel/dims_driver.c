/* Prints dims_create(N, D) for each "N D" pair on the command line, one line each. */
#include <stdio.h>
#include <stdlib.h>

#include "topology/dims.h"

int main(int argc, char **argv)
{
    for (int i = 1; i + 1 < argc; i += 2) {
        int nnodes = atoi(argv[i]), ndims = atoi(argv[i + 1]), dims[16];
        if (ndims < 1 || ndims > 16 || dims_create(nnodes, ndims, dims) != 0) {
            printf("error\n");
            continue;
        }
        for (int d = 0; d < ndims; d++)
            printf(d ? " %d" : "%d", dims[d]);
        printf("\n");
    }
    return 0;
}
