#pragma once
/*
 * --restart FILE|latest: find the checkpoint, check that it belongs to this
 * configuration (grid, precision, physics), load its field and step into the
 * solver and rebuild the series of the checkpoints written before it.
 */
#include "io/config.h"
#include "io/series.h"
#include "solver/solver.h"

/* field: scratch buffer of the configuration's grid and precision. */
int restart_load(const char *spec, int allow_scheme_change, const heat_config *config, heat_solver *solver, void *field, heat_series *series,
                 int quiet);
