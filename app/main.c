/*
 * heatsolve: the program reads as the algorithm. Load the configuration, set
 * up the solver and the initial (or restarted) field, then advance in
 * batches: after each batch check the field, report progress, write a
 * checkpoint when one is due or a signal asks for one; finally summarise.
 */
#include <malloc.h>
#include <math.h>
#include <omp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "app/bench.h"
#include "app/cli.h"
#include "app/progress.h"
#include "app/restart.h"
#include "io/ckpt_writer.h"
#include "io/config.h"
#include "io/fsutil.h"
#include "solver/error.h"
#include "solver/solver.h"

/* Set by signal handlers, read by the time loop between batches. */
static volatile sig_atomic_t stop_signal = 0;       /* SIGINT or SIGTERM received */
static volatile sig_atomic_t checkpoint_signal = 0; /* SIGUSR1 received */

static void on_stop(int sig)
{
    if (stop_signal == SIGINT && sig == SIGINT) _exit(128 + SIGINT); /* second Ctrl-C: leave at once */
    stop_signal = sig;
}

static void on_checkpoint(int sig) { checkpoint_signal = sig; }

static void install_signal_handlers(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sa.sa_handler = on_checkpoint;
    sigaction(SIGUSR1, &sa, NULL);
}

/* Everything one run holds; released by run_destroy. */
typedef struct heat_run {
    heat_config config;
    heat_solver *solver;
    ckpt_writer *writer;
    heat_field_stats initial;
    int quiet;
    int cores;            /* OpenMP threads available to the run */
    int writer_cores;     /* of those, the ones that compress a checkpoint */
    double snapshot_seconds; /* spent copying the field for the writer */
    int snapshot_pinned;  /* the writer's snapshot buffer is page-locked for the GPU's copies */
} heat_run;

static size_t snapshot_bytes(const heat_run *r)
{
    const heat_problem *p = &r->solver->problem;
    return (size_t)heat_grid_points(&p->grid) * heat_precision_size(p->precision);
}

/* A GPU copies the field into page-locked memory several times faster: the
 * snapshot is taken while the GPU waits (H100: 61 ms pageable for 210 MB). */
static void pin_snapshot(heat_run *r)
{
    r->snapshot_pinned = heat_solver_pin_host(r->solver, ckpt_writer_buffer(r->writer), snapshot_bytes(r), 1);
}

static void unpin_snapshot(heat_run *r)
{
    if (!r->snapshot_pinned) return;
    ckpt_writer_wait(r->writer); /* its status was reported by the run, or the run failed anyway */
    heat_solver_pin_host(r->solver, ckpt_writer_buffer(r->writer), snapshot_bytes(r), 0);
    r->snapshot_pinned = 0;
}

static void run_destroy(heat_run *r)
{
    unpin_snapshot(r);
    ckpt_writer_destroy(&r->writer);
    heat_solver_destroy(&r->solver);
    heat_config_destroy(&r->config);
}

static int load_configuration(const heat_cli *cli, heat_run *r)
{
    HEAT_CALL(heat_config_load(cli->config, cli->overrides, cli->noverrides, &r->config));
    if (cli->backend >= 0) r->config.backend = cli->backend;
    if (!r->quiet) printf("heatsolve %s: effective configuration of %s\n%s\n", HEATSOLVE_VERSION, cli->config, r->config.text);
    return HEAT_OK;
}

