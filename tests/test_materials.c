/*
 * Materials runs (solver/materials.h) on the CPU backend, against
 * mathematics: steady states that the flux form must hit exactly (two
 * materials in series, a convective face), the heat that sources and flux
 * faces bring, second order on a smooth conductivity field, the general
 * step against the constant-coefficient one, and the clock of the
 * sources across a restart. Usage: test_materials <case>.
 */
#include <omp.h>

#include "test_materials.h"

/* Steps until no point moves by more than `tolerance` over a chunk of steps. */
static int run_to_steady(heat_solver *s, void *field, double tolerance, long most_steps)
{
    const heat_problem *p = &s->problem;
    const long points = heat_grid_points(&p->grid), chunk = 2000;
    void *before = test_alloc_field(p);
    for (long taken = 0; taken < most_steps; taken += chunk) {
        EXPECT_OK(heat_solver_get_field(s, before));
        EXPECT_OK(heat_solver_advance(s, chunk));
        EXPECT_OK(heat_solver_get_field(s, field));
        double moved = 0.0;
        for (long at = 0; at < points; ++at) moved = fmax(moved, fabs(test_get(p, field, at) - test_get(p, before, at)));
        if (moved <= tolerance) {
            free(before);
            return 0;
        }
    }
    free(before);
    EXPECT(0, "no steady state within %ld steps", most_steps);
}

/* A solver of p from the constant field `value`, explicit Euler at 0.9 of the stable step, on one
 * thread: the steady states take many steps of a few points each, which a team only slows. */
static int start(heat_problem *p, double value, heat_solver **s, void **field)
{
    omp_set_num_threads(1);
    p->dt = 0.9 * heat_materials_dt_max(&p->grid, p->bc, p->materials);
    EXPECT_OK(heat_solver_create(p, HEAT_SELECT_CPU, s));
    *field = test_alloc_field(p);
    heat_initial init = {.type = INITIAL_CONSTANT, .value = value};
    heat_initial_fill(&init, &p->grid, p->precision, *field);
    EXPECT_OK(heat_solver_set_field(*s, *field, 0));
    return 0;
}

/* ---- two materials in series between Dirichlet faces ---- */

static int left_right(const heat_problem *p, int i, int j, int k)
{
    (void)j, (void)k;
    return i >= p->grid.n[0] / 2; /* the interface at x = L/2, a face of the grid */
}

static int series(void)
{
    heat_problem p = test_problem(20, 2, 2, 1.0, 1.0, 1.0, HEAT_DOUBLE);
    const double k1 = 1.0, k2 = 4.0, t0 = 1.0, t1 = 3.0;
    heat_materials m = {.material_count = 2, .material = {test_material("a", k1, 1.0), test_material("b", k2, 2.0)},
                        .zone_count = 2, .zone = {test_zone(0, 0.0), test_zone(1, 0.0)}};
    p.materials = &m;
    p.zones = test_paint_zones(&p, left_right);
    p.bc[FACE_X_LOW] = (heat_bc){.type = HEAT_BC_DIRICHLET, .value = t0};
    p.bc[FACE_X_HIGH] = (heat_bc){.type = HEAT_BC_DIRICHLET, .value = t1};
    heat_solver *s;
    void *field;
    if (start(&p, 0.0, &s, &field) || run_to_steady(s, field, 1e-15, 400000)) return 1;
    /* Series resistances (L/2)/k1 and (L/2)/k2 carry the flux q; the interface sits q (L/2)/k1 above t0. */
    const double q = (t1 - t0) / (0.5 / k1 + 0.5 / k2), exact = t0 + q * 0.5 / k1;
    const int a = p.grid.n[0] / 2 - 1;
    double ta = test_get(&p, field, a), tb = test_get(&p, field, a + 1);
    double interface = (k1 * ta + k2 * tb) / (k1 + k2); /* the flux k1 (Ti - ta)/(h/2) = k2 (tb - Ti)/(h/2) */
    double error = fabs(interface - exact) / exact;
    printf("series: interface temperature %.15g, series-resistance value %.15g, relative error %.2e (t = %g)\n",
           interface, exact, error, s->time);
    EXPECT(error <= 1e-9, "interface temperature %.15g, expected %.15g", interface, exact);
    for (int i = 0; i < p.grid.n[0]; ++i) {
        double x = test_coord(&p, 0, i), expected = x < 0.5 ? t0 + q * x / k1 : exact + q * (x - 0.5) / k2;
        EXPECT(fabs(test_get(&p, field, i) - expected) <= 1e-9 * expected, "point %d: %.15g, expected %.15g", i,
               test_get(&p, field, i), expected);
    }
    free(field), free((void *)p.zones);
    heat_solver_destroy(&s);
    return 0;
}

/* ---- a slab between a Dirichlet face and a convective one ---- */

static int everywhere_zero(const heat_problem *p, int i, int j, int k)
{
    (void)p, (void)i, (void)j, (void)k;
    return 0;
}

static int convective(void)
{
    heat_problem p = test_problem(16, 3, 2, 2.0, 1.0, 1.0, HEAT_DOUBLE);
    const double k = 2.0, t0 = 1.0, hc = 5.0, ambient = 0.5, length = 2.0;
    heat_materials m = {.material_count = 1, .material = {test_material("a", k, 3.0)}, .zone_count = 1,
                        .zone = {test_zone(0, 0.0)}};
    p.materials = &m;
    p.zones = test_paint_zones(&p, everywhere_zero);
    p.bc[FACE_X_LOW] = (heat_bc){.type = HEAT_BC_DIRICHLET, .value = t0};
    p.bc[FACE_X_HIGH] = (heat_bc){.type = HEAT_BC_CONVECTIVE, .h = hc, .ambient = ambient};
    heat_solver *s;
    void *field;
    if (start(&p, 3.0, &s, &field) || run_to_steady(s, field, 1e-15, 400000)) return 1;
    /* T = t0 + g x with -k g = hc (T(L) - ambient) */
    const double g = hc * (ambient - t0) / (k + hc * length);
    double worst = 0.0;
    for (long at = 0; at < heat_grid_points(&p.grid); ++at) {
        double expected = t0 + g * test_coord(&p, 0, (int)(at % p.grid.n[0]));
        worst = fmax(worst, fabs(test_get(&p, field, at) - expected) / fabs(expected));
    }
    printf("convective: largest relative deviation from the linear steady state %.2e (t = %g)\n", worst, s->time);
    EXPECT(worst <= 1e-9, "not the linear steady profile: relative deviation %.3g", worst);
    free(field), free((void *)p.zones);
    heat_solver_destroy(&s);
    return 0;
}

/* ---- the heat that sources and flux faces bring ---- */

/* Zone 1 (a powered block), zone 2 (a block of the background whose source switches), else zone 0. */
static int powered_blocks(const heat_problem *p, int i, int j, int k)
{
    (void)p;
    if (i >= 2 && i < 6 && j >= 3 && j < 7 && k >= 1 && k < 5) return 1;
    if (i >= 8 && i < 11 && j >= 1 && j < 4 && k >= 3 && k < 7) return 2;
    return 0;
}

static int count_zone(const heat_problem *p, int zone)
{
    int count = 0;
    for (int k = 0; k < p->grid.n[2]; ++k)
        for (int j = 0; j < p->grid.n[1]; ++j)
            for (int i = 0; i < p->grid.n[0]; ++i) count += powered_blocks(p, i, j, k) == zone;
    return count;
}

/* The box of the source tests: materials a and b painted by powered_blocks, zone 1 powered
 * (POWERED_Q), a third zone as the caller says, flux POWERED_F_IN into the x-low face and
 * POWERED_F_OUT into the z-high face; m holds the materials for as long as the problem lives. */
static const double POWERED_Q = 5.0, POWERED_F_IN = 3.0, POWERED_F_OUT = -1.0;

static heat_problem powered_flux_box(heat_materials *m, heat_zone third_zone)
{
    heat_problem p = test_problem(12, 10, 8, 1.2, 1.0, 0.8, HEAT_DOUBLE);
    *m = (heat_materials){.material_count = 2, .material = {test_material("a", 1.0, 2.0), test_material("b", 20.0, 5.0)},
                          .zone_count = 3, .zone = {test_zone(0, 0.0), test_zone(1, POWERED_Q), third_zone}};
    p.materials = m;
    p.zones = test_paint_zones(&p, powered_blocks);
    p.bc[FACE_X_LOW] = (heat_bc){.type = HEAT_BC_FLUX, .value = POWERED_F_IN};
    p.bc[FACE_Z_HIGH] = (heat_bc){.type = HEAT_BC_FLUX, .value = POWERED_F_OUT};
    return p;
}

