/*
 * heatsolve: the program reads as the algorithm. Load the configuration, set
 * up the solver and the initial (or restarted) field, then advance in
 * batches: after each batch check the field, report progress, write a
 * checkpoint when one is due or a signal asks for one; finally summarise.
 */
#include <malloc.h>
#include <math.h>
#include <omp.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "app/bench.h"
#include "app/cli.h"
#include "app/gpu_visibility.h"
#include "app/launcher.h"
#include "app/output_clock.h"
#include "app/progress.h"
#include "app/ranks.h"
#include "app/report.h"
#include "app/restart.h"
#include "app/signals.h"
#include "app/threads.h"
#include "app/zones.h"
#include "io/ckpt_writer.h"
#include "io/config.h"
#include "io/fsutil.h"
#include "io/history.h"
#include "solver/materials.h"
#include "io/output_dir.h"
#include "parallel/domain.h"
#include "parallel/parallel.h"
#include "solver/error.h"
#include "solver/host_memory.h"
#include "solver/solver.h"

/* Everything one run holds; released by run_destroy. */
typedef struct heat_run {
    heat_config config;
    heat_domain domain;   /* this rank's block of the grid */
    output_dir *output;   /* the output folder, locked for this run (root) */
    heat_solver *solver;
    ckpt_writer *writer;  /* the root's, or with parts every rank's; NULL otherwise */
    ckpt_parts *parts;    /* each rank compresses its own slab (io/ckpt_parts.h); NULL: the root gathers */
    heat_field_stats initial;
    int quiet;
    int cores;            /* OpenMP threads available to the run */
    int writer_cores;     /* of those, the ones that compress a checkpoint */
    double snapshot_seconds; /* spent copying the field for the writer */
    double stepping_seconds; /* in heat_solver_advance (halo exchanges included) */
    void *host_field;     /* one process: the field on the host, loaded there, then the writer's snapshot buffer */
    long host_field_step; /* the step whose field host_field holds as loaded (no snapshot needed); -1: none */
    void *pinned[CKPT_WRITER_MAX_JOBS + 1]; /* the snapshot buffers page-locked for the GPU's copies */
    size_t pinned_bytes[CKPT_WRITER_MAX_JOBS + 1];
    int pinned_count;
    int agreed;           /* a failure every rank knows of (no rank is left waiting) */
    int stop_signal;      /* the stop signal the ranks agreed on, 0: none */
    int stencil_shares;   /* the CPU stencil left cores to a write in the last batch */
    long clock_checkpoints; /* taken by output.every_seconds */
    heat_history *history;  /* the root's <name>.history.csv; NULL: none */
    heat_energy energy;     /* materials runs: the energy balance at the last statistics */
    pthread_t releaser;     /* releases the solver's GPU beside the last writes */
    int releasing;          /* releaser runs (run_destroy joins it) */
    ckpt_materials *zone_fields; /* materials runs, the root: what its checkpoints add (app/zones.h) */
    unsigned char *zones;   /* materials runs: this block's zone index, ghosts included (app/zones.h); NULL: none */
} heat_run;

/* Every rank goes on, or all stop with the same status. */
static int agree(heat_run *r, int status)
{
    status = heat_domain_agree(status);
    if (status != HEAT_OK) r->agreed = 1;
    return status;
}

/* Does this rank write checkpoints (or its part of them)? */
static int writes(const heat_run *r) { return par_is_root() || r->parts; }

static size_t snapshot_bytes(const heat_run *r)
{
    return (size_t)heat_grid_points(&r->config.grid) * heat_precision_size((heat_precision)r->config.precision);
}

/* What leaves the GPU at a checkpoint: the writer's snapshot (the whole
 * field, or with parts this rank's slab), or without parts each rank's block
 * (which MPI then takes to rank 0's snapshot). */
static void *copied_from_gpu(const heat_run *r, size_t *bytes)
{
    const int *n = r->domain.decomp.local_n;
    *bytes = (size_t)n[0] * n[1] * n[2] * r->domain.elem; /* the whole field, or this rank's block or slab */
    if (heat_domain_is_split(&r->domain) && !r->parts) return r->domain.block;
    if (r->host_field) return r->host_field;
    return r->writer ? ckpt_writer_buffer(r->writer) : NULL;
}