static int create_solver(heat_run *r, int verbose)
{
    heat_problem problem;
    heat_config_problem(&r->config, &problem);
    problem.quiet = r->quiet;
    HEAT_CALL(heat_solver_create(&problem, (heat_backend_request)r->config.backend, &r->solver));
    if (verbose && problem.implicit.scheme != HEAT_EULER) r->solver->cg_log = stdout;
    if (r->quiet) return HEAT_OK;
    printf("backend %s on %s; kernel %s\ngrid %d x %d x %d, dt = %.6g (dt_max = %.6g), steps to %ld\n",
           r->solver->ops->name, r->solver->ops->device_name(r->solver->state),
           r->solver->ops->kernel_description(r->solver->state), problem.grid.n[0], problem.grid.n[1],
           problem.grid.n[2], problem.dt, heat_dt_max(&problem.grid, problem.alpha), r->config.steps);
    const heat_implicit *im = &problem.implicit;
    if (im->scheme != HEAT_EULER)
        printf("time scheme %s: preconditioned CG (%s%s), solver.rtol = %g, at most %d iterations a step\n",
               heat_scheme_name(im->scheme), heat_preconditioner_name(im->preconditioner),
               im->preconditioner == HEAT_PRECOND_CHEBYSHEV ? ", degree solver.chebyshev_degree" : "", im->rtol,
               im->max_iterations);
    return HEAT_OK;
}

static int set_initial_field(heat_run *r, void *buffer)
{
    const heat_problem *p = &r->solver->problem;
    heat_initial_fill(&r->config.initial, &p->grid, p->precision, buffer);
    return heat_solver_set_field(r->solver, buffer, 0);
}

static png_slice quick_look_slice(const heat_config *c, const heat_field_stats *initial)
{
    png_slice s = {c->output.png_axis, c->output.png_index, initial->min, initial->max};
    if (s.index < 0)
        s.index = c->initial.type == INITIAL_LETTERS && s.axis == 2 ? heat_letters_mid_index(&c->initial, &c->grid)
                                                                    : c->grid.n[s.axis] / 2;
    if (!(s.high > s.low)) s.high = s.low + 1.0;
    return s;
}

/* On the GPU backend the host has nothing else to do but launch kernels:
 * all cores but the launching thread's compress (with that one too, the
 * launcher can be descheduled for a time slice and the GPU idles).
 * On the CPU backend the stencil and the compression share the cores while a
 * write is in flight: running both on all of them oversubscribes the cores,
 * and every OpenMP barrier of the stencil then waits for a descheduled
 * thread (measured on 2 cores: a write overlapped that way cost more wall
 * time than the same write done serially). */
static void plan_cores(heat_run *r)
{
    r->cores = omp_get_max_threads();
    int cpu = r->solver->ops == &heat_backend_cpu;
    r->writer_cores = cpu ? (r->cores + 1) / 2 : r->cores - 1;
    if (r->writer_cores < 1) r->writer_cores = 1;
}

/* Before each batch: the stencil's share of the cores. Returns 1 when the
 * stencil leaves some of them to a write in flight. */
static int share_cores(const heat_run *r)
{
    if (r->solver->ops != &heat_backend_cpu) return 0;
    int sharing = ckpt_writer_busy(r->writer) && r->cores > 1;
    omp_set_num_threads(sharing ? r->cores - r->writer_cores : r->cores);
    return sharing;
}

static int create_writer(heat_run *r, heat_series *series)
{
    const heat_config *c = &r->config;
    HEAT_CHECK(c->output.png_index < c->grid.n[c->output.png_axis] || c->output.png_index < 0,
               "output.png_index = %d is outside the grid", c->output.png_index);
    ckpt_writer_options o = {c->output.dir, c->output.name, c->output.compression,
                             c->output.strategy == 0 ? CKPT_PARALLEL_RLE : CKPT_PARALLEL_ZLIB, c->output.keep,
                             c->output.png, quick_look_slice(c, &r->initial), r->writer_cores};
    ckpt_meta meta = {0};
    meta.dt = r->solver->problem.dt;
    meta.precision = r->solver->problem.precision;
    meta.grid = r->solver->problem.grid;
    meta.alpha = c->alpha;
    meta.implicit = c->implicit;
    memcpy(meta.bc, c->bc, sizeof meta.bc);
    meta.config_text = c->text;
    return ckpt_writer_create(&o, &meta, series, &r->writer);
}

