/*
 * CPU stencil kernels for one precision. Included twice by backend_cpu.c (for_each_precision.h) with
 * REAL = double / float and SUFFIX = _d / _f (C has no templates).
 *
 * Operation order (shared with the HIP kernels so that GPU and CPU agree to
 * rounding): loads in ascending address order, accumulated as
 *   lap = u[z-1] hz ; += u[y-1] hy ; += u[x-1] hx ; += u[c] diag ;
 *         += u[x+1] hx ; += u[y+1] hy ; += u[z+1] hz
 *   u_new = u[c] + alpha_dt * lap
 */
#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#define FN(name) CAT(name, SUFFIX)

typedef struct FN(cpu_coeffs) {
    REAL hx, hy, hz, diag, alpha_dt;
} FN(cpu_coeffs);

/* How the ghosts of each face are set: ghost = shift + scale * adjacent
 * (Neumann 0, 1; Dirichlet 2g, -1; homogeneous: shift 0), except on the
 * exchanged faces, whose ghosts the halo exchange has already written. */
typedef struct FN(ghost_rule) {
    REAL shift[FACE_COUNT], scale[FACE_COUNT];
    unsigned exchanged;
} FN(ghost_rule);

static inline int FN(applies)(const FN(ghost_rule) *g, int face) { return !(g->exchanged & 1u << face); }

static FN(cpu_coeffs) FN(coeffs_cast)(const heat_coeffs *c)
{
    FN(cpu_coeffs) r = {(REAL)c->inv_h2[0], (REAL)c->inv_h2[1], (REAL)c->inv_h2[2], (REAL)c->diag,
                        (REAL)c->alpha_dt};
    return r;
}

/* Of the planes a row reads, only z+1 comes from memory: planes z-1 and z
 * are in L2 from the rows swept before (stencil_sweep_planes marches up z). The
 * hardware prefetcher starts over at every 4 KiB page and leaves much of that
 * stream's latency exposed, so each row asks for the next row of plane z+1
 * into L2 (prefetcht2: locality 1) while it computes. One row ahead beats
 * two or four, and prefetcht0 or prefetchnta. */
#ifndef NEXT_ROW_PREFETCH /* this file is included once per precision */
#define NEXT_ROW_PREFETCH(above, sy, bytes) __builtin_prefetch((const char *)((above) + (sy)) + (bytes), 0, 1)
#endif

/* acc + u w rounded once (C's fma). Every fused multiply-add of the CPU backend goes through
 * fma1 or fma_vec, so a sum rounds alike in every lane, copy and build. */
static inline __attribute__((always_inline)) REAL FN(fma1)(REAL u, REAL w, REAL acc)
{
    return sizeof(REAL) == sizeof(double) ? (REAL)fma(u, w, acc) : (REAL)fmaf(u, w, acc);
}

/* The 7-point step's multiply-add: fused where the build has FMA instructions (a native build: then
 * the CPU's bits are the GPU's, which fuses the same products in the same order); a build without
 * them (HEATSOLVE_NATIVE=OFF on x86-64) rounds the product and the sum apart, since C's fma a lane
 * would make its step several times slower: its bits differ from the GPU's at rounding level. */
static inline __attribute__((always_inline)) REAL FN(step_fma1)(REAL u, REAL w, REAL acc)
{
#ifdef __FMA__
    return FN(fma1)(u, w, acc);
#else
    return u * w + acc;
#endif
}

/* One row of the stencil from the rows of planes z-1 (below), z (c, whose
 * rows y-1 and y+1 are sy away) and z+1 (above): `laplacian_only` selects
 * f = lap(u) over u_new. The planes are separate pointers so that the fused
 * sweep (stencil_sweep2_planes) can read planes kept in a small ring; every caller
 * runs this one expression, so every path rounds alike. */
static inline void FN(stencil_row3)(REAL *restrict out, const REAL *restrict below, const REAL *restrict c,
                                    const REAL *restrict above, long n, long sy, FN(cpu_coeffs) k,
                                    int laplacian_only)
{
#pragma omp simd
    for (long i = 0; i < n; ++i) {
        REAL lap = below[i] * k.hz;
        lap = FN(step_fma1)(c[i - sy], k.hy, lap);
        lap = FN(step_fma1)(c[i - 1], k.hx, lap);
        lap = FN(step_fma1)(c[i], k.diag, lap);
        lap = FN(step_fma1)(c[i + 1], k.hx, lap);
        lap = FN(step_fma1)(c[i + sy], k.hy, lap);
        lap = FN(step_fma1)(above[i], k.hz, lap);
        out[i] = laplacian_only ? lap : FN(step_fma1)(k.alpha_dt, lap, c[i]);
    }
}

/* The same row of a field whose planes are sz apart. */
static inline void FN(stencil_row)(REAL *restrict out, const REAL *restrict c, long n, long sy,
                                   long sz, FN(cpu_coeffs) k, int laplacian_only)
{
    FN(stencil_row3)(out, c - sz, c, c + sz, n, sy, k, laplacian_only);
}

/* The same row with streaming (nontemporal) stores of whole vectors: the
 * output bypasses the cache, so the line is never read before it is written
 * (write-allocate would make the sweep move three streams where it needs
 * two). Rows start 64-byte aligned (heat_layout_make), so every vector store
 * is aligned; the tail shorter than a vector is stored as usual. The same
 * arithmetic in the same order as stencil_row, lane by lane. */
typedef REAL FN(vec) __attribute__((vector_size(CPU_VECTOR_BYTES)));
enum { FN(LANES) = CPU_VECTOR_BYTES / sizeof(REAL) };

static inline FN(vec) FN(load)(const REAL *p)
{
    FN(vec) v;
    memcpy(&v, p, sizeof v); /* unaligned load */
    return v;
}

