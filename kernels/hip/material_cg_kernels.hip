/*
 * The implicit schemes of materials runs on the GPU: the kernels of the
 * CPU's kernels/cpu/cpu_materials_cg.h, term by term in its operation order,
 * so that both agree to rounding. The system is the scaled one there:
 *   S y = y + theta dt M^-1/2 A M^-1/2 y = dt M^-1/2 (L(u) + q),  y = sqrt(rho c) x.
 * They walk the grid as the constant-coefficient CG kernels do (cg_kernels.hip:
 * CG_THREADS points of a row over CG_ZCHUNK planes a block) and hand their dot
 * products to the same fixed-order partials (cg_piece_sum), so every run and
 * every rank count gives the same bits. Vectors' ghosts are set by
 * material_halo_fill (homogeneous) between kernels, not by the kernels.
 * Included by backend_hip_materials_cg.hip.
 */

/* Per-zone weights of the scaled system, in the run's precision: [kind * zones + a]. */
enum { MATERIAL_CG_INV_SQRT = 0, MATERIAL_CG_OPERATOR = 1, MATERIAL_CG_RHS = 2, MATERIAL_CG_WEIGHTS = 3 };

/* S y at point p (y's ghosts set): y - theta dt / sqrt(c_a) sum of the faces' K_ab (x_b - x_a), x = y / sqrt(c). */
template <typename T>
__device__ __forceinline__ T material_operator_point(const T *__restrict__ y, const unsigned char *__restrict__ zone,
                                                     long p, const stencil_shape &s, const T *__restrict__ tab,
                                                     const material_table &t, const T *__restrict__ w)
{
    const T *kx = tab + t.conductance[0], *ky = tab + t.conductance[1], *kz = tab + t.conductance[2];
    const T *isq = w + MATERIAL_CG_INV_SQRT * t.zones;
    const long a = zone[p], row = a * t.zones;
    const T v = y[p] * isq[a];
    const int zb = zone[p - s.sz], yb = zone[p - s.sy], xb = zone[p - 1], xa = zone[p + 1], ya = zone[p + s.sy],
              za = zone[p + s.sz];
    T flux = kz[row + zb] * (y[p - s.sz] * isq[zb] - v);
    flux += ky[row + yb] * (y[p - s.sy] * isq[yb] - v);
    flux += kx[row + xb] * (y[p - 1] * isq[xb] - v);
    flux += kx[row + xa] * (y[p + 1] * isq[xa] - v);
    flux += ky[row + ya] * (y[p + s.sy] * isq[ya] - v);
    flux += kz[row + za] * (y[p + s.sz] * isq[za] - v);
    return y[p] - w[MATERIAL_CG_OPERATOR * t.zones + a] * flux;
}

/* The preconditioner's weight of point p: 1 / diag(S) (Jacobi) or 1 (inverse NULL). */
template <typename T> __device__ __forceinline__ T material_cg_weight(const T *__restrict__ inverse, long p)
{
    return inverse ? inverse[p] : (T)1;
}

/* r = fraction dt / sqrt(c_a) (sum of the faces' K (u_b - u_a) + q_a), u's ghosts by the run's rules;
 * partial (r.r, r.M^-1 r). */
template <typename T>
__global__ void __launch_bounds__(CG_THREADS)
    material_cg_rhs(T *__restrict__ r, const T *__restrict__ u, const unsigned char *__restrict__ zone, stencil_shape s,
                    const T *__restrict__ tab, material_table t, const T *__restrict__ w, T fraction,
                    const T *__restrict__ inverse, cg_partials_at partial)
{
    const cg_span at = cg_thread_span(s);
    const T *kx = tab + t.conductance[0], *ky = tab + t.conductance[1], *kz = tab + t.conductance[2];
    double rr = 0.0, rz = 0.0;
    for (int k = at.k0; at.active && k < at.k1; ++k) {
        const long p = at.i + at.j * s.sy + k * s.sz, a = zone[p], row = a * t.zones;
        const T c = u[p];
        T flux = kz[row + zone[p - s.sz]] * (u[p - s.sz] - c);
        flux += ky[row + zone[p - s.sy]] * (u[p - s.sy] - c);
        flux += kx[row + zone[p - 1]] * (u[p - 1] - c);
        flux += kx[row + zone[p + 1]] * (u[p + 1] - c);
        flux += ky[row + zone[p + s.sy]] * (u[p + s.sy] - c);
        flux += kz[row + zone[p + s.sz]] * (u[p + s.sz] - c);
        const T v = fraction * w[MATERIAL_CG_RHS * t.zones + a] * (flux + tab[t.source + a]);
        r[p] = v;
        rr += (double)v * v, rz += (double)v * (v * material_cg_weight(inverse, p));
    }
    cg_piece_sum(rr, rz, partial, s);
}

/* q = S p (p's ghosts set); partial (p.q, 0). */
template <typename T>
__global__ void __launch_bounds__(CG_THREADS)
    material_cg_apply(T *__restrict__ q, const T *__restrict__ y, const unsigned char *__restrict__ zone,
                      stencil_shape s, const T *__restrict__ tab, material_table t, const T *__restrict__ w,
                      cg_partials_at partial)
{
    const cg_span at = cg_thread_span(s);
    double pq = 0.0;
    for (int k = at.k0; at.active && k < at.k1; ++k) {
        const long p = at.i + at.j * s.sy + k * s.sz;
        const T v = material_operator_point(y, zone, p, s, tab, t, w);
        q[p] = v;
        pq += (double)y[p] * v;
    }
    cg_piece_sum(pq, 0.0, partial, s);
}

