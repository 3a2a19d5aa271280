/*
 * CPU kernels of the implicit solver (solver/implicit.h) for one precision;
 * part of cpu_kernels.h (REAL, FN, stencil_row and set_x_ghosts come from
 * there). Operators reuse stencil_row: A p = p + (-theta alpha dt) lap0(p) is
 * a heat step with a negative coefficient. Each row is swept, then reduced
 * while it is still in cache; dot products go to one partial per row (`dots`,
 * n[1] * n[2] entries, row order), which the backend sums in row order: the
 * result does not depend on the number of threads. Within a row the sum is
 * vectorised (omp simd reduction): its order is fixed by the compiled code.
 */

/* 1 / diag(A) across one row: the two x-face points differ from the rest. */
typedef struct FN(row_weights) {
    REAL first, middle, last;
} FN(row_weights);

static inline REAL FN(weight_at)(FN(row_weights) w, long i, long n)
{
    return i == 0 ? w.first : (i == n - 1 ? w.last : w.middle);
}

/* diag(A) = base + sum of face[f] over the faces the point touches. */
static FN(row_weights) FN(row_weights_make)(const heat_cg_diagonal *d, int y, int z, const int n[3])
{
    double row = d->base + (y == 0 ? d->face[FACE_Y_LOW] : 0.0) + (y == n[1] - 1 ? d->face[FACE_Y_HIGH] : 0.0) +
                 (z == 0 ? d->face[FACE_Z_LOW] : 0.0) + (z == n[2] - 1 ? d->face[FACE_Z_HIGH] : 0.0);
    if (!d->jacobi) return (FN(row_weights)){1, 1, 1};
    return (FN(row_weights)){(REAL)(1.0 / (row + d->face[FACE_X_LOW])), (REAL)(1.0 / row),
                             (REAL)(1.0 / (row + d->face[FACE_X_HIGH]))};
}

/* Dot products are summed per row segment of `seg` points (one reduction
 * brick wide, solver/reduce.h), never across a segment boundary. */
#define FOR_EACH_SEGMENT(n0, seg)                                                                              \
    for (long s0 = 0, sid = 0, s1 = (seg) < (n0) ? (seg) : (n0); s0 < (n0);                                  \
         s0 += (seg), ++sid, s1 = s0 + (seg) < (n0) ? s0 + (seg) : (n0))

static inline long FN(segments_of)(long n0, long seg) { return (n0 + seg - 1) / seg; }


#define FOR_EACH_ROW(n)                                                                                      \
    _Pragma("omp parallel for collapse(2) schedule(static)") for (int z = 0; z < (n)[2]; ++z) for (int y = 0; \
                                                                                                 y < (n)[1]; ++y)

/* The same rows for the operators, which read three planes: in blocks of
 * `rows` rows of y, each swept by all threads, each thread up the z planes of
 * its share, so that planes z-1 and z of the block are still in its L2 when
 * row z+1 needs them (as stencil_sweep_planes does). One parallel region a block. */
#define FOR_EACH_ROW_IN_BLOCKS(n, rows)                                                                      \
    for (int y0 = 0; y0 < (n)[1]; y0 += (rows))                                                               \
    _Pragma("omp parallel for collapse(2) schedule(static)") for (int z = 0; z < (n)[2]; ++z) for (           \
        int y = y0; y < (y0 + (rows) < (n)[1] ? y0 + (rows) : (n)[1]); ++y)

/* r = scale lap(u) (the run's boundary conditions: ghosts by shift/scale). */
static void FN(cg_rhs)(REAL *restrict r, REAL *restrict u, const int n[3], const heat_layout *l, FN(cpu_coeffs) k,
                       REAL rhs_scale, const FN(ghost_rule) *g, const heat_cg_diagonal *d,
                       long seg, double *rr, double *rz)
{
    const long first = l->origin + 1 + l->stride_y + l->stride_z, segs = FN(segments_of)(n[0], seg);
    FOR_EACH_ROW(n)
    {
        long row = first + y * l->stride_y + z * l->stride_z, at = ((long)z * n[1] + y) * segs;
        FN(row_weights) w = FN(row_weights_make)(d, y, z, n);
        FN(set_x_ghosts)(u + row, n[0], g);
        FN(stencil_row)(r + row, u + row, n[0], l->stride_y, l->stride_z, k, 1);
        FOR_EACH_SEGMENT(n[0], seg)
        {
            double sum_rr = 0.0, sum_rz = 0.0;
#pragma omp simd reduction(+ : sum_rr, sum_rz)
            for (long i = s0; i < s1; ++i) {
                REAL v = rhs_scale * r[row + i];
                r[row + i] = v;
                sum_rr += (double)v * v;
                sum_rz += (double)v * (v * FN(weight_at)(w, i, n[0]));
            }
            rr[at + sid] = sum_rr, rz[at + sid] = sum_rz;
        }
    }
}

