#include "sync/clock.h"

#include <math.h> /* INFINITY, a macro */
#include <time.h>

#include "check.h"

/* Tag of the ping-pongs on the synchronisation communicator (DISSEMINATION_TAG differs). */
enum { CLOCK_TAG = 7412 };

void clock_init(struct clock_model *clock, MPI_Comm comm)
{
    clock->comm = comm;
    MPI_CHECK(MPI_Comm_rank(comm, &clock->rank));
    MPI_CHECK(MPI_Comm_size(comm, &clock->size));
    clock->origin = MPI_Wtime();
    clock->learned = CLOCK_NONE;
    clock->slope = clock->intercept = 0;
}

static double local_now(const struct clock_model *clock)
{
    return MPI_Wtime() - clock->origin;
}

double clock_global(const struct clock_model *clock, double wtime)
{
    const double local = wtime - clock->origin;
    return local + clock->slope * local + clock->intercept;
}

double clock_now(const struct clock_model *clock)
{
    return clock_global(clock, MPI_Wtime());
}

/* One offset sample: the client asks the reference for its global time CLOCK_EXCHANGES times
   and keeps the answer with the shortest round trip, taken to have arrived half-way. */
struct sample {
    double local, offset; /* client's local time, reference global time minus local */
    double rtt;           /* its round trip */
};

static void serve(const struct clock_model *clock, int client, int count)
{
    for (int i = 0; i < count; i++) {
        MPI_CHECK(MPI_Recv(NULL, 0, MPI_BYTE, client, CLOCK_TAG, clock->comm,
                           MPI_STATUS_IGNORE));
        double now = clock_now(clock);
        MPI_CHECK(MPI_Send(&now, 1, MPI_DOUBLE, client, CLOCK_TAG, clock->comm));
    }
}

static struct sample ask(const struct clock_model *clock, int reference)
{
    struct sample best = {0, 0, INFINITY};
    for (int i = 0; i < CLOCK_EXCHANGES; i++) {
        double reference_time;
        const double t1 = local_now(clock);
        MPI_CHECK(MPI_Send(NULL, 0, MPI_BYTE, reference, CLOCK_TAG, clock->comm));
        MPI_CHECK(MPI_Recv(&reference_time, 1, MPI_DOUBLE, reference, CLOCK_TAG, clock->comm,
                           MPI_STATUS_IGNORE));
        const double t2 = local_now(clock);
        if (t2 - t1 < best.rtt) {
            best.rtt = t2 - t1;
            best.local = (t1 + t2) / 2;
            best.offset = reference_time - best.local;
        }
    }
    return best;
}

/* Sleeps (the reference waits in MPI_Recv) until local time t. */
static void sleep_until(const struct clock_model *clock, double t)
{
    double left = t - local_now(clock);
    if (left <= 0)
        return;
    const time_t seconds = (time_t)left;
    struct timespec pause = {seconds, (long)((left - (double)seconds) * 1e9)};
    nanosleep(&pause, NULL);
}

/* Least squares of offset over local time, on the fit points whose round trip is within
   CLOCK_RTT_FILTER of the shortest; the slope only when it is significant. */
static void fit(const struct sample *all, int count, double *slope, double *intercept)
{
    double shortest = INFINITY;
    for (int i = 0; i < count; i++)
        if (all[i].rtt < shortest)
            shortest = all[i].rtt;
    struct sample s[CLOCK_FITPOINTS];
    int n = 0;
    for (int i = 0; i < count; i++)
        if (all[i].rtt <= CLOCK_RTT_FILTER * shortest)
            s[n++] = all[i];
    double mx = 0, my = 0;
    for (int i = 0; i < n; i++) {
        mx += s[i].local / n;
        my += s[i].offset / n;
    }
    double sxx = 0, sxy = 0;
    for (int i = 0; i < n; i++) {
        sxx += (s[i].local - mx) * (s[i].local - mx);
        sxy += (s[i].local - mx) * (s[i].offset - my);
    }
    double b = sxx > 0 ? sxy / sxx : 0, residuals = 0;
    for (int i = 0; i < n; i++) {
        double r = s[i].offset - my - b * (s[i].local - mx);
        residuals += r * r;
    }
    /* |b| > k * standard error, squared: b^2 > k^2 * residuals / (n - 2) / sxx. */
    const int significant = n > 2 && sxx > 0 &&
                            b * b * sxx * (n - 2) >
                                CLOCK_SLOPE_SIGNIFICANCE * CLOCK_SLOPE_SIGNIFICANCE * residuals;
    *slope = significant ? b : 0;
    *intercept = my - *slope * mx;
}

