/* Every GPU heat kernel variant against the CPU backend: 100 heat steps on a
 * 67 x 45 x 33 grid (no block or tile divides it) with Dirichlet and Neumann
 * faces, bit for bit in both precisions where this build's CPU step fuses
 * its multiply-adds as the GPU does (DESIGN.md, "Operation order"); a build
 * without FMA instructions to rounding: max |gpu - cpu| / max |cpu| <= 1e-13
 * in double, <= 1e-5 in float. */
#include "test_util.h"

static heat_problem mixed_problem(heat_precision precision)
{
    heat_problem p = test_problem(67, 45, 33, 1.34, 0.9, 0.66, precision);
    p.bc[FACE_X_LOW] = (heat_bc){.type = HEAT_BC_DIRICHLET, .value = 2.0};
    p.bc[FACE_Y_HIGH] = (heat_bc){.type = HEAT_BC_DIRICHLET, .value = -1.0};
    p.bc[FACE_Z_LOW] = (heat_bc){.type = HEAT_BC_DIRICHLET, .value = 0.5};
    return p;
}

static int compare(heat_precision precision)
{
    heat_problem p = mixed_problem(precision);
    heat_initial init = {.type = INITIAL_GAUSSIAN, .amplitude = 3.0, .background = 0.25, .center = {0.3, 0.6, 0.5},
                         .width = 0.15};
    void *initial = test_alloc_field(&p), *cpu = test_alloc_field(&p), *gpu = test_alloc_field(&p);
    heat_initial_fill(&init, &p.grid, precision, initial);
    if (test_run(&p, HEAT_SELECT_CPU, initial, 100, cpu)) return 1;
    heat_solver *s;
    EXPECT_OK(heat_solver_create(&p, HEAT_SELECT_HIP, &s));
    const heat_variant *variants;
    int count, failed = 0;
#ifdef __FMA__
    const double tolerance = 0.0; /* the same roundings */
#else
    const double tolerance = precision == HEAT_FLOAT ? 1e-5 : 1e-13;
#endif
    EXPECT_OK(s->ops->bench->variants(s->state, &variants, &count));
    for (int v = 0; v < count; ++v) {
        if (variants[v].laplacian) continue;
        EXPECT_OK(heat_solver_set_field(s, initial, 0));
        EXPECT_OK(s->ops->bench->run_variant(s->state, &variants[v], 100));
        EXPECT_OK(heat_solver_get_field(s, gpu));
        double worst = 0.0, scale = 0.0;
        for (long at = 0; at < heat_grid_points(&p.grid); ++at) {
            worst = fmax(worst, fabs(test_get(&p, gpu, at) - test_get(&p, cpu, at)));
            scale = fmax(scale, fabs(test_get(&p, cpu, at)));
        }
        printf("%-16s m=%-2d %-6s max relative difference to the CPU %.3e\n", variants[v].kernel, variants[v].tile,
               heat_precision_name(precision), worst / scale);
        if (!(worst / scale <= tolerance)) failed = 1;
    }
    heat_solver_destroy(&s);
    free(initial), free(cpu), free(gpu);
    EXPECT(!failed, "a GPU variant differs from the CPU by more than %g", tolerance);
    return 0;
}

int main(void)
{
    if (!(heat_backend_hip && heat_hip_available(NULL, 0))) return printf("no GPU: skipped\n"), TEST_SKIP;
    return compare(HEAT_DOUBLE) | compare(HEAT_FLOAT);
}
