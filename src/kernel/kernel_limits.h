/* The kernel's limits: every upper bound it puts on its command line and its input, named once
   here. --list-limits prints them (limits_list), src/mpiguide/data/limits.tsv holds that output
   for the Python side (make -C src/kernel limits-table), and a kernel test holds the two equal.
   (Not named limits.h: the Makefile's -I. would put it in place of the system's <limits.h>.)
   Not limits: bounds that only say a value fits its C type before a check of its own (exp_id an
   int64; root, nfin, radius an int, then root < ranks, nfin <= ndim, radius through
   MAX_STENCIL_OFFSETS); max_time has none (a budget can only shorten a run). */
#ifndef MPIGUIDE_KERNEL_LIMITS_H
#define MPIGUIDE_KERNEL_LIMITS_H

#include <stdint.h>
#include <stdio.h>

/* --nprocs and --node-size: ranks of a run, ranks of a node. */
#define MAX_RANKS (1 << 30)
/* Buffers are addressed with int counts and displacements: msg_size x the blocks one buffer
   holds. */
#define MAX_BUFFER_BYTES INT32_MAX
/* Repetitions are kept in memory per experiment (8 bytes each, twice on rank 0). */
#define MAX_NREP 10000000
/* Iterations of the simulated work between a nonblocking start and its wait (work_spin: about
   1 ns each on an AMD EPYC core): at most some 100 s per repetition, so that a run ends. */
#define MAX_WORK 100000000000LL
/* Dimensions of a grid topology (cart, vonneumann, moore). */
#define MAX_DIMS 8
/* Offsets of a von Neumann / Moore neighbourhood, (2 radius + 1)^ndim - 1, are planned in
   memory. */
#define MAX_STENCIL_OFFSETS (1LL << 20)
/* A buffer starts at most this many bytes after its page start: more than any base page
   (64 KiB at most on common systems); a larger offset would only waste memory. */
#define MAX_BUFFER_OFFSET (1LL << 20)
/* Chunks of one experiment: each is a row of the input with its own setup and untimed warm-up
   repetition, so more chunks only add that overhead once they hold a repetition or two each. */
#define MAX_INTERLEAVE 1000
/* Untimed repetitions before an experiment's (each chunk's) timed ones: nothing of them is kept,
   so the bound only keeps a run finite; a library's first-use costs take tens of calls. */
#define MAX_WARMUP 100000

/* Writes the limits as TSV (--list-limits): a header row `limit value meaning`, then one row per
   limit: its name (the macro's, in lower case), its value as a decimal integer, and the option
   or columns it bounds with what they count. */
void limits_list(FILE *out);

#endif
