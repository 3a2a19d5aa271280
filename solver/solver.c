#include "solver.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "error.h"
#include "materials.h"

/* The CPU backend's fields: the two fields, plus r, p, q for CG (x reuses
 * the second field), plus z and w for the Chebyshev preconditioner and a
 * fourth vector where its steps go in pairs. */
static int field_count(const heat_problem *p)
{
    if (p->implicit.scheme == HEAT_EULER) return 2;
    if (p->implicit.preconditioner == HEAT_PRECOND_JACOBI && heat_materials_active(p->materials))
        return 6; /* and 1 / diag per point */
    if (p->implicit.preconditioner != HEAT_PRECOND_CHEBYSHEV) return 5;
    return heat_chebyshev_pairs_allowed(p) ? 8 : 7;
}

/* Bytes the CPU backend allocates for the fields (two) and, for implicit
 * schemes, the CG vectors of this problem. */
static double heat_solver_field_bytes(const heat_problem *p)
{
    double points = (double)(p->grid.n[0] + 2 + 64) * (p->grid.n[1] + 2) * (p->grid.n[2] + 2);
    return field_count(p) * points * (double)heat_precision_size(p->precision);
}

/* The host holds the initial field and the checkpoint snapshot (compact),
 * plus the two padded fields when the CPU backend computes. */
static int check_host_memory(const heat_problem *p, const heat_backend_ops *ops)
{
    double compact = (double)heat_grid_points(&p->grid) * (double)heat_precision_size(p->precision);
    double needed = 2.0 * compact + (ops == &heat_backend_cpu ? heat_solver_field_bytes(p) : 0.0);
    double available = (double)sysconf(_SC_PHYS_PAGES) * (double)sysconf(_SC_PAGESIZE);
    if (available > 0 && needed > available)
        return heat_error(HEAT_ERR_CONFIG,
                          "grid.n = [%d, %d, %d] in %s needs %.0f bytes (%.3g GB) of memory for its fields "
                          "and checkpoint buffers, but this machine has %.0f bytes (%.3g GB); reduce grid.n%s",
                          p->grid.n[0], p->grid.n[1], p->grid.n[2], heat_precision_name(p->precision), needed,
                          needed / 1e9, available, available / 1e9,
                          p->precision == HEAT_DOUBLE ? " or use solver.precision = \"float\"" : "");
    return HEAT_OK;
}

static int backend_supports(const heat_backend_ops *ops, const heat_problem *problem)
{
    return ops->supports ? ops->supports(problem) : !heat_materials_active(problem->materials);
}

static int select_backend(heat_backend_request request, const heat_problem *problem, const heat_backend_ops **ops)
{
    char reason[256] = "heatsolve was built without a GPU platform (configure with -DHEATSOLVE_GPU=amd or nvidia)";
    int gpu = heat_backend_hip && heat_hip_available(reason, sizeof reason);
    int quiet = problem->quiet;
    if (request == HEAT_SELECT_HIP && !gpu)
        return heat_error(HEAT_ERR_CONFIG, "--backend hip (or solver.backend = \"hip\"): no usable GPU: %s; use "
                          "--backend cpu or auto, or solver.backend = \"auto\"", reason);
    if (request == HEAT_SELECT_AUTO && !gpu && !quiet)
        printf("No usable GPU (%s): running on the CPU backend.\n", reason);
    *ops = (request != HEAT_SELECT_CPU && gpu) ? heat_backend_hip : &heat_backend_cpu;
    if (*ops != &heat_backend_cpu && !backend_supports(*ops, problem)) {
        if (request == HEAT_SELECT_HIP)
            return heat_error(HEAT_ERR_CONFIG, "--backend hip (or solver.backend = \"hip\"): the GPU backend "
                              "cannot run this problem; use --backend cpu or auto, or solver.backend = \"auto\"");
        if (!quiet) printf("This problem runs on the CPU backend (the GPU backend cannot run it).\n");
        *ops = &heat_backend_cpu;
    }
    return HEAT_OK;
}

int heat_solver_runs_on_cpu(const heat_problem *problem, heat_backend_request request)
{
    if (request == HEAT_SELECT_CPU) return 1;
    if (heat_backend_hip && !backend_supports(heat_backend_hip, problem)) return 1;
    return !(heat_backend_hip && heat_hip_available(NULL, 0)); /* as select_backend */
}

int heat_solver_create(const heat_problem *problem, heat_backend_request request, heat_solver **solver)
{
    return heat_solver_create_block(problem, NULL, request, solver);
}

