/*
 * CPU kernels of the central-difference Laplacian of order 2R, R = 2..4
 * (solver/space_order.h), for one precision; part of cpu_kernels.h (REAL,
 * FN, vec, load, stream_store, ghost_rule and the row macros of
 * cpu_cg_kernels.h, which includes this, come from there). Order 2 keeps
 * the 7-point kernels above and their bits.
 *
 * Fields carry R ghost layers (heat_layout_make_ghost). The ghosts of every
 * face that is not exchanged are ghost(-1-m) = shift + scale u(m), the
 * reflection of solver/problem.h: the explicit sweep sets those it reads as
 * it goes (wide_march_tiles), the implicit operators' vectors get them from
 * one pass before (wide_halo_fill). The stencil is a star: it reads no edge
 * or corner ghost, so the faces are set over the owned extent of the other
 * two axes only.
 *
 * Operation order (heat_space_coeffs; the HIP kernels' order_sum too):
 * loads in ascending address order, z-R .. z-1, y-R .. y-1, x-R .. x-1, the
 * centre, x+1 .. x+R, y+1 .. y+R, z+1 .. z+R; the first product rounded,
 * each further product fused into its addition (an explicit fma, rounded
 * once, as order_sum's), and the step's u + alpha_dt lap a product and an
 * addition. Fused, the sum takes 6R + 1 floating-point instructions a
 * vector instead of 12R + 1: a core that issues one 64-byte operation a
 * cycle (the Xeon of the GPU hosts) is bound by them. The vector body and
 * the scalar tail of a row run that one expression, so where a row is cut
 * into vectors (its length, hence the decomposition) changes no bit.
 */

typedef struct FN(wide_coeffs) {
    REAL w[3][HEAT_SPACE_RADIUS_MAX + 1]; /* [axis][m] = c_m / h_axis^2 */
    REAL diag, alpha_dt;
    int radius;
    int vectors; /* the implicit operators' interleave (wide_row) */
} FN(wide_coeffs);

static FN(wide_coeffs) FN(wide_coeffs_cast)(const heat_space_coeffs *c)
{
    FN(wide_coeffs) k;
    memset(&k, 0, sizeof k);
    for (int d = 0; d < 3; ++d)
        for (int m = 0; m <= HEAT_SPACE_RADIUS_MAX; ++m) k.w[d][m] = (REAL)c->weight[d][m];
    k.diag = (REAL)c->diag, k.alpha_dt = (REAL)c->alpha_dt, k.radius = c->radius, k.vectors = 2;
    return k;
}

/* ---- ghosts ---- */

/* The R ghosts beyond each x face of one row that applies. */
static inline void FN(wide_x_ghosts)(REAL *row, long n, int radius, const FN(ghost_rule) *g)
{
    for (int m = 0; m < radius; ++m) {
        if (FN(applies)(g, FACE_X_LOW)) row[-1 - m] = g->shift[FACE_X_LOW] + g->scale[FACE_X_LOW] * row[m];
        if (FN(applies)(g, FACE_X_HIGH)) row[n + m] = g->shift[FACE_X_HIGH] + g->scale[FACE_X_HIGH] * row[n - 1 - m];
    }
}

/* Ghost rows of one face of an axis (rows `step` apart), where it applies: -1-m from owned row m
 * (a low face), n+m from n-1-m (a high face), m < radius. */
static inline void FN(wide_face_layers)(REAL *first_row, long count, int n_axis, long step, int radius, int face,
                                        const FN(ghost_rule) *g)
{
    if (!FN(applies)(g, face)) return;
    for (int m = 0; m < radius; ++m) {
        if (face % 2 == 0) FN(set_ghost_row)(first_row - (1 + m) * step, first_row + m * step, count, g, face);
        else FN(set_ghost_row)(first_row + (long)(n_axis + m) * step, first_row + (long)(n_axis - 1 - m) * step,
                               count, g, face);
    }
}