/* r -= a q; partial (r.r, r.M^-1 r). */
template <typename T>
__global__ void __launch_bounds__(CG_THREADS) material_cg_update(T *__restrict__ r, const T *__restrict__ q, T a,
                                                                 stencil_shape s, const T *__restrict__ inverse,
                                                                 cg_partials_at partial)
{
    const cg_span at = cg_thread_span(s);
    double rr = 0.0, rz = 0.0;
    for (int k = at.k0; at.active && k < at.k1; ++k) {
        const long p = at.i + at.j * s.sy + k * s.sz;
        const T v = r[p] - a * q[p];
        r[p] = v;
        rr += (double)v * v, rz += (double)v * (v * material_cg_weight(inverse, p));
    }
    cg_piece_sum(rr, rz, partial, s);
}

/* p = M^-1 source + beta p (beta = 0 and no x step: p not read), after the waiting x step has used p. */
template <typename T>
__global__ void __launch_bounds__(CG_THREADS)
    material_cg_direction(T *__restrict__ y, const T *__restrict__ source, T beta, cg_x_step<T> xs, stencil_shape s,
                          const T *__restrict__ inverse)
{
    const cg_span at = cg_thread_span(s);
    for (int k = at.k0; at.active && k < at.k1; ++k) {
        const long p = at.i + at.j * s.sy + k * s.sz;
        const T old = beta == (T)0 && !xs.x ? (T)0 : y[p];
        if (xs.x) xs.x[p] = cg_x_after(xs, p, old);
        const T v = source[p] * material_cg_weight(inverse, p);
        y[p] = beta == (T)0 ? v : v + beta * old;
    }
}

/* Chebyshev step: out (holding z_{k-1}, or nothing when previous_is_zero)
 * = z + keep (z - out) + push (r - S z) (z's ghosts set); partial (r.out, 0). */
template <typename T>
__global__ void __launch_bounds__(CG_THREADS)
    material_cheb_step(T *__restrict__ out, const T *__restrict__ z, const T *__restrict__ r, T keep, T push,
                       int previous_is_zero, const unsigned char *__restrict__ zone, stencil_shape s,
                       const T *__restrict__ tab, material_table t, const T *__restrict__ w, cg_partials_at partial)
{
    const cg_span at = cg_thread_span(s);
    double rz = 0.0;
    for (int k = at.k0; at.active && k < at.k1; ++k) {
        const long p = at.i + at.j * s.sy + k * s.sz;
        const T applied = material_operator_point(z, zone, p, s, tab, t, w);
        const T previous = previous_is_zero ? (T)0 : out[p];
        const T v = z[p] + keep * (z[p] - previous) + push * (r[p] - applied);
        out[p] = v;
        rz += (double)r[p] * v;
    }
    cg_piece_sum(rz, 0.0, partial, s);
}

/* The new field u + y / sqrt(rho c), after the waiting x step (y = x), into x's storage. */
template <typename T>
__global__ void __launch_bounds__(CG_THREADS)
    material_cg_finish(cg_x_step<T> xs, const T *__restrict__ y, const T *__restrict__ u,
                       const unsigned char *__restrict__ zone, stencil_shape s, const T *__restrict__ w, int zones)
{
    const cg_span at = cg_thread_span(s);
    for (int k = at.k0; at.active && k < at.k1; ++k) {
        const long p = at.i + at.j * s.sy + k * s.sz;
        const T x = xs.first ? product_rounded(xs.a, y[p]) : cg_x_after(xs, p, y[p]);
        xs.x[p] = u[p] + x * w[MATERIAL_CG_INV_SQRT * zones + zone[p]];
    }
}

/* inverse = 1 / diag(S): 1 + theta dt / (rho c)_a times the faces' K_ab, a boundary face's
 * K (1 - scale) (its homogeneous ghost is scale x_a); in double, as the CPU forms it. */
template <typename T>
__global__ void __launch_bounds__(CG_THREADS)
    material_inverse_diagonal(T *__restrict__ inverse, const unsigned char *__restrict__ zone, stencil_shape s,
                              const T *__restrict__ tab, material_table t, const T *__restrict__ w, unsigned exchanged)
{
    const cg_span at = cg_thread_span(s);
    const long stride[3] = {1, s.sy, s.sz};
    const int n[3] = {s.nx, s.ny, s.nz};
    for (int k = at.k0; at.active && k < at.k1; ++k) {
        const long p = at.i + at.j * s.sy + k * s.sz;
        const int position[3] = {at.i, at.j, k};
        const int a = zone[p];
        double faces = 0.0;
        for (int f = 0; f < 6; ++f) {
            const int axis = f / 2, high = f % 2;
            const long neighbour = p + (high ? stride[axis] : -stride[axis]);
            const bool boundary = !(exchanged & 1u << f) && position[axis] == (high ? n[axis] - 1 : 0);
            const double k_ab = (double)tab[t.conductance[axis] + (long)a * t.zones + zone[neighbour]];
            faces += boundary ? k_ab * (1.0 - (double)tab[t.scale + (long)f * t.zones + a]) : k_ab;
        }
        const double isq = (double)w[MATERIAL_CG_INV_SQRT * t.zones + a];
        inverse[p] = (T)(1.0 / (1.0 + (double)w[MATERIAL_CG_OPERATOR * t.zones + a] * isq * faces));
    }
}
