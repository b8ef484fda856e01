/* MPIGUIDE_INJECT: which MPI functions to slow down, and by how much. No MPI here, so the parser
 * runs before MPI_Init and can reject a bad spec before the library starts. */
#ifndef MPIGUIDE_INJECT_SPEC_H
#define MPIGUIDE_INJECT_SPEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum inject_kind {
    INJECT_OFF,      /* the function runs untouched */
    INJECT_USEC,     /* a fixed busy-wait of `amount` microseconds after the call */
    INJECT_FRACTION, /* a busy-wait of `amount` times the call's own duration */
};

struct inject_rule {
    enum inject_kind kind;
    double amount;
    /* INJECT_ANY_DATATYPE, or the index of the one datatype (in the caller's table of names)
     * whose calls are slowed: calls of other datatypes are timed alike but owe no delay. */
    int datatype;
};

#define INJECT_ANY_DATATYPE (-1)

/* Largest accepted amounts: anything bigger is a unit mistake (seconds for microseconds, percent
 * for a fraction) that would make a campaign crawl instead of failing. */
#define INJECT_MAX_USEC 10000000.0
#define INJECT_MAX_FRACTION 100.0

/* The functions and datatypes a spec may name: names[i] is typed[i] if a `datatype=` filter
 * applies to it (it moves data of one datatype); datatypes[] are the filter's names. */
struct inject_names {
    const char *const *functions;
    const bool *typed;
    size_t function_count;
    const char *const *datatypes;
    size_t datatype_count;
};

/* Parses `spec`, "NAME:usec=N,NAME:fraction=F[:datatype=TYPE],...", into rules[i] for
 * names->functions[i]; a function the spec does not name gets INJECT_OFF. Returns 0, or -1 with
 * a message for the user in `error` (always NUL-terminated) naming the entry at fault and what
 * is allowed. */
int inject_parse_spec(const char *spec, const struct inject_names *names,
                      struct inject_rule rules[], char *error, size_t error_size);

/* Writes a one-line summary of the rules that are on ("MPI_Bcast +5 us, MPI_Allreduce +10% of
 * its duration, MPI_Allgather +10% of its duration for MPI_INT") into `out` (always NUL-terminated, truncated if too small). */
void inject_describe(const struct inject_rule rules[], const struct inject_names *names,
                     char *out, size_t out_size);

/* The busy-wait a rule owes for a call (or a nonblocking operation) that spent `elapsed_ns`
 * inside the MPI library. */
int64_t inject_delay_ns(const struct inject_rule *rule, int64_t elapsed_ns);

#endif
