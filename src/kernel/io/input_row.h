/* One row of INPUT.csv: its cells read into a struct experiment and checked against each other
   and against the run. */
#ifndef MPIGUIDE_INPUT_ROW_H
#define MPIGUIDE_INPUT_ROW_H

#include "experiment.h"
#include "io/input.h"
#include "io/input_cells.h"

/* Fills exp (zeroed first, padding included, so that rows compare with memcmp) from the row at
   `at`: every cell against its column and the columns against each other, then the sizes the
   kernel must hold for the run. Returns 0, or -1 after reject. */
int parse_row(const struct source *at, const row_cells cells, const struct run_shape *run,
              struct experiment *exp);

#endif
