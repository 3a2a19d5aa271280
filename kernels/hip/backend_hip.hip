/*
 * HIP backend: the same operations as the CPU backend, on one GPU. Two
 * device fields with one ghost layer; the halo fill, the stencil and the
 * reductions run on the device; the field crosses to the host only at start,
 * at checkpoints and at the end (the stats reduction returns a few numbers).
 */
#include "backend_hip_internal.h"
#include "zahead_kernels.hip"
#include "zwideg_kernels.hip"

enum { HIP_ALIGN_BYTES = 256 };

/* The seeds' Laplacian-only sweeps (f = lap(u)): the benchmark's and the
 * verification tests' (heat_bench_ops), never a production candidate. */
static const kernel_entry seed_table[] = {
    {{"lap_baseline", 1, 1}, LAP_BASELINE},
    {{"lap_tiled", 1, 1}, LAP_TILED}, {{"lap_tiled", 2, 1}, LAP_TILED}, {{"lap_tiled", 4, 1}, LAP_TILED},
    {{"lap_tiled", 8, 1}, LAP_TILED}, {{"lap_tiled", 16, 1}, LAP_TILED},
    {{"lap_tiled_nt", 1, 1}, LAP_TILED_NT}, {{"lap_tiled_nt", 2, 1}, LAP_TILED_NT},
    {{"lap_tiled_nt", 4, 1}, LAP_TILED_NT}, {{"lap_tiled_nt", 8, 1}, LAP_TILED_NT},
    {{"lap_tiled_nt", 16, 1}, LAP_TILED_NT},
};
enum { SEED_COUNT = sizeof seed_table / sizeof seed_table[0] };

/* The heat steps: the candidates of the production kernel choice (tune). */
static const kernel_entry kernel_table[] = {
    {{"heat_tiled", 1, 0}, HEAT_TILED}, {{"heat_tiled", 2, 0}, HEAT_TILED}, {{"heat_tiled", 4, 0}, HEAT_TILED},
    {{"heat_tiled", 8, 0}, HEAT_TILED}, {{"heat_tiled", 16, 0}, HEAT_TILED},
    {{"heat_tiled_nt", 1, 0}, HEAT_TILED_NT}, {{"heat_tiled_nt", 2, 0}, HEAT_TILED_NT},
    {{"heat_tiled_nt", 4, 0}, HEAT_TILED_NT}, {{"heat_tiled_nt", 8, 0}, HEAT_TILED_NT},
    {{"heat_tiled_nt", 16, 0}, HEAT_TILED_NT},
    {{"heat_tiled_ntf", 1, 0}, HEAT_TILED_NT, 0, 1}, {{"heat_tiled_ntf", 2, 0}, HEAT_TILED_NT, 0, 1},
    {{"heat_tiled_ntf", 4, 0}, HEAT_TILED_NT, 0, 1}, {{"heat_tiled_ntf", 8, 0}, HEAT_TILED_NT, 0, 1},
    {{"heat_tiled_ntf", 16, 0}, HEAT_TILED_NT, 0, 1},
    {{"heat_zwindow32", 1, 0}, HEAT_ZWINDOW, 32, 0, 0, 0, 0, UNTUNED}, {{"heat_zwindow32", 2, 0}, HEAT_ZWINDOW, 32},
    {{"heat_zwindow32", 4, 0}, HEAT_ZWINDOW, 32, 0, 0, 0, 0, UNTUNED},
    {{"heat_zwindow64", 1, 0}, HEAT_ZWINDOW, 64, 0, 0, 0, 0, UNTUNED},
    {{"heat_zwindow64", 2, 0}, HEAT_ZWINDOW, 64, 0, 0, 0, 0, UNTUNED},
    {{"heat_zwindow64", 4, 0}, HEAT_ZWINDOW, 64, 0, 0, 0, 0, UNTUNED},
    {{"heat_zwindow128", 1, 0}, HEAT_ZWINDOW, 128, 0, 0, 0, 0, UNTUNED},
    {{"heat_zwindow128", 2, 0}, HEAT_ZWINDOW, 128, 0, 0, 0, 0, UNTUNED},
    {{"heat_zwindow128", 4, 0}, HEAT_ZWINDOW, 128, 0, 0, 0, 0, UNTUNED},
    {{"heat_zwindowf32", 1, 0}, HEAT_ZWINDOW, 32, 1}, {{"heat_zwindowf32", 2, 0}, HEAT_ZWINDOW, 32, 1},
    {{"heat_pairs_nt", 1, 0}, HEAT_WIDE_NT, 0, 0, 2}, {{"heat_pairs_nt", 2, 0}, HEAT_WIDE_NT, 0, 0, 2},
    {{"heat_pairs_nt", 4, 0}, HEAT_WIDE_NT, 0, 0, 2},
    {{"heat_pairs_ntf", 1, 0}, HEAT_WIDE_NT, 0, 1, 2, 0, 0, UNTUNED},
    {{"heat_pairs_ntf", 2, 0}, HEAT_WIDE_NT, 0, 1, 2, 0, 0, UNTUNED},
    {{"heat_pairs_ntf", 4, 0}, HEAT_WIDE_NT, 0, 1, 2, 0, 0, UNTUNED},
    {{"heat_quads_nt", 1, 0}, HEAT_WIDE_NT, 0, 0, 4, 0, 0, UNTUNED},
    {{"heat_quads_nt", 2, 0}, HEAT_WIDE_NT, 0, 0, 4, 0, 0, UNTUNED},
    {{"heat_quads_ntf", 1, 0}, HEAT_WIDE_NT, 0, 1, 4, 0, 0, UNTUNED},
    {{"heat_quads_ntf", 2, 0}, HEAT_WIDE_NT, 0, 1, 4, 0, 0, UNTUNED},
    {{"heat_pairs_ntx", 1, 0}, HEAT_WIDE_NT, 0, 2, 2}, {{"heat_pairs_ntx", 2, 0}, HEAT_WIDE_NT, 0, 2, 2},
    {{"heat_pairs_ntx", 4, 0}, HEAT_WIDE_NT, 0, 2, 2},
    {{"heat_zpairsf32", 1, 0}, HEAT_WIDE_NT, 32, 1, 2, 0, 0, UNTUNED},
    {{"heat_zpairsf32", 2, 0}, HEAT_WIDE_NT, 32, 1, 2, 0, 0, UNTUNED},
    {{"heat_zquadsf32", 1, 0}, HEAT_WIDE_NT, 32, 1, 4, 0, 0, UNTUNED},
    {{"heat_zquadsf32", 2, 0}, HEAT_WIDE_NT, 32, 1, 4, 0, 0, UNTUNED},
    {{"heat_zahead1", 2, 0}, HEAT_ZAHEAD, 32, 2, 1, 1}, {{"heat_zahead1z16", 2, 0}, HEAT_ZAHEAD, 16, 2, 1, 1},
    {{"heat_zahead1r", 2, 0}, HEAT_ZAHEAD, 32, 2, 1, 1, 1, UNTUNED},
    {{"heat_zahead1z16r", 2, 0}, HEAT_ZAHEAD, 16, 2, 1, 1, 1, UNTUNED},
    {{"heat_zahead1z8r", 2, 0}, HEAT_ZAHEAD, 8, 2, 1, 1, 1, UNTUNED},
    {{"heat_zwindowf32r", 2, 0}, HEAT_ZWINDOW, 32, 1, 0, 0, 1, UNTUNED_FLOAT},
    {{"heat_zwindowf16r", 2, 0}, HEAT_ZWINDOW, 16, 1, 0, 0, 1, UNTUNED_FLOAT},
    {{"heat_zwindowf8r", 2, 0}, HEAT_ZWINDOW, 8, 1, 0, 0, 1, UNTUNED},
    {{"heat_zwindow16r", 2, 0}, HEAT_ZWINDOW, 16, 0, 0, 0, 1},
    /* every ghost made on the fly: no halo pass before them */
    {{"heat_zwindowg64r", 2, 0}, HEAT_ZWINDOW, 64, 3, 0, 0, 1}, {{"heat_zwindowg32r", 2, 0}, HEAT_ZWINDOW, 32, 3, 0, 0, 1},
    {{"heat_zwindowg16r", 2, 0}, HEAT_ZWINDOW, 16, 3, 0, 0, 1}, {{"heat_zwindowg8r", 2, 0}, HEAT_ZWINDOW, 8, 3, 0, 0, 1},
    /* the same march with 4 points along x a thread: 16-byte rows in float */
    {{"heat_zwide4g8r", 1, 0}, HEAT_ZWIDEG, 8, 3, 4, 0, 1, UNTUNED_DOUBLE},
    {{"heat_zwide4g8r", 2, 0}, HEAT_ZWIDEG, 8, 3, 4, 0, 1, UNTUNED_DOUBLE},
    {{"heat_zwide4g32r", 2, 0}, HEAT_ZWIDEG, 32, 3, 4, 0, 1, UNTUNED_DOUBLE},
    /* and with 2 doubles a thread as one 16-byte row, double's rows as float's 4 (in float 8-byte rows,
     * slower than 4 floats) */
    {{"heat_zwide2g8r", 1, 0}, HEAT_ZWIDEG, 8, 3, 2, 0, 1, UNTUNED_FLOAT},
    {{"heat_zwide2g8r", 2, 0}, HEAT_ZWIDEG, 8, 3, 2, 0, 1, UNTUNED_FLOAT},
    {{"heat_zwide2g16r", 2, 0}, HEAT_ZWIDEG, 16, 3, 2, 0, 1, UNTUNED_FLOAT},
    {{"heat_zwide2g32r", 1, 0}, HEAT_ZWIDEG, 32, 3, 2, 0, 1, UNTUNED_FLOAT},
    {{"heat_zwide2g32r", 2, 0}, HEAT_ZWIDEG, 32, 3, 2, 0, 1, UNTUNED_FLOAT},
    /* the same marches turning: up the field, then down, in turn (two doubles a thread spill 36 bytes
     * down the field under the 8-block cap: out of the tuner's timing) */
    {{"heat_zwide2g8tr", 1, 0}, HEAT_ZWIDEG, 8, 3, 2, 0, 1, UNTUNED, 1},
    {{"heat_zwide2g16tr", 1, 0}, HEAT_ZWIDEG, 16, 3, 2, 0, 1, UNTUNED, 1},
    {{"heat_zwide2g32tr", 1, 0}, HEAT_ZWIDEG, 32, 3, 2, 0, 1, UNTUNED, 1},
    {{"heat_zwide4g8tr", 1, 0}, HEAT_ZWIDEG, 8, 3, 4, 0, 1, 0, 1},
    {{"heat_zwide4g16tr", 1, 0}, HEAT_ZWIDEG, 16, 3, 4, 0, 1, 0, 1},
    {{"heat_zwide4g32tr", 2, 0}, HEAT_ZWIDEG, 32, 3, 4, 0, 1, UNTUNED_DOUBLE, 1},
};
enum { KERNEL_COUNT = sizeof kernel_table / sizeof kernel_table[0] };


