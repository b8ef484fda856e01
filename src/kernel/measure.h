/* The timing loop (docs/kernel.md, "The measurement"), and the --verify run before it. */
#ifndef MPIGUIDE_MEASURE_H
#define MPIGUIDE_MEASURE_H

#include "algorithm/algorithm.h"
#include "ops/op_context.h"
#include "sync/sync.h"

/* The repetitions of one experiment, gathered on rank 0 (NULL arrays elsewhere). */
struct measurement {
    int reps;              /* repetitions done, equal on every rank */
    int first_rep;         /* the number of the first: the experiment's reps in earlier chunks */
    double *time_s;        /* per repetition: the slowest rank's local duration */
    double *global_s;      /* synchronised clocks only (else NULL): latest end - earliest start */
    unsigned char *status; /* per repetition: the worst enum rep_status over the ranks */
    int invalid;           /* repetitions whose status is not REP_VALID */
    /* Over the repetition loop (synchronisation included), on rank 0: page faults, the most
       of one rank and the sum over the ranks; allocations mapped on their own after it, the
       most of one rank. */
    unsigned long long minor_faults_max, minor_faults_sum, major_faults_max, major_faults_sum;
    unsigned long long mmapped_allocations_max;
};

/* Runs up to the chunk's repetitions (all nrep with interleave 1), each between the
   experiment's sync begin/end (after its prepare and warmup_reps untimed warm-up repetitions),
   and gathers them on rank 0. With max_time > 0, rank 0 decides after each repetition
   (outside the timed region) whether the chunk's share of the budget (max_time x its
   repetitions / nrep) is spent, and broadcasts it. Page faults are counted from just before the
   first timed repetition to just after the last, and reduced after the loop. first_rep is 0:
   the caller numbers the chunk. An algorithm the experiment forces applies to the op's calls of
   the warm-up and timed repetitions, never to the loop's own collectives or the reductions
   after it (algorithm.h). */
void measure_run(struct op_context *ctx, struct sync_state *sync,
                 const struct algorithm_set *algorithms, struct measurement *m);
void measurement_free(struct measurement *m);

/* Runs the operation once on patterned data and checks what every rank received. Returns 0, or
   -1 when some rank received a wrong byte (each reports its first on stderr) or the library
   refused the call of a forced algorithm (each refusing rank says why). */
int measure_verify(struct op_context *ctx, MPI_Comm sync_comm,
                   const struct algorithm_set *algorithms);

#endif
