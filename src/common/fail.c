/* fail.h. It calls PMPI_ only: a failure inside a PMPI library never goes through its own
   wrappers. */
#include "fail.h"

#include <stdarg.h>
#include <stdlib.h>

void stderr_line(void (*compose)(FILE *out, void *context), void *context)
{
    char *line = NULL;
    size_t length = 0;
    FILE *buffer = open_memstream(&line, &length);
    if (buffer) {
        compose(buffer, context);
        const int closed = fclose(buffer);
        if (closed == 0)
            fwrite(line, 1, length, stderr);
        free(line);
        if (closed == 0)
            return;
    }
    compose(stderr, context);
}

struct message {
    int described;
    const char *fmt;
    va_list *args;
};

/* "NAME: ", what the component describes if `described`, the message and a newline. */
static void compose_message(FILE *out, void *context)
{
    const struct message *message = context;
    fprintf(out, "%s: ", fail_component.name);
    if (message->described && fail_component.describe)
        fail_component.describe(out);
    va_list args;
    va_copy(args, *message->args);
    vfprintf(out, message->fmt, args);
    va_end(args);
    fputc('\n', out);
}

static void say(int described, const char *fmt, va_list args)
{
    va_list copy;
    va_copy(copy, args);
    struct message message = {described, fmt, &copy};
    stderr_line(compose_message, &message);
    va_end(copy);
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

void fail_vsay(const char *fmt, va_list args)
{
    say(0, fmt, args);
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
