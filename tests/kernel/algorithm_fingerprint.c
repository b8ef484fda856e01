/* A PMPI library for tests/kernel/test_algorithm_switch.py: what each call of MPI_Allreduce,
   MPI_Reduce, MPI_Bcast and MPI_Allgather of an experiment did inside the library, without
   timing. An experiment's calls are those on MPI_FLOAT, and the sums on MPI_DOUBLE (the
   kernel's own collectives use neither):
   - reductions on MPI_FLOAT: MPI_SUM is replaced by a user-defined sum that counts its
     invocations and the elements they combine on this rank, and sums a hash of the code path
     that invoked it: the return addresses on the stack that lie in the MPI library, as offsets
     from its base (the same in every process and launch of one build). Algorithms differ in
     where they reduce, whatever the transport carries their messages, and MPICH's and Open
     MPI's algorithm functions, internal or not, are on that stack. On MPI_DOUBLE the library's
     own MPI_SUM stays, for the algorithms that refuse a user-defined operation (MPICH's
     reduce_scatter_allgather, reduce_scatter_gather: "builtin-op");
   - Open MPI: the algorithm function of coll/base that coll/tuned (a plugin of its own) entered
     first: MPI_Bcast and MPI_Allgather, whose algorithms leave nothing else to count, through
     wrappers of the exported ompi_coll_base_bcast_intra_* and ompi_coll_base_allgather_intra_*
     (the pml monitoring component's per-peer pvars, which would count the messages, are
     registered and then invalid in Open MPI 4.1.4 here: MPI_T_ERR_INVALID_NAME); where coll/han
     answered the call, its entry point instead (mca_coll_han_<collective>_intra_dynamic, which
     Open MPI 5's libmpi exports and installs in a communicator's table through the GOT);
   - MPICH: the values of MPIR_CVAR_<COLLECTIVE>_INTRA_ALGORITHM and of
     MPIR_CVAR_DEVICE_COLLECTIVES when the call starts (its algorithm functions are internal to
     libmpich), and, where the transport is UCX, the messages this rank sent during the call
     and their bytes (a broadcast's only trace outside the library): Debian's MPICH
     is built for ch4:ucx alone, so even a rank on the same node is sent to through UCX's
     exported ucp_tag_send_nbx and ucp_tag_send_sync_nbx, which this library wraps (an
     algorithm's messages are its fingerprint where nothing else is, as for MPI_Bcast), and
     how many of them a schedule sent: the "nb" algorithms run the nonblocking collective's
     schedule, whose messages carry tags from MPIR_FIRST_NBC_TAG (287, mpir_tags.h) up, where
     the blocking algorithms use their collective's fixed tag below it; the MPI tag is the low
     32 bits of the UCX tag, less MPICH's two error bits (ch4/netmod/ucx/ucx_types.h).
   MPICH: the kernel's own MPI_Bcast calls (any other datatype) are recorded as own_bcast with
   those values too.
   At MPI_Finalize each rank writes one line per call to $FINGERPRINT_DIR/rank<R>.tsv:
   collective, count, invocations, elements, cvar, function, device, sends, bytes, scheduled,
   path (-1 or -: not observed). */
#define _GNU_SOURCE
#include <ctype.h>
#include <dlfcn.h>
#include <execinfo.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#define MAX_CALLS 100000

struct call {
    const char *collective;
    int count;
    long long invocations, elements, cvar;
    const char *function;
    long long device;
    long long sends, bytes, scheduled;
    unsigned long long path;
};

static struct call calls[MAX_CALLS];
static int ncalls;
static long long invocations, elements;
static unsigned long long path; /* the sum of the invocations' code-path hashes */
/* MPICH: this rank's messages through UCX, their bytes, and those a schedule sent */
static long long sends, bytes, scheduled;
static MPI_Op counting_sum = MPI_OP_NULL;
static int tool_started;

static void check(int rc, const char *what)
{
    if (rc != MPI_SUCCESS) {
        fprintf(stderr, "algorithm_fingerprint: %s failed (%d)\n", what, rc);
        PMPI_Abort(MPI_COMM_WORLD, 3);
    }
}