/* The same lane by lane, w a vector: the build's fused multiply-add (GCC's vectors have no generic
 * one), or where the build has none, C's fma a lane (the same bits, slowly). */
static inline __attribute__((always_inline)) FN(vec) FN(fma_vec)(FN(vec) u, FN(vec) w, FN(vec) acc)
{
#if CPU_VECTOR_BYTES == 64
    if (sizeof(REAL) == 8) return (FN(vec))_mm512_fmadd_pd((__m512d)u, (__m512d)w, (__m512d)acc);
    return (FN(vec))_mm512_fmadd_ps((__m512)u, (__m512)w, (__m512)acc);
#elif CPU_VECTOR_BYTES == 32 && defined(__FMA__)
    if (sizeof(REAL) == 8) return (FN(vec))_mm256_fmadd_pd((__m256d)u, (__m256d)w, (__m256d)acc);
    return (FN(vec))_mm256_fmadd_ps((__m256)u, (__m256)w, (__m256)acc);
#elif CPU_VECTOR_BYTES == 16 && defined(__FMA__)
    if (sizeof(REAL) == 8) return (FN(vec))_mm_fmadd_pd((__m128d)u, (__m128d)w, (__m128d)acc);
    return (FN(vec))_mm_fmadd_ps((__m128)u, (__m128)w, (__m128)acc);
#else
    FN(vec) sum;
    for (int lane = 0; lane < FN(LANES); ++lane) sum[lane] = FN(fma1)(u[lane], w[lane], acc[lane]);
    return sum;
#endif
}


/* x in every lane: one broadcast (GCC vectorises a loop over the lanes into masked broadcasts,
 * a row's prologue then costing more than a quarter of a float row). */
static inline __attribute__((always_inline)) FN(vec) FN(splat)(REAL x)
{
#if CPU_VECTOR_BYTES == 64
    if (sizeof(REAL) == 8) return (FN(vec))_mm512_set1_pd((double)x);
    return (FN(vec))_mm512_set1_ps((float)x);
#elif CPU_VECTOR_BYTES == 32
    if (sizeof(REAL) == 8) return (FN(vec))_mm256_set1_pd((double)x);
    return (FN(vec))_mm256_set1_ps((float)x);
#elif CPU_VECTOR_BYTES == 16
    if (sizeof(REAL) == 8) return (FN(vec))_mm_set1_pd((double)x);
    return (FN(vec))_mm_set1_ps((float)x);
#else
    FN(vec) v;
    for (int lane = 0; lane < FN(LANES); ++lane) v[lane] = x;
    return v;
#endif
}

/* GCC has no generic nontemporal store: the intrinsic of the build's width. */
static inline void FN(stream_store)(REAL *p, FN(vec) v)
{
#if CPU_VECTOR_BYTES == 64
    if (sizeof(REAL) == 8) _mm512_stream_pd((double *)p, (__m512d)v);
    else _mm512_stream_ps((float *)p, (__m512)v);
#elif CPU_VECTOR_BYTES == 32
    if (sizeof(REAL) == 8) _mm256_stream_pd((double *)p, (__m256d)v);
    else _mm256_stream_ps((float *)p, (__m256)v);
#else
    if (sizeof(REAL) == 8) _mm_stream_pd((double *)p, (__m128d)v);
    else _mm_stream_ps((float *)p, (__m128)v);
#endif
}

/* A vector to p: streamed (stream_store) or through the cache. */
static inline __attribute__((always_inline)) void FN(store)(REAL *p, FN(vec) v, int stream)
{
    if (stream) FN(stream_store)(p, v);
    else memcpy(p, &v, sizeof v);
}

/* step_fma1 lane by lane. */
static inline __attribute__((always_inline)) FN(vec) FN(step_fma_vec)(FN(vec) u, FN(vec) w, FN(vec) acc)
{
#ifdef __FMA__
    return FN(fma_vec)(u, w, acc);
#else
    return u * w + acc;
#endif
}

/* One vector of the stencil at c (stencil_row3's expression, lane by lane). */
static inline FN(vec) FN(stencil_vec)(const REAL *below, const REAL *c, const REAL *above, long sy, FN(cpu_coeffs) k)
{
    FN(vec) centre = FN(load)(c);
    FN(vec) lap = FN(load)(below) * k.hz;
    lap = FN(step_fma_vec)(FN(load)(c - sy), FN(splat)(k.hy), lap);
    lap = FN(step_fma_vec)(FN(load)(c - 1), FN(splat)(k.hx), lap);
    lap = FN(step_fma_vec)(centre, FN(splat)(k.diag), lap);
    lap = FN(step_fma_vec)(FN(load)(c + 1), FN(splat)(k.hx), lap);
    lap = FN(step_fma_vec)(FN(load)(c + sy), FN(splat)(k.hy), lap);
    lap = FN(step_fma_vec)(FN(load)(above), FN(splat)(k.hz), lap);
    return FN(step_fma_vec)(FN(splat)(k.alpha_dt), lap, centre);
}

static inline void FN(prefetch_next_row)(const REAL *above, long sy)
{
    for (long b = 0; b < (long)(FN(LANES) * sizeof(REAL)); b += 64) NEXT_ROW_PREFETCH(above, sy, b);
}

/* stream: streaming stores (else through the cache); prefetch: the next row
 * of plane z+1 (else none: the fused sweep's second step reads planes that
 * are all in cache). Constants at every call, so each use compiles to one
 * plain loop. */
