/*
 * CPU backend: C + OpenMP, vectorised with `omp simd`. Two fields with R
 * ghost layers (layout in solver/problem.h; R = 1 but for space orders above
 * 2, cpu_wide.h), swapped after every step.
 */
#include <immintrin.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../solver/backend.h"
#include "../../solver/error.h"
#include "../../solver/host_memory.h"
#include "../../solver/implicit.h"
#include "../../solver/materials.h"
#include "../../solver/reduce.h"
#include "../../solver/space_order.h"
#include "../../solver/tuning_cache.h"

enum { CPU_ALIGN_BYTES = 64 }; /* one cache line */

/* The widest vector the build targets (-march=native decides). */
#if defined(__AVX512F__)
#define CPU_VECTOR_BYTES 64
#elif defined(__AVX__)
#define CPU_VECTOR_BYTES 32
#else
#define CPU_VECTOR_BYTES 16
#endif

#define HEAT_PRECISION_FILE "cpu_kernels.h"
#include "for_each_precision.h"
#define HEAT_PRECISION_FILE "cpu_materials.h"
#include "for_each_precision.h"
#define HEAT_PRECISION_FILE "cpu_materials_cg.h"
#include "for_each_precision.h"


enum { TRIAL_CANDIDATES_MAX = 9 }; /* the most production candidates a trial times (wide_variants) */

typedef struct cpu_state {
    heat_problem problem;
    heat_halo_transport transport; /* how the exchanged faces' ghosts travel */
    heat_layout layout;
    int radius;             /* R: the space order's, the fields' ghost layers */
    heat_space_coeffs wide; /* radius > 1: the order-2R stencil (cpu_wide.h) */
    void *wide_rows;        /* radius > 1, implicit: a row (stride_y values) for each of wide_row_threads */
    int wide_row_threads;
    heat_coeffs coeffs;
    size_t elem;       /* bytes per value */
    void *current;     /* field at the current step (allocation base) */
    void *next;        /* field being written by the next step */
    ghost_rule_d bc_d, zero_d; /* the run's boundary conditions; homogeneous ones (CG vectors) */
    ghost_rule_f bc_f, zero_f;
    void *send[FACE_COUNT], *recv[FACE_COUNT]; /* exchanged faces: owned plane out, ghosts in */
    size_t face_bytes[FACE_COUNT];
    heat_reduction reduction;  /* dot products in an order independent of the layout */
    heat_field_stats *bricks;  /* stats per reduction brick of this block */
    double *brick_sums;        /* their sums, one after the other (heat_reduction_sum_bricks) */
    const heat_variant *production; /* the variant cpu_advance runs; NULL until the trial steps chose it */
    const heat_variant *candidates; /* the production step's candidates (step_candidates), tried in turn */
    int candidate_count;
    int trials;        /* trial steps taken so far (trial_step) */
    int run_threads;   /* the run's OpenMP threads, for the tuning cache's keys: a trial that ends
                        * while a checkpoint write holds some cores (app/schedule.c, share_cores) runs on
                        * fewer, and its choice must still be found by the next run's lookup */
    double trial_ms[TRIAL_CANDIDATES_MAX]; /* fastest trial step of each candidate */
    int block_rows;    /* y rows per block of the sweep (block_rows_for) */
    int fused_rows;    /* the same for two steps in one sweep (stencil_sweep2_planes) */
    void *rings;       /* rings of planes for two steps a sweep, one for each of ring_threads; NULL: none */
    void *edges;       /* pairs whose exchange travels beside the sweep (pair_overlappable): v's planes next to
                        * the z faces (edge_planes, cpu_kernels.h); NULL: none */
    int ring_threads;
    int step_pairs;    /* explicit steps two a sweep (heat_pairs_allowed, stencil_sweep2_planes) */
    int material_pairs; /* general explicit steps two a sweep (material_pairs_allowed, material_sweep2) */
    int cheb_pairs;    /* Chebyshev steps may go two a sweep (heat_chebyshev_pairs_allowed, cheb_pair) */
    int cheb_choice;   /* 1: they do, 0: they do not, -1: the trial (cheb_pairs_now) has not decided */
    int cheb_trials;
    double cheb_ms[2]; /* fastest timed preconditioner call with single steps, with pairs */
    /* Implicit schemes: CG vectors (x is `next`), Chebyshev's pair z, w and
     * the one holding its result, dot products per row segment. */
    void *r, *p, *q, *z, *w, *z_result;
    void *z2;          /* with cheb_pairs: the fourth vector a pair needs (q is the third) */
    /* x += a p waits for the next pass that reads p anyway (direction, or finish): that
     * saves a read of p an iteration. x_pending: an update is waiting, with x_a and x_first. */
    int x_pending, x_first;
    double x_a;
    double *dots_a, *dots_b;
    heat_cg_diagonal diagonal;
    /* Materials runs (solver/materials.h): the zone index in the fields'
     * layout (zone_base: its allocation), the tables, and the clock of the
     * next step, whose start time switches the sources. */
    int materials;
    unsigned char *zone_base, *zone;
    material_runs runs; /* each owned row's runs of one zone and of several (setup_runs) */
    heat_material_tables tables;
    material_tables_d mat_d;
    material_tables_f mat_f;
    void *inv_diagonal; /* implicit schemes with Jacobi: 1 / diag of the scaled system, per point */
    /* The energy balance: energy in so far per kind, the whole grid's volume
     * of each zone, each face's kind (-1: none), per-brick boundary powers. */
    double energy_in[HEAT_ENERGY_KINDS];
    double zone_volume[HEAT_ZONES_MAX];
    int face_kind[FACE_COUNT];
    int kind_present[HEAT_ENERGY_KINDS];
    double *energy_bricks;
    double *energy_bricks_second; /* material_pairs: the pair's second step's */
    void *row_scratch; /* a row (stride_y values) for each of scratch_threads: rows of several runs, streamed */
    int scratch_threads;
    void *captured[2][FACE_COUNT]; /* material_pairs: each step's input's owned planes next to the faces with a power */
    unsigned char *face_zone[FACE_COUNT]; /* the zones of the owned planes next to the faces with a power */
    double cg_fraction, power_begin[HEAT_ENERGY_KINDS]; /* implicit: the solve's start */
    long step, clock_step;
    double clock_time;
    void *allocations[10]; /* what alloc_field allocated (fields start a little past these) */
    int allocated;
    char device[128];
    char kernel[512];
} cpu_state;

/* The owned planes next to the exchanged faces into the send buffers, and
 * for two steps a sweep (layers = 2) or a stencil of radius R (layers = R)
 * the planes behind them after those, nearest first. */
static void pack_faces(cpu_state *s, const void *field, int layers)
{
    const int *n = s->problem.grid.n;
    for (int f = 0; f < FACE_COUNT; ++f) {
        if (!(s->problem.halo.exchanged & 1u << f)) continue;
        for (int layer = 0; layer < layers; ++layer) {
            char *buf = (char *)s->send[f] + (size_t)layer * s->face_bytes[f];
            if (s->problem.precision == HEAT_FLOAT) pack_face_f((float *)buf, field, f, layer, n, &s->layout);
            else pack_face_d((double *)buf, field, f, layer, n, &s->layout);
        }
    }
}

/* The received planes into the ghosts of the exchanged faces: plane m of
 * the neighbour's (m in from the shared face) into ghost layer m (-1-m). */
static void unpack_faces(cpu_state *s, void *field, int layers)
{
    const int *n = s->problem.grid.n;
    for (int f = 0; f < FACE_COUNT; ++f) {
        if (!(s->problem.halo.exchanged & 1u << f)) continue;
        for (int layer = 0; layer < layers; ++layer) {
            const char *buf = (const char *)s->recv[f] + (size_t)layer * s->face_bytes[f];
            if (s->problem.precision == HEAT_FLOAT) unpack_face_f(field, (const float *)buf, f, layer, n, &s->layout);
            else unpack_face_d(field, (const double *)buf, f, layer, n, &s->layout);
        }
    }
}

/* Ghosts of the exchanged faces (neighbours, periodic wrap-around), R
 * planes deep: pack the owned planes, exchange, unpack. Other faces are the
 * kernels' business. */
static int exchange_ghosts(cpu_state *s, void *field)
{
    const heat_halo_transport *t = &s->transport;
    if (!s->problem.halo.exchanged) return HEAT_OK;
    size_t bytes[FACE_COUNT];
    for (int f = 0; f < FACE_COUNT; ++f) bytes[f] = (size_t)s->radius * s->face_bytes[f];
    pack_faces(s, field, s->radius);
    HEAT_CALL(t->exchange(t->context, s->send, s->recv, bytes));
    unpack_faces(s, field, s->radius);
    return HEAT_OK;
}

/* The trial's choice goes into the tuning cache (solver/tuning_cache.h), as
 * the GPU's kernel choice does, under the processor, the threads, the vector
 * width, the block and the precision: later runs of the same problem on the
 * same machine take pairs from their first step instead of twelve trial steps. */
static void processor_name(char *buf, size_t len)
{
    char line[256];
    snprintf(buf, len, "unknown processor");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f) return;
    while (fgets(line, sizeof line, f)) {
        const char *colon = strchr(line, ':');
        if (strncmp(line, "model name", 10) != 0 || !colon) continue;
        line[strcspn(line, "\n")] = '\0';
        snprintf(buf, len, "%s", colon + 2 <= line + strlen(line) ? colon + 2 : colon + 1);
        break;
    }
    fclose(f);
}

/* "<processor, threads, vector width>\t<block>\t<precision>\t<what>": what is
 * "step" (the explicit step's variant) or "chebyshev degree <d>" (pairs or not). */
static void trial_cache_key(const cpu_state *s, const char *what, char *key, size_t len)
{
    char processor[160];
    const int *n = s->problem.grid.n;
    processor_name(processor, sizeof processor);
    snprintf(key, len, "CPU %s, %d threads, %d-byte vectors\t%dx%dx%d\t%s\t%s", processor, s->run_threads,
             CPU_VECTOR_BYTES, n[0], n[1], n[2], heat_precision_name(s->problem.precision), what);
}

