#include "io/input_row.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "algorithm/algorithm.h"
#include "io/input_columns.h"
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

int parse_row(const struct source *at, const row_cells cells, const struct run_shape *run,
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
