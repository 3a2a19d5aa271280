/*
 * The HIP backend's materials runs (solver/materials.h): explicit Euler's
 * general step (material_kernels.hip), the sources' clock and the energy
 * balance, as the CPU backend keeps them (kernels/cpu/backend_cpu.c), so
 * that both agree to rounding. Included by backend_hip.hip after hip_state.
 * The implicit schemes are backend_hip_materials_cg.hip's.
 */

static_assert((int)MATERIAL_ENERGY_KINDS == (int)HEAT_ENERGY_KINDS, "material_boundary_bricks sums every energy kind");

struct hip_materials {
    heat_material_tables tables; /* host, double */
    material_table layout;       /* offsets in the device table */
    unsigned char *zone;         /* device: the zone index in the fields' layout (allocation base) */
    char *table;                 /* device: the tables in the run's precision */
    std::vector<char> host_table;
    int shared;                  /* the tables fit in shared memory */
    double *heat_capacity;       /* device: rho c per zone */
    double *bricks;              /* device: per brick, 4 values (powers by kind, or the heat) */
    std::vector<double> host_bricks;
    int *boundary;               /* device: the bricks on a face that brings energy (boundary_list) */
    std::vector<int> boundary_list;
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
    hipEvent_t ghosts_set, energy_done; /* the step's start field is ready; the side stream read it */
    int side_started;
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
        owned<T>(s, which), owned_zone<T>(s), s->shape, (const T *)m->table, m->layout, m->geometry, m->boundary,
        count, m->bricks);
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
 * on the side stream, while the step runs. The step writes the field the previous step's side work
 * read: it waits for that first. */
template <typename T> static int prepare_step_on_device(hip_state *s)
{
    hip_materials *m = s->mat;
    HEAT_CALL(exchange_ghosts(s, s->current));
    HEAT_CALL(set_sources<T>(s, material_step_time(s)));
    if (s->halo_valid == HALO_NONE) HEAT_CALL(material_fill_typed<T>(s, s->current)); /* else the last step's */
    if (m->side_started) HIP_CALL(hipStreamWaitEvent(0, m->energy_done, 0));
    HIP_CALL(hipEventRecord(m->ghosts_set, 0));
    HIP_CALL(hipStreamWaitEvent(m->side, m->ghosts_set, 0));
    HEAT_CALL(boundary_bricks<T>(s, s->current, m->side));
    material_energy_step<<<1, MATERIAL_ENERGY_KINDS * MATERIAL_LANES, 0, m->side>>>(
        m->bricks, m->lane_first, s->problem.dt, source_power<T>(s), m->energy);
    HIP_CHECK_LAUNCH("material_energy_step");
    HIP_CALL(hipEventRecord(m->energy_done, m->side));
    m->side_started = 1;
    return HEAT_OK;
}

/* Nothing of the side stream in flight (before the host reads or writes what it uses). */
static int side_wait(hip_materials *m)
{
    if (m->side_started) HIP_CALL(hipStreamSynchronize(m->side));
    return HEAT_OK;
}

template <typename T> static int material_step_typed(hip_state *s)
{
    hip_materials *m = s->mat;
    double power[HEAT_ENERGY_KINDS];
    if (m->energy_on_device) HEAT_CALL(prepare_step_on_device<T>(s));
    else HEAT_CALL(prepare_step<T>(s, power));
    dim3 block(MATERIAL_BLOCK_X, MATERIAL_BLOCK_Y, 1);
    dim3 grid((unsigned)((s->shape.nx + MATERIAL_BLOCK_X - 1) / MATERIAL_BLOCK_X),
              (unsigned)((s->shape.ny + MATERIAL_BLOCK_Y * MATERIAL_ROWS - 1) / (MATERIAL_BLOCK_Y * MATERIAL_ROWS)),
              (unsigned)((s->shape.nz + MATERIAL_Z_CHUNK - 1) / MATERIAL_Z_CHUNK));
    size_t shared = m->shared ? (size_t)m->layout.length * sizeof(T) : 0;
    if (m->shared)
        material_step<T, true><<<grid, block, shared>>>(owned<T>(s, 1 - s->current), owned<T>(s, s->current),
                                                        owned_zone<T>(s), s->shape, (const T *)m->table, m->layout,
                                                        s->problem.halo.exchanged);
    else
        material_step<T, false><<<grid, block>>>(owned<T>(s, 1 - s->current), owned<T>(s, s->current),
                                                 owned_zone<T>(s), s->shape, (const T *)m->table, m->layout,
                                                 s->problem.halo.exchanged);
    HIP_CHECK_LAUNCH("material_step");
    if (!m->energy_on_device)
        for (int kind = 0; kind < HEAT_ENERGY_KINDS; ++kind) m->energy_in[kind] += s->problem.dt * power[kind];
    s->current = 1 - s->current;
    s->halo_valid = HALO_YZ; /* the step wrote the y and z ghosts; x ghosts are formed where read */
    m->step += 1;
    return HEAT_OK;
}

