/*
 * The GPU's kernels of space order 4, 6 and 8 (kernels/hip/order_kernels.hip)
 * on a 43 x 29 x 150 grid that no block or tile divides, whose 150 planes
 * make two or three z chunks a block, from a rough field, in double and
 * float, with faces all Dirichlet (each its own value), all Neumann, all
 * periodic, and a mix (and the mix on 140 x 76 x 136, whose middle blocks
 * run each variant's interior loop, without the faces' tests; all Dirichlet
 * and the mix on 128 x 64 x 136, which the FILLED kernels' tiles (columns x
 * rows: 32 x 16, 32 x 32, 64 x 16) tile exactly: the kernels that
 * write the ghosts and then run every block's interior loop take that path
 * there alone):
 *   - one explicit step of every variant against the definition evaluated
 *     here (solver/space_order.h's weights, problem.h's mirrored ghosts), so
 *     a wrong coefficient or reflection fails whatever the CPU does;
 *   - 20 explicit steps of every variant, and the time loop's advance(),
 *     against the CPU backend, and every variant's 20 steps bitwise equal to
 *     the first's (they sum in one order, so the tuner's choice never
 *     changes a result);
 *   - backward Euler and Crank-Nicolson (5 steps of 40 explicit dt_max,
 *     Chebyshev and Jacobi) against the CPU backend within the CG tolerance.
 * max |gpu - ref| / max |ref| <= 1e-13 (double), 1e-5 (float) for the
 * explicit steps; 1e-8 and 1e-4 for the implicit ones.
 * usage: test_gpu_order [ORDER [explicit [NAME[,NAME...]]]]   (one order; the explicit steps alone; of
 *        the variants after the first, whose bits the others must equal, those whose name holds a NAME)
 */
#include <stdint.h>

#include "../parallel/domain.h"
#include "../solver/implicit.h"
#include "../solver/space_order.h"
#include "test_util.h"

static double relative_difference(const heat_problem *p, const void *a, const void *ref)
{
    double worst = 0.0, scale = 0.0;
    for (long at = 0; at < heat_grid_points(&p->grid); ++at) {
        worst = fmax(worst, fabs(test_get(p, a, at) - test_get(p, ref, at)));
        scale = fmax(scale, fabs(test_get(p, ref, at)));
    }
    return worst / scale;
}

/* u at index c (|overhang| <= R) along axis a of owned point idx, by the ghost
 * rules of problem.h: a mirrored owned point, transformed, or the wrap. */
static double value_along(const heat_problem *p, const void *u, const int idx[3], int a, int c)
{
    const int *n = p->grid.n;
    int at[3] = {idx[0], idx[1], idx[2]}, face = -1;
    if (c < 0) face = 2 * a, c = p->bc[face].type == HEAT_BC_PERIODIC ? c + n[a] : -1 - c;
    else if (c >= n[a]) face = 2 * a + 1, c = p->bc[face].type == HEAT_BC_PERIODIC ? c - n[a] : 2 * n[a] - 1 - c;
    at[a] = c;
    double v = test_get(p, u, ((long)at[2] * n[1] + at[1]) * n[0] + at[0]);
    if (face >= 0 && p->bc[face].type == HEAT_BC_DIRICHLET) v = 2.0 * p->bc[face].value - v;
    return v;
}

/* One explicit step of the definition: u + alpha dt sum_a (c_0 u + sum_m c_m (u[-m] + u[+m])) / h_a^2. */
static void reference_step(const heat_problem *p, const void *u, void *out)
{
    const int R = heat_space_radius(p), *n = p->grid.n;
    const double *c = heat_space_weights(R);
    for (int k = 0; k < n[2]; ++k)
        for (int j = 0; j < n[1]; ++j)
            for (int i = 0; i < n[0]; ++i) {
                const int idx[3] = {i, j, k};
                const long at = ((long)k * n[1] + j) * n[0] + i;
                const double centre = test_get(p, u, at);
                double lap = 0.0;
                for (int a = 0; a < 3; ++a) {
                    double axis = c[0] * centre;
                    for (int m = 1; m <= R; ++m)
                        axis += c[m] * (value_along(p, u, idx, a, idx[a] - m) + value_along(p, u, idx, a, idx[a] + m));
                    lap += axis / (p->grid.h[a] * p->grid.h[a]);
                }
                test_set(p, out, at, centre + p->alpha * p->dt * lap);
            }
}

/* A block solver of p (its periodic axes wrap through the domain's transport). */
typedef struct order_case {
    heat_domain domain;
    heat_problem p;
    heat_halo_transport transport;
} order_case;

static int case_init(order_case *c, const heat_problem *whole)
{
    const int automatic[3] = {0, 0, 0};
    EXPECT_OK(heat_domain_init(&c->domain, whole, automatic, TRANSPORT_AUTO, 1));
    heat_domain_localize(&c->domain, whole, &c->p);
    c->transport = heat_domain_transport(&c->domain);
    return 0;
}

