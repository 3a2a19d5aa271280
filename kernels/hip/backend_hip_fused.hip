/*
 * Several heat steps a sweep on the GPU (fused_kernels.hip): which fused
 * kernels exist, when a run may take them, the choice by timing, and the
 * sweeps themselves. A translation unit of its own (backend_hip_internal.h;
 * the kernel table: backend_hip_fused.h).
 *
 * advance(steps) takes whole groups of K steps as fused sweeps, a remainder
 * of r >= 2 steps as one sweep of r steps where the tuner found one faster,
 * and the rest as single steps of the production kernel: the time loop asks
 * for exactly the steps between its events (checkpoints, frames,
 * statistics, signals), so they land where they always did, and since a
 * sweep has the bits of its single steps, so does the whole run, whatever
 * K the tuner picks.
 *
 * Ranks cut along one axis (x or z slabs) exchange the ghosts K deep once a
 * sweep (solver/deep_halo.h); every rank takes the same K, chosen from the
 * ranks' timings added up, so that they exchange at the same steps. Cuts
 * along y or along two axes or more take single steps.
 */
#include <atomic>

#include "backend_hip_internal.h"
#include "fused_kernels.hip"
#include "sweep_trace.hip"

/* solver.kernel = "heat_fusedK": the fused kernels of K steps a sweep only. */
static int fused_family(const char *name)
{
    return strncmp(name, "heat_fused", 10) == 0 && name[10] >= '2' && name[10] <= '9' && name[11] == '\0'
               ? name[10] - '0' : 0;
}

/* ---- ghosts K deep beyond the faces cut between ranks -------------------------------------------- */

enum { DEEP_MOST_STEPS = FUSED_MOST_STEPS }; /* halos as deep as the deepest sweep */

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

void free_deep_halo(hip_state *s)
{
    trace_destroy(&s->trace);
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
template <typename T> static int deep_exchange_typed(hip_state *s, int which, int steps, hipStream_t stream)
{
    const heat_halo_transport *t = &s->transport;
    void *send[FACE_COUNT] = {0}, *recv[FACE_COUNT] = {0};
    size_t bytes[FACE_COUNT] = {0};
    if (s->deep.axis == 0) {
        const stencil_shape &p = s->shape;
        dim3 block((unsigned)steps, HEAT_LAUNCH_BOUND / DEEP_MOST_STEPS), grid((p.ny + block.y - 1) / block.y, p.nz);
        T *low = s->deep.faces & 1u << FACE_X_LOW ? reinterpret_cast<T *>(s->deep_send[FACE_X_LOW]) : NULL;
        T *high = s->deep.faces & 1u << FACE_X_HIGH ? reinterpret_cast<T *>(s->deep_send[FACE_X_HIGH]) : NULL;
        deep_pack_x<T><<<grid, block, 0, stream>>>(low, high, owned<T>(s, which), p, steps);
        HIP_CHECK_LAUNCH("deep_pack_x");
    }
    for (int f = 0; f < FACE_COUNT; ++f) {
        if (!(s->deep.faces & 1u << f)) continue;
        char *field = s->field[which];
        send[f] = s->deep.axis == 2 ? owned_planes(s, field, f, steps) : s->deep_send[f];
        recv[f] = s->deep_recv[f];
        bytes[f] = deep_bytes(s, f, steps);
    }
    if (t->exchange_device) return t->exchange_device(t->context, send, recv, bytes, (void *)stream);
    for (int f = 0; f < FACE_COUNT; ++f)
        if (bytes[f]) HIP_CALL(hipMemcpy(s->deep_host_send[f], send[f], bytes[f], hipMemcpyDeviceToHost));
    HEAT_CALL(t->exchange(t->context, s->deep_host_send, s->deep_host_recv, bytes));
    for (int f = 0; f < FACE_COUNT; ++f)
        if (bytes[f]) HIP_CALL(hipMemcpy(recv[f], s->deep_host_recv[f], bytes[f], hipMemcpyHostToDevice));
    return HEAT_OK;
}

/* The ghosts `steps` deep of field[which], queued on `stream` (0: the default one). */
static int deep_exchange(hip_state *s, int which, int steps, hipStream_t stream = 0)
{
    return s->problem.precision == HEAT_FLOAT ? deep_exchange_typed<float>(s, which, steps, stream)
                                              : deep_exchange_typed<double>(s, which, steps, stream);
}

/* ---- the fused kernels ------------------------------------------------------------------------------ */

/* The output planes [begin, end) of a sweep, launched on `stream`; waves:
 * their z chunks fitted to whole waves of the GPU's resident blocks (else
 * the entry's zchunk). */
struct fused_range {
    int begin, end;
    bool waves;
    hipStream_t stream;
};

/* Of `planes` output planes cut into chunks over `tiles` tiles, the chunk
 * that fills `slots` resident blocks best: a launch takes about its waves
 * times the planes a block loads (its chunk and the 2 K it recomputes). */
static int wave_zchunk(long tiles, int planes, int steps, long slots)
{
    int best = planes;
    double least = 1e300;
    for (int chunks = 1; chunks <= planes; ++chunks) {
        const int chunk = (planes + chunks - 1) / chunks;
        const long blocks = tiles * ((planes + chunk - 1) / chunk);
        const double cost = (double)((blocks + slots - 1) / slots) * (chunk + 2 * steps);
        if (cost < least) least = cost, best = chunk;
    }
    return best;
}

/* Blocks of `kernel` resident on the whole GPU at once. */
static int resident_blocks(const void *kernel, int threads, size_t shared, long *slots)
{
    int device = 0, sms = 0, per_sm = 0;
    HIP_CALL(hipGetDevice(&device));
    HIP_CALL(hipDeviceGetAttribute(&sms, hipDeviceAttributeMultiprocessorCount, device));
    HIP_CALL(hipOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, shared));
    *slots = (long)sms * (per_sm > 0 ? per_sm : 1);
    return HEAT_OK;
}

