#pragma once
/*
 * A restart from step S continues the run from there: the files of steps
 * after S in output.dir (checkpoints, frames, quick-look PNGs of a run that
 * went further, or damaged files that --restart latest passed over) no longer
 * belong to it. Left in place they would sit outside the series and
 * output.keep's count, and --restart latest would pick them up later. So,
 * before the restarted run writes anything, they move into the folder
 * <output.dir>/<name>.after_step_<S> (a new one each time), named in one line:
 * nothing is deleted.
 */

/* Moves dir's <name>_<N>.hdf and .png files with N > step aside; HEAT_OK also
 * where there is none; *files_moved: how many went. A failed move is a
 * runtime error naming the file (the files already moved stay in the aside
 * folder, whole). */
int restart_set_aside_later(const char *dir, const char *name, long step, int quiet, int *files_moved);
