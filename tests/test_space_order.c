/* The space order's foundation against mathematics: the coefficients are the
 * Taylor-exact ones (moments), the spectral radius is the symbol's value at
 * theta = pi, order 2 keeps the 7-point stencil's bits (dt, coefficients,
 * layout), and wide layouts align the first owned point of every row. */
#include "solver/space_order.h"
#include "test_util.h"

/* sum_m c_m m^(2p) over both sides (c_0 at m = 0): 0 for p = 0, 2 for p = 1
 * (the second derivative of x^2), 0 for 2 <= p <= R (x^(2p) exact), and
 * nonzero at p = R + 1 (the truncation error of order 2R). */
static double moment(int radius, int p)
{
    const double *c = heat_space_weights(radius);
    double sum = p == 0 ? c[0] : 0.0;
    for (int m = 1; m <= radius; ++m) sum += 2.0 * c[m] * pow(m, 2 * p);
    return sum;
}

static int check_moments(void)
{
    for (int r = 1; r <= HEAT_SPACE_RADIUS_MAX; ++r) {
        EXPECT(fabs(moment(r, 0)) < 1e-14, "radius %d: sum of coefficients %g", r, moment(r, 0));
        EXPECT(fabs(moment(r, 1) - 2.0) < 1e-13, "radius %d: second moment %g, want 2", r, moment(r, 1));
        for (int p = 2; p <= r; ++p)
            EXPECT(fabs(moment(r, p)) < 1e-11, "radius %d: moment %d is %g, want 0", r, 2 * p, moment(r, p));
        EXPECT(fabs(moment(r, r + 1)) > 1e-3, "radius %d: moment %d vanishes: order above 2R", r, 2 * r + 2);
    }
    return 0;
}

/* The symbol -(c_0 + 2 sum c_m cos(m theta)) is largest at theta = pi. */
static int check_spectral_radius(void)
{
    const double exact[HEAT_SPACE_RADIUS_MAX] = {4.0, 16.0 / 3.0, 272.0 / 45.0, 2048.0 / 315.0};
    for (int r = 1; r <= HEAT_SPACE_RADIUS_MAX; ++r) {
        const double *c = heat_space_weights(r);
        double h = 0.25, rho = heat_space_spectral_radius(r, h);
        EXPECT(fabs(rho * h * h - exact[r - 1]) < 1e-12, "radius %d: spectral radius %.15g h^-2, want %.15g", r,
               rho * h * h, exact[r - 1]);
        for (int t = 0; t <= 1000; ++t) {
            double theta = M_PI * t / 1000.0, symbol = -c[0];
            for (int m = 1; m <= r; ++m) symbol -= 2.0 * c[m] * cos(m * theta);
            EXPECT(symbol <= rho * h * h * (1 + 1e-14), "radius %d: symbol %g at theta %g above the radius", r, symbol,
                   theta);
        }
    }
    return 0;
}

static int check_order2_bits(void)
{
    heat_problem p = test_problem(30, 20, 10, 1.0, 2.0, 0.5, HEAT_DOUBLE);
    heat_coeffs old = heat_coeffs_make(&p);
    heat_space_coeffs k = heat_space_coeffs_make(&p);
    EXPECT(heat_space_dt_max(&p.grid, 0.7, 1) == heat_dt_max(&p.grid, 0.7), "order 2's dt is not heat_dt_max's");
    EXPECT(k.radius == 1 && k.diag == old.diag && k.alpha_dt == old.alpha_dt, "order 2's coefficients differ");
    for (int d = 0; d < 3; ++d) EXPECT(k.weight[d][1] == old.inv_h2[d], "order 2's weight %d differs", d);
    p.space_order = 8;
    EXPECT(heat_space_radius(&p) == 4, "order 8's radius");
    EXPECT(fabs(heat_space_dt_max(&p.grid, 0.7, 4) * 0.7 * heat_space_operator_radius(&p.grid, 4) - 2.0) < 1e-14,
           "order 8's dt is not 2 / (alpha rho)");
    return 0;
}

static int check_layouts(void)
{
    const int n[3] = {37, 11, 5};
    for (int align = 8; align <= 128; align *= 2) {
        heat_layout l = heat_layout_make(n, sizeof(double), (size_t)align, 4);
        long a = align / 8;
        EXPECT(l.ghost == 1 && l.origin == a - 1 && l.stride_y == (n[0] + 2 + a - 1) / a * a, "order 2 layout changed");
        EXPECT(l.stride_z == l.stride_y * (12 + 2), "order 2 plane changed");
        for (int g = 1; g <= HEAT_SPACE_RADIUS_MAX; ++g) {
            heat_layout w = heat_layout_make_ghost(n, sizeof(double), (size_t)align, 4, g);
            long first = heat_layout_first_owned(&w);
            EXPECT(w.origin >= 0 && w.stride_y >= n[0] + 2 * g && first % a == 0 && w.stride_y % a == 0,
                   "ghost %d, align %d: the first owned point is not aligned", g, align);
            EXPECT(w.origin + w.stride_z * (n[2] + 2 * g) <= w.total, "ghost %d: the allocation is short", g);
        }
    }
    return 0;
}

int main(void)
{
    if (check_moments() || check_spectral_radius() || check_order2_bits() || check_layouts()) return 1;
    printf("space order: coefficients, spectral radii, order 2 bits and layouts hold\n");
    return 0;
}
