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

#include "halo_transport.h"
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
    int material_count; /* 0: no `materials` key: constant coefficients (alpha) */
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

/* ---- Numerics of the materials runs (solver/materials.c) ---- */

/* The ghost rule of a boundary face beside a point of conductivity k, the
 * spacing across the face h: ghost = scale T_a + shift (the rules above;
 * periodic faces are exchanged, never ruled: scale 1, shift 0). */
void heat_boundary_ghost(const heat_bc *bc, double k, double h, double *scale, double *shift);

/* q of a zone at time t (the step's start): its source while on, else 0. */
double heat_zone_source(const heat_zone *zone, double t);

/* Largest stable explicit Euler step of a materials run: 1 / max over
 * materials of sum over faces of K / (rho c h_d^2), a Gershgorin bound of
 * M^-1 A, where an interior face counts the largest harmonic mean with any
 * material, a Dirichlet face k, a convective face beta k / 2 (its ghost
 * rule puts beta k / h^2 on the diagonal alone, as a Dirichlet face 2 k),
 * a Neumann or flux face 0. One material with k = alpha, rho c = 1 gives
 * heat_dt_max. Not painted zones: every material of a zone may touch every other (a listed material that
 * no zone has is left out: it is nowhere in the box). */
double heat_materials_dt_max(const heat_grid *grid, const heat_bc bc[FACE_COUNT], const heat_materials *m);

/* What the kernels read, in double (a backend converts to its precision). */
typedef struct heat_material_tables {
    int zones;
    double *conductance[3];                 /* [a * zones + b]: K_ab / h_d^2 along axis d */
    double heat_capacity[HEAT_ZONES_MAX];   /* rho c of the zone's material */
    double conductivity[HEAT_ZONES_MAX];    /* k of the zone's material */
    double ghost_scale[FACE_COUNT][HEAT_ZONES_MAX]; /* ghost = scale T_a + shift, by the zone of a */
    double ghost_shift[FACE_COUNT][HEAT_ZONES_MAX];
} heat_material_tables;

/* Builds the tables of problem->materials (and checks the materials: every
 * zone's material exists, k, rho, c positive and finite); free with
 * heat_material_tables_free. */
int heat_material_tables_make(const heat_problem *problem, heat_material_tables *tables);
void heat_material_tables_free(heat_material_tables *tables);

/* Checks that every zone index of problem->zones names a zone. */
int heat_zones_check(const heat_problem *problem);

/* Upper eigenvalue bound (Gershgorin, over every pair of the zones' materials) of the
 * implicit schemes' scaled system S = I + theta dt M^-1/2 A M^-1/2
 * (kernels/cpu/cpu_materials_cg.h); its lower bound is 1. One material with
 * k = alpha, rho c = 1 gives the constant-coefficient bound. */
double heat_materials_operator_bound(const heat_problem *problem);

/* ---- The energy balance (history and summary) ---- */

/* Where energy comes in: volumetric sources, and the boundary faces by kind. */
enum { HEAT_ENERGY_SOURCES, HEAT_ENERGY_DIRICHLET, HEAT_ENERGY_CONVECTIVE, HEAT_ENERGY_FLUX, HEAT_ENERGY_KINDS };

/* The kind a boundary face's energy counts as; -1: none comes through it. */
static inline int heat_energy_kind(heat_bc_type type)
{
    return type == HEAT_BC_DIRICHLET ? HEAT_ENERGY_DIRICHLET
         : type == HEAT_BC_CONVECTIVE ? HEAT_ENERGY_CONVECTIVE
         : type == HEAT_BC_FLUX ? HEAT_ENERGY_FLUX : -1;
}

const char *heat_energy_kind_name(int kind); /* "sources", "dirichlet", "convective", "flux" */

/* Every sum of the whole grid is added in an order fixed by reduction bricks
 * (solver/reduce.h), so the numbers have the same bits on any rank count. */
typedef struct heat_energy {
    double heat;                       /* sum of rho c T V */
    double power[HEAT_ENERGY_KINDS];   /* in at the current field and time (what the next step takes) */
    double energy[HEAT_ENERGY_KINDS];  /* in since t = 0: the steps' powers times dt, as the steps used them */
} heat_energy;

/* ---- What every backend builds from problem->zones ---- */

/* problem->zones into a byte field of layout l (the fields' offsets); a
 * boundary (not exchanged) face's ghost takes the zone of the owned point
 * beside it, whatever the caller painted there. */
void heat_zones_in_layout(const heat_problem *problem, const heat_layout *l, unsigned char *zone);
/* Each zone's volume over the whole grid (collective: transport->sum_owned; NULL: one process). */
int heat_zone_volumes(const heat_problem *problem, const heat_halo_transport *transport, double volume[HEAT_ZONES_MAX]);
/* Each face's energy kind (-1: none, or exchanged) and the kinds some face of the grid has. */
void heat_energy_faces(const heat_problem *problem, int face_kind[FACE_COUNT], int kind_present[HEAT_ENERGY_KINDS]);
