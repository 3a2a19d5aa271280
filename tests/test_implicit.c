/*
 * Implicit schemes against mathematics. A product of sines with Dirichlet
 * walls is an eigenvector of the discrete Laplacian (cell-centred ghosts
 * -u) with eigenvalue -lambda_h, lambda_h = sum 4/h^2 sin^2(k h / 2), so one
 * theta step multiplies it by exactly
 *   g = (1 - (1 - theta) dt alpha lambda_h) / (1 + theta dt alpha lambda_h)
 * and the semi-discrete solution decays as exp(-alpha lambda_h t). Comparing
 * with the latter isolates the time error: backward Euler must show order 1
 * and Crank-Nicolson order 2 in dt.
 *
 *   test_implicit order|amplification|smoothing|conservation|threads [cpu|hip]
 *   test_implicit gpu_vs_cpu
 */
#include <omp.h>

#include "test_util.h"

static heat_backend_request backend_request = HEAT_SELECT_CPU;

static heat_problem sine_problem(int n, heat_scheme scheme, double dt_over_max, double rtol)
{
    heat_problem p = test_problem(n, n, n, 1.0, 1.0, 1.0, HEAT_DOUBLE);
    for (int f = 0; f < FACE_COUNT; ++f) p.bc[f] = (heat_bc){.type = HEAT_BC_DIRICHLET, .value = 0.0};
    p.dt = dt_over_max * heat_dt_max(&p.grid, p.alpha);
    p.implicit = (heat_implicit){scheme, rtol, 500, HEAT_PRECOND_CHEBYSHEV, 8, 0};
    return p;
}

static double discrete_eigenvalue(const heat_problem *p, const heat_initial *init)
{
    double lambda = 0.0;
    for (int d = 0; d < 3; ++d) {
        double k = M_PI * init->modes[d] / p->grid.length[d], s = sin(0.5 * k * p->grid.h[d]);
        lambda += 4.0 / (p->grid.h[d] * p->grid.h[d]) * s * s;
    }
    return lambda;
}

/* Runs `steps` steps from the sine mode; returns max |u - factor * u0| / max |u0|. */
static double run_against(const heat_problem *p, const heat_initial *init, long steps, double factor)
{
    heat_solver *s;
    if (heat_solver_create(p, backend_request, &s) != HEAT_OK) return -1.0;
    void *initial = test_alloc_field(p), *field = test_alloc_field(p);
    heat_initial_fill(init, &p->grid, p->precision, initial);
    double worst = -1.0, scale = 0.0;
    if (heat_solver_set_field(s, initial, 0) == HEAT_OK && heat_solver_advance(s, steps) == HEAT_OK &&
        heat_solver_get_field(s, field) == HEAT_OK) {
        worst = 0.0;
        for (long at = 0; at < heat_grid_points(&p->grid); ++at) {
            worst = fmax(worst, fabs(test_get(p, field, at) - factor * test_get(p, initial, at)));
            scale = fmax(scale, fabs(test_get(p, initial, at)));
        }
        worst /= scale;
    }
    free(initial), free(field);
    heat_solver_destroy(&s);
    return worst;
}

static double amplification(heat_scheme scheme, double dt_alpha_lambda)
{
    double theta = heat_scheme_theta(scheme);
    return (1.0 - (1.0 - theta) * dt_alpha_lambda) / (1.0 + theta * dt_alpha_lambda);
}

/* Error against exp(-alpha lambda_h T) for dt = T / steps, steps = 5, 10, 20, 40
 * (smoothing: Crank-Nicolson's Rannacher start-up, which must keep order 2). */
static int check_order(heat_scheme scheme, double expected, int smoothing)
{
    const double final_time = 0.05;
    heat_initial init = {.type = INITIAL_SINE, .amplitude = 1.0, .modes = {1, 1, 1}};
    double previous = 0.0;
    for (int level = 0; level < 4; ++level) {
        long steps = 5L << level;
        heat_problem p = sine_problem(32, scheme, 1.0, 1e-12);
        p.implicit.smoothing_steps = smoothing;
        p.dt = final_time / (double)steps;
        double exact = exp(-p.alpha * discrete_eigenvalue(&p, &init) * final_time);
        double error = run_against(&p, &init, steps, exact);
        EXPECT(error >= 0.0, "solver failed");
        printf("%-15s%s dt = %.5f (%5.1f dt_max): error %.4e", heat_scheme_name(scheme), smoothing ? "+start-up" : "", p.dt,
               p.dt / heat_dt_max(&p.grid, p.alpha), error);
        if (level > 0) {
            double order = log2(previous / error);
            printf("  observed order %.3f", order);
            EXPECT(fabs(order - expected) <= 0.1, "%s: observed order %.3f is not %.0f +- 0.1",
                   heat_scheme_name(scheme), order, expected);
        }
        printf("\n");
        previous = error;
    }
    return 0;
}