/* The kernel of a shape for this sweep: with the deep ghosts where a face is cut; where a thread's V > 1
 * columns are one aligned vector (nx a multiple of V: fused_kernels.hip's ALIGNED, the only one with the
 * interior march and the register cap for V > 1), that one, else the general path of V columns, which
 * needs more registers than the cap leaves (it would spill). */
template <typename T, int K, int BX, int BY, int R, int V, bool PAIRED, int PF, bool TOGETHER, bool INTERIOR,
          int BLOCKS, bool FACES>
static auto fused_kernel_for(bool deep, bool aligned)
{
    constexpr bool MARCH = INTERIOR && V == 1, MARCH_FACES = FACES && MARCH;
    constexpr int CAP = V == 1 ? BLOCKS : 0;
    auto kernel = deep ? heat_fused<T, K, BX, BY, R, V, PAIRED, true, PF, TOGETHER, MARCH, CAP, false, MARCH_FACES>
                       : heat_fused<T, K, BX, BY, R, V, PAIRED, false, PF, TOGETHER, MARCH, CAP, false, MARCH_FACES>;
    if constexpr (V > 1)
        if (aligned)
            kernel = deep ? heat_fused<T, K, BX, BY, R, V, PAIRED, true, PF, TOGETHER, INTERIOR, BLOCKS, true, FACES>
                          : heat_fused<T, K, BX, BY, R, V, PAIRED, false, PF, TOGETHER, INTERIOR, BLOCKS, true, FACES>;
    return kernel;
}

template <typename T, int K, int BX, int BY, int R, int V, int PF, bool TOGETHER, bool INTERIOR = false,
          int BLOCKS = 0, bool FACES = false>
static int launch_fused_shape(const fused_entry *e, T *out, const T *in, const hip_state *s, const fused_range &z)
{
    constexpr size_t planes = fused_plane_bytes<T, K, BX, BY, R, V>();
    if constexpr (planes > FUSED_SHARED_LIMIT) {
        (void)out, (void)in, (void)s, (void)z;
        return heat_error(HEAT_ERR_CONFIG, "fused kernel %s needs more shared memory than a block has in %s; use "
                          "another", e->variant.kernel, sizeof(T) == 8 ? "double" : "float");
    } else {
        constexpr bool paired = fused_paired<T, K, BX, BY, R, V>();
        constexpr size_t bytes = paired ? 2 * planes : planes;
        const stencil_shape &p = s->shape;
        /* kernels of several columns a thread take no cut along x (fused_cut_supported) */
        const bool aligned = V > 1 && p.nx % V == 0 && !(s->deep.faces && s->deep.axis == 0);
        auto kernel =
            fused_kernel_for<T, K, BX, BY, R, V, paired, PF, TOGETHER, INTERIOR, BLOCKS, FACES>(s->deep.faces != 0,
                                                                                              aligned);
        if (bytes > 48 * 1024) /* beyond the default a block may have */
            HIP_CALL(hipFuncSetAttribute(reinterpret_cast<const void *>(kernel),
                                         hipFuncAttributeMaxDynamicSharedMemorySize, (int)bytes));
        constexpr int TX = BX * V, TY = BY * R, KX = fused_halo_columns(K, V);
        const unsigned tiles_x = (unsigned)((p.nx + TX - 2 * KX - 1) / (TX - 2 * KX));
        const unsigned tiles_y = (unsigned)((p.ny + TY - 2 * K - 1) / (TY - 2 * K));
        const int count = z.end - z.begin;
        int zchunk = e->zchunk;
        if (z.waves) {
            /* of the kernel without and with deep ghosts, aligned or not, on this process's GPU, asked once,
             * not every sweep (blocks of one process may launch from threads of their own) */
            static std::atomic<long> slots[4];
            std::atomic<long> &resident = slots[(s->deep.faces ? 1 : 0) + (aligned ? 2 : 0)];
            if (!resident.load()) {
                long blocks;
                HEAT_CALL(resident_blocks(reinterpret_cast<const void *>(kernel), BX * BY, bytes, &blocks));
                resident.store(blocks);
            }
            zchunk = wave_zchunk((long)tiles_x * tiles_y, count, K, resident.load());
        }
        dim3 block(BX, BY, 1), grid(tiles_x, tiles_y, (unsigned)((count + zchunk - 1) / zchunk));
        kernel<<<grid, block, bytes, z.stream>>>(out, in, p, cast_coeffs<T>(s->coeffs), cast_halo<T>(s), zchunk,
                                                 z.begin, z.end, deep_ghosts_of<T>(s));
        return HEAT_OK;
    }
}