/* The same on both faces of an axis (low: its low face) in one plane. */
static inline void FN(wide_face_rows)(REAL *first_row, long count, int n_axis, long step, int radius, int low,
                                      const FN(ghost_rule) *g)
{
    FN(wide_face_layers)(first_row, count, n_axis, step, radius, low, g);
    FN(wide_face_layers)(first_row, count, n_axis, step, radius, low + 1, g);
}

/* Every face's R ghost layers that apply (not exchanged), by the rule; the
 * x faces' only `with_x` (the explicit sweep sets them row by row). */
static void FN(wide_halo_fill)(REAL *u, const int n[3], const heat_layout *l, int radius, const FN(ghost_rule) *g,
                               int with_x)
{
    const long sy = l->stride_y, sz = l->stride_z;
    REAL *o = u + heat_layout_first_owned(l);
#pragma omp parallel for schedule(static)
    for (int z = 0; z < n[2]; ++z) {
        for (int y = 0; with_x && y < n[1]; ++y) FN(wide_x_ghosts)(o + y * sy + z * sz, n[0], radius, g);
        FN(wide_face_rows)(o + z * sz, n[0], n[1], sy, radius, FACE_Y_LOW, g);
    }
#pragma omp parallel for schedule(static)
    for (int y = 0; y < n[1]; ++y) FN(wide_face_rows)(o + y * sy, n[0], n[2], sz, radius, FACE_Z_LOW, g);
}

/* ---- the operator ---- */

/* lap(u) at c (scalar): the operation order above; R a constant where inlined. */
static inline __attribute__((always_inline)) REAL FN(wide_lap)(const REAL *c, long sy, long sz,
                                                               const FN(wide_coeffs) *k, int R)
{
    REAL lap = c[-R * sz] * k->w[2][R];
    for (int m = R - 1; m >= 1; --m) lap = FN(fma1)(c[-m * sz], k->w[2][m], lap);
    for (int m = R; m >= 1; --m) lap = FN(fma1)(c[-m * sy], k->w[1][m], lap);
    for (int m = R; m >= 1; --m) lap = FN(fma1)(c[-m], k->w[0][m], lap);
    lap = FN(fma1)(c[0], k->diag, lap);
    for (int m = 1; m <= R; ++m) lap = FN(fma1)(c[m], k->w[0][m], lap);
    for (int m = 1; m <= R; ++m) lap = FN(fma1)(c[m * sy], k->w[1][m], lap);
    for (int m = 1; m <= R; ++m) lap = FN(fma1)(c[m * sz], k->w[2][m], lap);
    return lap;
}

#ifndef WIDE_MODES /* this file is included once per precision */
#define WIDE_MODES
enum { WIDE_STEP = 0, WIDE_STEP_STREAM = 1, WIDE_LAPLACIAN = 2 };
#endif

/* The row loop's interleave (wide_row's `vectors`): 2, 4 or 8 vectors a turn. */
enum { FN(WIDE_VECTORS_MAX) = 8 };

/* The weights splat into vectors once a row, held in registers across its loop (the loop
 * broadcast them from memory a turn when it was short of registers). */
typedef struct FN(wide_splats) {
    FN(vec) w[3][HEAT_SPACE_RADIUS_MAX + 1], diag, alpha_dt;
} FN(wide_splats);

static inline __attribute__((always_inline)) FN(wide_splats) FN(wide_splats_make)(const FN(wide_coeffs) *k, int R)
{
    FN(wide_splats) s;
    for (int d = 0; d < 3; ++d)
        for (int m = 1; m <= R; ++m) s.w[d][m] = FN(splat)(k->w[d][m]);
    s.diag = FN(splat)(k->diag), s.alpha_dt = FN(splat)(k->alpha_dt);
    return s;
}

#ifndef WIDE_OPAQUE /* this file is included once per precision */
#define WIDE_OPAQUE
#ifndef WIDE_X_SHIFTED_64 /* x terms +-(R - 1) and +-R: docs/PERFORMANCE.md, CPU space orders */
#define WIDE_X_SHIFTED_64 4
#endif
/* p, whose value the compiler can no longer see through: the arithmetic on it stays where it is
 * written. Rows y +- m and planes z +- m are 4R address streams; left to itself the compiler
 * keeps a pointer to each, more than the core's registers, and reloads them from the stack for
 * every load (12 to 14 reloads a vector at order 8). Walked from one opaque pointer a turn, each
 * stream costs one addition a turn and the loads take their offsets as displacements. */
