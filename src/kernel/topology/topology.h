/* Virtual topologies: cart, von Neumann / Moore neighbourhoods, the full graph. */
#ifndef MPIGUIDE_TOPOLOGY_H
#define MPIGUIDE_TOPOLOGY_H

#include <stdio.h>

#include <mpi.h>

#include "experiment.h"
#include "kernel_limits.h"
#include "topology/node.h"

/* Neighbour lists in the ranks of a topology communicator, in the order the neighbourhood
   collectives use. Cartesian lists hold MPI_PROC_NULL across non-periodic borders. */
struct neighbours {
    int indegree, outdegree;
    int *sources, *destinations;
};

struct topology {
    enum topology_kind kind;
    enum constructor constructor;
    int reorder;
    int ndims;
    int dims[MAX_DIMS];
    int periods[MAX_DIMS];
    /* Constructor input in world ranks (graphs): this rank's planned edge lists. */
    struct neighbours plan;
    MPI_Comm comm;         /* the experiment's communicator */
    struct neighbours nb;  /* queried from comm */
    int reordered;         /* 1 if comm's rank order differs from world's */
    const struct node_info *node; /* for node-aware constructors */
    const char *note;      /* static text for the provenance (nodecart's fallback), or NULL */
};

/* Upper bound of a rank's neighbours for the experiment (validation, before anything is built). */
long long topology_max_degree(const struct experiment *exp, int nprocs);

/* Plans the experiment's topology (dims, edge lists) and creates its communicator. */
void topology_create(const struct experiment *exp, MPI_Comm world, const struct node_info *node,
                     struct topology *topo);
/* The constructor call alone, with the planned lists (what topo_create times). */
void topology_construct(const struct topology *topo, MPI_Comm world, MPI_Comm *out);
void topology_free(struct topology *topo);

/* --dump-topology: world rank 0 prints one TSV line per rank of comm, in comm's rank order:
   exp_id, rank (in comm), world rank, sources, destinations (comma-separated ranks of comm,
   "null" for MPI_PROC_NULL). Collective over MPI_COMM_WORLD, which comm must span. */
void topology_dump(FILE *out, const struct experiment *exp, const struct topology *topo);

#endif
