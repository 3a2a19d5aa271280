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
#include "../solver/host_memory.h"
#include "fsutil.h"

/* One write: a snapshot buffer and the thread that writes it. */
typedef struct ckpt_job {
    struct ckpt_writer *writer;
    void *buffer;         /* snapshot: compact field (or this rank's slab) */
    int owns_buffer;
    ckpt_meta meta;       /* the writer's template with this write's step, time and frame */
    int threads;          /* OpenMP threads that compress it (the writer's when it was submitted) */
    long ticket;          /* submission order: files are listed in it */
    pthread_t thread;
    int in_flight;
    atomic_int finished;  /* set by the job's thread as its last act */
    atomic_int compressed; /* its snapshot is compressed (with parts: this rank's slab), or it finished */
    int status;
    int snapshot_in;      /* no snapshot to wait for: its thread has had it, or none was submitted; under turn_lock */
    int file_done;        /* its file is written (or failed: file_status); under turn_lock */
    int file_status;
    double seconds;         /* the job's time, set by its thread */
    double publish_seconds; /* of it, drawing and listing the file */
} ckpt_job;

struct ckpt_writer {
    ckpt_writer_options options;
    char dir[512], name[128];
    ckpt_meta meta;       /* template; step and time set per job */
    heat_series series;   /* touched only by the job whose turn it is to list */
    size_t bytes;         /* of a snapshot: the whole field, or this rank's slab */
    double *plane;        /* with parts and PNGs: the quick-look slice, summed on the root */
    ckpt_job jobs[CKPT_WRITER_MAX_JOBS];
    int job_count;
    int next;             /* the job slot the next submit takes (slots go round: it holds the oldest write) */
    long tickets;         /* writes submitted; under turn_lock */
    long publishing;      /* the oldest ticket not yet listed; under turn_lock */
    pthread_mutex_t turn_lock;
    pthread_cond_t turn;
    ckpt_writer_stats stats;
    int (*arrived)(void *context); /* waits until the snapshot is in the buffer; NULL: it is */
    void *arrival_context;
};

/* With parts one write is in flight at a time: its slot is the first. */
static void slab_compressed(void *writer)
{
    ckpt_writer *w = writer;
    atomic_store(&w->jobs[0].compressed, 1);
}

static int allocate_jobs(ckpt_writer *w, int count, void *first_buffer)
{
    w->job_count = count;
    for (int j = 0; j < count; ++j) {
        ckpt_job *job = &w->jobs[j];
        job->writer = w;
        job->owns_buffer = !(j == 0 && first_buffer);
        job->snapshot_in = 1;
        job->buffer = job->owns_buffer ? heat_host_alloc(w->bytes) : first_buffer;
        HEAT_CHECK(job->buffer, "cannot allocate the %zu-byte checkpoint snapshot %d of %d (output.writes_in_flight)",
                   w->bytes, j + 1, count);
    }
    return HEAT_OK;
}

int ckpt_writer_create(const ckpt_writer_options *o, const ckpt_meta *meta, heat_series *series, ckpt_writer **out)
{
    *out = NULL;
    ckpt_writer *w = calloc(1, sizeof *w);
    HEAT_CHECK(w, "out of memory");
    w->options = *o;
    if (w->options.threads < 1) w->options.threads = 1;
    int jobs = o->parts || o->jobs < 1 ? 1 : o->jobs < CKPT_WRITER_MAX_JOBS ? o->jobs : CKPT_WRITER_MAX_JOBS;
    snprintf(w->dir, sizeof w->dir, "%s", o->dir);
    snprintf(w->name, sizeof w->name, "%s", o->name);
    w->options.dir = w->dir, w->options.name = w->name;
    w->meta = *meta;
    w->meta.config_text = meta->config_text ? strdup(meta->config_text) : NULL;
    w->series = *series;
    memset(series, 0, sizeof *series);
    pthread_mutex_init(&w->turn_lock, NULL);
    pthread_cond_init(&w->turn, NULL);
    ckpt_parts *parts = o->parts;
    if (parts) parts->compressed = slab_compressed, parts->compressed_context = w;
    long planes = parts ? parts->z_count[parts->rank] : meta->grid.n[2];
    w->bytes = (size_t)meta->grid.n[0] * meta->grid.n[1] * planes * heat_precision_size(meta->precision);
    w->stats.first_failed_step = w->stats.last_written_step = -1;
    w->stats.jobs = jobs;
    *out = w;
    HEAT_CALL(allocate_jobs(w, jobs, o->buffer));
    if (parts && o->png) {
        w->plane = malloc(sizeof *w->plane * (size_t)(heat_grid_points(&meta->grid) / meta->grid.n[o->slice.axis]));
        HEAT_CHECK(w->plane, "cannot allocate the quick-look slice");
    }
    return HEAT_OK;
}