static inline __attribute__((always_inline)) const char *wide_opaque(const char *p)
{
    __asm__ volatile("" : "+r"(p));
    return p;
}
#endif

/* How many of the 2R x terms (the outermost: |m| > R - shifted / 2) take their vector from the
 * aligned vectors beside it (wide_x_term) instead of an unaligned load. A 64-byte load at an
 * x offset that is not a multiple of the vector crosses a cache line and costs the load ports
 * two loads; the shift costs a shuffle (port 5, beside the loads and the FMAs' chains). */
enum { FN(WIDE_X_SHIFTED) = CPU_VECTOR_BYTES == 64 ? WIDE_X_SHIFTED_64 : 0 };

/* Lanes s .. s + LANES - 1 of lo then hi (s in 1 .. LANES - 1, a constant where inlined): one
 * valignq / valignd, which takes s as an immediate (a general shuffle would hold an index vector
 * in a register for each s). */
static inline __attribute__((always_inline)) FN(vec) FN(wide_lanes_from)(FN(vec) lo, FN(vec) hi, int s)
{
#if CPU_VECTOR_BYTES == 64
    if (sizeof(REAL) == 8) return (FN(vec))_mm512_alignr_epi64((__m512i)hi, (__m512i)lo, s);
    return (FN(vec))_mm512_alignr_epi32((__m512i)hi, (__m512i)lo, s);
#else
    __typeof__(lo < hi) index;
    for (int lane = 0; lane < FN(LANES); ++lane) index[lane] = lane + s;
    return __builtin_shuffle(lo, hi, index);
#endif
}

/* The vector of x term m (x + m, |m| <= R) of the vector at p: loaded, or shifted out of its
 * aligned neighbours around[0] (p - vector), around[1] (p), around[2] (p + vector). */
static inline __attribute__((always_inline)) FN(vec) FN(wide_x_term)(const char *p, const FN(vec) *around, int m, int R)
{
    if (2 * (m < 0 ? -m : m) <= 2 * R - FN(WIDE_X_SHIFTED)) return FN(load)((const REAL *)(p + m * (long)sizeof(REAL)));
    return m < 0 ? FN(wide_lanes_from)(around[0], around[1], FN(LANES) + m) : FN(wide_lanes_from)(around[1], around[2], m);
}

/* V vectors' lap(u) at p, p + vector, ..., statement by statement (p: c + i as bytes; by, bz:
 * the strides in bytes): each lane's operations keep the order above (the same bits as
 * wide_lap), but the V chains of 6R dependent multiply-adds interleave, so that the core
 * overlaps their latencies. Where the latency bounds a chain (each fma waits 4 cycles for the
 * one before it), V = 4 keeps the pipes busier than V = 2; where the core is bound otherwise,
 * more chains only hold more registers: the trial steps choose V (the tile of heat_step_x4,
 * backend_cpu.c's wide_variants). */
