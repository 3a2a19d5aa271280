#include "implicit.h"

#include <float.h>
#include <math.h>
#include <stdio.h>

#include "error.h"
#include "materials.h"
#include "space_order.h"

double heat_scheme_theta(heat_scheme scheme)
{
    return scheme == HEAT_CRANK_NICOLSON ? 0.5 : 1.0;
}

const char *heat_scheme_name(heat_scheme scheme)
{
    static const char *const names[] = {"euler", "backward_euler", "crank_nicolson"};
    return names[scheme];
}

const char *heat_preconditioner_name(heat_preconditioner preconditioner)
{
    static const char *const names[] = {"chebyshev", "jacobi", "none"};
    return names[preconditioner];
}

heat_chebyshev heat_chebyshev_make(const heat_problem *p)
{
    heat_chebyshev c = {0};
    double sum = 0.0;
    for (int d = 0; d < 3; ++d) sum += 1.0 / (p->grid.h[d] * p->grid.h[d]);
    double lower = 1.0, upper = 1.0 + 4.0 * heat_scheme_theta(p->implicit.scheme) * p->dt * p->alpha * sum;
    if (heat_space_radius(p) > 1) /* the periodic symbol's largest value bounds the reflected operator's too */
        upper = 1.0 + heat_scheme_theta(p->implicit.scheme) * p->dt * p->alpha *
                          heat_space_operator_radius(&p->grid, heat_space_radius(p));
    if (heat_materials_active(p->materials)) upper = heat_materials_operator_bound(p);
    double centre = 0.5 * (upper + lower), half_width = 0.5 * (upper - lower);
    c.degree = p->implicit.chebyshev_degree < HEAT_CHEBYSHEV_MAX ? p->implicit.chebyshev_degree : HEAT_CHEBYSHEV_MAX;
    c.inv_centre = 1.0 / centre;
    double sigma = centre / half_width, rho_previous = 1.0 / sigma;
    for (int k = 1; k < c.degree; ++k) {
        double rho = 1.0 / (2.0 * sigma - rho_previous);
        c.keep[k] = rho * rho_previous;
        c.push[k] = 2.0 * rho / half_width;
        rho_previous = rho;
    }
    return c;
}

heat_cg_diagonal heat_cg_diagonal_make(const heat_problem *p)
{
    heat_cg_diagonal d = {0};
    heat_coeffs c = heat_coeffs_make(p);
    double shrink = heat_scheme_theta(p->implicit.scheme) * c.alpha_dt; /* A = I - shrink L0 */
    d.base = 1.0 - shrink * c.diag;
    d.jacobi = p->implicit.preconditioner == HEAT_PRECOND_JACOBI;
    if (heat_space_radius(p) > 1) {
        /* The order's c0 terms alone: the reflections add c_(2i+1) / h^2 to
         * points i < R/2 from a face, which a constant diagonal leaves out
         * (still a symmetric positive definite preconditioner). */
        d.base = 1.0 - shrink * heat_space_coeffs_make(p).diag;
        return d;
    }
    for (int f = 0; f < FACE_COUNT; ++f) {
        double ghost_scale = p->bc[f].type == HEAT_BC_DIRICHLET ? -1.0 : 1.0; /* homogeneous ghost = scale * u */
        /* An exchanged face's ghost is another point's unknown, not a multiple of this one. */
        d.face[f] = p->halo.exchanged & 1u << f ? 0.0 : -shrink * ghost_scale * c.inv_h2[f / 2];
    }
    return d;
}

/* The preconditioner's part of the advice: one the program accepts, never
 * the one already in use, nor a degree above the largest it takes.
 * Chebyshev's interval begins at 1, far below the spectrum that matters once
 * dt nears the box's diffusion time, where its iterations grow with dt and
 * Jacobi's stop growing: there Jacobi is the way out. */
