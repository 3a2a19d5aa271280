/*
 * Kernels of space order 2R, R = 2, 3, 4 (solver.space_order 4, 6, 8): the
 * central-difference Laplacian of radius R in each axis. Order 2 keeps the
 * 7-point kernels of heat_kernels.hip. Included after heat_kernels.hip and
 * cg_kernels.hip (stencil_shape, halo_coeffs, cg_span, cg_piece_sum).
 *
 * Ghosts: a field has R ghost layers on each side. On the faces that are not
 * exchanged the kernels never read them: a read past such a face takes the
 * mirrored owned point and the face's transform (order_fetch), Dirichlet
 * ghost(-1-m) = 2 g - u(m), Neumann ghost(-1-m) = u(m), exactly what a halo
 * fill would have written, so no halo pass runs before a step. Exchanged
 * faces (another rank, or a periodic axis' far side) are read as stored.
 *
 * Every kernel sums in the one order of solver/space_order.h (order_sum, with
 * fused multiply-adds), so all variants give the same bits and the tuner's
 * choice never changes a result; the CPU agrees to rounding.
 *
 *   order_point            one point per thread, every value from memory: the baseline
 *   order_zwindow<BX,BY,M,D> the seed's lessons: each thread marches along z keeping the
 *                          2R + 1 values of each of its M rows in registers (sliding
 *                          window), the plane's x and y neighbours come from a shared
 *                          tile whose rows start on cache lines (the layout's padding),
 *                          y neighbours inside a thread's M rows from registers, the
 *                          next D planes' loads in flight during the current one's
 *                          arithmetic, nontemporal stores; blocks away from the x and
 *                          y faces run a copy of the loop without the mirroring's
 *                          tests (across a z face, whole planes mirrored).
 *   order_zplanes<BX,BY,M,P> order_zwindow taking P planes a barrier (P M independent sums a
 *                          thread between barriers), every value one load at an offset fixed
 *                          for the thread, its x or y mirroring decided once a march, and a
 *                          third copy of the loop for the chunks whose reads cross no face.
 *   order_zroll<P>         order_zplanes (the kernel's ROLL flag) with its march unrolled by a
 *                          turn of a ring of window registers, so that nothing is copied from
 *                          plane to plane, and 32-bit offsets from pointers fixed for the thread.
 */

enum { ORDER_MAX_RADIUS = 4 };

/* The order-2R Laplacian's coefficients, each divided by its axis' h^2. */
template <typename T> struct order_coeffs {
    T centre;                    /* c0 (1/hx^2 + 1/hy^2 + 1/hz^2): heat_space_coeffs.diag */
    T axis[3][ORDER_MAX_RADIUS]; /* c_m / h^2 per axis, m = 1..R at [m - 1] */
    T alpha_dt;                     /* the heat step's factor; the CG operator's -theta alpha dt */
};

/* The value at (i, j, k), |overhang| <= R on at most one axis: across a face
 * that is not exchanged, the transform of the mirrored owned point. */
template <typename T>
__device__ __forceinline__ T order_fetch(const T *u, int i, int j, int k, const stencil_shape &s,
                                         const halo_coeffs<T> &h)
{
    /* constant face indices only: a run-time index into h would copy it to local memory */
    T shift = (T)0, scale = (T)1;
    bool mirrored = false;
#define ORDER_MIRROR(cond, face, coord, image)                                                                   \
    if ((cond) && applies(h, face)) coord = (image), shift = h.shift[face], scale = h.scale[face], mirrored = true;
    ORDER_MIRROR(i < 0, 0, i, -1 - i)
    else ORDER_MIRROR(i >= s.nx, 1, i, 2 * s.nx - 1 - i)
    ORDER_MIRROR(j < 0, 2, j, -1 - j)
    else ORDER_MIRROR(j >= s.ny, 3, j, 2 * s.ny - 1 - j)
    ORDER_MIRROR(k < 0, 4, k, -1 - k)
    else ORDER_MIRROR(k >= s.nz, 5, k, 2 * s.nz - 1 - k)
#undef ORDER_MIRROR
    const T v = u[i + j * s.sy + (long)k * s.sz];
    return mirrored ? shift + scale * v : v;
}

/* Plane k as stored, or, past a z face that is not exchanged, the mirrored
 * owned plane `from` whose values v read shift + scale v: order_fetch's rule
 * for a whole plane, so that blocks away from the x and y faces read by plane. */
template <typename T>
__device__ __forceinline__ bool order_z_mirror(int k, const stencil_shape &s, const halo_coeffs<T> &h, int &from, T &shift,
                                               T &scale)
{
    from = k;
    if (k < 0 && applies(h, 4)) from = -1 - k, shift = h.shift[4], scale = h.scale[4];
    else if (k >= s.nz && applies(h, 5)) from = 2 * s.nz - 1 - k, shift = h.shift[5], scale = h.scale[5];
    return from != k;
}

/* Where point (i, j) of a plane, |overhang| <= R on x or y, is read from: the
 * offset in its plane of the mirrored owned point and, across a face that is
 * not exchanged, the face's transform: order_fetch's rule for x and y, the
 * same in every plane, so that blocks near those faces decide it once. */
template <typename T>
__device__ __forceinline__ bool order_xy_mirror(int i, int j, const stencil_shape &s, const halo_coeffs<T> &h, int &at,
                                                T &shift, T &scale)
{
    bool mirrored = false;
#define ORDER_MIRROR(cond, face, coord, image)                                                                   \
    if ((cond) && applies(h, face)) coord = (image), shift = h.shift[face], scale = h.scale[face], mirrored = true;
    ORDER_MIRROR(i < 0, 0, i, -1 - i)
    else ORDER_MIRROR(i >= s.nx, 1, i, 2 * s.nx - 1 - i)
    ORDER_MIRROR(j < 0, 2, j, -1 - j)
    else ORDER_MIRROR(j >= s.ny, 3, j, 2 * s.ny - 1 - j)
#undef ORDER_MIRROR
    at = i + j * s.sy;
    return mirrored;
}

/* lap from the 6R + 1 values, zlo[m] = u[z - 1 - m] and so on, in the order
 * every backend sums in (solver/space_order.h, heat_space_coeffs: ascending
 * addresses), each product fused into its addition by an explicit fma: half
 * the instructions of a product and an addition (the kernels are bound by
 * instruction issue at order 8, and -fmad=false forbids the compiler's own
 * contraction), and still one rounding sequence for every variant. The CPU's
 * rows (kernels/cpu/cpu_wide.h) fuse the same products in the same order;
 * the tests ask the two only to agree to rounding. */
template <typename T, int R>
__device__ __forceinline__ T order_sum(const order_coeffs<T> &c, const T (&zlo)[R], const T (&ylo)[R], const T (&xlo)[R],
                                       T centre, const T (&xhi)[R], const T (&yhi)[R], const T (&zhi)[R])
{
    T lap = zlo[R - 1] * c.axis[2][R - 1];
#pragma unroll
    for (int m = R - 2; m >= 0; --m) lap = fma(zlo[m], c.axis[2][m], lap);
#pragma unroll
    for (int m = R - 1; m >= 0; --m) lap = fma(ylo[m], c.axis[1][m], lap);
#pragma unroll
    for (int m = R - 1; m >= 0; --m) lap = fma(xlo[m], c.axis[0][m], lap);
    lap = fma(centre, c.centre, lap);
#pragma unroll
    for (int m = 0; m < R; ++m) lap = fma(xhi[m], c.axis[0][m], lap);
#pragma unroll
    for (int m = 0; m < R; ++m) lap = fma(yhi[m], c.axis[1][m], lap);
#pragma unroll
    for (int m = 0; m < R; ++m) lap = fma(zhi[m], c.axis[2][m], lap);
    return lap;
}

/* lap(u) at owned point (i, j, k), every value through order_fetch. */
template <typename T, int R>
__device__ __forceinline__ T order_point_laplacian(const T *u, int i, int j, int k, const stencil_shape &s,
                                                   const order_coeffs<T> &c, const halo_coeffs<T> &h, T &centre)
{
    T zlo[R], ylo[R], xlo[R], xhi[R], yhi[R], zhi[R];
#pragma unroll
    for (int m = 0; m < R; ++m) {
        zlo[m] = order_fetch(u, i, j, k - 1 - m, s, h), zhi[m] = order_fetch(u, i, j, k + 1 + m, s, h);
        ylo[m] = order_fetch(u, i, j - 1 - m, k, s, h), yhi[m] = order_fetch(u, i, j + 1 + m, k, s, h);
        xlo[m] = order_fetch(u, i - 1 - m, j, k, s, h), xhi[m] = order_fetch(u, i + 1 + m, j, k, s, h);
    }
    centre = u[i + j * s.sy + (long)k * s.sz];
    return order_sum<T, R>(c, zlo, ylo, xlo, centre, xhi, yhi, zhi);
}

/* The baseline: out = u + alpha dt lap(u), one point per thread. */
template <typename T, int R>
__global__ void __launch_bounds__(HEAT_LAUNCH_BOUND)
    order_point(T *__restrict__ out, const T *__restrict__ u, stencil_shape s, order_coeffs<T> c, halo_coeffs<T> h)
{
    const int i = threadIdx.x + blockIdx.x * blockDim.x;
    const int j = threadIdx.y + blockIdx.y * blockDim.y;
    const int k = threadIdx.z + blockIdx.z * blockDim.z;
    if (i >= s.nx || j >= s.ny || k >= s.nz) return;
    T centre;
    const T lap = order_point_laplacian<T, R>(u, i, j, k, s, c, h, centre);
    out[i + j * s.sy + (long)k * s.sz] = centre + c.alpha_dt * lap;
}

/* Where the tile's halo element e of a BX x (BY M) tile comes from: the R
 * rows above and below (e < 2 R BX), then R columns left and right of each
 * row (the corners are not needed by a star stencil). */
template <int R, int BX, int ROWS>
__device__ __forceinline__ void order_halo_place(int e, int &row, int &col)
{
    if (e < 2 * R * BX) {
        const int r = e / BX;
        row = r < R ? r : r + ROWS, col = R + e % BX;
    } else {
        e -= 2 * R * BX;
        const int c = e % (2 * R);
        row = R + e / (2 * R), col = c < R ? c : c + BX;
    }
}

