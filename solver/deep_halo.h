#pragma once
/*
 * Halos K deep (communication-avoiding ghost zones) for sweeps of K steps:
 * once every K steps a block gets the K planes beyond each face cut between
 * ranks, and recomputes levels 1 .. K-1 on them itself, as a tile of the
 * fused kernel recomputes its own halo: a rank's edge becomes a tile's edge.
 * Which blocks may, and along which axis, is arithmetic on the problem alone,
 * from what every rank shares (the cut, the thinnest block), so every rank
 * answers alike and they exchange at the same steps.
 *
 * Scope: ranks cut along one axis, x or z (slabs). A cut along two axes would
 * need edge and corner ghosts too (level K - 2 lies at distance 2 along a
 * diagonal); a cut along y, ghosts in a layout the fused kernel does not read.
 * Those runs take single steps.
 */
#include "problem.h"

typedef struct heat_deep_halo {
    int axis;       /* the axis cut between ranks (0: x, 2: z); -1: no face is cut (boundaries and wraps only) */
    unsigned faces; /* bit f: face f's ghosts, `steps` deep, come from the neighbouring rank */
} heat_deep_halo;

/* 1 where this block may take sweeps of `steps` explicit steps (*plan then
 * says which faces exchange that deep), 0 where it takes single steps; *why
 * then names the reason, for the run's log. */
int heat_deep_halo_plan(const heat_problem *p, int steps, heat_deep_halo *plan, const char **why);