static inline void FN(stencil_row3_vec)(REAL *restrict out, const REAL *restrict below, const REAL *restrict c,
                                        const REAL *restrict above, long n, long sy, FN(cpu_coeffs) k, int stream,
                                        int prefetch)
{
    long i = 0;
    for (; i + FN(LANES) <= n; i += FN(LANES)) {
        if (prefetch) FN(prefetch_next_row)(above + i, sy);
        FN(vec) result = FN(stencil_vec)(below + i, c + i, above + i, sy, k);
        FN(store)(out + i, result, stream);
    }
    if (i < n) FN(stencil_row3)(out + i, below + i, c + i, above + i, n - i, sy, k, 0);
}

static inline void FN(stencil_row_stream)(REAL *restrict out, const REAL *restrict c, long n, long sy, long sz,
                                          FN(cpu_coeffs) k)
{
    FN(stencil_row3_vec)(out, c - sz, c, c + sz, n, sy, k, 1, 1);
}

/* dst = src over n values (aligned bases), optionally with streaming stores. */
static void FN(copy_field)(REAL *restrict dst, const REAL *restrict src, long n, int stream)
{
    if (!stream) {
#pragma omp parallel for simd schedule(static)
        for (long i = 0; i < n; ++i) dst[i] = src[i];
        return;
    }
    long vectors = n / FN(LANES);
#pragma omp parallel
    {
#pragma omp for schedule(static) nowait
        for (long v = 0; v < vectors; ++v) FN(stream_store)(dst + v * FN(LANES), FN(load)(src + v * FN(LANES)));
        _mm_sfence();
    }
    for (long i = vectors * FN(LANES); i < n; ++i) dst[i] = src[i];
}

/* ghost = shift + scale * adjacent on the two x faces of one row. */
static inline void FN(set_x_ghosts)(REAL *row, long n, const FN(ghost_rule) *g)
{
    if (FN(applies)(g, FACE_X_LOW)) row[-1] = g->shift[FACE_X_LOW] + g->scale[FACE_X_LOW] * row[0];
    if (FN(applies)(g, FACE_X_HIGH)) row[n] = g->shift[FACE_X_HIGH] + g->scale[FACE_X_HIGH] * row[n - 1];
}

/* ghost = shift + scale * adjacent over the n values of a row. */
static inline void FN(set_ghost_row)(REAL *restrict ghost, const REAL *restrict adjacent, long n,
                                     const FN(ghost_rule) *g, int face)
{
    for (long x = 0; x < n; ++x) ghost[x] = g->shift[face] + g->scale[face] * adjacent[x];
}

/* The y-face ghost row that only row y reads (rows sy apart). */
static inline void FN(set_y_ghosts)(REAL *row, int y, const int n[3], long sy, const FN(ghost_rule) *g)
{
    if (y == 0 && FN(applies)(g, FACE_Y_LOW)) FN(set_ghost_row)(row - sy, row, n[0], g, FACE_Y_LOW);
    if (y == n[1] - 1 && FN(applies)(g, FACE_Y_HIGH)) FN(set_ghost_row)(row + sy, row, n[0], g, FACE_Y_HIGH);
}

/* The y- and z-face ghost rows that only row (y, z) reads: set by the thread
 * that sweeps that row, just before, while the row is in cache. */
static inline void FN(set_yz_ghosts)(REAL *row, int y, int z, const int n[3], long sy, long sz,
                                     const FN(ghost_rule) *g)
{
    FN(set_y_ghosts)(row, y, n, sy, g);
    if (z == 0 && FN(applies)(g, FACE_Z_LOW)) FN(set_ghost_row)(row - sz, row, n[0], g, FACE_Z_LOW);
    if (z == n[2] - 1 && FN(applies)(g, FACE_Z_HIGH)) FN(set_ghost_row)(row + sz, row, n[0], g, FACE_Z_HIGH);
}

/* Sweeps the owned block of u into out (both laid out by `l`), halo fill
 * included: the ghosts each row's stencil reads (x faces; y and z faces on
 * the block's sides) are set just before the row is swept, while it is in
 * cache. A separate fill pass costs more (two more parallel regions, and
 * the faces' cache lines touched twice); only this row's
 * stencil reads them, so threads never race. */
static inline void FN(sweep_row)(REAL *restrict out, REAL *restrict u, long row, int y, int z, const int n[3],
                                 long sy, long sz, FN(cpu_coeffs) k, const FN(ghost_rule) *g,
                                 int laplacian_only, int stream)
{
    FN(set_x_ghosts)(u + row, n[0], g);
    FN(set_yz_ghosts)(u + row, y, z, n, sy, sz, g);
    if (stream && !laplacian_only) FN(stencil_row_stream)(out + row, u + row, n[0], sy, sz, k);
    else FN(stencil_row)(out + row, u + row, n[0], sy, sz, k, laplacian_only);
}

/* Thread 0 lets an exchange in flight move on (heat_halo_transport.exchange_progress)
 * until it has arrived; `arrived` is that thread's own flag. */
static inline void FN(let_travel)(const heat_halo_transport *travelling, int *arrived)
{
    if (travelling && !*arrived) *arrived = travelling->exchange_progress(travelling->context) != 0;
}

/* The calling thread's slab [*z0, *z1) of the planes [z_begin, z_end), its share of the parallel region's team. */
static inline void FN(thread_slab)(int z_begin, int z_end, int *z0, int *z1)
{
    const long planes = z_end - z_begin, team = omp_get_num_threads(), t = omp_get_thread_num();
    *z0 = z_begin + (int)(planes * t / team), *z1 = z_begin + (int)(planes * (t + 1) / team);
}

/* Sweeps row (y, z), `row` the index of its first owned point; job: what
 * the sweep needs beside them (the caller's struct). */
typedef void (*FN(row_sweeper))(const void *job, long row, int y, int z);

