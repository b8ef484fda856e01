#include "kernel_limits.h"

#include <stddef.h>

/* One row per limit, in the order of what they bound: the command line, then the input's
   columns in the grid's order. */
static const struct {
    const char *name;
    long long value;
    const char *meaning;
} limits[] = {
    {"max_ranks", MAX_RANKS, "--nprocs and --node-size: ranks of a run and of a node"},
    {"max_buffer_bytes", MAX_BUFFER_BYTES,
     "msg_size x the blocks one buffer holds, in bytes: int counts and displacements"},
    {"max_nrep", MAX_NREP, "nrep: repetitions of one experiment, their times kept in memory"},
    {"max_work", MAX_WORK, "work: iterations of the simulated-work loop in one repetition"},
    {"max_dims", MAX_DIMS, "ndim: dimensions of a cart, vonneumann or moore grid"},
    {"max_stencil_offsets", MAX_STENCIL_OFFSETS,
     "radius and ndim: offsets of a vonneumann or moore neighbourhood, (2 radius + 1)^ndim - 1"},
    {"max_buffer_offset", MAX_BUFFER_OFFSET,
     "buffer_offset: bytes from a page start to every communication buffer"},
    {"max_interleave", MAX_INTERLEAVE,
     "interleave: chunks one experiment's repetitions are split into, a row of the input each"},
    {"max_warmup", MAX_WARMUP,
     "warmup: untimed repetitions before the timed ones of an experiment (of each chunk)"},
};

void limits_list(FILE *out)
{
    fputs("limit\tvalue\tmeaning\n", out);
    for (size_t i = 0; i < sizeof limits / sizeof limits[0]; i++)
        fprintf(out, "%s\t%lld\t%s\n", limits[i].name, limits[i].value, limits[i].meaning);
}
