/* fail.h. It calls PMPI_ only: a failure inside a PMPI library never goes through its own
   wrappers. */
#include "fail.h"

#include <stdarg.h>
#include <stdlib.h>

/* "NAME: ", what the component describes if `described`, the message and a newline. */
static void say(int described, const char *fmt, va_list args)
{
    fprintf(stderr, "%s: ", fail_component.name);
    if (described && fail_component.describe)
        fail_component.describe(stderr);
    vfprintf(stderr, fmt, args);
    fputc('\n', stderr);
}

static void say_described(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say_described(const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    say(1, fmt, args);
    va_end(args);
}

static _Noreturn void abort_all(void)
{
    int initialized = 0, finalized = 0;
    PMPI_Initialized(&initialized);
    PMPI_Finalized(&finalized);
    if (fail_component.cleanup)
        fail_component.cleanup();
    fflush(stderr);
    if (initialized && !finalized)
        PMPI_Abort(MPI_COMM_WORLD, EXIT_RUNTIME);
    exit(EXIT_RUNTIME); /* PMPI_Abort does not return; this is for a library that breaks that */
}

void fail_say(const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    say(0, fmt, args);
    va_end(args);
}

void fail_exit(int status, const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    say(0, fmt, args);
    va_end(args);
    exit(status);
}

void fail_abort(const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    say(1, fmt, args);
    va_end(args);
    abort_all();
}

void fail_mpi(const char *call, const char *file, int line, int rc)
{
    char text[MPI_MAX_ERROR_STRING];
    int length = 0;
    if (PMPI_Error_string(rc, text, &length) != MPI_SUCCESS)
        snprintf(text, sizeof text, "MPI error code %d", rc);
    say_described("%s failed at %s:%d: %s", call, file, line, text);
    abort_all();
}
