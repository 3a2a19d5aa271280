/*
 * The CPU kernels of implicit materials runs for one precision (REAL, FN and
 * the CG helpers come from cpu_kernels.h and cpu_cg_kernels.h; the tables
 * from cpu_materials.h). Included twice by backend_cpu.c.
 *
 * The theta scheme (M/dt + theta A) x = L(u) + q, M = diag(rho c), A the
 * flux form's operator with homogeneous ghosts, x = u_new - u, is solved
 * scaled by M^-1/2 on both sides, for y = sqrt(rho c) x:
 *   S y = y + theta dt M^-1/2 A M^-1/2 y = dt M^-1/2 (L(u) + q)
 * S is symmetric (K_ab = K_ba, one spacing per axis) with eigenvalues in
 * [1, 1 + theta dt |M^-1/2 A M^-1/2|]: the constant-coefficient system's
 * shape, so CG, Jacobi and Chebyshev run as there (solver/implicit.c). One
 * material with rho c = 1 is the constant-coefficient operator I - theta alpha dt L0.
 * Dot products per row segment of one reduction brick (solver/reduce.h).
 */
#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#define FN(name) CAT(name, SUFFIX)

/* One row of S y (y's ghosts set): out = y - theta dt / sqrt(c_a) sum of the faces' K_ab (x_b - x_a), x = y / sqrt(c). */
static inline void FN(material_operator_row)(REAL *restrict out, const REAL *restrict c,
                                             const unsigned char *restrict zone, long n, long sy, long sz,
                                             const FN(material_tables) *m)
{
    const REAL *kx = m->conductance[0], *ky = m->conductance[1], *kz = m->conductance[2];
    const REAL *isq = m->inv_sqrt_heat_capacity;
    const long zones = m->zones;
#pragma omp simd
    for (long i = 0; i < n; ++i) {
        const long a = zone[i], row = a * zones;
        const REAL t = c[i] * isq[a];
        REAL flux = kz[row + zone[i - sz]] * (c[i - sz] * isq[zone[i - sz]] - t);
        flux += ky[row + zone[i - sy]] * (c[i - sy] * isq[zone[i - sy]] - t);
        flux += kx[row + zone[i - 1]] * (c[i - 1] * isq[zone[i - 1]] - t);
        flux += kx[row + zone[i + 1]] * (c[i + 1] * isq[zone[i + 1]] - t);
        flux += ky[row + zone[i + sy]] * (c[i + sy] * isq[zone[i + sy]] - t);
        flux += kz[row + zone[i + sz]] * (c[i + sz] * isq[zone[i + sz]] - t);
        out[i] = c[i] - m->operator_weight[a] * flux;
    }
}

/* weight of point i: 1 / diag(S) (Jacobi) or 1 (inv NULL). */
static inline REAL FN(mat_weight)(const REAL *inv, long i) { return inv ? inv[i] : (REAL)1; }

/* r = fraction dt / sqrt(c_a) (sum of the faces' K (u_b - u_a) + q_a), u's ghosts by the run's rules;
 * r.r and r.M^-1 r per row segment. */
static void FN(mat_cg_rhs)(REAL *restrict r, const REAL *restrict u, const unsigned char *restrict zone, const int n[3],
                           const heat_layout *l, const FN(material_tables) *m, REAL fraction, const REAL *inv, long seg,
                           double *rr, double *rz)
{
    const long first = l->origin + 1 + l->stride_y + l->stride_z, segs = FN(segments_of)(n[0], seg);
    const long sy = l->stride_y, sz = l->stride_z, zones = m->zones;
    const REAL *kx = m->conductance[0], *ky = m->conductance[1], *kz = m->conductance[2];
    FOR_EACH_ROW(n)
    {
        long row = first + y * sy + z * sz, at = ((long)z * n[1] + y) * segs;
        const REAL *c = u + row;
        const unsigned char *zr = zone + row;
        REAL *out = r + row;
#pragma omp simd
        for (long i = 0; i < n[0]; ++i) {
            const long a = zr[i], pair = a * zones;
            const REAL t = c[i];
            REAL flux = kz[pair + zr[i - sz]] * (c[i - sz] - t);
            flux += ky[pair + zr[i - sy]] * (c[i - sy] - t);
            flux += kx[pair + zr[i - 1]] * (c[i - 1] - t);
            flux += kx[pair + zr[i + 1]] * (c[i + 1] - t);
            flux += ky[pair + zr[i + sy]] * (c[i + sy] - t);
            flux += kz[pair + zr[i + sz]] * (c[i + sz] - t);
            out[i] = fraction * m->rhs_weight[a] * (flux + m->source[a]);
        }
        FOR_EACH_SEGMENT(n[0], seg)
        {
            double sum_rr = 0.0, sum_rz = 0.0;
#pragma omp simd reduction(+ : sum_rr, sum_rz)
            for (long i = row + s0; i < row + s1; ++i) {
                REAL v = r[i];
                sum_rr += (double)v * v;
                sum_rz += (double)v * (v * FN(mat_weight)(inv, i));
            }
            rr[at + sid] = sum_rr, rz[at + sid] = sum_rz;
        }
    }
}

/* q = S p (p's ghosts set), p.q per row segment. */
static void FN(mat_cg_apply)(REAL *restrict q, const REAL *restrict p, const unsigned char *restrict zone,
                             const int n[3], const heat_layout *l, const FN(material_tables) *m, long seg, double *pq)
{
    const long first = l->origin + 1 + l->stride_y + l->stride_z, segs = FN(segments_of)(n[0], seg);
    FOR_EACH_ROW(n)
    {
        long row = first + y * l->stride_y + z * l->stride_z, at = ((long)z * n[1] + y) * segs;
        FN(material_operator_row)(q + row, p + row, zone + row, n[0], l->stride_y, l->stride_z, m);
        FN(dot_segments)(p + row, q + row, n[0], seg, pq + at);
    }
}

