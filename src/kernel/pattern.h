/* --verify data: a byte pattern that names sender, receiver and position, and exact sums. */
#ifndef MPIGUIDE_PATTERN_H
#define MPIGUIDE_PATTERN_H

#include <limits.h>
#include <stddef.h>

#include "experiment.h"

/* Receiver of a block that every receiver gets alike (allgather, bcast). */
#define PATTERN_ANY_RECEIVER INT_MAX

/* First wrong byte found by a check. */
struct mismatch {
    size_t count;  /* wrong bytes on this rank */
    size_t offset; /* of the first one, in bytes into the receive buffer */
    int sender;    /* rank whose data was expected there; -1 for a reduction result */
    unsigned expected, got;
};

void pattern_fill(unsigned char *buf, size_t bytes, int sender, int receiver);
/* Fills with the complement of the expected pattern, so an untouched byte is always wrong. */
void pattern_poison(unsigned char *buf, size_t bytes, int sender, int receiver);
/* Counts wrong bytes into m; base is buf's offset in the receive buffer, for the report. */
void pattern_check(const unsigned char *buf, size_t bytes, int sender, int receiver, size_t base,
                   struct mismatch *m);

/* Reductions (MPI_SUM) over the `nranks` ranks of a communicator: element i of rank r holds a
   small integer value(r, first + i), so sums over ranks are exact in every dtype and never
   overflow it: in char, at most 4 ranks contribute to an element (pattern.c says why). */
void reduction_fill(void *buf, enum dtype dtype, int nranks, size_t count, int rank, size_t first);
/* Expected result: sum of value(r, first + i) over ranks lo .. hi. */
void reduction_poison(void *buf, enum dtype dtype, int nranks, size_t count, size_t first, int lo,
                      int hi);
void reduction_check(const void *buf, enum dtype dtype, int nranks, size_t count, size_t first,
                     int lo, int hi, struct mismatch *m);

#endif
