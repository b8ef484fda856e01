#include "io/input_cells.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int reject(const struct source *at, const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    fprintf(stderr, "%s:%lld: ", at->path, at->line);
    vfprintf(stderr, fmt, args);
    fputc('\n', stderr);
    va_end(args);
    return -1;
}

static int parse_integer(const struct source *at, enum column col, const char *cell,
                         long long min, long long max, long long *out)
{
    const char *name = input_columns[col].name;
    const char *digits = cell[0] == '-' ? cell + 1 : cell;
    if (digits[0] == '\0' || strspn(digits, "0123456789") != strlen(digits))
        return reject(at, "column '%s': '%s' is not an integer (allowed: %lld to %lld)", name,
                      cell, min, max);
    if (cell[0] == '-' && strspn(digits, "0") != strlen(digits))
        return reject(at, "column '%s': %s is negative (allowed: %lld to %lld)", name, cell, min,
                      max);
    errno = 0;
    long long v = strtoll(cell, NULL, 10);
    if (errno == ERANGE || v > max)
        return reject(at, "column '%s': %s is too large (at most %lld)", name, cell, max);
    if (v < min)
        return reject(at, "column '%s': %s is too small (at least %lld)", name, cell, min);
    *out = v;
    return 0;
}

int parse_seconds(const struct source *at, const char *cell, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(cell, &end);
    if (cell[0] == '\0' || *end != '\0' || cell[0] == ' ' || errno == ERANGE || !isfinite(v))
        return reject(at, "column 'max_time': '%s' is not a number of seconds", cell);
    if (v < 0)
        return reject(at, "column 'max_time': %s is negative", cell);
    *out = v;
    return 0;
}

int parse_name(const struct source *at, enum column col, const char *cell,
               const char *const *names, int n, int *out)
{
    for (int i = 0; i < n; i++)
        if (names[i][0] != '\0' && strcmp(cell, names[i]) == 0) {
            *out = i;
            return 0;
        }
    char allowed[256] = "";
    for (int i = 0; i < n; i++)
        if (names[i][0] != '\0') {
            if (allowed[0])
                strncat(allowed, ", ", sizeof allowed - strlen(allowed) - 1);
            strncat(allowed, names[i], sizeof allowed - strlen(allowed) - 1);
        }
    return reject(at, "column '%s': unknown value '%s' (allowed: %s)", input_columns[col].name,
                  cell, allowed);
}

int cell_given(const row_cells cells, enum column col)
{
    return cells[col] && cells[col][0] != '\0';
}

const char *cell_or(const row_cells cells, enum column col, const char *dflt)
{
    return cell_given(cells, col) ? cells[col] : dflt;
}

int integer_cell(const struct source *at, const row_cells cells, enum column col, long long min,
                 long long max, long long *out)
{
    return parse_integer(at, col, cell_or(cells, col, input_columns[col].default_text), min, max,
                         out);
}

int required_integer_cell(const struct source *at, const row_cells cells, enum column col,
                          long long min, long long max, const char *why, long long *out)
{
    if (!cell_given(cells, col))
        return reject(at, "column '%s' is required%s", input_columns[col].name, why);
    return parse_integer(at, col, cells[col], min, max, out);
}

int name_cell(const struct source *at, const row_cells cells, enum column col,
              const char *const *names, int n, int *out)
{
    return parse_name(at, col, cell_or(cells, col, input_columns[col].default_text), names, n, out);
}
