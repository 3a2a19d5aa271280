/*
 * The CPU kernels of materials runs (solver/materials.h) for one precision.
 * Included twice by backend_cpu.c (for_each_precision.h) with REAL = double /
 * float and SUFFIX = _d / _f.
 *
 * A point reads its temperature and its six neighbours'; its faces' weights
 * come from a table per axis indexed by the zone pair, looked up once for a
 * run of points that see one stencil of zones (material_runs), a point at a
 * time (the zone bytes of all seven) elsewhere. The zone index lies in a byte field of the fields' layout
 * (same offsets), its ghosts those of problem->zones, except on the
 * boundary faces, where a ghost takes the zone of the owned point beside it.
 *
 * The explicit step, with w_a = dt / (rho c)_a folded into the faces' conductances (c_ab = w_a K_ab,
 * a table per axis) and the source (w_a q_a), in this order (each product fused into its addition by an
 * explicit fma, rounded once):
 *   s = w_a q_a + c(z-1) (T[z-1] - T) ; += y-1 ; += x-1 ; += x+1 ; += y+1 ; += z+1
 *   T_new = T + s
 * 6 subtractions, 6 fused multiply-adds and an addition a point, where T + w_a (flux + q) with its
 * products apart took 20 operations and kept the cores' adders busy. The differences T_b - T stay (exact
 * between neighbouring values), so no rounding proportional to T itself enters: the weights' form
 * c_b T_b + (1 - sum c_b) T rounds its centre weight once for every point of a zone, a drift of the heat
 * that the energy balance showed in float (21x the mismatch). The HIP kernels take the unfused
 * T + w (flux + q): the two agree to rounding. Every row (uniform or general) takes this order, and
 * every copy of it rounds alike (explicit fma; the build contracts nothing).
 */
#ifndef MATERIAL_RUNS_DEFINED /* this file is included once per precision */
#define MATERIAL_RUNS_DEFINED
/* A row's runs of points: [begin, end) whose points all see one stencil of zones, the class `stencil` of
 * material_runs (a vector row with the class's weights, no gathers), stencil -1: several (gathers), or
 * stencil -2 - i: one vector whose lanes see a few classes, mixed pattern i. */
typedef struct material_run {
    int begin, end, stencil;
} material_run;

/* A pattern of one vector of a row (runs->lanes points from a vector's bound) whose points see up to
 * MATERIAL_MIXED_CLASSES stencils of zones: class stencil[k] over the lanes of bits lanes[k]. The vector
 * takes a weight set of its own, each lane its class's weights (material_runs' sets): the general row's
 * bits, without gathers. Rows of a box's cut repeat a few patterns, kept once each. */
enum { MATERIAL_MIXED_CLASSES = 4 };
typedef struct material_mixed {
    int stencil[MATERIAL_MIXED_CLASSES];
    unsigned long long lanes[MATERIAL_MIXED_CLASSES];
    int classes;
} material_mixed;

/* Every owned row's runs: row (y, z) = z n[1] + y has run[first[row] .. first[row + 1]); and the
 * zones of its first and last points (end_zone[0][row], end_zone[1][row]), whose rules give its x
 * ghosts: read from the zone index they would cost a cache miss a row end (the uniform rows read
 * nothing else of it). */
typedef struct material_runs {
    long *first;
    material_run *run;
    unsigned char *end_zone[2];
    unsigned char *whole; /* whole[row]: the row is one run of one zone (end_zone[0][row]); most rows are, and
                           * the sweep then reads neither `first` nor `run`, whose lines it would miss */
    unsigned char *aligned; /* aligned[row]: its runs are whole vectors of `lanes` points (but the row's last),
                             * none of them gathering: stored straight into the row, streamed or not */
    material_mixed *mixed;  /* the mixed patterns, each once */
    int mixed_count;
    int lanes;
    /* An aligned row's vectors' weight sets, vector_set[set_first[row] + v] for its vector v (the row's last
     * one, shorter than the others, included): set k < stencils is class k's weights in every lane, set
     * stencils + i mixed pattern i's. A row of several runs then costs one loop of its vectors, each with
     * the weights of its own set: no loop a run, no vector of a class whose lanes are dropped. */
    long *set_first;
    int *vector_set;
    /* The runs' stencils of zones: class k's zones packed a byte each, the point's own lowest, then its
     * faces' in the step's order (z-1, y-1, x-1, x+1, y+1, z+1); class a < zones is zone a alone, so a
     * whole row's class is its zone. */
    unsigned long long *stencil_zones;
    int stencils;
} material_runs;

/* Byte b of a stencil class's packed zones (b = 0: the point's own; 1..6: its faces'). */
static inline int material_stencil_zone(unsigned long long zones, int b) { return (int)(zones >> (8 * b) & 0xff); }

/* The gathering row and the scalar tails compiled once, called by every path: a call a row (or a run)
 * costs nothing beside their work, and one copy keeps a pair's (material_sweep2) bits those of two single
 * steps, one rank's those of several, whatever a compiler's contraction would do to inlined copies. */
#define MATERIAL_ONE_COPY __attribute__((noinline, noclone))
/* The work of the rows next to a face (ghost rows, captured values), out of the sweeps' lines: inlined,
 * its loops filled the row loop's registers and code for the few rows that run them. */
#define MATERIAL_FACE_ROWS __attribute__((noinline, cold))
#endif

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#define FN(name) CAT(name, SUFFIX)

/* The weights of a run whose points all see one stencil of zones (material_runs' classes): each face's c
 * in the step's order and w q of the points' zone (the step's own: FN(uniform_of)). */
typedef struct FN(uniform_zone) {
    REAL cz0, cy0, cx0, cx1, cy1, cz1, wq;
    int zone;
} FN(uniform_zone);

typedef struct FN(material_tables) {
    int zones;
    REAL *conductance[3];                  /* [a * zones + b]: K_ab / h_d^2 */
    REAL *weight[3];                       /* [a * zones + b]: dt / (rho c)_a K_ab / h_d^2 (the explicit step's c_b) */
    REAL source[HEAT_ZONES_MAX];           /* q of this step (heat_zone_source at its start time) */
    REAL weighted_source[HEAT_ZONES_MAX];  /* dt / (rho c) q of this step: the explicit step's */
    double step_weight[HEAT_ZONES_MAX];    /* dt / (rho c), unrounded: the explicit step's factor of K and q */
    FN(uniform_zone) *uniform;             /* [k]: stencil class k's weights (material_runs), wq apart (shared
                                            * by a pair's two tables, whose sources differ) */
    int stencils;
    /* material_runs' weight sets, lane by lane (none where the runs' lanes are another precision's): the
     * faces' weights set_weight[6 s + f] in the step's order (shared by a pair's two tables), the zone of
     * each lane set_zone[s lanes + lane] and the step's w q of each lane set_wq[s lanes + lane] (material_sources_at);
     * set_wq_other: the same room for a copy of the tables whose sources differ (material_pair's second). */
    FN(vec) *set_weight;
    unsigned char *set_zone;
    REAL *set_wq, *set_wq_other;
    int sets;
    REAL scale[FACE_COUNT][HEAT_ZONES_MAX], shift[FACE_COUNT][HEAT_ZONES_MAX]; /* ghost = scale T + shift */
    unsigned exchanged;                    /* faces whose ghosts the exchange brings (no rule) */
    /* Implicit schemes, on y = sqrt(rho c) x (cpu_materials_cg.h): */
    REAL inv_sqrt_heat_capacity[HEAT_ZONES_MAX]; /* 1 / sqrt(rho c) */
    REAL operator_weight[HEAT_ZONES_MAX];        /* theta dt / sqrt(rho c) */
    REAL rhs_weight[HEAT_ZONES_MAX];             /* dt / sqrt(rho c) */
} FN(material_tables);

