/*
 * `mpirun -np N heatsolve bench [--size S] [--reps R] [--json FILE]`: the
 * production step over N ranks against one rank alone, measured in the same
 * run. Strong scaling splits an S^3 grid over the ranks; weak scaling gives
 * every rank an S^3 block. The halo exchange is timed by running the same
 * blocks with their exchanged faces treated as boundaries (no exchange):
 * the difference is the exchange time the step does not hide. The same
 * blocks with the exchange before the update instead of beside it give the
 * exchange's whole cost, hence the fraction hidden.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/bench.h"
#include "app/bench_common.h"
#include "app/progress.h"
#include "parallel/domain.h"
#include "parallel/parallel.h"
#include "solver/error.h"

/* Samples of whole sweeps of every K the GPU's fused kernels take (2, 3, 4),
 * as a long run's stretches between its events are: a remainder (a shorter
 * sweep or single steps, each with its own exchange) would otherwise weigh
 * in a sample far more than in a run. */
enum { WARMUP_STEPS = 12, STEPS_PER_SAMPLE = 24 };

typedef struct scaling_case {
    const char *name;   /* "alone", "strong", "weak" */
    int n[3];           /* the whole grid */
    int ranks;
    double ms;          /* per step, the slowest rank, median of samples */
    double ms_no_halo;  /* the same blocks without their exchange */
    double ms_serial;   /* the same blocks with the exchange before the update, not beside it */
} scaling_case;

