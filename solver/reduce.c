#include "reduce.h"

#include <stdlib.h>
#include <string.h>

#include "error.h"

enum { MIN_BRICK = 16, MAX_BRICKS_PER_AXIS = 32 };

/* 16 points: a row segment then starts on a 64-byte boundary in every
 * layout (float or double), so the vectorised segment sum runs the same
 * instructions on the same lanes wherever the segment lives. */
int heat_brick_size(int n)
{
    int b = MIN_BRICK;
    while ((long)b * MAX_BRICKS_PER_AXIS < n) b *= 2;
    return b;
}

int heat_reduction_init(heat_reduction *r, const heat_problem *problem, const heat_halo_transport *transport)
{
    memset(r, 0, sizeof *r);
    const heat_halo *h = &problem->halo;
    long total = 1;
    for (int a = 0; a < 3; ++a) {
        int global = h->global_n[a] > 0 ? h->global_n[a] : problem->grid.n[a];
        r->n[a] = problem->grid.n[a];
        r->brick[a] = heat_brick_size(global);
        r->bricks[a] = (global + r->brick[a] - 1) / r->brick[a];
        r->first[a] = h->offset[a] / r->brick[a];
        r->own[a] = (r->n[a] + r->brick[a] - 1) / r->brick[a];
        HEAT_CHECK(h->offset[a] % r->brick[a] == 0, "block offset %d is not on a brick boundary", h->offset[a]);
        total *= r->bricks[a];
    }
    HEAT_CHECK(r->own[0] <= MAX_BRICKS_PER_AXIS, "%d bricks along x (at most %d)", r->own[0], MAX_BRICKS_PER_AXIS);
    r->segments = r->own[0];
    r->partials = malloc(sizeof(double) * (size_t)total);
    HEAT_CHECK(r->partials, "out of memory for %ld brick sums", total);
    r->sum_owned = transport ? transport->sum_owned : NULL;
    r->context = transport ? transport->context : NULL;
    return HEAT_OK;
}

void heat_reduction_free(heat_reduction *r)
{
    free(r->partials);
    r->partials = NULL;
}

static long min_long(long a, long b) { return a < b ? a : b; }

/* The bricks (0.., by, bz) of this block, each its segments in row order (z,
 * then y) into sums[bx]. All bx at once: a row's segments lie side by side,
 * and the bricks' running sums are independent chains (one brick at a time,
 * each sum would wait on its previous addition). The same additions in the
 * same order. */
static void brick_row_sums(const heat_reduction *r, const double *segment_sums, int by, int bz, double *sums)
{
    long y0 = (long)by * r->brick[1], y1 = min_long(y0 + r->brick[1], r->n[1]);
    long z0 = (long)bz * r->brick[2], z1 = min_long(z0 + r->brick[2], r->n[2]);
    for (int bx = 0; bx < r->own[0]; ++bx) sums[bx] = 0.0;
    for (long z = z0; z < z1; ++z)
        for (long y = y0; y < y1; ++y) {
            const double *row = segment_sums + (z * r->n[1] + y) * r->segments;
#pragma omp simd
            for (int bx = 0; bx < r->own[0]; ++bx) sums[bx] += row[bx];
        }
}

enum { SUM_LANES = 8 };

/* values[0], values[stride], ... in a fixed order: value b into lane b % 8,
 * then the lanes pairwise. One running sum would chain up to 32768
 * dependent additions, and on the GPU's host it runs after every CG kernel. */
static double lane_sum(const double *values, long count, long stride)
{
    double lane[SUM_LANES] = {0};
    long b = 0;
    for (; b + SUM_LANES <= count; b += SUM_LANES)
        for (int l = 0; l < SUM_LANES; ++l) lane[l] += values[(b + l) * stride];
    for (; b < count; ++b) lane[b % SUM_LANES] += values[b * stride];
    return ((lane[0] + lane[1]) + (lane[2] + lane[3])) + ((lane[4] + lane[5]) + (lane[6] + lane[7]));
}

/* The own bricks' partials are in place: across processes, then in order. */
static int add_bricks(heat_reduction *r, double *total)
{
    long count = (long)r->bricks[0] * r->bricks[1] * r->bricks[2];
    if (r->sum_owned) HEAT_CALL(r->sum_owned(r->context, r->partials, count));
    *total = lane_sum(r->partials, count, 1);
    return HEAT_OK;
}

/* Where this block's brick (bx, by, bz) goes among the whole grid's. */
static long global_brick(const heat_reduction *r, int bx, int by, int bz)
{
    return ((long)(r->first[2] + bz) * r->bricks[1] + r->first[1] + by) * r->bricks[0] + r->first[0] + bx;
}

static void clear_partials(heat_reduction *r)
{
    long count = (long)r->bricks[0] * r->bricks[1] * r->bricks[2];
    if (r->sum_owned) memset(r->partials, 0, sizeof(double) * (size_t)count);
}

int heat_reduction_sum(heat_reduction *r, const double *segment_sums, double *total)
{
    clear_partials(r);
#pragma omp parallel for collapse(2) schedule(static)
    for (int bz = 0; bz < r->own[2]; ++bz)
        for (int by = 0; by < r->own[1]; ++by) {
            double sums[MAX_BRICKS_PER_AXIS];
            brick_row_sums(r, segment_sums, by, bz, sums);
            for (int bx = 0; bx < r->own[0]; ++bx) r->partials[global_brick(r, bx, by, bz)] = sums[bx];
        }
    return add_bricks(r, total);
}

int heat_reduction_sum_bricks(heat_reduction *r, const double *brick_sums, long stride, double *total)
{
    if (!r->sum_owned) { /* one process owns every brick: its order is the grid's */
        *total = lane_sum(brick_sums, (long)r->own[0] * r->own[1] * r->own[2], stride);
        return HEAT_OK;
    }
    clear_partials(r);
    long local = 0;
    for (int bz = 0; bz < r->own[2]; ++bz)
        for (int by = 0; by < r->own[1]; ++by)
            for (int bx = 0; bx < r->own[0]; ++bx, ++local) r->partials[global_brick(r, bx, by, bz)] = brick_sums[local * stride];
    return add_bricks(r, total);
}
