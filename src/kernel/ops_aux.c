#include "ops_aux.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

struct aux *aux_new(struct op_context *ctx)
{
    struct aux *a = xcalloc(1, sizeof *a);
    a->comm = a->node = a->leaders = a->lanes = MPI_COMM_NULL;
    a->strided = MPI_DATATYPE_NULL;
    a->partner = MPI_PROC_NULL;
    a->request = MPI_REQUEST_NULL;
    ctx->state = a;
    return a;
}

static void free_comm(MPI_Comm *comm)
{
    if (*comm != MPI_COMM_NULL)
        MPI_CHECK(MPI_Comm_free(comm));
}

void aux_free(struct op_context *ctx)
{
    struct aux *a = ctx->state;
    if (!a)
        return;
    free_comm(&a->comm);
    free_comm(&a->node);
    free_comm(&a->leaders);
    free_comm(&a->lanes);
    if (a->strided != MPI_DATATYPE_NULL)
        MPI_CHECK(MPI_Type_free(&a->strided));
    /* A receive still posted by rsend's before_sync when max_time stopped the loop cannot
       happen (it is posted at the top of a repetition), but never leak one. */
    if (a->request != MPI_REQUEST_NULL) {
        MPI_CHECK(MPI_Cancel(&a->request));
        MPI_CHECK(MPI_Wait(&a->request, MPI_STATUS_IGNORE));
    }
    free(a->counts);
    free(a->displs);
    free(a->node_size);
    free(a->node_first);
    free(a->rank_node);
    free(a->rank_local);
    free(a->order);
    free(a->requests);
    free(a->statuses);
    free(a);
    ctx->state = NULL;
}

size_t aux_chunk(size_t n, int parts)
{
    return parts > 0 ? (n + (size_t)parts - 1) / (size_t)parts : n;
}

int aux_int(size_t n)
{
    if (n > (size_t)INT_MAX)
        fail_runtime("a padded buffer of %zu elements exceeds what an int count addresses", n);
    return (int)n;
}

static unsigned char *grown(struct buffer_pool *pool, unsigned char *old, size_t used,
                            size_t total)
{
    unsigned char *buf = buffer_alloc(pool, total);
    if (old && used)
        memcpy(buf, old, used);
    buffer_release(pool, old);
    return buf;
}

void aux_pad_buffers(struct op_context *ctx, size_t send_total, size_t recv_total)
{
    if (ctx->sendbuf == ctx->recvbuf) {
        ctx->sendbuf = ctx->recvbuf =
            grown(&ctx->buffers, ctx->recvbuf, ctx->recv_bytes, recv_total);
        return;
    }
    if (send_total > ctx->send_bytes)
        ctx->sendbuf = grown(&ctx->buffers, ctx->sendbuf, ctx->send_bytes, send_total);
    if (recv_total > ctx->recv_bytes)
        ctx->recvbuf = grown(&ctx->buffers, ctx->recvbuf, ctx->recv_bytes, recv_total);
}

void aux_scatter_parts(const struct op_context *ctx, unsigned char *buf, size_t chunk, int root,
                       MPI_Comm comm)
{
    int rank;
    MPI_CHECK(MPI_Comm_rank(comm, &rank));
    const int n = aux_int(chunk);
    if (rank == root)
        MPI_CHECK(MPI_Scatter(buf, n, ctx->dtype, MPI_IN_PLACE, n, ctx->dtype, root, comm));
    else
        MPI_CHECK(MPI_Scatter(NULL, n, ctx->dtype, buf + (size_t)rank * chunk * ctx->type_size,
                              n, ctx->dtype, root, comm));
}

void aux_allgather_parts(const struct op_context *ctx, unsigned char *buf, size_t chunk,
                         MPI_Comm comm)
{
    const int n = aux_int(chunk);
    MPI_CHECK(MPI_Allgather(MPI_IN_PLACE, n, ctx->dtype, buf, n, ctx->dtype, comm));
}

void aux_reduce_scatter_parts(const struct op_context *ctx, const unsigned char *send,
                              unsigned char *buf, size_t chunk, MPI_Comm comm)
{
    int rank;
    MPI_CHECK(MPI_Comm_rank(comm, &rank));
    MPI_CHECK(MPI_Reduce_scatter_block(send, buf + (size_t)rank * chunk * ctx->type_size,
                                       aux_int(chunk), ctx->dtype, MPI_SUM, comm));
}
