/*
 * The HIP backend's steps of space order 4, 6 and 8: the candidate table the
 * tuner times when heat_space_radius > 1 (backend_hip.hip) and the order
 * kernels' launchers take (backend_hip_order.hip), and the problems they take. Inline tables: one object
 * across the backend's translation units, so that an entry found in one is
 * the same entry in another (order_of compares addresses).
 */
#pragma once

/* The thread blocks, tile factors and planes a barrier of order_zwindow
 * (planes 1) and order_zasync (planes 1, roll 0; copies: planes of copies in
 * flight; its columns a thread are its launcher's X): compile-time (the
 * shared tiles' size, the window's registers). order_zplanes and order_zroll
 * (roll: groups of planes whose rows are loaded ahead) lost to order_zasync
 * in every row measured; order_zplanes stays as its fallback. */
struct order_shape {
    int block[3], tile, planes, roll, copies;
};
enum {
    ORDER_32x8_M2, ORDER_32x8_M2_C3, ORDER_32x8_M2_C3_B3, ORDER_32x8_M2_C3V, ORDER_32x8_M2_C3V_B3, ORDER_16x16_M1_X2_C3V,
    ORDER_16x16_M1_X2_C3V_B3, ORDER_16x16_M1_X2_C3V_B3_F, ORDER_16x8_M2_X2_C3V_B3_F, ORDER_16x8_M2_X2_C2V_B4_F,
    ORDER_16x16_M2_X2_C2V_B2_F, ORDER_32x8_M2_X2_C2V_B2_F, ORDER_32x8_M2_X2_C2V_B3_F, ORDER_32x8_M2_X2_C2V_B2_FS,
    ORDER_32x8_M2_X2_C2V_B3_FS, ORDER_16x16_M1_X4_C2V_B3_F, ORDER_16x16_M1_X4_C2V_B3_FS, ORDER_SHAPES
};
inline const order_shape order_shapes[] = {
    {{32, 8, 1}, 2, 1, 0, 0},  {{32, 8, 1}, 2, 1, 0, 3},  {{32, 8, 1}, 2, 1, 0, 3}, {{32, 8, 1}, 2, 1, 0, 3},
    {{32, 8, 1}, 2, 1, 0, 3},  {{16, 16, 1}, 1, 1, 0, 3}, {{16, 16, 1}, 1, 1, 0, 3}, {{16, 16, 1}, 1, 1, 0, 3},
    {{16, 8, 1}, 2, 1, 0, 3},  {{16, 8, 1}, 2, 1, 0, 2},  {{16, 16, 1}, 2, 1, 0, 2}, {{32, 8, 1}, 2, 1, 0, 2},
    {{32, 8, 1}, 2, 1, 0, 2},  {{32, 8, 1}, 2, 1, 0, 2},  {{32, 8, 1}, 2, 1, 0, 2},  {{16, 16, 1}, 1, 1, 0, 2},
    {{16, 16, 1}, 1, 1, 0, 2},
};
static_assert(sizeof order_shapes / sizeof order_shapes[0] == ORDER_SHAPES, "a shape for every ORDER_*");

/* The production candidates at orders above 2. zchunk: the planes each
 * thread marches through; fused = 1: no halo pass before a step.
 * order_zasync<D>[p<P>][v][x<X>][b<B>][f][s]: D groups of copies in flight,
 * p: P planes a group (1 where absent), v: 16-byte copies in double, x: X
 * columns a thread (16-byte shared loads and stores; X = 4 lost in every row
 * measured before FILLED), b: registers kept to B blocks an SM (b3 with 64 x 16 tiles: 24
 * warps an SM in float, 16 in double, whose ring spills under 80 registers),
 * f: FILLED (where the blocks tile the plane), s: SPLIT (barriers a ring place
 * instead of a block barrier a plane). Chunks of 64 planes re-read
 * 2R / 64 of the planes; longer ones fewer, in fewer and longer waves of
 * blocks, which suit some GPUs and precisions and not others. The b2 kernels'
 * tiles of 32 x 32 (16x16 threads) and 64 x 16 (32x8) read 50% and 62.5% more
 * than their points through L2 at order 8 in double (a halo sector of 32 bytes
 * at each row's ends, R rows above and below), where 32 x 16 tiles read 75%:
 * halo values that reach L2 after it dropped them are read from DRAM again. */
struct order_entry {
    kernel_entry entry;
    int shape; /* ORDER_*, -1: the tuner's block candidates (order_point) */
};

