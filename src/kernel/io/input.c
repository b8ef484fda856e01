#include "io/input.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algorithm/algorithm.h"
#include "check.h"
#include "io/input_cells.h"
#include "io/input_columns.h"
#include "io/input_experiments.h"
#include "io/input_row.h"
#include "io/sha256.h"

/* Removes the line end (LF or CRLF) from a line of n bytes; returns the length left. */
static size_t chomp(char *line, size_t n)
{
    while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
        line[--n] = '\0';
    return n;
}

/* Splits line in place at commas; returns the number of fields (at most max). */
static int split(char *line, char **fields, int max)
{
    int n = 0;
    for (char *p = line;; p++) {
        if (n < max)
            fields[n] = p;
        n++;
        p = strchr(p, ',');
        if (!p)
            return n;
        *p = '\0';
    }
}

static int parse_header(const struct source *at, char *line, int *column_of_field, int *nfields)
{
    char *fields[COL_COUNT + 1];
    int n = split(line, fields, COL_COUNT + 1);
    if (n > COL_COUNT)
        return reject(at, "header has %d columns, more than the %d known ones", n, COL_COUNT);
    int seen[COL_COUNT] = {0};
    for (int i = 0; i < n; i++) {
        int col = -1;
        for (int c = 0; c < COL_COUNT; c++)
            if (strcmp(fields[i], input_columns[c].name) == 0)
                col = c;
        if (col < 0)
            return reject(at, "unknown column '%s'", fields[i]);
        if (seen[col]++)
            return reject(at, "column '%s' appears twice", fields[i]);
        column_of_field[i] = col;
    }
    static const enum column required[] = {COL_EXP_ID, COL_OP, COL_NREP};
    for (size_t i = 0; i < sizeof required / sizeof required[0]; i++)
        if (!seen[required[i]])
            return reject(at, "missing column '%s'", input_columns[required[i]].name);
    *nfields = n;
    return 0;
}

/* The next line, hashed as read (so the provenance hashes exactly what was validated) and
   without its line end; returns its length without the line end, or -1 at the end of the
   file or on a read error (ferror tells). */
static ssize_t next_line(FILE *file, char **line, size_t *capacity, struct sha256 *hash)
{
    ssize_t length = getline(line, capacity, file);
    if (length < 0)
        return -1;
    sha256_update(hash, *line, (size_t)length);
    return (ssize_t)chomp(*line, (size_t)length);
}

/* A NUL byte would end the line for every string function: what follows it would be
   silently ignored, though hashed. */
static int check_no_nul(const struct source *at, const char *line, ssize_t length)
{
    if (strlen(line) != (size_t)length)
        return reject(at, "NUL byte in the line (not a text file?)");
    return 0;
}

static int read_rows(FILE *file, struct source *at, struct experiment **out, size_t *count,
                     const struct run_shape *run, struct sha256 *hash)
{
    char *line = NULL;
    size_t capacity = 0, n = 0, allocated = 0;
    struct experiment *exps = NULL;
    int column_of_field[COL_COUNT], nfields = 0, rc = 0;
    long long blank_line = 0; /* first empty line not yet followed by a row */

    at->line = 1;
    ssize_t length = next_line(file, &line, &capacity, hash);
    if (length < 0) {
        /* A directory opens but does not read (EISDIR): that is no empty file. */
        rc = ferror(file) ? reject(at, "read error: %s", strerror(errno))
                          : reject(at, "empty file (expected a header row)");
        goto done;
    }
    if ((rc = check_no_nul(at, line, length)) != 0)
        goto done;
    /* A UTF-8 byte order mark from a spreadsheet is not part of the first column's name. */
    char *header = strncmp(line, "\xEF\xBB\xBF", 3) == 0 ? line + 3 : line;
    if ((rc = parse_header(at, header, column_of_field, &nfields)) != 0)
        goto done;

    while ((length = next_line(file, &line, &capacity, hash)) >= 0) {
        at->line++;
        if ((rc = check_no_nul(at, line, length)) != 0)
            goto done;
        if (line[0] == '\0') {
            if (!blank_line)
                blank_line = at->line;
            continue;
        }
        if (blank_line) {
            at->line = blank_line;
            rc = reject(at, "empty line (only trailing empty lines are allowed)");
            goto done;
        }
        char *fields[COL_COUNT + 1];
        int found = split(line, fields, COL_COUNT + 1);
        if (found != nfields) {
            rc = reject(at, "%d fields, but the header has %d columns", found, nfields);
            goto done;
        }
        row_cells cells = {0};
        for (int i = 0; i < nfields; i++)
            cells[column_of_field[i]] = fields[i];
        if (n == allocated) {
            allocated = allocated ? 2 * allocated : 256;
            exps = xrealloc(exps, allocated * sizeof *exps);
        }
        if ((rc = parse_row(at, cells, run, &exps[n])) != 0)
            goto done;
        n++;
    }
    if (ferror(file)) {
        rc = reject(at, "read error: %s", strerror(errno));
        goto done;
    }
    if (n == 0) {
        at->line = 1;
        rc = reject(at, "no experiments (the file has only a header row)");
        goto done;
    }
    rc = check_experiments(at->path, exps, n);
done:
    free(line);
    if (rc != 0) {
        free(exps);
        return rc;
    }
    *out = exps;
    *count = n;
    return 0;
}

int input_names_algorithm(const char *path)
{
    FILE *file = fopen(path, "r");
    if (!file)
        return 0;
    char *line = NULL;
    size_t capacity = 0;
    int column = -1, names = 0;
    ssize_t length = getline(&line, &capacity, file);
    if (length > 0) {
        chomp(line, (size_t)length);
        char *header = strncmp(line, "\xEF\xBB\xBF", 3) == 0 ? line + 3 : line;
        char *fields[COL_COUNT + 1];
        const int n = split(header, fields, COL_COUNT + 1);
        for (int i = 0; i < n && i <= COL_COUNT; i++)
            if (strcmp(fields[i], input_columns[COL_ALGORITHM].name) == 0)
                column = i;
    }
    while (column >= 0 && !names && (length = getline(&line, &capacity, file)) > 0) {
        chomp(line, (size_t)length);
        char *fields[COL_COUNT + 1];
        const int n = split(line, fields, COL_COUNT + 1);
        names = column < n && column <= COL_COUNT && fields[column][0] != '\0' &&
                strcmp(fields[column], ALGORITHM_UNTUNED) != 0;
    }
    free(line);
    fclose(file);
    return names;
}

int input_read(const char *path, const struct run_shape *run, struct experiment **experiments,
               size_t *count, char digest_hex[65])
{
    struct source at = {path, 0};
    FILE *file = fopen(path, "r");
    if (!file) {
        fprintf(stderr, "%s: cannot open: %s\n", path, strerror(errno));
        return -1;
    }
    struct sha256 hash;
    sha256_init(&hash);
    int rc = read_rows(file, &at, experiments, count, run, &hash);
    fclose(file);
    if (rc == 0)
        sha256_hex(&hash, digest_hex);
    return rc;
}
