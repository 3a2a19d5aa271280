#pragma once
/*
 * The run's dealings with its ranks that the time loop needs: the layout
 * line, the agreement after each batch, and the summary's line on the ranks.
 * With one process each is trivial (parallel.h's one-process build).
 */
#include "app/report.h"
#include "io/ckpt_parts.h"
#include "parallel/domain.h"

/* After each batch the ranks agree on what happens next: stop (a signal
 * reached any of them: mpirun and Slurm may deliver it to some ranks first),
 * a SIGUSR1 checkpoint, a field check, and the slowest rank's pace for the
 * next batch, so that every rank takes the same steps. */
typedef struct batch_decision {
    long stop_signal, checkpoint_asked, check_due, clock_due; /* clock_due: app/output_clock.h */
    double steps_per_second;
} batch_decision;

int ranks_agree_on_batch(batch_decision *d);

/* "MPI (...), 4 ranks: 1 x 2 x 2 blocks, about ...; halos: ...; checkpoints: ..." */
void ranks_print_layout(const heat_decomp *d, int gpu, const ckpt_parts *parts);

/* How checkpoints leave the ranks: in parts (every rank compresses its own
 * z slab, io/ckpt_parts.h) where the layout is z slabs whose edges fall on
 * chunk edges and MPI lets the writers' threads talk; *parts NULL otherwise
 * (the root gathers the field). The same answer on every rank. */
/* Warns when this process has more OpenMP threads than cores it may run on
 * (collective; one warning per job). */
void ranks_check_binding(void);

int ranks_checkpoint_parts(const heat_decomp *d, heat_precision precision, ckpt_parts **parts);

/* Fills the ranks, layout, halo share and imbalance of the summary (collective). */
int ranks_describe(heat_domain *domain, const heat_solver *solver, double stepping_seconds, run_totals *t);
