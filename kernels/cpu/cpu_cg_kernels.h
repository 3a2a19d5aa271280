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

#ifndef FOR_EACH_SEGMENT /* this file is included once per precision; cpu_materials_cg.h uses these too */
/* Dot products are summed per row segment of `seg` points (one reduction
 * brick wide, solver/reduce.h), never across a segment boundary. */
#define FOR_EACH_SEGMENT(n0, seg)                                                                              \
    for (long s0 = 0, sid = 0, s1 = (seg) < (n0) ? (seg) : (n0); s0 < (n0);                                  \
         s0 += (seg), ++sid, s1 = s0 + (seg) < (n0) ? s0 + (seg) : (n0))

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

#endif

static inline long FN(segments_of)(long n0, long seg) { return (n0 + seg - 1) / seg; }

/* a.b per segment of a row of n points, into sums[0 .. segments_of(n, seg)). */
static inline void FN(dot_segments)(const REAL *a, const REAL *b, long n, long seg, double *sums)
{
    FOR_EACH_SEGMENT(n, seg)
    {
        double sum = 0.0;
#pragma omp simd reduction(+ : sum)
        for (long i = s0; i < s1; ++i) sum += (double)a[i] * b[i];
        sums[sid] = sum;
    }
}

/* r = scale r over a row of n points, with r.r into rr[] and r.(w r) into rz[] per segment. */
static inline void FN(scale_row_dots)(REAL *r, long n, REAL scale, FN(row_weights) w, long seg, double *rr,
                                      double *rz)
{
    FOR_EACH_SEGMENT(n, seg)
    {
        double sum_rr = 0.0, sum_rz = 0.0;
#pragma omp simd reduction(+ : sum_rr, sum_rz)
        for (long i = s0; i < s1; ++i) {
            REAL v = scale * r[i];
            r[i] = v;
            sum_rr += (double)v * v;
            sum_rz += (double)v * (v * FN(weight_at)(w, i, n));
        }
        rr[sid] = sum_rr, rz[sid] = sum_rz;
    }
}

/* r -= a q over a row of n points, with r.r into rr[] and r.(weight r) into rz[] per segment; the
 * weight of point i is inv[i] (the materials' Jacobi), or where inv is NULL w's. A constant inv
 * (NULL) at a call compiles to the 7-point operator's loop alone. */
static inline __attribute__((always_inline)) void FN(update_row_dots)(REAL *restrict r, const REAL *restrict q,
                                                                      REAL a, long n, FN(row_weights) w,
                                                                      const REAL *inv, long seg, double *rr,
                                                                      double *rz)
{
    FOR_EACH_SEGMENT(n, seg)
    {
        double sum_rr = 0.0, sum_rz = 0.0;
#pragma omp simd reduction(+ : sum_rr, sum_rz)
        for (long i = s0; i < s1; ++i) {
            REAL v = r[i] - a * q[i];
            r[i] = v;
            sum_rr += (double)v * v;
            sum_rz += (double)v * (v * (inv ? inv[i] : FN(weight_at)(w, i, n)));
        }
        rr[sid] = sum_rr, rz[sid] = sum_rz;
    }
}

/* r = scale lap(u) (the run's boundary conditions: ghosts by shift/scale). */
static void FN(cg_rhs)(REAL *restrict r, REAL *restrict u, const int n[3], const heat_layout *l, FN(cpu_coeffs) k,
                       REAL rhs_scale, const FN(ghost_rule) *g, const heat_cg_diagonal *d,
                       long seg, double *rr, double *rz)
{
    const long first = heat_layout_first_owned(l), segs = FN(segments_of)(n[0], seg);
    FOR_EACH_ROW(n)
    {
        long row = first + y * l->stride_y + z * l->stride_z, at = ((long)z * n[1] + y) * segs;
        FN(row_weights) w = FN(row_weights_make)(d, y, z, n);
        FN(set_x_ghosts)(u + row, n[0], g);
        FN(stencil_row)(r + row, u + row, n[0], l->stride_y, l->stride_z, k, 1);
        FN(scale_row_dots)(r + row, n[0], rhs_scale, w, seg, rr + at, rz + at);
    }
}

