/*
 * CPU backend: C + OpenMP, vectorised with `omp simd`. Two fields with one
 * ghost layer (layout in solver/problem.h), swapped after every step.
 */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../solver/backend.h"
#include "../../solver/error.h"
#include "../../solver/implicit.h"

#define HEAT_PRECISION_FILE "cpu_kernels.h"
#include "for_each_precision.h"

enum { CPU_ALIGN_BYTES = 64 }; /* one cache line */

typedef struct cpu_state {
    heat_problem problem;
    heat_layout layout;
    heat_coeffs coeffs;
    size_t elem;       /* bytes per value */
    void *current;     /* field at the current step (allocation base) */
    void *next;        /* field being written by the next step */
    double shift[6], scale[6]; /* halo fill: ghost = shift + scale * adjacent */
    float shift_f[6], scale_f[6];
    heat_field_stats *planes;  /* per-plane scratch for stats, n[2] entries */
    /* Implicit schemes: CG vectors (x is `next`), Chebyshev's pair z, w and
     * the one holding its result, per-row dot products, one scratch row per thread. */
    void *r, *p, *q, *z, *w, *z_result;
    double *dots_a, *dots_b;
    void *scratch;
    heat_cg_diagonal diagonal;
    char device[128];
    char kernel[96];
} cpu_state;

/* Row partials summed in row order: the same bits for any thread count. */
static double sum_rows(const cpu_state *s, const double *rows)
{
    long count = (long)s->problem.grid.n[1] * s->problem.grid.n[2];
    double sum = 0.0;
    for (long i = 0; i < count; ++i) sum += rows[i];
    return sum;
}

#define HEAT_PRECISION_FILE "cpu_cg_ops.h"
#include "for_each_precision.h"

static const heat_variant cpu_variants[] = {
    {"heat_step", 1, 0},
    {"laplacian", 1, 1},
};

static int alloc_field(cpu_state *s, void **field)
{
    size_t bytes = (size_t)s->layout.total * s->elem;
    bytes = (bytes + CPU_ALIGN_BYTES - 1) / CPU_ALIGN_BYTES * CPU_ALIGN_BYTES;
    *field = aligned_alloc(CPU_ALIGN_BYTES, bytes);
    HEAT_CHECK(*field, "cannot allocate %zu bytes for a field", bytes);
    /* First touch in parallel places pages near the threads that use them. */
    char *p = *field;
#pragma omp parallel for schedule(static)
    for (long z = 0; z < (long)(bytes / 4096 + 1); ++z) {
        size_t begin = (size_t)z * 4096, end = begin + 4096 < bytes ? begin + 4096 : bytes;
        if (begin < end) memset(p + begin, 0, end - begin);
    }
    return HEAT_OK;
}

static int alloc_cg(cpu_state *s)
{
    const heat_problem *p = &s->problem;
    long rows = (long)p->grid.n[1] * p->grid.n[2];
    HEAT_CALL(alloc_field(s, &s->r));
    HEAT_CALL(alloc_field(s, &s->p));
    HEAT_CALL(alloc_field(s, &s->q));
    if (p->implicit.preconditioner == HEAT_PRECOND_CHEBYSHEV) {
        HEAT_CALL(alloc_field(s, &s->z));
        HEAT_CALL(alloc_field(s, &s->w));
    }
    s->dots_a = malloc(sizeof(double) * rows);
    s->dots_b = malloc(sizeof(double) * rows);
    s->scratch = malloc(sizeof(double) * s->layout.stride_y * omp_get_max_threads());
    HEAT_CHECK(s->dots_a && s->dots_b && s->scratch, "out of memory for the CG solver");
    s->diagonal = heat_cg_diagonal_make(p);
    return HEAT_OK;
}