template <typename T, int W, int M>
static void launch_wide(const kernel_entry *e, dim3 g, dim3 b, T *out, const T *in, const stencil_shape &p,
                        const stencil_coeffs<T> &c, const halo_coeffs<T> &h, hipStream_t q)
{
    if (e->zchunk > 0) { /* the table's marching ones are all fused */
        if constexpr (M <= 2) heat_zwide<T, W, M, 1><<<g, b, 0, q>>>(out, in, p, c, h, e->zchunk);
    } else if (e->fused == 1) heat_wide_nt<T, W, M, 1><<<g, b, 0, q>>>(out, in, p, c, h);
    else if (e->fused == 2) heat_wide_nt<T, W, M, 2><<<g, b, 0, q>>>(out, in, p, c, h);
    else heat_wide_nt<T, W, M, 0><<<g, b, 0, q>>>(out, in, p, c, h);
}

/* Blocks of `kernel` at `threads` a block resident on the whole GPU at once;
 * asked of the runtime once a kernel and block size (the table behind a lock:
 * launches may come from more than one host thread). */
int resident_slots(const void *kernel, int threads, long *slots)
{
    static std::mutex lock;
    std::lock_guard<std::mutex> held(lock);
    static struct {
        const void *kernel;
        int threads;
        long slots;
    } known[64];
    static int count;
    for (int n = 0; n < count; ++n)
        if (known[n].kernel == kernel && known[n].threads == threads) return *slots = known[n].slots, HEAT_OK;
    int device = 0, sms = 0, per_sm = 0;
    HIP_CALL(hipGetDevice(&device));
    HIP_CALL(hipDeviceGetAttribute(&sms, hipDeviceAttributeMultiprocessorCount, device));
    HIP_CALL(hipOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, 0));
    *slots = (long)sms * (per_sm > 0 ? per_sm : 1);
    if (count < (int)(sizeof known / sizeof known[0])) known[count++] = {kernel, threads, *slots};
    return HEAT_OK;
}

/* The march_order of a marching grid (x tiles, y tiles, z chunks) whose
 * `slots` blocks are resident at once. Two kinds of chunk faces are read
 * twice from DRAM: where a stream's first chunk meets the stream before it
 * (streams - 1 of the chunks' faces), and, when fewer columns march at once
 * (group x streams) than there are slots, the blocks started beside their
 * column's chunk before (a fraction 1 - group x streams / slots of them). The
 * order with the fewest, and of those the fewest groups (whose rows beside
 * the next group's are read twice). */
march_order order_for(dim3 grid, long slots)
{
    const long columns = (long)grid.x * grid.y, fewest = (columns + slots - 1) / slots;
    march_order o = {(int)columns, 1};
    double least = 1e300;
    for (long groups = fewest; groups <= columns && groups < fewest + 8; ++groups) {
        const long group = (columns + groups - 1) / groups;
        for (long p = 1; p <= (long)grid.z && group * p <= slots; ++p) {
            if (grid.z % p != 0) continue;
            const double twice = (double)(p - 1) / grid.z + 1.0 - (double)(group * p) / slots;
            if (twice < least - 1e-9) least = twice, o = {(int)group, (int)p};
        }
    }
    return o;
}

/* Kernel k's launch in the entry's block order: march_order of the grid, or the grid's own. */
template <typename K, typename... A>
static int launch_marching(const kernel_entry *e, K kernel, dim3 g, dim3 b, hipStream_t q, A... args)
{
    march_order o = {(int)(g.x * g.y), 1};
    if (e->ordered) {
        long slots = 0;
        HEAT_CALL(resident_slots((const void *)kernel, (int)(b.x * b.y * b.z), &slots));
        o = order_for(g, slots);
    }
    kernel<<<g, b, 0, q>>>(args..., o);
    return HEAT_OK;
}

/* The table's heat_zahead entries (one point and M = 2 rows a thread, one plane ahead): only these are compiled. */
template <typename T, int M>
static int launch_zahead(const kernel_entry *e, dim3 g, dim3 b, T *out, const T *in, const stencil_shape &p,
                         const stencil_coeffs<T> &c, const halo_coeffs<T> &h, hipStream_t q)
{
    if constexpr (M == 2)
        if (e->width == 1 && e->ahead == 1)
            return e->ordered ? launch_marching(e, heat_zahead<T, 1, M, 1, true>, g, b, q, out, in, p, c, h, e->zchunk)
                              : launch_marching(e, heat_zahead<T, 1, M, 1, false>, g, b, q, out, in, p, c, h, e->zchunk);
    return HEAT_OK;
}

/* The field seen from its top, for a march down it (heat_zwideg's MIRRORED): plane k of the launch is
 * plane nz - 1 - k of the field, the z faces' ghost rules swapped. */
template <typename T> static void mirror_z(T *&out, const T *&in, stencil_shape &p, halo_coeffs<T> &h)
{
    const long top = (long)(p.nz - 1) * p.sz;
    out += top, in += top, p.sz = -p.sz;
    std::swap(h.shift[FACE_Z_LOW], h.shift[FACE_Z_HIGH]), std::swap(h.scale[FACE_Z_LOW], h.scale[FACE_Z_HIGH]);
    const unsigned low = h.exchanged >> FACE_Z_LOW & 1u, high = h.exchanged >> FACE_Z_HIGH & 1u;
    h.exchanged = (h.exchanged & ~(1u << FACE_Z_LOW | 1u << FACE_Z_HIGH)) | low << FACE_Z_HIGH | high << FACE_Z_LOW;
}

/* A heat_zwideg entry of W points a thread, marching up the field or (down) down it. One 16-byte row a
 * thread is held to 8 blocks an SM (32 registers, no spills); wider work a thread would spill there. */
template <typename T, int W, int M>
static int launch_zwideg_wide(const kernel_entry *e, dim3 g, dim3 b, T *out, const T *in, stencil_shape p,
                              const stencil_coeffs<T> &c, halo_coeffs<T> h, bool down, hipStream_t q)
{
    constexpr int blocks_per_sm = M == 1 && W * sizeof(T) == 16 ? HEAT_FUSED_OCCUPANCY : 0;
    if (!down) return launch_marching(e, heat_zwideg<T, W, M, true, blocks_per_sm>, g, b, q, out, in, p, c, h, e->zchunk);
    mirror_z(out, in, p, h);
    return launch_marching(e, heat_zwideg<T, W, M, true, blocks_per_sm, true>, g, b, q, out, in, p, c, h, e->zchunk);
}

/* The table's heat_zwideg entries: 4 or 2 points a thread, one or two rows; a turning entry's odd
 * launches march down the field, beginning where the launch before ended (march_order's last blocks
 * are its streams' top chunks, a mirrored launch's first ones the same chunks). */
template <typename T, int M>
static int launch_zwideg(const hip_state *s, const kernel_entry *e, dim3 g, dim3 b, T *out, const T *in,
                         const stencil_shape &p, const stencil_coeffs<T> &c, const halo_coeffs<T> &h, hipStream_t q)
{
    const bool down = e->turning && s->turning_launches++ % 2 == 1;
    if constexpr (M <= 2) {
        if (e->width == 4) return launch_zwideg_wide<T, 4, M>(e, g, b, out, in, p, c, h, down, q);
        if (e->width == 2) return launch_zwideg_wide<T, 2, M>(e, g, b, out, in, p, c, h, down, q);
    }
    return HEAT_OK;
}

template <typename T, int M>
static int launch_zwindow(const kernel_entry *e, dim3 g, dim3 b, T *out, const T *in, const stencil_shape &p,
                          const stencil_coeffs<T> &c, const halo_coeffs<T> &h, hipStream_t q)
{
    if constexpr (M == 2) /* the table's ordered entries */
        if (e->ordered) {
            if (e->fused == GHOSTS_MADE)
                return launch_marching(e, heat_zwindow<T, M, GHOSTS_MADE, true>, g, b, q, out, in, p, c, h, e->zchunk);
            return e->fused
                       ? launch_marching(e, heat_zwindow<T, M, GHOSTS_WRITTEN, true>, g, b, q, out, in, p, c, h, e->zchunk)
                       : launch_marching(e, heat_zwindow<T, M, GHOSTS_READ, true>, g, b, q, out, in, p, c, h, e->zchunk);
        }
    return e->fused ? launch_marching(e, heat_zwindow<T, M, GHOSTS_WRITTEN, false>, g, b, q, out, in, p, c, h, e->zchunk)
                    : launch_marching(e, heat_zwindow<T, M, GHOSTS_READ, false>, g, b, q, out, in, p, c, h, e->zchunk);
}

