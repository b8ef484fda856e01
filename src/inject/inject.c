/* libmpiguide-inject: a PMPI interposition library that slows chosen MPI functions down by a
 * controlled busy-wait, so a campaign can plant a known slowdown and measure whether mpiguide
 * detects it. Selected by MPIGUIDE_INJECT (see spec.h and README.md#how-far-can-i-trust-a-verdict);
 * loaded with LD_PRELOAD. */
#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "fatal.h"
#include "pending.h"
#include "spec.h"

#define INJECT_EXPORT __attribute__((visibility("default")))

#define INJECT_VARIABLE "MPIGUIDE_INJECT"

enum inject_function {
#define INJECT_BLOCKING(name, params, args) INJECT_FN_##name,
#define INJECT_NONBLOCKING(name, params, args) INJECT_FN_##name,
#include "interposed.def"
#undef INJECT_BLOCKING
#undef INJECT_NONBLOCKING
    INJECT_FN_COUNT
};

static const char *const function_names[INJECT_FN_COUNT] = {
#define INJECT_BLOCKING(name, params, args) "MPI_" #name,
#define INJECT_NONBLOCKING(name, params, args) "MPI_" #name,
#include "interposed.def"
#undef INJECT_BLOCKING
#undef INJECT_NONBLOCKING
};

static const bool function_is_nonblocking[INJECT_FN_COUNT] = {
#define INJECT_BLOCKING(name, params, args) false,
#define INJECT_NONBLOCKING(name, params, args) true,
#include "interposed.def"
#undef INJECT_BLOCKING
#undef INJECT_NONBLOCKING
};

/* Written once, in MPI_Init before the library starts, and only read afterwards. */
static struct inject_rule rules[INJECT_FN_COUNT];
/* Some nonblocking function is slowed down, so completion calls must look for its requests. */
static bool tracking_requests;

_Noreturn void inject_fatal(const char *what)
{
    fprintf(stderr, "mpiguide-inject: %s\n", what);
    PMPI_Abort(MPI_COMM_WORLD, 1);
    abort(); /* PMPI_Abort does not return; this is for a library that breaks that promise */
}

static int64_t now_ns(void)
{
    struct timespec now;
    if (clock_gettime(CLOCK_MONOTONIC, &now) != 0)
        inject_fatal("clock_gettime(CLOCK_MONOTONIC) failed");
    return (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
}

/* A busy-wait, not a sleep: a slower MPI library keeps its core busy polling for progress, while a
 * sleeping rank would hand the core to other processes and perturb the machine differently.
 * It reads the clock at least once even for no delay, so that a rule planting 0 costs what any
 * rule costs besides its delay: an entry under `fraction=0` is the exact reference of entries
 * under other fractions, to within one clock read (tens of nanoseconds). */
static void spin(int64_t from_ns, int64_t delay_ns)
{
    const int64_t until_ns = from_ns + delay_ns;
    while (now_ns() < until_ns)
        continue;
}

/* Reads the spec before the MPI library starts: a bad spec ends the process with exit status 2
 * (bad input, as for the kernel) before any MPI state exists. Not done in a library constructor:
 * LD_PRELOAD also reaches mpirun and other tools that never call MPI_Init. */
static void configure(void)
{
    const char *spec = getenv(INJECT_VARIABLE);
    if (spec == NULL) {
        fprintf(stderr,
                "mpiguide-inject: " INJECT_VARIABLE " is not set, but libmpiguide-inject is "
                "preloaded: set it to the functions to slow down, e.g. "
                INJECT_VARIABLE "='MPI_Allreduce:usec=200'\n");
        exit(2);
    }
    char error[4096];
    if (inject_parse_spec(spec, function_names, INJECT_FN_COUNT, rules, error, sizeof error) != 0) {
        fprintf(stderr, "mpiguide-inject: " INJECT_VARIABLE " %s\n", error);
        exit(2);
    }
    for (int function = 0; function < INJECT_FN_COUNT; function++)
        if (function_is_nonblocking[function] && rules[function].kind != INJECT_OFF)
            tracking_requests = true;
}

/* One line from rank 0 in the job's log, so nobody mistakes an injected run for a clean one. */
static int announce(int init_status)
{
    if (init_status != MPI_SUCCESS)
        return init_status;
    int rank = 0;
    const int error_code = PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (error_code != MPI_SUCCESS)
        return error_code;
    if (rank == 0) {
        char summary[4096];
        inject_describe(rules, function_names, INJECT_FN_COUNT, summary, sizeof summary);
        fprintf(stderr, "mpiguide-inject: active: %s\n", summary);
    }
    return MPI_SUCCESS;
}

INJECT_EXPORT int MPI_Init(int *argc, char ***argv)
{
    configure();
    return announce(PMPI_Init(argc, argv));
}

INJECT_EXPORT int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    configure();
    return announce(PMPI_Init_thread(argc, argv, required, provided));
}

