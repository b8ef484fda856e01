/* libmpiguide-inject: a PMPI interposition library that slows chosen MPI functions down by a
 * controlled busy-wait, so a campaign can plant a known slowdown and measure whether mpiguide
 * detects it. Selected by MPIGUIDE_INJECT (see spec.h and docs/selftest.md);
 * loaded with LD_PRELOAD. */
#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "fail.h"
#include "pending.h"
#include "preload.h"
#include "spec.h"

#define INJECT_VARIABLE "MPIGUIDE_INJECT"

enum inject_function {
#define INJECT_BLOCKING(name, params, args, datatype) INJECT_FN_##name,
#define INJECT_NONBLOCKING(name, params, args, datatype) INJECT_FN_##name,
#include "interposed.def"
#undef INJECT_BLOCKING
#undef INJECT_NONBLOCKING
    INJECT_FN_COUNT
};

static const char *const function_names[INJECT_FN_COUNT] = {
#define INJECT_BLOCKING(name, params, args, datatype) "MPI_" #name,
#define INJECT_NONBLOCKING(name, params, args, datatype) "MPI_" #name,
#include "interposed.def"
#undef INJECT_BLOCKING
#undef INJECT_NONBLOCKING
};

static const bool function_is_nonblocking[INJECT_FN_COUNT] = {
#define INJECT_BLOCKING(name, params, args, datatype) false,
#define INJECT_NONBLOCKING(name, params, args, datatype) true,
#include "interposed.def"
#undef INJECT_BLOCKING
#undef INJECT_NONBLOCKING
};

/* Whether a function moves data of one datatype, which a spec's `datatype=` filter can name: its
 * entry in interposed.def names a datatype argument, not INJECT_UNTYPED (still a bare token here,
 * defined only for the wrappers below). */
#define INJECT_TYPED_INIT(datatype) (!INJECT_IS_UNTYPED_##datatype)
#define INJECT_IS_UNTYPED_INJECT_UNTYPED 1
#define INJECT_IS_UNTYPED_datatype 0
#define INJECT_IS_UNTYPED_sendtype 0
#define INJECT_IS_UNTYPED_recvtype 0
static const bool function_is_typed[INJECT_FN_COUNT] = {
#define INJECT_BLOCKING(name, params, args, datatype) INJECT_TYPED_INIT(datatype),
#define INJECT_NONBLOCKING(name, params, args, datatype) INJECT_TYPED_INIT(datatype),
#include "interposed.def"
#undef INJECT_BLOCKING
#undef INJECT_NONBLOCKING
};

/* The datatypes a filter can name: the kernel's dtypes (char, int, float, double) and bytes. */
static const char *const datatype_names[] = {"MPI_CHAR", "MPI_INT", "MPI_FLOAT", "MPI_DOUBLE",
                                             "MPI_BYTE"};
#define DATATYPE_COUNT (sizeof datatype_names / sizeof datatype_names[0])

static MPI_Datatype datatype_handle(int index)
{
    const MPI_Datatype handles[DATATYPE_COUNT] = {MPI_CHAR, MPI_INT, MPI_FLOAT, MPI_DOUBLE,
                                                  MPI_BYTE};
    return handles[index];
}

static const struct inject_names spec_names = {function_names, function_is_typed, INJECT_FN_COUNT,
                                               datatype_names, DATATYPE_COUNT};

/* Written once, in MPI_Init before the library starts, and only read afterwards. */
static struct inject_rule rules[INJECT_FN_COUNT];
/* Per function, the datatype its rule's filter names (MPI_DATATYPE_NULL: any). */
static MPI_Datatype filtered_datatype[INJECT_FN_COUNT];
/* What a call owes that its rule's filter excludes: timed like the others, no delay. */
static const struct inject_rule no_delay = {INJECT_FRACTION, 0.0, INJECT_ANY_DATATYPE};
/* Some nonblocking function is slowed down, so completion calls must look for its requests. */
static bool tracking_requests;

const struct fail_component fail_component = {"mpiguide-inject", NULL, NULL};