template <typename T, int M>
static int launch_tiled(const kernel_entry *e, dim3 g, dim3 b, T *out, const T *in, const hip_state *s,
                        const stencil_shape &p, unsigned cut, hipStream_t q)
{
    stencil_coeffs<T> c = cast_coeffs<T>(s->coeffs);
    halo_coeffs<T> h = cast_halo<T>(s);
    h.exchanged |= cut;
    switch (e->kind) {
    case LAP_TILED: lap_tiled<T, M><<<g, b, 0, q>>>(out, in, p, c, h); break;
    case LAP_TILED_NT: lap_tiled_nt<T, M><<<g, b, 0, q>>>(out, in, p, c, h); break;
    case HEAT_TILED: heat_tiled<T, M><<<g, b, 0, q>>>(out, in, p, c, h); break;
    case HEAT_TILED_NT:
        if (e->fused) heat_tiled_nt<T, M, true><<<g, b, 0, q>>>(out, in, p, c, h);
        else heat_tiled_nt<T, M, false><<<g, b, 0, q>>>(out, in, p, c, h);
        break;
    case HEAT_ZWINDOW: return launch_zwindow<T, M>(e, g, b, out, in, p, c, h, q);
    case HEAT_WIDE_NT:
        if constexpr (M <= 4) /* the table's tiles: registers grow with M x W */
            if (e->width == 2) launch_wide<T, 2, M>(e, g, b, out, in, p, c, h, q);
        if constexpr (M <= 2)
            if (e->width == 4) launch_wide<T, 4, M>(e, g, b, out, in, p, c, h, q);
        break;
    case HEAT_ZAHEAD: return launch_zahead<T, M>(e, g, b, out, in, p, c, h, q);
    case HEAT_ZWIDEG: return launch_zwideg<T, M>(s, e, g, b, out, in, p, c, h, q);
    case LAP_BASELINE: lap_baseline<T><<<g, b, 0, q>>>(out, in, p, c); break;
    case ORDER_POINT:
    case ORDER_ZWINDOW: break; /* launch_order's */
    }
    return HEAT_OK;
}

/* Kernel e over the whole block, or over the planes r of it. */
template <typename T>
static int launch_typed(const hip_state *s, const kernel_entry *e, const int shape[3], int from, int to,
                        const plane_range *r, hipStream_t q)
{
    if (e->kind == ORDER_POINT || e->kind == ORDER_ZWINDOW) return launch_order<T>(s, e, shape, from, to, q);
    stencil_shape p = s->shape;
    long offset = 0;
    if (r) {
        if (r->count <= 0) return HEAT_OK;
        p.nz = r->count;
        offset = (long)r->first * p.sz;
    }
    const bool marching = e->zchunk > 0; /* heat_zwindow, heat_zwide, heat_zahead, heat_zwideg: one block along z a chunk */
    dim3 block((unsigned)shape[0], (unsigned)shape[1], marching ? 1u : (unsigned)shape[2]);
    stencil_shape threads = p; /* points along x that get a thread of their own */
    if (e->kind == HEAT_WIDE_NT || e->kind == HEAT_ZAHEAD || e->kind == HEAT_ZWIDEG)
        threads.nx = (p.nx + e->width - 1) / e->width;
    dim3 grid = grid_for(threads, block, e->variant.tile, marching ? e->zchunk : 0);
    T *out = owned<T>(s, to) + offset;
    const T *in = owned<T>(s, from) + offset;
    unsigned cut = r ? r->cut : 0u;
    switch (e->variant.tile) {
    case 1: HEAT_CALL((launch_tiled<T, 1>(e, grid, block, out, in, s, p, cut, q))); break;
    case 2: HEAT_CALL((launch_tiled<T, 2>(e, grid, block, out, in, s, p, cut, q))); break;
    case 4: HEAT_CALL((launch_tiled<T, 4>(e, grid, block, out, in, s, p, cut, q))); break;
    case 8:
        if (e->kind != HEAT_ZWINDOW) HEAT_CALL((launch_tiled<T, 8>(e, grid, block, out, in, s, p, cut, q)));
        break;
    case 16:
        if (e->kind != HEAT_ZWINDOW) HEAT_CALL((launch_tiled<T, 16>(e, grid, block, out, in, s, p, cut, q)));
        break;
    default: return heat_error(HEAT_ERR_CONFIG, "solver.tile = %d: expected 1, 2, 4, 8 or 16", e->variant.tile);
    }
    HIP_CHECK_LAUNCH(e->variant.kernel);
    return HEAT_OK;
}

int launch(const hip_state *s, const kernel_entry *e, const int shape[3], int from, int to, const plane_range *r,
           hipStream_t q)
{
    return s->problem.precision == HEAT_FLOAT ? launch_typed<float>(s, e, shape, from, to, r, q)
                                              : launch_typed<double>(s, e, shape, from, to, r, q);
}

/* The boundary ghosts of the current field: all six faces (HALO_ALL), or
 * the y and z faces only (HALO_YZ), whose stores are whole rows, for kernels
 * that make the x ghosts on the fly (one strided store a row otherwise). */
template <typename T> static int fill_halo_typed(hip_state *s, int faces)
{
    halo_coeffs<T> h = cast_halo<T>(s);
    const stencil_shape &p = s->shape;
    const int first = faces == HALO_YZ ? FACE_Y_LOW : FACE_X_LOW;
    dim3 block(32, 8, 1);
    int along_a = std::max(p.nx, p.ny), along_b = std::max(p.ny, p.nz);
    dim3 grid((unsigned)((along_a + 31) / 32), (unsigned)((along_b + 7) / 8), (unsigned)(FACE_COUNT - first));
    halo_fill<T><<<grid, block>>>(owned<T>(s, s->current), p, h, first);
    HIP_CHECK_LAUNCH("halo_fill");
    s->halo_valid = faces;
    return HEAT_OK;
}

/* Order kernels mirror across the boundary faces as they read: nothing to fill. */
int fill_halo(hip_state *s, int faces)
{
    if (s->space.radius > 1) {
        s->halo_valid = HALO_ALL;
        return HEAT_OK;
    }
    return s->problem.precision == HEAT_FLOAT ? fill_halo_typed<float>(s, faces) : fill_halo_typed<double>(s, faces);
}

/* The ghosts kernel e reads and does not make itself. */
int fill_halo_for(hip_state *s, const kernel_entry *e) { return fill_halo(s, e->fused ? HALO_YZ : HALO_ALL); }

/* ---- tuning ---------------------------------------------------------------------------------------- */

/* A heat step of the production table (order 2) or of the order kernels'. */
const kernel_entry *find_kernel(const char *name, int tile)
{
    for (const kernel_entry &e : kernel_table)
        if (strcmp(e.variant.kernel, name) == 0 && e.variant.tile == tile) return &e;
    return find_order_kernel(name, tile);
}

/* Is e a step of the run's order? */
static int kernel_fits_order(const hip_state *s, const kernel_entry *e)
{
    return (s->space.radius > 1) == (e->kind == ORDER_POINT || e->kind == ORDER_ZWINDOW);
}

/* Any variant the benchmark lists: a seed's Laplacian or a heat step. */
static const kernel_entry *find_variant(const char *name, int tile)
{
    for (const kernel_entry &e : seed_table)
        if (strcmp(e.variant.kernel, name) == 0 && e.variant.tile == tile) return &e;
    return find_kernel(name, tile);
}

/* One launch of e from the current field into the other; while the tuner has the solution aside
 * (tuning_aside), the other becomes the current one, as a run steps. */
static int launch_timed(hip_state *s, const kernel_entry *e, const int shape[3])
{
    HEAT_CALL(launch(s, e, shape, s->current, 1 - s->current));
    if (s->tuning_aside) s->current = 1 - s->current, s->halo_valid = HALO_NONE;
    return HEAT_OK;
}

/* Device time of one launch of e (out of place: the solution is untouched, or set aside by the tuner);
 * with_halo: a whole step, the halo pass included where e needs one. */
static int time_launch(hip_state *s, const kernel_entry *e, const int shape[3], int with_halo, float *ms)
{
    HIP_CALL(hipEventRecord(s->start, 0));
    if (with_halo && e->fused != GHOSTS_WRITTEN && e->fused != GHOSTS_MADE) HEAT_CALL(fill_halo_for(s, e));
    HEAT_CALL(launch_timed(s, e, shape));
    HIP_CALL(hipEventRecord(s->stop, 0));
    HIP_CALL(hipEventSynchronize(s->stop));
    HIP_CALL(hipEventElapsedTime(ms, s->start, s->stop));
    return HEAT_OK;
}

/* Median device time of `reps` launches of e after a warm-up (time_launch). */
int time_kernel(hip_state *s, const kernel_entry *e, const int shape[3], int reps, int with_halo, double *ms)
{
    std::vector<float> times((size_t)reps);
    HEAT_CALL(launch_timed(s, e, shape)); /* warm-up */
    for (int r = 0; r < reps; ++r) HEAT_CALL(time_launch(s, e, shape, with_halo, &times[(size_t)r]));
    std::sort(times.begin(), times.end());
    *ms = times[(size_t)reps / 2];
    return HEAT_OK;
}

