#include "series.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../solver/error.h"
#include "checkpoint.h"
#include "fsutil.h"

void series_init(heat_series *s, const char *dir, const char *name)
{
    memset(s, 0, sizeof *s);
    snprintf(s->dir, sizeof s->dir, "%s", dir);
    snprintf(s->name, sizeof s->name, "%s", name);
}

void series_destroy(heat_series *s)
{
    if (!s) return;
    free(s->entries);
    s->entries = NULL;
    s->count = s->capacity = 0;
}

int series_add(heat_series *s, long step, double time, int frame)
{
    int at = 0;
    while (at < s->count && s->entries[at].step < step) ++at;
    if (at < s->count && s->entries[at].step == step) {
        s->entries[at].time = time;
        s->entries[at].frame = frame;
        return HEAT_OK;
    }
    if (s->count == s->capacity) {
        int capacity = s->capacity ? 2 * s->capacity : 32;
        series_entry *grown = realloc(s->entries, sizeof *grown * (size_t)capacity);
        HEAT_CHECK(grown, "out of memory");
        s->entries = grown, s->capacity = capacity;
    }
    memmove(s->entries + at + 1, s->entries + at, sizeof *s->entries * (size_t)(s->count - at));
    s->entries[at] = (series_entry){step, time, frame};
    ++s->count;
    return HEAT_OK;
}

void series_remove(heat_series *s, long step)
{
    for (int i = 0; i < s->count; ++i)
        if (s->entries[i].step == step) {
            memmove(s->entries + i, s->entries + i + 1, sizeof *s->entries * (size_t)(s->count - i - 1));
            --s->count;
            return;
        }
}

int series_scan(heat_series *s, long last_step)
{
    long *steps;
    int count = fs_list_checkpoints(s->dir, s->name, &steps);
    for (int i = 0; i < count && steps[i] <= last_step; ++i) {
        char path[1024];
        ckpt_meta meta;
        ckpt_path(path, sizeof path, s->dir, s->name, steps[i]);
        if (ckpt_read_meta(path, &meta) != HEAT_OK || meta.step != steps[i]) {
            heat_warn("%s is not a valid checkpoint; leaving it out of the series", path);
            continue;
        }
        int status = series_add(s, meta.step, meta.time, meta.frame);
        ckpt_meta_free(&meta);
        if (status != HEAT_OK) return free(steps), status;
    }
    free(steps);
    return HEAT_OK;
}

int series_write(const heat_series *s)
{
    size_t capacity = 128 + (size_t)s->count * (strlen(s->name) + 96);
    char *json = malloc(capacity);
    HEAT_CHECK(json, "out of memory");
    size_t used = (size_t)snprintf(json, capacity, "{\n  \"file-series-version\": \"1.0\",\n  \"files\": [");
    for (int i = 0; i < s->count; ++i)
        used += (size_t)snprintf(json + used, capacity - used, "%s\n    {\"name\": \"%s_%06ld.hdf\", \"time\": %.17g}",
                                 i ? "," : "", s->name, s->entries[i].step, s->entries[i].time);
    used += (size_t)snprintf(json + used, capacity - used, "\n  ]\n}\n");
    char path[1024];
    snprintf(path, sizeof path, "%s/%s.hdf.series", s->dir, s->name);
    int status = fs_write_atomic_unsynced_folder(path, json, used); /* the writer syncs the folder once a job */
    free(json);
    return status;
}
