/* mallopt, mallinfo2 and gnu_get_libc_version are glibc extensions. */
#define _GNU_SOURCE
#include "heap.h"

#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "io/json.h"

#ifdef __GLIBC__
#include <gnu/libc-version.h>
#include <malloc.h>
#endif

static const char *const setting_names[] = {"default", "fixed"};

int heap_setting_parse(const char *name, enum heap_setting *out)
{
    for (size_t i = 0; i < sizeof setting_names / sizeof *setting_names; i++)
        if (strcmp(name, setting_names[i]) == 0) {
            *out = (enum heap_setting)i;
            return 0;
        }
    return -1;
}

const char *heap_setting_name(enum heap_setting setting)
{
    return setting_names[setting];
}

#ifdef __GLIBC__
/* What `fixed` sets, in this order: M_ARENA_MAX first, so that every later allocation, of any
   thread the library starts, comes from the one arena the reserve below fills. */
static const struct {
    int param;
    int value;
    const char *name;
} fixed_params[] = {
    /* One arena: the reserve serves every thread. */
    {M_ARENA_MAX, 1, "M_ARENA_MAX"},
    /* No allocation gets a mapping of its own: a large temporary buffer freed and allocated
       again per call would be unmapped and faulted in again every time, and glibc's default
       moves the size above which it does that with every such free (the history). */
    {M_MMAP_MAX, 0, "M_MMAP_MAX"},
    /* Freed memory at the top of the heap is never returned: it stays mapped and touched. */
    {M_TRIM_THRESHOLD, -1, "M_TRIM_THRESHOLD"},
};
#endif

int heap_apply(enum heap_setting setting, char *error, size_t error_size)
{
    if (setting == HEAP_DEFAULT)
        return 0;
#ifdef __GLIBC__
    for (size_t i = 0; i < sizeof fixed_params / sizeof *fixed_params; i++)
        if (mallopt(fixed_params[i].param, fixed_params[i].value) != 1) {
            snprintf(error, error_size, "--heap fixed: mallopt(%s, %d) was refused",
                     fixed_params[i].name, fixed_params[i].value);
            return -1;
        }
    /* Map and touch the reserve once, then free it: it stays at the top of the heap (nothing
       is trimmed), so later allocations up to its size need no page fault. */
    const long page = sysconf(_SC_PAGESIZE) > 0 ? sysconf(_SC_PAGESIZE) : 4096;
    volatile unsigned char *reserve = malloc(HEAP_RESERVE_BYTES);
    if (!reserve) {
        snprintf(error, error_size, "--heap fixed: cannot allocate the %zu-byte reserve",
                 HEAP_RESERVE_BYTES);
        return -1;
    }
    for (size_t at = 0; at < HEAP_RESERVE_BYTES; at += (size_t)page)
        reserve[at] = 1;
    free((void *)reserve);
    return 0;
#else
    snprintf(error, error_size, "--heap fixed needs glibc's malloc (mallopt)");
    return -1;
#endif
}

void heap_counters_read(struct heap_counters *out)
{
    struct rusage usage;
    memset(out, 0, sizeof *out);
    if (getrusage(RUSAGE_SELF, &usage) == 0) {
        out->minor_faults = (unsigned long long)usage.ru_minflt;
        out->major_faults = (unsigned long long)usage.ru_majflt;
    }
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
    out->mmapped_allocations = (unsigned long long)mallinfo2().hblks;
#elif defined(__GLIBC__)
    out->mmapped_allocations = (unsigned long long)(unsigned)mallinfo().hblks;
#endif
}

void heap_write_json(FILE *json, enum heap_setting setting)
{
    json_key(json, "heap");
    fputs("{", json);
    json_key(json, "setting");
    json_string(json, heap_setting_name(setting));
    fputs(", ", json);
    json_key(json, "mallopt");
#ifdef __GLIBC__
    if (setting == HEAP_FIXED) {
        fputc('{', json);
        for (size_t i = 0; i < sizeof fixed_params / sizeof *fixed_params; i++) {
            if (i)
                fputs(", ", json);
            json_key(json, fixed_params[i].name);
            fprintf(json, "%d", fixed_params[i].value);
        }
        fputc('}', json);
    } else {
        fputs("null", json);
    }
    fprintf(json, ", \"reserve_bytes\": %zu, ", setting == HEAP_FIXED ? HEAP_RESERVE_BYTES : 0);
    json_key(json, "glibc");
    json_string(json, gnu_get_libc_version());
#else
    fputs("null, \"reserve_bytes\": 0, \"glibc\": null", json);
#endif
    fputs(", ", json);
    json_key(json, "glibc_tunables");
    const char *tunables = getenv("GLIBC_TUNABLES");
    if (tunables)
        json_string(json, tunables);
    else
        fputs("null", json);
    fputc('}', json);
}