static void barrier(void)
{
    long dummy = 0;
    (void)par_max_longs(&dummy, 1);
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median over `reps` samples of the per-step time of the slowest rank. */
static int time_steps(heat_solver *s, int reps, double *ms)
{
    double *samples = malloc(sizeof *samples * (size_t)reps);
    HEAT_CHECK(samples, "out of memory");
    int status = s ? heat_solver_advance(s, WARMUP_STEPS) : HEAT_OK;
    for (int r = 0; r < reps && status == HEAT_OK; ++r) {
        barrier();
        double start = progress_now();
        if (s) status = heat_solver_advance(s, STEPS_PER_SAMPLE);
        long slowest_us = (long)((progress_now() - start) * 1e6 / STEPS_PER_SAMPLE);
        if (status == HEAT_OK) status = par_max_longs(&slowest_us, 1);
        samples[r] = slowest_us * 1e-3;
    }
    qsort(samples, (size_t)reps, sizeof *samples, compare_doubles);
    *ms = samples[reps / 2];
    free(samples);
    return status;
}

static heat_backend_request backend_request(const heat_cli *cli)
{
    return cli->backend == 1 ? HEAT_SELECT_CPU : cli->backend == 2 ? HEAT_SELECT_HIP : HEAT_SELECT_AUTO;
}

static int make_solver(const heat_cli *cli, const heat_problem *p, const heat_halo_transport *transport,
                       heat_solver **s)
{
    HEAT_CALL(heat_solver_create_block(p, transport, backend_request(cli), s));
    return bench_fill(*s);
}

/* The root alone with the whole of `whole` (no exchange); the others wait. */
static int time_alone(const heat_cli *cli, const heat_problem *whole, int reps, scaling_case *c)
{
    heat_solver *s = NULL;
    int status = par_is_root() ? make_solver(cli, whole, NULL, &s) : HEAT_OK;
    status = heat_domain_agree(status);
    if (status == HEAT_OK) status = time_steps(s, reps, &c->ms);
    c->ms_no_halo = c->ms_serial = c->ms;
    heat_solver_destroy(&s);
    return status;
}

/* The per-step time of `local` (every rank its block). */
static int time_blocks(const heat_cli *cli, const heat_problem *local, const heat_halo_transport *transport,
                       int reps, double *ms)
{
    heat_solver *s = NULL;
    int status = heat_domain_agree(make_solver(cli, local, transport, &s));
    if (status == HEAT_OK) status = time_steps(s, reps, ms);
    heat_solver_destroy(&s);
    return status;
}

/* All ranks, each its block of `whole`: the exchange beside the update (as
 * runs do), before it, and none at all. */
static int time_split(const heat_cli *cli, const heat_problem *whole, int reps, scaling_case *c)
{
    heat_domain domain;
    const int automatic[3] = {0, 0, 0};
    int on_gpu = !heat_solver_runs_on_cpu(whole, backend_request(cli));
    HEAT_CALL(heat_domain_agree(heat_domain_init(&domain, whole, automatic, (par_transport)cli->transport, on_gpu)));
    heat_problem local;
    heat_domain_localize(&domain, whole, &local);
    local.quiet = 1;
    heat_halo_transport transport = heat_domain_transport(&domain);
    int status = time_blocks(cli, &local, &transport, reps, &c->ms);
    transport.serial = 1;
    if (status == HEAT_OK) status = time_blocks(cli, &local, &transport, reps, &c->ms_serial);
    /* the same blocks, every face a boundary, swept as the exchanging blocks are (CPU: in pairs or not) */
    local.halo.single_steps = !heat_pairs_allowed(&local);
    local.halo.exchanged = 0;
    if (status == HEAT_OK) status = time_blocks(cli, &local, &transport, reps, &c->ms_no_halo);
    heat_domain_free(&domain);
    return status;
}

static double points(const scaling_case *c) { return (double)c->n[0] * c->n[1] * c->n[2]; }

/* Of the exchange's whole cost (before the update), the part the step no
 * longer pays beside it; 0 where there is no exchange. */
static double hidden_fraction(const scaling_case *c)
{
    double whole = c->ms_serial - c->ms_no_halo;
    if (whole <= 0.0) return 0.0;
    double hidden = 1.0 - (c->ms - c->ms_no_halo) / whole;
    return hidden < 0.0 ? 0.0 : hidden > 1.0 ? 1.0 : hidden;
}

static void print_row(const scaling_case *c, const scaling_case *alone)
{
    double rate = points(c) / (c->ms * 1e-3) / 1e9, rate_alone = points(alone) / (alone->ms * 1e-3) / 1e9;
    double exposed = c->ms - c->ms_no_halo;
    double efficiency = rate / (rate_alone * c->ranks); /* strong: speed-up / ranks; weak: rate per rank / alone */
    printf("%-7s %5d x %5d x %5d  %5d  %9.3f  %9.3f  %9.3f  %9.3f  %6.0f%%  %8.2f  %8.2fx  %6.1f%%\n", c->name, c->n[0],
           c->n[1], c->n[2], c->ranks, c->ms, c->ms_no_halo, c->ms_serial - c->ms_no_halo, exposed,
           100.0 * hidden_fraction(c), rate, rate / rate_alone, 100.0 * efficiency);
}

static int write_json(const char *path, const scaling_case cases[3], const char *device)
{
    bench_json j;
    HEAT_CALL(bench_json_open(&j));
    FILE *f = j.f;
    fprintf(f, "{\n  \"benchmark\": \"scaling\",\n  \"ranks\": %d,\n  \"device\": \"%s\",\n  \"cases\": [\n", par_size(),
            device);
    for (int i = 0; i < 3; ++i)
        fprintf(f, "    {\"name\": \"%s\", \"n\": [%d, %d, %d], \"ranks\": %d, \"ms_per_step\": %.6g, "
                   "\"ms_per_step_without_exchange\": %.6g, \"ms_per_step_exchange_before_update\": %.6g, "
                   "\"hidden_fraction\": %.4g, \"glups\": %.6g}%s\n",
                cases[i].name, cases[i].n[0], cases[i].n[1], cases[i].n[2], cases[i].ranks, cases[i].ms,
                cases[i].ms_no_halo, cases[i].ms_serial, hidden_fraction(&cases[i]),
                points(&cases[i]) / (cases[i].ms * 1e-3) / 1e9, i < 2 ? "," : "");
    fprintf(f, "  ]\n}\n");
    return bench_json_commit(&j, path);
}

/* The ranks' layout of the --size grid; one that does not fit is the user's --size to change (the
 * layout's own message advises parallel.ranks, which bench has not). */
static int check_size_splits(const heat_problem *whole, int dims[3])
{
    const int automatic[3] = {0, 0, 0};
    int was = heat_errors_as_warnings(HEAT_ERRORS_SILENT);
    int status = heat_domain_check_layout(whole, automatic);
    if (status == HEAT_OK)
        status = heat_domain_dims(par_size(), automatic, whole->grid.n, heat_space_radius(whole), dims);
    heat_errors_as_warnings(was);
    if (status == HEAT_OK) return HEAT_OK;
    return heat_error(HEAT_ERR_CONFIG, "--size %d,%d,%d does not split among %d ranks (each rank's block takes "
                      "whole reduction bricks of 16 points, more on grids above 512 points an axis, along every axis "
                      "it is cut); give a larger --size, such as %d along z, or start fewer ranks", whole->grid.n[0],
                      whole->grid.n[1], whole->grid.n[2], par_size(), 16 * par_size());
}

int bench_scaling(const heat_cli *cli)
{
    heat_problem whole;
    bench_problem(cli, 1, &whole);
    /* The default size is the backend's, as for one process: 256^3 where the CPU steps. */
    if (heat_solver_runs_on_cpu(&whole, backend_request(cli))) bench_problem(cli, 0, &whole);
    whole.quiet = 1;
    int reps = cli->reps > 0 ? cli->reps : 5, dims[3] = {0, 0, 0};
    HEAT_CALL(check_size_splits(&whole, dims));
    scaling_case cases[3] = {{"alone", {0}, 1, 0, 0, 0}, {"strong", {0}, par_size(), 0, 0, 0}, {"weak", {0}, par_size(), 0, 0, 0}};
    for (int a = 0; a < 3; ++a) {
        cases[0].n[a] = cases[1].n[a] = whole.grid.n[a];
        cases[2].n[a] = whole.grid.n[a] * dims[a];
    }
    HEAT_CALL(time_alone(cli, &whole, reps, &cases[0]));
    HEAT_CALL(time_split(cli, &whole, reps, &cases[1]));
    heat_problem weak = whole;
    memcpy(weak.grid.n, cases[2].n, sizeof weak.grid.n);
    heat_grid_set_spacing(&weak.grid);
    weak.dt = 0.5 * heat_dt_max(&weak.grid, weak.alpha);
    HEAT_CALL(time_split(cli, &weak, reps, &cases[2]));
    if (!par_is_root()) return HEAT_OK;
    printf("heatsolve bench (scaling): %s, %d x %d x %d ranks, %s, production step, median of %d x %d steps\n",
           par_description(), dims[0], dims[1], dims[2], heat_precision_name(whole.precision), reps, STEPS_PER_SAMPLE);
    const char *device = par_device_transport(); /* as the last time_split chose it */
    printf("halos: %s\n", device ? device : "MPI from host memory (staged through page-locked memory on GPUs)");
    printf("case    grid                   ranks  ms/step   no-exchange  exchange  exposed   hidden   GLUP/s   vs alone  "
           "efficiency\n");
    for (int i = 0; i < 3; ++i) print_row(&cases[i], &cases[0]);
    printf("exchange: its whole cost, with the exchange before the update; exposed = ms/step - no-exchange: what the "
           "step pays with the exchange beside the update (z slabs: GPUs exchanging GPU to GPU, and the CPU where it steps one at a time); hidden = 1 - exposed / exchange\n");
    return cli->json ? write_json(cli->json, cases, par_description()) : HEAT_OK;
}
