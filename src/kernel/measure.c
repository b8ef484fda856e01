#include "measure.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algorithm/algorithm.h"
#include "check.h"
#include "heap.h"
#include "ops/op_table.h"

/* Rank 0 gets the reduction of n values of a rank-local array (NULL on the other ranks). */
static void *reduce_to_root(const void *local, int n, MPI_Datatype type, size_t size, MPI_Op op,
                            MPI_Comm comm, int rank)
{
    void *result = rank == 0 ? xmalloc((size_t)(n ? n : 1) * size) : NULL;
    MPI_CHECK(MPI_Reduce(local, result, n, type, op, 0, comm));
    return result;
}

/* Repetitions outside the measurement: whatever they time or report is dropped. */
static void warm_up(struct op_context *ctx, const struct operation *op,
                    const struct sync_method *sync, struct sync_state *sync_state, int count,
                    const struct algorithm_set *algorithms, int per_call)
{
    for (int i = 0; i < count; i++) {
        if (op->before_sync)
            op->before_sync(ctx);
        (void)sync->begin(sync_state);
        if (per_call)
            algorithm_apply(algorithms, ctx->exp);
        op->run(ctx);
        if (per_call)
            algorithm_restore(algorithms, ctx->exp);
        (void)sync->end(sync_state);
        if (op->after_run)
            op->after_run(ctx);
    }
}

void measure_run(struct op_context *ctx, struct sync_state *sync_state,
                 const struct algorithm_set *algorithms, struct measurement *m)
{
    const struct experiment *exp = ctx->exp;
    const struct operation *op = &operation_table[exp->op];
    const struct sync_method *sync = sync_method_get(exp->sync);
    /* A chunk's share of the budget is its share of the repetitions. */
    const int reps = chunk_reps(exp);
    const double budget = exp->max_time * ((double)reps / exp->nrep); /* exact for one */
    const int budgeted = budget > 0;
    /* A forced algorithm applies to the op's calls only: when the loop calls collectives itself
       (the synchronisation, the budget's MPI_Bcast), it is applied around each call of the op,
       outside the timed window, and otherwise once around all the repetitions (algorithm.h).
       A library that keeps it per communicator needs neither. */
    const int per_call = algorithm_applies(exp) && (budgeted || sync->calls_collectives);
    const MPI_Comm sync_comm = sync_state->comm;
    const int sync_rank = sync_state->rank;
    double *dt = xmalloc((size_t)reps * sizeof *dt);
    const int clocks = sync->clock != CLOCK_NONE;
    double *t_start = clocks ? xmalloc((size_t)reps * sizeof *t_start) : NULL;
    double *t_end = clocks ? xmalloc((size_t)reps * sizeof *t_end) : NULL;
    unsigned char *status = xmalloc((size_t)reps);
    /* Touched now, so that the loop's first writes to them are not counted as its faults. */
    memset(dt, 0, (size_t)reps * sizeof *dt);
    memset(status, 0, (size_t)reps);
    if (t_start) {
        memset(t_start, 0, (size_t)reps * sizeof *t_start);
        memset(t_end, 0, (size_t)reps * sizeof *t_end);
    }
    if (sync->prepare)
        sync->prepare(sync_state, sync->clock);
    /* Before the page-fault counts and the budget's clock: what the library does on its first
       calls (pages it touches, connections it opens) is paid here, not by the timed
       repetitions. Without warmup and interleave it runs none: measured as it always was. */
    if (!per_call)
        algorithm_apply(algorithms, exp);
    warm_up(ctx, op, sync, sync_state, warmup_reps(exp), algorithms, per_call);
    struct heap_counters before, after;
    heap_counters_read(&before);
    const double start = MPI_Wtime();
    int done = 0;
    while (done < reps) {
        if (op->before_sync)
            op->before_sync(ctx);
        enum rep_status began = sync->begin(sync_state);
        if (per_call)
            algorithm_apply(algorithms, exp);
        const double t0 = MPI_Wtime();
        op->run(ctx);
        const double t1 = MPI_Wtime();
        if (per_call)
            algorithm_restore(algorithms, exp);
        enum rep_status ended = sync->end(sync_state);
        dt[done] = t1 - t0;
        if (t_start) {
            t_start[done] = clock_global(&sync_state->clock, t0);
            t_end[done] = clock_global(&sync_state->clock, t1);
        }
        status[done] = (unsigned char)(began != REP_VALID ? began : ended);
        if (op->after_run)
            op->after_run(ctx);
        done++;
        if (budgeted) {
            int stop = sync_rank == 0 && MPI_Wtime() - start >= budget;
            MPI_CHECK(MPI_Bcast(&stop, 1, MPI_INT, 0, sync_comm));
            if (stop)
                break;
        }
    }
    heap_counters_read(&after);
    /* Before the reductions of the results: they are the library's choice again. */
    if (!per_call)
        algorithm_restore(algorithms, exp);
    memset(m, 0, sizeof *m);
    m->reps = done;
    /* Reduced after the loop, never inside it: the counts cost no time that is measured. */
    unsigned long long local[3] = {after.minor_faults - before.minor_faults,
                                   after.major_faults - before.major_faults,
                                   after.mmapped_allocations};
    unsigned long long most[3] = {0, 0, 0}, total[2] = {0, 0};
    MPI_CHECK(MPI_Reduce(local, most, 3, MPI_UNSIGNED_LONG_LONG, MPI_MAX, 0, sync_comm));
    MPI_CHECK(MPI_Reduce(local, total, 2, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, sync_comm));
    m->minor_faults_max = most[0];
    m->major_faults_max = most[1];
    m->mmapped_allocations_max = most[2];
    m->minor_faults_sum = total[0];
    m->major_faults_sum = total[1];
    m->time_s = reduce_to_root(dt, done, MPI_DOUBLE, sizeof(double), MPI_MAX, sync_comm,
                               sync_rank);
    m->status = reduce_to_root(status, done, MPI_UNSIGNED_CHAR, 1, MPI_MAX, sync_comm,
                               sync_rank);
    if (t_start) {
        double *earliest = reduce_to_root(t_start, done, MPI_DOUBLE, sizeof(double), MPI_MIN,
                                          sync_comm, sync_rank);
        double *latest = reduce_to_root(t_end, done, MPI_DOUBLE, sizeof(double), MPI_MAX,
                                        sync_comm, sync_rank);
        if (sync_rank == 0) {
            for (int i = 0; i < done; i++)
                latest[i] -= earliest[i];
            m->global_s = latest;
        }
        free(earliest);
    }
    if (sync_rank == 0)
        for (int i = 0; i < done; i++)
            m->invalid += m->status[i] != REP_VALID;
    free(dt);
    free(t_start);
    free(t_end);
    free(status);
}

