#include "layout.h"

#include "../solver/reduce.h"
#include "decomp.h"

static int bricks_of(int n)
{
    int brick = heat_brick_size(n);
    return (n + brick - 1) / brick;
}

int heat_layout_fits(const int global_n[3], const int dims[3], int halo)
{
    for (int a = 0; a < 3; ++a) {
        if (dims[a] < 1 || dims[a] > bricks_of(global_n[a])) return 0;
        if (dims[a] > 1 && heat_decomp_thinnest(global_n[a], dims[a]) < halo) return 0;
    }
    return 1;
}

/* The area of the faces between the blocks, in points: each cut across axis a is a whole plane. */
static double halo_area(const int global_n[3], const int dims[3])
{
    double area = 0;
    for (int a = 0; a < 3; ++a)
        area += (double)(dims[a] - 1) * global_n[(a + 1) % 3] * global_n[(a + 2) % 3];
    return area;
}

static int allowed(const int requested[3], int a, int count) { return requested[a] <= 0 || requested[a] == count; }

int heat_layout_search(int ranks, const int requested[3], const int global_n[3], int halo, int dims[3])
{
    int found = 0;
    double best = 0;
    for (int z = ranks; z >= 1; --z) {
        if (ranks % z || !allowed(requested, 2, z)) continue;
        for (int y = ranks / z; y >= 1; --y) {
            if ((ranks / z) % y || !allowed(requested, 1, y)) continue;
            int candidate[3] = {ranks / z / y, y, z};
            if (!allowed(requested, 0, candidate[0]) || !heat_layout_fits(global_n, candidate, halo)) continue;
            double area = halo_area(global_n, candidate);
            if (found && area >= best) continue;
            found = 1, best = area;
            dims[0] = candidate[0], dims[1] = candidate[1], dims[2] = candidate[2];
        }
    }
    return found;
}