/* Chebyshev step: out (holding z_{k-1}, or nothing when previous_is_zero) =
 * z + keep (z - out) + push (r - S z) (z's ghosts set); with rz: r.out per row segment. */
static void FN(mat_cheb_step)(REAL *restrict out, const REAL *restrict z_k, const REAL *restrict r, REAL keep,
                              REAL push, int previous_is_zero, const unsigned char *restrict zone, const int n[3],
                              const heat_layout *l, const FN(material_tables) *m, long seg, double *rz)
{
    const long first = l->origin + 1 + l->stride_y + l->stride_z, segs = FN(segments_of)(n[0], seg);
    FOR_EACH_ROW(n)
    {
        long row = first + y * l->stride_y + z * l->stride_z, at = ((long)z * n[1] + y) * segs;
        REAL applied[n[0]];
        FN(material_operator_row)(applied, z_k + row, zone + row, n[0], l->stride_y, l->stride_z, m);
        const REAL *zr = z_k + row, *rr = r + row;
        REAL *o = out + row;
#pragma omp simd
        for (long i = 0; i < n[0]; ++i) {
            REAL previous = previous_is_zero ? (REAL)0 : o[i];
            o[i] = zr[i] + keep * (zr[i] - previous) + push * (rr[i] - applied[i]);
        }
        if (rz) FN(dot_segments)(rr, o, n[0], seg, rz + at);
    }
}

/* r -= a q; r.r and r.M^-1 r per row segment. */
static void FN(mat_cg_update)(REAL *restrict r, const REAL *restrict q, REAL a, const REAL *inv, const int n[3],
                              const heat_layout *l, long seg, double *rr, double *rz)
{
    const long first = l->origin + 1 + l->stride_y + l->stride_z, segs = FN(segments_of)(n[0], seg);
    FOR_EACH_ROW(n)
    {
        long row = first + y * l->stride_y + z * l->stride_z, at = ((long)z * n[1] + y) * segs;
        const FN(row_weights) none = {1, 1, 1};
        FN(update_row_dots)(r + row, q + row, a, n[0], none, inv ? inv + row : NULL, seg, rr + at, rz + at);
    }
}

/* p = M^-1 source + beta p, after the waiting x step has read p's row. */
static void FN(mat_cg_direction)(REAL *restrict p, const REAL *restrict source, REAL beta, FN(x_step) xs,
                                 const REAL *inv, const int n[3], const heat_layout *l)
{
    const long first = l->origin + 1 + l->stride_y + l->stride_z;
    FOR_EACH_ROW(n)
    {
        long row = first + y * l->stride_y + z * l->stride_z;
        if (xs.x) FN(cg_step_row)(xs.x + row, p + row, xs.a, xs.first, n[0]);
#pragma omp simd
        for (long i = row; i < row + n[0]; ++i) {
            REAL v = source[i] * FN(mat_weight)(inv, i);
            p[i] = beta == 0 ? v : v + beta * p[i];
        }
    }
}

/* u += y / sqrt(rho c) over the owned points, after the waiting x step. */
static void FN(mat_cg_finish)(REAL *restrict u, FN(x_step) xs, const REAL *restrict p, const unsigned char *zone,
                              const FN(material_tables) *m, const int n[3], const heat_layout *l)
{
    const long first = l->origin + 1 + l->stride_y + l->stride_z;
    FOR_EACH_ROW(n)
    {
        long row = first + y * l->stride_y + z * l->stride_z;
        FN(cg_step_row)(xs.x + row, p + row, xs.a, xs.first, n[0]);
        const REAL *restrict x = xs.x;
#pragma omp simd
        for (long i = row; i < row + n[0]; ++i) u[i] += x[i] * m->inv_sqrt_heat_capacity[zone[i]];
    }
}

/* inv = 1 / diag(S): 1 + theta dt / (rho c)_a times the faces' K_ab, a
 * boundary face's K (1 - scale) (its homogeneous ghost is scale x_a). */
static void FN(mat_inverse_diagonal)(REAL *restrict inv, const unsigned char *restrict zone, const int n[3],
                                     const heat_layout *l, const FN(material_tables) *m)
{
    const long first = l->origin + 1 + l->stride_y + l->stride_z;
    const long stride[3] = {1, l->stride_y, l->stride_z};
    FOR_EACH_ROW(n)
    {
        const int at[3] = {0, y, z};
        for (int x = 0; x < n[0]; ++x) {
            long i = first + x + y * l->stride_y + z * l->stride_z;
            int a = zone[i];
            double faces = 0.0, position[3] = {x, at[1], at[2]};
            for (int f = 0; f < FACE_COUNT; ++f) {
                int axis = f / 2, high = f % 2;
                long neighbour = i + (high ? stride[axis] : -stride[axis]);
                int boundary = !(m->exchanged & 1u << f) && position[axis] == (high ? n[axis] - 1 : 0);
                double k = m->conductance[axis][a * m->zones + zone[neighbour]];
                faces += boundary ? k * (1.0 - m->scale[f][a]) : k;
            }
            double isq = m->inv_sqrt_heat_capacity[a];
            inv[i] = (REAL)(1.0 / (1.0 + (double)m->operator_weight[a] * isq * faces));
        }
    }
}

#undef FN
#undef CAT
#undef CAT_
