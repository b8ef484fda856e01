/* The rules of the tuning file that apply on one communicator: found on the communicator's first
   call of a tuned collective and kept with it, so that later calls neither search the file's
   rules nor ask the MPI library about the communicator again. */
#ifndef MPIGUIDE_TUNE_COMM_RULES_H
#define MPIGUIDE_TUNE_COMM_RULES_H

#include <stdatomic.h>
#include <stddef.h>

#include <mpi.h>

#include "replacements.h"
#include "rules.h"

/* A rule as a call needs it, next to the other rules of its communicator. */
struct comm_rule {
    unsigned long long lo, hi; /* bytes, inclusive */
    const struct tune_replacement *with;
    size_t index; /* of the rule among the tuning file's */
};

/* An intra-communicator's size and the rules for that size, per collective in file order: those
   of collective c are rules[start[c]] ... rules[start[c + 1] - 1]. */
struct comm_rules {
    int size;
    size_t start[TUNE_COLLECTIVES + 1];
    struct comm_rule rules[];
};

/* Moves on whenever MPI frees the rules of a communicator, from 1: what was learnt about a
   communicator handle under an earlier generation may be about a freed one. */
extern atomic_ulong tune_comm_generation;
static inline unsigned long tune_comm_now(void)
{
    return atomic_load_explicit(&tune_comm_generation, memory_order_acquire);
}

/* The rules of `comm` among `all` (the same on every call), NULL if every call on `comm` goes to
   the library: MPI_COMM_NULL, an intercommunicator, or an MPI query about it that failed. Read
   tune_comm_now() before: the rules hold while it stays the same. */
const struct comm_rules *tune_comm_rules(MPI_Comm comm, const struct tune_rules *all);

/* Makes the new intra-communicator `comm` exempt: it gets rules for no collective, so every call
   on it goes to the library (and is counted as such). Its duplicates are not exempt: MPI does
   not copy the attribute, and a duplicate finds its rules on its first call. Returns 0, or an
   MPI error code, or MPI_ERR_NO_MEM. */
int tune_comm_exempt(MPI_Comm comm);

/* The rule of `on` for `collective` moving `bytes`, NULL if none. */
static inline const struct comm_rule *tune_comm_rule_for(const struct comm_rules *on,
                                                         enum tune_collective collective,
                                                         unsigned long long bytes)
{
    for (size_t i = on->start[collective]; i < on->start[collective + 1]; i++)
        if (on->rules[i].lo <= bytes && bytes <= on->rules[i].hi)
            return &on->rules[i];
    return NULL;
}

#endif
