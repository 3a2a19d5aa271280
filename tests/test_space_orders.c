/* The Laplacians of order 2, 4, 6 and 8 on the CPU against mathematics.
 *  - Sine (Dirichlet), cosine (Neumann) and shifted cosine (periodic) modes
 *    are eigenvectors of the reflected or wrapped operator: lap_h u = -sum_d
 *    s(k_d h_d) / h_d^2 u, s the symbol of the order's coefficients. The
 *    error against the exact eigenvalue -|k|^2 falls as h^(2R) (observed
 *    order over two resolutions); a wrong coefficient breaks the order, a
 *    wrong reflection breaks the eigenvector near the faces.
 *  - Implicit steps of such a mode multiply it by the scheme's amplification
 *    at the discrete eigenvalue (backward Euler, Crank-Nicolson; Chebyshev,
 *    Jacobi and no preconditioner), and Crank-Nicolson converges to the exact
 *    decay at order 2R in space.
 *  - Explicit steps at cfl 1 keep the highest mode bounded; at 1.05 it grows.
 *  - float agrees with double; a stop and a restart from the downloaded field
 *    gives the bits of the run straight through. */
#include "parallel/domain.h"
#include "solver/space_order.h"
#include "test_util.h"

typedef enum { MODE_DIRICHLET, MODE_NEUMANN, MODE_PERIODIC } mode_kind;
static const char *const kind_names[] = {"Dirichlet (sine)", "Neumann (cosine)", "periodic"};

static const int modes[3] = {2, 1, 2};
static const double lengths[3] = {1.0, 0.75, 1.25};
static const double phases[3] = {0.3, 1.1, -0.7};

/* Wavenumber along axis d of the kind's mode. */
static double wavenumber(mode_kind kind, int d)
{
    return (kind == MODE_PERIODIC ? 2.0 : 1.0) * M_PI * modes[d] / lengths[d];
}

static double mode_value(const heat_problem *p, mode_kind kind, int i, int j, int k)
{
    const int index[3] = {i, j, k};
    double u = 1.0;
    for (int d = 0; d < 3; ++d) {
        double x = test_coord(p, d, index[d]), kx = wavenumber(kind, d) * x;
        u *= kind == MODE_DIRICHLET ? sin(kx) : kind == MODE_NEUMANN ? cos(kx) : cos(kx + phases[d]);
    }
    return u;
}

static void fill_mode(const heat_problem *p, mode_kind kind, void *field)
{
    const int *n = p->grid.n;
    for (int k = 0; k < n[2]; ++k)
        for (int j = 0; j < n[1]; ++j)
            for (int i = 0; i < n[0]; ++i) test_set(p, field, ((long)k * n[1] + j) * n[0] + i, mode_value(p, kind, i, j, k));
}

/* -|k|^2 and the discrete eigenvalue -sum_d s(k_d h_d) / h_d^2 of the order's stencil. */
static double exact_eigenvalue(mode_kind kind)
{
    double sum = 0.0;
    for (int d = 0; d < 3; ++d) sum += wavenumber(kind, d) * wavenumber(kind, d);
    return -sum;
}

static double discrete_eigenvalue(const heat_problem *p, mode_kind kind)
{
    const int radius = heat_space_radius(p);
    const double *c = heat_space_weights(radius);
    double sum = 0.0;
    for (int d = 0; d < 3; ++d) {
        double theta = wavenumber(kind, d) * p->grid.h[d], symbol = c[0];
        for (int m = 1; m <= radius; ++m) symbol += 2.0 * c[m] * cos(m * theta);
        sum += symbol / (p->grid.h[d] * p->grid.h[d]);
    }
    return sum;
}

static heat_problem mode_problem(int order, mode_kind kind, int n, heat_precision precision)
{
    heat_problem p = test_problem(n, n, n, lengths[0], lengths[1], lengths[2], precision);
    p.space_order = order;
    for (int f = 0; f < FACE_COUNT; ++f)
        p.bc[f].type = kind == MODE_DIRICHLET ? HEAT_BC_DIRICHLET : kind == MODE_NEUMANN ? HEAT_BC_NEUMANN : HEAT_BC_PERIODIC;
    p.dt = 0.5 * heat_space_dt_max(&p.grid, p.alpha, heat_space_radius(&p));
    return p;
}