/* Sliding window along z over planes [blockIdx.z * zchunk, + zchunk); thread
 * (tx, ty) owns column i0 + tx, rows j0 + ty M .. + M - 1. */
/* NVIDIA: registers a thread: 128 (16 warps an SM) where its rows hold at
 * most 16 bytes a plane (M = 2 doubles, 4 floats); else about 170 for
 * 128-thread blocks (12 warps) and the whole file for 256 (8 warps): the
 * window of M (2R + 1) values would spill under 128. AMD reads the hint as
 * waves per SIMD, which would spill there: none (0). */
#if defined(__CUDACC__) && !defined(__HIP_PLATFORM_AMD__)
enum { ORDER_OCCUPANCY_HINTS = 1 };
#else
enum { ORDER_OCCUPANCY_HINTS = 0 };
#endif
template <typename T, int BX, int BY, int M> struct order_occupancy {
    enum {
        blocks = !ORDER_OCCUPANCY_HINTS        ? 0
                 : M * sizeof(T) <= 8          ? 768 / (BX * BY) /* floats, 2 rows: 85 registers, 24 warps or more */
                 : M * sizeof(T) <= 16         ? 512 / (BX * BY)
                                               : 384 / (BX * BY)
    };
};

/* Halo elements a thread loads a plane: R rows above and below, R columns left and right. */
#define ORDER_PER(R, BX, BY, M) ((2 * (R) * (BX) + 2 * (R) * (BY) * (M) + (BX) * (BY) - 1) / ((BX) * (BY)))

template <typename T, int R, int BX, int BY, int M, int D, bool EDGE>
__device__ __forceinline__ void order_zwindow_body(T *__restrict__ out, const T *__restrict__ u, const stencil_shape &s,
                                                   const order_coeffs<T> &c, const halo_coeffs<T> &h, int k0, int k1,
                                                   const int (&hrow)[ORDER_PER(R, BX, BY, M)],
                                                   const int (&hcol)[ORDER_PER(R, BX, BY, M)],
                                                   const bool (&hvalid)[ORDER_PER(R, BX, BY, M)], const bool (&rvalid)[M],
                                                   T (&tiles)[2][BY * M + 2 * R][BX + 2 * R]);

/* D: the planes ahead whose loads are in flight (1 or 2). */
template <typename T, int R, int BX, int BY, int M, int D>
__global__ void __launch_bounds__(BX *BY, (order_occupancy<T, BX, BY, M>::blocks))
    order_zwindow(T *__restrict__ out, const T *__restrict__ u, stencil_shape s, order_coeffs<T> c, halo_coeffs<T> h,
                  int zchunk)
{
    constexpr int ROWS = BY * M;
    constexpr int HALO = 2 * R * BX + 2 * R * ROWS, THREADS = BX * BY, PER = ORDER_PER(R, BX, BY, M);
    __shared__ T tiles[2][ROWS + 2 * R][BX + 2 * R]; /* planes alternate: one barrier a plane */
    const int tx = threadIdx.x, ty = threadIdx.y, tid = tx + BX * ty;
    const int i0 = blockIdx.x * BX, j0 = blockIdx.y * ROWS;
    const int k0 = blockIdx.z * zchunk, k1 = min(k0 + zchunk, s.nz);
    const int i = i0 + tx, j = j0 + ty * M;

    /* This thread's halo elements: tile place, global point, whether it exists. */
    int hrow[PER], hcol[PER];
    bool hvalid[PER];
#pragma unroll
    for (int p = 0; p < PER; ++p) {
        const int e = tid + p * THREADS;
        order_halo_place<R, BX, ROWS>(e < HALO ? e : 0, hrow[p], hcol[p]);
        const int gi = i0 - R + hcol[p], gj = j0 - R + hrow[p];
        hvalid[p] = e < HALO && gi < s.nx + R && gj < s.ny + R;
    }
    bool rvalid[M];
#pragma unroll
    for (int n = 0; n < M; ++n) rvalid[n] = i < s.nx + R && j + n < s.ny + R;

    /* Blocks whose reads lie inside the owned rows (most of them) take a copy of the loop compiled
     * without the mirroring's tests and the bounds' predicates; across the z faces they read whole
     * planes mirrored (order_z_mirror), so the first and last z chunks are among them. */
    const bool edge = i0 < R || i0 + BX + R > s.nx || j0 < R || j0 + ROWS + R > s.ny;
    if (edge) order_zwindow_body<T, R, BX, BY, M, D, true>(out, u, s, c, h, k0, k1, hrow, hcol, hvalid, rvalid, tiles);
    else order_zwindow_body<T, R, BX, BY, M, D, false>(out, u, s, c, h, k0, k1, hrow, hcol, hvalid, rvalid, tiles);
}

/* order_zwindow's march over planes [k0, k1); EDGE: reads may cross an x or y face (order_fetch). */
template <typename T, int R, int BX, int BY, int M, int D, bool EDGE>
__device__ __forceinline__ void order_zwindow_body(T *__restrict__ out, const T *__restrict__ u, const stencil_shape &s,
                                                   const order_coeffs<T> &c, const halo_coeffs<T> &h, int k0, int k1,
                                                   const int (&hrow)[ORDER_PER(R, BX, BY, M)],
                                                   const int (&hcol)[ORDER_PER(R, BX, BY, M)],
                                                   const bool (&hvalid)[ORDER_PER(R, BX, BY, M)], const bool (&rvalid)[M],
                                                   T (&tiles)[2][BY * M + 2 * R][BX + 2 * R])
{
    constexpr int ROWS = BY * M, W = 2 * R + 1, PER = ORDER_PER(R, BX, BY, M);
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int i0 = blockIdx.x * BX, j0 = blockIdx.y * ROWS;
    const int i = i0 + tx, j = j0 + ty * M;
    auto load = [&](int li, int lj, int lk) -> T {
        if (EDGE) return order_fetch(u, li, lj, lk, s, h);
        int from;
        T shift, scale;
        const bool mirrored = order_z_mirror(lk, s, h, from, shift, scale);
        const T v = u[li + lj * s.sy + (long)from * s.sz];
        return mirrored ? shift + scale * v : v;
    };
    auto load_front = [&](T (&front)[M], T (&halo)[PER], int k) { /* plane k + R of the rows, plane k's halo */
#pragma unroll
        for (int n = 0; n < M; ++n) front[n] = !EDGE || rvalid[n] ? load(i, j + n, k + R) : (T)0;
#pragma unroll
        for (int p = 0; p < PER; ++p) halo[p] = hvalid[p] ? load(i0 - R + hcol[p], j0 - R + hrow[p], k) : (T)0;
    };

    T w[M][W];
#pragma unroll
    for (int n = 0; n < M; ++n) {
#pragma unroll
        for (int r = 0; r < 2 * R; ++r) w[n][r] = !EDGE || rvalid[n] ? load(i, j + n, k0 - R + r) : (T)0;
    }
    /* D = 2: planes k and k + 1 in flight in two sets of registers taken in turn, so that a value
     * is used two planes after its load was issued and no register copy waits on a fresh load.
     * D = 1: one set, loaded a plane ahead. */
    T front_a[M], halo_a[PER], front_b[M], halo_b[PER];
    load_front(front_a, halo_a, k0);
    if (D == 2 && k0 + 1 < k1) load_front(front_b, halo_b, k0 + 1);

    auto plane = [&](int k, T (&front)[M], T (&halo)[PER]) {
        T halo_here[PER];
#pragma unroll
        for (int n = 0; n < M; ++n) w[n][2 * R] = front[n];
#pragma unroll
        for (int p = 0; p < PER; ++p) halo_here[p] = halo[p];
        if (k + D < k1) load_front(front, halo, k + D);
        /* The other tile was last read two planes ago, before the barrier of the previous plane. */
        T(*tile)[BX + 2 * R] = tiles[(k - k0) & 1];
#pragma unroll
        for (int n = 0; n < M; ++n) tile[R + ty * M + n][R + tx] = w[n][R];
#pragma unroll
        for (int p = 0; p < PER; ++p)
            if (hvalid[p]) tile[hrow[p]][hcol[p]] = halo_here[p];
        __syncthreads(); /* this plane's tile is whole */
#pragma unroll
        for (int n = 0; n < M; ++n) {
            T zlo[R], ylo[R], xlo[R], xhi[R], yhi[R], zhi[R];
            const int row = R + ty * M + n;
#pragma unroll
            for (int m = 0; m < R; ++m) {
                zlo[m] = w[n][R - 1 - m], zhi[m] = w[n][R + 1 + m];
                /* y neighbours among this thread's rows from registers, the others from the tile */
                ylo[m] = n - 1 - m >= 0 ? w[n - 1 - m < 0 ? 0 : n - 1 - m][R] : tile[row - 1 - m][R + tx];
                yhi[m] = n + 1 + m < M ? w[n + 1 + m < M ? n + 1 + m : 0][R] : tile[row + 1 + m][R + tx];
                xlo[m] = tile[row][R + tx - 1 - m], xhi[m] = tile[row][R + tx + 1 + m];
            }
            const T lap = order_sum<T, R>(c, zlo, ylo, xlo, w[n][R], xhi, yhi, zhi);
            if (i < s.nx && j + n < s.ny) nontemporal_store(w[n][R] + c.alpha_dt * lap, out + i + (j + n) * s.sy + (long)k * s.sz);
        }
#pragma unroll
        for (int n = 0; n < M; ++n) {
#pragma unroll
            for (int r = 0; r < 2 * R; ++r) w[n][r] = w[n][r + 1];
        }
    };
    if (D == 1) {
        for (int k = k0; k < k1; ++k) plane(k, front_a, halo_a);
    } else {
        for (int k = k0; k < k1; k += 2) {
            plane(k, front_a, halo_a);
            if (k + 1 < k1) plane(k + 1, front_b, halo_b);
        }
    }
}

/* order_zplanes: order_zwindow taking P planes a barrier. The block stores the
 * tiles of P planes, waits once, then each thread sums P M points whose chains
 * are independent (the issue fills while each waits on its fused
 * multiply-adds), and its window moves P planes, so that P planes share one
 * barrier and the window's register moves. Each point's sum is order_sum's,
 * so the bits are order_zwindow's. */
