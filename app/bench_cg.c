/*
 * heatsolve bench --cg: the implicit solver's kernels as effective bandwidth,
 * beside the copy bandwidth measured in the same run. Crank-Nicolson at
 * dt = 100 dt_max on the benchmark grid; the CG runs for real (its own
 * alpha and beta), so the timed vectors hold ordinary values.
 *
 * Bytes counted are the minimum each operation must move, in vectors of the
 * grid (one read or one write of every point):
 *   cg_apply     q = A p, p.q                 the stencil sweep's traffic (~2)
 *   cheb_step    z' = z + k (z - z'') + m (r - A z), r.z'      4 + halo
 *   iteration    apply 2 + update 6 (x, p, r, q in; x, r out) + direction 3
 *                (+ Chebyshev: 2 + 4 (degree - 1), its direction reading z)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/bench.h"
#include "app/bench_common.h"
#include "app/progress.h"
#include "io/config.h"
#include "solver/error.h"

typedef struct cg_timing {
    double apply_ms, cheb_ms, iteration_ms;
} cg_timing;

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* One CG iteration as implicit.c takes it; the coefficients are real. */
typedef struct cg_run {
    heat_solver *s;
    double rz;
    int chebyshev, first;
} cg_run;

static int cg_run_iterate(cg_run *c)
{
    const heat_cg_ops *cg = c->s->ops->cg;
    double pq, rr, rz;
    HEAT_CALL(cg->apply(c->s->state, &pq));
    HEAT_CALL(cg->update(c->s->state, c->rz / pq, c->first, &rr, &rz));
    c->first = 0;
    if (c->chebyshev) HEAT_CALL(cg->precondition(c->s->state, &c->s->chebyshev, &rz));
    HEAT_CALL(cg->direction(c->s->state, rz / c->rz));
    c->rz = rz;
    return HEAT_OK;
}

static int cg_run_start(cg_run *c)
{
    const heat_cg_ops *cg = c->s->ops->cg;
    double rr;
    HEAT_CALL(bench_fill(c->s));
    HEAT_CALL(cg->begin(c->s->state, 1.0, &rr, &c->rz));
    if (c->chebyshev) HEAT_CALL(cg->precondition(c->s->state, &c->s->chebyshev, &c->rz));
    HEAT_CALL(cg->direction(c->s->state, 0.0));
    c->first = 1;
    return HEAT_OK;
}

/* Iterations before the timed ones: a backend may settle a choice by timing
 * its first calls (the CPU backend's Chebyshev steps in pairs or not: twelve
 * preconditioner calls), and the benchmark times what the run then uses. */
enum { WARMUP_ITERATIONS = 12 };

/* Median over reps of one call of `what` (0 apply, 1 one Chebyshev degree
 * step measured as (degree-2 call - degree-1 call)), and the mean iteration
 * over reps iterations (direction is asynchronous: the next apply waits). */
static int time_cg(heat_solver *s, int reps, cg_timing *t)
{
    cg_run c = {s, 0.0, s->problem.implicit.preconditioner == HEAT_PRECOND_CHEBYSHEV, 1};
    double *ms = malloc(sizeof *ms * reps), pq;
    HEAT_CHECK(ms, "out of memory");
    int status = cg_run_start(&c);
    for (int r = 0; r < reps && status == HEAT_OK; ++r) {
        double t0 = progress_now();
        status = s->ops->cg->apply(s->state, &pq);
        ms[r] = (progress_now() - t0) * 1e3;
    }
    qsort(ms, reps, sizeof *ms, compare_doubles);
    t->apply_ms = ms[reps / 2];
    free(ms);
    HEAT_CALL(status);
    HEAT_CALL(cg_run_start(&c));
    for (int w = 0; w < WARMUP_ITERATIONS; ++w) HEAT_CALL(cg_run_iterate(&c));
    double t0 = progress_now();
    for (int r = 0; r < reps; ++r) HEAT_CALL(cg_run_iterate(&c));
    HEAT_CALL(s->ops->cg->apply(s->state, &pq));
    t->iteration_ms = ((progress_now() - t0) * 1e3 - t->apply_ms) / reps;
    return HEAT_OK;
}

static int create_bench_solver(const heat_cli *cli, heat_preconditioner pc, int degree, heat_solver **s)
{
    char reason[256];
    int gpu = cli->backend != BACKEND_CPU && heat_backend_hip && heat_hip_available(reason, sizeof reason);
    heat_problem p;
    bench_problem(cli, gpu, &p);
    p.implicit = (heat_implicit){HEAT_CRANK_NICOLSON, 1e-30, 1 << 30, pc, degree, 0};
    p.dt = 100.0 * heat_dt_max(&p.grid, p.alpha);
    p.quiet = cli->quiet || pc != HEAT_PRECOND_JACOBI; /* say the backend choice once */
    return heat_solver_create(&p, cli->backend < 0 ? HEAT_SELECT_AUTO : (heat_backend_request)cli->backend, s);
}

/* One row of the table: an operation, the vectors of the grid it must move, its time. */
typedef struct cg_row {
    const char *what;
    double vectors, ms;
} cg_row;

enum { CG_ROWS = 4 };

/* What the table and the JSON file say: where it ran, the copy bandwidth, the rows. */
typedef struct cg_report {
    char backend[64], device[256];
    int n[3];
    heat_precision precision;
    double points, copy_gbs;
    size_t elem;
    cg_row rows[CG_ROWS];
} cg_report;

