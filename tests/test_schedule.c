/*
 * The time loop's schedule (app/schedule.h) against its contract, one
 * process: batches never step past an output step and every output step is
 * met exactly once; a restart checkpoint falls on every multiple of
 * output.every and on the final step, a frame on the other multiples of
 * output.frame_every; the field is checked before every output, at the end
 * and after a second of stepping; batches are even (the CPU backend's pairs);
 * SIGUSR1, a stop signal and the wall clock each ask for a checkpoint.
 */
#include <signal.h>

#include "app/schedule.h"
#include "app/signals.h"
#include "test_util.h"

enum { FINAL = 200, EVERY = 50, FRAME_EVERY = 30 };

static void plan(run_schedule *s, heat_config *c, double every_seconds)
{
    memset(c, 0, sizeof *c);
    c->steps = FINAL;
    c->output.every = EVERY;
    c->output.frame_every = FRAME_EVERY;
    c->output.every_seconds = every_seconds;
    memset(s, 0, sizeof *s);
    schedule_plan(s, c, 1, 0); /* a rank without a writer: the schedule leaves the OpenMP threads alone */
    schedule_start(s, NULL, 0.0);
}

/* The smallest output step after step: a multiple of either interval, or the final step. */
static long expected_next_output(long step)
{
    for (long n = step + 1; n < FINAL; ++n)
        if (n % EVERY == 0 || n % FRAME_EVERY == 0) return n;
    return FINAL;
}

/* Batches of 0.01 s at 2000 steps/s (longer than any gap between outputs): every output step is met. */
static int outputs_fall_on_their_steps(void)
{
    run_schedule s;
    heat_config c;
    plan(&s, &c, 0);
    long step = 0, outputs = 0;
    double now = 0;
    due_events due = {0};
    while (step < FINAL) {
        long batch;
        EXPECT_OK(schedule_next_batch(&s, step, &batch));
        long target = expected_next_output(step);
        EXPECT(batch >= 1 && step + batch <= target, "batch of %ld from step %ld passes output step %ld", batch,
               step, target);
        step += batch;
        EXPECT_OK(schedule_after_batch(&s, step, batch, now, now + batch / 2000.0, &due));
        now += batch / 2000.0;
        int checkpoint = step % EVERY == 0 || step == FINAL, frame = !checkpoint && step % FRAME_EVERY == 0;
        EXPECT(due.checkpoint == checkpoint, "step %ld: checkpoint due %d, expected %d", step, due.checkpoint,
               checkpoint);
        EXPECT(due.frame == frame, "step %ld: frame due %d, expected %d", step, due.frame, frame);
        EXPECT(!due.check == !(checkpoint || frame), "step %ld: check due %d (0.1 s of stepping)", step, due.check);
        EXPECT(due.last == (step == FINAL), "step %ld: last %d", step, due.last);
        EXPECT(!due.asked && !due.stop_signal, "step %ld: no signal was sent", step);
        outputs += checkpoint || frame;
    }
    /* 30 50 60 90 100 120 150 180 200 */
    EXPECT(outputs == 9, "%ld outputs, expected 9", outputs);
    EXPECT(s.clock_checkpoints == 0, "no clock checkpoint without output.every_seconds");
    return 0;
}

/* The pace sets the next batch: about 0.1 s of steps, even, at least one. */
static int batches_follow_the_pace(void)
{
    run_schedule s;
    heat_config c;
    plan(&s, &c, 0);
    long batch;
    EXPECT_OK(schedule_next_batch(&s, 0, &batch));
    EXPECT(batch == 1, "the first batch at the assumed 10 steps/s: %ld steps, expected 1", batch);
    due_events due;
    EXPECT_OK(schedule_after_batch(&s, 1, 1, 0.0, 1.0 / 250.0, &due)); /* 250 steps/s: 25 steps a batch */
    EXPECT_OK(schedule_next_batch(&s, 1, &batch));
    EXPECT(batch == 24, "at 250 steps/s: %ld steps, expected 24 (even)", batch);
    EXPECT_OK(schedule_after_batch(&s, 25, 24, 0.0, 24.0, &due)); /* 1 step/s */
    EXPECT_OK(schedule_next_batch(&s, 25, &batch));
    EXPECT(batch == 1, "at 1 step/s: %ld steps, expected 1", batch);
    EXPECT(due.check, "a batch that ends a second after the last check checks the field");
    EXPECT(!due.checkpoint && !due.frame, "step 25 is no output step");
    return 0;
}

