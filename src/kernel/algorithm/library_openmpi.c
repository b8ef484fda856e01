/* Open MPI's coll/tuned: coll_tuned_<collective>_algorithm is an enumeration (0 "ignore": the
   library decides). coll/tuned copies it into a communicator's module when the communicator is
   created, and only with coll_tuned_use_dynamic_rules on, which is read-only after MPI_Init.
   With dynamic rules on, no rules file and nothing forced, a communicator keeps the fixed
   decision functions (coll_tuned_module.c): the library decides as without them.
   A component of higher priority than coll/tuned (han, ucc, hcoll; adapt or sm when raised)
   would answer the calls it provides on a communicator it accepts, and the algorithm forced in
   coll/tuned would never run: the duplicates under an algorithm carry the info
   ompi_comm_coll_preference=tuned, which puts coll/tuned above every other component on that
   communicator (coll_base_comm_select.c, 4.1 and 5.0). coll/tuned itself declines every
   communicator when its priority is negative. */
#include "algorithm/library.h"
#include "mpi_family.h"

#if defined(BUILT_WITH_OPENMPI)

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "check.h"

#define DYNAMIC_RULES "coll_tuned_use_dynamic_rules"
#define DYNAMIC_RULES_ENV "OMPI_MCA_" DYNAMIC_RULES
#define PRIORITY "coll_tuned_priority"

const char library_name[] = "Open MPI";
const char library_mechanism[] =
    "coll/tuned dynamic rules: the control variable written, a communicator duplicated under "
    "it with info ompi_comm_coll_preference=tuned (coll/tuned answers its calls whatever "
    "component the launch ranks higher), the variable written back";
const char library_reserved[] = "ignore";
const int library_per_communicator = 1;
const int library_switches = 1;
const char library_dup_key[] = "ompi_comm_coll_preference";
const char library_dup_value[] = "tuned";

/* Whether an MCA parameter's text says "off" (Open MPI reads booleans as 0/1, false/true,
   no/yes, disabled/enabled). */
static int says_off(const char *value)
{
    static const char *const off[] = {"0", "false", "no", "disabled", "f", "n"};
    for (size_t i = 0; i < sizeof off / sizeof off[0]; i++)
        if (strcasecmp(value, off[i]) == 0)
            return 1;
    return 0;
}

int library_before_init(char *error, size_t size)
{
    const char *value = getenv(DYNAMIC_RULES_ENV);
    if (value && says_off(value)) {
        snprintf(error, size,
                 "column 'algorithm' needs Open MPI's coll/tuned dynamic rules, but the "
                 "environment sets " DYNAMIC_RULES_ENV "=%s",
                 value);
        return -1;
    }
    if (!value && setenv(DYNAMIC_RULES_ENV, "1", 0) != 0) {
        snprintf(error, size, "cannot set " DYNAMIC_RULES_ENV "=1 in the environment");
        return -1;
    }
    return 0;
}

int library_ready(char *error, size_t size)
{
    struct mpit_cvar rules;
    if (mpit_cvar_find(DYNAMIC_RULES, &rules) != 0) {
        snprintf(error, size, "Open MPI has no MPI_T control variable " DYNAMIC_RULES
                              " (is coll/tuned built?)");
        return -1;
    }
    const int on = mpit_cvar_read(&rules);
    mpit_cvar_free(&rules);
    if (!on) {
        snprintf(error, size,
                 "column 'algorithm' needs Open MPI's coll/tuned dynamic rules, but "
                 DYNAMIC_RULES " is off (an MCA parameter file or " DYNAMIC_RULES_ENV
                 " on some rank sets it to 0; the kernel sets it only where it could read the "
                 "input before MPI_Init)");
        return -1;
    }
    struct mpit_cvar priority;
    if (mpit_cvar_find(PRIORITY, &priority) != 0) {
        snprintf(error, size, "Open MPI has no MPI_T control variable " PRIORITY);
        return -1;
    }
    const int rank = mpit_cvar_read(&priority);
    mpit_cvar_free(&priority);
    if (rank < 0) {
        snprintf(error, size,
                 "column 'algorithm' needs Open MPI's coll/tuned, but " PRIORITY
                 " is %d: coll/tuned declines every communicator and no forced algorithm "
                 "would run (unset OMPI_MCA_" PRIORITY " or set it to 0 or more)",
                 rank);
        return -1;
    }
    return 0;
}

void library_cvar_name(const char *collective, char *name, size_t size)
{
    snprintf(name, size, "coll_tuned_%s_algorithm", collective);
}

int library_choices(int cvar_index, struct algorithm_choice *choices, int max, char *error,
                    size_t size)
{
    MPI_T_enum enumeration;
    free(mpit_cvar_description(cvar_index, &enumeration));
    if (enumeration == MPI_T_ENUM_NULL) {
        snprintf(error, size, "the control variable has no enumeration of algorithms");
        return -1;
    }
    int count, length = 0;
    char ignored[1];
    MPI_CHECK(MPI_T_enum_get_info(enumeration, &count, ignored, &length));
    if (count > max) {
        snprintf(error, size, "the control variable offers %d choices, more than %d", count,
                 max);
        return -1;
    }
    for (int i = 0; i < count; i++) {
        length = (int)sizeof choices[i].name;
        MPI_CHECK(MPI_T_enum_get_item(enumeration, i, &choices[i].value, choices[i].name,
                                      &length));
    }
    return count;
}

/* The algorithm matters only when a communicator is created: the device and fallback of other
   libraries have no counterpart here. */
void library_force(const struct mpit_cvar *algorithm, int value, struct library_saved *saved)
{
    saved->algorithm = mpit_cvar_read(algorithm);
    mpit_cvar_write(algorithm, value);
}

void library_restore(const struct mpit_cvar *algorithm, const struct library_saved *saved)
{
    mpit_cvar_write(algorithm, saved->algorithm);
}

#endif