static int is_pinned(const heat_run *r, const void *host)
{
    for (int i = 0; i < r->pinned_count; ++i)
        if (r->pinned[i] == host) return 1;
    return 0;
}

static void pin(heat_run *r, void *host, size_t bytes)
{
    if (!host || is_pinned(r, host) || r->pinned_count == CKPT_WRITER_MAX_JOBS + 1) return;
    if (!heat_solver_pin_host(r->solver, host, bytes, 1)) return;
    r->pinned[r->pinned_count] = host, r->pinned_bytes[r->pinned_count++] = bytes;
}

/* A GPU copies into page-locked memory several times faster: every buffer
 * a snapshot leaves the GPU into is pinned once, while the GPU would
 * otherwise wait on pageable copies: the field loaded on the host, then the
 * writer's further buffers (several writes in flight). */
static void pin_snapshot(heat_run *r)
{
    size_t bytes;
    void *host = copied_from_gpu(r, &bytes);
    pin(r, host, bytes);
    if (!r->writer || (heat_domain_is_split(&r->domain) && !r->parts)) return; /* the root gathers into those */
    for (int i = 0; i < ckpt_writer_buffer_count(r->writer); ++i)
        pin(r, ckpt_writer_buffer_at(r->writer, i), ckpt_writer_buffer_bytes(r->writer));
}

/* Once no copy into them is in flight (writers may still read them). */
static void unpin_buffers(heat_run *r)
{
    for (int i = 0; i < r->pinned_count; ++i) heat_solver_pin_host(r->solver, r->pinned[i], r->pinned_bytes[i], 0);
    r->pinned_count = 0;
}

static void unpin_snapshot(heat_run *r)
{
    if (!r->pinned_count) return;
    if (r->writer) ckpt_writer_wait(r->writer); /* its status was reported by the run, or the run failed anyway */
    heat_solver_wait_field(r->solver);          /* a copy into it that no writer waited for */
    unpin_buffers(r);
}

static void *release_solver(void *run)
{
    heat_run *r = run;
    if (r->writer) ckpt_writer_wait_snapshots(r->writer); /* no writer asks the solver for its copy again */
    heat_solver_wait_field(r->solver);
    unpin_buffers(r);
    heat_solver_release_backend(r->solver);
    return NULL;
}

/* The stepping is over once the last snapshot is on the host: one process
 * lets its GPU go on a thread of its own while the last writes compress and
 * reach the disk and the summary is printed, rather than after main in the
 * CUDA runtime's exit handler, where releasing the context is most of the
 * time a process spends after main. From here on the
 * run reads only the solver's clock and statistics; run_destroy joins the
 * thread first. Several ranks keep their GPUs: NCCL uses them to the end. */
static void release_solver_beside_writes(heat_run *r)
{
    if (par_size() > 1) return;
    r->releasing = pthread_create(&r->releaser, NULL, release_solver, r) == 0; /* else: released at the end */
}

static void run_destroy(heat_run *r)
{
    if (r->releasing) pthread_join(r->releaser, NULL), r->releasing = 0;
    unpin_snapshot(r);
    ckpt_writer_destroy(&r->writer);
    ckpt_materials_destroy(&r->zone_fields);
    history_close(&r->history);
    free(r->host_field);
    ckpt_parts_destroy(&r->parts);
    heat_solver_destroy(&r->solver);
    free(r->zones);
    heat_domain_free(&r->domain);
    output_dir_release(&r->output);
    heat_config_destroy(&r->config);
}

/* The settings that differ from the defaults, in the user's syntax (all with -v). */
static int load_configuration(const heat_cli *cli, heat_run *r)
{
    HEAT_CALL(heat_config_load(cli->config, cli->overrides, cli->noverrides, &r->config));
    if (cli->backend >= 0) r->config.backend = cli->backend;
    if (r->quiet) return HEAT_OK;
    printf("heatsolve %s: %s, %s:\n", HEATSOLVE_VERSION, cli->config,
           cli->verbose ? "every setting" : "settings that differ from the defaults (every one with -v)");
    if (heat_config_print(&r->config, cli->verbose, stdout) == 0) printf("  (none)\n");
    return HEAT_OK;
}

