/* An MPI library that is neither Open MPI nor MPICH (Intel MPI among them): the kernel knows no
   way to choose its algorithms, so column 'algorithm' is refused before MPI_Init. */
#include "algorithm/library.h"
#include "mpi_family.h"

#if !defined(BUILT_WITH_OPENMPI) && !defined(BUILT_WITH_MPICH)

#include <stdio.h>

#if defined(BUILT_LIBRARY)
#define OTHER_LIBRARY BUILT_LIBRARY
#else
#define OTHER_LIBRARY "an MPI library that is neither Open MPI nor MPICH"
#endif

const char library_name[] = OTHER_LIBRARY;
const char library_mechanism[] = "none";
const char library_reserved[] = "";
const int library_per_communicator = 0;
const int library_switches = 0;
const char library_dup_key[] = "";
const char library_dup_value[] = "";

int library_before_init(char *error, size_t size)
{
    snprintf(error, size,
             "column 'algorithm': the kernel was built with " OTHER_LIBRARY
             ", whose algorithms it cannot choose");
    return -1;
}

int library_ready(char *error, size_t size)
{
    return library_before_init(error, size);
}

void library_cvar_name(const char *collective, char *name, size_t size)
{
    snprintf(name, size, "%s", collective);
}

int library_choices(int cvar_index, struct algorithm_choice *choices, int max, char *error,
                    size_t size)
{
    (void)cvar_index;
    (void)choices;
    (void)max;
    return library_before_init(error, size);
}

void library_force(const struct mpit_cvar *algorithm, int value, struct library_saved *saved)
{
    (void)algorithm;
    (void)value;
    (void)saved;
}

void library_restore(const struct mpit_cvar *algorithm, const struct library_saved *saved)
{
    (void)algorithm;
    (void)saved;
}

#endif