void *ckpt_writer_buffer(ckpt_writer *w) { return w->jobs[w->next].buffer; }
int ckpt_writer_buffer_count(const ckpt_writer *w) { return w->job_count; }
void *ckpt_writer_buffer_at(ckpt_writer *w, int index) { return w->jobs[index].buffer; }
size_t ckpt_writer_buffer_bytes(const ckpt_writer *w) { return w->bytes; }

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

static int write_png(const ckpt_job *job, const char *ckpt)
{
    const ckpt_writer *w = job->writer;
    if (!w->options.png) return HEAT_OK;
    char png[1100];
    snprintf(png, sizeof png, "%.*s.png", (int)(strlen(ckpt) - 4), ckpt);
    const ckpt_meta *m = &job->meta;
    if (!w->plane) return png_write_slice(png, job->buffer, &m->grid, m->precision, &w->options.slice, m->step, m->time);
    /* With parts: the slice alone, summed from the ranks' pieces, as a grid one point thick. */
    heat_grid plane = m->grid;
    plane.n[w->options.slice.axis] = 1;
    png_slice slice = w->options.slice;
    slice.index = 0;
    return png_write_slice(png, w->plane, &plane, HEAT_DOUBLE, &slice, m->step, m->time);
}

/* A frame of a double run is written as float32 (half the bytes, and
 * compressing 2-3x better): the chunks are converted as they are gathered
 * for compression, on the writer's threads, so the writer holds no float
 * copy of the field. */
static ckpt_meta file_meta(const ckpt_job *job)
{
    ckpt_meta file = job->meta;
    if (file.frame && !job->writer->options.frame_full && file.precision == HEAT_DOUBLE) file.precision = HEAT_FLOAT;
    return file;
}

/* The quick-look PNG, drawn beside the other writes: its file is renamed in
 * before the checkpoint is listed, and the listing's folder fsync makes both
 * durable. A PNG that cannot be written (a full disk) costs only itself: the
 * checkpoint, complete on disk, is still listed. */
static void draw_quick_look(ckpt_job *job, const char *path)
{
    double start = omp_get_wtime();
    if (write_png(job, path) != HEAT_OK)
        heat_warn("the quick-look PNG of step %ld was not written (above); its checkpoint was", job->meta.step);
    job->publish_seconds += omp_get_wtime() - start;
}

/* Lists the files of `count` writes from ticket `first` on, those that were
 * written, in one series update: one series file, pruning, one folder fsync
 * for them all (each fsync waits for the disk). */
static void list_files(ckpt_writer *w, long first, int count)
{
    double start = omp_get_wtime();
    int status = HEAT_OK, listed = 0;
    for (int i = 0; i < count; ++i) {
        ckpt_job *job = &w->jobs[(first + i) % w->job_count];
        if (job->file_status != HEAT_OK || status != HEAT_OK) continue;
        status = series_add(&w->series, job->meta.step, job->meta.time, job->meta.frame);
        listed += status == HEAT_OK;
    }
    if (listed && status == HEAT_OK) status = series_write(&w->series);
    if (listed && status == HEAT_OK) status = prune_old(w);
    if (listed && status == HEAT_OK) status = fs_sync_folder(w->dir); /* the files', PNGs' and series' renames */
    for (int i = 0; i < count; ++i) {
        ckpt_job *job = &w->jobs[(first + i) % w->job_count];
        job->status = job->file_status == HEAT_OK ? status : job->file_status;
    }
    w->jobs[first % w->job_count].publish_seconds += omp_get_wtime() - start;
}


static int write_whole(ckpt_job *job, const char *path, const ckpt_meta *file)
{
    ckpt_writer *w = job->writer;
    warn_if_disk_short(w, file);
    ckpt_source snapshot = {job->buffer, job->meta.precision, NULL};
    ckpt_codec codec = w->options.codec;
    return ckpt_write(path, file, &snapshot, &codec, NULL);
}