/* Before the backend starts: the folder is this run's, or the run refuses. */
static int claim_output(const heat_cli *cli, heat_run *r)
{
    output_dir_mode mode = cli->restart ? OUTPUT_CONTINUE : cli->overwrite ? OUTPUT_OVERWRITE : OUTPUT_FRESH;
    return output_dir_claim(r->config.output.dir, r->config.output.name, mode, r->quiet, &r->output);
}

static void print_scheme(const heat_implicit *im)
{
    char degree[32] = "";
    if (im->preconditioner == HEAT_PRECOND_CHEBYSHEV) snprintf(degree, sizeof degree, ", degree %d", im->chebyshev_degree);
    printf("time scheme %s: preconditioned CG (%s%s), solver.rtol = %g, at most %d iterations a step\n",
           heat_scheme_name(im->scheme), heat_preconditioner_name(im->preconditioner), degree, im->rtol,
           im->max_iterations);
}


/* Explicit Euler's largest stable step: the materials' (solver/materials.h) or alpha's. */
static double stable_dt(const heat_problem *p)
{
    return heat_materials_active(p->materials) ? heat_materials_dt_max(&p->grid, p->bc, p->materials)
                                               : heat_dt_max(&p->grid, p->alpha);
}

static int create_solver(heat_run *r, int verbose)
{
    heat_problem whole, problem;
    heat_config_problem(&r->config, &whole);
    HEAT_CALL(agree(r, heat_domain_init(&r->domain, &whole, r->config.ranks, (par_transport)r->config.transport)));
    heat_domain_localize(&r->domain, &whole, &problem);
    HEAT_CALL(agree(r, zones_attach(&r->config, &r->domain.decomp, &problem, &r->zones)));
    problem.quiet = r->quiet;
    if (heat_solver_runs_on_cpu(&problem, (heat_backend_request)r->config.backend))
        threads_pin_workers(par_node_size()); /* before the fields' first touch */
    heat_halo_transport transport = heat_domain_transport(&r->domain);
    HEAT_CALL(agree(r, heat_solver_create_block(&problem, &transport, (heat_backend_request)r->config.backend,
                                                &r->solver)));
    HEAT_CALL(agree(r, ranks_checkpoint_parts(&r->domain.decomp, problem.precision, &r->parts)));
    if (verbose && problem.implicit.scheme != HEAT_EULER) r->solver->cg_log = stdout;
    if (r->quiet) return HEAT_OK;
    printf("backend %s on %s; kernel %s\ngrid %d x %d x %d, dt = %.6g (dt_max = %.6g), steps to %ld\n",
           r->solver->ops->name, r->solver->ops->device_name(r->solver->state),
           r->solver->ops->kernel_description(r->solver->state), whole.grid.n[0], whole.grid.n[1],
           whole.grid.n[2], problem.dt, stable_dt(&whole), r->config.steps);
    if (r->solver->ops == &heat_backend_cpu) printf("OpenMP: %s\n", threads_binding());
    else if (verbose && gpu_visibility_note()) printf("%s\n", gpu_visibility_note());
    if (heat_domain_is_split(&r->domain))
        ranks_print_layout(&r->domain.decomp, r->solver->ops != &heat_backend_cpu, r->parts);
    if (problem.implicit.scheme != HEAT_EULER) print_scheme(&problem.implicit);
    return HEAT_OK;
}

/* The root fills the whole field; each rank receives its block. */
static int set_initial_field(heat_run *r, void *whole)
{
    if (whole) heat_initial_fill(&r->config.initial, &r->config.grid, (heat_precision)r->config.precision, whole);
    zones_initial_temperature(&r->config, whole);
    return heat_domain_set_field(&r->domain, r->solver, whole, 0);
}

/* The field (one process) or each rank's slab (parts) leaves the GPU while
 * it steps on, and the writer waits for it (snapshot_arrived). Otherwise
 * each block is gathered on the root. */
