/*
 * The HIP backend's materials runs (solver/materials.h): explicit Euler's
 * general step (material_kernels.hip), the sources' clock and the energy
 * balance, as the CPU backend keeps them (kernels/cpu/backend_cpu.c), so
 * that both agree to rounding. A translation unit of its own
 * (backend_hip_internal.h), with the implicit schemes of
 * backend_hip_materials_cg.hip.
 */
#include "backend_hip_internal.h"
#include "zahead_kernels.hip" /* row_values, store_row */
#include "material_block_kernels.hip" /* and material_wide_kernels.hip, material_kernels.hip */

static_assert((int)MATERIAL_ENERGY_KINDS == (int)HEAT_ENERGY_KINDS, "material_boundary_bricks sums every energy kind");

/* The zones of the blocks of one tile shape (material_block_zones: a zone, or MATERIAL_MIXED) and
 * the mixed blocks' list, for the one-zone kernels (material_block_kernels.hip) and material_step_listed. */
struct material_block_map {
    int cols, rows, zchunk;
    unsigned char *map; /* device, one byte a block of the grid */
    int *mixed;         /* device: the indices of the mixed blocks */
    int mixed_count;
    int largest;        /* the zone of the most blocks */
    std::vector<int> blocks_of; /* blocks by zone */
    int *by_zone;       /* device: the one-zone blocks' indices, zone after zone */
    std::vector<int> zone_first; /* zone a's blocks: by_zone[zone_first[a] .. zone_first[a + 1]) */
};

enum { MATERIAL_BLOCK_MAPS = 16 };

struct hip_materials {
    heat_material_tables tables; /* host, double */
    material_table layout;       /* offsets in the device table */
    unsigned char *zone;         /* device: the zone index in the fields' layout (allocation base) */
    unsigned char *segments;     /* device: the zone map by row segments (material_segment_zones) */
    int segments_per_row;
    char *table;                 /* device: the tables in the run's precision */
    std::vector<char> host_table;
    int shared;                  /* the tables fit in shared memory */
    const struct material_variant *variant; /* the explicit step's kernel; NULL until chosen */
    double *heat_capacity;       /* device: rho c per zone */
    double *bricks;              /* device: per brick, 4 values (powers by kind, or the heat) */
    std::vector<double> host_bricks;
    int *boundary;               /* device: the bricks on a face that brings energy (boundary_list) */
    std::vector<int> boundary_list;
    unsigned char *face_zone;    /* device: their face points' zones in material_boundary_bricks' order */
    int *item_first;             /* device: where each item's zones start in face_zone */
    std::vector<double> boundary_powers;
    material_bricks geometry;
    double zone_volume[HEAT_ZONES_MAX];
    int kind_present[HEAT_ENERGY_KINDS];
    double energy_in[HEAT_ENERGY_KINDS];
    long step, clock_step;       /* the clock of the next step (backend.h, set_clock) */
    double clock_time;
    /* implicit schemes (backend_hip_materials_cg.hip) */
    char *cg_weights;            /* device: the scaled system's per-zone weights (MATERIAL_CG_*) */
    char *inverse;               /* device: 1 / diag(S) per point (Jacobi); NULL otherwise */
    double cg_fraction, power_begin[HEAT_ENERGY_KINDS]; /* the solve's start */
    /* explicit Euler on one process: energy_in lives on the device (material_energy_step), and a step
     * waits on no copy to the host; the boundary bricks and their sum run on a stream of their own
     * beside the step (both only read the field the step starts from) */
    int energy_on_device;
    double *energy;              /* device: energy_in */
    int *lane_first;             /* device: where each lane's items start in the boundary list */
    hipStream_t side;
    hipEvent_t ghosts_set, field_read; /* the step's start field is ready; the side stream read it */
    int side_started;
    int fork_at_start;           /* the step's mixed tiles start at ghosts_set (nothing queued since) */
    /* the explicit step by blocks of one zone (material_block_kernels.hip) and the mixed blocks beside them
     * (material_step_listed, on the stream `listed`, between the events fork and join) */
    material_block_map maps[MATERIAL_BLOCK_MAPS];
    int map_count;
    hipStream_t listed;
    hipEvent_t fork, join;
};

static double material_step_time(const hip_state *s)
{
    const hip_materials *m = s->mat;
    return m->clock_time + (double)(m->step - m->clock_step) * s->problem.dt;
}

template <typename T> static T *table_values(hip_materials *m) { return reinterpret_cast<T *>(m->host_table.data()); }

/* The tables in the run's precision, on the host (uploaded by setup_materials). */
template <typename T> static void fill_table(hip_state *s)
{
    hip_materials *m = s->mat;
    const heat_material_tables &t = m->tables;
    const material_table &l = m->layout;
    m->host_table.assign((size_t)l.length * sizeof(T), 0);
    T *v = table_values<T>(m);
    const long pairs = (long)t.zones * t.zones;
    for (int d = 0; d < 3; ++d)
        for (long i = 0; i < pairs; ++i) v[l.conductance[d] + i] = (T)t.conductance[d][i];
    for (int z = 0; z < t.zones; ++z) {
        v[l.weight + z] = (T)(s->problem.dt / t.heat_capacity[z]);
        for (int f = 0; f < FACE_COUNT; ++f)
            v[l.scale + (long)f * t.zones + z] = (T)t.ghost_scale[f][z], v[l.shift + (long)f * t.zones + z] = (T)t.ghost_shift[f][z];
    }
}

/* The sources of the step starting at time t into the device table (where they changed). */
template <typename T> static int set_sources(hip_state *s, double t)
{
    hip_materials *m = s->mat;
    T *v = table_values<T>(m) + m->layout.source;
    int changed = 0;
    for (int z = 0; z < m->tables.zones; ++z) {
        T q = (T)heat_zone_source(&s->problem.materials->zone[z], t);
        changed |= q != v[z];
        v[z] = q;
    }
    if (changed)
        HIP_CALL(hipMemcpy(s->mat->table + m->layout.source * (long)sizeof(T), v, sizeof(T) * (size_t)m->tables.zones,
                           hipMemcpyHostToDevice));
    return HEAT_OK;
}

template <typename T> static double source_power(const hip_state *s)
{
    const hip_materials *m = s->mat;
    const T *v = reinterpret_cast<const T *>(m->host_table.data()) + m->layout.source;
    double power = 0.0;
    for (int z = 0; z < m->tables.zones; ++z) power += (double)v[z] * m->zone_volume[z];
    return power;
}

template <typename T> static unsigned char *owned_zone(const hip_state *s)
{
    return s->mat->zone + heat_layout_first_owned(&s->layout);
}

/* The boundary faces' ghosts of a field or CG vector (its first owned point u) by the zones' rules. */
template <typename T> static int material_fill_at(hip_state *s, T *u, int homogeneous)
{
    const stencil_shape &p = s->shape;
    dim3 block(32, 8, 1);
    int along_a = std::max(p.nx, p.ny), along_b = std::max(p.ny, p.nz);
    dim3 grid((unsigned)((along_a + 31) / 32), (unsigned)((along_b + 7) / 8), 6);
    material_halo_fill<T><<<grid, block>>>(u, owned_zone<T>(s), p, (const T *)s->mat->table, s->mat->layout,
                                           s->problem.halo.exchanged, homogeneous);
    HIP_CHECK_LAUNCH("material_halo_fill");
    return HEAT_OK;
}

template <typename T> static int material_fill_typed(hip_state *s, int which)
{
    return material_fill_at<T>(s, owned<T>(s, which), 0);
}

static unsigned brick_blocks(const hip_state *s) { return (unsigned)((stats_brick_count(s) + 127) / 128); }

