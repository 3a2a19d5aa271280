/*
 * The run's scheduling policy (app/schedule.h): cores, writes in flight,
 * batches of steps and the events that fall due between them.
 */
#include "app/schedule.h"

#include <math.h>
#include <omp.h>
#include <unistd.h>

#include "app/ranks.h"
#include "app/signals.h"
#include "app/threads.h"
#include "parallel/parallel.h"
#include "solver/error.h"

/* On the GPU backend the host has nothing else to do but launch kernels:
 * all cores but the launching thread's compress (with that one too, the
 * launcher can be descheduled for a time slice and the GPU idles).
 * On the CPU backend the stencil and the compression share the cores while a
 * write is in flight: running both on all of them oversubscribes the cores,
 * and every OpenMP barrier of the stencil then waits for a descheduled
 * thread (a write overlapped that way costs more wall time than the same
 * write done serially). */
void schedule_plan(run_schedule *s, const heat_config *c, int cpu, int writes)
{
    s->final_step = c->steps;
    s->every = c->output.every;
    s->frame_every = c->output.frame_every;
    s->every_seconds = c->output.every_seconds;
    s->cpu = cpu;
    if (!writes) return;
    s->cores = omp_get_max_threads();
    s->writer_cores = cpu ? (s->cores + 1) / 2 : s->cores - 1;
    if (s->writer_cores < 1) s->writer_cores = 1;
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

int schedule_writes_in_flight(const run_schedule *s, const heat_config *c, size_t snapshot_bytes)
{
    if (par_size() > 1) {
        if (c->output.writes_in_flight > 1 && par_is_root())
            heat_warn("output.writes_in_flight = %d: with several ranks checkpoints are written one at a time",
                      c->output.writes_in_flight);
        return 1;
    }
    if (c->output.writes_in_flight > 0) return c->output.writes_in_flight;
    if (s->cpu) return 1;
    double memory = (double)sysconf(_SC_PHYS_PAGES) * (double)sysconf(_SC_PAGESIZE);
    double budget = fmin(memory > 0 ? memory / 8 : 0, WRITER_BUFFERS_BYTES);
    double fit = floor(budget / (double)snapshot_bytes);
    return fit < 1 ? 1 : fit > CKPT_WRITER_MAX_JOBS ? CKPT_WRITER_MAX_JOBS : (int)fit;
}

void schedule_start(run_schedule *s, ckpt_writer *writer, double now)
{
    s->writer = writer;
    s->steps_per_second = 10.0;
    s->last_check = now;
    s->clock = output_clock_start(s->every_seconds, now);
}

/* Before each batch: the stencil's share of this rank's cores. *sharing:
 * 1 when the stencil of some rank leaves some of them to a write in flight.
 * That decides the batch's length, which every rank must agree on: each
 * rank's writer finishes in its own time, and ranks whose batches differed
 * in length would wait for each other's halos and hang. */
static int share_cores(run_schedule *s, int *sharing)
{
    *sharing = 0;
    if (!s->cpu) return HEAT_OK;
    /* A rank of one thread whose node's cores are all taken by the ranks has no core to lend a write:
     * stepping beside its compression puts two threads on one core, and the halo exchanges then wait
     * for whichever rank is descheduled. It lets the compression finish first (the ranks' writers
     * compress side by side, a core each), then steps beside the rest of the write, which waits for
     * the other ranks and the disk without holding the core (parallel.h). */
    if (s->writer && s->cores == 1 && par_size() > 1 && par_node_size() >= par_node_cores())
        ckpt_writer_wait_compressed(s->writer);
    int here = s->writer && ckpt_writer_busy(s->writer) && s->cores > 1; /* ranks without a writer: 0 */
    if (s->writer) omp_set_num_threads(here ? s->cores - s->writer_cores : s->cores);
    if (here && !s->stencil_shares) threads_release_idle();
    s->stencil_shares = here;
    long anywhere = here;
    if (par_size() > 1) HEAT_CALL(par_max_longs(&anywhere, 1)); /* every rank, writer or not */
    *sharing = anywhere != 0;
    return HEAT_OK;
}

/* Steps per batch so that a batch takes about 0.1 s (progress, signals).
 * While a write holds some of the CPU backend's cores, batches last 0.01 s
 * instead, so the stencil takes them back soon after the write ends rather
 * than leaving them idle for the rest of a long batch (on average half a
 * batch a checkpoint). */
enum { BATCH_MS = 100, SHARING_BATCH_MS = 10 };

/* The next multiple of every after step, or the final step. */
static long next_multiple(long every, long step, long final)
{
    if (every <= 0) return final;
    long next = (step / every + 1) * every;
    return next < final ? next : final;
}

int schedule_next_batch(run_schedule *s, long step, long *batch)
{
    s->next_checkpoint = next_multiple(s->every, step, s->final_step);
    s->next_frame = next_multiple(s->frame_every, step, s->final_step);
    long next_output = s->next_frame < s->next_checkpoint ? s->next_frame : s->next_checkpoint;
    int sharing;
    HEAT_CALL(share_cores(s, &sharing));
    long steps = (long)(s->steps_per_second * (sharing ? SHARING_BATCH_MS : BATCH_MS) * 1e-3);
    if (steps > 1) steps &= ~1L; /* the CPU backend steps in pairs: an odd batch would end in a single sweep */
    if (steps < 1) steps = 1;
    long until = next_output - step;
    *batch = steps < until ? steps : until;
    return HEAT_OK;
}

/* The NaN/Inf check reads the whole field, so it runs about every second of
 * stepping, before each checkpoint and at the end, not after every batch: in
 * the short batches of a shared CPU it would take a large share of the
 * stencil's time, and a checkpoint is checked anyway. */
enum { CHECK_INTERVAL_MS = 1000 };

int schedule_after_batch(run_schedule *s, long step, long batch, double t0, double t1, due_events *due)
{
    s->stepping_seconds += t1 - t0;
    int clock_due = par_is_root() && output_clock_due(&s->clock, t1, s->writer && ckpt_writer_busy(s->writer));
    batch_decision d = {signals_stop_requested(), signals_take_checkpoint_request(),
                        t1 - s->last_check >= CHECK_INTERVAL_MS * 1e-3, clock_due,
                        (double)batch / fmax(t1 - t0, 1e-6)};
    HEAT_CALL(ranks_agree_on_batch(&d));
    s->steps_per_second = d.steps_per_second;
    s->stop_signal = (int)d.stop_signal;
    int stopping = d.stop_signal != 0, asked = d.checkpoint_asked != 0;
    int on_schedule = step == s->next_checkpoint || stopping || asked;
    due->checkpoint = on_schedule || d.clock_due;
    s->clock_checkpoints += !on_schedule && d.clock_due;
    if (due->checkpoint) output_clock_reset(&s->clock, t1);
    due->frame = !due->checkpoint && step == s->next_frame;
    due->check = due->checkpoint || due->frame || step == s->final_step || d.check_due;
    if (due->check) s->last_check = t1;
    due->asked = asked;
    due->last = stopping || step == s->final_step;
    due->stop_signal = s->stop_signal;
    return HEAT_OK;
}