/* One point of the explicit step from its faces' weights (the file's head): the one order every row takes. */
static inline REAL FN(material_point)(REAL wq, REAL cz0, REAL below, REAL cy0, REAL south, REAL cx0, REAL west,
                                      REAL t, REAL cx1, REAL east, REAL cy1, REAL north, REAL cz1, REAL above)
{
    REAL sum = FN(fma1)(cz0, below - t, wq);
    sum = FN(fma1)(cy0, south - t, sum);
    sum = FN(fma1)(cx0, west - t, sum);
    sum = FN(fma1)(cx1, east - t, sum);
    sum = FN(fma1)(cy1, north - t, sum);
    sum = FN(fma1)(cz1, above - t, sum);
    return t + sum;
}

/* One row of the general step: out = T + dt / (rho c) (sum of the faces' K/h^2 (T_b - T) + q) in the
 * weights' order, the temperature's planes z-1 (below), z (c, rows sy apart) and z+1 (above) apart so that the pair's
 * second step (material_sweep2) can read planes kept in a ring; the zone bytes in the fields' layout. */
static MATERIAL_ONE_COPY void FN(material_row3)(REAL *restrict out, const REAL *restrict below, const REAL *restrict c,
                                     const REAL *restrict above, const unsigned char *restrict zone, long n, long sy,
                                     long sz, const FN(material_tables) *m)
{
    const REAL *wx = m->weight[0], *wy = m->weight[1], *wz = m->weight[2];
    const long zones = m->zones;
#pragma omp simd
    for (long i = 0; i < n; ++i) {
        const long a = zone[i], row = a * zones;
        out[i] = FN(material_point)(m->weighted_source[a], wz[row + zone[i - sz]], below[i], wy[row + zone[i - sy]],
                                    c[i - sy], wx[row + zone[i - 1]], c[i - 1], c[i], wx[row + zone[i + 1]], c[i + 1],
                                    wy[row + zone[i + sy]], c[i + sy], wz[row + zone[i + sz]], above[i]);
    }
}

/* The same row where every point and neighbour is of zone a (row_zone): the
 * same expression with the table's values as constants, so the same bits,
 * vectorised without gathers. */
static MATERIAL_ONE_COPY void FN(material_row3_uniform)(REAL *restrict out, const REAL *restrict below, const REAL *restrict c,
                                             const REAL *restrict above, long n, long sy, FN(uniform_zone) k)
{
#pragma omp simd
    for (long i = 0; i < n; ++i)
        out[i] = FN(material_point)(k.wq, k.cz0, below[i], k.cy0, c[i - sy], k.cx0, c[i - 1], c[i], k.cx1, c[i + 1],
                                    k.cy1, c[i + sy], k.cz1, above[i]);
}

/* One vector of the uniform row at c (material_point's order, lane by lane). */
static inline FN(vec) FN(material_uniform_vec)(const REAL *below, const REAL *c, const REAL *above, long sy,
                                               FN(uniform_zone) k)
{
    const FN(vec) t = FN(load)(c), wq = k.wq - (FN(vec)){0}; /* k.wq in every lane, -0 kept */
    FN(vec) sum = FN(fma_vec)(FN(splat)(k.cz0), FN(load)(below) - t, wq);
    sum = FN(fma_vec)(FN(splat)(k.cy0), FN(load)(c - sy) - t, sum);
    sum = FN(fma_vec)(FN(splat)(k.cx0), FN(load)(c - 1) - t, sum);
    sum = FN(fma_vec)(FN(splat)(k.cx1), FN(load)(c + 1) - t, sum);
    sum = FN(fma_vec)(FN(splat)(k.cy1), FN(load)(c + sy) - t, sum);
    sum = FN(fma_vec)(FN(splat)(k.cz1), FN(load)(above) - t, sum);
    return t + sum;
}

/* Stencil class k's weights with this step's source. */
static inline FN(uniform_zone) FN(uniform_of)(const FN(material_tables) *m, int k)
{
    FN(uniform_zone) weights = m->uniform[k];
    weights.wq = m->weighted_source[weights.zone];
    return weights;
}

/* One vector at c with weight set `set` (material_runs' sets): material_point's order, each lane with its own
 * weights. */
static inline __attribute__((always_inline)) FN(vec) FN(material_set_vec)(const REAL *below, const REAL *c,
                                                                         const REAL *above, long sy,
                                                                         const FN(material_tables) *m, int set)
{
    const FN(vec) *w = m->set_weight + 6L * set;
    const FN(vec) t = FN(load)(c);
    FN(vec) sum = FN(fma_vec)(w[0], FN(load)(below) - t, FN(load)(m->set_wq + (long)set * FN(LANES)));
    sum = FN(fma_vec)(w[1], FN(load)(c - sy) - t, sum);
    sum = FN(fma_vec)(w[2], FN(load)(c - 1) - t, sum);
    sum = FN(fma_vec)(w[3], FN(load)(c + 1) - t, sum);
    sum = FN(fma_vec)(w[4], FN(load)(c + sy) - t, sum);
    sum = FN(fma_vec)(w[5], FN(load)(above) - t, sum);
    return t + sum;
}

/* A uniform run's weights in every lane: the uniform row's operands, set once for a span of rows. */
typedef struct FN(uniform_lanes) {
    FN(vec) cz0, cy0, cx0, cx1, cy1, cz1, wq;
} FN(uniform_lanes);

static inline FN(uniform_lanes) FN(lanes_of)(FN(uniform_zone) k)
{
    const FN(vec) zero = {0};
    return (FN(uniform_lanes)){k.cz0 + zero, k.cy0 + zero, k.cx0 + zero, k.cx1 + zero, k.cy1 + zero, k.cz1 + zero,
                               k.wq - zero}; /* -0 kept: x - 0 is x for every x */
}

/* material_uniform_vec with its weights in every lane (the same operations, lane by lane). */
static inline __attribute__((always_inline)) FN(vec) FN(material_lanes_vec)(const REAL *below, const REAL *c,
                                                                           const REAL *above, long sy,
                                                                           const FN(uniform_lanes) *w)
{
    const FN(vec) t = FN(load)(c);
    FN(vec) sum = FN(fma_vec)(w->cz0, FN(load)(below) - t, w->wq);
    sum = FN(fma_vec)(w->cy0, FN(load)(c - sy) - t, sum);
    sum = FN(fma_vec)(w->cx0, FN(load)(c - 1) - t, sum);
    sum = FN(fma_vec)(w->cx1, FN(load)(c + 1) - t, sum);
    sum = FN(fma_vec)(w->cy1, FN(load)(c + sy) - t, sum);
    sum = FN(fma_vec)(w->cz1, FN(load)(above) - t, sum);
    return t + sum;
}

/* The uniform row by whole vectors, with streaming stores (out 64-byte aligned: a whole row) or through the
 * cache, and the next row of plane z+1 asked into L2 (stencil_row3_vec's reasons); the tail as the scalar row. */
static inline __attribute__((always_inline)) void FN(material_row3_uniform_vec)(
    REAL *restrict out, const REAL *restrict below, const REAL *restrict c, const REAL *restrict above, long n, long sy,
    FN(uniform_zone) k, int stream, int prefetch)
{
    long i = 0;
    for (; i + FN(LANES) <= n; i += FN(LANES)) {
        if (prefetch) FN(prefetch_next_row)(above + i, sy);
        FN(vec) result = FN(material_uniform_vec)(below + i, c + i, above + i, sy, k);
        FN(store)(out + i, result, stream);
    }
    if (i < n) FN(material_row3_uniform)(out + i, below + i, c + i, above + i, n - i, sy, k);
}

