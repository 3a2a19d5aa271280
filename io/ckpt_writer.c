#include "ckpt_writer.h"

#include <errno.h>
#include <omp.h>
#include <stdatomic.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../solver/error.h"
#include "fsutil.h"

struct ckpt_writer {
    ckpt_writer_options options;
    char dir[512], name[128];
    ckpt_meta meta;       /* template; step and time set per job */
    heat_series series;
    void *buffer;         /* snapshot: compact field */
    size_t bytes;         /* of the snapshot: the whole field, or this rank's slab */
    double *plane;        /* with parts and PNGs: the quick-look slice, summed on the root */
    pthread_t thread;
    int in_flight;
    atomic_int finished;  /* set by the writer thread as its last act */
    int status;           /* result of the last job */
    long last_step;
    ckpt_writer_stats stats;
    double job_seconds;   /* the last job's time, set by the writer thread */
    double publish_seconds; /* of it, listing the file (publish), set by the writer thread */
    int (*arrived)(void *context); /* waits until the snapshot is in the buffer; NULL: it is */
    void *arrival_context;
};

int ckpt_writer_create(const ckpt_writer_options *o, const ckpt_meta *meta, heat_series *series, ckpt_writer **out)
{
    *out = NULL;
    ckpt_writer *w = calloc(1, sizeof *w);
    HEAT_CHECK(w, "out of memory");
    w->options = *o;
    if (w->options.threads < 1) w->options.threads = 1;
    snprintf(w->dir, sizeof w->dir, "%s", o->dir);
    snprintf(w->name, sizeof w->name, "%s", o->name);
    w->options.dir = w->dir, w->options.name = w->name;
    w->meta = *meta;
    w->meta.config_text = meta->config_text ? strdup(meta->config_text) : NULL;
    w->series = *series;
    memset(series, 0, sizeof *series);
    const ckpt_parts *parts = o->parts;
    long planes = parts ? parts->z_count[parts->rank] : meta->grid.n[2];
    w->bytes = (size_t)meta->grid.n[0] * meta->grid.n[1] * planes * heat_precision_size(meta->precision);
    w->buffer = o->buffer ? o->buffer : malloc(w->bytes);
    w->last_step = -1;
    w->stats.first_failed_step = w->stats.last_written_step = -1;
    *out = w;
    HEAT_CHECK(w->buffer, "cannot allocate the %zu-byte checkpoint snapshot", w->bytes);
    if (parts && o->png) {
        w->plane = malloc(sizeof *w->plane * (size_t)(heat_grid_points(&meta->grid) / meta->grid.n[o->slice.axis]));
        HEAT_CHECK(w->plane, "cannot allocate the quick-look slice");
    }
    return HEAT_OK;
}

void *ckpt_writer_buffer(ckpt_writer *w) { return w->buffer; }
long ckpt_writer_last_step(const ckpt_writer *w) { return w->last_step; }

void ckpt_writer_set_arrival(ckpt_writer *w, int (*arrived)(void *context), void *context)
{
    w->arrived = arrived;
    w->arrival_context = context;
}

/* file: what is about to be written (a float32 frame needs half a double checkpoint's room). */
static void warn_if_disk_short(const ckpt_writer *w, const ckpt_meta *file)
{
    double free_bytes = fs_free_bytes(w->dir);
    double bytes = (double)heat_grid_points(&file->grid) * (double)heat_precision_size(file->precision);
    /* Compressed size is unknown in advance; the raw size bounds it. */
    if (free_bytes >= 0 && free_bytes < bytes * 1.05)
        heat_warn("only %.3g MB free in %s; the next %s may need up to %.3g MB", free_bytes / 1e6, w->dir,
                  file->frame ? "frame" : "checkpoint", bytes / 1e6);
}

static int restart_count(const heat_series *s)
{
    int count = 0;
    for (int i = 0; i < s->count; ++i) count += !s->entries[i].frame;
    return count;
}

static long oldest_restart(const heat_series *s)
{
    for (int i = 0; i < s->count; ++i)
        if (!s->entries[i].frame) return s->entries[i].step;
    return -1;
}