void measurement_free(struct measurement *m)
{
    free(m->time_s);
    free(m->global_s);
    free(m->status);
    memset(m, 0, sizeof *m);
}

/* After the --verify run of a forced algorithm: whether its call failed on some rank (each
   failing rank says why). Collective over sync_comm. */
static int forced_call_failed(const struct op_context *ctx, MPI_Comm sync_comm)
{
    const struct experiment *exp = ctx->exp;
    const int failed = ctx->call_error != MPI_SUCCESS;
    int any = 0;
    if (failed) {
        char text[MPI_MAX_ERROR_STRING];
        int length = 0, world_rank;
        if (MPI_Error_string(ctx->call_error, text, &length) != MPI_SUCCESS)
            snprintf(text, sizeof text, "MPI error code %d", ctx->call_error);
        MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &world_rank));
        fprintf(stderr,
                "mpiguide-bench: --verify failed: exp_id %lld (line %lld) op %s: algorithm '%s' "
                "of %s forced: rank %d: the library refused the call: %s\n",
                (long long)exp->exp_id, (long long)exp->line, operation_table[exp->op].name,
                exp->algorithm, algorithm_forced(exp), world_rank, text);
    }
    MPI_CHECK(MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, sync_comm));
    return any;
}

int measure_verify(struct op_context *ctx, MPI_Comm sync_comm,
                   const struct algorithm_set *algorithms)
{
    const struct operation *op = &operation_table[ctx->exp->op];
    if (op->fill)
        op->fill(ctx);
    if (op->before_sync) {
        op->before_sync(ctx);
        MPI_CHECK(MPI_Barrier(sync_comm));
    }
    const int forced = algorithm_forced(ctx->exp) != NULL;
    ctx->keep_call_error = forced;
    ctx->call_error = MPI_SUCCESS;
    algorithm_apply(algorithms, ctx->exp);
    op->run(ctx);
    algorithm_restore(algorithms, ctx->exp);
    ctx->keep_call_error = 0;
    if (forced && forced_call_failed(ctx, sync_comm))
        return -1;
    if (op->after_run)
        op->after_run(ctx);
    unsigned long long wrong = op->check ? op->check(ctx) : 0, total = 0;
    if (wrong) {
        const struct mismatch *m = &ctx->mismatch;
        int world_rank;
        MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &world_rank));
        fprintf(stderr,
                "mpiguide-bench: --verify failed: exp_id %lld (line %lld) op %s: rank %d: %llu "
                "wrong bytes, the first at byte %zu of the receive buffer",
                (long long)ctx->exp->exp_id, (long long)ctx->exp->line, op->name, world_rank,
                wrong, m->offset);
        if (m->sender >= 0)
            fprintf(stderr, " (data from rank %d)", m->sender);
        fprintf(stderr, ": expected 0x%02x, got 0x%02x\n", m->expected, m->got);
    }
    MPI_CHECK(MPI_Allreduce(&wrong, &total, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, sync_comm));
    return total == 0 ? 0 : -1;
}
