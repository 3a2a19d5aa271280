/*
 * Several heat steps a sweep on the GPU (fused_kernels.hip): which fused
 * kernels exist, when a run may take them, the choice by timing, and the
 * sweeps themselves. Included by backend_hip.hip after hip_state.
 *
 * advance(steps) takes whole groups of K steps as fused sweeps and the rest
 * as single steps of the production kernel: the time loop asks for exactly
 * the steps between its events (checkpoints, frames, statistics, signals),
 * so they land where they always did, and since a sweep has the bits of K
 * single steps, so does the whole run, whatever K the tuner picks.
 *
 * Ranks cut along one axis (x or z slabs) exchange the ghosts K deep once a
 * sweep (solver/deep_halo.h); every rank takes the same K, chosen from the
 * ranks' timings added up, so that they exchange at the same steps. Cuts
 * along y or along two axes or more take single steps.
 */
#include <atomic>

#include "fused_kernels.hip"

/* One fused kernel: K steps a sweep over tiles of bx cols x (by * rows)
 * columns (cols neighbouring columns a thread; a thread's rows neighbours
 * where `together`), zchunk planes a block (0: as many as balance the GPU's
 * waves of blocks, balanced_zchunk), the plane `prefetch` beyond the next
 * hinted into L2 (0: none). */
struct fused_entry {
    heat_variant variant;
    int steps, bx, by, rows, cols, zchunk, prefetch;
    bool together;
};

/* Names: heat_fusedK_BXxBYxROWS, then w COLS (columns a thread) or c (rows together), z and the planes a
 * block (zb: balanced), p and the plane hinted */