/* The march of every sweep of one step a row, run by each thread of the
 * caller's parallel region: thread t sweeps a slab of the planes [z_begin,
 * z_end) in blocks of `block_rows` rows of y, and within a block marches up
 * z, so that the planes a row reads (z-R .. z+R) stay in the core's L2 and
 * every value comes from memory once. Few planes a thread: the rows shared
 * out instead (no barrier at the end). travelling: a halo exchange in flight,
 * which thread 0 lets move after each plane (or row) it sweeps; NULL: none.
 * Inlined, with sweep_row a constant at every call, so the row call is direct. */
static inline __attribute__((always_inline)) void FN(march_rows)(FN(row_sweeper) sweep_row, const void *job,
                                                                 const int n[3], const heat_layout *l,
                                                                 int block_rows, int z_begin, int z_end,
                                                                 const heat_halo_transport *travelling)
{
    const long sy = l->stride_y, sz = l->stride_z, first = heat_layout_first_owned(l); /* owned (0, 0, 0) */
    const int planes = z_end - z_begin;
    int arrived = 0, z0, z1;
    const heat_halo_transport *mover = omp_get_thread_num() == 0 ? travelling : NULL;
    if (planes >= 4 * omp_get_num_threads()) {
        FN(thread_slab)(z_begin, z_end, &z0, &z1);
        for (int y0 = 0; y0 < n[1]; y0 += block_rows) {
            int y1 = y0 + block_rows < n[1] ? y0 + block_rows : n[1];
            for (int z = z0; z < z1; ++z) {
                for (int y = y0; y < y1; ++y) sweep_row(job, first + y * sy + z * sz, y, z);
                FN(let_travel)(mover, &arrived);
            }
        }
    } else {
#pragma omp for collapse(2) schedule(static) nowait
        for (int z = z_begin; z < z_end; ++z)
            for (int y = 0; y < n[1]; ++y) {
                sweep_row(job, first + y * sy + z * sz, y, z);
                FN(let_travel)(mover, &arrived);
            }
    }
}

/* What stencil_sweep_planes' rows need. */
typedef struct FN(step_job) {
    REAL *out, *u;
    const int *n;
    long sy, sz;
    FN(cpu_coeffs) k;
    const FN(ghost_rule) *g;
    int laplacian_only, stream;
} FN(step_job);

static inline __attribute__((always_inline)) void FN(step_job_row)(const void *job, long row, int y, int z)
{
    const FN(step_job) *j = job;
    FN(sweep_row)(j->out, j->u, row, y, z, j->n, j->sy, j->sz, j->k, j->g, j->laplacian_only, j->stream);
}

/* One step (or lap(u)) of the planes [z_begin, z_end) of u's owned block
 * into out, ghosts set row by row (sweep_row), marched as march_rows says. */
static void FN(stencil_sweep_planes)(REAL *restrict out, REAL *restrict u, const int n[3], const heat_layout *l,
                                     FN(cpu_coeffs) k, const FN(ghost_rule) *g, int laplacian_only, int stream,
                                     int block_rows, int z_begin, int z_end, const heat_halo_transport *travelling)
{
    const FN(step_job) job = {out, u, n, l->stride_y, l->stride_z, k, g, laplacian_only, stream};
#pragma omp parallel
    {
        FN(march_rows)(FN(step_job_row), &job, n, l, block_rows, z_begin, z_end, travelling);
        /* Streaming stores are weakly ordered: visible to the other threads before the barrier. */
        if (stream) _mm_sfence();
    }
}

/* ---- Two steps in one sweep ----
 *
 * A step reads the field once and writes it once, as a copy does, so one
 * step a sweep cannot beat the copy. stencil_sweep2_planes takes two steps in one
 * sweep: each thread keeps the intermediate field v (one step on) in a ring
 * of three planes for its block of rows, small enough to stay in its L2, and
 * the second step reads v from there: memory sees one field read and one
 * written for two steps. Every value is computed by the same row functions
 * from the same inputs, its ghosts set by the same rules, as two calls of
 * stencil_sweep_planes would, so the results are the same bits. A block needs one
 * row of v beyond it on each side and a thread's slab one plane: those are
 * computed twice (2-4% more arithmetic). Exchanged faces: z faces only,
 * whose neighbours sent two planes (`beyond`: the second, outer one, rows of
 * n[0] values; the first is in the field's ghost plane), so that plane -1 or
 * n[2] of v is computed as the neighbour computes it. */

/* A thread's ring: planes of v, rows ya-1 .. ya + rows (the grid's y ghost
 * rows where the block reaches a y face), laid out as the field (rows sy
 * apart, x ghosts beside them). Plane z (-1 and n[2]: the z ghosts) lives
 * in slot (z + 3) mod 3. */
typedef struct FN(ring) {
    REAL *base;
    long plane;   /* values per slot */
    long sy;
    int ya;       /* first row of v in the block */
} FN(ring);

enum { FN(RING_PAD) = CPU_ALIGN_BYTES / sizeof(REAL) }; /* x = 0 aligned, x = -1 in front of it */

/* Values of one thread's ring for blocks of up to block_rows rows. */
static inline long FN(ring_values)(long sy, int block_rows)
{
    return 3 * ((long)(block_rows + 4) * sy + 2 * FN(RING_PAD));
}

static inline REAL *FN(ring_row)(const FN(ring) *v, int y, int z)
{
    return v->base + (long)((z + 3) % 3) * v->plane + (long)(y - v->ya + 1) * v->sy + FN(RING_PAD);
}

/* The pair's first step v on the planes that the two output planes next to
 * each z face read, where those go apart from the rest (stencil_sweep2_edges):
 * planes -1 .. 2 and n[2] - 3 .. n[2] (n[2] >= 6), whole, rows -1 .. n[1],
 * laid out as the ring's. Planes 1, 2, n[2] - 3 and n[2] - 2 are kept from
 * the sweep of the planes between (stencil_sweep2_planes), the others
 * computed once the faces have arrived. */