/* dt = 100 dt_max: the low mode decays by g^n to solver tolerance (and,
 * for Crank-Nicolson, close to the exact decay); the highest mode, where
 * explicit Euler would blow up, does not grow. */
static int check_large_steps(heat_scheme scheme)
{
    heat_problem p = sine_problem(64, scheme, 100.0, 1e-11);
    const long steps = 20;
    heat_initial low = {.type = INITIAL_SINE, .amplitude = 1.0, .modes = {1, 1, 1}};
    double z = p.dt * p.alpha * discrete_eigenvalue(&p, &low), g = pow(amplification(scheme, z), (double)steps);
    double error = run_against(&p, &low, steps, g);
    double exact = exp(-z * steps), physics = run_against(&p, &low, steps, exact);
    printf("%-15s dt = 100 dt_max, 20 steps, mode (1,1,1): |u - g^n u0| %.3e, |u - exact| %.3e\n",
           heat_scheme_name(scheme), error, physics);
    EXPECT(error >= 0.0 && error <= 1e-9, "decay differs from the scheme's amplification factor by %.3e", error);
    EXPECT(physics <= (scheme == HEAT_CRANK_NICOLSON ? 2e-3 : 0.2), "far from the exact decay: %.3e", physics);
    heat_initial high = {.type = INITIAL_SINE, .amplitude = 1.0, .modes = {63, 63, 63}};
    double zh = p.dt * p.alpha * discrete_eigenvalue(&p, &high), gh = pow(amplification(scheme, zh), (double)steps);
    error = run_against(&p, &high, steps, gh);
    printf("%-15s mode (63,63,63): g = %.6f, |u - g^n u0| %.3e\n", heat_scheme_name(scheme),
           amplification(scheme, zh), error);
    EXPECT(fabs(amplification(scheme, zh)) < 1.0 && error >= 0.0 && error <= 1e-9, "high mode: %.3e", error);
    return 0;
}

/* A hot block in a cold insulated box (a discontinuous field) at 100 dt_max:
 * plain Crank-Nicolson rings (undershoots below the coldest initial value),
 * with the two-step start-up it stays within a small fraction of the jump. */
static double undershoot(int smoothing)
{
    heat_problem p = test_problem(48, 48, 24, 2.0, 2.0, 1.0, HEAT_DOUBLE);
    p.dt = 100.0 * heat_dt_max(&p.grid, p.alpha);
    p.implicit = (heat_implicit){HEAT_CRANK_NICOLSON, 1e-10, 1000, HEAT_PRECOND_CHEBYSHEV, 8, smoothing};
    void *field = test_alloc_field(&p);
    for (long at = 0; at < heat_grid_points(&p.grid); ++at) {
        int i = (int)(at % 48), j = (int)(at / 48 % 48);
        test_set(&p, field, at, i >= 16 && i < 32 && j >= 16 && j < 32 ? 1.0 : 0.0);
    }
    heat_solver *s;
    heat_field_stats stats = {0};
    if (heat_solver_create(&p, backend_request, &s) != HEAT_OK) return 1e300;
    int ok = heat_solver_set_field(s, field, 0) == HEAT_OK && heat_solver_advance(s, 3) == HEAT_OK &&
             heat_solver_stats(s, &stats) == HEAT_OK;
    heat_solver_destroy(&s);
    free(field);
    return ok ? -stats.min : 1e300;
}

static int check_smoothing(void)
{
    double plain = undershoot(0), smoothed = undershoot(2);
    printf("crank_nicolson, hot block, 3 steps of 100 dt_max: undershoot %.3e plain, %.3e with the start-up\n", plain,
           smoothed);
    EXPECT(plain > 1e-2, "plain Crank-Nicolson should ring here (undershoot %.3e): the test lost its power", plain);
    EXPECT(smoothed < 1e-3, "the start-up did not damp the ringing (undershoot %.3e)", smoothed);
    return 0;
}

