/* Synchronised clocks: a linear model per rank that maps its MPI_Wtime onto rank 0's clock,
   learned from ping-pongs, by one of two published schemes:
   - HCA3 (Hunold & Carpen-Amarie, "Hierarchical Clock Synchronization in MPI", IEEE CLUSTER
     2018, pp. 325-336): in rounds along a binomial tree, a rank fits its local clock against a
     partner whose clock is already global, then re-measures the intercept;
   - JK (Jones & Koenig, "Clock synchronization in high-end computing environments: a strategy
     for minimizing clock variance at runtime", Concurrency Computat.: Pract. Exper. 25(6),
     2013): every rank fits its clock against rank 0's, rank 0 serving the ranks in turn.
   An offset sample is the ping-pong with the shortest round trip (Cristian, "Probabilistic
   clock synchronization", Distributed Computing 3(3), 1989). */
#ifndef MPIGUIDE_CLOCK_H
#define MPIGUIDE_CLOCK_H

#include <mpi.h>

/* Fit points per model, ping-pongs per fit point (the one with the shortest round trip counts,
   Cristian's rule), and the time between fit points, so that the fit spans a window long
   enough to resolve a drift. */
enum { CLOCK_FITPOINTS = 20, CLOCK_EXCHANGES = 10 };
#define CLOCK_FIT_SPACING 0.01
/* A fit point's offset is uncertain by half its round trip: points whose round trip exceeds
   this many times the shortest one of the fit (a rank descheduled meanwhile) are left out. */
#define CLOCK_RTT_FILTER 2.0
/* A fitted drift is kept only when it exceeds this many standard errors of the fit;
   otherwise the model is an offset only (on one node the clocks do not drift, and a slope
   fitted to noise would push the clocks apart within a long experiment). */
#define CLOCK_SLOPE_SIGNIFICANCE 3.0

enum clock_algorithm { CLOCK_NONE, CLOCK_HCA3, CLOCK_JK, CLOCK_ALGORITHM_COUNT };

struct clock_model {
    MPI_Comm comm;
    int rank, size;
    double origin;                /* MPI_Wtime when the run's clock was created */
    enum clock_algorithm learned; /* whose drifts the models hold (CLOCK_NONE: none yet) */
    double slope, intercept;      /* global = local + slope * local + intercept (0 on rank 0) */
};

/* A model that is the identity until clock_synchronise. comm: the kernel's synchronisation
   communicator (its own tag keeps the ping-pongs apart from the barriers). */
void clock_init(struct clock_model *clock, MPI_Comm comm);
/* Collective: learns every rank's drift by the algorithm (first call of the run with it) and
   re-measures every intercept (every call, e.g. once per experiment). */
void clock_synchronise(struct clock_model *clock, enum clock_algorithm algorithm);
/* "HCA3", "JK" (NULL for CLOCK_NONE). */
const char *clock_algorithm_name(enum clock_algorithm algorithm);
/* This rank's time on rank 0's clock, in seconds since rank 0's origin. */
double clock_global(const struct clock_model *clock, double wtime);
double clock_now(const struct clock_model *clock);

#endif
