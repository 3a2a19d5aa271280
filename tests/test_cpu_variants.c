/*
 * The CPU heat step's variants give the same bits: heat_step (stores through
 * the cache) and heat_step_nt (streaming stores, chosen on large grids), on 1
 * and 2 threads, on grids whose rows end in a partial vector (nx = 61, and
 * 17 to 24: every tail length of an 8-lane vector, whose tails the compiler
 * vectorises apart from the body) and whose y extent spans several cache blocks, with Dirichlet and Neumann
 * faces, so that the fused halo fill of every face is exercised. The cached
 * variant is the one the analytic tests check on small grids.
 * Runs of 7 steps take three pairs in one sweep each (stencil_sweep2_planes) and a
 * single step; the reference takes its 7 steps one call at a time, so one
 * sweep each: both paths must give the same bits, on 1 to 4 threads (4: the
 * thinnest slabs, 4 planes a thread), and on a grid of 3 planes. Again with a periodic z axis, whose
 * ghosts come through the halo exchange (two planes for a pair). Above order 2, the loops of 2 and of
 * 4 vectors a turn with both stores give the same bits (check_wide), and those of the step's
 * definition, on rows so long that the sweep's blocks of rows are 4 rows, the last one shorter than
 * the R ghost rows of the face beside it (check_wide_definition).
 */
#include <omp.h>

#include <math.h>

#include "../parallel/domain.h"
#include "../solver/space_order.h"
#include "test_util.h"

static int run_variant(const heat_problem *p, const heat_halo_transport *transport, const void *initial,
                       const char *name, int threads, int calls, void *out)
{
    omp_set_num_threads(threads);
    heat_solver *s;
    EXPECT_OK(heat_solver_create_block(p, transport, HEAT_SELECT_CPU, &s));
    const heat_variant *list;
    int count, found = -1;
    EXPECT_OK(s->ops->bench->variants(s->state, &list, &count));
    for (int v = 0; v < count; ++v)
        if (strcmp(list[v].kernel, name) == 0) found = v;
    EXPECT(found >= 0, "no CPU variant %s", name);
    EXPECT_OK(heat_solver_set_field(s, initial, 0));
    for (int c = 0; c < calls; ++c) EXPECT_OK(s->ops->bench->run_variant(s->state, &list[found], 7 / calls));
    EXPECT_OK(heat_solver_get_field(s, out));
    heat_solver_destroy(&s);
    return 0;
}

/* 7 steps of heat_step on one thread, one sweep a step (the reference),
 * against 7 steps in one call (three pairs and a single sweep) of each
 * variant names[c] on threads[c] threads, from a Gaussian centred at z = cz. */
static int pairs_match_single_sweeps(const heat_problem *p, const heat_halo_transport *transport, double cz,
                                     const char *what, const char *const names[], const int threads[], int count)
{
    heat_initial init = {.type = INITIAL_GAUSSIAN, .amplitude = 5.0, .background = 1.0, .center = {0.3, 0.6, cz},
                         .width = 0.3};
    void *initial = test_alloc_field(p), *reference = test_alloc_field(p), *other = test_alloc_field(p);
    heat_initial_fill(&init, &p->grid, p->precision, initial);
    size_t bytes = (size_t)heat_grid_points(&p->grid) * heat_precision_size(p->precision);
    if (run_variant(p, transport, initial, "heat_step", 1, 7, reference)) return 1;
    EXPECT(memcmp(initial, reference, bytes) != 0, "%s: the step changed nothing", what);
    for (int c = 0; c < count; ++c) {
        if (run_variant(p, transport, initial, names[c], threads[c], 1, other)) return 1;
        EXPECT(memcmp(reference, other, bytes) == 0,
               "%s: %s on %d threads, two steps a sweep, differs from heat_step on 1 thread, one a sweep", what,
               names[c], threads[c]);
        printf("%s: %s on %d thread%s, two steps a sweep: bitwise equal to heat_step on 1 thread, one a sweep\n",
               what, names[c], threads[c], threads[c] == 1 ? "" : "s");
    }
    free(initial), free(reference), free(other);
    return 0;
}