/* The same with the weights in every lane already (w = lanes_of(k): a span's rows share them). */
static inline __attribute__((always_inline)) void FN(material_row3_lanes_vec)(
    REAL *restrict out, const REAL *restrict below, const REAL *restrict c, const REAL *restrict above, long n, long sy,
    const FN(uniform_zone) *k, const FN(uniform_lanes) *w, int stream, int prefetch)
{
    long i = 0;
    for (; i + FN(LANES) <= n; i += FN(LANES)) {
        if (prefetch) FN(prefetch_next_row)(above + i, sy);
        FN(store)(out + i, FN(material_lanes_vec)(below + i, c + i, above + i, sy, w), stream);
    }
    if (i < n) FN(material_row3_uniform)(out + i, below + i, c + i, above + i, n - i, sy, *k);
}

/* A uniform run of a row of several runs, through the cache: whole vectors, the last one ending at the
 * run's end (it recomputes a few of the run's points, to the same bits) where the run holds one. */
static inline void FN(material_run_uniform_vec)(REAL *restrict out, const REAL *restrict below, const REAL *restrict c,
                                                const REAL *restrict above, long n, long sy, FN(uniform_zone) k,
                                                int prefetch)
{
    if (n < FN(LANES) || n % FN(LANES) == 0) {
        FN(material_row3_uniform_vec)(out, below, c, above, n, sy, k, 0, prefetch);
        return;
    }
    FN(material_row3_uniform_vec)(out, below, c, above, n - n % FN(LANES), sy, k, 0, prefetch);
    const long i = n - FN(LANES);
    FN(vec) result = FN(material_uniform_vec)(below + i, c + i, above + i, sy, k);
    memcpy(out + i, &result, sizeof result);
}

/* dst = src over a row of n values, whole vectors by streaming stores (dst 64-byte aligned). */
static inline void FN(stream_row)(REAL *restrict dst, const REAL *restrict src, long n)
{
    long i = 0;
    for (; i + FN(LANES) <= n; i += FN(LANES)) FN(stream_store)(dst + i, FN(load)(src + i));
    for (; i < n; ++i) dst[i] = src[i];
}

/* An aligned row (runs->aligned) by its vectors' weight sets, each stored straight into the row, streamed
 * or not; the row's last vector, where shorter than the others, as the scalar row with its class's weights. */
static inline __attribute__((always_inline)) void FN(material_row3_sets)(
    REAL *restrict out, const REAL *restrict below, const REAL *restrict c, const REAL *restrict above, long n,
    long sy, const FN(material_tables) *m, const int *set, int stream, int prefetch)
{
    long i = 0;
    for (; i + FN(LANES) <= n; i += FN(LANES), ++set) {
        if (prefetch) FN(prefetch_next_row)(above + i, sy);
        FN(store)(out + i, FN(material_set_vec)(below + i, c + i, above + i, sy, m, *set), stream);
    }
    if (i < n) FN(material_row3_uniform)(out + i, below + i, c + i, above + i, n - i, sy, FN(uniform_of)(m, *set));
}

/* Row `at` (z n[1] + y) of the step by its runs (material_runs): the uniform
 * row over a run whose points and neighbours are all of one zone, the general
 * row over the others. stream: streaming stores (out is a whole row, 64-byte
 * aligned): a row of several runs is computed into `scratch` (a row of a
 * thread's own, aligned) and streamed from there, since its runs do not start
 * at vectors' bounds; prefetch: the next row of plane z+1 (it comes from memory). */
static inline void FN(material_row3_at)(REAL *restrict out, const REAL *restrict below, const REAL *restrict c,
                                        const REAL *restrict above, const unsigned char *restrict zone, long n,
                                        long sy, long sz, const FN(material_tables) *m, const material_runs *runs,
                                        long at, int stream, int prefetch, REAL *restrict scratch)
{
    if (runs->whole[at]) { /* each store its own loop (stream and prefetch constants where inlined) */
        const FN(uniform_zone) k = FN(uniform_of)(m, runs->end_zone[0][at]);
        if (stream) FN(material_row3_uniform_vec)(out, below, c, above, n, sy, k, 1, prefetch);
        else FN(material_row3_uniform_vec)(out, below, c, above, n, sy, k, 0, prefetch);
        return;
    }
    if (runs->aligned[at] && m->sets) {
        const int *set = runs->vector_set + runs->set_first[at];
        if (stream) FN(material_row3_sets)(out, below, c, above, n, sy, m, set, 1, prefetch);
        else FN(material_row3_sets)(out, below, c, above, n, sy, m, set, 0, prefetch);
        return;
    }
    const material_run *run = runs->run + runs->first[at];
    const int count = (int)(runs->first[at + 1] - runs->first[at]);
    REAL *to = stream ? scratch : out;
    for (int r = 0; r < count; ++r) {
        const long b = run[r].begin, length = run[r].end - run[r].begin;
        if (run[r].stencil >= 0)
            FN(material_run_uniform_vec)(to + b, below + b, c + b, above + b, length, sy, FN(uniform_of)(m, run[r].stencil),
                                         prefetch);
        else FN(material_row3)(to + b, below + b, c + b, above + b, zone + b, length, sy, sz, m);
    }
    if (stream) FN(stream_row)(out, scratch, n);
}

/* A face ghost by its zone's rule from the owned value beside it: every ghost of the general step
 * (x rows, y and z faces, the pair's ring) takes this one expression, so every path rounds alike. The
 * fused multiply-add is spelled out: the compiler may not then contract it in one place and not in another. */
static inline REAL FN(ghost_by_rule)(REAL scale, REAL shift, REAL owned)
{
    return sizeof(REAL) == sizeof(double) ? (REAL)fma(scale, owned, shift) : (REAL)fmaf(scale, owned, shift);
}

/* Face f's ghosts by the rules of the zones beside them: ghost = scale T + shift
 * (shift 0 when `homogeneous`: the CG vectors). Called inside a parallel region. */
static void FN(material_face_fill)(REAL *u, const unsigned char *zone, int face, const int n[3], const heat_layout *l,
                                   const FN(material_tables) *m, int homogeneous)
{
    const long stride[3] = {1, l->stride_y, l->stride_z};
    const int axis = face / 2, fast = axis == 0 ? 1 : 0, slow = axis == 2 ? 1 : 2;
    const long inward = face % 2 ? -stride[axis] : stride[axis];
    const long start = l->origin + 1 + stride[1] + stride[2] + (face % 2 ? n[axis] : -1) * stride[axis];
    const REAL *scale = m->scale[face], *shift = m->shift[face];
#pragma omp for schedule(static) nowait
    for (long s = 0; s < n[slow]; ++s)
        for (long f = 0; f < n[fast]; ++f) {
            long ghost = start + s * stride[slow] + f * stride[fast], owned = ghost + inward;
            int a = zone[owned];
            u[ghost] = FN(ghost_by_rule)(scale[a], homogeneous ? (REAL)0 : shift[a], u[owned]);
        }
}

/* The ghosts of the boundary faces (not the exchanged ones), in one parallel region: each face writes
 * its own ghosts from owned points. */
static void FN(material_halo_fill)(REAL *u, const unsigned char *zone, const int n[3], const heat_layout *l,
                                   const FN(material_tables) *m, int homogeneous)
{
#pragma omp parallel
    for (int f = 0; f < FACE_COUNT; ++f)
        if (!(m->exchanged & 1u << f)) FN(material_face_fill)(u, zone, f, n, l, m, homogeneous);
}