/* Chebyshev steps in pairs move 5/8 of the bytes of single steps but do
 * more arithmetic: where the CG vectors come from memory they are faster,
 * where they stay in a cache slower. So the run's first
 * preconditioner calls decide, as the step's trial does: single steps and
 * pairs take turns of three calls, twice each, the fastest call that is not
 * the first of its turn wins, and the choice goes into the tuning cache.
 * Both give the same bits. */
enum { CHEB_TURN = 3, CHEB_TURNS = 4 };

static void cheb_cache_key(const cpu_state *s, char *key, size_t len)
{
    char what[48];
    snprintf(what, sizeof what, "chebyshev degree %d", s->problem.implicit.chebyshev_degree);
    trial_cache_key(s, what, key, len);
}

static void cheb_choose_from_cache(cpu_state *s)
{
    char key[320], value[32];
    s->cheb_choice = -1;
    if (!s->cheb_pairs) return;
    cheb_cache_key(s, key, sizeof key);
    if (!tuning_cache_lookup(key, value, sizeof value)) return;
    if (strcmp(value, "pairs") == 0) s->cheb_choice = 1;
    if (strcmp(value, "single steps") == 0) s->cheb_choice = 0;
}

/* Whether this preconditioner call takes its steps in pairs. */
static int cheb_pairs_now(const cpu_state *s)
{
    if (!s->cheb_pairs) return 0;
    return s->cheb_choice >= 0 ? s->cheb_choice : s->cheb_trials / CHEB_TURN % 2;
}

/* After a call that took `ms`: the trial's bookkeeping, and its choice. */
static void cheb_trial_call(cpu_state *s, double ms)
{
    if (!s->cheb_pairs || s->cheb_choice >= 0) return;
    int which = s->cheb_trials / CHEB_TURN % 2;
    if (s->cheb_trials % CHEB_TURN != 0 && (s->cheb_ms[which] <= 0.0 || ms < s->cheb_ms[which])) s->cheb_ms[which] = ms;
    if (++s->cheb_trials < CHEB_TURN * CHEB_TURNS) return;
    s->cheb_choice = s->cheb_ms[1] < s->cheb_ms[0];
    char key[320];
    cheb_cache_key(s, key, sizeof key);
    tuning_cache_store(key, s->cheb_choice ? "pairs" : "single steps");
}

/* The pair's team: the threads the stencil has now, at most one a 4 planes
 * (a thinner slab recomputes more of its neighbours' planes than its own). */
static int pair_threads(const cpu_state *s)
{
    int threads = omp_get_max_threads(), by_planes = s->problem.grid.n[2] / 4;
    if (threads > s->ring_threads) threads = s->ring_threads;
    if (threads > by_planes) threads = by_planes;
    return threads > 1 ? threads : 1;
}

/* Start time of step `step` (solver.c's clock formula). */
static double time_of_step(const cpu_state *s, long step)
{
    return s->clock_time + (double)(step - s->clock_step) * s->problem.dt;
}

/* Start time of the step the backend takes next. */
static double step_time(const cpu_state *s) { return time_of_step(s, s->step); }

static double cell_volume(const cpu_state *s)
{
    const double *h = s->problem.grid.h;
    return h[0] * h[1] * h[2];
}

/* The sources' power: each zone's q (as the step takes it, the tables' source) times its volume, in zone order. */
static double source_power(const cpu_state *s)
{
    double power = 0.0;
    for (int z = 0; z < s->tables.zones; ++z)
        power += (s->problem.precision == HEAT_FLOAT ? (double)s->mat_f.source[z] : s->mat_d.source[z]) * s->zone_volume[z];
    return power;
}

/* The boundary power's inputs: `field`'s owned values beside the faces, or where `field` is NULL a pair's
 * captured planes of its step `step` (material_pair), into `bricks`. */
#define BOUNDARY_ENERGY_OF(SUFFIX, REAL)                                                                         \
    static boundary_energy##SUFFIX boundary_energy_of##SUFFIX(const cpu_state *s, const void *field, int step,   \
                                                              double *bricks)                                    \
    {                                                                                                              \
        boundary_energy##SUFFIX e = {.face_zone = (const unsigned char *const *)s->face_zone, .kind = s->face_kind, \
                                     .volume = cell_volume(s), .brick = s->reduction.brick, .own = s->reduction.own, \
                                     .bricks = bricks};                                                           \
        if (field) field_face_values##SUFFIX(e.values, field, s->problem.grid.n, &s->layout);                     \
        else captured_face_values##SUFFIX(e.values, (REAL *const *)s->captured[step], s->problem.grid.n);        \
        return e;                                                                                                  \
    }
BOUNDARY_ENERGY_OF(_d, double)
BOUNDARY_ENERGY_OF(_f, float)
#undef BOUNDARY_ENERGY_OF

/* The grid's power in by kind from the bricks the boundary power filled; collective. */
static int sum_boundary_power(cpu_state *s, const double *bricks, double power[HEAT_ENERGY_KINDS])
{
    for (int kind = HEAT_ENERGY_DIRICHLET; kind < HEAT_ENERGY_KINDS; ++kind) {
        power[kind] = 0.0;
        if (s->kind_present[kind])
            HEAT_CALL(heat_reduction_sum_bricks(&s->reduction, bricks + kind, HEAT_ENERGY_KINDS, &power[kind]));
    }
    return HEAT_OK;
}

/* The power in through the boundary faces by kind, from `field`'s owned values beside them; collective. */
static int boundary_power(cpu_state *s, const void *field, double power[HEAT_ENERGY_KINDS])
{
    const int *n = s->problem.grid.n;
    if (s->problem.precision == HEAT_FLOAT) {
        boundary_energy_f e = boundary_energy_of_f(s, field, 0, s->energy_bricks);
        material_boundary_bricks_f(&e, n, &s->mat_f);
    } else {
        boundary_energy_d e = boundary_energy_of_d(s, field, 0, s->energy_bricks);
        material_boundary_bricks_d(&e, n, &s->mat_d);
    }
    return sum_boundary_power(s, s->energy_bricks, power);
}

/* Sources and boundary faces: the power the step from `field` (sources of its time) takes. */
static int step_power(cpu_state *s, const void *field, double power[HEAT_ENERGY_KINDS])
{
    HEAT_CALL(boundary_power(s, field, power));
    power[HEAT_ENERGY_SOURCES] = source_power(s);
    return HEAT_OK;
}

/* The zones' volumes over the whole grid, the faces' kinds and the bricks' buffer. */
static int setup_energy(cpu_state *s)
{
    HEAT_CALL(heat_zone_volumes(&s->problem, &s->transport, s->zone_volume));
    heat_energy_faces(&s->problem, s->face_kind, s->kind_present);
    const heat_reduction *r = &s->reduction;
    const size_t brick_bytes = sizeof(double) * (size_t)r->own[0] * r->own[1] * r->own[2] * HEAT_ENERGY_KINDS;
    s->energy_bricks = malloc(brick_bytes);
    HEAT_CHECK(s->energy_bricks, "out of memory for the energy balance");
    if (s->material_pairs) {
        s->energy_bricks_second = malloc(brick_bytes);
        HEAT_CHECK(s->energy_bricks_second, "out of memory for the energy balance");
    }
    const int *n = s->problem.grid.n;
    const heat_layout *l = &s->layout;
    const long stride[3] = {1, l->stride_y, l->stride_z};
    for (int f = 0; f < FACE_COUNT; ++f) {
        if (s->face_kind[f] < 0) continue;
        const int axis = f / 2, fast = axis == 0 ? 1 : 0, slow = axis == 2 ? 1 : 2;
        const size_t points = (size_t)n[fast] * n[slow];
        s->face_zone[f] = malloc(points);
        HEAT_CHECK(s->face_zone[f], "out of memory for the energy balance");
        const unsigned char *plane = s->zone + l->origin + 1 + stride[1] + stride[2] + (f % 2 ? n[axis] - 1 : 0) * stride[axis];
        for (long b = 0; b < n[slow]; ++b)
            for (long a = 0; a < n[fast]; ++a) s->face_zone[f][b * n[fast] + a] = plane[a * stride[fast] + b * stride[slow]];
        if (!s->material_pairs) continue;
        s->captured[0][f] = malloc(points * s->elem), s->captured[1][f] = malloc(points * s->elem);
        HEAT_CHECK(s->captured[0][f] && s->captured[1][f], "out of memory for the energy balance");
    }
    return HEAT_OK;
}

/* The boundary faces' ghosts of `field` by the zones' rules (homogeneous: the CG vectors'). */
static void material_fill(cpu_state *s, void *field, int homogeneous)
{
    const int *n = s->problem.grid.n;
    if (s->problem.precision == HEAT_FLOAT)
        material_halo_fill_f(field, s->zone, n, &s->layout, &s->mat_f, homogeneous);
    else material_halo_fill_d(field, s->zone, n, &s->layout, &s->mat_d, homogeneous);
}

static void material_sources(cpu_state *s, double t)
{
    if (s->problem.precision == HEAT_FLOAT) material_sources_at_f(&s->mat_f, s->problem.materials, t);
    else material_sources_at_d(&s->mat_d, s->problem.materials, t);
}

/* An implicit solve's energy: fraction dt ((1 - theta') P(u) + theta' P(u_new)) through the faces, theta' =
 * theta / fraction (a half step is a backward Euler one), and fraction dt times the sources' power. */
