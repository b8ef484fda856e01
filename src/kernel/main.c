/* mpiguide-bench: command line and the run of all experiments (docs/kernel.md). */
#include <errno.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <mpi.h>

#include "algorithm/algorithm.h"
#include "check.h"
#include "crash.h"
#include "heap.h"
#include "io/input.h"
#include "io/output.h"
#include "kernel_limits.h"
#include "library_check.h"
#include "measure.h"
#include "ops/op_context.h"
#include "ops/op_table.h"
#include "topology/node.h"
#include "topology/topology.h"

static const char usage_text[] =
    "usage: mpiguide-bench [options] INPUT.csv OUTPUT.csv   (started by mpirun/srun)\n"
    "       mpiguide-bench --dump-topology [options] INPUT.csv\n"
    "       mpiguide-bench --list-ops | --list-params | --list-limits\n"
    "       mpiguide-bench --list-algorithms   (MPI started: a singleton or under the launcher)\n"
    "options:\n"
    "  --nprocs N       fail unless MPI_COMM_WORLD has N ranks\n"
    "  --verify         run every experiment once on patterned data and check it first\n"
    "  --node-size K    treat each K consecutive ranks as one node (default: shared memory)\n"
    "  --heap SETTING   the allocator for the whole launch: default (glibc's own, adapting to\n"
    "                   what was allocated before) or fixed (no allocation mapped on its own,\n"
    "                   nothing returned, a touched reserve)\n"
    "  --dump-topology  print every rank's neighbour lists instead of measuring\n"
    "  --list-ops       print the operation table (TSV) and exit\n"
    "  --list-params    print the input's columns, defaults and applicability (TSV) and exit\n"
    "  --list-limits    print the kernel's limits on its command line and input (TSV) and exit\n"
    "  --list-algorithms  print the library's algorithms of each collective (TSV) and exit\n"
    "  --help           print this text\n";

struct options {
    int nprocs, node_size, verify, dump_topology, list_ops, list_params, list_limits,
        list_algorithms, help;
    enum heap_setting heap;
    const char *input, *output;
    char error[2 * PATH_MAX + 256]; /* room for the two paths a message may name */
};

/* Whether `arg` spells the long option `name` out in full ("--name" or "--name=..."):
   getopt_long also takes unique prefixes, which the kernel refuses. */
static int spelled_out(const char *arg, const char *name)
{
    size_t len = strlen(name);
    return strncmp(arg, "--", 2) == 0 && strncmp(arg + 2, name, len) == 0 &&
           (arg[2 + len] == '\0' || arg[2 + len] == '=');
}

/* A positive int (up to MAX_RANKS) for the option `name`. */
static int parse_count(const char *name, const char *value, int *out, struct options *opt)
{
    char *end;
    errno = 0;
    long v = strtol(value, &end, 10);
    if (value[0] == '\0' || *end != '\0' || errno == ERANGE || v < 1 || v > MAX_RANKS) {
        snprintf(opt->error, sizeof opt->error, "%s: '%s' is not a positive integer", name,
                 value);
        return -1;
    }
    *out = (int)v;
    return 0;
}

enum { OPT_POSITIONAL = 1, OPT_NPROCS = 256, OPT_NODE_SIZE, OPT_HEAP };