static int take_snapshot(heat_run *r)
{
    void *buffer = r->writer ? ckpt_writer_buffer(r->writer) : NULL;
    if (heat_domain_is_split(&r->domain) && !r->parts) return heat_domain_get_field(&r->domain, r->solver, buffer);
    return heat_solver_get_field_async(r->solver, buffer);
}

static int snapshot_arrived(void *solver) { return heat_solver_wait_field(solver); }

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
 * thread (a write overlapped that way costs more wall time than the same
 * write done serially). */
static void plan_cores(heat_run *r)
{
    if (!writes(r)) return;
    r->cores = omp_get_max_threads();
    int cpu = r->solver->ops == &heat_backend_cpu;
    r->writer_cores = cpu ? (r->cores + 1) / 2 : r->cores - 1;
    if (r->writer_cores < 1) r->writer_cores = 1;
}

/* Before each batch: the stencil's share of this rank's cores. *sharing:
 * 1 when the stencil of some rank leaves some of them to a write in flight.
 * That decides the batch's length, which every rank must agree on: each
 * rank's writer finishes in its own time, and ranks whose batches differed
 * in length would wait for each other's halos and hang. */
static int share_cores(heat_run *r, int *sharing)
{
    *sharing = 0;
    if (r->solver->ops != &heat_backend_cpu) return HEAT_OK;
    /* A rank of one thread whose node's cores are all taken by the ranks has no core to lend a write:
     * stepping beside its compression puts two threads on one core, and the halo exchanges then wait
     * for whichever rank is descheduled. It lets the write finish first; the ranks' writers compress
     * side by side, a core each. */
    if (r->writer && r->cores == 1 && par_size() > 1 && par_node_size() >= par_node_cores())
        ckpt_writer_wait_idle(r->writer);
    int here = r->writer && ckpt_writer_busy(r->writer) && r->cores > 1; /* ranks without a writer: 0 */
    if (r->writer) omp_set_num_threads(here ? r->cores - r->writer_cores : r->cores);
    if (here && !r->stencil_shares) threads_release_idle();
    r->stencil_shares = here;
    long anywhere = here;
    if (par_size() > 1) HEAT_CALL(par_max_longs(&anywhere, 1)); /* every rank, writer or not */
    *sharing = anywhere != 0;
    return HEAT_OK;
}

/* Writes in flight (output.writes_in_flight; 0: automatic). On the GPU the
 * host mostly waits, and a small file's fixed costs (its fsync's latency,
 * the listing's folder fsync) can overlap the next files' compression and
 * writing of the next files. Large files are bound by the disk's bandwidth
 * instead (several at once are no faster, and page-locking their buffers
 * lengthens the start-up). So
 * automatic takes up to CKPT_WRITER_MAX_JOBS buffers where they fit
 * together in WRITER_BUFFERS_BYTES (and an eighth of the host's memory),
 * else one. On the CPU backend the cores that would compress a second write
 * step the stencil, and several ranks take each write step by step together
 * (io/ckpt_parts.h): one. */
static const double WRITER_BUFFERS_BYTES = 256.0 * (1 << 20);

static int plan_writes(const heat_run *r)
{
    if (par_size() > 1) {
        if (r->config.output.writes_in_flight > 1 && par_is_root())
            heat_warn("output.writes_in_flight = %d: with several ranks checkpoints are written one at a time",
                      r->config.output.writes_in_flight);
        return 1;
    }
    if (r->config.output.writes_in_flight > 0) return r->config.output.writes_in_flight;
    if (r->solver->ops == &heat_backend_cpu) return 1;
    double memory = (double)sysconf(_SC_PHYS_PAGES) * (double)sysconf(_SC_PAGESIZE);
    double budget = fmin(memory > 0 ? memory / 8 : 0, WRITER_BUFFERS_BYTES);
    double fit = floor(budget / (double)snapshot_bytes(r));
    return fit < 1 ? 1 : fit > CKPT_WRITER_MAX_JOBS ? CKPT_WRITER_MAX_JOBS : (int)fit;
}

