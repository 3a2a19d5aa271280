/*
 * The GPU's fused sweeps (K steps a sweep, fused_kernels.hip) give the bits of
 * K single steps: every fused kernel against heat_tiled_ntf m=1, one step a
 * sweep, for 12 steps (whole sweeps for K = 2, 3, 4) and 13 (a remainder in
 * single steps), in double and float, with all faces Dirichlet (each its own
 * value), all Neumann, all periodic (ghosts from the far side), and a mix.
 * The grid (37 x 29 x 150) is divided by no tile, and 150 planes make two
 * or three z chunks of 64 or 128 planes (a balanced chunk count, `zb`, makes
 * chunks of 2K planes on a grid this small: its four tiles fill one wave),
 * so tile and chunk edges cross the faces. A 60 x 60 x 150 grid (mixed
 * faces) has tiles that touch no face, which march their inner planes on
 * the interior path (fused_kernels.hip: INTERIOR) between planes near the
 * z faces on the general one. Kernels of several columns a thread take their
 * aligned path (ALIGNED: nx a multiple of the columns) on the 60-wide grid
 * and on a 128 x 60 x 150 grid with each face type, whose middle tiles march
 * the interior with one vector a row; the 37-wide grids take their general
 * path of separate columns. Then
 * the time loop's path: advance() with solver.kernel = "heat_fusedK", called
 * for 7, 2 and 4 steps (sweeps, the remainders' sweeps of 2 and 3 steps and
 * single steps mixed), against the same reference.
 * Starts from a rough field (a hash of the index on a Gaussian), so every
 * point differs from its neighbours.
 */
#include <stdint.h>

#include "../parallel/domain.h"
#include "test_util.h"

static int find_variant(heat_solver *s, const char *name, int tile, const heat_variant **found)
{
    const heat_variant *list;
    int count;
    EXPECT_OK(s->ops->bench->variants(s->state, &list, &count));
    *found = NULL;
    for (int v = 0; v < count; ++v)
        if (strcmp(list[v].kernel, name) == 0 && list[v].tile == tile) *found = &list[v];
    EXPECT(*found, "no GPU variant %s m=%d", name, tile);
    return 0;
}

/* `steps` steps of variant v (run_variant) from initial into out. */
static int variant_steps(heat_solver *s, const heat_variant *v, const void *initial, long steps, void *out)
{
    EXPECT_OK(heat_solver_set_field(s, initial, 0));
    EXPECT_OK(s->ops->bench->run_variant(s->state, v, steps));
    EXPECT_OK(heat_solver_get_field(s, out));
    return 0;
}

/* advance() for 7, 2 and 4 steps with solver.kernel = heat_fusedK: K = 3 takes
 * 6 + 1, a remainder's sweep of 2, 3 + 1; K = 4 4 + a sweep of 3, a sweep of 2, 4. */
static int advance_fused(const heat_problem *p, const heat_halo_transport *transport, int k, const void *initial,
                         void *out)
{
    heat_problem q = *p;
    snprintf(q.kernel.name, sizeof q.kernel.name, "heat_fused%d", k);
    heat_solver *s;
    EXPECT_OK(heat_solver_create_block(&q, transport, HEAT_SELECT_HIP, &s));
    EXPECT_OK(heat_solver_set_field(s, initial, 0));
    EXPECT_OK(heat_solver_advance(s, 7));
    EXPECT_OK(heat_solver_advance(s, 2));
    EXPECT_OK(heat_solver_advance(s, 4));
    EXPECT_OK(heat_solver_get_field(s, out));
    const char *description = s->ops->kernel_description(s->state);
    char want[64];
    snprintf(want, sizeof want, "%d steps a sweep", k);
    EXPECT(strstr(description, want), "solver.kernel = heat_fused%d took no fused sweeps: %s", k, description);
    for (int r = 2; r < k; ++r) { /* heat_fusedK sweeps every remainder of 2 steps or more */
        snprintf(want, sizeof want, "a remainder of %d steps: heat_fused%d_", r, r);
        EXPECT(strstr(description, want), "solver.kernel = heat_fused%d: no sweep of %d steps for a remainder: %s", k,
               r, description);
    }
    heat_solver_destroy(&s);
    return 0;
}