/* With parts, every rank's writer takes part in every write whatever failed
 * before (ckpt_parts.h): its file (a snapshot that failed goes in as none),
 * then the quick-look slice. */
static int write_parts(ckpt_job *job, int status, const char *path, const ckpt_meta *file)
{
    ckpt_writer *w = job->writer;
    ckpt_parts *parts = w->options.parts;
    if (parts->rank == 0) warn_if_disk_short(w, file);
    ckpt_source slab = {status == HEAT_OK ? job->buffer : NULL, job->meta.precision, parts};
    ckpt_codec codec = w->options.codec;
    int written = ckpt_write(path, file, &slab, &codec, NULL);
    if (status == HEAT_OK) status = written;
    if (w->options.png) {
        int summed = ckpt_parts_slice(parts, file->grid.n, job->meta.precision, &w->options.slice, job->buffer, w->plane);
        if (status == HEAT_OK) status = summed;
    }
    return status;
}

/* Files are listed in the order they were submitted. A write whose file is
 * done waits for its turn; the write whose turn it is lists its own file
 * and every later one already done, so that files finished close together
 * share one series update. A failed write passes its turn on. Returns the
 * job's status, set by whoever listed it. */
static int list_in_turn(ckpt_job *job, int file_status)
{
    ckpt_writer *w = job->writer;
    pthread_mutex_lock(&w->turn_lock);
    job->file_status = file_status, job->file_done = 1;
    while (w->publishing <= job->ticket) {
        if (w->publishing == job->ticket) {
            int count = 1;
            while (job->ticket + count < w->tickets && w->jobs[(job->ticket + count) % w->job_count].file_done) ++count;
            pthread_mutex_unlock(&w->turn_lock);
            list_files(w, job->ticket, count);
            pthread_mutex_lock(&w->turn_lock);
            w->publishing += count;
            pthread_cond_broadcast(&w->turn);
        } else {
            pthread_cond_wait(&w->turn, &w->turn_lock);
        }
    }
    int status = job->status;
    pthread_mutex_unlock(&w->turn_lock);
    return status;
}

static void *job_main(void *arg)
{
    ckpt_job *job = arg;
    ckpt_writer *w = job->writer;
    omp_set_num_threads(job->threads); /* this thread's parallel regions only */
    double start = omp_get_wtime();
    job->publish_seconds = 0;
    char path[1024];
    ckpt_path(path, sizeof path, w->dir, w->name, job->meta.step);
    ckpt_meta file = file_meta(job);
    int status = w->arrived ? w->arrived(w->arrival_context) : HEAT_OK;
    pthread_mutex_lock(&w->turn_lock);
    job->snapshot_in = 1; /* the snapshot's source is no longer needed (ckpt_writer_wait_snapshots) */
    pthread_cond_broadcast(&w->turn);
    pthread_mutex_unlock(&w->turn_lock);
    if (w->options.parts) status = write_parts(job, status, path, &file); /* the other writers wait for this one's part */
    else if (status == HEAT_OK) status = write_whole(job, path, &file);
    int lists = !w->options.parts || w->options.parts->rank == 0;
    if (status == HEAT_OK && lists) draw_quick_look(job, path);
    status = lists ? list_in_turn(job, status) : status;
    if (status != HEAT_OK)
        fprintf(stderr, "heatsolve: the checkpoint of step %ld was not written; earlier checkpoints and the "
                        "series file are intact\n", job->meta.step);
    job->status = status;
    job->seconds = omp_get_wtime() - start;
    atomic_store(&job->compressed, 1);
    atomic_store(&job->finished, 1);
    return NULL;
}

/* Joins a write and counts it in the stats; its status. */
static int collect(ckpt_writer *w, ckpt_job *job)
{
    if (!job->in_flight) return HEAT_OK;
    double start = omp_get_wtime();
    pthread_join(job->thread, NULL);
    job->in_flight = 0;
    ckpt_writer_stats *s = &w->stats;
    s->wait_seconds += omp_get_wtime() - start;
    s->write_seconds += job->seconds;
    s->publish_seconds += job->publish_seconds;
    s->thread_sum += job->threads;
    ++s->writes;
    int frame = job->meta.frame;
    if (frame) ++s->frames, s->frame_seconds += job->seconds;
    if (job->status == HEAT_OK) {
        if (!frame && job->meta.step > s->last_written_step) s->last_written_step = job->meta.step;
    } else if (frame) {
        ++s->frames_failed;
    } else if (s->failed++ == 0) {
        s->first_failed_step = job->meta.step;
    }
    return job->status;
}