enum { TUNE_BLOCKS = 3 }; /* the first three shapes take part in start-up tuning */

/* Tuning cache (solver/tuning_cache.h): one line per device, size and precision
 * (and space order above 2):
 * "<device>\t<nx>x<ny>x<nz>\t<precision>[\torder <N>]\t<kernel>\t<tile>\t<bx>,<by>,<bz>". */
void cache_key(const hip_state *s, char *buf, size_t len)
{
    const int *n = s->problem.grid.n;
    snprintf(buf, len, "%s\t%dx%dx%d\t%s", s->device_model, n[0], n[1], n[2], heat_precision_name(s->problem.precision));
    size_t used = strlen(buf);
    if (s->space.radius > 1) snprintf(buf + used, len - used, "\torder %d", 2 * s->space.radius);
}

static int cache_lookup(hip_state *s)
{
    char key[256], value[256], name[64];
    int tile, b[3];
    cache_key(s, key, sizeof key);
    if (!tuning_cache_lookup(key, value, sizeof value)) return 0;
    if (sscanf(value, "%63s %d %d,%d,%d", name, &tile, &b[0], &b[1], &b[2]) != 5) return 0;
    const kernel_entry *e = find_kernel(name, tile);
    if (!e || !kernel_fits_order(s, e)) return 0;
    const order_entry *o = order_of(e);
    if (o && o->shape >= 0) memcpy(b, order_shapes[o->shape].block, sizeof b); /* its own, up to 512 threads */
    else if (b[0] <= 0 || b[1] <= 0 || b[2] <= 0 || b[0] * b[1] * b[2] > HEAT_LAUNCH_BOUND) return 0;
    s->kernel = e, memcpy(s->block, b, sizeof s->block);
    return 1;
}

static void cache_store(const hip_state *s)
{
    char key[256], value[128];
    cache_key(s, key, sizeof key);
    snprintf(value, sizeof value, "%s\t%d\t%d,%d,%d", s->kernel->variant.kernel, s->kernel->variant.tile, s->block[0],
             s->block[1], s->block[2]);
    tuning_cache_store(key, value);
}

/* A kernel, tile and block shape of the start-up tuning, and its time. */
struct tune_candidate {
    const kernel_entry *entry;
    const int *shape;
    double ms;
};

/* The first pass times each candidate's median of TUNE_REPS launches; the candidates within
 * REFINE_WITHIN of the fastest (REFINE_MOST at most) are then timed REFINE_REPS launches more each,
 * taken in turn (each timed launch after an untimed one of its own), and the fastest median wins: three launches alone picked a chunk length 1-2%
 * slower at times, and in turn a drift of the machine's clocks weighs on them all alike. */
enum { TUNE_REPS = 3, REFINE_REPS = 9, REFINE_MOST = 6 };
static const double REFINE_WITHIN = 0.03;

/* The fastest of the first pass's candidates (ms), timed again in turn against its close rivals. */
static int refine_choice(hip_state *s, std::vector<tune_candidate> &all, double *best)
{
    std::sort(all.begin(), all.end(), [](const tune_candidate &a, const tune_candidate &b) { return a.ms < b.ms; });
    size_t close = 1;
    while (close < all.size() && close < REFINE_MOST && all[close].ms <= all[0].ms * (1.0 + REFINE_WITHIN)) ++close;
    std::vector<std::vector<float>> times(close, std::vector<float>(REFINE_REPS));
    for (int r = 0; r < REFINE_REPS && close > 1; ++r)
        for (size_t c = 0; c < close; ++c) { /* each timed launch after one of its own, as a run's steps follow */
            HEAT_CALL(launch_timed(s, all[c].entry, all[c].shape));
            HEAT_CALL(time_launch(s, all[c].entry, all[c].shape, 1, &times[c][(size_t)r]));
        }
    size_t chosen = 0;
    if (close > 1) {
        for (size_t c = 0; c < close; ++c) {
            std::sort(times[c].begin(), times[c].end());
            all[c].ms = times[c][REFINE_REPS / 2];
            if (all[c].ms < all[chosen].ms) chosen = c;
        }
    }
    s->kernel = all[chosen].entry, memcpy(s->block, all[chosen].shape, sizeof s->block);
    *best = all[chosen].ms;
    return HEAT_OK;
}

/* The solution set aside while the tuner steps as a run does, each launch reading the one before's
 * output: a launch that reads what the one before wrote times otherwise than one that reads the same
 * input again (what L2 holds at its start; which way a turning march runs), by several percent on the
 * H200. Where the device has no room for the copy, the tuner times out of place (tuning_aside NULL). */
static int set_solution_aside(hip_state *s)
{
    const size_t bytes = (size_t)s->layout.total * s->elem;
    if (hipMalloc(&s->tuning_aside, bytes) != hipSuccess) {
        (void)hipGetLastError(); /* the failed allocation is no error of the run */
        s->tuning_aside = NULL;
        return HEAT_OK;
    }
    HIP_CALL(hipMemcpy(s->tuning_aside, s->field[s->current], bytes, hipMemcpyDeviceToDevice));
    return HEAT_OK;
}

/* The solution back in field `current` with its halo state, the copy freed. */
static int restore_solution(hip_state *s, int current, int halo_valid)
{
    if (!s->tuning_aside) return HEAT_OK;
    s->current = current, s->halo_valid = halo_valid;
    HIP_CALL(hipMemcpy(s->field[current], s->tuning_aside, (size_t)s->layout.total * s->elem, hipMemcpyDeviceToDevice));
    HIP_CALL(hipFree(s->tuning_aside));
    s->tuning_aside = NULL;
    return HEAT_OK;
}

/* Fastest of the candidate heat kernels, tiles and block shapes (tune_by_timing). */
static int time_candidates(hip_state *s, double *best)
{
    const heat_kernel_choice &want = s->problem.kernel;
    int fixed_block = want.block[0] > 0;
    const int automatic_name = strcmp(want.name, "auto") == 0;
    std::vector<tune_candidate> timed;
    *best = 1e300;
    for (int i = 0; i < (s->space.radius > 1 ? (int)ORDER_COUNT : (int)KERNEL_COUNT); ++i) {
        const kernel_entry &e = s->space.radius > 1 ? order_table[i].entry : kernel_table[i];
        if (strcmp(want.name, "auto") != 0 && strcmp(want.name, e.variant.kernel) != 0) continue;
        if (want.tile > 0 && want.tile != e.variant.tile) continue;
        if (automatic_name && (e.untuned & (s->problem.precision == HEAT_FLOAT ? UNTUNED_FLOAT : UNTUNED_DOUBLE)))
            continue;
        const int own_shape = s->space.radius > 1 && order_table[i].shape >= 0;
        if (own_shape && fixed_block && memcmp(want.block, order_block(&e, NULL), sizeof want.block) != 0) continue;
        for (int c = 0; c < (fixed_block || own_shape ? 1 : TUNE_BLOCKS); ++c) {
            const int *shape = own_shape ? order_block(&e, NULL) : fixed_block ? want.block : block_candidates[c];
            double ms;
            HEAT_CALL(time_kernel(s, &e, shape, TUNE_REPS, 1, &ms));
            timed.push_back({&e, shape, ms});
        }
    }
    return timed.empty() ? HEAT_OK : refine_choice(s, timed, best);
}

/* Fastest of the candidate heat kernels, tiles and block shapes, timed on the actual problem stepping as
 * a run does (the solution set aside and restored), or out of place. */
static int tune_by_timing(hip_state *s, double *best)
{
    const int current = s->current, halo_valid = s->halo_valid;
    HEAT_CALL(set_solution_aside(s));
    const int status = time_candidates(s, best);
    const int restored = restore_solution(s, current, halo_valid);
    return status != HEAT_OK ? status : restored;
}

/* Picks kernel, tile and block: solver.kernel / tile / block where given,
 * else the tuning cache, else timing. Prints the choice. */