/* The client's side of learning its model against the reference's global clock: with
   fitpoints > 1 its drift and offset, with 1 its offset under the drift learned before. The
   reference serves fitpoints * CLOCK_EXCHANGES requests. */
static void measure_model(struct clock_model *clock, int reference, int fitpoints)
{
    struct sample samples[CLOCK_FITPOINTS];
    const double first = local_now(clock);
    for (int j = 0; j < fitpoints; j++) {
        if (j)
            sleep_until(clock, first + j * CLOCK_FIT_SPACING);
        samples[j] = ask(clock, reference);
    }
    if (fitpoints > 1)
        fit(samples, fitpoints, &clock->slope, &clock->intercept);
    else
        clock->intercept = samples[0].offset - clock->slope * samples[0].local;
}

static void learn(struct clock_model *clock, int reference, int client, int fitpoints)
{
    if (clock->rank == reference)
        serve(clock, client, fitpoints * CLOCK_EXCHANGES);
    else
        measure_model(clock, reference, fitpoints);
}

/* HCA3's tree: with 2^k the largest power of two <= size, in rounds i = k .. 1 each rank r <
   2^k with r % 2^i == 0 is the reference of r + 2^(i-1), whose clock is then global for the
   next rounds; finally each rank r >= 2^k learns from r - 2^k. */
static void hca3_tree(struct clock_model *clock, int fitpoints)
{
    const int rank = clock->rank, size = clock->size;
    int top = 1;
    while (top * 2 <= size)
        top *= 2;
    for (int span = top; span > 1; span /= 2) {
        const int half = span / 2;
        if (rank >= top)
            break;
        if (rank % span == 0 && rank + half < size)
            learn(clock, rank, rank + half, fitpoints);
        else if (rank % span == half)
            learn(clock, rank - half, rank, fitpoints);
    }
    if (rank >= top)
        learn(clock, rank - top, rank, fitpoints);
    else if (rank + top < size)
        learn(clock, rank, rank + top, fitpoints);
}

/* JK: rank 0 serves the fit points of every rank in turn (fit point j of rank 1, of rank 2,
   ..., then fit point j + 1), so the ranks' fits share one window. */
static void jk_star(struct clock_model *clock, int fitpoints)
{
    if (clock->rank != 0) {
        measure_model(clock, 0, fitpoints);
        return;
    }
    for (int j = 0; j < fitpoints; j++)
        for (int client = 1; client < clock->size; client++)
            serve(clock, client, CLOCK_EXCHANGES);
}

static void synchronise_by(struct clock_model *clock, enum clock_algorithm algorithm,
                           int fitpoints)
{
    if (algorithm == CLOCK_JK)
        jk_star(clock, fitpoints);
    else
        hca3_tree(clock, fitpoints);
}

void clock_synchronise(struct clock_model *clock, enum clock_algorithm algorithm)
{
    if (clock->learned != algorithm) {
        synchronise_by(clock, algorithm, CLOCK_FITPOINTS);
        clock->learned = algorithm;
    }
    synchronise_by(clock, algorithm, 1);
}

const char *clock_algorithm_name(enum clock_algorithm algorithm)
{
    static const char *const names[CLOCK_ALGORITHM_COUNT] = {NULL, "HCA3", "JK"};
    return names[algorithm];
}