static int run_block(order_case *c, const heat_problem *p, heat_backend_request backend, const void *initial, long steps,
                     void *out, char *description, size_t len)
{
    heat_solver *s;
    EXPECT_OK(heat_solver_create_block(p, &c->transport, backend, &s));
    EXPECT_OK(heat_solver_set_field(s, initial, 0));
    EXPECT_OK(heat_solver_advance(s, steps));
    EXPECT_OK(heat_solver_get_field(s, out));
    if (description) snprintf(description, len, "%s", s->ops->kernel_description(s->state));
    heat_solver_destroy(&s);
    return 0;
}

/* Of the variants after the first, those whose name holds one of its comma-separated parts (NULL: all). */
static const char *variant_filter;

static int variant_wanted(const char *kernel)
{
    if (!variant_filter) return 1;
    for (const char *at = variant_filter; *at;) {
        const size_t len = strcspn(at, ",");
        char part[64];
        snprintf(part, sizeof part, "%.*s", (int)len, at);
        if (len > 0 && strstr(kernel, part)) return 1;
        at += len + (at[len] == ',');
    }
    return 0;
}

/* Every GPU variant: one step against the definition, `steps` against the CPU. */
static int check_explicit(order_case *c, const char *what)
{
    const heat_problem *p = &c->p;
    const double tolerance = p->precision == HEAT_FLOAT ? 1e-5 : 1e-13;
    const long steps = 20;
    void *initial = test_alloc_field(p), *ref1 = test_alloc_field(p), *cpu = test_alloc_field(p),
         *gpu = test_alloc_field(p), *first = test_alloc_field(p);
    const size_t bytes = (size_t)heat_grid_points(&p->grid) * heat_precision_size(p->precision);
    const char *first_name = NULL;
    test_rough_field(p, initial);
    reference_step(p, initial, ref1);
    if (run_block(c, p, HEAT_SELECT_CPU, initial, 1, cpu, NULL, 0)) return 1;
    printf("%s: the CPU's step against the definition %.3e\n", what, relative_difference(p, cpu, ref1));
    if (run_block(c, p, HEAT_SELECT_CPU, initial, steps, cpu, NULL, 0)) return 1;
    heat_solver *s;
    EXPECT_OK(heat_solver_create_block(p, &c->transport, HEAT_SELECT_HIP, &s));
    const heat_variant *variants;
    int count, failed = 0, checked = 0;
    EXPECT_OK(s->ops->bench->variants(s->state, &variants, &count));
    for (int v = 0; v < count; ++v) {
        if (variants[v].laplacian || (first_name && !variant_wanted(variants[v].kernel))) continue;
        double one, many;
        EXPECT_OK(heat_solver_set_field(s, initial, 0));
        EXPECT_OK(s->ops->bench->run_variant(s->state, &variants[v], 1));
        EXPECT_OK(heat_solver_get_field(s, gpu));
        one = relative_difference(p, gpu, ref1);
        EXPECT_OK(heat_solver_set_field(s, initial, 0));
        EXPECT_OK(s->ops->bench->run_variant(s->state, &variants[v], steps));
        EXPECT_OK(heat_solver_get_field(s, gpu));
        many = relative_difference(p, gpu, cpu);
        if (!first_name) memcpy(first, gpu, bytes), first_name = variants[v].kernel;
        const int same_bits = memcmp(gpu, first, bytes) == 0;
        printf("%s: %-22s m=%d  1 step vs definition %.3e, %ld steps vs CPU %.3e, %s %s\n", what, variants[v].kernel,
               variants[v].tile, one, steps, many, same_bits ? "bitwise equal to" : "DIFFERS in bits from", first_name);
        if (!(one <= tolerance && many <= tolerance && same_bits)) failed = 1;
        ++checked;
    }
    heat_solver_destroy(&s);
    EXPECT(checked >= 2, "%s: %d GPU variants of space order %d", what, checked, p->space_order);
    char description[192];
    if (run_block(c, p, HEAT_SELECT_HIP, initial, steps, gpu, description, sizeof description)) return 1;
    double loop = relative_difference(p, gpu, cpu);
    printf("%s: advance() with %s: %ld steps vs CPU %.3e\n", what, description, steps, loop);
    EXPECT(strstr(description, "order_"), "%s: the time loop ran %s, not an order kernel", what, description);
    free(initial), free(ref1), free(cpu), free(gpu), free(first);
    EXPECT(!failed && loop <= tolerance, "%s: a GPU variant differs by more than %g, or in bits from %s", what, tolerance,
           first_name);
    return 0;
}

