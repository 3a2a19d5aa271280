/*
 * heatsolve bench: for every kernel variant and tile factor the median time of
 * --reps launches after warm-up, the seeds' effective bandwidth, its fraction
 * of the device's copy bandwidth measured in the same run, and GLUP/s; then
 * the solver's whole production step (halo fill included). Kernels that take
 * K steps a sweep (column K) are timed per step: their effective bandwidth
 * counts a sweep's bytes once a step, so it may pass the copy's.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "app/bench.h"
#include "app/bench_common.h"
#include "app/progress.h"
#include "app/threads.h"
#include "io/checkpoint.h"
#include "io/compress.h"
#include "io/config.h"
#include "parallel/parallel.h"
#include "solver/error.h"
#include "solver/materials.h"
#include "solver/solver.h"

typedef struct bench_row {
    heat_variant variant;
    double ms, effective_gbs, fraction, glups;
    int production;
} bench_row;

typedef struct bench_report {
    char device[160], backend[16];
    int size[3];
    int space_order;
    heat_precision precision;
    double copy_gbs;
    bench_row *rows;
    int count;
    double production_glups, single_glups; /* the one-material production step's, its single-sweep step's (0: none) */
    double materials_ratio; /* the two-material step's GLUP/s over the one-material production step's; 0: none */
    double materials_ratio_single; /* over the one-material single-sweep step's; 0: not measured */
    char materials_kernel[320]; /* how the two-material step ran (its backend's description) */
} bench_report;

/* The bytes a sweep must move: the seeds' count for the 7-point stencil (every point but the
 * corners and edges read, the interior written), and at higher orders each point read once and
 * written once, 2 sizeof(T) a point (the seismic seed's measure). */
static double sweep_bytes(const bench_report *r)
{
    double points = (double)r->size[0] * r->size[1] * r->size[2];
    if (r->space_order > 2) return 2.0 * (double)heat_precision_size(r->precision) * points;
    int halo_dims[3] = {r->size[0] + 2, r->size[1] + 2, r->size[2] + 2};
    return heat_sweep_bytes(halo_dims, heat_precision_size(r->precision));
}

static bench_row make_row(const bench_report *r, const heat_variant *v, double ms, int production)
{
    double bytes = sweep_bytes(r);
    double points = (double)r->size[0] * r->size[1] * r->size[2];
    bench_row row = {*v, ms, bytes / (ms * 1e-3) / 1e9, 0, points / (ms * 1e-3) / 1e9, production};
    row.fraction = row.effective_gbs / r->copy_gbs;
    return row;
}

static int measure(heat_solver *s, int reps, bench_report *r)
{
    const heat_bench_ops *ops = s->ops->bench;
    const heat_variant *variants;
    int count;
    double copy_ms, copy_bytes, step_ms;
    /* Settle the machine first (page mapping, clocks): unrecorded copies and steps. */
    HEAT_CALL(ops->time_copy(s->state, reps, &copy_ms, &copy_bytes));
    HEAT_CALL(ops->time_step(s->state, reps, &step_ms));
    HEAT_CALL(ops->time_copy(s->state, reps, &copy_ms, &copy_bytes));
    r->copy_gbs = copy_bytes / (copy_ms * 1e-3) / 1e9;
    HEAT_CALL(ops->variants(s->state, &variants, &count));
    r->rows = calloc((size_t)count + 3, sizeof *r->rows);
    HEAT_CHECK(r->rows, "out of memory");
    for (int v = 0; v < count; ++v) {
        double ms;
        HEAT_CALL(ops->time_variant(s->state, &variants[v], reps, &ms));
        r->rows[r->count++] = make_row(r, &variants[v], ms, 0);
    }
    HEAT_CALL(ops->time_step(s->state, reps, &step_ms));
    /* Copy again after the kernels and keep the faster: the ratios are then
     * conservative when the machine's bandwidth drifts during the run. */
    double again_ms, again_bytes;
    HEAT_CALL(ops->time_copy(s->state, reps, &again_ms, &again_bytes));
    if (again_ms < copy_ms) r->copy_gbs = again_bytes / (again_ms * 1e-3) / 1e9;
    for (int v = 0; v < r->count; ++v) r->rows[v].fraction = r->rows[v].effective_gbs / r->copy_gbs;
    heat_variant whole = {"solver_step", 1, 0, 1};
    snprintf(whole.kernel, sizeof whole.kernel, "solver_step");
    r->rows[r->count] = make_row(r, &whole, step_ms, 1);
    r->production_glups = r->rows[r->count++].glups;
    if (ops->time_single_step) { /* the like-for-like reference of steps that take one a sweep */
        double single_ms;
        HEAT_CALL(ops->time_single_step(s->state, reps, &single_ms));
        heat_variant single = {"solver_step_single_sweep", 1, 0, 1};
        r->rows[r->count] = make_row(r, &single, single_ms, 0);
        r->single_glups = r->rows[r->count++].glups;
    }
    return HEAT_OK;
}

