/*
 * The stencil kernels (seeds 000, 001, 003). Kept side by side and chosen at
 * run time by name:
 *   lap_baseline         seeds' kernel 1: one point per thread, their operation order
 *   lap_tiled<M>         seeds' kernel 3: M points per thread along y, loads in ascending order
 *   lap_tiled_nt<M>      the same with nontemporal stores and __launch_bounds__
 *   heat_tiled<M>        fused heat step u + alpha dt lap(u) in kernel 3's form
 *   heat_tiled_nt<M>     the same with nontemporal stores and __launch_bounds__
 *   heat_zwindow<M>      sliding window along z (seed 003): each thread marches
 *                        through a chunk of planes keeping z-1, z, z+1 of its M
 *                        rows in registers; y neighbours inside the tile come from
 *                        registers too, only x neighbours and tile edges from cache.
 *   heat_wide_nt<W, M>   heat_tiled_nt with W points along x a thread, loaded as
 *                        one aligned vector (heat_pairs_nt: W = 2, heat_quads_nt:
 *                        W = 4): more bytes in flight a load instruction
 *   heat_zwide<W, M>     the same marching along z as heat_zwindow does
 *                        (heat_zpairsf32, heat_zquadsf32)
 *   heat_pairs_ntx<M>    heat_pairs_nt making the x ghosts on the fly: the halo
 *                        pass before it fills the y and z faces only (whole rows)
 *   heat_zahead<W, M, D> (zahead_kernels.hip) heat_zwindow with the loads of the
 *                        planes D beyond `above` in flight during a plane's arithmetic
 *   heat_zwindowg<Z>r    heat_zwindow making every ghost of a physical face on
 *                        the fly from the owned value beside it (GHOSTS_MADE):
 *                        no halo pass before it, none written by it
 *   heat_zwideg<W, M>    (zwideg_kernels.hip) heat_zwindowg's march with W points
 *                        along x a thread, a row one vector load and store; MIRRORED:
 *                        down the field (the turning entries' every other launch)
 * FUSED heat kernels also write the ghosts of the field they produce, so a
 * time step is one kernel; the others need a halo_fill launch before each step.
 */
#include "heat_kernels.h"

template <typename T>
__global__ void lap_baseline(T *__restrict__ f, const T *__restrict__ u, stencil_shape s, stencil_coeffs<T> c)
{
    const int i = threadIdx.x + blockIdx.x * blockDim.x;
    const int j = threadIdx.y + blockIdx.y * blockDim.y;
    const int k = threadIdx.z + blockIdx.z * blockDim.z;
    if (i >= s.nx || j >= s.ny || k >= s.nz) return;
    const long pos = i + j * s.sy + k * s.sz;
    f[pos] = u[pos] * c.diag + (u[pos - 1] + u[pos + 1]) * c.hx + (u[pos - s.sy] + u[pos + s.sy]) * c.hy +
             (u[pos - s.sz] + u[pos + s.sz]) * c.hz;
}

/* ghost = shift + scale * adjacent owned value, per face (x low, x high,
 * y low, y high, z low, z high): Neumann (0, 1), Dirichlet (2 g, -1);
 * except on exchanged faces (bit f), whose ghosts the halo exchange writes
 * (a neighbouring rank's block, or the far side of a periodic axis). */
template <typename T> struct halo_coeffs {
    T shift[6], scale[6];
    unsigned exchanged;
};

template <typename T> __device__ __forceinline__ bool applies(const halo_coeffs<T> &h, int face)
{
    return !(h.exchanged & (1u << face));
}

template <typename T, bool NT> __device__ __forceinline__ void store(T *address, T value)
{
    if (NT) nontemporal_store(value, address);
    else *address = value;
}

/* Fused halo fill: a heat kernel that writes a point on a y or z face also
 * writes the ghost beside it (whole coalesced rows), so the next step needs no
 * halo pass. x-face ghosts would be one strided 8-byte store per row (partial
 * DRAM sectors, slower): fused kernels compute them on the fly
 * instead (x_neighbours). Same arithmetic as halo_fill and the CPU backend,
 * hence the same bits. */
