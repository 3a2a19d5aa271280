/* A product of sines with Dirichlet walls is an eigenmode: it decays as
 * exp(-alpha |k|^2 t). Refining h by 2 with dt proportional to h^2 must cut
 * the error by about 4: the observed order must be 2 +- 0.2. */
#include "test_util.h"

static double run_error(int n, long steps, heat_precision precision, const char *backend_name)
{
    const double final_time = 0.02;
    heat_problem p = test_problem(n, n, n, 1.0, 1.0, 1.0, precision);
    for (int f = 0; f < FACE_COUNT; ++f) p.bc[f] = (heat_bc){.type = HEAT_BC_DIRICHLET, .value = 0.0};
    p.dt = final_time / (double)steps;
    heat_initial init = {.type = INITIAL_SINE, .amplitude = 1.0, .modes = {1, 1, 1}};
    heat_solver *s;
    heat_backend_request backend = strcmp(backend_name, "hip") == 0 ? HEAT_SELECT_HIP : HEAT_SELECT_CPU;
    if (heat_solver_create(&p, backend, &s) != HEAT_OK) return -1.0;
    void *field = test_alloc_field(&p);
    heat_initial_fill(&init, &p.grid, precision, field);
    heat_solver_set_field(s, field, 0);
    heat_solver_advance(s, steps);
    heat_solver_get_field(s, field);
    double decay = exp(-heat_sine_decay_rate(&init, &p.grid, p.alpha) * s->time), worst = 0.0;
    for (long at = 0; at < heat_grid_points(&p.grid); ++at) {
        int i = (int)(at % n), j = (int)(at / n % n), k = (int)(at / n / n);
        double exact = heat_initial_value(&init, &p.grid, test_coord(&p, 0, i), test_coord(&p, 1, j),
                                          test_coord(&p, 2, k)) * decay;
        worst = fmax(worst, fabs(test_get(&p, field, at) - exact));
    }
    free(field);
    heat_solver_destroy(&s);
    return worst;
}

static int check_order(heat_precision precision, int levels, const char *backend)
{
    double previous = 0.0;
    for (int level = 0; level < levels; ++level) {
        int n = 16 << level;
        double error = run_error(n, 50L << (2 * level), precision, backend);
        EXPECT(error >= 0.0, "solver failed at n = %d", n);
        printf("%s n = %3d: max error %.4e", heat_precision_name(precision), n, error);
        if (level > 0) {
            double order = log2(previous / error);
            printf("  observed order %.3f", order);
            EXPECT(fabs(order - 2.0) <= 0.2, "%s: observed order %.3f is not 2 +- 0.2", heat_precision_name(precision), order);
        }
        printf("\n");
        previous = error;
    }
    return 0;
}

int main(int argc, char **argv)
{
    const char *backend = argc > 1 ? argv[1] : "cpu";
    if (strcmp(backend, "hip") == 0 && !(heat_backend_hip && heat_hip_available(NULL, 0)))
        return printf("no GPU: skipped\n"), TEST_SKIP;
    /* float: rounding (1e-7 per step) would swamp the finest level's error. */
    return check_order(HEAT_DOUBLE, 3, backend) | check_order(HEAT_FLOAT, 2, backend);
}
