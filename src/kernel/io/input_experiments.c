#include "io/input_experiments.h"

#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "io/input_cells.h"

/* Rows by exp_id, then chunk, then line: the rows of one experiment side by side. */
static int compare_rows(const void *a, const void *b)
{
    const struct experiment *x = *(const struct experiment *const *)a;
    const struct experiment *y = *(const struct experiment *const *)b;
    if (x->exp_id != y->exp_id)
        return x->exp_id < y->exp_id ? -1 : 1;
    if (x->chunk != y->chunk)
        return x->chunk < y->chunk ? -1 : 1;
    return x->line < y->line ? -1 : x->line > y->line;
}

/* Whether two rows describe the same experiment: every field but where they are and which
   chunk they measure (parse_row zeroes a row first, padding included). */
static int same_parameters(const struct experiment *a, const struct experiment *b)
{
    struct experiment x, y;
    memcpy(&x, a, sizeof x); /* memcpy, not assignment: it copies the padding too */
    memcpy(&y, b, sizeof y);
    x.line = y.line = 0;
    x.chunk = y.chunk = 0;
    return memcmp(&x, &y, sizeof x) == 0;
}

/* The rows of one exp_id (sorted by chunk) are one experiment: a single row (interleave 1), or
   the rows of its chunks 0 to interleave - 1, each once, all with the same parameters. */
static int check_experiment(const char *path, struct experiment *const *rows, size_t count)
{
    const struct experiment *head = rows[0];
    for (size_t i = 1; i < count; i++) {
        const struct experiment *row = rows[i];
        struct source at = {path, row->line};
        if (head->interleave == 1 && row->interleave == 1)
            return reject(&at, "duplicate exp_id %lld (first on line %lld)",
                          (long long)row->exp_id, (long long)head->line);
        if (!same_parameters(head, row))
            return reject(&at,
                          "exp_id %lld: the parameters differ from line %lld (the chunks of an "
                          "interleaved experiment share them)",
                          (long long)row->exp_id, (long long)head->line);
        if (row->chunk == rows[i - 1]->chunk)
            return reject(&at, "exp_id %lld: chunk %d twice (first on line %lld)",
                          (long long)row->exp_id, row->chunk, (long long)rows[i - 1]->line);
    }
    /* Sorted and without repeats, the chunks are 0, 1, ... up to the first one missing. */
    int missing = (int)count;
    for (size_t i = 0; i < count && missing == (int)count; i++)
        if (rows[i]->chunk != (int)i)
            missing = (int)i;
    if (missing < head->interleave) {
        struct source at = {path, head->line};
        return reject(&at, "exp_id %lld: interleave %d, but no row of chunk %d",
                      (long long)head->exp_id, head->interleave, missing);
    }
    return 0;
}

int check_experiments(const char *path, struct experiment *exps, size_t n)
{
    struct experiment **sorted = xmalloc(n * sizeof *sorted);
    for (size_t i = 0; i < n; i++)
        sorted[i] = &exps[i];
    qsort(sorted, n, sizeof *sorted, compare_rows);
    int rc = 0, group = 0;
    for (size_t first = 0, end; first < n && rc == 0; first = end, group++) {
        for (end = first + 1; end < n && sorted[end]->exp_id == sorted[first]->exp_id; end++)
            ;
        rc = check_experiment(path, sorted + first, end - first);
        for (size_t i = first; i < end; i++)
            sorted[i]->group = group;
    }
    free(sorted);
    return rc;
}