static int check_precision(heat_precision precision, int nx, int nz)
{
    heat_problem p = test_problem(nx, 300, nz, 2.0, 3.0, 1.0, precision);
    p.bc[FACE_X_LOW] = (heat_bc){.type = HEAT_BC_DIRICHLET, .value = 1.0};
    p.bc[FACE_Y_HIGH] = (heat_bc){.type = HEAT_BC_DIRICHLET, .value = 2.0};
    p.bc[FACE_Z_LOW] = (heat_bc){.type = HEAT_BC_DIRICHLET, .value = 0.5};
    const char *const names[] = {"heat_step", "heat_step", "heat_step_nt", "heat_step_nt", "heat_step_nt", "heat_step"};
    const int threads[] = {1, 2, 1, 2, 3, 4};
    char what[64];
    snprintf(what, sizeof what, "%s, rows of %d, %d planes", heat_precision_name(precision), nx, nz);
    return pairs_match_single_sweeps(&p, NULL, 0.4, what, names, threads, 6);
}

/* Periodic z: the process's own planes across the axis (parallel_serial.c),
 * wired as a run wires them (heat_domain_localize, heat_domain_transport). */
static int check_periodic(heat_precision precision)
{
    heat_problem whole = test_problem(61, 300, 16, 2.0, 3.0, 1.0, precision), p;
    whole.bc[FACE_Z_LOW] = whole.bc[FACE_Z_HIGH] = (heat_bc){.type = HEAT_BC_PERIODIC, .value = 0.0};
    whole.bc[FACE_X_LOW] = (heat_bc){.type = HEAT_BC_DIRICHLET, .value = 1.0};
    heat_domain domain;
    const int automatic[3] = {0, 0, 0};
    EXPECT_OK(heat_domain_init(&domain, &whole, automatic, TRANSPORT_AUTO, 0));
    heat_domain_localize(&domain, &whole, &p);
    EXPECT(p.halo.exchanged == (1u << FACE_Z_LOW | 1u << FACE_Z_HIGH), "z faces not exchanged: %x", p.halo.exchanged);
    const char *const names[] = {"heat_step_nt", "heat_step_nt", "heat_step_nt"};
    const int threads[] = {1, 2, 4};
    char what[64];
    snprintf(what, sizeof what, "%s, periodic z", heat_precision_name(precision));
    heat_halo_transport transport = heat_domain_transport(&domain);
    int failed = pairs_match_single_sweeps(&p, &transport, 0.1, what, names, threads, 3);
    heat_domain_free(&domain);
    return failed;
}

/* Whether each of the `count` variants `names`, on 1 to `most_threads` threads, takes `initial` 7 steps to
 * `reference`'s bits; `what` says in a failure's message which case and which reference. */
static int variants_match(const heat_problem *p, const void *initial, const void *reference, const char *const *names,
                          int count, int most_threads, const char *what)
{
    size_t bytes = (size_t)heat_grid_points(&p->grid) * heat_precision_size(p->precision);
    void *other = test_alloc_field(p);
    for (int c = 0; c < count; ++c)
        for (int threads = 1; threads <= most_threads; ++threads) {
            if (run_variant(p, NULL, initial, names[c], threads, 7, other)) return 1;
            EXPECT(memcmp(reference, other, bytes) == 0, "%s: %s on %d threads differs", what, names[c], threads);
        }
    free(other);
    return 0;
}

/* Above order 2 each store has row loops of 2, 4 and 8 vectors a turn (cpu_wide.h), row by row or
 * in tiles of rows (wide_march_tiles): every variant, on 1 and 2 threads, gives heat_step's bits on
 * 1 thread, on rows whose length leaves every remainder after the loops of 4 and 8 vectors (whole
 * vectors, single vectors, a scalar tail) and after the tiles' spans. */