/* output.keep counts restart checkpoints: frames are the run's film and stay. */
static int prune_old(ckpt_writer *w)
{
    while (w->options.keep > 0 && restart_count(&w->series) > w->options.keep) {
        char path[1024];
        long oldest = oldest_restart(&w->series);
        ckpt_path(path, sizeof path, w->dir, w->name, oldest);
        series_remove(&w->series, oldest);
        HEAT_CALL(series_write(&w->series)); /* never list a file that is about to go */
        if (unlink(path) != 0 && errno != ENOENT) heat_warn("cannot remove old checkpoint %s: %s", path, strerror(errno));
        char png[1100];
        snprintf(png, sizeof png, "%.*s.png", (int)(strlen(path) - 4), path);
        unlink(png);
    }
    return HEAT_OK;
}

static int write_png(ckpt_writer *w, const char *ckpt)
{
    if (!w->options.png) return HEAT_OK;
    char png[1100];
    snprintf(png, sizeof png, "%.*s.png", (int)(strlen(ckpt) - 4), ckpt);
    if (!w->plane)
        return png_write_slice(png, w->buffer, &w->meta.grid, w->meta.precision, &w->options.slice, w->meta.step,
                               w->meta.time);
    /* With parts: the slice alone, summed from the ranks' pieces, as a grid one point thick. */
    heat_grid plane = w->meta.grid;
    plane.n[w->options.slice.axis] = 1;
    png_slice slice = w->options.slice;
    slice.index = 0;
    return png_write_slice(png, w->plane, &plane, HEAT_DOUBLE, &slice, w->meta.step, w->meta.time);
}

/* A frame of a double run is written as float32 (half the bytes, and
 * compressing 2-3x better): the chunks are converted as they are gathered
 * for compression, on the writer's threads, so the writer holds no float
 * copy of the field (537 MB at 512^3); frames got about 10% faster on 2
 * cores and no faster measurably on the 16-core GPU host. */
static void frame_precision(const ckpt_writer *w, ckpt_meta *meta)
{
    if (meta->frame && !w->options.frame_full && w->meta.precision == HEAT_DOUBLE) meta->precision = HEAT_FLOAT;
}

static int list_and_draw(ckpt_writer *w, const char *path, const ckpt_meta *meta)
{
    HEAT_CALL(series_add(&w->series, w->meta.step, w->meta.time, meta->frame));
    HEAT_CALL(series_write(&w->series));
    HEAT_CALL(write_png(w, path));
    HEAT_CALL(prune_old(w));
    return fs_sync_folder(w->dir); /* the series' and the PNG's renames: one fsync for both */
}

/* The file is complete: list it, draw it, prune, one folder fsync (timed
 * apart: per-file costs that the file's bytes do not explain). */
static int publish(ckpt_writer *w, const char *path, const ckpt_meta *meta)
{
    double start = omp_get_wtime();
    int status = list_and_draw(w, path, meta);
    w->publish_seconds = omp_get_wtime() - start;
    return status;
}

static int write_job(ckpt_writer *w)
{
    char path[1024];
    ckpt_path(path, sizeof path, w->dir, w->name, w->meta.step);
    ckpt_meta meta = w->meta;
    frame_precision(w, &meta);
    warn_if_disk_short(w, &meta);
    HEAT_CALL(ckpt_write_from(path, &meta, w->buffer, w->meta.precision, w->options.level, w->options.method));
    return publish(w, path, &meta);
}

/* With parts, every rank's writer takes every step whatever failed before
 * (ckpt_parts.h): the shuffle decision, the chunks, the slice. */
