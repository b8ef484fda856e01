/* Which ranks share a node: MPI_Comm_split_type(SHARED), or blocks of --node-size ranks. */
#ifndef MPIGUIDE_NODE_H
#define MPIGUIDE_NODE_H

#include <mpi.h>

struct node_info {
    MPI_Comm node_comm;   /* the ranks of this node */
    MPI_Comm leader_comm; /* rank 0 of every node; MPI_COMM_NULL on the other ranks */
    int node_count;       /* nodes */
    int node_index;       /* this rank's node, 0 .. node_count-1, numbered by lowest world rank */
    int node_rank, node_size;
    int *node_of;         /* node index of every world rank */
    int *ranks_per_node;  /* node_count entries */
};

/* node_size 0: MPI_COMM_TYPE_SHARED; K > 0: world ranks i*K .. i*K+K-1 form node i. */
void node_info_create(MPI_Comm world, int node_size, struct node_info *info);
void node_info_free(struct node_info *info);

/* On-node and off-node destinations of every rank: min, max and mean over ranks (on rank 0). */
struct locality {
    int on_min, on_max, off_min, off_max;
    double on_mean, off_mean;
};
/* destinations: ranks in comm (MPI_PROC_NULL skipped). Collective over MPI_COMM_WORLD, which
   comm must span; the result is on world rank 0. */
void node_locality(const struct node_info *info, MPI_Comm comm, const int *destinations,
                   int outdegree, struct locality *out);

#endif
