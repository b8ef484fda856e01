/* MPICH: MPIR_CVAR_<COLLECTIVE>_INTRA_ALGORITHM is an int whose values are the positions of the
   choices its description lists ("auto - Internal algorithm selection ...", then one line per
   algorithm), with no MPI_T enumeration: the names are read from the description.
   MPIR_<Collective>_impl reads it at every call; the device may choose first unless
   MPIR_CVAR_DEVICE_COLLECTIVES is none, and a choice that cannot serve the call's arguments
   falls back silently unless MPIR_CVAR_COLLECTIVE_FALLBACK is error. All three are global:
   written around an experiment's repetitions only. */
#include "algorithm/library.h"
#include "mpi_family.h"

#if defined(BUILT_WITH_MPICH)

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

const char library_name[] = "MPICH";
const char library_mechanism[] =
    "MPIR_CVAR_<COLLECTIVE>_INTRA_ALGORITHM written before the experiment's repetitions and "
    "restored after them, with MPIR_CVAR_DEVICE_COLLECTIVES=none and "
    "MPIR_CVAR_COLLECTIVE_FALLBACK=error";
const char library_reserved[] = "auto";
const int library_per_communicator = 0;
const int library_switches = 1;
const char library_dup_key[] = "";
const char library_dup_value[] = "";

#define DEVICE "MPIR_CVAR_DEVICE_COLLECTIVES"
#define FALLBACK "MPIR_CVAR_COLLECTIVE_FALLBACK"

/* The device and fallback cvars and the values the switch gives them, found by
   library_ready. */
static struct mpit_cvar device, fallback;
static int device_none = -1, fallback_error = -1;

/* A character of a word as a description glues it to the next: MPICH 4's MPI_T gives the
   description without its line ends ("... algorithmnb   - Force nonblocking ..."); MPICH 5
   keeps them, one choice a line. */
static int word_char(char c)
{
    return isalnum((unsigned char)c) || c == '_';
}

/* One "NAME<spaces>- " of a description: the word that ends before the spaces (the name, with
   whatever the line before ended in glued to its front), where it starts, and the spaces. */
struct entry {
    const char *word;
    size_t length, spaces;
    int delimited;  /* nothing is glued to the word's front */
    int line_start; /* the word starts a line: the whole word is the name, however long */
};

/* The choices a description lists, in order: the reserved "auto - ..." (one space, when
   present) and names padded with spaces to one column, "NAME<spaces>- text" each, glued to the
   text before. Every padded name has the width of the column less its spaces: the width is
   that of the entries with nothing glued to them (the one after the reserved choice's
   "...JSON_FILE)", or after a full stop). A name that starts a line (MPICH 5 keeps the line
   ends) is its whole word: MPICH 5 lists names wider than the column. Returns how many, or -1
   when the description does not read so. */
static int parse_choices(const char *description, struct algorithm_choice *choices, int max)
{
    struct entry entries[LIBRARY_MAX_CHOICES];
    int count = 0;
    for (const char *dash = strstr(description, " - "); dash; dash = strstr(dash + 1, " - ")) {
        const char *end = dash;
        while (end > description && end[-1] == ' ')
            end--;
        const char *word = end;
        while (word > description && word_char(word[-1]))
            word--;
        if (word == end)
            continue;
        if (count == max)
            return -1;
        entries[count++] = (struct entry){word, (size_t)(end - word), (size_t)(dash + 1 - end),
                                          word == description || !word_char(word[-1]),
                                          word == description || word[-1] == '\n'};
    }
    const size_t reserved = strlen(library_reserved);
    size_t width = SIZE_MAX;
    int width_seen = 0;
    for (int i = 0; i < count; i++) {
        const struct entry *e = &entries[i];
        const int is_reserved = e->spaces == 1 && e->length >= reserved &&
                                strncmp(e->word + e->length - reserved, library_reserved,
                                        reserved) == 0;
        if (is_reserved || e->line_start)
            continue;
        if (e->length + e->spaces < width) {
            width = e->length + e->spaces;
            width_seen = e->delimited;
        } else if (e->length + e->spaces == width) {
            width_seen |= e->delimited;
        }
    }
    if (count > 0 && width != SIZE_MAX && !width_seen)
        return -1;
    for (int i = 0; i < count; i++) {
        const struct entry *e = &entries[i];
        size_t length = e->line_start ? e->length
                        : e->spaces == 1 && e->length >= reserved &&
                                strncmp(e->word + e->length - reserved, library_reserved,
                                        reserved) == 0
                            ? reserved
                            : width - e->spaces;
        if (length == 0 || length > e->length || length > ALGORITHM_NAME_MAX)
            return -1;
        const char *name = e->word + e->length - length;
        for (size_t c = 0; c < length; c++)
            if (!islower((unsigned char)name[c]) && !isdigit((unsigned char)name[c]) &&
                name[c] != '_')
                return -1;
        memcpy(choices[i].name, name, length);
        choices[i].name[length] = '\0';
        choices[i].value = i;
    }
    return count;
}

