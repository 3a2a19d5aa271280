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
 * Reductions are deterministic: a block of CG_THREADS threads covers
 * CG_THREADS points of a row over CG_ZCHUNK planes, each thread sums its
 * points in plane order, the block combines its threads in a fixed tree and
 * writes one partial; sum_partials and the host then add the partials in
 * block order. The launch shape depends on the grid alone.
 */
enum { CG_THREADS = 128, CG_ZCHUNK = 8, CG_SUM_BLOCKS = 64, CG_SUM_THREADS = 256 };

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

/* Fixed-tree sum of the block's (a, b) into partial[block]. Every thread calls it. */
__device__ __forceinline__ void cg_block_sum(double a, double b, double2 *partial)
{
    __shared__ double sa[CG_THREADS], sb[CG_THREADS];
    const int t = threadIdx.x;
    sa[t] = a, sb[t] = b;
    __syncthreads();
    for (int half = CG_THREADS / 2; half > 0; half /= 2) {
        if (t < half) sa[t] += sa[t + half], sb[t] += sb[t + half];
        __syncthreads();
    }
    if (t == 0) partial[blockIdx.x + gridDim.x * (blockIdx.y + (long)gridDim.y * blockIdx.z)] = make_double2(sa[0], sb[0]);
}

/* r = scale lap(u) with the run's boundary conditions; partial (r.r, r.w r). */
template <typename T>
__global__ void __launch_bounds__(CG_THREADS) cg_rhs(T *__restrict__ r, const T *__restrict__ u, stencil_shape s,
                                                     stencil_coeffs<T> c, halo_coeffs<T> bc, T scale, cg_diagonal d,
                                                     double2 *partial)
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
    cg_block_sum(rr, rz, partial);
}

/* q = A p (c.alpha_dt = -theta alpha dt, homogeneous ghosts); partial (p.q, 0). */
template <typename T>
__global__ void __launch_bounds__(CG_THREADS) cg_apply(T *__restrict__ q, const T *__restrict__ p, stencil_shape s,
                                                       stencil_coeffs<T> c, halo_coeffs<T> zero, double2 *partial)
{
    const cg_span t = cg_thread_span(s);
    double pq = 0.0;
    for (int k = t.k0; t.active && k < t.k1; ++k) {
        const long pos = t.i + t.j * s.sy + k * s.sz;
        T centre[1], lap[1];
        tile_laplacian<T, 1, true>(p + pos, t.i, s, c, zero, centre, lap);
        const T v = centre[0] + c.alpha_dt * lap[0];
        nontemporal_store(v, q + pos);
        pq += (double)centre[0] * v;
    }
    cg_block_sum(pq, 0.0, partial);
}

/* x = a p (first) or x += a p; r -= a q; partial (r.r, r.w r). */
template <typename T>
__global__ void __launch_bounds__(CG_THREADS) cg_update(T *__restrict__ x, const T *__restrict__ p, T *__restrict__ r,
                                                        const T *__restrict__ q, T a, int first, stencil_shape s,
                                                        cg_diagonal d, double2 *partial)
{
    const cg_span t = cg_thread_span(s);
    double rr = 0.0, rz = 0.0;
    for (int k = t.k0; t.active && k < t.k1; ++k) {
        const long pos = t.i + t.j * s.sy + k * s.sz;
        const T step = a * p[pos];
        nontemporal_store(first ? step : x[pos] + step, x + pos);
        const T v = r[pos] - a * q[pos];
        nontemporal_store(v, r + pos);
        rr += (double)v * v, rz += (double)v * (v * cg_weight<T>(d, t.i, t.j, k, s));
    }
    cg_block_sum(rr, rz, partial);
}

/* p = w source + beta p (beta = 0: p not read), with its homogeneous y/z ghosts. */
template <typename T>
__global__ void __launch_bounds__(CG_THREADS) cg_direction(T *__restrict__ p, const T *__restrict__ source, T beta,
                                                           stencil_shape s, cg_diagonal d, halo_coeffs<T> zero)
{
    const cg_span t = cg_thread_span(s);
    for (int k = t.k0; t.active && k < t.k1; ++k) {
        const long pos = t.i + t.j * s.sy + k * s.sz;
        const T v = source[pos] * cg_weight<T>(d, t.i, t.j, k, s);
        store_with_ghosts<T, true>(p + pos, beta == (T)0 ? v : v + beta * p[pos], t.j, k, s, zero);
    }
}

