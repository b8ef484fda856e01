/* The library's own algorithm of a collective, chosen per experiment (docs/kernel.md,
   "Algorithms per experiment"): names checked against what the library reports through MPI_T,
   and the switch itself, by a communicator created under the algorithm (Open MPI) or by control
   variables written around the experiment's repetitions (MPICH). The kernel's own communicators
   and collectives never run under a chosen algorithm. */
#ifndef MPIGUIDE_ALGORITHM_H
#define MPIGUIDE_ALGORITHM_H

#include <stddef.h>
#include <stdio.h>

#include <mpi.h>

#include "algorithm/mpit.h"
#include "experiment.h"

/* The reserved algorithm of any library: the library's own call, on a duplicate of the
   experiment's communicator that libmpiguide-tune leaves to the library (tune_hint.h). No
   control variable is written and MPI_T is not needed. */
#define ALGORITHM_UNTUNED "untuned"

/* Before MPI_Init, on every rank, when the input chooses some algorithm: what the library
   needs in the environment. Returns 0, or -1 with the reason in error. */
int algorithm_before_init(char *error, size_t size);

/* Rank 0, while validating the input: the value of the algorithm `name` of the collective
   ("allreduce"). Returns 0, or -1 with the message in error (the names allowed listed).
   ALGORITHM_UNTUNED is accepted for every collective and library, without MPI_T (value -1). */
int algorithm_find(const char *collective, const char *name, int *value, char *error,
                   size_t size);

/* --list-algorithms: `collective algorithm value` rows (TSV with a header) for every collective
   an op of the table is, the library's reserved choice left out. Returns 0, or -1 after a
   message. */
int algorithm_list(FILE *out);

/* The collective an experiment forces an algorithm of; NULL when the library chooses (no
   algorithm, or ALGORITHM_UNTUNED). */
const char *algorithm_forced(const struct experiment *exp);
/* Whether the experiment's algorithm is ALGORITHM_UNTUNED. */
int algorithm_untuned(const struct experiment *exp);

/* Every algorithm the launch's experiments force, with its communicator where the library
   needs one. */
struct algorithm_use {
    char collective[32];
    char name[ALGORITHM_NAME_MAX + 1];
    int value;
    char cvar[96];
    struct mpit_cvar variable;
    MPI_Comm comm; /* world's duplicate created under the algorithm (per-communicator
                      libraries), else MPI_COMM_NULL */
};
struct algorithm_set {
    struct algorithm_use *uses;
    int count;
    /* When an experiment is untuned (1 in has_untuned): world's duplicate made with the hint.
       A set of zeros holds nothing to free (MPI_COMM_NULL need not be 0). */
    int has_untuned;
    MPI_Comm untuned;
};

/* Collective over world, after the experiments are loaded: checks that every rank can switch
   (a message on rank 0 otherwise; returns -1) and creates the communicators (that of the
   untuned experiments without any check: it needs nothing of the library). */
int algorithm_set_create(struct algorithm_set *set, const struct experiment *exps, size_t count,
                         MPI_Comm world);
void algorithm_set_free(struct algorithm_set *set);

/* The communicator a forced experiment runs on instead of `comm` (world's duplicate or the
   topology's communicator), for a library that keeps the algorithm per communicator: world's
   duplicate created under it, or a duplicate of the topology's communicator created under it
   into *own (the caller frees it). An untuned experiment, with any library: world's duplicate
   made with the hint, or the topology's communicator duplicated with it into *own. Otherwise
   `comm`, and *own is MPI_COMM_NULL. */
MPI_Comm algorithm_comm(const struct algorithm_set *set, const struct experiment *exp,
                        MPI_Comm comm, MPI_Comm *own);

/* Around a forced experiment's calls of its collective, outside any timed window: for a library
   that reads the choice at every call, writes it (algorithm_apply) and puts back what was
   there (algorithm_restore); nothing otherwise or for an experiment that forces nothing. */
void algorithm_apply(const struct algorithm_set *set, const struct experiment *exp);
/* Whether algorithm_apply does anything for `exp`: a forced experiment on a library that reads
   the choice at every call. */
int algorithm_applies(const struct experiment *exp);
void algorithm_restore(const struct algorithm_set *set, const struct experiment *exp);

/* OUTPUT.json's "algorithms" member (with its leading ",\n  "), when the launch forces any
   or runs an untuned experiment. */
void algorithm_write_json(FILE *json, const struct algorithm_set *set);

/* Ends the tool interface if the switch started it (before MPI_Finalize). */
void algorithm_end(void);

#endif
