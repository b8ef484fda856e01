/* Where each rank runs: its host and the CPUs it may run on (sched_getaffinity), gathered to
   rank 0 for the provenance, so that a user can see why two launches differ (binding,
   placement). */
#ifndef MPIGUIDE_PLACEMENT_H
#define MPIGUIDE_PLACEMENT_H

#include <stdio.h>

#include <mpi.h>

/* CPUs numbered beyond this are not recorded (glibc's CPU_SETSIZE). */
#define PLACEMENT_MAX_CPUS 1024

struct rank_placement {
    char host[MPI_MAX_PROCESSOR_NAME];
    int affinity_known; /* 0: sched_getaffinity failed, cpus is empty */
    unsigned char cpus[PLACEMENT_MAX_CPUS / 8]; /* bit c of byte c/8: CPU c allowed */
};

/* Collective over MPI_COMM_WORLD: every rank's placement, indexed by rank, on rank 0 (NULL on
   the other ranks). The caller frees it. */
struct rank_placement *placement_gather(void);

/* Writes the JSON list [{"rank": R, "host": "...", "cpus": [C, ...]}, ...] (cpus null where the
   affinity is unknown). */
void placement_write_json(FILE *json, const struct rank_placement *ranks, int nprocs);

#endif