#define ORDER_ZW(z, b, m) {{{"order_zwindow" #z "_" #b, m, 0}, ORDER_ZWINDOW, z, 1}, ORDER_##b##_M##m}
#define ORDER_ZA(z, b, m, d, name) {{{"order_zasync" name "_" #z "_" #b, m, 0}, ORDER_ZWINDOW, z, 1}, ORDER_##b##_M##m##_##d}
inline const order_entry order_table[] = {
    {{{"order_point", 1, 0}, ORDER_POINT, 0, 1}, -1},
    ORDER_ZW(64, 32x8, 2), ORDER_ZA(64, 32x8, 2, C3, "3"), ORDER_ZA(64, 32x8, 2, C3_B3, "3b3"),
    ORDER_ZA(64, 32x8, 2, C3V, "3v"), ORDER_ZA(64, 32x8, 2, C3V_B3, "3vb3"), ORDER_ZA(64, 16x16, 1, X2_C3V, "3vx2"),
    ORDER_ZA(64, 16x16, 1, X2_C3V_B3, "3vx2b3"), ORDER_ZA(64, 16x16, 1, X2_C3V_B3_F, "3vx2b3f"),
    ORDER_ZA(64, 16x8, 2, X2_C3V_B3_F, "3vx2b3f"), ORDER_ZA(64, 16x8, 2, X2_C2V_B4_F, "2vx2b4f"),
    ORDER_ZA(128, 16x8, 2, X2_C2V_B4_F, "2vx2b4f"), ORDER_ZA(512, 16x8, 2, X2_C2V_B4_F, "2vx2b4f"),
    ORDER_ZA(128, 16x16, 2, X2_C2V_B2_F, "2vx2b2f"), ORDER_ZA(256, 16x16, 2, X2_C2V_B2_F, "2vx2b2f"),
    ORDER_ZA(512, 16x16, 2, X2_C2V_B2_F, "2vx2b2f"), ORDER_ZA(128, 32x8, 2, X2_C2V_B2_F, "2vx2b2f"),
    ORDER_ZA(256, 32x8, 2, X2_C2V_B2_F, "2vx2b2f"), ORDER_ZA(512, 32x8, 2, X2_C2V_B2_F, "2vx2b2f"),
    ORDER_ZA(512, 32x8, 2, X2_C2V_B2_FS, "2vx2b2fs"), ORDER_ZA(86, 32x8, 2, X2_C2V_B3_F, "2vx2b3f"),
    ORDER_ZA(171, 32x8, 2, X2_C2V_B3_F, "2vx2b3f"), ORDER_ZA(171, 32x8, 2, X2_C2V_B3_FS, "2vx2b3fs"),
    ORDER_ZA(171, 16x16, 1, X4_C2V_B3_F, "2vx4b3f"), ORDER_ZA(171, 16x16, 1, X4_C2V_B3_FS, "2vx4b3fs"),
};
#undef ORDER_ZW
#undef ORDER_ZA
enum { ORDER_COUNT = sizeof order_table / sizeof order_table[0] };

inline const order_entry *order_of(const kernel_entry *e)
{
    for (const order_entry &o : order_table)
        if (&o.entry == e) return &o;
    return NULL;
}

inline const kernel_entry *find_order_kernel(const char *name, int tile)
{
    for (const order_entry &o : order_table)
        if (strcmp(o.entry.variant.kernel, name) == 0 && o.entry.variant.tile == tile) return &o.entry;
    return NULL;
}

/* The block an order entry runs with: its own shape, or `shape` for order_point. */
inline const int *order_block(const kernel_entry *e, const int shape[3])
{
    const order_entry *o = order_of(e);
    return o && o->shape >= 0 ? order_shapes[o->shape].block : shape;
}

/* heat_space_coeffs in the kernels' precision; alpha_dt as given. */
template <typename T> order_coeffs<T> cast_order_coeffs(const hip_state *s, double alpha_dt)
{
    order_coeffs<T> c;
    memset(&c, 0, sizeof c);
    c.centre = (T)s->space.diag;
    for (int a = 0; a < 3; ++a)
        for (int m = 1; m <= s->space.radius && m <= ORDER_MAX_RADIUS; ++m) c.axis[a][m - 1] = (T)s->space.weight[a][m];
    c.alpha_dt = (T)alpha_dt;
    return c;
}

/* A problem the order kernels can take: constant coefficients, and at least
 * R points along every axis so that each mirrored or exchanged ghost is an
 * owned point of someone. */
inline int check_order_fits(const hip_state *s)
{
    const heat_problem *p = &s->problem;
    const int radius = s->space.radius;
    if (radius <= 1) return HEAT_OK;
    if (radius > ORDER_MAX_RADIUS)
        return heat_error(HEAT_ERR_CONFIG, "solver.space_order = %d: the GPU kernels take 2, 4, 6 or 8", p->space_order);
    if (heat_materials_active(p->materials))
        return heat_error(HEAT_ERR_CONFIG, "solver.space_order = %d with materials: the GPU's material kernels are second "
                          "order; set solver.space_order = 2", p->space_order);
    for (int a = 0; a < 3; ++a)
        if (p->grid.n[a] < radius)
            return heat_error(HEAT_ERR_CONFIG, "grid.n[%d] = %d points in this block: space order %d needs at least %d "
                              "along every axis; enlarge grid.n or lower solver.space_order",
                              a, p->grid.n[a], p->space_order, radius);
    return HEAT_OK;
}
