/*
 * The HIP backend's shared part: its state (hip_state), the checks of runtime
 * calls, the kernel table's entry and the functions one source file of the
 * backend calls in another. The backend is several translation units that
 * compile in parallel (cmake/gpu.cmake: HEAT_HIP_PARTS):
 *   backend_hip.hip               the 7-point steps, tuning, buffers, the
 *                                 exchange and the backend's tables
 *   backend_hip_order_float.hip,  space orders above 2: backend_hip_order.hip's
 *   backend_hip_order_double.hip  launchers in either precision
 *   backend_hip_cg.hip            implicit schemes
 *   backend_hip_materials.hip     materials runs
 *   backend_hip_fused.hip         several steps a sweep
 * Each kernel is launched from one of them only, so its instances are
 * compiled once and no device code crosses units (no relocatable device
 * code); the kernel sources included here define templates only (an instance
 * exists where a launch names it).
 */
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

#include "heat_kernels.hip"
#include "cg_kernels.hip"
#include "order_kernels.hip" /* order_coeffs, order_face_copy */

extern "C" {
#include "../../solver/backend.h"
static_assert((int)HEAT_LAUNCH_BOUND == (int)HEAT_MAX_BLOCK_THREADS, "the config check of solver.block uses HEAT_MAX_BLOCK_THREADS");
#include "../../solver/deep_halo.h"
#include "../../solver/error.h"
#include "../../solver/implicit.h"
#include "../../solver/materials.h"
#include "../../solver/reduce.h"
#include "../../solver/space_order.h"
#include "../../solver/tuning_cache.h"
}