/* The dot products' vectors: double lanes, as many as a REAL vector's
 * lanes fit in one register of the build's width. A float vector is summed
 * in its halves, each widened to double (sums are always in double). */
typedef double FN(dvec) __attribute__((vector_size(CPU_VECTOR_BYTES)));
typedef REAL FN(part) __attribute__((vector_size(CPU_VECTOR_BYTES * sizeof(REAL) / sizeof(double))));

/* acc += (double)a * b, lane by lane. */
static inline FN(dvec) FN(dot_lanes)(FN(dvec) acc, FN(vec) a, FN(vec) b)
{
    for (size_t at = 0; at < sizeof a; at += sizeof(FN(part))) {
        FN(part) pa, pb;
        memcpy(&pa, (const char *)&a + at, sizeof pa);
        memcpy(&pb, (const char *)&b + at, sizeof pb);
        acc += __builtin_convertvector(pa, FN(dvec)) * __builtin_convertvector(pb, FN(dvec));
    }
    return acc;
}

/* The lanes in lane order: a fixed order, so the sum is the same bits on every run and layout. */
static inline double FN(lanes_sum)(FN(dvec) v)
{
    double sum = 0.0;
    for (size_t i = 0; i < sizeof v / sizeof(double); ++i) sum += v[i];
    return sum;
}

/* One row of q = A p, streamed to q, with p.q per segment of `seg` points
 * into sums[]. The stencil's vector goes to memory and into the dot product
 * straight from its register; a row first computed into a scratch row and
 * then read twice (for the dot and for the streaming copy) would be bound by
 * those passes, not by memory. Segments start at multiples of seg (a power of two >= 16, so a
 * multiple of any vector's lanes) from a 64-byte-aligned row, so every whole
 * vector's streaming store is aligned; a segment's tail shorter than a
 * vector (only the row's last segment has one) goes through the cache. */
static inline __attribute__((always_inline)) void
    FN(apply_row_dots)(REAL *restrict q, const REAL *restrict below, const REAL *restrict c,
                       const REAL *restrict above, long n, long sy, FN(cpu_coeffs) k, long seg, double *restrict sums)
{
    const long whole = n / seg * seg; /* the segments that are whole vectors only */
    long i = 0;
    for (; i < whole; i += seg) {
        FN(dvec) acc = {0};
        for (long v = i; v < i + seg; v += FN(LANES)) {
            FN(prefetch_next_row)(above + v, sy);
            FN(vec) applied = FN(stencil_vec)(below + v, c + v, above + v, sy, k);
            FN(stream_store)(q + v, applied);
            acc = FN(dot_lanes)(acc, FN(load)(c + v), applied);
        }
        *sums++ = FN(lanes_sum)(acc);
    }
    if (i == n) return;
    FN(dvec) acc = {0};
    for (; i + FN(LANES) <= n; i += FN(LANES)) {
        FN(vec) applied = FN(stencil_vec)(below + i, c + i, above + i, sy, k);
        FN(stream_store)(q + i, applied);
        acc = FN(dot_lanes)(acc, FN(load)(c + i), applied);
    }
    double sum = FN(lanes_sum)(acc);
    FN(stencil_row3)(q + i, below + i, c + i, above + i, n - i, sy, k, 0);
    for (; i < n; ++i) sum += (double)c[i] * q[i];
    *sums = sum;
}

/* What cg_apply's rows need: q = A p, p.q per segment of `seg` points into pq (segs a row). */
typedef struct FN(apply_job) {
    REAL *q, *p;
    const int *n;
    long sy, sz, seg, segs;
    FN(cpu_coeffs) k;
    const FN(ghost_rule) *g;
    double *pq;
} FN(apply_job);

/* Row (y, z) of q = A p: its x ghosts set, then swept; its segments' p.q into pq. */
static inline __attribute__((always_inline)) void FN(apply_job_row)(const void *job, long row, int y, int z)
{
    const FN(apply_job) *j = job;
    const long sz = j->sz;
    FN(set_x_ghosts)(j->p + row, j->n[0], j->g);
    FN(apply_row_dots)(j->q + row, j->p + row - sz, j->p + row, j->p + row + sz, j->n[0], j->sy, j->k, j->seg,
                       j->pq + ((long)z * j->n[1] + y) * j->segs);
}

