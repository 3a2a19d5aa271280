/*
 * Kernels of the implicit solver (solver/implicit.h): CG and its Chebyshev
 * preconditioner on the optimised stencil. Included after heat_kernels.hip.
 *
 * The operator A p = p - theta alpha dt lap0(p) is the fused heat step's form
 * (tile_laplacian, nontemporal stores) with a negative coefficient, its dot
 * product p.Ap fused in. Kernels that produce a vector the stencil reads next
 * (p, the Chebyshev iterates, the new field) also write its y/z ghosts;
 * x ghosts are made on the fly.
 *
 * Reductions give the same bits however the grid is split between ranks
 * (solver/reduce.h): a block of CG_THREADS threads covers CG_THREADS points
 * of a row over CG_ZCHUNK planes; each thread sums its points in plane order,
 * and each piece of `piece` neighbouring threads (a power of two up to 32
 * that divides the reduction brick's width) combines in a fixed tree into one
 * partial. brick_sums (cg_sum_kernels.hip) adds each brick's partials in a
 * fixed order of their place in the brick, and the host adds the bricks of
 * the whole grid in a fixed order of their index. Ranks own whole bricks,
 * and z chunks and pieces never straddle a brick, so every brick's sum is
 * formed from the same values in the same order in every layout.
 */
enum { CG_THREADS = 128, CG_ZCHUNK = 8, CG_SUM_THREADS = 256 };

/* diag(A) = base + face[f] on each boundary face f a point touches (backend.h). */
struct cg_diagonal {
    double base, face[6];
    int jacobi;
};

/* The preconditioner weight: 1 / diag(A) for Jacobi, else 1. */
template <typename T> __device__ __forceinline__ T cg_weight(const cg_diagonal &d, int i, int j, int k, const stencil_shape &s)
{
    if (!d.jacobi) return (T)1;
    double v = d.base;
    if (i == 0) v += d.face[0];
    if (i == s.nx - 1) v += d.face[1];
    if (j == 0) v += d.face[2];
    if (j == s.ny - 1) v += d.face[3];
    if (k == 0) v += d.face[4];
    if (k == s.nz - 1) v += d.face[5];
    return (T)(1.0 / v);
}

/* The point range of one thread: column i, row j, planes [k0, k1). */
struct cg_span {
    int i, j, k0, k1;
    bool active;
};

__device__ __forceinline__ cg_span cg_thread_span(const stencil_shape &s)
{
    cg_span t;
    t.i = threadIdx.x + blockIdx.x * CG_THREADS;
    t.j = blockIdx.y;
    t.k0 = blockIdx.z * CG_ZCHUNK;
    t.k1 = min(t.k0 + CG_ZCHUNK, s.nz);
    t.active = t.i < s.nx;
    return t;
}

/* Where a kernel's dot products go: one (a, b) per piece of a row in a z chunk. */
struct cg_partials_at {
    double2 *at; /* [z chunk][row][piece] */
    int piece;   /* points of a row per partial */
};

/* Fixed-tree sums of (a, b) over each piece of the block's threads into
 * their partials. Every thread calls it. */
__device__ __forceinline__ void cg_piece_sum(double a, double b, const cg_partials_at &p, const stencil_shape &s)
{
    __shared__ double sa[CG_THREADS], sb[CG_THREADS];
    const int t = threadIdx.x;
    sa[t] = a, sb[t] = b;
    __syncthreads();
    for (int half = p.piece / 2; half > 0; half /= 2) {
        if (t % p.piece < half) sa[t] += sa[t + half], sb[t] += sb[t + half];
        __syncthreads();
    }
    const int i = t + blockIdx.x * CG_THREADS, pieces = (s.nx + p.piece - 1) / p.piece;
    if (t % p.piece == 0 && i < s.nx)
        p.at[((long)blockIdx.z * gridDim.y + blockIdx.y) * pieces + i / p.piece] = make_double2(sa[t], sb[t]);
}

