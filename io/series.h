#pragma once
/*
 * The ParaView time-series file "<dir>/<name>.hdf.series":
 *   {"file-series-version": "1.0", "files": [{"name": "x_000010.hdf", "time": 0.5}, ...]}
 * It lists every checkpoint of the run once, in step order, and is rewritten
 * atomically after every checkpoint.
 */
typedef struct series_entry {
    long step;
    double time;
    int frame;  /* a frame for viewing (output.frame_every), not a restart point */
} series_entry;

typedef struct heat_series {
    char dir[512], name[128];
    series_entry *entries;
    int count, capacity;
} heat_series;

void series_init(heat_series *series, const char *dir, const char *name);
void series_destroy(heat_series *series);

/* Inserts or replaces the entry for step, keeping step order. */
int series_add(heat_series *series, long step, double time, int frame);
void series_remove(heat_series *series, long step);

/* Rebuilds the list from the checkpoints in dir with step <= last_step that
 * read back as valid checkpoints (a restart continues the same series). */
int series_scan(heat_series *series, long last_step);

/* Atomic, without the folder's fsync: the caller syncs the folder (fs_sync_folder). */
int series_write(const heat_series *series);