/* The power in through the boundary faces by kind, from field `which` (ghosts set); collective. */
/* The boundary bricks' powers by kind into m->bricks ([item][kind]), from field `which` (ghosts set). */
template <typename T> static int boundary_bricks(hip_state *s, int which, hipStream_t stream = 0)
{
    hip_materials *m = s->mat;
    const int count = (int)m->boundary_list.size();
    if (count == 0) return HEAT_OK;
    material_boundary_bricks<T><<<(unsigned)count, MATERIAL_BRICK_THREADS, 0, stream>>>(
        owned<T>(s, which), m->face_zone, m->item_first, s->shape, (const T *)m->table, m->layout, m->geometry,
        m->boundary, count, m->bricks);
    HIP_CHECK_LAUNCH("material_boundary_bricks");
    return HEAT_OK;
}

template <typename T> static int boundary_power(hip_state *s, int which, double power[HEAT_ENERGY_KINDS])
{
    hip_materials *m = s->mat;
    const int count = (int)m->boundary_list.size();
    if (count > 0) {
        HEAT_CALL(boundary_bricks<T>(s, which));
        HIP_CALL(hipMemcpy(m->boundary_powers.data(), m->bricks, m->boundary_powers.size() * sizeof(double),
                           hipMemcpyDeviceToHost));
    }
    /* the other bricks' powers stay 0, and adding 0 changes no sum: the CPU's bits */
    std::fill(m->host_bricks.begin(), m->host_bricks.end(), 0.0);
    for (int item = 0; item < count; ++item)
        for (int kind = 0; kind < HEAT_ENERGY_KINDS; ++kind)
            m->host_bricks[(size_t)m->boundary_list[(size_t)item] * HEAT_ENERGY_KINDS + kind] =
                m->boundary_powers[(size_t)item * HEAT_ENERGY_KINDS + kind];
    for (int kind = HEAT_ENERGY_DIRICHLET; kind < HEAT_ENERGY_KINDS; ++kind) {
        power[kind] = 0.0;
        if (m->kind_present[kind])
            HEAT_CALL(heat_reduction_sum_bricks(&s->reduction, m->host_bricks.data() + kind, HEAT_ENERGY_KINDS, &power[kind]));
    }
    return HEAT_OK;
}

/* Exchanged ghosts, the sources of the current time and the boundary ghosts of the current field, and the
 * power the step from it takes. */
template <typename T> static int prepare_step(hip_state *s, double power[HEAT_ENERGY_KINDS])
{
    HEAT_CALL(exchange_ghosts(s, s->current));
    HEAT_CALL(set_sources<T>(s, material_step_time(s)));
    HEAT_CALL(material_fill_typed<T>(s, s->current));
    HEAT_CALL(boundary_power<T>(s, s->current, power));
    power[HEAT_ENERGY_SOURCES] = source_power<T>(s);
    return HEAT_OK;
}

/* prepare_step with the energy kept on the device: the powers the step takes go into energy_in there,
 * on the side stream, while the step runs (side_energy_step, queued after the step: the host issues
 * the step first). */
template <typename T> static int prepare_step_on_device(hip_state *s)
{
    hip_materials *m = s->mat;
    HEAT_CALL(exchange_ghosts(s, s->current));
    HEAT_CALL(set_sources<T>(s, material_step_time(s)));
    if (s->halo_valid == HALO_NONE) HEAT_CALL(material_fill_typed<T>(s, s->current)); /* else the last step's */
    HIP_CALL(hipEventRecord(m->ghosts_set, 0));
    return HEAT_OK;
}

/* The side stream's part of prepare_step_on_device: from the field as it was when ghosts_set was
 * recorded, whatever the default stream has queued since. The next step writes the field the
 * boundary bricks read, so the default stream waits for them; the wait is queued here, while the
 * device runs this step, and not before the next step's launches, which it would delay. Only the
 * bricks: the energy kernel reads their sums, not the field, and the next step's bricks follow it on
 * the side stream. */
template <typename T> static int side_energy_step(hip_state *s)
{
    hip_materials *m = s->mat;
    HIP_CALL(hipStreamWaitEvent(m->side, m->ghosts_set, 0));
    HEAT_CALL(boundary_bricks<T>(s, s->current, m->side));
    HIP_CALL(hipEventRecord(m->field_read, m->side));
    material_energy_step<<<1, MATERIAL_ENERGY_KINDS * MATERIAL_LANES, 0, m->side>>>(
        m->bricks, m->lane_first, s->problem.dt, source_power<T>(s), m->energy);
    HIP_CHECK_LAUNCH("material_energy_step");
    HIP_CALL(hipStreamWaitEvent(0, m->field_read, 0));
    m->side_started = 1;
    return HEAT_OK;
}

/* Nothing of the side stream in flight (before the host reads or writes what it uses). */
static int side_wait(hip_materials *m)
{
    if (m->side_started) HIP_CALL(hipStreamSynchronize(m->side));
    return HEAT_OK;
}

/* The explicit step's kernels: material_step, or material_step_wide with `lanes` points a row a
 * thread; `rows` rows a thread, blocks of bx x by threads, zchunk planes a block; `occupancy` > 0
 * caps the registers so that that many blocks share a multiprocessor. All give the same bits (the
 * same arithmetic per point in the same order): the fastest on the run's problem is chosen by
 * timing (material_choose). */
struct material_variant {
    const char *name;
    int lanes, rows, bx, by, zchunk;
    int prefetch;  /* planes ahead hinted into L2; 0: none */
    int occupancy; /* blocks a multiprocessor the registers must allow; 0: the compiler's choice */
    int segments;  /* material_step_segments: by the zone map by row segments */
    int only;      /* bytes of a value of the one precision it is built for; 0: both */
    int blocks;    /* by the blocks' zones (material_step_listed for the mixed ones): 1: material_step_wide_zones;
                      MATERIAL_MADE: material_step_zone_made (lanes 1) or material_step_zone_wide (lanes 4, float),
                      a launch a zone, every boundary ghost made, none written */
    int mixed_lanes; /* points of a row a thread of the mixed tiles' march: 0 or 1, material_step_listed;
                        16 bytes / the value's, material_step_wide_listed */
    int mixed_rows;  /* rows a thread of material_step_wide_listed: 0, MATERIAL_ROWS; 1: one, registers capped */
};

enum { MATERIAL_LISTED_ONE_ROW_BLOCKS = 5 }; /* material_step_wide_listed's one row a thread: 48 registers */

enum { MATERIAL_MADE = 5 };

