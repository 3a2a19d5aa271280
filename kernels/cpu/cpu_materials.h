/*
 * The CPU kernels of materials runs (solver/materials.h) for one precision.
 * Included twice by backend_cpu.c (for_each_precision.h) with REAL = double /
 * float and SUFFIX = _d / _f.
 *
 * A point reads its temperature, its six neighbours' and the zone bytes of
 * all seven; the face conductances come from a table per axis indexed by the
 * zone pair. The zone index lies in a byte field of the fields' layout
 * (same offsets), its ghosts those of problem->zones, except on the
 * boundary faces, where a ghost takes the zone of the owned point beside it.
 *
 * Operation order (shared with the HIP kernels, so that they agree to
 * rounding): the faces in ascending address order,
 *   flux = K(z-1) (T[z-1] - T) ; += y-1 ; += x-1 ; += x+1 ; += y+1 ; += z+1
 *   T_new = T + dt_over_heat_capacity * (flux + q)
 */
#ifndef MATERIAL_RUNS_DEFINED /* this file is included once per precision */
#define MATERIAL_RUNS_DEFINED
/* A row's runs of points: [begin, end) whose points and six neighbours are
 * all of zone `zone` (the uniform row, no gathers), or zone -1: several. */
typedef struct material_run {
    int begin, end, zone;
} material_run;

/* Every owned row's runs: row (y, z) = z n[1] + y has run[first[row] .. first[row + 1]). */
typedef struct material_runs {
    long *first;
    material_run *run;
} material_runs;
#endif

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#define FN(name) CAT(name, SUFFIX)

typedef struct FN(material_tables) {
    int zones;
    REAL *conductance[3];                  /* [a * zones + b]: K_ab / h_d^2 */
    REAL dt_over_heat_capacity[HEAT_ZONES_MAX];
    REAL source[HEAT_ZONES_MAX];           /* q of this step (heat_zone_source at its start time) */
    REAL scale[FACE_COUNT][HEAT_ZONES_MAX], shift[FACE_COUNT][HEAT_ZONES_MAX]; /* ghost = scale T + shift */
    unsigned exchanged;                    /* faces whose ghosts the exchange brings (no rule) */
    /* Implicit schemes, on y = sqrt(rho c) x (cpu_materials_cg.h): */
    REAL inv_sqrt_heat_capacity[HEAT_ZONES_MAX]; /* 1 / sqrt(rho c) */
    REAL operator_weight[HEAT_ZONES_MAX];        /* theta dt / sqrt(rho c) */
    REAL rhs_weight[HEAT_ZONES_MAX];             /* dt / sqrt(rho c) */
} FN(material_tables);

/* One row of the general step: out = T + dt / (rho c) (sum of the faces' K/h^2 (T_b - T) + q). */
static inline void FN(material_row)(REAL *restrict out, const REAL *restrict c, const unsigned char *restrict zone,
                                    long n, long sy, long sz, const FN(material_tables) *m)
{
    const REAL *kx = m->conductance[0], *ky = m->conductance[1], *kz = m->conductance[2];
    const long zones = m->zones;
#pragma omp simd
    for (long i = 0; i < n; ++i) {
        const long a = zone[i], row = a * zones;
        const REAL t = c[i];
        REAL flux = kz[row + zone[i - sz]] * (c[i - sz] - t);
        flux += ky[row + zone[i - sy]] * (c[i - sy] - t);
        flux += kx[row + zone[i - 1]] * (c[i - 1] - t);
        flux += kx[row + zone[i + 1]] * (c[i + 1] - t);
        flux += ky[row + zone[i + sy]] * (c[i + sy] - t);
        flux += kz[row + zone[i + sz]] * (c[i + sz] - t);
        out[i] = t + m->dt_over_heat_capacity[a] * (flux + m->source[a]);
    }
}

/* The same row where every point and neighbour is of zone a (row_zone): the
 * same expression with the table's values as constants, so the same bits,
 * vectorised without gathers. */
static inline void FN(material_row_uniform)(REAL *restrict out, const REAL *restrict c, long n, long sy, long sz,
                                            const FN(material_tables) *m, int a)
{
    const long pair = (long)a * m->zones + a;
    const REAL kx = m->conductance[0][pair], ky = m->conductance[1][pair], kz = m->conductance[2][pair];
    const REAL weight = m->dt_over_heat_capacity[a], q = m->source[a];
#pragma omp simd
    for (long i = 0; i < n; ++i) {
        const REAL t = c[i];
        REAL flux = kz * (c[i - sz] - t);
        flux += ky * (c[i - sy] - t);
        flux += kx * (c[i - 1] - t);
        flux += kx * (c[i + 1] - t);
        flux += ky * (c[i + sy] - t);
        flux += kz * (c[i + sz] - t);
        out[i] = t + weight * (flux + q);
    }
}

