#include "measure.h"

#include <stdio.h>

#include "check.h"
#include "sync.h"

int measure_run(struct op_context *ctx, MPI_Comm sync_comm, double *dt)
{
    const struct experiment *exp = ctx->exp;
    const struct operation *op = &operation_table[exp->op];
    const struct sync_method *sync = sync_method_get(exp->sync);
    const int budgeted = exp->max_time > 0;
    int sync_rank;
    MPI_CHECK(MPI_Comm_rank(sync_comm, &sync_rank));
    const double start = MPI_Wtime();
    int done = 0;
    while (done < exp->nrep) {
        if (op->before_sync)
            op->before_sync(ctx);
        sync->begin(sync_comm);
        const double t0 = MPI_Wtime();
        op->run(ctx);
        dt[done] = MPI_Wtime() - t0;
        sync->end(sync_comm);
        if (op->after_run)
            op->after_run(ctx);
        done++;
        if (budgeted) {
            int stop = sync_rank == 0 && MPI_Wtime() - start >= exp->max_time;
            MPI_CHECK(MPI_Bcast(&stop, 1, MPI_INT, 0, sync_comm));
            if (stop)
                break;
        }
    }
    return done;
}

unsigned long long measure_verify(struct op_context *ctx, MPI_Comm sync_comm)
{
    const struct operation *op = &operation_table[ctx->exp->op];
    if (op->fill)
        op->fill(ctx);
    if (op->before_sync) {
        op->before_sync(ctx);
        MPI_CHECK(MPI_Barrier(sync_comm));
    }
    op->run(ctx);
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
    return total;
}
