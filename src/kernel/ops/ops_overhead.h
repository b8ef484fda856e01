/* The loop's own overhead (empty) and the cost of building the topology (topo_create). */
#ifndef MPIGUIDE_OPS_OVERHEAD_H
#define MPIGUIDE_OPS_OVERHEAD_H

#include "ops/op_context.h"

void empty_run(struct op_context *ctx);
void topo_create_run(struct op_context *ctx);
void topo_create_after_run(struct op_context *ctx);
void topo_create_setup(struct op_context *ctx);
void topo_create_free(struct op_context *ctx);

#endif