/* z = factor r, the Chebyshev start, with ghosts; partial (r.z, 0). */
template <typename T>
__global__ void __launch_bounds__(CG_THREADS) cg_scale(T *__restrict__ z, const T *__restrict__ r, T factor,
                                                       stencil_shape s, halo_coeffs<T> zero, double2 *partial)
{
    const cg_span t = cg_thread_span(s);
    double rz = 0.0;
    for (int k = t.k0; t.active && k < t.k1; ++k) {
        const long pos = t.i + t.j * s.sy + k * s.sz;
        const T v = factor * r[pos];
        store_with_ghosts<T, true>(z + pos, v, t.j, k, s, zero);
        rz += (double)r[pos] * v;
    }
    cg_block_sum(rz, 0.0, partial);
}

/* Chebyshev step: out (holding z_{k-1}, or nothing when previous_is_zero)
 * = z + keep (z - out) + push (r - A z), with ghosts; partial (r.out, 0). */
template <typename T>
__global__ void __launch_bounds__(CG_THREADS) cheb_step(T *__restrict__ out, const T *__restrict__ z,
                                                        const T *__restrict__ r, T keep, T push, int previous_is_zero,
                                                        stencil_shape s, stencil_coeffs<T> c, halo_coeffs<T> zero,
                                                        double2 *partial)
{
    const cg_span t = cg_thread_span(s);
    double rz = 0.0;
    for (int k = t.k0; t.active && k < t.k1; ++k) {
        const long pos = t.i + t.j * s.sy + k * s.sz;
        T centre[1], lap[1];
        tile_laplacian<T, 1, true>(z + pos, t.i, s, c, zero, centre, lap);
        const T applied = centre[0] + c.alpha_dt * lap[0], previous = previous_is_zero ? (T)0 : out[pos];
        const T v = centre[0] + keep * (centre[0] - previous) + push * (r[pos] - applied);
        store_with_ghosts<T, true>(out + pos, v, t.j, k, s, zero);
        rz += (double)r[pos] * v;
    }
    cg_block_sum(rz, 0.0, partial);
}

/* x = u + x: the new field, in x's storage, with the run's y/z ghosts. */
template <typename T>
__global__ void __launch_bounds__(CG_THREADS) cg_finish(T *__restrict__ x, const T *__restrict__ u, stencil_shape s,
                                                        halo_coeffs<T> bc)
{
    const cg_span t = cg_thread_span(s);
    for (int k = t.k0; t.active && k < t.k1; ++k) {
        const long pos = t.i + t.j * s.sy + k * s.sz;
        store_with_ghosts<T, true>(x + pos, u[pos] + x[pos], t.j, k, s, bc);
    }
}

/* Second stage: block b adds the partials of its contiguous slice in a fixed order. */
__global__ void __launch_bounds__(CG_SUM_THREADS) sum_partials(const double2 *partial, long count, double2 *sums)
{
    __shared__ double sa[CG_SUM_THREADS], sb[CG_SUM_THREADS];
    const long begin = count * blockIdx.x / gridDim.x, end = count * (blockIdx.x + 1) / gridDim.x;
    double a = 0.0, b = 0.0;
    for (long n = begin + threadIdx.x; n < end; n += CG_SUM_THREADS) a += partial[n].x, b += partial[n].y;
    const int t = threadIdx.x;
    sa[t] = a, sb[t] = b;
    __syncthreads();
    for (int half = CG_SUM_THREADS / 2; half > 0; half /= 2) {
        if (t < half) sa[t] += sa[t + half], sb[t] += sb[t + half];
        __syncthreads();
    }
    if (t == 0) sums[blockIdx.x] = make_double2(sa[0], sb[0]);
}