static int64_t now_ns(void)
{
    struct timespec now;
    if (clock_gettime(CLOCK_MONOTONIC, &now) != 0)
        fail_abort("clock_gettime(CLOCK_MONOTONIC) failed");
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

/* Reads the spec (preload.h): parsed aside and kept only whole, so that a refused spec leaves
 * every function untouched while the MPI library starts. */
void preload_configure(void)
{
    const char *spec = getenv(INJECT_VARIABLE);
    if (spec == NULL) {
        preload_refuse(INJECT_VARIABLE " is not set, but libmpiguide-inject is preloaded: set it "
                       "to the functions to slow down, e.g. " INJECT_VARIABLE
                       "='MPI_Allreduce:usec=200'");
        return;
    }
    struct inject_rule parsed[INJECT_FN_COUNT];
    char error[4096];
    if (inject_parse_spec(spec, &spec_names, parsed, error, sizeof error) != 0) {
        preload_refuse(INJECT_VARIABLE " %s", error);
        return;
    }
    for (int function = 0; function < INJECT_FN_COUNT; function++) {
        rules[function] = parsed[function];
        if (function_is_nonblocking[function] && rules[function].kind != INJECT_OFF)
            tracking_requests = true;
        filtered_datatype[function] = rules[function].datatype == INJECT_ANY_DATATYPE
            ? MPI_DATATYPE_NULL
            : datatype_handle(rules[function].datatype);
    }
}

static void compose_announcement(FILE *out, void *context)
{
    (void)context;
    char summary[4096];
    inject_describe(rules, &spec_names, summary, sizeof summary);
    fprintf(out, "%s: active: %s\n", fail_component.name, summary);
}

/* The rules that are on (preload.h), in one write (fail.h). */
void preload_announce(void)
{
    stderr_line(compose_announcement, NULL);
}

/* A blocking call pays its delay right after it returns. */
static void pay_now(const struct inject_rule *rule, int64_t start_ns)
{
    const int64_t end_ns = now_ns();
    spin(end_ns, inject_delay_ns(rule, end_ns - start_ns));
}

/* The rule a call of `function` with `datatype` pays: its function's, unless the rule's filter
 * names another datatype. */
static const struct inject_rule *rule_for(int function, MPI_Datatype datatype)
{
    const MPI_Datatype filter = filtered_datatype[function];
    return filter == MPI_DATATYPE_NULL || filter == datatype ? &rules[function] : &no_delay;
}

/* What the wrappers pass as the datatype of a function interposed.def calls untyped. */
#define INJECT_UNTYPED MPI_DATATYPE_NULL

/* Calls PMPI_<name>; under a rule, timed, and `on_success` follows a successful call (with `rule`
 * and `start_ns` in scope). */
#define INJECT_WRAPPER(name, params, args, datatype, on_success)                                   \
    PRELOAD_EXPORT int MPI_##name params                                                           \
    {                                                                                              \
        if (rules[INJECT_FN_##name].kind == INJECT_OFF)                                            \
            return PMPI_##name args;                                                               \
        const struct inject_rule *rule = rule_for(INJECT_FN_##name, datatype);                     \
        const int64_t start_ns = now_ns();                                                         \
        const int error_code = PMPI_##name args;                                                   \
        if (error_code == MPI_SUCCESS)                                                             \
            on_success;                                                                            \
        return error_code;                                                                         \
    }

#define INJECT_BLOCKING(name, params, args, datatype) \
    INJECT_WRAPPER(name, params, args, datatype, pay_now(rule, start_ns))
/* A nonblocking start only records its request; the completion call pays the delay. */
#define INJECT_NONBLOCKING(name, params, args, datatype) \
    INJECT_WRAPPER(name, params, args, datatype, pending_add(*request, rule, now_ns() - start_ns))

#include "interposed.def"
#undef INJECT_BLOCKING
#undef INJECT_NONBLOCKING
#undef INJECT_WRAPPER
#undef INJECT_UNTYPED

/* Every way a request can complete: the completion call is charged to the recorded operations it
 * waits on, and pays the delay of those it completes. */
#define INJECT_COMPLETION(name, params, args, count, requests)                                     \
    PRELOAD_EXPORT int MPI_##name params                                                           \
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

PRELOAD_EXPORT int MPI_Request_free(MPI_Request *request)
{
    if (!tracking_requests || request == NULL)
        return PMPI_Request_free(request);
    const MPI_Request freed = *request;
    const int error_code = PMPI_Request_free(request);
    if (error_code == MPI_SUCCESS)
        pending_forget(freed);
    return error_code;
}