/* Insulated walls: the total heat stays what it was. */
static int check_conservation(heat_scheme scheme, heat_preconditioner preconditioner, long *iterations_out)
{
    heat_problem p = test_problem(40, 30, 20, 2.0, 1.5, 1.0, HEAT_DOUBLE);
    p.dt = 50.0 * heat_dt_max(&p.grid, p.alpha);
    p.implicit = (heat_implicit){scheme, 1e-12, 2000, preconditioner, 8, 2};
    heat_field_stats before, after;
    long iterations;
    if (test_gaussian_run(&p, backend_request, 0.1, 10, &before, &after, &iterations)) return 1;
    double change = fabs(after.sum - before.sum) / before.sum;
    printf("%-15s %-9s insulated box, 10 steps of 50 dt_max: relative heat change %.3e (max %.4f -> %.4f), "
           "CG %ld iterations\n", heat_scheme_name(scheme), heat_preconditioner_name(preconditioner), change,
           before.max, after.max, iterations);
    EXPECT(change <= 1e-10, "heat changed by %.3e", change);
    EXPECT(after.max < before.max, "the peak did not spread");
    if (iterations_out) *iterations_out = iterations;
    return 0;
}

/* The preconditioners do their work: degree-k Chebyshev divides the
 * condition number by about k^2, so CG needs about k times fewer iterations
 * than with Jacobi (8 x here: 149 against 1123); a Chebyshev step that
 * computed anything else would lose that. At least 4 x is required. */
static int check_conservation_and_preconditioners(void)
{
    long iterations[3] = {0};
    int failed = 0;
    for (int pc = HEAT_PRECOND_CHEBYSHEV; pc <= HEAT_PRECOND_NONE; ++pc)
        failed |= check_conservation(HEAT_CRANK_NICOLSON, (heat_preconditioner)pc, &iterations[pc]);
    failed |= check_conservation(HEAT_BACKWARD_EULER, HEAT_PRECOND_CHEBYSHEV, NULL);
    if (failed) return failed;
    long chebyshev = iterations[HEAT_PRECOND_CHEBYSHEV], jacobi = iterations[HEAT_PRECOND_JACOBI];
    EXPECT(4 * chebyshev <= jacobi, "Chebyshev degree 8 took %ld CG iterations against %ld with Jacobi (at most a quarter "
           "expected)", chebyshev, jacobi);
    return 0;
}

/* Reductions in a fixed order: 1 and 2 threads give the same bits. */
static int check_thread_independence(void)
{
    heat_problem p = sine_problem(24, HEAT_CRANK_NICOLSON, 30.0, 1e-8);
    p.bc[FACE_X_LOW] = (heat_bc){.type = HEAT_BC_NEUMANN, .value = 0.0};
    heat_initial init = {.type = INITIAL_GAUSSIAN, .amplitude = 2.0, .center = {0.4, 0.5, 0.6}, .width = 0.2};
    void *field[2];
    for (int t = 0; t < 2; ++t) {
        omp_set_num_threads(t + 1);
        field[t] = test_alloc_field(&p);
        heat_initial_fill(&init, &p.grid, p.precision, field[t]);
        if (test_run(&p, HEAT_SELECT_CPU, field[t], 5, field[t])) return 1;
    }
    int same = memcmp(field[0], field[1], (size_t)heat_grid_points(&p.grid) * sizeof(double)) == 0;
    printf("crank_nicolson, 5 steps on 1 and on 2 threads: %s\n", same ? "bitwise equal" : "DIFFERENT");
    free(field[0]), free(field[1]);
    EXPECT(same, "the result depends on the number of threads");
    return 0;
}

/* Chebyshev steps two a sweep (cheb_pair) give the bits of single steps
 * (halo.single_steps: never pairs), on 1 to 3 threads, for degrees whose step counts lead
 * with a single step or not, on a grid no block divides, in both precisions. */
static int check_chebyshev_pairs(heat_precision precision, int degree, int threads)
{
    heat_problem p = test_problem(37, 29, 23, 1.2, 0.9, 0.7, precision);
    p.bc[FACE_X_LOW] = (heat_bc){.type = HEAT_BC_DIRICHLET, .value = 2.0};
    p.bc[FACE_Z_HIGH] = (heat_bc){.type = HEAT_BC_DIRICHLET, .value = -1.0};
    p.dt = 40.0 * heat_dt_max(&p.grid, p.alpha);
    p.implicit = (heat_implicit){HEAT_CRANK_NICOLSON, precision == HEAT_FLOAT ? 1e-5 : 1e-10, 1000,
                                 HEAT_PRECOND_CHEBYSHEV, degree, 1};
    heat_initial init = {.type = INITIAL_GAUSSIAN, .amplitude = 3.0, .background = 0.25, .center = {0.3, 0.6, 0.4},
                         .width = 0.2};
    void *initial = test_alloc_field(&p), *single = test_alloc_field(&p), *paired = test_alloc_field(&p);
    heat_initial_fill(&init, &p.grid, precision, initial);
    omp_set_num_threads(1);
    p.halo.single_steps = 1;
    if (test_run(&p, HEAT_SELECT_CPU, initial, 3, single)) return 1;
    omp_set_num_threads(threads);
    p.halo.single_steps = 0;
    if (test_run(&p, HEAT_SELECT_CPU, initial, 3, paired)) return 1;
    size_t bytes = (size_t)heat_grid_points(&p.grid) * heat_precision_size(precision);
    int same = memcmp(single, paired, bytes) == 0, moved = memcmp(initial, paired, bytes) != 0;
    printf("%-6s Chebyshev degree %2d, 3 steps: two steps a sweep on %d thread%s %s single steps on 1\n",
           heat_precision_name(precision), degree, threads, threads == 1 ? "" : "s",
           same ? "bitwise equal to" : "DIFFERENT from");
    free(initial), free(single), free(paired);
    EXPECT(moved, "the steps changed nothing");
    EXPECT(same, "Chebyshev steps in pairs differ from single steps");
    return 0;
}