/* Slots go round, so slot next + i holds the i-th oldest write. */
static ckpt_job *oldest(ckpt_writer *w, int i) { return &w->jobs[(w->next + i) % w->job_count]; }

int ckpt_writer_make_room(ckpt_writer *w)
{
    int status = HEAT_OK;
    /* Writes already finished are counted now, in order, so a failure shows at once. */
    for (int i = 0; i < w->job_count; ++i) {
        ckpt_job *job = oldest(w, i);
        if (!job->in_flight || !atomic_load(&job->finished)) break;
        int s = collect(w, job);
        if (status == HEAT_OK) status = s;
    }
    int s = collect(w, oldest(w, 0)); /* the slot the next write takes */
    return status == HEAT_OK ? s : status;
}

int ckpt_writer_submit(ckpt_writer *w, long step, double time, int frame)
{
    HEAT_CALL(ckpt_writer_make_room(w));
    ckpt_job *job = &w->jobs[w->next];
    job->meta = w->meta;
    job->meta.step = step;
    job->meta.time = time;
    job->meta.frame = frame;
    job->threads = w->options.threads;
    atomic_store(&job->finished, 0);
    atomic_store(&job->compressed, 0);
    pthread_mutex_lock(&w->turn_lock);
    job->ticket = w->tickets, job->file_done = 0, job->snapshot_in = 0;
    int err = pthread_create(&job->thread, NULL, job_main, job);
    w->tickets += err == 0;
    pthread_mutex_unlock(&w->turn_lock);
    if (err != 0) return heat_error(HEAT_ERR_RUNTIME, "cannot start the checkpoint writer thread: %s", strerror(err));
    job->in_flight = 1;
    w->next = (w->next + 1) % w->job_count;
    return HEAT_OK;
}

void ckpt_writer_set_energy(ckpt_writer *w, const double energy_in[4])
{
    for (int k = 0; k < 4; ++k) w->meta.energy_in[k] = energy_in[k];
    w->meta.energy_present = 1;
}

void ckpt_writer_wait_snapshots(ckpt_writer *w)
{
    pthread_mutex_lock(&w->turn_lock);
    for (int j = 0; j < w->job_count; ++j)
        while (!w->jobs[j].snapshot_in) pthread_cond_wait(&w->turn, &w->turn_lock);
    pthread_mutex_unlock(&w->turn_lock);
}

ckpt_writer_stats ckpt_writer_get_stats(const ckpt_writer *w) { return w->stats; }

void ckpt_writer_set_threads(ckpt_writer *w, int threads) { w->options.threads = threads > 1 ? threads : 1; }

int ckpt_writer_busy(const ckpt_writer *w)
{
    for (int j = 0; j < w->job_count; ++j)
        if (w->jobs[j].in_flight && !atomic_load(&w->jobs[j].finished)) return 1;
    return 0;
}

static int compressing(const ckpt_writer *w)
{
    for (int j = 0; j < w->job_count; ++j)
        if (w->jobs[j].in_flight && !atomic_load(&w->jobs[j].compressed)) return 1;
    return 0;
}

void ckpt_writer_wait_compressed(const ckpt_writer *w)
{
    const struct timespec pause = {0, 200000}; /* 0.2 ms: compressing takes milliseconds at least */
    while (compressing(w)) nanosleep(&pause, NULL);
}

int ckpt_writer_wait(ckpt_writer *w)
{
    int status = HEAT_OK;
    for (int i = 0; i < w->job_count; ++i) {
        int s = collect(w, oldest(w, i));
        if (status == HEAT_OK) status = s;
    }
    return status;
}

void ckpt_writer_destroy(ckpt_writer **writer)
{
    if (!writer || !*writer) return;
    ckpt_writer *w = *writer;
    ckpt_writer_wait(w);
    series_destroy(&w->series);
    free(w->meta.config_text);
    for (int j = 0; j < w->job_count; ++j)
        if (w->jobs[j].owns_buffer) free(w->jobs[j].buffer);
    pthread_cond_destroy(&w->turn);
    pthread_mutex_destroy(&w->turn_lock);
    free(w->plane);
    free(w);
    *writer = NULL;
}