/* The value of the choice `name` of the cvar, or -1. */
static int choice_value(const struct mpit_cvar *cvar, const char *name)
{
    struct algorithm_choice choices[LIBRARY_MAX_CHOICES];
    MPI_T_enum enumeration;
    char *description = mpit_cvar_description(cvar->index, &enumeration);
    const int count = parse_choices(description, choices, LIBRARY_MAX_CHOICES);
    free(description);
    for (int i = 0; i < count; i++)
        if (strcmp(choices[i].name, name) == 0)
            return choices[i].value;
    return -1;
}

int library_before_init(char *error, size_t size)
{
    (void)error;
    (void)size;
    return 0;
}

int library_ready(char *error, size_t size)
{
    if (device_none >= 0)
        return 0;
    if (mpit_cvar_find(DEVICE, &device) != 0 || mpit_cvar_find(FALLBACK, &fallback) != 0) {
        snprintf(error, size, "MPICH has no MPI_T control variable " DEVICE " or " FALLBACK);
        return -1;
    }
    device_none = choice_value(&device, "none");
    fallback_error = choice_value(&fallback, "error");
    if (device_none < 0 || fallback_error < 0) {
        snprintf(error, size,
                 "MPICH's " DEVICE " has no choice 'none' or " FALLBACK " no choice 'error'");
        return -1;
    }
    return 0;
}

void library_cvar_name(const char *collective, char *name, size_t size)
{
    int n = snprintf(name, size, "MPIR_CVAR_");
    for (const char *c = collective; *c && (size_t)n + 1 < size; c++)
        name[n++] = (char)toupper((unsigned char)*c);
    snprintf(name + n, size - (size_t)n, "_INTRA_ALGORITHM");
}

int library_choices(int cvar_index, struct algorithm_choice *choices, int max, char *error,
                    size_t size)
{
    MPI_T_enum enumeration;
    char *description = mpit_cvar_description(cvar_index, &enumeration);
    const int count = parse_choices(description, choices, max);
    free(description);
    if (count <= 0 || strcmp(choices[0].name, library_reserved) != 0) {
        snprintf(error, size,
                 "the control variable's description does not list its choices as this kernel "
                 "reads them ('auto - ...' first, then one 'name - ...' per line)");
        return -1;
    }
    return count;
}

void library_force(const struct mpit_cvar *algorithm, int value, struct library_saved *saved)
{
    saved->algorithm = mpit_cvar_read(algorithm);
    saved->device = mpit_cvar_read(&device);
    saved->fallback = mpit_cvar_read(&fallback);
    mpit_cvar_write(&device, device_none);
    mpit_cvar_write(&fallback, fallback_error);
    mpit_cvar_write(algorithm, value);
}

void library_restore(const struct mpit_cvar *algorithm, const struct library_saved *saved)
{
    mpit_cvar_write(algorithm, saved->algorithm);
    mpit_cvar_write(&fallback, saved->fallback);
    mpit_cvar_write(&device, saved->device);
}

#endif