static int material_steps(hip_state *s, long steps)
{
    for (long step = 0; step < steps; ++step)
        HEAT_CALL(s->problem.precision == HEAT_FLOAT ? material_step_typed<float>(s) : material_step_typed<double>(s));
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

static int hip_energy(void *state, heat_energy *e)
{
    hip_state *s = static_cast<hip_state *>(state);
    HEAT_CHECK(s->mat, "the energy balance of a run without materials (internal error)");
    return s->problem.precision == HEAT_FLOAT ? energy_typed<float>(s, e) : energy_typed<double>(s, e);
}

static int hip_set_energy(void *state, const double *energy_in)
{
    hip_state *s = static_cast<hip_state *>(state);
    if (!s->mat) return HEAT_OK;
    HEAT_CALL(side_wait(s->mat));
    memcpy(s->mat->energy_in, energy_in, sizeof s->mat->energy_in);
    if (s->mat->energy_on_device)
        HIP_CALL(hipMemcpy(s->mat->energy, s->mat->energy_in, sizeof s->mat->energy_in, hipMemcpyHostToDevice));
    return HEAT_OK;
}

static int hip_set_clock(void *state, long step, long clock_step, double clock_time)
{
    hip_state *s = static_cast<hip_state *>(state);
    if (s->mat) s->mat->step = step, s->mat->clock_step = clock_step, s->mat->clock_time = clock_time;
    return HEAT_OK;
}

/* Every run: constant coefficients, and materials with explicit Euler and the implicit schemes. */
static int hip_supports(const heat_problem *p)
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
    HIP_CALL(hipStreamCreateWithFlags(&m->side, hipStreamNonBlocking));
    HIP_CALL(hipEventCreateWithFlags(&m->ghosts_set, hipEventDisableTiming));
    HIP_CALL(hipEventCreateWithFlags(&m->energy_done, hipEventDisableTiming));
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

static void free_materials(hip_state *s)
{
    hip_materials *m = s->mat;
    if (!m) return;
    (void)side_wait(m);
    (void)hipFree(m->zone), (void)hipFree(m->table), (void)hipFree(m->heat_capacity), (void)hipFree(m->bricks);
    (void)hipFree(m->boundary);
    free_material_cg(m);
    (void)hipFree(m->energy), (void)hipFree(m->lane_first);
    if (m->side) (void)hipStreamDestroy(m->side);
    if (m->ghosts_set) (void)hipEventDestroy(m->ghosts_set);
    if (m->energy_done) (void)hipEventDestroy(m->energy_done);
    heat_material_tables_free(&m->tables);
    delete m;
    s->mat = NULL;
}

/* The zone index, the tables and the energy balance's buffers on the device. */
static int setup_materials(hip_state *s)
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
    HEAT_CALL(heat_zone_volumes(p, &s->transport, m->zone_volume));
    if (p->implicit.scheme != HEAT_EULER) return setup_material_cg(s);
    snprintf(s->description, sizeof s->description, "material_step, %d zones (tables in %s memory)", m->tables.zones,
             m->shared ? "shared" : "global");
    return HEAT_OK;
}