static int check_wide(heat_precision precision, int order, int nx)
{
    heat_problem p = test_problem(nx, 20, 18, 2.0, 3.0, 1.0, precision);
    p.space_order = order;
    p.bc[FACE_X_LOW] = (heat_bc){.type = HEAT_BC_DIRICHLET, .value = 1.0};
    p.bc[FACE_Y_HIGH] = (heat_bc){.type = HEAT_BC_DIRICHLET, .value = 2.0};
    void *initial = test_gaussian_field(&p, 0.3), *reference = test_alloc_field(&p);
    size_t bytes = (size_t)heat_grid_points(&p.grid) * heat_precision_size(p.precision);
    if (run_variant(&p, NULL, initial, "heat_step", 1, 7, reference)) return 1;
    EXPECT(memcmp(initial, reference, bytes) != 0, "order %d: the step changed nothing", order);
    const char *const names[] = {"heat_step_nt",        "heat_step_x4",        "heat_step_nt_x4",
                                 "heat_step_x8",        "heat_step_nt_x8",     "heat_step_nt_x4_4x4",
                                 "heat_step_nt_x8_4x4", "heat_step_nt_x4_2x2"};
    char what[96];
    snprintf(what, sizeof what, "%s, order %d, rows of %d, against heat_step", heat_precision_name(precision), order, nx);
    if (variants_match(&p, initial, reference, names, (int)(sizeof names / sizeof names[0]), 2, what)) return 1;
    printf("%s, order %d, rows of %d: heat_step_nt, heat_step_x4, heat_step_nt_x4, heat_step_x8, heat_step_nt_x8 and "
           "the tiles of rows heat_step_nt_x4_4x4, heat_step_nt_x8_4x4, heat_step_nt_x4_2x2 on 1 and 2 threads bitwise "
           "equal to heat_step\n",
           heat_precision_name(precision), order, nx);
    free(initial), free(reference);
    return 0;
}

/* The index along `axis` of the owned point whose reflection ghost index x is (-1-m from m, n+m from
 * n-1-m), or x itself where it is owned. */
static int mirrored(int x, int n) { return x < 0 ? -1 - x : x >= n ? 2 * n - 1 - x : x; }

/* The order-2R step by its definition, a point at a time, for one precision: each face's ghosts by
 * its rule (ghost = shift + scale u(mirror), Dirichlet (2g, -1), Neumann (0, 1); the star reads no
 * edge, so one axis at a time), the terms in cpu_wide.h's order (z-R .. z-1, y-R .. y-1, x-R .. x-1,
 * the centre, x+1 .. x+R, y+1 .. y+R, z+1 .. z+R), the first product rounded and each further one
 * fused into the sum, then u + alpha_dt lap. */
#define DEFINITION_STEP(T, SUFFIX, FMA)                                                                           \
    static T value##SUFFIX(const heat_problem *p, const T *u, const int x[3])                                    \
    {                                                                                                            \
        const int *n = p->grid.n;                                                                                \
        int owned[3] = {x[0], x[1], x[2]}, face = -1;                                                           \
        for (int d = 0; d < 3; ++d)                                                                              \
            if (x[d] < 0 || x[d] >= n[d]) face = 2 * d + (x[d] >= n[d]), owned[d] = mirrored(x[d], n[d]);        \
        const T v = u[((long)owned[2] * n[1] + owned[1]) * n[0] + owned[0]];                                    \
        if (face < 0) return v;                                                                                  \
        const int dirichlet = p->bc[face].type == HEAT_BC_DIRICHLET;                                             \
        const T shift = (T)(dirichlet ? 2.0 * p->bc[face].value : 0.0), scale = (T)(dirichlet ? -1.0 : 1.0);     \
        return shift + scale * v;                                                                                \
    }                                                                                                            \
    static void step##SUFFIX(const heat_problem *p, const heat_space_coeffs *c, const T *u, T *out)             \
    {                                                                                                            \
        const int *n = p->grid.n, R = c->radius;                                                                 \
        for (int k = 0; k < n[2]; ++k)                                                                           \
            for (int j = 0; j < n[1]; ++j)                                                                       \
                for (int i = 0; i < n[0]; ++i) {                                                                 \
                    T lap = 0;                                                                                   \
                    for (int t = 0; t <= 6 * R; ++t) { /* term t: axis 2, 1, 0 below, the centre, 0, 1, 2 above */ \
                        const int below = t < 3 * R, axis = below ? 2 - t / R : t == 3 * R ? 0 : (t - 3 * R - 1) / R; \
                        const int m = below ? t % R - R : t == 3 * R ? 0 : (t - 3 * R - 1) % R + 1;              \
                        int x[3] = {i, j, k};                                                                    \
                        x[axis] += m;                                                                            \
                        const T w = (T)(m == 0 ? c->diag : c->weight[axis][m < 0 ? -m : m]);                    \
                        lap = t == 0 ? value##SUFFIX(p, u, x) * w : FMA(value##SUFFIX(p, u, x), w, lap);         \
                    }                                                                                            \
                    const long at = ((long)k * n[1] + j) * n[0] + i;                                             \
                    out[at] = u[at] + (T)c->alpha_dt * lap;                                                      \
                }                                                                                                \
    }
DEFINITION_STEP(double, _d, fma)
DEFINITION_STEP(float, _f, fmaf)

