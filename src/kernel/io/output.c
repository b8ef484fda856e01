#include "io/output.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <mpi.h>

#include "check.h"
#include "heap.h"
#include "io/json.h"
#include "io/sha256.h"

static void release(struct output *out);
/* After a failed write or rename: removes every file of the run (output_abandon) and aborts
   with exit 1, so that no partial file is left under a temporary or final name. */
static _Noreturn void fail_removing(struct output *out, const char *action, const char *path,
                                    int err);

static char *concat(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    char *s = xmalloc(la + lb + 1);
    memcpy(s, a, la);
    memcpy(s + la, b, lb + 1);
    return s;
}

char *output_json_path(const char *csv_path)
{
    size_t n = strlen(csv_path);
    if (n >= 4 && strcmp(csv_path + n - 4, ".csv") == 0) {
        char *stem = xmalloc(n - 3);
        memcpy(stem, csv_path, n - 4);
        stem[n - 4] = '\0';
        char *path = concat(stem, ".json");
        free(stem);
        return path;
    }
    return concat(csv_path, ".json");
}

static void utc_now(char buf[32])
{
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(buf, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static void json_env(FILE *json, const char *key, const char *name)
{
    const char *value = getenv(name);
    fputs(",\n  ", json);
    json_key(json, key);
    if (value)
        json_string(json, value);
    else
        fputs("null", json);
}

static void write_head(FILE *json, const struct run_info *info)
{
    char version[MPI_MAX_LIBRARY_VERSION_STRING], now[32];
    int length, major, minor;
    MPI_CHECK(MPI_Get_library_version(version, &length));
    MPI_CHECK(MPI_Get_version(&major, &minor));
    utc_now(now);
    const struct node_info *node = info->node;

    fputs("{\n  ", json);
    json_key(json, "kernel_version");
    json_string(json, KERNEL_VERSION);
    fputs(",\n  ", json);
    json_key(json, "mpi_library_version");
    json_string(json, version);
    fprintf(json, ",\n  \"mpi_standard_version\": \"%d.%d\"", major, minor);
    fputs(",\n  ", json);
    json_key(json, "command_line");
    fputc('[', json);
    for (int i = 0; i < info->argc; i++) {
        if (i)
            fputs(", ", json);
        json_string(json, info->argv[i]);
    }
    fputc(']', json);
    fputs(",\n  ", json);
    json_key(json, "input");
    json_string(json, info->input_path);
    fprintf(json, ",\n  \"input_sha256\": \"%s\"", info->input_sha256);
    fprintf(json, ",\n  \"nprocs\": %d,\n  \"nodes\": %d", info->nprocs, node->node_count);
    int uniform = 1;
    for (int n = 1; n < node->node_count; n++)
        uniform &= node->ranks_per_node[n] == node->ranks_per_node[0];
    if (uniform)
        fprintf(json, ",\n  \"processes_per_node\": %d", node->ranks_per_node[0]);
    else
        fputs(",\n  \"processes_per_node\": null", json);
    fputs(",\n  \"ranks_per_node\": [", json);
    for (int n = 0; n < node->node_count; n++)
        fprintf(json, "%s%d", n ? ", " : "", node->ranks_per_node[n]);
    fputs("],\n  \"node_detection\": ", json);
    if (info->node_size_option)
        fprintf(json, "\"--node-size %d\"", info->node_size_option);
    else
        fputs("\"MPI_COMM_TYPE_SHARED\"", json);
    fputs(",\n  \"hosts\": [", json);
    for (int n = 0; n < node->node_count; n++) {
        if (n)
            fputs(", ", json);
        json_string(json, info->hosts[n]);
    }
    fputs("],\n  \"ranks\": ", json);
    placement_write_json(json, info->ranks, info->nprocs);
    fprintf(json, ",\n  \"wtick\": %.9g,\n  \"wtime_is_global\": ", MPI_Wtick());
    int *global = NULL, flag = 0;
    MPI_CHECK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_WTIME_IS_GLOBAL, &global, &flag));
    fputs(flag && *global ? "true" : "false", json);
    fprintf(json, ",\n  \"verify\": %s,\n  ", info->verify ? "true" : "false");
    heap_write_json(json, info->heap);
    algorithm_write_json(json, info->algorithms);
    json_env(json, "slurm_job_id", "SLURM_JOB_ID");
    json_env(json, "slurm_job_nodelist", "SLURM_JOB_NODELIST");
    fprintf(json, ",\n  \"start_time\": \"%s\",\n  \"experiments\": [", now);
}

