/* Simulated local work between start and wait of a nonblocking operation. */
#ifndef MPIGUIDE_WORK_H
#define MPIGUIDE_WORK_H

#include <stdint.h>

/* Counts iterations down to 0 in a loop the compiler cannot remove or shorten. */
void work_spin(int64_t iterations);

#endif