/* The MPI library's base address: that of the object holding PMPI_Allreduce. */
static const void *mpi_base(void)
{
    static const void *base;
    Dl_info info;
    if (!base && dladdr(dlsym(RTLD_DEFAULT, "PMPI_Allreduce"), &info))
        base = info.dli_fbase;
    if (!base) {
        fprintf(stderr, "algorithm_fingerprint: no PMPI_Allreduce\n");
        abort();
    }
    return base;
}

/* FNV-1a over the offsets of the return addresses on the stack that lie in the MPI library. */
static unsigned long long code_path(void)
{
    void *frames[32];
    const int depth = backtrace(frames, 32);
    unsigned long long hash = 14695981039346656037ull;
    for (int i = 1; i < depth; i++) {
        Dl_info info;
        if (dladdr(frames[i], &info) && info.dli_fbase == mpi_base())
            hash = (hash ^ (unsigned long long)((char *)frames[i] - (char *)info.dli_fbase)) *
                   1099511628211ull;
    }
    return hash;
}

static void counting_sum_fn(void *in, void *inout, int *len, MPI_Datatype *type)
{
    (void)type;
    path += code_path();
    invocations++;
    elements += *len;
    const float *a = in;
    float *b = inout;
    for (int i = 0; i < *len; i++)
        b[i] += a[i];
}

#if defined(MPICH_VERSION)
static void start_tool(void)
{
    if (tool_started)
        return;
    int provided;
    check(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided), "MPI_T_init_thread");
    tool_started = 1;
}
#endif

/* MPICH: the value of the cvar `name` now; -1 elsewhere. */
static long long cvar_value(const char *name)
{
#if defined(MPICH_VERSION)
    start_tool();
    int index, count, value;
    MPI_T_cvar_handle handle;
    check(MPI_T_cvar_get_index(name, &index), "MPI_T_cvar_get_index");
    check(MPI_T_cvar_handle_alloc(index, NULL, &handle, &count), "MPI_T_cvar_handle_alloc");
    check(MPI_T_cvar_read(handle, &value), "MPI_T_cvar_read");
    check(MPI_T_cvar_handle_free(&handle), "MPI_T_cvar_handle_free");
    return value;
#else
    (void)name;
    return -1;
#endif
}

/* MPICH: the collective's algorithm cvar now; -1 elsewhere. */
static long long algorithm_cvar(const char *collective)
{
    char name[128];
    int n = snprintf(name, sizeof name, "MPIR_CVAR_");
    for (const char *c = collective; *c; c++)
        name[n++] = (char)toupper((unsigned char)*c);
    snprintf(name + n, sizeof name - (size_t)n, "_INTRA_ALGORITHM");
    return cvar_value(name);
}

#if defined(MPICH_VERSION)
/* ucp_tag_send_nbx and ucp_tag_send_sync_nbx (ucp.h), the handles opaque: MPICH passes the
   bytes of contiguous data as `count`. */
