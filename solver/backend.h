#pragma once
/*
 * The backend interface: a table of operations with private state behind a
 * void pointer (BabelStream's Stream, PETSc's ops tables). The time loop
 * only ever calls through the core table (heat_backend_ops) and its CG
 * table; the benchmark reaches the kernel variants through the core table's
 * `bench`; a GPU's asynchronous hooks hang off its `async`. The halo
 * transport comes to create() on its own (solver/halo_transport.h).
 *
 * Host arrays exchanged with a backend are compact, halo excluded, x fastest:
 * n[0] * n[1] * n[2] elements of the problem's precision.
 */
#include "halo_transport.h"
#include "problem.h"

struct heat_energy;

typedef struct heat_field_stats {
    double min, max; /* of this block's finite values */
    double sum;      /* of the whole grid's finite values, added per reduction brick in an order that no
                        decomposition or thread count changes (solver/reduce.h); collective */
    long nonfinite;  /* NaN or Inf values seen in this block */
} heat_field_stats;

/* One benchmarkable kernel configuration. */
typedef struct heat_variant {
    char kernel[32]; /* variant name, e.g. "heat_tiled_nt" */
    int tile;        /* tile factor m; 1 where it does not apply */
    int laplacian;   /* 1: computes f = lap(u) only; 0: a full heat step */
    int steps_per_sweep; /* heat steps one sweep takes (fused kernels); 0 or 1: one. time_variant
                            reports the time per step */
} heat_variant;

/* Chebyshev preconditioner z = poly(A) r: `degree` - 1 operator applications
 * after z1 = r / centre (Saad, Iterative Methods, Alg. 12.1, with z0 = 0):
 *   z_{k+1} = z_k + keep[k] (z_k - z_{k-1}) + push[k] (r - A z_k),  k = 1 .. degree-1. */
enum { HEAT_CHEBYSHEV_MAX = 64 };
typedef struct heat_chebyshev {
    int degree;
    double inv_centre;                 /* 1 / ((lambda_max + lambda_min) / 2) */
    double keep[HEAT_CHEBYSHEV_MAX];   /* rho_k rho_{k-1} */
    double push[HEAT_CHEBYSHEV_MAX];   /* 2 rho_k / half-width */
} heat_chebyshev;

/* diag(A) of an owned point: base, plus face[f] for each boundary face f
 * the point touches. jacobi = 0: the preconditioner weight is 1 instead. */
typedef struct heat_cg_diagonal {
    double base, face[6];
    int jacobi;
} heat_cg_diagonal;

heat_cg_diagonal heat_cg_diagonal_make(const heat_problem *problem);

/*
 * Implicit steps (solver/implicit.c drives them): preconditioned CG on
 *   A x = b,  A = I - theta alpha dt L0,  b = alpha dt L(u),  then u += x,
 * where L is the Laplacian with the run's boundary conditions and L0 the
 * same with homogeneous ones (ghost = -u Dirichlet, +u Neumann). The vectors
 * x, r, p, q (and z, w for Chebyshev) live in the backend. Every dot product
 * is summed in an order fixed by the grid alone, so the same inputs give the
 * same bits on every run. "M^-1 r" is r / diag(A) (jacobi), r (none), or the
 * Chebyshev z (chebyshev).
 */
typedef struct heat_cg_ops {
    /* r = b = fraction alpha dt L(u); *rr = r.r; *rz = r.M^-1 r (jacobi, none).
     * fraction 1/2 with theta 1/2: a backward Euler half step (same A).
     * *rr = 0 (a steady field) ends the solve here, with no finish: a
     * materials run's energy balance counts the step's power in begin then. */
    int (*begin)(void *state, double fraction, double *rr, double *rz);
    /* Chebyshev only: z = poly(A) r; *rz = r.z */
    int (*precondition)(void *state, const heat_chebyshev *cheb, double *rz);
    /* p = M^-1 r + beta p (beta = 0: p is not read) */
    int (*direction)(void *state, double beta);
    /* q = A p; *pq = p.q */
    int (*apply)(void *state, double *pq);
    /* x = a p (first) or x += a p; r -= a q; *rr = r.r; *rz = r.M^-1 r (jacobi, none) */
    int (*update)(void *state, double a, int first, double *rr, double *rz);
    /* u += x */
    int (*finish)(void *state);
} heat_cg_ops;

/* The benchmark's and the verification tests' access to every kernel
 * variant a backend builds (heatsolve bench, app/bench.c); the time loop
 * never calls these. run_variant: `steps` times halo fill, one sweep of the
 * variant from the current field into the other, swap (a Laplacian variant
 * leaves f = lap(u) as the current field). variants: every variant, the
 * seeds' Laplacian-only ones included, which the production choice never
 * considers; a materials run's solver lists its general step's kernels instead. */
