/* Insulated (Neumann) walls on every face: the total heat sum(u) h^3 cannot
 * change. Double precision must keep it to 1e-12 relative. */
#include "test_util.h"

int main(void)
{
    heat_problem p = test_problem(40, 30, 20, 2.0, 1.5, 1.0, HEAT_DOUBLE);
    heat_initial init = {.type = INITIAL_GAUSSIAN, .amplitude = 5.0, .background = 1.0, .center = {0.3, 0.6, 0.4},
                         .width = 0.2};
    heat_solver *s;
    EXPECT_OK(heat_solver_create(&p, HEAT_SELECT_CPU, &s));
    void *field = test_alloc_field(&p);
    heat_initial_fill(&init, &p.grid, p.precision, field);
    EXPECT_OK(heat_solver_set_field(s, field, 0));
    heat_field_stats before, after;
    EXPECT_OK(heat_solver_stats(s, &before));
    EXPECT_OK(heat_solver_advance(s, 500));
    EXPECT_OK(heat_solver_stats(s, &after));
    double change = fabs(after.sum - before.sum) / fabs(before.sum);
    printf("total heat before %.15e after %.15e relative change %.3e; max %.4f -> %.4f\n", before.sum, after.sum,
           change, before.max, after.max);
    EXPECT(after.max < 0.9 * before.max, "the peak did not spread (%g -> %g)", before.max, after.max);
    EXPECT(change <= 1e-12, "total heat changed by %.3e relative", change);
    free(field);
    heat_solver_destroy(&s);
    return 0;
}