static inline __attribute__((always_inline)) void FN(wide_lap_vecs)(const char *p, long by, long bz,
                                                                   const FN(wide_coeffs) *k,
                                                                   const FN(wide_splats) *s, int R, int V,
                                                                   FN(vec) *lap)
{
    const long next = (long)sizeof(FN(vec));
    FN(vec) aligned[FN(WIDE_VECTORS_MAX) + 2]; /* the turn's vectors and one each side (wide_x_term) */
    if (FN(WIDE_X_SHIFTED) > 0)
        for (int v = 0; v < V + 2; ++v) aligned[v] = FN(load)((const REAL *)(p + (v - 1) * next));
    const char *q = wide_opaque(p - R * bz);
    for (int v = 0; v < V; ++v) lap[v] = FN(load)((const REAL *)(q + v * next)) * k->w[2][R];
#define WIDE_TERM(at, weight)                                                                                    \
    do {                                                                                                         \
        for (int v = 0; v < V; ++v) lap[v] = FN(fma_vec)(FN(load)((const REAL *)((at) + v * next)), weight, lap[v]); \
    } while (0)
    for (int m = R - 1; m >= 1; --m) {
        q = wide_opaque(q + bz);
        WIDE_TERM(q, s->w[2][m]);
    }
    q = wide_opaque(p - R * by);
    for (int m = R; m >= 1; --m) {
        WIDE_TERM(q, s->w[1][m]);
        q = wide_opaque(q + by);
    }
#define WIDE_X_TERM(m, weight)                                                                                   \
    do {                                                                                                         \
        for (int v = 0; v < V; ++v)                                                                              \
            lap[v] = FN(fma_vec)(FN(wide_x_term)(p + v * next, aligned + v, m, R), weight, lap[v]);          \
    } while (0)
    for (int m = R; m >= 1; --m) WIDE_X_TERM(-m, s->w[0][m]);
    WIDE_TERM(p, s->diag);
    for (int m = 1; m <= R; ++m) WIDE_X_TERM(m, s->w[0][m]);
#undef WIDE_X_TERM
    for (int m = 1; m <= R; ++m) {
        q = wide_opaque(q + by);
        WIDE_TERM(q, s->w[1][m]);
    }
    q = wide_opaque(p);
    for (int m = 1; m <= R; ++m) {
        q = wide_opaque(q + bz);
        WIDE_TERM(q, s->w[2][m]);
    }
#undef WIDE_TERM
}

/* V vectors of a row from c + i: out = u + alpha_dt lap(u) or lap(u) (wide_span's mode); the same
 * vectors of the row `ahead` values beyond plane z+R's asked for. */
static inline __attribute__((always_inline)) void FN(wide_turn)(REAL *restrict out, const REAL *restrict c, long i,
                                                               long sy, long sz, long ahead, const FN(wide_coeffs) *k,
                                                               const FN(wide_splats) *s, int R, int mode, int V)
{
    const long by = sy * (long)sizeof(REAL), bz = sz * (long)sizeof(REAL);
    for (int v = 0; v < V; ++v) FN(prefetch_next_row)(c + i + v * FN(LANES) + R * sz, ahead);
    FN(vec) lap[FN(WIDE_VECTORS_MAX)];
    FN(wide_lap_vecs)((const char *)(c + i), by, bz, k, s, R, V, lap);
    for (int v = 0; v < V; ++v) {
        const long at = i + v * FN(LANES);
        FN(vec) result = mode == WIDE_LAPLACIAN ? lap[v] : FN(load)(c + at) + s->alpha_dt * lap[v];
        FN(store)(out + at, result, mode == WIDE_STEP_STREAM);
    }
}

/* One row of n points: out = u + alpha_dt lap(u) (WIDE_STEP, through the
 * cache; WIDE_STEP_STREAM, streaming stores of whole vectors, the rows
 * being 64-byte aligned) or out = lap(u) (WIDE_LAPLACIAN), the weights
 * splat in s. Each row asks for a row of plane z+R `ahead` values on (the
 * one plane a sweep up z brings from memory; the next row where the sweep
 * goes row by row) while it computes, as stencil_row3_vec does. */
static inline __attribute__((always_inline)) void FN(wide_span)(REAL *restrict out, const REAL *restrict c, long n,
                                                                long sy, long sz, long ahead, const FN(wide_coeffs) *k,
                                                                const FN(wide_splats) *s, int R, int mode, int V)
{
    long i = 0;
    for (; i + V * FN(LANES) <= n; i += V * FN(LANES)) FN(wide_turn)(out, c, i, sy, sz, ahead, k, s, R, mode, V);
    for (; i + FN(LANES) <= n; i += FN(LANES)) FN(wide_turn)(out, c, i, sy, sz, ahead, k, s, R, mode, 1);
    for (; i < n; ++i) {
        REAL lap = FN(wide_lap)(c + i, sy, sz, k, R);
        out[i] = mode == WIDE_LAPLACIAN ? lap : c[i] + k->alpha_dt * lap;
    }
}