typedef struct FN(edge_planes) {
    REAL *base; /* 8 planes of edge_plane_values(sy, n[1]) values */
    long plane; /* values per plane */
    long sy;
    int nz;     /* n[2] */
} FN(edge_planes);

static inline long FN(edge_plane_values)(long sy, int ny) { return (long)(ny + 2) * sy + 2 * FN(RING_PAD); }

static inline REAL *FN(edge_row)(const FN(edge_planes) *e, int y, int z)
{
    const int slot = z <= 2 ? z + 1 : 4 + z - (e->nz - 3);
    return e->base + (long)slot * e->plane + (long)(y + 1) * e->sy + FN(RING_PAD);
}

/* Is plane z of v one that e keeps on the given sides (1: low, 2: high)? */
static inline int FN(edge_keeps)(const FN(edge_planes) *e, unsigned sides, int z)
{
    return ((sides & 1u) && (z == 1 || z == 2)) || ((sides & 2u) && (z == e->nz - 3 || z == e->nz - 2));
}

/* Rows [ya, yb) of plane z of the ring (and its y ghost rows where they reach a y face), x ghosts included, into e. */
static void FN(edge_keep_rows)(const FN(edge_planes) *e, const FN(ring) *v, int z, int yb, const int n[3])
{
    const int from = v->ya == 0 ? -1 : v->ya, to = yb == n[1] ? n[1] + 1 : yb;
    for (int y = from; y < to; ++y)
        memcpy(FN(edge_row)(e, y, z) - 1, FN(ring_row)(v, y, z) - 1, (size_t)(n[0] + 2) * sizeof(REAL));
}

/* The calling thread's ring in `rings` (ring_values(sy, block_rows) values a thread). */
static inline FN(ring) FN(thread_ring)(REAL *rings, long sy, int block_rows)
{
    const long values = FN(ring_values)(sy, block_rows);
    return (FN(ring)){rings + omp_get_thread_num() * values, values / 3, sy, 0};
}

/* u's ghosts on every row of plane z (what sweep_row sets row by row). */
static void FN(set_plane_ghosts)(REAL *u, long first, int z, const int n[3], long sy, long sz,
                                 const FN(ghost_rule) *g)
{
    for (int y = 0; y < n[1]; ++y) {
        REAL *row = u + first + y * sy + z * sz;
        FN(set_x_ghosts)(row, n[0], g);
        FN(set_yz_ghosts)(row, y, z, n, sy, sz, g);
    }
}

/* Row y of plane z of v = one step of u into v_row, with v's x and y ghosts;
 * set_u_ghosts: set u's ghosts of the row first. Planes -1 and n[2]
 * (exchanged z faces) read their outer neighbour plane from beyond[0] and
 * beyond[1]. */
static inline void FN(first_step_row)(REAL *v_row, REAL *u, long first, int y, int z, int set_u_ghosts,
                                      const int n[3], long sy, long sz, FN(cpu_coeffs) k, const FN(ghost_rule) *g,
                                      const REAL *const beyond[2])
{
    REAL *row = u + first + y * sy + z * sz;
    if (set_u_ghosts) {
        FN(set_x_ghosts)(row, n[0], g);
        FN(set_yz_ghosts)(row, y, z, n, sy, sz, g);
    }
    const REAL *below = z == -1 ? beyond[0] + (long)y * n[0] : row - sz;
    const REAL *above = z == n[2] ? beyond[1] + (long)y * n[0] : row + sz;
    FN(stencil_row3_vec)(v_row, below, row, above, n[0], sy, k, 0, 1);
    FN(set_x_ghosts)(v_row, n[0], g);
    FN(set_y_ghosts)(v_row, y, n, sy, g);
}

/* Rows [ya, yb) of plane z of v (first_step_row); set_u_ghosts: for the
 * planes no other thread reads (the others were set before the sweep). */
static void FN(first_step_plane)(FN(ring) *v, REAL *u, long first, int z, int yb, int set_u_ghosts,
                                 const int n[3], long sz, FN(cpu_coeffs) k, const FN(ghost_rule) *g,
                                 const REAL *const beyond[2])
{
    for (int y = v->ya; y < yb; ++y)
        FN(first_step_row)(FN(ring_row)(v, y, z), u, first, y, z, set_u_ghosts, n, v->sy, sz, k, g, beyond);
}

/* v's z ghost plane beyond plane z (a z face), rows [ya, yb). */
static void FN(ring_z_ghosts)(FN(ring) *v, int z, int ghost, int yb, const int n[3], const FN(ghost_rule) *g,
                              int face)
{
    for (int y = v->ya; y < yb; ++y) FN(set_ghost_row)(FN(ring_row)(v, y, ghost), FN(ring_row)(v, y, z), n[0], g, face);
}

/* Rows [y0, y1) of plane z of out = one step of v. */
static void FN(second_step_plane)(REAL *out, const FN(ring) *v, long first, int z, int y0, int y1, const int n[3],
                                  long sz, FN(cpu_coeffs) k, int stream)
{
    for (int y = y0; y < y1; ++y) {
        REAL *o = out + first + y * v->sy + z * sz;
        const REAL *below = FN(ring_row)(v, y, z - 1), *c = FN(ring_row)(v, y, z), *above = FN(ring_row)(v, y, z + 1);
        if (stream) FN(stencil_row3_vec)(o, below, c, above, n[0], v->sy, k, 1, 0);
        else FN(stencil_row3_vec)(o, below, c, above, n[0], v->sy, k, 0, 0);
    }
}