template <typename T, bool NT>
__device__ __forceinline__ void store_with_ghosts(T *q, T v, int j, int k, const stencil_shape &s,
                                                  const halo_coeffs<T> &h)
{
    store<T, NT>(q, v);
    if (j == 0 && applies(h, 2)) store<T, NT>(q - s.sy, h.shift[2] + h.scale[2] * v);
    if (j == s.ny - 1 && applies(h, 3)) store<T, NT>(q + s.sy, h.shift[3] + h.scale[3] * v);
    if (k == 0 && applies(h, 4)) store<T, NT>(q - s.sz, h.shift[4] + h.scale[4] * v);
    if (k == s.nz - 1 && applies(h, 5)) store<T, NT>(q + s.sz, h.shift[5] + h.scale[5] * v);
}

/* How a kernel comes by the ghosts of physical faces (exchanged faces' ghosts
 * are always read): GHOSTS_READ all from the field (a halo pass of the six
 * faces before it); GHOSTS_WRITTEN x made on the fly, the y and z ones of its
 * output written (store_with_ghosts: no pass before the next step);
 * GHOSTS_X_MADE x made on the fly, y and z read (a y/z pass before it);
 * GHOSTS_MADE all made on the fly where they are needed, none read or written:
 * no pass at all, and only whole-row or whole-plane branches (a warp's threads
 * share their row and plane). */
enum { GHOSTS_READ = 0, GHOSTS_WRITTEN = 1, GHOSTS_X_MADE = 2, GHOSTS_MADE = 3 };

/* The ghost beyond `face` of owned value `inner`: halo_fill's expression, hence its bits. */
template <typename T> __device__ __forceinline__ T made_ghost(const halo_coeffs<T> &h, int face, T inner)
{
    return h.shift[face] + h.scale[face] * inner;
}

/* West and east neighbours of row point p; FUSED kernels make the x-face
 * ghost values here rather than reading them. */
template <typename T, bool FUSED>
__device__ __forceinline__ void x_neighbours(const T *p, T centre, int i, const stencil_shape &s,
                                             const halo_coeffs<T> &h, T &west, T &east)
{
    if (FUSED) {
        west = i == 0 && applies(h, 0) ? h.shift[0] + h.scale[0] * centre : p[-1];
        east = i == s.nx - 1 && applies(h, 1) ? h.shift[1] + h.scale[1] * centre : p[1];
    } else {
        west = p[-1];
        east = p[1];
    }
}

/* Laplacian of the M rows of a tile starting at p (owned point (i, j, k)),
 * loads in ascending address order, y neighbours inside the tile reused from
 * registers. FUSED: x-face ghosts are made on the fly (x_neighbours). */
template <typename T, int M, bool FUSED>
__device__ __forceinline__ void tile_laplacian(const T *p, int i, const stencil_shape &s, const stencil_coeffs<T> &c,
                                               const halo_coeffs<T> &h, T centre[M], T lap[M])
{
#pragma unroll
    for (int n = 0; n < M; ++n) lap[n] = p[n * s.sy - s.sz] * c.hz; /* z - 1 */
    lap[0] = fma(p[-s.sy], c.hy, lap[0]);                            /* y - 1 of the first row */
#pragma unroll
    for (int n = 0; n < M; ++n) {
        T west, east;
        centre[n] = p[n * s.sy];
        x_neighbours<T, FUSED>(p + n * s.sy, centre[n], i, s, h, west, east);
        if (n > 0) lap[n] = fma(centre[n - 1], c.hy, lap[n]); /* reuse: y - 1 */
        lap[n] = fma(west, c.hx, lap[n]);
        lap[n] = fma(centre[n], c.diag, lap[n]);
        lap[n] = fma(east, c.hx, lap[n]);
        if (n > 0) lap[n - 1] = fma(centre[n], c.hy, lap[n - 1]); /* reuse: y + 1 of the previous row */
    }
    lap[M - 1] = fma(p[M * s.sy], c.hy, lap[M - 1]); /* y + 1 of the last row */
#pragma unroll
    for (int n = 0; n < M; ++n) lap[n] = fma(p[n * s.sy + s.sz], c.hz, lap[n]); /* z + 1 */
}

