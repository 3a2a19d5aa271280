#include "report.h"

#include <math.h>
#include <stdio.h>

#include "io/fsutil.h"
#include "solver/error.h"

/* Multiples of every in (first, last). */
static long multiples_between(long every, long first, long last)
{
    return every > 0 && last > first ? (last - 1) / every - first / every : 0;
}

static long gcd(long a, long b) { return b ? gcd(b, a % b) : a; }

/* Checkpoints a run from first to c->steps writes (the initial one included
 * for a fresh run). */
static long report_checkpoint_count(const heat_config *c, long first, int fresh)
{
    return (fresh ? 1 : 0) + (c->steps > first) + multiples_between(c->output.every, first, c->steps);
}

/* Frames fall where no checkpoint does (a checkpoint serves as that frame). */
static long frame_count(const heat_config *c, long first)
{
    long fe = c->output.frame_every, every = c->output.every;
    if (fe <= 0) return 0;
    long both = every > 0 ? multiples_between(fe / gcd(fe, every) * every, first, c->steps) : 0;
    return multiples_between(fe, first, c->steps) - both;
}

/* "335 MB", "83.9 GB": three digits in the unit that suits. */
static void format_size(double bytes, char *buf, size_t len)
{
    if (bytes >= 1e12) snprintf(buf, len, "%.3g TB", bytes / 1e12);
    else if (bytes >= 1e9) snprintf(buf, len, "%.3g GB", bytes / 1e9);
    else snprintf(buf, len, "%.3g MB", bytes / 1e6);
}

void report_output_plan(const heat_config *c, long first, int fresh, int quiet)
{
    long count = report_checkpoint_count(c, first, fresh);
    /* With output.keep, older files go as new ones come: at most keep + 1 at a time. */
    long on_disk = c->output.keep > 0 && count > c->output.keep + 1 ? c->output.keep + 1 : count;
    double each = (double)heat_grid_points(&c->grid) * heat_precision_size((heat_precision)c->precision);
    long frames = frame_count(c, first);
    double frame_each = c->output.frame_full ? each : (double)heat_grid_points(&c->grid) * sizeof(float);
    double total = (double)on_disk * each + (double)frames * frame_each;
    double free_bytes = fs_free_bytes(c->output.dir);
    if (!quiet) {
        printf("output: %ld checkpoint%s into %s, at most %.3g MB each before compression", count,
               count == 1 ? "" : "s", c->output.dir, each / 1e6);
        if (frames) printf(", and %ld frames of at most %.3g MB", frames, frame_each / 1e6);
        char all[32], have[32];
        format_size(total, all, sizeof all), format_size(free_bytes, have, sizeof have);
        printf(" (%s in all%s)", all, on_disk < count ? ", output.keep counted" : "");
        if (c->output.every_seconds > 0) printf(", and one every %g s of wall time", c->output.every_seconds);
        printf("; %s free there\n", have);
    }
    if (free_bytes >= 0 && free_bytes < total) {
        char have[32], need[32];
        format_size(free_bytes, have, sizeof have), format_size(total, need, sizeof need);
        heat_warn("%s has %s free, but the run's output may need up to %s (before compression); make room, "
                  "raise output.every or output.frame_every, or set output.keep", c->output.dir, have, need);
    }
}

/* The heat is the sum of the points' temperatures with constant coefficients (rho c = 1), and sum(rho c T V)
 * with materials: the sum of the temperatures there weighs a cell of air like one of copper. */
static void print_heat_change(const run_totals *t)
{
    char since[64] = "";
    if (t->first_step > 0) snprintf(since, sizeof since, " since step %ld (the restart)", t->first_step);
    double initial = t->materials ? t->energy_initial.heat : t->initial.sum;
    double final = t->materials ? t->energy_final.heat : t->final.sum;
    if (initial != 0.0)
        printf("total heat changed by %.3e (relative)%s\n", (final - initial) / fabs(initial), since);
    else
        printf("total heat changed by %.6g (absolute: the total was 0)%s\n", final - initial, since);
}

/* Materials runs: the change of sum(rho c T V) against the energy that came in over the same steps. The
 * mismatch is relative to the energy that moved (each kind's in or out, or the change): near a steady state
 * the net in and the change are both near 0 while the faces carry a large flow, whose rounding is the
 * mismatch's scale. */