static void preconditioner_advice(const heat_implicit *implicit, char *buf, size_t len)
{
    if (implicit->preconditioner != HEAT_PRECOND_CHEBYSHEV) {
        snprintf(buf, len, "use solver.preconditioner = \"chebyshev\", ");
        return;
    }
    int used = 0;
    if (implicit->chebyshev_degree < HEAT_CHEBYSHEV_MAX)
        used = snprintf(buf, len, "raise solver.chebyshev_degree (now %d, at most %d), ", implicit->chebyshev_degree,
                        HEAT_CHEBYSHEV_MAX);
    snprintf(buf + used, len - (size_t)used, "use solver.preconditioner = \"jacobi\" (at time steps near the box's "
             "diffusion time), ");
}

/* A solve is no more accurate than the precision's epsilon, whatever CG's recursive residual says
 * (below about 1e-154 the squared target even underflows to 0): for an rtol under it more iterations
 * are the wrong advice. */
static int rtol_unreachable(const heat_problem *p, long step, double residual)
{
    const double epsilon = p->precision == HEAT_FLOAT ? FLT_EPSILON : DBL_EPSILON;
    if (p->implicit.rtol >= epsilon) return HEAT_OK;
    return heat_error_alike(HEAT_ERR_RUNTIME,
                            "step %ld: CG did not reach solver.rtol = %g (relative residual %.3g), which is below "
                            "%s precision's epsilon %.2g, the most accuracy a step can have: raise solver.rtol above "
                            "it (1e-6, the default, or 1e-10 in double), then continue with --restart latest",
                            step, p->implicit.rtol, residual, heat_precision_name(p->precision), epsilon);
}

/* Advice the program accepts: an implicit run may change dt on restart. */
static int not_converged(const heat_problem *p, long step, double residual)
{
    HEAT_CALL(rtol_unreachable(p, step, residual));
    char advice[192];
    preconditioner_advice(&p->implicit, advice, sizeof advice);
    return heat_error_alike(HEAT_ERR_RUNTIME,
                            "step %ld: CG did not reach solver.rtol = %g within solver.max_iterations = %d (relative "
                            "residual %.3g); raise solver.max_iterations, %sor lower time.cfl (or time.dt), then "
                            "continue with --restart latest (an implicit run may change its time step on restart)",
                            step, p->implicit.rtol, p->implicit.max_iterations, residual, advice);
}

static void record(heat_cg_stats *stats, int iterations, double residual, long step, FILE *log)
{
    stats->steps += 1;
    stats->iterations += iterations;
    stats->last_iterations = iterations;
    stats->last_residual = residual;
    if (iterations > stats->most_iterations) stats->most_iterations = iterations;
    if (residual > stats->worst_residual) stats->worst_residual = residual;
    if (log) fprintf(log, "step %ld: CG %d iterations, relative residual %.3e\n", step, iterations, residual);
}

/* What one solve reached. */
typedef struct solve_outcome {
    int iterations;
    double residual;  /* final relative residual */
    int failed_alike; /* stopped on its global sums' verdict, which every rank reached alike */
} solve_outcome;

/* The solve's own verdicts come from global sums, the same bits on every
 * rank: each rank stops at the same iteration, and the root says why. */
static int stop_alike(solve_outcome *out, int status)
{
    out->failed_alike = 1;
    return status;
}

/* What can make the right-hand side overflow: the field, the grid spacing, and in a materials run a source
 * or conductance beyond the precision's range (a float run holds them in float). */
