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
 */
#include "fused_kernels.hip"

/* One fused kernel: K steps a sweep over tiles of bx x (by * rows) columns,
 * zchunk planes a block. */
struct fused_entry {
    heat_variant variant;
    int steps, bx, by, rows, zchunk;
};

#define FUSED(k, bx, by, rows, z) {{"heat_fused" #k "_" #bx "x" #by "x" #rows "z" #z, rows, 0, k}, k, bx, by, rows, z}
#define FUSED_SHAPES(k)                                                                                      \
    FUSED(k, 32, 16, 2, 64), FUSED(k, 32, 8, 4, 64), FUSED(k, 32, 8, 4, 128), FUSED(k, 64, 8, 4, 64),        \
        FUSED(k, 64, 8, 2, 64)
static const fused_entry fused_table[] = {FUSED_SHAPES(2), FUSED_SHAPES(3), FUSED_SHAPES(4)};
#undef FUSED_SHAPES
#undef FUSED
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

template <typename T, int K, int BX, int BY, int R>
static int launch_fused_shape(const fused_entry *e, T *out, const T *in, const hip_state *s)
{
    constexpr size_t planes = fused_plane_bytes<T, K, BX, BY, R>();
    if constexpr (planes > FUSED_SHARED_LIMIT) {
        (void)out, (void)in, (void)s;
        return heat_error(HEAT_ERR_CONFIG, "fused kernel %s needs more shared memory than a block has in %s; use "
                          "another", e->variant.kernel, sizeof(T) == 8 ? "double" : "float");
    } else {
        constexpr bool paired = fused_paired<T, K, BX, BY, R>();
        constexpr size_t bytes = paired ? 2 * planes : planes;
        auto kernel = heat_fused<T, K, BX, BY, R, paired>;
        if (bytes > 48 * 1024) /* beyond the default a block may have */
            HIP_CALL(hipFuncSetAttribute(reinterpret_cast<const void *>(kernel),
                                         hipFuncAttributeMaxDynamicSharedMemorySize, (int)bytes));
        const stencil_shape &p = s->shape;
        dim3 block(BX, BY, 1);
        dim3 grid((unsigned)((p.nx + BX - 2 * K - 1) / (BX - 2 * K)),
                  (unsigned)((p.ny + BY * R - 2 * K - 1) / (BY * R - 2 * K)),
                  (unsigned)((p.nz + e->zchunk - 1) / e->zchunk));
        kernel<<<grid, block, bytes>>>(out, in, p, cast_coeffs<T>(s->coeffs), cast_halo<T>(s), e->zchunk);
        return HEAT_OK;
    }
}

/* Whether e runs in `precision`: its planes fit in a block's shared memory. */
static bool fused_fits(const fused_entry *e, heat_precision precision)
{
    size_t bytes = heat_precision_size(precision) * e->steps * (size_t)(e->by * e->rows + 2) * (size_t)(e->bx + 2);
    return bytes <= FUSED_SHARED_LIMIT;
}

