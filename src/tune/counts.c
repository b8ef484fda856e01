/* counts.h. A thread's block outlives the thread, so that the report still counts its calls;
   the blocks are few (one per thread that made a tuned call) and small. */
#include "counts.h"

#include <stdlib.h>

#include "fail.h"

TUNE_THREAD_LOCAL struct tune_counts *tune_own_counts;

static size_t rule_count;
/* Every thread's block, the latest first. A block joins by an exchange; its `next` is set before
   and never changes after, so a reader needs no lock. */
static struct tune_counts *_Atomic blocks;

void tune_counts_configure(size_t rules)
{
    rule_count = rules;
}

struct tune_counts *tune_counts_made(void)
{
    struct tune_counts *mine = calloc(1, sizeof *mine + rule_count * sizeof mine->replaced[0]);
    if (!mine)
        fail_abort("out of memory counting the calls of a thread");
    mine->next = atomic_load_explicit(&blocks, memory_order_relaxed);
    while (!atomic_compare_exchange_weak_explicit(&blocks, &mine->next, mine,
                                                  memory_order_release, memory_order_relaxed))
        ;
    return tune_own_counts = mine;
}

unsigned long tune_replaced_total(size_t rule)
{
    unsigned long total = 0;
    for (struct tune_counts *block = atomic_load_explicit(&blocks, memory_order_acquire); block;
         block = block->next)
        total += atomic_load_explicit(&block->replaced[rule], memory_order_relaxed);
    return total;
}

unsigned long tune_library_total(enum tune_collective collective)
{
    unsigned long total = 0;
    for (struct tune_counts *block = atomic_load_explicit(&blocks, memory_order_acquire); block;
         block = block->next)
        total += atomic_load_explicit(&block->library[collective], memory_order_relaxed);
    return total;
}