static int check(const heat_problem *whole, const char *what)
{
    heat_domain domain;
    heat_problem p;
    const int automatic[3] = {0, 0, 0};
    EXPECT_OK(heat_domain_init(&domain, whole, automatic, TRANSPORT_AUTO, 1));
    heat_domain_localize(&domain, whole, &p);
    heat_halo_transport transport = heat_domain_transport(&domain); /* a periodic axis wraps through it */
    size_t bytes = (size_t)heat_grid_points(&p.grid) * heat_precision_size(p.precision);
    void *initial = test_alloc_field(&p), *ref12 = test_alloc_field(&p), *ref13 = test_alloc_field(&p),
         *out = test_alloc_field(&p);
    test_rough_field(&p, initial);
    heat_solver *s;
    EXPECT_OK(heat_solver_create_block(&p, &transport, HEAT_SELECT_HIP, &s));
    const heat_variant *single;
    if (find_variant(s, "heat_tiled_ntf", 1, &single)) return 1;
    if (variant_steps(s, single, initial, 12, ref12) || variant_steps(s, single, initial, 13, ref13)) return 1;
    EXPECT(memcmp(initial, ref12, bytes) != 0 && memcmp(ref12, ref13, bytes) != 0, "%s: the steps changed nothing",
           what);
    const heat_variant *list;
    int count, fused = 0;
    EXPECT_OK(s->ops->bench->variants(s->state, &list, &count));
    for (int v = 0; v < count; ++v) {
        if (list[v].steps_per_sweep < 2) continue;
        ++fused;
        for (long steps = 12; steps <= 13; ++steps) {
            if (variant_steps(s, &list[v], initial, steps, out)) return 1;
            EXPECT(memcmp(out, steps == 12 ? ref12 : ref13, bytes) == 0,
                   "%s: %s (%d steps a sweep), %ld steps, differs from %ld single steps", what, list[v].kernel,
                   list[v].steps_per_sweep, steps, steps);
        }
    }
    EXPECT(fused >= 3, "%s: %d fused kernels listed; expected some for K = 2, 3, 4", what, fused);
    heat_solver_destroy(&s);
    printf("%s: %d fused kernels, 12 and 13 steps: bitwise equal to single steps\n", what, fused);
    for (int k = 2; k <= 4; ++k) {
        if (advance_fused(&p, &transport, k, initial, out)) return 1;
        EXPECT(memcmp(out, ref13, bytes) == 0, "%s: advance() with heat_fused%d differs from 13 single steps", what, k);
    }
    printf("%s: advance() with 2, 3, 4 steps a sweep, 7 + 2 + 4 steps: bitwise equal to single steps\n", what);
    free(initial), free(ref12), free(ref13), free(out);
    heat_domain_free(&domain);
    return 0;
}

static int check_precision(heat_precision precision)
{
    static const heat_bc_type kinds[] = {HEAT_BC_DIRICHLET, HEAT_BC_NEUMANN, HEAT_BC_PERIODIC};
    static const char *const names[] = {"Dirichlet", "Neumann", "periodic"};
    char what[64];
    for (int b = 0; b < 3; ++b)
        for (int nx = 37; nx <= 128; nx += 128 - 37) {
            heat_problem p = test_problem(nx, nx == 37 ? 29 : 60, 150, 1.3, 1.0, 4.0, precision);
            for (int f = 0; f < FACE_COUNT; ++f) p.bc[f] = (heat_bc){.type = kinds[b], .value = 0.5 * f - 1.0};
            snprintf(what, sizeof what, "%s, %d x %d x 150, all faces %s", heat_precision_name(precision), nx,
                     p.grid.n[1], names[b]);
            if (check(&p, what)) return 1;
        }
    heat_problem p = test_problem(37, 29, 150, 1.3, 1.0, 4.0, precision);
    p.bc[FACE_X_LOW] = p.bc[FACE_X_HIGH] = (heat_bc){.type = HEAT_BC_PERIODIC};
    p.bc[FACE_Y_LOW] = (heat_bc){.type = HEAT_BC_DIRICHLET, .value = 3.0};
    p.bc[FACE_Z_HIGH] = (heat_bc){.type = HEAT_BC_DIRICHLET, .value = -2.0};
    snprintf(what, sizeof what, "%s, periodic x, Dirichlet and Neumann y, z", heat_precision_name(precision));
    if (check(&p, what)) return 1;
    heat_problem wide = test_problem(60, 60, 150, 1.3, 1.0, 4.0, precision);
    memcpy(wide.bc, p.bc, sizeof wide.bc);
    snprintf(what, sizeof what, "%s, 60 x 60 x 150, periodic x, Dirichlet and Neumann y, z", heat_precision_name(precision));
    return check(&wide, what);
}

static int checks(int argc, char **argv)
{
    (void)argc, (void)argv;
    char reason[256];
    if (!(heat_backend_hip && heat_hip_available(reason, sizeof reason)))
        return printf("no GPU (%s): skipped\n", heat_backend_hip ? reason : "built without one"), TEST_SKIP;
    return check_precision(HEAT_DOUBLE) || check_precision(HEAT_FLOAT);
}

int main(int argc, char **argv) { return run_between_par_init_and_finalize(argc, argv, checks); }
