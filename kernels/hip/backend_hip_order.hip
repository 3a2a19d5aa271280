/*
 * The HIP backend's steps of space order 4, 6 and 8 (order_kernels.hip): the
 * candidate table the tuner times when heat_space_radius > 1, and their
 * launchers. Part of backend_hip.hip's translation unit (hip_state, owned).
 *
 * The order kernels mirror reads across the faces that are not exchanged
 * (order_fetch), so a step needs no halo pass (fill_halo does nothing); the
 * exchanged faces' ghosts come R planes deep (exchange_typed).
 */

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
static const order_shape order_shapes[] = {
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
static const order_entry order_table[] = {
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

static const order_entry *order_of(const kernel_entry *e)
{
    for (const order_entry &o : order_table)
        if (&o.entry == e) return &o;
    return NULL;
}

static const kernel_entry *find_order_kernel(const char *name, int tile)
{
    for (const order_entry &o : order_table)
        if (strcmp(o.entry.variant.kernel, name) == 0 && o.entry.variant.tile == tile) return &o.entry;
    return NULL;
}

/* The block an order entry runs with: its own shape, or `shape` for order_point. */
static const int *order_block(const kernel_entry *e, const int shape[3])
{
    const order_entry *o = order_of(e);
    return o && o->shape >= 0 ? order_shapes[o->shape].block : shape;
}

/* heat_space_coeffs in the kernels' precision; alpha_dt as given. */
template <typename T> static order_coeffs<T> cast_order_coeffs(const hip_state *s, double alpha_dt)
{
    order_coeffs<T> c;
    memset(&c, 0, sizeof c);
    c.centre = (T)s->space.diag;
    for (int a = 0; a < 3; ++a)
        for (int m = 1; m <= s->space.radius && m <= ORDER_MAX_RADIUS; ++m) c.axis[a][m - 1] = (T)s->space.weight[a][m];
    c.alpha_dt = (T)alpha_dt;
    return c;
}

template <typename T, int R, int BX, int BY, int M, int D>
static void launch_order_zwindow(dim3 g, T *out, const T *in, const stencil_shape &p, const order_coeffs<T> &c,
                                 const halo_coeffs<T> &h, int zchunk, hipStream_t q)
{
    order_zwindow<T, R, BX, BY, M, D><<<g, dim3(BX, BY, 1), 0, q>>>(out, in, p, c, h, zchunk);
}

/* ROLL > 0: order_zroll's march (the rows' loads ROLL groups ahead), whose
 * 32-bit offsets span a chunk's planes and their halo; where they would not
 * fit, order_zplanes' march, which sums alike (the same bits). */
template <typename T, int R, int BX, int BY, int M, int P, int ROLL = 0>
static void launch_order_zplanes(dim3 g, T *out, const T *in, const stencil_shape &p, const order_coeffs<T> &c,
                                 const halo_coeffs<T> &h, int zchunk, hipStream_t q)
{
    if constexpr (ROLL > 0) {
        if ((long)(zchunk + 2 * R + (1 + ROLL) * P) * p.sz <= std::numeric_limits<int>::max()) {
            order_zplanes<T, R, BX, BY, M, P, ROLL><<<g, dim3(BX, BY, 1), 0, q>>>(out, in, p, c, h, zchunk);
            return;
        }
    }
    order_zplanes<T, R, BX, BY, M, P, 0><<<g, dim3(BX, BY, 1), 0, q>>>(out, in, p, c, h, zchunk);
}

/* Whether `kernel` may take `bytes` of dynamic shared memory on this device: beyond the 48 KB a
 * block has by default it must be granted (Hopper grants up to 227 KB, AMD's LDS holds 64 KB). */
static bool order_shared_granted(const void *kernel, size_t bytes)
{
    if (bytes <= 48 * 1024) return true;
#if defined(__HIP_PLATFORM_AMD__)
    if (bytes > 64 * 1024) return false;
#endif
    if (hipFuncSetAttribute(kernel, hipFuncAttributeMaxDynamicSharedMemorySize, (int)bytes) == hipSuccess) return true;
    (void)hipGetLastError(); /* the refusal is not the next launch's error */
    return false;
}

/* order_zasync, M rows and X columns a thread, P planes a barrier, D groups of copies in flight,
 * VEC: 16-byte copies, registers kept to BLOCKS blocks an SM: its ring of tiles in dynamic shared
 * memory, beyond the 48 KB a block has by default in double. Its 32-bit offsets span a chunk's
 * planes and their halo, its vectors (VEC's copies, X > 1's stores) need rows that start on 16
 * bytes (the layout's are aligned); where either fails, order_zplanes' march (the same bits; for
 * X > 1 its 32 x 8 blocks of two rows, on their own grid). FILLED: where its blocks do not tile
 * the plane, or the device does not grant its tiles (the larger tiles' ring in double takes more
 * than AMD's 64 KB), the production march of 32 x 16 tiles (the same bits, on its own grid). */
template <typename T, int R, int BX, int BY, int M, int X, int P, int D, bool VEC, int BLOCKS, bool FILLED = false,
          bool SPLIT = false>
static int launch_order_zasync(dim3 g, T *out, T *in, const stencil_shape &p, const order_coeffs<T> &c,
                               const halo_coeffs<T> &h, int zchunk, hipStream_t q)
{
    constexpr size_t bytes = order_async_tiles<T, R, BX, BY, M, P, D, VEC, X, SPLIT>::bytes;
    static_assert(FILLED || bytes <= 64 * 1024, "shared memory a block may have on both vendors (AMD's LDS)");
    auto kernel = order_zasync<T, R, BX, BY, M, X, P, D, VEC, BLOCKS, FILLED, SPLIT>;
    const bool granted = order_shared_granted(reinterpret_cast<const void *>(kernel), bytes);
    if constexpr (FILLED) {
        if (p.nx % (BX * X) != 0 || p.ny % (BY * M) != 0 || !granted)
            return launch_order_zasync<T, R, 16, 16, 1, 2, 1, 3, true, 3>(grid_for(p, dim3(16, 16, 1), 1, zchunk), out, in, p,
                                                                          c, h, zchunk, q);
    }
    const bool aligned = (reinterpret_cast<uintptr_t>(in) % 16 == 0 && reinterpret_cast<uintptr_t>(out) % 16 == 0 &&
                          p.sy * sizeof(T) % 16 == 0) ||
                         (!VEC && X == 1);
    if ((long)(zchunk + 2 * R + 2 * P) * p.sz > std::numeric_limits<int>::max() || !aligned) {
        if constexpr (X == 1) launch_order_zplanes<T, R, BX, BY, M, P, 0>(g, out, in, p, c, h, zchunk, q);
        else launch_order_zplanes<T, R, 32, 8, 2, P, 0>(grid_for(p, dim3(32, 8, 1), 2, zchunk), out, in, p, c, h, zchunk, q);
        return HEAT_OK;
    }
    if (!granted) return heat_internal_error("order_zasync: %zu bytes of shared memory refused", bytes);
    g.x = (unsigned)((p.nx + BX * X - 1) / (BX * X)); /* X columns a thread */
    kernel<<<g, dim3(BX, BY, 1), bytes, q>>>(out, in, p, c, h, zchunk);
    return HEAT_OK;
}

template <typename T, int R>
static int launch_order_radius(const hip_state *s, const kernel_entry *e, const int shape[3], T *out, T *in,
                               hipStream_t q)
{
    const stencil_shape &p = s->shape;
    const order_coeffs<T> c = cast_order_coeffs<T>(s, s->space.alpha_dt);
    const halo_coeffs<T> h = cast_halo<T>(s);
    const int *b = order_block(e, shape);
    dim3 block((unsigned)b[0], (unsigned)b[1], (unsigned)b[2]);
    if (e->kind == ORDER_POINT) {
        order_point<T, R><<<grid_for(p, block, 1, 0), block, 0, q>>>(out, in, p, c, h);
        return HEAT_OK;
    }
    dim3 g = grid_for(p, block, e->variant.tile, e->zchunk);
    switch (order_of(e)->shape) {
    case ORDER_32x8_M2: launch_order_zwindow<T, R, 32, 8, 2, 1>(g, out, in, p, c, h, e->zchunk, q); break;
    case ORDER_32x8_M2_C3: return launch_order_zasync<T, R, 32, 8, 2, 1, 1, 3, false, 2>(g, out, in, p, c, h, e->zchunk, q);
    case ORDER_32x8_M2_C3_B3: return launch_order_zasync<T, R, 32, 8, 2, 1, 1, 3, false, 3>(g, out, in, p, c, h, e->zchunk, q);
    case ORDER_32x8_M2_C3V: return launch_order_zasync<T, R, 32, 8, 2, 1, 1, 3, true, 2>(g, out, in, p, c, h, e->zchunk, q);
    case ORDER_32x8_M2_C3V_B3: return launch_order_zasync<T, R, 32, 8, 2, 1, 1, 3, true, 3>(g, out, in, p, c, h, e->zchunk, q);
    case ORDER_16x16_M1_X2_C3V: return launch_order_zasync<T, R, 16, 16, 1, 2, 1, 3, true, 2>(g, out, in, p, c, h, e->zchunk, q);
    case ORDER_16x16_M1_X2_C3V_B3:
        return launch_order_zasync<T, R, 16, 16, 1, 2, 1, 3, true, 3>(g, out, in, p, c, h, e->zchunk, q);
    case ORDER_16x16_M1_X2_C3V_B3_F:
        return launch_order_zasync<T, R, 16, 16, 1, 2, 1, 3, true, 3, true>(g, out, in, p, c, h, e->zchunk, q);
    case ORDER_16x8_M2_X2_C3V_B3_F:
        return launch_order_zasync<T, R, 16, 8, 2, 2, 1, 3, true, 3, true>(g, out, in, p, c, h, e->zchunk, q);
    case ORDER_16x8_M2_X2_C2V_B4_F:
        return launch_order_zasync<T, R, 16, 8, 2, 2, 1, 2, true, 4, true>(g, out, in, p, c, h, e->zchunk, q);
    case ORDER_16x16_M2_X2_C2V_B2_F:
        return launch_order_zasync<T, R, 16, 16, 2, 2, 1, 2, true, 2, true>(g, out, in, p, c, h, e->zchunk, q);
    case ORDER_32x8_M2_X2_C2V_B2_F:
        return launch_order_zasync<T, R, 32, 8, 2, 2, 1, 2, true, 2, true>(g, out, in, p, c, h, e->zchunk, q);
    case ORDER_32x8_M2_X2_C2V_B3_F:
        return launch_order_zasync<T, R, 32, 8, 2, 2, 1, 2, true, 3, true>(g, out, in, p, c, h, e->zchunk, q);
    case ORDER_32x8_M2_X2_C2V_B2_FS:
        return launch_order_zasync<T, R, 32, 8, 2, 2, 1, 2, true, 2, true, true>(g, out, in, p, c, h, e->zchunk, q);
    case ORDER_32x8_M2_X2_C2V_B3_FS:
        return launch_order_zasync<T, R, 32, 8, 2, 2, 1, 2, true, 3, true, true>(g, out, in, p, c, h, e->zchunk, q);
    case ORDER_16x16_M1_X4_C2V_B3_F:
        return launch_order_zasync<T, R, 16, 16, 1, 4, 1, 2, true, 3, true>(g, out, in, p, c, h, e->zchunk, q);
    case ORDER_16x16_M1_X4_C2V_B3_FS:
        return launch_order_zasync<T, R, 16, 16, 1, 4, 1, 2, true, 3, true, true>(g, out, in, p, c, h, e->zchunk, q);
    }
    return HEAT_OK;
}

/* An order kernel over the whole block, field `from` into `to`. */
template <typename T>
static int launch_order(const hip_state *s, const kernel_entry *e, const int shape[3], int from, int to, hipStream_t q)
{
    T *out = owned<T>(s, to), *in = owned<T>(s, from); /* in: the FILLED kernels write its high z face's ghosts */
    switch (s->space.radius) {
    case 2: HEAT_CALL((launch_order_radius<T, 2>(s, e, shape, out, in, q))); break;
    case 3: HEAT_CALL((launch_order_radius<T, 3>(s, e, shape, out, in, q))); break;
    case 4: HEAT_CALL((launch_order_radius<T, 4>(s, e, shape, out, in, q))); break;
    default: return heat_internal_error("order kernel %s at radius %d", e->variant.kernel, s->space.radius);
    }
    HIP_CHECK_LAUNCH(e->variant.kernel);
    return HEAT_OK;
}

/* A problem the order kernels can take: constant coefficients, and at least
 * R points along every axis so that each mirrored or exchanged ghost is an
 * owned point of someone. */
static int check_order_fits(const hip_state *s)
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
