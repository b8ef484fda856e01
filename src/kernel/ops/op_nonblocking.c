#include "ops/op_nonblocking.h"

#include "check.h"
#include "work.h"

void op_work_and_wait(struct op_context *ctx, MPI_Request *request)
{
    work_spin(ctx->exp->work);
    MPI_CHECK(MPI_Wait(request, MPI_STATUS_IGNORE));
}