/* The x faces' ghosts of row `at` (z n[1] + y) by its ends' zones (the rule of material_face_fill), set
 * by the sweep just before the row while it is in cache: a pass of its own touched two lines a row. */
static inline void FN(material_x_ghosts)(REAL *row, const material_runs *runs, long at, long n,
                                         const FN(material_tables) *m)
{
    const int low = runs->end_zone[0][at], high = runs->end_zone[1][at];
    if (!(m->exchanged & 1u << FACE_X_LOW))
        row[-1] = FN(ghost_by_rule)(m->scale[FACE_X_LOW][low], m->shift[FACE_X_LOW][low], row[0]);
    if (!(m->exchanged & 1u << FACE_X_HIGH))
        row[n] = FN(ghost_by_rule)(m->scale[FACE_X_HIGH][high], m->shift[FACE_X_HIGH][high], row[n - 1]);
}

/* A row of ghosts beyond a row of owned points by their zones' rules (ghost_by_rule): with one rule where
 * the owned row is of one zone (uniform: that zone, else -1), so that the loop is a vector one. */
static inline void FN(material_ghost_row)(REAL *restrict ghost, const REAL *restrict owned,
                                          const unsigned char *restrict zone, long n, const REAL *scale,
                                          const REAL *shift, int uniform)
{
    if (uniform >= 0) {
        const REAL a = scale[uniform], b = shift[uniform];
#pragma omp simd
        for (long x = 0; x < n; ++x) ghost[x] = FN(ghost_by_rule)(a, b, owned[x]);
        return;
    }
#pragma omp simd
    for (long x = 0; x < n; ++x) ghost[x] = FN(ghost_by_rule)(scale[zone[x]], shift[zone[x]], owned[x]);
}

/* The y and z faces' ghost rows beyond row `at` (y, z) of a field whose rows lie sy and sz apart, where
 * the row is next to such a face (not an exchanged one): set by the sweep just before it reads them, the
 * row then in cache (a pass over the faces of its own missed its lines in memory). Only row (y, z) reads
 * them, so rows may go in any order and on any thread. */
static MATERIAL_FACE_ROWS void FN(material_yz_ghost_rows)(REAL *row, const unsigned char *zone,
                                                        const material_runs *runs, long at, int y, int z,
                                                        const int n[3], long sy, long sz, const FN(material_tables) *m)
{
    const int beside[4] = {y == 0, y == n[1] - 1, z == 0, z == n[2] - 1};
    const long beyond[4] = {-sy, sy, -sz, sz};
    for (int f = 0; f < 4; ++f) {
        const int face = FACE_Y_LOW + f;
        if (!beside[f] || (m->exchanged & 1u << face)) continue;
        FN(material_ghost_row)(row + beyond[f], row, zone, n[0], m->scale[face], m->shift[face],
                               runs->whole[at] ? runs->end_zone[0][at] : -1);
    }
}

static inline void FN(material_yz_ghosts)(REAL *row, const unsigned char *zone, const material_runs *runs, long at,
                                          int y, int z, const int n[3], long sy, long sz,
                                          const FN(material_tables) *m)
{
    if (y == 0 || y == n[1] - 1 || z == 0 || z == n[2] - 1)
        FN(material_yz_ghost_rows)(row, zone, runs, at, y, z, n, sy, sz, m);
}

/* Thread t's scratch row (rows sy values apart, scratch_threads of them); a thread beyond them stores
 * through the cache (*stream 0): a row of several runs is streamed only from a scratch row. */
static inline REAL *FN(thread_scratch)(REAL *scratch, int scratch_threads, int t, long sy, int *stream)
{
    if (scratch && t < scratch_threads) return scratch + t * sy;
    *stream = 0;
    return NULL;
}

/* Row (y, z) of one general step, its ghosts by the faces' rules set first (the field's rows; sweeps of one step). */
static inline void FN(material_sweep_row)(REAL *restrict out, REAL *restrict u, const unsigned char *restrict zone,
                                          const material_runs *runs, long row, int y, int z, const int n[3], long sy,
                                          long sz, const FN(material_tables) *m, int stream, REAL *scratch)
{
    const long at = (long)z * n[1] + y;
    FN(material_x_ghosts)(u + row, runs, at, n[0], m);
    FN(material_yz_ghosts)(u + row, zone + row, runs, at, y, z, n, sy, sz, m);
    FN(material_row3_at)(out + row, u + row - sz, u + row, u + row + sz, zone + row, n[0], sy, sz, m, runs, at,
                         stream, 1, scratch);
}

/* What material_sweep's rows need; scratch: the thread's own row (NULL: none). */
typedef struct FN(material_job) {
    REAL *out, *u;
    const unsigned char *zone;
    const material_runs *runs;
    const int *n;
    long sy, sz;
    const FN(material_tables) *m;
    int stream;
    REAL *scratch;
} FN(material_job);

static inline __attribute__((always_inline)) void FN(material_job_row)(const void *job, long row, int y, int z)
{
    const FN(material_job) *j = job;
    FN(material_sweep_row)(j->out, j->u, j->zone, j->runs, row, y, z, j->n, j->sy, j->sz, j->m, j->stream,
                           j->scratch);
}

/* One general step of the owned block, u's exchanged ghosts set (the boundary faces' ghosts here, row by
 * row: material_sweep_row), marched as the one-material sweep (march_rows: the three planes a row reads stay in L2). stream: whole uniform
 * rows stored past the cache. */
static void FN(material_sweep)(REAL *restrict out, REAL *restrict u, const unsigned char *restrict zone,
                               const material_runs *runs, const int n[3], const heat_layout *l,
                               const FN(material_tables) *m, int block_rows, int stream, REAL *scratch,
                               int scratch_threads)
{
#pragma omp parallel
    {
        FN(material_job) job = {out, u, zone, runs, n, l->stride_y, l->stride_z, m, stream, NULL};
        job.scratch = FN(thread_scratch)(scratch, scratch_threads, omp_get_thread_num(), l->stride_y, &job.stream);
        FN(march_rows)(FN(material_job_row), &job, n, l, block_rows, 0, n[2], NULL);
        /* Streaming stores are weakly ordered: visible to the others before the barrier. */
        if (job.stream) _mm_sfence();
    }
}

/* Face f's owned plane of values: the value at (fast a, slow b) is base[a * fast + b * slow]
 * (material_boundary_bricks' axes); base NULL: none. */
typedef struct FN(face_values) {
    const REAL *base;
    long fast, slow;
} FN(face_values);

/* The field's owned planes next to its faces. */
static void FN(field_face_values)(FN(face_values) values[FACE_COUNT], const REAL *u, const int n[3],
                                  const heat_layout *l)
{
    const long stride[3] = {1, l->stride_y, l->stride_z};
    for (int face = 0; face < FACE_COUNT; ++face) {
        const int axis = face / 2, fast = axis == 0 ? 1 : 0, slow = axis == 2 ? 1 : 2;
        const long plane = face % 2 ? n[axis] - 1 : 0;
        values[face] = (FN(face_values)){u + l->origin + 1 + stride[1] + stride[2] + plane * stride[axis],
                                         stride[fast], stride[slow]};
    }
}

/* A pair's captured planes (material_pair). */
static void FN(captured_face_values)(FN(face_values) values[FACE_COUNT], REAL *const captured[FACE_COUNT],
                                     const int n[3])
{
    for (int face = 0; face < FACE_COUNT; ++face) {
        const int axis = face / 2, fast = axis == 0 ? 1 : 0;
        values[face] = (FN(face_values)){captured[face], 1, n[fast]};
    }
}