/* q = A p = p + k.alpha_dt lap0(p) (k.alpha_dt = -theta alpha dt; y/z ghosts
 * of p set), with p.q per row segment. q is next read from memory (by
 * cg_update): stored through the cache, every line of q would be read before
 * being written, a third stream beside p and q. Marched as the explicit
 * sweep (march_rows, blocks of `rows` rows); streaming stores fenced at the end. */
static void FN(cg_apply)(REAL *restrict q, REAL *restrict p, const int n[3], const heat_layout *l, FN(cpu_coeffs) k,
                         const FN(ghost_rule) *g, long seg, double *pq, int rows)
{
    const FN(apply_job) job = {q, p, n, l->stride_y, l->stride_z, seg, FN(segments_of)(n[0], seg), k, g, pq};
#pragma omp parallel
    {
        FN(march_rows)(FN(apply_job_row), &job, n, l, rows, 0, n[2], NULL);
        _mm_sfence();
    }
}

/* x = a p (first) or x += a p across one row. Two loops, not a choice
 * inside one: GCC vectorised the loop with the choice only where it was
 * unswitched to x = a p, and ran x += a p, every iteration's case, scalar. */
static inline void FN(cg_step_row)(REAL *restrict x, const REAL *restrict p, REAL a, int first_iteration, long n)
{
    if (first_iteration) {
#pragma omp simd
        for (long i = 0; i < n; ++i) x[i] = a * p[i];
    } else {
#pragma omp simd
        for (long i = 0; i < n; ++i) x[i] = x[i] + a * p[i];
    }
}

/* r -= a q (x += a p waits for the next pass over p: cg_direction or cg_finish). */
static void FN(cg_update)(REAL *restrict r, const REAL *restrict q, REAL a, const int n[3], const heat_layout *l,
                          const heat_cg_diagonal *d, long seg, double *rr, double *rz)
{
    const long first = heat_layout_first_owned(l), segs = FN(segments_of)(n[0], seg);
    FOR_EACH_ROW(n)
    {
        long row = first + y * l->stride_y + z * l->stride_z, at = ((long)z * n[1] + y) * segs;
        FN(update_row_dots)(r + row, q + row, a, n[0], FN(row_weights_make)(d, y, z, n), NULL, seg, rr + at, rz + at);
    }
}

/* The x update an earlier cg_update left waiting: x = a p (first) or x += a p. */
typedef struct FN(x_step) {
    REAL *x; /* NULL: none waiting */
    REAL a;
    int first;
} FN(x_step);

/* p = weight source + beta p (weight = 1 / diag(A) for jacobi, else 1), after
 * the waiting x step has read p's row, while it is in cache. */
static void FN(cg_direction)(REAL *restrict p, const REAL *restrict source, REAL beta, FN(x_step) xs, const int n[3],
                             const heat_layout *l, const heat_cg_diagonal *d)
{
    const long first = heat_layout_first_owned(l);
    FOR_EACH_ROW(n)
    {
        long row = first + y * l->stride_y + z * l->stride_z;
        if (xs.x) FN(cg_step_row)(xs.x + row, p + row, xs.a, xs.first, n[0]);
        FN(row_weights) w = FN(row_weights_make)(d, y, z, n);
#pragma omp simd
        for (long i = 0; i < n[0]; ++i) {
            REAL v = source[row + i] * FN(weight_at)(w, i, n[0]);
            p[row + i] = beta == 0 ? v : v + beta * p[row + i];
        }
    }
}

/* One row of a Chebyshev step: out = z + keep (z - previous) + push (r - applied), previous
 * NULL for zero. The one expression of every path, so that a fused pair of steps (cheb_pair)
 * gives the bits of two single steps. out may be previous (updated in place). */