template <typename T, int BX, int BY, int M, int P> struct order_planes_occupancy {
    enum {
        blocks = !ORDER_OCCUPANCY_HINTS          ? 0
                 : M * P * sizeof(T) <= 8        ? (BX * BY >= 256 ? 768 : 640) / (BX * BY) /* about 80 or 100 registers */
                                                 : 512 / (BX * BY)
    };
};

template <typename T, int R, int BX, int BY, int M, int P, bool EDGE, bool ZFACE>
__device__ __forceinline__ void order_zplanes_body(T *__restrict__ out, const T *__restrict__ u, const stencil_shape &s,
                                                   const order_coeffs<T> &c, const halo_coeffs<T> &h, int k0, int k1,
                                                   const int (&hrow)[ORDER_PER(R, BX, BY, M)],
                                                   const int (&hcol)[ORDER_PER(R, BX, BY, M)],
                                                   const bool (&hvalid)[ORDER_PER(R, BX, BY, M)], const bool (&rvalid)[M],
                                                   T (&tiles)[2][P][BY * M + 2 * R][BX + 2 * R])
{
    constexpr int W = 2 * R + P, PER = ORDER_PER(R, BX, BY, M);
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int i0 = blockIdx.x * BX, j0 = blockIdx.y * BY * M;
    const int i = i0 + tx, j = j0 + ty * M;
    auto load = [&](int li, int lj, int lk) -> T {
        if (EDGE) return order_fetch(u, li, lj, lk, s, h);
        int from;
        T shift, scale;
        const bool mirrored = order_z_mirror(lk, s, h, from, shift, scale);
        const T v = u[li + lj * s.sy + (long)from * s.sz];
        return mirrored ? shift + scale * v : v;
    };
    /* Each value is one load at an offset fixed for the thread in its plane. EDGE: a value past an
     * x or y face is the mirrored owned point's, transformed, decided once for the march
     * (order_xy_mirror). ZFACE: the rows' planes may lie past a z face; each plane's mirroring is
     * decided once (order_z_mirror); else none is mirrored and none is tested. The halo's planes
     * are the chunk's own, never mirrored. A value past two faces (a corner) is never used. */
    int row_at[M], halo_at[PER];
    T row_shift[M], row_scale[M], halo_shift[PER], halo_scale[PER];
    bool row_xy[M], halo_xy[PER];
#pragma unroll
    for (int n = 0; n < M; ++n) {
        row_at[n] = i + (j + n) * s.sy, row_shift[n] = (T)0, row_scale[n] = (T)1;
        row_xy[n] = EDGE && order_xy_mirror(i, j + n, s, h, row_at[n], row_shift[n], row_scale[n]);
    }
#pragma unroll
    for (int p = 0; p < PER; ++p) {
        const int gi = i0 - R + hcol[p], gj = j0 - R + hrow[p];
        halo_at[p] = gi + gj * s.sy, halo_shift[p] = (T)0, halo_scale[p] = (T)1;
        halo_xy[p] = EDGE && order_xy_mirror(gi, gj, s, h, halo_at[p], halo_shift[p], halo_scale[p]);
    }
    auto load_planes = [&](T (&rows)[M], T (&halo)[PER], int lk_rows, int lk_halo) {
        int from_rows = lk_rows;
        T shift_rows = (T)0, scale_rows = (T)1;
        const bool mirrored_rows = ZFACE && order_z_mirror(lk_rows, s, h, from_rows, shift_rows, scale_rows);
        const T *plane_rows = u + (long)from_rows * s.sz, *plane_halo = u + (long)lk_halo * s.sz;
#pragma unroll
        for (int n = 0; n < M; ++n) rows[n] = !EDGE || rvalid[n] ? plane_rows[row_at[n]] : (T)0;
#pragma unroll
        for (int p = 0; p < PER; ++p) halo[p] = hvalid[p] ? plane_halo[halo_at[p]] : (T)0;
        if (EDGE) {
#pragma unroll
            for (int n = 0; n < M; ++n) rows[n] = row_xy[n] ? row_shift[n] + row_scale[n] * rows[n] : rows[n];
#pragma unroll
            for (int p = 0; p < PER; ++p) halo[p] = halo_xy[p] ? halo_shift[p] + halo_scale[p] * halo[p] : halo[p];
        }
        if (mirrored_rows) {
#pragma unroll
            for (int n = 0; n < M; ++n) rows[n] = shift_rows + scale_rows * rows[n];
        }
    };
    /* planes k + R .. k + R + P - 1 of the rows, planes k .. k + P - 1 of the halo; none past the chunk */
    auto load_group = [&](T (&front)[P][M], T (&halo)[P][PER], int k) {
#pragma unroll
        for (int q = 0; q < P; ++q) {
            if (P == 1 || k + q < k1) {
                load_planes(front[q], halo[q], k + q + R, k + q);
            } else {
#pragma unroll
                for (int n = 0; n < M; ++n) front[q][n] = (T)0;
#pragma unroll
                for (int p = 0; p < PER; ++p) halo[q][p] = (T)0;
            }
        }
    };

    T w[M][W]; /* w[n][r]: plane k - R + r of row j + n, k the group's first plane */
#pragma unroll
    for (int n = 0; n < M; ++n) {
#pragma unroll
        for (int r = 0; r < 2 * R; ++r) w[n][r] = !EDGE || rvalid[n] ? load(i, j + n, k0 - R + r) : (T)0;
    }
    T front[P][M], halo[P][PER];
    load_group(front, halo, k0);
    for (int k = k0; k < k1; k += P) {
        T halo_here[P][PER];
#pragma unroll
        for (int q = 0; q < P; ++q) {
#pragma unroll
            for (int n = 0; n < M; ++n) w[n][2 * R + q] = front[q][n];
#pragma unroll
            for (int p = 0; p < PER; ++p) halo_here[q][p] = halo[q][p];
        }
        if (k + P < k1) load_group(front, halo, k + P);
        /* The other set of tiles was last read a group ago, before the previous group's barrier. */
        T(*set)[BY * M + 2 * R][BX + 2 * R] = tiles[((k - k0) / P) & 1];
#pragma unroll
        for (int q = 0; q < P; ++q) {
#pragma unroll
            for (int n = 0; n < M; ++n) set[q][R + ty * M + n][R + tx] = w[n][R + q];
#pragma unroll
            for (int p = 0; p < PER; ++p)
                if (hvalid[p]) set[q][hrow[p]][hcol[p]] = halo_here[q][p];
        }
        __syncthreads(); /* the group's tiles are whole */
        T next[P][M];
#pragma unroll
        for (int q = 0; q < P; ++q) {
#pragma unroll
            for (int n = 0; n < M; ++n) {
                T zlo[R], ylo[R], xlo[R], xhi[R], yhi[R], zhi[R];
                const int row = R + ty * M + n;
#pragma unroll
                for (int m = 0; m < R; ++m) {
                    zlo[m] = w[n][R + q - 1 - m], zhi[m] = w[n][R + q + 1 + m];
                    ylo[m] = n - 1 - m >= 0 ? w[n - 1 - m < 0 ? 0 : n - 1 - m][R + q] : set[q][row - 1 - m][R + tx];
                    yhi[m] = n + 1 + m < M ? w[n + 1 + m < M ? n + 1 + m : 0][R + q] : set[q][row + 1 + m][R + tx];
                    xlo[m] = set[q][row][R + tx - 1 - m], xhi[m] = set[q][row][R + tx + 1 + m];
                }
                next[q][n] = w[n][R + q] + c.alpha_dt * order_sum<T, R>(c, zlo, ylo, xlo, w[n][R + q], xhi, yhi, zhi);
            }
        }
#pragma unroll
        for (int q = 0; q < P; ++q) {
#pragma unroll
            for (int n = 0; n < M; ++n)
                if ((P == 1 || k + q < k1) && i < s.nx && j + n < s.ny)
                    nontemporal_store(next[q][n], out + i + (j + n) * s.sy + (long)(k + q) * s.sz);
        }
#pragma unroll
        for (int n = 0; n < M; ++n) {
#pragma unroll
            for (int r = 0; r < 2 * R; ++r) w[n][r] = w[n][r + P];
        }
    }
}

/* order_zroll: order_zplanes without its window's register moves. Each row
 * keeps L = 2R + P + A P planes in a ring (the window of 2R + P planes and the
 * next A groups' P planes, loaded A groups ahead; the halo one group ahead),
 * and the march is unrolled by U
 * groups, a whole turn of the ring and an even number of groups, so that the
 * two sets of halo registers and of tiles alternate at compile time too: every
 * slot is a constant, the registers rotate by renaming and no value is copied
 * (order_zplanes moves M 2R window values and its halo a group). Each point's
 * sum is order_sum's, so the bits are order_zwindow's. */
template <int R, int P, int A> struct order_ring {
    enum { L = 2 * R + P + A * P, TURN = L / P, U = TURN % 2 == 0 ? TURN : 2 * TURN };
};

/* p, held as an address: nvcc would otherwise keep a base plus a 64-bit
 * index per pointer and rebuild each address from them (four instructions a
 * load); an opaque pointer plus a 32-bit offset is one multiply-add. */
template <typename P> __device__ __forceinline__ P *order_opaque(P *p)
{
#if defined(__CUDACC__) && !defined(__HIP_PLATFORM_AMD__)
    asm("" : "+l"(p));
#endif
    return p;
}

/* A read through an order_opaque pointer: the asm hides that it points to global memory, so on
 * NVIDIA the load says so (ld.global.nc, as the kernels' other reads of the read-only field). */
template <typename T> __device__ __forceinline__ T order_read(const T *p)
{
#if defined(__CUDACC__) && !defined(__HIP_PLATFORM_AMD__)
    return __ldg(p);
#else
    return *p;
#endif
}

