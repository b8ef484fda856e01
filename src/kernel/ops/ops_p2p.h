/* Point-to-point: rank pairs (2i, 2i+1), msg_size bytes per message. */
#ifndef MPIGUIDE_OPS_P2P_H
#define MPIGUIDE_OPS_P2P_H

#include "ops/op_context.h"

void p2p_oneway_setup(struct op_context *ctx);
void p2p_exchange_setup(struct op_context *ctx);
void send_run(struct op_context *ctx);
void ssend_run(struct op_context *ctx);
void rsend_before_sync(struct op_context *ctx);
void rsend_run(struct op_context *ctx);
void isend_wait_run(struct op_context *ctx);
void sendrecv_run(struct op_context *ctx);
void isend_recv_wait_run(struct op_context *ctx);
void send_irecv_wait_run(struct op_context *ctx);
/* Frees the family's private state (ctx->state). */
void p2p_free(struct op_context *ctx);

#endif