/* A solver on the CPU over `p` started from the gaussian field, and the heat it starts with. */
typedef struct {
    heat_solver *solver;
    void *field;
    double heat0, cell_volume;
} powered_run;

static int start_powered_run(const heat_problem *p, powered_run *run)
{
    EXPECT_OK(heat_solver_create(p, HEAT_SELECT_CPU, &run->solver));
    run->field = test_gaussian_field(p, 0.3);
    run->heat0 = test_heat(p, run->field);
    run->cell_volume = p->grid.h[0] * p->grid.h[1] * p->grid.h[2];
    EXPECT_OK(heat_solver_set_field(run->solver, run->field, 0));
    return 0;
}

/* The energy that came in over time t through zone 1's constant source and the two flux faces. */
static double powered_energy_in(const heat_problem *p, double cell_volume, double t)
{
    return POWERED_Q * count_zone(p, 1) * cell_volume * t + POWERED_F_IN * p->grid.length[1] * p->grid.length[2] * t +
           POWERED_F_OUT * p->grid.length[0] * p->grid.length[1] * t;
}

static int sources_and_fluxes(void)
{
    const double q2 = 2.0, on = 0.01, off = 0.03;
    heat_materials m;
    heat_problem p = powered_flux_box(&m, (heat_zone){0, q2, on, off});
    p.dt = 0.9 * heat_materials_dt_max(&p.grid, p.bc, p.materials);
    powered_run run;
    if (start_powered_run(&p, &run)) return 1;
    const long steps = 400;
    long switched_on = 0; /* steps whose start time lies in [on, off) */
    for (long n = 0; n < steps; ++n) switched_on += on <= n * p.dt && n * p.dt < off;
    EXPECT(switched_on > 0 && switched_on < steps, "the switching source should act for some of the steps");
    EXPECT_OK(heat_solver_advance(run.solver, steps));
    EXPECT_OK(heat_solver_get_field(run.solver, run.field));
    const double t = steps * p.dt;
    const double switched_energy = q2 * count_zone(&p, 2) * run.cell_volume * switched_on * p.dt;
    double energy = powered_energy_in(&p, run.cell_volume, t) + switched_energy;
    double heat = test_heat(&p, run.field), error = fabs(heat - run.heat0 - energy) / fabs(heat);
    printf("sources and flux faces: heat %.15g -> %.15g, energy in %.15g, mismatch %.2e of the heat (t = %g)\n",
           run.heat0, heat, energy, error, t);
    EXPECT(error <= 1e-13, "the heat grew by %.15g, but %.15g came in", heat - run.heat0, energy);
    free(run.field), free((void *)p.zones);
    heat_solver_destroy(&run.solver);
    return 0;
}

/* ---- steady slabs of three layers between any two of the new faces ---- */

/* Three equal layers along x, a material each (zone = material): the interfaces are faces of the grid. */
static int thirds(const heat_problem *p, int i, int j, int k)
{
    (void)j, (void)k;
    const int third = p->grid.n[0] / 3;
    return i < 0 ? 0 : i >= p->grid.n[0] ? 2 : i / third;
}

/* A face's environment for the slab's heat flow: a temperature behind a resistance per area (Dirichlet: the
 * face itself, 0; convective: the ambient, 1 / h), or a fixed flux into the slab (flux faces). */
static void slab_face(const heat_bc *bc, double *temperature, double *resistance)
{
    *temperature = bc->type == HEAT_BC_CONVECTIVE ? bc->ambient : bc->value;
    *resistance = bc->type == HEAT_BC_CONVECTIVE ? 1.0 / bc->h : 0.0;
}

/* The steady temperature of the layered slab at x: the flux q through the layers' resistances in series
 * (thickness / k each) and the faces', T falling by q times the resistance from the x-low face to x. */
static double slab_steady(const heat_problem *p, double x)
{
    const heat_bc *low = &p->bc[FACE_X_LOW], *high = &p->bc[FACE_X_HIGH];
    const double layer = p->grid.length[0] / 3;
    double layers = 0.0, below_x = 0.0; /* the resistance of all layers, and of the slab from x_low to x */
    for (int l = 0; l < 3; ++l) {
        const double k = p->materials->material[l].conductivity, start = l * layer;
        layers += layer / k;
        below_x += fmin(fmax(x - start, 0.0), layer) / k;
    }
    double t_low, r_low, t_high, r_high, q, face_low; /* q: the flux along +x */
    slab_face(low, &t_low, &r_low);
    slab_face(high, &t_high, &r_high);
    if (low->type == HEAT_BC_FLUX) q = low->value, face_low = t_high + q * (r_high + layers);
    else if (high->type == HEAT_BC_FLUX) q = -high->value, face_low = t_low - q * r_low;
    else q = (t_low - t_high) / (r_low + layers + r_high), face_low = t_low - q * r_low;
    return face_low - q * below_x;
}

/* Copper, glass and air in series (conductivities 15000 apart), steady under backward Euler at 1e8 stable
 * explicit steps a step (each damps the slowest mode, hours long, about tenfold): every point on the
 * piecewise-linear profile to 1e-9 of the largest temperature, whatever the faces: Dirichlet on both,
 * convective on both (one at a large h), and a flux face balanced by a convective one, whose face then sits
 * at ambient + q / h. */
static int steady_slab(heat_bc low, heat_bc high, const char *name)
{
    heat_problem p = test_problem(30, 3, 3, 0.03, 0.003, 0.003, HEAT_DOUBLE);
    heat_materials m = {.material_count = 3,
                        .material = {test_material("copper", 400.0, 3.45e6), test_material("glass", 1.0, 2.1e6),
                                     test_material("air", 0.026, 1206.0)},
                        .zone_count = 3, .zone = {test_zone(0, 0.0), test_zone(1, 0.0), test_zone(2, 0.0)}};
    p.materials = &m;
    p.zones = test_paint_zones(&p, thirds);
    p.bc[FACE_X_LOW] = low, p.bc[FACE_X_HIGH] = high;
    p.implicit = (heat_implicit){HEAT_BACKWARD_EULER, 1e-13, 5000, HEAT_PRECOND_JACOBI, 8, 2};
    p.dt = 1e8 * heat_materials_dt_max(&p.grid, p.bc, p.materials);
    heat_solver *s;
    EXPECT_OK(heat_solver_create(&p, HEAT_SELECT_CPU, &s));
    void *field = test_alloc_field(&p);
    heat_initial init = {.type = INITIAL_CONSTANT, .value = 20.0};
    heat_initial_fill(&init, &p.grid, p.precision, field);
    EXPECT_OK(heat_solver_set_field(s, field, 0));
    EXPECT_OK(heat_solver_advance(s, 30));
    EXPECT_OK(heat_solver_get_field(s, field));
    double worst = 0.0, largest = 0.0;
    for (long at = 0; at < heat_grid_points(&p.grid); ++at) {
        const double expected = slab_steady(&p, test_coord(&p, 0, (int)(at % p.grid.n[0])));
        worst = fmax(worst, fabs(test_get(&p, field, at) - expected));
        largest = fmax(largest, fabs(expected));
    }
    printf("steady slab of copper, glass and air, %s: largest deviation from the series-resistance profile %.2e of "
           "%.6g\n", name, worst, largest);
    EXPECT(worst <= 1e-9 * largest, "%s: the steady profile is off by %.3g (largest temperature %.6g)", name, worst,
           largest);
    free(field), free((void *)p.zones);
    heat_solver_destroy(&s);
    return 0;
}

static int steady_slabs(void)
{
    const heat_bc hot = {.type = HEAT_BC_DIRICHLET, .value = 100.0}, cold = {.type = HEAT_BC_DIRICHLET, .value = 0.0};
    const heat_bc warm_air = {.type = HEAT_BC_CONVECTIVE, .h = 50.0, .ambient = 100.0};
    const heat_bc cold_water = {.type = HEAT_BC_CONVECTIVE, .h = 5.0e4, .ambient = 0.0};
    const heat_bc heater = {.type = HEAT_BC_FLUX, .value = 300.0};
    const heat_bc fan = {.type = HEAT_BC_CONVECTIVE, .h = 25.0, .ambient = 20.0};
    return steady_slab(hot, cold, "Dirichlet faces") || steady_slab(warm_air, cold_water, "convective faces") ||
           steady_slab(heater, fan, "a flux face balanced by a convective one") ||
           steady_slab(fan, heater, "the same, mirrored (the flux into x_high)");
}

