/* The context of one experiment: everything an operation's callbacks see (docs/kernel.md,
   "Adding an operation"). */
#ifndef MPIGUIDE_OP_CONTEXT_H
#define MPIGUIDE_OP_CONTEXT_H

#include <stddef.h>

#include <mpi.h>

#include "buffers.h"
#include "experiment.h"
#include "fail.h"
#include "pattern.h"
#include "topology/node.h"
#include "topology/topology.h"

/* Built per experiment by op_context_create. */
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
       op_context_free. */
    struct buffer_pool buffers;
    /* Filled by the op's setup through op_alloc_buffers (op_buffers.h). */
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
    /* What --verify expects, described by the op's setup (see op_verify.h). Data movement:
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
    /* Set by the --verify run of a forced algorithm: the op's one MPI call (ops_collective.c)
       leaves its error code in call_error instead of ending the job, so that a choice the
       library refuses is reported like wrong data. */
    int keep_call_error, call_error;
    struct mismatch mismatch;        /* set by the check callback */
};

/* The one MPI call of an op with an algorithm_of (op_table.h): a failure ends the job, as
   MPI_CHECK, unless the context keeps its code (keep_call_error). */
#define OP_CALL(ctx, call)                                                                     \
    do {                                                                                       \
        const int op_call_rc_ = (call);                                                        \
        if (op_call_rc_ != MPI_SUCCESS && (ctx)->keep_call_error)                              \
            (ctx)->call_error = op_call_rc_;                                                   \
        else if (op_call_rc_ != MPI_SUCCESS)                                                   \
            fail_mpi(#call, __FILE__, __LINE__, op_call_rc_);                                  \
    } while (0)

/* MPI type of a dtype: char is MPI_UNSIGNED_CHAR, so sums wrap modulo 256. */
MPI_Datatype dtype_mpi(enum dtype d);

/* Builds the context of an experiment on comm and runs the op's setup. */
void op_context_create(struct op_context *ctx, const struct experiment *exp, MPI_Comm comm,
                       MPI_Comm world, const struct topology *topo, const struct node_info *node);
/* Runs the op's free callback and releases the buffers and vectors of the context. */
void op_context_free(struct op_context *ctx);

#endif