/* Seeds' kernel 3 generalised: HEAT selects u + alpha dt lap over lap. */
template <typename T, int M, bool HEAT, bool NT, bool FUSED>
__device__ __forceinline__ void tiled_body(T *__restrict__ out, const T *__restrict__ u, const stencil_shape &s,
                                           const stencil_coeffs<T> &c, const halo_coeffs<T> &h)
{
    const int i = threadIdx.x + blockIdx.x * blockDim.x;
    const int j = M * (threadIdx.y + blockIdx.y * blockDim.y);
    const int k = threadIdx.z + blockIdx.z * blockDim.z;
    if (i >= s.nx || j >= s.ny || k >= s.nz) return;
    const long pos = i + j * s.sy + k * s.sz;
    T lap[M], centre[M];
    tile_laplacian<T, M, HEAT && FUSED>(u + pos, i, s, c, h, centre, lap);
    T *q = out + pos;
#pragma unroll
    for (int n = 0; n < M; ++n) {
        if (j + n < s.ny) {
            if (HEAT && FUSED) store_with_ghosts<T, NT>(q + n * s.sy, fma(c.alpha_dt, lap[n], centre[n]), j + n, k, s, h);
            else store<T, NT>(q + n * s.sy, HEAT ? fma(c.alpha_dt, lap[n], centre[n]) : lap[n]);
        }
    }
}

template <typename T, int M>
__global__ void lap_tiled(T *__restrict__ f, const T *__restrict__ u, stencil_shape s, stencil_coeffs<T> c,
                          halo_coeffs<T> h)
{
    tiled_body<T, M, false, false, false>(f, u, s, c, h);
}

template <typename T, int M>
__global__ void __launch_bounds__(HEAT_LAUNCH_BOUND)
    lap_tiled_nt(T *__restrict__ f, const T *__restrict__ u, stencil_shape s, stencil_coeffs<T> c, halo_coeffs<T> h)
{
    tiled_body<T, M, false, true, false>(f, u, s, c, h);
}

template <typename T, int M>
__global__ void heat_tiled(T *__restrict__ f, const T *__restrict__ u, stencil_shape s, stencil_coeffs<T> c,
                          halo_coeffs<T> h)
{
    tiled_body<T, M, true, false, false>(f, u, s, c, h);
}

template <typename T, int M, bool FUSED>
__global__ void __launch_bounds__(HEAT_LAUNCH_BOUND, FUSED && M * sizeof(T) <= 16 ? HEAT_FUSED_OCCUPANCY : 0)
    heat_tiled_nt(T *__restrict__ f, const T *__restrict__ u, stencil_shape s, stencil_coeffs<T> c, halo_coeffs<T> h)
{
    tiled_body<T, M, true, true, FUSED>(f, u, s, c, h);
}

/* Sliding window along z over planes [blockIdx.z * zchunk, + zchunk) (ORDERED:
 * the blocks take their tiles and chunks in march_order o's order). GHOSTS:
 * GHOSTS_READ, GHOSTS_WRITTEN or GHOSTS_MADE. */
template <typename T, int M, int GHOSTS, bool ORDERED>
__global__ void __launch_bounds__(HEAT_LAUNCH_BOUND,
                                  GHOSTS != GHOSTS_READ && M * sizeof(T) <= 8 ? HEAT_FUSED_OCCUPANCY : 0)
    heat_zwindow(T *__restrict__ f, const T *__restrict__ u, stencil_shape s, stencil_coeffs<T> c, halo_coeffs<T> h,
                 int zchunk, march_order o)
{
    constexpr bool made = GHOSTS == GHOSTS_MADE;
    int bx = (int)blockIdx.x, by = (int)blockIdx.y, bz = (int)blockIdx.z;
    if (ORDERED) march_tile(o, bx, by, bz);
    const int i = threadIdx.x + bx * blockDim.x;
    const int j = M * (threadIdx.y + by * blockDim.y);
    const int k0 = bz * zchunk;
    const int k1 = k0 + zchunk < s.nz ? k0 + zchunk : s.nz;
    if (i >= s.nx || j >= s.ny) return;
    const long start = i + j * s.sy + k0 * s.sz;
    const T *p = u + start;
    T *q = f + start;
    /* made: the planes beyond the z faces and the rows beyond the y faces from the owned ones */
    const bool made_below = made && k0 == 0 && applies(h, 4), made_south = made && j == 0 && applies(h, 2);
    const bool made_top = made && applies(h, 5), made_north = made && applies(h, 3);
    T below[M], here[M], above[M];
#pragma unroll
    for (int n = 0; n < M; ++n) {
        if (made) {
            here[n] = p[n * s.sy];
            below[n] = made_below ? made_ghost(h, 4, here[n]) : p[n * s.sy - s.sz];
        } else below[n] = p[n * s.sy - s.sz], here[n] = p[n * s.sy];
    }
    for (int k = k0; k < k1; ++k, p += s.sz, q += s.sz) {
        const T south = made_south ? made_ghost(h, 2, here[0]) : p[-s.sy];
        T west[M], east[M];
#pragma unroll
        for (int n = 0; n < M; ++n)
            x_neighbours<T, GHOSTS != GHOSTS_READ>(p + n * s.sy, here[n], i, s, h, west[n], east[n]);
        const T north = p[M * s.sy];
        if (made_top && k == s.nz - 1) {
#pragma unroll
            for (int n = 0; n < M; ++n) above[n] = made_ghost(h, 5, here[n]);
        } else {
#pragma unroll
            for (int n = 0; n < M; ++n) above[n] = p[n * s.sy + s.sz];
        }
#pragma unroll
        for (int n = 0; n < M; ++n) {
            T yn = n == M - 1 ? north : here[n + 1];
            if (made_north && j + n == s.ny - 1) yn = made_ghost(h, 3, here[n]);
            T lap = below[n] * c.hz;
            lap = fma(n == 0 ? south : here[n - 1], c.hy, lap);
            lap = fma(west[n], c.hx, lap);
            lap = fma(here[n], c.diag, lap);
            lap = fma(east[n], c.hx, lap);
            lap = fma(yn, c.hy, lap);
            lap = fma(above[n], c.hz, lap);
            if (j + n >= s.ny) continue;
            if (GHOSTS == GHOSTS_WRITTEN)
                store_with_ghosts<T, true>(q + n * s.sy, fma(c.alpha_dt, lap, here[n]), j + n, k, s, h);
            else nontemporal_store(fma(c.alpha_dt, lap, here[n]), q + n * s.sy);
        }
#pragma unroll
        for (int n = 0; n < M; ++n) below[n] = here[n], here[n] = above[n];
    }
}


