/*
 * heat_zahead<W, M, D, GHOSTS>: the single heat step marching along z (as
 * heat_zwide does) with the loads of D planes beyond `above` in flight while a
 * plane's arithmetic runs. A marching thread that loads `above` and then waits
 * for it keeps one plane's M rows of W points in flight; a faster memory at the
 * same latency needs more bytes in flight per SM (Little's law), so each plane
 * here is loaded D + 1 iterations before its first use, from registers that
 * cost (3 + D) M W values a thread rather than more threads.
 * Rows are loaded and stored as aligned vectors of W points (one 8- or 16-byte
 * access each; 32 bytes split in two). Every point is heat_point's expression,
 * so the bits are every other heat kernel's. GHOSTS 1: x ghosts made on the
 * fly and the y and z ghosts of the output written (no halo pass before the
 * next step); 2: x ghosts made on the fly only (a y/z halo pass before each step).
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

/* The ghost row across face f beside the owned row v (halo_fill's rule). */
template <typename T, int W>
__device__ __forceinline__ row_values<T, W> ghost_row(const row_values<T, W> &v, const halo_coeffs<T> &h, int f)
{
    row_values<T, W> g;
#pragma unroll
    for (int w = 0; w < W; ++w) g.v[w] = h.shift[f] + h.scale[f] * v.v[w];
    return g;
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

/* Planes [k0, k1) of the thread's M rows of W points (i, j), upwards or (DOWN) downwards. HINT > 0:
 * the rows HINT planes beyond the last loaded one are hinted into L2 (no register holds them). */
template <typename T, int W, int M, int D, int GHOSTS, int HINT, bool DOWN>
__device__ __forceinline__ void zahead_march(T *__restrict__ f, const T *__restrict__ u, const stencil_shape &s,
                                             const stencil_coeffs<T> &c, const halo_coeffs<T> &h, int i, int j,
                                             int k0, int k1)
{
    using V = row_values<T, W>;
    constexpr int dir = DOWN ? -1 : 1;
    const int valid = s.nx - i < W ? s.nx - i : W;
    const int first = DOWN ? k1 - 1 : k0;
    const long start = i + j * s.sy + (long)first * s.sz;
    const T *p = u + start; /* plane k of the thread's first row, point i */
    T *q = f + start;
    auto row = [&](const T *at) { return *reinterpret_cast<const V *>(at); };
    /* Plane t's rows; the chunk's end planes need planes k0 - 1 and k1 (ghosts or the neighbouring
     * chunks'), and planes beyond them read those again (from L1) rather than past the field. */
    const T *column = u + i + j * s.sy;
    auto plane = [&](int t, V (&rows)[M]) {
        const T *at = column + (long)(t < k0 - 1 ? k0 - 1 : t > k1 ? k1 : t) * s.sz;
#pragma unroll
        for (int n = 0; n < M; ++n) rows[n] = row(at + n * s.sy);
    };
    /* window[0] plane k - dir, [1] k, [2] k + dir, [2 + d] k + (1 + d) dir: loaded, or on their way */
    V window[3 + D][M];
#pragma unroll
    for (int d = 0; d < 3 + D; ++d) plane(first + (d - 1) * dir, window[d]);
    for (int k = first, left = k1 - k0; left > 0; --left, k += dir, p += dir * s.sz, q += dir * s.sz) {
        V incoming[M];
        plane(k + (2 + D) * dir, incoming);
        const int hinted = k + (2 + D + HINT) * dir;
        if (HINT > 0 && hinted >= k0 - 1 && hinted <= k1)
#pragma unroll
            for (int n = 0; n < M; ++n) l2_prefetch(p + (2 + D + HINT) * dir * s.sz + n * s.sy);
        const V south = row(p - s.sy), north = row(p + M * s.sy);
        T west[M], east[M];
#pragma unroll
        for (int n = 0; n < M; ++n) west[n] = p[n * s.sy - 1], east[n] = p[n * s.sy + W];
#pragma unroll
        for (int n = 0; n < M; ++n) {
            /* below is z - 1 whichever way the march goes: the same arithmetic in the same order */
            const V v = zahead_row<T, W, M>(n, window[DOWN ? 2 : 0], window[1], window[DOWN ? 0 : 2], south, north,
                                            west[n], east[n], i, s, c, h);
            if (j + n >= s.ny) continue;
            T *at = q + n * s.sy;
            store_row<T, W>(v, at, valid);
            if (GHOSTS == 1) {
                if (j + n == 0 && applies(h, 2)) store_row<T, W>(ghost_row(v, h, 2), at - s.sy, valid);
                if (j + n == s.ny - 1 && applies(h, 3)) store_row<T, W>(ghost_row(v, h, 3), at + s.sy, valid);
                if (k == 0 && applies(h, 4)) store_row<T, W>(ghost_row(v, h, 4), at - s.sz, valid);
                if (k == s.nz - 1 && applies(h, 5)) store_row<T, W>(ghost_row(v, h, 5), at + s.sz, valid);
            }
        }
#pragma unroll
        for (int d = 0; d < 2 + D; ++d)
#pragma unroll
            for (int n = 0; n < M; ++n) window[d][n] = window[d + 1][n];
#pragma unroll
        for (int n = 0; n < M; ++n) window[2 + D][n] = incoming[n];
    }
}

/* ALTERNATE: the z chunks are blockIdx.x (x tiles blockIdx.y, y tiles blockIdx.z), so a column's
 * chunks start together, and odd chunks march downwards: neighbouring chunks then read the planes
 * around their common face at the same time, from one DRAM read and an L2 hit, where chunks
 * started one after another would each read them from DRAM. */
template <typename T, int W, int M, int D, int GHOSTS, int HINT, bool ALTERNATE>
__global__ void __launch_bounds__(HEAT_LAUNCH_BOUND)
    heat_zahead(T *__restrict__ f, const T *__restrict__ u, stencil_shape s, stencil_coeffs<T> c, halo_coeffs<T> h,
                int zchunk)
{
    const unsigned x_tile = ALTERNATE ? blockIdx.y : blockIdx.x, y_tile = ALTERNATE ? blockIdx.z : blockIdx.y;
    const int chunk = (int)(ALTERNATE ? blockIdx.x : blockIdx.z);
    const int i = W * (int)(threadIdx.x + x_tile * blockDim.x);
    const int j = M * (int)(threadIdx.y + y_tile * blockDim.y);
    const int k0 = chunk * zchunk, k1 = k0 + zchunk < s.nz ? k0 + zchunk : s.nz;
    if (i >= s.nx || j >= s.ny) return;
    if (ALTERNATE && (chunk & 1)) zahead_march<T, W, M, D, GHOSTS, HINT, true>(f, u, s, c, h, i, j, k0, k1);
    else zahead_march<T, W, M, D, GHOSTS, HINT, false>(f, u, s, c, h, i, j, k0, k1);
}