int tune(hip_state *s)
{
    const heat_kernel_choice &want = s->problem.kernel;
    int automatic = strcmp(want.name, "auto") == 0 && want.tile == 0 && want.block[0] == 0;
    HEAT_CHECK(!want.block[0] || (want.block[0] * want.block[1] * want.block[2] <= HEAT_LAUNCH_BOUND &&
                                  want.block[1] > 0 && want.block[2] > 0),
               "solver.block must have 3 positive sizes with a product <= %d", (int)HEAT_LAUNCH_BOUND);
    double best = 0.0;
    const char *how = "from the tuning cache";
    if (!(automatic && cache_lookup(s))) {
        if (s->halo_valid != HALO_ALL) HEAT_CALL(fill_halo(s));
        HEAT_CALL(tune_by_timing(s, &best));
        how = automatic ? "fastest measured" : "fastest measured within solver.kernel / tile / block";
    }
    if (!s->kernel && s->space.radius > 1)
        return heat_error(HEAT_ERR_CONFIG, "solver.kernel = \"%s\" with solver.tile = %d names no kernel of space order %d; "
                          "use auto, order_point (tile 1) or order_zwindow<64|128>_<32x8|32x16> (tile 2; "
                          "heatsolve bench --order %d lists them)",
                          want.name, want.tile, 2 * s->space.radius, 2 * s->space.radius);
    if (!s->kernel)
        return heat_error(HEAT_ERR_CONFIG, "solver.kernel = \"%s\" with solver.tile = %d names no heat kernel; use auto, "
                          "heat_tiled, heat_tiled_nt, heat_tiled_ntf (tile 1-16), heat_zwindow32/64/128 (tile 1, 2, 4) or "
                          "heat_zwindowf32 (tile 1, 2), heat_pairs_nt or heat_pairs_ntf (tile 1, 2, 4), heat_quads_nt, heat_quads_ntf, "
                          "heat_pairs_ntx (tile 1, 2, 4), heat_zpairsf32 or heat_zquadsf32 (tile 1, 2), heat_zahead1 or "
                          "heat_zahead1z16 (tile 2), heat_zahead1r, heat_zahead1z16r, heat_zahead1z8r, heat_zwindowf32r, "
                          "heat_zwindowf16r, heat_zwindowf8r, heat_zwindow16r, heat_zwindowg64r, heat_zwindowg32r, "
                          "heat_zwindowg16r or heat_zwindowg8r (tile 2), heat_zwide4g8r, heat_zwide2g8r or heat_zwide2g32r "
                          "(tile 1, 2), heat_zwide4g32r or heat_zwide2g16r (tile 2), heat_zwide2g8tr, heat_zwide2g16tr, "
                          "heat_zwide2g32tr, heat_zwide4g8tr or heat_zwide4g16tr (tile 1), heat_zwide4g32tr (tile 2)",
                          want.name, want.tile);
    if (automatic && best > 0.0) cache_store(s);
    snprintf(s->description, sizeof s->description, "%s m=%d block %dx%dx%d (%s)", s->kernel->variant.kernel,
             s->kernel->variant.tile, s->block[0], s->block[1], s->block[2], how);
    if (!s->problem.quiet) printf("GPU kernel choice: %s\n", s->description);
    return HEAT_OK;
}

/* ---- buffers the halo transport moves ------------------------------------------------------------ */

/* A field, CG vector or packed face: from the transport's allocator where it
 * has one (NCCL's, registered for direct transfers between GPUs), else
 * hipMalloc. */
int exchanged_alloc(hip_state *s, void **buffer, size_t bytes)
{
    const heat_halo_transport *t = &s->transport;
    *buffer = NULL;
    if (t->alloc_device) HEAT_CALL(t->alloc_device(t->context, buffer, bytes));
    if (!*buffer) HIP_CALL(hipMalloc(buffer, bytes));
    return HEAT_OK;
}

void exchanged_free(hip_state *s, void *buffer)
{
    const heat_halo_transport *t = &s->transport;
    if (buffer && !(t->free_device && t->free_device(t->context, buffer))) (void)hipFree(buffer);
}

/* ---- backend operations --------------------------------------------------------------------------- */

static void hip_destroy(void **state)
{
    if (!state || !*state) return;
    hip_state *s = static_cast<hip_state *>(*state);
    /* Teardown cannot report failures: results are already out. */
    exchanged_free(s, s->field[0]);
    exchanged_free(s, s->field[1]);
    (void)hipFree(s->d_partials);
    for (int f = 0; f < FACE_COUNT; ++f) {
        exchanged_free(s, s->d_send.at[f]), exchanged_free(s, s->d_recv.at[f]);
        if (s->h_send[f]) (void)hipHostFree(s->h_send[f]);
        if (s->h_recv[f]) (void)hipHostFree(s->h_recv[f]);
    }
    free_cg(s);
    free_materials(s);
    free_deep_halo(s);
    heat_reduction_free(&s->reduction);
    if (s->snapshot_pending) (void)hipEventSynchronize(s->snapshot_done);
    if (s->comm) (void)hipStreamSynchronize(s->comm), (void)hipStreamDestroy(s->comm);
    if (s->default_ready) (void)hipEventDestroy(s->default_ready);
    if (s->boundary_done) (void)hipEventDestroy(s->boundary_done);
    if (s->arrived) (void)hipEventDestroy(s->arrived);
    (void)hipFree(s->snapshot);
    if (s->copy_stream) (void)hipStreamDestroy(s->copy_stream);
    if (s->snapshot_taken) (void)hipEventDestroy(s->snapshot_taken);
    if (s->snapshot_done) (void)hipEventDestroy(s->snapshot_done);
    if (s->start) (void)hipEventDestroy(s->start);
    if (s->stop) (void)hipEventDestroy(s->stop);
    delete s;
    *state = NULL;
}

static int describe_device(hip_state *s, size_t *free_bytes)
{
    hipDeviceProp_t prop;
    size_t total_bytes;
    /* Ranks on a node share its GPUs round-robin by their node-local rank. */
    int count = 1;
    HIP_CALL(hipGetDeviceCount(&count));
    int device = s->problem.halo.device % (count > 0 ? count : 1);
    HIP_CALL(hipSetDevice(device));
    HIP_CALL(hipGetDeviceProperties(&prop, device));
    HIP_CALL(hipMemGetInfo(free_bytes, &total_bytes));
    snprintf(s->device_model, sizeof s->device_model, "%s", prop.name);
    snprintf(s->device, sizeof s->device, "%s (%.1f GiB, %.1f GiB free, %s)", prop.name, total_bytes / 1073741824.0,
             *free_bytes / 1073741824.0, HEAT_GPU_PLATFORM);
    return HEAT_OK;
}

/* The exchange overlaps the update where it goes GPU to GPU (NCCL on the
 * comm stream; GPU-aware MPI from the host while the update runs) and only z faces
 * are exchanged (whole planes, sent from the field itself), with at least
 * one plane between the two boundary planes on every rank: an overlapping
 * rank exchanges a step's ghosts right after the step before, so the ranks
 * must all overlap or none (a rank stepping otherwise would meet the last
 * exchange of a batch only in the next, after the ranks' agreement: a hang). Its stream has the highest
 * priority: the boundary planes and NCCL's kernel then get SMs as soon as
 * any free up, rather than after the whole interior update (which would
 * leave the exchange exposed). */
static int prepare_overlap(hip_state *s)
{
    const heat_halo *h = &s->problem.halo;
    unsigned z_faces = 1u << FACE_Z_LOW | 1u << FACE_Z_HIGH;
    s->overlap = s->transport.exchange_device && h->exchanged && !(h->exchanged & ~z_faces) &&
                 h->fewest_z_planes >= 3 && !s->transport.serial && s->space.radius == 1;
    if (!s->overlap) return HEAT_OK;
    int least = 0, greatest = 0;
    HIP_CALL(hipDeviceGetStreamPriorityRange(&least, &greatest));
    HIP_CALL(hipStreamCreateWithPriority(&s->comm, hipStreamNonBlocking, greatest));
    HIP_CALL(hipEventCreateWithFlags(&s->default_ready, hipEventDisableTiming));
    HIP_CALL(hipEventCreateWithFlags(&s->boundary_done, hipEventDisableTiming));
    HIP_CALL(hipEventCreateWithFlags(&s->arrived, hipEventDisableTiming));
    return HEAT_OK;
}

/* Device and page-locked host buffers for the faces whose ghosts are exchanged. */
static int allocate_faces(hip_state *s)
{
    const int *n = s->problem.grid.n;
    HEAT_CALL(prepare_overlap(s));
    for (int f = 0; f < FACE_COUNT; ++f) {
        if (!(s->problem.halo.exchanged & 1u << f)) continue;
        s->face_bytes[f] = (size_t)n[0] * n[1] * n[2] / n[f / 2] * s->elem * (size_t)s->space.radius; /* R layers */
        HEAT_CALL(exchanged_alloc(s, &s->d_send.at[f], s->face_bytes[f]));
        HEAT_CALL(exchanged_alloc(s, &s->d_recv.at[f], s->face_bytes[f]));
        if (s->transport.exchange_device) continue; /* no host staging */
        HIP_CALL(hipHostMalloc(&s->h_send[f], s->face_bytes[f], hipHostMallocDefault));
        HIP_CALL(hipHostMalloc(&s->h_recv[f], s->face_bytes[f], hipHostMallocDefault));
    }
    return HEAT_OK;
}

static int allocate_fields(hip_state *s)
{
    size_t free_bytes;
    HEAT_CALL(describe_device(s, &free_bytes));
    size_t field_bytes = (size_t)s->layout.total * s->elem;
    HEAT_CALL(heat_reduction_init(&s->reduction, &s->problem, &s->transport)); /* the stats' bricks, and CG's */
    s->partials.resize(stats_brick_count(s));
    size_t stats_bytes = s->partials.size() * sizeof(block_stats);
    size_t needed = (size_t)(2 + cg_vector_count(&s->problem)) * field_bytes + stats_bytes + (64u << 20);
    if (needed > free_bytes)
        return heat_error(HEAT_ERR_CONFIG, "grid.n = [%d, %d, %d] in %s needs %zu bytes of GPU memory but %s has %zu "
                          "free; reduce grid.n%s or use --backend cpu",
                          s->problem.grid.n[0], s->problem.grid.n[1], s->problem.grid.n[2],
                          heat_precision_name(s->problem.precision), needed, s->device, free_bytes,
                          s->problem.precision == HEAT_DOUBLE ? ", use solver.precision = \"float\"" : "");
    for (int f = 0; f < 2; ++f) {
        HEAT_CALL(exchanged_alloc(s, (void **)&s->field[f], field_bytes));
        HIP_CALL(hipMemset(s->field[f], 0, field_bytes)); /* padding rows are read by tiled threads */
    }
    HIP_CALL(hipMalloc((void **)&s->d_partials, stats_bytes));
    HIP_CALL(hipEventCreate(&s->start));
    HIP_CALL(hipEventCreate(&s->stop));
    if (cg_vector_count(&s->problem) > 0) HEAT_CALL(allocate_cg(s));
    return allocate_faces(s);
}