static inline void FN(cheb_update_row)(REAL *out, const REAL *restrict z, const REAL *previous,
                                       const REAL *restrict r, const REAL *restrict applied, long n, REAL keep,
                                       REAL push)
{
    if (previous) {
#pragma omp simd
        for (long i = 0; i < n; ++i) out[i] = z[i] + keep * (z[i] - previous[i]) + push * (r[i] - applied[i]);
    } else {
#pragma omp simd
        for (long i = 0; i < n; ++i) out[i] = z[i] + keep * (z[i] - 0) + push * (r[i] - applied[i]);
    }
}

/* One vector of a Chebyshev step at c (z's rows below and above it):
 * cheb_update_row's expression on the stencil's vector while it is still in
 * its register. Writing A z to a scratch row and reading it back costs the
 * operator as much as its stencil; the step is the same kind of sweep. before: z_{k-1}, or zero. */
static inline __attribute__((always_inline)) FN(vec)
    FN(cheb_vec)(const REAL *below, const REAL *c, const REAL *above, FN(vec) before, const REAL *r, long sy,
                 FN(cpu_coeffs) k, REAL keep, REAL push)
{
    FN(vec) applied = FN(stencil_vec)(below, c, above, sy, k), z = FN(load)(c);
    return z + keep * (z - before) + push * (FN(load)(r) - applied);
}

/* One row of a Chebyshev step, out = z + keep (z - previous) + push (r - A z)
 * (previous NULL: zero; out may be previous), stored through the cache or
 * streamed (`stream`), and streamed also to `copy` where it is not NULL.
 * prefetch: the next row of plane z+1 (z read from memory). Constants at
 * every call. The tail shorter than a vector goes through cheb_update_row. */
static inline __attribute__((always_inline)) void
    FN(cheb_row_with)(REAL *out, REAL *restrict copy, const REAL *below, const REAL *c, const REAL *above,
                      const REAL *previous, const REAL *r, long n, long sy, FN(cpu_coeffs) k, REAL keep, REAL push,
                      int has_previous, int stream, int prefetch)
{
    long i = 0;
    for (; i + FN(LANES) <= n; i += FN(LANES)) {
        if (prefetch) FN(prefetch_next_row)(above + i, sy);
        FN(vec) before = {0};
        if (has_previous) before = FN(load)(previous + i);
        FN(vec) v = FN(cheb_vec)(below + i, c + i, above + i, before, r + i, sy, k, keep, push);
        FN(store)(out + i, v, stream);
        if (copy) FN(stream_store)(copy + i, v);
    }
    if (i == n) return;
    REAL applied[FN(LANES)];
    FN(stencil_row3)(applied, below + i, c + i, above + i, n - i, sy, k, 0);
    FN(cheb_update_row)(out + i, c + i, has_previous ? previous + i : NULL, r + i, applied, n - i, keep, push);
    if (copy)
        for (; i < n; ++i) copy[i] = out[i];
}

static inline __attribute__((always_inline)) void
    FN(cheb_row)(REAL *out, REAL *restrict copy, const REAL *below, const REAL *c, const REAL *above,
                 const REAL *previous, const REAL *r, long n, long sy, FN(cpu_coeffs) k, REAL keep, REAL push,
                 int stream, int prefetch)
{
    if (previous) FN(cheb_row_with)(out, copy, below, c, above, previous, r, n, sy, k, keep, push, 1, stream, prefetch);
    else FN(cheb_row_with)(out, copy, below, c, above, NULL, r, n, sy, k, keep, push, 0, stream, prefetch);
}

/* Chebyshev step k of z = poly(A) r into `out` (which holds z_{k-1}, or
 * nothing when previous_is_zero): out = z + keep (z - out) + push (r - A z),
 * row by row from the stencil's registers (cheb_row). With dots: r.out per row. */