static int steps_per_sweep(const heat_variant *v) { return v->steps_per_sweep > 1 ? v->steps_per_sweep : 1; }

static void print_report(const bench_report *r, const char *kernel, int reps)
{
    printf("heatsolve bench: backend %s on %s\n", r->backend, r->device);
    printf("size %d x %d x %d (+ halo), %s, space order %d, median of %d launches after warm-up\n", r->size[0],
           r->size[1], r->size[2], heat_precision_name(r->precision), r->space_order, reps);
    printf("copy bandwidth (read + write, best of before and after the kernels): %.1f GB/s\n\n", r->copy_gbs);
    printf("%-26s %4s %2s %10s %14s %10s %8s\n", "kernel", "m", "K", "ms a step", "effective GB/s", "% of copy",
           "GLUP/s");
    for (int i = 0; i < r->count; ++i) {
        const bench_row *row = &r->rows[i];
        printf("%-26s %4d %2d %10.4f %14.1f %9.1f%% %8.2f%s\n", row->variant.kernel, row->variant.tile,
               steps_per_sweep(&row->variant), row->ms, row->effective_gbs, 100.0 * row->fraction, row->glups,
               row->production ? "  <- production" : "");
    }
    printf("\nproduction step (halo fill included, fused into the kernel where it says ntf/zwindowf; time a step "
           "of the fused sweeps where it says steps a sweep): %s\n", kernel);
    if (r->materials_ratio > 0)
        printf("two materials (materials_step, the general flux-form step with a zone byte a point): %.1f%% of the "
               "one-material production step's GLUP/s\n  (%s)\n", 100.0 * r->materials_ratio, r->materials_kernel);
    if (r->materials_ratio_single > 0)
        printf("  and %.1f%% of the one-material step taken one step a sweep (solver_step_single_sweep), as the "
               "materials step is\n", 100.0 * r->materials_ratio_single);
}

static int write_json(const bench_report *r, const char *path)
{
    bench_json j;
    HEAT_CALL(bench_json_open(&j));
    FILE *f = j.f;
    fprintf(f, "{\"device\": \"%s\", \"backend\": \"%s\", \"size\": [%d, %d, %d], \"precision\": \"%s\", "
               "\"space_order\": %d, \"copy_bandwidth_GBs\": %.6e, \"results\": [",
            r->device, r->backend, r->size[0], r->size[1], r->size[2], heat_precision_name(r->precision),
            r->space_order, r->copy_gbs);
    for (int i = 0; i < r->count; ++i) {
        const bench_row *row = &r->rows[i];
        fprintf(f, "%s\n  {\"kernel\": \"%s\", \"tile\": %d, \"steps_per_sweep\": %d, \"ms\": %.6e, "
                   "\"effective_GBs\": %.6e, \"fraction_of_copy\": %.6e, \"glups\": %.6e, \"production\": %s}",
                i ? "," : "", row->variant.kernel, row->variant.tile, steps_per_sweep(&row->variant), row->ms,
                row->effective_gbs, row->fraction, row->glups, row->production ? "true" : "false");
    }
    fprintf(f, "\n]");
    if (r->materials_ratio > 0) fprintf(f, ", \"materials_ratio\": %.6e", r->materials_ratio);
    if (r->materials_ratio_single > 0) fprintf(f, ", \"materials_ratio_single_sweep\": %.6e", r->materials_ratio_single);
    fprintf(f, "}\n");
    return bench_json_commit(&j, path);
}

/* The two-material case: copper-like and air-like (conductivities 400 and 0.026, heat capacities as
 * theirs) with the second material a block through the middle third of the box, a source in it,
 * a convective face: the general step, timed as the production step is. */
static int bench_zone(const int n[3], int i, int j, int k)
{
    int inside = 1;
    const int at[3] = {i, j, k};
    for (int d = 0; d < 3; ++d) inside &= at[d] >= n[d] / 3 && at[d] < 2 * n[d] / 3;
    return inside;
}

/* Each kernel of the GPU's general step alone (the step's halo and energy work apart): the rows
 * before the materials step's. Leaves a row free for that step. */
static int time_material_kernels(heat_solver *s, int reps, bench_report *r)
{
    const heat_variant *variants;
    int count;
    HEAT_CALL(s->ops->bench->variants(s->state, &variants, &count));
    bench_row *rows = realloc(r->rows, ((size_t)r->count + (size_t)count + 1) * sizeof *rows);
    HEAT_CHECK(rows, "out of memory");
    r->rows = rows;
    for (int v = 0; v < count; ++v) {
        double ms;
        HEAT_CALL(s->ops->bench->time_variant(s->state, &variants[v], reps, &ms));
        r->rows[r->count++] = make_row(r, &variants[v], ms, 0);
    }
    return HEAT_OK;
}

