/* The seeds' verification: the 7-point Laplacian of u = x^2 + 2 y^2 + 3 z^2
 * is exactly 2 + 4 + 6 = 12 at every point whose neighbours are all owned.
 * Run for every Laplacian variant of the backend named on the command line. */
#include "test_util.h"

static int check_variant(heat_solver *s, const heat_variant *v, void *field)
{
    const heat_problem *p = &s->problem;
    const int *n = p->grid.n;
    for (int k = 0; k < n[2]; ++k)
        for (int j = 0; j < n[1]; ++j)
            for (int i = 0; i < n[0]; ++i) {
                double x = test_coord(p, 0, i), y = test_coord(p, 1, j), z = test_coord(p, 2, k);
                test_set(p, field, ((long)k * n[1] + j) * n[0] + i, x * x + 2 * y * y + 3 * z * z);
            }
    EXPECT_OK(heat_solver_set_field(s, field, 0));
    EXPECT_OK(s->ops->bench->run_variant(s->state, v, 1));
    EXPECT_OK(heat_solver_get_field(s, field));
    double tolerance = p->precision == HEAT_FLOAT ? 2e-2 : 1e-8, worst = 0.0;
    for (int k = 1; k < n[2] - 1; ++k)
        for (int j = 1; j < n[1] - 1; ++j)
            for (int i = 1; i < n[0] - 1; ++i)
                worst = fmax(worst, fabs(test_get(p, field, ((long)k * n[1] + j) * n[0] + i) - 12.0));
    printf("%-20s m=%-2d %s: max |lap(u) - 12| = %.3e\n", v->kernel, v->tile, heat_precision_name(p->precision), worst);
    EXPECT(worst <= tolerance, "%s m=%d: Laplacian of the quadratic off by %g", v->kernel, v->tile, worst);
    return 0;
}

static int run(heat_backend_request backend, heat_precision precision)
{
    /* Sizes that divide no block or tile; spacing 1/16 keeps the values exact-ish. */
    heat_problem p = test_problem(67, 45, 33, 67 / 16.0, 45 / 16.0, 33 / 16.0, precision);
    heat_solver *s;
    EXPECT_OK(heat_solver_create(&p, backend, &s));
    void *field = test_alloc_field(&p);
    const heat_variant *variants;
    int count, failed = 0;
    EXPECT_OK(s->ops->bench->variants(s->state, &variants, &count));
    for (int v = 0; v < count; ++v)
        if (variants[v].laplacian) failed |= check_variant(s, &variants[v], field);
    free(field);
    heat_solver_destroy(&s);
    return failed;
}

int main(int argc, char **argv)
{
    int gpu = argc > 1 && strcmp(argv[1], "hip") == 0;
    if (gpu && !(heat_backend_hip && heat_hip_available(NULL, 0))) return printf("no GPU: skipped\n"), TEST_SKIP;
    heat_backend_request backend = gpu ? HEAT_SELECT_HIP : HEAT_SELECT_CPU;
    return run(backend, HEAT_DOUBLE) | run(backend, HEAT_FLOAT);
}