/* A solver for p, periodic axes wrapped through a one-process domain's transport. */
typedef struct wrapped_solver {
    heat_domain domain;
    heat_halo_transport transport;
    heat_problem local;
    heat_solver *solver;
} wrapped_solver;

static int wrapped_create(const heat_problem *p, wrapped_solver *w)
{
    const int automatic[3] = {0, 0, 0};
    EXPECT_OK(heat_domain_init(&w->domain, p, automatic, TRANSPORT_AUTO, 0));
    heat_domain_localize(&w->domain, p, &w->local);
    w->transport = heat_domain_transport(&w->domain);
    EXPECT_OK(heat_solver_create_block(&w->local, &w->transport, HEAT_SELECT_CPU, &w->solver));
    return 0;
}

static void wrapped_destroy(wrapped_solver *w)
{
    heat_solver_destroy(&w->solver);
    heat_domain_free(&w->domain);
}

static int find_laplacian(heat_solver *s, const heat_variant **found)
{
    const heat_variant *list;
    int count;
    EXPECT_OK(s->ops->bench->variants(s->state, &list, &count));
    for (int v = 0; v < count; ++v)
        if (list[v].laplacian) return *found = &list[v], 0;
    EXPECT(0, "the CPU backend has no Laplacian variant");
}

/* lap_h of the kind's mode into out (the compact field). */
static int apply_laplacian(const heat_problem *p, mode_kind kind, void *out)
{
    wrapped_solver w;
    const heat_variant *lap;
    if (wrapped_create(p, &w) || find_laplacian(w.solver, &lap)) return 1;
    fill_mode(p, kind, out);
    EXPECT_OK(heat_solver_set_field(w.solver, out, 0));
    EXPECT_OK(w.solver->ops->bench->run_variant(w.solver->state, lap, 1));
    EXPECT_OK(heat_solver_get_field(w.solver, out));
    wrapped_destroy(&w);
    return 0;
}

/* max |out - factor u| / max |factor u| over the grid, u the kind's mode (over max |u| where `of_mode` is 0). */
static double error_of(const heat_problem *p, mode_kind kind, const void *out, double factor, int of_mode)
{
    const int *n = p->grid.n;
    double worst = 0.0, scale = 0.0;
    for (int k = 0; k < n[2]; ++k)
        for (int j = 0; j < n[1]; ++j)
            for (int i = 0; i < n[0]; ++i) {
                double want = factor * mode_value(p, kind, i, j, k);
                worst = fmax(worst, fabs(test_get(p, out, ((long)k * n[1] + j) * n[0] + i) - want));
                scale = fmax(scale, fabs(want));
            }
    return of_mode ? worst / scale : worst / (scale / fabs(factor));
}

static double relative_error(const heat_problem *p, mode_kind kind, const void *out, double factor)
{
    return error_of(p, kind, out, factor, 1);
}

/* Relative errors of lap_h u against the discrete eigenvalue (rounding
 * only) and the exact one (truncation) on an n^3 grid. */
static int laplacian_errors(int order, mode_kind kind, int n, double *discrete, double *exact)
{
    heat_problem p = mode_problem(order, kind, n, HEAT_DOUBLE);
    void *out = test_alloc_field(&p);
    if (apply_laplacian(&p, kind, out)) return 1;
    *discrete = relative_error(&p, kind, out, discrete_eigenvalue(&p, kind));
    *exact = relative_error(&p, kind, out, exact_eigenvalue(kind));
    free(out);
    return 0;
}

