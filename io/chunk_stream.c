#define _GNU_SOURCE /* sync_file_range */
#include "chunk_stream.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <time.h>
#ifdef _OPENMP
#include <omp.h>
#else /* one thread (the fuzzing build): the writer compresses every chunk itself */
#include "../solver/clock.h"
static int omp_get_thread_num(void) { return 0; }
static int omp_get_num_threads(void) { return 1; }
static int omp_get_max_threads(void) { return 1; }
static double omp_get_wtime(void) { return monotonic_seconds(); }
#endif
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "../solver/error.h"

/* Starts the kernel's writeback of what the writer has written, on a thread
 * of its own: sync_file_range can block while the disk's queue is full, and
 * the writer must not (the compressing threads would wait for their slots). */
typedef struct flusher {
    int fd;
    atomic_size_t written; /* bytes the writer has handed to the file so far */
    atomic_int done;
    pthread_t thread;
    int started;
} flusher;

static void *flusher_main(void *arg)
{
    flusher *f = arg;
    size_t flushed = 0;
    for (;;) {
        size_t written = atomic_load(&f->written);
        if (written - flushed >= CHUNK_WRITEBACK_BYTES) {
            /* From the last start to the end of the file; a hint: failures show at fsync. */
            sync_file_range(f->fd, (off_t)flushed, 0, SYNC_FILE_RANGE_WRITE);
            flushed = written;
        } else if (atomic_load(&f->done)) {
            return NULL;
        } else {
            struct timespec pause = {0, 200000};
            nanosleep(&pause, NULL);
        }
    }
}

typedef struct stream {
    const chunk_plan *plan;
    const void *field;
    chunk_codec codec;
    int shuffle, total, window;
    chunk_data *slots;     /* window entries; chunk c uses slot c % window */
    atomic_int *ready;     /* per slot: 0 empty, 1 holds its chunk, -1 compression failed */
    atomic_int next_job;   /* next chunk to compress */
    atomic_int written;    /* chunks written so far */
    atomic_int abort;      /* set by the writer on failure: everybody stops */
    uint32_t *crcs;
} stream;

/* Claims the next chunk to compress, if its slot is free by now (the writer
 * must not wait on itself); -1 otherwise. */
static int claim_job(stream *s, int blocking)
{
    for (;;) {
        int j = atomic_load(&s->next_job);
        if (j >= s->total || atomic_load(&s->abort)) return -1;
        if (j >= atomic_load(&s->written) + s->window) {
            if (!blocking) return -1;
            sched_yield();
            continue;
        }
        if (atomic_compare_exchange_weak(&s->next_job, &j, j + 1)) return j;
    }
}

static double compress_job(stream *s, int j, unsigned char *work)
{
    double start = omp_get_wtime();
    chunk_data *slot = &s->slots[j % s->window];
    int ok = work && chunk_compress(s->plan, s->field, j, s->codec, s->shuffle, work, slot);
    s->crcs[j] = slot->crc;
    atomic_store(&s->ready[j % s->window], ok ? 1 : -1);
    return omp_get_wtime() - start;
}

/* Where a finished chunk goes: the file (the root), or the root (the other
 * ranks' writers, io/ckpt_parts.c). */
typedef struct chunk_sink {
    int (*put)(void *context, int chunk, const chunk_data *data);
    void *context;
} chunk_sink;

typedef struct file_sink {
    const char *path;
    const chunk_plan *plan;
    hid_t dset;
    flusher *flush;
    size_t stored;
} file_sink;

static int write_one(void *context, int c, const chunk_data *chunk)
{
    file_sink *f = context;
    unsigned long long off[3];
    chunk_plan_offset(f->plan, c, off);
    hsize_t offset[3] = {off[0], off[1], off[2]};
    errno = 0;
    if (H5Dwrite_chunk(f->dset, H5P_DEFAULT, 0, offset, chunk->size, chunk->data) < 0) {
        int saved = errno;
        return heat_error(HEAT_ERR_RUNTIME, "cannot write %s: %s", f->path,
                          saved ? strerror(saved) : "HDF5 call H5Dwrite_chunk failed");
    }
    f->stored += chunk->size;
    if (f->flush) atomic_store(&f->flush->written, f->stored);
    return HEAT_OK;
}