static int implicit_solve_energy(cpu_state *s)
{
    double end[HEAT_ENERGY_KINDS];
    HEAT_CALL(exchange_ghosts(s, s->current));
    material_fill(s, s->current, 0);
    HEAT_CALL(boundary_power(s, s->current, end));
    const double span = s->cg_fraction * s->problem.dt;
    const double weight = heat_scheme_theta(s->problem.implicit.scheme) / s->cg_fraction;
    s->energy_in[HEAT_ENERGY_SOURCES] += span * s->power_begin[HEAT_ENERGY_SOURCES];
    for (int kind = HEAT_ENERGY_DIRICHLET; kind < HEAT_ENERGY_KINDS; ++kind)
        s->energy_in[kind] += span * ((1.0 - weight) * s->power_begin[kind] + weight * end[kind]);
    return HEAT_OK;
}

/* A solve whose right-hand side is 0 (a steady field): the solver stops before any iteration and never calls
 * finish, but the sources and faces carried their power over the step all the same (u_new = u, so P(u_new) = P(u)). */
static void steady_solve_energy(cpu_state *s)
{
    const double span = s->cg_fraction * s->problem.dt;
    for (int kind = 0; kind < HEAT_ENERGY_KINDS; ++kind) s->energy_in[kind] += span * s->power_begin[kind];
}

/* A per-precision function of the state: name_f or name_d by the run's precision. */
#define TYPED(s, name, ...) ((s)->problem.precision == HEAT_FLOAT ? name##_f(__VA_ARGS__) : name##_d(__VA_ARGS__))

#define HEAT_PRECISION_FILE "cpu_cg_ops.h"
#include "for_each_precision.h"

/* heat_step stores through the cache; heat_step_nt streams its output past
 * it. Which is faster is the machine's business (trial_step): the first
 * CPU_STEP_VARIANTS are the production step's candidates. The Laplacian
 * alone (f = lap(u), as the seeds') is the benchmark's and the tests' only. */
static const heat_variant cpu_variants[] = {
    {"heat_step", 1, 0, 1},
    {"heat_step_nt", 1, 0, 1},
    {"laplacian", 1, 1, 1},
};
enum { CPU_STEP_VARIANTS = 2 };

/* Above order 2 (cpu_wide.h) each store has three row loops, 2, 4 or 8 vectors a turn (the tile),
 * swept a row at a time; the streaming store also a tile of rows at a time (the name's last "_YxZ":
 * Y rows by Z planes, wide_march_tiles; the shapes that won a round on a Xeon, docs/PERFORMANCE.md):
 * which one keeps the core busiest is the machine's business too. All do the same arithmetic in the
 * same order. */
static const heat_variant wide_variants[] = {
    {"heat_step", 2, 0, 1},
    {"heat_step_nt", 2, 0, 1},
    {"heat_step_x4", 4, 0, 1},
    {"heat_step_nt_x4", 4, 0, 1},
    {"heat_step_x8", 8, 0, 1},
    {"heat_step_nt_x8", 8, 0, 1},
    {"heat_step_nt_x4_4x4", 4, 0, 1},
    {"heat_step_nt_x8_4x4", 8, 0, 1},
    {"heat_step_nt_x4_2x2", 4, 0, 1},
    {"laplacian", 2, 1, 1},
};
enum { WIDE_STEP_VARIANTS = 9 };
_Static_assert((int)WIDE_STEP_VARIANTS <= (int)TRIAL_CANDIDATES_MAX && (int)CPU_STEP_VARIANTS <= (int)TRIAL_CANDIDATES_MAX,
               "cpu_state.trial_ms holds a time for each candidate");

static int variant_streams(const heat_variant *v) { return strncmp(v->kernel, "heat_step_nt", 12) == 0; }

/* The vectors a turn of the wide row loop (wide_row) that variant v takes. */
static int variant_vectors(const heat_variant *v) { return v->tile == 8 ? 8 : v->tile == 4 ? 4 : 2; }

/* The rows a tile of variant v's march (wide_march_tiles), from its name's last "_YxZ"; 1 x 1 (row by row)
 * where it has none. */
static void variant_tile_rows(const heat_variant *v, int *rows_y, int *rows_z)
{
    const char *last = strrchr(v->kernel, '_');
    if (!last || sscanf(last, "_%dx%d", rows_y, rows_z) != 2 || *rows_y < 1 || *rows_z < 1) *rows_y = *rows_z = 1;
}

/* The production step's candidates, and every variant the benchmark lists. */
static void step_candidates(cpu_state *s)
{
    const int wide = s->radius > 1 && !heat_materials_active(s->problem.materials);
    s->candidates = wide ? wide_variants : cpu_variants;
    s->candidate_count = wide ? WIDE_STEP_VARIANTS : CPU_STEP_VARIANTS;
}

/* s->kernel's description after the choice: "<variant>, <how> (<build>)". */
static void describe_choice(cpu_state *s, const char *how)
{
    char build[160];
    snprintf(build, sizeof build, "%s", strchr(s->kernel, '('));
    if (s->materials)
        snprintf(s->kernel, sizeof s->kernel, "materials step, %d zones, stored as %s, %s %s", s->tables.zones,
                 s->production->kernel, how, build);
    else if (s->radius > 1)
        snprintf(s->kernel, sizeof s->kernel, "%s of order %d, %s %s", s->production->kernel, 2 * s->radius, how, build);
    else snprintf(s->kernel, sizeof s->kernel, "%s, %s %s", s->production->kernel, how, build);
}

/* The step a trial times: the general step of materials runs chooses apart from the constant-coefficient one. */
static const char *trial_what(const cpu_state *s)
{
    /* Each order's loads choose apart; the orders' keys name the row loops, which a choice stored
     * before some of them (among fewer candidates) did not try. */
    static const char *const wide[] = {"step", "step", "step of order 4, 2, 4 or 8 vectors, rows or tiles",
                                       "step of order 6, 2, 4 or 8 vectors, rows or tiles",
                                       "step of order 8, 2, 4 or 8 vectors, rows or tiles"};
    return s->materials ? "materials step" : wide[s->radius];
}

static void choose_from_cache(cpu_state *s)
{
    char key[320], value[64];
    trial_cache_key(s, trial_what(s), key, sizeof key);
    if (!tuning_cache_lookup(key, value, sizeof value)) return;
    for (int v = 0; v < s->candidate_count; ++v)
        if (strcmp(value, s->candidates[v].kernel) == 0) s->production = &s->candidates[v];
    if (s->production) describe_choice(s, "from the tuning cache");
}

/* Fields on 2 MiB pages would all start at the same offset in the cache's
 * sets, and so would the planes the stencil reads together (powers of two
 * apart on power-of-two grids): each field starts 17 cache lines further
 * into its allocation than the one before, so they do not evict each other. */
enum { FIELD_STAGGER_BYTES = 17 * CPU_ALIGN_BYTES };

static int alloc_field(cpu_state *s, void **field)
{
    HEAT_CHECK(s->allocated < (int)(sizeof s->allocations / sizeof s->allocations[0]), "too many fields");
    size_t stagger = (size_t)s->allocated * FIELD_STAGGER_BYTES;
    size_t bytes = (size_t)s->layout.total * s->elem + stagger;
    char *base = heat_host_alloc(bytes); /* 2 MiB pages, first touched by the threads that sweep them */
    HEAT_CHECK(base, "cannot allocate %zu bytes for a field", bytes);
    s->allocations[s->allocated++] = base;
    *field = base + stagger;
    return HEAT_OK;
}

static int alloc_cg(cpu_state *s)
{
    const heat_problem *p = &s->problem;
    long rows = (long)p->grid.n[1] * p->grid.n[2] * s->reduction.segments;
    HEAT_CALL(alloc_field(s, &s->r));
    HEAT_CALL(alloc_field(s, &s->p));
    HEAT_CALL(alloc_field(s, &s->q));
    if (p->implicit.preconditioner == HEAT_PRECOND_CHEBYSHEV) {
        HEAT_CALL(alloc_field(s, &s->z));
        HEAT_CALL(alloc_field(s, &s->w));
    }
    if (heat_chebyshev_pairs_allowed(p)) HEAT_CALL(alloc_field(s, &s->z2));
    s->dots_a = malloc(sizeof(double) * rows);
    s->dots_b = malloc(sizeof(double) * rows);
    HEAT_CHECK(s->dots_a && s->dots_b, "out of memory for the CG solver");
    s->diagonal = heat_cg_diagonal_make(p);
    return HEAT_OK;
}

static void cpu_destroy(void **state)
{
    if (!state || !*state) return;
    cpu_state *s = *state;
    for (int a = 0; a < s->allocated; ++a) free(s->allocations[a]); /* the fields and CG vectors */
    free(s->bricks);
    free(s->brick_sums);
    for (int f = 0; f < FACE_COUNT; ++f) free(s->send[f]), free(s->recv[f]);
    heat_reduction_free(&s->reduction);
    heat_material_tables_free(&s->tables);
    material_tables_free_d(&s->mat_d);
    material_tables_free_f(&s->mat_f);
    free(s->zone_base);
    free(s->runs.first), free(s->runs.run), free(s->runs.end_zone[0]), free(s->runs.end_zone[1]), free(s->runs.whole);
    free(s->runs.stencil_zones), free(s->runs.aligned), free(s->runs.mixed), free(s->runs.set_first);
    free(s->runs.vector_set);
    free(s->row_scratch);
    free(s->wide_rows);
    free(s->energy_bricks), free(s->energy_bricks_second);
    for (int f = 0; f < FACE_COUNT; ++f) free(s->captured[0][f]), free(s->captured[1][f]), free(s->face_zone[f]);
    void *vectors[] = {s->dots_a, s->dots_b, s->rings, s->edges};
    for (size_t v = 0; v < sizeof vectors / sizeof vectors[0]; ++v) free(vectors[v]);
    free(s);
    *state = NULL;
}


/* No x86 core of today has more than 2 MiB of L2 (Sapphire and Granite
 * Rapids 2 MiB, Zen 4 and 5 1 MiB); some virtual machines report 32 MiB,
 * which would make a block the whole plane and send the planes the
 * sweep re-reads to L3. */
enum { L2_BYTES_MAX = 2 << 20 };