/* A blocking call pays its delay right after it returns. */
static void pay_now(const struct inject_rule *rule, int64_t start_ns)
{
    const int64_t end_ns = now_ns();
    spin(end_ns, inject_delay_ns(rule, end_ns - start_ns));
}

/* Calls PMPI_<name>; under a rule, timed, and `on_success` follows a successful call (with `rule`
 * and `start_ns` in scope). */
#define INJECT_WRAPPER(name, params, args, on_success)                                             \
    INJECT_EXPORT int MPI_##name params                                                            \
    {                                                                                              \
        const struct inject_rule *rule = &rules[INJECT_FN_##name];                                 \
        if (rule->kind == INJECT_OFF)                                                              \
            return PMPI_##name args;                                                               \
        const int64_t start_ns = now_ns();                                                         \
        const int error_code = PMPI_##name args;                                                   \
        if (error_code == MPI_SUCCESS)                                                             \
            on_success;                                                                            \
        return error_code;                                                                         \
    }

#define INJECT_BLOCKING(name, params, args) \
    INJECT_WRAPPER(name, params, args, pay_now(rule, start_ns))
/* A nonblocking start only records its request; the completion call pays the delay. */
#define INJECT_NONBLOCKING(name, params, args) \
    INJECT_WRAPPER(name, params, args, pending_add(*request, rule, now_ns() - start_ns))

#include "interposed.def"
#undef INJECT_BLOCKING
#undef INJECT_NONBLOCKING
#undef INJECT_WRAPPER

/* Every way a request can complete: the completion call is charged to the recorded operations it
 * waits on, and pays the delay of those it completes. */
#define INJECT_COMPLETION(name, params, args, count, requests)                                     \
    INJECT_EXPORT int MPI_##name params                                                            \
    {                                                                                              \
        if (!tracking_requests)                                                                    \
            return PMPI_##name args;                                                               \
        const uint64_t claim = pending_claim(count, requests);                                     \
        const int64_t start_ns = now_ns();                                                         \
        const int error_code = PMPI_##name args;                                                   \
        const int64_t end_ns = now_ns();                                                           \
        spin(end_ns, pending_settle(claim, requests, end_ns - start_ns));                          \
        return error_code;                                                                         \
    }

INJECT_COMPLETION(Wait, (MPI_Request * request, MPI_Status *status), (request, status), 1,
                  request)
INJECT_COMPLETION(Test, (MPI_Request * request, int *flag, MPI_Status *status),
                  (request, flag, status), 1, request)
INJECT_COMPLETION(Waitall, (int count, MPI_Request requests[], MPI_Status statuses[]),
                  (count, requests, statuses), count, requests)
INJECT_COMPLETION(Testall, (int count, MPI_Request requests[], int *flag, MPI_Status statuses[]),
                  (count, requests, flag, statuses), count, requests)
INJECT_COMPLETION(Waitany, (int count, MPI_Request requests[], int *index, MPI_Status *status),
                  (count, requests, index, status), count, requests)
INJECT_COMPLETION(Testany,
                  (int count, MPI_Request requests[], int *index, int *flag, MPI_Status *status),
                  (count, requests, index, flag, status), count, requests)
INJECT_COMPLETION(Waitsome,
                  (int incount, MPI_Request requests[], int *outcount, int indices[],
                   MPI_Status statuses[]),
                  (incount, requests, outcount, indices, statuses), incount, requests)
INJECT_COMPLETION(Testsome,
                  (int incount, MPI_Request requests[], int *outcount, int indices[],
                   MPI_Status statuses[]),
                  (incount, requests, outcount, indices, statuses), incount, requests)

INJECT_EXPORT int MPI_Request_free(MPI_Request *request)
{
    if (!tracking_requests || request == NULL)
        return PMPI_Request_free(request);
    const MPI_Request freed = *request;
    const int error_code = PMPI_Request_free(request);
    if (error_code == MPI_SUCCESS)
        pending_forget(freed);
    return error_code;
}
