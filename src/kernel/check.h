/* The kernel's side of failing (fail.h): every runtime failure names the rank and what it was
   doing, and an abort removes the run's temporary outputs. */
#ifndef MPIGUIDE_CHECK_H
#define MPIGUIDE_CHECK_H

#include <stddef.h>

#include "fail.h"

/* Sets what every later runtime failure names first (e.g. "IN.csv:3 (exp_id 2)"); "" clears. */
void fail_context(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A file (slot 0 or 1) that an abort removes, on any rank; NULL forgets the slot. */
void remove_on_abort(int slot, const char *path);

/* malloc/calloc/realloc that abort with a message (exit 1: not the input's fault) instead of
   returning NULL. */
void *xmalloc(size_t bytes);
void *xcalloc(size_t count, size_t size);
void *xrealloc(void *p, size_t bytes);

#endif