static int check_all_chebyshev_pairs(void)
{
    /* No tuning cache: every run times pairs against single steps in its first twelve
     * preconditioner calls (calls 3-5 and 9-11 take pairs), whatever an earlier run chose. */
    setenv("HEATSOLVE_TUNING_CACHE", "/nonexistent/heatsolve-tuning.txt", 1);
    int failed = 0;
    const int degrees[] = {4, 5, 8};
    for (int d = 0; d < 3; ++d)
        for (int threads = 1; threads <= 3; ++threads) {
            failed |= check_chebyshev_pairs(HEAT_DOUBLE, degrees[d], threads);
            failed |= check_chebyshev_pairs(HEAT_FLOAT, degrees[d], threads);
        }
    return failed;
}

/* Both schemes and preconditioners on a grid no block divides, with
 * Dirichlet values and insulated faces: the GPU agrees with the CPU within
 * the solver tolerance, and a second GPU run gives the same bits. */
static int compare_backends(heat_precision precision, heat_scheme scheme, heat_preconditioner pc)
{
    heat_problem p = test_problem(67, 45, 33, 1.34, 0.9, 0.66, precision);
    p.bc[FACE_X_LOW] = (heat_bc){.type = HEAT_BC_DIRICHLET, .value = 2.0};
    p.bc[FACE_Y_HIGH] = (heat_bc){.type = HEAT_BC_DIRICHLET, .value = -1.0};
    p.bc[FACE_Z_LOW] = (heat_bc){.type = HEAT_BC_DIRICHLET, .value = 0.5};
    p.dt = 40.0 * heat_dt_max(&p.grid, p.alpha);
    double rtol = precision == HEAT_FLOAT ? 1e-5 : 1e-10, tolerance = precision == HEAT_FLOAT ? 1e-4 : 1e-8;
    p.implicit = (heat_implicit){scheme, rtol, 1000, pc, 6, 2};
    heat_initial init = {.type = INITIAL_GAUSSIAN, .amplitude = 3.0, .background = 0.25, .center = {0.3, 0.6, 0.5},
                         .width = 0.15};
    void *initial = test_alloc_field(&p), *cpu = test_alloc_field(&p), *gpu = test_alloc_field(&p),
         *again = test_alloc_field(&p);
    heat_initial_fill(&init, &p.grid, precision, initial);
    if (test_run(&p, HEAT_SELECT_CPU, initial, 5, cpu) || test_run(&p, HEAT_SELECT_HIP, initial, 5, gpu) ||
        test_run(&p, HEAT_SELECT_HIP, initial, 5, again))
        return 1;
    double worst = 0.0, scale = 0.0;
    for (long at = 0; at < heat_grid_points(&p.grid); ++at) {
        worst = fmax(worst, fabs(test_get(&p, gpu, at) - test_get(&p, cpu, at)));
        scale = fmax(scale, fabs(test_get(&p, cpu, at)));
    }
    int same = memcmp(gpu, again, (size_t)heat_grid_points(&p.grid) * heat_precision_size(precision)) == 0;
    printf("%-6s %-15s %-9s 5 steps of 40 dt_max: max relative difference GPU - CPU %.3e (rtol %g); "
           "second GPU run %s\n", heat_precision_name(precision), heat_scheme_name(scheme),
           heat_preconditioner_name(pc), worst / scale, rtol, same ? "bitwise equal" : "DIFFERENT");
    free(initial), free(cpu), free(gpu), free(again);
    EXPECT(worst / scale <= tolerance, "GPU and CPU differ by %.3e > %g", worst / scale, tolerance);
    EXPECT(same, "two GPU runs differ: a reduction is not deterministic");
    return 0;
}

