/* Runtime failure handling: every MPI call is checked; a failure names the call and aborts. */
#ifndef MPIGUIDE_CHECK_H
#define MPIGUIDE_CHECK_H

#include <stddef.h>

#include <mpi.h>

/* Exit codes of the kernel (docs/kernel.md). */
enum { EXIT_OK = 0, EXIT_RUNTIME = 1, EXIT_BAD_INPUT = 2 };

#define MPI_CHECK(call)                                                        \
    do {                                                                       \
        int mpi_check_rc_ = (call);                                            \
        if (mpi_check_rc_ != MPI_SUCCESS)                                      \
            mpi_check_fail(#call, __FILE__, __LINE__, mpi_check_rc_);          \
    } while (0)

/* Prints "rank R: CALL failed at FILE:LINE: <MPI_Error_string>" and aborts all ranks. */
_Noreturn void mpi_check_fail(const char *call, const char *file, int line, int rc);

/* Prints "rank R: <message>" and aborts all ranks: for failures that are not the user's. */
_Noreturn void fail_runtime(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Sets what every later runtime failure names first (e.g. "IN.csv:3 (exp_id 2)"); "" clears. */
void fail_context(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A file (slot 0 or 1) that an abort removes, on any rank; NULL forgets the slot. */
void remove_on_abort(int slot, const char *path);

/* malloc/calloc/realloc that abort with a message (exit 1: not the input's fault) instead of
   returning NULL. */
void *xmalloc(size_t bytes);
void *xcalloc(size_t count, size_t size);
void *xrealloc(void *p, size_t bytes);

#endif
