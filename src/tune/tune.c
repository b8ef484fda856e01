/* libmpiguide-tune: a PMPI library that runs a collective as the mock-up that measured faster,
 * for the communicator sizes and message sizes its tuning file names (rules.h), and leaves every
 * other call to the MPI library (through any PMPI tool loaded after it). Selected by
 * MPIGUIDE_TUNE=<tuning file>; loaded with LD_PRELOAD or linked before the MPI library
 * (docs/tuning.md, "The tuning file of libmpiguide-tune"). MPIGUIDE_TUNE_REPORT=1 makes every
 * rank say at MPI_Finalize how many calls each rule replaced. A communicator made by
 * MPI_Comm_dup_with_info with the hint of tune_hint.h is exempt: its calls go to the library, so
 * a program can measure the library's own call beside the replaced one in one launch. */
#define _GNU_SOURCE /* RTLD_NEXT */
#include <dlfcn.h>
#include <mpi.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "call_counts.h"
#include "comm_rules.h"
#include "fail.h"
#include "handled.h"
#include "preload.h"
#include "replacements.h"
#include "rules.h"
#include "thread_cache.h"
#include "tune_hint.h"

#define TUNE_VARIABLE "MPIGUIDE_TUNE"
#define REPORT_VARIABLE "MPIGUIDE_TUNE_REPORT"

/* Written once in MPI_Init, before the library starts, and only read afterwards. */
static struct tune_rules rules;
static const char *rules_path;
static bool has_rules[TUNE_COLLECTIVES];

/* Where a call goes that no rule replaces: the next definition of the function after this library
 * (a tool preloaded after it, such as libmpiguide-inject planting a slowdown, else the MPI
 * library), so that PMPI tools stack; PMPI_ until MPI_Init resolves it, or if nothing is found. */
static int (*next_bcast)(void *, int, MPI_Datatype, int, MPI_Comm) = PMPI_Bcast;
static int (*next_allgather)(const void *, int, MPI_Datatype, void *, int, MPI_Datatype,
                             MPI_Comm) = PMPI_Allgather;
static int (*next_allreduce)(const void *, void *, int, MPI_Datatype, MPI_Op,
                             MPI_Comm) = PMPI_Allreduce;
static int (*next_scan)(const void *, void *, int, MPI_Datatype, MPI_Op, MPI_Comm) = PMPI_Scan;
/* MPI_Comm_dup_with_info, which this library reads the hint of and leaves to the next. */
static int (*next_comm_dup_with_info)(MPI_Comm, MPI_Info, MPI_Comm *) = PMPI_Comm_dup_with_info;
/* MPI_Finalize too, as MPI_Init (preload.h), so that a tool after this library starts and stops. */
static int (*next_finalize)(void) = PMPI_Finalize;

/* Set while this thread runs a mock-up: every call the mock-up makes to a function interposed
 * here goes on to the next definition, so a mock-up built from a replaced collective
 * (allreduce_as_reduce_bcast's MPI_Bcast) never recurses into a replacement. */
static TUNE_THREAD_LOCAL bool inside_mockup;
/* Grown as needed and kept, so that a replaced call allocates only when it is the largest yet:
 * the kernel measured the mock-up with its scratch allocated beforehand. */
static TUNE_THREAD_LOCAL struct {
    struct tune_scratch scratch;
    size_t block_bytes;
    int ints;
} scratch_cache;

static void resolve_next(void **next, const char *name)
{
    void *found = dlsym(RTLD_NEXT, name);
    if (found)
        *next = found;
}

const struct fail_component fail_component = {"mpiguide-tune", NULL, NULL};

