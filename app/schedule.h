#pragma once
/*
 * The run's scheduling policy: how a rank's cores are shared between the
 * stencil and the checkpoint writer, how many writes may be in flight, how
 * many steps the next batch takes, and what falls due after it (a field
 * check, a restart checkpoint by step, signal or wall clock, a frame, the
 * stop). The time loop asks schedule_next_batch, advances, and does what
 * schedule_after_batch says is due; every rank gets the same answers.
 */
#include <stddef.h>

#include "app/output_clock.h"
#include "io/ckpt_writer.h"
#include "io/config.h"

typedef struct run_schedule {
    long final_step;      /* time.steps */
    long every, frame_every; /* output.every, output.frame_every (steps; 0: none) */
    double every_seconds; /* output.every_seconds (0: none) */
    int cpu;              /* the CPU backend: the stencil and the writer share the cores */
    int cores;            /* OpenMP threads available to the run (writing ranks) */
    int writer_cores;     /* of those, the ones that compress a checkpoint */
    ckpt_writer *writer;  /* this rank's, or NULL */
    double steps_per_second; /* the slowest rank's pace in the last batch */
    double last_check;    /* when the field was last checked (seconds, progress_now) */
    output_clock clock;   /* output.every_seconds */
    long next_checkpoint, next_frame; /* the batch in flight ends at or before both */
    int stencil_shares;   /* this rank's stencil left cores to a write in the last batch */
    double stepping_seconds; /* in the batches' steps (halo exchanges included) */
    long clock_checkpoints;  /* taken by output.every_seconds */
    int stop_signal;      /* the stop signal the ranks agreed on, 0: none */
} run_schedule;

/* What the batch that just ended calls for, the same on every rank. */
typedef struct due_events {
    int check;      /* check the field for NaN or Inf (and record its statistics) */
    int checkpoint; /* write a restart checkpoint: on schedule, asked by a signal, or by the wall clock */
    int frame;      /* write a frame (output.frame_every) */
    int asked;      /* the checkpoint was asked for by SIGUSR1 */
    int last;       /* the run steps no more after this output: it may take every core */
    int stop_signal; /* stop after this output (the signal), 0: go on */
} due_events;

/* Before the writer starts: the run's output steps, this rank's cores and
 * the writer's share of them (cpu: the CPU backend; writes: the rank writes
 * checkpoints or its part of them). */
void schedule_plan(run_schedule *s, const heat_config *c, int cpu, int writes);

/* Writes in flight for the writer (output.writes_in_flight; 0: automatic);
 * snapshot_bytes: the whole field. */
int schedule_writes_in_flight(const run_schedule *s, const heat_config *c, size_t snapshot_bytes);

/* The time loop begins at now (progress_now) with this rank's writer (NULL: none). */
void schedule_start(run_schedule *s, ckpt_writer *writer, double now);

/* Steps for the next batch from step: about 0.1 s of stepping, ending at the
 * next output step at the latest. Shares this rank's cores with a write in
 * flight first (collective: the ranks agree on the batch's length). */
int schedule_next_batch(run_schedule *s, long step, long *batch);

/* The batch of batch steps ran from t0 to t1 and reached step: the ranks
 * agree on signals, the checkpoint asked for and the pace (collective), and
 * *due says what falls due now. */
int schedule_after_batch(run_schedule *s, long step, long batch, double t0, double t1, due_events *due);
