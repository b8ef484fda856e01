/* MPIGUIDE_INJECT: which MPI functions to slow down, and by how much. No MPI here, so the parser
 * runs before MPI_Init and can reject a bad spec before the library starts. */
#ifndef MPIGUIDE_INJECT_SPEC_H
#define MPIGUIDE_INJECT_SPEC_H

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
};

/* Largest accepted amounts: anything bigger is a unit mistake (seconds for microseconds, percent
 * for a fraction) that would make a campaign crawl instead of failing. */
#define INJECT_MAX_USEC 10000000.0
#define INJECT_MAX_FRACTION 100.0

/* Parses `spec`, "NAME:usec=N,NAME:fraction=F,...", into rules[i] for names[i] (i < count); a
 * function the spec does not name gets INJECT_OFF. Returns 0, or -1 with a message for the user in
 * `error` (always NUL-terminated) naming the entry at fault and what is allowed. */
int inject_parse_spec(const char *spec, const char *const names[], size_t count,
                      struct inject_rule rules[], char *error, size_t error_size);

/* Writes a one-line summary of the rules that are on ("MPI_Bcast +5 us, MPI_Allreduce +10% of
 * its duration") into `out` (always NUL-terminated, truncated if too small). */
void inject_describe(const struct inject_rule rules[], const char *const names[], size_t count,
                     char *out, size_t out_size);

/* The busy-wait a rule owes for a call (or a nonblocking operation) that spent `elapsed_ns`
 * inside the MPI library. */
int64_t inject_delay_ns(const struct inject_rule *rule, int64_t elapsed_ns);

#endif
