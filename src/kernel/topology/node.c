#include "topology/node.h"

#include <stdlib.h>

#include "check.h"

void node_info_create(MPI_Comm world, int node_size, struct node_info *info)
{
    int rank, size;
    MPI_CHECK(MPI_Comm_rank(world, &rank));
    MPI_CHECK(MPI_Comm_size(world, &size));
    if (node_size > 0)
        MPI_CHECK(MPI_Comm_split(world, rank / node_size, rank, &info->node_comm));
    else
        MPI_CHECK(MPI_Comm_split_type(world, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL,
                                      &info->node_comm));
    MPI_CHECK(MPI_Comm_rank(info->node_comm, &info->node_rank));
    MPI_CHECK(MPI_Comm_size(info->node_comm, &info->node_size));
    int is_leader = info->node_rank == 0;
    MPI_CHECK(MPI_Comm_split(world, is_leader ? 0 : MPI_UNDEFINED, rank, &info->leader_comm));

    /* Number nodes by their lowest world rank: the leader's rank in leader_comm. */
    int index = 0;
    if (is_leader)
        MPI_CHECK(MPI_Comm_rank(info->leader_comm, &index));
    MPI_CHECK(MPI_Bcast(&index, 1, MPI_INT, 0, info->node_comm));
    info->node_index = index;
    info->node_of = xmalloc((size_t)size * sizeof *info->node_of);
    MPI_CHECK(MPI_Allgather(&index, 1, MPI_INT, info->node_of, 1, MPI_INT, world));
    info->node_count = 0;
    for (int r = 0; r < size; r++)
        if (info->node_of[r] + 1 > info->node_count)
            info->node_count = info->node_of[r] + 1;
    info->ranks_per_node = xcalloc((size_t)info->node_count, sizeof *info->ranks_per_node);
    for (int r = 0; r < size; r++)
        info->ranks_per_node[info->node_of[r]]++;
}

void node_info_free(struct node_info *info)
{
    if (info->leader_comm != MPI_COMM_NULL)
        MPI_CHECK(MPI_Comm_free(&info->leader_comm));
    MPI_CHECK(MPI_Comm_free(&info->node_comm));
    free(info->node_of);
    free(info->ranks_per_node);
}

void node_locality(const struct node_info *info, MPI_Comm comm, const int *destinations,
                   int outdegree, struct locality *out)
{
    MPI_Group comm_group, world_group;
    MPI_CHECK(MPI_Comm_group(comm, &comm_group));
    MPI_CHECK(MPI_Comm_group(MPI_COMM_WORLD, &world_group));
    int *world = xmalloc((size_t)outdegree * sizeof *world);
    /* MPI_PROC_NULL translates to MPI_PROC_NULL. */
    MPI_CHECK(MPI_Group_translate_ranks(comm_group, outdegree, destinations, world_group, world));
    int counts[2] = {0, 0}; /* on-node, off-node */
    for (int i = 0; i < outdegree; i++)
        if (world[i] != MPI_PROC_NULL)
            counts[info->node_of[world[i]] == info->node_index ? 0 : 1]++;
    free(world);
    MPI_CHECK(MPI_Group_free(&comm_group));
    MPI_CHECK(MPI_Group_free(&world_group));

    /* Over the world, whose rank 0 writes the provenance (comm's rank 0 may be another
       process when reorder moved ranks). */
    int mins[2], maxs[2], size;
    long long local_sums[2] = {counts[0], counts[1]}, sums[2];
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    MPI_CHECK(MPI_Reduce(counts, mins, 2, MPI_INT, MPI_MIN, 0, MPI_COMM_WORLD));
    MPI_CHECK(MPI_Reduce(counts, maxs, 2, MPI_INT, MPI_MAX, 0, MPI_COMM_WORLD));
    MPI_CHECK(MPI_Reduce(local_sums, sums, 2, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD));
    out->on_min = mins[0];
    out->off_min = mins[1];
    out->on_max = maxs[0];
    out->off_max = maxs[1];
    out->on_mean = (double)sums[0] / size;
    out->off_mean = (double)sums[1] / size;
}
