#pragma once
/*
 * Where a run begins, decided once from the command line. A fresh run
 * claims a folder of its own (or, with --overwrite, takes one over), starts
 * at step 0 from the initial condition, and its initial state opens the
 * series. A restart (--restart) continues its folder from a checkpoint's
 * step and time, with the series and the history of the checkpoints before.
 */
#include "app/cli.h"
#include "io/config.h"
#include "io/output_dir.h"
#include "io/series.h"
#include "parallel/domain.h"
#include "solver/solver.h"

typedef struct run_start {
    const char *checkpoint; /* --restart FILE|latest; NULL: from the initial condition */
    int allowed;            /* what the restart may change on purpose (RESTART_ALLOW_*) */
    output_dir_mode folder; /* how the run claims output.dir */
    int continues;          /* the series and the history go on from an earlier run's */
    int writes_initial;     /* the initial state is written first: it opens the series */
    long step;              /* the first step, once the field is loaded */
    double time;            /* its simulation time */
    heat_series series;     /* the checkpoints listed so far (the writer takes it over) */
} run_start;

void run_start_decide(const heat_cli *cli, run_start *start);

/* Fills whole (the whole field in the run's precision; the root's, NULL on
 * other ranks) from the initial condition or the checkpoint, hands every
 * rank its block and sets the solver's clock (collective). */
int run_start_load(run_start *start, const heat_config *config, heat_domain *domain, heat_solver *solver,
                   void *whole, int quiet);

/* A restart whose checkpoint is already at final_step (time.steps): nothing to step. */
int run_start_reached(const run_start *start, long final_step);

/* Frees the series unless the writer took it over; accepts a zeroed start. */
void run_start_destroy(run_start *start);
