/* The loop's own overhead (empty) and the cost of building the topology (topo_create). */
#include <stdlib.h>

#include "ops/ops_overhead.h"

#include "check.h"

void empty_run(struct op_context *ctx)
{
    (void)ctx;
}

void topo_create_setup(struct op_context *ctx)
{
    MPI_Comm *created = xmalloc(sizeof *created);
    *created = MPI_COMM_NULL;
    ctx->state = created;
}

/* Times the constructor alone: the neighbour lists were planned when the experiment's own
   topology was built. */
void topo_create_run(struct op_context *ctx)
{
    topology_construct(ctx->topo, ctx->world, ctx->state);
}

void topo_create_after_run(struct op_context *ctx)
{
    MPI_CHECK(MPI_Comm_free((MPI_Comm *)ctx->state));
}

void topo_create_free(struct op_context *ctx)
{
    free(ctx->state);
}
