/* The context of an experiment: communicators, datatype, block sizes and the equal-count or
   count-pattern vectors every operation sees, then the op's own setup. */
#include "ops/op_context.h"

#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "ops/op_table.h"

MPI_Datatype dtype_mpi(enum dtype d)
{
    switch (d) {
    case DTYPE_CHAR:
        return MPI_UNSIGNED_CHAR;
    case DTYPE_INT:
        return MPI_INT;
    case DTYPE_FLOAT:
        return MPI_FLOAT;
    default:
        return MPI_DOUBLE;
    }
}

/* ramp: the first k ranks hold floor(count k (k + 1) / (size + 1)) elements together, so rank i
   holds about 2 (i + 1) / (size + 1) equal counts and all hold size * count, as with equal
   counts. q, r split k (k + 1) by size + 1 so that nothing overflows 64 bits. */
static void counts_ramp(int *counts, int *displs, int size, int count)
{
    long long before = 0;
    for (int k = 1; k <= size; k++) {
        const long long pairs = (long long)k * (k + 1), q = pairs / (size + 1),
                        r = pairs % (size + 1);
        const long long upto = count * q + count * r / (size + 1);
        counts[k - 1] = (int)(upto - before);
        displs[k - 1] = (int)before;
        before = upto;
    }
}

void op_context_create(struct op_context *ctx, const struct experiment *exp, MPI_Comm comm,
                       MPI_Comm world, const struct topology *topo, const struct node_info *node)
{
    memset(ctx, 0, sizeof *ctx);
    ctx->exp = exp;
    ctx->comm = comm;
    ctx->world = world;
    MPI_CHECK(MPI_Comm_rank(comm, &ctx->rank));
    MPI_CHECK(MPI_Comm_size(comm, &ctx->size));
    ctx->topo = topo;
    ctx->nb = topo ? &topo->nb : NULL;
    ctx->node = node;
    ctx->dtype = dtype_mpi(exp->dtype);
    ctx->type_size = dtype_size(exp->dtype);
    ctx->block = (size_t)exp->msg_size;
    ctx->count = (int)(ctx->block / ctx->type_size);
    ctx->root = exp->root;

    int *all_ranks = xmalloc((size_t)ctx->size * sizeof *all_ranks);
    for (int i = 0; i < ctx->size; i++)
        all_ranks[i] = i;
    ctx->all_ranks = all_ranks;

    /* One entry per block the op's buffers hold: validation keeps exactly those blocks below
       INT_MAX bytes, so every displacement fits an int. Entries past them (all ranks for a
       per-neighbour op, or a whole buffer of msg_size per rank) would overflow. */
    const struct operation *op = &operation_table[exp->op];
    int blocks = 0;
    if (op->msg_size == MSG_PER_PROCESS)
        blocks = ctx->size;
    else if (op->msg_size == MSG_PER_NEIGHBOR && ctx->nb)
        blocks = ctx->nb->indegree > ctx->nb->outdegree ? ctx->nb->indegree
                                                         : ctx->nb->outdegree;
    ctx->counts = xmalloc((size_t)blocks * sizeof *ctx->counts);
    ctx->displs = xmalloc((size_t)blocks * sizeof *ctx->displs);
    ctx->byte_displs = xmalloc((size_t)blocks * sizeof *ctx->byte_displs);
    ctx->aint_displs = xmalloc((size_t)blocks * sizeof *ctx->aint_displs);
    ctx->types = xmalloc((size_t)blocks * sizeof *ctx->types);
    for (int i = 0; i < blocks; i++) {
        ctx->counts[i] = ctx->count;
        ctx->displs[i] = i * ctx->count;
        ctx->byte_displs[i] = (int)((size_t)i * ctx->block);
        ctx->aint_displs[i] = (MPI_Aint)((size_t)i * ctx->block);
        ctx->types[i] = ctx->dtype;
    }
    if (exp->counts == COUNTS_RAMP)
        counts_ramp(ctx->counts, ctx->displs, ctx->size, ctx->count);
    ctx->own_counts = xmalloc((size_t)blocks * sizeof *ctx->own_counts);
    ctx->own_displs = xmalloc((size_t)blocks * sizeof *ctx->own_displs);
    for (int i = 0; i < blocks; i++) {
        const int own = op->msg_size == MSG_PER_PROCESS ? ctx->counts[ctx->rank] : ctx->count;
        ctx->own_counts[i] = own;
        ctx->own_displs[i] = i * own;
    }

    buffer_pool_init(&ctx->buffers, (size_t)exp->buffer_offset);
    if (op->setup)
        op->setup(ctx);
}

void op_context_free(struct op_context *ctx)
{
    const struct operation *op = &operation_table[ctx->exp->op];
    if (op->free)
        op->free(ctx);
    buffer_pool_free(&ctx->buffers);
    free((void *)ctx->all_ranks);
    free(ctx->counts);
    free(ctx->displs);
    free(ctx->own_counts);
    free(ctx->own_displs);
    free(ctx->byte_displs);
    free(ctx->aint_displs);
    free(ctx->types);
}