static int check_gpu_vs_cpu(void)
{
    int failed = 0;
    for (int pc = HEAT_PRECOND_CHEBYSHEV; pc <= HEAT_PRECOND_JACOBI; ++pc) {
        failed |= compare_backends(HEAT_DOUBLE, HEAT_CRANK_NICOLSON, (heat_preconditioner)pc);
        failed |= compare_backends(HEAT_DOUBLE, HEAT_BACKWARD_EULER, (heat_preconditioner)pc);
        failed |= compare_backends(HEAT_FLOAT, HEAT_CRANK_NICOLSON, (heat_preconditioner)pc);
    }
    return failed;
}

/* Steps a field of ones (one NaN in the middle, or none) insulated on every face, where the
 * Laplacian is exactly 0: *changed counts the points that are no longer 1. */
static int step_ones(int with_nan, long *changed)
{
    heat_problem p = sine_problem(16, HEAT_BACKWARD_EULER, 10.0, 1e-8);
    for (int f = 0; f < FACE_COUNT; ++f) p.bc[f] = (heat_bc){.type = HEAT_BC_NEUMANN, .value = 0.0};
    void *field = test_alloc_field(&p);
    long points = heat_grid_points(&p.grid), middle = points / 2 + p.grid.n[0] / 2;
    for (long at = 0; at < points; ++at) test_set(&p, field, at, 1.0);
    if (with_nan) test_set(&p, field, middle, NAN);
    heat_solver *s;
    int status = heat_solver_create(&p, backend_request, &s);
    if (status == HEAT_OK) status = heat_solver_set_field(s, field, 0);
    if (status == HEAT_OK) status = heat_solver_advance(s, 2);
    if (status == HEAT_OK) status = heat_solver_get_field(s, field);
    *changed = 0;
    for (long at = 0; at < points; ++at) *changed += test_get(&p, field, at) != 1.0;
    heat_solver_destroy(&s);
    free(field);
    return status;
}

/* A field holding one NaN: the implicit step fails naming it, where it used to return with the field
 * unchanged (CG's first residual NaN); a steady field (right-hand side exactly 0) still steps. */
static int check_nonfinite(void)
{
    long changed;
    int was = heat_errors_as_warnings(HEAT_ERRORS_SILENT);
    int status = step_ones(1, &changed);
    heat_errors_as_warnings(was);
    EXPECT(status == HEAT_ERR_RUNTIME, "an implicit step from a field holding NaN returned %d", status);
    EXPECT(strstr(heat_error_last_silenced(), "step 1: the implicit step's right-hand side") &&
               strstr(heat_error_last_silenced(), "not finite"),
           "the message: %s", heat_error_last_silenced());
    EXPECT(step_ones(0, &changed) == HEAT_OK && changed == 0, "a steady field: %ld points changed", changed);
    printf("an implicit step from a field holding NaN fails naming it; a steady field stays as it is\n");
    return 0;
}

int main(int argc, char **argv)
{
    const char *what = argc > 1 ? argv[1] : "order";
    if (argc > 2 && strcmp(argv[2], "hip") == 0) {
        if (!(heat_backend_hip && heat_hip_available(NULL, 0))) return printf("no GPU: skipped\n"), TEST_SKIP;
        backend_request = HEAT_SELECT_HIP;
    }
    if (strcmp(what, "order") == 0)
        return check_order(HEAT_BACKWARD_EULER, 1.0, 0) | check_order(HEAT_CRANK_NICOLSON, 2.0, 0) |
               check_order(HEAT_CRANK_NICOLSON, 2.0, 2);
    if (strcmp(what, "smoothing") == 0) return check_smoothing();
    if (strcmp(what, "amplification") == 0)
        return check_large_steps(HEAT_BACKWARD_EULER) | check_large_steps(HEAT_CRANK_NICOLSON);
    if (strcmp(what, "conservation") == 0) return check_conservation_and_preconditioners();
    if (strcmp(what, "threads") == 0) return check_thread_independence();
    if (strcmp(what, "nonfinite") == 0) return check_nonfinite();
    if (strcmp(what, "chebyshev_pairs") == 0) return check_all_chebyshev_pairs();
    if (strcmp(what, "gpu_vs_cpu") == 0) {
        if (!(heat_backend_hip && heat_hip_available(NULL, 0))) return printf("no GPU: skipped\n"), TEST_SKIP;
        return check_gpu_vs_cpu();
    }
    fprintf(stderr, "usage: test_implicit order|amplification|conservation|threads|chebyshev_pairs|nonfinite [cpu|hip] | gpu_vs_cpu\n");
    return 2;
}