/* Reads the tuning file (preload.h). */
void preload_configure(void)
{
    rules_path = getenv(TUNE_VARIABLE);
    if (rules_path == NULL || rules_path[0] == '\0') {
        preload_refuse(TUNE_VARIABLE " is not set, but libmpiguide-tune is loaded: set it to the "
                       "tuning file that `mpiguide tune` wrote, e.g. " TUNE_VARIABLE
                       "=results/<campaign>/tuning/<entry>.tune");
        return;
    }
    char error[4096];
    if (tune_read_rules(rules_path, &rules, error, sizeof error) != 0) {
        preload_refuse("%s", error);
        return;
    }
    call_counts_start(rules.count);
    for (size_t i = 0; i < rules.count; i++)
        has_rules[tune_replacements[rules.rules[i].replacement].collective] = true;
    resolve_next((void **)&next_bcast, "MPI_Bcast");
    resolve_next((void **)&next_allgather, "MPI_Allgather");
    resolve_next((void **)&next_allreduce, "MPI_Allreduce");
    resolve_next((void **)&next_scan, "MPI_Scan");
    resolve_next((void **)&preload_next_init, "MPI_Init");
    resolve_next((void **)&preload_next_init_thread, "MPI_Init_thread");
    resolve_next((void **)&next_finalize, "MPI_Finalize");
    resolve_next((void **)&next_comm_dup_with_info, "MPI_Comm_dup_with_info");
}

static void compose_announcement(FILE *out, void *context)
{
    (void)context;
    fprintf(out, "mpiguide-tune: active: %s: %zu rule(s)", rules_path, rules.count);
    for (size_t i = 0; i < rules.count; i++) {
        const struct tune_rule *rule = &rules.rules[i];
        const struct tune_replacement *with = &tune_replacements[rule->replacement];
        fprintf(out, "%s %s as %s at", i ? ";" : ":", tune_collective_names[with->collective],
                with->name);
        for (int k = 0; k < rule->rank_count; k++)
            fprintf(out, "%s%d", k ? "," : " ", rule->ranks[k]);
        fprintf(out, " ranks for %llu-%llu B (line %d)", rule->lo, rule->hi, rule->line);
    }
    fputc('\n', out);
}

/* The tuning file and its rules (preload.h). */
void preload_announce(void)
{
    stderr_line(compose_announcement, NULL);
}

PRELOAD_EXPORT int MPI_Finalize(void)
{
    const char *report = getenv(REPORT_VARIABLE);
    if (report && strcmp(report, "1") == 0) {
        int rank = -1;
        if (PMPI_Comm_rank(MPI_COMM_WORLD, &rank) != MPI_SUCCESS)
            rank = -1;
        for (size_t i = 0; i < rules.count; i++)
            fprintf(stderr, "mpiguide-tune: rank %d: line %d %s replaced %lu call(s)\n", rank,
                    rules.rules[i].line, tune_replacements[rules.rules[i].replacement].name,
                    call_counts_sum(CALLS_REPLACED(i)));
        for (int c = 0; c < TUNE_COLLECTIVES; c++)
            if (has_rules[c])
                fprintf(stderr, "mpiguide-tune: rank %d: %s left %lu call(s) to the library\n",
                        rank, tune_collective_names[c], call_counts_sum(CALLS_LEFT(c)));
    }
    return next_finalize();
}

/* Scratch for `with` and `call` in scratch_cache; false if it cannot be had (the call then goes
   to the library). */
static bool scratch_ready(const struct tune_replacement *with, const struct tune_call *call,
                          size_t element_bytes)
{
    struct tune_scratch *scratch = &scratch_cache.scratch;
    if (scratch_cache.ints < call->size) {
        int *counts = realloc(scratch->counts, (size_t)call->size * sizeof *counts);
        if (counts)
            scratch->counts = counts;
        int *displs = realloc(scratch->displs, (size_t)call->size * sizeof *displs);
        if (displs)
            scratch->displs = displs;
        if (!counts || !displs)
            return false;
        scratch_cache.ints = call->size;
    }
    const size_t block_bytes =
        with->needs & NEEDS_BLOCKS ? (size_t)call->size * (size_t)call->count * element_bytes : 0;
    if (scratch_cache.block_bytes < block_bytes) {
        void *blocks = realloc(scratch->blocks, block_bytes);
        if (!blocks)
            return false;
        scratch->blocks = blocks;
        scratch_cache.block_bytes = block_bytes;
    }
    return true;
}

/* A call's rule, or NULL if the library must do the call: the checks in full, which ask the MPI
   library on a communicator's or datatype's first call (comm_rules.h, handled.h). Every
   condition depends only on arguments that agree across the ranks of a correct program, so all
   ranks decide alike. Sets call->size. */