/* The power into the block through its boundary faces, per reduction brick
 * and kind (bricks[b * HEAT_ENERGY_KINDS + kind], b = (bz * own[1] + by) *
 * own[0] + bx), from the owned values beside the faces and their zones
 * (face_zone[f], laid out as captured planes: [slow * n[fast] + fast]): each
 * face point's k_a (g - T_a) / h_d times its face's area, K and (g - T) as
 * the step takes them. kind[f] < 0: face f brings none (or is exchanged). A
 * brick adds its points face by face, each face's in row order: the same
 * order on any decomposition and any number of threads, which share each
 * face's rows of bricks out. Worksharing with barriers of its own and none at
 * its end: called by every thread of a parallel region (material_sweep2) or
 * by material_boundary_bricks. */
typedef struct FN(boundary_energy) {
    FN(face_values) values[FACE_COUNT];
    const unsigned char *const *face_zone;
    const int *kind;
    double volume;
    const int *brick, *own;
    double *bricks;
} FN(boundary_energy);

#ifndef FACE_BRICKS_DEFINED /* this file is included once per precision */
#define FACE_BRICKS_DEFINED
/* The bricks along a face's fast axis that one pass sums side by side (heat_brick_size: at most 32 along an
 * axis), as many as FACE_TERMS values of a row hold. */
enum { FACE_BRICKS_TOGETHER = 32, FACE_TERMS = 2048 };
#endif

/* A face point's power term k_a (g - T_a) / h_d times its face's area, as the step takes K and g - T. */
static inline __attribute__((always_inline)) double FN(face_term)(REAL k, REAL scale, REAL shift, REAL t,
                                                                  double volume)
{
    const REAL ghost = FN(ghost_by_rule)(scale, shift, t); /* as material_face_fill sets it */
    return (double)(k * (ghost - t)) * volume;
}

/* The terms of a face row's points [a0, a1) (values t[a * fast], zones zones[a]) into terms[a - a0]: a vector
 * loop where the points are of one zone (most rows), a zone's rule a point elsewhere; the same bits. */
static void FN(face_row_terms)(double *restrict terms, const REAL *restrict t, long fast,
                               const unsigned char *restrict zones, int a0, int a1, const REAL *k, long zone_pair,
                               const REAL *scale, const REAL *shift, double volume)
{
    int uniform = 1;
    for (int a = a0 + 1; a < a1; ++a) uniform &= zones[a] == zones[a0];
    if (uniform) {
        const int z = zones[a0];
        const REAL kz = k[z * zone_pair], scale_z = scale[z], shift_z = shift[z];
#pragma omp simd
        for (int a = a0; a < a1; ++a) terms[a - a0] = FN(face_term)(kz, scale_z, shift_z, t[a * fast], volume);
        return;
    }
    for (int a = a0; a < a1; ++a) {
        const int z = zones[a];
        terms[a - a0] = FN(face_term)(k[z * zone_pair], scale[z], shift[z], t[a * fast], volume);
    }
}

/* Face `face`'s points in the bricks [i0, i1) along its fast axis and brick j along its slow one, each added to
 * its brick's running sum of the face's kind in the brick's own order (rows b, then a along the row): a row's
 * terms computed first (face_row_terms), then the bricks' chains of additions side by side in a vector, each
 * lane waiting only on its own, where one brick after another waited on every addition before it. */
static void FN(face_bricks_add)(const FN(boundary_energy) *e, const int n[3], const FN(material_tables) *m, int face,
                                int i0, int i1, int j)
{
    const int *brick = e->brick, *own = e->own;
    const int axis = face / 2, fast = axis == 0 ? 1 : 0, slow = axis == 2 ? 1 : 2, kind = e->kind[face];
    const long zone_pair = m->zones + 1; /* a zone with itself: a * zones + a */
    const FN(face_values) at = e->values[face];
    int coords[3];
    coords[axis] = (face % 2 ? n[axis] - 1 : 0) / brick[axis], coords[slow] = j;
    double piece[FACE_BRICKS_TOGETHER], terms[FACE_TERMS];
    long index[FACE_BRICKS_TOGETHER];
    for (int i = i0; i < i1; ++i) {
        coords[fast] = i;
        index[i - i0] = (((long)coords[2] * own[1] + coords[1]) * own[0] + coords[0]) * HEAT_ENERGY_KINDS + kind;
        piece[i - i0] = e->bricks[index[i - i0]];
    }
    const int a0 = i0 * brick[fast], a1 = i1 * brick[fast] < n[fast] ? i1 * brick[fast] : n[fast];
    const int b0 = j * brick[slow], b1 = b0 + brick[slow] < n[slow] ? b0 + brick[slow] : n[slow];
    for (int b = b0; b < b1; ++b) {
        const REAL *t = at.base + b * at.slow;
        const unsigned char *zones = e->face_zone[face] + (long)b * n[fast];
        if (i1 - i0 == 1) { /* one brick (wider than FACE_TERMS / 2): its points in order, FACE_TERMS at a time */
            for (int c0 = a0; c0 < a1; c0 += FACE_TERMS) {
                const int c1 = c0 + FACE_TERMS < a1 ? c0 + FACE_TERMS : a1;
                FN(face_row_terms)(terms, t, at.fast, zones, c0, c1, m->conductance[axis], zone_pair, m->scale[face],
                                   m->shift[face], e->volume);
                for (int a = c0; a < c1; ++a) piece[0] += terms[a - c0];
            }
            continue;
        }
        FN(face_row_terms)(terms, t, at.fast, zones, a0, a1, m->conductance[axis], zone_pair, m->scale[face],
                           m->shift[face], e->volume);
        /* A lane a brick: each brick's terms added in its order, the bricks' additions one vector a point of
         * theirs; the face's last brick, where shorter, after them. */
        const int whole = (a1 - a0) / brick[fast];
        for (int offset = 0; offset < brick[fast]; ++offset) {
#pragma omp simd
            for (int i = 0; i < whole; ++i) piece[i] += terms[i * brick[fast] + offset];
        }
        for (int a = a0 + whole * brick[fast]; a < a1; ++a) piece[whole] += terms[a - a0];
    }
    for (int i = i0; i < i1; ++i) e->bricks[index[i - i0]] = piece[i - i0];
}

static void FN(material_boundary_bricks_share)(const FN(boundary_energy) *e, const int n[3],
                                               const FN(material_tables) *m)
{
    const int *own = e->own;
    const long sums = (long)own[0] * own[1] * own[2] * HEAT_ENERGY_KINDS;
#pragma omp for schedule(static) nowait
    for (long sum = 0; sum < sums; ++sum) e->bricks[sum] = 0.0;
    unsigned kinds_added = 0;
    for (int face = 0; face < FACE_COUNT; ++face) {
        if (e->kind[face] < 0 || (m->exchanged & 1u << face)) continue;
        /* The bricks zeroed, or those along an edge with an earlier face of this kind added first: every brick's
         * sum of a kind adds its faces in their order. */
        if (!kinds_added || kinds_added & 1u << e->kind[face]) {
#pragma omp barrier
        }
        kinds_added |= 1u << e->kind[face];
        const int axis = face / 2, fast = axis == 0 ? 1 : 0, slow = axis == 2 ? 1 : 2;
        int together = FACE_TERMS / e->brick[fast]; /* bricks a pass: their row's terms fit */
        if (together > FACE_BRICKS_TOGETHER) together = FACE_BRICKS_TOGETHER;
        if (together < 1) together = 1;
        const int groups = (own[fast] + together - 1) / together;
#pragma omp for schedule(dynamic, 1) nowait
        for (long item = 0; item < (long)own[slow] * groups; ++item) {
            const int i0 = (int)(item % groups) * together;
            const int i1 = i0 + together < own[fast] ? i0 + together : own[fast];
            FN(face_bricks_add)(e, n, m, face, i0, i1, (int)(item / groups));
        }
    }
}