/* Rows of y such that the planes of a block that a sweep keeps in cache
 * fill about half of one core's L2 cache: the stencil's three planes and the
 * output rows (4); with two steps a sweep, also the ring's three planes (7). */

static int block_rows_for(const cpu_state *s, int planes)
{
    long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
    if (l2 <= 0) l2 = 512L << 10;
    if (l2 > L2_BYTES_MAX) l2 = L2_BYTES_MAX;
    long row_bytes = (long)s->layout.stride_y * (long)s->elem;
    long rows = l2 / 2 / (planes * row_bytes);
    return rows < 4 ? 4 : rows > (1 << 20) ? (1 << 20) : (int)rows;
}

/* A pair's first step computes one row of v beyond each side of its block:
 * 2 / rows more of that step. Blocks sized to half a 512 KiB L2 (9 rows at
 * 512^3) make that 22%, which costs more than the blocks of 32 rows or more
 * lose when their planes partly come from L3. Cores with 2 MiB of L2 size
 * their blocks beyond this anyway. */
enum { PAIR_BLOCK_ROWS_MIN = 32 };

/* General explicit steps two a sweep (material_sweep2): where no face is
 * exchanged (one process, no periodic axis), so that the ring's ghost planes
 * are the boundary's. A pair gives the bits of two single steps, so runs on
 * several ranks (single steps) keep the bits of one. */
static int material_pairs_allowed(const heat_problem *p)
{
    return heat_materials_active(p->materials) && p->implicit.scheme == HEAT_EULER && !p->halo.single_steps &&
           p->halo.exchanged == 0;
}

/* Where the run allows pairs, explicit steps (heat_pairs_allowed,
 * stencil_sweep2_planes, material_sweep2) or the Chebyshev steps (heat_chebyshev_pairs_allowed, cheb_pair) go
 * two a sweep, each thread with a ring of planes of its own. */
static int alloc_rings(cpu_state *s)
{
    const heat_problem *p = &s->problem;
    s->step_pairs = heat_pairs_allowed(p);
    s->material_pairs = material_pairs_allowed(p);
    s->cheb_pairs = heat_chebyshev_pairs_allowed(p);
    if (!s->step_pairs && !s->cheb_pairs && !s->material_pairs) return HEAT_OK;
    s->fused_rows = block_rows_for(s, 7);
    if (s->fused_rows < PAIR_BLOCK_ROWS_MIN) s->fused_rows = PAIR_BLOCK_ROWS_MIN;
    if (s->fused_rows > p->grid.n[1]) s->fused_rows = p->grid.n[1];
    long values = s->problem.precision == HEAT_FLOAT ? ring_values_f(s->layout.stride_y, s->fused_rows)
                                                     : ring_values_d(s->layout.stride_y, s->fused_rows);
    size_t bytes = (size_t)values * s->elem * (size_t)omp_get_max_threads();
    s->rings = aligned_alloc(CPU_ALIGN_BYTES, (bytes + CPU_ALIGN_BYTES - 1) / CPU_ALIGN_BYTES * CPU_ALIGN_BYTES);
    HEAT_CHECK(s->rings, "cannot allocate %zu bytes for the sweep's rings of planes", bytes);
    size_t ring_bytes = (size_t)values * s->elem;
#pragma omp parallel /* each ring first touched by the thread that will use it (its memory node) */
    memset((char *)s->rings + (size_t)omp_get_thread_num() * ring_bytes, 0, ring_bytes);
    s->ring_threads = omp_get_max_threads();
    return HEAT_OK;
}

/* ghost = shift + scale * adjacent: Neumann (0, 1), Dirichlet (2g, -1); the
 * homogeneous rule of the CG vectors has shift 0. */
static void set_ghost_rules(cpu_state *s)
{
    const heat_problem *p = &s->problem;
    for (int f = 0; f < FACE_COUNT; ++f) {
        int dirichlet = p->bc[f].type == HEAT_BC_DIRICHLET;
        double shift = dirichlet ? 2.0 * p->bc[f].value : 0.0, scale = dirichlet ? -1.0 : 1.0;
        s->bc_d.shift[f] = shift, s->bc_d.scale[f] = scale;
        s->zero_d.shift[f] = 0.0, s->zero_d.scale[f] = scale;
        s->bc_f.shift[f] = (float)shift, s->bc_f.scale[f] = (float)scale;
        s->zero_f.shift[f] = 0.0f, s->zero_f.scale[f] = (float)scale;
    }
    s->bc_d.exchanged = s->zero_d.exchanged = s->bc_f.exchanged = s->zero_f.exchanged = p->halo.exchanged;
}

/* The exchange can travel beside the update where only z faces are
 * exchanged (ranks stacked along z, the default layout, or a periodic z):
 * their ghosts are read by planes 0 and n[2]-1 alone. */
static int overlappable(const cpu_state *s)
{
    const unsigned exchanged = s->problem.halo.exchanged;
    return exchanged && heat_only_z_exchanged(exchanged) && s->transport.exchange_start && !s->transport.serial &&
           s->problem.grid.n[2] >= 2 * s->radius + 1;
}

/* A pair's exchange can travel beside the planes that read none of it,
 * two from each face, where overlappable() holds and those planes exist. */
static int pair_overlappable(const cpu_state *s) { return overlappable(s) && s->problem.grid.n[2] >= 6; }

/* Where pairs go beside their exchange, the planes of v next to the z faces (edge_planes). */
static int alloc_edges(cpu_state *s)
{
    if (!s->step_pairs || !pair_overlappable(s)) return HEAT_OK;
    long plane = s->problem.precision == HEAT_FLOAT ? edge_plane_values_f(s->layout.stride_y, s->problem.grid.n[1])
                                                    : edge_plane_values_d(s->layout.stride_y, s->problem.grid.n[1]);
    size_t bytes = 8 * (size_t)plane * s->elem;
    s->edges = aligned_alloc(CPU_ALIGN_BYTES, (bytes + CPU_ALIGN_BYTES - 1) / CPU_ALIGN_BYTES * CPU_ALIGN_BYTES);
    HEAT_CHECK(s->edges, "cannot allocate %zu bytes for the planes next to the z faces", bytes);
    memset(s->edges, 0, bytes);
    return HEAT_OK;
}

/* Halo buffers of R planes a face, two where pairs are allowed. */
static int alloc_faces(cpu_state *s)
{
    const int *n = s->problem.grid.n;
    size_t layers = heat_pairs_allowed(&s->problem) ? 2 : (size_t)s->radius;
    for (int f = 0; f < FACE_COUNT; ++f) {
        if (!(s->problem.halo.exchanged & 1u << f)) continue;
        int axis = f / 2;
        s->face_bytes[f] = (size_t)n[0] * n[1] * n[2] / n[axis] * s->elem;
        s->send[f] = malloc(layers * s->face_bytes[f]);
        s->recv[f] = malloc(layers * s->face_bytes[f]);
        HEAT_CHECK(s->send[f] && s->recv[f], "out of memory for the halo buffers");
    }
    return HEAT_OK;
}

/* The zone index of problem->zones in the fields' layout (heat_zones_in_layout). */
static int setup_zones(cpu_state *s)
{
    HEAT_CALL(heat_zones_check(&s->problem));
    s->zone_base = calloc((size_t)s->layout.total + CPU_ALIGN_BYTES, 1);
    HEAT_CHECK(s->zone_base, "cannot allocate %ld bytes for the zone index", s->layout.total);
    s->zone = s->zone_base;
    heat_zones_in_layout(&s->problem, &s->layout, s->zone);
    return HEAT_OK;
}

/* The zones a point's stencil sees, packed as material_runs' classes: its own, then its faces' in the step's order. */
static unsigned long long stencil_zones(const unsigned char *at, long sy, long sz)
{
    const long beside[6] = {-sz, -sy, -1, 1, sy, sz};
    unsigned long long zones = at[0];
    for (int b = 0; b < 6; ++b) zones |= (unsigned long long)at[beside[b]] << (8 * (b + 1));
    return zones;
}

/* Runs of points that see another stencil of zones than their zone alone take the class's weights only
 * from this length on: shorter ones join the gathering row (one class a point would cost a run's record
 * a point where zones change at every point). */
enum { STENCIL_RUN_MIN = 8 };

/* The class of a stencil of zones (material_runs), added where new. */
static int stencil_class(material_runs *runs, int *capacity, unsigned long long zones)
{
    for (int k = 0; k < runs->stencils; ++k)
        if (runs->stencil_zones[k] == zones) return k;
    if (runs->stencils == *capacity) {
        unsigned long long *bigger = realloc(runs->stencil_zones, sizeof *bigger * (size_t)(*capacity *= 2));
        if (!bigger) return -1;
        runs->stencil_zones = bigger;
    }
    runs->stencil_zones[runs->stencils] = zones;
    return runs->stencils++;
}

/* Appends the run [begin, end) of class `stencil` (-1: several) to row `at`'s runs, a run of several joining
 * the row's last one where that is of several too. */
static int add_run(cpu_state *s, long *capacity, long *count, long row_first, int begin, int end, int stencil)
{
    material_run *last = *count > row_first ? &s->runs.run[*count - 1] : NULL;
    if (stencil < 0 && last && last->stencil < 0 && last->end == begin) {
        last->end = end;
        return HEAT_OK;
    }
    if (*count == *capacity) {
        material_run *bigger = realloc(s->runs.run, sizeof(material_run) * (size_t)(*capacity *= 2));
        HEAT_CHECK(bigger, "out of memory for the zone index");
        s->runs.run = bigger;
    }
    s->runs.run[(*count)++] = (material_run){begin, end, stencil};
    return HEAT_OK;
}

/* Classes a row cut at vectors' bounds may add (vector_runs): a point's class is looked up among them. */
enum { VECTOR_RUN_STENCILS_MAX = 1024 };

