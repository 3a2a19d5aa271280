#include "regions.h"

#include "font.h"

#include <math.h>
#include <string.h>

/* A painting with each letters region's text placed once (placing it
 * at every point would cost more than the test itself). */
typedef struct painter {
    const heat_painting *p;
    heat_initial letters[HEAT_REGIONS_MAX]; /* letters regions: the placement keys with the region's text */
    heat_letters_frame frame[HEAT_REGIONS_MAX];
} painter;

static void painter_make(painter *q, const heat_painting *p)
{
    q->p = p;
    for (int r = 0; r < p->regions->count; ++r) {
        if (p->regions->region[r].shape != REGION_LETTERS) continue;
        q->letters[r] = *p->placement;
        memcpy(q->letters[r].text, p->regions->region[r].text, sizeof q->letters[r].text);
        q->frame[r] = heat_letters_place(&q->letters[r], p->grid);
    }
}

static int in_cylinder(const heat_region *g, const double x[3])
{
    int a = g->axis, u = a == 0 ? 1 : 0, v = a == 2 ? 1 : 2; /* the two other axes, in order */
    double du = x[u] - g->center[0], dv = x[v] - g->center[1];
    return du * du + dv * dv <= g->radius * g->radius && x[a] >= g->range[0] && x[a] <= g->range[1];
}

static int contains(const painter *q, int r, double x, double y, double z)
{
    const heat_region *g = &q->p->regions->region[r];
    const double at[3] = {x, y, z};
    switch (g->shape) {
    case REGION_BOX:
        for (int d = 0; d < 3; ++d)
            if (at[d] < g->min[d] || at[d] > g->max[d]) return 0;
        return 1;
    case REGION_CYLINDER: return in_cylinder(g, at);
    case REGION_SPHERE: {
        double dx = x - g->center[0], dy = y - g->center[1], dz = z - g->center[2];
        return dx * dx + dy * dy + dz * dz <= g->radius * g->radius;
    }
    case REGION_LETTERS: return heat_letters_solid(&q->letters[r], q->p->grid, &q->frame[r], x, y, z);
    }
    return 0;
}

static int owner(const painter *q, double x, double y, double z)
{
    for (int r = q->p->regions->count - 1; r >= 0; --r)
        if (contains(q, r, x, y, z)) return r;
    return -1;
}

static int zone_at(const painter *q, int i, int j, int k)
{
    const double *h = q->p->grid->h;
    int r = owner(q, (i + 0.5) * h[0], (j + 0.5) * h[1], (k + 0.5) * h[2]);
    return r < 0 ? 0 : q->p->regions->region[r].zone;
}

int heat_region_contains(const heat_painting *p, int r, double x, double y, double z)
{
    painter q;
    painter_make(&q, p);
    return contains(&q, r, x, y, z);
}

int heat_regions_owner(const heat_painting *p, double x, double y, double z)
{
    painter q;
    painter_make(&q, p);
    return owner(&q, x, y, z);
}

int heat_regions_zone_at(const heat_painting *p, int i, int j, int k)
{
    painter q;
    painter_make(&q, p);
    return zone_at(&q, i, j, k);
}

/* The global index a block's point or ghost stands for along axis a. */
static int source_index(const heat_painting *p, int a, int global)
{
    int n = p->grid->n[a];
    if (global >= 0 && global < n) return global; /* owned, or a neighbouring rank's */
    if (p->bc[2 * a].type == HEAT_BC_PERIODIC) return (global + n) % n;
    return global < 0 ? 0 : n - 1; /* beyond an outer face: the owned point beside it */
}

void heat_regions_paint_block(const heat_painting *p, const int offset[3], const int n[3], unsigned char *zones)
{
    painter q;
    painter_make(&q, p);
    long sx = n[0] + 2, sy = n[1] + 2;
#pragma omp parallel for collapse(2) schedule(static)
    for (int k = -1; k <= n[2]; ++k)
        for (int j = -1; j <= n[1]; ++j) {
            int gk = source_index(p, 2, offset[2] + k), gj = source_index(p, 1, offset[1] + j);
            unsigned char *row = zones + ((k + 1) * sy + (j + 1)) * sx + 1;
            for (int i = -1; i <= n[0]; ++i)
                row[i] = (unsigned char)zone_at(&q, source_index(p, 0, offset[0] + i), gj, gk);
        }
}

void heat_regions_paint_slab(const heat_painting *p, const heat_materials *m, int z0, int nz, int y0, int ny,
                             unsigned char *zones, unsigned char *materials)
{
    painter q;
    painter_make(&q, p);
    const int *n = p->grid->n;
#pragma omp parallel for collapse(2) schedule(static)
    for (int k = 0; k < nz; ++k)
        for (int j = 0; j < ny; ++j) {
            long row = ((long)k * ny + j) * n[0];
            int inside = z0 + k < n[2] && y0 + j < n[1];
            for (int i = 0; i < n[0]; ++i) {
                int zone = inside ? zone_at(&q, i, y0 + j, z0 + k) : 0;
                zones[row + i] = (unsigned char)zone;
                if (materials) materials[row + i] = (unsigned char)(inside ? m->zone[zone].material : 0);
            }
        }
}