/* r = scale lap(u) with the run's boundary conditions; partial (r.r, r.w r). */
template <typename T>
__global__ void __launch_bounds__(CG_THREADS) cg_rhs(T *__restrict__ r, const T *__restrict__ u, stencil_shape s,
                                                     stencil_coeffs<T> c, halo_coeffs<T> bc, T scale, cg_diagonal d,
                                                     cg_partials_at partial)
{
    const cg_span t = cg_thread_span(s);
    double rr = 0.0, rz = 0.0;
    for (int k = t.k0; t.active && k < t.k1; ++k) {
        const long pos = t.i + t.j * s.sy + k * s.sz;
        T centre[1], lap[1];
        tile_laplacian<T, 1, true>(u + pos, t.i, s, c, bc, centre, lap);
        const T v = scale * lap[0];
        nontemporal_store(v, r + pos);
        rr += (double)v * v, rz += (double)v * (v * cg_weight<T>(d, t.i, t.j, k, s));
    }
    cg_piece_sum(rr, rz, partial, s);
}

/* q = A p (c.alpha_dt = -theta alpha dt, homogeneous ghosts); partial (p.q, 0). */
template <typename T>
__global__ void __launch_bounds__(CG_THREADS) cg_apply(T *__restrict__ q, const T *__restrict__ p, stencil_shape s,
                                                       stencil_coeffs<T> c, halo_coeffs<T> zero, cg_partials_at partial)
{
    const cg_span t = cg_thread_span(s);
    double pq = 0.0;
    for (int k = t.k0; t.active && k < t.k1; ++k) {
        const long pos = t.i + t.j * s.sy + k * s.sz;
        T centre[1], lap[1];
        tile_laplacian<T, 1, true>(p + pos, t.i, s, c, zero, centre, lap);
        const T v = fma(c.alpha_dt, lap[0], centre[0]);
        nontemporal_store(v, q + pos);
        pq += (double)centre[0] * v;
    }
    cg_piece_sum(pq, 0.0, partial, s);
}

/* r -= a q; partial (r.r, r.w r). x += a p waits for the next kernel that reads p
 * anyway (cg_direction, or cg_finish): a read of p fewer an iteration. */
template <typename T>
__global__ void __launch_bounds__(CG_THREADS) cg_update(T *__restrict__ r, const T *__restrict__ q, T a,
                                                        stencil_shape s, cg_diagonal d, cg_partials_at partial)
{
    const cg_span t = cg_thread_span(s);
    double rr = 0.0, rz = 0.0;
    for (int k = t.k0; t.active && k < t.k1; ++k) {
        const long pos = t.i + t.j * s.sy + k * s.sz;
        const T v = r[pos] - a * q[pos];
        nontemporal_store(v, r + pos);
        rr += (double)v * v, rz += (double)v * (v * cg_weight<T>(d, t.i, t.j, k, s));
    }
    cg_piece_sum(rr, rz, partial, s);
}

/* The x step a cg_update left waiting: x = a p (first) or x += a p; x NULL: none. */
template <typename T> struct cg_x_step {
    T *x;
    T a;
    int first;
};

template <typename T> __device__ inline T cg_x_after(const cg_x_step<T> &xs, long pos, T p)
{
    const T step = xs.a * p;
    return xs.first ? step : xs.x[pos] + step;
}

/* p = w source + beta p (beta = 0 and no x step: p not read), with its homogeneous
 * y/z ghosts, after the waiting x step has used p. */
