#include "algorithm/mpit.h"

#include <stdbool.h>
#include <stdlib.h>

#include "check.h"

static int started;

void mpit_start(void)
{
    if (started)
        return;
    int provided;
    MPI_CHECK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    started = 1;
}

void mpit_stop(void)
{
    if (!started)
        return;
    MPI_CHECK(MPI_T_finalize());
    started = 0;
}

/* The cvar's type and enumeration, and its description (malloc'ed) when asked for. */
static void cvar_info(int index, MPI_Datatype *type, MPI_T_enum *enumeration,
                      char **description)
{
    /* The lengths first, then the text. */
    int name_length = 0, description_length = 0, verbosity, bind, scope;
    MPI_CHECK(MPI_T_cvar_get_info(index, NULL, &name_length, &verbosity, type, enumeration, NULL,
                                  &description_length, &bind, &scope));
    if (!description)
        return;
    char *name = xmalloc((size_t)name_length + 1);
    *description = xmalloc((size_t)description_length + 1);
    name_length += 1;
    description_length += 1;
    MPI_CHECK(MPI_T_cvar_get_info(index, name, &name_length, &verbosity, type, enumeration,
                                  *description, &description_length, &bind, &scope));
    free(name);
}

int mpit_cvar_find(const char *name, struct mpit_cvar *cvar)
{
    mpit_start();
    const int rc = MPI_T_cvar_get_index(name, &cvar->index);
    if (rc == MPI_T_ERR_INVALID_NAME)
        return -1;
    MPI_CHECK(rc);
    MPI_T_enum enumeration;
    cvar_info(cvar->index, &cvar->type, &enumeration, NULL);
    if (cvar->type != MPI_INT && cvar->type != MPI_C_BOOL)
        fail_abort("MPI_T control variable %s is neither an int nor a bool", name);
    int count;
    MPI_CHECK(MPI_T_cvar_handle_alloc(cvar->index, NULL, &cvar->handle, &count));
    if (count != 1)
        fail_abort("MPI_T control variable %s holds %d values, not one", name, count);
    return 0;
}

void mpit_cvar_free(struct mpit_cvar *cvar)
{
    MPI_CHECK(MPI_T_cvar_handle_free(&cvar->handle));
}

int mpit_cvar_read(const struct mpit_cvar *cvar)
{
    if (cvar->type == MPI_C_BOOL) {
        bool flag = false;
        MPI_CHECK(MPI_T_cvar_read(cvar->handle, &flag));
        return flag;
    }
    int value = 0;
    MPI_CHECK(MPI_T_cvar_read(cvar->handle, &value));
    return value;
}

void mpit_cvar_write(const struct mpit_cvar *cvar, int value)
{
    if (cvar->type == MPI_C_BOOL) {
        bool flag = value != 0;
        MPI_CHECK(MPI_T_cvar_write(cvar->handle, &flag));
        return;
    }
    MPI_CHECK(MPI_T_cvar_write(cvar->handle, &value));
}

char *mpit_cvar_description(int index, MPI_T_enum *enumeration)
{
    mpit_start();
    MPI_Datatype type;
    char *description;
    cvar_info(index, &type, enumeration, &description);
    return description;
}
