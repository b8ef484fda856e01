/* The rows of INPUT.csv grouped into experiments: the rows of one exp_id are one experiment,
   a single row or the chunks of an interleaved one. */
#ifndef MPIGUIDE_INPUT_EXPERIMENTS_H
#define MPIGUIDE_INPUT_EXPERIMENTS_H

#include <stddef.h>

#include "experiment.h"

/* Checks every experiment of the n rows of the file at path and numbers them (group) in the
   order of their exp_ids. Returns 0, or prints "PATH:LINE: message" (the line of the row at
   fault) to stderr and returns -1. */
int check_experiments(const char *path, struct experiment *exps, size_t n);

#endif