/* Options and arguments in any order; "--name value" and "--name=value" alike. */
static int parse_options(int argc, char **argv, struct options *opt)
{
    memset(opt, 0, sizeof *opt);
    const struct option long_options[] = {
        {"nprocs", required_argument, NULL, OPT_NPROCS},
        {"node-size", required_argument, NULL, OPT_NODE_SIZE},
        {"heap", required_argument, NULL, OPT_HEAP},
        {"verify", no_argument, &opt->verify, 1},
        {"dump-topology", no_argument, &opt->dump_topology, 1},
        {"list-ops", no_argument, &opt->list_ops, 1},
        {"list-params", no_argument, &opt->list_params, 1},
        {"list-limits", no_argument, &opt->list_limits, 1},
        {"list-algorithms", no_argument, &opt->list_algorithms, 1},
        {"help", no_argument, &opt->help, 1},
        {NULL, 0, NULL, 0},
    };
    const char *positional[2];
    int npositional = 0;
    /* "-": every argument in order, none moved, returned as OPT_POSITIONAL; ":": a missing value
       is told apart from an unknown option. The messages are the kernel's own. */
    opterr = 0;
    for (;;) {
        const int at = optind;
        int index = -1;
        const int code = getopt_long(argc, argv, "-:h", long_options, &index);
        if (code == -1) {
            /* getopt_long stops early only at "--", which the kernel does not know. */
            if (at < argc) {
                snprintf(opt->error, sizeof opt->error, "unknown option '%s'", argv[at]);
                return -1;
            }
            break;
        }
        if (code == OPT_POSITIONAL) {
            if (npositional == 2) {
                snprintf(opt->error, sizeof opt->error, "unexpected argument '%s'", optarg);
                return -1;
            }
            positional[npositional++] = optarg;
            continue;
        }
        /* A missing value leaves index unset: the option is the one whose code optopt holds. */
        for (int o = 0; code == ':' && long_options[o].name; o++)
            if (long_options[o].val == optopt)
                index = o;
        const int known = code == 'h' ? strcmp(argv[at], "-h") == 0
                                       : index >= 0 && spelled_out(argv[at],
                                                                   long_options[index].name);
        if (code == '?' || !known) {
            snprintf(opt->error, sizeof opt->error, "unknown option '%s'", argv[at]);
            return -1;
        }
        if (code == ':') {
            snprintf(opt->error, sizeof opt->error, "%s needs a value%s", argv[at],
                     optopt == OPT_HEAP ? " (default or fixed)" : "");
            return -1;
        }
        if (code == 'h')
            opt->help = 1;
        else if (code == OPT_NPROCS && parse_count("--nprocs", optarg, &opt->nprocs, opt) != 0)
            return -1;
        else if (code == OPT_NODE_SIZE &&
                 parse_count("--node-size", optarg, &opt->node_size, opt) != 0)
            return -1;
        else if (code == OPT_HEAP && heap_setting_parse(optarg, &opt->heap) != 0) {
            snprintf(opt->error, sizeof opt->error,
                     "--heap: '%s' is not a heap setting; allowed: default, fixed", optarg);
            return -1;
        }
    }
    if (opt->list_ops || opt->list_params || opt->list_limits || opt->list_algorithms ||
        opt->help)
        return 0;
    int wanted = opt->dump_topology ? 1 : 2;
    if (npositional != wanted) {
        snprintf(opt->error, sizeof opt->error, "expected %s, got %d argument%s",
                 wanted == 1 ? "INPUT.csv" : "INPUT.csv and OUTPUT.csv", npositional,
                 npositional == 1 ? "" : "s");
        return -1;
    }
    opt->input = positional[0];
    opt->output = wanted == 2 ? positional[1] : NULL;
    return 0;
}

/* Whether OUTPUT.csv and its OUTPUT.json can be written without destroying INPUT.csv: checked
   before any measurement, so that a run of hours never ends in a path it cannot write.
   Returns 0, or -1 with the reason in opt->error. */
static int check_output_path(struct options *opt)
{
    const char *out = opt->output;
    size_t n = strlen(out);
    if (n == 0 || out[n - 1] == '/') {
        snprintf(opt->error, sizeof opt->error, "OUTPUT.csv '%s' is not a file name", out);
        return -1;
    }
    struct stat in_stat, out_stat;
    int have_input = stat(opt->input, &in_stat) == 0;
    char *json = output_json_path(out);
    const char *paths[2] = {out, json};
    int status = 0;
    for (int i = 0; i < 2 && status == 0; i++) {
        if (stat(paths[i], &out_stat) != 0)
            continue;
        if (S_ISDIR(out_stat.st_mode)) {
            snprintf(opt->error, sizeof opt->error, "output '%s' is a directory", paths[i]);
            status = -1;
        } else if (have_input && out_stat.st_dev == in_stat.st_dev &&
                   out_stat.st_ino == in_stat.st_ino) {
            snprintf(opt->error, sizeof opt->error,
                     "output '%s' is the input '%s'; writing it would destroy the input",
                     paths[i], opt->input);
            status = -1;
        }
    }
    free(json);
    if (status != 0)
        return status;
    char *copy = strdup(out);
    if (!copy) {
        snprintf(opt->error, sizeof opt->error, "out of memory");
        return -1;
    }
    const char *parent = dirname(copy);
    struct stat dir_stat;
    if (stat(parent, &dir_stat) != 0 || !S_ISDIR(dir_stat.st_mode)) {
        snprintf(opt->error, sizeof opt->error, "cannot write '%s': directory '%s' does not exist",
                 out, parent);
        status = -1;
    } else if (access(parent, W_OK | X_OK) != 0) {
        snprintf(opt->error, sizeof opt->error, "cannot write '%s': directory '%s': %s", out,
                 parent, strerror(errno));
        status = -1;
    }
    free(copy);
    return status;
}