void heat_regions_set_temperature(const heat_painting *p, heat_precision precision, void *field)
{
    const int origin[3] = {0, 0, 0};
    heat_regions_set_temperature_block(p, origin, p->grid->n, precision, field);
}

void heat_regions_set_temperature_block(const heat_painting *p, const int offset[3], const int n[3],
                                        heat_precision precision, void *field)
{
    int any = 0;
    for (int r = 0; r < p->regions->count; ++r) any |= p->regions->region[r].has_temperature;
    if (!any) return;
    painter q;
    painter_make(&q, p);
    const double *h = p->grid->h;
#pragma omp parallel for collapse(2) schedule(static)
    for (int k = 0; k < n[2]; ++k)
        for (int j = 0; j < n[1]; ++j)
            for (int i = 0; i < n[0]; ++i) {
                int r = owner(&q, (offset[0] + i + 0.5) * h[0], (offset[1] + j + 0.5) * h[1],
                              (offset[2] + k + 0.5) * h[2]);
                if (r < 0 || !p->regions->region[r].has_temperature) continue;
                long at = ((long)k * n[1] + j) * n[0] + i;
                double t = p->regions->region[r].temperature;
                if (precision == HEAT_FLOAT) ((float *)field)[at] = (float)t;
                else ((double *)field)[at] = t;
            }
}

/* The index range of the centres (i + 0.5) h within [low, high] along axis a; empty when first > last. */
static int centres_within(const heat_grid *g, int a, double low, double high, int *first, int *last)
{
    double f = ceil(low / g->h[a] - 0.5), l = floor(high / g->h[a] - 0.5);
    *first = f < 0 ? 0 : f > g->n[a] ? g->n[a] : (int)f;
    *last = l >= g->n[a] ? g->n[a] - 1 : l < -1 ? -1 : (int)l;
    return *first <= *last;
}

/* The centre nearest to c along axis a. */
static double nearest_centre(const heat_grid *g, int a, double c)
{
    double i = floor(c / g->h[a]);
    i = i < 0 ? 0 : i > g->n[a] - 1 ? g->n[a] - 1 : i;
    return (i + 0.5) * g->h[a];
}

/* A round shape holds a centre when the centre nearest to its axis or
 * middle (axis by axis: the squared distance is a sum) lies within it. */
static int round_has_points(const heat_grid *g, const int axes[], int count, const double *center, double radius)
{
    double d2 = 0.0;
    for (int i = 0; i < count; ++i) {
        double d = nearest_centre(g, axes[i], center[i]) - center[i];
        d2 += d * d;
    }
    return d2 <= radius * radius;
}

/* Letters: some inked glyph cell holds a centre, and the letters' band a z centre. */
static int letters_have_points(const painter *q, int r)
{
    const heat_grid *g = q->p->grid;
    const heat_initial *in = &q->letters[r];
    const heat_letters_frame *f = &q->frame[r];
    int first, last;
    double plate_top = in->plate_thickness * g->length[2];
    if (!centres_within(g, 2, plate_top, plate_top + in->letter_height * g->length[2], &first, &last)) return 0;
    double z = (first + 0.5) * g->h[2]; /* contains() below decides whether it is in the band */
    for (int column = 0; column < f->columns; ++column)
        for (int row = 0; row < FONT_HEIGHT; ++row) {
            int x0, x1, y0, y1; /* centres inside the glyph cell (the half-open cell, tested below) */
            if (!centres_within(g, 0, f->x0 + column * f->unit, f->x0 + (column + 1) * f->unit, &x0, &x1) ||
                !centres_within(g, 1, f->y_top - (row + 1) * f->unit, f->y_top - row * f->unit, &y0, &y1))
                continue;
            for (int j = y0; j <= y1 && j <= y0 + 1; ++j)
                for (int i = x0; i <= x1 && i <= x0 + 1; ++i)
                    if (contains(q, r, (i + 0.5) * g->h[0], (j + 0.5) * g->h[1], z)) return 1;
        }
    return 0;
}

int heat_region_has_points(const heat_painting *p, int r)
{
    painter q;
    painter_make(&q, p);
    const heat_grid *g = p->grid;
    const heat_region *s = &p->regions->region[r];
    int first, last;
    switch (s->shape) {
    case REGION_BOX:
        for (int d = 0; d < 3; ++d)
            if (!centres_within(g, d, s->min[d], s->max[d], &first, &last)) return 0;
        return 1;
    case REGION_SPHERE: return round_has_points(g, (const int[3]){0, 1, 2}, 3, s->center, s->radius);
    case REGION_CYLINDER: {
        int a = s->axis, across[2] = {a == 0 ? 1 : 0, a == 2 ? 1 : 2};
        return centres_within(g, a, s->range[0], s->range[1], &first, &last) &&
               round_has_points(g, across, 2, s->center, s->radius);
    }
    case REGION_LETTERS: return letters_have_points(&q, r);
    }
    return 0;
}
