#pragma once
/*
 * What the run tells its user before the first step (the output it will
 * write, and whether the folder has room) and after the last (the summary).
 */
#include "io/ckpt_writer.h"
#include "io/config.h"
#include "solver/materials.h"
#include "solver/solver.h"

/* "output: N checkpoints into DIR, at most X MB each before compression";
 * warns when the folder's free space is short of what they may need. */
void report_output_plan(const heat_config *config, long first_step, int fresh, int quiet);

typedef struct run_totals {
    long first_step;            /* where this run segment started (0, or the restart's step) */
    double wall_seconds;        /* time loop, the last writes included */
    double stepping_seconds;    /* of it, in the batches' steps (a GPU's first batch tunes without a cached choice) */
    double startup_seconds;     /* from reading the configuration to the first step */
    double backend_seconds;     /* of which: the configuration and the backend's start (a GPU's context) */
    double field_seconds;       /* and the initial field (or the restart's) filled and handed to the solver */
    heat_field_stats initial;   /* at first_step */
    heat_field_stats final;
    double snapshot_seconds;
    long clock_checkpoints;     /* of the checkpoints, those taken by output.every_seconds */
    const char *history_path;   /* the history file (io/history.h); NULL: none */
    long history_rows;          /* rows this run wrote there */
    double points;              /* of the whole grid */
    int ranks;                  /* MPI ranks; 1 without */
    int dims[3];
    double halo_fraction;       /* of the stepping time in host halo exchanges; < 0: not measured */
    double imbalance;           /* slowest rank's computing over the mean */
    int halo_beside_update;     /* z slabs: the exchange runs beside the interior update (GPU with NCCL, CPU) */
    int materials;              /* a materials run: the energy balance below */
    heat_energy energy_initial; /* at first_step */
    heat_energy energy_final;
} run_totals;

void report_summary(const heat_solver *solver, const ckpt_writer_stats *writes, const run_totals *totals);