/* Rank 0's status, shared so that every rank takes the same way out. */
static int agree(int status)
{
    MPI_CHECK(MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD));
    return status;
}

/* Rank 0 reads and validates (and hashes the input) for this run's ranks and nodes; the
   others receive the experiments. Returns 0 or -1. */
static int load_experiments(const char *path, const struct node_info *node,
                            struct experiment **exps, size_t *count, char digest_hex[65])
{
    int rank, size;
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    struct run_shape shape = {.nprocs = size, .largest_node = 0, .equal_nodes = 1};
    for (int n = 0; n < node->node_count; n++) {
        if (node->ranks_per_node[n] > shape.largest_node)
            shape.largest_node = node->ranks_per_node[n];
        shape.equal_nodes &= node->ranks_per_node[n] == node->ranks_per_node[0];
    }
    int status = rank == 0 ? input_read(path, &shape, exps, count, digest_hex) : 0;
    if (agree(status) != 0)
        return -1;
    unsigned long long n = *count;
    MPI_CHECK(MPI_Bcast(&n, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD));
    if (rank != 0)
        *exps = xmalloc((size_t)n * sizeof **exps);
    *count = (size_t)n;
    /* In pieces: a count is an int. */
    const size_t piece = (size_t)1 << 30;
    unsigned char *bytes = (unsigned char *)*exps;
    for (size_t done = 0, total = *count * sizeof **exps; done < total; done += piece) {
        size_t len = total - done < piece ? total - done : piece;
        MPI_CHECK(MPI_Bcast(bytes + done, (int)len, MPI_BYTE, 0, MPI_COMM_WORLD));
    }
    return 0;
}

/* Host name of every node (its leader's), on rank 0. */
static char **node_hosts(const struct node_info *node)
{
    int rank, size, length;
    char name[MPI_MAX_PROCESSOR_NAME] = "";
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    MPI_CHECK(MPI_Get_processor_name(name, &length));
    char *all = rank == 0 ? xmalloc((size_t)size * MPI_MAX_PROCESSOR_NAME) : NULL;
    MPI_CHECK(MPI_Gather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all, MPI_MAX_PROCESSOR_NAME,
                         MPI_CHAR, 0, MPI_COMM_WORLD));
    if (rank != 0)
        return NULL;
    char **hosts = xcalloc((size_t)node->node_count, sizeof *hosts);
    for (int r = 0; r < size; r++) {
        const char *host = all + (size_t)r * MPI_MAX_PROCESSOR_NAME;
        if (!hosts[node->node_of[r]]) {
            hosts[node->node_of[r]] = xmalloc(strlen(host) + 1);
            strcpy(hosts[node->node_of[r]], host);
        }
    }
    free(all);
    return hosts;
}

static void dump_topologies(const struct experiment *exps, size_t count, MPI_Comm world,
                            const struct node_info *node)
{
    int rank;
    MPI_CHECK(MPI_Comm_rank(world, &rank));
    if (rank == 0)
        fputs("exp_id\trank\tworld_rank\tsources\tdestinations\n", stdout);
    for (size_t i = 0; i < count; i++) {
        /* An interleaved experiment's chunks share one topology: dumped once. */
        if (exps[i].topology == TOPO_NONE || exps[i].chunk != 0)
            continue;
        struct topology topo;
        topology_create(&exps[i], world, node, &topo);
        topology_dump(stdout, &exps[i], &topo);
        topology_free(&topo);
    }
}

/* One experiment, or one chunk of it: build, verify, measure, write, its repetitions numbered
   from first_rep. Returns the repetitions done, or -1 if --verify failed. */
