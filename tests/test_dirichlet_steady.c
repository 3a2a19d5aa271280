/* Faces x = 0 and x = L held at 1 and 3, the others insulated: the field must
 * reach the linear steady state u = 1 + 2 x / L (exact on this grid). */
#include "test_util.h"

int main(void)
{
    heat_problem p = test_problem(16, 4, 4, 1.0, 0.25, 0.25, HEAT_DOUBLE);
    p.bc[FACE_X_LOW] = (heat_bc){.type = HEAT_BC_DIRICHLET, .value = 1.0};
    p.bc[FACE_X_HIGH] = (heat_bc){.type = HEAT_BC_DIRICHLET, .value = 3.0};
    p.dt = 0.9 * heat_dt_max(&p.grid, p.alpha);
    heat_solver *s;
    EXPECT_OK(heat_solver_create(&p, HEAT_SELECT_CPU, &s));
    void *field = test_alloc_field(&p);
    heat_initial init = {.type = INITIAL_CONSTANT, .value = 0.0};
    heat_initial_fill(&init, &p.grid, p.precision, field);
    EXPECT_OK(heat_solver_set_field(s, field, 0));
    long steps = (long)(2.0 / p.dt); /* 20 decay times of the slowest mode, L^2 / (pi^2 alpha) */
    EXPECT_OK(heat_solver_advance(s, steps));
    EXPECT_OK(heat_solver_get_field(s, field));
    double worst = 0.0;
    for (long at = 0; at < heat_grid_points(&p.grid); ++at) {
        double x = test_coord(&p, 0, (int)(at % 16));
        worst = fmax(worst, fabs(((double *)field)[at] - (1.0 + 2.0 * x)));
    }
    printf("after %ld steps (t = %.3f): max deviation from the linear steady state %.3e\n", steps, s->time, worst);
    EXPECT(worst < 1e-7, "not at the linear steady state: deviation %g", worst);
    free(field);
    heat_solver_destroy(&s);
    return 0;
}
