#include "algorithm/algorithm.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "algorithm/library.h"
#include "check.h"
#include "io/json.h"
#include "ops/op_table.h"
#include "tune_hint.h"

/* How an untuned experiment runs, in the provenance. */
static const char untuned_mechanism[] =
    "MPI_Comm_dup_with_info with info " TUNE_HINT_KEY "=" TUNE_HINT_OFF ": libmpiguide-tune, "
    "if loaded, leaves the experiment's calls to the MPI library; no control variable written";

int algorithm_before_init(char *error, size_t size)
{
    return library_before_init(error, size);
}

/* The collective's name in messages: MPI_Allreduce. */
static void mpi_name(const char *collective, char *name, size_t size)
{
    snprintf(name, size, "MPI_%c%s", toupper((unsigned char)collective[0]), collective + 1);
}

/* The choices of the collective's cvar, the reserved one left out: how many (0 when the
   library has no such cvar), or -1 with the reason in error. */
static int choices_of(const char *collective, struct algorithm_choice *choices, char *cvar_name,
                      size_t cvar_size, char *error, size_t size)
{
    library_cvar_name(collective, cvar_name, cvar_size);
    struct mpit_cvar cvar;
    if (mpit_cvar_find(cvar_name, &cvar) != 0)
        return 0;
    mpit_cvar_free(&cvar);
    const int all = library_choices(cvar.index, choices, LIBRARY_MAX_CHOICES, error, size);
    int kept = 0;
    for (int i = 0; i < all; i++)
        if (strcmp(choices[i].name, library_reserved) != 0)
            choices[kept++] = choices[i];
    return all < 0 ? -1 : kept;
}

int algorithm_find(const char *collective, const char *name, int *value, char *error,
                   size_t size)
{
    if (strcmp(name, ALGORITHM_UNTUNED) == 0) {
        *value = -1;
        return 0;
    }
    struct algorithm_choice choices[LIBRARY_MAX_CHOICES];
    char cvar[96], reason[256], mpi[48];
    mpi_name(collective, mpi, sizeof mpi);
    const int count = choices_of(collective, choices, cvar, sizeof cvar, reason, sizeof reason);
    if (count < 0) {
        snprintf(error, size, "algorithm '%s' of %s: %s: %s", name, mpi, cvar, reason);
        return -1;
    }
    if (count == 0) {
        snprintf(error, size,
                 "algorithm '%s': %s has no algorithms to choose from in %s (no MPI_T control "
                 "variable %s)",
                 name, mpi, library_name, cvar);
        return -1;
    }
    for (int i = 0; i < count; i++)
        if (strcmp(choices[i].name, name) == 0) {
            *value = choices[i].value;
            return 0;
        }
    int n = snprintf(error, size, "algorithm '%s' is not an algorithm of %s in %s%s; allowed: ",
                     name, mpi, library_name,
                     strcmp(name, library_reserved) == 0
                         ? " (it stands for the library's own choice: leave the cell empty)"
                         : "");
    for (int i = 0; i < count && n >= 0 && (size_t)n < size; i++)
        n += snprintf(error + n, size - (size_t)n, "%s%s", i ? ", " : "", choices[i].name);
    if (n >= 0 && (size_t)n < size)
        snprintf(error + n, size - (size_t)n,
                 "; or " ALGORITHM_UNTUNED " (the library's own call, past libmpiguide-tune)");
    return -1;
}

int algorithm_list(FILE *out)
{
    char error[256] = "";
    if (!library_switches) {
        library_before_init(error, sizeof error);
        fail_say("%s", error);
        return -1;
    }
    fputs("collective\talgorithm\tvalue\n", out);
    for (size_t i = 0; i < operation_count; i++) {
        const char *collective = operation_table[i].algorithm_of;
        int listed = 0; /* an earlier op of the same collective listed it */
        for (size_t j = 0; j < i && collective; j++)
            listed |= operation_table[j].algorithm_of &&
                      strcmp(operation_table[j].algorithm_of, collective) == 0;
        if (!collective || listed)
            continue;
        struct algorithm_choice choices[LIBRARY_MAX_CHOICES];
        char cvar[96];
        const int count = choices_of(collective, choices, cvar, sizeof cvar, error,
                                     sizeof error);
        if (count < 0) {
            fail_say("%s: %s", cvar, error);
            return -1;
        }
        for (int c = 0; c < count; c++)
            fprintf(out, "%s\t%s\t%d\n", collective, choices[c].name, choices[c].value);
    }
    return 0;
}

