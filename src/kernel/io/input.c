#include "io/input.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algorithm/algorithm.h"
#include "check.h"
#include "io/input_cells.h"
#include "io/input_columns.h"
#include "io/sha256.h"
#include "kernel_limits.h"
#include "ops/op_table.h"
#include "sync/sync.h"
#include "topology/topology.h"

static const char *const dtype_names[DTYPE_COUNT] = {"char", "int", "float", "double"};
static const char *const topology_names[TOPO_COUNT] = {"none", "cart", "vonneumann", "moore",
                                                       "full"};
static const char *const ordering_names[ORDER_COUNT] = {"", "FMAJ", "LMAJ", "RAND", "LINEAR"};
static const char *const constructor_names[CONSTRUCTOR_COUNT] = {
    "", "cart", "graph", "graph_adj", "nodecart", "nodecart_greedy"};
static const char *const counts_names[COUNTS_PATTERN_COUNT] = {"equal", "ramp"};

/* ---- rows ------------------------------------------------------------------------------ */

static int ordering_fits(enum ordering o, enum topology_kind t)
{
    if (is_stencil(t))
        return o == ORDER_FMAJ || o == ORDER_LMAJ || o == ORDER_RAND;
    return t == TOPO_FULL && (o == ORDER_LINEAR || o == ORDER_RAND);
}

static int constructor_fits(enum constructor c, enum topology_kind t)
{
    if (t == TOPO_CART)
        return c == CONSTRUCTOR_CART || c == CONSTRUCTOR_NODECART ||
               c == CONSTRUCTOR_NODECART_GREEDY;
    return c == CONSTRUCTOR_GRAPH || c == CONSTRUCTOR_GRAPH_ADJ;
}

/* exp_id, op, topology, and which columns may be given at all. */
static int parse_identity(const struct source *at, const row_cells cells, struct experiment *exp)
{
    long long v;
    int choice;
    if (required_integer_cell(at, cells, COL_EXP_ID, 0, INT64_MAX, "", &v))
        return -1;
    exp->exp_id = v;
    if (!cell_given(cells, COL_OP))
        return reject(at, "column 'op' is required");
    exp->op = operation_find(cells[COL_OP]);
    if (exp->op < 0)
        return reject(at, "column 'op': unknown operation '%s' (mpiguide-bench --list-ops)",
                      cells[COL_OP]);
    const struct operation *op = &operation_table[exp->op];
    if (name_cell(at, cells, COL_TOPOLOGY, topology_names, TOPO_COUNT, &choice))
        return -1;
    const enum topology_kind t = exp->topology = (enum topology_kind)choice;
    for (int col = 0; col < COL_COUNT; col++)
        if (cell_given(cells, col) && !column_applies(col, op, t)) {
            const int by_op = applies_by_op(col);
            return reject(at, "column '%s' does not apply to %s %s", input_columns[col].name,
                          by_op ? "op" : "topology", by_op ? op->name : topology_names[t]);
        }
    if (operation_has(op, OP_TOPOLOGY_REQUIRED) && t == TOPO_NONE)
        return reject(at, "op %s needs a topology (column 'topology' is none)", op->name);
    return 0;
}

/* dtype, msg_size, work, root: the operation's parameters. */
static int parse_operation_parameters(const struct source *at, const row_cells cells,
                                      int nprocs, struct experiment *exp)
{
    const struct operation *op = &operation_table[exp->op];
    long long v;
    int choice;
    if (name_cell(at, cells, COL_DTYPE, dtype_names, DTYPE_COUNT, &choice))
        return -1;
    exp->dtype = (enum dtype)choice;
    if (op->msg_size != MSG_NONE) {
        char why[64];
        snprintf(why, sizeof why, " for op %s", op->name);
        if (required_integer_cell(at, cells, COL_MSG_SIZE, 0, MAX_BUFFER_BYTES, why, &v))
            return -1;
        exp->msg_size = v;
        if (v % (long long)dtype_size(exp->dtype) != 0)
            return reject(at, "column 'msg_size': %lld is not a multiple of the size of %s (%zu)",
                          v, dtype_names[exp->dtype], dtype_size(exp->dtype));
    }
    if (integer_cell(at, cells, COL_WORK, 0, MAX_WORK, &v))
        return -1;
    exp->work = v;
    if (integer_cell(at, cells, COL_ROOT, 0, INT32_MAX, &v))
        return -1;
    if (v >= nprocs)
        return reject(at, "column 'root': %lld is not a rank (the run has %d ranks)", v, nprocs);
    exp->root = (int)v;
    if (integer_cell(at, cells, COL_BUFFER_OFFSET, 0, MAX_BUFFER_OFFSET, &v))
        return -1;
    exp->buffer_offset = v;
    if (name_cell(at, cells, COL_COUNTS, counts_names, COUNTS_PATTERN_COUNT, &choice))
        return -1;
    exp->counts = (enum counts_pattern)choice;
    return 0;
}

