#include "sync/sync.h"

#include <sched.h>
#include <unistd.h>

#include "check.h"

/* Tag of the dissemination rounds; comm is the kernel's private duplicate of the world, so no
   operation's message can match it. */
enum { DISSEMINATION_TAG = 7411 };
/* Round-time start: rank 0 announces a start this many mean broadcast times ahead, measured
   over ROUNDTIME_BCAST_REPS broadcasts per experiment (the slowest rank's mean). */
enum { ROUNDTIME_BCAST_REPS = 10 };
#define ROUNDTIME_BCAST_MULTIPLIER 4.0

void sync_state_init(struct sync_state *state, MPI_Comm comm)
{
    state->comm = comm;
    MPI_CHECK(MPI_Comm_rank(comm, &state->rank));
    clock_init(&state->clock, comm);
    state->start_delay = 0;
    MPI_Comm node;
    int ranks_here;
    MPI_CHECK(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    MPI_CHECK(MPI_Comm_size(node, &ranks_here));
    MPI_CHECK(MPI_Comm_free(&node));
    state->oversubscribed = ranks_here > sysconf(_SC_NPROCESSORS_ONLN);
}

const char *rep_status_name(enum rep_status status)
{
    static const char *const names[REP_STATUS_COUNT] = {"valid", "late"};
    return names[status];
}

/* Hand-written dissemination barrier (Hensgen, Finkel, Manber): ceil(log2 P) rounds, in round k
   each process signals rank + 2^k and waits for rank - 2^k. Identical on every MPI library,
   unlike MPI_Barrier, whose algorithm the library chooses. */
static void dissemination_barrier(MPI_Comm comm)
{
    int rank, size;
    MPI_CHECK(MPI_Comm_rank(comm, &rank));
    MPI_CHECK(MPI_Comm_size(comm, &size));
    for (int distance = 1; distance < size; distance *= 2) {
        int to = (rank + distance) % size, from = (rank - distance + size) % size;
        MPI_CHECK(MPI_Sendrecv(NULL, 0, MPI_BYTE, to, DISSEMINATION_TAG, NULL, 0, MPI_BYTE, from,
                               DISSEMINATION_TAG, comm, MPI_STATUS_IGNORE));
    }
}

static enum rep_status dissemination(struct sync_state *state)
{
    dissemination_barrier(state->comm);
    return REP_VALID;
}

static enum rep_status mpi_barrier(struct sync_state *state)
{
    MPI_CHECK(MPI_Barrier(state->comm));
    return REP_VALID;
}

/* Round-time: nothing after a repetition; the late flags are reduced once per experiment. */
static enum rep_status nothing_after(struct sync_state *state)
{
    (void)state;
    return REP_VALID;
}

/* Synchronised clocks, and the broadcast time the round-time start must stay ahead of. */
static void roundtime_prepare(struct sync_state *state, enum clock_algorithm clock)
{
    clock_synchronise(&state->clock, clock);
    double start = 0, sum = 0, slowest = 0;
    for (int i = 0; i < ROUNDTIME_BCAST_REPS; i++) {
        dissemination_barrier(state->comm);
        const double t0 = MPI_Wtime();
        MPI_CHECK(MPI_Bcast(&start, 1, MPI_DOUBLE, 0, state->comm));
        sum += MPI_Wtime() - t0;
    }
    const double mean = sum / ROUNDTIME_BCAST_REPS;
    MPI_CHECK(MPI_Allreduce(&mean, &slowest, 1, MPI_DOUBLE, MPI_MAX, state->comm));
    state->start_delay = ROUNDTIME_BCAST_MULTIPLIER * slowest;
}

/* Round-time start (Schuchart, Hunold & Bosilca, "Synchronizing MPI Processes in Space and
   Time", EuroMPI 2023, doi:10.1145/3615318.3615325; as ReproMPI's roundtime): after a barrier,
   rank 0 broadcasts a start time on the synchronised clock a few broadcast times ahead; every
   rank waits for it. A rank that receives it when the time has passed already starts late: the
   repetition is invalid. */
static enum rep_status roundtime_begin(struct sync_state *state)
{
    dissemination_barrier(state->comm);
    double start = 0;
    if (state->rank == 0)
        start = clock_now(&state->clock) + state->start_delay;
    MPI_CHECK(MPI_Bcast(&start, 1, MPI_DOUBLE, 0, state->comm));
    if (clock_now(&state->clock) >= start)
        return REP_LATE;
    /* Oversubscribed, yielding while waiting lets the ranks that share a processor with this one
       receive the start in time. Otherwise spin: a yield hands the processor to any other
       process of the machine, and getting it back can take a scheduler time slice. */
    while (clock_now(&state->clock) < start)
        if (state->oversubscribed)
            sched_yield();
    return REP_VALID;
}

static const struct sync_method methods[SYNC_COUNT] = {
    [SYNC_DISSEMINATION] = {"dissemination", CLOCK_NONE, NULL, 0, dissemination, dissemination},
    [SYNC_BARRIER] = {"barrier", CLOCK_NONE, NULL, 1, mpi_barrier, mpi_barrier},
    [SYNC_HCA3_ROUNDTIME] = {"hca3_roundtime", CLOCK_HCA3, roundtime_prepare, 1,
                             roundtime_begin, nothing_after},
    [SYNC_JK_ROUNDTIME] = {"jk_roundtime", CLOCK_JK, roundtime_prepare, 1, roundtime_begin,
                           nothing_after},
};

const struct sync_method *sync_method_get(enum sync_kind kind)
{
    return &methods[kind];
}

void sync_report_gather(const struct sync_state *state, const struct experiment *exp,
                        int invalid, struct sync_report *report)
{
    const struct sync_method *method = sync_method_get(exp->sync);
    *report = (struct sync_report){.method = method, .invalid = invalid};
    if (method->clock == CLOCK_NONE)
        return;
    const double slope = state->clock.slope < 0 ? -state->clock.slope : state->clock.slope;
    const int drifting = slope > 0;
    MPI_CHECK(MPI_Reduce(&slope, &report->max_abs_slope, 1, MPI_DOUBLE, MPI_MAX, 0,
                         state->comm));
    MPI_CHECK(MPI_Reduce(&drifting, &report->drifting_ranks, 1, MPI_INT, MPI_SUM, 0,
                         state->comm));
    report->start_delay = state->start_delay;
}