static int check_laplacian(int order, mode_kind kind)
{
    double discrete[2], exact[2];
    const int n[2] = {12, 24};
    for (int r = 0; r < 2; ++r)
        if (laplacian_errors(order, kind, n[r], &discrete[r], &exact[r])) return 1;
    double observed = log(exact[0] / exact[1]) / log(2.0);
    printf("order %d, %-17s: |lap_h u - lambda u| / |lambda u| = %.3e (n = 12), %.3e (n = 24): observed order %.2f; "
           "against the discrete eigenvalue %.1e\n", order, kind_names[kind], exact[0], exact[1], observed,
           fmax(discrete[0], discrete[1]));
    EXPECT(discrete[0] < 1e-11 && discrete[1] < 1e-11,
           "order %d, %s: the mode is not an eigenvector of lap_h (%.3e): a wrong reflection or coefficient", order,
           kind_names[kind], fmax(discrete[0], discrete[1]));
    EXPECT(fabs(observed - order) <= 0.3, "order %d, %s: observed order %.2f", order, kind_names[kind], observed);
    return 0;
}

/* ---- implicit steps ---- */

static heat_problem implicit_problem(int order, mode_kind kind, int n, heat_scheme scheme, heat_preconditioner pc,
                                     double dt_over_max)
{
    heat_problem p = mode_problem(order, kind, n, HEAT_DOUBLE);
    p.implicit = (heat_implicit){scheme, 1e-12, 2000, pc, 6, 0};
    p.dt = dt_over_max * heat_space_dt_max(&p.grid, p.alpha, heat_space_radius(&p));
    return p;
}

static double amplification(heat_scheme scheme, double dt_lambda)
{
    return scheme == HEAT_BACKWARD_EULER ? 1.0 / (1.0 - dt_lambda) : (1.0 + 0.5 * dt_lambda) / (1.0 - 0.5 * dt_lambda);
}

/* `steps` implicit steps from the mode; the field into out. */
static int implicit_run(const heat_problem *p, mode_kind kind, long steps, void *out)
{
    wrapped_solver w;
    if (wrapped_create(p, &w)) return 1;
    fill_mode(p, kind, out);
    EXPECT_OK(heat_solver_set_field(w.solver, out, 0));
    EXPECT_OK(heat_solver_advance(w.solver, steps));
    EXPECT_OK(heat_solver_get_field(w.solver, out));
    wrapped_destroy(&w);
    return 0;
}

/* Large steps (10 dt_max): the field after them is the mode times the
 * amplification at the discrete eigenvalue, whatever the preconditioner.
 * The error is measured against the mode's start: CG leaves rtol-sized
 * errors in high modes, which Crank-Nicolson's amplification near -1 keeps
 * while the mode itself decays. */
static int check_implicit_operator(int order, mode_kind kind, heat_scheme scheme, heat_preconditioner pc)
{
    static const char *const pcs[] = {"chebyshev", "jacobi", "none"};
    const long steps = 5;
    heat_problem p = implicit_problem(order, kind, 16, scheme, pc, 10.0);
    void *out = test_alloc_field(&p);
    if (implicit_run(&p, kind, steps, out)) return 1;
    double factor = pow(amplification(scheme, p.dt * p.alpha * discrete_eigenvalue(&p, kind)), (double)steps);
    double error = error_of(&p, kind, out, factor, 0);
    free(out);
    EXPECT(error < 1e-10, "order %d, %s, %s, %s: %ld steps of 10 dt_max off the discrete amplification by %.3e",
           order, kind_names[kind], heat_scheme_name(scheme), pcs[pc], steps, error);
    return 0;
}

/* Crank-Nicolson with small steps against the same steps of the exact operator: the mode times
 * amplification(-alpha |k|^2 dt)^steps, which leaves the time error out; the space error falls at
 * order 2R. (Against exp(-alpha |k|^2 t) itself, CN's time error, T (alpha |k|^2)^3 dt^2 / 12,
 * would hide order 8's space error at n = 24 unless dt were tiny.) */
