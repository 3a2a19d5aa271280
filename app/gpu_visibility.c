#define _POSIX_C_SOURCE 200809L
#include "gpu_visibility.h"

#include <stdlib.h>

#include "solver/backend.h"

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

static void *start_runtime(void *unused)
{
    (void)unused;
    heat_hip_start_runtime();
    return NULL;
}

void gpu_runtime_start_beside(gpu_runtime_start *start, int processes, int gpu_wanted)
{
    start->running = 0;
    /* Ranks choose their devices by node-local rank, after MPI is up. */
    if (!gpu_wanted || processes != 1 || !heat_backend_hip) return;
    start->running = pthread_create(&start->thread, NULL, start_runtime, NULL) == 0; /* else: the backend starts it */
}

void gpu_runtime_started(gpu_runtime_start *start)
{
    if (start->running) pthread_join(start->thread, NULL), start->running = 0;
}
