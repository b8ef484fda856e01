/* What one MPI library provides to the algorithm switch (algorithm.h): one implementation per
   library, each file compiled for the library the build's mpi.h names (mpi_family.h: Open MPI
   in library_openmpi.c, MPICH in library_mpich.c, any other in library_other.c). */
#ifndef MPIGUIDE_LIBRARY_H
#define MPIGUIDE_LIBRARY_H

#include <stddef.h>

#include "algorithm/mpit.h"
#include "experiment.h"

/* The most choices one control variable may offer. */
#define LIBRARY_MAX_CHOICES 64

struct algorithm_choice {
    char name[ALGORITHM_NAME_MAX + 1];
    int value;
};

/* The library's name in messages and the provenance ("Open MPI"), how the switch works there,
   and the choice that stands for the library's own decision (refused in an input). */
extern const char library_name[];
extern const char library_mechanism[];
extern const char library_reserved[];
/* 1: a communicator keeps the algorithm it was created under (algorithm_set creates one per
   algorithm); 0: the library reads the control variable at every call (it is written around
   the experiment's repetitions). */
extern const int library_per_communicator;
/* 1 for a library whose algorithms the kernel can choose; 0 for any other. */
extern const int library_switches;
/* A per-communicator library: the info hint (key, value) its duplicates under an algorithm are
   made with, so that the part of the library that holds the algorithm answers their calls
   whatever else the launch ranks above it; empty key: a plain duplicate. */
extern const char library_dup_key[];
extern const char library_dup_value[];

/* Before MPI_Init, on every rank, when the input chooses algorithms: what the library needs
   set in the environment. Returns 0, or -1 with the reason in error. */
int library_before_init(char *error, size_t size);
/* After MPI_Init, on this rank: 0 when the library can switch, or -1 with the reason. */
int library_ready(char *error, size_t size);
/* The name of the control variable that holds the collective's algorithm ("allreduce"). */
void library_cvar_name(const char *collective, char *name, size_t size);
/* The choices of that variable (the reserved one included), in their order: how many, or -1
   with the reason in error. */
int library_choices(int cvar_index, struct algorithm_choice *choices, int max, char *error,
                    size_t size);

/* The values in place before library_force, restored by library_restore. */
struct library_saved {
    int algorithm, device, fallback;
};
/* Makes the algorithm cvar hold value (and what else the library needs for it to apply),
   saving what was there; library_restore puts it back. */
void library_force(const struct mpit_cvar *algorithm, int value, struct library_saved *saved);
void library_restore(const struct mpit_cvar *algorithm, const struct library_saved *saved);

#endif
