#pragma once
/*
 * Domain decomposition: which block of the global grid each rank owns, who
 * its neighbours are, and the reduction bricks that make sums independent of
 * the rank count. Pure arithmetic, no MPI: the serial build and the tests use
 * it as they are.
 *
 * Every axis is cut into bricks of `brick[a]` points (the last one may be
 * shorter); ranks own whole bricks, as evenly as the bricks allow. A global
 * sum adds each brick's partial sum in brick order (z, then y, then x
 * outermost to innermost), and a brick's partial in point order: the same
 * additions in the same order whatever the layout, hence the same bits.
 */
#include "../solver/problem.h"
#include "../solver/reduce.h"

typedef struct heat_decomp {
    int ranks, rank;
    int dims[3];          /* ranks along x, y, z */
    int coords[3];        /* this rank's position in dims */
    int global_n[3];      /* points of the whole grid */
    int offset[3];        /* global index of this rank's first owned point */
    int local_n[3];       /* points this rank owns */
    int periodic[3];      /* axis wraps around (boundary type "periodic" on both faces) */
    int neighbour[FACE_COUNT]; /* rank across each face; -1 on a physical boundary */
    unsigned exchanged;   /* bit f: face f's ghosts come from a neighbour (or the wrap-around) */
    int halo;             /* ghost layers: R of the space order (1 for the 7-point stencil; heat_domain_init sets it) */
    int brick[3];         /* reduction brick edge per axis (points) */
    int bricks[3];        /* bricks of the whole grid per axis */
} heat_decomp;

/* Rank of the block at coords (row-major, x slowest, as MPI_Cart_create without reordering). */
int heat_decomp_rank_of(const int dims[3], const int coords[3]);

/* Fills *d for `rank` of dims[0]*dims[1]*dims[2] ranks. Returns HEAT_ERR_CONFIG
 * (message naming parallel.ranks) when an axis has more ranks than bricks. */
int heat_decomp_make(const int global_n[3], const int dims[3], const int periodic[3], int rank, heat_decomp *d);

/* The block of `rank` (offset and size) in the same decomposition. */
void heat_decomp_block_of(const heat_decomp *d, int rank, int offset[3], int size[3]);

/* Points of the thinnest block when an axis of n points is cut into `parts` blocks of whole bricks
 * (parts at most the axis's bricks). */
int heat_decomp_thinnest(int n, int parts);
