#include "pending.h"

#include <pthread.h>
#include <stdlib.h>

#include "fail.h"

struct pending_op {
    MPI_Request request;
    const struct inject_rule *rule;
    int64_t elapsed_ns; /* time inside MPI so far: the start and every completion call over it */
    uint64_t claim;     /* the completion call holding it, 0 if none */
    int slot;           /* its index in that call's request array */
};

/* A few operations are outstanding at a time, so a linear table is the fastest structure. The
 * lock makes it safe under MPI_THREAD_MULTIPLE; uncontended it costs tens of nanoseconds. */
static struct pending_op *ops;
static size_t op_count;
static size_t op_capacity;
static uint64_t last_claim;
static pthread_mutex_t ops_lock = PTHREAD_MUTEX_INITIALIZER;

static void lock(void)
{
    if (pthread_mutex_lock(&ops_lock) != 0)
        fail_abort("cannot lock the table of pending operations");
}

static void unlock(void)
{
    if (pthread_mutex_unlock(&ops_lock) != 0)
        fail_abort("cannot unlock the table of pending operations");
}

static void remove_op(size_t index)
{
    ops[index] = ops[--op_count];
}

void pending_add(MPI_Request request, const struct inject_rule *rule, int64_t elapsed_ns)
{
    lock();
    if (op_count == op_capacity) {
        const size_t capacity = op_capacity == 0 ? 16 : 2 * op_capacity;
        struct pending_op *grown = realloc(ops, capacity * sizeof *grown);
        if (grown == NULL)
            fail_abort("out of memory for the table of pending operations");
        ops = grown;
        op_capacity = capacity;
    }
    ops[op_count++] = (struct pending_op){request, rule, elapsed_ns, 0, 0};
    unlock();
}

uint64_t pending_claim(int count, const MPI_Request requests[])
{
    if (count <= 0 || requests == NULL)
        return 0;
    lock();
    uint64_t claim = 0;
    if (op_count > 0) {
        const uint64_t candidate = ++last_claim;
        for (int slot = 0; slot < count; slot++) {
            if (requests[slot] == MPI_REQUEST_NULL)
                continue;
            for (size_t i = 0; i < op_count; i++) {
                if (ops[i].claim == 0 && ops[i].request == requests[slot]) {
                    ops[i].claim = candidate;
                    ops[i].slot = slot;
                    claim = candidate;
                    break;
                }
            }
        }
    }
    unlock();
    return claim;
}

int64_t pending_settle(uint64_t claim, const MPI_Request requests[], int64_t elapsed_ns)
{
    if (claim == 0)
        return 0;
    int64_t delay_ns = 0;
    lock();
    for (size_t i = 0; i < op_count;) {
        struct pending_op *op = &ops[i];
        if (op->claim != claim) {
            i++;
            continue;
        }
        op->elapsed_ns += elapsed_ns;
        if (requests[op->slot] == MPI_REQUEST_NULL) {
            delay_ns += inject_delay_ns(op->rule, op->elapsed_ns);
            remove_op(i);
        } else {
            op->claim = 0;
            i++;
        }
    }
    unlock();
    return delay_ns;
}

void pending_forget(MPI_Request request)
{
    lock();
    for (size_t i = 0; i < op_count; i++) {
        if (ops[i].request == request) {
            remove_op(i);
            break;
        }
    }
    unlock();
}
