#pragma once
/*
 * A materials run's zones (solver/regions.h) for the run: each rank paints
 * its own block with its ghost layer from the configuration's regions and
 * hands it to the backend through heat_problem.zones; the root sets the
 * regions' initial temperatures over the whole field.
 */
#include "io/ckpt_materials.h"
#include "io/config.h"
#include "parallel/decomp.h"

/* The painting of the configuration's regions (pointers into c). */
heat_painting zones_painting(const heat_config *c);

/* Materials runs: paints the block of d into *zones (allocated here, free()
 * after the solver is destroyed) and sets problem->materials and ->zones.
 * Without materials: nothing (*zones NULL). */
int zones_attach(const heat_config *c, const heat_decomp *d, heat_problem *problem, unsigned char **zones);

/* After heat_initial_fill_block of a block of n points from global index
 * offset (the whole field: offset 0, the grid's n): the regions' temperatures. */
void zones_initial_temperature(const heat_config *c, const int offset[3], const int n[3], void *block);

/* The root of a materials run: the zone and material fields and tables its
 * checkpoints carry (io/ckpt_materials.h), painted and compressed once at
 * the configuration's output.compression. *out NULL otherwise. */
int zones_checkpoint_fields(const heat_config *c, int root, ckpt_materials **out);
