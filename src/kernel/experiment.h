/* One row of INPUT.csv after validation: plain data, broadcast from rank 0 as bytes. */
#ifndef MPIGUIDE_EXPERIMENT_H
#define MPIGUIDE_EXPERIMENT_H

#include <stddef.h>
#include <stdint.h>

#define KERNEL_VERSION "0.1.0"

/* The longest name of a library's algorithm an input cell may hold (bytes). */
#define ALGORITHM_NAME_MAX 63

enum dtype { DTYPE_CHAR, DTYPE_INT, DTYPE_FLOAT, DTYPE_DOUBLE, DTYPE_COUNT };
enum topology_kind { TOPO_NONE, TOPO_CART, TOPO_VONNEUMANN, TOPO_MOORE, TOPO_FULL, TOPO_COUNT };
enum ordering { ORDER_NONE, ORDER_FMAJ, ORDER_LMAJ, ORDER_RAND, ORDER_LINEAR, ORDER_COUNT };
enum constructor {
    CONSTRUCTOR_NONE,
    CONSTRUCTOR_CART,
    CONSTRUCTOR_GRAPH,
    CONSTRUCTOR_GRAPH_ADJ,
    CONSTRUCTOR_NODECART,
    CONSTRUCTOR_NODECART_GREEDY,
    CONSTRUCTOR_COUNT
};
enum sync_kind {
    SYNC_DISSEMINATION,
    SYNC_BARRIER,
    SYNC_HCA3_ROUNDTIME,
    SYNC_JK_ROUNDTIME,
    SYNC_COUNT
};
/* Per-process counts of the v-operations (docs/kernel.md, "Count patterns"): equal, or ramp
   (rank i's count proportional to i + 1, with the same total as equal). */
enum counts_pattern { COUNTS_EQUAL, COUNTS_RAMP, COUNTS_PATTERN_COUNT };

/* Parameters that do not apply hold their neutral value (0, *_NONE). */
struct experiment {
    int64_t exp_id;
    int64_t line; /* line of INPUT.csv, for messages */
    int op;       /* index into the operation table */
    int64_t msg_size;
    enum dtype dtype;
    int nrep;
    int64_t work;
    enum topology_kind topology;
    int ndim, nfin, radius;
    enum ordering ordering;
    enum constructor constructor;
    int reorder;
    int root;
    enum sync_kind sync;
    double max_time;
    int64_t buffer_offset; /* bytes from a page start to every communication buffer */
    enum counts_pattern counts;
    /* The experiment's repetitions are split into `interleave` chunks, one row of INPUT.csv each
       (docs/kernel.md, "Interleaved repetitions"); this row measures chunk `chunk`. */
    int interleave, chunk;
    /* Untimed repetitions before the timed ones (docs/kernel.md, "The measurement"). */
    int warmup;
    /* The library's own algorithm for the op's collective (docs/kernel.md, "Algorithms per
       experiment"): its name and the value of its MPI_T control variable; "" and 0: the
       library chooses. */
    char algorithm[ALGORITHM_NAME_MAX + 1];
    int algorithm_value;
    int group; /* the experiment's index among the input's distinct exp_ids (set by validation) */
};

/* Repetitions of the experiment's chunk: nrep split into interleave chunks whose sizes differ by
   at most one, the larger first. */
static inline int chunk_reps(const struct experiment *exp)
{
    return exp->nrep / exp->interleave + (exp->chunk < exp->nrep % exp->interleave);
}

/* Untimed repetitions before the chunk's timed ones: the experiment's warmup, and at least one
   for a chunk of an interleaved experiment, which follows other experiments' chunks (the
   caches, connections and temporaries they displaced come back before its first timed one). */
static inline int warmup_reps(const struct experiment *exp)
{
    return exp->interleave > 1 && exp->warmup == 0 ? 1 : exp->warmup;
}

/* Bytes of one element of a dtype (char is one byte). */
static inline size_t dtype_size(enum dtype d)
{
    static const size_t sizes[DTYPE_COUNT] = {1, sizeof(int), sizeof(float), sizeof(double)};
    return sizes[d];
}

#endif
