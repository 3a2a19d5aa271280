#pragma once
/*
 * Materials, heat sources and the boundaries they bring (DESIGN.md, "The
 * operator family"): rho c dT/dt = div(k grad T) + q in flux form.
 *
 * Every point belongs to one zone: the material and the source of the last
 * region whose shape contains the point's centre (the background material
 * and no source where none does). A zone index of one byte per point is what
 * the kernels read beside the temperature; the tables below are small enough
 * for a GPU's constant or shared memory.
 *
 * Discretisation (cell-centred, spacing h per axis, as problem.h):
 *   (rho c)_a dT_a/dt = sum over the six faces of  K_ab / h_d^2 (T_b - T_a)  +  q_a
 * where b is the neighbour across the face (a ghost at a boundary) and
 * K_ab = 2 k_a k_b / (k_a + k_b), the harmonic mean: the conductance of the
 * two half cells in series, exact for piecewise-linear steady states across
 * an interface. A ghost's zone is its owner's (a neighbouring rank's point,
 * or the periodic wrap); at an outer face the ghost takes the zone of the
 * owned point beside it, so K = k_a there, and the halo fill sets the ghost
 * temperature so that k_a (g - T_a) / h is the face's flux into the body:
 *   Dirichlet value T_f:   g = 2 T_f - T_a
 *   Neumann (insulated):   g = T_a
 *   flux value F (W/m^2 into the body):  g = T_a + F h / k_a
 *   convective h_c, T_amb (-k dT/dn = h_c (T - T_amb)), with the half cell
 *   h / (2 k_a) in series with 1 / h_c:
 *                          g = T_a + beta (T_amb - T_a),  beta = 2 h h_c / (h h_c + 2 k_a)
 * Every ghost is thus  g = scale T_a + shift  with scale, shift per face and
 * zone (heat_boundary_ghost), so the kernel stays branch-free over the block.
 */
#include <stdint.h>

#include "problem.h"

enum {
    HEAT_MATERIALS_MAX = 64,  /* materials in one configuration */
    HEAT_ZONES_MAX = 256,     /* a zone index is one byte */
    HEAT_MATERIAL_NAME = 64,  /* bytes of a material's name, terminator included */
};

typedef struct heat_material {
    char name[HEAT_MATERIAL_NAME];
    double conductivity;  /* k, W / (m K) (or the box's units: power / (length temperature)) */
    double density;       /* rho, kg / m^3 */
    double specific_heat; /* c, J / (kg K) */
} heat_material;

/* What a painted point is: its material and its volumetric source. */
typedef struct heat_zone {
    int material;             /* index into heat_materials.material */
    double source;            /* q, W / m^3; 0: none */
    double source_on;         /* the source acts while source_on <= t < source_off */
    double source_off;        /* (the step's start time t decides; -inf, +inf when always) */
} heat_zone;

typedef struct heat_materials {
    int material_count; /* 0: no `materials` key: constant coefficients, today's kernels */
    heat_material material[HEAT_MATERIALS_MAX];
    int zone_count;
    heat_zone zone[HEAT_ZONES_MAX];
} heat_materials;

/* Is this a materials run (the general operator), not the constant-coefficient one? */
static inline int heat_materials_active(const heat_materials *m)
{
    return m != NULL && m->material_count > 0;
}

/* Harmonic mean of two conductivities: a face's conductance between zones. */
static inline double heat_face_conductivity(double k_a, double k_b)
{
    return 2.0 * k_a * k_b / (k_a + k_b);
}
