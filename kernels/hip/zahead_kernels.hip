/*
 * heat_zahead<W, M, D>: the single heat step marching along z (as heat_zwindow
 * does) with the loads of D planes beyond `above` in flight while a plane's
 * arithmetic runs. A marching thread that loads `above` and then waits for it
 * keeps one plane's M rows of W points in flight; a faster memory at the same
 * latency needs more bytes in flight per SM (Little's law), so each plane here
 * is loaded D + 1 iterations before its first use, into registers that cost
 * (3 + D) M W values a thread rather than more threads. Rows are loaded and
 * stored as aligned vectors of W points. Every point is heat_point's
 * expression, so the bits are every other heat kernel's. The x ghosts are made
 * on the fly; the y and z ghosts are read (a y/z halo pass before each step).
 */
#include "heat_kernels.h"

/* The first `valid` (>= 1) of a row's W points into q as streaming stores: one
 * vector store where all W are owned points (NVIDIA). On AMD every point is a
 * store of its own and points past `valid` store the last valid one again in its
 * place: a branch a point, or a choice between a vector and single stores, makes
 * the AMD compiler merge them into plain (cached) stores. */
template <typename T, int W> __device__ __forceinline__ void store_row(const row_values<T, W> &v, T *q, int valid)
{
#if HEAT_WIDE_STORES
    if (valid >= W) {
        if constexpr (W == 1) nontemporal_store(v.v[0], q);
        else if constexpr (W == 4 && sizeof(T) == 4) nontemporal_store_wide(v.v[0], v.v[1], v.v[2], v.v[3], q);
        else
#pragma unroll
            for (int w = 0; w < W; w += 2) nontemporal_store_wide(v.v[w], v.v[w + 1], q + w);
        return;
    }
#endif
    T last = v.v[0];
#pragma unroll
    for (int w = 0; w < W; ++w) {
        last = w < valid ? v.v[w] : last;
        nontemporal_store(last, q + min(w, valid - 1));
    }
}

/* Row n's W new values (point (i, j + n, k)) from the window's three planes,
 * the rows south and north of the thread's M and the x neighbours outside its
 * W points; the x ghosts of physical faces are made here. */
template <typename T, int W, int M>
__device__ __forceinline__ row_values<T, W> zahead_row(int n, const row_values<T, W> (&below)[M],
                                                       const row_values<T, W> (&here)[M],
                                                       const row_values<T, W> (&above)[M],
                                                       const row_values<T, W> &south, const row_values<T, W> &north,
                                                       T west, T east, int i, const stencil_shape &s,
                                                       const stencil_coeffs<T> &c, const halo_coeffs<T> &h)
{
    const row_values<T, W> &ys = n == 0 ? south : here[n - 1], &yn = n == M - 1 ? north : here[n + 1];
    row_values<T, W> out;
#pragma unroll
    for (int w = 0; w < W; ++w) {
        T x_low = w == 0 ? west : here[n].v[w - 1], x_high = w == W - 1 ? east : here[n].v[w + 1];
        if (i + w == 0 && applies(h, 0)) x_low = h.shift[0] + h.scale[0] * here[n].v[w];
        if (i + w == s.nx - 1 && applies(h, 1)) x_high = h.shift[1] + h.scale[1] * here[n].v[w];
        out.v[w] = heat_point(below[n].v[w], ys.v[w], x_low, here[n].v[w], x_high, yn.v[w], above[n].v[w], c);
    }
    return out;
}

/* ORDERED: the blocks take their tiles and chunks in march_order o's order;
 * held to the plain march's 8 blocks an SM (the order's indices would
 * otherwise keep 8 more registers a thread live). */
template <typename T, int W, int M, int D, bool ORDERED>
__global__ void __launch_bounds__(HEAT_LAUNCH_BOUND, ORDERED && W == 1 ? HEAT_FUSED_OCCUPANCY : 0)
    heat_zahead(T *__restrict__ f, const T *__restrict__ u, stencil_shape s, stencil_coeffs<T> c, halo_coeffs<T> h,
                int zchunk, march_order o)
{
    using V = row_values<T, W>;
    int bx = (int)blockIdx.x, by = (int)blockIdx.y, bz = (int)blockIdx.z;
    if (ORDERED) march_tile(o, bx, by, bz);
    const int i = W * (int)(threadIdx.x + bx * blockDim.x);
    const int j = M * (int)(threadIdx.y + by * blockDim.y);
    const int k0 = bz * zchunk, k1 = k0 + zchunk < s.nz ? k0 + zchunk : s.nz;
    if (i >= s.nx || j >= s.ny) return;
    const int valid = s.nx - i < W ? s.nx - i : W;
    const long start = i + j * s.sy + (long)k0 * s.sz;
    const T *p = u + start; /* plane k of the thread's first row, point i */
    T *q = f + start;
    auto row = [&](const T *at) { return *reinterpret_cast<const V *>(at); };
    /* Plane t's rows; the chunk's last plane needs plane k1 (a ghost or the next chunk's), and
     * planes beyond it read plane k1 again (from L1) rather than past the field. */
    const T *column = u + i + j * s.sy;
    auto plane = [&](int t, V (&rows)[M]) {
        const T *at = column + (long)(t < k1 ? t : k1) * s.sz;
#pragma unroll
        for (int n = 0; n < M; ++n) rows[n] = row(at + n * s.sy);
    };
    /* window[0] plane k - 1, [1] k, [2] k + 1, [2 + d] k + 1 + d: loaded, or on their way */
    V window[3 + D][M];
#pragma unroll
    for (int d = 0; d < 3 + D; ++d) plane(k0 - 1 + d, window[d]);
    for (int k = k0; k < k1; ++k, p += s.sz, q += s.sz) {
        V incoming[M];
        plane(k + 2 + D, incoming);
        const V south = row(p - s.sy), north = row(p + M * s.sy);
        T west[M], east[M];
#pragma unroll
        for (int n = 0; n < M; ++n) west[n] = p[n * s.sy - 1], east[n] = p[n * s.sy + W];
#pragma unroll
        for (int n = 0; n < M; ++n) {
            const V v = zahead_row<T, W, M>(n, window[0], window[1], window[2], south, north, west[n], east[n], i, s,
                                            c, h);
            if (j + n < s.ny) store_row<T, W>(v, q + n * s.sy, valid);
        }
#pragma unroll
        for (int d = 0; d < 2 + D; ++d)
#pragma unroll
            for (int n = 0; n < M; ++n) window[d][n] = window[d + 1][n];
#pragma unroll
        for (int n = 0; n < M; ++n) window[2 + D][n] = incoming[n];
    }
}