/* W values of a row, aligned as one vector load (16 bytes at most a load:
 * wider ones split into 16-byte loads). */
template <typename T, int W> struct alignas(sizeof(T) * W) row_values {
    T v[W];
};

/* The heat step at one point from its seven values, in the order of every heat kernel. */
template <typename T>
__device__ __forceinline__ T heat_point(T below, T south, T west, T centre, T east, T north, T above,
                                        const stencil_coeffs<T> &c)
{
    T lap = below * c.hz;
    lap = fma(south, c.hy, lap);
    lap = fma(west, c.hx, lap);
    lap = fma(centre, c.diag, lap);
    lap = fma(east, c.hx, lap);
    lap = fma(north, c.hy, lap);
    lap = fma(above, c.hz, lap);
    return fma(c.alpha_dt, lap, centre);
}

/* The M rows of W points at q (point (i, j, k)) from their planes below,
 * here and above, the rows south and north of them and the single x
 * neighbours outside the W points. Points at nx or beyond (the ghost, the
 * row's padding) are read and not written. GHOSTS 1: x ghosts made on the
 * fly, y and z ghosts written (store_with_ghosts); 2: x ghosts made on the
 * fly only (the y and z ones read, as halo_fill left them); 0: all read. */
template <typename T, int W, int M, int GHOSTS>
__device__ __forceinline__ void wide_rows(T *q, const row_values<T, W> below[M], const row_values<T, W> here[M],
                                          const row_values<T, W> above[M], const row_values<T, W> &south,
                                          const row_values<T, W> &north, const T west[M], const T east[M], int i,
                                          int j, int k, const stencil_shape &s, const stencil_coeffs<T> &c,
                                          const halo_coeffs<T> &h)
{
#pragma unroll
    for (int n = 0; n < M; ++n) {
        const row_values<T, W> &ys = n == 0 ? south : here[n - 1], &yn = n == M - 1 ? north : here[n + 1];
        if (j + n >= s.ny) continue;
#pragma unroll
        for (int w = 0; w < W; ++w) {
            T x_low = w == 0 ? west[n] : here[n].v[w - 1], x_high = w == W - 1 ? east[n] : here[n].v[w + 1];
            if (GHOSTS > 0) {
                if (i + w == 0 && applies(h, 0)) x_low = h.shift[0] + h.scale[0] * here[n].v[w];
                if (i + w == s.nx - 1 && applies(h, 1)) x_high = h.shift[1] + h.scale[1] * here[n].v[w];
            }
            const T v = heat_point(below[n].v[w], ys.v[w], x_low, here[n].v[w], x_high, yn.v[w], above[n].v[w], c);
            if (i + w >= s.nx) break;
            if (GHOSTS == 1) store_with_ghosts<T, true>(q + n * s.sy + w, v, j + n, k, s, h);
            else nontemporal_store(v, q + n * s.sy + w);
        }
    }
}