template <typename T, int R, int BX, int BY, int M, int P, int A, bool EDGE, bool ZFACE>
__device__ __forceinline__ void order_zroll_body(T *__restrict__ out, const T *__restrict__ u, const stencil_shape &s,
                                                 const order_coeffs<T> &c, const halo_coeffs<T> &h, int k0, int k1,
                                                 const int (&hrow)[ORDER_PER(R, BX, BY, M)],
                                                 const int (&hcol)[ORDER_PER(R, BX, BY, M)],
                                                 const bool (&hvalid)[ORDER_PER(R, BX, BY, M)], const bool (&rvalid)[M],
                                                 T (&tiles)[2][P][BY * M + 2 * R][BX + 2 * R])
{
    constexpr int L = order_ring<R, P, A>::L, U = order_ring<R, P, A>::U, PER = ORDER_PER(R, BX, BY, M);
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int i0 = blockIdx.x * BX, j0 = blockIdx.y * BY * M;
    const int i = i0 + tx, j = j0 + ty * M;
    auto load = [&](int li, int lj, int lk) -> T {
        if (EDGE) return order_fetch(u, li, lj, lk, s, h);
        int from;
        T shift, scale;
        const bool mirrored = order_z_mirror(lk, s, h, from, shift, scale);
        const T v = u[li + lj * s.sy + (long)from * s.sz];
        return mirrored ? shift + scale * v : v;
    };
    /* Where each value is read from: order_zplanes_body's offsets, fixed for the thread. */
    int row_at[M], halo_at[PER];
    T row_shift[M], row_scale[M], halo_shift[PER], halo_scale[PER];
    bool row_xy[M], halo_xy[PER];
#pragma unroll
    for (int n = 0; n < M; ++n) {
        row_at[n] = i + (j + n) * s.sy, row_shift[n] = (T)0, row_scale[n] = (T)1;
        row_xy[n] = EDGE && order_xy_mirror(i, j + n, s, h, row_at[n], row_shift[n], row_scale[n]);
    }
#pragma unroll
    for (int p = 0; p < PER; ++p) {
        const int gi = i0 - R + hcol[p], gj = j0 - R + hrow[p];
        halo_at[p] = gi + gj * s.sy, halo_shift[p] = (T)0, halo_scale[p] = (T)1;
        halo_xy[p] = EDGE && order_xy_mirror(gi, gj, s, h, halo_at[p], halo_shift[p], halo_scale[p]);
    }
    /* 32-bit offsets from pointers fixed for the thread at plane k0 - R (the launcher keeps the chunk's
     * planes within 2^31 values): an address is one multiply-add, not a 64-bit product a load. */
    const T *rows_from[M], *halo_from[PER];
    T *out_from[M];
    const int sz = (int)s.sz;
#pragma unroll
    for (int n = 0; n < M; ++n) {
        rows_from[n] = order_opaque(u + (long)(k0 - R) * s.sz + row_at[n]);
        out_from[n] = order_opaque(out + (long)k0 * s.sz + i + (j + n) * s.sy);
    }
#pragma unroll
    for (int p = 0; p < PER; ++p) halo_from[p] = order_opaque(u + (long)(k0 - R) * s.sz + halo_at[p]);
    T ring[M][L];      /* ring[n][t % L]: row j + n, plane k0 - R + t */
    T halo[2][P][PER]; /* halo[g & 1][q]: plane k0 + g P + q of the halo */
    /* Group g's rows planes k + R .. k + R + P - 1, k = k0 + g P, into ring slots (g P + 2R + q) % L;
     * none past the chunk. g: a constant once unrolled. */
    auto load_rows = [&](int g, int k) {
#pragma unroll
        for (int q = 0; q < P; ++q) {
            const int slot = (g * P + 2 * R + q) % L;
            if (P > 1 && k + q >= k1) {
#pragma unroll
                for (int n = 0; n < M; ++n) ring[n][slot] = (T)0;
                continue;
            }
            int from_rows = k + q + R;
            T shift_rows = (T)0, scale_rows = (T)1;
            const bool mirrored_rows = ZFACE && order_z_mirror(k + q + R, s, h, from_rows, shift_rows, scale_rows);
            const int rows_off = (from_rows - k0 + R) * sz;
#pragma unroll
            for (int n = 0; n < M; ++n) {
                T v = !EDGE || rvalid[n] ? order_read(rows_from[n] + rows_off) : (T)0;
                if (EDGE) v = row_xy[n] ? row_shift[n] + row_scale[n] * v : v;
                ring[n][slot] = mirrored_rows ? shift_rows + scale_rows * v : v;
            }
        }
    };
    /* Group g's halo planes k .. k + P - 1 into halo set g & 1; none past the chunk. */
    auto load_halo = [&](int g, int k) {
#pragma unroll
        for (int q = 0; q < P; ++q) {
            const int halo_off = (k + q - k0 + R) * sz;
#pragma unroll
            for (int p = 0; p < PER; ++p) {
                const T v = hvalid[p] && (P == 1 || k + q < k1) ? order_read(halo_from[p] + halo_off) : (T)0;
                halo[g & 1][q][p] = EDGE && halo_xy[p] ? halo_shift[p] + halo_scale[p] * v : v;
            }
        }
    };
    /* Group g (constant g % U = g_in_turn) at plane k: its tiles stored, one barrier, P M sums. */
    auto group = [&](int g_in_turn, int k) {
        if (k + A * P < k1) load_rows(g_in_turn + A, k + A * P);
        if (k + P < k1) load_halo(g_in_turn + 1, k + P);
        /* The other set of tiles was last read a group ago, before the previous group's barrier. */
        T(*set)[BY * M + 2 * R][BX + 2 * R] = tiles[g_in_turn & 1];
        const int base = g_in_turn * P + R; /* (base + d) % L: the ring slot of plane k + d */
#pragma unroll
        for (int q = 0; q < P; ++q) {
#pragma unroll
            for (int n = 0; n < M; ++n) set[q][R + ty * M + n][R + tx] = ring[n][(base + q) % L];
#pragma unroll
            for (int p = 0; p < PER; ++p)
                if (hvalid[p]) set[q][hrow[p]][hcol[p]] = halo[g_in_turn & 1][q][p];
        }
        __syncthreads(); /* the group's tiles are whole */
#pragma unroll
        for (int q = 0; q < P; ++q) {
#pragma unroll
            for (int n = 0; n < M; ++n) {
                T zlo[R], ylo[R], xlo[R], xhi[R], yhi[R], zhi[R];
                const int row = R + ty * M + n;
                const T centre = ring[n][(base + q) % L];
#pragma unroll
                for (int m = 0; m < R; ++m) {
                    zlo[m] = ring[n][(base + q - 1 - m) % L], zhi[m] = ring[n][(base + q + 1 + m) % L];
                    ylo[m] = n - 1 - m >= 0 ? ring[n - 1 - m < 0 ? 0 : n - 1 - m][(base + q) % L] : set[q][row - 1 - m][R + tx];
                    yhi[m] = n + 1 + m < M ? ring[n + 1 + m < M ? n + 1 + m : 0][(base + q) % L] : set[q][row + 1 + m][R + tx];
                    xlo[m] = set[q][row][R + tx - 1 - m], xhi[m] = set[q][row][R + tx + 1 + m];
                }
                const T next = centre + c.alpha_dt * order_sum<T, R>(c, zlo, ylo, xlo, centre, xhi, yhi, zhi);
                if ((P == 1 || k + q < k1) && (!EDGE || (i < s.nx && j + n < s.ny)))
                    nontemporal_store(next, out_from[n] + (k + q - k0) * sz);
            }
        }
    };

#pragma unroll
    for (int n = 0; n < M; ++n) {
#pragma unroll
        for (int r = 0; r < 2 * R; ++r) ring[n][r] = !EDGE || rvalid[n] ? load(i, j + n, k0 - R + r) : (T)0;
    }
#pragma unroll
    for (int g = 0; g < A; ++g)
        if (k0 + g * P < k1) load_rows(g, k0 + g * P);
    load_halo(0, k0);
    const int groups = (k1 - k0 + P - 1) / P;
    for (int g0 = 0; g0 < groups; g0 += U) {
#pragma unroll
        for (int g = 0; g < U; ++g)
            if (g0 + g < groups) group(g, k0 + (g0 + g) * P);
    }
}

/* P: planes a barrier (1 or 2 in the table; 4 lost to its registers). ROLL > 0: order_zroll's march,
 * the rows' loads ROLL groups ahead. */
template <typename T, int R, int BX, int BY, int M, int P, int ROLL>
__global__ void __launch_bounds__(BX *BY, (order_planes_occupancy<T, BX, BY, M, P>::blocks))
    order_zplanes(T *__restrict__ out, const T *__restrict__ u, stencil_shape s, order_coeffs<T> c, halo_coeffs<T> h,
                  int zchunk)
{
    constexpr int ROWS = BY * M;
    constexpr int HALO = 2 * R * BX + 2 * R * ROWS, THREADS = BX * BY, PER = ORDER_PER(R, BX, BY, M);
    __shared__ T tiles[2][P][ROWS + 2 * R][BX + 2 * R]; /* groups alternate: one barrier a group */
    const int tx = threadIdx.x, ty = threadIdx.y, tid = tx + BX * ty;
    const int i0 = blockIdx.x * BX, j0 = blockIdx.y * ROWS;
    const int k0 = blockIdx.z * zchunk, k1 = min(k0 + zchunk, s.nz);
    const int i = i0 + tx, j = j0 + ty * M;
    int hrow[PER], hcol[PER];
    bool hvalid[PER];
#pragma unroll
    for (int p = 0; p < PER; ++p) {
        const int e = tid + p * THREADS;
        order_halo_place<R, BX, ROWS>(e < HALO ? e : 0, hrow[p], hcol[p]);
        const int gi = i0 - R + hcol[p], gj = j0 - R + hrow[p];
        hvalid[p] = e < HALO && gi < s.nx + R && gj < s.ny + R;
    }
    bool rvalid[M];
#pragma unroll
    for (int n = 0; n < M; ++n) rvalid[n] = i < s.nx + R && j + n < s.ny + R;
    /* Three copies of the march: blocks near an x or y face (their mirrored values decided once, the
     * window's first planes through order_fetch), the first and last z chunks (planes mirrored
     * whole), and the rest, whose reads cross no face. */
    const bool edge = i0 < R || i0 + BX + R > s.nx || j0 < R || j0 + ROWS + R > s.ny;
    const bool zface = k0 < R || k1 + R > s.nz;
    if constexpr (ROLL > 0) {
        if (edge) order_zroll_body<T, R, BX, BY, M, P, ROLL, true, true>(out, u, s, c, h, k0, k1, hrow, hcol, hvalid, rvalid, tiles);
        else if (zface)
            order_zroll_body<T, R, BX, BY, M, P, ROLL, false, true>(out, u, s, c, h, k0, k1, hrow, hcol, hvalid, rvalid, tiles);
        else order_zroll_body<T, R, BX, BY, M, P, ROLL, false, false>(out, u, s, c, h, k0, k1, hrow, hcol, hvalid, rvalid, tiles);
    } else if (edge)
        order_zplanes_body<T, R, BX, BY, M, P, true, true>(out, u, s, c, h, k0, k1, hrow, hcol, hvalid, rvalid, tiles);
    else if (zface)
        order_zplanes_body<T, R, BX, BY, M, P, false, true>(out, u, s, c, h, k0, k1, hrow, hcol, hvalid, rvalid, tiles);
    else order_zplanes_body<T, R, BX, BY, M, P, false, false>(out, u, s, c, h, k0, k1, hrow, hcol, hvalid, rvalid, tiles);
}