int output_open(struct output *out, const char *csv_path, const struct run_info *info)
{
    char suffix[32];
    memset(out, 0, sizeof *out);
    snprintf(suffix, sizeof suffix, ".tmp-%ld", (long)getpid());
    out->csv_path = concat(csv_path, "");
    out->csv_tmp = concat(csv_path, suffix);
    out->json_path = output_json_path(csv_path);
    out->json_tmp = concat(out->json_path, suffix);
    out->csv = fopen(out->csv_tmp, "w");
    if (out->csv)
        out->json = fopen(out->json_tmp, "w");
    if (!out->csv || !out->json) {
        fail_say("cannot create %s: %s", out->csv ? out->json_tmp : out->csv_tmp,
                 strerror(errno));
        output_abandon(out);
        return -1;
    }
    out->status_columns = info->status_columns;
    fputs(out->status_columns ? "exp_id,rep,time_s,status,global_s\n" : "exp_id,rep,time_s\n",
          out->csv);
    write_head(out->json, info);
    return 0;
}

static void write_rows(struct output *out, const struct experiment *exp,
                       const struct measurement *m)
{
    for (int i = 0; i < m->reps; i++) {
        fprintf(out->csv, "%lld,%d,%.9e", (long long)exp->exp_id, m->first_rep + i,
                m->time_s[i]);
        if (!out->status_columns) {
            fputc('\n', out->csv);
            continue;
        }
        fprintf(out->csv, ",%s,", rep_status_name((enum rep_status)m->status[i]));
        if (m->global_s)
            fprintf(out->csv, "%.9e", m->global_s[i]);
        fputc('\n', out->csv);
    }
}

static void write_buffers(FILE *json, const struct buffer_report *b)
{
    fprintf(json,
            ", \"buffers\": {\"allocation\": \"mmap\", \"page_size\": %llu, \"offset\": %llu, "
            "\"allocations\": %llu, \"largest_rank_bytes\": %llu, ",
            b->page_size, b->offset, b->allocations, b->largest_rank_bytes);
    if (b->any)
        fprintf(json, "\"min_page_offset\": %llu, \"max_page_offset\": %llu}",
                b->min_page_offset, b->max_page_offset);
    else
        fputs("\"min_page_offset\": null, \"max_page_offset\": null}", json);
}

static void write_sync(FILE *json, const struct sync_report *r)
{
    fputs(", \"sync\": {\"method\": ", json);
    json_string(json, r->method->name);
    fprintf(json, ", \"invalid\": %d", r->invalid);
    if (r->method->clock != CLOCK_NONE)
        fprintf(json,
                ", \"clock\": \"%s\", \"fitpoints\": %d, \"exchanges\": %d, "
                "\"fit_spacing_s\": %.9g, \"rtt_filter\": %.9g, \"slope_significance\": %.9g, "
                "\"start\": \"roundtime\", \"start_delay_s\": %.9g, \"max_abs_slope\": %.9g, "
                "\"drifting_ranks\": %d",
                clock_algorithm_name(r->method->clock), CLOCK_FITPOINTS, CLOCK_EXCHANGES,
                CLOCK_FIT_SPACING, CLOCK_RTT_FILTER, CLOCK_SLOPE_SIGNIFICANCE, r->start_delay,
                r->max_abs_slope, r->drifting_ranks);
    fputc('}', json);
}

void output_experiment(struct output *out, const struct experiment *exp, const char *op_name,
                       const struct measurement *m, const struct topology *topo,
                       const struct locality *loc, const struct buffer_report *buffers,
                       const struct sync_report *sync)
{
    const int reps = m->reps;
    write_rows(out, exp, m);

    FILE *json = out->json;
    fprintf(json, "%s\n    {\"exp_id\": %lld, \"op\": ", out->experiments_written++ ? "," : "",
            (long long)exp->exp_id);
    json_string(json, op_name);
    fprintf(json, ", \"nrep\": %d, \"reps_done\": %d, ", exp->nrep, reps);
    /* Only an interleaved experiment has chunks: one chunk's entry is as it always was. */
    if (exp->interleave > 1)
        fprintf(json, "\"interleave\": %d, \"chunk\": %d, \"first_rep\": %d, ",
                exp->interleave, exp->chunk, m->first_rep);
    /* Likewise an experiment without warm-up repetitions, or without a forced algorithm. */
    if (exp->warmup > 0)
        fprintf(json, "\"warmup\": %d, ", exp->warmup);
    if (exp->algorithm[0]) {
        fputs("\"algorithm\": ", json);
        json_string(json, exp->algorithm);
        /* An untuned experiment writes no control variable. */
        if (algorithm_forced(exp))
            fprintf(json, ", \"algorithm_value\": %d", exp->algorithm_value);
        fputs(", ", json);
    }
    fputs("\"dims\": ", json);
    if (topo && topo->ndims > 0) {
        fputc('[', json);
        for (int d = 0; d < topo->ndims; d++)
            fprintf(json, "%s%d", d ? ", " : "", topo->dims[d]);
        fputc(']', json);
    } else {
        fputs("null", json);
    }
    fputs(", \"reorder_changed\": ", json);
    fputs(!topo ? "null" : topo->reordered ? "true" : "false", json);
    fputs(", \"constructor_note\": ", json);
    if (topo && topo->note)
        json_string(json, topo->note);
    else
        fputs("null", json);
    fputs(", \"neighbours\": ", json);
    if (loc)
        fprintf(json,
                "{\"on_node\": {\"min\": %d, \"max\": %d, \"mean\": %.6g}, "
                "\"off_node\": {\"min\": %d, \"max\": %d, \"mean\": %.6g}}",
                loc->on_min, loc->on_max, loc->on_mean, loc->off_min, loc->off_max,
                loc->off_mean);
    else
        fputs("null", json);
    write_buffers(json, buffers);
    write_sync(json, sync);
    fprintf(json,
            ", \"page_faults\": {\"minor_max\": %llu, \"minor_sum\": %llu, \"major_max\": %llu, "
            "\"major_sum\": %llu}, \"mmapped_allocations_max\": %llu",
            m->minor_faults_max, m->minor_faults_sum, m->major_faults_max, m->major_faults_sum,
            m->mmapped_allocations_max);
    fputc('}', json);
    /* A full or failing disk shows here within a stdio buffer, not only after the last
       experiment of a run that may take hours. */
    if (ferror(out->csv))
        fail_removing(out, "write", out->csv_tmp, errno);
    if (ferror(out->json))
        fail_removing(out, "write", out->json_tmp, errno);
}