/* Points i .. i + W - 1 (i a multiple of W) of M rows a thread. Every row
 * starts on an aligned boundary, so they are one aligned vector load: the
 * loads of a step are as many as heat_tiled_nt's for 1/W of the threads,
 * each moving W times the bytes (more bytes in flight per SM, what a faster
 * memory needs at the same latency). The x neighbours outside the W points
 * are single loads that the neighbouring threads' vectors brought into
 * cache. */
template <typename T, int W, int M, int GHOSTS>
__global__ void __launch_bounds__(HEAT_LAUNCH_BOUND)
    heat_wide_nt(T *__restrict__ f, const T *__restrict__ u, stencil_shape s, stencil_coeffs<T> c, halo_coeffs<T> h)
{
    using V = row_values<T, W>;
    const int i = W * (int)(threadIdx.x + blockIdx.x * blockDim.x);
    const int j = M * (int)(threadIdx.y + blockIdx.y * blockDim.y);
    const int k = (int)(threadIdx.z + blockIdx.z * blockDim.z);
    if (i >= s.nx || j >= s.ny || k >= s.nz) return;
    const long pos = i + j * s.sy + k * s.sz;
    const T *p = u + pos;
    auto row = [&](long at) { return *reinterpret_cast<const V *>(p + at); };
    V below[M], here[M], above[M];
    T west[M], east[M];
#pragma unroll
    for (int n = 0; n < M; ++n) below[n] = row(n * s.sy - s.sz);
    const V south = row(-s.sy);
#pragma unroll
    for (int n = 0; n < M; ++n) here[n] = row(n * s.sy), west[n] = p[n * s.sy - 1], east[n] = p[n * s.sy + W];
    const V north = row(M * s.sy);
#pragma unroll
    for (int n = 0; n < M; ++n) above[n] = row(n * s.sy + s.sz);
    wide_rows<T, W, M, GHOSTS>(f + pos, below, here, above, south, north, west, east, i, j, k, s, c, h);
}

/* heat_wide_nt marching along z through planes [blockIdx.z * zchunk, +
 * zchunk), as heat_zwindow does: each plane's M rows are loaded once (as
 * `above`) and kept in registers for the next two planes. */
template <typename T, int W, int M, int GHOSTS>
__global__ void __launch_bounds__(HEAT_LAUNCH_BOUND)
    heat_zwide(T *__restrict__ f, const T *__restrict__ u, stencil_shape s, stencil_coeffs<T> c, halo_coeffs<T> h,
               int zchunk)
{
    using V = row_values<T, W>;
    const int i = W * (int)(threadIdx.x + blockIdx.x * blockDim.x);
    const int j = M * (int)(threadIdx.y + blockIdx.y * blockDim.y);
    const int k0 = (int)blockIdx.z * zchunk, k1 = k0 + zchunk < s.nz ? k0 + zchunk : s.nz;
    if (i >= s.nx || j >= s.ny) return;
    const long start = i + j * s.sy + k0 * s.sz;
    const T *p = u + start;
    T *q = f + start;
    auto row = [&](long at) { return *reinterpret_cast<const V *>(p + at); };
    V below[M], here[M], above[M];
#pragma unroll
    for (int n = 0; n < M; ++n) below[n] = row(n * s.sy - s.sz), here[n] = row(n * s.sy);
    for (int k = k0; k < k1; ++k, p += s.sz, q += s.sz) {
        T west[M], east[M];
        const V south = row(-s.sy);
#pragma unroll
        for (int n = 0; n < M; ++n) west[n] = p[n * s.sy - 1], east[n] = p[n * s.sy + W];
        const V north = row(M * s.sy);
#pragma unroll
        for (int n = 0; n < M; ++n) above[n] = row(n * s.sy + s.sz);
        wide_rows<T, W, M, GHOSTS>(q, below, here, above, south, north, west, east, i, j, k, s, c, h);
#pragma unroll
        for (int n = 0; n < M; ++n) below[n] = here[n], here[n] = above[n];
    }
}

/* Point (a, b) of face `face`: the owned point next to it (inner), the step
 * to its ghost, and its index in a packed face (a fastest). False outside. */