template <typename T>
__global__ void __launch_bounds__(CG_THREADS) cg_direction(T *__restrict__ p, const T *__restrict__ source, T beta,
                                                           cg_x_step<T> xs, stencil_shape s, cg_diagonal d,
                                                           halo_coeffs<T> zero)
{
    const cg_span t = cg_thread_span(s);
    for (int k = t.k0; t.active && k < t.k1; ++k) {
        const long pos = t.i + t.j * s.sy + k * s.sz;
        const T old = beta == (T)0 && !xs.x ? (T)0 : p[pos];
        if (xs.x) nontemporal_store(cg_x_after(xs, pos, old), xs.x + pos);
        const T v = source[pos] * cg_weight<T>(d, t.i, t.j, k, s);
        store_with_ghosts<T, true>(p + pos, beta == (T)0 ? v : v + beta * old, t.j, k, s, zero);
    }
}

/* z = factor r, the Chebyshev start, with ghosts; partial (r.z, 0). */
template <typename T>
__global__ void __launch_bounds__(CG_THREADS) cg_scale(T *__restrict__ z, const T *__restrict__ r, T factor,
                                                       stencil_shape s, halo_coeffs<T> zero, cg_partials_at partial)
{
    const cg_span t = cg_thread_span(s);
    double rz = 0.0;
    for (int k = t.k0; t.active && k < t.k1; ++k) {
        const long pos = t.i + t.j * s.sy + k * s.sz;
        const T v = factor * r[pos];
        store_with_ghosts<T, true>(z + pos, v, t.j, k, s, zero);
        rz += (double)r[pos] * v;
    }
    cg_piece_sum(rz, 0.0, partial, s);
}

/* Chebyshev step: out (holding z_{k-1}, or nothing when previous_is_zero)
 * = z + keep (z - out) + push (r - A z), with ghosts; partial (r.out, 0). */
template <typename T>
__global__ void __launch_bounds__(CG_THREADS) cheb_step(T *__restrict__ out, const T *__restrict__ z,
                                                        const T *__restrict__ r, T keep, T push, int previous_is_zero,
                                                        stencil_shape s, stencil_coeffs<T> c, halo_coeffs<T> zero,
                                                        cg_partials_at partial)
{
    const cg_span t = cg_thread_span(s);
    double rz = 0.0;
    for (int k = t.k0; t.active && k < t.k1; ++k) {
        const long pos = t.i + t.j * s.sy + k * s.sz;
        T centre[1], lap[1];
        tile_laplacian<T, 1, true>(z + pos, t.i, s, c, zero, centre, lap);
        const T applied = fma(c.alpha_dt, lap[0], centre[0]), previous = previous_is_zero ? (T)0 : out[pos];
        const T v = centre[0] + keep * (centre[0] - previous) + push * (r[pos] - applied);
        store_with_ghosts<T, true>(out + pos, v, t.j, k, s, zero);
        rz += (double)r[pos] * v;
    }
    cg_piece_sum(rz, 0.0, partial, s);
}

/* a p rounded before any addition: the compiler may not fuse it into u + a p. */
__device__ inline float product_rounded(float a, float b) { return __fmul_rn(a, b); }
__device__ inline double product_rounded(double a, double b) { return __dmul_rn(a, b); }

/* x = u + x after the waiting x step: the new field, in x's storage, with the run's y/z ghosts.
 * The x step rounds as cg_direction's does (x + a p may fuse there too; a p alone may not). */
template <typename T>
__global__ void __launch_bounds__(CG_THREADS) cg_finish(cg_x_step<T> xs, const T *__restrict__ p, const T *__restrict__ u,
                                                        stencil_shape s, halo_coeffs<T> bc)
{
    const cg_span t = cg_thread_span(s);
    for (int k = t.k0; t.active && k < t.k1; ++k) {
        const long pos = t.i + t.j * s.sy + k * s.sz;
        const T x = xs.first ? product_rounded(xs.a, p[pos]) : cg_x_after(xs, pos, p[pos]);
        store_with_ghosts<T, true>(xs.x + pos, u[pos] + x, t.j, k, s, bc);
    }
}

/* This block's bricks in partial units (cg_piece_sum's): per axis, how many
 * bricks it owns, a brick's extent (pieces, rows, z chunks) and its own. */
struct cg_brick_geometry {
    int own[3], span[3], count[3];
};
