#include "ops/op_split.h"

#include "check.h"
#include "ops/op_buffers.h"

size_t split_chunk(size_t n, int parts)
{
    return parts > 0 ? (n + (size_t)parts - 1) / (size_t)parts : n;
}

void split_scatter(const struct op_context *ctx, unsigned char *buf, size_t chunk, int root,
                   MPI_Comm comm)
{
    int rank;
    MPI_CHECK(MPI_Comm_rank(comm, &rank));
    const int n = op_int_count(chunk);
    if (rank == root)
        MPI_CHECK(MPI_Scatter(buf, n, ctx->dtype, MPI_IN_PLACE, n, ctx->dtype, root, comm));
    else
        MPI_CHECK(MPI_Scatter(NULL, n, ctx->dtype, buf + (size_t)rank * chunk * ctx->type_size,
                              n, ctx->dtype, root, comm));
}

void split_allgather(const struct op_context *ctx, unsigned char *buf, size_t chunk,
                     MPI_Comm comm)
{
    const int n = op_int_count(chunk);
    MPI_CHECK(MPI_Allgather(MPI_IN_PLACE, n, ctx->dtype, buf, n, ctx->dtype, comm));
}

void split_reduce_scatter(const struct op_context *ctx, const unsigned char *send,
                          unsigned char *buf, size_t chunk, MPI_Comm comm)
{
    int rank;
    MPI_CHECK(MPI_Comm_rank(comm, &rank));
    MPI_CHECK(MPI_Reduce_scatter_block(send, buf + (size_t)rank * chunk * ctx->type_size,
                                       op_int_count(chunk), ctx->dtype, MPI_SUM, comm));
}