template <typename T, int K>
static int launch_fused_steps(const fused_entry *e, T *out, const T *in, const hip_state *s)
{
#define SHAPE(X, Y, ROWS)                                                                                    \
    if (e->bx == X && e->by == Y && e->rows == ROWS) return launch_fused_shape<T, K, X, Y, ROWS>(e, out, in, s);
    SHAPE(32, 16, 2) SHAPE(32, 8, 4) SHAPE(64, 8, 4) SHAPE(64, 8, 2)
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

/* Fused sweeps need every ghost to be a boundary condition or this block's
 * own far side (a periodic axis it holds whole); ranks' faces would need
 * halos K planes deep. Constant coefficients, explicit steps, no overlapped
 * exchange, and not where the run asks for single steps. */
static int fused_allowed(const hip_state *s)
{
    const heat_halo *h = &s->problem.halo;
    if (s->mat || s->overlap || h->single_steps || s->problem.implicit.scheme != HEAT_EULER || s->space.radius > 1) return 0;
    for (int f = 0; f < FACE_COUNT; ++f) {
        if (!(h->exchanged & 1u << f)) continue;
        int a = f / 2, whole = h->global_n[a] > 0 ? h->global_n[a] : s->problem.grid.n[a];
        if (s->problem.bc[f].type != HEAT_BC_PERIODIC || s->problem.grid.n[a] != whole) return 0;
    }
    /* a tile's halo and the wrap-around of a periodic axis stay within one period */
    for (int a = 0; a < 3; ++a)
        if (s->problem.grid.n[a] < 4) return 0;
    return 1;
}

/* Median time of `reps` sweeps of e (out of place: the solution is untouched). */
static int time_fused(hip_state *s, const fused_entry *e, int reps, double *ms)
{
    std::vector<float> times((size_t)reps);
    HEAT_CALL(launch_fused(s, e, s->current, 1 - s->current)); /* warm-up */
    for (int r = 0; r < reps; ++r) {
        HIP_CALL(hipEventRecord(s->start, 0));
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

/* The fastest per step of the fused kernels (of family K when solver.kernel
 * names one) and the production single step; from the tuning cache where
 * the choice was automatic. A fused kernel must beat the single step by
 * FUSED_MARGIN: where the two time alike, a few timings' noise would
 * otherwise pick either from run to run. */
enum { FUSED_TUNE_REPS = 5 };
static const double FUSED_MARGIN = 0.98;
static int choose_fused(hip_state *s, int family)
{
    char key[288], value[128];
    fused_cache_key(s, key, sizeof key);
    if (!family && tuning_cache_lookup(key, value, sizeof value)) {
        s->fused = strcmp(value, "single") == 0 ? NULL : find_fused(value);
        if (s->fused || strcmp(value, "single") == 0) return HEAT_OK;
    }
    double best = 1e300;
    if (!family) {
        HEAT_CALL(time_kernel(s, s->kernel, s->block, FUSED_TUNE_REPS, 1, &best));
        best *= FUSED_MARGIN;
    }
    for (const fused_entry &e : fused_table) {
        if ((family && e.steps != family) || !fused_fits(&e, s->problem.precision)) continue;
        double ms;
        HEAT_CALL(time_fused(s, &e, FUSED_TUNE_REPS, &ms));
        if (ms / e.steps < best) best = ms / e.steps, s->fused = &e;
    }
    if (!family) tuning_cache_store(key, s->fused ? s->fused->variant.kernel : "single");
    return HEAT_OK;
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
    if (!fused_allowed(s) || (!family && strcmp(want.name, "auto") != 0)) return HEAT_OK;
    HEAT_CALL(choose_fused(s, family));
    if (!s->fused) return HEAT_OK;
    size_t used = strlen(s->description);
    snprintf(s->description + used, sizeof s->description - used, "; %d steps a sweep: %s", s->fused->steps,
             s->fused->variant.kernel);
    if (!s->problem.quiet)
        printf("GPU fused sweeps: %s (%d steps a sweep)\n", s->fused->variant.kernel, s->fused->steps);
    return HEAT_OK;
}

/* Sweeps of e for the whole groups of e->steps in *steps; leaves the rest. */
static int fused_sweeps(hip_state *s, const fused_entry *e, long *steps)
{
    for (; *steps >= e->steps; *steps -= e->steps) {
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
    HEAT_CHECK(fused_allowed(s), "fused kernel %s: the run's faces or scheme need single steps", e->variant.kernel);
    HEAT_CALL(fused_sweeps(s, e, &steps));
    const kernel_entry *single = s->kernel ? s->kernel : find_kernel("heat_tiled_ntf", 1);
    const int *shape = s->kernel ? s->block : block_candidates[0];
    for (long step = 0; step < steps; ++step) {
        HEAT_CALL(exchange_ghosts(s, s->current));
        if (!halo_ready(s->halo_valid, single->fused)) HEAT_CALL(fill_halo(s));
        HEAT_CALL(launch(s, single, shape, s->current, 1 - s->current));
        s->current = 1 - s->current;
        s->halo_valid = single->fused ? HALO_YZ : HALO_NONE;
    }
    HIP_CALL(hipStreamSynchronize(0));
    return HEAT_OK;
}
