/* The operation table: every measurable operation is one row (docs/kernel.md, "Adding an
   operation"), with the callbacks of its family (ops_<family>.h). */
#ifndef MPIGUIDE_OP_TABLE_H
#define MPIGUIDE_OP_TABLE_H

#include <stddef.h>
#include <stdio.h>

struct op_context;

/* What msg_size counts (column msg_size of --list-ops). */
enum msg_semantics { MSG_NONE, MSG_PER_NEIGHBOR, MSG_PER_PROCESS, MSG_PER_PAIR, MSG_BUFFER };

enum op_flags {
    OP_ROOT = 1u << 0,              /* the root column applies */
    OP_NONBLOCKING = 1u << 1,       /* start, work, wait: the work column applies */
    OP_TOPOLOGY_REQUIRED = 1u << 2, /* topology none is rejected */
    OP_REDUCTION = 1u << 3,         /* MPI_SUM over dtype */
    OP_NODE_VECTORS = 1u << 4,      /* a node leader holds the whole per-process vector of each
                                       rank of its node: validation bounds node size x blocks */
    OP_EQUAL_NODES = 1u << 5,       /* every node must have the same number of ranks (lane) */
    OP_COUNTS = 1u << 6,            /* a v-operation: the counts column (per-process counts)
                                       applies */
};

struct operation {
    const char *name;
    const char *family;
    enum msg_semantics msg_size;
    unsigned flags;
    /* The MPI collective the op's measured call is, lower case without MPI_ ("allreduce"),
       when the op is exactly one call of that blocking collective on the experiment's
       communicator: the library's algorithm for it can be chosen (column algorithm). NULL
       for every other op. */
    const char *algorithm_of;
    /* Allocates buffers/state for one experiment (untimed). NULL: no buffers. */
    void (*setup)(struct op_context *ctx);
    /* The timed operation, one repetition. */
    void (*run)(struct op_context *ctx);
    /* Optional, untimed, after every repetition (e.g. free what run created). */
    void (*after_run)(struct op_context *ctx);
    /* --verify: fill the send buffers with the pattern and the receive buffers with its
       complement; after one run, check returns the number of wrong bytes on this rank.
       NULL fill/check: nothing is received (empty, barrier, topo_create). */
    void (*fill)(struct op_context *ctx);
    size_t (*check)(struct op_context *ctx);
    /* Optional: frees ctx->state. */
    void (*free)(struct op_context *ctx);
    /* Optional, untimed: runs before the opening synchronisation of every repetition (and
       before the --verify run, which then synchronises), e.g. to post the receive that
       MPI_Rsend requires to be posted before the send starts. */
    void (*before_sync)(struct op_context *ctx);
};

extern const struct operation operation_table[];
extern const size_t operation_count;

/* Index of the named operation, -1 if unknown. */
int operation_find(const char *name);
/* Writes the table as TSV (the contents of src/mpiguide/data/operations.tsv), flags as 0/1
   columns. */
void operations_list(FILE *out);
const char *msg_semantics_name(enum msg_semantics m);
/* The op's algorithm_of, "none" when it has none (column algorithm_of of --list-ops). */
const char *operation_algorithm_of(const struct operation *op);
int operation_has(const struct operation *op, unsigned flag);

#endif
