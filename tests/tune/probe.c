/* The probe of the libmpiguide-tune tests: calls MPI collectives as a program would and
 * compares every result with the MPI library's own collective (its PMPI_ entry point, which the
 * tuning library never replaces). Prints "probe ok" on rank 0, or names the first wrong result
 * and exits 1.
 *
 *   probe replaceable COUNT   MPI_Bcast (doubles, root 1), MPI_Allgather (ints), MPI_Allreduce
 *                             (doubles with MPI_SUM, ints with MPI_MAX), MPI_Scan (ints, MPI_SUM)
 *   probe unhandled COUNT     MPI_Allreduce of COUNT ints (MPI_SUM) in the forms the library
 *                             must leave alone: MPI_IN_PLACE (right after the same call with
 *                             a send buffer, which the library may replace), a user-defined
 *                             op, a derived datatype, and COUNT + 1 elements (not equal parts
 *                             on 2 ranks)
 *   probe communicators COUNT MPI_Allreduce of COUNT doubles (MPI_SUM) on communicators made
 *                             and freed in turn (see communicators() for which, in which order);
 *                             prints "handles reused R of N": how many times a communicator
 *                             got the handle of the one freed just before it
 *   probe hinted COUNT        MPI_Allreduce of COUNT doubles (MPI_SUM) on MPI_COMM_WORLD, on a
 *                             duplicate made by MPI_Comm_dup_with_info with mpiguide_tune=off
 *                             (exempt: the library's), and on an MPI_Comm_dup of that duplicate
 *                             (not exempt)
 *   probe misspelt COUNT      MPI_Comm_dup_with_info with mpiguide_tune=of: refused
 *   probe threads COUNT       under MPI_THREAD_MULTIPLE, THREADS threads at once, each making
 *                             THREAD_CALLS MPI_Allreduce of COUNT doubles (MPI_SUM) on a
 *                             duplicate of MPI_COMM_WORLD of its own, and ending before
 *                             MPI_Finalize; exits 77 if the library does not provide that level
 * Each call is made REPEATS times, but in `threads`. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <threads.h>

#define REPEATS 3
/* Duplicates of MPI_COMM_WORLD alive at once in `communicators`: more than the library
   remembers per thread, so that they share its slots. */
#define MANY 20
#define THREADS 2
#define THREAD_CALLS 100

static int rank, size;

