/* INPUT.csv: parsing and validation (rank 0), before anything is measured. */
#ifndef MPIGUIDE_INPUT_H
#define MPIGUIDE_INPUT_H

#include <stddef.h>

#include "experiment.h"

/* Reads and validates the whole file for a run on nprocs ranks whose largest node has
   largest_node ranks. On success returns 0, a malloc'ed array and the SHA-256 of the bytes read
   (64 hex digits); otherwise prints "PATH:LINE: message" to stderr and returns -1. */
int input_read(const char *path, int nprocs, int largest_node, struct experiment **experiments,
               size_t *count, char digest_hex[65]);

#endif