/* The class of a stencil of zones where known or where there is room for it; -1: neither. */
static int known_class(material_runs *runs, int *capacity, unsigned long long zones)
{
    for (int k = 0; k < runs->stencils; ++k)
        if (runs->stencil_zones[k] == zones) return k;
    return runs->stencils < VECTOR_RUN_STENCILS_MAX ? stencil_class(runs, capacity, zones) : -1;
}

/* Where the runs being cut go (setup_runs), and the mixed patterns so far with a hash table of them
 * (slot[h]: pattern + 1, 0: free), which keeps each pattern once. */
typedef struct run_cutter {
    long capacity, count;
    long mixed_capacity;
    int class_capacity;
    int *slot;
    long slots;
} run_cutter;

/* The vector [b, e) of one class k as a run, joining the run before it (from `start` on) where that has k. */
static int add_vector_run(cpu_state *s, run_cutter *c, long start, int b, int e, int k)
{
    material_run *last = c->count > start ? &s->runs.run[c->count - 1] : NULL;
    if (last && last->stencil == k && last->end == b) {
        last->end = e;
        return HEAT_OK;
    }
    if (c->count == c->capacity) {
        material_run *bigger = realloc(s->runs.run, sizeof(material_run) * (size_t)(c->capacity *= 2));
        HEAT_CHECK(bigger, "out of memory for the zone index");
        s->runs.run = bigger;
    }
    s->runs.run[c->count++] = (material_run){b, e, k};
    return HEAT_OK;
}

/* Are two mixed vectors' patterns (classes and their lanes) the same? */
static int same_pattern(const material_mixed *a, const material_mixed *b)
{
    if (a->classes != b->classes) return 0;
    for (int k = 0; k < a->classes; ++k)
        if (a->stencil[k] != b->stencil[k] || a->lanes[k] != b->lanes[k]) return 0;
    return 1;
}

/* FNV-1a over a pattern's classes and lanes, its high bits folded into the low ones (the table's index). */
static unsigned long long pattern_hash(const material_mixed *v)
{
    unsigned long long h = 1469598103934665603ull;
    for (int k = 0; k < v->classes; ++k) {
        h = (h ^ (unsigned long long)v->stencil[k]) * 1099511628211ull;
        h = (h ^ v->lanes[k]) * 1099511628211ull;
    }
    return h ^ h >> 29;
}

/* Pattern v's slot in the hash table: its own, or the free one where it would go. */
static long pattern_slot(const cpu_state *s, const run_cutter *c, const material_mixed *v)
{
    long h = (long)(pattern_hash(v) & (unsigned long long)(c->slots - 1));
    while (c->slot[h] && !same_pattern(&s->runs.mixed[c->slot[h] - 1], v)) h = (h + 1) & (c->slots - 1);
    return h;
}

/* The index of pattern v among the mixed patterns, added where new. */
static int mixed_pattern(cpu_state *s, run_cutter *c, const material_mixed *v, int *index)
{
    if (2 * ((long)s->runs.mixed_count + 1) > c->slots) { /* the table at most half full */
        const long slots = c->slots ? 2 * c->slots : 1024;
        int *table = calloc((size_t)slots, sizeof *table);
        HEAT_CHECK(table, "out of memory for the zone index");
        free(c->slot), c->slot = table, c->slots = slots;
        for (int i = 0; i < s->runs.mixed_count; ++i) c->slot[pattern_slot(s, c, &s->runs.mixed[i])] = i + 1;
    }
    const long h = pattern_slot(s, c, v);
    if (c->slot[h]) {
        *index = c->slot[h] - 1;
        return HEAT_OK;
    }
    if (s->runs.mixed_count == c->mixed_capacity) {
        c->mixed_capacity = c->mixed_capacity ? 2 * c->mixed_capacity : 64;
        material_mixed *bigger = realloc(s->runs.mixed, sizeof(material_mixed) * (size_t)c->mixed_capacity);
        HEAT_CHECK(bigger, "out of memory for the zone index");
        s->runs.mixed = bigger;
    }
    s->runs.mixed[s->runs.mixed_count] = *v;
    *index = s->runs.mixed_count++;
    c->slot[h] = *index + 1;
    return HEAT_OK;
}

/* The vector at b as a mixed vector (material_mixed): a run of its pattern. */
static int add_mixed_vector(cpu_state *s, run_cutter *c, long start, int b, int e, const material_mixed *v)
{
    int index = 0;
    HEAT_CALL(mixed_pattern(s, c, v, &index));
    return add_vector_run(s, c, start, b, e, -2 - index);
}

/* The stencil classes of the vector [b, e) of a row (first point `at`) as a mixed vector; 0: more than it holds,
 * or a class beyond VECTOR_RUN_STENCILS_MAX. */
static int vector_classes(cpu_state *s, run_cutter *c, const unsigned char *at, int b, int e, material_mixed *v)
{
    *v = (material_mixed){.classes = 0};
    for (int x = b; x < e; ++x) {
        const int k = known_class(&s->runs, &c->class_capacity, stencil_zones(at + x, s->layout.stride_y, s->layout.stride_z));
        if (k < 0) return 0;
        int slot = 0;
        while (slot < v->classes && v->stencil[slot] != k) ++slot;
        if (slot == v->classes) {
            if (slot == MATERIAL_MIXED_CLASSES) return 0;
            v->stencil[v->classes++] = k, v->lanes[slot] = 0;
        }
        v->lanes[slot] |= 1ull << (x - b);
    }
    return 1;
}

/* Row `row_first`'s runs (they end at c->count) cut again at vectors' bounds (material_runs.aligned): a vector
 * of one class joins the run before it where that has its class, a vector of a few classes is a mixed vector.
 * Kept where every vector is one of those and a last vector shorter than the others is of one class; else the
 * row keeps its runs. *aligned: which. */
static int cut_at_vectors(cpu_state *s, run_cutter *c, const unsigned char *at, long row_first, unsigned char *aligned)
{
    const int n0 = s->problem.grid.n[0], lanes = s->runs.lanes;
    const long start = c->count; /* the patterns of a row not kept stay (unused) */
    *aligned = 0;
    for (int b = 0; b < n0; b += lanes) {
        const int e = b + lanes < n0 ? b + lanes : n0;
        material_mixed v;
        if (!vector_classes(s, c, at, b, e, &v) || (v.classes > 1 && e - b < lanes)) {
            c->count = start;
            return HEAT_OK;
        }
        if (v.classes == 1) HEAT_CALL(add_vector_run(s, c, start, b, e, v.stencil[0]));
        else HEAT_CALL(add_mixed_vector(s, c, start, b, e, &v));
    }
    memmove(s->runs.run + row_first, s->runs.run + start, sizeof(material_run) * (size_t)(c->count - start));
    c->count = row_first + (c->count - start);
    *aligned = 1;
    return HEAT_OK;
}

/* The aligned rows' vectors' weight sets (material_runs.vector_set) from their runs; none where no row is aligned. */
static int setup_vector_sets(cpu_state *s)
{
    const int n0 = s->problem.grid.n[0], lanes = s->runs.lanes, vectors = (n0 + lanes - 1) / lanes;
    const long rows = (long)s->problem.grid.n[1] * s->problem.grid.n[2];
    long aligned = 0;
    for (long row = 0; row < rows; ++row) aligned += s->runs.aligned[row];
    if (!aligned) return HEAT_OK;
    s->runs.set_first = malloc(sizeof(long) * (size_t)rows);
    s->runs.vector_set = malloc(sizeof(int) * (size_t)(aligned * vectors));
    HEAT_CHECK(s->runs.set_first && s->runs.vector_set, "out of memory for the zone index");
    long next = 0;
    for (long row = 0; row < rows; ++row) {
        s->runs.set_first[row] = next;
        if (!s->runs.aligned[row]) continue;
        for (long r = s->runs.first[row]; r < s->runs.first[row + 1]; ++r) {
            const material_run *run = &s->runs.run[r];
            const int set = run->stencil >= 0 ? run->stencil : s->runs.stencils + (-2 - run->stencil);
            for (int b = run->begin; b < run->end; b += lanes) s->runs.vector_set[next + b / lanes] = set;
        }
        next += vectors;
    }
    return HEAT_OK;
}

/* Each row cut into runs of points that see one stencil of zones (material_run): a run of a zone alone, or
 * of a class seen along STENCIL_RUN_MIN points or more, takes the vector row with that class's weights;
 * the others the gathering row. Classes 0..zones-1 are the zones alone. Rows are run-length coded once
 * here; the step only reads the runs. */