static void FN(cheb_step)(REAL *restrict out, REAL *restrict z_k, const REAL *restrict r, REAL keep, REAL push,
                          int previous_is_zero, const int n[3], const heat_layout *l, FN(cpu_coeffs) k,
                          const FN(ghost_rule) *g, long seg, double *rz, int rows)
{
    const long first = heat_layout_first_owned(l), segs = FN(segments_of)(n[0], seg);
    const long sy = l->stride_y, sz = l->stride_z;
    FOR_EACH_ROW_IN_BLOCKS(n, rows)
    {
        long row = first + y * sy + z * sz, at = ((long)z * n[1] + y) * segs;
        REAL *o = out + row;
        const REAL *zr = z_k + row, *rr = r + row;
        FN(set_x_ghosts)(z_k + row, n[0], g);
        FN(cheb_row)(o, NULL, zr - sz, zr, zr + sz, previous_is_zero ? NULL : o, rr, n[0], sy, k, keep, push, 0, 1);
        /* Only the last degree's r.z is wanted; its row is still in L1. */
        if (rz) FN(dot_segments)(rr, o, n[0], seg, rz + at);
    }
}

/* ---- two Chebyshev steps a sweep ----
 * Where no face is exchanged, steps k and k+1 of the preconditioner go in one
 * sweep, as two explicit steps do (stencil_sweep2_planes):
 *   mid = z + keep[0] (z - previous) + push[0] (r - A z)      (previous NULL: zero)
 *   out = mid + keep[1] (mid - z) + push[1] (r - A mid)
 * Each thread keeps mid for its block of rows in a ring of three planes and
 * streams it to `mid` (the next pair's previous); out is streamed. Memory sees
 * previous, z and r read and mid and out written for two steps, where two
 * single steps move eight fields. All four fields are distinct: a thread's
 * ring reads z and previous one plane and one row beyond its block, which
 * its neighbours (and its own next block) would otherwise have overwritten. */
typedef struct FN(cheb_pair_args) {
    REAL *mid, *out, *z;
    const REAL *previous, *r;
    REAL keep[2], push[2];
    FN(cpu_coeffs) k;
    const FN(ghost_rule) *g;
} FN(cheb_pair_args);

/* Rows [v->ya, yb) of plane z of mid into the ring; the rows of the block
 * [y0, y1) inside the slab also to memory. */
static void FN(cheb_first_plane)(const FN(cheb_pair_args) *a, FN(ring) *v, long first, int z, int y0, int y1,
                                 int yb, int owned, int set_z_ghosts, const int n[3], long sz)
{
    const long sy = v->sy;
    for (int y = v->ya; y < yb; ++y) {
        long row = first + y * sy + z * sz;
        REAL *m = FN(ring_row)(v, y, z);
        const REAL *zr = a->z + row;
        if (set_z_ghosts) FN(set_x_ghosts)(a->z + row, n[0], a->g);
        REAL *to_memory = owned && y >= y0 && y < y1 ? a->mid + row : NULL;
        FN(cheb_row)(m, to_memory, zr - sz, zr, zr + sz, a->previous ? a->previous + row : NULL, a->r + row, n[0], sy,
                     a->k, a->keep[0], a->push[0], 0, 1);
        FN(set_x_ghosts)(m, n[0], a->g);
        FN(set_y_ghosts)(m, y, n, sy, a->g);
    }
}

/* Rows [y0, y1) of plane z of out, from the ring's planes z-1, z, z+1. */
static void FN(cheb_second_plane)(const FN(cheb_pair_args) *a, const FN(ring) *v, long first, int z, int y0, int y1,
                                  const int n[3], long sz)
{
    for (int y = y0; y < y1; ++y) {
        long row = first + y * v->sy + z * sz;
        FN(cheb_row)(a->out + row, NULL, FN(ring_row)(v, y, z - 1), FN(ring_row)(v, y, z), FN(ring_row)(v, y, z + 1),
                     a->z + row, a->r + row, n[0], v->sy, a->k, a->keep[1], a->push[1], 1, 0);
    }
}