/* Whether e runs in `precision`: its planes fit in a block's shared memory, and a register cap
 * (blocks > 0) is the one of the precision it was sized for: double for two columns a thread (one
 * 16-byte row), float otherwise (under it the other precision would spill). */
bool fused_fits(const fused_entry *e, heat_precision precision)
{
    size_t bytes = heat_precision_size(precision) * e->steps * (size_t)(e->by * e->rows + 2) *
                   (size_t)(e->bx * e->cols + 2 * e->cols);
    return bytes <= FUSED_SHARED_LIMIT && (e->blocks == 0 || (precision == HEAT_DOUBLE) == (e->cols == 2));
}

template <typename T, int K>
static int launch_fused_steps(const fused_entry *e, T *out, const T *in, const hip_state *s, const fused_range &z)
{
#define SHAPE_F(X, Y, ROWS, COLS, PF, TOGETHER, INTERIOR, BLOCKS, FACES)                                    \
    if (e->bx == X && e->by == Y && e->rows == ROWS && e->cols == COLS && e->prefetch == PF &&               \
        e->together == TOGETHER && e->interior == INTERIOR && e->blocks == BLOCKS && e->faces == FACES)       \
        return launch_fused_shape<T, K, X, Y, ROWS, COLS, PF, TOGETHER, INTERIOR, BLOCKS, FACES>(e, out, in, s, z);
#define SHAPE_B(X, Y, ROWS, COLS, PF, TOGETHER, INTERIOR, BLOCKS)                                            \
    SHAPE_F(X, Y, ROWS, COLS, PF, TOGETHER, INTERIOR, BLOCKS, false)
#define SHAPE(X, Y, ROWS, COLS, PF, TOGETHER) SHAPE_B(X, Y, ROWS, COLS, PF, TOGETHER, false, 0)
    SHAPE(32, 16, 2, 1, 0, false)
    if constexpr (K < 4) {
        SHAPE(32, 16, 2, 1, 4, false) SHAPE_B(32, 16, 2, 1, 0, true, true, 0)
    }
    if constexpr (K == 2) {
        SHAPE(64, 8, 4, 1, 0, false) SHAPE(32, 32, 1, 2, 0, false)
        if constexpr (sizeof(T) == 4) SHAPE_B(32, 16, 2, 1, 0, true, true, 3)
    }
    if constexpr (sizeof(T) == 4 && K == 3) SHAPE_B(16, 32, 1, 4, 0, false, true, 2)
    if constexpr (sizeof(T) == 4 && K < 4) SHAPE_F(16, 32, 1, 4, 0, false, true, 2, true)
    if constexpr (sizeof(T) == 4 && K == 3) SHAPE_F(16, 28, 1, 4, 0, false, true, 2, true)
    if constexpr (sizeof(T) == 8 && K == 2) SHAPE_F(16, 32, 1, 2, 0, false, true, 2, true)
    if constexpr (K == 3) SHAPE_F(32, 16, 2, 1, 0, true, true, 0, true)
    if constexpr (K == 3) {
        SHAPE(16, 32, 1, 4, 0, false)
    }
#undef SHAPE
#undef SHAPE_B
#undef SHAPE_F
    return heat_internal_error("fused kernel %s has no instantiation", e->variant.kernel);
}

template <typename T>
static int launch_fused_typed(const hip_state *s, const fused_entry *e, int from, int to, const fused_range &z)
{
    T *out = owned<T>(s, to);
    const T *in = owned<T>(s, from);
    switch (e->steps) {
    case 2: HEAT_CALL((launch_fused_steps<T, 2>(e, out, in, s, z))); break;
    case 3: HEAT_CALL((launch_fused_steps<T, 3>(e, out, in, s, z))); break;
    case 4: HEAT_CALL((launch_fused_steps<T, 4>(e, out, in, s, z))); break;
    default: return heat_internal_error("fused kernel %s: %d steps a sweep", e->variant.kernel, e->steps);
    }
    HIP_CHECK_LAUNCH(e->variant.kernel);
    return HEAT_OK;
}