/* ---- the stable explicit step of a strongly heterogeneous box ---- */

/* Copper with a pocket of air at its centre and a layer of air along y_low. */
static int copper_with_air(const heat_problem *p, int i, int j, int k)
{
    const int *n = p->grid.n;
    const double di = i - 0.5 * (n[0] - 1), dj = j - 0.5 * (n[1] - 1), dk = k - 0.5 * (n[2] - 1);
    return j < 3 || di * di + dj * dj + dk * dk <= 16.0 ? 1 : 0;
}

/* The largest |T| after `steps` explicit steps at `cfl` times the materials' dt_max from a rough field. */
static int explicit_excursion(heat_problem *p, double cfl, long steps, double *largest)
{
    p->dt = cfl * heat_materials_dt_max(&p->grid, p->bc, p->materials);
    void *field = test_alloc_field(p);
    test_rough_field(p, field);
    if (test_run(p, HEAT_SELECT_CPU, field, steps, field)) return 1;
    *largest = 0.0;
    for (long at = 0; at < heat_grid_points(&p->grid); ++at) *largest = fmax(*largest, fabs(test_get(p, field, at)));
    free(field);
    return 0;
}

/* dt_max bounds M^-1 A by Gershgorin; the copper far from every face has nearly that largest eigenvalue, so
 * the bound is sharp: just below it the field stays bounded, 2% above it the checkerboard grows. Convective
 * faces at a large h (nearly Dirichlet) on copper and air, a Dirichlet face, air beside copper (k 15000 apart).
 * A listed material that no zone uses changes neither. */
static int stable_step(void)
{
    heat_problem p = test_problem(24, 20, 16, 0.024, 0.020, 0.016, HEAT_DOUBLE);
    heat_materials m = {.material_count = 2,
                        .material = {test_material("copper", 400.0, 3.45e6), test_material("air", 0.026, 1206.0)},
                        .zone_count = 2, .zone = {test_zone(0, 0.0), test_zone(1, 0.0)}};
    p.materials = &m;
    p.zones = test_paint_zones(&p, copper_with_air);
    p.bc[FACE_Z_LOW] = (heat_bc){.type = HEAT_BC_CONVECTIVE, .h = 1.0e7, .ambient = 3.0};
    p.bc[FACE_Z_HIGH] = (heat_bc){.type = HEAT_BC_CONVECTIVE, .h = 1.0e7, .ambient = 1.0};
    p.bc[FACE_X_LOW] = (heat_bc){.type = HEAT_BC_DIRICHLET, .value = 2.0};
    const long steps = 1500;
    double below, above;
    if (explicit_excursion(&p, 0.999, steps, &below) || explicit_excursion(&p, 1.02, steps, &above)) return 1;
    printf("stable step, copper and air: largest |T| after %ld steps %.3g at 0.999 dt_max, %.3g at 1.02 dt_max "
           "(the rough field starts below 7)\n", steps, below, above);
    EXPECT(below <= 7.0, "at 0.999 dt_max the field grew to %.3g: dt_max is above the stable limit", below);
    EXPECT(above >= 1e6, "at 1.02 dt_max the field stayed below %.3g: dt_max is needlessly small", above);
    /* A material that no zone uses (a library of materials, one not painted) is nowhere in the box: neither
     * the stable step nor the implicit schemes' bound may depend on it. */
    const double dt_max = heat_materials_dt_max(&p.grid, p.bc, &m);
    p.implicit = (heat_implicit){HEAT_BACKWARD_EULER, 1e-10, 100, HEAT_PRECOND_CHEBYSHEV, 8, 2};
    const double bound = heat_materials_operator_bound(&p);
    m.material[2] = test_material("diamond", 2000.0, 1.75e6);
    m.material_count = 3;
    EXPECT(heat_materials_dt_max(&p.grid, p.bc, &m) == dt_max, "an unused material changed dt_max from %.17g to "
           "%.17g", dt_max, heat_materials_dt_max(&p.grid, p.bc, &m));
    EXPECT(heat_materials_operator_bound(&p) == bound, "an unused material changed the implicit schemes' eigenvalue "
           "bound from %.17g to %.17g", bound, heat_materials_operator_bound(&p));
    free((void *)p.zones);
    return 0;
}

/* ---- second order on a smooth conductivity field ---- */

/* Each column x_i its own material k(x_i) and zone with source q(x_i):
 * -(k T')' = q with T = sin(3x), k = 1 + x^2/2, Dirichlet ends. */
static double smooth_k(double x) { return 1.0 + 0.5 * x * x; }
static double smooth_t(double x) { return sin(3.0 * x); }
static double smooth_q(double x) { return -(x * 3.0 * cos(3.0 * x) - smooth_k(x) * 9.0 * sin(3.0 * x)); }

static int column(const heat_problem *p, int i, int j, int k)
{
    (void)j, (void)k;
    return i < 0 ? 0 : i >= p->grid.n[0] ? p->grid.n[0] - 1 : i;
}

static int smooth_error(int n, double *error)
{
    heat_problem p = test_problem(n, 1, 1, 1.0, 1.0, 1.0, HEAT_DOUBLE);
    static heat_materials m;
    memset(&m, 0, sizeof m);
    m.material_count = m.zone_count = n;
    for (int i = 0; i < n; ++i) {
        double x = test_coord(&p, 0, i);
        m.material[i] = test_material("column", smooth_k(x), 1.0);
        m.zone[i] = test_zone(i, smooth_q(x));
    }
    p.materials = &m;
    p.zones = test_paint_zones(&p, column);
    p.bc[FACE_X_LOW] = (heat_bc){.type = HEAT_BC_DIRICHLET, .value = smooth_t(0.0)};
    p.bc[FACE_X_HIGH] = (heat_bc){.type = HEAT_BC_DIRICHLET, .value = smooth_t(1.0)};
    heat_solver *s;
    void *field;
    if (start(&p, 0.0, &s, &field) || run_to_steady(s, field, 1e-14, 2000000)) return 1;
    *error = 0.0;
    for (int i = 0; i < n; ++i) *error = fmax(*error, fabs(test_get(&p, field, i) - smooth_t(test_coord(&p, 0, i))));
    free(field), free((void *)p.zones);
    heat_solver_destroy(&s);
    return 0;
}

/* The errors of `what` (error_at(n, &error)) on 16, 32 and 64 points fall as h^2: observed order 2 +- 0.2. */
static int second_order(const char *what, int (*error_at)(int n, double *error))
{
    const int sizes[] = {16, 32, 64};
    double errors[3];
    for (int g = 0; g < 3; ++g) {
        if (error_at(sizes[g], &errors[g])) return 1;
        printf("%s: n = %d, max error %.3e", what, sizes[g], errors[g]);
        if (g > 0) printf(", observed order %.3f", log(errors[g - 1] / errors[g]) / log(2.0));
        printf("\n");
    }
    for (int g = 1; g < 3; ++g) {
        double order = log(errors[g - 1] / errors[g]) / log(2.0);
        EXPECT(fabs(order - 2.0) <= 0.2, "%s: observed order %.3f between n = %d and %d, expected 2 +- 0.2", what,
               order, sizes[g - 1], sizes[g]);
    }
    return 0;
}

static int smooth_order(void) { return second_order("smooth conductivity", smooth_error); }

/* ---- second order with convective faces and a source ---- */

/* A slab with a uniform source q between two convective faces (h, ambient): T = ambient + q L / (2 h) +
 * q x (L - x) / (2 k). The ghost rule puts the face half a cell from the point, exact for linear profiles
 * only: the error falls as h^2 here. */