/* ndim, nfin, radius, ordering, constructor, reorder. */
static int parse_topology_parameters(const struct source *at, const row_cells cells,
                                     struct experiment *exp)
{
    const enum topology_kind t = exp->topology;
    long long v;
    int choice;
    if (t == TOPO_NONE)
        return 0;
    if (is_grid(t)) {
        char why[64];
        snprintf(why, sizeof why, " for topology %s", topology_names[t]);
        if (required_integer_cell(at, cells, COL_NDIM, 1, MAX_DIMS, why, &v))
            return -1;
        exp->ndim = (int)v;
        if (integer_cell(at, cells, COL_NFIN, 0, INT32_MAX, &v))
            return -1;
        if (v > exp->ndim)
            return reject(at, "column 'nfin': %lld exceeds ndim (%d)", v, exp->ndim);
        exp->nfin = (int)v;
    }
    if (is_stencil(t)) {
        if (integer_cell(at, cells, COL_RADIUS, 1, INT32_MAX, &v))
            return -1;
        exp->radius = (int)v;
    }
    if (is_stencil(t) || t == TOPO_FULL) {
        const enum ordering dflt = t == TOPO_FULL ? ORDER_LINEAR : ORDER_FMAJ;
        if (parse_name(at, COL_ORDERING, cell_or(cells, COL_ORDERING, ordering_names[dflt]),
                       ordering_names, ORDER_COUNT, &choice))
            return -1;
        exp->ordering = (enum ordering)choice;
        if (!ordering_fits(exp->ordering, t))
            return reject(at, "column 'ordering': %s does not exist for topology %s",
                          ordering_names[choice], topology_names[t]);
    }
    const enum constructor dflt = t == TOPO_CART ? CONSTRUCTOR_CART : CONSTRUCTOR_GRAPH_ADJ;
    if (parse_name(at, COL_CONSTRUCTOR, cell_or(cells, COL_CONSTRUCTOR, constructor_names[dflt]),
                   constructor_names, CONSTRUCTOR_COUNT, &choice))
        return -1;
    exp->constructor = (enum constructor)choice;
    if (!constructor_fits(exp->constructor, t))
        return reject(at, "column 'constructor': %s does not fit topology %s",
                      constructor_names[choice], topology_names[t]);
    if (integer_cell(at, cells, COL_REORDER, 0, 1, &v))
        return -1;
    exp->reorder = (int)v;
    return 0;
}

/* nrep, sync, max_time, interleave, warmup, chunk: how the experiment is measured. */
static int parse_measurement(const struct source *at, const row_cells cells,
                             struct experiment *exp)
{
    long long v;
    int choice;
    if (required_integer_cell(at, cells, COL_NREP, 1, MAX_NREP, "", &v))
        return -1;
    exp->nrep = (int)v;
    const char *sync_names[SYNC_COUNT];
    for (int k = 0; k < SYNC_COUNT; k++)
        sync_names[k] = sync_method_get((enum sync_kind)k)->name;
    if (name_cell(at, cells, COL_SYNC, sync_names, SYNC_COUNT, &choice))
        return -1;
    exp->sync = (enum sync_kind)choice;
    if (parse_seconds(at, cell_or(cells, COL_MAX_TIME, input_columns[COL_MAX_TIME].default_text),
                      &exp->max_time))
        return -1;
    if (integer_cell(at, cells, COL_INTERLEAVE, 1, MAX_INTERLEAVE, &v))
        return -1;
    if (v > exp->nrep)
        return reject(at, "column 'interleave': %lld exceeds nrep (%d): every chunk needs a "
                          "repetition", v, exp->nrep);
    exp->interleave = (int)v;
    if (integer_cell(at, cells, COL_WARMUP, 0, MAX_WARMUP, &v))
        return -1;
    exp->warmup = (int)v;
    if (integer_cell(at, cells, COL_CHUNK, 0, INT32_MAX, &v))
        return -1;
    if (v >= exp->interleave)
        return reject(at, "column 'chunk': %lld is not a chunk of interleave %d (0 to %d)", v,
                      exp->interleave, exp->interleave - 1);
    exp->chunk = (int)v;
    return 0;
}