static int setup_runs(cpu_state *s)
{
    const int *n = s->problem.grid.n, zones = s->tables.zones;
    const heat_layout *l = &s->layout;
    const long rows = (long)n[1] * n[2], first_point = l->origin + 1 + l->stride_y + l->stride_z;
    run_cutter c = {.capacity = 2 * rows, .class_capacity = 2 * zones};
    int *class_capacity = &c.class_capacity;
    s->runs.first = malloc(sizeof(long) * (size_t)(rows + 1));
    s->runs.run = malloc(sizeof(material_run) * (size_t)c.capacity);
    s->runs.end_zone[0] = malloc((size_t)rows), s->runs.end_zone[1] = malloc((size_t)rows);
    s->runs.whole = malloc((size_t)rows), s->runs.aligned = malloc((size_t)rows);
    s->runs.stencil_zones = malloc(sizeof(unsigned long long) * (size_t)c.class_capacity);
    s->runs.lanes = CPU_VECTOR_BYTES / (int)s->elem;
    HEAT_CHECK(s->runs.first && s->runs.run && s->runs.end_zone[0] && s->runs.end_zone[1] && s->runs.whole &&
               s->runs.aligned && s->runs.stencil_zones, "out of memory for the zone index");
    for (int a = 0; a < zones; ++a) s->runs.stencil_zones[a] = 0x01010101010101ull * (unsigned long long)a;
    s->runs.stencils = zones;
    for (long row = 0; row < rows; ++row) {
        const unsigned char *at = s->zone + first_point + row % n[1] * l->stride_y + row / n[1] * l->stride_z;
        s->runs.first[row] = c.count;
        s->runs.end_zone[0][row] = at[0], s->runs.end_zone[1][row] = at[n[0] - 1];
        for (int x = 0; x < n[0];) {
            const unsigned long long seen = stencil_zones(at + x, l->stride_y, l->stride_z);
            int end = x + 1;
            while (end < n[0] && stencil_zones(at + end, l->stride_y, l->stride_z) == seen) ++end;
            const int alone = seen == 0x01010101010101ull * at[x];
            int stencil = alone ? at[x] : end - x >= STENCIL_RUN_MIN ? stencil_class(&s->runs, class_capacity, seen) : -1;
            HEAT_CHECK(alone || end - x < STENCIL_RUN_MIN || stencil >= 0, "out of memory for the zone index");
            HEAT_CALL(add_run(s, &c.capacity, &c.count, s->runs.first[row], x, end, stencil));
            x = end;
        }
        const int whole = c.count - s->runs.first[row] == 1 && s->runs.run[c.count - 1].stencil == at[0];
        s->runs.aligned[row] = 0;
        if (!whole) HEAT_CALL(cut_at_vectors(s, &c, at, s->runs.first[row], &s->runs.aligned[row]));
    }
    s->runs.first[rows] = c.count;
    free(c.slot);
    for (long row = 0; row < rows; ++row)
        s->runs.whole[row] = s->runs.first[row + 1] - s->runs.first[row] == 1 &&
                             s->runs.run[s->runs.first[row]].stencil == s->runs.end_zone[0][row] &&
                             s->runs.run[s->runs.first[row]].stencil < zones;
    HEAT_CALL(setup_vector_sets(s));
    s->scratch_threads = omp_get_max_threads();
    const size_t scratch_bytes = (size_t)s->scratch_threads * (size_t)l->stride_y * s->elem;
    s->row_scratch = aligned_alloc(CPU_ALIGN_BYTES, (scratch_bytes + CPU_ALIGN_BYTES - 1) / CPU_ALIGN_BYTES * CPU_ALIGN_BYTES);
    HEAT_CHECK(s->row_scratch, "out of memory for the sweep's rows");
    return HEAT_OK;
}

/* A materials run: the general step (cpu_materials.h) instead of the
 * constant-coefficient kernels, one step a sweep. */
static int setup_materials(cpu_state *s)
{
    const heat_problem *p = &s->problem;
    s->materials = 1;
    HEAT_CALL(setup_zones(s));
    HEAT_CALL(heat_material_tables_make(p, &s->tables));
    HEAT_CALL(setup_runs(s));
    const double theta = heat_scheme_theta(p->implicit.scheme);
    HEAT_CALL(material_tables_from_d(&s->mat_d, &s->tables, p->dt, theta, p->halo.exchanged, &s->runs));
    HEAT_CALL(material_tables_from_f(&s->mat_f, &s->tables, p->dt, theta, p->halo.exchanged, &s->runs));
    HEAT_CALL(setup_energy(s));
    if (p->implicit.scheme != HEAT_EULER && p->implicit.preconditioner == HEAT_PRECOND_JACOBI) {
        HEAT_CALL(alloc_field(s, &s->inv_diagonal));
        if (p->precision == HEAT_FLOAT) mat_inverse_diagonal_f(s->inv_diagonal, s->zone, p->grid.n, &s->layout, &s->mat_f);
        else mat_inverse_diagonal_d(s->inv_diagonal, s->zone, p->grid.n, &s->layout, &s->mat_d);
    }
    char fused[64] = "";
    if (s->material_pairs) snprintf(fused, sizeof fused, "; two steps a sweep, blocks of %d rows", s->fused_rows);
    snprintf(s->kernel, sizeof s->kernel, "materials step, %d zones, its stores chosen by timing the first steps "
             "(C + OpenMP, %s, %d-byte vectors, blocks of %d rows%s)",
             s->tables.zones, heat_precision_name(p->precision), CPU_VECTOR_BYTES, s->block_rows, fused);
    if (p->implicit.scheme != HEAT_EULER) s->production = &cpu_variants[0]; /* steps through CG: nothing to try */
    else choose_from_cache(s);
    return HEAT_OK;
}

/* A space order above 2 (cpu_wide.h): one step a sweep, ghosts R deep. */
static int setup_wide(cpu_state *s)
{
    const heat_problem *p = &s->problem;
    HEAT_CHECK(!heat_materials_active(p->materials), "space order %d with materials (internal error: the "
               "configuration refuses it)", p->space_order);
    if (p->implicit.scheme != HEAT_EULER) {
        s->wide_row_threads = omp_get_max_threads();
        const size_t bytes = (size_t)s->wide_row_threads * (size_t)s->layout.stride_y * s->elem;
        s->wide_rows = aligned_alloc(CPU_ALIGN_BYTES, (bytes + CPU_ALIGN_BYTES - 1) / CPU_ALIGN_BYTES * CPU_ALIGN_BYTES);
        HEAT_CHECK(s->wide_rows, "out of memory for the operator's rows");
    }
    snprintf(s->kernel, sizeof s->kernel, "heat_step or heat_step_nt of order %d, 2, 4 or 8 vectors a turn, "
             "a row or a tile of rows at a time, chosen by timing the first steps "
             "(C + OpenMP, %s, %d-byte vectors, blocks of %d rows)", 2 * s->radius, heat_precision_name(p->precision),
             CPU_VECTOR_BYTES, s->block_rows);
    choose_from_cache(s);
    return HEAT_OK;
}

static int cpu_create(const heat_problem *problem, const heat_halo_transport *transport, void **state)
{
    cpu_state *s = calloc(1, sizeof *s);
    HEAT_CHECK(s, "out of memory");
    *state = s;
    s->problem = *problem;
    s->transport = heat_halo_transport_or_none(transport);
    s->run_threads = omp_get_max_threads();
    s->elem = heat_precision_size(problem->precision);
    s->radius = heat_space_radius(problem);
    s->layout = heat_layout_make_ghost(problem->grid.n, s->elem, CPU_ALIGN_BYTES, 1, s->radius);
    s->coeffs = heat_coeffs_make(problem);
    s->wide = heat_space_coeffs_make(problem);
    set_ghost_rules(s);
    HEAT_CALL(alloc_faces(s));
    HEAT_CALL(heat_reduction_init(&s->reduction, problem, transport));
    s->bricks = malloc(sizeof *s->bricks * (size_t)s->reduction.own[0] * s->reduction.own[1] * s->reduction.own[2]);
    s->brick_sums = malloc(sizeof *s->brick_sums * (size_t)s->reduction.own[0] * s->reduction.own[1] * s->reduction.own[2]);
    HEAT_CHECK(s->bricks && s->brick_sums, "out of memory");
    HEAT_CALL(alloc_field(s, &s->current));
    HEAT_CALL(alloc_field(s, &s->next));
    if (problem->implicit.scheme != HEAT_EULER) HEAT_CALL(alloc_cg(s));
    snprintf(s->device, sizeof s->device, "CPU, %d OpenMP thread%s", omp_get_max_threads(), omp_get_max_threads() == 1 ? "" : "s");
    s->block_rows = block_rows_for(s, 2 * s->radius + 2);
    HEAT_CALL(alloc_rings(s));
    HEAT_CALL(alloc_edges(s));
    step_candidates(s);
    if (heat_materials_active(problem->materials)) return setup_materials(s);
    if (s->radius > 1) return setup_wide(s);
    char fused[64] = "";
    if (s->step_pairs) snprintf(fused, sizeof fused, "; two steps a sweep, blocks of %d rows", s->fused_rows);
    snprintf(s->kernel, sizeof s->kernel, "heat_step or heat_step_nt, chosen by timing the first steps (C + OpenMP, "
             "%s, %d-byte vectors, blocks of %d rows%s)", heat_precision_name(problem->precision), CPU_VECTOR_BYTES,
             s->block_rows, fused);
    choose_from_cache(s);
    cheb_choose_from_cache(s);
    return HEAT_OK;
}

static int cpu_upload(void *state, const void *host)
{
    cpu_state *s = state;
    if (s->problem.precision == HEAT_FLOAT) unpack_f(s->current, host, s->problem.grid.n, &s->layout);
    else unpack_d(s->current, host, s->problem.grid.n, &s->layout);
    return HEAT_OK;
}

static int cpu_download(void *state, void *host)
{
    cpu_state *s = state;
    if (s->problem.precision == HEAT_FLOAT) pack_f(host, s->current, s->problem.grid.n, &s->layout);
    else pack_d(host, s->current, s->problem.grid.n, &s->layout);
    return HEAT_OK;
}

#define HEAT_PRECISION_FILE "cpu_step_ops.h"
#include "for_each_precision.h"

static void fill_halo_yz(cpu_state *s, void *field) { TYPED(s, fill_halo_yz_typed, s, field); }

/* Planes [z_begin, z_end) of one step (halo fill and stencil: out = step(in)), with an
 * exchange travelling meanwhile (NULL: none). */
static void sweep_planes(cpu_state *s, void *out, void *in, const heat_variant *v, int z_begin, int z_end,
                         const heat_halo_transport *travelling)
{
    TYPED(s, sweep_planes_typed, s, out, in, v, z_begin, z_end, travelling);
}

/* One step with the exchange beside it: the faces leave, the planes that
 * read no ghosts are swept while they travel (thread 0 moving them along,
 * since MPI moves messages only inside its calls), then, once they have
 * arrived, the R boundary planes at each end. The same values as
 * exchange-then-sweep: each row is computed from the same inputs; only the
 * order of rows changes. */