/* A tile of rows_y x rows_z rows of n points from c (row (y, z); rows y + 1 .. sy apart, planes sz
 * apart), swept in spans of WIDE_TILE_SPAN_BYTES along x (whole vectors: streaming stores stay
 * aligned), each span through every row of the tile before the next. A row alone reads 4R + 1 rows
 * of 64-byte lines from L2 for each vector, faster than the core's L2 feeds them; in a tile the
 * planes and rows a span reads are mostly in L1 from the tile's other rows. One row (1 x 1): the
 * row in one span. Each row asks for the row rows_y beyond it in plane z+R: the next tile's, which
 * comes from memory; a row with fewer than rows_y rows left before `rows_left` (the march's block
 * ends there) asks for the one `wrap` values further, in the march's next group of planes. The same
 * expression a point in every case: where rows are cut changes no bit. */
#ifndef WIDE_TILE_SPAN_BYTES /* this file is included once per precision */
#define WIDE_TILE_SPAN_BYTES 512
#endif
static inline __attribute__((always_inline)) void FN(wide_tile_r)(REAL *restrict out, const REAL *restrict c, long n,
                                                                  long sy, long sz, const FN(wide_coeffs) *k,
                                                                  int rows_y, int rows_z, int rows_left, long wrap,
                                                                  int R, int mode, int V)
{
    const FN(wide_splats) s = FN(wide_splats_make)(k, R);
    const long span_max = rows_y * rows_z == 1 ? n : WIDE_TILE_SPAN_BYTES / (long)sizeof(REAL);
    for (long x = 0; x < n; x += span_max) {
        const long span = n - x < span_max ? n - x : span_max;
        for (int dz = 0; dz < rows_z; ++dz)
            for (int dy = 0; dy < rows_y; ++dy) {
                const long at = dy * sy + dz * sz + x, ahead = rows_y * sy + (dy + rows_y >= rows_left ? wrap : 0);
                FN(wide_span)(out + at, c + at, span, sy, sz, ahead, k, &s, R, mode, V);
            }
    }
}

/* wide_tile_r with its radius, mode and interleave (2, 4 or 8 vectors) as constants, one loop each. */
static void FN(wide_tile_ahead)(REAL *restrict out, const REAL *restrict c, long n, long sy, long sz,
                                const FN(wide_coeffs) *k, int rows_y, int rows_z, int rows_left, long wrap, int mode,
                                int vectors)
{
#define WIDE_TILE_CASE(R, MODE, V)                                                                               \
    case ((R) * 4 + (MODE)) * 4 + (V) / 4 + (V) / 8:                                                             \
        FN(wide_tile_r)(out, c, n, sy, sz, k, rows_y, rows_z, rows_left, wrap, R, MODE, V);                      \
        break;
#define WIDE_TILE_CASES(R, MODE) WIDE_TILE_CASE(R, MODE, 2) WIDE_TILE_CASE(R, MODE, 4) WIDE_TILE_CASE(R, MODE, 8)
    switch ((k->radius * 4 + mode) * 4 + vectors / 4 + vectors / 8) {
        WIDE_TILE_CASES(2, WIDE_STEP) WIDE_TILE_CASES(2, WIDE_STEP_STREAM) WIDE_TILE_CASES(2, WIDE_LAPLACIAN)
        WIDE_TILE_CASES(3, WIDE_STEP) WIDE_TILE_CASES(3, WIDE_STEP_STREAM) WIDE_TILE_CASES(3, WIDE_LAPLACIAN)
        WIDE_TILE_CASES(4, WIDE_STEP) WIDE_TILE_CASES(4, WIDE_STEP_STREAM) WIDE_TILE_CASES(4, WIDE_LAPLACIAN)
    default: break; /* radius 1 takes the 7-point kernels */
    }
#undef WIDE_TILE_CASES
#undef WIDE_TILE_CASE
}