static int measure_materials(const heat_problem *one, heat_backend_request request, int reps, bench_report *r)
{
    heat_problem p = *one;
    static heat_materials m;
    memset(&m, 0, sizeof m);
    m.material_count = 2, m.zone_count = 2;
    m.material[0] = (heat_material){"air", 0.026, 1.2, 1005.0};
    m.material[1] = (heat_material){"copper", 400.0, 8960.0, 385.0};
    m.zone[0] = (heat_zone){0, 0.0, -HUGE_VAL, HUGE_VAL};
    m.zone[1] = (heat_zone){1, 1.0e6, -HUGE_VAL, HUGE_VAL};
    p.materials = &m;
    p.bc[FACE_Z_HIGH] = (heat_bc){.type = HEAT_BC_CONVECTIVE, .h = 25.0, .ambient = 20.0};
    p.dt = 0.5 * heat_materials_dt_max(&p.grid, p.bc, &m);
    const int *n = p.grid.n;
    unsigned char *zones = malloc((size_t)(n[0] + 2) * (n[1] + 2) * (n[2] + 2));
    HEAT_CHECK(zones, "out of memory for the zone index");
    long at = 0;
    for (int k = -1; k <= n[2]; ++k)
        for (int j = -1; j <= n[1]; ++j)
            for (int i = -1; i <= n[0]; ++i) zones[at++] = (unsigned char)bench_zone(n, i, j, k);
    p.zones = zones;
    heat_solver *s;
    int status = heat_solver_create(&p, request, &s);
    double ms = 0.0;
    if (status == HEAT_OK) status = bench_fill(s);
    /* The CPU's first steps are the trial that chooses how the step stores: the copy lets it choose first
     * (as measure() does for the one-material step), so that only production steps are timed. */
    double copy_ms, copy_bytes;
    if (status == HEAT_OK) status = s->ops->bench->time_copy(s->state, 1, &copy_ms, &copy_bytes);
    if (status == HEAT_OK) status = s->ops->bench->time_step(s->state, reps, &ms);
    if (status == HEAT_OK)
        bench_copy_plain(r->materials_kernel, sizeof r->materials_kernel, s->ops->kernel_description(s->state));
    if (status == HEAT_OK && s->ops != &heat_backend_cpu) /* the CPU lists its one-material kernels */
        status = time_material_kernels(s, reps, r);
    heat_solver_destroy(&s);
    free(zones);
    if (status != HEAT_OK) return status;
    heat_variant v = {"materials_step", 1, 0, 1};
    r->rows[r->count] = make_row(r, &v, ms, 0);
    r->materials_ratio = r->rows[r->count].glups / r->production_glups;
    if (r->single_glups > 0) r->materials_ratio_single = r->rows[r->count].glups / r->single_glups;
    r->count++;
    return HEAT_OK;
}

static int bench_kernels(const heat_cli *cli)
{
    char reason[256];
    int gpu = cli->backend != BACKEND_CPU && heat_backend_hip && heat_hip_available(reason, sizeof reason);
    heat_problem p;
    bench_problem(cli, gpu, &p);
    heat_solver *s;
    heat_backend_request request = cli->backend < 0 ? HEAT_SELECT_AUTO : (heat_backend_request)cli->backend;
    int cpu = heat_solver_runs_on_cpu(&p, request);
    if (cpu) threads_pin_workers(par_node_size()); /* as a run does: before the fields' first touch */
    HEAT_CALL(heat_solver_create(&p, request, &s));
    if (cpu) printf("OpenMP: %s\n", threads_binding());
    bench_report r = {.precision = p.precision, .size = {p.grid.n[0], p.grid.n[1], p.grid.n[2]},
                      .space_order = p.space_order};
    bench_copy_plain(r.device, sizeof r.device, s->ops->device_name(s->state));
    bench_copy_plain(r.backend, sizeof r.backend, s->ops->name);
    int status = bench_fill(s);
    if (status == HEAT_OK) status = measure(s, cli->reps, &r);
    /* Materials take the second-order flux form only. */
    if (status == HEAT_OK && s->ops->energy && p.space_order <= 2) status = measure_materials(&p, s->ops == &heat_backend_cpu ? HEAT_SELECT_CPU : request, cli->reps, &r);
    if (status == HEAT_OK) print_report(&r, s->ops->kernel_description(s->state), cli->reps);
    if (status == HEAT_OK && cli->json) status = write_json(&r, cli->json);
    free(r.rows);
    heat_solver_destroy(&s);
    return status;
}

int bench_main(const heat_cli *cli)
{
    if (cli->help) return cli_print_help(), 0;
    /* Every rank would time its own copy, slowed by the others', and write the same --json file. */
    if (par_size() > 1 && (cli->cg || cli->io))
        return heat_error(HEAT_ERR_CONFIG, "bench %s measures one process: run it without mpirun (under mpirun, "
                          "heatsolve bench times the step's strong and weak scaling)", cli->cg ? "--cg" : "--io");
    if (cli->cg) return bench_cg(cli);
    if (par_size() > 1) return bench_scaling(cli);
    return cli->io ? bench_io(cli) : bench_kernels(cli);
}