int algorithm_untuned(const struct experiment *exp)
{
    return strcmp(exp->algorithm, ALGORITHM_UNTUNED) == 0;
}

const char *algorithm_forced(const struct experiment *exp)
{
    return exp->algorithm[0] && !algorithm_untuned(exp) ? operation_table[exp->op].algorithm_of
                                                        : NULL;
}

/* A duplicate of `comm` made with the info key=value (a plain one for an empty key). */
static void dup_with(MPI_Comm comm, const char *key, const char *value, MPI_Comm *dup)
{
    if (!key[0]) {
        MPI_CHECK(MPI_Comm_dup(comm, dup));
        return;
    }
    MPI_Info info;
    MPI_CHECK(MPI_Info_create(&info));
    MPI_CHECK(MPI_Info_set(info, key, value));
    MPI_CHECK(MPI_Comm_dup_with_info(comm, info, dup));
    MPI_CHECK(MPI_Info_free(&info));
}

/* A duplicate of `comm` whose collectives libmpiguide-tune leaves to the library. */
static void untuned_dup(MPI_Comm comm, MPI_Comm *dup)
{
    dup_with(comm, TUNE_HINT_KEY, TUNE_HINT_OFF, dup);
}

/* A duplicate of `comm` under the use's algorithm (a per-communicator library). */
static void forced_dup(const struct algorithm_use *use, MPI_Comm comm, MPI_Comm *dup)
{
    struct library_saved saved;
    library_force(&use->variable, use->value, &saved);
    dup_with(comm, library_dup_key, library_dup_value, dup);
    library_restore(&use->variable, &saved);
}

/* The use of the experiment's algorithm in the set; NULL when it forces none. */
static const struct algorithm_use *use_of(const struct algorithm_set *set,
                                          const struct experiment *exp)
{
    const char *collective = algorithm_forced(exp);
    for (int i = 0; collective && i < set->count; i++)
        if (strcmp(set->uses[i].collective, collective) == 0 &&
            set->uses[i].value == exp->algorithm_value)
            return &set->uses[i];
    return NULL;
}

int algorithm_set_create(struct algorithm_set *set, const struct experiment *exps, size_t count,
                         MPI_Comm world)
{
    memset(set, 0, sizeof *set);
    for (size_t i = 0; i < count; i++)
        set->has_untuned |= algorithm_untuned(&exps[i]);
    /* Every rank holds the same experiments: all make the duplicate, or none. */
    if (set->has_untuned)
        untuned_dup(world, &set->untuned);
    for (size_t i = 0; i < count; i++) {
        const char *collective = algorithm_forced(&exps[i]);
        if (!collective || use_of(set, &exps[i]))
            continue;
        set->uses = xrealloc(set->uses, ((size_t)set->count + 1) * sizeof *set->uses);
        struct algorithm_use *use = &set->uses[set->count++];
        memset(use, 0, sizeof *use);
        snprintf(use->collective, sizeof use->collective, "%s", collective);
        snprintf(use->name, sizeof use->name, "%s", exps[i].algorithm);
        use->value = exps[i].algorithm_value;
        use->comm = MPI_COMM_NULL;
        use->variable.index = -1; /* no handle yet */
        library_cvar_name(collective, use->cvar, sizeof use->cvar);
    }
    if (set->count == 0)
        return 0;
    /* Every rank, though only rank 0 read the input: one that could not prepare the library
       before MPI_Init stops the launch before anything is measured. */
    char error[512] = "";
    int ready = library_ready(error, sizeof error) == 0, all_ready = 0, rank;
    MPI_CHECK(MPI_Allreduce(&ready, &all_ready, 1, MPI_INT, MPI_MIN, world));
    MPI_CHECK(MPI_Comm_rank(world, &rank));
    if (!all_ready) {
        /* The reason of the lowest rank that is not ready. */
        int size, lowest = 0;
        MPI_CHECK(MPI_Comm_size(world, &size));
        int candidate = ready ? size : rank;
        MPI_CHECK(MPI_Allreduce(&candidate, &lowest, 1, MPI_INT, MPI_MIN, world));
        if (rank == lowest)
            fail_say("rank %d: %s", rank, error);
        return -1;
    }
    for (int i = 0; i < set->count; i++) {
        struct algorithm_use *use = &set->uses[i];
        if (mpit_cvar_find(use->cvar, &use->variable) != 0)
            fail_abort("MPI_T control variable %s vanished after validation", use->cvar);
        if (library_per_communicator)
            forced_dup(use, world, &use->comm);
    }
    return 0;
}