static double row_gbs(const cg_report *r, const cg_row *row)
{
    return row->vectors * r->points * (double)r->elem / (row->ms * 1e-3) / 1e9;
}

static void print_report(const cg_report *r)
{
    printf("copy bandwidth (read + write, best of before and after): %.1f GB/s\n\n", r->copy_gbs);
    printf("%-34s %8s %10s %14s %10s\n", "operation", "vectors", "time (ms)", "effective GB/s", "% of copy");
    for (int i = 0; i < CG_ROWS; ++i) {
        const cg_row *row = &r->rows[i];
        double gbs = row_gbs(r, row);
        printf("%-34s %8.2f %10.4f %14.1f %9.1f%%\n", row->what, row->vectors, row->ms, gbs, 100.0 * gbs / r->copy_gbs);
    }
}

static int write_json(const cg_report *r, const char *path)
{
    bench_json j;
    HEAT_CALL(bench_json_open(&j));
    FILE *f = j.f;
    fprintf(f, "{\"benchmark\": \"cg\", \"device\": \"%s\", \"backend\": \"%s\", \"size\": [%d, %d, %d], "
               "\"precision\": \"%s\", \"copy_bandwidth_GBs\": %.6e, \"results\": [",
            r->device, r->backend, r->n[0], r->n[1], r->n[2], heat_precision_name(r->precision), r->copy_gbs);
    for (int i = 0; i < CG_ROWS; ++i)
        fprintf(f, "%s\n  {\"operation\": \"%s\", \"vectors\": %.6e, \"ms\": %.6e, \"effective_GBs\": %.6e, "
                   "\"fraction_of_copy\": %.6e}", i ? "," : "", r->rows[i].what, r->rows[i].vectors, r->rows[i].ms,
                row_gbs(r, &r->rows[i]), row_gbs(r, &r->rows[i]) / r->copy_gbs);
    fprintf(f, "\n]}\n");
    return bench_json_commit(&j, path);
}

int bench_cg(const heat_cli *cli)
{
    heat_solver *s;
    HEAT_CALL(create_bench_solver(cli, HEAT_PRECOND_JACOBI, 1, &s));
    const heat_problem *p = &s->problem;
    size_t elem = heat_precision_size(p->precision);
    double points = (double)heat_grid_points(&p->grid), copy_ms, copy_bytes;
    cg_report r = {.precision = p->precision, .points = points, .elem = elem};
    memcpy(r.n, p->grid.n, sizeof r.n);
    bench_copy_plain(r.backend, sizeof r.backend, s->ops->name);
    bench_copy_plain(r.device, sizeof r.device, s->ops->device_name(s->state));
    int halo[3] = {p->grid.n[0] + 2, p->grid.n[1] + 2, p->grid.n[2] + 2};
    double sweep_vectors = heat_sweep_bytes(halo, elem) / (points * (double)elem);
    cg_timing jacobi, cheb2, cheb8;
    int status = s->ops->bench->time_copy(s->state, cli->reps, &copy_ms, &copy_bytes);
    if (status == HEAT_OK) status = time_cg(s, cli->reps, &jacobi);
    printf("heatsolve bench --cg: backend %s on %s\nsize %d x %d x %d, %s, Crank-Nicolson at dt = 100 dt_max; "
           "median of %d\n", s->ops->name, s->ops->device_name(s->state), p->grid.n[0], p->grid.n[1], p->grid.n[2],
           heat_precision_name(p->precision), cli->reps);
    heat_solver_destroy(&s);
    HEAT_CALL(status);
    HEAT_CALL(create_bench_solver(cli, HEAT_PRECOND_CHEBYSHEV, 2, &s));
    status = time_cg(s, cli->reps, &cheb2);
    heat_solver_destroy(&s);
    HEAT_CALL(status);
    HEAT_CALL(create_bench_solver(cli, HEAT_PRECOND_CHEBYSHEV, 8, &s));
    status = time_cg(s, cli->reps, &cheb8);
    double again_ms, again_bytes;
    if (status == HEAT_OK) status = s->ops->bench->time_copy(s->state, cli->reps, &again_ms, &again_bytes);
    heat_solver_destroy(&s);
    HEAT_CALL(status);
    if (again_ms < copy_ms) copy_ms = again_ms; /* the faster copy: conservative fractions */
    r.copy_gbs = copy_bytes / (copy_ms * 1e-3) / 1e9;
    r.rows[0] = (cg_row){"cg_apply (q = A p, p.q)", sweep_vectors, jacobi.apply_ms};
    /* One degree of Chebyshev: the difference of degree 8 and degree 2 iterations, over 6. */
    r.rows[1] = (cg_row){"cheb_step (one degree)", 2.0 + sweep_vectors,
                         (cheb8.iteration_ms - cheb2.iteration_ms) / 6.0};
    r.rows[2] = (cg_row){"CG iteration, jacobi", sweep_vectors + 9.0, jacobi.iteration_ms};
    r.rows[3] = (cg_row){"CG iteration, chebyshev degree 8", sweep_vectors + 9.0 + 2.0 + 7.0 * (2.0 + sweep_vectors),
                         cheb8.iteration_ms};
    print_report(&r);
    return cli->json ? write_json(&r, cli->json) : HEAT_OK;
}