static int convective_source_error(int n, double *error)
{
    const double q = 1.0e6, k = 1.0, hc = 50.0, ambient = 20.0, length = 0.02;
    heat_problem p = test_problem(n, 3, 3, length, 0.003, 0.003, HEAT_DOUBLE);
    heat_materials m = {.material_count = 1, .material = {test_material("glass", k, 2.1e6)}, .zone_count = 1,
                        .zone = {test_zone(0, q)}};
    p.materials = &m;
    p.zones = test_paint_zones(&p, everywhere_zero);
    p.bc[FACE_X_LOW] = p.bc[FACE_X_HIGH] = (heat_bc){.type = HEAT_BC_CONVECTIVE, .h = hc, .ambient = ambient};
    p.implicit = (heat_implicit){HEAT_BACKWARD_EULER, 1e-13, 50000, HEAT_PRECOND_JACOBI, 8, 2};
    p.dt = 1e9 * heat_materials_dt_max(&p.grid, p.bc, p.materials);
    void *field = test_alloc_field(&p);
    heat_initial init = {.type = INITIAL_CONSTANT, .value = ambient};
    heat_initial_fill(&init, &p.grid, p.precision, field);
    if (test_run(&p, HEAT_SELECT_CPU, field, 30, field)) return 1;
    *error = 0.0;
    for (long at = 0; at < heat_grid_points(&p.grid); ++at) {
        const double x = test_coord(&p, 0, (int)(at % n));
        const double exact = ambient + q * length / (2 * hc) + q * x * (length - x) / (2 * k);
        *error = fmax(*error, fabs(test_get(&p, field, at) - exact));
    }
    free(field), free((void *)p.zones);
    return 0;
}

static int convective_order(void) { return second_order("convective faces and a source", convective_source_error); }

/* ---- one material: the general step against the constant-coefficient one ---- */

static int one_material_precision(heat_precision precision, double tolerance)
{
    heat_problem p = test_problem(37, 20, 12, 1.0, 0.7, 0.5, precision);
    p.alpha = 0.8;
    p.bc[FACE_X_LOW] = (heat_bc){.type = HEAT_BC_DIRICHLET, .value = 1.0};
    p.bc[FACE_Y_HIGH] = (heat_bc){.type = HEAT_BC_DIRICHLET, .value = 3.0};
    p.dt = 0.9 * heat_dt_max(&p.grid, p.alpha);
    void *initial = test_gaussian_field(&p, 0.3), *constant = test_alloc_field(&p), *general = test_alloc_field(&p);
    const long steps = 25;
    if (test_run(&p, HEAT_SELECT_CPU, initial, steps, constant)) return 1;
    heat_materials m = {.material_count = 1, .material = {test_material("alpha", p.alpha, 1.0)}, .zone_count = 1,
                        .zone = {test_zone(0, 0.0)}};
    p.materials = &m;
    p.zones = test_paint_zones(&p, everywhere_zero);
    EXPECT(heat_materials_dt_max(&p.grid, p.bc, &m) == heat_dt_max(&p.grid, p.alpha),
           "one material's stable step %.17g differs from alpha's %.17g", heat_materials_dt_max(&p.grid, p.bc, &m),
           heat_dt_max(&p.grid, p.alpha));
    if (test_run(&p, HEAT_SELECT_CPU, initial, steps, general)) return 1;
    double worst = 0.0, moved = 0.0;
    for (long at = 0; at < heat_grid_points(&p.grid); ++at) {
        double a = test_get(&p, constant, at), b = test_get(&p, general, at);
        worst = fmax(worst, fabs(a - b) / fabs(a));
        moved = fmax(moved, fabs(a - test_get(&p, initial, at)));
    }
    printf("one material, %s: general step against alpha's after %ld steps: largest relative difference %.2e\n",
           heat_precision_name(precision), steps, worst);
    EXPECT(moved > 0.1, "the steps changed nothing");
    EXPECT(worst <= tolerance, "the general step differs from alpha's by %.3g (relative) in %s", worst,
           heat_precision_name(precision));
    free(initial), free(constant), free(general), free((void *)p.zones);
    return 0;
}

static int one_material(void)
{
    return one_material_precision(HEAT_DOUBLE, 1e-13) || one_material_precision(HEAT_FLOAT, 2e-5);
}

/* ---- the sources' clock across a restart ---- */

static int restart_clock(void)
{
    heat_problem p = test_problem(12, 10, 8, 1.2, 1.0, 0.8, HEAT_DOUBLE);
    heat_materials m = {.material_count = 2, .material = {test_material("a", 1.0, 2.0), test_material("b", 20.0, 5.0)},
                        .zone_count = 3, .zone = {test_zone(0, 0.0), test_zone(1, 5.0), {0, 2.0, 0.0, 0.0}}};
    p.materials = &m;
    p.zones = test_paint_zones(&p, powered_blocks);
    p.dt = 0.9 * heat_materials_dt_max(&p.grid, p.bc, p.materials);
    m.zone[2].source_on = 7.5 * p.dt, m.zone[2].source_off = 13.5 * p.dt; /* on from step 8 to step 13 */
    void *initial = test_gaussian_field(&p, 0.3), *whole = test_alloc_field(&p), *half = test_alloc_field(&p);
    if (test_run(&p, HEAT_SELECT_CPU, initial, 20, whole)) return 1;
    heat_solver *s;
    if (test_run(&p, HEAT_SELECT_CPU, initial, 10, half)) return 1;
    EXPECT_OK(heat_solver_create(&p, HEAT_SELECT_CPU, &s));
    EXPECT_OK(heat_solver_set_field(s, half, 10));
    EXPECT_OK(heat_solver_advance(s, 10));
    EXPECT_OK(heat_solver_get_field(s, half));
    size_t bytes = (size_t)heat_grid_points(&p.grid) * sizeof(double);
    EXPECT(memcmp(whole, half, bytes) == 0, "20 steps differ from 10 steps and 10 more after a restart");
    /* and the switching source matters: without it the field differs */
    m.zone[2].source = 0.0;
    if (test_run(&p, HEAT_SELECT_CPU, initial, 20, half)) return 1;
    EXPECT(memcmp(whole, half, bytes) != 0, "the switching source changed nothing");
    printf("restart at step 10 inside a source's switching window: the same bits as 20 steps in one run\n");
    heat_solver_destroy(&s);
    free(initial), free(whole), free(half), free((void *)p.zones);
    return 0;
}

/* ---- implicit schemes ---- */

typedef struct implicit_kind {
    const char *name;
    heat_scheme scheme;
    heat_preconditioner preconditioner;
} implicit_kind;

static const implicit_kind implicit_kinds[] = {
    {"backward_euler, chebyshev", HEAT_BACKWARD_EULER, HEAT_PRECOND_CHEBYSHEV},
    {"backward_euler, jacobi", HEAT_BACKWARD_EULER, HEAT_PRECOND_JACOBI},
    {"crank_nicolson, chebyshev", HEAT_CRANK_NICOLSON, HEAT_PRECOND_CHEBYSHEV},
    {"crank_nicolson, none", HEAT_CRANK_NICOLSON, HEAT_PRECOND_NONE},
};

/* The kind's scheme and preconditioner; CG to rtol in at most 2000 iterations a step, Chebyshev of degree 8,
 * Crank-Nicolson's first 2 steps each taken as two backward Euler half steps. */
static heat_implicit implicit_settings(const implicit_kind *kind, double rtol)
{
    return (heat_implicit){kind->scheme, rtol, 2000, kind->preconditioner, 8, 2};
}

/* Runs test for every kind of implicit scheme and preconditioner; the first failure ends it. */
static int for_each_implicit_kind(int (*test)(const implicit_kind *kind))
{
    for (size_t k = 0; k < sizeof implicit_kinds / sizeof *implicit_kinds; ++k)
        if (test(&implicit_kinds[k])) return 1;
    return 0;
}

