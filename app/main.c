/*
 * heatsolve: the program reads as the algorithm. Load the configuration,
 * decide where the run starts (fresh or restart), set up the solver and its
 * field, then advance in batches: after each batch check the field when due,
 * report progress, and write a checkpoint or a frame when one is due;
 * finally summarise. The policies live in rooms of their own: where a run
 * starts (app/run_start.h), when things fall due and on how many cores
 * (app/schedule.h), and the field's way to the writer (app/snapshot.h).
 */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/bench.h"
#include "app/cli.h"
#include "app/gpu_visibility.h"
#include "app/launcher.h"
#include "app/progress.h"
#include "app/ranks.h"
#include "app/report.h"
#include "app/run_start.h"
#include "app/schedule.h"
#include "app/signals.h"
#include "app/snapshot.h"
#include "app/threads.h"
#include "app/zones.h"
#include "io/ckpt_writer.h"
#include "io/config.h"
#include "io/history.h"
#include "io/output_dir.h"
#include "parallel/domain.h"
#include "parallel/parallel.h"
#include "solver/error.h"
#include "solver/host_memory.h"
#include "solver/materials.h"
#include "solver/solver.h"
#include "solver/space_order.h"

/* Everything one run holds; released by run_destroy. */
typedef struct heat_run {
    heat_config config;
    run_start start;      /* fresh or restart: the first step, its time, the series so far */
    heat_domain domain;   /* this rank's block of the grid */
    output_dir *output;   /* the output folder, locked for this run (root) */
    heat_solver *solver;
    ckpt_parts *parts;    /* each rank compresses its own slab (io/ckpt_parts.h); NULL: the root gathers */
    ckpt_writer *writer;  /* the root's, or with parts every rank's; NULL otherwise */
    snapshots *snapshots; /* the field's way from the solver to the writer */
    run_schedule schedule; /* cores, batches and what falls due after each */
    heat_history *history;  /* the root's <name>.history.csv; NULL: none */
    heat_energy energy;     /* materials runs: the energy balance at the last statistics */
    ckpt_materials *zone_fields; /* materials runs, the root: what its checkpoints add (app/zones.h) */
    unsigned char *zones;   /* materials runs: this block's zone index, ghosts included (app/zones.h); NULL: none */
    gpu_runtime_start gpu_start; /* the GPU runtime starting beside the host's start-up (app/gpu_visibility.h) */
    int quiet;
    int agreed;           /* a failure every rank knows of (no rank is left waiting) */
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

static int runs_on_cpu(const heat_run *r) { return r->solver->ops == &heat_backend_cpu; }

static size_t snapshot_bytes(const heat_run *r)
{
    return (size_t)heat_grid_points(&r->config.grid) * heat_precision_size((heat_precision)r->config.precision);
}

static void run_destroy(heat_run *r)
{
    gpu_runtime_started(&r->gpu_start); /* a run that failed before its backend */
    snapshots_destroy(&r->snapshots); /* the GPU's copies and the writes end before their buffers go */
    ckpt_writer_destroy(&r->writer);
    run_start_destroy(&r->start);
    ckpt_materials_destroy(&r->zone_fields);
    history_close(&r->history);
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

/* Before the backend starts: the folder is this run's, or the run refuses.
 * A layout the ranks refuse, or a halo transport the build lacks, is a
 * configuration error too, found first: a refused run must leave the
 * folder as it was (--overwrite empties it). */
static int claim_output(heat_run *r)
{
    heat_problem whole;
    heat_config_problem(&r->config, &whole);
    HEAT_CALL(heat_domain_check_layout(&whole, r->config.ranks));
    HEAT_CALL(par_device_check_built((par_transport)r->config.transport, par_size()));
    return output_dir_claim(r->config.output.dir, r->config.output.name, r->start.folder, r->quiet, &r->output);
}

static void print_scheme(const heat_implicit *im)
{
    char degree[32] = "";
    if (im->preconditioner == HEAT_PRECOND_CHEBYSHEV) snprintf(degree, sizeof degree, ", degree %d", im->chebyshev_degree);
    printf("time scheme %s: preconditioned CG (%s%s), solver.rtol = %g, at most %d iterations a step\n",
           heat_scheme_name(im->scheme), heat_preconditioner_name(im->preconditioner), degree, im->rtol,
           im->max_iterations);
}

/* Explicit Euler's largest stable step: the materials' (solver/materials.h) or alpha's at the space order's. */
static double stable_dt(const heat_problem *p)
{
    return heat_materials_active(p->materials) ? heat_materials_dt_max(&p->grid, p->bc, p->materials)
                                               : heat_space_dt_max(&p->grid, p->alpha, heat_space_radius(p));
}

/* What runs where: backend, device and kernel, the whole grid and the step, the threads (CPU) or the GPUs' visibility,
 * the ranks' layout, the implicit scheme. problem: this rank's block of whole. */
static void print_solver(const heat_run *r, const heat_problem *whole, const heat_problem *problem, int verbose)
{
    const heat_solver *s = r->solver;
    printf("backend %s on %s; kernel %s\ngrid %d x %d x %d, dt = %.6g (dt_max = %.6g), steps to %ld\n", s->ops->name,
           s->ops->device_name(s->state), s->ops->kernel_description(s->state), whole->grid.n[0], whole->grid.n[1],
           whole->grid.n[2], problem->dt, stable_dt(whole), r->config.steps);
    if (runs_on_cpu(r)) printf("OpenMP: %s\n", threads_binding());
    else if (verbose && gpu_visibility_note()) printf("%s\n", gpu_visibility_note());
    if (heat_domain_is_split(&r->domain)) ranks_print_layout(&r->domain.decomp, !runs_on_cpu(r), r->parts);
    if (problem->implicit.scheme != HEAT_EULER) print_scheme(&problem->implicit);
}

/* The ranks' layout and how their halos travel (collective: the GPU transports probe the devices). */
static int init_domain(heat_run *r)
{
    heat_problem whole;
    heat_config_problem(&r->config, &whole);
    int on_gpu = !heat_solver_runs_on_cpu(&whole, (heat_backend_request)r->config.backend);
    return agree(r, heat_domain_init(&r->domain, &whole, r->config.ranks, (par_transport)r->config.transport,
                                     on_gpu));
}

/* A GPU transport named explicitly may be refused by the machine (no GPU each, no IPC between the
 * ranks), which only its selection finds: such a run selects it before the folder is claimed, so a
 * refusal leaves an earlier run's files in place (--overwrite). Others claim first, beside the GPU
 * runtime's start. */
static int transport_before_claim(const heat_run *r)
{
    par_transport t = (par_transport)r->config.transport;
    return par_size() > 1 && (t == TRANSPORT_MPI || t == TRANSPORT_NCCL || t == TRANSPORT_IPC);
}

static int create_solver(heat_run *r, int verbose)
{
    heat_problem whole, problem;
    heat_config_problem(&r->config, &whole);
    heat_domain_localize(&r->domain, &whole, &problem);
    HEAT_CALL(agree(r, zones_attach(&r->config, &r->domain.decomp, &problem, &r->zones)));
    problem.quiet = r->quiet;
    if (heat_solver_runs_on_cpu(&problem, (heat_backend_request)r->config.backend))
        threads_pin_workers(par_node_size()); /* before the fields' first touch */
    heat_halo_transport transport = heat_domain_transport(&r->domain);
    HEAT_CALL(agree(r, heat_solver_create_block(&problem, &transport, (heat_backend_request)r->config.backend,
                                                &r->solver)));
    HEAT_CALL(agree(r, ranks_checkpoint_parts(&r->domain.decomp, problem.precision, &r->parts)));
    /* Every rank knows each solve's iterations (global sums): the root's line speaks for the job. */
    if (verbose && !r->quiet && problem.implicit.scheme != HEAT_EULER) r->solver->cg_log = stdout;
    if (!r->quiet) print_solver(r, &whole, &problem, verbose);
    return HEAT_OK;
}

/* The field the run starts from, on the host first: one process loads it
 * into the snapshot pipeline's host field; several ranks read a checkpoint
 * on the root, or fill their own blocks. */
static int load_field(heat_run *r)
{
    HEAT_CALL(snapshots_create(r->solver, &r->domain, r->parts, snapshot_bytes(r), &r->snapshots));
    void *host_field = snapshots_host_field(r->snapshots), *whole = host_field;
    if (par_is_root() && !whole && r->start.checkpoint) {
        whole = heat_host_alloc(snapshot_bytes(r));
        HEAT_CHECK(whole, "cannot allocate the host field");
    }
    int status = run_start_load(&r->start, &r->config, &r->domain, r->solver, whole, r->quiet);
    if (whole != host_field) free(whole);
    if (status == HEAT_OK) snapshots_loaded(r->snapshots, r->solver->step);
    return status;
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

static int create_writer(heat_run *r, const heat_field_stats *initial)
{
    const heat_config *c = &r->config;
    ckpt_writer_options o = {
        .dir = c->output.dir,
        .name = c->output.name,
        .codec = {c->output.compression, c->output.strategy == 0 ? CKPT_PARALLEL_RLE : CKPT_PARALLEL_ZLIB},
        .keep = c->output.keep,
        .png = c->output.png,
        .slice = quick_look_slice(c, initial),
        .threads = r->schedule.writer_cores,
        .frame_full = c->output.frame_full,
        .parts = r->parts,
        .buffer = snapshots_host_field(r->snapshots),
        .jobs = schedule_writes_in_flight(&r->schedule, c, snapshot_bytes(r)),
    };
    ckpt_meta meta = {0};
    meta.dt = r->solver->problem.dt;
    meta.precision = r->solver->problem.precision;
    meta.grid = c->grid;
    meta.alpha = c->alpha;
    meta.implicit = c->implicit;
    meta.space_order = c->space_order;
    memcpy(meta.bc, c->bc, sizeof meta.bc);
    meta.config_text = c->text;
    HEAT_CALL(zones_checkpoint_fields(c, par_is_root(), &r->zone_fields));
    meta.materials = r->zone_fields;
    return ckpt_writer_create(&o, &meta, &r->start.series, &r->writer);
}

/* Makes room (waits for the oldest write if every snapshot buffer is
 * taken), snapshots the field and hands it over as a restart checkpoint or
 * (frame = 1) a frame for viewing. last: the run steps no more, so the
 * write may compress on every core instead of the writer's share. */
static int write_output(heat_run *r, int frame, int last)
{
    int status = r->writer ? ckpt_writer_make_room(r->writer) : HEAT_OK;
    if (status != HEAT_OK && r->config.output.on_write_error) {
        heat_warn("output.on_write_error = \"continue\": computing on");
        status = HEAT_OK;
    }
    HEAT_CALL(agree(r, status));
    HEAT_CALL(snapshots_take(r->snapshots));
    if (!r->writer) return HEAT_OK;
    if (last) ckpt_writer_set_threads(r->writer, r->schedule.cores);
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

static void open_history(heat_run *r, const heat_field_stats *initial)
{
    if (!par_is_root() || !r->config.output.history) return;
    history_open(r->config.output.dir, r->config.output.name, r->solver->step, r->start.continues,
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

static void announce_asked_checkpoint(const heat_run *r, heat_progress *progress)
{
    if (r->quiet) return;
    progress_finish(progress);
    printf("SIGUSR1: writing a checkpoint of step %ld (t = %.6g)\n", r->solver->step, r->solver->time);
}

/* A CG that stopped on its global sums' verdict stopped at the same step on
 * every rank: an agreed failure, which ends every rank with the root's one
 * message. Any other failure may be this rank's alone. */
static int advance(heat_run *r, long batch)
{
    int status = heat_solver_advance(r->solver, batch);
    if (status != HEAT_OK && r->solver->cg.failed_alike) r->agreed = 1;
    return status;
}

/* Step, check, output when due: the batches and what falls due after each
 * are the schedule's (app/schedule.h); a stop signal ends the loop after
 * its checkpoint. */
static int time_loop(heat_run *r, heat_field_stats *final)
{
    heat_solver *s = r->solver;
    heat_progress progress;
    progress_start(&progress, s->step, r->config.steps, (double)heat_grid_points(&s->problem.grid), r->quiet);
    schedule_start(&r->schedule, r->writer, progress_now());
    long unchecked_from = s->step;
    due_events due = {0};
    while (!due.stop_signal && s->step < r->config.steps) {
        long batch;
        HEAT_CALL(schedule_next_batch(&r->schedule, s->step, &batch));
        double t0 = progress_now();
        HEAT_CALL(advance(r, batch));
        HEAT_CALL(schedule_after_batch(&r->schedule, s->step, batch, t0, progress_now(), &due));
        if (due.check) {
            HEAT_CALL(check_field(r, unchecked_from, final));
            unchecked_from = s->step;
        }
        progress_update(&progress, s->step, s->time);
        if (due.asked) announce_asked_checkpoint(r, &progress);
        if (due.checkpoint || due.frame) HEAT_CALL(write_output(r, due.frame, due.last));
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

/* Before the first step: the output plan, the initial statistics, the
 * cores, the writer and the history; a fresh run's initial state opens the series. */
static int prepare_stepping(heat_run *r, run_totals *totals)
{
    totals->first_step = r->start.step;
    report_output_plan(&r->config, totals->first_step, !r->start.continues, r->quiet);
    launcher_check_kill_delay((double)snapshot_bytes(r));
    HEAT_CALL(heat_domain_stats(&r->domain, r->solver, &totals->initial));
    HEAT_CALL(take_energy(r));
    totals->energy_initial = r->energy;
    ranks_check_binding();
    schedule_plan(&r->schedule, &r->config, runs_on_cpu(r), writes(r));
    if (writes(r)) HEAT_CALL(create_writer(r, &totals->initial));
    snapshots_attach_writer(r->snapshots, r->writer);
    open_history(r, &totals->initial);
    if (r->start.writes_initial) HEAT_CALL(write_output(r, 0, r->config.steps == 0));
    return HEAT_OK;
}

/* The summary's figures once the last write is done (collective: ranks_describe). */
static int collect_totals(heat_run *r, run_totals *totals, double loop_start)
{
    totals->wall_seconds = progress_now() - loop_start;
    totals->stepping_seconds = r->schedule.stepping_seconds;
    totals->snapshot_seconds = snapshots_seconds(r->snapshots);
    totals->clock_checkpoints = r->schedule.clock_checkpoints;
    if (r->history) totals->history_path = history_path(r->history), totals->history_rows = history_rows(r->history);
    HEAT_CALL(ranks_describe(&r->domain, r->solver, r->schedule.stepping_seconds, totals));
    totals->points = (double)heat_grid_points(&r->config.grid);
    return HEAT_OK;
}

/* 128 + the signal that stopped the run after its checkpoint (the root says how to go on); 0 otherwise. */
static int stop_status(const heat_run *r)
{
    int sig = r->schedule.stop_signal;
    if (sig && par_is_root()) {
        fprintf(stderr, "heatsolve: stopped by signal %d at step %ld after writing its checkpoint; continue with "
                        "--restart latest\n", sig, r->solver->step);
    }
    return sig ? 128 + sig : HEAT_OK;
}

/* After the last step: the GPU goes while the last writes finish; the
 * summary; the exit status says whether the final state is on disk. */
static int finish(heat_run *r, run_totals *totals, double loop_start)
{
    totals->energy_final = r->energy;
    totals->materials = heat_materials_active(r->solver->problem.materials);
    snapshots_release_solver_beside_writes(r->snapshots);
    int status = r->writer ? ckpt_writer_wait(r->writer) : HEAT_OK;
    if (r->config.output.on_write_error) status = HEAT_OK;
    HEAT_CALL(agree(r, status));
    HEAT_CALL(collect_totals(r, totals, loop_start));
    if (r->writer) {
        ckpt_writer_stats writes = ckpt_writer_get_stats(r->writer);
        if (!r->quiet) report_summary(r->solver, &writes, totals);
        status = check_final_state(r, &writes);
    }
    HEAT_CALL(agree(r, status));
    signals_final_state_written();
    return stop_status(r);
}

static int run(const heat_cli *cli, heat_run *r)
{
    double begun = progress_now();
    r->quiet = cli->quiet || !par_is_root();
    run_start_decide(cli, &r->start);
    HEAT_CALL(agree(r, load_configuration(cli, r)));
    gpu_runtime_start_beside(&r->gpu_start, par_size(), r->config.backend != BACKEND_CPU);
    int transport_first = transport_before_claim(r);
    if (!transport_first) HEAT_CALL(agree(r, par_is_root() ? claim_output(r) : HEAT_OK));
    threads_fit_ranks(par_node_size(), par_node_cores());
    HEAT_CALL(init_domain(r));
    if (transport_first) HEAT_CALL(agree(r, par_is_root() ? claim_output(r) : HEAT_OK));
    HEAT_CALL(create_solver(r, cli->verbose));
    gpu_runtime_started(&r->gpu_start);
    run_totals totals = {.backend_seconds = progress_now() - begun};
    int status = agree(r, load_field(r));
    totals.field_seconds = progress_now() - begun - totals.backend_seconds;
    HEAT_CALL(status);
    if (run_start_reached(&r->start, r->config.steps)) {
        if (!r->quiet) /* the root's line, once for the job; none with -q */
            printf("The run already reached step %ld (time.steps = %ld): nothing to do.\n", r->solver->step,
                   r->config.steps);
        return HEAT_OK;
    }
    HEAT_CALL(prepare_stepping(r, &totals));
    double loop_start = progress_now();
    totals.startup_seconds = loop_start - begun;
    totals.final = totals.initial;
    HEAT_CALL(time_loop(r, &totals.final));
    return finish(r, &totals, loop_start);
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
    signals_install_checkpoint_request(); /* before MPI_Init: see app/signals.h */
    launcher_check_start_delay();
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