/* One block of rows [y0, y1) of a thread's slab [z0, z1): up z, plane z of v
 * and then plane z - 1 of out, whose three planes of v are then in the ring.
 * v's planes run one beyond the slab, or at a z face one beyond the grid
 * where the face is exchanged (computed) and none where it is a boundary
 * (v's ghost plane, set by the face's rule). mover: an exchange in flight
 * that this thread lets move after each plane (NULL: none). keep: where v's
 * planes that it keeps on keep_sides go (NULL: none). */
static void FN(sweep2_block)(REAL *out, REAL *u, FN(ring) *v, long first, int y0, int y1, int z0, int z1,
                             const int n[3], long sz, FN(cpu_coeffs) k, const FN(ghost_rule) *g, int stream,
                             const REAL *const beyond[2], const heat_halo_transport *mover, int *arrived,
                             const FN(edge_planes) *keep, unsigned keep_sides)
{
    const int low_rule = FN(applies)(g, FACE_Z_LOW), high_rule = FN(applies)(g, FACE_Z_HIGH);
    v->ya = y0 > 0 ? y0 - 1 : 0;
    int yb = y1 < n[1] ? y1 + 1 : n[1];
    int za = z0 > 0 || !low_rule ? z0 - 1 : 0, zb = z1 < n[2] || !high_rule ? z1 + 1 : n[2];
    for (int z = za; z < zb; ++z) {
        FN(first_step_plane)(v, u, first, z, yb, z > z0 && z < z1 - 1, n, sz, k, g, beyond);
        if (keep && FN(edge_keeps)(keep, keep_sides, z)) FN(edge_keep_rows)(keep, v, z, yb, n);
        if (z == 0 && low_rule) FN(ring_z_ghosts)(v, 0, -1, yb, n, g, FACE_Z_LOW);
        if (z - 1 >= z0 && z - 1 < z1) FN(second_step_plane)(out, v, first, z - 1, y0, y1, n, sz, k, stream);
        if (z == n[2] - 1 && z < z1 && high_rule) { /* its ghost takes the slot of plane z - 2, just used above */
            FN(ring_z_ghosts)(v, z, n[2], yb, n, g, FACE_Z_HIGH);
            FN(second_step_plane)(out, v, first, z, y0, y1, n, sz, k, stream);
        }
        FN(let_travel)(mover, arrived);
    }
}

/* u's ghosts of plane z where the first step of a pair reads them: an owned
 * plane, or the ghost plane of an exchanged z face (swept by the first step
 * as the neighbour's plane). A boundary face's ghost plane is not swept. */
static void FN(set_swept_plane_ghosts)(REAL *u, long first, int z, const int n[3], long sy, long sz,
                                       const FN(ghost_rule) *g)
{
    if ((z == -1 && FN(applies)(g, FACE_Z_LOW)) || (z == n[2] && FN(applies)(g, FACE_Z_HIGH))) return;
    FN(set_plane_ghosts)(u, first, z, n, sy, sz, g);
}

/* Planes [z_begin, z_end) of out = two steps of u on `threads` threads
 * (each a slab of at least one plane). rings: ring_values(sy, block_rows)
 * values for each thread, 64-byte aligned. Exchanged faces: z faces only,
 * their nearer plane in u's ghost plane, the outer one in beyond[0] (below
 * plane -1) and beyond[1] (above plane n[2]); the range [2, n[2] - 2) reads
 * neither, and may run while they travel (travelling: the exchange in
 * flight, which thread 0 lets move; NULL: none), keeping in `keep` the
 * planes of v that stencil_sweep2_edges then reads (NULL: none). The
 * planes' values do not depend on the ranges they were swept in. */
static void FN(stencil_sweep2_planes)(REAL *restrict out, REAL *restrict u, const int n[3], const heat_layout *l,
                                      FN(cpu_coeffs) k, const FN(ghost_rule) *g, int stream, int block_rows,
                                      REAL *rings, const REAL *const beyond[2], int threads, int z_begin, int z_end,
                                      const heat_halo_transport *travelling, const FN(edge_planes) *keep)
{
    const long sy = l->stride_y, sz = l->stride_z;
    const long first = heat_layout_first_owned(l);
#pragma omp parallel num_threads(threads)
    {
        int t = omp_get_thread_num(), arrived = 0;
        int z0, z1;
        FN(thread_slab)(z_begin, z_end, &z0, &z1);
        const heat_halo_transport *mover = t == 0 ? travelling : NULL;
        const unsigned keep_sides = (z0 == z_begin ? 1u : 0u) | (z1 == z_end ? 2u : 0u);
        /* A slab's first and last planes are read by the next thread's first
         * step too: their owner sets their ghosts before anyone sweeps; so do
         * the first and last threads for the planes just outside the range. */
        FN(set_plane_ghosts)(u, first, z0, n, sy, sz, g);
        FN(set_plane_ghosts)(u, first, z1 - 1, n, sy, sz, g);
        if (z0 == z_begin) FN(set_swept_plane_ghosts)(u, first, z_begin - 1, n, sy, sz, g);
        if (z1 == z_end) FN(set_swept_plane_ghosts)(u, first, z_end, n, sy, sz, g);
#pragma omp barrier
        FN(ring) v = FN(thread_ring)(rings, sy, block_rows);
        for (int y0 = 0; y0 < n[1]; y0 += block_rows) {
            int y1 = y0 + block_rows < n[1] ? y0 + block_rows : n[1];
            FN(sweep2_block)(out, u, &v, first, y0, y1, z0, z1, n, sz, k, g, stream, beyond, mover, &arrived,
                             keep_sides ? keep : NULL, keep_sides);
        }
        if (stream) _mm_sfence();
    }
}

/* Row y of v's planes next to the z faces that stencil_sweep2_planes did not
 * keep: planes 0 and n[2] - 1, and beyond them the neighbours' planes -1 and
 * n[2] (exchanged faces) or v's ghost planes (boundary faces, by their rule),
 * as sweep2_block computes them. */