/* order_zasync<P, D>: order_zroll's march (P planes a barrier) with every
 * value read from device memory by asynchronous copies into shared memory
 * instead of loads into registers. Each plane's whole tile (its rows, their R
 * columns either side and the R rows above and below) goes through a ring of
 * S = R + (D + 1) P tiles: the tiles of planes k .. k + R + P - 1 (the planes
 * summed and those whose rows enter the window) and D groups of P planes in
 * flight, issued D groups before they are read and holding no register
 * meanwhile, so that more bytes are in flight at fewer registers a thread.
 * The window of 2R + P planes a row stays in registers, its new planes read
 * from their tiles. NVIDIA: cp.async; elsewhere a plain load and store (the
 * same values, no overlap). X > 1: each thread sums X neighbouring columns of
 * its rows, their windows in registers; its x neighbours inside those columns
 * come from the windows, the others and its y neighbours from the tile as
 * vectors of up to 16 bytes (two doubles, four floats), and it stores the X
 * values at once: fewer shared loads, addresses and stores a point. Each
 * point's sum is order_sum's, so the bits are order_zwindow's. */
#if defined(__CUDACC__) && !defined(__HIP_PLATFORM_AMD__)
/* A copy's place in shared memory as cp.async takes it (a 32-bit shared address), converted once a
 * thread: converting a pointer costs three instructions a copy. Bytes are added to it. */
typedef unsigned order_copy_to;
__device__ __forceinline__ order_copy_to order_copy_target(void *p) { return (unsigned)__cvta_generic_to_shared(p); }
template <typename T> __device__ __forceinline__ void order_copy_async(order_copy_to to, const T *from)
{
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2;" ::"r"(to), "l"(from), "n"((int)sizeof(T)) : "memory");
}
__device__ __forceinline__ void order_copies_commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }
/* this thread's copies but the last N groups have landed */
template <int N> __device__ __forceinline__ void order_copies_wait() { asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory"); }
#else
typedef char *order_copy_to;
__device__ __forceinline__ order_copy_to order_copy_target(void *p) { return static_cast<char *>(p); }
template <typename T> __device__ __forceinline__ void order_copy_async(order_copy_to to, const T *from)
{
    *reinterpret_cast<T *>(to) = *from;
}
__device__ __forceinline__ void order_copies_commit() {}
template <int N> __device__ __forceinline__ void order_copies_wait() {}
#endif

/* A ring place's two barriers in shared memory (order_zasync's SPLIT march): `landed` completes
 * once every thread's copies into the place have landed, `read` once every thread is done with the
 * plane it held. NVIDIA: mbarriers, whose phases complete apart from the threads that arrive on
 * them (cp.async arrives as the copies land), each waited on by the parity of the phase, so that a
 * thread waits for the slowest one only where it would overwrite a tile that one may still read,
 * a group later; elsewhere the copies are plain loads and stores: a block barrier where their
 * plane is first read, none other (the barrier before a group also ends the reads of the group
 * two before, whose place the group fills). */
#if defined(__CUDACC__) && !defined(__HIP_PLATFORM_AMD__)
__device__ __forceinline__ void order_stage_init(unsigned long long *barrier, unsigned count)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"((unsigned)__cvta_generic_to_shared(barrier)), "r"(count)
                 : "memory");
}
/* arrives on `landed` once this thread's copies so far have landed */
__device__ __forceinline__ void order_stage_copied(unsigned long long *landed)
{
    asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];" ::"r"((unsigned)__cvta_generic_to_shared(landed))
                 : "memory");
}
/* this thread is done with the plane (every thread arrives, as CUTLASS's consumers do: one
 * arrival a warp after __syncwarp left racecheck hazards in the single sweep's rings) */
__device__ __forceinline__ void order_stage_read(unsigned long long *read)
{
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"((unsigned)__cvta_generic_to_shared(read)) : "memory");
}
/* until the phase of `barrier` of this parity has completed */
__device__ __forceinline__ void order_stage_wait(unsigned long long *barrier, unsigned parity)
{
    const unsigned at = (unsigned)__cvta_generic_to_shared(barrier);
    unsigned done;
    do {
        asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
                     : "=r"(done)
                     : "r"(at), "r"(parity)
                     : "memory");
    } while (!done);
}
__device__ __forceinline__ void order_stage_landed_wait(unsigned long long *landed, unsigned parity)
{
    order_stage_wait(landed, parity);
}
__device__ __forceinline__ void order_stage_read_wait(unsigned long long *read, unsigned parity) { order_stage_wait(read, parity); }
#else
__device__ __forceinline__ void order_stage_init(unsigned long long *, unsigned) {}
__device__ __forceinline__ void order_stage_copied(unsigned long long *) {}
__device__ __forceinline__ void order_stage_read(unsigned long long *) {}
__device__ __forceinline__ void order_stage_landed_wait(unsigned long long *, unsigned) { __syncthreads(); }
__device__ __forceinline__ void order_stage_read_wait(unsigned long long *, unsigned) {}
#endif

extern __shared__ double order_shared_words[] __attribute__((aligned(16)));

/* A tile: ROWS + 2R rows of COLS + 2A (COLS = BX X: X columns a thread); S of them in the ring. */
template <typename T, int R, int BX, int BY, int M, int P, int D, bool VEC, int X, bool SPLIT = false> struct order_async_tiles {
    /* VEC: 16-byte copies of V values, whose global columns start on 16 bytes. X > 1: a thread reads
     * its X columns and their x neighbours as shared vectors of VX values (at most 16 bytes). The
     * tile's columns start A >= R columns left of the block's, A a multiple of V and VX, so that
     * every vector is aligned, and with VEC of a 32-byte sector (SECTOR values), so that each row's
     * copies start on one (a row starting mid-sector makes every copy touch one sector more: float's
     * rows read about twice the L2 sectors they need; PERFORMANCE.md, space orders on the GPU).
     * The columns between R and A left of the block are copied (the row's own sectors, never read). */
    enum { V = VEC ? 16 / sizeof(T) : 1, VX = X * sizeof(T) <= 16 ? X : 16 / sizeof(T), SECTOR = VEC ? 32 / sizeof(T) : 1 };
    enum { ALIGN = SECTOR > V && SECTOR > VX ? SECTOR : V > VX ? V : VX, A = (R + ALIGN - 1) / ALIGN * ALIGN };
    enum { RX = (R + VX - 1) / VX * VX };
    /* SPLIT: a group more of places, which the group after next fills (order_zasync_body) */
    enum { ROWS = BY * M, COLS = BX * X, WIDE = COLS + 2 * A, TILE = (ROWS + 2 * R) * WIDE, S = R + (D + 1 + SPLIT) * P };
    /* elements copied a plane: the rows with their side columns, then the rows above and below */
    enum { THREADS = BX * BY, MIDDLE = ROWS * WIDE, ELEMENTS = MIDDLE + 2 * R * COLS, PER = (ELEMENTS + THREADS - 1) / THREADS };
    /* the same counted in vectors of V values */
    enum { MIDDLE_V = MIDDLE / V, ELEMENTS_V = MIDDLE_V + 2 * R * COLS / V, PER_V = (ELEMENTS_V + THREADS - 1) / THREADS };
    static_assert(X % VX == 0 && WIDE % VX == 0 && RX <= A, "the shared vectors lie on their own alignment");
    static_assert(COLS % V == 0 && WIDE % V == 0, "the copies' vectors tile the rows");
    /* and the FILLED kernels' face transforms; SPLIT: then two barriers a place (order_stage_*) */
    static constexpr size_t barriers_at = (((size_t)S * TILE + 8) * sizeof(T) + 7) / 8 * 8;
    static constexpr size_t bytes = barriers_at + (SPLIT ? 2 * S * sizeof(unsigned long long) : 0);
};

/* Tile element (or vector of V values) e's row and column: e < MIDDLE (counted in vectors) the rows
 * with their A columns either side, then the R rows above and below, the block's columns alone. */
template <int R, int COLS, int ROWS, int A, int V>
__device__ __forceinline__ void order_async_place(int e, int &row, int &col)
{
    constexpr int WIDE = COLS + 2 * A, MIDDLE = ROWS * WIDE / V;
    if (e < MIDDLE) {
        row = R + e / (WIDE / V), col = e % (WIDE / V) * V;
    } else {
        e -= MIDDLE;
        const int r = e / (COLS / V);
        row = r < R ? r : r + ROWS, col = A + e % (COLS / V) * V;
    }
}

#if defined(__CUDACC__) && !defined(__HIP_PLATFORM_AMD__)
/* 16 bytes, cached in L2 only (cp.async.cg takes 16 bytes alone) */
template <typename T> __device__ __forceinline__ void order_copy_async16(order_copy_to to, const T *from)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(to), "l"(from) : "memory");
}
#else
template <typename T> __device__ __forceinline__ void order_copy_async16(order_copy_to to, const T *from)
{
#pragma unroll
    for (int v = 0; v < 16 / (int)sizeof(T); ++v) reinterpret_cast<T *>(to)[v] = from[v];
}
#endif