static const material_variant material_variants[] = {
    {"material_step", 1, MATERIAL_ROWS, MATERIAL_BLOCK_X, MATERIAL_BLOCK_Y, MATERIAL_Z_CHUNK, 0, 0, 0, 0},
    {"material_segments", 1, MATERIAL_ROWS, MATERIAL_BLOCK_X, MATERIAL_BLOCK_Y, MATERIAL_Z_CHUNK, 0, 0, 1, 0},
    {"material_segments_o6", 1, MATERIAL_ROWS, MATERIAL_BLOCK_X, MATERIAL_BLOCK_Y, MATERIAL_Z_CHUNK, 0, 6, 1, 4},
    {"material_segments_m1", 1, 1, MATERIAL_BLOCK_X, MATERIAL_BLOCK_Y, MATERIAL_Z_CHUNK, 0, 0, 1, 0},
    {"material_segments_m1_128x2", 1, 1, 128, 2, MATERIAL_Z_CHUNK, 0, 0, 1, 0},
    {"material_wide2x1_64x4z32p3o4", 2, 1, 64, 4, 32, 3, 4, 0, 0},
    {"material_wide4x2_32x8z32", 4, 2, 32, 8, 32, 0, 0, 0, 0},
    {"material_wide4x2_64x4z32", 4, 2, 64, 4, 32, 0, 0, 0, 0},
    {"material_wide2x1_64x4z32p3o4s", 2, 1, 64, 4, 32, 3, 4, 1, 0},
    {"material_wide2x1_64x4z32o4s", 2, 1, 64, 4, 32, 0, 4, 1, 0},
    {"material_wide4x2_64x4z32o3s", 4, 2, 64, 4, 32, 0, 3, 1, 0},
    {"material_wide4x2_32x8z32o3s", 4, 2, 32, 8, 32, 0, 3, 1, 0},
    {"material_wide4x1_64x4z32o4s", 4, 1, 64, 4, 32, 0, 4, 1, 0},
    {"material_zones_w4x2_32x8z32o4", 4, 2, 32, 8, 32, 0, 4, 0, 0, 1},
    {"material_zoneg_64x4z8", 1, 2, 64, 4, 8, 0, 0, 0, 0, MATERIAL_MADE},
    {"material_zoneg_64x4z16", 1, 2, 64, 4, 16, 0, 0, 0, 0, MATERIAL_MADE},
    {"material_zoneg_64x4z32", 1, 2, 64, 4, 32, 0, 0, 0, 0, MATERIAL_MADE},
    {"material_zoneg_128x2z16", 1, 2, 128, 2, 16, 0, 0, 0, 0, MATERIAL_MADE},
    {"material_zoneg_128x2z32", 1, 2, 128, 2, 32, 0, 0, 0, 0, MATERIAL_MADE},
    /* material_step_zone_wide: four floats a thread, one row under the 8-block cap or two */
    {"material_zonegw4_16x16z16", 4, 1, 16, 16, 16, 0, 8, 0, 4, MATERIAL_MADE},
    {"material_zonegw4_32x8z8", 4, 1, 32, 8, 8, 0, 8, 0, 4, MATERIAL_MADE},
    {"material_zonegw4_32x8z16", 4, 1, 32, 8, 16, 0, 8, 0, 4, MATERIAL_MADE},
    {"material_zonegw4_32x4z8", 4, 2, 32, 4, 8, 0, 0, 0, 4, MATERIAL_MADE},
    /* the same, the mixed tiles marched four floats a thread too (material_step_wide_listed) */
    {"material_zonegw4_32x8z8m4", 4, 1, 32, 8, 8, 0, 8, 0, 4, MATERIAL_MADE, 4},
    {"material_zonegw4_32x8z16m4", 4, 1, 32, 8, 16, 0, 8, 0, 4, MATERIAL_MADE, 4},
    {"material_zonegw4_16x16z8m4", 4, 1, 16, 16, 8, 0, 8, 0, 4, MATERIAL_MADE, 4},
    /* ... and one row a thread in the mixed tiles */
    {"material_zonegw4_32x8z8m4r1", 4, 1, 32, 8, 8, 0, 8, 0, 4, MATERIAL_MADE, 4, 1},
    {"material_zonegw4_32x8z16m4r1", 4, 1, 32, 8, 16, 0, 8, 0, 4, MATERIAL_MADE, 4, 1},
    {"material_zonegw4_16x16z8m4r1", 4, 1, 16, 16, 8, 0, 8, 0, 4, MATERIAL_MADE, 4, 1},
};
enum { MATERIAL_VARIANTS = sizeof material_variants / sizeof material_variants[0] };

/* Whether v runs in the run's precision: built for it, and one point a thread or a thread's points of a row one
 * 16-byte load, in the one-zone tiles and in the mixed ones. */
static bool material_variant_fits(const material_variant *v, size_t elem)
{
    return (v->only == 0 || (size_t)v->only == elem) && (v->lanes == 1 || v->lanes * elem == 16) &&
           (v->mixed_lanes <= 1 || v->mixed_lanes * elem == 16);
}

/* The launch geometry of kernel v on the block s: grid, block and the tables' shared bytes. */
struct material_launch {
    dim3 grid, block;
    size_t shared;
};

template <typename T, int V, int M, int PREFETCH, int OCCUPANCY>
static void launch_material_wide(const hip_state *s, const material_launch &l, int zchunk)
{
    const hip_materials *m = s->mat;
    T *out = owned<T>(s, 1 - s->current);
    const T *in = owned<T>(s, s->current);
    const T *table = (const T *)m->table;
    const unsigned exchanged = s->problem.halo.exchanged;
    if (m->shared)
        material_step_wide<T, V, M, true, PREFETCH, OCCUPANCY><<<l.grid, l.block, l.shared>>>(
            out, in, owned_zone<T>(s), s->shape, table, m->layout, exchanged, zchunk);
    else
        material_step_wide<T, V, M, false, PREFETCH, OCCUPANCY><<<l.grid, l.block>>>(
            out, in, owned_zone<T>(s), s->shape, table, m->layout, exchanged, zchunk);
}

template <typename T, int M, int PREFETCH, int OCCUPANCY>
static void launch_material_scalar(const hip_state *s, const material_launch &l)
{
    const hip_materials *m = s->mat;
    T *out = owned<T>(s, 1 - s->current);
    const T *in = owned<T>(s, s->current);
    const T *table = (const T *)m->table;
    const unsigned exchanged = s->problem.halo.exchanged;
    if (m->shared)
        material_step<T, true, PREFETCH, M, OCCUPANCY><<<l.grid, l.block, l.shared>>>(out, in, owned_zone<T>(s), s->shape,
                                                                                    table, m->layout, exchanged);
    else
        material_step<T, false, PREFETCH, M, OCCUPANCY><<<l.grid, l.block>>>(out, in, owned_zone<T>(s), s->shape, table,
                                                                           m->layout, exchanged);
}

/* Whether v is material_step's instantiation <M, PREFETCH, OCCUPANCY>, launched if so. */
template <typename T, int M, int PREFETCH, int OCCUPANCY>
static bool launch_scalar_if(const hip_state *s, const material_variant *v, const material_launch &l)
{
    if (v->lanes != 1 || v->segments || v->blocks || v->rows != M || v->prefetch != PREFETCH ||
        v->occupancy != OCCUPANCY)
        return false;
    launch_material_scalar<T, M, PREFETCH, OCCUPANCY>(s, l);
    return true;
}

/* Whether v is material_step_segments' instantiation <M, PREFETCH, OCCUPANCY>, launched if so. */
template <typename T, int M, int PREFETCH, int OCCUPANCY>
static bool launch_segments_if(const hip_state *s, const material_variant *v, const material_launch &l)
{
    if (!v->segments || v->lanes != 1 || v->rows != M || v->prefetch != PREFETCH || v->occupancy != OCCUPANCY)
        return false;
    const hip_materials *m = s->mat;
    T *out = owned<T>(s, 1 - s->current);
    const T *in = owned<T>(s, s->current);
    const T *table = (const T *)m->table;
    const unsigned exchanged = s->problem.halo.exchanged;
    if (m->shared)
        material_step_segments<T, true, PREFETCH, M, OCCUPANCY><<<l.grid, l.block, l.shared>>>(
            out, in, owned_zone<T>(s), m->segments, m->segments_per_row, s->shape, table, m->layout, exchanged);
    else
        material_step_segments<T, false, PREFETCH, M, OCCUPANCY><<<l.grid, l.block>>>(
            out, in, owned_zone<T>(s), m->segments, m->segments_per_row, s->shape, table, m->layout, exchanged);
    return true;
}

