/*
 * The HIP backend's steps of space order 4, 6 and 8 (order_kernels.hip): the
 * launchers of backend_hip_order.h's candidates. Included by
 * backend_hip_order_float.hip and backend_hip_order_double.hip, which
 * instantiate launch_order for one precision each: the order kernels are the
 * most of the backend's compile time, and the two halves compile in parallel.
 *
 * The order kernels mirror reads across the faces that are not exchanged
 * (order_fetch), so a step needs no halo pass (fill_halo does nothing); the
 * exchanged faces' ghosts come R planes deep (exchange_typed).
 */
#include "backend_hip_internal.h"

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
int launch_order(const hip_state *s, const kernel_entry *e, const int shape[3], int from, int to, hipStream_t q)
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
