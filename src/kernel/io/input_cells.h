/* The cells of an INPUT.csv row, one value at a time, each checked against its column. Every
   function that takes a source returns 0, or prints "PATH:LINE: message" to stderr and returns
   -1. */
#ifndef MPIGUIDE_INPUT_CELLS_H
#define MPIGUIDE_INPUT_CELLS_H

#include "io/input_columns.h"

/* Where a message points: file and line. */
struct source {
    const char *path;
    long long line;
};

/* The cells of one row, by column; NULL for a column the file does not have. */
typedef const char *row_cells[COL_COUNT];

/* Prints "PATH:LINE: message" and a newline to stderr; returns -1. */
__attribute__((format(printf, 2, 3))) int reject(const struct source *at, const char *fmt, ...);

/* A max_time cell: a finite, non-negative number of seconds. */
int parse_seconds(const struct source *at, const char *cell, double *out);
/* Index of cell among names (empty names skipped), or a message listing the allowed ones. */
int parse_name(const struct source *at, enum column col, const char *cell,
               const char *const *names, int n, int *out);

/* Whether the row has the column and its cell is not empty. */
int cell_given(const row_cells cells, enum column col);
/* A cell's text, or dflt when it is empty. */
const char *cell_or(const row_cells cells, enum column col, const char *dflt);
/* An optional cell: its integer value, or its column's default when empty. */
int integer_cell(const struct source *at, const row_cells cells, enum column col, long long min,
                 long long max, long long *out);
/* A cell that must be given (why: "for op X", ...), as an integer. */
int required_integer_cell(const struct source *at, const row_cells cells, enum column col,
                          long long min, long long max, const char *why, long long *out);
/* An optional cell: the index among names of its value, or of its column's default when
   empty. */
int name_cell(const struct source *at, const row_cells cells, enum column col,
              const char *const *names, int n, int *out);

#endif
