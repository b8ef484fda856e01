/* halo: the hand-written exchange that neighbourhood collectives replace. MPI_Irecv from every
   source and MPI_Isend to every destination of the topology, then MPI_Waitall; msg_size bytes
   per neighbour, buffers and --verify expectations those of neighbor_alltoall. MPI_PROC_NULL
   neighbours (cart, across a non-periodic border) are skipped, so their receive blocks stay
   untouched, as with the neighbourhood collectives. */
#include "ops/ops_halo.h"

#include <stdlib.h>

#include "check.h"
#include "ops/ops_neighbor.h"

/* Tags reproduce the neighbourhood collectives' matching when a peer is a neighbour twice
   (periodic dimensions of size 1 or 2, small graphs). cart: block 2d goes to the - neighbour
   and block 2d+1 to the + neighbour; the block received from the - neighbour is the one it
   sent in its + direction, so receive block j matches send tag j^1. Graphs: one tag, and MPI's
   non-overtaking order pairs the k-th edge to a peer with the k-th edge from it. */
static int send_tag(const struct op_context *ctx, int i)
{
    return ctx->topo->kind == TOPO_CART ? i : 0;
}

static int recv_tag(const struct op_context *ctx, int j)
{
    return ctx->topo->kind == TOPO_CART ? j ^ 1 : 0;
}

/* A request and a status for every receive and send of a repetition. */
struct halo_state {
    MPI_Request *requests;
    MPI_Status *statuses; /* MPICH's headers make GCC reject MPI_STATUSES_IGNORE */
};

void halo_setup(struct op_context *ctx)
{
    neighbor_exchange_setup(ctx);
    struct halo_state *h = xcalloc(1, sizeof *h);
    ctx->state = h;
    const size_t n = (size_t)(ctx->nb->indegree + ctx->nb->outdegree) + 1;
    h->requests = xcalloc(n, sizeof *h->requests);
    h->statuses = xcalloc(n, sizeof *h->statuses);
}

void halo_free(struct op_context *ctx)
{
    struct halo_state *h = ctx->state;
    if (!h)
        return;
    free(h->requests);
    free(h->statuses);
    free(h);
    ctx->state = NULL;
}

void halo_run(struct op_context *ctx)
{
    const struct neighbours *nb = ctx->nb;
    struct halo_state *h = ctx->state;
    MPI_Request *requests = h->requests;
    int n = 0;
    for (int j = 0; j < nb->indegree; j++)
        if (nb->sources[j] != MPI_PROC_NULL)
            MPI_CHECK(MPI_Irecv(ctx->recvbuf + (size_t)j * ctx->block, ctx->count, ctx->dtype,
                                nb->sources[j], recv_tag(ctx, j), ctx->comm, &requests[n++]));
    for (int i = 0; i < nb->outdegree; i++)
        if (nb->destinations[i] != MPI_PROC_NULL)
            MPI_CHECK(MPI_Isend(ctx->sendbuf + (size_t)i * ctx->block, ctx->count, ctx->dtype,
                                nb->destinations[i], send_tag(ctx, i), ctx->comm,
                                &requests[n++]));
    MPI_CHECK(MPI_Waitall(n, requests, h->statuses));
}
