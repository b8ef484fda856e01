/* The operation table: every measurable operation is one row (docs/kernel.md, "Adding an operation"). */
#ifndef MPIGUIDE_OPERATIONS_H
#define MPIGUIDE_OPERATIONS_H

#include <stddef.h>
#include <stdio.h>

#include <mpi.h>

#include "buffers.h"
#include "experiment.h"
#include "node.h"
#include "pattern.h"
#include "topology.h"

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

/* Everything an operation sees. Built per experiment by operations_context_create. */
struct op_context {
    const struct experiment *exp;
    MPI_Comm comm;                   /* the experiment's communicator (topology or dup of world) */
    MPI_Comm world;                  /* MPI_COMM_WORLD's duplicate, for constructors */
    int rank, size;                  /* in comm */
    const struct topology *topo;     /* NULL for topology none */
    const struct neighbours *nb;     /* the topology's neighbours; NULL for topology none */
    const struct node_info *node;    /* node-local and leader communicators, node of each rank */
    const int *all_ranks;            /* 0 .. size-1: the peers of a global collective */
    MPI_Datatype dtype;              /* char is MPI_UNSIGNED_CHAR */
    size_t type_size;
    int count;                       /* elements per block: msg_size / type_size */
    size_t block;                    /* bytes per block: msg_size */
    int root;
    /* Every communication buffer (sendbuf, recvbuf, scratch) comes from this pool, freed by
       operations_context_free. */
    struct buffer_pool buffers;
    /* Filled by the op's setup through op_alloc_buffers. */
    unsigned char *sendbuf, *recvbuf;
    size_t send_bytes, recv_bytes;
    /* Equal-count vectors for the v/w variants: size entries for per_process ops,
       max(indegree, outdegree) for per_neighbor ops, none for the others. For an op with
       OP_COUNTS they hold the experiment's count pattern: counts[i] elements for rank i. */
    int *counts, *displs;   /* displs in elements */
    /* size entries of counts[rank] at i * counts[rank]: what each peer sends this rank in an
       alltoallv (rank i sends counts[j] elements to rank j). */
    int *own_counts, *own_displs;
    int *byte_displs;       /* MPI_Alltoallw */
    MPI_Aint *aint_displs;  /* MPI_Neighbor_alltoallw, bytes */
    MPI_Datatype *types;
    /* What --verify expects, described by the op's setup (see op_common.h). Data movement:
       send block i goes to send_to[i], receive block j comes from recv_from[j]; addressed:
       the pattern names the receiver too (alltoall-like), otherwise every receiver gets the same
       block (allgather-like). */
    const int *send_to, *recv_from;
    int nsend, nrecv;
    int addressed;
    /* Irregular blocks (op_expect_layout): element counts and displacements of the send and
       receive blocks; NULL: block i is `block` bytes at i * block. */
    const int *send_counts, *send_displs, *recv_counts, *recv_displs;
    /* Reductions: send_elems values per rank; the result (recv_bytes) is the sum over ranks
       result_lo .. result_hi of elements result_first .. (empty range: nothing to check). */
    size_t send_elems, result_first;
    int result_lo, result_hi;
    void *state;                     /* op-private, owned by the op's free callback */
    struct mismatch mismatch;        /* set by the check callback */
};

struct operation {
    const char *name;
    const char *family;
    enum msg_semantics msg_size;
    unsigned flags;
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
/* Writes the table as TSV (the contents of src/mpiguide/data/operations.tsv). */
void operations_list(FILE *out);
const char *msg_semantics_name(enum msg_semantics m);
int operation_has(const struct operation *op, unsigned flag);

/* MPI type of a dtype: char is MPI_UNSIGNED_CHAR, so sums wrap modulo 256. */
MPI_Datatype dtype_mpi(enum dtype d);

/* Builds the context of an experiment on comm and runs the op's setup. */
void operations_context_create(struct op_context *ctx, const struct experiment *exp, MPI_Comm comm,
                               MPI_Comm world, const struct topology *topo,
                               const struct node_info *node);
void operations_context_free(struct op_context *ctx);

#endif
