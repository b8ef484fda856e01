#include "crash.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ops/op_table.h"

/* The signals a rank reports, with their names: the handler may call neither strsignal nor
   printf (not async-signal-safe), so every text it writes is made beforehand. */
static const struct {
    int number;
    const char *name;
} reported[] = {
    {SIGSEGV, "SIGSEGV"}, {SIGBUS, "SIGBUS"},   {SIGFPE, "SIGFPE"}, {SIGILL, "SIGILL"},
    {SIGABRT, "SIGABRT"}, {SIGTERM, "SIGTERM"}, {SIGINT, "SIGINT"},
};
#define REPORTED (sizeof reported / sizeof reported[0])

static struct sigaction previous[REPORTED];
static char prefix[64];     /* "mpiguide-bench: rank 3 got " */
static char running[1024];  /* " while running IN.csv:12 (...)\n" or " between experiments\n" */

/* Appends `text` at `*at` within line[] (what does not fit is cut): memcpy and strlen are
   async-signal-safe, snprintf is not. */
static char line[sizeof prefix + sizeof running + 16];
static void append(size_t *at, const char *text)
{
    size_t length = strlen(text);
    if (length > sizeof line - 1 - *at)
        length = sizeof line - 1 - *at;
    memcpy(line + *at, text, length);
    *at += length;
}

/* Writes the whole line in one write where the pipe takes it: ranks share the launcher's pipe,
   and a line written piece by piece is cut by another rank's. */
static void on_signal(int number)
{
    for (size_t i = 0; i < REPORTED; i++) {
        if (reported[i].number != number)
            continue;
        size_t at = 0;
        append(&at, prefix);
        append(&at, reported[i].name);
        append(&at, running);
        for (size_t done = 0; done < at;) {
            ssize_t written = write(STDERR_FILENO, line + done, at - done);
            if (written <= 0)
                break;
            done += (size_t)written;
        }
        sigaction(number, &previous[i], NULL);
        break;
    }
    raise(number);
}

void crash_handlers_install(int rank)
{
    snprintf(prefix, sizeof prefix, "mpiguide-bench: rank %d got ", rank);
    crash_note_experiment(NULL, NULL);
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = on_signal;
    sigemptyset(&action.sa_mask);
    for (size_t i = 0; i < REPORTED; i++)
        sigaction(reported[i].number, &action, &previous[i]);
}

void crash_note_experiment(const char *input, const struct experiment *exp)
{
    if (exp == NULL) {
        snprintf(running, sizeof running, " outside an experiment\n");
        return;
    }
    snprintf(running, sizeof running,
             " while running %s:%lld (exp_id %lld: op %s, msg_size %lld, nrep %d, chunk %d of "
             "%d%s%s%s; every value on that line): leave it out with `where:`, or set the "
             "library's workaround in the mpi entry's env (docs/kernel.md, \"When the library "
             "crashes or hangs\")\n",
             input, (long long)exp->line, (long long)exp->exp_id, operation_table[exp->op].name,
             (long long)exp->msg_size, exp->nrep, exp->chunk + 1, exp->interleave,
             exp->algorithm[0] ? ", algorithm '" : "", exp->algorithm,
             exp->algorithm[0] ? "'" : "");
}
