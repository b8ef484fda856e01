/* OUTPUT.csv (rows streamed per experiment) and OUTPUT.json (provenance), on rank 0, both
   under temporary names until output_commit renames them. */
#ifndef MPIGUIDE_OUTPUT_H
#define MPIGUIDE_OUTPUT_H

#include <stdio.h>

#include "algorithm/algorithm.h"
#include "buffers.h"
#include "experiment.h"
#include "heap.h"
#include "measure.h"
#include "topology/node.h"
#include "topology/placement.h"
#include "topology/topology.h"

struct output {
    char *csv_path, *csv_tmp, *json_path, *json_tmp;
    FILE *csv, *json;
    int experiments_written;
    int status_columns;
    int json_renamed; /* output_commit renamed the JSON into place (the CSV not yet) */
};

/* What the provenance records about the run as a whole. */
struct run_info {
    int argc;
    char **argv;
    const char *input_path;
    const char *input_sha256; /* of the bytes validated, 64 hex digits */
    int nprocs;
    const struct node_info *node;
    int node_size_option; /* --node-size, 0 if MPI_COMM_TYPE_SHARED */
    char **hosts;         /* host name of each node */
    int verify;
    enum heap_setting heap; /* --heap, applied before MPI_Init */
    int status_columns; /* OUTPUT.csv has the columns status and global_s */
    const struct rank_placement *ranks; /* host and CPU affinity of each rank */
    const struct algorithm_set *algorithms; /* the algorithms the experiments force */
};

/* OUTPUT.json beside OUTPUT.csv: the .csv suffix replaced, or .json appended (malloc'ed). */
char *output_json_path(const char *csv_path);
/* Creates the temporary files and writes the JSON head. Returns 0, or -1 with a message. */
int output_open(struct output *out, const char *csv_path, const struct run_info *info);
/* One experiment, or one chunk of it: rows exp_id,rep,time_s (and status,global_s when the
   file has them), rep numbered from m->first_rep, and its provenance entry. topo/loc NULL:
   none. */
void output_experiment(struct output *out, const struct experiment *exp, const char *op_name,
                       const struct measurement *m, const struct topology *topo,
                       const struct locality *loc, const struct buffer_report *buffers,
                       const struct sync_report *sync);
/* Finishes the JSON (with output_sha256, the digest of the CSV as written) and renames both
   files into place. A failed write (output_experiment
   too) or rename removes every file of the run and aborts (exit 1). */
void output_commit(struct output *out);
/* Removes the temporary files (after a failure). */
void output_abandon(struct output *out);

#endif
