/* The small caches libmpiguide-tune keeps per thread, keyed by MPI handle, so that a replaced
   call does not ask the MPI library again what an earlier call already learnt. */
#ifndef MPIGUIDE_TUNE_THREAD_CACHE_H
#define MPIGUIDE_TUNE_THREAD_CACHE_H

#include <stddef.h>
#include <stdint.h>

/* Per thread, so that threads never write each other's slots; in the initial-exec TLS model, so
   that reading one is a load relative to the thread pointer rather than a call to
   __tls_get_addr. That model is for a library loaded when the program starts, which this one is
   (LD_PRELOAD, or linked). */
#define TUNE_THREAD_LOCAL _Thread_local __attribute__((tls_model("initial-exec")))

/* The slot of `handle` in a table of `slots` slots (a power of two, at most 256). Handles are
   pointers (Open MPI), whose low bits are alignment, or ints whose high bits say the kind of
   object (MPICH): their bits are mixed (Fibonacci hashing) and the top ones taken. */
static inline size_t tune_slot(uintptr_t handle, size_t slots)
{
    return (size_t)(((uint64_t)handle * UINT64_C(0x9E3779B97F4A7C15)) >> 56) & (slots - 1);
}

#endif