/* q = A p = p + k.alpha_dt lap0(p) (k.alpha_dt = -theta alpha dt; y/z ghosts of p set).
 * q is next read from memory (by cg_update), so each row is computed into the
 * thread's scratch row, reduced with p there, and streamed to q: stored
 * through the cache, every line of q would be read before being written, a
 * third stream beside p and q. (Streaming straight from the stencil and
 * summing from its registers was slower: the fixed-order segment sums broke
 * its vector loop.) Blocked as FOR_EACH_ROW_IN_BLOCKS, with each thread's
 * streaming stores fenced before the block's closing barrier. */
static void FN(cg_apply)(REAL *restrict q, REAL *restrict p, const int n[3], const heat_layout *l, FN(cpu_coeffs) k,
                         const FN(ghost_rule) *g, REAL *scratch, long seg, double *pq, int rows)
{
    const long first = l->origin + 1 + l->stride_y + l->stride_z, segs = FN(segments_of)(n[0], seg);
    const long sy = l->stride_y, sz = l->stride_z;
    for (int y0 = 0; y0 < n[1]; y0 += rows) {
        const int y1 = y0 + rows < n[1] ? y0 + rows : n[1];
#pragma omp parallel
        {
            REAL *applied = scratch + (long)omp_get_thread_num() * sy;
#pragma omp for collapse(2) schedule(static) nowait
            for (int z = 0; z < n[2]; ++z)
                for (int y = y0; y < y1; ++y) {
                    long row = first + y * sy + z * sz, at = ((long)z * n[1] + y) * segs;
                    FN(set_x_ghosts)(p + row, n[0], g);
                    FN(stencil_row3_vec)(applied, p + row - sz, p + row, p + row + sz, n[0], sy, k, 0, 1);
                    FOR_EACH_SEGMENT(n[0], seg)
                    {
                        double sum = 0.0;
#pragma omp simd reduction(+ : sum)
                        for (long i = s0; i < s1; ++i) sum += (double)p[row + i] * applied[i];
                        pq[at + sid] = sum;
                    }
                    FN(stream_row)(q + row, applied, n[0]);
                }
            _mm_sfence();
        }
    }
}

/* x = a p (first) or x += a p; r -= a q. */
static void FN(cg_update)(REAL *restrict x, const REAL *restrict p, REAL *restrict r, const REAL *restrict q, REAL a,
                          int first_iteration, const int n[3], const heat_layout *l, const heat_cg_diagonal *d,
                          long seg, double *rr, double *rz)
{
    const long first = l->origin + 1 + l->stride_y + l->stride_z, segs = FN(segments_of)(n[0], seg);
    FOR_EACH_ROW(n)
    {
        long row = first + y * l->stride_y + z * l->stride_z, at = ((long)z * n[1] + y) * segs;
        FN(row_weights) w = FN(row_weights_make)(d, y, z, n);
        FOR_EACH_SEGMENT(n[0], seg)
        {
            double sum_rr = 0.0, sum_rz = 0.0;
#pragma omp simd reduction(+ : sum_rr, sum_rz)
            for (long i = row + s0; i < row + s1; ++i) {
                x[i] = first_iteration ? a * p[i] : x[i] + a * p[i];
                REAL v = r[i] - a * q[i];
                r[i] = v;
                sum_rr += (double)v * v;
                sum_rz += (double)v * (v * FN(weight_at)(w, i - row, n[0]));
            }
            rr[at + sid] = sum_rr, rz[at + sid] = sum_rz;
        }
    }
}