static void check(int rc, const char *what)
{
    if (rc != MPI_SUCCESS) {
        fprintf(stderr, "probe: rank %d: %s failed (%d)\n", rank, what, rc);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

static void same(const void *got, const void *want, size_t bytes, const char *what)
{
    if (memcmp(got, want, bytes) != 0) {
        fprintf(stderr, "probe: rank %d: %s differs from the library's own\n", rank, what);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

static void fill_ints(int *v, int n, int salt)
{
    for (int i = 0; i < n; i++)
        v[i] = (rank + 1) * 31 + i * 7 + salt;
}

static void fill_doubles(double *v, int n)
{
    for (int i = 0; i < n; i++)
        v[i] = (double)((rank + 1) * 3 + i);
}

static void replaceable(int count)
{
    double *dsend = malloc((size_t)count * sizeof *dsend);
    double *dgot = malloc((size_t)count * sizeof *dgot);
    double *dwant = malloc((size_t)count * sizeof *dwant);
    int *isend = malloc((size_t)count * sizeof *isend);
    int *igot = malloc((size_t)size * (size_t)count * sizeof *igot);
    int *iwant = malloc((size_t)size * (size_t)count * sizeof *iwant);
    const size_t dbytes = (size_t)count * sizeof(double), ibytes = (size_t)count * sizeof(int);
    for (int repeat = 0; repeat < REPEATS; repeat++) {
        fill_doubles(dgot, count);
        fill_doubles(dwant, count);
        check(MPI_Bcast(dgot, count, MPI_DOUBLE, 1, MPI_COMM_WORLD), "MPI_Bcast");
        check(PMPI_Bcast(dwant, count, MPI_DOUBLE, 1, MPI_COMM_WORLD), "PMPI_Bcast");
        same(dgot, dwant, dbytes, "MPI_Bcast");

        fill_ints(isend, count, repeat);
        check(MPI_Allgather(isend, count, MPI_INT, igot, count, MPI_INT, MPI_COMM_WORLD),
              "MPI_Allgather");
        check(PMPI_Allgather(isend, count, MPI_INT, iwant, count, MPI_INT, MPI_COMM_WORLD),
              "PMPI_Allgather");
        same(igot, iwant, (size_t)size * ibytes, "MPI_Allgather");

        fill_doubles(dsend, count);
        check(MPI_Allreduce(dsend, dgot, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD),
              "MPI_Allreduce");
        check(PMPI_Allreduce(dsend, dwant, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD),
              "PMPI_Allreduce");
        same(dgot, dwant, dbytes, "MPI_Allreduce (double, MPI_SUM)");

        check(MPI_Allreduce(isend, igot, count, MPI_INT, MPI_MAX, MPI_COMM_WORLD),
              "MPI_Allreduce");
        check(PMPI_Allreduce(isend, iwant, count, MPI_INT, MPI_MAX, MPI_COMM_WORLD),
              "PMPI_Allreduce");
        same(igot, iwant, ibytes, "MPI_Allreduce (int, MPI_MAX)");

        check(MPI_Scan(isend, igot, count, MPI_INT, MPI_SUM, MPI_COMM_WORLD), "MPI_Scan");
        check(PMPI_Scan(isend, iwant, count, MPI_INT, MPI_SUM, MPI_COMM_WORLD), "PMPI_Scan");
        same(igot, iwant, ibytes, "MPI_Scan");
    }
    free(dsend), free(dgot), free(dwant), free(isend), free(igot), free(iwant);
}

/* A user-defined sum over ints, of MPI_INT or of a contiguous datatype of ints. */
static void add_ints(void *in, void *inout, int *len, MPI_Datatype *datatype)
{
    int bytes;
    check(MPI_Type_size(*datatype, &bytes), "MPI_Type_size");
    const int ints = *len * (bytes / (int)sizeof(int));
    for (int i = 0; i < ints; i++)
        ((int *)inout)[i] += ((const int *)in)[i];
}

static void unhandled(int count)
{
    const size_t bytes = (size_t)(count + 1) * sizeof(int);
    int *send = malloc(bytes), *got = malloc(bytes), *want = malloc(bytes);
    MPI_Op user_sum;
    MPI_Datatype pair;
    check(MPI_Op_create(add_ints, 1, &user_sum), "MPI_Op_create");
    check(MPI_Type_contiguous(2, MPI_INT, &pair), "MPI_Type_contiguous");
    check(MPI_Type_commit(&pair), "MPI_Type_commit");
    for (int repeat = 0; repeat < REPEATS; repeat++) {
        fill_ints(send, count + 1, repeat);
        check(PMPI_Allreduce(send, want, count, MPI_INT, MPI_SUM, MPI_COMM_WORLD),
              "PMPI_Allreduce");
        check(MPI_Allreduce(send, got, count, MPI_INT, MPI_SUM, MPI_COMM_WORLD),
              "MPI_Allreduce");
        same(got, want, (size_t)count * sizeof(int), "MPI_Allreduce");
        memcpy(got, send, bytes);
        check(MPI_Allreduce(MPI_IN_PLACE, got, count, MPI_INT, MPI_SUM, MPI_COMM_WORLD),
              "MPI_Allreduce (MPI_IN_PLACE)");
        same(got, want, (size_t)count * sizeof(int), "MPI_Allreduce (MPI_IN_PLACE)");
        check(MPI_Allreduce(send, got, count, MPI_INT, user_sum, MPI_COMM_WORLD),
              "MPI_Allreduce (user op)");
        same(got, want, (size_t)count * sizeof(int), "MPI_Allreduce (user op)");
        check(MPI_Allreduce(send, got, count / 2, pair, user_sum, MPI_COMM_WORLD),
              "MPI_Allreduce (derived datatype)");
        same(got, want, (size_t)count * sizeof(int), "MPI_Allreduce (derived datatype)");
        check(PMPI_Allreduce(send, want, count + 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD),
              "PMPI_Allreduce");
        check(MPI_Allreduce(send, got, count + 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD),
              "MPI_Allreduce (unequal parts)");
        same(got, want, bytes, "MPI_Allreduce (unequal parts)");
    }
    check(MPI_Type_free(&pair), "MPI_Type_free");
    check(MPI_Op_free(&user_sum), "MPI_Op_free");
    free(send), free(got), free(want);
}

/* MPI_Allreduce of `count` doubles on `comm`, compared with the library's own. */
static void allreduce_on(MPI_Comm comm, int count, double *send, double *got, double *want)
{
    fill_doubles(send, count);
    check(MPI_Allreduce(send, got, count, MPI_DOUBLE, MPI_SUM, comm), "MPI_Allreduce");
    check(PMPI_Allreduce(send, want, count, MPI_DOUBLE, MPI_SUM, comm), "PMPI_Allreduce");
    same(got, want, (size_t)count * sizeof(double), "MPI_Allreduce");
}

/* Per repetition, one MPI_Allreduce on each of, in this order: MPI_COMM_WORLD; a duplicate of
   it, then freed; a communicator of this rank alone (split), then freed; a duplicate of
   MPI_COMM_WORLD; an intercommunicator between two groups of one rank each; MANY duplicates of
   MPI_COMM_WORLD, then all freed with the duplicate before them. */
static void communicators(int count)
{
    double *send = malloc((size_t)count * sizeof *send);
    double *got = malloc((size_t)count * sizeof *got);
    double *want = malloc((size_t)count * sizeof *want);
    int reused = 0, made = 0;
    for (int repeat = 0; repeat < REPEATS; repeat++) {
        allreduce_on(MPI_COMM_WORLD, count, send, got, want);

        MPI_Comm pair, alone, again;
        check(MPI_Comm_dup(MPI_COMM_WORLD, &pair), "MPI_Comm_dup");
        allreduce_on(pair, count, send, got, want);
        MPI_Comm freed = pair;
        check(MPI_Comm_free(&pair), "MPI_Comm_free");

        check(MPI_Comm_split(MPI_COMM_WORLD, rank, 0, &alone), "MPI_Comm_split");
        reused += alone == freed, made++;
        allreduce_on(alone, count, send, got, want);
        freed = alone;
        check(MPI_Comm_free(&alone), "MPI_Comm_free");

        check(MPI_Comm_dup(MPI_COMM_WORLD, &again), "MPI_Comm_dup");
        reused += again == freed, made++;
        allreduce_on(again, count, send, got, want);

        MPI_Comm local, inter;
        check(MPI_Comm_split(MPI_COMM_WORLD, rank, 0, &local), "MPI_Comm_split");
        check(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, (rank + 1) % 2, 0, &inter),
              "MPI_Intercomm_create");
        allreduce_on(inter, count, send, got, want);
        check(MPI_Comm_free(&inter), "MPI_Comm_free");
        check(MPI_Comm_free(&local), "MPI_Comm_free");

        MPI_Comm many[MANY];
        for (int i = 0; i < MANY; i++) {
            check(MPI_Comm_dup(MPI_COMM_WORLD, &many[i]), "MPI_Comm_dup");
            allreduce_on(many[i], count, send, got, want);
        }
        for (int i = 0; i < MANY; i++)
            check(MPI_Comm_free(&many[i]), "MPI_Comm_free");
        check(MPI_Comm_free(&again), "MPI_Comm_free");
    }
    if (rank == 0)
        printf("handles reused %d of %d\n", reused, made);
    free(send), free(got), free(want);
}

/* A duplicate of MPI_COMM_WORLD made by MPI_Comm_dup_with_info with mpiguide_tune=`value`. */
static MPI_Comm hinted_dup(const char *value)
{
    MPI_Info info;
    MPI_Comm comm;
    check(MPI_Info_create(&info), "MPI_Info_create");
    check(MPI_Info_set(info, "mpiguide_tune", value), "MPI_Info_set");
    check(MPI_Comm_dup_with_info(MPI_COMM_WORLD, info, &comm), "MPI_Comm_dup_with_info");
    check(MPI_Info_free(&info), "MPI_Info_free");
    return comm;
}

/* Per repetition, one MPI_Allreduce on each of: MPI_COMM_WORLD, the exempt duplicate, a plain
   duplicate of the exempt one. */
static void hinted(int count)
{
    double *send = malloc((size_t)count * sizeof *send);
    double *got = malloc((size_t)count * sizeof *got);
    double *want = malloc((size_t)count * sizeof *want);
    MPI_Comm exempt = hinted_dup("off"), copy;
    check(MPI_Comm_dup(exempt, &copy), "MPI_Comm_dup");
    for (int repeat = 0; repeat < REPEATS; repeat++) {
        allreduce_on(MPI_COMM_WORLD, count, send, got, want);
        allreduce_on(exempt, count, send, got, want);
        allreduce_on(copy, count, send, got, want);
    }
    check(MPI_Comm_free(&copy), "MPI_Comm_free");
    check(MPI_Comm_free(&exempt), "MPI_Comm_free");
    free(send), free(got), free(want);
}

struct thread_work {
    MPI_Comm comm;
    int count;
};

static int thread_calls(void *argument)
{
    const struct thread_work *work = argument;
    const size_t bytes = (size_t)work->count * sizeof(double);
    double *send = malloc(bytes), *got = malloc(bytes), *want = malloc(bytes);
    for (int call = 0; call < THREAD_CALLS; call++)
        allreduce_on(work->comm, work->count, send, got, want);
    free(send), free(got), free(want);
    return 0;
}

static void threads(int count)
{
    struct thread_work work[THREADS];
    thrd_t thread[THREADS];
    for (int i = 0; i < THREADS; i++) {
        work[i].count = count;
        check(MPI_Comm_dup(MPI_COMM_WORLD, &work[i].comm), "MPI_Comm_dup");
    }
    for (int i = 0; i < THREADS; i++)
        if (thrd_create(&thread[i], thread_calls, &work[i]) != thrd_success) {
            fprintf(stderr, "probe: rank %d: cannot start a thread\n", rank);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    for (int i = 0; i < THREADS; i++)
        if (thrd_join(thread[i], NULL) != thrd_success) {
            fprintf(stderr, "probe: rank %d: cannot join a thread\n", rank);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    for (int i = 0; i < THREADS; i++)
        check(MPI_Comm_free(&work[i].comm), "MPI_Comm_free");
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "threads") == 0) {
        int provided;
        check(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided), "MPI_Init_thread");
        if (provided < MPI_THREAD_MULTIPLE) {
            printf("probe: no MPI_THREAD_MULTIPLE\n");
            check(MPI_Finalize(), "MPI_Finalize");
            return 77;
        }
    } else {
        check(MPI_Init(&argc, &argv), "MPI_Init");
    }
    check(MPI_Comm_rank(MPI_COMM_WORLD, &rank), "MPI_Comm_rank");
    check(MPI_Comm_size(MPI_COMM_WORLD, &size), "MPI_Comm_size");
    const int count = argc == 3 ? atoi(argv[2]) : 0;
    if (count <= 0 || size < 2 || (strcmp(argv[1], "communicators") == 0 && size != 2)) {
        fprintf(stderr, "usage: probe replaceable|unhandled|threads|hinted|misspelt COUNT, on 2 or more ranks; "
                        "probe communicators COUNT, on 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (strcmp(argv[1], "replaceable") == 0)
        replaceable(count);
    else if (strcmp(argv[1], "communicators") == 0)
        communicators(count);
    else if (strcmp(argv[1], "threads") == 0)
        threads(count);
    else if (strcmp(argv[1], "hinted") == 0)
        hinted(count);
    else if (strcmp(argv[1], "misspelt") == 0)
        hinted_dup("of");
    else
        unhandled(count);
    if (rank == 0)
        printf("probe ok\n");
    check(MPI_Finalize(), "MPI_Finalize");
    return 0;
}