static int right_hand_side_not_finite(const heat_problem *p, long step)
{
    if (heat_materials_active(p->materials))
        return heat_error_alike(HEAT_ERR_RUNTIME, "step %ld: the implicit step's right-hand side (dt times each "
                                "point's heat flow and source, over sqrt(rho c)) is not finite: the field holds NaN "
                                "or Inf, or a region's source or a material's conductivity over h^2 exceeds %s "
                                "precision's largest number %.3g; check the initial field or checkpoint, the "
                                "sources and materials%s", step, heat_precision_name(p->precision),
                                p->precision == HEAT_FLOAT ? FLT_MAX : DBL_MAX,
                                p->precision == HEAT_FLOAT ? ", or use solver.precision = \"double\"" : "");
    return heat_error_alike(HEAT_ERR_RUNTIME, "step %ld: the implicit step's right-hand side (alpha dt times the "
                            "Laplacian of the field) is not finite: the field holds NaN or Inf, or the grid spacing is "
                            "so fine that the Laplacian overflows; check the initial field or checkpoint and "
                            "grid.length / grid.n", step);
}

/* One CG solve of A x = fraction alpha dt L(u), then u += x; its iteration
 * count and final relative residual go to *out. */
static int solve(const heat_backend_ops *ops, void *state, const heat_problem *p, const heat_chebyshev *cheb,
                 double fraction, long step, solve_outcome *out)
{
    const heat_cg_ops *cg = ops->cg;
    const int chebyshev = p->implicit.preconditioner == HEAT_PRECOND_CHEBYSHEV;
    double rr, rz, pq;
    *out = (solve_outcome){0};
    HEAT_CALL(cg->begin(state, fraction, &rr, &rz));
    const double rr0 = rr, target = p->implicit.rtol * p->implicit.rtol * rr0;
    /* A NaN here would end the solve with the field unchanged and no word: say it instead. */
    if (!isfinite(rr0)) return stop_alike(out, right_hand_side_not_finite(p, step));
    if (rr0 == 0.0) return HEAT_OK; /* a steady field */
    if (chebyshev) HEAT_CALL(cg->precondition(state, cheb, &rz));
    HEAT_CALL(cg->direction(state, 0.0));
    for (int iteration = 1;; ++iteration) {
        HEAT_CALL(cg->apply(state, &pq));
        if (!(pq > 0.0) || !isfinite(rz))
            return stop_alike(out, heat_error_alike(HEAT_ERR_RUNTIME, "step %ld: CG broke down at iteration %d "
                                                    "(p.Ap = %g); the field or time.dt is not finite", step,
                                                    iteration, pq));
        double rz_new;
        HEAT_CALL(cg->update(state, rz / pq, iteration == 1, &rr, &rz_new));
        if (rr <= target) {
            out->iterations = iteration, out->residual = sqrt(rr / rr0);
            return cg->finish(state);
        }
        if (iteration >= p->implicit.max_iterations) return stop_alike(out, not_converged(p, step, sqrt(rr / rr0)));
        if (chebyshev) HEAT_CALL(cg->precondition(state, cheb, &rz_new));
        HEAT_CALL(cg->direction(state, rz_new / rz));
        rz = rz_new;
    }
}

/* Crank-Nicolson's first steps as two backward Euler half steps each
 * (Rannacher's start-up): A = I - dt/2 alpha L0 is the same operator, only
 * the right-hand side halves. It damps the high modes of a discontinuous
 * initial field, which Crank-Nicolson alone keeps ringing (amplification
 * near -1 at large dt), and keeps second order. */
static int half_steps(const heat_problem *p, long step)
{
    return p->implicit.scheme == HEAT_CRANK_NICOLSON && step <= p->implicit.smoothing_steps ? 2 : 1;
}

int heat_implicit_step(const heat_backend_ops *ops, void *state, const heat_problem *p, const heat_chebyshev *cheb,
                       long step, heat_cg_stats *stats, FILE *log)
{
    int parts = half_steps(p, step), total = 0;
    double worst = 0.0;
    for (int part = 0; part < parts; ++part) {
        solve_outcome out;
        int status = solve(ops, state, p, cheb, 1.0 / parts, step, &out);
        stats->failed_alike = out.failed_alike;
        HEAT_CALL(status);
        total += out.iterations;
        worst = fmax(worst, out.residual);
    }
    record(stats, total, worst, step, log);
    return HEAT_OK;
}