static int create_writer(heat_run *r, heat_series *series)
{
    const heat_config *c = &r->config;
    ckpt_writer_options o = {c->output.dir, c->output.name, c->output.compression,
                             c->output.strategy == 0 ? CKPT_PARALLEL_RLE : CKPT_PARALLEL_ZLIB, c->output.keep,
                             c->output.png, quick_look_slice(c, &r->initial), r->writer_cores, c->output.frame_full,
                             r->parts, r->host_field, plan_writes(r)};
    ckpt_meta meta = {0};
    meta.dt = r->solver->problem.dt;
    meta.precision = r->solver->problem.precision;
    meta.grid = c->grid;
    meta.alpha = c->alpha;
    meta.implicit = c->implicit;
    memcpy(meta.bc, c->bc, sizeof meta.bc);
    meta.config_text = c->text;
    HEAT_CALL(zones_checkpoint_fields(c, par_is_root(), &r->zone_fields));
    meta.materials = r->zone_fields;
    HEAT_CALL(ckpt_writer_create(&o, &meta, series, &r->writer));
    ckpt_writer_set_arrival(r->writer, snapshot_arrived, r->solver);
    return HEAT_OK;
}

/* Makes room (waits for the oldest write if every snapshot buffer is
 * taken), snapshots the field and hands it over as a restart checkpoint or
 * (frame = 1) a frame for viewing. last: the run steps no more, so the
 * write may compress on every core instead of the writer's share (on 2
 * cores a 256^3 double checkpoint takes about half as long). */
static int write_output(heat_run *r, int frame, int last)
{
    int status = r->writer ? ckpt_writer_make_room(r->writer) : HEAT_OK;
    if (status != HEAT_OK && r->config.output.on_write_error) {
        heat_warn("output.on_write_error = \"continue\": computing on");
        status = HEAT_OK;
    }
    HEAT_CALL(agree(r, status));
    double start = progress_now();
    if (r->host_field_step == r->solver->step) r->host_field_step = -1; /* the field is there, as loaded */
    else HEAT_CALL(take_snapshot(r));
    r->snapshot_seconds += progress_now() - start;
    if (!r->writer) return HEAT_OK;
    if (last) ckpt_writer_set_threads(r->writer, r->cores);
    if (heat_materials_active(r->solver->problem.materials)) ckpt_writer_set_energy(r->writer, r->energy.energy);
    return ckpt_writer_submit(r->writer, r->solver->step, r->solver->time, frame);
}

/* Materials runs: the energy balance beside the statistics (collective). */
static int take_energy(heat_run *r)
{
    if (!heat_materials_active(r->solver->problem.materials)) return HEAT_OK;
    return heat_solver_energy(r->solver, &r->energy);
}

/* A row of the history with the statistics just taken (the root's; others have none). */
static void record_history(heat_run *r, const heat_field_stats *stats)
{
    const heat_grid *g = &r->config.grid;
    double cell = g->length[0] / g->n[0] * (g->length[1] / g->n[1]) * (g->length[2] / g->n[2]);
    history_record(r->history, r->solver->step, r->solver->time, stats, (double)heat_grid_points(g), cell, &r->energy);
}

static void open_history(heat_run *r, int restarting, const heat_field_stats *initial)
{
    if (!par_is_root() || !r->config.output.history) return;
    history_open(r->config.output.dir, r->config.output.name, r->solver->step, restarting,
                 heat_materials_active(r->solver->problem.materials), &r->history);
    record_history(r, initial);
}

static int check_field(heat_run *r, long batch_start, heat_field_stats *stats)
{
    HEAT_CALL(heat_domain_stats(&r->domain, r->solver, stats));
    if (stats->nonfinite == 0) {
        HEAT_CALL(take_energy(r));
        return record_history(r, stats), HEAT_OK;
    }
    r->agreed = 1; /* every rank saw the same count */
    if (!par_is_root()) return HEAT_ERR_RUNTIME;
    return heat_error(HEAT_ERR_RUNTIME,
                      "the temperature became NaN or Inf (%ld values) between step %ld and step %ld; "
                      "the run is unstable: lower time.dt or time.cfl, or remove time.allow_unstable",
                      stats->nonfinite, batch_start, r->solver->step);
}