static int hip_create(const heat_problem *problem, const heat_halo_transport *transport, void **state)
{
    hip_state *s = new (std::nothrow) hip_state();
    HEAT_CHECK(s, "out of memory");
    *state = s;
    s->problem = *problem;
    s->transport = heat_halo_transport_or_none(transport);
    s->elem = heat_precision_size(problem->precision);
    s->space = heat_space_coeffs_make(problem);
    HEAT_CALL(check_order_fits(s));
    s->layout = heat_layout_make_ghost(problem->grid.n, s->elem, HIP_ALIGN_BYTES, HEAT_Y_PAD, s->space.radius);
    s->shape = {problem->grid.n[0], problem->grid.n[1], problem->grid.n[2], s->layout.stride_y, s->layout.stride_z};
    s->coeffs = heat_coeffs_make(problem);
    for (int f = 0; f < FACE_COUNT; ++f) {
        int dirichlet = problem->bc[f].type == HEAT_BC_DIRICHLET;
        s->shift[f] = dirichlet ? 2.0 * problem->bc[f].value : 0.0;
        s->scale[f] = dirichlet ? -1.0 : 1.0;
    }
    if (problem->implicit.scheme != HEAT_EULER)
        snprintf(s->description, sizeof s->description, "CG kernels cg_apply/cheb_step (tile_laplacian m=1, block %d, "
                 "%d planes a thread)", (int)CG_THREADS, (int)CG_ZCHUNK);
    else snprintf(s->description, sizeof s->description, "chosen at the first step by timing");
    HEAT_CALL(allocate_fields(s));
    if (heat_materials_active(problem->materials)) return setup_materials(s);
    return HEAT_OK;
}

/* Host compact rows <-> device padded rows, one plane at a time. */
static int copy_planes(hip_state *s, void *host, int to_device)
{
    const int *n = s->problem.grid.n;
    size_t row = (size_t)n[0] * s->elem, pitch = (size_t)s->layout.stride_y * s->elem;
    char *device = (char *)(s->problem.precision == HEAT_FLOAT ? (void *)owned<float>(s, s->current)
                                                                : (void *)owned<double>(s, s->current));
    for (int k = 0; k < n[2]; ++k) {
        char *d = device + (size_t)k * s->layout.stride_z * s->elem;
        char *h = (char *)host + (size_t)k * n[1] * row;
        if (to_device) HIP_CALL(hipMemcpy2D(d, pitch, h, row, row, (size_t)n[1], hipMemcpyHostToDevice));
        else HIP_CALL(hipMemcpy2D(h, row, d, pitch, row, (size_t)n[1], hipMemcpyDeviceToHost));
    }
    return HEAT_OK;
}

static int hip_upload(void *state, const void *host)
{
    hip_state *s = static_cast<hip_state *>(state);
    s->halo_valid = HALO_NONE;
    s->ghosts_queued = 0; /* a new field: its ghost planes are exchanged at the next step */
    return copy_planes(s, (void *)host, 1);
}
static int hip_download(void *state, void *host) { return copy_planes((hip_state *)state, host, 0); }

/* The device copy of the field that a snapshot leaves from, allocated at the
 * first snapshot; without room for it snapshots stay synchronous. */
static int snapshot_ready(hip_state *s)
{
    if (s->snapshot || s->snapshot_unavailable) return HEAT_OK;
    if (hipMalloc((void **)&s->snapshot, (size_t)s->layout.total * s->elem) != hipSuccess) {
        (void)hipGetLastError();
        s->snapshot = NULL, s->snapshot_unavailable = 1;
        heat_warn("no GPU memory for a copy of the field: checkpoints stop the stepping while they leave the GPU");
        return HEAT_OK;
    }
    HIP_CALL(hipStreamCreateWithFlags(&s->copy_stream, hipStreamNonBlocking));
    HIP_CALL(hipEventCreateWithFlags(&s->snapshot_taken, hipEventDisableTiming));
    HIP_CALL(hipEventCreateWithFlags(&s->snapshot_done, hipEventDisableTiming));
    return HEAT_OK;
}

/* A copy of the field on the device (stream-ordered before any later step
 * can change it; fast, at device bandwidth), then to the host on the copy
 * stream (at PCIe speed, into page-locked memory) while the next steps run. */
static int hip_download_async(void *state, void *host)
{
    hip_state *s = static_cast<hip_state *>(state);
    std::lock_guard<std::mutex> hold(s->snapshot_lock);
    /* With several writes in flight the previous copy may not have been
     * waited for yet: it ends first, since both leave from the one device copy. */
    if (s->snapshot_pending) HIP_CALL(hipEventSynchronize(s->snapshot_done));
    s->snapshot_pending = 0;
    HEAT_CALL(snapshot_ready(s));
    if (!s->snapshot) return copy_planes(s, host, 0);
    size_t bytes = (size_t)s->layout.total * s->elem;
    HIP_CALL(hipMemcpyAsync(s->snapshot, s->field[s->current], bytes, hipMemcpyDeviceToDevice, 0));
    HIP_CALL(hipEventRecord(s->snapshot_taken, 0));
    HIP_CALL(hipStreamWaitEvent(s->copy_stream, s->snapshot_taken, 0));
    const int *n = s->problem.grid.n;
    size_t row = (size_t)n[0] * s->elem, pitch = (size_t)s->layout.stride_y * s->elem;
    size_t first = (size_t)heat_layout_first_owned(&s->layout) * s->elem;
    for (int k = 0; k < n[2]; ++k) {
        const char *d = s->snapshot + first + (size_t)k * s->layout.stride_z * s->elem;
        char *h = (char *)host + (size_t)k * n[1] * row;
        HIP_CALL(hipMemcpy2DAsync(h, row, d, pitch, row, (size_t)n[1], hipMemcpyDeviceToHost, s->copy_stream));
    }
    HIP_CALL(hipEventRecord(s->snapshot_done, s->copy_stream));
    s->snapshot_pending = 1;
    return HEAT_OK;
}

/* Called by the checkpoint writers' threads, in any order: returns once no
 * copy is in flight. A writer whose copy a later one followed waits for that
 * one too (the copies run in order on the copy stream), so its own is whole. */
static int hip_download_wait(void *state)
{
    hip_state *s = static_cast<hip_state *>(state);
    std::lock_guard<std::mutex> hold(s->snapshot_lock);
    if (!s->snapshot_pending) return HEAT_OK;
    HIP_CALL(hipEventSynchronize(s->snapshot_done));
    s->snapshot_pending = 0;
    return HEAT_OK;
}

/* The context, released beside a run's last writes rather than in the
 * runtime's exit handler after main, where it is most of a process's exit
 * time. Teardown cannot report failures: results are already out. */
static void hip_release_device(void) { (void)hipDeviceReset(); }

/* Pageable host memory makes the driver stage every copy through a small
 * pinned buffer, at a fraction of the link's bandwidth. */
static int hip_pin_host(void *, void *host, size_t bytes, int pin)
{
    hipError_t err = pin ? hipHostRegister(host, bytes, hipHostRegisterDefault) : hipHostUnregister(host);
    if (err != hipSuccess) (void)hipGetLastError(); /* clear it: the memory simply stays pageable */
    return err == hipSuccess;
}

/* Where face f's R planes lie whole in a padded buffer: the z faces (planes
 * of stride_z values, the same layout on both ranks, since ranks stacked
 * along z own the same x and y extents). layer 0: the R owned planes next to
 * the face; -1: its R ghost planes; the lowest plane's address either way.
 * NULL for the x and y faces, which are strided. */
static char *whole_plane(const hip_state *s, char *buffer, int face, int layer)
{
    const long R = s->layout.ghost;
    long k = face == FACE_Z_LOW ? (layer == 0 ? 0 : -R) : (layer == 0 ? s->problem.grid.n[2] - R : s->problem.grid.n[2]);
    if (face / 2 != 2) return NULL;
    return buffer + (size_t)(heat_layout_first_owned(&s->layout) - R * (1 + s->layout.stride_y) + k * s->layout.stride_z) *
                        s->elem;
}

/* The ghosts of the exchanged faces of a padded buffer (a field or a CG
 * vector). GPU to GPU (NCCL): z planes go straight from the owned plane into
 * the neighbour's ghost plane; x and y faces are packed and unpacked on the
 * device. Otherwise every face is packed and staged through page-locked host
 * memory. */
/* The R layers of the faces in `faces` into buffers (pack) or from them into the ghosts. */
template <typename T> static int copy_faces(hip_state *s, char *buffer, face_buffers buffers, unsigned faces, int pack)
{
    const int *n = s->problem.grid.n;
    int widest = std::max(n[0], n[1]), deepest = std::max(n[1], n[2]);
    dim3 block(32, 8), grid((widest + 31) / 32, (deepest + 7) / 8, FACE_COUNT);
    if (s->layout.ghost > 1) order_face_copy<T><<<grid, block>>>(owned_in<T>(s, buffer), s->shape, buffers, faces, pack, s->layout.ghost);
    else face_copy<T><<<grid, block>>>(owned_in<T>(s, buffer), s->shape, buffers, faces, pack);
    HIP_CHECK_LAUNCH(pack ? "face_copy (pack)" : "face_copy (unpack)");
    return HEAT_OK;
}

