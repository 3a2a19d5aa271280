#include "materials.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"

void heat_boundary_ghost(const heat_bc *bc, double k, double h, double *scale, double *shift)
{
    *scale = 1.0, *shift = 0.0; /* Neumann, and the exchanged faces */
    if (bc->type == HEAT_BC_DIRICHLET) *scale = -1.0, *shift = 2.0 * bc->value;
    if (bc->type == HEAT_BC_FLUX) *shift = bc->value * h / k;
    if (bc->type == HEAT_BC_CONVECTIVE) {
        double beta = 2.0 * h * bc->h / (h * bc->h + 2.0 * k);
        *scale = 1.0 - beta, *shift = beta * bc->ambient;
    }
}

double heat_zone_source(const heat_zone *zone, double t)
{
    return zone->source_on <= t && t < zone->source_off ? zone->source : 0.0;
}

/* A boundary face's share of the Gershgorin row, in conductance units. */
static double boundary_conductance(const heat_bc *bc, double k, double h)
{
    double scale, shift;
    if (bc->type == HEAT_BC_PERIODIC) return -1.0; /* an interior face */
    heat_boundary_ghost(bc, k, h, &scale, &shift);
    return 0.5 * k * (1.0 - scale); /* the diagonal k (1 - scale) / h^2 as half an interior face's 2 K */
}

/* Does a zone have material a? A listed material that none has is nowhere in the box (a library of
 * materials, one not painted), and must not shrink the stable step or widen the implicit bound. */
static int material_used(const heat_materials *m, int a)
{
    for (int z = 0; z < m->zone_count; ++z)
        if (m->zone[z].material == a) return 1;
    return 0;
}

double heat_materials_dt_max(const heat_grid *grid, const heat_bc bc[FACE_COUNT], const heat_materials *m)
{
    double largest = 0.0;
    for (int a = 0; a < m->material_count; ++a) {
        if (!material_used(m, a)) continue;
        const heat_material *ma = &m->material[a];
        double interior = 0.0;
        for (int b = 0; b < m->material_count; ++b)
            if (material_used(m, b))
                interior = fmax(interior, heat_face_conductivity(ma->conductivity, m->material[b].conductivity));
        double sum = 0.0;
        for (int f = 0; f < FACE_COUNT; ++f) {
            double h = grid->h[f / 2], face = boundary_conductance(&bc[f], ma->conductivity, h);
            sum += fmax(interior, face) / (h * h);
        }
        largest = fmax(largest, sum / (ma->density * ma->specific_heat));
    }
    return 1.0 / largest;
}

static int positive(double v) { return isfinite(v) && v > 0.0; }

static int check_materials(const heat_materials *m)
{
    HEAT_CHECK(m->zone_count >= 1 && m->zone_count <= HEAT_ZONES_MAX, "materials: %d zones (1 to %d)", m->zone_count,
               HEAT_ZONES_MAX);
    for (int a = 0; a < m->material_count; ++a) {
        const heat_material *ma = &m->material[a];
        HEAT_CHECK(positive(ma->conductivity) && positive(ma->density) && positive(ma->specific_heat),
                   "material \"%s\": conductivity %g, density %g, specific_heat %g must be positive and finite",
                   ma->name, ma->conductivity, ma->density, ma->specific_heat);
    }
    for (int z = 0; z < m->zone_count; ++z)
        HEAT_CHECK(m->zone[z].material >= 0 && m->zone[z].material < m->material_count,
                   "zone %d names material %d of %d", z, m->zone[z].material, m->material_count);
    return HEAT_OK;
}

int heat_material_tables_make(const heat_problem *p, heat_material_tables *t)
{
    const heat_materials *m = p->materials;
    *t = (heat_material_tables){0};
    HEAT_CALL(check_materials(m));
    const int zones = m->zone_count;
    t->zones = zones;
    for (int z = 0; z < zones; ++z) {
        const heat_material *ma = &m->material[m->zone[z].material];
        t->heat_capacity[z] = ma->density * ma->specific_heat;
        t->conductivity[z] = ma->conductivity;
        for (int f = 0; f < FACE_COUNT; ++f)
            heat_boundary_ghost(&p->bc[f], ma->conductivity, p->grid.h[f / 2], &t->ghost_scale[f][z],
                                &t->ghost_shift[f][z]);
    }
    for (int d = 0; d < 3; ++d) {
        t->conductance[d] = malloc(sizeof(double) * (size_t)zones * (size_t)zones);
        if (!t->conductance[d]) {
            heat_material_tables_free(t);
            return heat_error(HEAT_ERR_RUNTIME, "out of memory for the materials' tables");
        }
        double inv_h2 = 1.0 / (p->grid.h[d] * p->grid.h[d]);
        for (int a = 0; a < zones; ++a)
            for (int b = 0; b < zones; ++b)
                t->conductance[d][a * zones + b] = heat_face_conductivity(t->conductivity[a], t->conductivity[b]) * inv_h2;
    }
    return HEAT_OK;
}