/* Whether v is material_step_wide's instantiation <16 bytes / sizeof(T), M, PREFETCH, OCCUPANCY>, launched if so. */
template <typename T, int M, int PREFETCH, int OCCUPANCY>
static bool launch_wide_if(const hip_state *s, const material_variant *v, const material_launch &l)
{
    constexpr int V = 16 / sizeof(T);
    if (v->lanes != V || v->rows != M || v->prefetch != PREFETCH || v->occupancy != OCCUPANCY || v->segments) return false;
    launch_material_wide<T, V, M, PREFETCH, OCCUPANCY>(s, l, v->zchunk);
    return true;
}

/* Whether v is material_step_wide_segments' instantiation <16 bytes / sizeof(T), M, PREFETCH, OCCUPANCY>,
 * launched if so. */
template <typename T, int M, int PREFETCH, int OCCUPANCY>
static bool launch_wide_segments_if(const hip_state *s, const material_variant *v, const material_launch &l)
{
    constexpr int V = 16 / sizeof(T);
    if (!v->segments || v->lanes != V || v->rows != M || v->prefetch != PREFETCH || v->occupancy != OCCUPANCY)
        return false;
    const hip_materials *m = s->mat;
    T *out = owned<T>(s, 1 - s->current);
    const T *in = owned<T>(s, s->current);
    const T *table = (const T *)m->table;
    const unsigned exchanged = s->problem.halo.exchanged;
    if (m->shared)
        material_step_wide_segments<T, V, M, true, PREFETCH, OCCUPANCY><<<l.grid, l.block, l.shared>>>(
            out, in, owned_zone<T>(s), m->segments, m->segments_per_row, s->shape, table, m->layout, exchanged,
            v->zchunk);
    else
        material_step_wide_segments<T, V, M, false, PREFETCH, OCCUPANCY><<<l.grid, l.block>>>(
            out, in, owned_zone<T>(s), m->segments, m->segments_per_row, s->shape, table, m->layout, exchanged,
            v->zchunk);
    return true;
}

/* The instantiations material_variants names (the tests launch every one of them). */
template <typename T> static bool launch_material_instance(const hip_state *s, const material_variant *v,
                                                           const material_launch &l)
{
    bool launched = launch_scalar_if<T, MATERIAL_ROWS, 0, 0>(s, v, l) || launch_segments_if<T, MATERIAL_ROWS, 0, 0>(s, v, l) ||
                    launch_segments_if<T, 1, 0, 0>(s, v, l);
    if constexpr (sizeof(T) == 8)
        launched = launched || launch_wide_if<T, 1, 3, 4>(s, v, l) || launch_wide_segments_if<T, 1, 3, 4>(s, v, l) ||
                   launch_wide_segments_if<T, 1, 0, 4>(s, v, l);
    else
        launched = launched || launch_segments_if<T, MATERIAL_ROWS, 0, 6>(s, v, l) || launch_wide_if<T, 2, 0, 0>(s, v, l) ||
                   launch_wide_segments_if<T, 2, 0, 3>(s, v, l) || launch_wide_segments_if<T, 1, 0, 4>(s, v, l);
    return launched;
}

/* The one-zone blocks of map b listed zone after zone (material_step_zone_made over a list), from
 * the map's bytes on the host. */
static int list_blocks_by_zone(material_block_map &b, const std::vector<unsigned char> &zones)
{
    std::vector<int> next(HEAT_ZONES_MAX, 0), list;
    for (int a = 0; a < HEAT_ZONES_MAX; ++a) b.zone_first[a + 1] = b.zone_first[a] + b.blocks_of[a];
    list.resize((size_t)b.zone_first[HEAT_ZONES_MAX]);
    for (size_t n = 0; n < zones.size(); ++n)
        if (zones[n] != MATERIAL_MIXED) list[(size_t)(b.zone_first[zones[n]] + next[zones[n]]++)] = (int)n;
    if (list.empty()) return HEAT_OK;
    HIP_CALL(hipMalloc((void **)&b.by_zone, list.size() * sizeof(int)));
    HIP_CALL(hipMemcpy(b.by_zone, list.data(), list.size() * sizeof(int), hipMemcpyHostToDevice));
    return HEAT_OK;
}

/* The map of the blocks' zones for v's tiles on the launch grid, built at its first use (the zones
 * never change in a run), and the stream of the mixed blocks with its events at the first map. */
static int material_block_map_for(hip_state *s, const material_variant *v, dim3 grid, const material_block_map **found)
{
    hip_materials *m = s->mat;
    const int cols = v->bx * v->lanes, rows = v->by * v->rows;
    for (int n = 0; n < m->map_count; ++n) {
        const material_block_map &b = m->maps[n];
        if (b.cols == cols && b.rows == rows && b.zchunk == v->zchunk) return *found = &b, HEAT_OK;
    }
    HEAT_CHECK(m->map_count < MATERIAL_BLOCK_MAPS, "more than %d tile shapes of materials kernels", MATERIAL_BLOCK_MAPS);
    if (!m->listed) {
        int least = 0, greatest = 0; /* the highest priority: the few mixed blocks start first */
        HIP_CALL(hipDeviceGetStreamPriorityRange(&least, &greatest));
        HIP_CALL(hipStreamCreateWithPriority(&m->listed, hipStreamNonBlocking, greatest));
        HIP_CALL(hipEventCreateWithFlags(&m->fork, hipEventDisableTiming));
        HIP_CALL(hipEventCreateWithFlags(&m->join, hipEventDisableTiming));
    }
    material_block_map &b = m->maps[m->map_count++];
    b = material_block_map{cols, rows, v->zchunk, NULL, NULL, 0, 0, std::vector<int>(HEAT_ZONES_MAX, 0), NULL,
                           std::vector<int>(HEAT_ZONES_MAX + 1, 0)};
    const size_t count = (size_t)grid.x * grid.y * grid.z;
    HIP_CALL(hipMalloc((void **)&b.map, count));
    material_block_zones<<<grid, 256>>>(b.map, owned_zone<double>(s), s->shape, cols, rows, v->zchunk);
    HIP_CHECK_LAUNCH("material_block_zones");
    std::vector<unsigned char> zones(count);
    HIP_CALL(hipMemcpy(zones.data(), b.map, count, hipMemcpyDeviceToHost));
    std::vector<int> mixed;
    for (size_t n = 0; n < count; ++n)
        if (zones[n] == MATERIAL_MIXED) mixed.push_back((int)n);
        else b.blocks_of[zones[n]] += 1;
    for (int a = 0; a < HEAT_ZONES_MAX; ++a)
        if (b.blocks_of[a] > b.blocks_of[b.largest]) b.largest = a;
    b.mixed_count = (int)mixed.size();
    if (!mixed.empty()) {
        HIP_CALL(hipMalloc((void **)&b.mixed, mixed.size() * sizeof(int)));
        HIP_CALL(hipMemcpy(b.mixed, mixed.data(), mixed.size() * sizeof(int), hipMemcpyHostToDevice));
    }
    HEAT_CALL(list_blocks_by_zone(b, zones));
    *found = &b;
    return HEAT_OK;
}

