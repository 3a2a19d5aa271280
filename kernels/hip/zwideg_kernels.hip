/*
 * heat_zwideg<W, M>: heat_zwindowg's march (every ghost of a physical face
 * made on the fly, none read or written, no halo pass) with W points along x
 * a thread: each row of a plane is one aligned W-vector load and one
 * streaming vector store. A march of 4-byte accesses a thread falls short of
 * a faster memory's copy bandwidth (the H200's) however many loads are in
 * flight, where 8- and 16-byte accesses reach it (docs/PERFORMANCE.md, the
 * single sweep's model); and a thread spends its address, loop and
 * ghost-test instructions on W points instead of one. Every point is
 * heat_point's expression, so the bits are every other heat kernel's.
 * BLOCKS_PER_SM: a register cap (float's one row: 8 blocks, 32 registers).
 * Needs heat_kernels.hip and zahead_kernels.hip (row_values, heat_point,
 * made_ghost, store_row) before it.
 */

/* Row n's W new values: x_low / x_high are the neighbours west of point 0 and
 * east of point W - 1; `last` is the index of the thread's point at nx - 1
 * (W or more where the thread holds none). */
template <typename T, int W>
__device__ __forceinline__ row_values<T, W> zwideg_row(const row_values<T, W> &below, const row_values<T, W> &ys,
                                                       const row_values<T, W> &here, const row_values<T, W> &yn,
                                                       const row_values<T, W> &above, T x_low, T x_high, int last,
                                                       const stencil_coeffs<T> &c, const halo_coeffs<T> &h)
{
    row_values<T, W> out;
#pragma unroll
    for (int w = 0; w < W; ++w) {
        const T west = w == 0 ? x_low : here.v[w - 1];
        T east = w == W - 1 ? x_high : here.v[w + 1];
        if (w < W - 1 && w == last && applies(h, 1)) east = made_ghost(h, 1, here.v[w]); /* nx not a multiple of W */
        out.v[w] = heat_point(below.v[w], ys.v[w], west, here.v[w], east, yn.v[w], above.v[w], c);
    }
    return out;
}

/* Each element of v replaced by its ghost beyond `face`. */
template <typename T, int W>
__device__ __forceinline__ row_values<T, W> made_ghosts(const halo_coeffs<T> &h, int face, const row_values<T, W> &v)
{
    row_values<T, W> g;
#pragma unroll
    for (int w = 0; w < W; ++w) g.v[w] = made_ghost(h, face, v.v[w]);
    return g;
}

/* ORDERED: the blocks take their tiles and chunks in march_order o's order. MIRRORED: the field seen
 * from its top (launch_zwideg_mirrored passes the top plane's addresses, a negative plane stride and the
 * z faces' ghost rules swapped), so the march runs down the field; the z neighbours go into heat_point in
 * the field's order, so the bits are the upward march's. */
template <typename T, int W, int M, bool ORDERED, int BLOCKS_PER_SM = 0, bool MIRRORED = false>
__global__ void __launch_bounds__(HEAT_LAUNCH_BOUND, BLOCKS_PER_SM)
    heat_zwideg(T *__restrict__ f, const T *__restrict__ u, stencil_shape s, stencil_coeffs<T> c, halo_coeffs<T> h,
                int zchunk, march_order o)
{
    using V = row_values<T, W>;
    int bx = (int)blockIdx.x, by = (int)blockIdx.y, bz = (int)blockIdx.z;
    if (ORDERED) march_tile(o, bx, by, bz);
    const int i = W * (int)(threadIdx.x + bx * blockDim.x);
    const int j = M * (int)(threadIdx.y + by * blockDim.y);
    const int k0 = bz * zchunk, k1 = k0 + zchunk < s.nz ? k0 + zchunk : s.nz;
    if (i >= s.nx || j >= s.ny) return;
    const int valid = s.nx - i < W ? s.nx - i : W, last = s.nx - 1 - i;
    const long start = i + (long)j * s.sy + (long)k0 * s.sz;
    const T *p = u + start;
    T *q = f + start;
    auto row = [&](const T *at) { return *reinterpret_cast<const V *>(at); };
    const bool made_below = k0 == 0 && applies(h, 4), made_south = j == 0 && applies(h, 2);
    const bool made_top = applies(h, 5), made_north = applies(h, 3);
    const bool made_west = i == 0 && applies(h, 0), made_east = last == W - 1 && applies(h, 1);
    V below[M], here[M], above[M];
#pragma unroll
    for (int n = 0; n < M; ++n) {
        here[n] = row(p + n * s.sy);
        below[n] = made_below ? made_ghosts<T, W>(h, 4, here[n]) : row(p + n * s.sy - s.sz);
    }
    for (int k = k0; k < k1; ++k, p += s.sz, q += s.sz) {
        const V south = made_south ? made_ghosts<T, W>(h, 2, here[0]) : row(p - s.sy);
        T west[M], east[M];
#pragma unroll
        for (int n = 0; n < M; ++n) {
            west[n] = made_west ? made_ghost(h, 0, here[n].v[0]) : p[n * s.sy - 1];
            east[n] = made_east ? made_ghost(h, 1, here[n].v[W - 1]) : p[n * s.sy + W];
        }
        const V north = row(p + M * s.sy);
        if (made_top && k == s.nz - 1) {
#pragma unroll
            for (int n = 0; n < M; ++n) above[n] = made_ghosts<T, W>(h, 5, here[n]);
        } else {
#pragma unroll
            for (int n = 0; n < M; ++n) above[n] = row(p + n * s.sy + s.sz);
        }
#pragma unroll
        for (int n = 0; n < M; ++n) {
            V yn = n == M - 1 ? north : here[n + 1];
            if (made_north && j + n == s.ny - 1) yn = made_ghosts<T, W>(h, 3, here[n]);
            const V v = zwideg_row<T, W>(MIRRORED ? above[n] : below[n], n == 0 ? south : here[n - 1], here[n], yn,
                                         MIRRORED ? below[n] : above[n], west[n], east[n], last, c, h);
            if (j + n < s.ny) store_row<T, W>(v, q + n * s.sy, valid);
        }
#pragma unroll
        for (int n = 0; n < M; ++n) below[n] = here[n], here[n] = above[n];
    }
}
