/* Insulated (Neumann) walls on every face: the total heat sum(u) h^3 cannot
 * change. Double precision must keep it to 1e-12 relative. */
#include "test_util.h"

int main(void)
{
    heat_problem p = test_problem(40, 30, 20, 2.0, 1.5, 1.0, HEAT_DOUBLE);
    heat_field_stats before, after;
    long iterations;
    if (test_gaussian_run(&p, HEAT_SELECT_CPU, 0.2, 500, &before, &after, &iterations)) return 1;
    double change = fabs(after.sum - before.sum) / fabs(before.sum);
    printf("total heat before %.15e after %.15e relative change %.3e; max %.4f -> %.4f\n", before.sum, after.sum,
           change, before.max, after.max);
    EXPECT(after.max < 0.9 * before.max, "the peak did not spread (%g -> %g)", before.max, after.max);
    EXPECT(change <= 1e-12, "total heat changed by %.3e relative", change);
    return 0;
}