/* A row of the step by its runs (material_runs): the uniform row over a run
 * whose points and neighbours are all of one zone, the general row over the others. */
static inline void FN(material_row_at)(REAL *restrict out, const REAL *restrict c, const unsigned char *restrict zone,
                                       long n, long sy, long sz, const FN(material_tables) *m,
                                       const material_run *runs, int count)
{
    (void)n;
    for (int r = 0; r < count; ++r) {
        const long b = runs[r].begin, length = runs[r].end - runs[r].begin;
        if (runs[r].zone >= 0) FN(material_row_uniform)(out + b, c + b, length, sy, sz, m, runs[r].zone);
        else FN(material_row)(out + b, c + b, zone + b, length, sy, sz, m);
    }
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
            u[ghost] = scale[a] * u[owned] + (homogeneous ? (REAL)0 : shift[a]);
        }
}

/* The ghosts of the boundary faces from first_face on (not the exchanged
 * ones), in one parallel region: each face writes its own ghosts from owned
 * points. first_face FACE_Y_LOW: the sweep sets the x faces' row by row. */
static void FN(material_halo_fill)(REAL *u, const unsigned char *zone, const int n[3], const heat_layout *l,
                                   const FN(material_tables) *m, int homogeneous, int first_face)
{
#pragma omp parallel
    for (int f = first_face; f < FACE_COUNT; ++f)
        if (!(m->exchanged & 1u << f)) FN(material_face_fill)(u, zone, f, n, l, m, homogeneous);
}

/* The x faces' ghosts of one row by its ends' zones (the rule of material_face_fill), set by the
 * sweep just before the row while it is in cache: a pass of its own touched two lines a row. */
static inline void FN(material_x_ghosts)(REAL *row, const unsigned char *zone, long n, const FN(material_tables) *m)
{
    if (!(m->exchanged & 1u << FACE_X_LOW))
        row[-1] = m->scale[FACE_X_LOW][zone[0]] * row[0] + m->shift[FACE_X_LOW][zone[0]];
    if (!(m->exchanged & 1u << FACE_X_HIGH))
        row[n] = m->scale[FACE_X_HIGH][zone[n - 1]] * row[n - 1] + m->shift[FACE_X_HIGH][zone[n - 1]];
}

/* One general step of the owned block, u's y and z ghosts set (the x ghosts here): each thread a slab of
 * planes in blocks of `block_rows` rows marched up z (stencil_sweep_planes'
 * order, so that the three planes a row reads stay in L2), or rows where
 * the planes are few. */
static void FN(material_sweep)(REAL *restrict out, REAL *restrict u, const unsigned char *restrict zone,
                               const material_runs *runs, const int n[3], const heat_layout *l,
                               const FN(material_tables) *m, int block_rows)
{
    const long sy = l->stride_y, sz = l->stride_z;
    const long first = l->origin + 1 + sy + sz;
#pragma omp parallel
    {
        int threads = omp_get_num_threads(), t = omp_get_thread_num();
        if (n[2] >= 4 * threads) {
            int z0 = (int)((long)n[2] * t / threads), z1 = (int)((long)n[2] * (t + 1) / threads);
            for (int y0 = 0; y0 < n[1]; y0 += block_rows) {
                int y1 = y0 + block_rows < n[1] ? y0 + block_rows : n[1];
                for (int z = z0; z < z1; ++z)
                    for (int y = y0; y < y1; ++y) {
                        long row = first + y * sy + z * sz;
                        FN(material_x_ghosts)(u + row, zone + row, n[0], m);
                        const long at = (long)z * n[1] + y;
                        FN(material_row_at)(out + row, u + row, zone + row, n[0], sy, sz, m,
                                            runs->run + runs->first[at], (int)(runs->first[at + 1] - runs->first[at]));
                    }
            }
        } else {
#pragma omp for collapse(2) schedule(static)
            for (int z = 0; z < n[2]; ++z)
                for (int y = 0; y < n[1]; ++y) {
                    long row = first + y * sy + z * sz;
                    FN(material_x_ghosts)(u + row, zone + row, n[0], m);
                    const long at = (long)z * n[1] + y;
                    FN(material_row_at)(out + row, u + row, zone + row, n[0], sy, sz, m, runs->run + runs->first[at],
                                        (int)(runs->first[at + 1] - runs->first[at]));
                }
        }
    }
}