static int check_implicit(order_case *c, heat_scheme scheme, heat_preconditioner pc, const char *what)
{
    heat_problem p = c->p;
    p.dt = 40.0 * heat_space_dt_max(&p.grid, p.alpha, heat_space_radius(&p));
    const double rtol = p.precision == HEAT_FLOAT ? 1e-5 : 1e-10, tolerance = p.precision == HEAT_FLOAT ? 1e-4 : 1e-8;
    p.implicit = (heat_implicit){scheme, rtol, 1000, pc, 6, 2};
    void *initial = test_alloc_field(&p), *cpu = test_alloc_field(&p), *gpu = test_alloc_field(&p);
    test_rough_field(&p, initial);
    if (run_block(c, &p, HEAT_SELECT_CPU, initial, 5, cpu, NULL, 0) ||
        run_block(c, &p, HEAT_SELECT_HIP, initial, 5, gpu, NULL, 0))
        return 1;
    double d = relative_difference(&p, gpu, cpu), moved = relative_difference(&p, initial, cpu);
    printf("%s: %s %s, 5 steps of 40 dt_max: GPU vs CPU %.3e (the field moved %.3e)\n", what, heat_scheme_name(scheme),
           heat_preconditioner_name(pc), d, moved);
    free(initial), free(cpu), free(gpu);
    EXPECT(d <= tolerance && moved > 1e-3, "%s: GPU and CPU differ by %.3e > %g (or nothing moved)", what, d, tolerance);
    return 0;
}

/* implicit: also the implicit schemes (on the faces that carry values, 0 and 3). */
static int check_faces(heat_precision precision, int order, int faces, const int n[3], int implicit)
{
    static const char *const names[] = {"all Dirichlet", "all Neumann", "all periodic", "periodic x, mixed y z"};
    static const heat_bc_type kinds[] = {HEAT_BC_DIRICHLET, HEAT_BC_NEUMANN, HEAT_BC_PERIODIC};
    heat_problem whole = test_problem(n[0], n[1], n[2], 1.3, 1.0, 4.0, precision);
    for (int f = 0; f < FACE_COUNT; ++f)
        whole.bc[f] = (heat_bc){.type = faces < 3 ? kinds[faces] : HEAT_BC_NEUMANN, .value = 0.5 * f - 1.0};
    if (faces == 3) {
        whole.bc[FACE_X_LOW] = whole.bc[FACE_X_HIGH] = (heat_bc){.type = HEAT_BC_PERIODIC};
        whole.bc[FACE_Y_LOW] = (heat_bc){.type = HEAT_BC_DIRICHLET, .value = 3.0};
        whole.bc[FACE_Z_HIGH] = (heat_bc){.type = HEAT_BC_DIRICHLET, .value = -2.0};
    }
    whole.space_order = order;
    whole.dt = 0.5 * heat_space_dt_max(&whole.grid, whole.alpha, heat_space_radius(&whole));
    char what[96];
    snprintf(what, sizeof what, "order %d %s %s %dx%dx%d", order, heat_precision_name(precision), names[faces], n[0],
             n[1], n[2]);
    order_case c;
    if (case_init(&c, &whole)) return 1;
    int failed = check_explicit(&c, what);
    if (implicit && (faces == 0 || faces == 3)) { /* the implicit schemes: Dirichlet values, Neumann and periodic faces */
        failed |= check_implicit(&c, HEAT_CRANK_NICOLSON, HEAT_PRECOND_CHEBYSHEV, what);
        failed |= check_implicit(&c, HEAT_BACKWARD_EULER, HEAT_PRECOND_JACOBI, what);
    }
    heat_domain_free(&c.domain);
    return failed;
}

static int checks(int argc, char **argv)
{
    char reason[256];
    if (!(heat_backend_hip && heat_hip_available(reason, sizeof reason)))
        return printf("no GPU (%s): skipped\n", heat_backend_hip ? reason : "built without one"), TEST_SKIP;
    const int only = argc > 1 ? atoi(argv[1]) : 0; /* an order alone, e.g. 8 */
    /* "explicit": the explicit kernels alone (the implicit ones' CPU runs take most of the time) */
    const int implicit = !(argc > 2 && strcmp(argv[2], "explicit") == 0);
    variant_filter = argc > 3 ? argv[3] : NULL;
    int failed = 0;
    static const int rough[3] = {43, 29, 150}, interior[3] = {140, 76, 136}, tiled[3] = {128, 64, 136};
    for (int order = 4; order <= 8; order += 2) {
        if (only && order != only) continue;
        for (int precision = HEAT_DOUBLE; precision <= HEAT_FLOAT; ++precision) {
            for (int faces = 0; faces < 4; ++faces)
                failed |= check_faces((heat_precision)precision, order, faces, rough, implicit);
            /* blocks far enough from every face take the kernels' interior loops */
            failed |= check_faces((heat_precision)precision, order, 3, interior, 0);
            failed |= check_faces((heat_precision)precision, order, 0, tiled, 0);
            failed |= check_faces((heat_precision)precision, order, 3, tiled, 0);
        }
    }
    return failed;
}

int main(int argc, char **argv) { return run_between_par_init_and_finalize(argc, argv, checks); }