template <typename T> static int exchange_typed(hip_state *s, char *buffer)
{
    const heat_halo *h = &s->problem.halo;
    const heat_halo_transport *t = &s->transport;
    void *send[FACE_COUNT], *recv[FACE_COUNT];
    size_t bytes[FACE_COUNT];
    unsigned packed = h->exchanged;
    for (int f = 0; f < FACE_COUNT; ++f) {
        char *mine = t->exchange_device ? whole_plane(s, buffer, f, 0) : NULL;
        if (mine) packed &= ~(1u << f);
        send[f] = mine ? mine : s->d_send.at[f];
        recv[f] = mine ? whole_plane(s, buffer, f, -1) : s->d_recv.at[f];
        bytes[f] = mine ? (size_t)s->layout.stride_z * s->layout.ghost * s->elem : s->face_bytes[f];
    }
    if (packed) {
        HEAT_CALL(copy_faces<T>(s, buffer, s->d_send, packed, 1));
    }
    if (t->exchange_device) { /* device to device, ordered on the default stream */
        HEAT_CALL(t->exchange_device(t->context, send, recv, bytes, NULL));
    } else {
        for (int f = 0; f < FACE_COUNT; ++f)
            if (h->exchanged & 1u << f)
                HIP_CALL(hipMemcpy(s->h_send[f], s->d_send.at[f], s->face_bytes[f], hipMemcpyDeviceToHost));
        HEAT_CALL(t->exchange(t->context, s->h_send, s->h_recv, s->face_bytes));
        for (int f = 0; f < FACE_COUNT; ++f)
            if (h->exchanged & 1u << f)
                HIP_CALL(hipMemcpy(s->d_recv.at[f], s->h_recv[f], s->face_bytes[f], hipMemcpyHostToDevice));
    }
    if (packed) {
        HEAT_CALL(copy_faces<T>(s, buffer, s->d_recv, packed, 0));
    }
    return HEAT_OK;
}

/* The comm stream goes on once everything queued so far on the default
 * stream is done. */
int comm_after_default(hip_state *s)
{
    HIP_CALL(hipEventRecord(s->default_ready, 0));
    HIP_CALL(hipStreamWaitEvent(s->comm, s->default_ready, 0));
    return HEAT_OK;
}

/* The z faces of field[which] to the neighbours, and theirs into its ghost
 * planes, next on the comm stream; `arrived` marks the end. */
static int queue_z_exchange(hip_state *s, int which)
{
    const heat_halo *h = &s->problem.halo;
    const heat_halo_transport *t = &s->transport;
    void *send[FACE_COUNT] = {0}, *recv[FACE_COUNT] = {0};
    size_t bytes[FACE_COUNT] = {0};
    for (int f = FACE_Z_LOW; f <= FACE_Z_HIGH; ++f) {
        if (!(h->exchanged & 1u << f)) continue;
        send[f] = whole_plane(s, s->field[which], f, 0), recv[f] = whole_plane(s, s->field[which], f, -1);
        bytes[f] = (size_t)s->layout.stride_z * s->elem;
    }
    HEAT_CALL(t->exchange_device(t->context, send, recv, bytes, (void *)s->comm));
    HIP_CALL(hipEventRecord(s->arrived, s->comm));
    s->ghosts_queued = 1;
    return HEAT_OK;
}

/* One step with the exchange beside the update, on two streams. The comm
 * stream (highest priority) has the ghost planes of the current field; it
 * updates the planes next to exchanged faces and sends them on. The default
 * stream updates the interior planes meanwhile: they read no ghost plane.
 * The streams meet once a step, each waiting for the other's previous
 * update: the two read each other's planes and overwrite planes the other
 * read. So the interior updates run back to back and the boundary planes
 * and their exchange fit beside them. Every point is updated once, by the
 * same kernel and arithmetic. */
int overlapped_step(hip_state *s, const kernel_entry *e, const int shape[3])
{
    const int n2 = s->problem.grid.n[2], from = s->current, to = 1 - s->current;
    const unsigned ex = s->problem.halo.exchanged;
    const unsigned low = 1u << FACE_Z_LOW, high = 1u << FACE_Z_HIGH;
    if (!halo_ready(s->halo_valid, e->fused)) { /* physical ghosts from the whole field: the streams meet */
        if (s->ghosts_queued) HIP_CALL(hipStreamWaitEvent(0, s->arrived, 0));
        HEAT_CALL(fill_halo_for(s, e));
    }
    if (!s->ghosts_queued) {
        HEAT_CALL(comm_after_default(s));
        HEAT_CALL(queue_z_exchange(s, from));
    }
    HIP_CALL(hipStreamWaitEvent(0, s->boundary_done, 0)); /* the previous step's, recorded below */
    HEAT_CALL(comm_after_default(s));
    plane_range bottom = {0, 1, high}, top = {n2 - 1, 1, low};
    plane_range inner = {ex & low ? 1 : 0, 0, (ex & low) | (ex & high)};
    inner.count = (ex & high ? n2 - 1 : n2) - inner.first;
    if (ex & low) HEAT_CALL(launch(s, e, shape, from, to, &bottom, s->comm));
    if (ex & high) HEAT_CALL(launch(s, e, shape, from, to, &top, s->comm));
    HIP_CALL(hipEventRecord(s->boundary_done, s->comm));
    if (s->transport.device_exchange_blocks) { /* MPI: the host waits in the exchange while the GPU updates */
        HEAT_CALL(launch(s, e, shape, from, to, &inner));
        HEAT_CALL(queue_z_exchange(s, to));
    } else {
        HEAT_CALL(queue_z_exchange(s, to));
        HEAT_CALL(launch(s, e, shape, from, to, &inner));
    }
    s->current = to;
    s->halo_valid = halo_after(e); /* fused kernels write the next y/z ghosts */
    return HEAT_OK;
}

/* The last step's exchange has landed before the host reads anything. */
int settle_exchange(hip_state *s)
{
    if (s->ghosts_queued) HIP_CALL(hipStreamWaitEvent(0, s->arrived, 0));
    return HEAT_OK;
}

int exchange_buffer(hip_state *s, char *buffer)
{
    if (!s->problem.halo.exchanged) return HEAT_OK;
    return s->problem.precision == HEAT_FLOAT ? exchange_typed<float>(s, buffer) : exchange_typed<double>(s, buffer);
}

int exchange_ghosts(hip_state *s, int which) { return exchange_buffer(s, s->field[which]); }

/* One sweep of kernel e from the current field into the other, then the
 * swap: the exchanged ghosts (beside the update where it overlaps), the
 * boundary ghosts where e does not write them itself, the update. The step
 * body of advance, run_variant and time_step alike. */
int step_once(hip_state *s, const kernel_entry *e, const int shape[3])
{
    if (s->overlap) return overlapped_step(s, e, shape);
    HEAT_CALL(exchange_ghosts(s, s->current));
    if (!halo_ready(s->halo_valid, e->fused)) HEAT_CALL(fill_halo_for(s, e));
    HEAT_CALL(launch(s, e, shape, s->current, 1 - s->current));
    s->current = 1 - s->current;
    s->halo_valid = halo_after(e); /* fused kernels write the next y/z ghosts */
    return HEAT_OK;
}

/* `steps` sweeps of e; returns once they are done on the device (not a
 * snapshot on its way to the host). */
static int steps_of(hip_state *s, const kernel_entry *e, const int shape[3], long steps)
{
    for (long step = 0; step < steps; ++step) HEAT_CALL(step_once(s, e, shape));
    HEAT_CALL(settle_exchange(s));
    HIP_CALL(hipStreamSynchronize(0));
    return HEAT_OK;
}

static int hip_run_variant(void *state, const heat_variant *v, long steps)
{
    hip_state *s = static_cast<hip_state *>(state);
    if (s->mat && !v->laplacian) return material_steps(s, steps);
    if (const fused_entry *f = find_fused(v->kernel)) return fused_run_variant(s, f, steps);
    const kernel_entry *e = find_variant(v->kernel, v->tile);
    HEAT_CHECK(e, "no GPU kernel %s m=%d", v->kernel, v->tile);
    HEAT_CHECK(s->space.radius == 1 || kernel_fits_order(s, e), "GPU kernel %s m=%d: not of space order %d", v->kernel,
               v->tile, 2 * s->space.radius);
    return steps_of(s, e, s->kernel ? s->block : block_candidates[0], steps);
}

static int hip_advance(void *state, long steps)
{
    hip_state *s = static_cast<hip_state *>(state);
    if (s->mat) return material_steps(s, steps);
    HEAT_CALL(fused_advance(s, &steps)); /* tunes; whole groups of K steps as fused sweeps, the rest below */
    return steps_of(s, s->kernel, s->block, steps);
}

template <typename T> static int stats_typed(hip_state *s)
{
    const heat_reduction &r = s->reduction;
    brick_grid g = {{r.brick[0], r.brick[1], r.brick[2]}, {r.own[0], r.own[1], r.own[2]}};
    brick_stats<T><<<(unsigned)stats_brick_count(s), HEAT_LAUNCH_BOUND>>>(owned<T>(s, s->current), s->shape, g,
                                                                        s->d_partials);
    HIP_CHECK_LAUNCH("brick_stats");
    return HEAT_OK;
}

/* min, max and the non-finite count of this block; the sum of the whole grid, its bricks
 * added in a fixed order whatever the layout (collective across ranks: solver/backend.h). */
