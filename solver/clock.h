#pragma once
/* Wall-clock seconds from an arbitrary start, monotonic: for timing phases
 * in code that may be built without OpenMP (omp_get_wtime). */
#include <time.h>

static inline double monotonic_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}