/* material_step_wide_listed, four floats a thread, over the mixed blocks of map b (launch_listed's grid). */
template <typename T> static int launch_wide_listed(hip_state *s, const material_variant *v, const material_launch &l,
                                                    const material_block_map *b, dim3 grid, dim3 block)
{
    if constexpr (sizeof(T) == 4) {
        hip_materials *m = s->mat;
        T *out = owned<T>(s, 1 - s->current);
        const T *in = owned<T>(s, s->current);
        const T *table = (const T *)m->table;
        const unsigned exchanged = s->problem.halo.exchanged;
        constexpr int ONE = MATERIAL_LISTED_ONE_ROW_BLOCKS;
        auto kernel = v->mixed_rows == 1 ? (m->shared ? material_step_wide_listed<T, 4, 1, true, ONE>
                                                      : material_step_wide_listed<T, 4, 1, false, ONE>)
                                         : (m->shared ? material_step_wide_listed<T, 4, MATERIAL_ROWS, true, 0>
                                                      : material_step_wide_listed<T, 4, MATERIAL_ROWS, false, 0>);
        kernel<<<grid, block, m->shared ? l.shared : 0, m->listed>>>(out, in, owned_zone<T>(s), s->shape, table, m->layout,
                                                                     exchanged, b->mixed, (int)l.grid.x, (int)l.grid.y,
                                                                     b->cols, b->rows, v->zchunk);
        HIP_CHECK_LAUNCH("material_step_wide_listed");
        return HEAT_OK;
    }
    return heat_internal_error("materials kernel %s has no instantiation in this precision", v->name);
}

/* The mixed blocks of map b on m->listed: blocks of up to 256 threads and two rows a thread, a block for each
 * sub-tile of a listed tile; material_step_listed, or (v->mixed_lanes V > 1) material_step_wide_listed with V
 * points of a row a thread (and one row where v->mixed_rows is 1). */
template <typename T> static int launch_listed(hip_state *s, const material_variant *v, const material_launch &l,
                                               const material_block_map *b)
{
    hip_materials *m = s->mat;
    const int lanes = std::max(v->mixed_lanes, 1), rows = lanes > 1 && v->mixed_rows == 1 ? 1 : MATERIAL_ROWS;
    const int across = b->cols / lanes;
    const int bx = std::min(across, 256), by = std::max(1, std::min(b->rows / rows, 256 / bx));
    HEAT_CHECK(b->cols % lanes == 0 && across % bx == 0 && b->rows % (rows * by) == 0,
               "materials kernel %s: tiles of %d x %d points are no whole number of %d x %d",
               v->name, b->cols, b->rows, lanes * bx, rows * by);
    const dim3 block((unsigned)bx, (unsigned)by, 1);
    const dim3 grid((unsigned)b->mixed_count, (unsigned)((across / bx) * (b->rows / (rows * by))), 1);
    if (lanes > 1) return launch_wide_listed<T>(s, v, l, b, grid, block);
    T *out = owned<T>(s, 1 - s->current);
    const T *in = owned<T>(s, s->current);
    const T *table = (const T *)m->table;
    const unsigned exchanged = s->problem.halo.exchanged;
    if (m->shared)
        material_step_listed<T, true, MATERIAL_ROWS><<<grid, block, l.shared, m->listed>>>(
            out, in, owned_zone<T>(s), s->shape, table, m->layout, exchanged, b->mixed, (int)l.grid.x, (int)l.grid.y,
            b->cols, b->rows, v->zchunk);
    else
        material_step_listed<T, false, MATERIAL_ROWS><<<grid, block, 0, m->listed>>>(
            out, in, owned_zone<T>(s), s->shape, table, m->layout, exchanged, b->mixed, (int)l.grid.x, (int)l.grid.y,
            b->cols, b->rows, v->zchunk);
    HIP_CHECK_LAUNCH("material_step_listed");
    return HEAT_OK;
}

/* A kernel of one-zone blocks (material_step_wide_zones) over v's grid in a march_order. */
template <typename T, typename K>
static int launch_zones_kernel(hip_state *s, K kernel, const material_variant *v, const material_launch &l,
                               const material_block_map *b)
{
    const hip_materials *m = s->mat;
    long slots = 0;
    HEAT_CALL(resident_slots((const void *)kernel, (int)(l.block.x * l.block.y), &slots));
    kernel<<<l.grid, l.block>>>(owned<T>(s, 1 - s->current), owned<T>(s, s->current), owned_zone<T>(s), b->map,
                                s->shape, (const T *)m->table, m->layout, s->problem.halo.exchanged, v->zchunk,
                                order_for(l.grid, slots));
    HIP_CHECK_LAUNCH(v->name);
    return HEAT_OK;
}

/* Zone a's coefficients and ghost rules in the run's precision (the tables' values, sources of the step). */
template <typename T> static material_zone_params<T> zone_params(const hip_materials *m, int a)
{
    const T *v = reinterpret_cast<const T *>(m->host_table.data());
    const material_table &l = m->layout;
    const long zones = l.zones, pair = (long)a * zones + a;
    material_zone_params<T> z;
    z.kx = v[l.conductance[0] + pair], z.ky = v[l.conductance[1] + pair], z.kz = v[l.conductance[2] + pair];
    z.weight = v[l.weight + a], z.source = v[l.source + a];
    for (int f = 0; f < FACE_COUNT; ++f) z.rule[f] = v[l.scale + f * zones + a], z.rule[6 + f] = v[l.shift + f * zones + a];
    z.zone = a;
    return z;
}

/* material_step_zone_made's instantiation K for the blocks of zone a, on `stream`: the grid in a
 * march_order, the map choosing the zone's blocks, or (LISTED) the zone's list of blocks. */
template <typename T, bool LISTED, typename K>
static int launch_made_kernel(hip_state *s, K kernel, const material_variant *v, const material_launch &l,
                              const material_block_map *b, int a, hipStream_t stream)
{
    const hip_materials *m = s->mat;
    const material_zone_tiles tiles = {b->map, b->by_zone ? b->by_zone + b->zone_first[a] : NULL, (int)l.grid.x,
                                       (int)l.grid.y};
    dim3 grid = l.grid;
    march_order o = {1, 1};
    if (LISTED) grid = dim3((unsigned)(b->zone_first[a + 1] - b->zone_first[a]), 1, 1);
    else {
        long slots = 0;
        HEAT_CALL(resident_slots((const void *)kernel, (int)(l.block.x * l.block.y), &slots));
        o = order_for(l.grid, slots);
    }
    kernel<<<grid, l.block, 0, stream>>>(owned<T>(s, 1 - s->current), owned<T>(s, s->current), owned_zone<T>(s), tiles,
                                         s->shape, zone_params<T>(m, a), m->layout, s->problem.halo.exchanged,
                                         v->zchunk, o);
    HIP_CHECK_LAUNCH(v->name);
    return HEAT_OK;
}

/* The instantiation of material_step_zone_wide that v names (four floats a thread, one row under the 8-block
 * cap or two rows), for the blocks of zone a as launch_zone_instance launches them. */
template <typename T> static int launch_zone_wide_instance(hip_state *s, const material_variant *v,
                                                           const material_launch &l, const material_block_map *b, int a,
                                                           hipStream_t stream)
{
    if constexpr (sizeof(T) == 4) {
        const bool listed = a != b->largest;
        if (v->rows == 1 && v->occupancy == 8)
            return listed
                       ? launch_made_kernel<T, true>(s, material_step_zone_wide<T, 4, 1, true, 8>, v, l, b, a, stream)
                       : launch_made_kernel<T, false>(s, material_step_zone_wide<T, 4, 1, false, 8>, v, l, b, a, stream);
        if (v->rows == 2 && v->occupancy == 0)
            return listed
                       ? launch_made_kernel<T, true>(s, material_step_zone_wide<T, 4, 2, true, 0>, v, l, b, a, stream)
                       : launch_made_kernel<T, false>(s, material_step_zone_wide<T, 4, 2, false, 0>, v, l, b, a, stream);
    }
    return heat_internal_error("materials kernel %s has no instantiation in this precision", v->name);
}

/* The instantiation of material_step_zone_made that v names, for the blocks of zone a: the largest
 * zone's over the grid, the others' over their lists. */
