/* The tuning file of libmpiguide-tune (docs/tuning.md, "The tuning file of
   libmpiguide-tune"), a public contract: one rule per line,

       <mock-up>  ranks=<N>[,<N>...]  bytes=<LO>[-<HI>]

   replaces the mock-up's collective by the mock-up in calls on a communicator of one of those
   sizes whose message size (the kernel's msg_size: count x datatype size, per process for
   allgather) lies in [LO, HI]. `#` starts a comment; blank lines are ignored. Two rules of one
   collective may not overlap. No MPI here, so a bad file is refused before MPI starts. */
#ifndef MPIGUIDE_TUNE_RULES_H
#define MPIGUIDE_TUNE_RULES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#define TUNE_MAX_RANK_LISTS 64

struct tune_rule {
    int replacement; /* index into tune_replacements */
    int line;        /* in the file, from 1 */
    int ranks[TUNE_MAX_RANK_LISTS];
    int rank_count;
    unsigned long long lo, hi; /* bytes, inclusive */
};

struct tune_rules {
    struct tune_rule *rules;
    size_t count;
};

/* Reads the rules of `path`. Returns 0, or -1 with a message for the user in `error` (always
   NUL-terminated) that starts "<path>:<line>: " where a line is at fault and says what is
   allowed there. */
int tune_read_rules(const char *path, struct tune_rules *out, char *error, size_t error_size);
/* The same from an open stream (path names it in messages). */
int tune_parse_rules(FILE *in, const char *path, struct tune_rules *out, char *error,
                     size_t error_size);

/* Whether `rule` applies on a communicator of `ranks` ranks. */
bool tune_rule_covers_ranks(const struct tune_rule *rule, int ranks);

#endif
