/* The decomposition (parallel/decomp.c): blocks tile the grid exactly, start
 * on brick boundaries, sit as evenly as bricks allow, and their neighbours
 * agree with each other, periodic axes wrapping around; a layout with more
 * ranks along an axis than it has bricks is a configuration error. */
#include "parallel/decomp.h"
#include "test_util.h"

static int check_brick_sizes(void)
{
    const int sizes[] = {3, 16, 17, 48, 512, 513, 1024, 4096, 100000};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; ++i) {
        int n = sizes[i], b = heat_brick_size(n);
        EXPECT(b >= 16 && (b & (b - 1)) == 0, "brick %d for n = %d is not a power of two >= 16", b, n);
        EXPECT((n + b - 1) / b <= 32 && (b == 16 || (n + b / 2 - 1) / (b / 2) > 32), "brick %d for n = %d", b, n);
    }
    return 0;
}

/* Every point of the grid in exactly one block; blocks on brick boundaries. */
static int check_tiling(const int n[3], const int dims[3])
{
    int ranks = dims[0] * dims[1] * dims[2];
    long covered = 0;
    for (int r = 0; r < ranks; ++r) {
        heat_decomp d;
        const int none[3] = {0, 0, 0};
        EXPECT_OK(heat_decomp_make(n, dims, none, r, &d));
        for (int a = 0; a < 3; ++a) {
            EXPECT(d.offset[a] % d.brick[a] == 0, "rank %d: offset %d not on a brick of %d", r, d.offset[a], d.brick[a]);
            EXPECT(d.local_n[a] >= 1 && d.offset[a] + d.local_n[a] <= n[a], "rank %d: block outside the grid", r);
            /* the next block along a starts where this one ends */
            if (d.neighbour[2 * a + 1] >= 0) {
                int offset[3], size[3];
                heat_decomp_block_of(&d, d.neighbour[2 * a + 1], offset, size);
                EXPECT(offset[a] == d.offset[a] + d.local_n[a], "rank %d: gap or overlap along axis %d", r, a);
            } else {
                EXPECT(d.offset[a] + d.local_n[a] == n[a], "rank %d: last block along %d ends early", r, a);
            }
            /* as even as whole bricks allow */
            int most = (d.bricks[a] + dims[a] - 1) / dims[a] * d.brick[a];
            EXPECT(d.local_n[a] <= most, "rank %d: %d points along %d, more than %d", r, d.local_n[a], a, most);
        }
        covered += (long)d.local_n[0] * d.local_n[1] * d.local_n[2];
    }
    EXPECT(covered == (long)n[0] * n[1] * n[2], "blocks cover %ld points of %ld", covered,
           (long)n[0] * n[1] * n[2]);
    return 0;
}

/* Neighbours are mutual, share the face's extent, and exist on a physical
 * boundary only where the axis is periodic. */
static int check_neighbours(const int n[3], const int dims[3], const int periodic[3])
{
    int ranks = dims[0] * dims[1] * dims[2];
    for (int r = 0; r < ranks; ++r) {
        heat_decomp d, other;
        EXPECT_OK(heat_decomp_make(n, dims, periodic, r, &d));
        for (int f = 0; f < FACE_COUNT; ++f) {
            int axis = f / 2, outer = f % 2 ? d.coords[axis] == dims[axis] - 1 : d.coords[axis] == 0;
            int expected = !outer || periodic[axis];
            EXPECT((d.neighbour[f] >= 0) == expected && !!(d.exchanged & 1u << f) == expected,
                   "rank %d face %d: neighbour %d", r, f, d.neighbour[f]);
            if (d.neighbour[f] < 0) continue;
            EXPECT_OK(heat_decomp_make(n, dims, periodic, d.neighbour[f], &other));
            EXPECT(other.neighbour[f ^ 1] == r, "rank %d face %d: rank %d does not point back", r, f, d.neighbour[f]);
            for (int a = 0; a < 3; ++a)
                EXPECT(a == axis || (other.local_n[a] == d.local_n[a] && other.offset[a] == d.offset[a]),
                       "rank %d face %d: the face's extent differs from rank %d's", r, f, d.neighbour[f]);
        }
    }
    return 0;
}

int main(void)
{
    if (check_brick_sizes()) return 1;
    const int grids[][3] = {{80, 48, 40}, {512, 512, 1024}, {100, 33, 17}, {3, 64, 70}};
    const int layouts[][3] = {{1, 1, 1}, {2, 1, 1}, {1, 1, 2}, {4, 1, 1}, {2, 2, 1}, {1, 2, 3}, {3, 2, 2}};
    int checked = 0;
    for (size_t g = 0; g < sizeof grids / sizeof grids[0]; ++g)
        for (size_t l = 0; l < sizeof layouts / sizeof layouts[0]; ++l) {
            heat_decomp probe;
            const int none[3] = {0, 0, 0}, periodic[3] = {1, 0, 1};
            heat_errors_as_warnings(1);
            int fits = heat_decomp_make(grids[g], layouts[l], none, 0, &probe) == HEAT_OK;
            heat_errors_as_warnings(0);
            if (!fits) {
                int too_many = 0;
                for (int a = 0; a < 3; ++a) too_many |= layouts[l][a] > (grids[g][a] + heat_brick_size(grids[g][a]) - 1) / heat_brick_size(grids[g][a]);
                EXPECT(too_many, "layout %zu refused on grid %zu though every axis has enough bricks", l, g);
                continue;
            }
            if (check_tiling(grids[g], layouts[l]) || check_neighbours(grids[g], layouts[l], none) ||
                check_neighbours(grids[g], layouts[l], periodic))
                return 1;
            ++checked;
        }
    heat_decomp d;
    const int none[3] = {0, 0, 0}, too_many[3] = {1, 1, 4};
    const int small[3] = {80, 48, 40};
    EXPECT(heat_decomp_make(small, too_many, none, 0, &d) == HEAT_ERR_CONFIG, "4 ranks along 3 bricks accepted");
    printf("decomposition: %d grid/layout pairs tile exactly with mutual neighbours (open and periodic)\n", checked);
    return 0;
}