/* Two materials in series and a convective face at large steps: the steady states to 1e-9. */
static int implicit_series_kind(const implicit_kind *kind)
{
    heat_problem p = test_problem(20, 2, 2, 1.0, 1.0, 1.0, HEAT_DOUBLE);
    const double k1 = 1.0, k2 = 4.0, t0 = 1.0, hc = 5.0, ambient = 3.0;
    heat_materials m = {.material_count = 2, .material = {test_material("a", k1, 1.0), test_material("b", k2, 20.0)},
                        .zone_count = 2, .zone = {test_zone(0, 0.0), test_zone(1, 0.0)}};
    p.materials = &m;
    p.zones = test_paint_zones(&p, left_right);
    p.bc[FACE_X_LOW] = (heat_bc){.type = HEAT_BC_DIRICHLET, .value = t0};
    p.bc[FACE_X_HIGH] = (heat_bc){.type = HEAT_BC_CONVECTIVE, .h = hc, .ambient = ambient};
    p.implicit = implicit_settings(kind, 1e-12);
    heat_solver *s;
    void *field;
    if (start(&p, 0.0, &s, &field)) return 1;
    heat_solver_destroy(&s);
    p.dt *= 200.0;
    EXPECT_OK(heat_solver_create(&p, HEAT_SELECT_CPU, &s));
    EXPECT_OK(heat_solver_set_field(s, field, 0));
    if (run_to_steady(s, field, 1e-13, 200000)) return 1;
    /* resistances (L/2)/k1, (L/2)/k2 and 1/hc in series */
    const double q = (ambient - t0) / (0.5 / k1 + 0.5 / k2 + 1.0 / hc);
    double worst = 0.0;
    for (int i = 0; i < p.grid.n[0]; ++i) {
        double x = test_coord(&p, 0, i), expected = x < 0.5 ? t0 + q * x / k1 : t0 + q * (0.5 / k1 + (x - 0.5) / k2);
        worst = fmax(worst, fabs(test_get(&p, field, i) - expected) / expected);
    }
    printf("implicit %s: series and convective steady state, relative deviation %.2e (%ld CG iterations in %ld "
           "steps)\n", kind->name, worst, s->cg.iterations, s->step);
    EXPECT(worst <= 1e-9, "%s: not the steady profile (relative deviation %.3g)", kind->name, worst);
    free(field), free((void *)p.zones);
    heat_solver_destroy(&s);
    return 0;
}

static int implicit_series(void) { return for_each_implicit_kind(implicit_series_kind); }

/* An insulated box with sources and flux faces at 20 stable explicit steps a step: the heat grows by what came in,
 * to the CG tolerance. */
static int implicit_sources_kind(const implicit_kind *kind)
{
    const double rtol = 1e-11;
    heat_materials m;
    heat_problem p = powered_flux_box(&m, test_zone(0, 0.0));
    p.implicit = implicit_settings(kind, rtol);
    p.dt = 20.0 * heat_materials_dt_max(&p.grid, p.bc, p.materials);
    powered_run run;
    if (start_powered_run(&p, &run)) return 1;
    const long steps = 30;
    EXPECT_OK(heat_solver_advance(run.solver, steps));
    EXPECT_OK(heat_solver_get_field(run.solver, run.field));
    const double t = steps * p.dt;
    double energy = powered_energy_in(&p, run.cell_volume, t);
    double heat = test_heat(&p, run.field), error = fabs(heat - run.heat0 - energy) / fabs(energy);
    printf("implicit %s: heat %.15g -> %.15g, energy in %.15g, mismatch %.2e of it (%ld CG iterations)\n", kind->name,
           run.heat0, heat, energy, error, run.solver->cg.iterations);
    EXPECT(error <= 1e-7, "%s: the heat grew by %.15g, but %.15g came in", kind->name, heat - run.heat0, energy);
    free(run.field), free((void *)p.zones);
    heat_solver_destroy(&run.solver);
    return 0;
}

static int implicit_sources(void) { return for_each_implicit_kind(implicit_sources_kind); }

/* One material (k = alpha, rho c = 1): the general implicit step against alpha's, to the CG tolerance. */
static int implicit_one_material_kind(const implicit_kind *kind)
{
    heat_problem p = test_problem(24, 20, 12, 1.0, 0.7, 0.5, HEAT_DOUBLE);
    p.alpha = 0.8;
    p.bc[FACE_X_LOW] = (heat_bc){.type = HEAT_BC_DIRICHLET, .value = 1.0};
    p.bc[FACE_Y_HIGH] = (heat_bc){.type = HEAT_BC_DIRICHLET, .value = 3.0};
    p.dt = 30.0 * heat_dt_max(&p.grid, p.alpha);
    p.implicit = implicit_settings(kind, 1e-12);
    void *initial = test_gaussian_field(&p, 0.3), *constant = test_alloc_field(&p), *general = test_alloc_field(&p);
    if (test_run(&p, HEAT_SELECT_CPU, initial, 6, constant)) return 1;
    heat_materials m = {.material_count = 1, .material = {test_material("alpha", p.alpha, 1.0)}, .zone_count = 1,
                        .zone = {test_zone(0, 0.0)}};
    p.materials = &m;
    p.zones = test_paint_zones(&p, everywhere_zero);
    if (test_run(&p, HEAT_SELECT_CPU, initial, 6, general)) return 1;
    double worst = 0.0;
    for (long at = 0; at < heat_grid_points(&p.grid); ++at)
        worst = fmax(worst, fabs(test_get(&p, constant, at) - test_get(&p, general, at)));
    printf("implicit %s, one material: general against alpha's, largest difference %.2e\n", kind->name, worst);
    EXPECT(worst <= 1e-9, "%s: the general implicit step differs from alpha's by %.3g", kind->name, worst);
    free(initial), free(constant), free(general), free((void *)p.zones);
    return 0;
}

static int implicit_one_material(void) { return for_each_implicit_kind(implicit_one_material_kind); }

/* ---- the energy balance the backend keeps ---- */

static int balance_run(heat_scheme scheme, double dt_factor, long steps, double tolerance)
{
    heat_problem p = test_problem(12, 10, 8, 1.2, 1.0, 0.8, HEAT_DOUBLE);
    heat_materials m = {.material_count = 2, .material = {test_material("a", 1.0, 2.0), test_material("b", 20.0, 5.0)},
                        .zone_count = 3, .zone = {test_zone(0, 0.0), test_zone(1, 5.0), {0, 2.0, 0.0, 0.0}}};
    p.materials = &m;
    p.zones = test_paint_zones(&p, powered_blocks);
    p.bc[FACE_X_LOW] = (heat_bc){.type = HEAT_BC_FLUX, .value = 3.0};
    p.bc[FACE_X_HIGH] = (heat_bc){.type = HEAT_BC_DIRICHLET, .value = 0.5};
    p.bc[FACE_Y_LOW] = (heat_bc){.type = HEAT_BC_CONVECTIVE, .h = 4.0, .ambient = 2.0};
    p.bc[FACE_Z_HIGH] = (heat_bc){.type = HEAT_BC_CONVECTIVE, .h = 0.5, .ambient = -1.0};
    p.implicit = (heat_implicit){scheme, 1e-12, 2000, HEAT_PRECOND_CHEBYSHEV, 8, 2};
    p.dt = dt_factor * heat_materials_dt_max(&p.grid, p.bc, p.materials);
    m.zone[2].source_on = 3.5 * p.dt, m.zone[2].source_off = 9.5 * p.dt;
    heat_solver *s;
    EXPECT_OK(heat_solver_create(&p, HEAT_SELECT_CPU, &s));
    void *field = test_gaussian_field(&p, 0.3);
    EXPECT_OK(heat_solver_set_field(s, field, 0));
    heat_energy before, after;
    EXPECT_OK(heat_solver_energy(s, &before));
    EXPECT(fabs(before.heat - test_heat(&p, field)) <= 1e-13 * fabs(before.heat), "heat %.17g, the field's %.17g",
           before.heat, test_heat(&p, field));
    EXPECT_OK(heat_solver_advance(s, steps));
    EXPECT_OK(heat_solver_energy(s, &after));
    double in = 0.0;
    for (int kind = 0; kind < HEAT_ENERGY_KINDS; ++kind) {
        in += after.energy[kind];
        printf("  %-10s power %+.6e now, energy in %+.15e\n", heat_energy_kind_name(kind), after.power[kind],
               after.energy[kind]);
        EXPECT(after.energy[kind] != 0.0 && before.energy[kind] == 0.0, "no energy came through %s",
               heat_energy_kind_name(kind));
    }
    double change = after.heat - before.heat, error = fabs(change - in) / fabs(in);
    printf("%s: heat %.15e -> %.15e, change %+.15e, energy in %+.15e, mismatch %.2e of it\n", heat_scheme_name(scheme),
           before.heat, after.heat, change, in, error);
    EXPECT(error <= tolerance, "%s: the heat changed by %.15g, but %.15g came in", heat_scheme_name(scheme), change, in);
    free(field), free((void *)p.zones);
    heat_solver_destroy(&s);
    return 0;
}