/* Waits for the previous write, snapshots the field and hands it over. */
static int write_checkpoint(heat_run *r)
{
    int status = ckpt_writer_wait(r->writer);
    if (status != HEAT_OK && !r->config.output.on_write_error) return status;
    if (status != HEAT_OK) heat_warn("output.on_write_error = \"continue\": computing on");
    double start = progress_now();
    HEAT_CALL(heat_solver_get_field(r->solver, ckpt_writer_buffer(r->writer)));
    r->snapshot_seconds += progress_now() - start;
    return ckpt_writer_submit(r->writer, r->solver->step, r->solver->time);
}

static int check_field(heat_run *r, long batch_start, heat_field_stats *stats)
{
    HEAT_CALL(heat_solver_stats(r->solver, stats));
    if (stats->nonfinite == 0) return HEAT_OK;
    return heat_error(HEAT_ERR_RUNTIME,
                      "the temperature became NaN or Inf (%ld values) between step %ld and step %ld; "
                      "the run is unstable: lower time.dt or time.cfl, or remove time.allow_unstable",
                      stats->nonfinite, batch_start, r->solver->step);
}

/* Steps per batch so that a batch takes about 0.1 s (progress, signals).
 * While a write holds some of the CPU backend's cores, batches last 0.02 s
 * instead, so the stencil takes them back soon after the write ends rather
 * than leaving them idle for the rest of a long batch. */
static long next_batch(const heat_run *r, double steps_per_second, long next_checkpoint, int sharing)
{
    long batch = (long)(steps_per_second * (sharing ? 0.02 : 0.1));
    if (batch < 1) batch = 1;
    long until = next_checkpoint - r->solver->step;
    return batch < until ? batch : until;
}

static long checkpoint_after(const heat_config *c, long step)
{
    if (c->output.every <= 0) return c->steps;
    long next = (step / c->output.every + 1) * c->output.every;
    return next < c->steps ? next : c->steps;
}

/* The NaN/Inf check reads the whole field, so it runs about every 0.1 s of
 * stepping, before each checkpoint and at the end, not after every batch: in
 * the 0.02 s batches of a shared CPU it took a large share of the stencil's
 * time (checkpoints every 200 steps of the letters demo on 2 cores: +11% wall
 * time with the check after every batch, +7% without). */
enum { CHECK_INTERVAL_MS = 100 };

static int time_loop(heat_run *r, heat_field_stats *final)
{
    heat_solver *s = r->solver;
    heat_progress progress;
    progress_start(&progress, s->step, r->config.steps, (double)heat_grid_points(&s->problem.grid), r->quiet);
    double steps_per_second = 10.0, last_check = progress_now();
    long unchecked_from = s->step;
    while (s->step < r->config.steps) {
        long next_checkpoint = checkpoint_after(&r->config, s->step);
        long batch = next_batch(r, steps_per_second, next_checkpoint, share_cores(r));
        double t0 = progress_now();
        HEAT_CALL(heat_solver_advance(s, batch));
        double t1 = progress_now();
        steps_per_second = (double)batch / fmax(t1 - t0, 1e-6);
        int stopping = stop_signal != 0;
        int checkpoint_due = s->step == next_checkpoint || stopping || checkpoint_signal;
        if (checkpoint_due || s->step == r->config.steps || t1 - last_check >= CHECK_INTERVAL_MS * 1e-3) {
            HEAT_CALL(check_field(r, unchecked_from, final));
            unchecked_from = s->step, last_check = t1;
        }
        progress_update(&progress, s->step, s->time);
        if (checkpoint_due) {
            checkpoint_signal = 0;
            HEAT_CALL(write_checkpoint(r));
        }
        if (stopping) break;
    }
    progress_finish(&progress);
    return HEAT_OK;
}

