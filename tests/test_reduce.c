/* Ordered sums (solver/reduce.c) give the same bits however the grid is
 * split: two z slabs, each summing its own bricks and adding the other's
 * partials as MPI_SUM would, give the one-block total exactly; and brick sums
 * formed by a backend itself (the GPU's, heat_reduction_sum_bricks, strided
 * as in an array of (a, b) pairs) give the total of the row segment sums. */
#include "solver/reduce.h"
#include "test_util.h"

enum { NX = 40, NY = 36, NZ = 48, SPLIT = 32 }; /* bricks of 16: the last of each axis partial */

/* Something whose sum depends on the order of the additions. */
static double value(int x, int y, int z) { return 1.0 / (1.0 + x + 7.0 * y + 13.0 * z) + 1e-9 * (x * y % 7); }

/* The block's row segment sums, [z][y][segment], planes [z0, z0 + nz). */
static double *segment_sums(const heat_reduction *r, int z0)
{
    double *s = calloc((size_t)r->n[2] * r->n[1] * r->segments, sizeof *s);
    for (int z = 0; s && z < r->n[2]; ++z)
        for (int y = 0; y < r->n[1]; ++y)
            for (long g = 0; g < r->segments; ++g)
                for (int x = (int)g * r->brick[0]; x < NX && x < (int)(g + 1) * r->brick[0]; ++x)
                    s[((long)z * r->n[1] + y) * r->segments + g] += value(x, y, z0 + z);
    return s;
}

static heat_problem block(int z0, int nz)
{
    heat_problem p = test_problem(NX, NY, nz, 1.0, 1.0, 1.0, HEAT_DOUBLE);
    p.halo.global_n[0] = NX, p.halo.global_n[1] = NY, p.halo.global_n[2] = NZ;
    p.halo.offset[2] = z0;
    return p;
}

/* The other slab's partials, as MPI_SUM would add them. */
typedef struct other_slab {
    double *partials;
    int capture; /* first pass: keep this slab's own instead */
} other_slab;

static int add_other(void *context, double *values, long count)
{
    other_slab *o = context;
    for (long b = 0; b < count; ++b) {
        if (o->capture) o->partials[b] = values[b];
        else values[b] += o->partials[b];
    }
    return HEAT_OK;
}

static int check_split(double whole_total)
{
    const int z0[2] = {0, SPLIT}, nz[2] = {SPLIT, NZ - SPLIT};
    heat_reduction r[2];
    double *sums[2], totals[2];
    other_slab others[2];
    for (int s = 0; s < 2; ++s) {
        heat_problem p = block(z0[s], nz[s]);
        EXPECT_OK(heat_reduction_init(&r[s], &p, NULL));
        sums[s] = segment_sums(&r[s], z0[s]);
        long count = (long)r[s].bricks[0] * r[s].bricks[1] * r[s].bricks[2];
        others[s].partials = calloc((size_t)count, sizeof(double)), others[s].capture = 1;
        EXPECT(sums[s] && others[s].partials, "out of memory");
        r[s].sum_owned = add_other, r[s].context = &others[s];
        EXPECT_OK(heat_reduction_sum(&r[s], sums[s], &totals[s])); /* captures slab s's own partials */
    }
    for (int s = 0; s < 2; ++s) {
        r[s].context = &others[1 - s], others[1 - s].capture = 0;
        EXPECT_OK(heat_reduction_sum(&r[s], sums[s], &totals[s]));
        EXPECT(totals[s] == whole_total, "slab %d: %.17g against %.17g for one block", s, totals[s], whole_total);
    }
    for (int s = 0; s < 2; ++s) heat_reduction_free(&r[s]), free(sums[s]), free(others[s].partials);
    return 0;
}

/* The same bricks summed by the caller, interleaved with another quantity. */
static int check_bricks(heat_reduction *r, const double *sums, double whole_total)
{
    long bricks = (long)r->own[0] * r->own[1] * r->own[2];
    double *pairs = calloc((size_t)bricks * 2, sizeof *pairs);
    EXPECT(pairs, "out of memory");
    for (long b = 0; b < bricks; ++b) {
        int bx = (int)(b % r->own[0]), by = (int)(b / r->own[0] % r->own[1]), bz = (int)(b / r->own[0] / r->own[1]);
        for (int z = bz * r->brick[2]; z < NZ && z < (bz + 1) * r->brick[2]; ++z)
            for (int y = by * r->brick[1]; y < NY && y < (by + 1) * r->brick[1]; ++y)
                pairs[2 * b] += sums[((long)z * r->n[1] + y) * r->segments + bx];
        pairs[2 * b + 1] = -1.0;
    }
    double total;
    EXPECT_OK(heat_reduction_sum_bricks(r, pairs, 2, &total));
    EXPECT(total == whole_total, "brick sums: %.17g against %.17g from the segments", total, whole_total);
    free(pairs);
    return 0;
}

int main(void)
{
    heat_problem p = block(0, NZ);
    heat_reduction whole;
    EXPECT_OK(heat_reduction_init(&whole, &p, NULL));
    double *sums = segment_sums(&whole, 0), total;
    EXPECT(sums, "out of memory");
    EXPECT_OK(heat_reduction_sum(&whole, sums, &total));
    int failed = check_split(total) || check_bricks(&whole, sums, total);
    if (!failed) printf("ordered sums: two z slabs and caller-formed brick sums give the one-block total, %.17g\n", total);
    heat_reduction_free(&whole);
    free(sums);
    return failed;
}