static int energy_balance(void)
{
    return balance_run(HEAT_EULER, 0.9, 300, 1e-12) || balance_run(HEAT_BACKWARD_EULER, 10.0, 30, 1e-9) ||
           balance_run(HEAT_CRANK_NICOLSON, 10.0, 30, 1e-9);
}

/* ---- the sources' power at the field's time, step after step ---- */

/* The sources' power at time t of the powered box whose zone 2 switches on over [on, off). */
static double powered_source_power(const heat_problem *p, double cell_volume, double t)
{
    const heat_zone *switching = &p->materials->zone[2];
    return POWERED_Q * count_zone(p, 1) * cell_volume + heat_zone_source(switching, t) * count_zone(p, 2) * cell_volume;
}

/* The power a history row reports is the next step's: after step n the sources of time n dt, whatever the scheme. */
static int source_power_now_scheme(heat_scheme scheme, double dt_factor)
{
    heat_materials m;
    heat_problem p = powered_flux_box(&m, (heat_zone){0, 2.0, 0.0, 0.0});
    p.implicit = (heat_implicit){scheme, 1e-10, 2000, HEAT_PRECOND_CHEBYSHEV, 8, 2};
    p.dt = dt_factor * heat_materials_dt_max(&p.grid, p.bc, p.materials);
    m.zone[2].source_on = 3.5 * p.dt, m.zone[2].source_off = 9.5 * p.dt; /* on for steps 4 to 9 */
    powered_run run;
    if (start_powered_run(&p, &run)) return 1;
    for (long step = 1; step <= 12; ++step) {
        EXPECT_OK(heat_solver_advance(run.solver, 1));
        heat_energy now;
        EXPECT_OK(heat_solver_energy(run.solver, &now));
        const double expected = powered_source_power(&p, run.cell_volume, run.solver->time);
        EXPECT(fabs(now.power[HEAT_ENERGY_SOURCES] - expected) <= 1e-13 * expected, "%s: after step %ld (t = %g) the "
               "sources' power is %.17g, but at that time they bring %.17g", heat_scheme_name(scheme), step,
               run.solver->time, now.power[HEAT_ENERGY_SOURCES], expected);
    }
    printf("%s: the sources' power after each of 12 steps is that of the field's time, across the window's ends\n",
           heat_scheme_name(scheme));
    free(run.field), free((void *)p.zones);
    heat_solver_destroy(&run.solver);
    return 0;
}

static int source_power_now(void)
{
    return source_power_now_scheme(HEAT_EULER, 0.9) || source_power_now_scheme(HEAT_BACKWARD_EULER, 10.0) ||
           source_power_now_scheme(HEAT_CRANK_NICOLSON, 10.0);
}

/* ---- a steady field still carries energy through its faces ---- */

/* An exact discrete steady state: a flux F into the x-low face of a slab, out through a Dirichlet x-high face,
 * the field linear with slope -F/k in halves on a grid of spacing 1/2, so every point's right-hand side is 0
 * in any precision. The faces still carry F A dt each step, in and out. */
static int steady_energy_kind(const implicit_kind *kind, heat_precision precision)
{
    heat_problem p = test_problem(8, 3, 3, 4.0, 1.5, 1.5, precision);
    const double flux = 1.0, k = 1.0, face = 6.0, area = p.grid.length[1] * p.grid.length[2];
    heat_materials m = {.material_count = 1, .material = {test_material("a", k, 2.0)}, .zone_count = 1,
                        .zone = {test_zone(0, 0.0)}};
    p.materials = &m;
    p.zones = test_paint_zones(&p, everywhere_zero);
    p.bc[FACE_X_LOW] = (heat_bc){.type = HEAT_BC_FLUX, .value = flux};
    p.bc[FACE_X_HIGH] = (heat_bc){.type = HEAT_BC_DIRICHLET, .value = face};
    p.implicit = implicit_settings(kind, 1e-6);
    p.dt = (kind->scheme == HEAT_EULER ? 0.9 : 20.0) * heat_materials_dt_max(&p.grid, p.bc, p.materials);
    void *field = test_alloc_field(&p);
    for (long at = 0; at < heat_grid_points(&p.grid); ++at)
        test_set(&p, field, at, face + flux / k * (p.grid.length[0] - test_coord(&p, 0, (int)(at % p.grid.n[0]))));
    heat_solver *s;
    EXPECT_OK(heat_solver_create(&p, HEAT_SELECT_CPU, &s));
    EXPECT_OK(heat_solver_set_field(s, field, 0));
    const long steps = 10;
    EXPECT_OK(heat_solver_advance(s, steps));
    heat_energy after;
    EXPECT_OK(heat_solver_energy(s, &after));
    const double through = flux * area * s->time;
    printf("%s, %s: a steady slab's energy in through the flux face %.17g, the Dirichlet face %.17g (F A t = %g)\n",
           kind->name, heat_precision_name(precision), after.energy[HEAT_ENERGY_FLUX],
           after.energy[HEAT_ENERGY_DIRICHLET], through);
    EXPECT(fabs(after.energy[HEAT_ENERGY_FLUX] - through) <= 1e-12 * through, "%s, %s: %.17g came in through the "
           "flux face of a steady slab, but it carries F A t = %.17g", kind->name, heat_precision_name(precision),
           after.energy[HEAT_ENERGY_FLUX], through);
    EXPECT(fabs(after.energy[HEAT_ENERGY_DIRICHLET] + through) <= 1e-12 * through, "%s, %s: %.17g came in through "
           "the Dirichlet face of a steady slab, but it carries -F A t = %.17g", kind->name,
           heat_precision_name(precision), after.energy[HEAT_ENERGY_DIRICHLET], -through);
    free(field), free((void *)p.zones);
    heat_solver_destroy(&s);
    return 0;
}

static int steady_energy(void)
{
    static const implicit_kind euler = {"euler", HEAT_EULER, HEAT_PRECOND_NONE};
    for (int precision = 0; precision < 2; ++precision) {
        const heat_precision which = precision ? HEAT_FLOAT : HEAT_DOUBLE;
        if (steady_energy_kind(&euler, which)) return 1;
        for (size_t k = 0; k < sizeof implicit_kinds / sizeof *implicit_kinds; ++k)
            if (steady_energy_kind(&implicit_kinds[k], which)) return 1;
    }
    return 0;
}

/* ---- the uniform rows' shortcut gives the general row's bits ---- */

static int checkerboard(const heat_problem *p, int i, int j, int k)
{
    (void)p;
    return (i + 2 * j + 3 * k) % 7 == 0; /* zone 1: the same material as zone 0, so the same physics */
}

/* A block of zone 1 (the same material): the rows along its faces see another zone beside every point,
 * long runs of one stencil of zones (the CPU's classes of stencils, material_runs). */
static int middle_block(const heat_problem *p, int i, int j, int k)
{
    const int *n = p->grid.n;
    return i >= n[0] / 4 && i < 3 * n[0] / 4 && j >= n[1] / 3 && j < 2 * n[1] / 3 && k >= n[2] / 3 && k < 2 * n[2] / 3;
}

/* nx: rows as long as several of the CPU's vectors in float too, so that the rows along the block are cut at
 * vectors' bounds (mixed vectors of a few stencils) and not only into runs. */
