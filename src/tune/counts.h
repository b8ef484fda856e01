/* The counts MPIGUIDE_TUNE_REPORT reports: per rule of the tuning file, the calls it replaced;
   per collective, the calls left to the library. Each thread counts in a block of its own with
   plain loads and stores, and the blocks are summed for the report. A count shared by the
   threads would need a locked increment, which on every replaced call waits for the stores the
   mock-up has just made to memory the other ranks read to drain. */
#ifndef MPIGUIDE_TUNE_COUNTS_H
#define MPIGUIDE_TUNE_COUNTS_H

#include <stdatomic.h>
#include <stddef.h>

#include "replacements.h"
#include "thread_cache.h"

struct tune_counts {
    struct tune_counts *next;               /* the block of another thread */
    atomic_ulong library[TUNE_COLLECTIVES]; /* per collective */
    atomic_ulong replaced[];                /* per rule */
};

/* This thread's block, NULL until its first count. */
extern TUNE_THREAD_LOCAL struct tune_counts *tune_own_counts;

/* Sizes the blocks for `rules` rules; before the first count. */
void tune_counts_configure(size_t rules);
/* This thread's block, made on its first call (ends the job if memory runs out). */
struct tune_counts *tune_counts_made(void);

/* Adds one to a count of this thread's block: it alone writes it. */
static inline void tune_count(atomic_ulong *count)
{
    atomic_store_explicit(count, atomic_load_explicit(count, memory_order_relaxed) + 1,
                          memory_order_relaxed);
}

static inline struct tune_counts *tune_counts(void)
{
    return tune_own_counts ? tune_own_counts : tune_counts_made();
}

/* The sums over every thread that counted. */
unsigned long tune_replaced_total(size_t rule);
unsigned long tune_library_total(enum tune_collective collective);

#endif