/* A tile whose rows all ask for the rows rows_y beyond them. */
static void FN(wide_tile)(REAL *restrict out, const REAL *restrict c, long n, long sy, long sz,
                          const FN(wide_coeffs) *k, int rows_y, int rows_z, int mode, int vectors)
{
    FN(wide_tile_ahead)(out, c, n, sy, sz, k, rows_y, rows_z, rows_y + 1, 0, mode, vectors);
}

/* One row (wide_tile_r's tile of 1 x 1). */
static void FN(wide_row)(REAL *restrict out, const REAL *restrict c, long n, long sy, long sz,
                         const FN(wide_coeffs) *k, int mode, int vectors)
{
    FN(wide_tile)(out, c, n, sy, sz, k, 1, 1, mode, vectors);
}

/* What wide_sweep_planes' rows need. */
typedef struct FN(wide_job) {
    REAL *out, *u;
    long n0, sy, sz;
    const FN(wide_coeffs) *k;
    const FN(ghost_rule) *g;
    int mode, vectors;
    int rows_y, rows_z; /* wide_march_tiles' tile; 1 x 1: row by row (march_rows) */
} FN(wide_job);

/* A row's x ghosts are set just before it is swept, while it is in cache
 * (only that row reads them: the star reads rows y +- m and z +- m over
 * the owned x alone). */
static inline __attribute__((always_inline)) void FN(wide_job_row)(const void *job, long row, int y, int z)
{
    const FN(wide_job) *j = job;
    (void)y, (void)z;
    FN(wide_x_ghosts)(j->u + row, j->n0, j->k->radius, j->g);
    FN(wide_row)(j->out + row, j->u + row, j->n0, j->sy, j->sz, j->k, j->mode, j->vectors);
}

/* The y faces' ghost rows of planes [z, z + planes) that the rows of block [y0, y1) read: the low
 * face's where the block holds one of rows 0 .. R-1, the high face's where it holds one of rows
 * n[1]-R .. n[1]-1 (a block of fewer than R rows at a face sets them again: the same values, by the
 * same thread). Only the rows of their own plane read them (the star reads no edge ghost): set by
 * the thread that sweeps the plane, just before, its owned rows 0 .. R-1 then in cache from the z
 * terms of the planes below. */
static inline void FN(wide_block_y_ghosts)(const FN(wide_job) *j, long first, const int n[3], int y0, int y1, int z,
                                           int planes)
{
    const int R = j->k->radius;
    for (int p = z; p < z + planes; ++p) {
        REAL *plane = j->u + first + p * j->sz;
        if (y0 < R) FN(wide_face_layers)(plane, j->n0, n[1], j->sy, R, FACE_Y_LOW, j->g);
        if (y1 > n[1] - R) FN(wide_face_layers)(plane, j->n0, n[1], j->sy, R, FACE_Y_HIGH, j->g);
    }
}

/* z face `face`'s ghost planes over rows [y0, y1): only those rows of planes 0 .. R-1 (low) or
 * n[2]-R .. n[2]-1 (high) read them. */
static inline void FN(wide_block_z_ghosts)(const FN(wide_job) *j, long first, const int n[3], int y0, int y1, int face)
{
    for (int y = y0; y < y1; ++y) FN(wide_face_layers)(j->u + first + y * j->sy, j->n0, n[2], j->sz, j->k->radius, face, j->g);
}

/* march_rows' march (each thread's slab of planes in blocks of block_rows rows of y, up z) taken a
 * tile of j->rows_y x j->rows_z rows at a time (wide_tile; 1 x 1: a row at a time), each ghost that
 * a tile reads set just before it by the thread that sweeps it: the x ghosts of its rows, the y faces'
 * rows of its planes, and at the start of a block whose rows read them, the z faces' planes over the
 * block's rows. A separate fill pass would bring those faces from memory once more, and the ghost
 * lines it wrote would have left the cache before the sweep reads them. Where the threads have few
 * planes each, march_rows' rows, after a fill of the ghosts of the planes swept. Run by each thread
 * of the caller's parallel region. */