static int uniform_rows_scheme(heat_scheme scheme, heat_preconditioner preconditioner, heat_precision precision, int nx)
{
    heat_problem p = test_problem(nx, 14, 9, 1.0, 0.7, 0.5, precision);
    p.implicit = (heat_implicit){scheme, 1e-10, 2000, preconditioner, 8, 2};
    heat_materials m = {.material_count = 1, .material = {test_material("a", 1.5, 2.0)}, .zone_count = 2,
                        .zone = {test_zone(0, 0.5), test_zone(0, 0.5)}};
    p.materials = &m;
    p.bc[FACE_X_LOW] = (heat_bc){.type = HEAT_BC_CONVECTIVE, .h = 3.0, .ambient = 2.0};
    p.bc[FACE_Y_HIGH] = (heat_bc){.type = HEAT_BC_DIRICHLET, .value = 1.5};
    p.dt = (scheme == HEAT_EULER ? 0.9 : 20.0) * heat_materials_dt_max(&p.grid, p.bc, p.materials);
    void *initial = test_gaussian_field(&p, 0.3), *uniform = test_alloc_field(&p), *mixed = test_alloc_field(&p);
    p.zones = test_paint_zones(&p, everywhere_zero);
    if (test_run(&p, HEAT_SELECT_CPU, initial, 15, uniform)) return 1;
    free((void *)p.zones);
    p.zones = test_paint_zones(&p, checkerboard);
    if (test_run(&p, HEAT_SELECT_CPU, initial, 15, mixed)) return 1;
    size_t bytes = (size_t)heat_grid_points(&p.grid) * heat_precision_size(precision);
    EXPECT(memcmp(uniform, mixed, bytes) == 0, "rows of one zone (the uniform shortcut) and rows of two zones of the "
           "same material (the general row) differ");
    free((void *)p.zones);
    p.zones = test_paint_zones(&p, middle_block);
    if (test_run(&p, HEAT_SELECT_CPU, initial, 15, mixed)) return 1;
    EXPECT(memcmp(uniform, mixed, bytes) == 0, "rows of one zone and rows along a block of another zone of the same "
           "material (runs of one stencil of zones) differ");
    EXPECT(memcmp(uniform, initial, bytes) != 0, "the steps changed nothing");
    printf("uniform rows, %s (%s, %s, %d points a row): the shortcut and the general row give the same bits\n",
           heat_scheme_name(scheme), heat_preconditioner_name(preconditioner), heat_precision_name(precision), nx);
    free(initial), free(uniform), free(mixed), free((void *)p.zones);
    return 0;
}

static int uniform_rows(void)
{
    return uniform_rows_scheme(HEAT_EULER, HEAT_PRECOND_CHEBYSHEV, HEAT_DOUBLE, 29) ||
           uniform_rows_scheme(HEAT_EULER, HEAT_PRECOND_CHEBYSHEV, HEAT_DOUBLE, 40) ||
           uniform_rows_scheme(HEAT_EULER, HEAT_PRECOND_CHEBYSHEV, HEAT_FLOAT, 40) ||
           uniform_rows_scheme(HEAT_BACKWARD_EULER, HEAT_PRECOND_CHEBYSHEV, HEAT_DOUBLE, 29) ||
           uniform_rows_scheme(HEAT_CRANK_NICOLSON, HEAT_PRECOND_JACOBI, HEAT_DOUBLE, 29);
}

/* ---- the GPU backend against the CPU's ---- */

/* One GPU-against-CPU case: the scheme, its preconditioner, the steps, and the tolerances of the
 * fields (relative to the largest value) and of the energy balance's numbers. */
typedef struct gpu_case {
    heat_precision precision;
    heat_scheme scheme;
    heat_preconditioner preconditioner;
    long steps;
    double rtol, field_tolerance, energy_tolerance;
} gpu_case;

/* The GPU's own balance: the heat changed by the energy that came in (to rounding for explicit Euler, to the
 * scheme's accuracy for the implicit ones, as the CPU's balance_run). */
static int gpu_balance(const gpu_case *c, const heat_energy *before, const heat_energy *after, double tolerance)
{
    double in = 0.0;
    for (int kind = 0; kind < HEAT_ENERGY_KINDS; ++kind) in += after->energy[kind];
    double change = after->heat - before->heat, error = fabs(change - in) / fabs(in);
    printf("  GPU balance, %s: heat change %+.15e, energy in %+.15e, mismatch %.2e of it\n", heat_scheme_name(c->scheme),
           change, in, error);
    EXPECT(error <= tolerance, "%s on the GPU: the heat changed by %.15g, but %.15g came in", heat_scheme_name(c->scheme),
           change, in);
    return 0;
}

/* Every kind of face, two materials, a source that switches on and off, on 67 x ny x 33 points: the
 * GPU's fields and energy balance against the CPU's. */
static heat_problem gpu_case_problem_rows(const gpu_case *c, heat_materials *m, int ny)
{
    heat_problem p = test_problem(67, ny, 33, 1.34, ny == 45 ? 0.9 : 0.02 * ny, 0.66, c->precision); /* h 0.02 */
    *m = (heat_materials){.material_count = 2, .material = {test_material("a", 1.0, 2.0), test_material("b", 20.0, 5.0)},
                          .zone_count = 3, .zone = {test_zone(0, 0.0), test_zone(1, 5.0), {0, 2.0, 0.0, 0.0}}};
    p.materials = m;
    p.zones = test_paint_zones(&p, powered_blocks);
    p.bc[FACE_X_LOW] = (heat_bc){.type = HEAT_BC_FLUX, .value = 3.0};
    p.bc[FACE_X_HIGH] = (heat_bc){.type = HEAT_BC_DIRICHLET, .value = 0.5};
    p.bc[FACE_Y_LOW] = (heat_bc){.type = HEAT_BC_CONVECTIVE, .h = 4.0, .ambient = 2.0};
    p.bc[FACE_Z_HIGH] = (heat_bc){.type = HEAT_BC_CONVECTIVE, .h = 0.5, .ambient = -1.0};
    p.implicit = (heat_implicit){c->scheme, c->rtol, 2000, c->preconditioner, 8, 2};
    p.dt = (c->scheme == HEAT_EULER ? 0.9 : 10.0) * heat_materials_dt_max(&p.grid, p.bc, p.materials);
    m->zone[2].source_on = 0.25 * c->steps * p.dt + 0.5 * p.dt, m->zone[2].source_off = 0.65 * c->steps * p.dt + 0.5 * p.dt;
    return p;
}

static heat_problem gpu_case_problem(const gpu_case *c, heat_materials *m) { return gpu_case_problem_rows(c, m, 45); }

static int gpu_against_cpu(const gpu_case *c)
{
    heat_materials m;
    heat_problem p = gpu_case_problem(c, &m);
    const int explicit_euler = c->scheme == HEAT_EULER;
    void *initial = test_gaussian_field(&p, 0.3), *fields[2] = {test_alloc_field(&p), test_alloc_field(&p)};
    heat_energy energy[2], start;
    const heat_backend_request backends[2] = {HEAT_SELECT_CPU, HEAT_SELECT_HIP};
    for (int b = 0; b < 2; ++b) {
        heat_solver *s;
        EXPECT_OK(heat_solver_create(&p, backends[b], &s));
        EXPECT(b == 0 || strcmp(s->ops->name, heat_backend_hip->name) == 0, "%s ran on %s, not on the GPU",
               heat_scheme_name(c->scheme), s->ops->name);
        EXPECT_OK(heat_solver_set_field(s, initial, 0));
        EXPECT_OK(heat_solver_energy(s, &start));
        EXPECT_OK(heat_solver_advance(s, c->steps));
        EXPECT_OK(heat_solver_get_field(s, fields[b]));
        EXPECT_OK(heat_solver_energy(s, &energy[b]));
        if (b == 1 && c->precision == HEAT_DOUBLE && gpu_balance(c, &start, &energy[b], explicit_euler ? 1e-12 : 1e-9))
            return 1;
        heat_solver_destroy(&s);
    }
    double worst = 0.0, scale = 0.0;
    for (long at = 0; at < heat_grid_points(&p.grid); ++at) {
        worst = fmax(worst, fabs(test_get(&p, fields[1], at) - test_get(&p, fields[0], at)));
        scale = fmax(scale, fabs(test_get(&p, fields[0], at)));
    }
    printf("materials, %s, %s (%s): GPU against CPU after %ld steps, max relative difference %.3e; heat %.15g against "
           "%.15g\n", heat_precision_name(c->precision), heat_scheme_name(c->scheme),
           heat_preconditioner_name(c->preconditioner), c->steps, worst / scale, energy[1].heat, energy[0].heat);
    EXPECT(worst / scale <= c->field_tolerance, "the GPU's field differs from the CPU's by %.3g", worst / scale);
    EXPECT(fabs(energy[1].heat - energy[0].heat) <= c->energy_tolerance * fabs(energy[0].heat), "heat %.17g against %.17g",
           energy[1].heat, energy[0].heat);
    /* A face's power sums h (T_amb - T) or k (g - T) / h over its points: where T is near the ambient the
     * terms cancel, and in float the sum keeps only the temperatures' rounding, which is the heat's. */
    double energy_scale_floor = c->precision == HEAT_FLOAT ? fabs(energy[0].heat) : 0.0;
    for (int kind = 0; kind < HEAT_ENERGY_KINDS; ++kind) {
        double a = energy[0].energy[kind], b = energy[1].energy[kind];
        EXPECT(a != 0.0 && fabs(a - b) <= c->energy_tolerance * fmax(fabs(a), energy_scale_floor),
               "energy in through %s: GPU %.17g, CPU %.17g", heat_energy_kind_name(kind), b, a);
    }
    free(initial), free(fields[0]), free(fields[1]), free((void *)p.zones);
    return 0;
}