typedef struct heat_bench_ops {
    int (*run_variant)(void *state, const heat_variant *variant, long steps);
    int (*variants)(void *state, const heat_variant **list, int *count);
    int (*time_variant)(void *state, const heat_variant *variant, int reps, double *median_ms);
    int (*time_copy)(void *state, int reps, double *median_ms, double *bytes);
    int (*time_step)(void *state, int reps, double *median_ms);
    /* A step of the production kernel taken one step a sweep (its halo pass included where it needs
     * one): the like-for-like reference of a step that takes one a sweep, where time_step's takes
     * several. NULL where the backend has no such single step apart from time_step's. */
    int (*time_single_step)(void *state, int reps, double *median_ms);
} heat_bench_ops;

/* Optional asynchronous hooks of a backend whose field lives apart from
 * the host (a GPU's); a backend without them has none of the four (the
 * table is NULL) and the solver falls back to download(). */
typedef struct heat_async_ops {
    /* Page-locks (pin = 1) or releases host memory that download() fills
     * again and again (the checkpoint snapshot), so that those copies run at
     * the bus's speed. Returns 0 when the memory stays pageable: copies still
     * work, only slower. */
    int (*pin_host)(void *state, void *host, size_t bytes, int pin);
    /* Starts copying the current field into host while advance() goes on;
     * host must not be read before download_wait() returns. Any thread may
     * call download_wait(); it returns once no copy is in flight. A snapshot
     * started before the previous one was waited for first waits for that
     * one (several writes in flight). */
    int (*download_async)(void *state, void *host);
    int (*download_wait)(void *state);
    /* Called after destroy() when this process uses the device no more: a
     * GPU's context goes now, beside whatever the process still does,
     * instead of in the runtime's exit handler after main returns. */
    void (*release_device)(void);
} heat_async_ops;

/* What the time loop calls: a backend's core operations. */
typedef struct heat_backend_ops {
    const char *name;
    /* Allocates two fields and selects the kernel. transport: how the ghosts
     * of the problem's exchanged faces travel and how processes add their
     * sums (solver/halo_transport.h); NULL: a single block that exchanges
     * nothing. The backend keeps a copy. */
    int (*create)(const heat_problem *problem, const heat_halo_transport *transport, void **state);
    /* Frees everything; accepts NULL and clears the handle. */
    void (*destroy)(void **state);
    int (*upload)(void *state, const void *host);
    int (*download)(void *state, void *host);
    /* Halo fill then one heat step, `steps` times. */
    int (*advance)(void *state, long steps);
    /* Statistics of the field (heat_field_stats); with several processes every one calls it. */
    int (*stats)(void *state, heat_field_stats *stats);
    /* One line naming the device, e.g. "NVIDIA H100 (79.1 GiB)". */
    const char *(*device_name)(void *state);
    /* Kernel configuration the time loop uses, e.g. "heat_tiled_nt m=4 block 256x1x1". */
    const char *(*kernel_description)(void *state);

    /* Implicit schemes; the vectors exist when create() saw an implicit scheme. */
    const heat_cg_ops *cg;

    /* Materials runs (solver/materials.h): the clock of the next step, whose
     * start time t = clock_time + (step - clock_step) dt (the time loop's
     * formula, so that a restart has the same bits) switches the sources.
     * advance() moves it on a step a step; the implicit steps are told each
     * step. NULL: a backend that has no materials runs. */
    int (*set_clock)(void *state, long step, long clock_step, double clock_time);
    /* Materials runs: the energy balance (struct heat_energy, solver/materials.h); collective.
     * set_energy: a restart's energy in so far (HEAT_ENERGY_KINDS values). NULL: none. */
    int (*energy)(void *state, struct heat_energy *energy);
    int (*set_energy)(void *state, const double *energy_in);
    /* Can this backend run the problem? NULL: constant-coefficient runs only
     * (no materials). The solver takes the CPU backend where a GPU's cannot. */
    int (*supports)(const heat_problem *problem);

    /* The benchmark's variants and timing (never NULL). */
    const heat_bench_ops *bench;
    /* Asynchronous snapshots, pinned host memory, early device release; NULL: none. */
    const heat_async_ops *async;
} heat_backend_ops;

extern const heat_backend_ops heat_backend_cpu;
/* NULL when heatsolve was built without a GPU platform. */
extern const heat_backend_ops *const heat_backend_hip;

/* Is a usable GPU present? Fills reason (when non-NULL) with why not. */
int heat_hip_available(char *reason, size_t len);

/* Starts the GPU runtime and device 0's context, the one-time set-up that
 * the first GPU call of a process otherwise pays. Safe on any thread beside
 * other GPU calls (those wait for the set-up, then find it done); a failure
 * is left for those calls to report. */
void heat_hip_start_runtime(void);