void algorithm_set_free(struct algorithm_set *set)
{
    if (set->has_untuned)
        MPI_CHECK(MPI_Comm_free(&set->untuned));
    for (int i = 0; i < set->count; i++) {
        if (set->uses[i].comm != MPI_COMM_NULL)
            MPI_CHECK(MPI_Comm_free(&set->uses[i].comm));
        if (set->uses[i].variable.index >= 0)
            mpit_cvar_free(&set->uses[i].variable);
    }
    free(set->uses);
    memset(set, 0, sizeof *set);
}

MPI_Comm algorithm_comm(const struct algorithm_set *set, const struct experiment *exp,
                        MPI_Comm comm, MPI_Comm *own)
{
    *own = MPI_COMM_NULL;
    if (algorithm_untuned(exp)) {
        if (exp->topology == TOPO_NONE)
            return set->untuned;
        untuned_dup(comm, own);
        return *own;
    }
    const struct algorithm_use *use = use_of(set, exp);
    if (!use || !library_per_communicator)
        return comm;
    if (exp->topology == TOPO_NONE)
        return use->comm;
    /* A duplicate keeps the topology's neighbours and rank order. */
    forced_dup(use, comm, own);
    return *own;
}

/* What algorithm_apply replaced; one experiment applies at a time. */
static struct library_saved applied;

void algorithm_apply(const struct algorithm_set *set, const struct experiment *exp)
{
    const struct algorithm_use *use = use_of(set, exp);
    if (use && !library_per_communicator)
        library_force(&use->variable, use->value, &applied);
}

int algorithm_applies(const struct experiment *exp)
{
    return algorithm_forced(exp) && !library_per_communicator;
}

void algorithm_restore(const struct algorithm_set *set, const struct experiment *exp)
{
    const struct algorithm_use *use = use_of(set, exp);
    if (use && !library_per_communicator)
        library_restore(&use->variable, &applied);
}

void algorithm_write_json(FILE *json, const struct algorithm_set *set)
{
    if (set->count == 0 && !set->has_untuned)
        return;
    fputs(",\n  \"algorithms\": {\"library\": ", json);
    json_string(json, library_name);
    fputs(", \"mechanism\": ", json);
    json_string(json, library_mechanism);
    fputs(", \"forced\": [", json);
    for (int i = 0; i < set->count; i++) {
        const struct algorithm_use *use = &set->uses[i];
        fprintf(json, "%s{\"collective\": ", i ? ", " : "");
        json_string(json, use->collective);
        fputs(", \"algorithm\": ", json);
        json_string(json, use->name);
        fputs(", \"cvar\": ", json);
        json_string(json, use->cvar);
        fprintf(json, ", \"value\": %d}", use->value);
    }
    fputc(']', json);
    if (set->has_untuned) {
        fputs(", \"untuned\": {\"algorithm\": ", json);
        json_string(json, ALGORITHM_UNTUNED);
        fputs(", \"mechanism\": ", json);
        json_string(json, untuned_mechanism);
        fputc('}', json);
    }
    fputc('}', json);
}

void algorithm_end(void)
{
    mpit_stop();
}