static void FN(edge_first_step_row)(const FN(edge_planes) *e, REAL *u, long first, int y, const int n[3], long sy,
                                    long sz, FN(cpu_coeffs) k, const FN(ghost_rule) *g, const REAL *const beyond[2])
{
    const int top = n[2] - 1;
    if (!FN(applies)(g, FACE_Z_LOW)) FN(first_step_row)(FN(edge_row)(e, y, -1), u, first, y, -1, 1, n, sy, sz, k, g, beyond);
    FN(first_step_row)(FN(edge_row)(e, y, 0), u, first, y, 0, 1, n, sy, sz, k, g, beyond);
    if (FN(applies)(g, FACE_Z_LOW)) FN(set_ghost_row)(FN(edge_row)(e, y, -1), FN(edge_row)(e, y, 0), n[0], g, FACE_Z_LOW);
    FN(first_step_row)(FN(edge_row)(e, y, top), u, first, y, top, 1, n, sy, sz, k, g, beyond);
    if (FN(applies)(g, FACE_Z_HIGH)) FN(set_ghost_row)(FN(edge_row)(e, y, n[2]), FN(edge_row)(e, y, top), n[0], g, FACE_Z_HIGH);
    else FN(first_step_row)(FN(edge_row)(e, y, n[2]), u, first, y, n[2], 1, n, sy, sz, k, g, beyond);
}

/* Row y of out's plane z from e's planes z - 1, z, z + 1 (second_step_plane's arithmetic). */
static inline void FN(edge_second_step_row)(REAL *out, const FN(edge_planes) *e, long first, int y, int z,
                                            const int n[3], long sz, FN(cpu_coeffs) k, int stream)
{
    REAL *o = out + first + y * e->sy + z * sz;
    const REAL *below = FN(edge_row)(e, y, z - 1), *c = FN(edge_row)(e, y, z), *above = FN(edge_row)(e, y, z + 1);
    if (stream) FN(stencil_row3_vec)(o, below, c, above, n[0], e->sy, k, 1, 0);
    else FN(stencil_row3_vec)(o, below, c, above, n[0], e->sy, k, 0, 0);
}

/* The two planes next to each z face of out = two steps of u: what
 * stencil_sweep2_planes leaves when it sweeps [2, n[2] - 2) while the
 * faces travel, from the planes of v it kept there (e) and those that need
 * the faces, computed here once each; rows shared among the threads. */
static void FN(stencil_sweep2_edges)(REAL *restrict out, REAL *restrict u, const int n[3], const heat_layout *l,
                                     FN(cpu_coeffs) k, const FN(ghost_rule) *g, int stream,
                                     const FN(edge_planes) *e, const REAL *const beyond[2], int threads)
{
    const long sy = l->stride_y, sz = l->stride_z;
    const long first = heat_layout_first_owned(l);
    const int planes[4] = {0, 1, n[2] - 2, n[2] - 1};
#pragma omp parallel num_threads(threads)
    {
#pragma omp for schedule(static)
        for (int y = 0; y < n[1]; ++y) FN(edge_first_step_row)(e, u, first, y, n, sy, sz, k, g, beyond);
#pragma omp for collapse(2) schedule(static) nowait
        for (int p = 0; p < 4; ++p)
            for (int y = 0; y < n[1]; ++y) FN(edge_second_step_row)(out, e, first, y, planes[p], n, sz, k, stream);
        if (stream) _mm_sfence();
    }
}

/* Face f of a block as a plane of points: (fast, slow) counts and strides,
 * and the owned plane `layer` in from the face (0: next to it) or, negative,
 * its ghost layer -layer - 1 out. */
typedef struct FN(face_plane) {
    long fast_count, fast_stride, slow_count, slow_stride, start;
} FN(face_plane);

static inline FN(face_plane) FN(face_plane_of)(int face, int layer, const int n[3], const heat_layout *l)
{
    const long stride[3] = {1, l->stride_y, l->stride_z};
    int axis = face / 2, fast = axis == 0 ? 1 : 0, slow = axis == 2 ? 1 : 2;
    long index = face % 2 ? n[axis] - 1 - layer : layer;
    return (FN(face_plane)){n[fast], stride[fast], n[slow], stride[slow], heat_layout_first_owned(l) +
                                                                          index * stride[axis]};
}

/* The owned plane `layer` planes in from face f (0: next to it) into buf (for the neighbour across it). */
static void FN(pack_face)(REAL *restrict buf, const REAL *restrict u, int face, int layer, const int n[3],
                          const heat_layout *l)
{
    FN(face_plane) p = FN(face_plane_of)(face, layer, n, l);
#pragma omp parallel for schedule(static)
    for (long s = 0; s < p.slow_count; ++s)
        for (long f = 0; f < p.fast_count; ++f) buf[s * p.fast_count + f] = u[p.start + s * p.slow_stride + f * p.fast_stride];
}

/* buf (the neighbour's plane `layer` in from the shared face) into ghost layer `layer` of face f (-1 - layer). */
static void FN(unpack_face)(REAL *restrict u, const REAL *restrict buf, int face, int layer, const int n[3],
                            const heat_layout *l)
{
    FN(face_plane) p = FN(face_plane_of)(face, -1 - layer, n, l);
#pragma omp parallel for schedule(static)
    for (long s = 0; s < p.slow_count; ++s)
        for (long f = 0; f < p.fast_count; ++f) u[p.start + s * p.slow_stride + f * p.fast_stride] = buf[s * p.fast_count + f];
}

/* ghost = shift + scale * adjacent: Neumann (0, 1), Dirichlet (2g, -1).
 * y and z faces only: stencil_sweep_planes sets the x-face ghosts row by row. */