template <typename T> static int launch_zone_instance(hip_state *s, const material_variant *v, const material_launch &l,
                                                      const material_block_map *b, int a, hipStream_t stream)
{
    if (v->lanes == 4) return launch_zone_wide_instance<T>(s, v, l, b, a, stream);
    if (v->rows != MATERIAL_ROWS || v->lanes != 1 || v->occupancy != 0)
        return heat_internal_error("materials kernel %s has no instantiation", v->name);
    if (a != b->largest)
        return launch_made_kernel<T, true>(s, material_step_zone_made<T, MATERIAL_ROWS, true, 0>, v, l, b, a, stream);
    return launch_made_kernel<T, false>(s, material_step_zone_made<T, MATERIAL_ROWS, false, 0>, v, l, b, a, stream);
}

/* The instantiation of the one-zone blocks' kernel that v names. */
template <typename T> static int launch_zones_instance(hip_state *s, const material_variant *v, const material_launch &l,
                                                       const material_block_map *b)
{
    if constexpr (sizeof(T) == 4) {
        if (v->rows == 2 && v->occupancy == 4)
            return launch_zones_kernel<T>(s, material_step_wide_zones<T, 4, 2, true, 4>, v, l, b);
    }
    return heat_internal_error("materials kernel %s has no instantiation in this precision", v->name);
}

/* One explicit step by blocks of one zone (material_step_wide_zones, material_step_zone_made: on the
 * default stream, in a march_order) and the mixed blocks beside them (material_step_listed, on
 * m->listed, which the default stream waits for). */
template <typename T> static int launch_material_zones(hip_state *s, const material_variant *v, const material_launch &l)
{
    hip_materials *m = s->mat;
    const material_block_map *b;
    HEAT_CALL(material_block_map_for(s, v, l.grid, &b));
    const bool by_zone = v->blocks == MATERIAL_MADE; /* a launch a zone, the largest on the default stream */
    int others = 0;
    for (int a = 0; by_zone && a < m->tables.zones; ++a) others += a != b->largest && b->blocks_of[a] > 0;
    const bool beside = b->mixed_count > 0 || others > 0;
    if (beside) {
        /* ghosts_set, where recorded just before, marks the same point of the default stream: one call fewer
         * before the grid's launch */
        if (!m->fork_at_start) HIP_CALL(hipEventRecord(m->fork, 0));
        HIP_CALL(hipStreamWaitEvent(m->listed, m->fork_at_start ? m->ghosts_set : m->fork, 0));
        if (b->mixed_count > 0) HEAT_CALL(launch_listed<T>(s, v, l, b));
        for (int a = 0; by_zone && a < m->tables.zones; ++a)
            if (a != b->largest && b->blocks_of[a] > 0) HEAT_CALL(launch_zone_instance<T>(s, v, l, b, a, m->listed));
        HIP_CALL(hipEventRecord(m->join, m->listed));
    }
    if (by_zone) HEAT_CALL(launch_zone_instance<T>(s, v, l, b, b->largest, 0));
    else HEAT_CALL(launch_zones_instance<T>(s, v, l, b));
    if (beside) HIP_CALL(hipStreamWaitEvent(0, m->join, 0));
    return HEAT_OK;
}

/* One explicit step by kernel v from field[current] into the other field (its ghosts set). */
template <typename T> static int launch_material_variant(hip_state *s, const material_variant *v)
{
    const hip_materials *m = s->mat;
    const stencil_shape &p = s->shape;
    const int columns = v->bx * v->lanes, rows = v->by * v->rows;
    material_launch l;
    l.block = dim3((unsigned)v->bx, (unsigned)v->by, 1);
    l.grid = dim3((unsigned)((p.nx + columns - 1) / columns), (unsigned)((p.ny + rows - 1) / rows),
                  (unsigned)((p.nz + v->zchunk - 1) / v->zchunk));
    l.shared = m->shared ? (size_t)m->layout.length * sizeof(T) : 0;
    if (v->blocks) return launch_material_zones<T>(s, v, l);
    if (!launch_material_instance<T>(s, v, l))
        return heat_internal_error("materials kernel %s has no instantiation in this precision", v->name);
    HIP_CHECK_LAUNCH(v->name);
    return HEAT_OK;
}

/* Median device time of `reps` steps by kernel v (out of place: the solution is untouched). */
template <typename T> static int time_material_variant(hip_state *s, const material_variant *v, int reps, double *ms)
{
    std::vector<float> times((size_t)reps);
    HEAT_CALL(launch_material_variant<T>(s, v)); /* warm-up */
    for (int r = 0; r < reps; ++r) {
        HIP_CALL(hipEventRecord(s->start, 0));
        HEAT_CALL(launch_material_variant<T>(s, v));
        HIP_CALL(hipEventRecord(s->stop, 0));
        HIP_CALL(hipEventSynchronize(s->stop));
        HIP_CALL(hipEventElapsedTime(&times[(size_t)r], s->start, s->stop));
    }
    std::sort(times.begin(), times.end());
    *ms = times[(size_t)reps / 2];
    return HEAT_OK;
}

/* The tuning cache's line of the explicit step's kernel: the one-material key, and the zones. */
static void material_cache_key(const hip_state *s, char *buf, size_t len)
{
    cache_key(s, buf, len);
    size_t used = strlen(buf);
    snprintf(buf + used, len - used, "\tmaterials step, %d zones", s->mat->tables.zones);
}

/* The kernel called name that fits elem-byte values; NULL: none. */
static const material_variant *find_material_variant(const char *name, size_t elem)
{
    for (const material_variant &v : material_variants)
        if (material_variant_fits(&v, elem) && strcmp(name, v.name) == 0) return &v;
    return NULL;
}

enum { MATERIAL_TUNE_REPS = 5 };

/* The explicit step's kernel: the one the problem names (problem.kernel.name, a materials kernel:
 * the tests'), else the tuning cache's, else the fastest of those that fit the precision, timed on
 * the run's problem (field[current]'s ghosts set). */
template <typename T> static int material_choose(hip_state *s)
{
    hip_materials *m = s->mat;
    char key[320], value[128];
    material_cache_key(s, key, sizeof key);
    const char *how = "named";
    m->variant = find_material_variant(s->problem.kernel.name, sizeof(T));
    if (!m->variant && tuning_cache_lookup(key, value, sizeof value))
        m->variant = find_material_variant(value, sizeof(T)), how = "from the tuning cache";
    if (!m->variant) {
        double best = 1e300;
        for (const material_variant &v : material_variants) {
            double ms;
            if (!material_variant_fits(&v, sizeof(T))) continue;
            HEAT_CALL(time_material_variant<T>(s, &v, MATERIAL_TUNE_REPS, &ms));
            if (ms < best) best = ms, m->variant = &v;
        }
        tuning_cache_store(key, m->variant->name), how = "fastest measured";
    }
    snprintf(s->description, sizeof s->description, "%s, %d zones (tables in %s memory; %s)", m->variant->name,
             m->tables.zones, m->shared ? "shared" : "global", how);
    if (!s->problem.quiet) printf("GPU materials kernel: %s\n", s->description);
    return HEAT_OK;
}

/* The bench's list: the explicit step's kernels that fit the run's precision. */
int material_variant_list(const hip_state *s, const heat_variant **list, int *count)
{
    static heat_variant names[MATERIAL_VARIANTS];
    int n = 0;
    for (const material_variant &v : material_variants)
        if (material_variant_fits(&v, s->elem)) {
            names[n] = heat_variant{"", 1, 0, 1};
            snprintf(names[n].kernel, sizeof names[n].kernel, "%s", v.name);
            ++n;
        }
    *list = names, *count = n;
    return HEAT_OK;
}