/* The precision's copy of the tables (conductances allocated: free with material_tables_free). */
static int FN(material_tables_from)(FN(material_tables) *m, const heat_material_tables *t, double dt, double theta,
                                    unsigned exchanged)
{
    const long pairs = (long)t->zones * t->zones;
    *m = (FN(material_tables)){.zones = t->zones, .exchanged = exchanged};
    for (int d = 0; d < 3; ++d) {
        m->conductance[d] = malloc(sizeof(REAL) * (size_t)pairs);
        HEAT_CHECK(m->conductance[d], "out of memory for the materials' tables");
        for (long i = 0; i < pairs; ++i) m->conductance[d][i] = (REAL)t->conductance[d][i];
    }
    for (int z = 0; z < t->zones; ++z) {
        m->dt_over_heat_capacity[z] = (REAL)(dt / t->heat_capacity[z]);
        m->inv_sqrt_heat_capacity[z] = (REAL)(1.0 / sqrt(t->heat_capacity[z]));
        m->operator_weight[z] = (REAL)(theta * dt / sqrt(t->heat_capacity[z]));
        m->rhs_weight[z] = (REAL)(dt / sqrt(t->heat_capacity[z]));
        for (int f = 0; f < FACE_COUNT; ++f)
            m->scale[f][z] = (REAL)t->ghost_scale[f][z], m->shift[f][z] = (REAL)t->ghost_shift[f][z];
    }
    return HEAT_OK;
}

static void FN(material_tables_free)(FN(material_tables) *m)
{
    for (int d = 0; d < 3; ++d) free(m->conductance[d]), m->conductance[d] = NULL;
}

/* The sources of the step starting at time t. */
static void FN(material_sources_at)(FN(material_tables) *m, const heat_materials *materials, double t)
{
    for (int z = 0; z < m->zones; ++z) m->source[z] = (REAL)heat_zone_source(&materials->zone[z], t);
}

/* The power into the block through its boundary faces, per reduction brick
 * and kind (bricks[b * HEAT_ENERGY_KINDS + kind], b = (bz * own[1] + by) *
 * own[0] + bx; u's ghosts set): each face point's k_a (g - T_a) / h_d times
 * its face's area, K and (g - T) as the step takes them. kind[f] < 0: face f
 * brings none (or is exchanged). A brick adds its points face by face, each
 * face's in row order: the same order on any decomposition. */
static void FN(material_boundary_bricks)(const REAL *u, const unsigned char *zone, const int n[3], const heat_layout *l,
                                         const FN(material_tables) *m, const int kind[FACE_COUNT],
                                         const double volume, const int brick[3], const int own[3], double *bricks)
{
    const long stride[3] = {1, l->stride_y, l->stride_z};
    memset(bricks, 0, sizeof(double) * (size_t)own[0] * own[1] * own[2] * HEAT_ENERGY_KINDS);
    for (int face = 0; face < FACE_COUNT; ++face) {
        if (kind[face] < 0 || (m->exchanged & 1u << face)) continue;
        const int axis = face / 2, fast = axis == 0 ? 1 : 0, slow = axis == 2 ? 1 : 2;
        const int plane = face % 2 ? n[axis] - 1 : 0;
        const REAL *k = m->conductance[axis];
        for (int b = 0; b < n[slow]; ++b)
            for (int a = 0; a < n[fast]; ++a) {
                int at[3];
                at[axis] = plane, at[fast] = a, at[slow] = b;
                long i = l->origin + 1 + stride[1] + stride[2] + at[0] + at[1] * stride[1] + at[2] * stride[2];
                const int a = zone[i];
                const long zone_pair = (long)a * (m->zones + 1);
                /* the ghost by its rule (material_face_fill's expression): the x faces' are set by the sweep later */
                const REAL ghost = m->scale[face][a] * u[i] + m->shift[face][a];
                double power = (double)(k[zone_pair] * (ghost - u[i])) * volume;
                long index = ((long)(at[2] / brick[2]) * own[1] + at[1] / brick[1]) * own[0] + at[0] / brick[0];
                bricks[index * HEAT_ENERGY_KINDS + kind[face]] += power;
            }
    }
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
