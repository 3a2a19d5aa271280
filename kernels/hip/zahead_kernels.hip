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
 * on the fly; the y and z ghosts are read (GHOSTS_X_MADE: a y/z halo pass
 * before each step) or made on the fly too (GHOSTS_MADE: no pass).
 */
#include "heat_kernels.h"

/* Row n's W new values (point (i, j + n, k)) from the window's three planes,
 * the rows south and north of the thread's M and the x neighbours outside its
 * W points; the x ghosts of physical faces are made here, and the y ones where
 * south_made / north_made say the row's neighbour there is a ghost to make. */
template <typename T, int W, int M>
__device__ __forceinline__ row_values<T, W> zahead_row(int n, const row_values<T, W> (&below)[M],
                                                       const row_values<T, W> (&here)[M],
                                                       const row_values<T, W> (&above)[M],
                                                       const row_values<T, W> &south, const row_values<T, W> &north,
                                                       T west, T east, int i, const stencil_shape &s,
                                                       const stencil_coeffs<T> &c, const halo_coeffs<T> &h,
                                                       bool south_made, bool north_made)
{
    const row_values<T, W> &ys = n == 0 ? south : here[n - 1], &yn = n == M - 1 ? north : here[n + 1];
    row_values<T, W> out;
#pragma unroll
    for (int w = 0; w < W; ++w) {
        T x_low = w == 0 ? west : here[n].v[w - 1], x_high = w == W - 1 ? east : here[n].v[w + 1];
        if (i + w == 0 && applies(h, 0)) x_low = h.shift[0] + h.scale[0] * here[n].v[w];
        if (i + w == s.nx - 1 && applies(h, 1)) x_high = h.shift[1] + h.scale[1] * here[n].v[w];
        const T y_low = south_made ? made_ghost(h, 2, here[n].v[w]) : ys.v[w];
        const T y_high = north_made ? made_ghost(h, 3, here[n].v[w]) : yn.v[w];
        out.v[w] = heat_point(below[n].v[w], y_low, x_low, here[n].v[w], x_high, y_high, above[n].v[w], c);
    }
    return out;
}

/* ORDERED: the blocks take their tiles and chunks in march_order o's order.
 * GHOSTS: GHOSTS_X_MADE or GHOSTS_MADE. The order, and the made ghosts in
 * float, are held to the plain march's 8 blocks an SM (the order's indices, or
 * the faces' tests, would otherwise keep 8 more registers a thread live; double
 * with made ghosts spills under that cap). */
template <typename T, int W, int M, int D, bool ORDERED, int GHOSTS>
__global__ void __launch_bounds__(HEAT_LAUNCH_BOUND, (ORDERED || (GHOSTS == GHOSTS_MADE && sizeof(T) == 4)) && W == 1
                                                         ? HEAT_FUSED_OCCUPANCY
                                                         : 0)
    heat_zahead(T *__restrict__ f, const T *__restrict__ u, stencil_shape s, stencil_coeffs<T> c, halo_coeffs<T> h,
                int zchunk, march_order o)
{
    using V = row_values<T, W>;
    constexpr bool made = GHOSTS == GHOSTS_MADE;
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
    /* made: the ghosts of physical y and z faces from the owned values beside them, where they are
     * used (the ghost plane below the first plane replaces the loaded one at the start, the one
     * above the last plane is made in its iteration) */
    const bool made_south = made && j == 0 && applies(h, 2), made_north = made && applies(h, 3);
    const bool made_top = made && applies(h, 5);
    /* window[0] plane k - 1, [1] k, [2] k + 1, [2 + d] k + 1 + d: loaded, or on their way */
    V window[3 + D][M];
#pragma unroll
    for (int d = 0; d < 3 + D; ++d) plane(k0 - 1 + d, window[d]);
    if (made && k0 == 0 && applies(h, 4))
#pragma unroll
        for (int n = 0; n < M; ++n)
#pragma unroll
            for (int w = 0; w < W; ++w) window[0][n].v[w] = made_ghost(h, 4, window[1][n].v[w]);
    for (int k = k0; k < k1; ++k, p += s.sz, q += s.sz) {
        V incoming[M];
        plane(k + 2 + D, incoming);
        const V south = row(p - s.sy), north = row(p + M * s.sy);
        T west[M], east[M];
#pragma unroll
        for (int n = 0; n < M; ++n) west[n] = p[n * s.sy - 1], east[n] = p[n * s.sy + W];
        if (made_top && k == s.nz - 1)
#pragma unroll
            for (int n = 0; n < M; ++n)
#pragma unroll
                for (int w = 0; w < W; ++w) window[2][n].v[w] = made_ghost(h, 5, window[1][n].v[w]);
#pragma unroll
        for (int n = 0; n < M; ++n) {
            const V v = zahead_row<T, W, M>(n, window[0], window[1], window[2], south, north, west[n], east[n], i, s,
                                            c, h, n == 0 && made_south, made_north && j + n == s.ny - 1);
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
