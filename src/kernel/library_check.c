#include "library_check.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "mpi_family.h"

enum { AGREES = 0, REFUSED = 1, ASK_AGAIN = 2 };

/* A build whose mpi.h names no library (the standard MPI ABI's: one binary for several
   libraries) has nothing to check against. */
#if defined(BUILT_LIBRARY)
/* How each library's version text starts, and the library that says so: its version is the
   word after it ("Open MPI v4.1.4, package: …", "MPICH Version:      5.0.2\n…",
   "Intel(R) MPI Library 2021.19.0 for Linux* OS"). Derived libraries with texts of their own
   (MVAPICH, Cray MPICH) are not known: they are not checked. */
static const struct {
    const char *start, *library;
} known[] = {
    {"Open MPI v", "Open MPI"},
    {"MPICH Version:", "MPICH"},
    {"Intel(R) MPI Library ", "Intel MPI"},
};

struct library_id {
    const char *library;
    char version[64];
};

/* The library and version a version text names; 0 when it is none of the known ones. */
static int identify(const char *text, struct library_id *id)
{
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
        const size_t length = strlen(known[i].start);
        if (strncmp(text, known[i].start, length) != 0)
            continue;
        const char *version = text + length;
        while (*version == ' ' || *version == '\t')
            version++;
        const size_t word = strcspn(version, " \t\n,");
        if (word == 0 || word >= sizeof id->version)
            return 0;
        id->library = known[i].library;
        memcpy(id->version, version, word);
        id->version[word] = '\0';
        return 1;
    }
    return 0;
}

/* Equal, or one a prefix of the other ending where the other goes on with no digit: a text
   may give fewer parts ("2017 Update 1") or a suffix ("5.0.0rc12") that mpi.h leaves out. */
static int same_version(const char *built, const char *running)
{
    size_t i = 0;
    while (built[i] != '\0' && built[i] == running[i])
        i++;
    if (built[i] == running[i])
        return 1;
    if (built[i] != '\0' && running[i] != '\0')
        return 0;
    const char next = built[i] != '\0' ? built[i] : running[i];
    return i > 0 && !isdigit((unsigned char)next) && isdigit((unsigned char)built[i - 1]);
}

#endif

/* 1 (with the message) when the version text names another library or version than the
   build's mpi.h did. */
static int mismatch(const char *text, char *message, size_t size)
{
#if defined(BUILT_LIBRARY)
    struct library_id running;
    if (!identify(text, &running))
        return 0;
    if (strcmp(running.library, BUILT_LIBRARY) == 0 &&
        same_version(BUILT_VERSION, running.version))
        return 0;
    snprintf(message, size,
             "built with %s %s (its mpi.h), but the MPI library started is %s %s "
             "(MPI_Get_library_version): start the kernel with the library it was built with "
             "(that library's launcher, no other library's folder first on LD_LIBRARY_PATH), "
             "or build it with this library's mpicc",
             BUILT_LIBRARY, BUILT_VERSION, running.library, running.version);
    return 1;
#else
    (void)text;
    (void)message;
    (void)size;
    return 0;
#endif
}

int library_check(void)
{
    char text[MPI_MAX_LIBRARY_VERSION_STRING], message[512];
    int length = 0;
    if (MPI_Get_library_version(text, &length) != MPI_SUCCESS)
        return ASK_AGAIN;
    text[sizeof text - 1] = '\0';
    if (!mismatch(text, message, sizeof message))
        return AGREES;
    fail_say("%s", message);
    return REFUSED;
}

void library_check_started(int status)
{
    if (status == REFUSED)
        exit(EXIT_BAD_INPUT);
    if (status != ASK_AGAIN)
        return;
    char text[MPI_MAX_LIBRARY_VERSION_STRING], message[512];
    int length = 0;
    MPI_CHECK(MPI_Get_library_version(text, &length));
    text[sizeof text - 1] = '\0';
    if (mismatch(text, message, sizeof message))
        fail_exit(EXIT_BAD_INPUT, "%s", message);
}
