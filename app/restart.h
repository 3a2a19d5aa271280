#pragma once
/*
 * --restart FILE|latest: find the checkpoint, check that it belongs to this
 * configuration (io/ckpt_compat.h: grid, precision, physics and, unless
 * --allow-problem-change, the problem, its zones painted by app/zones.h),
 * read its field, step and time, and rebuild the series of the checkpoints
 * written before it. The caller hands the field to the solver (on several
 * ranks, each its block).
 */
#include "io/config.h"
#include "io/series.h"

typedef struct restart_point {
    double energy_in[4]; /* materials runs: the energy balance's sums (io/ckpt_energy.h) */
    int energy_present;  /* 1: the file had them */
    long step;   /* the checkpoint's step */
    double time; /* and its simulation time */
} restart_point;

/* What a restart may change on purpose (bits of restart_load's allow). */
enum { RESTART_ALLOW_SCHEME = 1, RESTART_ALLOW_PROBLEM = 2 };

/* field: the whole grid in the configuration's precision, filled on success.
 * allow: RESTART_ALLOW_* bits (--allow-scheme-change, --allow-problem-change). */
int restart_load(const char *spec, int allow, const heat_config *config, void *field,
                 restart_point *found, heat_series *series, int quiet);