/* NVIDIA: registers kept to BLOCKS blocks an SM, but to 512 threads where the window would spill
 * under 768 threads' 80 registers (ptxas, the march near the x and y faces: order 8 in double 20
 * bytes with two rows a thread, order 6 in double 4 bytes with two columns), and none where a
 * thread sums more than 16 bytes a plane of one row (four columns of doubles: 152 bytes under 128
 * registers). FILLED kernels run the interior march alone, which holds its ring of M X (2R + P)
 * values a thread in 80 registers up to 160 bytes (ptxas: order 8 in float, two rows of two
 * columns or one of four; order 4 in double), 144 with SPLIT's barriers (order 4 in double: 4
 * bytes of spill at 160), so they keep BLOCKS there. hold_ends: the copies' ends held for the thread (order_zasync_body), but
 * where 80 registers already hold a window of 48 bytes (order 6 in double, two rows a thread: 32
 * to 48 bytes of spill with them). M rows and X columns a thread, P planes a barrier. */
template <typename T, int R, int BX, int BY, int M, int X, int P, int BLOCKS, bool FILLED, bool SPLIT>
struct order_async_occupancy {
    enum {
        window = sizeof(T) * M * X * R,
        ring = sizeof(T) * M * X * (2 * R + P),
        blocks = !ORDER_OCCUPANCY_HINTS                                                    ? 0
                 : X * sizeof(T) > 16                                                      ? 1
                 : FILLED && ring <= (SPLIT ? 144 : 160)                                   ? BLOCKS
                 : BLOCKS * BX * BY > 512 && (window > 48 || (X > 1 && window >= 48)) ? 512 / (BX * BY)
                                                                                           : BLOCKS,
        hold_ends = !(blocks * BX * BY > 512 && window >= 48)
    };
};

/* N values of shared memory from `at`, aligned to VX values, as N / VX loads of VX values each
 * (16 bytes at most: one instruction each). */
template <typename T, int N> struct alignas(sizeof(T) * N) order_values {
    T v[N];
};
template <int N, int VX, typename T> __device__ __forceinline__ void order_shared_values(const T *at, T (&v)[N])
{
#pragma unroll
    for (int c = 0; c < N; c += VX) {
        const order_values<T, VX> w = *reinterpret_cast<const order_values<T, VX> *>(at + c);
#pragma unroll
        for (int e = 0; e < VX; ++e) v[c + e] = w.v[e];
    }
}

/* X consecutive values of a row to an address aligned to them (X > 1: 16 bytes, or 8 for two
 * floats), in as few streaming stores as the vendor has. */
template <typename T, int X> __device__ __forceinline__ void order_store_values(const T (&v)[X], T *at)
{
    if constexpr (X % 4 == 0 && sizeof(T) == 4) {
#pragma unroll
        for (int x = 0; x < X; x += 4) nontemporal_store_wide(v[x], v[x + 1], v[x + 2], v[x + 3], at + x);
    } else if constexpr (X % 2 == 0) {
#pragma unroll
        for (int x = 0; x < X; x += 2) nontemporal_store_wide(v[x], v[x + 1], at + x);
    } else {
#pragma unroll
        for (int x = 0; x < X; ++x) nontemporal_store(v[x], at + x);
    }
}

/* FACES (FILLED): the ghosts past the x and y faces that are not exchanged made in the tiles by
 * the blocks at such a face (make_faces: writing them in memory would take a scattered access a
 * row at the x faces), those past the high z face written by the chunks that read them, the
 * exchanged ones read as stored. */
template <typename T, int R, int BX, int BY, int M, int X, int P, int D, bool VEC, bool HOLD, bool EDGE, bool ZFACE,
          bool FACES = false, bool SPLIT = false>
