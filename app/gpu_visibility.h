#pragma once
#include <pthread.h>
/*
 * Which GPUs the GPU runtime sees. A process alone on its node uses one GPU
 * (device 0, as the backend would pick), but CUDA and ROCm set up every GPU
 * they can see before their first call returns, each at a cost: on a
 * four-GPU host that setup was most of a short run's start-up. Such a process
 * therefore shows the runtime device 0 alone, unless the launcher or the user
 * already chose (CUDA_VISIBLE_DEVICES, HIP_VISIBLE_DEVICES or
 * ROCR_VISIBLE_DEVICES set: Slurm's --gpus-per-task, say), whose choice wins.
 * Several ranks on a node keep every GPU: they take them by node-local rank
 * and NCCL counts them.
 */

/* Before the first GPU call. ranks_on_node: processes of this run on this node;
 * gpu_wanted: 0 when the command line already chose the CPU backend. */
void gpu_visibility_narrow(int ranks_on_node, int gpu_wanted);

/* A line for -v when gpu_visibility_narrow narrowed, else NULL. */
const char *gpu_visibility_note(void);

/* The GPU runtime's start (the driver, device 0's context) takes a short
 * run's largest share of its start-up and needs nothing of the run: a thread
 * of its own does it while the host reads the configuration's consequences
 * (the output folder, the earlier run's files); the backend's first calls
 * then find the runtime up, or wait for it. */
typedef struct gpu_runtime_start {
    pthread_t thread;
    int running; /* the thread runs or has not been joined */
} gpu_runtime_start;

/* Starts it beside the caller where the run is one process that may use a
 * GPU (gpu_wanted: 0 when the CPU backend was asked for); else nothing. */
void gpu_runtime_start_beside(gpu_runtime_start *start, int processes, int gpu_wanted);

/* Waits for the thread (none started: returns at once). */
void gpu_runtime_started(gpu_runtime_start *start);
