/* call_counts.h. */
#include "call_counts.h"

#include <pthread.h>
#include <stdlib.h>

#include "fail.h"

TUNE_THREAD_LOCAL struct call_counts *call_counts_own;

static size_t counters;
/* Guards `blocks`, the list of every thread's block, newest first. */
static pthread_mutex_t adding = PTHREAD_MUTEX_INITIALIZER;
static struct call_counts *blocks;

void call_counts_start(size_t rules)
{
    counters = CALLS_REPLACED(rules);
}

void call_counts_ready(void)
{
    if (call_counts_own)
        return;
    struct call_counts *own = calloc(1, sizeof *own + counters * sizeof own->calls[0]);
    if (!own)
        fail_exit(EXIT_RUNTIME, "cannot count this thread's calls: out of memory");
    if (pthread_mutex_lock(&adding) != 0)
        fail_exit(EXIT_RUNTIME, "cannot count this thread's calls: a lock failed");
    own->next = blocks;
    blocks = own;
    if (pthread_mutex_unlock(&adding) != 0)
        fail_exit(EXIT_RUNTIME, "cannot count this thread's calls: a lock failed");
    call_counts_own = own;
}

unsigned long call_counts_sum(size_t index)
{
    if (pthread_mutex_lock(&adding) != 0)
        fail_exit(EXIT_RUNTIME, "cannot sum the threads' calls: a lock failed");
    unsigned long sum = 0;
    for (const struct call_counts *block = blocks; block; block = block->next)
        sum += atomic_load_explicit(&block->calls[index], memory_order_relaxed);
    if (pthread_mutex_unlock(&adding) != 0)
        fail_exit(EXIT_RUNTIME, "cannot sum the threads' calls: a lock failed");
    return sum;
}