static int overlapped_sweep(cpu_state *s, const heat_variant *v)
{
    const heat_halo_transport *t = &s->transport;
    const int nz = s->problem.grid.n[2], r = s->radius;
    size_t bytes[FACE_COUNT];
    for (int f = 0; f < FACE_COUNT; ++f) bytes[f] = (size_t)r * s->face_bytes[f];
    pack_faces(s, s->current, r);
    HEAT_CALL(t->exchange_start(t->context, s->send, s->recv, bytes));
    sweep_planes(s, s->next, s->current, v, r, nz - r, t);
    HEAT_CALL(t->exchange_wait(t->context));
    unpack_faces(s, s->current, r);
    sweep_planes(s, s->next, s->current, v, 0, r, NULL);
    sweep_planes(s, s->next, s->current, v, nz - r, nz, NULL);
    return HEAT_OK;
}

/* Two steps in one sweep wherever the run allows it (alloc_rings): a
 * property of the whole run, never of this rank's block or of the threads
 * it has just now, since ranks that exchange two planes for a pair must all
 * take the same pairs. */
static int fusable(const cpu_state *s, const heat_variant *variant)
{
    return (s->step_pairs || s->material_pairs) && !variant->laplacian;
}

/* The exchanged z faces' two planes across: the nearer into the ghost
 * planes, the outer ones stay in the receive buffers (stencil_sweep2_planes'
 * `beyond`): what two steps read of the neighbours. */
static int exchange_two_planes(cpu_state *s, void *field)
{
    const heat_halo_transport *t = &s->transport;
    if (!s->problem.halo.exchanged) return HEAT_OK;
    size_t bytes[FACE_COUNT];
    for (int f = 0; f < FACE_COUNT; ++f) bytes[f] = 2 * s->face_bytes[f];
    pack_faces(s, field, 2);
    HEAT_CALL(t->exchange(t->context, s->send, s->recv, bytes));
    unpack_faces(s, field, 1);
    return HEAT_OK;
}

/* The outer received plane below plane -1 / above plane n[2]; NULL where the face is a boundary. */
static const void *beyond_face(const cpu_state *s, int face)
{
    if (!(s->problem.halo.exchanged & 1u << face)) return NULL;
    return (const char *)s->recv[face] + s->face_bytes[face];
}

/* Planes [z_begin, z_end) of out = two steps of in, on at most one thread a
 * plane; with an exchange travelling, keeping v's planes next to the faces
 * for sweep2_edges. */
static void sweep2_planes(cpu_state *s, void *out, void *in, int stream, int z_begin, int z_end,
                          const heat_halo_transport *travelling)
{
    const void *beyond[2] = {beyond_face(s, FACE_Z_LOW), beyond_face(s, FACE_Z_HIGH)};
    int threads = pair_threads(s);
    if (threads > z_end - z_begin) threads = z_end - z_begin;
    TYPED(s, sweep2_planes_typed, s, out, in, stream, beyond, threads, z_begin, z_end, travelling);
}

static void sweep2_edges(cpu_state *s, void *out, void *in, int stream)
{
    const void *beyond[2] = {beyond_face(s, FACE_Z_LOW), beyond_face(s, FACE_Z_HIGH)};
    TYPED(s, sweep2_edges_typed, s, out, in, stream, beyond);
}

/* Two steps with their exchange beside them: the faces' two planes leave,
 * the planes two or more from the faces are swept while they travel (thread
 * 0 moving them along), then, once they have arrived, the two planes next
 * to each face. The same values as exchange-then-sweep: every row is
 * computed by the same functions from the same inputs. */
static int overlapped_sweep2(cpu_state *s, void *out, void *in, int stream)
{
    const heat_halo_transport *t = &s->transport;
    const int nz = s->problem.grid.n[2];
    size_t bytes[FACE_COUNT];
    for (int f = 0; f < FACE_COUNT; ++f) bytes[f] = 2 * s->face_bytes[f];
    pack_faces(s, in, 2);
    HEAT_CALL(t->exchange_start(t->context, s->send, s->recv, bytes));
    sweep2_planes(s, out, in, stream, 2, nz - 2, t);
    HEAT_CALL(t->exchange_wait(t->context));
    unpack_faces(s, in, 1);
    sweep2_edges(s, out, in, stream);
    return HEAT_OK;
}

static int sweep2(cpu_state *s, void *out, void *in, int stream)
{
    if (s->edges) return overlapped_sweep2(s, out, in, stream);
    HEAT_CALL(exchange_two_planes(s, in));
    sweep2_planes(s, out, in, stream, 0, s->problem.grid.n[2], NULL);
    return HEAT_OK;
}

/* energy in += dt power, kind by kind, for one step. One copy of the code for
 * single steps and pairs alike: inlined, the compiler may contract the sum
 * into a fused multiply-add in one place and not in another, and the sums
 * would not keep their bits across rank counts (single steps) and one rank (pairs). */
static __attribute__((noinline, noclone)) void add_step_energy(cpu_state *s, const double power[HEAT_ENERGY_KINDS])
{
    for (int kind = 0; kind < HEAT_ENERGY_KINDS; ++kind) s->energy_in[kind] += s->problem.dt * power[kind];
}

/* One general step: exchanged ghosts, the boundary faces' ghosts by their
 * zones' rules, the sources of this step's start time, the power that all
 * of them bring (the energy balance), the sweep (stream: streaming stores). */
static int material_step(cpu_state *s, int stream)
{
    double power[HEAT_ENERGY_KINDS];
    HEAT_CALL(exchange_ghosts(s, s->current));
    material_sources(s, step_time(s));
    HEAT_CALL(step_power(s, s->current, power)); /* the sweep sets the boundary ghosts row by row */
    TYPED(s, material_sweep_typed, s, stream);
    add_step_energy(s, power);
    void *swap = s->current;
    s->current = s->next;
    s->next = swap;
    return HEAT_OK;
}

/* Two general steps in one sweep (material_pairs): the first step's power
 * from the field, as material_step takes it, the second's from the first
 * step's boundary values the sweep captured, each with the sources of its
 * own start time; energy added step by step, as two single steps add it. */
static int material_pair(cpu_state *s, int stream)
{
    double power[2][HEAT_ENERGY_KINDS];
    double *const bricks[2] = {s->energy_bricks, s->energy_bricks_second};
    material_sources(s, step_time(s));
    const double first_sources = source_power(s);
    const double second_time = time_of_step(s, s->step + 1);
    TYPED(s, material_pair_typed, s, stream, second_time, bricks);
    for (int step = 0; step < 2; ++step) HEAT_CALL(sum_boundary_power(s, bricks[step], power[step]));
    power[0][HEAT_ENERGY_SOURCES] = first_sources;
    material_sources(s, second_time);
    power[1][HEAT_ENERGY_SOURCES] = source_power(s);
    add_step_energy(s, power[0]);
    add_step_energy(s, power[1]);
    void *swap = s->current;
    s->current = s->next;
    s->next = swap;
    return HEAT_OK;
}

/* The heat and the powers at the current field and time, and the energy in so far; collective. */
static int cpu_energy(void *state, heat_energy *e)
{
    cpu_state *s = state;
    HEAT_CHECK(s->materials, "the energy balance of a run without materials (internal error)");
    const heat_reduction *r = &s->reduction;
    HEAT_CALL(exchange_ghosts(s, s->current));
    material_sources(s, step_time(s));
    material_fill(s, s->current, 0);
    HEAT_CALL(step_power(s, s->current, e->power));
    if (s->problem.precision == HEAT_FLOAT)
        material_heat_bricks_f(s->current, s->zone, s->problem.grid.n, &s->layout, s->tables.heat_capacity,
                               cell_volume(s), r->brick, r->own, s->brick_sums);
    else
        material_heat_bricks_d(s->current, s->zone, s->problem.grid.n, &s->layout, s->tables.heat_capacity,
                               cell_volume(s), r->brick, r->own, s->brick_sums);
    HEAT_CALL(heat_reduction_sum_bricks(&s->reduction, s->brick_sums, 1, &e->heat));
    memcpy(e->energy, s->energy_in, sizeof e->energy);
    return HEAT_OK;
}

static int cpu_set_energy(void *state, const double *energy_in)
{
    cpu_state *s = state;
    memcpy(s->energy_in, energy_in, sizeof s->energy_in);
    return HEAT_OK;
}

static int cpu_supports(const heat_problem *problem)
{
    (void)problem;
    return 1;
}

static int cpu_set_clock(void *state, long step, long clock_step, double clock_time)
{
    cpu_state *s = state;
    s->step = step, s->clock_step = clock_step, s->clock_time = clock_time;
    return HEAT_OK;
}

static int cpu_run_variant(void *state, const heat_variant *variant, long steps)
{
    cpu_state *s = state;
    if (steps <= 0) return HEAT_OK; /* also where the trial steps took them all: no variant chosen yet */
    if (s->materials && !variant->laplacian) {
        for (long step = 0; step < steps;) {
            const int pair = steps - step >= 2 && fusable(s, variant);
            HEAT_CALL(pair ? material_pair(s, variant_streams(variant)) : material_step(s, variant_streams(variant)));
            step += 1 + pair, s->step += 1 + pair;
        }
        return HEAT_OK;
    }
    for (long step = 0; step < steps;) {
        int pair = steps - step >= 2 && fusable(s, variant);
        if (pair) HEAT_CALL(sweep2(s, s->next, s->current, variant_streams(variant)));
        else if (overlappable(s)) HEAT_CALL(overlapped_sweep(s, variant));
        else {
            HEAT_CALL(exchange_ghosts(s, s->current)); /* the sweeps set the other faces' ghosts as they go */
            sweep_planes(s, s->next, s->current, variant, 0, s->problem.grid.n[2], NULL);
        }
        void *t = s->current;
        s->current = s->next;
        s->next = t;
        step += pair ? 2 : 1;
    }
    return HEAT_OK;
}