static int run_experiment(const struct experiment *exp, int first_rep, const struct options *opt,
                          MPI_Comm world, struct sync_state *sync, const struct node_info *node,
                          const struct algorithm_set *algorithms, struct output *out)
{
    if (algorithm_forced(exp))
        fail_context("%s:%lld (exp_id %lld, algorithm '%s' of %s forced)", opt->input,
                     (long long)exp->line, (long long)exp->exp_id, exp->algorithm,
                     algorithm_forced(exp));
    else
        fail_context("%s:%lld (exp_id %lld)", opt->input, (long long)exp->line,
                     (long long)exp->exp_id);
    crash_note_experiment(opt->input, exp);
    struct topology topo;
    const struct topology *topo_used = NULL;
    MPI_Comm comm = world, own_comm;
    if (exp->topology != TOPO_NONE) {
        topology_create(exp, world, node, &topo);
        topo_used = &topo;
        comm = topo.comm;
    }
    comm = algorithm_comm(algorithms, exp, comm, &own_comm);
    struct op_context ctx;
    op_context_create(&ctx, exp, comm, world, topo_used, node);
    int done = -1;
    if (!opt->verify || measure_verify(&ctx, sync->comm, algorithms) == 0) {
        struct measurement m;
        measure_run(&ctx, sync, algorithms, &m);
        m.first_rep = first_rep;
        done = m.reps;
        struct locality loc;
        if (topo_used)
            node_locality(node, comm, topo.nb.destinations, topo.nb.outdegree, &loc);
        struct buffer_report buffers;
        buffer_report_gather(&ctx.buffers, sync->comm, &buffers);
        struct sync_report sync_report;
        sync_report_gather(sync, exp, m.invalid, &sync_report);
        if (sync->rank == 0)
            output_experiment(out, exp, operation_table[exp->op].name, &m, topo_used,
                              topo_used ? &loc : NULL, &buffers, &sync_report);
        measurement_free(&m);
    }
    op_context_free(&ctx);
    if (own_comm != MPI_COMM_NULL)
        MPI_CHECK(MPI_Comm_free(&own_comm));
    if (topo_used)
        topology_free(&topo);
    return done;
}

/* Rank 0's temporary output names, registered on every rank: whichever rank fails (an
   allocation, an MPI call) removes them before the job is aborted. */
static void share_abort_removes(const struct output *out)
{
    int rank;
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    const char *paths[2] = {out ? out->csv_tmp : NULL, out ? out->json_tmp : NULL};
    for (int slot = 0; slot < 2; slot++) {
        int length = rank == 0 ? (int)strlen(paths[slot]) + 1 : 0;
        MPI_CHECK(MPI_Bcast(&length, 1, MPI_INT, 0, MPI_COMM_WORLD));
        char *path = xmalloc((size_t)length);
        if (rank == 0)
            memcpy(path, paths[slot], (size_t)length);
        MPI_CHECK(MPI_Bcast(path, length, MPI_CHAR, 0, MPI_COMM_WORLD));
        remove_on_abort(slot, path);
        free(path);
    }
}

/* Whether OUTPUT.csv needs the status and global_s columns: some experiment runs on
   synchronised clocks. */
static int needs_status_columns(const struct experiment *exps, size_t count)
{
    for (size_t i = 0; i < count; i++)
        if (sync_method_get(exps[i].sync)->clock != CLOCK_NONE)
            return 1;
    return 0;
}

static int run(const struct options *opt, const struct experiment *exps, size_t count,
               const struct node_info *node, const char *input_sha256, int argc, char **argv)
{
    int rank, size;
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    /* Separate communicators, so synchronisation messages never meet an operation's. */
    MPI_Comm world, sync_comm;
    MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &world));
    MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &sync_comm));
    struct sync_state sync;
    sync_state_init(&sync, sync_comm);
    int rc = EXIT_OK;

    struct algorithm_set algorithms = {0};
    if (opt->dump_topology) {
        dump_topologies(exps, count, world, node);
        goto done;
    }
    /* After world and sync: the kernel's own communicators keep the library's choice. */
    if (algorithm_set_create(&algorithms, exps, count, world) != 0) {
        rc = EXIT_BAD_INPUT;
        goto done;
    }
    char **hosts = node_hosts(node);
    struct rank_placement *placements = placement_gather();
    struct output out;
    int status = 0;
    if (rank == 0) {
        struct run_info info = {.argc = argc, .argv = argv, .input_path = opt->input,
                                .input_sha256 = input_sha256, .nprocs = size, .node = node,
                                .node_size_option = opt->node_size, .hosts = hosts,
                                .verify = opt->verify, .heap = opt->heap,
                                .status_columns = needs_status_columns(exps, count),
                                .ranks = placements, .algorithms = &algorithms};
        status = output_open(&out, opt->output, &info);
        for (int n = 0; n < node->node_count; n++)
            free(hosts[n]);
    }
    free(hosts);
    free(placements);
    if (agree(status) != 0) {
        rc = EXIT_RUNTIME;
        goto done;
    }
    share_abort_removes(rank == 0 ? &out : NULL);
    /* Per experiment (check_experiments numbers them), its repetitions in the chunks run so
       far: the next chunk's reps continue the numbering, 0 to reps_done - 1 in time order. */
    int *reps_so_far = xcalloc(count, sizeof *reps_so_far);
    for (size_t i = 0; i < count; i++) {
        int reps = run_experiment(&exps[i], reps_so_far[exps[i].group], opt, world, &sync, node,
                                  &algorithms, &out);
        if (reps < 0) {
            rc = EXIT_RUNTIME;
            break;
        }
        reps_so_far[exps[i].group] += reps;
    }
    free(reps_so_far);
    fail_context("%s", "");
    crash_note_experiment(NULL, NULL);
    if (rank == 0) {
        if (rc == EXIT_OK)
            output_commit(&out);
        else
            output_abandon(&out);
    }
    remove_on_abort(0, NULL);
    remove_on_abort(1, NULL);