/* One block of rows [y0, y1) of a thread's slab [z0, z1), up z (sweep2_block's order). */
static void FN(cheb_pair_block)(const FN(cheb_pair_args) *a, FN(ring) *v, long first, int y0, int y1, int z0, int z1,
                                const int n[3], long sz)
{
    v->ya = y0 > 0 ? y0 - 1 : 0;
    int yb = y1 < n[1] ? y1 + 1 : n[1];
    int za = z0 > 0 ? z0 - 1 : 0, zb = z1 < n[2] ? z1 + 1 : n[2];
    for (int z = za; z < zb; ++z) {
        FN(cheb_first_plane)(a, v, first, z, y0, y1, yb, z >= z0 && z < z1, z > z0 && z < z1 - 1, n, sz);
        if (z == 0) FN(ring_z_ghosts)(v, 0, -1, yb, n, a->g, FACE_Z_LOW);
        if (z - 1 >= z0 && z - 1 < z1) FN(cheb_second_plane)(a, v, first, z - 1, y0, y1, n, sz);
        if (z == n[2] - 1 && z < z1) { /* its ghost takes the slot of plane z - 2, just used above */
            FN(ring_z_ghosts)(v, z, n[2], yb, n, a->g, FACE_Z_HIGH);
            FN(cheb_second_plane)(a, v, first, z, y0, y1, n, sz);
        }
    }
}

/* The pair on `threads` threads, each a slab of planes; z's y and z ghosts set (halo_fill_yz). */
static void FN(cheb_pair)(const FN(cheb_pair_args) *a, const int n[3], const heat_layout *l, int block_rows,
                          REAL *rings, int threads)
{
    const long sy = l->stride_y, sz = l->stride_z;
    const long first = heat_layout_first_owned(l);
#pragma omp parallel num_threads(threads)
    {
        int z0, z1;
        FN(thread_slab)(0, n[2], &z0, &z1);
        /* The slab's first and last planes are read by the neighbours' rings too. */
        FN(set_plane_ghosts)(a->z, first, z0, n, sy, sz, a->g);
        FN(set_plane_ghosts)(a->z, first, z1 - 1, n, sy, sz, a->g);
#pragma omp barrier
        FN(ring) v = FN(thread_ring)(rings, sy, block_rows);
        for (int y0 = 0; y0 < n[1]; y0 += block_rows) {
            int y1 = y0 + block_rows < n[1] ? y0 + block_rows : n[1];
            FN(cheb_pair_block)(a, &v, first, y0, y1, z0, z1, n, sz);
        }
        _mm_sfence();
    }
}

/* z = scale r with streaming stores: stored through the cache, every line of
 * z would be read before it is written. */
static void FN(scale_stream)(REAL *restrict out, const REAL *restrict r, REAL factor, const int n[3],
                             const heat_layout *l)
{
    const long first = heat_layout_first_owned(l);
#pragma omp parallel
    {
#pragma omp for collapse(2) schedule(static) nowait
        for (int z = 0; z < n[2]; ++z)
            for (int y = 0; y < n[1]; ++y) {
                long row = first + y * l->stride_y + z * l->stride_z, i = 0;
                for (; i + FN(LANES) <= n[0]; i += FN(LANES))
                    FN(stream_store)(out + row + i, factor * FN(load)(r + row + i));
                for (; i < n[0]; ++i) out[row + i] = factor * r[row + i];
            }
        _mm_sfence();
    }
}

/* z = scale r, the Chebyshev start; with dots: r.z per row. stream: where
 * the preconditioner runs in pairs, whose first sweep reads z from memory;
 * pairs need degree >= 4, so that start never forms the dots (degree 1's). */
static void FN(cg_scale)(REAL *restrict out, const REAL *restrict r, REAL factor, const int n[3], const heat_layout *l,
                         long seg, double *rz, int stream)
{
    if (stream && !rz) {
        FN(scale_stream)(out, r, factor, n, l);
        return;
    }
    const long first = heat_layout_first_owned(l), segs = FN(segments_of)(n[0], seg);
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

/* u += x over the owned points, after the waiting x step (x += a p). */
static void FN(cg_finish)(REAL *restrict u, FN(x_step) xs, const REAL *restrict p, const int n[3], const heat_layout *l)
{
    const long first = heat_layout_first_owned(l);
    FOR_EACH_ROW(n)
    {
        long row = first + y * l->stride_y + z * l->stride_z;
        FN(cg_step_row)(xs.x + row, p + row, xs.a, xs.first, n[0]);
        const REAL *restrict x = xs.x;
#pragma omp simd
        for (long i = row; i < row + n[0]; ++i) u[i] += x[i];
    }
}

/* The kernels of orders above 2, which sweep and reduce rows as these do. */
#include "cpu_wide.h"