/* Explicit Euler to rounding (1e-13 double, 1e-5 float; the energy's numbers 1e-12 double); the implicit
 * schemes with each preconditioner to the CG tolerance (rtol 1e-12: 1e-9 double; float's CG stops near its
 * rounding, rtol 1e-5: 1e-4). */
static int gpu_vs_cpu(void)
{
    if (!(heat_backend_hip && heat_hip_available(NULL, 0))) return printf("no GPU: skipped\n"), TEST_SKIP;
    static const gpu_case cases[] = {
        {HEAT_DOUBLE, HEAT_EULER, HEAT_PRECOND_CHEBYSHEV, 120, 1e-12, 1e-13, 1e-12},
        {HEAT_FLOAT, HEAT_EULER, HEAT_PRECOND_CHEBYSHEV, 120, 1e-12, 1e-5, 1e-5},
        {HEAT_DOUBLE, HEAT_BACKWARD_EULER, HEAT_PRECOND_CHEBYSHEV, 20, 1e-12, 1e-9, 1e-9},
        {HEAT_DOUBLE, HEAT_CRANK_NICOLSON, HEAT_PRECOND_JACOBI, 20, 1e-12, 1e-9, 1e-9},
        {HEAT_DOUBLE, HEAT_BACKWARD_EULER, HEAT_PRECOND_NONE, 20, 1e-12, 1e-9, 1e-9},
        {HEAT_FLOAT, HEAT_CRANK_NICOLSON, HEAT_PRECOND_CHEBYSHEV, 20, 1e-5, 1e-4, 1e-4},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c)
        if (gpu_against_cpu(&cases[c])) return 1;
    return 0;
}

/* Zone 1 filling whole row segments of 32 points (i 32 .. 63) and zone 2 on the x-low and z-low
 * faces, both wider than a segment: the kernels' one-zone paths in zones other than 0 and beside
 * boundary faces (powered_blocks' blocks are narrower than a segment). */
static int wide_blocks(const heat_problem *p, int i, int j, int k)
{
    (void)p;
    if (i >= 32 && i < 64 && j >= 4 && j < 40 && k >= 3 && k < 30) return 1;
    if (i < 24 && j >= 10 && k < 12) return 2;
    return 0;
}

/* Zone 1 (powered) in whole slabs of rows (j 7 .. 32, every i and k: beside the x and z faces) and
 * zone 2 (powered) beside the y-high face above k 16: tiles of the block kernels
 * (material_block_kernels.hip) that hold one zone other than 0 and whose stencils meet boundary
 * faces. On 46 rows (the other paintings' 45): the y-high face's last row is the second of a
 * thread's two (the others: its first). */
static int slab_blocks(const heat_problem *p, int i, int j, int k)
{
    (void)p, (void)i;
    if (j >= 7 && j < 33) return 1;
    if (j >= 36 && k >= 16) return 2;
    return 0;
}

/* The explicit step's GPU kernels (the materials solver's bench list: backend_hip_materials.hip's
 * material_variants), each named through problem.kernel.name, give the bits of the first
 * (material_step), on a grid whose rows are no multiple of a thread's points, with every kind of
 * face and zone boundaries between a thread's points, for three paintings of the zones. */
static int gpu_kernels_bitwise(void)
{
    if (!(heat_backend_hip && heat_hip_available(NULL, 0))) return printf("no GPU: skipped\n"), TEST_SKIP;
    static const char *const paintings[3] = {"powered_blocks", "wide_blocks", "slab_blocks"};
    for (int run = 0; run < 6; ++run) {
        const int precision = run % 2, painting = run / 2;
        const gpu_case c = {precision ? HEAT_FLOAT : HEAT_DOUBLE, HEAT_EULER, HEAT_PRECOND_CHEBYSHEV, 60, 0, 0, 0};
        heat_materials m;
        heat_problem p = gpu_case_problem_rows(&c, &m, painting == 2 ? 46 : 45);
        if (painting > 0) free((void *)p.zones), p.zones = test_paint_zones(&p, painting == 1 ? wide_blocks : slab_blocks);
        void *initial = test_gaussian_field(&p, 0.3), *reference = test_alloc_field(&p), *field = test_alloc_field(&p);
        const size_t bytes = (size_t)heat_grid_points(&p.grid) * heat_precision_size(p.precision);
        heat_variant kernels[32];
        int count = 0;
        _Static_assert(sizeof kernels[0].kernel == sizeof p.kernel.name, "a kernel's name fits problem.kernel.name");
        for (int k = 0; k == 0 || k < count; ++k) {
            heat_problem q = p;
            if (k > 0) memcpy(q.kernel.name, kernels[k].kernel, sizeof q.kernel.name);
            heat_solver *s;
            EXPECT_OK(heat_solver_create(&q, HEAT_SELECT_HIP, &s));
            if (k == 0) { /* the list, and the reference by its first kernel */
                const heat_variant *list;
                EXPECT_OK(s->ops->bench->variants(s->state, &list, &count));
                EXPECT(count >= 2 && count <= 32 && strcmp(list[0].kernel, "material_step") == 0,
                       "%d materials kernels listed, the first %s", count, count > 0 ? list[0].kernel : "none");
                memcpy(kernels, list, (size_t)count * sizeof *list);
                heat_solver_destroy(&s);
                memcpy(q.kernel.name, kernels[0].kernel, sizeof q.kernel.name);
                EXPECT_OK(heat_solver_create(&q, HEAT_SELECT_HIP, &s));
            }
            EXPECT_OK(heat_solver_set_field(s, initial, 0));
            EXPECT_OK(heat_solver_advance(s, c.steps));
            EXPECT_OK(heat_solver_get_field(s, k == 0 ? reference : field));
            const char *took = s->ops->kernel_description(s->state);
            const size_t length = strlen(kernels[k].kernel);
            EXPECT(strncmp(took, kernels[k].kernel, length) == 0 && took[length] == ',', "problem.kernel.name = %s: the "
                   "run took %s", kernels[k].kernel, took);
            heat_solver_destroy(&s);
            if (k == 0) continue;
            EXPECT(memcmp(field, reference, bytes) == 0, "%s, %s, %s: %ld steps differ from %s's",
                   heat_precision_name(p.precision), paintings[painting], kernels[k].kernel, c.steps, kernels[0].kernel);
            printf("materials, %s, %s: %s bitwise equal to %s after %ld steps\n", heat_precision_name(p.precision),
                   paintings[painting], kernels[k].kernel, kernels[0].kernel, c.steps);
        }
        free(initial), free(reference), free(field), free((void *)p.zones);
    }
    return 0;
}

int main(int argc, char **argv)
{
    static const struct {
        const char *name;
        int (*run)(void);
    } cases[] = {{"series", series}, {"convective", convective}, {"sources", sources_and_fluxes},
                 {"smooth_order", smooth_order}, {"convective_order", convective_order},
                 {"one_material", one_material}, {"restart_clock", restart_clock},
                 {"implicit_series", implicit_series}, {"implicit_sources", implicit_sources},
                 {"implicit_one_material", implicit_one_material}, {"energy_balance", energy_balance},
                 {"source_power_now", source_power_now}, {"steady_energy", steady_energy},
                 {"steady_slabs", steady_slabs}, {"stable_step", stable_step}, {"uniform_rows", uniform_rows},
                 {"gpu_vs_cpu", gpu_vs_cpu}, {"gpu_kernels_bitwise", gpu_kernels_bitwise}};
    for (size_t c = 0; argc == 2 && c < sizeof cases / sizeof cases[0]; ++c)
        if (strcmp(argv[1], cases[c].name) == 0) return cases[c].run();
    fprintf(stderr, "usage: test_materials CASE, CASE one of:");
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) fprintf(stderr, " %s", cases[c].name);
    fprintf(stderr, "\n");
    return 2;
}
