#pragma once
/*
 * The materials part of a configuration (DESIGN.md, "The operator family"):
 * the `materials` and `regions` lists and the checks of the boundary types
 * that need them ("convective", "flux"). io/config.c reads the other keys
 * from its table and calls these for the two lists.
 */
#include <libconfig.h>
#include <stdio.h>

#include "config.h"

/* Is `name` a top-level setting read here ("materials", "regions")? */
int config_materials_owns(const char *name);

/* Reads and checks `materials`, `regions` and the boundary faces that need
 * materials, after config.c has read its keys (initial.* for letters
 * regions, the grid for the warning about empty regions): fills
 * c->materials (zone 0 the background, then one zone per distinct
 * material, source and source_time of the regions) and c->regions.
 * Errors name origin:line (or --set), the key and the fix (HEAT_ERR_CONFIG). */
int config_materials_read(const config_t *cf, const char *origin, heat_config *c);

/* The largest stable explicit step of a materials run. */
double config_materials_dt_max(const heat_config *c);

/* Appends the two lists to the effective configuration being rendered. */
int config_materials_render(config_t *out, const heat_config *c);

/* Prints the two lists in libconfig syntax ("  materials = ( ... );"); returns the lines printed. */
int config_materials_print(const heat_config *c, FILE *out);

/* A float as the user would write it (config.c's printing). */
void config_print_float(FILE *out, double v);
