/* A small MPI program for the tests of libmpiguide-inject: it times interposed calls the way the
 * kernel does (synchronise, time, max over ranks) and prints "label fastest_us" lines on rank 0:
 * the fastest repetition, the cost of the code path itself. A median, even a 10th percentile,
 * moves with the share of repetitions the scheduler interrupts (MPICH yields the core while it
 * waits), which on a 2-core machine shared with other jobs is at times most of them.
 *
 *   probe blocking NREP BYTES      MPI_Allreduce of BYTES (doubles), and PMPI_Allreduce (never
 *                                  slowed) as the clean reference
 *   probe nonblocking NREP BYTES   MPI_Ineighbor_alltoall on a periodic ring: start and wait apart
 *   probe completions NREP         MPI_Iallreduce completed by each Wait/Test function, next to
 *                                  point-to-point requests; point-to-point alone
 *   probe request_free NREP        a send freed with MPI_Request_free, then a send that may reuse
 *                                  its handle
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(call)                                                                             \
    do {                                                                                        \
        const int error_code_ = (call);                                                         \
        if (error_code_ != MPI_SUCCESS) {                                                       \
            fprintf(stderr, "probe: %s failed with error %d\n", #call, error_code_);            \
            MPI_Abort(MPI_COMM_WORLD, 1);                                                       \
        }                                                                                       \
    } while (0)

static int compare_doubles(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Max over ranks of each repetition, then the fastest, printed by rank 0. */
static void report(const char *label, double *seconds, int nrep)
{
    int rank = 0;
    CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    CHECK(MPI_Allreduce(MPI_IN_PLACE, seconds, nrep, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
    qsort(seconds, (size_t)nrep, sizeof *seconds, compare_doubles);
    if (rank == 0)
        printf("%s %.3f\n", label, 1e6 * seconds[0]);
}

static void *allocate(size_t bytes)
{
    void *memory = calloc(1, bytes > 0 ? bytes : 1);
    if (memory == NULL) {
        fprintf(stderr, "probe: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    return memory;
}

/* The allreduce's signature: MPI_Allreduce (interposed) and PMPI_Allreduce (never) share it. */
typedef int (*allreduce_function)(const void *, void *, int, MPI_Datatype, MPI_Op, MPI_Comm);

static double timed_allreduce(allreduce_function allreduce, const double *in, double *out,
                              int count)
{
    CHECK(MPI_Barrier(MPI_COMM_WORLD));
    const double start = MPI_Wtime();
    CHECK(allreduce(in, out, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
    return MPI_Wtime() - start;
}

/* MPI_Allreduce, and PMPI_Allreduce as the same process's clean reference, interleaved (in
 * alternating order) so that a change in the machine's load hits both alike. */
static void probe_blocking(int nrep, int count)
{
    double *in = allocate(sizeof(double) * (size_t)count);
    double *out = allocate(sizeof(double) * (size_t)count);
    double *interposed = allocate(sizeof(double) * (size_t)nrep);
    double *reference = allocate(sizeof(double) * (size_t)nrep);
    for (int rep = 0; rep < nrep; rep++) {
        if (rep % 2 == 0)
            interposed[rep] = timed_allreduce(MPI_Allreduce, in, out, count);
        reference[rep] = timed_allreduce(PMPI_Allreduce, in, out, count);
        if (rep % 2 == 1)
            interposed[rep] = timed_allreduce(MPI_Allreduce, in, out, count);
    }
    report("allreduce", interposed, nrep);
    report("allreduce_pmpi", reference, nrep);
    free(in);
    free(out);
    free(interposed);
    free(reference);
}

static void probe_nonblocking(int nrep, int bytes)
{
    int size = 0;
    CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    MPI_Comm ring;
    const int periodic = 1;
    CHECK(MPI_Cart_create(MPI_COMM_WORLD, 1, &size, &periodic, 0, &ring));
    char *send = allocate(2 * (size_t)bytes);
    char *receive = allocate(2 * (size_t)bytes);
    double *start_seconds = allocate(sizeof(double) * (size_t)nrep);
    double *wait_seconds = allocate(sizeof(double) * (size_t)nrep);
    for (int rep = 0; rep < nrep; rep++) {
        MPI_Request request;
        CHECK(MPI_Barrier(MPI_COMM_WORLD));
        const double start = MPI_Wtime();
        CHECK(MPI_Ineighbor_alltoall(send, bytes, MPI_CHAR, receive, bytes, MPI_CHAR, ring,
                                     &request));
        const double started = MPI_Wtime();
        CHECK(MPI_Wait(&request, MPI_STATUS_IGNORE));
        wait_seconds[rep] = MPI_Wtime() - started;
        start_seconds[rep] = started - start;
    }
    report("ineighbor_alltoall_start", start_seconds, nrep);
    report("ineighbor_alltoall_wait", wait_seconds, nrep);
    CHECK(MPI_Comm_free(&ring));
    free(send);
    free(receive);
    free(start_seconds);
    free(wait_seconds);
}

enum completion { WAIT, TEST, WAITALL, TESTALL, WAITANY, TESTANY, WAITSOME, TESTSOME };
static const char *const completion_names[] = {"wait",    "test",    "waitall",  "testall",
                                               "waitany", "testany", "waitsome", "testsome"};
enum { COMPLETION_COUNT = sizeof completion_names / sizeof completion_names[0] };

/* The collective sits between two point-to-point requests. */
enum { REQUEST_COUNT = 3 };

/* Completes every request with the chosen function (the single-request ones, one request after
 * the other). */
static void complete_all(enum completion how, MPI_Request requests[REQUEST_COUNT])
{
    const int count = REQUEST_COUNT;
    int flag = 0, index = 0, outcount = 0;
    /* Real status arrays: GCC 12 misreads MPICH's MPI_STATUSES_IGNORE as a zero-size array. */
    int indices[REQUEST_COUNT];
    MPI_Status statuses[REQUEST_COUNT];
    for (;;) {
        int remaining = 0;
        for (int i = 0; i < count; i++)
            remaining += requests[i] != MPI_REQUEST_NULL;
        if (remaining == 0)
            return;
        MPI_Request *first = requests;
        while (*first == MPI_REQUEST_NULL)
            first++;
        switch (how) {
        case WAIT: CHECK(MPI_Wait(first, MPI_STATUS_IGNORE)); break;
        case TEST: CHECK(MPI_Test(first, &flag, MPI_STATUS_IGNORE)); break;
        case WAITALL: CHECK(MPI_Waitall(count, requests, statuses)); break;
        case TESTALL: CHECK(MPI_Testall(count, requests, &flag, statuses)); break;
        case WAITANY: CHECK(MPI_Waitany(count, requests, &index, MPI_STATUS_IGNORE)); break;
        case TESTANY:
            CHECK(MPI_Testany(count, requests, &index, &flag, MPI_STATUS_IGNORE));
            break;
        case WAITSOME:
            CHECK(MPI_Waitsome(count, requests, &outcount, indices, statuses));
            break;
        case TESTSOME:
            CHECK(MPI_Testsome(count, requests, &outcount, indices, statuses));
            break;
        }
    }
}

/* Point-to-point partners: the next and the previous rank on a ring of MPI_COMM_WORLD. */
struct ring {
    int next, previous;
};

static struct ring ring_neighbours(void)
{
    int rank = 0, size = 0;
    CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    return (struct ring){(rank + 1) % size, (rank + size - 1) % size};
}

/* The start of a send: MPI_Isend and MPI_Issend have this type. */
typedef int (*send_start)(const void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request *);

/* One double to the next rank and one from the previous, sends started with `start_send`;
 * returns the seconds it took, from a synchronised start. */
static double timed_exchange(struct ring ring, int tag, send_start start_send)
{
    double sent = 2.0, received = 0.0;
    MPI_Request requests[2];
    MPI_Status statuses[2];
    CHECK(MPI_Barrier(MPI_COMM_WORLD));
    const double start = MPI_Wtime();
    CHECK(MPI_Irecv(&received, 1, MPI_DOUBLE, ring.previous, tag, MPI_COMM_WORLD, &requests[0]));
    CHECK(start_send(&sent, 1, MPI_DOUBLE, ring.next, tag, MPI_COMM_WORLD, &requests[1]));
    CHECK(MPI_Waitall(2, requests, statuses));
    return MPI_Wtime() - start;
}

static void probe_completions(int nrep)
{
    const struct ring ring = ring_neighbours();
    double value = 1.0, sum = 0.0, sent = 2.0, received = 0.0;
    double *seconds = allocate(sizeof(double) * (size_t)nrep);
    char label[64];

    for (int how = 0; how < COMPLETION_COUNT; how++) {
        for (int rep = 0; rep < nrep; rep++) {
            MPI_Request requests[REQUEST_COUNT];
            CHECK(MPI_Barrier(MPI_COMM_WORLD));
            CHECK(MPI_Irecv(&received, 1, MPI_DOUBLE, ring.previous, 0, MPI_COMM_WORLD,
                            &requests[0]));
            CHECK(MPI_Iallreduce(&value, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD,
                                 &requests[1]));
            CHECK(MPI_Isend(&sent, 1, MPI_DOUBLE, ring.next, 0, MPI_COMM_WORLD, &requests[2]));
            const double start = MPI_Wtime();
            complete_all((enum completion)how, requests);
            seconds[rep] = MPI_Wtime() - start;
        }
        snprintf(label, sizeof label, "iallreduce_%s", completion_names[how]);
        report(label, seconds, nrep);
    }

    /* Point-to-point alone: must not pay the collective's delay. */
    for (int rep = 0; rep < nrep; rep++)
        seconds[rep] = timed_exchange(ring, 0, MPI_Isend);
    report("p2p_waitall", seconds, nrep);

    free(seconds);
}

/* A freed send request: the library recycles its handle for a later send (MPI_Issend, under no
 * rule in the tests), which must not inherit its delay. MPICH on one rank hands the same handle
 * back every time, which makes a forgotten MPI_Request_free visible. */
static void probe_request_free(int nrep)
{
    const struct ring ring = ring_neighbours();
    double sent = 2.0, received = 0.0;
    double *seconds = allocate(sizeof(double) * (size_t)nrep);
    /* The receive matching the freed send completes first: the send is done, its handle free. */
    for (int rep = 0; rep < nrep; rep++) {
        MPI_Request receive, send;
        CHECK(MPI_Barrier(MPI_COMM_WORLD));
        CHECK(MPI_Irecv(&received, 1, MPI_DOUBLE, ring.previous, 1, MPI_COMM_WORLD, &receive));
        CHECK(MPI_Isend(&sent, 1, MPI_DOUBLE, ring.next, 1, MPI_COMM_WORLD, &send));
        CHECK(MPI_Request_free(&send));
        CHECK(MPI_Wait(&receive, MPI_STATUS_IGNORE));
        seconds[rep] = timed_exchange(ring, 2, MPI_Issend);
    }
    report("after_request_free", seconds, nrep);
    free(seconds);
}

static int parse_positive(const char *text, const char *what)
{
    char *end = NULL;
    const long value = strtol(text, &end, 10);
    if (*end != '\0' || value < 1 || value > 100000000) {
        fprintf(stderr, "probe: %s must be a positive integer, not '%s'\n", what, text);
        exit(2);
    }
    return (int)value;
}

int main(int argc, char **argv)
{
    CHECK(MPI_Init(&argc, &argv));
    if (argc == 4 && strcmp(argv[1], "blocking") == 0)
        probe_blocking(parse_positive(argv[2], "NREP"),
                       parse_positive(argv[3], "BYTES") / (int)sizeof(double));
    else if (argc == 4 && strcmp(argv[1], "nonblocking") == 0)
        probe_nonblocking(parse_positive(argv[2], "NREP"), parse_positive(argv[3], "BYTES"));
    else if (argc == 3 && strcmp(argv[1], "completions") == 0)
        probe_completions(parse_positive(argv[2], "NREP"));
    else if (argc == 3 && strcmp(argv[1], "request_free") == 0)
        probe_request_free(parse_positive(argv[2], "NREP"));
    else {
        fprintf(stderr, "usage: probe blocking|nonblocking NREP BYTES\n"
                        "       probe completions|request_free NREP\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    CHECK(MPI_Finalize());
    return 0;
}
