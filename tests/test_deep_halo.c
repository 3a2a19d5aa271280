/* Which blocks take fused sweeps across a cut between ranks, and how deep
 * their halos go (solver/deep_halo.h): slabs along z or x fuse, with halos
 * exchanged on exactly the faces cut between ranks (both faces across a
 * periodic cut, wraps inside a block none); cuts along y or along two axes,
 * blocks thinner than a sweep's steps, implicit schemes and runs asking for
 * single steps do not, and every rank of a layout gives the same answer. */
#include "parallel/domain.h"
#include "solver/deep_halo.h"
#include "test_util.h"

static heat_problem grid(int nx, int ny, int nz, heat_bc_type x, heat_bc_type z)
{
    heat_problem p = test_problem(nx, ny, nz, 1.0, 1.0, 1.0, HEAT_DOUBLE);
    for (int f = 0; f < FACE_COUNT; ++f) p.bc[f].type = f / 2 == 0 ? x : f / 2 == 2 ? z : HEAT_BC_DIRICHLET;
    return p;
}

/* Rank `rank` of dims: its problem as heat_domain_localize makes it. */
static int localize(const heat_problem *whole, const int dims[3], int rank, heat_problem *local)
{
    heat_domain domain = {.elem = sizeof(double)};
    int periodic[3];
    for (int a = 0; a < 3; ++a) periodic[a] = whole->bc[2 * a].type == HEAT_BC_PERIODIC;
    EXPECT_OK(heat_decomp_make(whole->grid.n, dims, periodic, rank, &domain.decomp));
    heat_domain_localize(&domain, whole, local);
    return 0;
}

/* Every rank of dims for sweeps of `steps`: allowed or not as `allowed`,
 * the cut `axis`, faces as expected (first and last ranks of a non-periodic
 * cut one face each), or the reason holding `reason`. */
static int expect_plan(const heat_problem *whole, const int dims[3], int steps, int allowed, int axis,
                       const char *reason)
{
    int ranks = dims[0] * dims[1] * dims[2];
    for (int r = 0; r < ranks; ++r) {
        heat_problem p;
        heat_deep_halo plan;
        const char *why;
        if (localize(whole, dims, r, &p)) return 1;
        int got = heat_deep_halo_plan(&p, steps, &plan, &why);
        EXPECT(got == allowed, "dims %dx%dx%d rank %d, %d steps: plan %d, expected %d (%s)", dims[0], dims[1], dims[2],
               r, steps, got, allowed, why ? why : "");
        if (!allowed) {
            EXPECT(why && strstr(why, reason), "rank %d: reason \"%s\", expected \"%s\"", r, why ? why : "", reason);
            continue;
        }
        EXPECT(plan.axis == axis, "rank %d: cut axis %d, expected %d", r, plan.axis, axis);
        unsigned expected = axis < 0 ? 0 : p.halo.exchanged & 3u << 2 * axis;
        EXPECT(plan.faces == expected, "rank %d: deep faces %#x, expected %#x", r, plan.faces, expected);
        if (axis >= 0 && whole->bc[2 * axis].type != HEAT_BC_PERIODIC && dims[axis] > 1) {
            int faces = !!(plan.faces & 1u << 2 * axis) + !!(plan.faces & 2u << 2 * axis);
            int edge = r == 0 || r == ranks - 1;
            EXPECT(faces == (edge ? 1 : 2), "rank %d of %d: %d deep faces", r, ranks, faces);
        }
    }
    return 0;
}

int main(void)
{
    const int one[3] = {1, 1, 1}, z2[3] = {1, 1, 2}, z4[3] = {1, 1, 4}, x2[3] = {2, 1, 1}, x3[3] = {3, 1, 1},
              y2[3] = {1, 2, 1}, xz[3] = {2, 1, 2};
    heat_problem boxed = grid(64, 40, 72, HEAT_BC_DIRICHLET, HEAT_BC_NEUMANN);
    heat_problem wraps = grid(64, 40, 72, HEAT_BC_PERIODIC, HEAT_BC_PERIODIC);
    for (int steps = 2; steps <= 4; ++steps) {
        if (expect_plan(&boxed, one, steps, 1, -1, NULL) || expect_plan(&wraps, one, steps, 1, -1, NULL)) return 1;
        if (expect_plan(&boxed, z2, steps, 1, 2, NULL) || expect_plan(&boxed, z4, steps, 1, 2, NULL)) return 1;
        if (expect_plan(&wraps, z2, steps, 1, 2, NULL) || expect_plan(&wraps, z4, steps, 1, 2, NULL)) return 1;
        if (expect_plan(&boxed, x2, steps, 1, 0, NULL) || expect_plan(&wraps, x2, steps, 1, 0, NULL)) return 1;
        if (expect_plan(&boxed, y2, steps, 0, 0, "ranks cut along y")) return 1;
        if (expect_plan(&wraps, xz, steps, 0, 0, "two or more axes")) return 1;
    }
    printf("z and x slabs: halos K deep on the cut faces only (K = 2, 3, 4); y and two-axis cuts: single steps\n");
    /* 35 points along x in 3 blocks: 16, 16 and 3 (bricks of 16): no rank fuses, however thick its own block */
    heat_problem thin = grid(35, 40, 72, HEAT_BC_DIRICHLET, HEAT_BC_NEUMANN);
    if (expect_plan(&thin, x3, 2, 0, 0, "thinner than 4")) return 1;
    /* halos deeper than the thinnest block along the cut */
    heat_problem p;
    heat_deep_halo plan;
    const char *why;
    if (localize(&boxed, z2, 0, &p)) return 1;
    EXPECT(heat_deep_halo_plan(&p, 32, &plan, &why) == 1, "32 steps on blocks of 32 planes: %s", why);
    EXPECT(heat_deep_halo_plan(&p, 33, &plan, &why) == 0 && strstr(why, "thinner along the cut"),
           "33 steps on blocks of 32 planes allowed");
    p.implicit.scheme = HEAT_CRANK_NICOLSON;
    EXPECT(heat_deep_halo_plan(&p, 2, &plan, &why) == 0 && strstr(why, "implicit"), "implicit steps fused");
    p.implicit.scheme = HEAT_EULER, p.halo.single_steps = 1;
    EXPECT(heat_deep_halo_plan(&p, 2, &plan, &why) == 0 && strstr(why, "single steps"), "single_steps fused");
    printf("thin blocks, implicit steps and halo.single_steps: single steps on every rank\n");
    return 0;
}