/* The calling thread: hands chunks over in order, compressing one itself
 * whenever the next is not ready yet. */
static int writer_loop(stream *s, const chunk_sink *sink, unsigned char *work, chunk_stream_result *result,
                       double *busy)
{
    for (int c = 0; c < s->total; ++c) {
        atomic_int *ready = &s->ready[c % s->window];
        while (atomic_load(ready) == 0) {
            int j = claim_job(s, 0);
            if (j >= 0) *busy += compress_job(s, j, work);
            else sched_yield();
        }
        if (atomic_load(ready) < 0)
            return heat_error(HEAT_ERR_RUNTIME, "compressing chunk %d of the checkpoint failed (out of memory?)", c);
        HEAT_CALL(sink->put(sink->context, c, &s->slots[c % s->window]));
        result->stored_bytes += s->slots[c % s->window].size;
        atomic_store(ready, 0);
        atomic_store(&s->written, c + 1);
    }
    return HEAT_OK;
}

static int run_stream(stream *s, const chunk_sink *sink, chunk_stream_result *result)
{
    int status = HEAT_OK;
    double busy = 0.0;
#pragma omp parallel reduction(+ : busy)
    {
        unsigned char *work = malloc(chunk_work_bytes(s->plan));
        if (omp_get_thread_num() == 0) {
            result->threads = omp_get_num_threads();
            status = writer_loop(s, sink, work, result, &busy);
            if (status != HEAT_OK) atomic_store(&s->abort, 1);
        } else {
            for (int j; (j = claim_job(s, 1)) >= 0;) busy += compress_job(s, j, work);
        }
        free(work);
    }
    result->compress_seconds = busy;
    return status;
}

/* The window of compressed chunks, then the stream into sink. */
static int stream_chunks(const chunk_plan *plan, const void *field, chunk_codec codec, int shuffle, uint32_t *crcs,
                         const chunk_sink *sink, chunk_stream_result *result)
{
    memset(result, 0, sizeof *result);
    stream s = {.plan = plan, .field = field, .codec = codec, .shuffle = shuffle, .crcs = crcs};
    s.total = chunk_plan_total(plan);
    s.window = 2 * omp_get_max_threads() + 2;
    s.slots = calloc((size_t)s.window, sizeof *s.slots);
    s.ready = calloc((size_t)s.window, sizeof *s.ready);
    int status = s.slots && s.ready ? HEAT_OK : heat_error(HEAT_ERR_RUNTIME, "out of memory for the chunk window");
    size_t bound = chunk_bound(plan, codec);
    for (int w = 0; status == HEAT_OK && w < s.window; ++w)
        if (!(s.slots[w].bytes = malloc(bound)))
            status = heat_error(HEAT_ERR_RUNTIME, "out of memory for the chunk window (%d x %zu bytes)", s.window, bound);
    if (status == HEAT_OK) status = run_stream(&s, sink, result);
    for (int w = 0; s.slots && w < s.window; ++w) free(s.slots[w].bytes);
    free(s.slots);
    free((void *)s.ready);
    return status;
}

int chunk_stream_write(const char *path, hid_t dset, int fd, const chunk_plan *plan, const void *field,
                       chunk_codec codec, int shuffle, uint32_t *crcs, chunk_stream_result *result)
{
    flusher flush = {.fd = fd};
    flush.started = fd >= 0 && pthread_create(&flush.thread, NULL, flusher_main, &flush) == 0;
    file_sink file = {path, plan, dset, flush.started ? &flush : NULL, 0};
    chunk_sink sink = {write_one, &file};
    int status = stream_chunks(plan, field, codec, shuffle, crcs, &sink, result);
    atomic_store(&flush.done, 1);
    if (flush.started) pthread_join(flush.thread, NULL);
    return status;
}

int chunk_stream_each(const chunk_plan *plan, const void *field, chunk_codec codec, int shuffle, uint32_t *crcs,
                      int (*put)(void *context, int chunk, const chunk_data *data), void *context,
                      chunk_stream_result *result)
{
    chunk_sink sink = {put, context};
    return stream_chunks(plan, field, codec, shuffle, crcs, &sink, result);
}