static int check_crank_nicolson_order(int order)
{
    const mode_kind kind = MODE_DIRICHLET;
    const int n[2] = {12, 24};
    const double t_end = 0.002;
    double error[2];
    for (int r = 0; r < 2; ++r) {
        heat_problem p = implicit_problem(order, kind, n[r], HEAT_CRANK_NICOLSON, HEAT_PRECOND_CHEBYSHEV, 1.0);
        long steps = 100;
        p.dt = t_end / steps;
        void *out = test_alloc_field(&p);
        if (implicit_run(&p, kind, steps, out)) return 1;
        double exact = pow(amplification(HEAT_CRANK_NICOLSON, p.dt * p.alpha * exact_eigenvalue(kind)), (double)steps);
        error[r] = relative_error(&p, kind, out, exact);
        free(out);
    }
    double observed = log(error[0] / error[1]) / log(2.0);
    printf("order %d, Crank-Nicolson to t = %g: error %.3e (n = 12), %.3e (n = 24): observed order %.2f\n", order,
           t_end, error[0], error[1], observed);
    EXPECT(observed >= order - 0.3, "order %d: Crank-Nicolson converges at %.2f in space", order, observed);
    return 0;
}

/* ---- explicit stability ---- */

/* max |u| after `steps` explicit steps at cfl times the order's dt_max,
 * from the highest periodic mode (-1)^(i+j+k) and a smooth one, over its max at the start. */
static int explicit_growth(int order, heat_precision precision, double cfl, long steps, double *growth)
{
    heat_problem p = mode_problem(order, MODE_PERIODIC, 16, precision);
    p.dt = cfl * heat_space_dt_max(&p.grid, p.alpha, heat_space_radius(&p));
    void *field = test_alloc_field(&p);
    fill_mode(&p, MODE_PERIODIC, field);
    const int *n = p.grid.n;
    double start = 0.0, end = 0.0;
    for (long i = 0; i < heat_grid_points(&p.grid); ++i) {
        int x = (int)(i % n[0]), y = (int)(i / n[0] % n[1]), z = (int)(i / n[0] / n[1]);
        test_set(&p, field, i, test_get(&p, field, i) + 1e-3 * ((x + y + z) % 2 ? -1.0 : 1.0));
        start = fmax(start, fabs(test_get(&p, field, i)));
    }
    wrapped_solver w;
    if (wrapped_create(&p, &w)) return 1;
    EXPECT_OK(heat_solver_set_field(w.solver, field, 0));
    EXPECT_OK(heat_solver_advance(w.solver, steps));
    EXPECT_OK(heat_solver_get_field(w.solver, field));
    wrapped_destroy(&w);
    for (long i = 0; i < heat_grid_points(&p.grid); ++i) end = fmax(end, fabs(test_get(&p, field, i)));
    free(field);
    *growth = end / start;
    return 0;
}

static int check_stability(int order, heat_precision precision)
{
    double bounded, unstable;
    if (explicit_growth(order, precision, 1.0, 200, &bounded) || explicit_growth(order, precision, 1.05, 200, &unstable))
        return 1;
    printf("order %d, %s: max |u| after 200 explicit steps over its start: %.4g at cfl 1.0, %.3g at cfl 1.05\n", order,
           heat_precision_name(precision), bounded, unstable);
    /* At cfl 1 the highest mode's amplification is -1: it keeps its 1e-3 while the smooth mode decays. */
    EXPECT(bounded <= 1.0 && bounded > 0.9e-3, "order %d: cfl 1.0 changed max |u| by %g: dt_max is not the highest "
           "mode's limit", order, bounded);
    EXPECT(unstable > 1e3, "order %d: cfl 1.05 did not grow (%g): dt_max is too small", order, unstable);
    return 0;
}

/* ---- precision and restart ---- */

static int check_float(int order, mode_kind kind)
{
    heat_problem p = mode_problem(order, kind, 16, HEAT_FLOAT);
    void *out = test_alloc_field(&p);
    if (apply_laplacian(&p, kind, out)) return 1;
    double error = relative_error(&p, kind, out, discrete_eigenvalue(&p, kind));
    free(out);
    EXPECT(error < 2e-4, "order %d, %s, float: off the discrete eigenvalue by %.3e", order, kind_names[kind], error);
    return 0;
}

/* 7 + 6 steps through a download and a fresh solver give the bits of 13 straight. Rows of 32
 * points: whole vectors, as the 7-point stencil's two variants, which the first steps choose
 * between by timing, round a float row's tail apart (n[0] = 20, 8-lane vectors). */
