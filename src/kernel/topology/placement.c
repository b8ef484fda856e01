/* sched_getaffinity and the CPU_* macros are GNU extensions. */
#define _GNU_SOURCE
#include "topology/placement.h"

#include <sched.h>
#include <string.h>

#include "check.h"
#include "io/json.h"

struct rank_placement *placement_gather(void)
{
    int rank, size, length;
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    struct rank_placement mine;
    memset(&mine, 0, sizeof mine);
    MPI_CHECK(MPI_Get_processor_name(mine.host, &length));
    cpu_set_t set;
    CPU_ZERO(&set);
    mine.affinity_known = sched_getaffinity(0, sizeof set, &set) == 0;
    for (int cpu = 0; mine.affinity_known && cpu < PLACEMENT_MAX_CPUS && cpu < CPU_SETSIZE; cpu++)
        if (CPU_ISSET(cpu, &set))
            mine.cpus[cpu / 8] |= (unsigned char)(1u << (cpu % 8));
    struct rank_placement *all = rank == 0 ? xcalloc((size_t)size, sizeof *all) : NULL;
    MPI_CHECK(MPI_Gather(&mine, (int)sizeof mine, MPI_BYTE, all, (int)sizeof mine, MPI_BYTE, 0,
                         MPI_COMM_WORLD));
    return all;
}

void placement_write_json(FILE *json, const struct rank_placement *ranks, int nprocs)
{
    fputc('[', json);
    for (int r = 0; r < nprocs; r++) {
        fprintf(json, "%s{\"rank\": %d, \"host\": ", r ? ", " : "", r);
        json_string(json, ranks[r].host);
        fputs(", \"cpus\": ", json);
        if (!ranks[r].affinity_known) {
            fputs("null}", json);
            continue;
        }
        fputc('[', json);
        for (int cpu = 0, first = 1; cpu < PLACEMENT_MAX_CPUS; cpu++)
            if (ranks[r].cpus[cpu / 8] & (1u << (cpu % 8))) {
                fprintf(json, "%s%d", first ? "" : ", ", cpu);
                first = 0;
            }
        fputs("]}", json);
    }
    fputc(']', json);
}