static void FN(wide_march_tiles)(const FN(wide_job) *j, const int n[3], const heat_layout *l, int block_rows,
                                 int z_begin, int z_end, const heat_halo_transport *travelling)
{
    const long sy = j->sy, sz = j->sz, first = heat_layout_first_owned(l);
    const int R = j->k->radius;
    int arrived = 0, z0, z1;
    const heat_halo_transport *mover = omp_get_thread_num() == 0 ? travelling : NULL;
    if (z_end - z_begin < 4 * omp_get_num_threads()) {
#pragma omp for schedule(static)
        for (int z = z_begin; z < z_end; ++z) FN(wide_block_y_ghosts)(j, first, n, 0, n[1], z, 1);
#pragma omp for schedule(static)
        for (int y = 0; y < n[1]; ++y) {
            if (z_begin == 0) FN(wide_block_z_ghosts)(j, first, n, y, y + 1, FACE_Z_LOW);
            if (z_end == n[2]) FN(wide_block_z_ghosts)(j, first, n, y, y + 1, FACE_Z_HIGH);
        }
        FN(march_rows)(FN(wide_job_row), j, n, l, block_rows, z_begin, z_end, travelling);
        return;
    }
    FN(thread_slab)(z_begin, z_end, &z0, &z1); /* at least 4 >= R planes: a z face's readers are in one slab */
    for (int y0 = 0; y0 < n[1]; y0 += block_rows) {
        const int y1 = y0 + block_rows < n[1] ? y0 + block_rows : n[1];
        int high_ghosts_due = z1 == n[2];
        if (z0 == 0) FN(wide_block_z_ghosts)(j, first, n, y0, y1, FACE_Z_LOW);
        for (int z = z0; z < z1; z += j->rows_z) {
            const int rows_z = z1 - z < j->rows_z ? z1 - z : j->rows_z;
            if (high_ghosts_due && z + rows_z + R > n[2]) { /* the first tiles whose z terms reach them */
                FN(wide_block_z_ghosts)(j, first, n, y0, y1, FACE_Z_HIGH);
                high_ghosts_due = 0;
            }
            FN(wide_block_y_ghosts)(j, first, n, y0, y1, z, rows_z);
            for (int y = y0; y < y1; y += j->rows_y) {
                const int rows_y = y1 - y < j->rows_y ? y1 - y : j->rows_y;
                const long row = first + y * sy + z * sz;
                for (int dz = 0; dz < rows_z; ++dz)
                    for (int dy = 0; dy < rows_y; ++dy)
                        FN(wide_x_ghosts)(j->u + row + dy * sy + dz * sz, j->n0, R, j->g);
                /* the rows past the block's end ask for the next group's first rows instead */
                FN(wide_tile_ahead)(j->out + row, j->u + row, j->n0, sy, sz, j->k, rows_y, rows_z, y1 - y,
                                    (long)(y0 - y1) * sy + (long)j->rows_z * sz, j->mode, j->vectors);
            }
            FN(let_travel)(mover, &arrived);
        }
    }
}

/* Rows of planes [z_begin, z_end) of the owned block, marched as the 7-point
 * sweep is (march_rows: the 2R + 1 planes a row reads stay in L2), a row or a
 * tile of rows_y x rows_z rows at a time (wide_march_tiles), which sets the
 * ghosts of the faces that are not exchanged as it reads them (the exchanged
 * ones: set beforehand). */
static void FN(wide_sweep_planes)(REAL *restrict out, REAL *restrict u, const int n[3], const heat_layout *l,
                                  const FN(wide_coeffs) *k, const FN(ghost_rule) *g, int mode, int vectors,
                                  int rows_y, int rows_z, int block_rows, int z_begin, int z_end,
                                  const heat_halo_transport *travelling)
{
    const FN(wide_job) job = {out, u, n[0], l->stride_y, l->stride_z, k, g, mode, vectors, rows_y, rows_z};
#pragma omp parallel
    {
        FN(wide_march_tiles)(&job, n, l, block_rows, z_begin, z_end, travelling);
        if (mode == WIDE_STEP_STREAM) _mm_sfence();
    }
}