static int check_restart_bits(int order, heat_precision precision, heat_scheme scheme)
{
    heat_problem p = mode_problem(order, MODE_DIRICHLET, 32, precision);
    p.grid.n[1] = 12, p.grid.n[2] = 10;
    heat_grid_set_spacing(&p.grid);
    p.dt = 0.5 * heat_space_dt_max(&p.grid, p.alpha, heat_space_radius(&p));
    p.bc[FACE_Y_LOW].type = HEAT_BC_NEUMANN, p.bc[FACE_Z_HIGH].value = 1.5, p.bc[FACE_X_LOW].type = HEAT_BC_PERIODIC,
    p.bc[FACE_X_HIGH].type = HEAT_BC_PERIODIC;
    if (scheme != HEAT_EULER) p.implicit = (heat_implicit){scheme, 1e-8, 500, HEAT_PRECOND_CHEBYSHEV, 6, 0}, p.dt *= 10;
    const size_t bytes = (size_t)heat_grid_points(&p.grid) * heat_precision_size(precision);
    void *straight = test_alloc_field(&p), *split = test_alloc_field(&p);
    fill_mode(&p, MODE_NEUMANN, straight);
    memcpy(split, straight, bytes);
    wrapped_solver w;
    if (wrapped_create(&p, &w)) return 1;
    EXPECT_OK(heat_solver_set_field(w.solver, straight, 0));
    EXPECT_OK(heat_solver_advance(w.solver, 13));
    EXPECT_OK(heat_solver_get_field(w.solver, straight));
    wrapped_destroy(&w);
    for (int part = 0; part < 2; ++part) {
        if (wrapped_create(&p, &w)) return 1;
        EXPECT_OK(heat_solver_set_field(w.solver, split, part ? 7 : 0));
        EXPECT_OK(heat_solver_advance(w.solver, part ? 6 : 7));
        EXPECT_OK(heat_solver_get_field(w.solver, split));
        wrapped_destroy(&w);
    }
    EXPECT(memcmp(straight, split, bytes) == 0, "order %d, %s, %s: 7 + 6 steps differ from 13", order,
           heat_precision_name(precision), heat_scheme_name(scheme));
    free(straight), free(split);
    return 0;
}

/* Orders on the command line (all without). */
static int wanted(int argc, char **argv, int order)
{
    for (int a = 1; a < argc; ++a)
        if (atoi(argv[a]) == order) return 1;
    return argc < 2;
}

static int checks(int argc, char **argv)
{
    int failed = 0;
    for (int order = 2; order <= 8; order += 2) {
        if (!wanted(argc, argv, order)) continue;
        for (mode_kind kind = MODE_DIRICHLET; kind <= MODE_PERIODIC; ++kind) {
            failed |= check_laplacian(order, kind) || check_float(order, kind);
            failed |= check_implicit_operator(order, kind, HEAT_BACKWARD_EULER, HEAT_PRECOND_CHEBYSHEV);
            failed |= check_implicit_operator(order, kind, HEAT_CRANK_NICOLSON, HEAT_PRECOND_JACOBI);
        }
        failed |= check_implicit_operator(order, MODE_NEUMANN, HEAT_CRANK_NICOLSON, HEAT_PRECOND_NONE);
        failed |= check_crank_nicolson_order(order);
        failed |= check_stability(order, HEAT_DOUBLE) || check_stability(order, HEAT_FLOAT);
        for (heat_scheme scheme = HEAT_EULER; scheme <= HEAT_CRANK_NICOLSON; ++scheme)
            failed |= check_restart_bits(order, HEAT_DOUBLE, scheme) || check_restart_bits(order, HEAT_FLOAT, scheme);
    }
    if (!failed) printf("space orders 2, 4, 6, 8: eigenvalues, observed orders, implicit steps, stability, restarts hold\n");
    return failed;
}

int main(int argc, char **argv) { return run_between_par_init_and_finalize(argc, argv, checks); }