static const struct comm_rule *rule_of(enum tune_collective collective, struct tune_call *call)
{
    if (call->count <= 0 || call->sendbuf == MPI_IN_PLACE)
        return NULL;
    const struct comm_rules *on = tune_comm_rules(call->comm, &rules);
    if (!on)
        return NULL;
    const int element_bytes = tune_contiguous_bytes(call->datatype);
    if (!element_bytes)
        return NULL;
    call->size = on->size;
    const struct comm_rule *rule = tune_comm_rule_for(
        on, collective, (unsigned long long)call->count * (unsigned long long)element_bytes);
    if (!rule)
        return NULL;
    const struct tune_replacement *with = rule->with;
    if ((with->needs & NEEDS_REDUCTION && !tune_predefined_reduction(call->op)) ||
        (with->needs & NEEDS_EQUAL_PARTS && call->count % call->size != 0) ||
        call->root < 0 || call->root >= call->size ||
        !scratch_ready(with, call, (size_t)element_bytes))
        return NULL;
    return rule;
}

/* The rules rule_of found, remembered per thread by all they depend on but the root and
   MPI_IN_PLACE: a call like one before costs a few comparisons instead of rule_of's look-ups.
   Only rules are remembered (a predefined datatype and op, which live as long as MPI), and only
   while tune_comm_generation stays (a freed communicator's handle may come back). The scratch a
   rule needed was allocated when it was found and is never shrunk. */
#define DECIDED 8 /* calls per collective and thread, a power of two */
static TUNE_THREAD_LOCAL struct decided {
    MPI_Comm comm;
    MPI_Datatype datatype;
    MPI_Op op;
    int count;
    int size; /* of comm */
    unsigned long generation;
    const struct comm_rule *rule;
} decided[TUNE_COLLECTIVES][DECIDED];

/* decision() when no rule was remembered for the call: rule_of, remembered in `slot` if found,
   and the call counted as the library's if not. Apart from the hot path; it readies this
   thread's counts, which a remembered rule's calls then add to. */
static __attribute__((noinline)) const struct decided *
decided_now(enum tune_collective collective, struct tune_call call, unsigned long now,
            struct decided *slot)
{
    call_counts_ready();
    const struct comm_rule *rule = rule_of(collective, &call);
    if (!rule) {
        call_counts_add(CALLS_LEFT(collective));
        return NULL;
    }
    *slot = (struct decided){call.comm, call.datatype, call.op, call.count, call.size, now, rule};
    return slot;
}

/* The rule (and communicator size) to run a call with, NULL if the library must do it. Inlined
   into each collective: the common case, a call like one before on this thread, is a table
   look-up and a few comparisons. */
static inline const struct decided *decision(enum tune_collective collective,
                                             const void *sendbuf, int count,
                                             MPI_Datatype datatype, MPI_Op op, int root,
                                             MPI_Comm comm)
{
    if (!has_rules[collective] || inside_mockup)
        return NULL;
    /* Read before rule_of looks anything up, as tune_comm_rules says. */
    const unsigned long now = tune_comm_now();
    struct decided *slot =
        &decided[collective][tune_slot((uintptr_t)comm + (uintptr_t)count, DECIDED)];
    if (slot->comm == comm && slot->count == count && slot->datatype == datatype &&
        slot->op == op && slot->generation == now && sendbuf != MPI_IN_PLACE && root >= 0 &&
        root < slot->size)
        return slot;
    const struct tune_call call = {sendbuf, count, datatype, op, root, comm, 0};
    return decided_now(collective, call, now, slot);
}

/* Before and after a mock-up runs for a call: mockup_ended counts the call and passes the
   mock-up's error code on. */
static inline void mockup_starts(void)
{
    inside_mockup = true;
}

static inline int mockup_ended(const struct decided *by, int error_code)
{
    inside_mockup = false;
    call_counts_add(CALLS_REPLACED(by->rule->index));
    return error_code;
}

PRELOAD_EXPORT int MPI_Bcast(void *buffer, int count, MPI_Datatype datatype, int root,
                             MPI_Comm comm)
{
    const struct decided *by =
        decision(TUNE_BCAST, NULL, count, datatype, MPI_OP_NULL, root, comm);
    if (!by)
        return next_bcast(buffer, count, datatype, root, comm);
    mockup_starts();
    return mockup_ended(by, by->rule->with->run.bcast(buffer, count, datatype, root, comm,
                                                       by->size, &scratch_cache.scratch));
}

