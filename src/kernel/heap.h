/* The allocator setting of a launch (--heap), applied before MPI_Init, and the counters that
   show what the heap did during an experiment (docs/kernel.md, "Heap and page faults"). */
#ifndef MPIGUIDE_HEAP_H
#define MPIGUIDE_HEAP_H

#include <stddef.h>
#include <stdio.h>

enum heap_setting { HEAP_DEFAULT, HEAP_FIXED };

/* Bytes of heap that `fixed` maps and touches at start (and never gives back): the MPI
   library's temporary buffers up to about this size come from memory that is already mapped. */
#define HEAP_RESERVE_BYTES ((size_t)64 << 20)

/* The setting named `name` ("default", "fixed"). Returns 0, or -1 for an unknown name. */
int heap_setting_parse(const char *name, enum heap_setting *out);
const char *heap_setting_name(enum heap_setting setting);

/* Applies the setting to this process's allocator; call before MPI_Init, so that the library's
   own allocations follow it too. Returns 0, or -1 with the reason in `error`. */
int heap_apply(enum heap_setting setting, char *error, size_t error_size);

/* Counters of this process: minor and major page faults so far (getrusage), and the number of
   allocations the allocator currently serves by a mapping of their own (mallinfo: hblks). */
struct heap_counters {
    unsigned long long minor_faults, major_faults, mmapped_allocations;
};
void heap_counters_read(struct heap_counters *out);

/* The provenance's "heap" object: setting, the allocator parameters it fixed, the reserve,
   glibc's version and the GLIBC_TUNABLES the process started with. */
void heap_write_json(FILE *json, enum heap_setting setting);

#endif
