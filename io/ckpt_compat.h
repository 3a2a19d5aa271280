#pragma once
/*
 * Does a checkpoint belong to the configuration that would restart from it?
 * Its metadata (io/checkpoint.h) compared with the configuration: first the
 * run (grid, precision, time scheme, alpha, dt), then the problem (the
 * boundaries and, in a materials run, the materials, the zones and the zone
 * of every point). A difference is refused naming it, both values and the
 * way out; the caller decides which changes the user has allowed.
 */
#include "checkpoint.h"
#include "config.h"

/* The run: grid.n, grid.length, solver.precision, time.scheme and
 * solver.space_order (unless scheme_change, --allow-scheme-change),
 * physics.alpha (where neither side is a materials run, which leaves it
 * unused) and the time step (an implicit scheme, or a change of
 * scheme or order, may change it). HEAT_OK, or
 * HEAT_ERR_CONFIG naming the first difference. */
int ckpt_compat_run(const char *path, const ckpt_meta *file, const heat_config *config, int scheme_change);

/* The problem: the boundaries and, in a materials run, the materials and
 * zones and the zone index of every point, compared with the
 * configuration's regions painted as painting describes (app/zones.h).
 * HEAT_OK, or HEAT_ERR_CONFIG naming the first difference. */
int ckpt_compat_problem(const char *path, const ckpt_meta *file, const heat_config *config,
                        const heat_painting *painting);
