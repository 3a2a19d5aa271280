#pragma once
/*
 * The heat solver object: a backend chosen at run time plus the run's clock.
 * Life cycle: heat_solver_create, heat_solver_set_field, heat_solver_advance
 * (repeatedly), heat_solver_get_field / heat_solver_stats, heat_solver_destroy.
 */
#include "backend.h"
#include "implicit.h"

typedef struct heat_solver {
    const heat_backend_ops *ops;
    void *state;          /* the backend's private state */
    heat_problem problem;
    heat_halo_transport transport; /* how the block's ghosts travel; all NULL for a block alone */
    long step;            /* steps taken since t = 0 */
    double time;          /* clock_time + (step - clock_step) * dt (time units) */
    long clock_step;      /* where the current dt began: 0, or a restart that changed dt */
    double clock_time;
    heat_chebyshev chebyshev; /* implicit schemes with the Chebyshev preconditioner */
    heat_cg_stats cg;     /* implicit schemes: CG iterations and residuals so far */
    FILE *cg_log;         /* implicit schemes: one line per step when set */
} heat_solver;

typedef enum { HEAT_SELECT_AUTO = 0, HEAT_SELECT_CPU = 1, HEAT_SELECT_HIP = 2 } heat_backend_request;

/* Picks the backend (auto: the GPU when one is usable, saying so otherwise),
 * checks that the fields fit in memory and allocates them. */
int heat_solver_create(const heat_problem *problem, heat_backend_request request, heat_solver **solver);
/* The same for a block whose exchanged faces (problem->halo.exchanged) get
 * their ghosts through transport (parallel/domain.h: heat_domain_transport). */
int heat_solver_create_block(const heat_problem *problem, const heat_halo_transport *transport,
                             heat_backend_request request, heat_solver **solver);
void heat_solver_destroy(heat_solver **solver);
/* Frees the backend's state and lets its device go while the process goes
 * on (a run's last checkpoint writes): only for a process that uses no GPU
 * afterwards, once no copy is in flight and nothing is page-locked. Then only
 * the clock (step, time), problem and cg remain to be read; heat_solver_destroy
 * frees the rest. */
void heat_solver_release_backend(heat_solver *solver);
/* Would heat_solver_create pick the CPU backend? (Says nothing.) */
int heat_solver_runs_on_cpu(const heat_problem *problem, heat_backend_request request);

/* Host field: compact, x fastest, the problem's precision. */
int heat_solver_set_field(heat_solver *solver, const void *host, long step);
/* The clock of a restarted run: the checkpoint's step and time (which differ
 * from step * dt when the run continues with another dt). */
void heat_solver_set_clock(heat_solver *solver, long step, double time);
int heat_solver_get_field(heat_solver *solver, void *host);
/* The same, where the backend can, without stopping the stepping: the copy
 * runs beside later heat_solver_advance calls; host is valid once
 * heat_solver_wait_field returns (which any thread may call). */
int heat_solver_get_field_async(heat_solver *solver, void *host);
int heat_solver_wait_field(heat_solver *solver);
/* Page-locks (pin = 1) or releases a host buffer that heat_solver_get_field
 * fills repeatedly, where the backend gains from it. Returns 1 when pinned. */
int heat_solver_pin_host(heat_solver *solver, void *host, size_t bytes, int pin);
int heat_solver_advance(heat_solver *solver, long steps);
int heat_solver_stats(heat_solver *solver, heat_field_stats *stats);

/* Materials runs: the heat, the powers at the current field and the energy
 * in so far (solver/materials.h, heat_energy); collective. A backend without
 * them is an error. */
int heat_solver_energy(heat_solver *solver, struct heat_energy *energy);
/* A restarted run's energy in so far (HEAT_ENERGY_KINDS values, from the checkpoint). */
int heat_solver_set_energy(heat_solver *solver, const double *energy_in);
