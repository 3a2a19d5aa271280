#define _POSIX_C_SOURCE 200809L
#include "gpu_visibility.h"

#include <stdlib.h>

static int narrowed;

static int launcher_chose_gpus(void)
{
    return getenv("CUDA_VISIBLE_DEVICES") || getenv("HIP_VISIBLE_DEVICES") || getenv("ROCR_VISIBLE_DEVICES");
}

void gpu_visibility_narrow(int ranks_on_node, int gpu_wanted)
{
    if (!gpu_wanted || ranks_on_node != 1 || launcher_chose_gpus()) return;
    /* ROCm's HIP honours CUDA_VISIBLE_DEVICES as CUDA does. An error leaves
     * every GPU visible: slower to start, no different otherwise. */
    narrowed = setenv("CUDA_VISIBLE_DEVICES", "0", 0) == 0;
}

const char *gpu_visibility_note(void)
{
    return narrowed ? "GPU runtime: shown device 0 only (one process uses one GPU; set CUDA_VISIBLE_DEVICES to choose)"
                    : NULL;
}