#define FUSED_ENTRY(name, k, bx, by, rows, cols, z, pf, together)                                             \
    {{"heat_fused" #k "_" #bx "x" #by "x" #rows name, rows, 0, k}, k, bx, by, rows, cols, z, pf, together}
#define FUSED(k, bx, by, rows, z) FUSED_ENTRY("z" #z, k, bx, by, rows, 1, z, 0, false)
#define FUSED_HINTED(k, bx, by, rows, z, pf) FUSED_ENTRY("z" #z "p" #pf, k, bx, by, rows, 1, z, pf, false)
#define FUSED_WIDE(k, bx, by, rows, cols, z) FUSED_ENTRY("w" #cols "z" #z, k, bx, by, rows, cols, z, 0, false)
#define FUSED_SHAPES(k)                                                                                       \
    FUSED(k, 32, 16, 2, 64), FUSED(k, 32, 16, 2, 128), FUSED_HINTED(k, 32, 16, 2, 64, 4),                     \
        FUSED_ENTRY("zb", k, 32, 16, 2, 1, 0, 0, false), FUSED_ENTRY("cz64", k, 32, 16, 2, 1, 64, 0, true),  \
        FUSED_ENTRY("czb", k, 32, 16, 2, 1, 0, 0, true)
static const fused_entry fused_table[] = {FUSED_SHAPES(2),
                                          FUSED(2, 64, 8, 4, 64),
                                          FUSED_WIDE(2, 32, 32, 1, 2, 64),
                                          FUSED_SHAPES(3),
                                          FUSED_ENTRY("zbp4", 3, 32, 16, 2, 1, 0, 4, false),
                                          FUSED_WIDE(3, 16, 32, 1, 4, 64),
                                          FUSED(4, 32, 16, 2, 64),
                                          FUSED(4, 32, 16, 2, 128)};
#undef FUSED_SHAPES
#undef FUSED_WIDE
#undef FUSED_HINTED
#undef FUSED
#undef FUSED_ENTRY
enum { FUSED_COUNT = sizeof fused_table / sizeof fused_table[0] };

static const fused_entry *find_fused(const char *name)
{
    for (const fused_entry &e : fused_table)
        if (strcmp(e.variant.kernel, name) == 0) return &e;
    return NULL;
}

/* solver.kernel = "heat_fusedK": the fused kernels of K steps a sweep only. */
static int fused_family(const char *name)
{
    return strncmp(name, "heat_fused", 10) == 0 && name[10] >= '2' && name[10] <= '9' && name[11] == '\0'
               ? name[10] - '0' : 0;
}

/* ---- ghosts K deep beyond the faces cut between ranks -------------------------------------------- */

enum { DEEP_MOST_STEPS = 4 }; /* the most steps a sweep of fused_table */

/* Bytes of face f's ghosts `steps` deep: whole planes of the field's layout
 * (z: ranks stacked along z share it), or columns packed [z][y][steps] (x). */
static size_t deep_bytes(const hip_state *s, int f, int steps)
{
    const int *n = s->problem.grid.n;
    size_t points = f / 2 == 2 ? (size_t)s->layout.stride_z : (size_t)n[1] * n[2];
    return (size_t)steps * points * s->elem;
}

/* Buffers for the deepest sweep, for both faces of the cut axis on every
 * rank alike: NCCL pairs the buffers ranks register in the same order. */
static int allocate_deep_halo(hip_state *s)
{
    for (int f = 2 * s->deep.axis; f <= 2 * s->deep.axis + 1; ++f) {
        size_t bytes = deep_bytes(s, f, DEEP_MOST_STEPS);
        HEAT_CALL(exchanged_alloc(s, (void **)&s->deep_recv[f], bytes));
        HIP_CALL(hipMemset(s->deep_recv[f], 0, bytes)); /* timed before the first exchange fills it */
        if (s->deep.axis == 0) HEAT_CALL(exchanged_alloc(s, (void **)&s->deep_send[f], bytes));
        if (s->transport.exchange_device) continue; /* no host staging */
        HIP_CALL(hipHostMalloc(&s->deep_host_send[f], bytes, hipHostMallocDefault));
        HIP_CALL(hipHostMalloc(&s->deep_host_recv[f], bytes, hipHostMallocDefault));
    }
    return HEAT_OK;
}

static void free_deep_halo(hip_state *s)
{
    for (int f = 0; f < FACE_COUNT; ++f) {
        exchanged_free(s, s->deep_send[f]), exchanged_free(s, s->deep_recv[f]);
        if (s->deep_host_send[f]) (void)hipHostFree(s->deep_host_send[f]);
        if (s->deep_host_recv[f]) (void)hipHostFree(s->deep_host_recv[f]);
    }
}

/* The fused kernel's view of the received ghosts (fused_kernels.hip: deep_ghosts). */
template <typename T> static deep_ghosts<T> deep_ghosts_of(const hip_state *s)
{
    deep_ghosts<T> d = {NULL, NULL, s->deep.axis};
    long first = s->deep.axis == 2 ? 1 + s->layout.stride_y : 0; /* point (0, 0) of a plane's storage */
    for (int f = 0; f < FACE_COUNT; ++f) {
        if (!(s->deep.faces & 1u << f)) continue;
        (f % 2 ? d.high : d.low) = reinterpret_cast<const T *>(s->deep_recv[f]) + first;
    }
    return d;
}

/* The first of the `steps` owned planes next to z face f, whole (its ghost
 * rows and columns included): they lie one after another in the field. */
static char *owned_planes(const hip_state *s, char *field, int face, int steps)
{
    const long ghost = s->layout.ghost, k = face == FACE_Z_LOW ? 0 : s->problem.grid.n[2] - steps;
    return field + (size_t)(heat_layout_first_owned(&s->layout) - ghost * (1 + s->layout.stride_y) +
                            k * s->layout.stride_z) * s->elem;
}

/* The ghosts `steps` deep of field[current]'s cut faces, from the
 * neighbours: z planes straight from the field, x columns packed first; GPU
 * to GPU where the transport can, else through page-locked host memory.
 * Every rank calls it at the same steps. */
template <typename T> static int deep_exchange_typed(hip_state *s, int steps)
{
    const heat_halo_transport *t = &s->transport;
    void *send[FACE_COUNT] = {0}, *recv[FACE_COUNT] = {0};
    size_t bytes[FACE_COUNT] = {0};
    if (s->deep.axis == 0) {
        const stencil_shape &p = s->shape;
        dim3 block((unsigned)steps, HEAT_LAUNCH_BOUND / DEEP_MOST_STEPS), grid((p.ny + block.y - 1) / block.y, p.nz);
        T *low = s->deep.faces & 1u << FACE_X_LOW ? reinterpret_cast<T *>(s->deep_send[FACE_X_LOW]) : NULL;
        T *high = s->deep.faces & 1u << FACE_X_HIGH ? reinterpret_cast<T *>(s->deep_send[FACE_X_HIGH]) : NULL;
        deep_pack_x<T><<<grid, block>>>(low, high, owned<T>(s, s->current), p, steps);
        HIP_CHECK_LAUNCH("deep_pack_x");
    }
    for (int f = 0; f < FACE_COUNT; ++f) {
        if (!(s->deep.faces & 1u << f)) continue;
        char *field = s->field[s->current];
        send[f] = s->deep.axis == 2 ? owned_planes(s, field, f, steps) : s->deep_send[f];
        recv[f] = s->deep_recv[f];
        bytes[f] = deep_bytes(s, f, steps);
    }
    if (t->exchange_device) return t->exchange_device(t->context, send, recv, bytes, NULL);
    for (int f = 0; f < FACE_COUNT; ++f)
        if (bytes[f]) HIP_CALL(hipMemcpy(s->deep_host_send[f], send[f], bytes[f], hipMemcpyDeviceToHost));
    HEAT_CALL(t->exchange(t->context, s->deep_host_send, s->deep_host_recv, bytes));
    for (int f = 0; f < FACE_COUNT; ++f)
        if (bytes[f]) HIP_CALL(hipMemcpy(recv[f], s->deep_host_recv[f], bytes[f], hipMemcpyHostToDevice));
    return HEAT_OK;
}

static int deep_exchange(hip_state *s, int steps)
{
    return s->problem.precision == HEAT_FLOAT ? deep_exchange_typed<float>(s, steps)
                                              : deep_exchange_typed<double>(s, steps);
}

/* ---- the fused kernels ------------------------------------------------------------------------------ */

/* The blocks of `kernel` (`threads` threads, `bytes` of shared memory) the GPU holds at once. */
static int resident_blocks(const void *kernel, int threads, size_t bytes, long *blocks)
{
    int device, multiprocessors, per_multiprocessor;
    HIP_CALL(hipGetDevice(&device));
    HIP_CALL(hipDeviceGetAttribute(&multiprocessors, hipDeviceAttributeMultiprocessorCount, device));
    HIP_CALL(hipOccupancyMaxActiveBlocksPerMultiprocessor(&per_multiprocessor, kernel, threads, bytes));
    *blocks = (long)multiprocessors * (per_multiprocessor > 0 ? per_multiprocessor : 1);
    return HEAT_OK;
}

/* Planes a block for e where its table says 0: the chunk count whose
 * blocks fill the GPU's waves best (`slots` blocks at once, `tiles` a
 * plane), each block's work counted as its planes plus the 2K it
 * recomputes at its chunk's ends: a last wave only partly full leaves
 * multiprocessors idle while it runs. */
static int balanced_zchunk(const fused_entry *e, long slots, long tiles, int nz)
{
    if (e->zchunk) return e->zchunk;
    const int least = 2 * e->steps; /* thinner chunks recompute more than they compute */
    long best = -1;
    int zchunk = nz;
    for (int chunks = 1; chunks <= nz; ++chunks) {
        const int planes = (nz + chunks - 1) / chunks, used = (nz + planes - 1) / planes;
        if (planes < least && chunks > 1) break;
        if (used != chunks) continue; /* the same planes as a smaller count */
        const long waves = (tiles * used + slots - 1) / slots, cost = waves * (planes + 2L * e->steps);
        if (best < 0 || cost < best) best = cost, zchunk = planes;
    }
    return zchunk;
}

template <typename T, int K, int BX, int BY, int R, int V, int PF, bool TOGETHER>
static int launch_fused_shape(const fused_entry *e, T *out, const T *in, const hip_state *s)
{
    constexpr size_t planes = fused_plane_bytes<T, K, BX, BY, R, V>();
    if constexpr (planes > FUSED_SHARED_LIMIT) {
        (void)out, (void)in, (void)s;
        return heat_error(HEAT_ERR_CONFIG, "fused kernel %s needs more shared memory than a block has in %s; use "
                          "another", e->variant.kernel, sizeof(T) == 8 ? "double" : "float");
    } else {
        constexpr bool paired = fused_paired<T, K, BX, BY, R, V>();
        constexpr size_t bytes = paired ? 2 * planes : planes;
        auto kernel = s->deep.faces ? heat_fused<T, K, BX, BY, R, V, paired, true, PF, TOGETHER>
                                    : heat_fused<T, K, BX, BY, R, V, paired, false, PF, TOGETHER>;
        if (bytes > 48 * 1024) /* beyond the default a block may have */
            HIP_CALL(hipFuncSetAttribute(reinterpret_cast<const void *>(kernel),
                                         hipFuncAttributeMaxDynamicSharedMemorySize, (int)bytes));
        const stencil_shape &p = s->shape;
        constexpr int TX = BX * V, TY = BY * R, KX = fused_halo_columns(K, V);
        const unsigned tiles_x = (unsigned)((p.nx + TX - 2 * KX - 1) / (TX - 2 * KX)),
                       tiles_y = (unsigned)((p.ny + TY - 2 * K - 1) / (TY - 2 * K));
        /* resident blocks of the kernel without and with deep ghosts on the process's GPU, asked once
         * (blocks of one process may launch from threads of their own) */
        static std::atomic<long> slots[2];
        std::atomic<long> &resident = slots[s->deep.faces ? 1 : 0];
        if (!e->zchunk && !resident.load()) {
            long blocks;
            HEAT_CALL(resident_blocks(reinterpret_cast<const void *>(kernel), BX * BY, bytes, &blocks));
            resident.store(blocks);
        }
        const int zchunk = balanced_zchunk(e, resident.load(), (long)tiles_x * tiles_y, p.nz);
        dim3 block(BX, BY, 1), grid(tiles_x, tiles_y, (unsigned)((p.nz + zchunk - 1) / zchunk));
        kernel<<<grid, block, bytes>>>(out, in, p, cast_coeffs<T>(s->coeffs), cast_halo<T>(s), zchunk,
                                       deep_ghosts_of<T>(s));
        return HEAT_OK;
    }
}

/* Whether e runs in `precision`: its planes fit in a block's shared memory. */
static bool fused_fits(const fused_entry *e, heat_precision precision)
{
    size_t bytes = heat_precision_size(precision) * e->steps * (size_t)(e->by * e->rows + 2) *
                   (size_t)(e->bx * e->cols + 2 * e->cols);
    return bytes <= FUSED_SHARED_LIMIT;
}

template <typename T, int K>
static int launch_fused_steps(const fused_entry *e, T *out, const T *in, const hip_state *s)
{
#define SHAPE(X, Y, ROWS, COLS, PF, TOGETHER)                                                                \
    if (e->bx == X && e->by == Y && e->rows == ROWS && e->cols == COLS && e->prefetch == PF &&               \
        e->together == TOGETHER)                                                                              \
        return launch_fused_shape<T, K, X, Y, ROWS, COLS, PF, TOGETHER>(e, out, in, s);
    SHAPE(32, 16, 2, 1, 0, false)
    if constexpr (K < 4) {
        SHAPE(32, 16, 2, 1, 4, false) SHAPE(32, 16, 2, 1, 0, true)
    }
    if constexpr (K == 2) {
        SHAPE(64, 8, 4, 1, 0, false) SHAPE(32, 32, 1, 2, 0, false)
    }
    if constexpr (K == 3) {
        SHAPE(16, 32, 1, 4, 0, false)
    }
#undef SHAPE
    return heat_internal_error("fused kernel %s has no instantiation", e->variant.kernel);
}

template <typename T> static int launch_fused_typed(const hip_state *s, const fused_entry *e, int from, int to)
{
    T *out = owned<T>(s, to);
    const T *in = owned<T>(s, from);
    switch (e->steps) {
    case 2: HEAT_CALL((launch_fused_steps<T, 2>(e, out, in, s))); break;
    case 3: HEAT_CALL((launch_fused_steps<T, 3>(e, out, in, s))); break;
    case 4: HEAT_CALL((launch_fused_steps<T, 4>(e, out, in, s))); break;
    default: return heat_internal_error("fused kernel %s: %d steps a sweep", e->variant.kernel, e->steps);
    }
    HIP_CHECK_LAUNCH(e->variant.kernel);
    return HEAT_OK;
}

/* One sweep of e from field[from] into field[to]; reads no ghost. */
static int launch_fused(const hip_state *s, const fused_entry *e, int from, int to)
{
    return s->problem.precision == HEAT_FLOAT ? launch_fused_typed<float>(s, e, from, to)
                                              : launch_fused_typed<double>(s, e, from, to);
}

/* Whether sweeps of `steps` steps may run: constant coefficients, and the
 * problem's faces as solver/deep_halo.h allows (boundaries, wraps of an
 * axis this block holds whole, ranks cut along x or z with blocks at least
 * `steps` thick); *why says why not. The same answer on every rank. */
static int fused_allowed(const hip_state *s, int steps, const char **why)
{
    heat_deep_halo plan;
    if (s->mat) return *why = "materials", 0;
    if (s->space.radius > 1) return *why = "space order above 2", 0;
    return heat_deep_halo_plan(&s->problem, steps, &plan, why);
}

/* The faces cut between ranks, and their buffers, before the first fused
 * kernel runs (the faces are the same for every K the plan allows). */
static int deep_prepare(hip_state *s)
{
    const char *why;
    if (s->deep.faces || !heat_deep_halo_plan(&s->problem, 2, &s->deep, &why) || !s->deep.faces) return HEAT_OK;
    return allocate_deep_halo(s);
}

/* Median time of `reps` sweeps of e as a run takes them, the exchange of
 * halos K deep included (out of place: the solution is untouched). */
static int time_fused(hip_state *s, const fused_entry *e, int reps, double *ms)
{
    std::vector<float> times((size_t)reps);
    HEAT_CALL(launch_fused(s, e, s->current, 1 - s->current)); /* warm-up */
    for (int r = 0; r < reps; ++r) {
        HIP_CALL(hipEventRecord(s->start, 0));
        if (s->deep.faces) HEAT_CALL(deep_exchange(s, e->steps));
        HEAT_CALL(launch_fused(s, e, s->current, 1 - s->current));
        HIP_CALL(hipEventRecord(s->stop, 0));
        HIP_CALL(hipEventSynchronize(s->stop));
        HIP_CALL(hipEventElapsedTime(&times[(size_t)r], s->start, s->stop));
    }
    std::sort(times.begin(), times.end());
    *ms = times[(size_t)reps / 2];
    return HEAT_OK;
}

static void fused_cache_key(const hip_state *s, char *buf, size_t len)
{
    cache_key(s, buf, len);
    size_t used = strlen(buf);
    snprintf(buf + used, len - used, "\tsteps a sweep");
}

/* Every rank must take the same K, since they exchange at the same steps:
 * ranks add their timings up (whole nanoseconds: exact sums in any order)
 * and each picks from the same sums. */
static int agree_on_timings(hip_state *s, std::vector<double> &ms)
{
    for (double &t : ms) t = std::round(t * 1e6);
    return s->transport.sum_owned(s->transport.context, ms.data(), (long)ms.size());
}

/* Kernels of several columns a thread take no cut along x: its ghost columns are left to the kernels of one. */
static bool fused_cut_supported(const hip_state *s, const fused_entry *e)
{
    return e->cols == 1 || !s->deep.faces || s->deep.axis != 0;
}

/* A candidate of choose_fused: of family K when solver.kernel names one, its
 * planes in shared memory, its halos no deeper than the plan allows. */
static bool fused_candidate(const hip_state *s, const fused_entry *e, int family)
{
    const char *why;
    return (!family || e->steps == family) && fused_fits(e, s->problem.precision) && fused_allowed(s, e->steps, &why) &&
           fused_cut_supported(s, e);
}

/* The fastest per step of the fused kernels (of family K when solver.kernel
 * names one) and the production single step; from the tuning cache where
 * the choice was automatic and the run has one process. A fused kernel must
 * beat the single step by FUSED_MARGIN: where the two time alike, a few
 * timings' noise would otherwise pick either from run to run. */
enum { FUSED_TUNE_REPS = 5 };
static const double FUSED_MARGIN = 0.98;
static int choose_fused(hip_state *s, int family)
{
    char key[288], value[128];
    fused_cache_key(s, key, sizeof key);
    const bool ranks = s->transport.sum_owned != NULL;
    if (!family && !ranks && tuning_cache_lookup(key, value, sizeof value)) {
        s->fused = strcmp(value, "single") == 0 ? NULL : find_fused(value);
        if (s->fused || strcmp(value, "single") == 0) return HEAT_OK;
    }
    std::vector<double> ms(FUSED_COUNT + 1, 0.0); /* [0]: the single step, then fused_table's */
    if (!family) HEAT_CALL(time_kernel(s, s->kernel, s->block, FUSED_TUNE_REPS, 1, &ms[0]));
    for (int i = 0; i < FUSED_COUNT; ++i)
        if (fused_candidate(s, &fused_table[i], family))
            HEAT_CALL(time_fused(s, &fused_table[i], FUSED_TUNE_REPS, &ms[i + 1]));
    if (ranks) HEAT_CALL(agree_on_timings(s, ms));
    double best = family ? 1e300 : ms[0] * FUSED_MARGIN;
    s->fused = NULL;
    for (int i = 0; i < FUSED_COUNT; ++i)
        if (fused_candidate(s, &fused_table[i], family) && ms[i + 1] / fused_table[i].steps < best)
            best = ms[i + 1] / fused_table[i].steps, s->fused = &fused_table[i];
    if (!family && !ranks) tuning_cache_store(key, s->fused ? s->fused->variant.kernel : "single");
    return HEAT_OK;
}

/* What the run's log and summary say of the sweeps: K and the halo depth
 * across a cut, or why single steps. */
static void describe_fused(hip_state *s, const char *why)
{
    static const char axes[] = "xyz";
    char line[160];
    if (s->fused && s->deep.faces)
        snprintf(line, sizeof line, "%d steps a sweep: %s, halos %d deep across the cut along %c", s->fused->steps,
                 s->fused->variant.kernel, s->fused->steps, axes[s->deep.axis]);
    else if (s->fused) snprintf(line, sizeof line, "%d steps a sweep: %s", s->fused->steps, s->fused->variant.kernel);
    else snprintf(line, sizeof line, "single steps: %s", why);
    size_t used = strlen(s->description);
    snprintf(s->description + used, sizeof s->description - used, "; %s", line);
    if (!s->problem.quiet) printf("GPU fused sweeps: %s\n", line);
}

/* Before the first step: solver.kernel = "heat_fusedK" takes K steps a sweep
 * (the single steps of the remainder by the fastest single-step kernel);
 * "auto" times the fused kernels against the single step; a single-step
 * kernel named takes single steps only. */
static int fused_prepare(hip_state *s)
{
    if (s->fused_ready) return HEAT_OK;
    heat_kernel_choice &want = s->problem.kernel;
    int family = fused_family(want.name);
    if (family) snprintf(want.name, sizeof want.name, "auto"), want.tile = 0;
    if (!s->kernel) HEAT_CALL(tune(s));
    s->fused_ready = 1;
    const char *why = NULL;
    if (!family && strcmp(want.name, "auto") != 0) return HEAT_OK;
    if (!fused_allowed(s, family ? family : 2, &why)) {
        /* a run cut between ranks, or one that asked for sweeps, says why it takes single steps */
        if (family || s->problem.halo.exchanged) describe_fused(s, why);
        return HEAT_OK;
    }
    HEAT_CALL(deep_prepare(s));
    HEAT_CALL(choose_fused(s, family));
    if (s->fused || s->deep.faces) describe_fused(s, "faster than the fused sweeps");
    return HEAT_OK;
}

/* Sweeps of e for the whole groups of e->steps in *steps; leaves the rest. */
static int fused_sweeps(hip_state *s, const fused_entry *e, long *steps)
{
    if (*steps >= e->steps && s->ghosts_queued) { /* an overlapped step's exchange lands first */
        HEAT_CALL(settle_exchange(s));
        s->ghosts_queued = 0; /* it was into the field the sweep leaves behind */
    }
    for (; *steps >= e->steps; *steps -= e->steps) {
        if (s->deep.faces) HEAT_CALL(deep_exchange(s, e->steps));
        HEAT_CALL(launch_fused(s, e, s->current, 1 - s->current));
        s->current = 1 - s->current;
        s->halo_valid = HALO_NONE; /* a sweep writes owned points only */
    }
    return HEAT_OK;
}

/* advance(): the fused sweeps first; the caller takes the remaining single steps. */
static int fused_advance(hip_state *s, long *steps)
{
    HEAT_CALL(fused_prepare(s));
    if (s->fused) HEAT_CALL(fused_sweeps(s, s->fused, steps));
    return HEAT_OK;
}

/* run_variant() of a fused kernel: its sweeps, then the rest in single steps
 * of the production kernel (or heat_tiled_ntf m=1 before any tuning). */
static int fused_run_variant(hip_state *s, const fused_entry *e, long steps)
{
    const char *why;
    HEAT_CHECK(fused_allowed(s, e->steps, &why), "fused kernel %s: single steps only here (%s)", e->variant.kernel, why);
    HEAT_CALL(deep_prepare(s));
    HEAT_CHECK(fused_cut_supported(s, e), "fused kernel %s: not across a cut along x; use one of 1 column a thread",
               e->variant.kernel);
    HEAT_CALL(fused_sweeps(s, e, &steps));
    const kernel_entry *single = s->kernel ? s->kernel : find_kernel("heat_tiled_ntf", 1);
    const int *shape = s->kernel ? s->block : block_candidates[0];
    for (long step = 0; step < steps; ++step) {
        HEAT_CALL(exchange_ghosts(s, s->current));
        if (!halo_ready(s->halo_valid, single->fused)) HEAT_CALL(fill_halo_for(s, single));
        HEAT_CALL(launch(s, single, shape, s->current, 1 - s->current));
        s->current = 1 - s->current;
        s->halo_valid = halo_after(single);
    }
    HIP_CALL(hipStreamSynchronize(0));
    return HEAT_OK;
}