/* Steps per batch so that a batch takes about 0.1 s (progress, signals).
 * While a write holds some of the CPU backend's cores, batches last 0.01 s
 * instead, so the stencil takes them back soon after the write ends rather
 * than leaving them idle for the rest of a long batch (on average half a
 * batch a checkpoint). */
enum { BATCH_MS = 100, SHARING_BATCH_MS = 10 };

static long next_batch(const heat_run *r, double steps_per_second, long next_checkpoint, int sharing)
{
    long batch = (long)(steps_per_second * (sharing ? SHARING_BATCH_MS : BATCH_MS) * 1e-3);
    if (batch > 1) batch &= ~1L; /* the CPU backend steps in pairs: an odd batch would end in a single sweep */
    if (batch < 1) batch = 1;
    long until = next_checkpoint - r->solver->step;
    return batch < until ? batch : until;
}

/* The next multiple of every after step, or the final step. */
static long next_multiple(long every, long step, long final)
{
    if (every <= 0) return final;
    long next = (step / every + 1) * every;
    return next < final ? next : final;
}

/* The NaN/Inf check reads the whole field, so it runs about every second of
 * stepping, before each checkpoint and at the end, not after every batch: in
 * the short batches of a shared CPU it would take a large share of the
 * stencil's time, and a checkpoint is checked anyway. */
enum { CHECK_INTERVAL_MS = 1000 };

static int time_loop(heat_run *r, heat_field_stats *final)
{
    heat_solver *s = r->solver;
    heat_progress progress;
    progress_start(&progress, s->step, r->config.steps, (double)heat_grid_points(&s->problem.grid), r->quiet);
    double steps_per_second = 10.0, last_check = progress_now();
    output_clock clock = output_clock_start(r->config.output.every_seconds, last_check);
    long unchecked_from = s->step;
    while (s->step < r->config.steps) {
        long next_checkpoint = next_multiple(r->config.output.every, s->step, r->config.steps);
        long next_frame = next_multiple(r->config.output.frame_every, s->step, r->config.steps);
        long next_output = next_frame < next_checkpoint ? next_frame : next_checkpoint;
        int sharing;
        HEAT_CALL(share_cores(r, &sharing));
        long batch = next_batch(r, steps_per_second, next_output, sharing);
        double t0 = progress_now();
        HEAT_CALL(heat_solver_advance(s, batch));
        double t1 = progress_now();
        r->stepping_seconds += t1 - t0;
        int clock_due = par_is_root() && output_clock_due(&clock, t1, r->writer && ckpt_writer_busy(r->writer));
        batch_decision d = {signals_stop_requested(), signals_take_checkpoint_request(),
                            t1 - last_check >= CHECK_INTERVAL_MS * 1e-3, clock_due,
                            (double)batch / fmax(t1 - t0, 1e-6)};
        HEAT_CALL(ranks_agree_on_batch(&d));
        steps_per_second = d.steps_per_second;
        r->stop_signal = (int)d.stop_signal;
        int stopping = d.stop_signal != 0, asked = d.checkpoint_asked != 0;
        int on_schedule = s->step == next_checkpoint || stopping || asked;
        int checkpoint_due = on_schedule || d.clock_due;
        r->clock_checkpoints += !on_schedule && d.clock_due;
        if (checkpoint_due) output_clock_reset(&clock, t1);
        int frame_due = !checkpoint_due && s->step == next_frame;
        if (checkpoint_due || frame_due || s->step == r->config.steps || d.check_due) {
            HEAT_CALL(check_field(r, unchecked_from, final));
            unchecked_from = s->step, last_check = t1;
        }
        progress_update(&progress, s->step, s->time);
        if (asked && !r->quiet) {
            progress_finish(&progress);
            printf("SIGUSR1: writing a checkpoint of step %ld (t = %.6g)\n", s->step, s->time);
        }
        if (checkpoint_due || frame_due) HEAT_CALL(write_output(r, frame_due, stopping || s->step == r->config.steps));
        if (stopping) break;
    }
    progress_finish(&progress);
    return HEAT_OK;
}