/* p = weight source + beta p (weight = 1 / diag(A) for jacobi, else 1). */
static void FN(cg_direction)(REAL *restrict p, const REAL *restrict source, REAL beta, const int n[3],
                             const heat_layout *l, const heat_cg_diagonal *d)
{
    const long first = l->origin + 1 + l->stride_y + l->stride_z;
    FOR_EACH_ROW(n)
    {
        long row = first + y * l->stride_y + z * l->stride_z;
        FN(row_weights) w = FN(row_weights_make)(d, y, z, n);
#pragma omp simd
        for (long i = 0; i < n[0]; ++i) {
            REAL v = source[row + i] * FN(weight_at)(w, i, n[0]);
            p[row + i] = beta == 0 ? v : v + beta * p[row + i];
        }
    }
}

/* Chebyshev step k of z = poly(A) r into `out` (which holds z_{k-1}, or
 * nothing when previous_is_zero): out = z + keep (z - out) + push (r - A z).
 * `scratch` holds one row per thread for A z. With dots: r.out per row. */
static void FN(cheb_step)(REAL *restrict out, REAL *restrict z_k, const REAL *restrict r, REAL keep, REAL push,
                          int previous_is_zero, const int n[3], const heat_layout *l, FN(cpu_coeffs) k,
                          const FN(ghost_rule) *g, REAL *scratch, long seg, double *rz, int rows)
{
    const long first = l->origin + 1 + l->stride_y + l->stride_z, segs = FN(segments_of)(n[0], seg);
    const long sy = l->stride_y, sz = l->stride_z;
    FOR_EACH_ROW_IN_BLOCKS(n, rows)
    {
        long row = first + y * sy + z * sz, at = ((long)z * n[1] + y) * segs;
        REAL *applied = scratch + (long)omp_get_thread_num() * sy, *o = out + row;
        const REAL *zr = z_k + row, *rr = r + row;
        FN(set_x_ghosts)(z_k + row, n[0], g);
        FN(stencil_row3_vec)(applied, z_k + row - sz, z_k + row, z_k + row + sz, n[0], sy, k, 0, 1);
#pragma omp simd
        for (long i = 0; i < n[0]; ++i) {
            REAL zi = zr[i], previous = previous_is_zero ? 0 : o[i];
            o[i] = zi + keep * (zi - previous) + push * (rr[i] - applied[i]);
        }
        /* Only the last degree's r.z is wanted; its row is still in L1. */
        if (rz) FOR_EACH_SEGMENT(n[0], seg)
            {
                double sum = 0.0;
#pragma omp simd reduction(+ : sum)
                for (long i = s0; i < s1; ++i) sum += (double)rr[i] * o[i];
                rz[at + sid] = sum;
            }
    }
}

/* z = scale r, the Chebyshev start; with dots: r.z per row. */
static void FN(cg_scale)(REAL *restrict out, const REAL *restrict r, REAL factor, const int n[3], const heat_layout *l,
                         long seg, double *rz)
{
    const long first = l->origin + 1 + l->stride_y + l->stride_z, segs = FN(segments_of)(n[0], seg);
    FOR_EACH_ROW(n)
    {
        long row = first + y * l->stride_y + z * l->stride_z, at = ((long)z * n[1] + y) * segs;
        FOR_EACH_SEGMENT(n[0], seg)
        {
            double sum = 0.0;
#pragma omp simd reduction(+ : sum)
            for (long i = row + s0; i < row + s1; ++i) {
                out[i] = factor * r[i];
                sum += (double)r[i] * out[i];
            }
            if (rz) rz[at + sid] = sum;
        }
    }
}

/* u += x over the owned points. */
static void FN(cg_finish)(REAL *restrict u, const REAL *restrict x, const int n[3], const heat_layout *l)
{
    const long first = l->origin + 1 + l->stride_y + l->stride_z;
    FOR_EACH_ROW(n)
    {
        long row = first + y * l->stride_y + z * l->stride_z;
#pragma omp simd
        for (long i = row; i < row + n[0]; ++i) u[i] += x[i];
    }
}

#undef FOR_EACH_ROW
#undef FOR_EACH_ROW_IN_BLOCKS
#undef FOR_EACH_SEGMENT