/* `steps` steps of p's definition from `initial` into out. */
static void definition_steps(const heat_problem *p, const void *initial, int steps, void *out)
{
    const heat_space_coeffs c = heat_space_coeffs_make(p);
    const size_t bytes = (size_t)heat_grid_points(&p->grid) * heat_precision_size(p->precision);
    void *other = malloc(bytes);
    memcpy(out, initial, bytes);
    for (int s = 0; s < steps; ++s) {
        if (p->precision == HEAT_FLOAT) step_f(p, &c, out, other);
        else step_d(p, &c, out, other);
        memcpy(out, other, bytes);
    }
    free(other);
}

/* Order 8 on rows of 32 KiB: the sweep's blocks are of 4 rows (the fewest it takes), the last of the
 * 9 rows alone beside the high y face; 10 planes: z slabs on 1 and 2 threads, rows shared out on 3. */
static int check_wide_definition(heat_precision precision)
{
    const int nx = precision == HEAT_FLOAT ? 8200 : 4100;
    heat_problem p = test_problem(nx, 9, 10, 2.0, 0.75, 1.0, precision);
    p.space_order = 8;
    p.dt = 0.5 * heat_space_dt_max(&p.grid, p.alpha, heat_space_radius(&p));
    p.bc[FACE_X_HIGH] = (heat_bc){.type = HEAT_BC_DIRICHLET, .value = 1.0};
    p.bc[FACE_Y_HIGH] = (heat_bc){.type = HEAT_BC_DIRICHLET, .value = 2.0};
    p.bc[FACE_Z_LOW] = (heat_bc){.type = HEAT_BC_DIRICHLET, .value = 0.5};
    void *initial = test_gaussian_field(&p, 0.3), *reference = test_alloc_field(&p);
    size_t bytes = (size_t)heat_grid_points(&p.grid) * heat_precision_size(p.precision);
    definition_steps(&p, initial, 7, reference);
    EXPECT(memcmp(initial, reference, bytes) != 0, "order 8, the definition: the step changed nothing");
    const char *const names[] = {"heat_step", "heat_step_nt_x4", "heat_step_nt_x4_4x4", "heat_step_nt_x4_2x2"};
    char what[96];
    snprintf(what, sizeof what, "%s, order 8, %d x 9 x 10, against the definition", heat_precision_name(precision), nx);
    if (variants_match(&p, initial, reference, names, (int)(sizeof names / sizeof names[0]), 3, what)) return 1;
    printf("%s, order 8, %d x 9 x 10 (blocks of 4 rows): heat_step, heat_step_nt_x4 and the tiles heat_step_nt_x4_4x4, "
           "heat_step_nt_x4_2x2 on 1 to 3 threads bitwise equal to the definition\n", heat_precision_name(precision), nx);
    free(initial), free(reference);
    return 0;
}

/* Row lengths past the loops of 8 vectors of 64 bytes (the widest the CPU kernels take): 0 to 7
 * whole vectors and a tail of several lengths beyond them. */
static int check_wide_orders(void)
{
    const int lanes_d = 64 / 8, lanes_f = 64 / 4;
    for (int order = 4; order <= 8; order += 2)
        for (int extra = 0; extra < 8 * lanes_d; extra += lanes_d + 1) /* 0, 1 vector + 1, 2 vectors + 2, ... */
            if (check_wide(HEAT_DOUBLE, order, 8 * lanes_d + extra) || check_wide(HEAT_FLOAT, order, 8 * lanes_f + 2 * extra + 1))
                return 1;
    return 0;
}

static int checks(int argc, char **argv)
{
    (void)argc, (void)argv;
    /* 3 planes: fewer than 4 a thread, so the pairs run on fewer threads than the step has */
    for (int nx = 17; nx <= 24; ++nx)
        if (check_precision(HEAT_FLOAT, nx, 16) || check_precision(HEAT_DOUBLE, nx, 16)) return 1;
    if (check_wide_orders() || check_wide_definition(HEAT_DOUBLE) || check_wide_definition(HEAT_FLOAT)) return 1;
    return check_precision(HEAT_DOUBLE, 61, 16) || check_precision(HEAT_FLOAT, 61, 16) || check_precision(HEAT_DOUBLE, 61, 3) ||
           check_periodic(HEAT_DOUBLE) || check_periodic(HEAT_FLOAT);
}

int main(int argc, char **argv) { return run_between_par_init_and_finalize(argc, argv, checks); }
