#include "work.h"

void work_spin(int64_t iterations)
{
    while (iterations > 0) {
        /* The empty asm claims to read and modify the counter: the loop must really run. */
        __asm__ __volatile__("" : "+r"(iterations));
        iterations--;
    }
}