static int hip_stats(void *state, heat_field_stats *out)
{
    hip_state *s = static_cast<hip_state *>(state);
    HEAT_CALL(s->problem.precision == HEAT_FLOAT ? stats_typed<float>(s) : stats_typed<double>(s));
    HIP_CALL(hipMemcpy(s->partials.data(), s->d_partials, s->partials.size() * sizeof(block_stats),
                       hipMemcpyDeviceToHost));
    heat_field_stats total = {HUGE_VAL, -HUGE_VAL, 0.0, 0};
    for (const block_stats &b : s->partials) {
        total.min = std::min(total.min, b.min), total.max = std::max(total.max, b.max);
        total.nonfinite += (long)b.nonfinite;
    }
    static_assert(sizeof(block_stats) == 4 * sizeof(double), "block_stats: four doubles, sum the third");
    HEAT_CALL(heat_reduction_sum_bricks(&s->reduction, &s->partials[0].sum, 4, &total.sum));
    *out = total;
    return HEAT_OK;
}

static const char *hip_device_name(void *state) { return static_cast<hip_state *>(state)->device; }
static const char *hip_kernel_description(void *state) { return static_cast<hip_state *>(state)->description; }

/* The seeds' Laplacians, then the heat steps, then the fused sweeps of the
 * run's precision; at space orders above 2, the order kernels alone. */
static int hip_variants(void *state, const heat_variant **list, int *count)
{
    static heat_variant variant_list[SEED_COUNT + KERNEL_COUNT + FUSED_COUNT + ORDER_COUNT];
    if (static_cast<hip_state *>(state)->mat) return material_variant_list(static_cast<hip_state *>(state), list, count);
    int n = 0;
    if (static_cast<hip_state *>(state)->space.radius > 1) {
        for (int i = 0; i < ORDER_COUNT; ++i) variant_list[n++] = order_table[i].entry.variant;
        *list = variant_list;
        *count = n;
        return HEAT_OK;
    }
    for (int i = 0; i < SEED_COUNT; ++i) variant_list[n++] = seed_table[i].variant;
    for (int i = 0; i < KERNEL_COUNT; ++i) variant_list[n++] = kernel_table[i].variant;
    for (int i = 0; i < FUSED_COUNT; ++i) /* those of the run's precision */
        if (fused_fits(&fused_table[i], static_cast<hip_state *>(state)->problem.precision))
            variant_list[n++] = fused_table[i].variant;
    *list = variant_list;
    *count = n;
    return HEAT_OK;
}

static int hip_time_variant(void *state, const heat_variant *v, int reps, double *ms)
{
    hip_state *s = static_cast<hip_state *>(state);
    if (s->mat) return time_material_named(s, v->kernel, reps, ms);
    if (const fused_entry *f = find_fused(v->kernel)) { /* time per step */
        return time_fused_aside(s, f, reps, ms);
    }
    const kernel_entry *e = find_variant(v->kernel, v->tile);
    HEAT_CHECK(e, "no GPU kernel %s m=%d", v->kernel, v->tile);
    HEAT_CHECK(s->space.radius == 1 || kernel_fits_order(s, e), "GPU kernel %s m=%d: not of space order %d", v->kernel,
               v->tile, 2 * s->space.radius);
    if (s->halo_valid != HALO_ALL) HEAT_CALL(fill_halo(s));
    /* Each variant at its best block shape among the candidates (an order_zwindow at its own). */
    double best = 1e300;
    const order_entry *o = order_of(e);
    for (const auto &shape : block_candidates) {
        if (o && o->shape >= 0 && &shape != &block_candidates[0]) break;
        double t;
        HEAT_CALL(time_kernel(s, e, shape, reps, 0, &t));
        best = std::min(best, t);
    }
    *ms = best;
    return HEAT_OK;
}

static int hip_time_copy(void *state, int reps, double *ms, double *bytes)
{
    hip_state *s = static_cast<hip_state *>(state);
    size_t field_bytes = (size_t)s->layout.total * s->elem;
    std::vector<float> times((size_t)reps);
    HIP_CALL(hipMemcpy(s->field[1 - s->current], s->field[s->current], field_bytes, hipMemcpyDeviceToDevice));
    for (int r = 0; r < reps; ++r) {
        HIP_CALL(hipEventRecord(s->start, 0));
        HIP_CALL(hipMemcpy(s->field[1 - s->current], s->field[s->current], field_bytes, hipMemcpyDeviceToDevice));
        HIP_CALL(hipEventRecord(s->stop, 0));
        HIP_CALL(hipEventSynchronize(s->stop));
        HIP_CALL(hipEventElapsedTime(&times[(size_t)r], s->start, s->stop));
    }
    std::sort(times.begin(), times.end());
    *ms = times[(size_t)reps / 2];
    *bytes = 2.0 * (double)field_bytes;
    return HEAT_OK;
}

/* Materials runs: the general step with its halo fill and energy balance (the host's part and its
 * copies included: events on the stream count the device's idle time between them), timed as
 * time_step times a one-material step: the stop event queued behind the step, not after the host
 * saw it end. */
static int time_material_step(hip_state *s, int reps, double *ms)
{
    std::vector<float> times((size_t)reps);
    HEAT_CALL(material_steps(s, 2));
    for (int r = 0; r < reps; ++r) {
        HIP_CALL(hipEventRecord(s->start, 0));
        HEAT_CALL(material_step_queued(s));
        HIP_CALL(hipEventRecord(s->stop, 0));
        HIP_CALL(hipEventSynchronize(s->stop));
        HIP_CALL(hipEventElapsedTime(&times[(size_t)r], s->start, s->stop));
    }
    std::sort(times.begin(), times.end());
    *ms = times[(size_t)reps / 2];
    return HEAT_OK;
}

static int hip_time_step(void *state, int reps, double *ms)
{
    hip_state *s = static_cast<hip_state *>(state);
    if (s->mat) return time_material_step(s, reps, ms);
    HEAT_CALL(fused_prepare(s));
    if (s->fused) { /* time per step of the fused sweeps the run takes */
        return time_fused_aside(s, s->fused, reps, ms);
    }
    std::vector<float> times((size_t)reps);
    HEAT_CALL(hip_advance(s, 2));
    for (int r = 0; r < reps; ++r) {
        HIP_CALL(hipEventRecord(s->start, 0));
        HEAT_CALL(step_once(s, s->kernel, s->block));
        HIP_CALL(hipEventRecord(s->stop, 0));
        HIP_CALL(hipEventSynchronize(s->stop));
        HIP_CALL(hipEventElapsedTime(&times[(size_t)r], s->start, s->stop));
    }
    std::sort(times.begin(), times.end());
    *ms = times[(size_t)reps / 2];
    return HEAT_OK;
}

/* A step of the production kernel one step a sweep, whether or not the production step takes several. */
static int hip_time_single_step(void *state, int reps, double *ms)
{
    hip_state *s = static_cast<hip_state *>(state);
    HEAT_CHECK(!s->mat, "the single-sweep step of a materials run (internal error)");
    if (!s->kernel) HEAT_CALL(tune(s));
    std::vector<float> times((size_t)reps);
    HEAT_CALL(steps_of(s, s->kernel, s->block, 2));
    for (int r = 0; r < reps; ++r) {
        HIP_CALL(hipEventRecord(s->start, 0));
        HEAT_CALL(step_once(s, s->kernel, s->block));
        HIP_CALL(hipEventRecord(s->stop, 0));
        HIP_CALL(hipEventSynchronize(s->stop));
        HIP_CALL(hipEventElapsedTime(&times[(size_t)r], s->start, s->stop));
    }
    std::sort(times.begin(), times.end());
    *ms = times[(size_t)reps / 2];
    return HEAT_OK;
}

/* Host-only objects: clang would otherwise copy these constants into the
 * device code object, where the host functions they point to do not exist. */
#if !defined(__HIP_DEVICE_COMPILE__)
static const heat_bench_ops hip_bench = {
    .run_variant = hip_run_variant,
    .variants = hip_variants,
    .time_variant = hip_time_variant,
    .time_copy = hip_time_copy,
    .time_step = hip_time_step,
    .time_single_step = hip_time_single_step,
};

static const heat_async_ops hip_async = {
    .pin_host = hip_pin_host,
    .download_async = hip_download_async,
    .download_wait = hip_download_wait,
    .release_device = hip_release_device,
};

static const heat_backend_ops hip_ops = {
    .name = "hip",
    .create = hip_create,
    .destroy = hip_destroy,
    .upload = hip_upload,
    .download = hip_download,
    .advance = hip_advance,
    .stats = hip_stats,
    .device_name = hip_device_name,
    .kernel_description = hip_kernel_description,
    .cg = &hip_cg,
    .set_clock = hip_set_clock,
    .energy = hip_energy,
    .set_energy = hip_set_energy,
    .supports = hip_supports,
    .bench = &hip_bench,
    .async = &hip_async,
};

extern "C" const heat_backend_ops *const heat_backend_hip = &hip_ops;

extern "C" int heat_hip_available(char *reason, size_t len)
{
    int count = 0;
    hipError_t err = hipGetDeviceCount(&count);
    if (err != hipSuccess || count == 0) {
        if (reason) snprintf(reason, len, "%s", err != hipSuccess ? hipGetErrorString(err) : "no GPU device found");
        return 0;
    }
    return 1;
}

/* Device 0, as a process alone takes it (describe_device): its primary
 * context is the one every thread of the process then shares. */
extern "C" void heat_hip_start_runtime(void)
{
    int count = 0;
    if (hipGetDeviceCount(&count) == hipSuccess && count > 0 && hipSetDevice(0) == hipSuccess) (void)hipFree(nullptr);
    (void)hipGetLastError();
}
#endif
