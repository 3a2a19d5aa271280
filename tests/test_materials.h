#pragma once
/* Helpers of the materials tests: zone indices painted by a function of the
 * point, the heat sum(rho c T V) of a field. */
#include "solver/materials.h"
#include "test_util.h"

/* The zone of point (i, j, k) of the grid (ghosts: -1 and n). */
typedef int (*test_zone_fn)(const heat_problem *p, int i, int j, int k);

/* problem->zones for this block (offset in the whole grid: halo.offset), painted by zone_of. */
static inline unsigned char *test_paint_zones(const heat_problem *p, test_zone_fn zone_of)
{
    const int *n = p->grid.n, *o = p->halo.offset;
    unsigned char *zones = malloc((size_t)(n[0] + 2) * (n[1] + 2) * (n[2] + 2));
    if (!zones) return NULL;
    long at = 0;
    for (int k = -1; k <= n[2]; ++k)
        for (int j = -1; j <= n[1]; ++j)
            for (int i = -1; i <= n[0]; ++i) zones[at++] = (unsigned char)zone_of(p, i + o[0], j + o[1], k + o[2]);
    return zones;
}

/* A material of conductivity k and heat capacity rho c = density (c = 1). */
static inline heat_material test_material(const char *name, double k, double rho_c)
{
    heat_material m = {.conductivity = k, .density = rho_c, .specific_heat = 1.0};
    snprintf(m.name, sizeof m.name, "%s", name);
    return m;
}

/* A zone of material `material` with a source always on. */
static inline heat_zone test_zone(int material, double source)
{
    return (heat_zone){material, source, -HUGE_VAL, HUGE_VAL};
}

/* sum of rho c T V over the compact field (zones as painted, ghosts skipped), in point order. */
static inline double test_heat(const heat_problem *p, const void *field)
{
    const int *n = p->grid.n;
    const double volume = p->grid.h[0] * p->grid.h[1] * p->grid.h[2];
    double heat = 0.0;
    for (int k = 0; k < n[2]; ++k)
        for (int j = 0; j < n[1]; ++j)
            for (int i = 0; i < n[0]; ++i) {
                int zone = p->zones[((long)(k + 1) * (n[1] + 2) + j + 1) * (n[0] + 2) + i + 1];
                const heat_material *m = &p->materials->material[p->materials->zone[zone].material];
                heat += m->density * m->specific_heat * test_get(p, field, ((long)k * n[1] + j) * n[0] + i) * volume;
            }
    return heat;
}
