#pragma once
/*
 * Restart checkpoints by the wall clock (output.every_seconds). Step
 * intervals bound the work a crash loses only as well as the user guessed
 * the run's speed; a power cut, a node failure, an out-of-memory kill or a
 * kill -9 sends no signal to write a final checkpoint. This clock bounds
 * the loss in the unit users think in: at most about every_seconds of
 * computing (plus the time a checkpoint takes to write).
 *
 * The interval runs from the last restart checkpoint of any kind (step
 * interval, signal, clock). A clock checkpoint waits while an earlier write
 * is still in flight, so on a slow disk they never queue up behind each
 * other and never hold the stencil up for more than one write. Under MPI
 * the root's clock decides, and the ranks agree on the step with the rest
 * of the batch's decisions (app/ranks.h).
 */

typedef struct output_clock {
    double every; /* seconds; 0: off */
    double last;  /* when the last restart checkpoint was handed to the writer */
} output_clock;

output_clock output_clock_start(double every_seconds, double now);

/* 1 when a clock checkpoint is due at `now`: the interval has passed and no write is in flight. */
int output_clock_due(const output_clock *c, double now, int write_in_flight);

/* A restart checkpoint (of any kind) was taken at `now`. */
void output_clock_reset(output_clock *c, double now);
