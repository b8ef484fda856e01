/* Nonblocking operations under a rule, from the call that starts them to the completion call
 * (Wait/Test family) that completes them, where their delay is paid. */
#ifndef MPIGUIDE_INJECT_PENDING_H
#define MPIGUIDE_INJECT_PENDING_H

#include <mpi.h>
#include <stdint.h>

#include "spec.h"

/* Records an operation just started; `elapsed_ns` is the time its start call took. */
void pending_add(MPI_Request request, const struct inject_rule *rule, int64_t elapsed_ns);

/* Before a completion call over requests[0..count): marks the recorded operations among them as
 * held by this call. Returns a claim for pending_settle, 0 if none of them is recorded. */
uint64_t pending_claim(int count, const MPI_Request requests[]);

/* After the completion call, which took `elapsed_ns`: charges that time to every operation held by
 * `claim`; those the call completed (their handle is now MPI_REQUEST_NULL) are forgotten and their
 * delay is returned, summed. */
int64_t pending_settle(uint64_t claim, const MPI_Request requests[], int64_t elapsed_ns);

/* Forgets an operation whose request was freed with MPI_Request_free, so a later request that
 * reuses the handle is not mistaken for it. */
void pending_forget(MPI_Request request);

#endif