/* A run ends well only with its final state on disk. */
static int check_final_state(const heat_run *r, const ckpt_writer_stats *w)
{
    if (w->last_written_step == r->solver->step) return HEAT_OK;
    char newest[64] = "no checkpoint of this run was written";
    if (w->last_written_step >= 0) snprintf(newest, sizeof newest, "the newest is step %ld", w->last_written_step);
    return heat_error(HEAT_ERR_RUNTIME, "the final state (step %ld) is not on disk: its checkpoint could not be "
                      "written (see above); %s", r->solver->step, newest);
}

static int restart_allowed(const heat_cli *cli)
{
    return (cli->allow_scheme_change ? RESTART_ALLOW_SCHEME : 0) | (cli->allow_problem_change ? RESTART_ALLOW_PROBLEM : 0);
}

/* The root reads the checkpoint; every rank takes its block and the clock. */
static int restart_field(const heat_cli *cli, heat_run *r, void *whole, heat_series *series)
{
    restart_point found = {0};
    int status = whole ? restart_load(cli->restart, restart_allowed(cli), &r->config, whole, &found, series,
                                      r->quiet)
                       : HEAT_OK;
    HEAT_CALL(agree(r, status));
    HEAT_CALL(par_broadcast(&found, sizeof found));
    HEAT_CALL(heat_domain_set_field(&r->domain, r->solver, whole, found.step));
    heat_solver_set_clock(r->solver, found.step, found.time);
    if (found.energy_present && heat_materials_active(r->solver->problem.materials))
        HEAT_CALL(heat_solver_set_energy(r->solver, found.energy_in));
    return HEAT_OK;
}

/* One process loads its field where the checkpoints' snapshots will go, a
 * buffer page-locked once: the upload to a GPU runs at full speed and the
 * initial checkpoint needs no copy back, and no second buffer of the
 * field's size is touched. Several ranks load on the root and scatter the blocks (parallel/domain.h). */
static int allocate_host_field(heat_run *r)
{
    r->host_field_step = -1;
    if (heat_domain_is_split(&r->domain)) return HEAT_OK;
    r->host_field = heat_host_alloc(snapshot_bytes(r)); /* its pages present: pinning it faults none */
    HEAT_CHECK(r->host_field, "cannot allocate the %zu-byte host field", snapshot_bytes(r));
    pin_snapshot(r);
    return HEAT_OK;
}

static int load_field(const heat_cli *cli, heat_run *r, heat_series *series)
{
    HEAT_CALL(allocate_host_field(r));
    void *whole = r->host_field;
    if (par_is_root() && !whole) {
        whole = heat_host_alloc(snapshot_bytes(r));
        HEAT_CHECK(whole, "cannot allocate the host field");
    }
    int status = cli->restart ? restart_field(cli, r, whole, series) : set_initial_field(r, whole);
    if (whole != r->host_field) free(whole);
    if (status == HEAT_OK && r->host_field) r->host_field_step = r->solver->step;
    return status;
}

