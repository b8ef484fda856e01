/* Constructors nodecart and nodecart_greedy: the node-aware Cartesian topology of Gropp, "Using
   node information to implement MPI Cartesian topologies" (EuroMPI 2018); they differ only in
   how the node size is factored into a box of the grid. */
#ifndef MPIGUIDE_NODECART_H
#define MPIGUIDE_NODECART_H

#include <mpi.h>

#include "topology/topology.h"

/* Why the experiment's nodecart falls back to MPI_Cart_create (with its reorder flag): nodes
   differ in size, no box fits, or reorder is 0; NULL when the node-aware mapping applies.
   Local: uses the node information of topo->node. */
const char *nodecart_fallback(const struct topology *topo);

/* The node size factored into intradims[d] dividing dims[d] (product = node size), choosing
   the box with the fewest faces (sum of node_size / intradims[d]); returns -1 if none exists. */
int nodecart_intradims(int ndims, const int dims[], int node_size, int intradims[]);

/* The same by Gropp's §2.1 steps 1-5: each prime factor of node_size, largest first, goes to
   the dimension whose remaining size it divides and is largest (on a tie the last such
   dimension), dividing that remaining size; returns -1 if a factor divides none. */
int nodecart_greedy_intradims(int ndims, const int dims[], int node_size, int intradims[]);

/* Creates the Cartesian communicator: every node holds an intradims box of the grid, nodes
   placed on the grid of interdims = dims / intradims, both in row-major order; the new rank is
   the row-major rank of the coordinates. Collective over world. */
void nodecart_create(const struct topology *topo, MPI_Comm world, MPI_Comm *out);

#endif