/* Advances one batch from *step over [t0, t1] and says what falls due. */
static int batch(run_schedule *s, long *step, double t0, double t1, due_events *due)
{
    long steps;
    HEAT_CALL(schedule_next_batch(s, *step, &steps));
    *step += steps;
    return schedule_after_batch(s, *step, steps, t0, t1, due);
}

/* output.every_seconds: a checkpoint once the interval has passed since the last restart checkpoint. */
static int the_clock_asks_for_checkpoints(void)
{
    run_schedule s;
    heat_config c;
    plan(&s, &c, 5.0);
    due_events due;
    long step = 0;
    EXPECT_OK(batch(&s, &step, 0.0, 4.0, &due));
    EXPECT(step == 1 && !due.checkpoint, "4 s into a 5 s interval, step %ld: no checkpoint", step);
    EXPECT_OK(batch(&s, &step, 4.0, 6.0, &due));
    EXPECT(step == 2 && due.checkpoint && !due.frame && due.check, "6 s into a 5 s interval: a checked checkpoint");
    EXPECT(s.clock_checkpoints == 1, "%ld clock checkpoints, expected 1", s.clock_checkpoints);
    EXPECT_OK(batch(&s, &step, 6.0, 10.0, &due));
    EXPECT(step == 3 && !due.checkpoint, "4 s after the clock's checkpoint: none");
    return 0;
}

/* SIGUSR1 asks for a checkpoint off schedule; a stop signal for the last one. */
static int signals_ask_for_checkpoints(void)
{
    run_schedule s;
    heat_config c;
    plan(&s, &c, 0);
    signals_install();
    due_events due;
    long step = 0;
    raise(SIGUSR1);
    EXPECT_OK(batch(&s, &step, 0.0, 0.01, &due));
    EXPECT(step == 1 && due.asked && due.checkpoint && !due.last, "SIGUSR1 at step 1: a checkpoint, not the last");
    EXPECT_OK(batch(&s, &step, 0.01, 0.02, &due));
    EXPECT(step < FRAME_EVERY && !due.asked && !due.checkpoint, "one SIGUSR1, one checkpoint (step %ld)", step);
    raise(SIGTERM);
    EXPECT_OK(batch(&s, &step, 0.02, 0.03, &due));
    EXPECT(due.stop_signal == SIGTERM && s.stop_signal == SIGTERM, "SIGTERM: stop (%d)", due.stop_signal);
    EXPECT(due.checkpoint && !due.frame && due.last && due.check, "SIGTERM at step %ld: the last checkpoint, checked",
           step);
    return 0;
}

/* output.writes_in_flight as asked; automatic: one on the CPU backend and for a field over the buffers' budget. */
static int writes_in_flight(void)
{
    run_schedule s;
    heat_config c;
    plan(&s, &c, 0);
    c.output.writes_in_flight = 3;
    EXPECT(schedule_writes_in_flight(&s, &c, 1 << 20) == 3, "output.writes_in_flight = 3");
    c.output.writes_in_flight = 0;
    EXPECT(schedule_writes_in_flight(&s, &c, 1 << 20) == 1, "automatic on the CPU backend: 1");
    s.cpu = 0;
    EXPECT(schedule_writes_in_flight(&s, &c, (size_t)1 << 30) == 1, "automatic, a 1 GiB field on a GPU: 1");
    int small = schedule_writes_in_flight(&s, &c, 1 << 20);
    EXPECT(small >= 1 && small <= CKPT_WRITER_MAX_JOBS, "automatic, a 1 MiB field on a GPU: %d", small);
    return 0;
}

int main(void)
{
    int failed = outputs_fall_on_their_steps() | batches_follow_the_pace() | the_clock_asks_for_checkpoints() |
                 writes_in_flight() | signals_ask_for_checkpoints();
    if (!failed) printf("schedule: outputs, batches, clock, signals and writes in flight as specified\n");
    return failed;
}