__device__ __forceinline__ void order_zasync_body(T *__restrict__ out, const T *__restrict__ u, const stencil_shape &s,
                                                  const order_coeffs<T> &c, const halo_coeffs<T> &h, int k0, int k1,
                                                  T *__restrict__ tiles)
{
    typedef order_async_tiles<T, R, BX, BY, M, P, D, VEC, X, SPLIT> shape;
    static_assert(!SPLIT || (FACES && !EDGE && !ZFACE), "the SPLIT march is the FILLED kernels' interior march");
    static_assert(!SPLIT || R >= 2 * P, "a group's faces made before the reads' barrier its readers wait on");
    constexpr int ROWS = shape::ROWS, COLS = shape::COLS, WIDE = shape::WIDE, TILE = shape::TILE, S = shape::S, A = shape::A;
    constexpr int THREADS = shape::THREADS, VX = shape::VX, RX = shape::RX;
    /* blocks away from the x and y faces copy vectors (VEC); the others value by value, each value
     * past a face copied from its mirror image and transformed in place */
    constexpr bool VECTORS = VEC && !EDGE && shape::V > 1;
    constexpr int V = VECTORS ? shape::V : 1, PER = VECTORS ? shape::PER_V : shape::PER;
    constexpr int ELEMENTS = VECTORS ? shape::ELEMENTS_V : shape::ELEMENTS, MIDDLE = VECTORS ? shape::MIDDLE_V : shape::MIDDLE;
    /* the window: ring[n][x][(t - k0 + R) % L] holds plane t of column i + x, row j + n; the march
     * unrolled by U groups of P planes, a whole number of turns of the ring, so that every slot is
     * a constant */
    constexpr int L = 2 * R + P, U = L % P == 0 ? L / P : L;
    const int tx = threadIdx.x, ty = threadIdx.y, tid = tx + BX * ty;
    const int i0 = blockIdx.x * COLS, j0 = blockIdx.y * ROWS;
    const int i = i0 + tx * X, j = j0 + ty * M; /* this thread's first column and row */
    const int sz = (int)s.sz;

    /* This thread's tile elements: where each lands, where it is read from in a plane (EDGE: the
     * mirrored owned point past an x or y face, and its transform), whether it exists, whether it
     * is one of the rows' (the only ones copied of planes past the chunk, read only into windows). */
    int tile_at[PER], plane_at[PER];
    bool copied[PER], middle[PER], xy[PER];
    T xy_shift[PER], xy_scale[PER];
#pragma unroll
    for (int p = 0; p < PER; ++p) {
        const int e = tid + p * THREADS;
        int row, col;
        order_async_place<R, COLS, ROWS, A, V>(e < ELEMENTS ? e : 0, row, col);
        const int gi = i0 - A + col, gj = j0 - R + row;
        tile_at[p] = row * WIDE + col, plane_at[p] = gi + gj * s.sy, xy_shift[p] = (T)0, xy_scale[p] = (T)1;
        /* away from the x and y faces every element is copied (a vector of V values whose first lies
         * beyond the R ghosts, A > R, in a FILLED block at the x low face, too: its other values are
         * needed and its first is never read); past a face, those that exist */
        const bool exists = (p + 1) * THREADS <= ELEMENTS || e < ELEMENTS;
        copied[p] = exists && (!EDGE || (gi >= -R && gi < s.nx + R && gj < s.ny + R));
        middle[p] = e < MIDDLE;
        xy[p] = EDGE && order_xy_mirror(gi, gj, s, h, plane_at[p], xy_shift[p], xy_scale[p]);
    }
    if (EDGE) { /* elements past the field's ghosts are never copied: zero, as order_zroll reads them */
#pragma unroll
        for (int p = 0; p < PER; ++p)
            if (!copied[p] && tid + p * THREADS < ELEMENTS)
                for (int t = 0; t < S; ++t) tiles[t * TILE + tile_at[p]] = (T)0;
    }
    /* HOLD: each copy's ends fixed for the thread (ring place 0, plane k0 - R), to which a copy adds
     * 32-bit offsets (the launcher keeps the chunk's planes within 2^31 values): one instruction an
     * end. Else a pointer to plane k0 - R and the tile, an address rebuilt each copy (fewer registers). */
    const T *planes_from = u + (long)(k0 - R) * s.sz;
    const T *copy_from[PER];
    order_copy_to copy_to[PER];
    if constexpr (HOLD) {
#pragma unroll
        for (int p = 0; p < PER; ++p)
            copy_from[p] = order_opaque(planes_from + plane_at[p]), copy_to[p] = order_copy_target(tiles + tile_at[p]);
    } else planes_from = order_opaque(planes_from);
    T *out_from[M];
#pragma unroll
    for (int n = 0; n < M; ++n) out_from[n] = order_opaque(out + (long)k0 * s.sz + i + (j + n) * s.sy);
    auto after = [](int stage, int d) { return stage + d < S ? stage + d : stage + d - S; }; /* d < S */
    /* SPLIT: the ring places' barriers, after the tiles and the face transforms; plane t (t >= k0)
     * fills place (t - k0) % S, so its phase of the place's barriers is the parity of (t - k0) / S */
    unsigned long long *landed = reinterpret_cast<unsigned long long *>(reinterpret_cast<char *>(tiles) + shape::barriers_at);
    unsigned long long *read = landed + S;
    auto phase = [&](int t) { return (unsigned)((t - k0) / S) & 1u; };

    /* Planes t .. t + N - 1 into ring places stage, stage + 1, ..., one group of copies; planes from
     * k1 on: EDGE the rows alone (the others whole: fewer tests, and every value lies in the field
     * or its ghosts), none from k1 + R on (an empty group keeps the count). */
    auto copy_planes = [&](int t, int N, int stage) {
        for (int q = 0; q < N; ++q, stage = after(stage, 1)) {
            if (t + q >= k1 + R) break;
            int from = t + q;
            T shift, scale;
            if (ZFACE) order_z_mirror(t + q, s, h, from, shift, scale); /* its transform: where the window reads it */
            if constexpr (HOLD) {
                const int plane = (from - k0 + R) * sz, tile = stage * (int)(TILE * sizeof(T));
#pragma unroll
                for (int p = 0; p < PER; ++p)
                    if (copied[p] && (!EDGE || t + q < k1 || middle[p])) {
                        if (VECTORS) order_copy_async16(copy_to[p] + tile, copy_from[p] + plane);
                        else order_copy_async(copy_to[p] + tile, copy_from[p] + plane);
                    }
            } else {
                const T *plane = planes_from + (from - k0 + R) * sz;
                T *tile = tiles + stage * TILE;
#pragma unroll
                for (int p = 0; p < PER; ++p)
                    if (copied[p] && (!EDGE || t + q < k1 || middle[p])) {
                        if (VECTORS) order_copy_async16(order_copy_target(tile + tile_at[p]), plane + plane_at[p]);
                        else order_copy_async(order_copy_target(tile + tile_at[p]), plane + plane_at[p]);
                    }
            }
            if (SPLIT) order_stage_copied(landed + stage); /* the place's copies, as they land */
        }
        if (!SPLIT) order_copies_commit();
    };
    /* EDGE: this thread's mirrored values of the tile in ring place `stage` once its copies landed
     * (rows_only: a plane past the chunk, whose other values were not copied). */
    auto mirror_xy = [&](int stage, bool rows_only) {
        T *tile = tiles + stage * TILE;
#pragma unroll
        for (int p = 0; p < PER; ++p)
            if (copied[p] && xy[p] && (!rows_only || middle[p])) tile[tile_at[p]] = xy_shift[p] + xy_scale[p] * tile[tile_at[p]];
    };

    T ring[M][X][L];
#pragma unroll
    for (int n = 0; n < M; ++n) {
#pragma unroll
        for (int x = 0; x < X; ++x) {
            const bool valid = !EDGE || (i + x < s.nx + R && j + n < s.ny + R);
#pragma unroll
            for (int r = 0; r < 2 * R; ++r) {
                T v = (T)0;
                if (valid) {
                    if (EDGE) v = order_fetch(u, i + x, j + n, k0 - R + r, s, h);
                    else {
                        int from;
                        T shift, scale;
                        const bool mirrored = order_z_mirror(k0 - R + r, s, h, from, shift, scale);
                        v = u[i + x + (j + n) * s.sy + (long)from * s.sz];
                        v = mirrored ? shift + scale * v : v;
                    }
                }
                ring[n][x][r] = v;
            }
        }
    }
    /* The chunk's first R planes (their rows are in the window already), then D groups of P. */
    /* FACES: the ghosts past the block's x and y faces that are not exchanged, made in the tile of a
     * whole plane from its owned values (order_fetch's expression, hence its bits): the R columns
     * beside the rows at an x face, the R rows above or below at a y face. Each thread makes up to
     * ITEMS of them, each packed in an int (its place, its image's, its face; -1: none) so that the
     * march keeps a few registers for them, the faces' transforms in shared memory after the ring.
     * A thread writes values no thread reads before the next barrier and reads owned values no
     * thread writes. */
    constexpr int X_ITEMS = 2 * ROWS * R, ITEMS = FACES ? (X_ITEMS + 2 * R * COLS + THREADS - 1) / THREADS : 1;
    static_assert(!FACES || TILE <= 1 << 14, "a tile place in 14 bits");
    const bool x_low = FACES && i0 == 0 && applies(h, 0), x_high = FACES && i0 + COLS == s.nx && applies(h, 1);
    const bool y_low = FACES && j0 == 0 && applies(h, 2), y_high = FACES && j0 + ROWS == s.ny && applies(h, 3);
    const bool at_face = x_low || x_high || y_low || y_high;
    T *transforms = tiles + S * TILE; /* shift of faces 0 .. 3, then their scale */
    int face_item[ITEMS];
#pragma unroll
    for (int n = 0; n < ITEMS; ++n) {
        int e = tid + n * THREADS, face, to, from;
        bool made;
        if (e < X_ITEMS) { /* row e / R % ROWS, ghost column e % R of face e / (ROWS R) */
            face = e / (ROWS * R), made = face == 0 ? x_low : x_high;
            const int row = (R + e / R % ROWS) * WIDE + A, m = e % R;
            to = row + (face == 0 ? -1 - m : COLS + m), from = row + (face == 0 ? m : COLS - 1 - m);
        } else { /* ghost row e / COLS % R, column e % COLS of face 2 + e / (R COLS) */
            e -= X_ITEMS;
            face = 2 + e / (R * COLS), made = face == 2 ? y_low : face == 3 && y_high;
            const int m = e / COLS % R, col = A + e % COLS;
            to = (face == 2 ? R - 1 - m : R + ROWS + m) * WIDE + col, from = (face == 2 ? R + m : R + ROWS - 1 - m) * WIDE + col;
        }
        face_item[n] = made ? to | from << 14 | face << 28 : -1;
    }
    if (FACES && at_face && tid == 0) {
#pragma unroll
        for (int f = 0; f < 4; ++f) transforms[f] = h.shift[f], transforms[4 + f] = h.scale[f];
    }
    auto make_faces = [&](int stage) {
        T *tile = tiles + stage * TILE;
#pragma unroll
        for (int n = 0; n < ITEMS; ++n) {
            const int item = face_item[n], face = item >> 28;
            if (item >= 0) tile[item & 0x3fff] = transforms[face] + transforms[4 + face] * tile[item >> 14 & 0x3fff];
        }
    };

    /* FACES: the chunks whose window reaches past the high z face (where it is not exchanged) write
     * their own columns of its R ghost planes first, each the transform of its mirror image
     * (order_fetch's expression, hence its bits), and copy them as any plane: no ghost pass runs
     * before the step and the march holds no transform. The low face's planes enter the window
     * before the march, mirrored as they are loaded. Those ghosts are read only by chunks that
     * write them, all the same values (the neighbours' copies take them into tile columns that are
     * never read). */
    if (SPLIT) {
        if (tid == 0)
            for (int t = 0; t < S; ++t) order_stage_init(landed + t, THREADS), order_stage_init(read + t, THREADS);
        __syncthreads();
    }
    if (FACES && k1 + R > s.nz && applies(h, 5)) {
        T *ghosts = const_cast<T *>(u); /* the step's input: its owned points are never written */
        for (int e = tid; e < R * ROWS * COLS; e += THREADS) {
            const int m = e / (ROWS * COLS), at = i0 + e % COLS + (j0 + e / COLS % ROWS) * s.sy;
            nontemporal_store(h.shift[5] + h.scale[5] * u[at + (long)(s.nz - 1 - m) * s.sz], ghosts + at + (long)(s.nz + m) * s.sz);
        }
        __syncthreads(); /* the ghosts written before any thread's copies read them */
    }
    copy_planes(k0, R, 0);
    for (int q = 0; q < D; ++q) copy_planes(k0 + R + q * P, P, R + q * P);
    if (EDGE) { /* the chunk's first R planes never enter a window through their tiles */
        order_copies_wait<D>();
        for (int t = 0; t < R; ++t) mirror_xy(t, k0 + t >= k1);
    }
    if (SPLIT) { /* the chunk's first R planes, whole once every thread's copies landed */
        for (int t = 0; t < R; ++t) order_stage_landed_wait(landed + t, 0);
    }
    if (FACES && at_face) { /* the chunk's first R planes, whole once every thread's copies landed */
        if (!SPLIT) order_copies_wait<D>();
        __syncthreads();
        for (int t = 0; t < R; ++t)
            if (k0 + t < k1) make_faces(t);
        if (SPLIT) __syncthreads(); /* the first groups wait on no reads' barrier */
    }

    /* Planes k .. k + P - 1 (group g, its constant part g % U once unrolled), plane k in ring place `stage`. */
    auto group = [&](int g_in_turn, int k, int stage) {
        if constexpr (SPLIT) {
            /* planes k + R + D P .. go where planes k - 2P .. were: every thread must be done with those
             * (a group before this one's), then planes k + R .. must have landed, all threads' copies */
            if (k - 2 * P >= k0) {
#pragma unroll
                for (int q = 0; q < P; ++q) order_stage_read_wait(read + after(stage, S - 2 * P + q), phase(k - 2 * P + q));
            }
            copy_planes(k + R + D * P, P, after(stage, S - 2 * P));
#pragma unroll
            for (int q = 0; q < P; ++q)
                if (P == 1 || k + q < k1) order_stage_landed_wait(landed + after(stage, R + q), phase(k + R + q));
        } else {
            order_copies_wait<D - 1>(); /* this thread's copies of planes k + R .. k + R + P - 1 have landed */
            if (EDGE) {
#pragma unroll
                for (int q = 0; q < P; ++q)
                    if (P == 1 || k + q < k1) mirror_xy(after(stage, R + q), k + R + q >= k1);
            }
            __syncthreads(); /* their tiles are whole; every thread is done with planes k - P .. k - 1 */
            copy_planes(k + R + D * P, P, after(stage, S - P));
        }
        if (FACES && at_face) { /* planes k + R ..: summed R groups on, after the next barrier */
#pragma unroll
            for (int q = 0; q < P; ++q)
                if (k + R + q < k1) make_faces(after(stage, R + q));
        }
#pragma unroll
        for (int q = 0; q < P; ++q) {
            if (P > 1 && k + q >= k1) continue;
            int from;
            T shift = (T)0, scale = (T)1;
            const bool mirrored = ZFACE && order_z_mirror(k + R + q, s, h, from, shift, scale);
            const T *front = tiles + after(stage, R + q) * TILE;
#pragma unroll
            for (int n = 0; n < M; ++n) {
                T v[X];
                order_shared_values<X, VX>(front + (R + ty * M + n) * WIDE + A + tx * X, v);
#pragma unroll
                for (int x = 0; x < X; ++x) ring[n][x][(g_in_turn * P + q + 2 * R) % L] = mirrored ? shift + scale * v[x] : v[x];
            }
        }
#pragma unroll
        for (int q = 0; q < P; ++q) {
            const T *tile = tiles + after(stage, q) * TILE;
            const int base = g_in_turn * P + q + R; /* (base + d) % L: the ring slot of plane k + q + d */
            /* from the tile, once for all M rows: the R rows above this thread's first row and the R
             * below its last (above[m]: row -1 - m, below[m]: row M + m), each a vector of X values */
            const T *first = tile + (R + ty * M) * WIDE + A + tx * X;
            T above[R][X], below[R][X];
#pragma unroll
            for (int m = 0; m < R; ++m) {
                order_shared_values<X, VX>(first - (1 + m) * WIDE, above[m]);
                order_shared_values<X, VX>(first + (M + m) * WIDE, below[m]);
            }
#pragma unroll
            for (int n = 0; n < M; ++n) {
                /* y neighbours beyond this thread's rows from the strips, the x neighbours beyond its
                 * columns from the tile (RX a side, whole vectors); the rest from the window's registers */
                const T *at = first + n * WIDE;
                T left[RX], right[RX];
                order_shared_values<RX, VX>(at - RX, left);
                order_shared_values<RX, VX>(at + X, right);
                T next[X];
#pragma unroll
                for (int x = 0; x < X; ++x) {
                    T zlo[R], ylo[R], xlo[R], xhi[R], yhi[R], zhi[R];
                    const T centre = ring[n][x][base % L];
#pragma unroll
                    for (int m = 0; m < R; ++m) {
                        zlo[m] = ring[n][x][(base + L - 1 - m) % L], zhi[m] = ring[n][x][(base + 1 + m) % L];
                        ylo[m] = n - 1 - m >= 0 ? ring[n - 1 - m < 0 ? 0 : n - 1 - m][x][base % L] : above[m - n < 0 ? 0 : m - n][x];
                        yhi[m] = n + 1 + m < M ? ring[n + 1 + m < M ? n + 1 + m : 0][x][base % L]
                                               : below[n + 1 + m - M < 0 ? 0 : n + 1 + m - M][x];
                        xlo[m] = x - 1 - m >= 0 ? ring[n][x - 1 - m < 0 ? 0 : x - 1 - m][base % L] : left[x - 1 - m < 0 ? RX + x - 1 - m : 0];
                        xhi[m] = x + 1 + m < X ? ring[n][x + 1 + m < X ? x + 1 + m : 0][base % L] : right[x + 1 + m < X ? 0 : x + 1 + m - X];
                    }
                    next[x] = centre + c.alpha_dt * order_sum<T, R>(c, zlo, ylo, xlo, centre, xhi, yhi, zhi);
                }
                if (P > 1 && k + q >= k1) continue;
                T *to = out_from[n] + (k + q - k0) * sz;
                if (!EDGE) order_store_values<T, X>(next, to);
                else if (j + n < s.ny) {
#pragma unroll
                    for (int x = 0; x < X; ++x)
                        if (i + x < s.nx) nontemporal_store(next[x], to + x);
                }
            }
        }
        if (SPLIT) { /* this thread is done with planes k .. k + P - 1 (rows read R groups ago) */
#pragma unroll
            for (int q = 0; q < P; ++q) order_stage_read(read + after(stage, q));
        }
    };
    const int groups = (k1 - k0 + P - 1) / P;
    int stage = 0;
    for (int g0 = 0; g0 < groups; g0 += U) {
#pragma unroll
        for (int g = 0; g < U; ++g)
            if (g0 + g < groups) {
                group(g, k0 + (g0 + g) * P, stage);
                stage = after(stage, P);
            }
    }
}

