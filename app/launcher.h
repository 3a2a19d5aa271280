#pragma once
/*
 * What the MPI launcher does to a run that is asked to stop. Open MPI's
 * mpirun (4.x, ORTE), given a SIGTERM or SIGINT (Ctrl-C), sends the ranks
 * SIGCONT, waits odls_base_sigkill_timeout seconds (1 s by default), sends
 * SIGTERM, waits as long again and sends SIGKILL, whether or not the ranks
 * have ended. A final checkpoint that takes longer than that delay dies
 * half-written (the atomic rename keeps the last complete one), silently,
 * and the work since the last checkpoint is lost. heatsolve cannot catch
 * SIGKILL, so it says so at start and how to give the ranks time (mpirun
 * then takes twice that delay to return).
 */

/* Warns (root) when the launcher's delay is shorter than a slow write of a
 * checkpoint of `checkpoint_bytes` (before compression) may take. */
void launcher_check_kill_delay(double checkpoint_bytes);