static void FN(material_boundary_bricks)(const FN(boundary_energy) *e, const int n[3], const FN(material_tables) *m)
{
#pragma omp parallel
    FN(material_boundary_bricks_share)(e, n, m);
}

/* ---- Two general steps in one sweep (stencil_sweep2_planes's scheme, cpu_kernels.h) ----
 *
 * The intermediate field v lives in each thread's ring of three planes for
 * its block of rows; memory sees the field read and written once for two
 * steps. Every value of v and of the output comes from the row functions of
 * the single step with the same inputs, v's ghosts from the same rule
 * (ghost_by_rule), so a pair gives the bits of two single steps. Runs whose
 * faces all have rules only (no exchanged face): the ring's z ghost planes
 * are then always v's boundary ghosts, never a neighbour's planes. The
 * energy balance of the second step needs v's owned values next to the
 * boundary faces: the sweep copies them out (`captured`) as it computes them. */

/* What a pair needs beyond one step: each step's tables (their sources differ
 * where a source switches), and face f's owned planes of u and v in
 * captured[0][f] and captured[1][f] ([slow * n[fast] + fast], the boundary
 * power's axes; NULL: not wanted): taken while the rows are in cache, since
 * a pass of their own over u would read two more lines a row from memory. */
typedef struct FN(material_pair) {
    const FN(material_tables) *first, *second;
    REAL *captured[2][FACE_COUNT];        /* u's and v's owned planes beside the faces, as the sweep reads them */
    const FN(boundary_energy) *energy[2]; /* each step's boundary power from them, after the sweep; NULL: none */
} FN(material_pair);

/* v's y-face ghost row beyond row `at` (y, z) of a ring plane (rows sy apart), where y is a face's row. */
static MATERIAL_FACE_ROWS void FN(material_y_ghost_rows)(REAL *row, const unsigned char *zone,
                                                       const material_runs *runs, long at, int y, const int n[3],
                                                       long sy, const FN(material_tables) *m)
{
    for (int face = FACE_Y_LOW; face <= FACE_Y_HIGH; ++face) {
        if (y != (face == FACE_Y_LOW ? 0 : n[1] - 1)) continue;
        FN(material_ghost_row)(row + (face == FACE_Y_LOW ? -sy : sy), row, zone, n[0], m->scale[face], m->shift[face],
                               runs->whole[at] ? runs->end_zone[0][at] : -1);
    }
}

static inline void FN(material_y_ghosts)(REAL *row, const unsigned char *zone, const material_runs *runs, long at,
                                         int y, const int n[3], long sy, const FN(material_tables) *m)
{
    if (y == 0 || y == n[1] - 1) FN(material_y_ghost_rows)(row, zone, runs, at, y, n, sy, m);
}

/* v's owned values of row (y, z) on the y and z boundary faces (the rows next to them), into the pair's
 * captured planes. */
static MATERIAL_FACE_ROWS void FN(material_capture_face_rows)(REAL *const captured[FACE_COUNT], const REAL *row, int y,
                                                             int z, const int n[3])
{
    const size_t bytes = sizeof(REAL) * (size_t)n[0];
    if (y == 0 && captured[FACE_Y_LOW]) memcpy(captured[FACE_Y_LOW] + (long)z * n[0], row, bytes);
    if (y == n[1] - 1 && captured[FACE_Y_HIGH]) memcpy(captured[FACE_Y_HIGH] + (long)z * n[0], row, bytes);
    if (z == 0 && captured[FACE_Z_LOW]) memcpy(captured[FACE_Z_LOW] + (long)y * n[0], row, bytes);
    if (z == n[2] - 1 && captured[FACE_Z_HIGH]) memcpy(captured[FACE_Z_HIGH] + (long)y * n[0], row, bytes);
}

/* The same for every row: an x face's two values inline (an x face has one in every row, where a call
 * costs more than the two stores), the rows next to a y or z face out of line. */
static inline void FN(material_capture)(REAL *const captured[FACE_COUNT], const REAL *row, int y, int z,
                                        const int n[3])
{
    const long yz = (long)z * n[1] + y;
    if (captured[FACE_X_LOW]) captured[FACE_X_LOW][yz] = row[0];
    if (captured[FACE_X_HIGH]) captured[FACE_X_HIGH][yz] = row[n[0] - 1];
    if (y == 0 || y == n[1] - 1 || z == 0 || z == n[2] - 1) FN(material_capture_face_rows)(captured, row, y, z, n);
}

/* u's ghosts on every row of plane z (what material_sweep_row sets row by row). */
static void FN(material_plane_ghosts)(REAL *u, const unsigned char *zone, const material_runs *runs, long first, int z,
                                      const int n[3], long sy, long sz, const FN(material_tables) *m)
{
    for (int y = 0; y < n[1]; ++y) {
        const long row = first + y * sy + z * sz, at = (long)z * n[1] + y;
        FN(material_x_ghosts)(u + row, runs, at, n[0], m);
        FN(material_yz_ghosts)(u + row, zone + row, runs, at, y, z, n, sy, sz, m);
    }
}

/* The end of the span of rows from row `at` (y) on, below y1, that are whole rows (material_runs.whole) of
 * row y's zone; y where row y is not whole. A span's rows share its zone's weights, set once for the span
 * (their broadcasts out of its loop) instead of once a row. */
static inline int FN(whole_span_end)(const material_runs *runs, long at, int y, int y1)
{
    if (!runs->whole[at]) return y;
    const unsigned char zone = runs->end_zone[0][at];
    int end = y + 1;
    while (end < y1 && runs->whole[at + end - y] && runs->end_zone[0][at + end - y] == zone) ++end;
    return end;
}

/* Row y of plane z of v = the first step of u (material_first_step_plane); span: the row's weights where it
 * is a whole row (whole_span_end), NULL: its runs'. */
static inline __attribute__((always_inline)) void FN(material_first_step_row)(
    FN(ring) *v, REAL *u, const unsigned char *zone, const material_runs *runs, long first, int z, int y, int y0,
    int y1, int owned, int set_u_ghosts, const int n[3], long sz, const FN(material_pair) *pair,
    const FN(uniform_zone) *span)
{
    const long sy = v->sy;
    const FN(material_tables) *m = pair->first;
    const long row = first + y * sy + z * sz, at = (long)z * n[1] + y;
    REAL *out = FN(ring_row)(v, y, z);
    if (set_u_ghosts) {
        FN(material_x_ghosts)(u + row, runs, at, n[0], m);
        FN(material_yz_ghosts)(u + row, zone + row, runs, at, y, z, n, sy, sz, m);
    }
    if (owned && y >= y0 && y < y1) FN(material_capture)(pair->captured[0], u + row, y, z, n);
    if (span) FN(material_row3_uniform_vec)(out, u + row - sz, u + row, u + row + sz, n[0], sy, *span, 0, 1);
    else FN(material_row3_at)(out, u + row - sz, u + row, u + row + sz, zone + row, n[0], sy, sz, m, runs, at, 0, 1,
                              NULL);
    FN(material_x_ghosts)(out, runs, at, n[0], pair->second);
    FN(material_y_ghosts)(out, zone + row, runs, at, y, n, sy, pair->second);
    if (owned && y >= y0 && y < y1) FN(material_capture)(pair->captured[1], out, y, z, n);
}