done:
    algorithm_set_free(&algorithms);
    MPI_CHECK(MPI_Comm_free(&sync_comm));
    MPI_CHECK(MPI_Comm_free(&world));
    return rc;
}

int main(int argc, char **argv)
{
    struct options opt;
    int parsed = parse_options(argc, argv, &opt);
    /* --list-ops, --list-params, --list-limits and --help need no MPI: they work without a
       launcher. */
    if (parsed == 0 && (opt.list_ops || opt.list_params || opt.list_limits || opt.help)) {
        if (opt.list_ops)
            operations_list(stdout);
        else if (opt.list_params)
            input_list_columns(stdout);
        else if (opt.list_limits)
            limits_list(stdout);
        else
            fputs(usage_text, stdout);
        return EXIT_OK;
    }
    int orig_argc = argc;
    char **orig_argv = argv;
    /* Before MPI_Init: the library's own allocations, from its first, follow the setting. */
    char heap_error[256] = "";
    int heap_status = parsed == 0 ? heap_apply(opt.heap, heap_error, sizeof heap_error) : 0;
    /* Likewise what the library needs to switch algorithms (read at its start): every rank
       that can read the input looks whether it names one. */
    char algorithm_error[512] = "";
    int algorithm_status = parsed == 0 && opt.input && input_names_algorithm(opt.input)
                               ? algorithm_before_init(algorithm_error, sizeof algorithm_error)
                               : 0;
    /* Every rank: the library about to start is the one the kernel was built with. */
    const int library_status = library_check();
    MPI_CHECK(MPI_Init(&argc, &argv));
    library_check_started(library_status);
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    int rank, size, rc = EXIT_OK;
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    crash_handlers_install(rank);
    struct experiment *exps = NULL;
    size_t count = 0;
    char input_sha256[65] = "";
    if (parsed != 0) {
        if (rank == 0) {
            fail_say("%s", opt.error);
            fputs(usage_text, stderr);
        }
        rc = EXIT_BAD_INPUT;
    } else if (heap_status != 0) {
        if (rank == 0)
            fail_say("%s", heap_error);
        rc = EXIT_RUNTIME;
    } else if (opt.list_algorithms) {
        if (rank == 0 && algorithm_list(stdout) != 0)
            rc = EXIT_RUNTIME;
        rc = agree(rc);
    } else if (agree(algorithm_status) != 0) {
        if (rank == 0)
            fail_say("%s: %s", opt.input, algorithm_error);
        rc = EXIT_BAD_INPUT;
    } else if (opt.nprocs && opt.nprocs != size) {
        if (rank == 0)
            fail_say("--nprocs %d, but MPI_COMM_WORLD has %d rank%s (is the launcher that of the "
                     "MPI library the kernel was built with?)",
                     opt.nprocs, size, size == 1 ? "" : "s");
        rc = EXIT_RUNTIME;
    } else if (opt.output && agree(rank == 0 ? check_output_path(&opt) : 0) != 0) {
        if (rank == 0)
            fail_say("%s", opt.error);
        rc = EXIT_BAD_INPUT;
    } else {
        /* Before validation: what a node leader must hold (alltoall_as_hier) and whether the
           lane ops can run at all depend on the node sizes. */
        struct node_info node;
        node_info_create(MPI_COMM_WORLD, opt.node_size, &node);
        if (load_experiments(opt.input, &node, &exps, &count, input_sha256) != 0)
            rc = EXIT_BAD_INPUT;
        else
            rc = run(&opt, exps, count, &node, input_sha256, orig_argc, orig_argv);
        node_info_free(&node);
    }
    free(exps);
    algorithm_end();
    MPI_CHECK(MPI_Finalize());
    return rc;
}
