#pragma once
/*
 * File-system helpers for crash-safe output: temporary names, fsync + rename
 * commits, directory creation, free space and checkpoint discovery.
 */
#include <stddef.h>

/* "<dir>/.<base>.tmp-<pid>": hidden, in the same folder so rename is atomic. */
void fs_temp_name(char *buf, size_t len, const char *path);

/* fsyncs tmp, renames it to path and fsyncs the folder. */
int fs_commit(const char *tmp, const char *path);

/* Writes len bytes to path through a temporary file and fs_commit. */
int fs_write_atomic(const char *path, const void *data, size_t len);

/* mkdir -p; an existing folder is fine. */
int fs_make_dirs(const char *dir);

/* Bytes available to this user in dir's file system, or -1 if unknown. */
double fs_free_bytes(const char *dir);

/* Steps of the files "<dir>/<name>_<digits>.hdf", ascending. *steps is
 * malloc'ed (free it); returns the count, or -1 when dir cannot be read. */
int fs_list_checkpoints(const char *dir, const char *name, long **steps);
