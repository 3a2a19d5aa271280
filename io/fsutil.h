#pragma once
/*
 * File-system helpers for crash-safe output: temporary names, fsync + rename
 * commits, directory creation, free space and checkpoint discovery.
 */
#include <stddef.h>

/* "<dir>/.<base>.tmp-<pid>": hidden, in the same folder so rename is atomic. */
void fs_temp_name(char *buf, size_t len, const char *path);

/* A new file at the temporary name tmp, open for writing: its descriptor, or
 * -1 with errno. Whatever was at that name goes first, never opened: a
 * leftover of an earlier process with this pid, or a link that someone who
 * may write in the folder planted there (the pid is in the lock file) to have
 * the run overwrite the file it points to. O_EXCL: a link planted again in
 * between makes the create fail rather than follow it. */
int fs_temp_create(const char *tmp);

/* Temporary files being written are recorded so that a process leaving in a
 * hurry (a second interrupt) can remove them: fs_temp_remove_all only calls
 * unlink and may be called from a signal handler. */
int fs_temp_track(const char *tmp);   /* returns a slot for fs_temp_untrack, or -1 when all are taken */
void fs_temp_untrack(int slot);
void fs_temp_remove_all(void);

/* fsyncs tmp, renames it to path and fsyncs the folder. */
int fs_commit(const char *tmp, const char *path);

/* Writes len bytes to path through a temporary file, fsynced and renamed, without
 * the folder's fsync: for several small files renamed into one folder, followed
 * by one fs_sync_folder (each fsync waits for the disk). */
int fs_write_atomic_unsynced_folder(const char *path, const void *data, size_t len);
int fs_sync_folder(const char *dir);

/* fs_write_atomic_unsynced_folder for files whose failure is only a warning:
 * prints nothing, returns 0 or an errno with the failure described in why. */
int fs_write_atomic_quiet(const char *path, const void *data, size_t len, char *why, size_t why_len);

/* mkdir -p; an existing folder is fine. */
int fs_make_dirs(const char *dir);

/* Bytes available to this user in dir's file system, or -1 if unknown. */
double fs_free_bytes(const char *dir);

/* Steps of the files "<dir>/<name>_<digits>.hdf", ascending. *steps is
 * malloc'ed (free it); returns the count, or -1 when dir cannot be read. */
int fs_list_checkpoints(const char *dir, const char *name, long **steps);
