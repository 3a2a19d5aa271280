#pragma once
/*
 * The backend interface: a table of operations with private state behind a
 * void pointer (BabelStream's Stream, PETSc's ops tables). The time loop and
 * the benchmark only ever call through this table.
 *
 * Host arrays exchanged with a backend are compact, halo excluded, x fastest:
 * n[0] * n[1] * n[2] elements of the problem's precision.
 */
#include "problem.h"

typedef struct heat_field_stats {
    double min, max;
    double sum;      /* sum over owned points, in a fixed order (deterministic) */
    long nonfinite;  /* NaN or Inf values seen */
} heat_field_stats;

/* One benchmarkable kernel configuration. */
typedef struct heat_variant {
    char kernel[32]; /* variant name, e.g. "heat_tiled_nt" */
    int tile;        /* tile factor m; 1 where it does not apply */
    int laplacian;   /* 1: computes f = lap(u) only; 0: a full heat step */
} heat_variant;

typedef struct heat_backend_ops {
    const char *name;
    /* Allocates two fields and selects the kernel. */
    int (*create)(const heat_problem *problem, void **state);
    /* Frees everything; accepts NULL and clears the handle. */
    void (*destroy)(void **state);
    int (*upload)(void *state, const void *host);
    int (*download)(void *state, void *host);
    /* Halo fill then one heat step, `steps` times. */
    int (*advance)(void *state, long steps);
    int (*stats)(void *state, heat_field_stats *stats);
    /* One line naming the device, e.g. "NVIDIA H100 (79.1 GiB)". */
    const char *(*device_name)(void *state);
    /* Kernel configuration the time loop uses, e.g. "heat_tiled_nt m=4 block 256x1x1". */
    const char *(*kernel_description)(void *state);

    /* Verification and benchmark support. run_variant: `steps` times halo fill,
     * one sweep of the variant from the current field into the other, swap
     * (a Laplacian variant leaves f = lap(u) as the current field). */
    int (*run_variant)(void *state, const heat_variant *variant, long steps);
    int (*variants)(void *state, const heat_variant **list, int *count);
    int (*time_variant)(void *state, const heat_variant *variant, int reps, double *median_ms);
    int (*time_copy)(void *state, int reps, double *median_ms, double *bytes);
    int (*time_step)(void *state, int reps, double *median_ms);
} heat_backend_ops;

extern const heat_backend_ops heat_backend_cpu;
/* NULL when heatsolve was built without a GPU platform. */
extern const heat_backend_ops *const heat_backend_hip;

/* Is a usable GPU present? Fills reason (when non-NULL) with why not. */
int heat_hip_available(char *reason, size_t len);