static int write_parts_job(ckpt_writer *w, int status)
{
    ckpt_parts *parts = w->options.parts;
    ckpt_meta meta = w->meta;
    frame_precision(w, &meta);
    const void *field = status == HEAT_OK ? w->buffer : NULL;
    int dims[3] = {meta.grid.n[2], meta.grid.n[1], meta.grid.n[0]}, shuffle = 0;
    chunk_plan whole = chunk_plan_make(dims, heat_precision_size(meta.precision));
    if (meta.precision != w->meta.precision) whole = chunk_plan_from_doubles(whole);
    chunk_codec codec = {w->options.level, w->options.method == CKPT_PARALLEL_RLE};
    int agreed = ckpt_parts_shuffle(parts, &whole, field, codec, &shuffle);
    if (status == HEAT_OK) status = agreed;
    char path[1024];
    ckpt_path(path, sizeof path, w->dir, w->name, w->meta.step);
    if (parts->rank != 0) {
        int sent = ckpt_parts_send(parts, &whole, status == HEAT_OK ? field : NULL, codec, shuffle);
        if (status == HEAT_OK) status = sent;
    } else {
        warn_if_disk_short(w, &meta);
        ckpt_parts_begin(parts);
        if (status == HEAT_OK)
            status = ckpt_write_parts(path, &meta, field, w->meta.precision, w->options.level, w->options.method, parts,
                                      shuffle, NULL);
        ckpt_parts_drain(parts, &whole, codec);
    }
    if (w->options.png) {
        int summed = ckpt_parts_slice(parts, meta.grid.n, w->meta.precision, &w->options.slice, w->buffer, w->plane);
        if (status == HEAT_OK) status = summed;
    }
    if (parts->rank != 0 || status != HEAT_OK) return status;
    return publish(w, path, &meta);
}

static void *writer_main(void *arg)
{
    ckpt_writer *w = arg;
    omp_set_num_threads(w->options.threads); /* this thread's parallel regions only */
    double start = omp_get_wtime();
    w->publish_seconds = 0;
    int arrived = w->arrived ? w->arrived(w->arrival_context) : HEAT_OK;
    if (w->options.parts) w->status = write_parts_job(w, arrived); /* the other writers wait for this one's part */
    else w->status = arrived == HEAT_OK ? write_job(w) : arrived;
    w->job_seconds = omp_get_wtime() - start;
    if (w->status != HEAT_OK)
        fprintf(stderr, "heatsolve: the checkpoint of step %ld was not written; earlier checkpoints and the "
                        "series file are intact\n", w->meta.step);
    atomic_store(&w->finished, 1);
    return NULL;
}

int ckpt_writer_submit(ckpt_writer *w, long step, double time, int frame)
{
    HEAT_CALL(ckpt_writer_wait(w));
    w->meta.step = step;
    w->meta.time = time;
    w->meta.frame = frame;
    w->last_step = step;
    atomic_store(&w->finished, 0);
    int err = pthread_create(&w->thread, NULL, writer_main, w);
    if (err != 0) return heat_error(HEAT_ERR_RUNTIME, "cannot start the checkpoint writer thread: %s", strerror(err));
    w->in_flight = 1;
    return HEAT_OK;
}

ckpt_writer_stats ckpt_writer_get_stats(const ckpt_writer *w) { return w->stats; }

int ckpt_writer_busy(const ckpt_writer *w) { return w->in_flight && !atomic_load(&w->finished); }

int ckpt_writer_wait(ckpt_writer *w)
{
    if (!w->in_flight) return HEAT_OK;
    double start = omp_get_wtime();
    pthread_join(w->thread, NULL);
    w->stats.wait_seconds += omp_get_wtime() - start;
    w->stats.write_seconds += w->job_seconds;
    w->stats.publish_seconds += w->publish_seconds;
    ++w->stats.writes;
    if (w->meta.frame) ++w->stats.frames, w->stats.frame_seconds += w->job_seconds;
    if (w->status == HEAT_OK) {
        if (!w->meta.frame) w->stats.last_written_step = w->meta.step;
    } else {
        if (w->meta.frame) ++w->stats.frames_failed;
        else if (w->stats.failed++ == 0) w->stats.first_failed_step = w->meta.step;
    }
    w->in_flight = 0;
    int status = w->status;
    w->status = HEAT_OK;
    return status;
}

void ckpt_writer_destroy(ckpt_writer **writer)
{
    if (!writer || !*writer) return;
    ckpt_writer *w = *writer;
    if (w->in_flight) ckpt_writer_wait(w);
    series_destroy(&w->series);
    free(w->meta.config_text);
    if (!w->options.buffer) free(w->buffer);
    free(w->plane);
    free(w);
    *writer = NULL;
}