/* Rows [v->ya, yb) of plane z of v = the first step of u, with v's x and y
 * ghosts; set_u_ghosts: u's x ghosts of each row first (the planes no other
 * thread reads); owned: rows [y0, y1) of plane z are this block's own, whose
 * boundary values go to the captured planes. */
static void FN(material_first_step_plane)(FN(ring) *v, REAL *u, const unsigned char *zone, const material_runs *runs,
                                          long first, int z, int y0, int y1, int yb, int owned, int set_u_ghosts,
                                          const int n[3], long sz, const FN(material_pair) *pair)
{
    for (int y = v->ya; y < yb;) {
        const long at = (long)z * n[1] + y;
        const int end = FN(whole_span_end)(runs, at, y, yb);
        if (end == y) {
            FN(material_first_step_row)(v, u, zone, runs, first, z, y++, y0, y1, owned, set_u_ghosts, n, sz, pair,
                                        NULL);
            continue;
        }
        /* Each row broadcasts them: the weights in every lane kept across the span went to the stack (the face
         * rows' calls in the loop), a load each an operation. */
        const FN(uniform_zone) k = FN(uniform_of)(pair->first, runs->end_zone[0][at]);
        for (; y < end; ++y)
            FN(material_first_step_row)(v, u, zone, runs, first, z, y, y0, y1, owned, set_u_ghosts, n, sz, pair, &k);
    }
}

/* v's z ghost plane `ghost` beyond plane z (a z face), rows [v->ya, yb), by the owned points' zones. */
static void FN(material_ring_z_ghosts)(FN(ring) *v, const unsigned char *zone, const material_runs *runs, long first,
                                       int z, int ghost, int yb, const int n[3], long sz, const FN(material_tables) *m,
                                       int face)
{
    for (int y = v->ya; y < yb; ++y) {
        const long at = (long)z * n[1] + y;
        FN(material_ghost_row)(FN(ring_row)(v, y, ghost), FN(ring_row)(v, y, z), zone + first + y * v->sy + z * sz, n[0],
                               m->scale[face], m->shift[face], runs->whole[at] ? runs->end_zone[0][at] : -1);
    }
}

/* Rows [y0, y1) of plane z of out = the second step, from v's planes in the ring. */
static void FN(material_second_step_plane)(REAL *out, const FN(ring) *v, const unsigned char *zone,
                                           const material_runs *runs, long first, int z, int y0, int y1,
                                           const int n[3], long sz, const FN(material_pair) *pair, int stream,
                                           REAL *scratch)
{
    for (int y = y0; y < y1;) {
        const long at = (long)z * n[1] + y;
        const int end = FN(whole_span_end)(runs, at, y, y1);
        if (end == y) {
            const long row = first + y * v->sy + z * sz;
            FN(material_row3_at)(out + row, FN(ring_row)(v, y, z - 1), FN(ring_row)(v, y, z), FN(ring_row)(v, y, z + 1),
                                 zone + row, n[0], v->sy, sz, pair->second, runs, at, stream, 0, scratch);
            ++y;
            continue;
        }
        const FN(uniform_zone) k = FN(uniform_of)(pair->second, runs->end_zone[0][at]);
        const FN(uniform_lanes) w = FN(lanes_of)(k);
        for (; y < end; ++y) { /* each store its own loop (material_row3_at's reasons) */
            REAL *o = out + first + y * v->sy + z * sz;
            if (stream) FN(material_row3_lanes_vec)(o, FN(ring_row)(v, y, z - 1), FN(ring_row)(v, y, z),
                                                    FN(ring_row)(v, y, z + 1), n[0], v->sy, &k, &w, 1, 0);
            else FN(material_row3_lanes_vec)(o, FN(ring_row)(v, y, z - 1), FN(ring_row)(v, y, z),
                                             FN(ring_row)(v, y, z + 1), n[0], v->sy, &k, &w, 0, 0);
        }
    }
}

/* One block of rows [y0, y1) of a thread's slab [z0, z1) (sweep2_block's
 * order): up z, plane z of v and then plane z - 1 of out; v's planes one
 * beyond the slab, none beyond the grid (its ghost planes by the rules). */
static void FN(material_pair_block)(REAL *out, REAL *u, const unsigned char *zone, const material_runs *runs,
                                    FN(ring) *v, long first, int y0, int y1, int z0, int z1, const int n[3], long sz,
                                    const FN(material_pair) *pair, int stream, REAL *scratch)
{
    v->ya = y0 > 0 ? y0 - 1 : 0;
    const int yb = y1 < n[1] ? y1 + 1 : n[1];
    const int za = z0 > 0 ? z0 - 1 : 0, zb = z1 < n[2] ? z1 + 1 : n[2];
    for (int z = za; z < zb; ++z) {
        FN(material_first_step_plane)(v, u, zone, runs, first, z, y0, y1, yb, z >= z0 && z < z1,
                                      z > z0 && z < z1 - 1, n, sz, pair);
        if (z == 0) FN(material_ring_z_ghosts)(v, zone, runs, first, 0, -1, yb, n, sz, pair->second, FACE_Z_LOW);
        if (z - 1 >= z0 && z - 1 < z1)
            FN(material_second_step_plane)(out, v, zone, runs, first, z - 1, y0, y1, n, sz, pair, stream, scratch);
        if (z == n[2] - 1 && z < z1) { /* its ghost takes the slot of plane z - 2, just used above */
            FN(material_ring_z_ghosts)(v, zone, runs, first, z, n[2], yb, n, sz, pair->second, FACE_Z_HIGH);
            FN(material_second_step_plane)(out, v, zone, runs, first, z, y0, y1, n, sz, pair, stream, scratch);
        }
    }
}

/* out = two general steps of u (no face exchanged) on `threads` threads,
 * each a slab of planes; rings: ring_values(sy, block_rows) values a thread,
 * 64-byte aligned. One parallel region, whose barriers are all the pair's:
 * the slabs' end planes' ghosts before the sweep, both steps' boundary power
 * (energy[0] and [1], from the captured planes) after it. */
static void FN(material_sweep2)(REAL *restrict out, REAL *restrict u, const unsigned char *restrict zone,
                                const material_runs *runs, const int n[3], const heat_layout *l,
                                const FN(material_pair) *pair, int stream, int block_rows, REAL *rings, int threads,
                                REAL *scratch, int scratch_threads)
{
    const long sy = l->stride_y, sz = l->stride_z;
    const long first = l->origin + 1 + sy + sz;
#pragma omp parallel num_threads(threads)
    {
        int z0, z1, streams = stream;
        FN(thread_slab)(0, n[2], &z0, &z1);
        REAL *mine = FN(thread_scratch)(scratch, scratch_threads, omp_get_thread_num(), sy, &streams);
        /* u's ghosts go row by row as the first step sweeps (material_first_step_plane), except a slab's
         * first and last planes, which the next thread's first step reads too: their owner sets their
         * ghosts before anyone sweeps. */
        FN(material_plane_ghosts)(u, zone, runs, first, z0, n, sy, sz, pair->first);
        FN(material_plane_ghosts)(u, zone, runs, first, z1 - 1, n, sy, sz, pair->first);
#pragma omp barrier
        FN(ring) v = FN(thread_ring)(rings, sy, block_rows);
        for (int y0 = 0; y0 < n[1]; y0 += block_rows) {
            const int y1 = y0 + block_rows < n[1] ? y0 + block_rows : n[1];
            FN(material_pair_block)(out, u, zone, runs, &v, first, y0, y1, z0, z1, n, sz, pair, streams, mine);
        }
        if (streams) _mm_sfence();
        if (pair->energy[0]) {
#pragma omp barrier
            FN(material_boundary_bricks_share)(pair->energy[0], n, pair->first);
            FN(material_boundary_bricks_share)(pair->energy[1], n, pair->second);
        }
    }
}

