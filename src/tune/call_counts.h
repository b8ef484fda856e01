/* The calls libmpiguide-tune replaced, per rule, and left to the library, per collective: what
   MPIGUIDE_TUNE_REPORT prints. Each thread counts into a block of its own with a plain load and
   store: an atomic read-modify-write (x86's lock prefix) would also wait, on every replaced call,
   for the stores the collective just made to reach the peer rank polling them. */
#ifndef MPIGUIDE_TUNE_CALL_COUNTS_H
#define MPIGUIDE_TUNE_CALL_COUNTS_H

#include <stdatomic.h>
#include <stddef.h>

#include "replacements.h"
#include "thread_cache.h"

/* A block's counters: first the calls left to the library per collective, then the calls
   replaced per rule. */
#define CALLS_LEFT(collective) ((size_t)(collective))
#define CALLS_REPLACED(rule) (TUNE_COLLECTIVES + (size_t)(rule))

struct call_counts {
    struct call_counts *next; /* every thread's block, in a list the report walks */
    atomic_ulong calls[];
};

/* This thread's block, NULL until call_counts_ready() on it. */
extern TUNE_THREAD_LOCAL struct call_counts *call_counts_own;

/* Sets the number of rules; once, before any call is counted. */
void call_counts_start(size_t rules);
/* Makes this thread's block if it has none; exits the program if it cannot. Call it before
   counting on a thread. The block outlives the thread, so the report still counts its calls. */
void call_counts_ready(void);

/* One more call on this thread's counter `index` (CALLS_LEFT, CALLS_REPLACED). Only the owning
   thread writes a block and the report reads it: the counter is atomic, the increment need not
   be. */
static inline void call_counts_add(size_t index)
{
    atomic_ulong *counter = &call_counts_own->calls[index];
    atomic_store_explicit(counter, atomic_load_explicit(counter, memory_order_relaxed) + 1,
                          memory_order_relaxed);
}

/* The sum of counter `index` over every thread's block. */
unsigned long call_counts_sum(size_t index);

#endif
