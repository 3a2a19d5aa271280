#pragma once
/* Small helpers shared by the C tests: problems, fields and checks. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parallel/parallel.h"
#include "solver/error.h"
#include "solver/initial.h"
#include "solver/solver.h"

enum { TEST_SKIP = 77 }; /* CTest's SKIP_RETURN_CODE */

#define EXPECT(cond, ...)                                                                                    \
    do {                                                                                                     \
        if (!(cond)) {                                                                                       \
            fprintf(stderr, "FAILED %s:%d: ", __FILE__, __LINE__);                                           \
            fprintf(stderr, __VA_ARGS__);                                                                    \
            fputc('\n', stderr);                                                                             \
            return 1;                                                                                        \
        }                                                                                                    \
    } while (0)

#define EXPECT_OK(call) EXPECT((call) == HEAT_OK, "%s failed", #call)

static inline heat_problem test_problem(int nx, int ny, int nz, double lx, double ly, double lz, heat_precision p)
{
    heat_problem problem;
    memset(&problem, 0, sizeof problem);
    problem.grid = (heat_grid){{nx, ny, nz}, {lx, ly, lz}, {0, 0, 0}};
    heat_grid_set_spacing(&problem.grid);
    problem.precision = p;
    problem.alpha = 1.0;
    problem.dt = 0.5 * heat_dt_max(&problem.grid, problem.alpha);
    strcpy(problem.kernel.name, "auto");
    problem.quiet = 1;
    return problem;
}

static inline void *test_alloc_field(const heat_problem *p)
{
    return calloc((size_t)heat_grid_points(&p->grid), heat_precision_size(p->precision));
}

static inline double test_get(const heat_problem *p, const void *field, long index)
{
    return p->precision == HEAT_FLOAT ? ((const float *)field)[index] : ((const double *)field)[index];
}

static inline void test_set(const heat_problem *p, void *field, long index, double v)
{
    if (p->precision == HEAT_FLOAT) ((float *)field)[index] = (float)v;
    else ((double *)field)[index] = v;
}

/* Runs `steps` steps of problem p from `initial` on a backend; the final field goes to out. */
static inline int test_run(const heat_problem *p, heat_backend_request backend, const void *initial, long steps,
                           void *out)
{
    heat_solver *s;
    EXPECT_OK(heat_solver_create(p, backend, &s));
    EXPECT_OK(heat_solver_set_field(s, initial, 0));
    EXPECT_OK(heat_solver_advance(s, steps));
    EXPECT_OK(heat_solver_get_field(s, out));
    heat_solver_destroy(&s);
    return 0;
}

/* A field of p holding a Gaussian bump of the given width on a background of 1, its peak off every
 * axis' centre (no symmetry hides a wrong neighbour, and the field is not steady). */
static inline void *test_gaussian_field(const heat_problem *p, double width)
{
    heat_initial init = {.type = INITIAL_GAUSSIAN, .amplitude = 5.0, .background = 1.0, .center = {0.3, 0.6, 0.4},
                         .width = width};
    void *field = test_alloc_field(p);
    heat_initial_fill(&init, &p->grid, p->precision, field);
    return field;
}

/* A run from a Gaussian bump of the given width on a background of 1: the
 * field's statistics before and after `steps`, and the CG iterations they
 * took (0 for explicit schemes). The conservation tests compare the sums. */
static inline int test_gaussian_run(const heat_problem *p, heat_backend_request backend, double width, long steps,
                                    heat_field_stats *before, heat_field_stats *after, long *cg_iterations)
{
    heat_solver *s;
    EXPECT_OK(heat_solver_create(p, backend, &s));
    void *field = test_gaussian_field(p, width);
    EXPECT_OK(heat_solver_set_field(s, field, 0));
    EXPECT_OK(heat_solver_stats(s, before));
    EXPECT_OK(heat_solver_advance(s, steps));
    EXPECT_OK(heat_solver_stats(s, after));
    *cg_iterations = s->cg.iterations;
    free(field);
    heat_solver_destroy(&s);
    return 0;
}

/* Point coordinate along axis d of index i (cell-centred). */
/* A Gaussian with a deterministic rough part on every point (a hash of its index): every
 * point differs from its neighbours, so a wrong neighbour or a wrong ghost changes bits. */
static inline void test_rough_field(const heat_problem *p, void *field)
{
    heat_initial init = {.type = INITIAL_GAUSSIAN, .amplitude = 5.0, .background = 1.0, .center = {0.2, 0.7, 0.3},
                         .width = 0.3};
    heat_initial_fill(&init, &p->grid, p->precision, field);
    for (long at = 0; at < heat_grid_points(&p->grid); ++at) {
        uint32_t x = (uint32_t)at * 2654435761u;
        x ^= x >> 15;
        test_set(p, field, at, test_get(p, field, at) + (double)(x % 1000u) / 1000.0);
    }
}

static inline double test_coord(const heat_problem *p, int d, int i) { return (i + 0.5) * p->grid.h[d]; }

/* A test's checks between par_init and par_finalize: a block's halo exchange
 * (periodic axes, split blocks) posts MPI messages in a build with MPI, which
 * must be started first. */
static inline int run_between_par_init_and_finalize(int argc, char **argv, int (*checks)(int argc, char **argv))
{
    EXPECT_OK(par_init(&argc, &argv));
    int failed = checks(argc, argv);
    par_finalize(HEAT_OK, 1);
    return failed;
}
