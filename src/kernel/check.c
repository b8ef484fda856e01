#include "check.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* What the rank is doing (e.g. the experiment's input line), named by every runtime failure. */
static char failure_context[PATH_MAX + 128];
/* Files that an abort removes: the run's temporary outputs, known to every rank. */
static char *abort_removes[2];

void fail_context(const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    vsnprintf(failure_context, sizeof failure_context, fmt, args);
    va_end(args);
}

void remove_on_abort(int slot, const char *path)
{
    free(abort_removes[slot]);
    abort_removes[slot] = NULL;
    if (path) {
        abort_removes[slot] = malloc(strlen(path) + 1);
        if (abort_removes[slot])
            strcpy(abort_removes[slot], path);
    }
}

static int world_rank(void)
{
    int initialized = 0, finalized = 0, rank = -1;
    MPI_Initialized(&initialized);
    MPI_Finalized(&finalized);
    if (initialized && !finalized)
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    return rank;
}

/* "rank R: " and the context, if any, with its ": ". */
static void describe_failure(FILE *stream)
{
    fprintf(stream, "rank %d: %s%s", world_rank(), failure_context,
            failure_context[0] ? ": " : "");
}

static void remove_files(void)
{
    for (size_t i = 0; i < sizeof abort_removes / sizeof abort_removes[0]; i++)
        if (abort_removes[i])
            unlink(abort_removes[i]);
}

const struct fail_component fail_component = {"mpiguide-bench", describe_failure, remove_files};

void *xmalloc(size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    if (!p)
        fail_abort("out of memory allocating %zu bytes", bytes);
    return p;
}

void *xcalloc(size_t count, size_t size)
{
    void *p = calloc(count ? count : 1, size ? size : 1);
    if (!p)
        fail_abort("out of memory allocating %zu x %zu bytes", count, size);
    return p;
}

void *xrealloc(void *p, size_t bytes)
{
    void *grown = realloc(p, bytes ? bytes : 1);
    if (!grown)
        fail_abort("out of memory allocating %zu bytes", bytes);
    return grown;
}
