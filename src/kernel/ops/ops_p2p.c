/* Point-to-point (Manwade & Kulkarni, eq. 3-7): ranks 2i and 2i+1 of the experiment's
   communicator form a pair; msg_size bytes per message. One-way ops send from the even to the
   odd rank; sendrecv, isend_recv_wait and send_irecv_wait exchange in both directions. With an
   odd rank count the last rank has no partner and stays idle (it still synchronises). */
#include "ops/ops_p2p.h"

#include <stdlib.h>

#include "check.h"
#include "ops/op_buffers.h"
#include "ops/op_verify.h"

enum { P2P_TAG = 815 };

struct p2p_state {
    int partner;         /* the other rank of the pair; MPI_PROC_NULL when idle */
    MPI_Request request; /* rsend: the receive posted before the synchronisation */
};

static int partner_of(const struct op_context *ctx)
{
    int partner = ctx->rank ^ 1;
    return partner < ctx->size ? partner : MPI_PROC_NULL;
}

static int is_sender(const struct op_context *ctx)
{
    return ctx->rank % 2 == 0;
}

static struct p2p_state *p2p_state_new(struct op_context *ctx)
{
    struct p2p_state *pair = xcalloc(1, sizeof *pair);
    pair->partner = partner_of(ctx);
    pair->request = MPI_REQUEST_NULL;
    ctx->state = pair;
    return pair;
}

void p2p_free(struct op_context *ctx)
{
    struct p2p_state *pair = ctx->state;
    if (!pair)
        return;
    /* A receive still posted by rsend's before_sync when max_time stopped the loop cannot
       happen (it is posted at the top of a repetition), but never leak one. */
    if (pair->request != MPI_REQUEST_NULL) {
        MPI_CHECK(MPI_Cancel(&pair->request));
        MPI_CHECK(MPI_Wait(&pair->request, MPI_STATUS_IGNORE));
    }
    free(pair);
    ctx->state = NULL;
}

/* The even rank sends one block, the odd rank receives it. */
void p2p_oneway_setup(struct op_context *ctx)
{
    op_alloc_buffers(ctx, ctx->block, ctx->block);
    struct p2p_state *pair = p2p_state_new(ctx);
    if (pair->partner == MPI_PROC_NULL)
        return;
    if (is_sender(ctx))
        op_expect_blocks(ctx, &pair->partner, 1, NULL, 0, 1);
    else
        op_expect_blocks(ctx, NULL, 0, &pair->partner, 1, 1);
}

/* Both ranks of a pair send one block and receive one. */
void p2p_exchange_setup(struct op_context *ctx)
{
    op_alloc_buffers(ctx, ctx->block, ctx->block);
    struct p2p_state *pair = p2p_state_new(ctx);
    if (pair->partner != MPI_PROC_NULL)
        op_expect_blocks(ctx, &pair->partner, 1, &pair->partner, 1, 1);
}

static void recv_block(struct op_context *ctx)
{
    const struct p2p_state *pair = ctx->state;
    MPI_CHECK(MPI_Recv(ctx->recvbuf, ctx->count, ctx->dtype, pair->partner, P2P_TAG, ctx->comm,
                       MPI_STATUS_IGNORE));
}

/* The one-way ops differ only in how the even rank sends. */
typedef int (*blocking_send)(const void *, int, MPI_Datatype, int, int, MPI_Comm);

static void oneway(struct op_context *ctx, blocking_send send)
{
    const struct p2p_state *pair = ctx->state;
    if (pair->partner == MPI_PROC_NULL)
        return;
    if (is_sender(ctx))
        MPI_CHECK(send(ctx->sendbuf, ctx->count, ctx->dtype, pair->partner, P2P_TAG, ctx->comm));
    else
        recv_block(ctx);
}

void send_run(struct op_context *ctx)
{
    oneway(ctx, MPI_Send);
}

void ssend_run(struct op_context *ctx)
{
    oneway(ctx, MPI_Ssend);
}

/* MPI_Rsend is correct only if the receive is already posted: the odd rank posts it before the
   opening synchronisation, which the even rank leaves only after the odd rank entered it. */
void rsend_before_sync(struct op_context *ctx)
{
    struct p2p_state *pair = ctx->state;
    if (pair->partner != MPI_PROC_NULL && !is_sender(ctx))
        MPI_CHECK(MPI_Irecv(ctx->recvbuf, ctx->count, ctx->dtype, pair->partner, P2P_TAG,
                            ctx->comm, &pair->request));
}

void rsend_run(struct op_context *ctx)
{
    struct p2p_state *pair = ctx->state;
    if (pair->partner == MPI_PROC_NULL)
        return;
    if (is_sender(ctx))
        MPI_CHECK(MPI_Rsend(ctx->sendbuf, ctx->count, ctx->dtype, pair->partner, P2P_TAG,
                            ctx->comm));
    else
        MPI_CHECK(MPI_Wait(&pair->request, MPI_STATUS_IGNORE));
}

void isend_wait_run(struct op_context *ctx)
{
    const struct p2p_state *pair = ctx->state;
    if (pair->partner == MPI_PROC_NULL)
        return;
    if (is_sender(ctx)) {
        MPI_Request request;
        MPI_CHECK(MPI_Isend(ctx->sendbuf, ctx->count, ctx->dtype, pair->partner, P2P_TAG,
                            ctx->comm, &request));
        MPI_CHECK(MPI_Wait(&request, MPI_STATUS_IGNORE));
    } else {
        recv_block(ctx);
    }
}

/* MPI_PROC_NULL as partner makes every exchange below a no-op for the idle rank. */
void sendrecv_run(struct op_context *ctx)
{
    const struct p2p_state *pair = ctx->state;
    MPI_CHECK(MPI_Sendrecv(ctx->sendbuf, ctx->count, ctx->dtype, pair->partner, P2P_TAG,
                           ctx->recvbuf, ctx->count, ctx->dtype, pair->partner, P2P_TAG, ctx->comm,
                           MPI_STATUS_IGNORE));
}

void isend_recv_wait_run(struct op_context *ctx)
{
    const struct p2p_state *pair = ctx->state;
    MPI_Request request;
    MPI_CHECK(MPI_Isend(ctx->sendbuf, ctx->count, ctx->dtype, pair->partner, P2P_TAG, ctx->comm,
                        &request));
    recv_block(ctx);
    MPI_CHECK(MPI_Wait(&request, MPI_STATUS_IGNORE));
}

/* The receive is posted before the send: both ranks of a pair send, and a message too large to
   buffer (rendezvous) completes only once its receive is posted. */
void send_irecv_wait_run(struct op_context *ctx)
{
    const struct p2p_state *pair = ctx->state;
    MPI_Request request;
    MPI_CHECK(MPI_Irecv(ctx->recvbuf, ctx->count, ctx->dtype, pair->partner, P2P_TAG, ctx->comm,
                        &request));
    MPI_CHECK(MPI_Send(ctx->sendbuf, ctx->count, ctx->dtype, pair->partner, P2P_TAG, ctx->comm));
    MPI_CHECK(MPI_Wait(&request, MPI_STATUS_IGNORE));
}