static void cpu_destroy(void **state)
{
    if (!state || !*state) return;
    cpu_state *s = *state;
    free(s->current);
    free(s->next);
    free(s->planes);
    void *vectors[] = {s->r, s->p, s->q, s->z, s->w, s->dots_a, s->dots_b, s->scratch};
    for (size_t v = 0; v < sizeof vectors / sizeof vectors[0]; ++v) free(vectors[v]);
    free(s);
    *state = NULL;
}

static int cpu_create(const heat_problem *problem, void **state)
{
    cpu_state *s = calloc(1, sizeof *s);
    HEAT_CHECK(s, "out of memory");
    *state = s;
    s->problem = *problem;
    s->elem = heat_precision_size(problem->precision);
    s->layout = heat_layout_make(problem->grid.n, s->elem, CPU_ALIGN_BYTES, 1);
    s->coeffs = heat_coeffs_make(problem);
    for (int f = 0; f < FACE_COUNT; ++f) {
        int dirichlet = problem->bc[f].type == HEAT_BC_DIRICHLET;
        s->shift[f] = dirichlet ? 2.0 * problem->bc[f].value : 0.0;
        s->scale[f] = dirichlet ? -1.0 : 1.0;
        s->shift_f[f] = (float)s->shift[f], s->scale_f[f] = (float)s->scale[f];
    }
    s->planes = malloc(sizeof *s->planes * problem->grid.n[2]);
    HEAT_CHECK(s->planes, "out of memory");
    HEAT_CALL(alloc_field(s, &s->current));
    HEAT_CALL(alloc_field(s, &s->next));
    if (problem->implicit.scheme != HEAT_EULER) HEAT_CALL(alloc_cg(s));
    snprintf(s->device, sizeof s->device, "CPU, %d OpenMP threads", omp_get_max_threads());
    snprintf(s->kernel, sizeof s->kernel, "heat_step (C + OpenMP, %s)", heat_precision_name(problem->precision));
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

static void fill_halo_yz(cpu_state *s, void *field)
{
    if (s->problem.precision == HEAT_FLOAT) halo_fill_yz_f(field, s->problem.grid.n, &s->layout, s->shift_f, s->scale_f);
    else halo_fill_yz_d(field, s->problem.grid.n, &s->layout, s->shift, s->scale);
}

/* One step of the halo fill and the stencil: out = step(in). */
static void sweep(cpu_state *s, void *out, void *in, int laplacian_only)
{
    const int *n = s->problem.grid.n;
    fill_halo_yz(s, in);
    if (s->problem.precision == HEAT_FLOAT)
        stencil_sweep_f(out, in, n, &s->layout, coeffs_cast_f(&s->coeffs), s->shift_f, s->scale_f, laplacian_only);
    else
        stencil_sweep_d(out, in, n, &s->layout, coeffs_cast_d(&s->coeffs), s->shift, s->scale, laplacian_only);
}

static int cpu_run_variant(void *state, const heat_variant *variant, long steps)
{
    cpu_state *s = state;
    for (long step = 0; step < steps; ++step) {
        sweep(s, s->next, s->current, variant->laplacian);
        void *t = s->current;
        s->current = s->next;
        s->next = t;
    }
    return HEAT_OK;
}

static int cpu_advance(void *state, long steps) { return cpu_run_variant(state, &cpu_variants[0], steps); }

static int cpu_stats(void *state, heat_field_stats *stats)
{
    cpu_state *s = state;
    const int *n = s->problem.grid.n;
    if (s->problem.precision == HEAT_FLOAT) field_stats_f(s->current, n, &s->layout, s->planes);
    else field_stats_d(s->current, n, &s->layout, s->planes);
    heat_field_stats total = {HUGE_VAL, -HUGE_VAL, 0.0, 0};
    for (int z = 0; z < n[2]; ++z) {
        total.sum += s->planes[z].sum;
        total.nonfinite += s->planes[z].nonfinite;
        if (s->planes[z].min < total.min) total.min = s->planes[z].min;
        if (s->planes[z].max > total.max) total.max = s->planes[z].max;
    }
    *stats = total;
    return HEAT_OK;
}

static const char *cpu_device_name(void *state) { return ((cpu_state *)state)->device; }
static const char *cpu_kernel_description(void *state) { return ((cpu_state *)state)->kernel; }

static int cpu_variants_list(void *state, const heat_variant **list, int *count)
{
    (void)state;
    *list = cpu_variants;
    *count = (int)(sizeof cpu_variants / sizeof cpu_variants[0]);
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
    const heat_variant *v = arg;
    const int *n = s->problem.grid.n;
    if (s->problem.precision == HEAT_FLOAT)
        stencil_sweep_f(s->next, s->current, n, &s->layout, coeffs_cast_f(&s->coeffs), s->shift_f, s->scale_f, v->laplacian);
    else
        stencil_sweep_d(s->next, s->current, n, &s->layout, coeffs_cast_d(&s->coeffs), s->shift, s->scale, v->laplacian);
}

static void body_step(cpu_state *s, const void *arg)
{
    (void)arg;
    cpu_advance(s, 1);
}

static void body_copy(cpu_state *s, const void *arg)
{
    (void)arg;
    const long total = s->layout.total;
    if (s->problem.precision == HEAT_FLOAT) {
        float *restrict dst = s->next;
        const float *restrict src = s->current;
#pragma omp parallel for simd schedule(static)
        for (long i = 0; i < total; ++i) dst[i] = src[i];
    } else {
        double *restrict dst = s->next;
        const double *restrict src = s->current;
#pragma omp parallel for simd schedule(static)
        for (long i = 0; i < total; ++i) dst[i] = src[i];
    }
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
    *ms = median_ms(s, reps, body_copy, NULL);
    *bytes = 2.0 * (double)s->layout.total * (double)s->elem;
    HEAT_CHECK(*ms >= 0.0, "out of memory while timing");
    return HEAT_OK;
}

static int cpu_time_step(void *state, int reps, double *ms)
{
    cpu_state *s = state;
    *ms = median_ms(s, reps, body_step, NULL);
    HEAT_CHECK(*ms >= 0.0, "out of memory while timing");
    return HEAT_OK;
}

/* ---- implicit schemes: precision dispatch to cpu_cg_ops.h ---- */

#define TYPED(s, name, ...) ((s)->problem.precision == HEAT_FLOAT ? name##_f(__VA_ARGS__) : name##_d(__VA_ARGS__))

static int cpu_cg_begin(void *state, double fraction, double *rr, double *rz)
{
    TYPED((cpu_state *)state, cg_begin_typed, state, fraction, rr, rz);
    return HEAT_OK;
}

static int cpu_cg_precondition(void *state, const heat_chebyshev *cheb, double *rz)
{
    TYPED((cpu_state *)state, cg_precondition_typed, state, cheb, rz);
    return HEAT_OK;
}

static int cpu_cg_direction(void *state, double beta)
{
    TYPED((cpu_state *)state, cg_direction_typed, state, beta);
    return HEAT_OK;
}

static int cpu_cg_apply(void *state, double *pq)
{
    TYPED((cpu_state *)state, cg_apply_typed, state, pq);
    return HEAT_OK;
}

static int cpu_cg_update(void *state, double a, int first, double *rr, double *rz)
{
    TYPED((cpu_state *)state, cg_update_typed, state, a, first, rr, rz);
    return HEAT_OK;
}

static int cpu_cg_finish(void *state)
{
    TYPED((cpu_state *)state, cg_finish_typed, state);
    return HEAT_OK;
}

static const heat_cg_ops cpu_cg = {cpu_cg_begin, cpu_cg_precondition, cpu_cg_direction,
                                   cpu_cg_apply, cpu_cg_update, cpu_cg_finish};

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
    .run_variant = cpu_run_variant,
    .variants = cpu_variants_list,
    .time_variant = cpu_time_variant,
    .time_copy = cpu_time_copy,
    .time_step = cpu_time_step,
    .cg = &cpu_cg,
};