PRELOAD_EXPORT int MPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                 void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    /* The mock-ups take one count and datatype: other layouts go to the library. With
       predefined types, a correct program passes the same on every rank. */
    const struct decided *by =
        sendtype == recvtype && sendcount == recvcount
            ? decision(TUNE_ALLGATHER, sendbuf, sendcount, sendtype, MPI_OP_NULL, 0, comm)
            : NULL;
    if (!by)
        return next_allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
    mockup_starts();
    return mockup_ended(by, by->rule->with->run.allgather(sendbuf, recvbuf, sendcount, sendtype,
                                                           comm, by->size,
                                                           &scratch_cache.scratch));
}

PRELOAD_EXPORT int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count,
                                 MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    const struct decided *by = decision(TUNE_ALLREDUCE, sendbuf, count, datatype, op, 0, comm);
    if (!by)
        return next_allreduce(sendbuf, recvbuf, count, datatype, op, comm);
    mockup_starts();
    return mockup_ended(by, by->rule->with->run.reduction(sendbuf, recvbuf, count, datatype, op,
                                                           comm, by->size,
                                                           &scratch_cache.scratch));
}

PRELOAD_EXPORT int MPI_Scan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                            MPI_Op op, MPI_Comm comm)
{
    const struct decided *by = decision(TUNE_SCAN, sendbuf, count, datatype, op, 0, comm);
    if (!by)
        return next_scan(sendbuf, recvbuf, count, datatype, op, comm);
    mockup_starts();
    return mockup_ended(by, by->rule->with->run.reduction(sendbuf, recvbuf, count, datatype, op,
                                                           comm, by->size,
                                                           &scratch_cache.scratch));
}

/* Whether `info` exempts a communicator: its TUNE_HINT_KEY is TUNE_HINT_OFF. Another value of
   the key stops the program: read as "not exempt", a misspelt value would silently measure the
   replacement where the library's own call was asked for. It exits rather than aborts: MPICH's
   mpiexec can drop the ranks' output when one calls MPI_Abort, and this message is the point.
   The launcher then stops any rank still running. */
static int asks_exempt(MPI_Info info, bool *exempt)
{
    *exempt = false;
    if (info == MPI_INFO_NULL)
        return MPI_SUCCESS;
    int length, flag;
    MPI_TRY(PMPI_Info_get_valuelen(info, TUNE_HINT_KEY, &length, &flag));
    if (!flag)
        return MPI_SUCCESS;
    char *value = malloc((size_t)length + 1);
    if (!value)
        return MPI_ERR_NO_MEM;
    const int rc = PMPI_Info_get(info, TUNE_HINT_KEY, length, value, &flag);
    if (rc != MPI_SUCCESS || !flag) {
        free(value);
        return rc != MPI_SUCCESS ? rc : MPI_ERR_INFO_KEY;
    }
    if (strcmp(value, TUNE_HINT_OFF) != 0) {
        fail_exit(EXIT_BAD_INPUT,
                  "MPI_Comm_dup_with_info: info key '" TUNE_HINT_KEY "' is '%s'; the one value "
                  "allowed is '" TUNE_HINT_OFF "' (the new communicator's collectives then go to "
                  "the MPI library, never to a mock-up)",
                  value);
    }
    free(value);
    *exempt = true;
    return MPI_SUCCESS;
}

/* The hint is read here, not from the new communicator's info: a library may drop keys it does
   not know (MPICH does). A duplicate of an exempt communicator made any other way is not
   exempt (comm_rules.h). */
PRELOAD_EXPORT int MPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm)
{
    bool exempt;
    MPI_TRY(asks_exempt(info, &exempt));
    MPI_TRY(next_comm_dup_with_info(comm, info, newcomm));
    if (!exempt)
        return MPI_SUCCESS;
    const int rc = tune_comm_exempt(*newcomm);
    if (rc != MPI_SUCCESS) {
        /* Not exempt, it would run mock-ups where the library's own call was asked for. */
        if (PMPI_Comm_free(newcomm) != MPI_SUCCESS)
            *newcomm = MPI_COMM_NULL;
        return rc;
    }
    return MPI_SUCCESS;
}