/* ---- the implicit solver's operators (cpu_cg_kernels.h's, order 2R) ----
 * The ghosts of the vector the operator reads are set beforehand (wide_halo_fill
 * and the exchange). Rows of A p or lap(u) are computed into the output row,
 * then reduced while in L1. Per-segment sums as cpu_cg_kernels.h's. */

/* r = scale lap(u), with r.r and r.(weight r) per row segment. */
static void FN(wide_cg_rhs)(REAL *restrict r, const REAL *restrict u, const int n[3], const heat_layout *l,
                            const FN(wide_coeffs) *k, REAL rhs_scale, const heat_cg_diagonal *d, long seg,
                            double *rr, double *rz)
{
    const long first = heat_layout_first_owned(l), segs = FN(segments_of)(n[0], seg);
    FOR_EACH_ROW(n)
    {
        long row = first + y * l->stride_y + z * l->stride_z, at = ((long)z * n[1] + y) * segs;
        FN(row_weights) w = FN(row_weights_make)(d, y, z, n);
        FN(wide_row)(r + row, u + row, n[0], l->stride_y, l->stride_z, k, WIDE_LAPLACIAN, k->vectors);
        FN(scale_row_dots)(r + row, n[0], rhs_scale, w, seg, rr + at, rz + at);
    }
}

/* q = A p = p + k.alpha_dt lap0(p) (k.alpha_dt = -theta alpha dt), with p.q per row segment. */
static void FN(wide_cg_apply)(REAL *restrict q, const REAL *restrict p, const int n[3], const heat_layout *l,
                              const FN(wide_coeffs) *k, long seg, double *pq)
{
    const long first = heat_layout_first_owned(l), segs = FN(segments_of)(n[0], seg);
    FOR_EACH_ROW(n)
    {
        long row = first + y * l->stride_y + z * l->stride_z, at = ((long)z * n[1] + y) * segs;
        FN(wide_row)(q + row, p + row, n[0], l->stride_y, l->stride_z, k, WIDE_STEP, k->vectors);
        FN(dot_segments)(p + row, q + row, n[0], seg, pq + at);
    }
}

/* Chebyshev step k into `out` (holding z_{k-1}, or nothing when
 * previous_is_zero): out = z + keep (z - out) + push (r - A z), A z of a row
 * into the thread's scratch row (`scratch`: a row of stride_y values for
 * each of `threads` threads, the most this runs on). With dots: r.out per
 * row segment. */
static void FN(wide_cheb_step)(REAL *restrict out, const REAL *restrict z_k, const REAL *restrict r, REAL keep,
                               REAL push, int previous_is_zero, const int n[3], const heat_layout *l,
                               const FN(wide_coeffs) *k, long seg, double *rz, REAL *scratch, int threads)
{
    const long first = heat_layout_first_owned(l), segs = FN(segments_of)(n[0], seg);
    const long sy = l->stride_y, sz = l->stride_z;
    if (threads > omp_get_max_threads()) threads = omp_get_max_threads();
#pragma omp parallel num_threads(threads)
    {
        REAL *applied = scratch + (long)omp_get_thread_num() * sy;
#pragma omp for collapse(2) schedule(static)
        for (int z = 0; z < n[2]; ++z)
            for (int y = 0; y < n[1]; ++y) {
                long row = first + y * sy + z * sz, at = ((long)z * n[1] + y) * segs;
                REAL *o = out + row;
                const REAL *rr = r + row;
                FN(wide_row)(applied, z_k + row, n[0], sy, sz, k, WIDE_STEP, k->vectors);
                FN(cheb_update_row)(o, z_k + row, previous_is_zero ? NULL : o, rr, applied, n[0], keep, push);
                if (rz) FN(dot_segments)(rr, o, n[0], seg, rz + at);
            }
    }
}