static void print_summary(const heat_run *r, long first_step, double wall, const heat_field_stats *f)
{
    if (r->quiet) return;
    double points = (double)heat_grid_points(&r->solver->problem.grid);
    long steps = r->solver->step - first_step;
    double change = r->initial.sum != 0.0 ? (f->sum - r->initial.sum) / fabs(r->initial.sum) : f->sum;
    printf("summary: %ld steps (to step %ld, t = %.6g) in %.3f s, %.3f GLUP/s\n", steps, r->solver->step,
           r->solver->time, wall, wall > 0 ? points * (double)steps / wall / 1e9 : 0.0);
    printf("temperature: min %.6g  max %.6g  mean %.6g; total heat changed by %.3e (relative)\n", f->min, f->max,
           f->sum / points, change);
    ckpt_writer_stats w = ckpt_writer_get_stats(r->writer);
    if (w.writes > 0)
        printf("checkpoints: %ld written, %.3f s each on %d core%s (mean); the run spent %.3f s on snapshots and "
               "%.3f s waiting for writes\n", w.writes, w.write_seconds / (double)w.writes, r->writer_cores,
               r->writer_cores == 1 ? "" : "s", r->snapshot_seconds, w.wait_seconds);
    const heat_cg_stats *cg = &r->solver->cg;
    if (cg->steps > 0)
        printf("CG: %ld iterations in %ld implicit steps (mean %.1f, most %d); largest final relative residual %.2e\n",
               cg->iterations, cg->steps, (double)cg->iterations / (double)cg->steps, cg->most_iterations,
               cg->worst_residual);
}

static int run(const heat_cli *cli, heat_run *r)
{
    r->quiet = cli->quiet;
    HEAT_CALL(load_configuration(cli, r));
    HEAT_CALL(create_solver(r, cli->verbose));
    heat_series series;
    series_init(&series, r->config.output.dir, r->config.output.name);
    void *field = malloc((size_t)heat_grid_points(&r->config.grid) * heat_precision_size(r->config.precision));
    HEAT_CHECK(field, "cannot allocate the host field");
    int status = cli->restart ? restart_load(cli->restart, cli->allow_scheme_change, &r->config, r->solver, field, &series, r->quiet)
                              : set_initial_field(r, field);
    free(field);
    if (status != HEAT_OK) return series_destroy(&series), status;
    if (cli->restart && r->solver->step >= r->config.steps) {
        printf("The run already reached step %ld (time.steps = %ld): nothing to do.\n", r->solver->step, r->config.steps);
        return series_destroy(&series), HEAT_OK;
    }
    HEAT_CALL(fs_make_dirs(r->config.output.dir));
    HEAT_CALL(heat_solver_stats(r->solver, &r->initial));
    plan_cores(r);
    HEAT_CALL(create_writer(r, &series));
    pin_snapshot(r);
    long first_step = r->solver->step;
    if (!cli->restart) HEAT_CALL(write_checkpoint(r)); /* the initial state opens the series */
    double start = progress_now();
    heat_field_stats final = r->initial;
    HEAT_CALL(time_loop(r, &final));
    status = ckpt_writer_wait(r->writer);
    if (status != HEAT_OK && !r->config.output.on_write_error) return status;
    print_summary(r, first_step, progress_now() - start, &final);
    if (stop_signal) {
        fprintf(stderr, "heatsolve: stopped by signal %d at step %ld after writing its checkpoint; continue with "
                        "--restart latest\n", (int)stop_signal, r->solver->step);
        return 128 + stop_signal;
    }
    return HEAT_OK;
}

/* Every checkpoint allocates its chunk buffers afresh; by default glibc
 * returns them to the kernel (mmap above 128 KiB, heap trimming), so each
 * write page-faults and zeroes its buffers again (perf: 11% of a write).
 * Kept in the heap, the next write reuses them. Fields (GBs) still get mmap. */
static void keep_freed_memory(void)
{
    mallopt(M_MMAP_THRESHOLD, 64 << 20);
    mallopt(M_TRIM_THRESHOLD, 512 << 20);
}

int main(int argc, char **argv)
{
    heat_cli cli;
    int status = cli_parse(argc, argv, &cli);
    if (status != HEAT_OK) return status;
    if (cli.help) return cli_print_help(), 0;
    if (cli.version) return printf("heatsolve %s\n", HEATSOLVE_VERSION), 0;
    if (cli.bench) return bench_main(&cli);
    install_signal_handlers();
    keep_freed_memory();
    heat_run r;
    memset(&r, 0, sizeof r);
    status = run(&cli, &r);
    run_destroy(&r);
    return status;
}
