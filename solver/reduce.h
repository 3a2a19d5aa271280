#pragma once
/*
 * Sums over the whole grid whose bits do not depend on how the grid is split
 * between processes (the CG solver's dot products). The grid is cut into
 * bricks (parallel/decomp.h: heat_brick_size per axis); kernels sum each row
 * in segments of one brick's width, this module adds a brick's segments in
 * row order (the GPU backend forms its brick sums itself, cg_kernels.hip),
 * and the bricks in a fixed order of their global index. Every process owns
 * whole bricks, so every partial sum is formed by one process from the same
 * values in the same order, whatever the layout.
 */
#include "halo_transport.h"
#include "problem.h"

typedef struct heat_reduction {
    int n[3];             /* this block's points */
    int brick[3];         /* brick edge per axis */
    int bricks[3];        /* bricks of the whole grid per axis */
    int first[3];         /* global index of this block's first brick */
    int own[3];           /* bricks this block holds per axis */
    long segments;        /* row segments per row (own[0]) */
    double *partials;     /* one per brick of the whole grid */
    int (*sum_owned)(void *context, double *values, long count); /* across processes; NULL: one */
    void *context;
} heat_reduction;

/* Brick edge for an axis of n points: a power of two >= 16 with at most 32 bricks along the axis. */
int heat_brick_size(int n);

/* transport: its sum_owned adds the processes' brick sums (NULL: one process). */
int heat_reduction_init(heat_reduction *r, const heat_problem *problem, const heat_halo_transport *transport);
void heat_reduction_free(heat_reduction *r);
/* Row segment sums -> the global sum. segment_sums: [z][y][segment] of this block. */
int heat_reduction_sum(heat_reduction *r, const double *segment_sums, double *total);
/* This block's brick sums, [bz][by][bx] of its own bricks, `stride` doubles
 * apart (a backend that forms them itself, the GPU's) -> the global sum. */
int heat_reduction_sum_bricks(heat_reduction *r, const double *brick_sums, long stride, double *total);
