#include "space_order.h"

/* c_0..c_R per radius, row R - 1; unused entries zero. */
static const double weights[HEAT_SPACE_RADIUS_MAX][HEAT_SPACE_RADIUS_MAX + 1] = {
    {-2.0, 1.0, 0.0, 0.0, 0.0},
    {-5.0 / 2.0, 4.0 / 3.0, -1.0 / 12.0, 0.0, 0.0},
    {-49.0 / 18.0, 3.0 / 2.0, -3.0 / 20.0, 1.0 / 90.0, 0.0},
    {-205.0 / 72.0, 8.0 / 5.0, -1.0 / 5.0, 8.0 / 315.0, -1.0 / 560.0},
};

int heat_space_order_valid(int order)
{
    return order == 2 || order == 4 || order == 6 || order == 8;
}

const double *heat_space_weights(int radius)
{
    if (radius < 1) radius = 1;
    if (radius > HEAT_SPACE_RADIUS_MAX) radius = HEAT_SPACE_RADIUS_MAX;
    return weights[radius - 1];
}

double heat_space_spectral_radius(int radius, double h)
{
    const double *c = heat_space_weights(radius);
    double symbol = c[0];
    for (int m = 1; m <= radius; ++m) symbol += 2.0 * c[m] * (m % 2 ? -1.0 : 1.0);
    return -symbol / (h * h);
}

double heat_space_operator_radius(const heat_grid *grid, int radius)
{
    double sum = 0.0;
    for (int d = 0; d < 3; ++d) sum += heat_space_spectral_radius(radius, grid->h[d]);
    return sum;
}

double heat_space_dt_max(const heat_grid *grid, double alpha, int radius)
{
    if (radius <= 1) return heat_dt_max(grid, alpha);
    return 2.0 / (alpha * heat_space_operator_radius(grid, radius));
}

heat_space_coeffs heat_space_coeffs_make(const heat_problem *problem)
{
    heat_space_coeffs k = {0};
    const double *c;
    double sum = 0.0;
    k.radius = heat_space_radius(problem);
    c = heat_space_weights(k.radius);
    for (int d = 0; d < 3; ++d) {
        double inv_h2 = 1.0 / (problem->grid.h[d] * problem->grid.h[d]);
        for (int m = 1; m <= k.radius; ++m) k.weight[d][m] = c[m] * inv_h2;
        sum += inv_h2;
    }
    k.diag = c[0] * sum;
    k.alpha_dt = problem->alpha * problem->dt;
    return k;
}