/* M rows and X columns a thread; P: planes a barrier; D: groups of P planes of copies in flight;
 * VEC: 16-byte copies (the field's rows start on 16 bytes); BLOCKS: the blocks an SM the registers
 * are kept to (NVIDIA). X > 1 also stores X values at once (the rows start on 16 bytes). FILLED:
 * the blocks tile the plane exactly and every one takes the interior march, the planes past the
 * low z face mirrored as the window is loaded, those past the high face written by the chunks
 * that read them, and the ghosts past the x and y faces made in its tiles (FACES): no block pays
 * the mirroring's copies and tests, no ghost pass runs before the step, and the kernel's
 * registers are that march's alone. SPLIT (FILLED, R >= 2P): no block barrier a group but two
 * barriers a ring place (order_stage_*): a thread waits for its plane's copies, every thread's, as
 * they land, and, before it fills a place, for the warps still reading it; the ring holds a group
 * more so that those are a group behind, and the warps drift apart by up to a group instead of
 * meeting at every plane. */
template <typename T, int R, int BX, int BY, int M, int X, int P, int D, bool VEC, int BLOCKS, bool FILLED = false,
          bool SPLIT = false>
__global__ void __launch_bounds__(BX *BY, (order_async_occupancy<T, R, BX, BY, M, X, P, BLOCKS, FILLED, SPLIT>::blocks))
    order_zasync(T *__restrict__ out, const T *__restrict__ u, stencil_shape s, order_coeffs<T> c, halo_coeffs<T> h,
                 int zchunk)
{
    constexpr int ROWS = BY * M, COLS = BX * X;
    T *tiles = reinterpret_cast<T *>(order_shared_words);
    const int i0 = blockIdx.x * COLS, j0 = blockIdx.y * ROWS;
    const int k0 = blockIdx.z * zchunk, k1 = min(k0 + zchunk, s.nz);
    constexpr bool HOLD = order_async_occupancy<T, R, BX, BY, M, X, P, BLOCKS, FILLED, SPLIT>::hold_ends;
    if constexpr (FILLED) {
        order_zasync_body<T, R, BX, BY, M, X, P, D, VEC, HOLD, false, false, true, SPLIT>(out, u, s, c, h, k0, k1, tiles);
    } else {
        const bool edge = i0 < R || i0 + COLS + R > s.nx || j0 < R || j0 + ROWS + R > s.ny;
        const bool zface = k0 < R || k1 + R > s.nz;
        if (edge) order_zasync_body<T, R, BX, BY, M, X, P, D, VEC, HOLD, true, true>(out, u, s, c, h, k0, k1, tiles);
        else if (zface) order_zasync_body<T, R, BX, BY, M, X, P, D, VEC, HOLD, false, true>(out, u, s, c, h, k0, k1, tiles);
        else order_zasync_body<T, R, BX, BY, M, X, P, D, VEC, HOLD, false, false>(out, u, s, c, h, k0, k1, tiles);
    }
}

/* R ghost layers of the exchanged faces in `faces`, packed as layers of the
 * face (layer m = distance m from the face, the face's points a fastest), or
 * unpacked from there: owned layer m of a face goes to ghost layer m of the
 * neighbour's opposite face, which is the same point of the whole grid. */
template <typename T>
__global__ void order_face_copy(T *u, stencil_shape s, face_buffers buffers, unsigned faces, int pack, int radius)
{
    const int face = blockIdx.z;
    long inner, step, packed;
    if (!(faces & (1u << face)) ||
        !face_point(face, threadIdx.x + blockIdx.x * blockDim.x, threadIdx.y + blockIdx.y * blockDim.y, s, inner, step, packed))
        return;
    const long points = face < 2 ? (long)s.ny * s.nz : face < 4 ? (long)s.nx * s.nz : (long)s.nx * s.ny;
    T *buffer = static_cast<T *>(buffers.at[face]);
    for (int m = 0; m < radius; ++m) {
        if (pack) buffer[packed + m * points] = u[inner - m * step];
        else u[inner + (m + 1) * step] = buffer[packed + m * points];
    }
}

/* ---- the CG operator of order 2R (solver/implicit.h): cg_kernels.hip's forms, the order's Laplacian ---- */

/* r = scale lap(u) with the run's boundary conditions; partial (r.r, r.w r). */
template <typename T, int R>
__global__ void __launch_bounds__(CG_THREADS) order_cg_rhs(T *__restrict__ r, const T *__restrict__ u, stencil_shape s,
                                                           order_coeffs<T> c, halo_coeffs<T> bc, T scale, cg_diagonal d,
                                                           cg_partials_at partial)
{
    const cg_span t = cg_thread_span(s);
    double rr = 0.0, rz = 0.0;
    for (int k = t.k0; t.active && k < t.k1; ++k) {
        T centre;
        const T v = scale * order_point_laplacian<T, R>(u, t.i, t.j, k, s, c, bc, centre);
        nontemporal_store(v, r + t.i + t.j * s.sy + (long)k * s.sz);
        rr += (double)v * v, rz += (double)v * (v * cg_weight<T>(d, t.i, t.j, k, s));
    }
    cg_piece_sum(rr, rz, partial, s);
}

/* q = A p = p + c.alpha_dt lap0(p) (c.alpha_dt = -theta alpha dt, homogeneous faces); partial (p.q, 0). */
template <typename T, int R>
__global__ void __launch_bounds__(CG_THREADS) order_cg_apply(T *__restrict__ q, const T *__restrict__ p, stencil_shape s,
                                                             order_coeffs<T> c, halo_coeffs<T> zero, cg_partials_at partial)
{
    const cg_span t = cg_thread_span(s);
    double pq = 0.0;
    for (int k = t.k0; t.active && k < t.k1; ++k) {
        T centre;
        const T lap = order_point_laplacian<T, R>(p, t.i, t.j, k, s, c, zero, centre);
        const T v = centre + c.alpha_dt * lap;
        nontemporal_store(v, q + t.i + t.j * s.sy + (long)k * s.sz);
        pq += (double)centre * v;
    }
    cg_piece_sum(pq, 0.0, partial, s);
}

/* cheb_step with the order's operator: out = z + keep (z - out) + push (r - A z); partial (r.out, 0). */
template <typename T, int R>
__global__ void __launch_bounds__(CG_THREADS) order_cheb_step(T *__restrict__ out, const T *__restrict__ z,
                                                              const T *__restrict__ r, T keep, T push, int previous_is_zero,
                                                              stencil_shape s, order_coeffs<T> c, halo_coeffs<T> zero,
                                                              cg_partials_at partial)
{
    const cg_span t = cg_thread_span(s);
    double rz = 0.0;
    for (int k = t.k0; t.active && k < t.k1; ++k) {
        const long pos = t.i + t.j * s.sy + (long)k * s.sz;
        T centre;
        const T lap = order_point_laplacian<T, R>(z, t.i, t.j, k, s, c, zero, centre);
        const T applied = centre + c.alpha_dt * lap, previous = previous_is_zero ? (T)0 : out[pos];
        const T v = centre + keep * (centre - previous) + push * (r[pos] - applied);
        nontemporal_store(v, out + pos);
        rz += (double)r[pos] * v;
    }
    cg_piece_sum(rz, 0.0, partial, s);
}
