#include "decomp.h"

#include <string.h>

#include "../solver/error.h"

int heat_decomp_rank_of(const int dims[3], const int coords[3])
{
    return (coords[0] * dims[1] + coords[1]) * dims[2] + coords[2];
}

static void coords_of(const int dims[3], int rank, int coords[3])
{
    coords[2] = rank % dims[2];
    coords[1] = rank / dims[2] % dims[1];
    coords[0] = rank / (dims[2] * dims[1]);
}

static int bricks_along(int n, int brick) { return (n + brick - 1) / brick; }

/* Bricks [first, end) of part c of `parts` along an axis of `bricks`. */
static void split(int bricks, int parts, int c, int *first, int *end)
{
    *first = (int)((long)bricks * c / parts);
    *end = (int)((long)bricks * (c + 1) / parts);
}

/* Part c of `parts` along an axis of n points in bricks of `brick`: its first point and its points. */
static void part_along(int n, int brick, int parts, int c, int *offset, int *size)
{
    int first, end;
    split(bricks_along(n, brick), parts, c, &first, &end);
    int stop = end * brick < n ? end * brick : n;
    *offset = first * brick;
    *size = stop - *offset;
}

static void block_along(const heat_decomp *d, int axis, int c, int *offset, int *size)
{
    part_along(d->global_n[axis], d->brick[axis], d->dims[axis], c, offset, size);
}

int heat_decomp_thinnest(int n, int parts)
{
    int thinnest = n;
    for (int c = 0; c < parts; ++c) {
        int offset, size;
        part_along(n, heat_brick_size(n), parts, c, &offset, &size);
        if (size < thinnest) thinnest = size;
    }
    return thinnest;
}

void heat_decomp_block_of(const heat_decomp *d, int rank, int offset[3], int size[3])
{
    int coords[3];
    coords_of(d->dims, rank, coords);
    for (int a = 0; a < 3; ++a) block_along(d, a, coords[a], &offset[a], &size[a]);
}

/* The rank across face f, or -1 where the face is the grid's own boundary. */
static int neighbour_across(const heat_decomp *d, int f)
{
    int axis = f / 2, step = f % 2 ? 1 : -1, c[3] = {d->coords[0], d->coords[1], d->coords[2]};
    c[axis] += step;
    if (c[axis] < 0 || c[axis] >= d->dims[axis]) {
        if (!d->periodic[axis]) return -1;
        c[axis] = (c[axis] + d->dims[axis]) % d->dims[axis];
    }
    return heat_decomp_rank_of(d->dims, c);
}

int heat_decomp_make(const int global_n[3], const int dims[3], const int periodic[3], int rank, heat_decomp *d)
{
    static const char axis_names[] = "xyz";
    memset(d, 0, sizeof *d);
    d->ranks = dims[0] * dims[1] * dims[2];
    d->rank = rank;
    d->halo = 1;
    for (int a = 0; a < 3; ++a) {
        d->dims[a] = dims[a], d->global_n[a] = global_n[a], d->periodic[a] = periodic[a];
        d->brick[a] = heat_brick_size(global_n[a]);
        d->bricks[a] = bricks_along(global_n[a], d->brick[a]);
        if (dims[a] > d->bricks[a])
            return heat_error(HEAT_ERR_CONFIG, "parallel.ranks: %d ranks along %c, but grid.n[%d] = %d splits into "
                              "only %d block%s of %d points; use at most %d rank%s along %c (set parallel.ranks, or "
                              "run fewer ranks)", dims[a], axis_names[a], a, global_n[a], d->bricks[a],
                              d->bricks[a] == 1 ? "" : "s", d->brick[a], d->bricks[a], d->bricks[a] == 1 ? "" : "s",
                              axis_names[a]);
    }
    coords_of(dims, rank, d->coords);
    heat_decomp_block_of(d, rank, d->offset, d->local_n);
    for (int f = 0; f < FACE_COUNT; ++f) {
        d->neighbour[f] = neighbour_across(d, f);
        if (d->neighbour[f] >= 0) d->exchanged |= 1u << f;
    }
    return HEAT_OK;
}