/* Streaming stores save reading each output line before writing it, but
 * the next step then reads the field from memory, where a field that the
 * last-level cache could hold might have stayed cached. A size rule (fields
 * beyond 4x the reported L2) goes wrong where sysconf misreports the L2
 * (as virtual machines do), so the first steps of the run decide: the
 * candidates (heat_step and heat_step_nt; above order 2 also their loops of 4
 * and 8 vectors a turn) take turns of three steps, twice each, and the fastest step
 * that is not the first of its turn (whose input another variant left in
 * or out of the cache) wins. The second round of turns goes through the
 * candidates in the reverse order, so that each has one turn early and one
 * late: a core's first steps can run faster than the ones after (a Xeon of
 * a GPU host, docs/PERFORMANCE.md), which favoured the first candidates. All do the same arithmetic in the same order, so
 * the trial steps are the run's own steps and nothing depends on the choice.
 * Where the run takes pairs, a trial step is a pair, as production's are: a
 * rank that took its choice from the tuning cache and one that is still
 * trying must exchange the same planes (two for a pair, one for a single). */
enum { TRIAL_TURN = 3, TRIAL_TURNS_EACH = 2 };

/* One trial step of at most `steps` (a pair where allowed); returns the steps taken in *taken. */
static int trial_step(cpu_state *s, long steps, long *taken)
{
    const int count = s->candidate_count;
    const int turn = s->trials / TRIAL_TURN, timed = s->trials % TRIAL_TURN != 0;
    const int which = turn / count % 2 == 0 ? turn % count : count - 1 - turn % count;
    const heat_variant *v = &s->candidates[which];
    *taken = steps >= 2 && fusable(s, v) ? 2 : 1;
    double start = omp_get_wtime();
    HEAT_CALL(cpu_run_variant(s, v, *taken));
    double ms = (omp_get_wtime() - start) * 1e3 / (double)*taken;
    if (timed && (s->trial_ms[which] <= 0.0 || ms < s->trial_ms[which])) s->trial_ms[which] = ms;
    if (++s->trials < TRIAL_TURN * TRIAL_TURNS_EACH * count) return HEAT_OK;
    int fastest = 0, next = -1; /* the fastest and the runner-up */
    for (int c = 1; c < count; ++c)
        if (s->trial_ms[c] < s->trial_ms[fastest]) fastest = c;
    for (int c = 0; c < count; ++c)
        if (c != fastest && (next < 0 || s->trial_ms[c] < s->trial_ms[next])) next = c;
    s->production = &s->candidates[fastest];
    char how[128], key[320];
    snprintf(how, sizeof how, "chosen by timing: %.3g ms a step against %.3g for %s", s->trial_ms[fastest],
             s->trial_ms[next], s->candidates[next].kernel);
    describe_choice(s, how);
    trial_cache_key(s, trial_what(s), key, sizeof key);
    tuning_cache_store(key, s->production->kernel);
    return HEAT_OK;
}

static int cpu_advance(void *state, long steps)
{
    cpu_state *s = state;
    for (long taken = 0; steps > 0 && !s->production; steps -= taken) HEAT_CALL(trial_step(s, steps, &taken));
    return cpu_run_variant(state, s->production, steps);
}

/* min, max and the count of non-finite values of this block; the sum of the whole grid
 * (every process's bricks, added in the same order whatever the layout: collective). */
static int cpu_stats(void *state, heat_field_stats *stats)
{
    cpu_state *s = state;
    const heat_reduction *r = &s->reduction;
    if (s->problem.precision == HEAT_FLOAT) field_stats_f(s->current, s->problem.grid.n, &s->layout, r->brick, r->own, s->bricks);
    else field_stats_d(s->current, s->problem.grid.n, &s->layout, r->brick, r->own, s->bricks);
    long count = (long)r->own[0] * r->own[1] * r->own[2];
    heat_field_stats total = {HUGE_VAL, -HUGE_VAL, 0.0, 0};
    for (long b = 0; b < count; ++b) {
        s->brick_sums[b] = s->bricks[b].sum;
        total.nonfinite += s->bricks[b].nonfinite;
        if (s->bricks[b].min < total.min) total.min = s->bricks[b].min;
        if (s->bricks[b].max > total.max) total.max = s->bricks[b].max;
    }
    HEAT_CALL(heat_reduction_sum_bricks(&s->reduction, s->brick_sums, 1, &total.sum));
    *stats = total;
    return HEAT_OK;
}

static const char *cpu_device_name(void *state) { return ((cpu_state *)state)->device; }
static const char *cpu_kernel_description(void *state) { return ((cpu_state *)state)->kernel; }

static int cpu_variants_list(void *state, const heat_variant **list, int *count)
{
    const cpu_state *s = state;
    const int wide = s->candidates == wide_variants;
    *list = wide ? wide_variants : cpu_variants;
    *count = wide ? (int)(sizeof wide_variants / sizeof wide_variants[0])
                  : (int)(sizeof cpu_variants / sizeof cpu_variants[0]);
    return HEAT_OK;
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median wall time of `reps` calls after two warm-up calls. */
static double median_ms(cpu_state *s, int reps, void (*body)(cpu_state *, const void *), const void *arg)
{
    double *t = malloc(sizeof *t * reps);
    if (!t) return -1.0;
    body(s, arg);
    body(s, arg);
    for (int r = 0; r < reps; ++r) {
        double start = omp_get_wtime();
        body(s, arg);
        t[r] = (omp_get_wtime() - start) * 1e3;
    }
    qsort(t, reps, sizeof *t, compare_doubles);
    double m = reps % 2 ? t[reps / 2] : 0.5 * (t[reps / 2 - 1] + t[reps / 2]);
    free(t);
    return m;
}

/* The stencil sweep alone: x ghosts are set inside it, y/z ghosts were set once. */
static void body_variant(cpu_state *s, const void *arg)
{
    sweep_planes(s, s->next, s->current, arg, 0, s->problem.grid.n[2], NULL);
}

/* Two steps: the run takes them in one sweep where it can (fusable). */
static void body_step(cpu_state *s, const void *arg)
{
    (void)arg;
    cpu_advance(s, 2);
}

/* The reference copy moves data the way the production step does: it
 * stores streaming (past the cache) when the step streams, else through the
 * cache (against a write-allocate copy a streaming stencil would score above
 * 100%: that copy moves three streams for the two it is credited with), and
 * it reads what it wrote last time, as each step reads the previous step's
 * output (copying the same source again and again would read it from a
 * last-level cache that the step's input is not in). */
static void body_copy(cpu_state *s, const void *arg)
{
    (void)arg;
    int stream = variant_streams(s->production);
    if (s->problem.precision == HEAT_FLOAT) copy_field_f(s->next, s->current, s->layout.total, stream);
    else copy_field_d(s->next, s->current, s->layout.total, stream);
    void *t = s->current;
    s->current = s->next;
    s->next = t;
}

static int cpu_time_variant(void *state, const heat_variant *variant, int reps, double *ms)
{
    cpu_state *s = state;
    fill_halo_yz(s, s->current);
    *ms = median_ms(s, reps, body_variant, variant);
    HEAT_CHECK(*ms >= 0.0, "out of memory while timing");
    return HEAT_OK;
}

static int cpu_time_copy(void *state, int reps, double *ms, double *bytes)
{
    cpu_state *s = state;
    for (long taken; !s->production;) HEAT_CALL(trial_step(s, 2, &taken)); /* the copy stores as production does */
    *ms = median_ms(s, reps, body_copy, NULL);
    *bytes = 2.0 * (double)s->layout.total * (double)s->elem;
    HEAT_CHECK(*ms >= 0.0, "out of memory while timing");
    return HEAT_OK;
}

static int cpu_time_step(void *state, int reps, double *ms)
{
    cpu_state *s = state;
    *ms = median_ms(s, reps, body_step, NULL) / 2.0; /* a step */
    HEAT_CHECK(*ms >= 0.0, "out of memory while timing");
    return HEAT_OK;
}

/* ---- implicit schemes: precision dispatch to cpu_cg_ops.h ---- */

static int cpu_cg_begin(void *state, double fraction, double *rr, double *rz)
{
    return TYPED((cpu_state *)state, cg_begin_typed, state, fraction, rr, rz);
}

static int cpu_cg_precondition(void *state, const heat_chebyshev *cheb, double *rz)
{
    return TYPED((cpu_state *)state, cg_precondition_typed, state, cheb, rz);
}

static int cpu_cg_direction(void *state, double beta)
{
    return TYPED((cpu_state *)state, cg_direction_typed, state, beta);
}

static int cpu_cg_apply(void *state, double *pq)
{
    return TYPED((cpu_state *)state, cg_apply_typed, state, pq);
}

static int cpu_cg_update(void *state, double a, int first, double *rr, double *rz)
{
    return TYPED((cpu_state *)state, cg_update_typed, state, a, first, rr, rz);
}

static int cpu_cg_finish(void *state)
{
    return TYPED((cpu_state *)state, cg_finish_typed, state);
}

static const heat_cg_ops cpu_cg = {
    .begin = cpu_cg_begin,
    .precondition = cpu_cg_precondition,
    .direction = cpu_cg_direction,
    .apply = cpu_cg_apply,
    .update = cpu_cg_update,
    .finish = cpu_cg_finish,
};

static const heat_bench_ops cpu_bench = {
    .run_variant = cpu_run_variant,
    .variants = cpu_variants_list,
    .time_variant = cpu_time_variant,
    .time_copy = cpu_time_copy,
    .time_step = cpu_time_step,
};

/* No asynchronous hooks: the field is in host memory already. */
const heat_backend_ops heat_backend_cpu = {
    .name = "cpu",
    .create = cpu_create,
    .destroy = cpu_destroy,
    .upload = cpu_upload,
    .download = cpu_download,
    .advance = cpu_advance,
    .stats = cpu_stats,
    .device_name = cpu_device_name,
    .kernel_description = cpu_kernel_description,
    .cg = &cpu_cg,
    .set_clock = cpu_set_clock,
    .energy = cpu_energy,
    .set_energy = cpu_set_energy,
    .supports = cpu_supports,
    .bench = &cpu_bench,
    .async = NULL,
};
