/* INPUT.csv: parsing and validation (rank 0), before anything is measured. */
#ifndef MPIGUIDE_INPUT_H
#define MPIGUIDE_INPUT_H

#include <stddef.h>
#include <stdio.h>

#include "experiment.h"

/* The run a file is validated for: what decides whether an experiment can run at all. */
struct run_shape {
    int nprocs;
    int largest_node; /* ranks of the largest node */
    int equal_nodes;  /* every node has the same number of ranks */
};

/* Reads and validates the whole file for the run. On success returns 0, a malloc'ed array and
   the SHA-256 of the bytes read (64 hex digits); otherwise prints "PATH:LINE: message" to
   stderr and returns -1. */
int input_read(const char *path, const struct run_shape *run, struct experiment **experiments,
               size_t *count, char digest_hex[65]);

/* Whether some row of the file names an algorithm of the library (column algorithm neither
   empty nor ALGORITHM_UNTUNED, which needs nothing of the library): read before MPI_Init,
   without validating anything. 0 also when the file cannot be read. */
int input_names_algorithm(const char *path);

/* Writes the input's columns as TSV (--list-params): a header row `param default applies`, then
   one row per column in the grid's order with the text an empty cell stands for ("" when the
   column is required or its default depends on the topology) and when the column applies. */
void input_list_columns(FILE *out);

#endif
