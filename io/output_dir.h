#pragma once
/*
 * Ownership of an output folder by one run. A run names its files
 * "<dir>/<name>_<step>.hdf" (+ .png) and "<dir>/<name>.hdf.series"; these
 * functions keep two runs from ever mixing such files:
 *
 * - A live run holds an flock on "<dir>/.<name>.lock". The kernel drops it
 *   when the process dies (kill -9 included), so a dead run never blocks the
 *   next one; a second live run (or a --restart into the folder) is refused
 *   naming the holder (pid, host, start time, written into the lock file).
 *   On file systems without flock (some NFS set-ups) the run warns that a
 *   concurrent run would go unnoticed and continues.
 * - A fresh run refuses a folder that already holds files of its name unless
 *   asked to overwrite them (then only those files are removed first).
 * - Temporary files ".<name>_*.tmp-PID" left by a run that died while
 *   writing are removed, with one line saying so.
 */
typedef enum {
    OUTPUT_FRESH,     /* a new run: the folder must hold no files of this name */
    OUTPUT_OVERWRITE, /* a new run that removes the earlier run's files first (--overwrite) */
    OUTPUT_CONTINUE,  /* a restart: the files continue */
} output_dir_mode;

typedef struct output_dir output_dir;

/*
 * Creates dir if needed, takes the lock and applies mode. Returns
 * HEAT_ERR_CONFIG (exit 2) with a message saying how to proceed when dir is
 * a file, another run holds it, or a fresh run would mix with earlier files.
 * Nothing in the folder is changed when it fails.
 */
int output_dir_claim(const char *dir, const char *name, output_dir_mode mode, int quiet, output_dir **claim);

/* Drops the lock (removing the lock file) and, when the claim created the
 * folder and nothing was written into it, the folder. Accepts NULL. */
void output_dir_release(output_dir **claim);