/* The bench's time of kernel `name` alone (the step's other work apart), field[current]'s ghosts set. */
int time_material_named(hip_state *s, const char *name, int reps, double *ms)
{
    const material_variant *v = find_material_variant(name, s->elem);
    if (!v) return heat_internal_error("no materials kernel %s in %s", name, heat_precision_name(s->problem.precision));
    HEAT_CALL(side_wait(s->mat));
    if (s->problem.precision == HEAT_FLOAT) {
        if (s->halo_valid == HALO_NONE) HEAT_CALL(material_fill_typed<float>(s, s->current));
        return time_material_variant<float>(s, v, reps, ms);
    }
    if (s->halo_valid == HALO_NONE) HEAT_CALL(material_fill_typed<double>(s, s->current));
    return time_material_variant<double>(s, v, reps, ms);
}

template <typename T> static int material_step_typed(hip_state *s)
{
    hip_materials *m = s->mat;
    double power[HEAT_ENERGY_KINDS];
    const bool chosen = m->variant != NULL; /* else the choice's trials come between ghosts_set and the step */
    if (m->energy_on_device) HEAT_CALL(prepare_step_on_device<T>(s));
    else HEAT_CALL(prepare_step<T>(s, power));
    if (!chosen) HEAT_CALL(material_choose<T>(s));
    m->fork_at_start = m->energy_on_device && chosen;
    const int launched = launch_material_variant<T>(s, m->variant);
    m->fork_at_start = 0;
    HEAT_CALL(launched);
    if (m->energy_on_device) HEAT_CALL(side_energy_step<T>(s)); /* reads field[current]: before the swap */
    if (!m->energy_on_device)
        for (int kind = 0; kind < HEAT_ENERGY_KINDS; ++kind) m->energy_in[kind] += s->problem.dt * power[kind];
    s->current = 1 - s->current;
    /* the step wrote the y and z ghosts its kernel reads (material_step_zone_made's one-zone blocks
     * make theirs, and write none); x ghosts are formed where read */
    s->halo_valid = HALO_YZ;
    m->step += 1;
    return HEAT_OK;
}

/* One explicit step, queued. */
int material_step_queued(hip_state *s)
{
    return s->problem.precision == HEAT_FLOAT ? material_step_typed<float>(s) : material_step_typed<double>(s);
}

int material_steps(hip_state *s, long steps)
{
    for (long step = 0; step < steps; ++step) HEAT_CALL(material_step_queued(s));
    HIP_CALL(hipStreamSynchronize(0));
    return HEAT_OK;
}

template <typename T> static int energy_typed(hip_state *s, heat_energy *e)
{
    hip_materials *m = s->mat;
    HEAT_CALL(side_wait(m));
    HEAT_CALL(prepare_step<T>(s, e->power));
    material_heat_bricks<T><<<brick_blocks(s), 128>>>(owned<T>(s, s->current), owned_zone<T>(s), s->shape,
                                                     m->heat_capacity, m->geometry, m->bricks);
    HIP_CHECK_LAUNCH("material_heat_bricks");
    HIP_CALL(hipMemcpy(m->host_bricks.data(), m->bricks, stats_brick_count(s) * sizeof(double), hipMemcpyDeviceToHost));
    HEAT_CALL(heat_reduction_sum_bricks(&s->reduction, m->host_bricks.data(), 1, &e->heat));
    if (m->energy_on_device)
        HIP_CALL(hipMemcpy(m->energy_in, m->energy, sizeof m->energy_in, hipMemcpyDeviceToHost));
    memcpy(e->energy, m->energy_in, sizeof e->energy);
    return HEAT_OK;
}

int hip_energy(void *state, heat_energy *e)
{
    hip_state *s = static_cast<hip_state *>(state);
    HEAT_CHECK(s->mat, "the energy balance of a run without materials (internal error)");
    return s->problem.precision == HEAT_FLOAT ? energy_typed<float>(s, e) : energy_typed<double>(s, e);
}

int hip_set_energy(void *state, const double *energy_in)
{
    hip_state *s = static_cast<hip_state *>(state);
    if (!s->mat) return HEAT_OK;
    HEAT_CALL(side_wait(s->mat));
    memcpy(s->mat->energy_in, energy_in, sizeof s->mat->energy_in);
    if (s->mat->energy_on_device)
        HIP_CALL(hipMemcpy(s->mat->energy, s->mat->energy_in, sizeof s->mat->energy_in, hipMemcpyHostToDevice));
    return HEAT_OK;
}

int hip_set_clock(void *state, long step, long clock_step, double clock_time)
{
    hip_state *s = static_cast<hip_state *>(state);
    if (s->mat) s->mat->step = step, s->mat->clock_step = clock_step, s->mat->clock_time = clock_time;
    return HEAT_OK;
}

/* Every run: constant coefficients, and materials with explicit Euler and the implicit schemes. */
int hip_supports(const heat_problem *p)
{
    (void)p;
    return 1;
}

#include "backend_hip_materials_cg.hip"

/* Explicit Euler on one process: energy_in on the device, zero, the boundary list in lane order
 * (material_energy_step) and the side stream. Several processes sum their powers on the host,
 * across processes. */
static int setup_energy_on_device(hip_state *s)
{
    hip_materials *m = s->mat;
    m->energy_on_device = !s->reduction.sum_owned && s->problem.implicit.scheme == HEAT_EULER;
    if (!m->energy_on_device) return HEAT_OK;
    std::vector<int> by_lane, first;
    for (int lane = 0; lane < MATERIAL_LANES; ++lane) {
        first.push_back((int)by_lane.size());
        for (int brick : m->boundary_list)
            if (brick % MATERIAL_LANES == lane) by_lane.push_back(brick);
    }
    first.push_back((int)by_lane.size());
    m->boundary_list = by_lane; /* the host's sums scatter the items by brick: any order serves them */
    HIP_CALL(hipMalloc((void **)&m->energy, sizeof m->energy_in));
    HIP_CALL(hipMemset(m->energy, 0, sizeof m->energy_in));
    HIP_CALL(hipMalloc((void **)&m->lane_first, first.size() * sizeof(int)));
    HIP_CALL(hipMemcpy(m->lane_first, first.data(), first.size() * sizeof(int), hipMemcpyHostToDevice));
    /* the highest priority: the side work's few blocks start beside the step's first ones instead of
     * after its last, where the next step would wait for them */
    int least = 0, greatest = 0;
    HIP_CALL(hipDeviceGetStreamPriorityRange(&least, &greatest));
    HIP_CALL(hipStreamCreateWithPriority(&m->side, hipStreamNonBlocking, greatest));
    HIP_CALL(hipEventCreateWithFlags(&m->ghosts_set, hipEventDisableTiming));
    HIP_CALL(hipEventCreateWithFlags(&m->field_read, hipEventDisableTiming));
    return HEAT_OK;
}

/* The bricks that hold a point of a face bringing energy (face_kind >= 0), in brick order. */
static int list_boundary_bricks(hip_state *s)
{
    hip_materials *m = s->mat;
    const material_bricks &g = m->geometry;
    const int *n = s->problem.grid.n;
    for (int bz = 0; bz < g.own[2]; ++bz)
        for (int by = 0; by < g.own[1]; ++by)
            for (int bx = 0; bx < g.own[0]; ++bx) {
                const int at[3] = {bx, by, bz};
                int touches = 0;
                for (int f = 0; f < FACE_COUNT; ++f) {
                    int axis = f / 2, plane = f % 2 ? n[axis] - 1 : 0;
                    touches |= g.kind[f] >= 0 && plane / g.brick[axis] == at[axis];
                }
                if (touches) m->boundary_list.push_back((bz * g.own[1] + by) * g.own[0] + bx);
            }
    m->boundary_powers.assign(m->boundary_list.size() * HEAT_ENERGY_KINDS, 0.0);
    HEAT_CALL(setup_energy_on_device(s));
    if (m->boundary_list.empty()) return HEAT_OK;
    HIP_CALL(hipMalloc((void **)&m->boundary, m->boundary_list.size() * sizeof(int)));
    HIP_CALL(hipMemcpy(m->boundary, m->boundary_list.data(), m->boundary_list.size() * sizeof(int),
                       hipMemcpyHostToDevice));
    return HEAT_OK;
}

