/* comm_rules.h. A communicator's rules are an attribute of it, under a keyval of this library's
   own: MPI frees them when the communicator is freed, and never copies them to a duplicate,
   which finds its own on its first call. Reading an attribute is a look-up inside the MPI
   library, so in front of it each thread remembers, by handle, the communicators it called last.
   A handle may name another communicator once its communicator is freed; so whenever MPI frees
   the rules of a communicator, every thread forgets every communicator it remembers (the
   generation, tune_comm_generation, moves on) and finds them again through their attributes. */
#include "comm_rules.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>

#include "handled.h"
#include "thread_cache.h"

atomic_ulong tune_comm_generation = 1;

#define REMEMBERED 8 /* communicators per thread, a power of two */
static TUNE_THREAD_LOCAL struct remembered {
    MPI_Comm comm;
    unsigned long generation;
    const struct comm_rules *rules;
} remembered[REMEMBERED];

/* Held while a communicator's attribute is read and, if it has none, attached; and while the
   keyval is created. Two threads calling on a new communicator at once (on different ones, as MPI
   allows) never both create the keyval, and one never replaces the rules the other is using. */
static pthread_mutex_t attaching = PTHREAD_MUTEX_INITIALIZER;
/* Created on the first call that needs it: after MPI_Init, which a keyval needs. */
static int keyval = MPI_KEYVAL_INVALID;

/* The keyval's delete callback: the communicator is being freed. */
static int forget(MPI_Comm comm, int key, void *rules, void *extra_state)
{
    (void)comm, (void)key, (void)extra_state;
    atomic_fetch_add_explicit(&tune_comm_generation, 1, memory_order_release);
    free(rules);
    return MPI_SUCCESS;
}

/* The rules among `all` for a communicator of `size` ranks; NULL if out of memory. */
static struct comm_rules *rules_for_size(int size, const struct tune_rules *all)
{
    struct comm_rules *on = malloc(sizeof *on + all->count * sizeof on->rules[0]);
    if (!on)
        return NULL;
    on->size = size;
    size_t found = 0;
    for (int collective = 0; collective < TUNE_COLLECTIVES; collective++) {
        on->start[collective] = found;
        for (size_t i = 0; i < all->count; i++) {
            const struct tune_rule *rule = &all->rules[i];
            const struct tune_replacement *with = &tune_replacements[rule->replacement];
            if ((int)with->collective == collective && tune_rule_covers_ranks(rule, size))
                on->rules[found++] = (struct comm_rule){rule->lo, rule->hi, with, i};
        }
    }
    on->start[TUNE_COLLECTIVES] = found;
    return on;
}

/* With `attaching` held: the keyval, created first if need be; 0 or an MPI error code. */
static int keyval_ready(void)
{
    if (keyval != MPI_KEYVAL_INVALID)
        return MPI_SUCCESS;
    const int rc = PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, forget, &keyval, NULL);
    if (rc != MPI_SUCCESS)
        keyval = MPI_KEYVAL_INVALID;
    return rc;
}

/* With `attaching` held: the rules attached to the intra-communicator `comm`, attached first if
   it has none; NULL if an MPI call fails or memory runs out. */
static const struct comm_rules *attached(MPI_Comm comm, const struct tune_rules *all)
{
    if (keyval_ready() != MPI_SUCCESS)
        return NULL;
    void *rules;
    int has_rules = 0;
    if (PMPI_Comm_get_attr(comm, keyval, &rules, &has_rules) != MPI_SUCCESS)
        return NULL;
    if (has_rules)
        return rules;
    int size;
    if (PMPI_Comm_size(comm, &size) != MPI_SUCCESS)
        return NULL;
    struct comm_rules *on = rules_for_size(size, all);
    if (!on)
        return NULL;
    if (PMPI_Comm_set_attr(comm, keyval, on) != MPI_SUCCESS) {
        free(on);
        return NULL;
    }
    return on;
}

int tune_comm_exempt(MPI_Comm comm)
{
    int size, rc;
    if ((rc = PMPI_Comm_size(comm, &size)) != MPI_SUCCESS)
        return rc;
    /* No rules of any size: the calls on `comm` find none and go to the library. */
    static const struct tune_rules none = {0};
    struct comm_rules *on = rules_for_size(size, &none);
    if (!on)
        return MPI_ERR_NO_MEM;
    if (pthread_mutex_lock(&attaching) != 0) {
        free(on);
        return MPI_ERR_INTERN;
    }
    if ((rc = keyval_ready()) == MPI_SUCCESS)
        rc = PMPI_Comm_set_attr(comm, keyval, on);
    if (rc != MPI_SUCCESS)
        free(on);
    if (pthread_mutex_unlock(&attaching) != 0)
        return MPI_ERR_INTERN;
    return rc;
}

const struct comm_rules *tune_comm_rules(MPI_Comm comm, const struct tune_rules *all)
{
    /* Read before the attribute, so that a communicator freed meanwhile leaves its slot stale. */
    const unsigned long now = tune_comm_now();
    struct remembered *slot = &remembered[tune_slot((uintptr_t)comm, REMEMBERED)];
    if (slot->comm == comm && slot->generation == now)
        return slot->rules;
    /* Intercommunicators get no attribute: every call on one goes to the library. */
    if (!tune_intra_communicator(comm) || pthread_mutex_lock(&attaching) != 0)
        return NULL;
    const struct comm_rules *on = attached(comm, all);
    if (pthread_mutex_unlock(&attaching) != 0 || !on)
        return NULL;
    *slot = (struct remembered){comm, now, on};
    return on;
}
