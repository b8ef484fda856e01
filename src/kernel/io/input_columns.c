#include "io/input_columns.h"

#include <stdio.h>

#include "io/input.h"
#include "ops/op_table.h"

static const char *const applicability_names[APPLIES_KIND_COUNT] = {
    "always", "moves_data", "root", "nonblocking", "counts", "algorithm_of", "grid", "stencil",
    "stencil_or_full", "topology",
};

const struct column_spec input_columns[COL_COUNT] = {
    [COL_EXP_ID] = {"exp_id", "", APPLIES_ALWAYS},
    [COL_OP] = {"op", "", APPLIES_ALWAYS},
    [COL_MSG_SIZE] = {"msg_size", "", APPLIES_MOVES_DATA},
    [COL_DTYPE] = {"dtype", "char", APPLIES_MOVES_DATA},
    [COL_NREP] = {"nrep", "", APPLIES_ALWAYS},
    [COL_WORK] = {"work", "0", APPLIES_NONBLOCKING},
    [COL_TOPOLOGY] = {"topology", "none", APPLIES_ALWAYS},
    [COL_NDIM] = {"ndim", "", APPLIES_GRID},
    [COL_NFIN] = {"nfin", "0", APPLIES_GRID},
    [COL_RADIUS] = {"radius", "1", APPLIES_STENCIL},
    [COL_ORDERING] = {"ordering", "", APPLIES_STENCIL_OR_FULL},
    [COL_CONSTRUCTOR] = {"constructor", "", APPLIES_TOPOLOGY},
    [COL_REORDER] = {"reorder", "0", APPLIES_TOPOLOGY},
    [COL_ROOT] = {"root", "0", APPLIES_ROOT},
    [COL_SYNC] = {"sync", "dissemination", APPLIES_ALWAYS},
    [COL_MAX_TIME] = {"max_time", "0", APPLIES_ALWAYS},
    [COL_BUFFER_OFFSET] = {"buffer_offset", "0", APPLIES_MOVES_DATA},
    [COL_COUNTS] = {"counts", "equal", APPLIES_COUNTS},
    [COL_INTERLEAVE] = {"interleave", "1", APPLIES_ALWAYS},
    [COL_WARMUP] = {"warmup", "0", APPLIES_ALWAYS},
    /* Empty: the library's own choice. */
    [COL_ALGORITHM] = {"algorithm", "", APPLIES_ALGORITHM_OF},
    /* Not a grid parameter: the planner numbers the rows of an interleaved experiment. */
    [COL_CHUNK] = {"chunk", "0", APPLIES_ALWAYS},
};

void input_list_columns(FILE *out)
{
    fputs("param\tdefault\tapplies\n", out);
    for (int col = 0; col < COL_COUNT; col++)
        fprintf(out, "%s\t%s\t%s\n", input_columns[col].name, input_columns[col].default_text,
                applicability_names[input_columns[col].applies]);
}

int column_applies(enum column col, const struct operation *op, enum topology_kind t)
{
    switch (input_columns[col].applies) {
    case APPLIES_MOVES_DATA:
        return op->msg_size != MSG_NONE;
    case APPLIES_ROOT:
        return operation_has(op, OP_ROOT);
    case APPLIES_NONBLOCKING:
        return operation_has(op, OP_NONBLOCKING);
    case APPLIES_COUNTS:
        return operation_has(op, OP_COUNTS);
    case APPLIES_ALGORITHM_OF:
        return op->algorithm_of != NULL;
    case APPLIES_GRID:
        return is_grid(t);
    case APPLIES_STENCIL:
        return is_stencil(t);
    case APPLIES_STENCIL_OR_FULL:
        return is_stencil(t) || t == TOPO_FULL;
    case APPLIES_TOPOLOGY:
        return t != TOPO_NONE;
    case APPLIES_ALWAYS:
    default:
        return 1;
    }
}

int applies_by_op(enum column col)
{
    const enum applicability kind = input_columns[col].applies;
    return kind == APPLIES_MOVES_DATA || kind == APPLIES_ROOT || kind == APPLIES_NONBLOCKING ||
           kind == APPLIES_COUNTS || kind == APPLIES_ALGORITHM_OF;
}