/* algorithm: a name of the library's own, checked against what it reports through MPI_T
   (applicability was checked with the op). */
static int parse_algorithm(const struct source *at, const row_cells cells,
                           struct experiment *exp)
{
    if (!cell_given(cells, COL_ALGORITHM))
        return 0;
    const char *name = cells[COL_ALGORITHM];
    if (strlen(name) > ALGORITHM_NAME_MAX)
        return reject(at, "column 'algorithm': '%s' is longer than %d bytes", name,
                      ALGORITHM_NAME_MAX);
    char message[1024];
    if (algorithm_find(operation_table[exp->op].algorithm_of, name, &exp->algorithm_value,
                       message, sizeof message) != 0)
        return reject(at, "%s", message);
    memcpy(exp->algorithm, name, strlen(name) + 1);
    return 0;
}

/* Sizes the kernel must be able to hold in memory and address with int. */
static int check_limits(const struct source *at, const struct run_shape *run,
                        const struct experiment *exp)
{
    const struct operation *op = &operation_table[exp->op];
    const int nprocs = run->nprocs;
    if (is_stencil(exp->topology) && topology_max_degree(exp, nprocs) > MAX_STENCIL_OFFSETS)
        return reject(at,
                      "column 'radius': radius %d in %d dimensions gives more than %lld offsets",
                      exp->radius, exp->ndim, MAX_STENCIL_OFFSETS);
    long long blocks = op->msg_size == MSG_PER_NEIGHBOR  ? topology_max_degree(exp, nprocs)
                       : op->msg_size == MSG_PER_PROCESS ? nprocs
                                                         : 1;
    if (operation_has(op, OP_EQUAL_NODES) && !run->equal_nodes)
        return reject(at, "op %s: lane decompositions need nodes of equal size (this run's "
                          "nodes differ); use --node-size with a divisor of the rank count",
                      op->name);
    const int node_vectors = operation_has(op, OP_NODE_VECTORS);
    if (node_vectors)
        blocks *= run->largest_node;
    /* Under ramp no rank holds twice the equal count: an alltoallv receive vector stays below
       twice the equal one. */
    if (exp->counts == COUNTS_RAMP)
        blocks *= 2;
    if (blocks > 0 && exp->msg_size > MAX_BUFFER_BYTES / blocks)
        return reject(at, "column 'msg_size': %lld bytes x %lld blocks exceeds %d bytes%s",
                      (long long)exp->msg_size, blocks, MAX_BUFFER_BYTES,
                      node_vectors ? " (a node leader holds the blocks of its whole node)" : "");
    return 0;
}

static int parse_row(const struct source *at, const row_cells cells, const struct run_shape *run,
                     struct experiment *exp)
{
    memset(exp, 0, sizeof *exp);
    exp->line = at->line;
    if (parse_identity(at, cells, exp) ||
        parse_operation_parameters(at, cells, run->nprocs, exp) ||
        parse_measurement(at, cells, exp) || parse_topology_parameters(at, cells, exp) ||
        parse_algorithm(at, cells, exp))
        return -1;
    return check_limits(at, run, exp);
}

/* ---- lines ------------------------------------------------------------------------------ */

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

/* Checks every experiment and numbers them (group) in the order of their exp_ids. */
static int check_experiments(const char *path, struct experiment *exps, size_t n)
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