/* Planes z of one sweep of e from field[from] into field[to]; reads no ghost. */
static int launch_fused(const hip_state *s, const fused_entry *e, int from, int to, const fused_range &z)
{
    if (z.end <= z.begin) return HEAT_OK;
    return s->problem.precision == HEAT_FLOAT ? launch_fused_typed<float>(s, e, from, to, z)
                                              : launch_fused_typed<double>(s, e, from, to, z);
}

/* The whole of one sweep, on the default stream. */
static int launch_fused(const hip_state *s, const fused_entry *e, int from, int to)
{
    return launch_fused(s, e, from, to, fused_range{0, s->problem.grid.n[2], s->fused_waves != 0, 0});
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

/* Planes of the whole grid along z (HEATSOLVE_TRACE's lines name the block's among them). */
static int whole_z(const hip_state *s)
{
    return s->problem.halo.global_n[2] > 0 ? s->problem.halo.global_n[2] : s->problem.grid.n[2];
}

/* Output planes next to a cut face that the comm stream sweeps once the
 * ghosts land. A whole z chunk where every rank's slab holds eight: the
 * edge and inner ranges then recompute no more planes than the chunks of a
 * sweep without a cut, and the two edge chunks, a quarter of the slab at
 * most, end early enough in the sweep for the next ghosts (which leave
 * after them) to travel beside the inner planes. Thinner slabs take the K
 * planes that read ghosts. The same on every rank (the thinnest slab). */
static int edge_planes(const hip_state *s, const fused_entry *e)
{
    const int fewest = s->problem.halo.fewest[2] > 0 ? s->problem.halo.fewest[2] : s->problem.grid.n[2];
    return fewest >= 8 * e->zchunk ? e->zchunk : e->steps;
}

/* Sweeps with the exchange beside them, where single steps overlap theirs
 * (z slabs, NCCL: the comm stream). Output planes K or more from a cut face
 * read no ghost: the default stream sweeps them while the comm stream
 * receives the ghosts and then sweeps the planes within K of the cut faces;
 * the next sweep's ghosts (those edge planes, just written) leave right
 * after, beside this sweep's inner planes. The streams meet once a sweep,
 * as in overlapped_step: each waits for the other's previous part (they
 * read each other's planes and overwrite planes the other read). Every
 * point is the same kernel's, whatever the range it falls in. */
static int overlapped_sweeps(hip_state *s, const fused_entry *e, long sweeps, bool traced)
{
    const int nz = s->problem.grid.n[2], K = e->steps, edge = edge_planes(s, e);
    const bool low = s->deep.faces & 1u << FACE_Z_LOW, high = s->deep.faces & 1u << FACE_Z_HIGH, waves = s->fused_waves;
    const bool edge_waves = waves && edge == K; /* a whole chunk's edge range stays one chunk */
    const int inner_begin = low ? std::min(edge, nz) : 0, inner_end = high ? std::max(nz - edge, inner_begin) : nz;
    if (traced && !s->trace && trace_wanted()) HEAT_CALL(trace_create(&s->trace));
    sweep_trace *trace = traced ? s->trace : NULL;
    HEAT_CALL(comm_after_default(s));
    if (trace) {
        trace->sweeps = sweeps;
        HIP_CALL(hipEventRecord(trace->origin, s->comm));
    }
    HEAT_CALL(deep_exchange(s, s->current, K, s->comm));
    if (trace) HIP_CALL(hipEventRecord(trace->first_sent, s->comm));
    for (long n = 0; n < sweeps; ++n) {
        const int from = s->current, to = 1 - from;
        const bool more = n + 1 < sweeps;
        HIP_CALL(hipStreamWaitEvent(0, s->boundary_done, 0)); /* the previous sweep's edge planes */
        HEAT_CALL(comm_after_default(s));                      /* and its inner planes */
        HEAT_CALL(trace_mark(trace, EDGE_START, n, s->comm));
        if (low) HEAT_CALL(launch_fused(s, e, from, to, fused_range{0, inner_begin, edge_waves, s->comm}));
        if (high) HEAT_CALL(launch_fused(s, e, from, to, fused_range{inner_end, nz, edge_waves, s->comm}));
        HIP_CALL(hipEventRecord(s->boundary_done, s->comm));
        HEAT_CALL(trace_mark(trace, EDGE_END, n, s->comm));
        const fused_range inner = {inner_begin, inner_end, waves, 0};
        if (s->transport.device_exchange_blocks) { /* MPI: the host waits in the exchange while the GPU sweeps */
            HEAT_CALL(trace_mark(trace, INNER_START, n, 0));
            HEAT_CALL(launch_fused(s, e, from, to, inner));
            HEAT_CALL(trace_mark(trace, INNER_END, n, 0));
            if (more) HEAT_CALL(deep_exchange(s, to, K, s->comm));
            if (more) HEAT_CALL(trace_mark(trace, SENT, n, s->comm));
        } else {
            if (more) HEAT_CALL(deep_exchange(s, to, K, s->comm));
            if (more) HEAT_CALL(trace_mark(trace, SENT, n, s->comm));
            HEAT_CALL(trace_mark(trace, INNER_START, n, 0));
            HEAT_CALL(launch_fused(s, e, from, to, inner));
            HEAT_CALL(trace_mark(trace, INNER_END, n, 0));
        }
        s->current = to;
        s->halo_valid = HALO_NONE; /* a sweep writes owned points only */
    }
    HIP_CALL(hipStreamWaitEvent(0, s->boundary_done, 0)); /* the default stream holds the whole sweep again */
    if (trace)
        HEAT_CALL(trace_report(trace, e->variant.kernel, waves, s->problem.halo.offset[2], nz, whole_z(s), inner_begin,
                                inner_end));
    return HEAT_OK;
}

/* Sweeps of e for the whole groups of e->steps in *steps; leaves the rest.
 * traced: a run's sweeps, which HEATSOLVE_TRACE times (not the tuner's). */
static int fused_sweeps(hip_state *s, const fused_entry *e, long *steps, bool traced = false)
{
    const long sweeps = *steps / e->steps;
    if (sweeps == 0) return HEAT_OK;
    *steps -= sweeps * e->steps;
    if (s->ghosts_queued) { /* an overlapped step's exchange lands first */
        HEAT_CALL(settle_exchange(s));
        s->ghosts_queued = 0; /* it was into the field the sweep leaves behind */
    }
    if (s->overlap && s->deep.faces && s->deep.axis == 2) return overlapped_sweeps(s, e, sweeps, traced);
    if (traced && !s->trace && trace_wanted()) HEAT_CALL(trace_create(&s->trace));
    sweep_trace *trace = traced ? s->trace : NULL;
    if (trace) {
        trace->sweeps = sweeps;
        HIP_CALL(hipEventRecord(trace->origin, 0));
    }
    for (long n = 0; n < sweeps; ++n) {
        HEAT_CALL(trace_mark(trace, EDGE_START, n, 0)); /* the exchange before the sweep, if any */
        if (s->deep.faces) HEAT_CALL(deep_exchange(s, s->current, e->steps));
        HEAT_CALL(trace_mark(trace, EDGE_END, n, 0));
        HEAT_CALL(trace_mark(trace, INNER_START, n, 0));
        HEAT_CALL(launch_fused(s, e, s->current, 1 - s->current));
        HEAT_CALL(trace_mark(trace, INNER_END, n, 0));
        s->current = 1 - s->current;
        s->halo_valid = HALO_NONE; /* a sweep writes owned points only */
    }
    if (trace) HEAT_CALL(trace_report_plain(trace, e->variant.kernel, s->fused_waves, s->problem.halo.offset[2],
                                            s->problem.grid.n[2], whole_z(s), s->deep.faces != 0));
    return HEAT_OK;
}

/* ---- the choice by timing --------------------------------------------------------------------------- */

enum { FUSED_TUNE_REPS = 5 };

/* The run's own field, ghosts included, copied aside while the tuner steps
 * it as the run would, and put back after; copy NULL where memory is short. */
struct saved_field {
    char *copy;
    int current, halo_valid, ghosts_queued;
};

static int save_field(hip_state *s, saved_field *saved)
{
    const size_t bytes = (size_t)s->layout.total * s->elem;
    HEAT_CALL(settle_exchange(s));
    HIP_CALL(hipDeviceSynchronize());
    *saved = {NULL, s->current, s->halo_valid, s->ghosts_queued};
    if (hipMalloc((void **)&saved->copy, bytes) != hipSuccess) {
        (void)hipGetLastError(); /* no error left behind for the next launch's check */
        saved->copy = NULL;
    }
    if (s->transport.sum_owned) { /* the ranks time alike, so that they exchange alike: all copy, or none */
        double short_of_memory = saved->copy ? 0.0 : 1.0;
        HEAT_CALL(s->transport.sum_owned(s->transport.context, &short_of_memory, 1));
        if (short_of_memory > 0.0 && saved->copy) {
            HIP_CALL(hipFree(saved->copy));
            saved->copy = NULL;
        }
    }
    if (saved->copy) HIP_CALL(hipMemcpy(saved->copy, s->field[s->current], bytes, hipMemcpyDeviceToDevice));
    return HEAT_OK;
}

static int restore_field(hip_state *s, saved_field *saved)
{
    if (!saved->copy) return HEAT_OK;
    HIP_CALL(hipDeviceSynchronize());
    HIP_CALL(hipMemcpy(s->field[saved->current], saved->copy, (size_t)s->layout.total * s->elem,
                       hipMemcpyDeviceToDevice));
    HIP_CALL(hipFree(saved->copy));
    saved->copy = NULL;
    s->current = saved->current, s->halo_valid = saved->halo_valid, s->ghosts_queued = saved->ghosts_queued;
    return HEAT_OK;
}

/* Every rank starts the next timed run together: a run's exchanges wait
 * for the neighbours, so a rank still busy with the previous one would
 * otherwise add its lag to the others' time. */
static int align_ranks(hip_state *s)
{
    HIP_CALL(hipDeviceSynchronize());
    if (!s->transport.sum_owned) return HEAT_OK;
    double nothing = 0.0;
    return s->transport.sum_owned(s->transport.context, &nothing, 1);
}

/* The time (ms) of one run of TIMED_STEPS steps taken as a run takes them
 * (in place: the caller saved the field): e's sweeps, or (NULL) single
 * steps of the production kernel, each with its exchange as the run has
 * it, beside the update or before it. */
enum { TIMED_STEPS = 12 }; /* whole sweeps of every K of fused_table */
static int time_run(hip_state *s, const fused_entry *e, float *ms)
{
    HEAT_CALL(align_ranks(s));
    long steps = TIMED_STEPS;
    HIP_CALL(hipEventRecord(s->start, 0));
    if (e) HEAT_CALL(fused_sweeps(s, e, &steps));
    for (long step = 0; step < steps; ++step) HEAT_CALL(step_once(s, s->kernel, s->block));
    HEAT_CALL(settle_exchange(s));
    HIP_CALL(hipEventRecord(s->stop, 0));
    HIP_CALL(hipEventSynchronize(s->stop));
    HIP_CALL(hipEventElapsedTime(ms, s->start, s->stop));
    return HEAT_OK;
}

/* One candidate of the choice: e's sweeps (NULL: single steps) with the z
 * chunks fitted to waves or not, and where its time a step goes in ms[]. */
struct timed_candidate {
    const fused_entry *e;
    int waves;
    size_t at;
};

/* Median time a step of each candidate, over `reps` runs taken in turns (a
 * run of each a turn, after a warm-up turn): a drift of the GPUs' clocks
 * or of the ranks' pace during the tuning weighs on every candidate alike
 * instead of favouring those timed first. */
static int time_in_turns(hip_state *s, const std::vector<timed_candidate> &all, int reps, std::vector<double> &ms)
{
    std::vector<std::vector<float>> times(all.size());
    for (int turn = 0; turn <= reps; ++turn)
        for (size_t c = 0; c < all.size(); ++c) {
            float t = 0.0f;
            s->fused_waves = all[c].waves;
            HEAT_CALL(time_run(s, all[c].e, &t));
            if (turn > 0) times[c].push_back(t);
        }
    for (size_t c = 0; c < all.size(); ++c) {
        std::sort(times[c].begin(), times[c].end());
        ms[all[c].at] = times[c][(size_t)reps / 2] / TIMED_STEPS;
    }
    return HEAT_OK;
}

/* Where memory is short for the copy: median time a step of `reps` sweeps
 * of e out of place, each after its exchange (the solution is untouched). */
int time_fused_aside(hip_state *s, const fused_entry *e, int reps, double *ms)
{
    std::vector<float> times((size_t)reps);
    HEAT_CALL(launch_fused(s, e, s->current, 1 - s->current)); /* warm-up */
    for (int r = 0; r < reps; ++r) {
        HIP_CALL(hipEventRecord(s->start, 0));
        if (s->deep.faces) HEAT_CALL(deep_exchange(s, s->current, e->steps));
        HEAT_CALL(launch_fused(s, e, s->current, 1 - s->current));
        HIP_CALL(hipEventRecord(s->stop, 0));
        HIP_CALL(hipEventSynchronize(s->stop));
        HIP_CALL(hipEventElapsedTime(&times[(size_t)r], s->start, s->stop));
    }
    std::sort(times.begin(), times.end());
    *ms = times[(size_t)reps / 2] / e->steps;
    return HEAT_OK;
}

static void fused_cache_key(const hip_state *s, char *buf, size_t len)
{
    cache_key(s, buf, len);
    size_t used = strlen(buf);
    snprintf(buf + used, len - used, "\tsteps a sweep and remainders");
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

/* A candidate of choose_fused: of K steps or fewer when solver.kernel names
 * family K (its sweeps and the sweeps of their remainders), its planes in
 * shared memory, its halos no deeper than the plan allows. */
static bool fused_candidate(const hip_state *s, const fused_entry *e, int family)
{
    const char *why;
    return (!family || e->steps <= family) && fused_fits(e, s->problem.precision) && fused_allowed(s, e->steps, &why) &&
           fused_cut_supported(s, e);
}

/* Of the candidates of `steps` steps a sweep (0: any), the fastest a step
 * below `limit` ms and *waves its chunking; NULL where none is. */
static const fused_entry *fastest_fused(const hip_state *s, int family, int steps, const std::vector<double> &ms,
                                        double limit, int *waves)
{
    const fused_entry *best = NULL;
    *waves = 0;
    for (int i = 0; i < FUSED_COUNT; ++i)
        for (int w = 0; w < 2; ++w) {
            const fused_entry *e = &fused_table[i];
            const double t = ms[(size_t)(1 + 2 * i + w)];
            if ((!steps || e->steps == steps) && fused_candidate(s, e, family) && t < limit)
                limit = t, best = e, *waves = w;
        }
    return best;
}

/* For each remainder r of a call's steps (2 <= r < K), the fastest sweep of
 * r steps: where the run asks for steps between its events that are no
 * multiple of K, one sweep of r costs less than r single steps (it reads
 * and writes the field once). "auto" takes it only where it beats the single
 * step by FUSED_MARGIN, as for K; solver.kernel = "heat_fusedK" always. */
static void choose_remainders(hip_state *s, int family, const std::vector<double> &ms, double limit)
{
    for (int r = 0; r < FUSED_MOST_STEPS; ++r) s->fused_rest[r] = NULL, s->fused_rest_waves[r] = 0;
    for (int r = 2; s->fused && r < s->fused->steps; ++r)
        s->fused_rest[r] = fastest_fused(s, family, r, ms, limit, &s->fused_rest_waves[r]);
}

/* The tuning cache's line: "<kernel or single> <waves or chunks>" for the
 * sweeps of K steps, then the same for each remainder r = 2 .. 3. */
enum { CACHE_SLOTS = FUSED_MOST_STEPS - 1 };
static void fused_cache_value(const hip_state *s, char *value, size_t len)
{
    const fused_entry *slot[CACHE_SLOTS] = {s->fused};
    int waves[CACHE_SLOTS] = {s->fused_waves};
    for (int r = 2; r < FUSED_MOST_STEPS; ++r) slot[r - 1] = s->fused_rest[r], waves[r - 1] = s->fused_rest_waves[r];
    value[0] = '\0';
    for (int i = 0; i < CACHE_SLOTS; ++i) {
        const size_t used = strlen(value);
        snprintf(value + used, len - used, "%s%s %s", i ? " " : "", slot[i] ? slot[i]->variant.kernel : "single",
                 waves[i] ? "waves" : "chunks");
    }
}

/* The choice from a cache line of fused_cache_value's; false where the line
 * names a kernel this build does not have (timed again). */
static bool read_fused_cache(hip_state *s, const char *value)
{
    char name[CACHE_SLOTS][64], waves[CACHE_SLOTS][16];
    if (sscanf(value, "%63s %15s %63s %15s %63s %15s", name[0], waves[0], name[1], waves[1], name[2], waves[2]) !=
        2 * CACHE_SLOTS)
        return false;
    const fused_entry *slot[CACHE_SLOTS];
    for (int i = 0; i < CACHE_SLOTS; ++i) {
        slot[i] = strcmp(name[i], "single") == 0 ? NULL : find_fused(name[i]);
        if (!slot[i] && strcmp(name[i], "single") != 0) return false;
    }
    s->fused = slot[0], s->fused_waves = strcmp(waves[0], "waves") == 0;
    for (int r = 0; r < FUSED_MOST_STEPS; ++r) s->fused_rest[r] = NULL, s->fused_rest_waves[r] = 0;
    for (int r = 2; r < FUSED_MOST_STEPS; ++r)
        if (s->fused && r < s->fused->steps && slot[r - 1] && slot[r - 1]->steps == r)
            s->fused_rest[r] = slot[r - 1], s->fused_rest_waves[r] = strcmp(waves[r - 1], "waves") == 0;
    return true;
}

/* Per step, the production single step (ms[0]) and each candidate of
 * fused_table with its own z chunk and with chunks fitted to whole waves
 * (ms[1 + 2 i + waves]), each taken as the run would take it where the
 * field can be copied aside (else the single step without its exchange and
 * the sweeps out of place after theirs). */
static int time_candidates(hip_state *s, int family, std::vector<double> &ms)
{
    saved_field saved;
    HEAT_CALL(save_field(s, &saved));
    std::vector<timed_candidate> all;
    if (!family && saved.copy) all.push_back({NULL, 0, 0});
    if (!family && !saved.copy) HEAT_CALL(time_kernel(s, s->kernel, s->block, FUSED_TUNE_REPS, 1, &ms[0]));
    for (int i = 0; i < FUSED_COUNT; ++i) {
        if (!fused_candidate(s, &fused_table[i], family)) continue;
        for (int waves = 0; waves < 2; ++waves) {
            const size_t at = (size_t)(1 + 2 * i + waves);
            if (saved.copy) all.push_back({&fused_table[i], waves, at});
            s->fused_waves = waves;
            if (!saved.copy) HEAT_CALL(time_fused_aside(s, &fused_table[i], FUSED_TUNE_REPS, &ms[at]));
        }
    }
    if (saved.copy) HEAT_CALL(time_in_turns(s, all, FUSED_TUNE_REPS, ms));
    return restore_field(s, &saved);
}

/* The fastest per step of the fused kernels (of family K when solver.kernel
 * names one) and the production single step; from the tuning cache where
 * the choice was automatic and the run has one process. A fused kernel must
 * beat the single step by FUSED_MARGIN: where the two time alike, a few
 * timings' noise would otherwise pick either from run to run. */
static const double FUSED_MARGIN = 0.98;
static int choose_fused(hip_state *s, int family)
{
    char key[288], value[256];
    fused_cache_key(s, key, sizeof key);
    const bool ranks = s->transport.sum_owned != NULL;
    if (!family && !ranks && tuning_cache_lookup(key, value, sizeof value) && read_fused_cache(s, value))
        return HEAT_OK;
    std::vector<double> ms(2 * FUSED_COUNT + 1, 0.0);
    HEAT_CALL(time_candidates(s, family, ms));
    if (ranks) HEAT_CALL(agree_on_timings(s, ms));
    const double limit = family ? 1e300 : ms[0] * FUSED_MARGIN;
    s->fused = fastest_fused(s, family, family, ms, limit, &s->fused_waves);
    choose_remainders(s, family, ms, limit);
    if (!family && !ranks) {
        fused_cache_value(s, value, sizeof value);
        tuning_cache_store(key, value);
    }
    return HEAT_OK;
}

/* What the run's log and summary say of the sweeps: K and the halo depth
 * across a cut, or why single steps. */
static void describe_fused(hip_state *s, const char *why)
{
    static const char axes[] = "xyz";
    char line[320];
    if (s->fused && s->deep.faces)
        snprintf(line, sizeof line, "%d steps a sweep: %s, halos %d deep across the cut along %c", s->fused->steps,
                 s->fused->variant.kernel, s->fused->steps, axes[s->deep.axis]);
    else if (s->fused) snprintf(line, sizeof line, "%d steps a sweep: %s", s->fused->steps, s->fused->variant.kernel);
    else snprintf(line, sizeof line, "single steps: %s", why);
    size_t used = strlen(line);
    if (s->fused && s->fused_waves) snprintf(line + used, sizeof line - used, ", z chunks in whole waves");
    used = strlen(line);
    if (s->fused && s->deep.faces && s->overlap)
        snprintf(line + used, sizeof line - used, ", exchanged beside the inner planes (edges %d planes)",
                 edge_planes(s, s->fused));
    for (int r = 2; r < FUSED_MOST_STEPS; ++r) {
        used = strlen(line);
        if (s->fused_rest[r])
            snprintf(line + used, sizeof line - used, "; a remainder of %d steps: %s%s", r,
                     s->fused_rest[r]->variant.kernel, s->fused_rest_waves[r] ? " (waves)" : "");
    }
    used = strlen(s->description);
    snprintf(s->description + used, sizeof s->description - used, "; %s", line);
    if (!s->problem.quiet) printf("GPU fused sweeps: %s\n", line);
}

/* Before the first step: solver.kernel = "heat_fusedK" takes K steps a sweep
 * (the single steps of the remainder by the fastest single-step kernel);
 * "auto" times the fused kernels against the single step; a single-step
 * kernel named takes single steps only. */
int fused_prepare(hip_state *s)
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

/* The remainder of a call's steps (fewer than K) in one sweep where the
 * choice has one of that many steps (its own z chunking). */
static int remainder_sweep(hip_state *s, long *steps)
{
    const fused_entry *e = *steps >= 2 && *steps < FUSED_MOST_STEPS ? s->fused_rest[*steps] : NULL;
    if (!e) return HEAT_OK;
    const int waves = s->fused_waves;
    s->fused_waves = s->fused_rest_waves[*steps];
    const int status = fused_sweeps(s, e, steps);
    s->fused_waves = waves;
    return status;
}

/* advance(): the fused sweeps first, then a remainder's sweep; the caller takes the remaining single steps. */
int fused_advance(hip_state *s, long *steps)
{
    HEAT_CALL(fused_prepare(s));
    if (s->fused) HEAT_CALL(fused_sweeps(s, s->fused, steps, true));
    if (s->fused) HEAT_CALL(remainder_sweep(s, steps));
    return HEAT_OK;
}

/* run_variant() of a fused kernel: its sweeps, then the rest in single steps
 * of the production kernel (or heat_tiled_ntf m=1 before any tuning). */
int fused_run_variant(hip_state *s, const fused_entry *e, long steps)
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