/* The zones of the boundary items' face points in material_boundary_bricks' order (item after item
 * of boundary_list, face by face, each face's points padded to material_face_padded), from the
 * host's zone index in the fields' layout. */
static int setup_face_zones(hip_state *s, const std::vector<unsigned char> &zone)
{
    hip_materials *m = s->mat;
    const material_bricks &g = m->geometry;
    const stencil_shape &p = s->shape;
    const int n[3] = {p.nx, p.ny, p.nz};
    const long stride[3] = {1, p.sy, p.sz}, owned = heat_layout_first_owned(&s->layout);
    std::vector<unsigned char> faces;
    std::vector<int> first;
    for (int b : m->boundary_list) {
        first.push_back((int)faces.size());
        const int at[3] = {b % g.own[0], b / g.own[0] % g.own[1], b / (g.own[0] * g.own[1])};
        for (int face = 0; face < FACE_COUNT; ++face) {
            const int axis = face / 2, fast = axis == 0 ? 1 : 0, slow = axis == 2 ? 1 : 2;
            const int plane = face % 2 ? n[axis] - 1 : 0;
            if (g.kind[face] < 0 || plane / g.brick[axis] != at[axis]) continue;
            const int b0 = at[slow] * g.brick[slow], rows = std::min(b0 + g.brick[slow], n[slow]) - b0;
            const int a0 = at[fast] * g.brick[fast], columns = std::min(a0 + g.brick[fast], n[fast]) - a0;
            const size_t start = faces.size();
            for (int point = 0; point < rows * columns; ++point)
                faces.push_back(zone[(size_t)(owned + plane * stride[axis] + (long)(b0 + point / columns) * stride[slow] +
                                              (long)(a0 + point % columns) * stride[fast])]);
            faces.resize(start + (size_t)material_face_padded(rows * columns), 0);
        }
    }
    if (first.empty()) return HEAT_OK;
    HIP_CALL(hipMalloc((void **)&m->face_zone, faces.size()));
    HIP_CALL(hipMemcpy(m->face_zone, faces.data(), faces.size(), hipMemcpyHostToDevice));
    HIP_CALL(hipMalloc((void **)&m->item_first, first.size() * sizeof(int)));
    HIP_CALL(hipMemcpy(m->item_first, first.data(), first.size() * sizeof(int), hipMemcpyHostToDevice));
    return HEAT_OK;
}

void free_materials(hip_state *s)
{
    hip_materials *m = s->mat;
    if (!m) return;
    (void)side_wait(m);
    (void)hipFree(m->zone), (void)hipFree(m->segments), (void)hipFree(m->table), (void)hipFree(m->heat_capacity), (void)hipFree(m->bricks);
    (void)hipFree(m->boundary), (void)hipFree(m->face_zone), (void)hipFree(m->item_first);
    free_material_cg(m);
    (void)hipFree(m->energy), (void)hipFree(m->lane_first);
    if (m->side) (void)hipStreamDestroy(m->side);
    if (m->ghosts_set) (void)hipEventDestroy(m->ghosts_set);
    if (m->field_read) (void)hipEventDestroy(m->field_read);
    if (m->listed) (void)hipStreamSynchronize(m->listed), (void)hipStreamDestroy(m->listed);
    if (m->fork) (void)hipEventDestroy(m->fork);
    if (m->join) (void)hipEventDestroy(m->join);
    for (int n = 0; n < m->map_count; ++n) (void)hipFree(m->maps[n].map), (void)hipFree(m->maps[n].mixed), (void)hipFree(m->maps[n].by_zone);
    heat_material_tables_free(&m->tables);
    delete m;
    s->mat = NULL;
}

/* The zone map by row segments of the explicit step's material_step_segments (m->zone uploaded). */
static int setup_segments(hip_state *s)
{
    hip_materials *m = s->mat;
    const stencil_shape &p = s->shape;
    /* a segment all of zone MATERIAL_MIXED (the 256th) reads as mixed: the general path, the same bits */
    m->segments_per_row = (p.nx + MATERIAL_SEGMENT - 1) / MATERIAL_SEGMENT;
    const long count = (long)m->segments_per_row * p.ny * p.nz;
    HIP_CALL(hipMalloc((void **)&m->segments, (size_t)count));
    material_segment_zones<<<(unsigned)((count + 255) / 256), 256>>>(m->segments, owned_zone<double>(s), p,
                                                                      m->segments_per_row);
    HIP_CHECK_LAUNCH("material_segment_zones");
    return HEAT_OK;
}

/* The zone index, the tables and the energy balance's buffers on the device. */
int setup_materials(hip_state *s)
{
    const heat_problem *p = &s->problem;
    HEAT_CALL(heat_zones_check(p));
    hip_materials *m = new (std::nothrow) hip_materials();
    HEAT_CHECK(m, "out of memory");
    s->mat = m;
    HEAT_CALL(heat_material_tables_make(p, &m->tables));
    m->layout = material_table_make(m->tables.zones);
    if (p->precision == HEAT_FLOAT) fill_table<float>(s);
    else fill_table<double>(s);
    m->shared = m->host_table.size() <= MATERIAL_SHARED_BYTES;
    std::vector<unsigned char> zone((size_t)s->layout.total, 0);
    heat_zones_in_layout(p, &s->layout, zone.data());
    HIP_CALL(hipMalloc((void **)&m->zone, zone.size()));
    HIP_CALL(hipMemcpy(m->zone, zone.data(), zone.size(), hipMemcpyHostToDevice));
    HEAT_CALL(setup_segments(s));
    HIP_CALL(hipMalloc((void **)&m->table, m->host_table.size()));
    HIP_CALL(hipMemcpy(m->table, m->host_table.data(), m->host_table.size(), hipMemcpyHostToDevice));
    HIP_CALL(hipMalloc((void **)&m->heat_capacity, sizeof(double) * (size_t)m->tables.zones));
    HIP_CALL(hipMemcpy(m->heat_capacity, m->tables.heat_capacity, sizeof(double) * (size_t)m->tables.zones,
                       hipMemcpyHostToDevice));
    m->host_bricks.assign(stats_brick_count(s) * HEAT_ENERGY_KINDS, 0.0);
    HIP_CALL(hipMalloc((void **)&m->bricks, m->host_bricks.size() * sizeof(double)));
    int face_kind[FACE_COUNT];
    heat_energy_faces(p, face_kind, m->kind_present);
    for (int d = 0; d < 3; ++d) m->geometry.brick[d] = s->reduction.brick[d], m->geometry.own[d] = s->reduction.own[d];
    for (int f = 0; f < FACE_COUNT; ++f) m->geometry.kind[f] = face_kind[f];
    m->geometry.volume = p->grid.h[0] * p->grid.h[1] * p->grid.h[2];
    HEAT_CALL(list_boundary_bricks(s));
    HEAT_CALL(setup_face_zones(s, zone));
    HEAT_CALL(heat_zone_volumes(p, &s->transport, m->zone_volume));
    if (p->implicit.scheme != HEAT_EULER) return setup_material_cg(s);
    snprintf(s->description, sizeof s->description, "material_step, %d zones (tables in %s memory)", m->tables.zones,
             m->shared ? "shared" : "global");
    return HEAT_OK;
}