int heat_solver_create_block(const heat_problem *problem, const heat_halo_transport *transport,
                             heat_backend_request request, heat_solver **solver)
{
    *solver = NULL;
    /* A block that exchanges faces calls the transport every step: without one it would jump through NULL. */
    HEAT_CHECK(!problem->halo.exchanged || (transport && transport->exchange),
               "a block that exchanges faces needs a halo transport (heat_domain_transport; internal error)");
    const heat_backend_ops *ops = NULL;
    HEAT_CALL(select_backend(request, problem, &ops));
    if (ops == &heat_backend_cpu) HEAT_CALL(check_host_memory(problem, ops)); /* before allocating */
    heat_solver *s = calloc(1, sizeof *s);
    HEAT_CHECK(s, "out of memory");
    s->ops = ops;
    s->problem = *problem;
    s->transport = heat_halo_transport_or_none(transport);
    s->chebyshev = heat_chebyshev_make(problem);
    /* A GPU backend refuses a grid too large for the device before allocating. */
    int status = ops->create(problem, transport, &s->state);
    if (status == HEAT_OK && ops != &heat_backend_cpu) status = check_host_memory(problem, ops);
    if (status != HEAT_OK) {
        heat_solver_destroy(&s);
        return status;
    }
    *solver = s;
    return HEAT_OK;
}

void heat_solver_destroy(heat_solver **solver)
{
    if (!solver || !*solver) return;
    (*solver)->ops->destroy(&(*solver)->state);
    free(*solver);
    *solver = NULL;
}

void heat_solver_release_backend(heat_solver *s)
{
    if (!s->state) return;
    s->ops->destroy(&s->state);
    if (s->ops->async) s->ops->async->release_device();
}

int heat_solver_set_field(heat_solver *s, const void *host, long step)
{
    HEAT_CALL(s->ops->upload(s->state, host));
    heat_solver_set_clock(s, step, (double)step * s->problem.dt);
    return HEAT_OK;
}

void heat_solver_set_clock(heat_solver *s, long step, double time)
{
    s->step = step;
    s->time = time;
    int same_dt = time == (double)step * s->problem.dt;
    s->clock_step = same_dt ? 0 : step;
    s->clock_time = same_dt ? 0.0 : time;
    if (s->ops->set_clock && s->state) s->ops->set_clock(s->state, s->step, s->clock_step, s->clock_time);
}

int heat_solver_get_field(heat_solver *s, void *host) { return s->ops->download(s->state, host); }

int heat_solver_get_field_async(heat_solver *s, void *host)
{
    return s->ops->async ? s->ops->async->download_async(s->state, host) : s->ops->download(s->state, host);
}

int heat_solver_wait_field(heat_solver *s) { return s->ops->async ? s->ops->async->download_wait(s->state) : HEAT_OK; }

int heat_solver_pin_host(heat_solver *s, void *host, size_t bytes, int pin)
{
    return s->ops->async ? s->ops->async->pin_host(s->state, host, bytes, pin) : 0;
}

static int advance_implicit(heat_solver *s, long steps)
{
    for (long k = 1; k <= steps; ++k) {
        if (s->ops->set_clock) HEAT_CALL(s->ops->set_clock(s->state, s->step + k - 1, s->clock_step, s->clock_time));
        HEAT_CALL(heat_implicit_step(s->ops, s->state, &s->problem, &s->chebyshev, s->step + k, &s->cg, s->cg_log));
    }
    /* The next step's clock, where an explicit backend's advance leaves it: the energy balance's
     * power is the sources' at the field's time. */
    if (s->ops->set_clock) HEAT_CALL(s->ops->set_clock(s->state, s->step + steps, s->clock_step, s->clock_time));
    return HEAT_OK;
}

int heat_solver_advance(heat_solver *s, long steps)
{
    if (s->problem.implicit.scheme == HEAT_EULER) HEAT_CALL(s->ops->advance(s->state, steps));
    else HEAT_CALL(advance_implicit(s, steps));
    s->step += steps;
    /* step * dt, not a running sum: a restarted run has the same clock bits
     * (from the step where dt changed, if it did). */
    s->time = s->clock_time + (double)(s->step - s->clock_step) * s->problem.dt;
    return HEAT_OK;
}

int heat_solver_stats(heat_solver *s, heat_field_stats *stats) { return s->ops->stats(s->state, stats); }

int heat_solver_energy(heat_solver *s, struct heat_energy *energy)
{
    HEAT_CHECK(s->ops->energy, "the %s backend keeps no energy balance", s->ops->name);
    return s->ops->energy(s->state, energy);
}

int heat_solver_set_energy(heat_solver *s, const double *energy_in)
{
    HEAT_CHECK(s->ops->set_energy, "the %s backend keeps no energy balance", s->ops->name);
    return s->ops->set_energy(s->state, energy_in);
}
