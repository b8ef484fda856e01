/* Synchronisation before and after each repetition, behind one interface (ReproMPI-style):
   barrier methods (dissemination, barrier) and clock-synchronised starts (hca3_roundtime,
   jk_roundtime). */
#ifndef MPIGUIDE_SYNC_H
#define MPIGUIDE_SYNC_H

#include <mpi.h>

#include "experiment.h"
#include "sync/clock.h"

/* What a repetition's synchronisation reports; everything but REP_VALID makes it invalid. */
enum rep_status { REP_VALID, REP_LATE, REP_STATUS_COUNT };

/* The synchronisation state of a run: its communicator and (for clock-synchronised methods)
   the clocks, plus what the method measured for the current experiment. */
struct sync_state {
    MPI_Comm comm;
    int rank;
    struct clock_model clock;
    double start_delay; /* round-time: how far ahead of its broadcast rank 0 sets a start */
    int oversubscribed; /* this node runs more ranks than it has processors online */
};

struct sync_method {
    const char *name;
    /* The clocks begin/end run on; CLOCK_NONE: none synchronised, no global run time. */
    enum clock_algorithm clock;
    /* Optional, collective, untimed: once per experiment before its first repetition. */
    void (*prepare)(struct sync_state *state, enum clock_algorithm clock);
    /* Whether begin or end calls an MPI collective (MPI_Barrier, MPI_Bcast): a setting of the
       library's collectives made for the op's calls must not reach them. */
    int calls_collectives;
    /* Called right before t0 and right after the repetition's time is taken. */
    enum rep_status (*begin)(struct sync_state *state);
    enum rep_status (*end)(struct sync_state *state);
};

/* The method of a sync column value. */
const struct sync_method *sync_method_get(enum sync_kind kind);
/* The status as written to OUTPUT.csv. */
const char *rep_status_name(enum rep_status status);

void sync_state_init(struct sync_state *state, MPI_Comm comm);

/* What the provenance records of an experiment's synchronisation (complete on rank 0). */
struct sync_report {
    const struct sync_method *method;
    int invalid;          /* repetitions not valid */
    double start_delay;   /* synchronised clocks: the round-time start's lead */
    double max_abs_slope; /* synchronised clocks: the largest drift kept, over the ranks */
    int drifting_ranks;   /* synchronised clocks: ranks whose model has a drift */
};

/* Collective over state->comm. invalid: the measurement's count (rank 0). */
void sync_report_gather(const struct sync_state *state, const struct experiment *exp,
                        int invalid, struct sync_report *report);

#endif