/* Checks a HIP runtime call: file:line, the call and the error string. */
#define HIP_CALL(call)                                                                                       \
    do {                                                                                                     \
        hipError_t hip_status_ = (call);                                                                     \
        if (hip_status_ != hipSuccess)                                                                       \
            return heat_internal_error("%s failed: %s", #call, hipGetErrorString(hip_status_));                 \
    } while (0)

/* After every launch: the launch error, and in debug builds the execution. */
#ifdef NDEBUG
#define HIP_CHECK_LAUNCH(what) HIP_CALL(hipGetLastError())
#else
#define HIP_CHECK_LAUNCH(what)                                                                               \
    do {                                                                                                     \
        HIP_CALL(hipGetLastError());                                                                         \
        HIP_CALL(hipDeviceSynchronize());                                                                    \
    } while (0)
#endif

/* Ghost state of the current field: none, y/z faces only (written by a fused
 * kernel, or by halo_fill for kernels that make x ghosts on the fly), or all
 * six faces (halo_fill). */
enum { HALO_NONE = 0, HALO_YZ = 1, HALO_ALL = 2 };

static inline int halo_ready(int halo, int fused)
{
    return fused == GHOSTS_MADE || halo == HALO_ALL || (fused && halo == HALO_YZ);
}

/* Implicit schemes' vectors; x is the second field. */
enum { CG_R, CG_P, CG_Q, CG_Z, CG_W, CG_VECTORS };

typedef enum { LAP_BASELINE, LAP_TILED, LAP_TILED_NT, HEAT_TILED, HEAT_TILED_NT, HEAT_ZWINDOW, HEAT_WIDE_NT, HEAT_ZAHEAD, HEAT_ZWIDEG, ORDER_POINT, ORDER_ZWINDOW } kernel_kind;

struct kernel_entry {
    heat_variant variant;
    kernel_kind kind;
    int zchunk; /* heat_zwindow, heat_zwide, heat_zahead, heat_zwideg: planes each thread marches through */
    int fused;  /* GHOSTS_* (heat_kernels.hip): 1: makes x ghosts on the fly and writes its output's y/z ghosts: no halo pass before the
                   next step (the order kernels mirror them as they read); 2: makes x ghosts on the fly only: a y/z halo pass before each step (no strided
                   x-face stores); 3: makes every ghost on the fly: no halo pass, none written; 0: a halo pass of all six faces before each step */
    int width;  /* heat_wide_nt, heat_zahead, heat_zwideg: points along x a thread (one vector load) */
    int ahead;  /* heat_zahead: planes loaded beyond the window before a plane's arithmetic */
    int ordered; /* heat_zwindow, heat_zahead, heat_zwideg: blocks take their tiles and chunks in a march_order (order_for) */
    int untuned; /* UNTUNED_*: precisions whose automatic choice does not time it (it never won there on the
                    H100 or the H200); `heatsolve bench` lists it and solver.kernel names it all the same */
    int turning; /* heat_zwideg: every other launch marches down the field (launch_zwideg_wide), so that a step
                    starts on the planes the step before wrote last, while L2 still holds them */
};

enum { UNTUNED_DOUBLE = 1, UNTUNED_FLOAT = 2, UNTUNED = 3 };

enum { FUSED_MOST_STEPS = 4 }; /* the most steps a sweep of fused_table (backend_hip_fused.h) */

struct hip_state {
    heat_problem problem;
    heat_halo_transport transport; /* how the exchanged faces' ghosts travel */
    heat_layout layout;
    size_t elem;
    char *field[2];          /* device allocations; field[current] holds the solution */
    int current;
    stencil_shape shape;
    heat_coeffs coeffs;
    heat_space_coeffs space;    /* the order-2R stencil; radius 1: the 7-point kernels (coeffs) */
    double shift[6], scale[6];
    const kernel_entry *kernel; /* production kernel; NULL until tuned */
    mutable unsigned turning_launches; /* launches of turning entries so far: the odd ones march down (a
                                          launch changes nothing else of the state, hence mutable) */
    char *tuning_aside;         /* while the tuner steps as a run does: the solution it restores; else NULL */
    int halo_valid;             /* HALO_*: which ghosts of field[current] are up to date */
    int block[3];
    block_stats *d_partials;        /* the field's statistics per reduction brick (brick_stats) */
    std::vector<block_stats> partials;
    hipEvent_t start, stop;
    /* implicit schemes */
    char *cg_vector[CG_VECTORS];
    int z_result;               /* CG_Z or CG_W: where the Chebyshev result is */
    int x_pending, x_first;     /* cg_update left x += a p (x = a p) for the next pass over p */
    double x_a;
    double2 *cg_partials, *cg_sums; /* per piece of a row (cg_kernels.hip), per brick */
    heat_reduction reduction;       /* the bricks' sum across ranks, in a fixed order */
    cg_brick_geometry cg_bricks;
    int cg_piece;
    double2 *cg_brick_host;         /* page-locked: the bricks' sums cross every CG reduction */
    cg_diagonal diagonal;
    char device[160], device_model[128], description[320];
    /* halo exchange, staged through page-locked host memory: owned planes out, ghosts in */
    face_buffers d_send, d_recv;
    void *h_send[FACE_COUNT], *h_recv[FACE_COUNT];
    size_t face_bytes[FACE_COUNT];
    /* checkpoint snapshots: a device copy of the field leaves on a stream of its own */
    char *snapshot;             /* NULL until the first snapshot, or when memory was short */
    int snapshot_unavailable;   /* the copy could not be allocated: synchronous downloads */
    int snapshot_pending;       /* a copy to the host is in flight */
    std::mutex snapshot_lock;   /* over snapshot_pending: the loop starts copies, writer threads wait for them */
    hipStream_t copy_stream;
    hipEvent_t snapshot_taken, snapshot_done;
    /* z halos beside the update (NCCL, only z faces exchanged): each step
     * updates its boundary planes and sends them on a high-priority stream
     * while the default stream updates the interior planes (overlapped_step) */
    int overlap;
    int ghosts_queued;          /* the exchange into field[current]'s ghost planes is queued; `arrived` ends it */
    hipStream_t comm;
    hipEvent_t default_ready, boundary_done, arrived;
    struct hip_materials *mat;  /* materials runs (backend_hip_materials.hip); NULL: constant coefficients */
    const struct fused_entry *fused; /* K steps a sweep (backend_hip_fused.hip); NULL: single steps */
    int fused_ready;                 /* the fused choice is made */
    int fused_waves;                 /* z chunks fitted to whole waves of resident blocks (wave_zchunk) */
    /* a call's remainder of r steps (2 <= r < K) in one sweep of fused_rest[r]; NULL: r single steps */
    const struct fused_entry *fused_rest[FUSED_MOST_STEPS];
    int fused_rest_waves[FUSED_MOST_STEPS];
    /* ghosts K deep beyond the faces cut between ranks, for fused sweeps (solver/deep_halo.h) */
    heat_deep_halo deep;             /* the cut faces; faces 0: none (or no fused sweeps) */
    char *deep_send[FACE_COUNT];     /* device: x faces' owned columns, packed; z faces send from the field */
    char *deep_recv[FACE_COUNT];     /* device: the neighbours' planes or columns, read by the fused kernel */
    void *deep_host_send[FACE_COUNT], *deep_host_recv[FACE_COUNT]; /* page-locked: staging without a GPU transport */
    struct sweep_trace *trace;       /* HEATSOLVE_TRACE: the overlapped sweeps' timeline (sweep_trace.hip); else NULL */
};

/* ---- launching ---------------------------------------------------------------------------------- */

/* The first owned point of a padded buffer (a field or a CG vector). */
template <typename T> static T *owned_in(const hip_state *s, char *buffer)
{
    return reinterpret_cast<T *>(buffer) + heat_layout_first_owned(&s->layout);
}

template <typename T> static T *owned(const hip_state *s, int which) { return owned_in<T>(s, s->field[which]); }

template <typename T> static stencil_coeffs<T> cast_coeffs(const heat_coeffs &c)
{
    return {(T)c.inv_h2[0], (T)c.inv_h2[1], (T)c.inv_h2[2], (T)c.diag, (T)c.alpha_dt};
}

template <typename T> static halo_coeffs<T> cast_halo(const hip_state *s)
{
    halo_coeffs<T> h;
    for (int f = 0; f < 6; ++f) h.shift[f] = (T)s->shift[f], h.scale[f] = (T)s->scale[f];
    h.exchanged = s->problem.halo.exchanged;
    return h;
}

/* Planes [first, first + count) of the block's owned planes; cut: the z
 * faces of that slab that lie inside the block (kernels read real planes
 * there and write no ghosts). */
struct plane_range {
    int first, count;
    unsigned cut;
};

static inline dim3 grid_for(const stencil_shape &p, dim3 block, int tile, int zchunk)
{
    unsigned zblocks = zchunk > 0 ? (unsigned)((p.nz + zchunk - 1) / zchunk) : (unsigned)((p.nz + block.z - 1) / block.z);
    return dim3((unsigned)((p.nx + block.x - 1) / block.x), (unsigned)((p.ny + block.y * tile - 1) / (block.y * tile)), zblocks);
}

/* Thread blocks of the tuner's timing (the first TUNE_BLOCKS), and of steps before it chose one. */
inline const int block_candidates[][3] = {{256, 1, 1}, {128, 2, 1}, {64, 4, 1}, {32, 8, 1}};

/* The ghosts of e's output after its step. */
static inline int halo_after(const kernel_entry *e) { return e->fused == 1 ? HALO_YZ : HALO_NONE; }

static inline size_t stats_brick_count(const hip_state *s)
{
    return (size_t)s->reduction.own[0] * s->reduction.own[1] * s->reduction.own[2];
}

/* name<float> or name<double>(state, ...) for the run's precision. */
#define HIP_TYPED(state, name, ...)                                                                              \
    (static_cast<hip_state *>(state)->problem.precision == HEAT_FLOAT                                           \
         ? name<float>(static_cast<hip_state *>(state), __VA_ARGS__)                                             \
         : name<double>(static_cast<hip_state *>(state), __VA_ARGS__))

#include "backend_hip_order.h"
#include "backend_hip_fused.h"

/* ---- backend_hip.hip ------------------------------------------------------------------------------ */

int resident_slots(const void *kernel, int threads, long *slots);
march_order order_for(dim3 grid, long slots);
void cache_key(const hip_state *s, char *buf, size_t len);
int exchanged_alloc(hip_state *s, void **buffer, size_t bytes);
void exchanged_free(hip_state *s, void *buffer);
int exchange_buffer(hip_state *s, char *buffer);
int exchange_ghosts(hip_state *s, int which);
int fill_halo(hip_state *s, int faces = HALO_ALL);
int fill_halo_for(hip_state *s, const kernel_entry *e);
int launch(const hip_state *s, const kernel_entry *e, const int shape[3], int from, int to, const plane_range *r = NULL,
           hipStream_t q = 0);
const kernel_entry *find_kernel(const char *name, int tile);
int time_kernel(hip_state *s, const kernel_entry *e, const int shape[3], int reps, int with_halo, double *ms);
int tune(hip_state *s);
int step_once(hip_state *s, const kernel_entry *e, const int shape[3]);
int overlapped_step(hip_state *s, const kernel_entry *e, const int shape[3]);
int settle_exchange(hip_state *s);
int comm_after_default(hip_state *s);

/* ---- backend_hip_order.hip (float: backend_hip_order_float.hip, double: backend_hip_order_double.hip) - */

template <typename T>
int launch_order(const hip_state *s, const kernel_entry *e, const int shape[3], int from, int to, hipStream_t q);

/* ---- backend_hip_cg.hip ----------------------------------------------------------------------------- */

int cg_vector_count(const heat_problem *p);
int allocate_cg(hip_state *s);
void free_cg(hip_state *s);
int cg_sum(hip_state *s, double *a, double *b);
template <typename T> int cg_scale_launch(hip_state *s, int to, double factor); /* float and double */
extern const heat_cg_ops hip_cg; /* the backend's heat_cg_ops (host only) */

static inline dim3 cg_grid(const hip_state *s)
{
    const stencil_shape &p = s->shape;
    return dim3((unsigned)((p.nx + CG_THREADS - 1) / CG_THREADS), (unsigned)p.ny,
                (unsigned)((p.nz + CG_ZCHUNK - 1) / CG_ZCHUNK));
}

static inline cg_partials_at cg_out(const hip_state *s) { return {s->cg_partials, s->cg_piece}; }

template <typename T> T *cg_vec(const hip_state *s, int which) { return owned_in<T>(s, s->cg_vector[which]); }

/* Ghosts of a CG vector: homogeneous (Dirichlet -u, Neumann +u). */
template <typename T> halo_coeffs<T> homogeneous_halo(const hip_state *s)
{
    halo_coeffs<T> h;
    for (int f = 0; f < 6; ++f) h.shift[f] = (T)0, h.scale[f] = (T)s->scale[f];
    h.exchanged = s->problem.halo.exchanged;
    return h;
}

/* The x step cg_update left waiting (x is the field that is not current). */
template <typename T> cg_x_step<T> x_step_waiting(hip_state *s)
{
    return cg_x_step<T>{s->x_pending ? owned<T>(s, 1 - s->current) : nullptr, (T)s->x_a, s->x_first};
}

/* ---- backend_hip_materials.hip, backend_hip_materials_cg.hip ---------------------------------------- */

int setup_materials(hip_state *s);
void free_materials(hip_state *s);
int material_step_queued(hip_state *s);
int material_steps(hip_state *s, long steps);
int material_variant_list(const hip_state *s, const heat_variant **list, int *count);
int time_material_named(hip_state *s, const char *name, int reps, double *ms);
int hip_energy(void *state, heat_energy *e);
int hip_set_energy(void *state, const double *energy_in);
int hip_set_clock(void *state, long step, long clock_step, double clock_time);
int hip_supports(const heat_problem *p);
int material_cg_begin(hip_state *s, double fraction, double *rr, double *rz);
int material_cg_precondition(hip_state *s, const heat_chebyshev *cheb, double *rz);
int material_cg_direction(hip_state *s, double beta);
int material_cg_apply(hip_state *s, double *pq);
int material_cg_update(hip_state *s, double a, int first, double *rr, double *rz);
int material_cg_finish(hip_state *s);

/* ---- backend_hip_fused.hip -------------------------------------------------------------------------- */

bool fused_fits(const fused_entry *e, heat_precision precision);
int fused_prepare(hip_state *s);
int fused_advance(hip_state *s, long *steps);
int fused_run_variant(hip_state *s, const fused_entry *e, long steps);
int time_fused_aside(hip_state *s, const fused_entry *e, int reps, double *ms);
void free_deep_halo(hip_state *s);