static void print_energy_balance(const run_totals *t)
{
    const heat_energy *a = &t->energy_initial, *b = &t->energy_final;
    double in = 0.0, moved = 0.0, change = b->heat - a->heat;
    printf("energy balance: heat %.9g -> %.9g (change %+.9g); in through", a->heat, b->heat, change);
    for (int kind = 0; kind < HEAT_ENERGY_KINDS; ++kind) {
        double part = b->energy[kind] - a->energy[kind];
        in += part, moved += fabs(part);
        printf("%s %s %+.6g", kind ? "," : "", heat_energy_kind_name(kind), part);
    }
    double scale = fmax(fabs(change), moved);
    printf(": %+.9g; mismatch %.3g", in, fabs(change - in));
    if (scale > 0.0) printf(" (%.2e of the energy moved)", fabs(change - in) / scale);
    printf("\n");
}

static void print_checkpoints(const ckpt_writer_stats *w, const run_totals *t)
{
    long restarts = w->writes - w->frames;
    if (w->writes == 0) return;
    printf("checkpoints: %ld written", restarts - w->failed);
    if (t->clock_checkpoints) printf(" (%ld by the wall clock)", t->clock_checkpoints);
    if (w->failed) printf(", %ld failed (the first at step %ld)", w->failed, w->first_failed_step);
    if (restarts > 0) printf(", %.3f s each", (w->write_seconds - w->frame_seconds) / (double)restarts);
    if (w->frames > 0)
        printf("; frames: %ld written%s, %.3f s each", w->frames - w->frames_failed, w->frames_failed ? " (some failed)" : "",
               w->frame_seconds / (double)w->frames);
    printf(" (%.3f s of it listing each: series, PNG, folder fsync)", w->publish_seconds / (double)w->writes);
    double cores = w->thread_sum / (double)w->writes;
    printf("; on %.3g core%s (mean)", cores, cores == 1.0 ? "" : "s");
    if (w->jobs > 1) printf(", up to %d writes at once", w->jobs);
    printf("; the run spent %.3f s on snapshots and %.3f s waiting for writes\n", t->snapshot_seconds,
           w->wait_seconds);
}

static void print_ranks(const run_totals *t)
{
    printf("ranks: %d (%d x %d x %d); ", t->ranks, t->dims[0], t->dims[1], t->dims[2]);
    if (t->halo_fraction >= 0)
        printf("halo exchange %.1f%% of the stepping time (mean over ranks; %s)", 100.0 * t->halo_fraction,
               t->halo_beside_update ? "what the interior update did not hide" : "not overlapped with the update");
    else if (t->halo_beside_update)
        printf("halo exchange GPU to GPU beside the interior update (its cost and the part hidden: mpirun ... heatsolve "
               "bench)");
    else printf("halo exchange GPU to GPU before each update (its cost: mpirun ... heatsolve bench)");
    printf("; load imbalance %.2f (the slowest rank's computing over the mean)\n", t->imbalance);
}

void report_summary(const heat_solver *s, const ckpt_writer_stats *w, const run_totals *t)
{
    double points = t->points;
    long steps = s->step - t->first_step;
    printf("summary: %ld steps (to step %ld, t = %.6g) in %.3f s, %.3f GLUP/s (stepping %.3f s; the rest field "
           "checks, snapshots and waiting for writes)\n", steps, s->step, s->time, t->wall_seconds,
           t->wall_seconds > 0 ? points * (double)steps / t->wall_seconds / 1e9 : 0.0, t->stepping_seconds);
    double rest = t->startup_seconds - t->backend_seconds - t->field_seconds;
    printf("start-up: %.3f s before the first step (configuration and backend %.3f s, %s field %.3f s, statistics, "
           "writer and history %.3f s)\n", t->startup_seconds, t->backend_seconds,
           t->first_step > 0 ? "restart" : "initial", t->field_seconds, rest);
    printf("temperature: min %.6g  max %.6g  mean %.6g; ", t->final.min, t->final.max, t->final.sum / points);
    print_heat_change(t);
    if (t->materials) print_energy_balance(t);
    print_checkpoints(w, t);
    if (t->history_path) printf("history: %ld rows in %s\n", t->history_rows, t->history_path);
    if (t->ranks > 1) print_ranks(t);
    const heat_cg_stats *cg = &s->cg;
    if (cg->steps > 0)
        printf("CG: %ld iterations in %ld implicit steps (mean %.1f, most %d); largest final relative residual %.2e\n",
               cg->iterations, cg->steps, (double)cg->iterations / (double)cg->steps, cg->most_iterations,
               cg->worst_residual);
}
