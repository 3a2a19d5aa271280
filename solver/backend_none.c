/* Built when HEATSOLVE_GPU=off: there is no HIP backend. */
#include <stdio.h>

#include "backend.h"

const heat_backend_ops *const heat_backend_hip = NULL;

int heat_hip_available(char *reason, size_t len)
{
    if (reason) snprintf(reason, len, "heatsolve was built without a GPU platform (-DHEATSOLVE_GPU=off)");
    return 0;
}

void heat_hip_start_runtime(void) {}
