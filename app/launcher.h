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

/* The number of ranks a launcher started this process among (Open MPI's
 * OMPI_COMM_WORLD_SIZE, MPICH's and Slurm's PMI_SIZE), 1 when none says. */
int launcher_job_size(void);

/* HEAT_OK, or (exit 2) when a launcher started several copies of a process
 * that is alone in its MPI world (a build without MPI under mpirun): each
 * copy would run the whole problem and race the others for the same files. */
int launcher_check_ranks_joined(int world_size);

/* Warns (the first copy) when mpirun, its parent, took slow_launch_seconds or
 * more to start it and the user left hwloc's discovery as it is (launcher.c
 * says why); call before MPI starts, which may set hwloc's variables itself. */
void launcher_check_start_delay(void);
