#pragma once
/*
 * Regions: the shapes a materials configuration paints its zones with
 * (solver/materials.h). A point belongs to the LAST region whose shape
 * contains its centre (cell centres, (i + 0.5) h as problem.h says), and
 * takes that region's zone; where none does, zone 0 (the background
 * material, no source). Shapes are closed sets: a centre on a box's face or
 * at exactly the radius is inside.
 *
 * Painting is a function of global coordinates only, so every rank paints
 * the points of its block (and its ghosts) alone and the same way, whatever
 * the rank count.
 */
#include "initial.h"
#include "materials.h"
#include "problem.h"

enum { HEAT_REGIONS_MAX = 256 };

typedef enum { REGION_BOX, REGION_CYLINDER, REGION_SPHERE, REGION_LETTERS } heat_region_shape;

typedef struct heat_region {
    int shape;           /* heat_region_shape */
    double min[3];       /* box: lower corner (length units) */
    double max[3];       /* box: upper corner */
    int axis;            /* cylinder: 0, 1, 2 for x, y, z */
    double center[3];    /* sphere: x, y, z; cylinder: the two other axes' coordinates in increasing axis order */
    double radius;       /* sphere, cylinder (length units) */
    double range[2];     /* cylinder: its extent along the axis (-inf, +inf: the whole box) */
    char text[64];       /* letters: the text; placed by the placement keys of `initial` */
    int material;        /* index into heat_materials.material */
    double source;       /* W / m^3 (power / volume); 0: none */
    double source_on;    /* the source acts while source_on <= t < source_off */
    double source_off;
    int has_temperature; /* 1: the region's points start at `temperature`, over initial.* */
    double temperature;
    int zone;            /* its zone: index into heat_materials.zone */
    int line;            /* the configuration line it was given on (messages; 0: --set) */
} heat_region;

typedef struct heat_regions {
    int count;
    heat_region region[HEAT_REGIONS_MAX];
} heat_regions;

/* Everything painting needs; pointers only, owned by the caller (the
 * configuration). placement: the `initial` settings whose letters keys
 * (plate_thickness, letter_height, margin) place a `letters` region. */
typedef struct heat_painting {
    const heat_regions *regions;
    const heat_initial *placement;
    const heat_grid *grid;   /* the whole grid, spacing set */
    const heat_bc *bc;       /* FACE_COUNT outer faces: periodic axes wrap the ghosts */
} heat_painting;

/* Same material and source (field by field: a struct's padding is not its value). */
static inline int heat_zones_equal(const heat_zone *a, const heat_zone *b)
{
    return a->material == b->material && a->source == b->source && a->source_on == b->source_on &&
           a->source_off == b->source_off;
}

/* Single points (checks, tests): each call places a letters region's text
 * anew; whole blocks and slabs go through the painting functions below. */

/* Does region r contain the point (x, y, z) (length units)? */
int heat_region_contains(const heat_painting *p, int r, double x, double y, double z);

/* The index of the last region containing (x, y, z), or -1. */
int heat_regions_owner(const heat_painting *p, double x, double y, double z);

/* The zone of the global point (i, j, k), each index in [0, n). */
int heat_regions_zone_at(const heat_painting *p, int i, int j, int k);

/* The zone index of a block of n points at global offset, with its one
 * ghost layer: zones holds (n[0]+2) (n[1]+2) (n[2]+2) bytes, x fastest,
 * ghost (-1, -1, -1) first (heat_problem.zones). Ghosts inside the grid (a
 * neighbouring rank's points) and across a periodic axis (the wrapped
 * point) are painted as the point they stand for; ghosts beyond an outer
 * non-periodic face take the zone of the owned point beside them. */
void heat_regions_paint_block(const heat_painting *p, const int offset[3], const int n[3], unsigned char *zones);

/* z planes [z0, z0 + nz) x rows [y0, y0 + ny) of the whole grid without
 * ghosts, compact, x fastest: the zone index (zones) and the material index
 * (materials; NULL: not wanted). Points beyond the grid are 0 (checkpoint chunks). */
void heat_regions_paint_slab(const heat_painting *p, const heat_materials *m, int z0, int nz, int y0, int ny,
                             unsigned char *zones, unsigned char *materials);

/* The region temperatures over an initial field of the whole grid (compact,
 * x fastest, in precision): a point whose region (the last containing it)
 * has a temperature takes it. */
void heat_regions_set_temperature(const heat_painting *p, heat_precision precision, void *field);
/* The same over a block of n points from global index offset (compact, x fastest). */
void heat_regions_set_temperature_block(const heat_painting *p, const int offset[3], const int n[3],
                                        heat_precision precision, void *field);

/* Is the centre of at least one point of the grid inside region r? */
int heat_region_has_points(const heat_painting *p, int r);