static void FN(halo_fill_yz)(REAL *u, const int n[3], const heat_layout *l, const FN(ghost_rule) *g)
{
    const int y_low = FN(applies)(g, FACE_Y_LOW), y_high = FN(applies)(g, FACE_Y_HIGH);
    const int z_low = FN(applies)(g, FACE_Z_LOW), z_high = FN(applies)(g, FACE_Z_HIGH);
    const REAL *shift = g->shift, *scale = g->scale;
    const long sy = l->stride_y, sz = l->stride_z;
    REAL *o = u + heat_layout_first_owned(l);
#pragma omp parallel for schedule(static)
    for (int z = 0; z < n[2]; ++z) {
        REAL *low = o + z * sz, *high = o + (n[1] - 1) * sy + z * sz;
        for (int x = 0; x < n[0]; ++x) {
            if (y_low) low[x - sy] = shift[FACE_Y_LOW] + scale[FACE_Y_LOW] * low[x];
            if (y_high) high[x + sy] = shift[FACE_Y_HIGH] + scale[FACE_Y_HIGH] * high[x];
        }
    }
#pragma omp parallel for schedule(static)
    for (int y = 0; y < n[1]; ++y) {
        REAL *low = o + y * sy, *high = o + y * sy + (n[2] - 1) * sz;
        for (int x = 0; x < n[0]; ++x) {
            if (z_low) low[x - sz] = shift[FACE_Z_LOW] + scale[FACE_Z_LOW] * low[x];
            if (z_high) high[x + sz] = shift[FACE_Z_HIGH] + scale[FACE_Z_HIGH] * high[x];
        }
    }
}

/* The owned points' statistics per reduction brick of this block
 * (solver/reduce.h; bricks[b], b = (bz * own[1] + by) * own[0] + bx). A
 * brick's sum adds its rows in order (z, then y), each row's piece of the
 * brick summed by one vector loop (non-finite values counted and left out
 * by selects, not branches). A brick is wholly one process's and its pieces
 * start 64-byte aligned in every layout, so its sum has the same bits
 * whatever the decomposition and the thread count; heat_reduction_sum_bricks
 * adds the bricks in a fixed order. Each thread takes the bricks of one
 * (by, bz) at a time and sweeps their rows whole, as they lie in memory
 * (brick by brick, 16-point pieces of rows scattered over 16 planes, took
 * 4-5x as long on the 2-core VM). The sum is for the eye (summary, history,
 * conservation checks); no result depends on it. */
static void FN(field_stats)(const REAL *u, const int n[3], const heat_layout *l, const int brick[3],
                            const int own[3], heat_field_stats *bricks)
{
    const long sy = l->stride_y, sz = l->stride_z, slabs = (long)own[1] * own[2];
    const REAL *o = u + heat_layout_first_owned(l);
#pragma omp parallel for schedule(static)
    for (long slab = 0; slab < slabs; ++slab) {
        heat_field_stats *row_of_bricks = bricks + slab * own[0];
        for (int bx = 0; bx < own[0]; ++bx) row_of_bricks[bx] = (heat_field_stats){HUGE_VAL, -HUGE_VAL, 0.0, 0};
        const int y0 = (int)(slab % own[1]) * brick[1], z0 = (int)(slab / own[1]) * brick[2];
        const int y1 = y0 + brick[1] < n[1] ? y0 + brick[1] : n[1], z1 = z0 + brick[2] < n[2] ? z0 + brick[2] : n[2];
        for (int z = z0; z < z1; ++z)
            for (int y = y0; y < y1; ++y) {
                const REAL *row = o + y * sy + z * sz;
                for (int bx = 0; bx < own[0]; ++bx) {
                    const int x0 = bx * brick[0], x1 = x0 + brick[0] < n[0] ? x0 + brick[0] : n[0];
                    double piece = 0.0, low = HUGE_VAL, high = -HUGE_VAL;
                    long nonfinite = 0;
#pragma omp simd reduction(+ : piece, nonfinite) reduction(min : low) reduction(max : high)
                    for (int x = x0; x < x1; ++x) {
                        double v = row[x];
                        int finite = v - v == 0.0; /* false for NaN and +-Inf */
                        nonfinite += !finite;
                        piece += finite ? v : 0.0;
                        low = finite && v < low ? v : low;
                        high = finite && v > high ? v : high;
                    }
                    heat_field_stats *b = &row_of_bricks[bx];
                    b->sum += piece, b->nonfinite += nonfinite;
                    b->min = low < b->min ? low : b->min, b->max = high > b->max ? high : b->max;
                }
            }
    }
}

static void FN(pack)(REAL *restrict compact, const REAL *restrict u, const int n[3],
                     const heat_layout *l)
{
    const REAL *o = u + heat_layout_first_owned(l);
#pragma omp parallel for collapse(2) schedule(static)
    for (int z = 0; z < n[2]; ++z)
        for (int y = 0; y < n[1]; ++y)
            memcpy(compact + ((long)z * n[1] + y) * n[0], o + y * l->stride_y + z * l->stride_z,
                   sizeof(REAL) * n[0]);
}

static void FN(unpack)(REAL *restrict u, const REAL *restrict compact, const int n[3],
                       const heat_layout *l)
{
    REAL *o = u + heat_layout_first_owned(l);
#pragma omp parallel for collapse(2) schedule(static)
    for (int z = 0; z < n[2]; ++z)
        for (int y = 0; y < n[1]; ++y)
            memcpy(o + y * l->stride_y + z * l->stride_z, compact + ((long)z * n[1] + y) * n[0],
                   sizeof(REAL) * n[0]);
}

#include "cpu_cg_kernels.h"

#undef FN
#undef CAT
#undef CAT_
