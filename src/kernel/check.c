#include "check.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static int world_rank(void)
{
    int initialized = 0, finalized = 0, rank = -1;
    MPI_Initialized(&initialized);
    MPI_Finalized(&finalized);
    if (initialized && !finalized)
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    return rank;
}

static _Noreturn void abort_all(void)
{
    int initialized = 0, finalized = 0;
    MPI_Initialized(&initialized);
    MPI_Finalized(&finalized);
    fflush(stderr);
    if (initialized && !finalized)
        MPI_Abort(MPI_COMM_WORLD, EXIT_RUNTIME);
    exit(EXIT_RUNTIME);
}

void mpi_check_fail(const char *call, const char *file, int line, int rc)
{
    char text[MPI_MAX_ERROR_STRING];
    int length = 0;
    if (MPI_Error_string(rc, text, &length) != MPI_SUCCESS)
        snprintf(text, sizeof text, "MPI error code %d", rc);
    fprintf(stderr, "mpiguide-bench: rank %d: %s failed at %s:%d: %s\n", world_rank(), call,
            file, line, text);
    abort_all();
}

void fail_runtime(const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    fprintf(stderr, "mpiguide-bench: rank %d: ", world_rank());
    vfprintf(stderr, fmt, args);
    fputc('\n', stderr);
    va_end(args);
    abort_all();
}

void *xmalloc(size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    if (!p)
        fail_runtime("out of memory allocating %zu bytes", bytes);
    return p;
}

void *xcalloc(size_t count, size_t size)
{
    void *p = calloc(count ? count : 1, size ? size : 1);
    if (!p)
        fail_runtime("out of memory allocating %zu x %zu bytes", count, size);
    return p;
}

void *xrealloc(void *p, size_t bytes)
{
    void *grown = realloc(p, bytes ? bytes : 1);
    if (!grown)
        fail_runtime("out of memory allocating %zu bytes", bytes);
    return grown;
}