__device__ __forceinline__ bool face_point(int face, int a, int b, const stencil_shape &s, long &inner, long &step,
                                           long &packed)
{
    const int high = face & 1;
    if (face < 2) { /* x faces: a runs along y, b along z */
        if (a >= s.ny || b >= s.nz) return false;
        inner = a * s.sy + b * s.sz + (high ? s.nx - 1 : 0), step = 1, packed = a + (long)b * s.ny;
    } else if (face < 4) { /* y faces: a along x, b along z */
        if (a >= s.nx || b >= s.nz) return false;
        inner = a + b * s.sz + (high ? (long)(s.ny - 1) * s.sy : 0), step = s.sy, packed = a + (long)b * s.nx;
    } else { /* z faces: a along x, b along y */
        if (a >= s.nx || b >= s.ny) return false;
        inner = a + b * s.sy + (high ? (long)(s.nz - 1) * s.sz : 0), step = s.sz, packed = a + (long)b * s.nx;
    }
    if (!high) step = -step;
    return true;
}

/* Faces first_face .. 5, one a blockIdx.z. */
template <typename T> __global__ void halo_fill(T *u, stencil_shape s, halo_coeffs<T> h, int first_face)
{
    const int face = (int)blockIdx.z + first_face;
    long inner, step, packed;
    if (!applies(h, face) ||
        !face_point(face, threadIdx.x + blockIdx.x * blockDim.x, threadIdx.y + blockIdx.y * blockDim.y, s, inner, step, packed))
        return;
    u[inner + step] = h.shift[face] + h.scale[face] * u[inner];
}

/* Halo exchange on the device: the owned plane next to face blockIdx.z into
 * buffer[face] (pack), or buffer[face] into that face's ghosts (unpack), for
 * the faces in `faces`. Same point order as the CPU backend's faces. */
struct face_buffers {
    void *at[6];
};

template <typename T> __global__ void face_copy(T *u, stencil_shape s, face_buffers buffers, unsigned faces, int pack)
{
    const int face = blockIdx.z;
    long inner, step, packed;
    if (!(faces & (1u << face)) ||
        !face_point(face, threadIdx.x + blockIdx.x * blockDim.x, threadIdx.y + blockIdx.y * blockDim.y, s, inner, step, packed))
        return;
    T *buffer = static_cast<T *>(buffers.at[face]);
    if (pack) buffer[packed] = u[inner];
    else u[inner + step] = buffer[packed];
}

/* Min, max, sum and non-finite count of one reduction brick (solver/reduce.h). */
struct block_stats {
    double min, max, sum, nonfinite;
};

/* This block's reduction bricks: edge per axis, how many it owns per axis. */
struct brick_grid {
    int brick[3], own[3];
};

/* One thread block per brick b = (bz * own[1] + by) * own[0] + bx: thread t
 * takes the brick's points t, t + blockDim.x, ... (x fastest within the
 * brick) and the threads combine in a fixed tree. A brick is wholly one
 * rank's, so its sums have the same bits whatever the decomposition; the host
 * adds the bricks in a fixed order (heat_reduction_sum_bricks). */
template <typename T>
__global__ void __launch_bounds__(HEAT_LAUNCH_BOUND) brick_stats(const T *u, stencil_shape s, brick_grid g,
                                                                 block_stats *bricks)
{
    __shared__ block_stats shared[HEAT_LAUNCH_BOUND];
    const long b = blockIdx.x;
    const int x0 = (int)(b % g.own[0]) * g.brick[0], y0 = (int)(b / g.own[0] % g.own[1]) * g.brick[1],
              z0 = (int)(b / g.own[0] / g.own[1]) * g.brick[2];
    const int ex = min(g.brick[0], s.nx - x0), ey = min(g.brick[1], s.ny - y0), ez = min(g.brick[2], s.nz - z0);
    block_stats mine = {INFINITY, -INFINITY, 0.0, 0.0};
    const long points = (long)ex * ey * ez;
    for (long p = threadIdx.x; p < points; p += blockDim.x) {
        const long i = x0 + p % ex, j = y0 + p / ex % ey, k = z0 + p / ex / ey;
        const double v = u[i + j * s.sy + k * s.sz];
        if (!isfinite(v)) { mine.nonfinite += 1.0; continue; }
        mine.min = fmin(mine.min, v), mine.max = fmax(mine.max, v), mine.sum += v;
    }
    shared[threadIdx.x] = mine;
    __syncthreads();
    for (unsigned half = blockDim.x / 2; half > 0; half /= 2) {
        if (threadIdx.x < half) {
            block_stats &a = shared[threadIdx.x];
            const block_stats &c = shared[threadIdx.x + half];
            a.min = fmin(a.min, c.min), a.max = fmax(a.max, c.max), a.sum += c.sum, a.nonfinite += c.nonfinite;
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) bricks[b] = shared[0];
}