#define FIRST_SCHEDULE_TAG 287
#define MPI_TAG_BITS 0x1FFFFFFFu /* the UCX tag's low 32 bits less bits 29 and 30 */
#define TAG_SEND_ARGS void *ep, const void *buffer, size_t count, uint64_t tag, const void *param
#define TAG_SEND(name)                                                                         \
    void *name(TAG_SEND_ARGS)                                                                  \
    {                                                                                          \
        static void *(*real)(TAG_SEND_ARGS);                                                   \
        if (!real)                                                                             \
            *(void **)&real = dlsym(RTLD_NEXT, #name);                                         \
        if (!real) {                                                                           \
            fprintf(stderr, "algorithm_fingerprint: no " #name " below MPICH\n");             \
            abort();                                                                           \
        }                                                                                      \
        sends++;                                                                               \
        bytes += (long long)count;                                                             \
        scheduled += (tag & MPI_TAG_BITS) >= FIRST_SCHEDULE_TAG;                               \
        return real(ep, buffer, count, tag, param);                                            \
    }
TAG_SEND(ucp_tag_send_nbx)
TAG_SEND(ucp_tag_send_sync_nbx)
#endif

/* Open MPI: the first coll/han or coll/base function entered during the current call. */
static const char *entered;

#if defined(OPEN_MPI)
/* The real function `name` (resolved once into *slot). */
static void *next(void **slot, const char *name)
{
    if (!*slot)
        *slot = dlsym(RTLD_NEXT, name);
    if (!*slot) {
        fprintf(stderr, "algorithm_fingerprint: no %s in the MPI library\n", name);
        abort();
    }
    if (!entered)
        entered = name;
    return *slot;
}

/* coll/base's prototypes (coll_base_functions.h), the pointers opaque. */
#define BCAST_ARGS void *buffer, int count, void *datatype, int root, void *comm, void *module
#define BCAST_PASS buffer, count, datatype, root, comm, module
#define BCAST(suffix)                                                                          \
    int ompi_coll_base_bcast_intra_##suffix(BCAST_ARGS, uint32_t segsize)                     \
    {                                                                                          \
        static void *real;                                                                     \
        int (*f)(BCAST_ARGS, uint32_t) =                                                       \
            (int (*)(BCAST_ARGS, uint32_t))next(&real, "ompi_coll_base_bcast_intra_" #suffix); \
        return f(BCAST_PASS, segsize);                                                         \
    }
BCAST(pipeline)
BCAST(binomial)
BCAST(bintree)
BCAST(split_bintree)
BCAST(scatter_allgather)
BCAST(scatter_allgather_ring)

int ompi_coll_base_bcast_intra_basic_linear(BCAST_ARGS)
{
    static void *real;
    int (*f)(BCAST_ARGS) =
        (int (*)(BCAST_ARGS))next(&real, "ompi_coll_base_bcast_intra_basic_linear");
    return f(BCAST_PASS);
}

int ompi_coll_base_bcast_intra_chain(BCAST_ARGS, uint32_t segsize, int32_t chains)
{
    static void *real;
    int (*f)(BCAST_ARGS, uint32_t, int32_t) = (int (*)(BCAST_ARGS, uint32_t, int32_t))next(
        &real, "ompi_coll_base_bcast_intra_chain");
    return f(BCAST_PASS, segsize, chains);
}

int ompi_coll_base_bcast_intra_knomial(BCAST_ARGS, uint32_t segsize, int radix)
{
    static void *real;
    int (*f)(BCAST_ARGS, uint32_t, int) =
        (int (*)(BCAST_ARGS, uint32_t, int))next(&real, "ompi_coll_base_bcast_intra_knomial");
    return f(BCAST_PASS, segsize, radix);
}

#define ALLGATHER_ARGS                                                                         \
    const void *sendbuf, int sendcount, void *sendtype, void *recvbuf, int recvcount,          \
        void *recvtype, void *comm, void *module
#define ALLGATHER(suffix)                                                                      \
    int ompi_coll_base_allgather_intra_##suffix(ALLGATHER_ARGS)                                \
    {                                                                                          \
        static void *real;                                                                     \
        int (*f)(ALLGATHER_ARGS) =                                                             \
            (int (*)(ALLGATHER_ARGS))next(&real, "ompi_coll_base_allgather_intra_" #suffix);   \
        return f(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, module);   \
    }
ALLGATHER(bruck)
ALLGATHER(recursivedoubling)
ALLGATHER(ring)
ALLGATHER(neighborexchange)
ALLGATHER(basic_linear)
ALLGATHER(two_procs)
ALLGATHER(sparbit) /* Open MPI 5 */

/* coll/han's entry points (coll_han_dynamic.h), entered before any coll/base function. */
int mca_coll_han_bcast_intra_dynamic(BCAST_ARGS)
{
    static void *real;
    int (*f)(BCAST_ARGS) = (int (*)(BCAST_ARGS))next(&real, "mca_coll_han_bcast_intra_dynamic");
    return f(BCAST_PASS);
}

int mca_coll_han_allgather_intra_dynamic(ALLGATHER_ARGS)
{
    static void *real;
    int (*f)(ALLGATHER_ARGS) =
        (int (*)(ALLGATHER_ARGS))next(&real, "mca_coll_han_allgather_intra_dynamic");
    return f(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, module);
}
#endif

/* A call recorded as `collective`, with the cvar of `algorithm_of`. */
static struct call *begin(const char *collective, const char *algorithm_of, int count)
{
    if (ncalls == MAX_CALLS) {
        fprintf(stderr, "algorithm_fingerprint: more than %d calls\n", MAX_CALLS);
        PMPI_Abort(MPI_COMM_WORLD, 3);
    }
    struct call *call = &calls[ncalls++];
    *call = (struct call){collective, count, -1, -1, algorithm_cvar(algorithm_of), "-",
                          cvar_value("MPIR_CVAR_DEVICE_COLLECTIVES"), -1, -1, -1, 0};
    invocations = elements = sends = bytes = scheduled = 0;
    path = 0;
    entered = NULL;
    return call;
}

static void end(struct call *call, int reduction)
{
    if (entered)
        call->function = entered;
    if (reduction) {
        call->invocations = invocations;
        call->elements = elements;
        call->path = path;
    }
#if defined(MPICH_VERSION)
    call->sends = sends;
    call->bytes = bytes;
    call->scheduled = scheduled;
#endif
}

/* Whether a reduction is an experiment's. */
static int marked(MPI_Datatype datatype, MPI_Op op)
{
    return datatype == MPI_FLOAT || (datatype == MPI_DOUBLE && op == MPI_SUM);
}

static MPI_Op counted(MPI_Datatype datatype, MPI_Op op)
{
    if (datatype != MPI_FLOAT || op != MPI_SUM)
        return op;
    if (counting_sum == MPI_OP_NULL)
        check(PMPI_Op_create(counting_sum_fn, 1, &counting_sum), "MPI_Op_create");
    return counting_sum;
}

int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                  MPI_Op op, MPI_Comm comm)
{
    if (!marked(datatype, op))
        return PMPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm);
    struct call *call = begin("allreduce", "allreduce", count);
    int rc = PMPI_Allreduce(sendbuf, recvbuf, count, datatype, counted(datatype, op), comm);
    end(call, datatype == MPI_FLOAT && op == MPI_SUM);
    return rc;
}

int MPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
               int root, MPI_Comm comm)
{
    if (!marked(datatype, op))
        return PMPI_Reduce(sendbuf, recvbuf, count, datatype, op, root, comm);
    struct call *call = begin("reduce", "reduce", count);
    int rc = PMPI_Reduce(sendbuf, recvbuf, count, datatype, counted(datatype, op), root, comm);
    end(call, datatype == MPI_FLOAT && op == MPI_SUM);
    return rc;
}

int MPI_Bcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm)
{
    if (datatype != MPI_FLOAT) {
        /* The kernel's own: MPICH's choice must be its own (cvar 0) there. */
#if defined(MPICH_VERSION)
        end(begin("own_bcast", "bcast", count), 0);
#endif
        return PMPI_Bcast(buffer, count, datatype, root, comm);
    }
    struct call *call = begin("bcast", "bcast", count);
    int rc = PMPI_Bcast(buffer, count, datatype, root, comm);
    end(call, 0);
    return rc;
}

int MPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    if (sendtype != MPI_FLOAT)
        return PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
    struct call *call = begin("allgather", "allgather", sendcount);
    int rc = PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
    end(call, 0);
    return rc;
}

int MPI_Finalize(void)
{
    int rank;
    check(PMPI_Comm_rank(MPI_COMM_WORLD, &rank), "MPI_Comm_rank");
    const char *dir = getenv("FINGERPRINT_DIR");
    if (dir) {
        char path[4096];
        snprintf(path, sizeof path, "%s/rank%d.tsv", dir, rank);
        FILE *out = fopen(path, "w");
        if (!out) {
            fprintf(stderr, "algorithm_fingerprint: cannot write %s\n", path);
            PMPI_Abort(MPI_COMM_WORLD, 3);
        }
        for (int i = 0; i < ncalls; i++)
            fprintf(out, "%s\t%d\t%lld\t%lld\t%lld\t%s\t%lld\t%lld\t%lld\t%lld\t%llx\n",
                    calls[i].collective, calls[i].count, calls[i].invocations, calls[i].elements,
                    calls[i].cvar, calls[i].function, calls[i].device, calls[i].sends,
                    calls[i].bytes, calls[i].scheduled, calls[i].path);
        if (fclose(out) != 0) {
            fprintf(stderr, "algorithm_fingerprint: cannot write %s\n", path);
            PMPI_Abort(MPI_COMM_WORLD, 3);
        }
    }
    if (counting_sum != MPI_OP_NULL)
        check(PMPI_Op_free(&counting_sum), "MPI_Op_free");
    if (tool_started)
        check(MPI_T_finalize(), "MPI_T_finalize");
    return PMPI_Finalize();
}