static int run(const heat_cli *cli, heat_run *r)
{
    double begun = progress_now();
    r->quiet = cli->quiet || !par_is_root();
    HEAT_CALL(agree(r, load_configuration(cli, r)));
    HEAT_CALL(agree(r, par_is_root() ? claim_output(cli, r) : HEAT_OK));
    threads_fit_ranks(par_node_size(), par_node_cores());
    HEAT_CALL(create_solver(r, cli->verbose));
    run_totals totals = {.backend_seconds = progress_now() - begun};
    heat_series series;
    series_init(&series, r->config.output.dir, r->config.output.name);
    int status = agree(r, load_field(cli, r, &series));
    totals.field_seconds = progress_now() - begun - totals.backend_seconds;
    if (status != HEAT_OK) return series_destroy(&series), status;
    if (cli->restart && r->solver->step >= r->config.steps) {
        printf("The run already reached step %ld (time.steps = %ld): nothing to do.\n", r->solver->step, r->config.steps);
        return series_destroy(&series), HEAT_OK;
    }
    totals.first_step = r->solver->step;
    report_output_plan(&r->config, totals.first_step, !cli->restart, r->quiet);
    launcher_check_kill_delay((double)snapshot_bytes(r));
    HEAT_CALL(heat_domain_stats(&r->domain, r->solver, &totals.initial));
    r->initial = totals.initial;
    HEAT_CALL(take_energy(r));
    totals.energy_initial = r->energy;
    ranks_check_binding();
    plan_cores(r);
    if (writes(r)) HEAT_CALL(create_writer(r, &series));
    pin_snapshot(r);
    open_history(r, cli->restart != NULL, &totals.initial);
    if (!cli->restart) HEAT_CALL(write_output(r, 0, r->config.steps == 0)); /* the initial state opens the series */
    double start = progress_now();
    totals.startup_seconds = start - begun;
    totals.final = totals.initial;
    HEAT_CALL(time_loop(r, &totals.final));
    totals.energy_final = r->energy;
    totals.materials = heat_materials_active(r->solver->problem.materials);
    release_solver_beside_writes(r);
    status = r->writer ? ckpt_writer_wait(r->writer) : HEAT_OK;
    if (r->config.output.on_write_error) status = HEAT_OK;
    HEAT_CALL(agree(r, status));
    totals.wall_seconds = progress_now() - start;
    totals.snapshot_seconds = r->snapshot_seconds;
    totals.clock_checkpoints = r->clock_checkpoints;
    if (r->history) totals.history_path = history_path(r->history), totals.history_rows = history_rows(r->history);
    HEAT_CALL(ranks_describe(&r->domain, r->solver, r->stepping_seconds, &totals));
    totals.points = (double)heat_grid_points(&r->config.grid);
    if (r->writer) {
        ckpt_writer_stats writes = ckpt_writer_get_stats(r->writer);
        if (!r->quiet) report_summary(r->solver, &writes, &totals);
        status = check_final_state(r, &writes);
    }
    HEAT_CALL(agree(r, status));
    int sig = r->stop_signal;
    if (sig && par_is_root()) {
        fprintf(stderr, "heatsolve: stopped by signal %d at step %ld after writing its checkpoint; continue with "
                        "--restart latest\n", sig, r->solver->step);
    }
    return sig ? 128 + sig : HEAT_OK;
}

/* Every checkpoint allocates its chunk buffers afresh; by default glibc
 * returns them to the kernel (mmap above 128 KiB, heap trimming), so each
 * write would page-fault and zero its buffers again, a noticeable share of it.
 * Kept in the heap, the next write reuses them. Fields (GBs) still get mmap. */
static void keep_freed_memory(void)
{
    mallopt(M_MMAP_THRESHOLD, 64 << 20);
    mallopt(M_TRIM_THRESHOLD, 512 << 20);
}

/* The command line is the same on every rank, so its errors are agreed. */
static int run_command(const heat_cli *cli, int *agreed)
{
    if (cli->help) return par_is_root() ? cli_print_help() : (void)0, 0;
    if (cli->version) return par_is_root() ? printf("heatsolve %s\n", HEATSOLVE_VERSION) : 0, 0;
    if (cli->bench) return *agreed = 1, bench_main(cli);
    signals_install();
    keep_freed_memory();
    heat_run r;
    memset(&r, 0, sizeof r);
    int status = run(cli, &r);
    *agreed = r.agreed || status == HEAT_OK || status > 128;
    run_destroy(&r);
    return status;
}

int main(int argc, char **argv)
{
    if (par_init(&argc, &argv) != HEAT_OK) return 1;
    heat_errors_set_rank(par_rank());
    heat_cli cli;
    int status = launcher_check_ranks_joined(par_size()), agreed = 1;
    if (status == HEAT_OK) status = cli_parse(argc, argv, &cli);
    if (status == HEAT_OK) gpu_visibility_narrow(par_node_size(), cli.backend != BACKEND_CPU);
    if (status == HEAT_OK) status = run_command(&cli, &agreed);
    par_finalize(status, agreed);
    return status;
}
