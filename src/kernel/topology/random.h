/* Reproducible pseudo-random permutations (splitmix64), independent of the C library. */
#ifndef MPIGUIDE_RANDOM_H
#define MPIGUIDE_RANDOM_H

#include <stdint.h>

struct random {
    uint64_t state;
};

/* A stream determined by the experiment and the rank: different per process, same every run. */
struct random random_seeded(int64_t exp_id, int rank);
uint64_t random_next(struct random *rng);
/* Fisher-Yates shuffle of n blocks of width ints each. */
void random_shuffle_blocks(struct random *rng, int *items, int n, int width);

#endif
