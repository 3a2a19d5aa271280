#pragma once
/*
 * The run's history: "<output.dir>/<name>.history.csv", one row each time the
 * run takes the field's statistics (its first step, about every second of
 * stepping, before each checkpoint and frame, and the final step), so the
 * physics can be plotted or `tail -f`ed without opening a checkpoint:
 *
 *   step,time,min,max,mean,heat
 *   0,0,0,100,4.9,1.21e+02
 *
 * heat is the integral of the temperature over the box (the sum of the
 * points times the cell volume): conserved where every wall is insulated.
 * A materials run (solver/materials.h) has the energy balance's columns:
 *
 *   step,time,min,max,mean,heat,power_sources,power_dirichlet,power_convective,power_flux,energy_in
 *
 * where heat is sum(rho c T V), the powers (power per time: W in SI units)
 * those the next step takes in through the sources and each kind of
 * boundary face, and energy_in what came in since t = 0 through all of
 * them: the change of heat equals it (to rounding for explicit Euler, to
 * the scheme's accuracy for the implicit ones).
 * Numbers are printed to 17 significant digits, so they read back as the
 * same doubles, and a restarted run, or one on another number of ranks,
 * writes the same rows as one that never stopped (the sum's order is fixed
 * by reduction bricks: solver/backend.h).
 *
 * Crash safety. Each row goes out in one write() to a file opened with
 * O_APPEND, so a killed run leaves whole rows (a power cut may still tear
 * the last one). A restart from step S first rewrites the file atomically
 * (temporary file, fsync, rename) with the rows of the steps before S that
 * read back whole, dropping what an abandoned continuation wrote after S.
 * The history is a convenience beside the checkpoints: a row that cannot be
 * written is a warning, after which the run goes on without its history.
 */
#include "solver/backend.h"
#include "solver/materials.h"

typedef struct heat_history heat_history;

/* Opens dir/name.history.csv for a run segment starting at first_step: a
 * fresh run (restarting = 0) starts a new file; a restart keeps the rows
 * before first_step. *history is NULL where the file cannot be written (a
 * warning said why). */
void history_open(const char *dir, const char *name, long first_step, int restarting, int energy,
                  heat_history **history);

/* One row; cell_volume turns the sum of the points into the heat. energy:
 * the balance's columns where the file has them (history_open's energy). */
void history_record(heat_history *history, long step, double time, const heat_field_stats *stats,
                    double points, double cell_volume, const heat_energy *energy);

/* Where the rows go, and how many this segment wrote (for the run's summary). */
const char *history_path(const heat_history *history);
long history_rows(const heat_history *history);

void history_close(heat_history **history);
