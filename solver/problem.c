#include "problem.h"

#include "materials.h"

size_t heat_precision_size(heat_precision precision)
{
    return precision == HEAT_FLOAT ? sizeof(float) : sizeof(double);
}

const char *heat_precision_name(heat_precision precision)
{
    return precision == HEAT_FLOAT ? "float" : "double";
}

long heat_grid_points(const heat_grid *grid)
{
    return (long)grid->n[0] * grid->n[1] * grid->n[2];
}

void heat_grid_set_spacing(heat_grid *grid)
{
    for (int d = 0; d < 3; ++d) grid->h[d] = grid->length[d] / grid->n[d];
}

static long round_up(long value, long multiple)
{
    return (value + multiple - 1) / multiple * multiple;
}

heat_layout heat_layout_make_ghost(const int n[3], size_t elem_size, size_t align_bytes, int pad_y, int ghost)
{
    long align = (long)(align_bytes / elem_size);
    if (align < 1) align = 1;
    heat_layout layout;
    layout.ghost = ghost;
    layout.stride_y = round_up(n[0] + 2L * ghost, align);
    layout.stride_z = layout.stride_y * (round_up(n[1], pad_y > 0 ? pad_y : 1) + 2L * ghost);
    /* Ghost i = -ghost sits `ghost` elements before an aligned address. */
    layout.origin = round_up(ghost, align) - ghost;
    layout.total = round_up(layout.origin + layout.stride_z * (n[2] + 2L * ghost), align);
    return layout;
}

heat_layout heat_layout_make(const int n[3], size_t elem_size, size_t align_bytes, int pad_y)
{
    return heat_layout_make_ghost(n, elem_size, align_bytes, pad_y, 1);
}

int heat_space_radius(const heat_problem *problem)
{
    return problem->space_order > 2 ? problem->space_order / 2 : 1;
}

heat_coeffs heat_coeffs_make(const heat_problem *problem)
{
    heat_coeffs c;
    double sum = 0.0;
    for (int d = 0; d < 3; ++d) {
        c.inv_h2[d] = 1.0 / (problem->grid.h[d] * problem->grid.h[d]);
        sum += c.inv_h2[d];
    }
    c.diag = -2.0 * sum;
    c.alpha_dt = problem->alpha * problem->dt;
    return c;
}

int heat_pairs_allowed(const heat_problem *p)
{
    return p->implicit.scheme == HEAT_EULER && !p->halo.single_steps && heat_only_z_exchanged(p->halo.exchanged) &&
           heat_space_radius(p) == 1 && /* pairs are the 7-point stencil's */
           !heat_materials_active(p->materials); /* the general step: its own rule (the CPU's material_pairs_allowed) */
}

int heat_chebyshev_pairs_allowed(const heat_problem *p)
{
    return p->implicit.scheme != HEAT_EULER && p->implicit.preconditioner == HEAT_PRECOND_CHEBYSHEV &&
           p->implicit.chebyshev_degree >= 4 && p->halo.exchanged == 0 && !p->halo.single_steps &&
           heat_space_radius(p) == 1 &&
           !heat_materials_active(p->materials);
}

double heat_dt_max(const heat_grid *grid, double alpha)
{
    double sum = 0.0;
    for (int d = 0; d < 3; ++d) sum += 1.0 / (grid->h[d] * grid->h[d]);
    return 1.0 / (2.0 * alpha * sum);
}

double heat_sweep_bytes(const int n[3], size_t elem_size)
{
    double nx = n[0], ny = n[1], nz = n[2];
    double fetch = nx * ny * nz - 8 - 4 * (nx - 2) - 4 * (ny - 2) - 4 * (nz - 2);
    double write = (nx - 2) * (ny - 2) * (nz - 2);
    return (fetch + write) * (double)elem_size;
}