/* Flushes *f to the disk and closes it. Returns 0 or an errno value; *f is NULL afterwards
   either way, so that output_abandon never closes it twice. */
static int close_durably(FILE **f)
{
    int err = 0;
    if (ferror(*f) || fflush(*f) != 0 || fsync(fileno(*f)) != 0)
        err = errno ? errno : EIO;
    if (fclose(*f) != 0 && err == 0)
        err = errno;
    *f = NULL;
    return err;
}

/* SHA-256 of a file's bytes as they are on the disk. Returns 0 or an errno value. */
static int hash_file(const char *path, char hex[65])
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return errno;
    struct sha256 hash;
    sha256_init(&hash);
    unsigned char buffer[1 << 16];
    size_t n;
    while ((n = fread(buffer, 1, sizeof buffer, f)) > 0)
        sha256_update(&hash, buffer, n);
    int err = ferror(f) ? (errno ? errno : EIO) : 0;
    fclose(f);
    sha256_hex(&hash, hex);
    return err;
}

void output_commit(struct output *out)
{
    char now[32], csv_sha256[65];
    utc_now(now);
    int err;
    /* The CSV is complete and on the disk before it is hashed: the digest is of the bytes a
       reader will find (aggregation refuses a file that no longer hashes to it). */
    if ((err = close_durably(&out->csv)) != 0)
        fail_removing(out, "write", out->csv_tmp, err);
    if ((err = hash_file(out->csv_tmp, csv_sha256)) != 0)
        fail_removing(out, "read back", out->csv_tmp, err);
    fprintf(out->json, "\n  ],\n  \"output_sha256\": \"%s\",\n  \"end_time\": \"%s\"\n}\n",
            csv_sha256, now);
    if ((err = close_durably(&out->json)) != 0)
        fail_removing(out, "write", out->json_tmp, err);
    /* The CSV last: its presence means the run is complete. */
    if (rename(out->json_tmp, out->json_path) != 0)
        fail_removing(out, "rename to", out->json_path, errno);
    out->json_renamed = 1;
    if (rename(out->csv_tmp, out->csv_path) != 0)
        fail_removing(out, "rename to", out->csv_path, errno);
    release(out);
}

/* Removes whatever this run wrote: both temporary files, and the JSON when it already has its
   final name (without the CSV it describes nothing). unlink of a missing file is harmless. */
void output_abandon(struct output *out)
{
    if (out->csv)
        fclose(out->csv);
    if (out->json)
        fclose(out->json);
    if (out->csv_tmp)
        unlink(out->csv_tmp);
    if (out->json_tmp)
        unlink(out->json_tmp);
    if (out->json_renamed)
        unlink(out->json_path);
    release(out);
}

static _Noreturn void fail_removing(struct output *out, const char *action, const char *path,
                                    int err)
{
    char message[PATH_MAX + 256];
    snprintf(message, sizeof message, "cannot %s %s: %s", action, path,
             strerror(err ? err : EIO));
    output_abandon(out);
    fail_abort("%s", message);
}

static void release(struct output *out)
{
    free(out->csv_path);
    free(out->csv_tmp);
    free(out->json_path);
    free(out->json_tmp);
    memset(out, 0, sizeof *out);
}
