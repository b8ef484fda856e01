/* How every C component of mpiguide fails (the kernel, its mock-ups, libmpiguide-inject and
   libmpiguide-tune): a message on stderr that starts with the component's name, then an exit
   status of docs/kernel.md. Every MPI call is checked: with MPI_CHECK where a failure ends the
   job, with MPI_TRY where the caller gets the error code (a mock-up, a PMPI wrapper), as from the
   MPI function it stands for. */
#ifndef MPIGUIDE_FAIL_H
#define MPIGUIDE_FAIL_H

#include <stdarg.h>
#include <stdio.h>

#include <mpi.h>

enum { EXIT_OK = 0, EXIT_RUNTIME = 1, EXIT_BAD_INPUT = 2 };

/* Defined once by each component that reports failures: the name every message starts with
   ("mpiguide-bench"), and what an abort says after it and does first (NULL: nothing). */
struct fail_component {
    const char *name;
    void (*describe)(FILE *stream); /* e.g. "rank 0: IN.csv:3 (exp_id 2): " */
    void (*cleanup)(void);          /* e.g. remove the run's temporary files */
};
extern const struct fail_component fail_component;

#define MPI_CHECK(call)                                                                        \
    do {                                                                                       \
        const int mpi_check_rc_ = (call);                                                      \
        if (mpi_check_rc_ != MPI_SUCCESS)                                                      \
            fail_mpi(#call, __FILE__, __LINE__, mpi_check_rc_);                                \
    } while (0)

#define MPI_TRY(call)                                                                          \
    do {                                                                                       \
        const int mpi_try_rc_ = (call);                                                        \
        if (mpi_try_rc_ != MPI_SUCCESS)                                                        \
            return mpi_try_rc_;                                                                \
    } while (0)

/* Writes to stderr what compose(out, context) writes to `out`, in one write where memory
   allows: every rank writes to one pipe of the launcher, and a line written piece by piece can
   be cut by another rank's. `compose` may be called twice (the second time onto stderr). */
void stderr_line(void (*compose)(FILE *out, void *context), void *context);

/* Prints "NAME: <message>" and a newline. */
void fail_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* fail_say with the arguments in a va_list, for a component's own variadic reporting function. */
void fail_vsay(const char *fmt, va_list args) __attribute__((format(printf, 1, 0)));

/* Prints "NAME: <message>" and exits with `status`: for a user's mistake found before MPI_Init
   (settings), or after it where every rank finds it (the launcher stops the job when a rank
   exits, and its output is forwarded before the exit is seen, unlike MPI_Abort's). Before
   MPI_Init, in a job under MPICH's mpiexec, the output can still be lost: see preload_refuse
   (preload.h). */
_Noreturn void fail_exit(int status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Prints "NAME: <described><message>" and aborts all ranks with EXIT_RUNTIME: for failures that
   are not the user's. */
_Noreturn void fail_abort(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Prints "NAME: <described>CALL failed at FILE:LINE: <MPI_Error_string>" and aborts all ranks. */
_Noreturn void fail_mpi(const char *call, const char *file, int line, int rc);

#endif
