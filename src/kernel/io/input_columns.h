/* The columns of INPUT.csv and the rules of when each applies. input_columns.c also defines
   input_list_columns (declared in io/input.h), which prints the table for --list-params. */
#ifndef MPIGUIDE_INPUT_COLUMNS_H
#define MPIGUIDE_INPUT_COLUMNS_H

#include "experiment.h"

struct operation;

enum column {
    COL_EXP_ID, COL_OP, COL_MSG_SIZE, COL_DTYPE, COL_NREP, COL_WORK, COL_TOPOLOGY, COL_NDIM,
    COL_NFIN, COL_RADIUS, COL_ORDERING, COL_CONSTRUCTOR, COL_REORDER, COL_ROOT, COL_SYNC,
    COL_MAX_TIME, COL_BUFFER_OFFSET, COL_COUNTS, COL_INTERLEAVE, COL_WARMUP, COL_ALGORITHM,
    COL_CHUNK, COL_COUNT
};

/* When a column applies (docs/architecture.md, "Parameter applicability"); the first five
   depend on the op, the others on the topology. */
enum applicability {
    APPLIES_ALWAYS, APPLIES_MOVES_DATA, APPLIES_ROOT, APPLIES_NONBLOCKING, APPLIES_COUNTS,
    APPLIES_ALGORITHM_OF, APPLIES_GRID, APPLIES_STENCIL, APPLIES_STENCIL_OR_FULL,
    APPLIES_TOPOLOGY, APPLIES_KIND_COUNT
};

/* A column of the input: its name, the text an empty cell stands for ("" when the column is
   required, or for ordering and constructor, whose default depends on the topology), and when it
   applies. The parsing reads its defaults from here; --list-params prints this table. */
struct column_spec {
    const char *name;
    const char *default_text;
    enum applicability applies;
};

extern const struct column_spec input_columns[COL_COUNT];

/* The topologies of the kinds grid and stencil. */
static inline int is_grid(enum topology_kind t)
{
    return t == TOPO_CART || t == TOPO_VONNEUMANN || t == TOPO_MOORE;
}

static inline int is_stencil(enum topology_kind t)
{
    return t == TOPO_VONNEUMANN || t == TOPO_MOORE;
}

/* Whether the column applies to a row of the op and topology. */
int column_applies(enum column col, const struct operation *op, enum topology_kind t);
/* Whether the op (rather than the topology) decides if the column applies. */
int applies_by_op(enum column col);

#endif
