#include "topology/random.h"

static uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

struct random random_seeded(int64_t exp_id, int rank)
{
    uint64_t mix = (uint64_t)exp_id;
    struct random rng = {splitmix64(&mix) ^ (uint64_t)(uint32_t)rank};
    return rng;
}

uint64_t random_next(struct random *rng)
{
    return splitmix64(&rng->state);
}

void random_shuffle_blocks(struct random *rng, int *items, int n, int width)
{
    for (int i = n - 1; i > 0; i--) {
        int j = (int)(random_next(rng) % (uint64_t)(i + 1));
        for (int k = 0; k < width; k++) {
            int t = items[i * width + k];
            items[i * width + k] = items[j * width + k];
            items[j * width + k] = t;
        }
    }
}