void heat_material_tables_free(heat_material_tables *t)
{
    for (int d = 0; d < 3; ++d) free(t->conductance[d]), t->conductance[d] = NULL;
}

int heat_zones_check(const heat_problem *p)
{
    HEAT_CHECK(p->zones, "a materials run without its zone index (heat_problem.zones)");
    long count = (long)(p->grid.n[0] + 2) * (p->grid.n[1] + 2) * (p->grid.n[2] + 2);
    for (long i = 0; i < count; ++i)
        HEAT_CHECK(p->zones[i] < p->materials->zone_count, "point %ld of the zone index names zone %d of %d", i,
                   p->zones[i], p->materials->zone_count);
    return HEAT_OK;
}

double heat_materials_operator_bound(const heat_problem *p)
{
    const heat_materials *m = p->materials;
    const double theta = p->implicit.scheme == HEAT_CRANK_NICOLSON ? 0.5 : 1.0;
    double largest = 0.0;
    for (int a = 0; a < m->material_count; ++a) {
        if (!material_used(m, a)) continue;
        const heat_material *ma = &m->material[a];
        const double ca = ma->density * ma->specific_heat;
        double row = 0.0;
        for (int f = 0; f < FACE_COUNT; ++f) {
            const double inv_h2 = 1.0 / (p->grid.h[f / 2] * p->grid.h[f / 2]);
            double face = 0.0;
            for (int b = 0; b < m->material_count; ++b) {
                if (!material_used(m, b)) continue;
                const heat_material *mb = &m->material[b];
                double k = heat_face_conductivity(ma->conductivity, mb->conductivity);
                face = fmax(face, k * (1.0 / ca + 1.0 / sqrt(ca * mb->density * mb->specific_heat)));
            }
            if (p->bc[f].type != HEAT_BC_PERIODIC) {
                double scale, shift;
                heat_boundary_ghost(&p->bc[f], ma->conductivity, p->grid.h[f / 2], &scale, &shift);
                face = fmax(face, ma->conductivity * (1.0 - scale) / ca);
            }
            row += face * inv_h2;
        }
        largest = fmax(largest, row);
    }
    return 1.0 + theta * p->dt * largest;
}

const char *heat_energy_kind_name(int kind)
{
    static const char *const names[HEAT_ENERGY_KINDS] = {"sources", "dirichlet", "convective", "flux"};
    return names[kind];
}

void heat_zones_in_layout(const heat_problem *p, const heat_layout *l, unsigned char *zone)
{
    const int *n = p->grid.n;
    for (long z = 0; z < n[2] + 2; ++z)
        for (long y = 0; y < n[1] + 2; ++y)
            memcpy(zone + l->origin + y * l->stride_y + z * l->stride_z, p->zones + (z * (n[1] + 2) + y) * (n[0] + 2),
                   (size_t)n[0] + 2);
    const long stride[3] = {1, l->stride_y, l->stride_z};
    for (int f = 0; f < FACE_COUNT; ++f) {
        if (p->halo.exchanged & 1u << f) continue;
        const int axis = f / 2, fast = axis == 0 ? 1 : 0, slow = axis == 2 ? 1 : 2;
        const long inward = f % 2 ? -stride[axis] : stride[axis];
        const long start = l->origin + 1 + stride[1] + stride[2] + (f % 2 ? n[axis] : -1) * stride[axis];
        for (long b = 0; b < n[slow]; ++b)
            for (long a = 0; a < n[fast]; ++a) {
                long ghost = start + b * stride[slow] + a * stride[fast];
                zone[ghost] = zone[ghost + inward];
            }
    }
}

int heat_zone_volumes(const heat_problem *p, const heat_halo_transport *transport, double volume[HEAT_ZONES_MAX])
{
    const int *n = p->grid.n;
    double count[HEAT_ZONES_MAX] = {0};
    for (long z = 1; z <= n[2]; ++z)
        for (long y = 1; y <= n[1]; ++y)
            for (long x = 1; x <= n[0]; ++x) count[p->zones[(z * (n[1] + 2) + y) * (n[0] + 2) + x]] += 1.0;
    /* whole numbers, exact in doubles: their sum across processes has one value in any order */
    if (transport && transport->sum_owned)
        HEAT_CALL(transport->sum_owned(transport->context, count, p->materials->zone_count));
    const double cell = p->grid.h[0] * p->grid.h[1] * p->grid.h[2];
    for (int z = 0; z < HEAT_ZONES_MAX; ++z) volume[z] = count[z] * cell;
    return HEAT_OK;
}

void heat_energy_faces(const heat_problem *p, int face_kind[FACE_COUNT], int kind_present[HEAT_ENERGY_KINDS])
{
    for (int kind = 0; kind < HEAT_ENERGY_KINDS; ++kind) kind_present[kind] = 0;
    for (int f = 0; f < FACE_COUNT; ++f) {
        face_kind[f] = heat_energy_kind(p->bc[f].type);
        if (face_kind[f] >= 0) kind_present[face_kind[f]] = 1; /* the same on every rank: the bc are global */
        if (p->halo.exchanged & 1u << f) face_kind[f] = -1;
    }
}