/* The weight sets of material_runs (its vectors' sets where its lanes are this precision's; else none). */
static int FN(material_sets_from)(FN(material_tables) *m, const material_runs *runs)
{
    if (runs->lanes != FN(LANES) || !runs->vector_set) return HEAT_OK;
    const int sets = runs->stencils + runs->mixed_count;
    const size_t weight_bytes = sizeof(FN(vec)) * 6 * (size_t)sets, wq_bytes = sizeof(REAL) * FN(LANES) * (size_t)sets;
    m->set_weight = aligned_alloc(sizeof(FN(vec)), weight_bytes);
    m->set_wq = aligned_alloc(sizeof(FN(vec)), 2 * wq_bytes);
    m->set_zone = malloc((size_t)sets * FN(LANES));
    HEAT_CHECK(m->set_weight && m->set_wq && m->set_zone, "out of memory for the materials' tables");
    m->set_wq_other = m->set_wq + (size_t)sets * FN(LANES);
    for (int set = 0; set < sets; ++set)
        for (int lane = 0; lane < FN(LANES); ++lane) {
            int k = set; /* the lane's class */
            if (set >= runs->stencils) {
                const material_mixed *mixed = &runs->mixed[set - runs->stencils];
                for (int slot = 0; slot < mixed->classes; ++slot)
                    if (mixed->lanes[slot] >> lane & 1) k = mixed->stencil[slot];
            }
            const FN(uniform_zone) u = m->uniform[k];
            const REAL faces[6] = {u.cz0, u.cy0, u.cx0, u.cx1, u.cy1, u.cz1};
            for (int f = 0; f < 6; ++f) m->set_weight[6 * set + f][lane] = faces[f];
            m->set_zone[set * FN(LANES) + lane] = (unsigned char)u.zone;
        }
    m->sets = sets;
    return HEAT_OK;
}

/* The precision's copy of the tables (conductances allocated: free with material_tables_free). */
static int FN(material_tables_from)(FN(material_tables) *m, const heat_material_tables *t, double dt, double theta,
                                    unsigned exchanged, const material_runs *runs)
{
    const long pairs = (long)t->zones * t->zones;
    *m = (FN(material_tables)){.zones = t->zones, .exchanged = exchanged};
    for (int d = 0; d < 3; ++d) {
        m->conductance[d] = malloc(sizeof(REAL) * (size_t)pairs);
        m->weight[d] = malloc(sizeof(REAL) * (size_t)pairs);
        HEAT_CHECK(m->conductance[d] && m->weight[d], "out of memory for the materials' tables");
        for (long i = 0; i < pairs; ++i) {
            m->conductance[d][i] = (REAL)t->conductance[d][i];
            m->weight[d][i] = (REAL)(dt / t->heat_capacity[i / t->zones] * t->conductance[d][i]);
        }
    }
    for (int z = 0; z < t->zones; ++z) {
        m->step_weight[z] = dt / t->heat_capacity[z];
        m->inv_sqrt_heat_capacity[z] = (REAL)(1.0 / sqrt(t->heat_capacity[z]));
        m->operator_weight[z] = (REAL)(theta * dt / sqrt(t->heat_capacity[z]));
        m->rhs_weight[z] = (REAL)(dt / sqrt(t->heat_capacity[z]));
        for (int f = 0; f < FACE_COUNT; ++f)
            m->scale[f][z] = (REAL)t->ghost_scale[f][z], m->shift[f][z] = (REAL)t->ghost_shift[f][z];
    }
    m->stencils = runs->stencils;
    m->uniform = malloc(sizeof *m->uniform * (size_t)runs->stencils);
    HEAT_CHECK(m->uniform, "out of memory for the materials' tables");
    for (int k = 0; k < runs->stencils; ++k) { /* the weights the general row looks up for such a point */
        const unsigned long long zones = runs->stencil_zones[k];
        const long a = material_stencil_zone(zones, 0), row = a * t->zones;
        const REAL *wx = m->weight[0], *wy = m->weight[1], *wz = m->weight[2];
        m->uniform[k] = (FN(uniform_zone)){wz[row + material_stencil_zone(zones, 1)], wy[row + material_stencil_zone(zones, 2)],
                                           wx[row + material_stencil_zone(zones, 3)], wx[row + material_stencil_zone(zones, 4)],
                                           wy[row + material_stencil_zone(zones, 5)], wz[row + material_stencil_zone(zones, 6)],
                                           0, (int)a};
    }
    return FN(material_sets_from)(m, runs);
}

static void FN(material_tables_free)(FN(material_tables) *m)
{
    for (int d = 0; d < 3; ++d) free(m->conductance[d]), free(m->weight[d]), m->conductance[d] = m->weight[d] = NULL;
    free(m->uniform), m->uniform = NULL;
    free(m->set_weight), free(m->set_wq), free(m->set_zone);
    m->set_weight = NULL, m->set_wq = m->set_wq_other = NULL, m->set_zone = NULL, m->sets = 0;
}

/* The sources of the step starting at time t. */
static void FN(material_sources_at)(FN(material_tables) *m, const heat_materials *materials, double t)
{
    for (int z = 0; z < m->zones; ++z) {
        const double q = heat_zone_source(&materials->zone[z], t);
        m->source[z] = (REAL)q;
        m->weighted_source[z] = (REAL)(m->step_weight[z] * q);
    }
    for (long lane = 0; lane < (long)m->sets * FN(LANES); ++lane)
        m->set_wq[lane] = m->weighted_source[m->set_zone[lane]];

}

/* sum of rho c T V per reduction brick (heat[b]), rows in order, as field_stats sums T. */
static void FN(material_heat_bricks)(const REAL *u, const unsigned char *zone, const int n[3], const heat_layout *l,
                                     const double *heat_capacity, double volume, const int brick[3], const int own[3],
                                     double *heat)
{
    const long sy = l->stride_y, sz = l->stride_z, slabs = (long)own[1] * own[2];
    const long first = l->origin + 1 + sy + sz;
#pragma omp parallel for schedule(static)
    for (long slab = 0; slab < slabs; ++slab) {
        double *row_of_bricks = heat + slab * own[0];
        for (int bx = 0; bx < own[0]; ++bx) row_of_bricks[bx] = 0.0;
        const int y0 = (int)(slab % own[1]) * brick[1], z0 = (int)(slab / own[1]) * brick[2];
        const int y1 = y0 + brick[1] < n[1] ? y0 + brick[1] : n[1], z1 = z0 + brick[2] < n[2] ? z0 + brick[2] : n[2];
        for (int z = z0; z < z1; ++z)
            for (int y = y0; y < y1; ++y) {
                const REAL *row = u + first + y * sy + z * sz;
                const unsigned char *zr = zone + first + y * sy + z * sz;
                for (int bx = 0; bx < own[0]; ++bx) {
                    const int x0 = bx * brick[0], x1 = x0 + brick[0] < n[0] ? x0 + brick[0] : n[0];
                    double piece = 0.0;
                    for (int x = x0; x < x1; ++x) piece += heat_capacity[zr[x]] * (double)row[x] * volume;
                    row_of_bricks[bx] += piece;
                }
            }
    }
}

#undef FN
#undef CAT
#undef CAT_
