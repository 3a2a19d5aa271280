#pragma once
/*
 * Writes checkpoints on threads of their own so that the time loop computes
 * on: the loop makes room (waits for the oldest write when every snapshot
 * buffer is taken), copies the field into the free buffer and submits it.
 * Each write compresses (on `threads` cores), writes, fsyncs and renames its
 * file; then, in the order the writes were submitted, updates the series
 * file, writes the optional PNG and prunes old restart checkpoints
 * (output.keep; frames stay). With one job, as with several ranks, at most
 * one write is in flight; with several, one write's fsync overlaps the next
 * one's compression (the file's HDF5 phase itself is one at a time).
 */
#include "checkpoint.h"
#include "ckpt_parts.h"
#include "png.h"
#include "series.h"

typedef struct ckpt_writer_options {
    const char *dir, *name;
    ckpt_codec codec;   /* zlib level and strategy, as ckpt_write takes them */
    int keep;           /* newest checkpoints to keep; 0 = all */
    int png;            /* write a PNG beside each checkpoint */
    png_slice slice;
    int threads;        /* OpenMP threads that compress */
    int frame_full;     /* frames in the run's precision; 0: float32 */
    ckpt_parts *parts;  /* every rank's writer, with this rank's slab in the buffer; NULL: the whole field (root) */
    void *buffer;       /* the first snapshot buffer, owned by the caller (the run loads its field there);
                           NULL: the writer allocates its own */
    int jobs;           /* writes in flight at most, each with a snapshot buffer; 1 with parts */
} ckpt_writer_options;

enum { CKPT_WRITER_MAX_JOBS = 4 };

typedef struct ckpt_writer ckpt_writer;

/* Where the checkpoints' time went, for the run's summary. */
typedef struct ckpt_writer_stats {
    long writes;          /* finished writes, successful or not */
    long failed;          /* of the restart checkpoints, the ones not written */
    long frames_failed;   /* of the frames, the ones not written */
    long first_failed_step; /* step of the first failed write; -1 if none */
    long last_written_step; /* step of the newest checkpoint written; -1 if none */
    double write_seconds; /* their total time on the writer thread */
    long frames;          /* of the finished writes, frames (output.frame_every) */
    double frame_seconds; /* their share of write_seconds */
    double publish_seconds; /* of write_seconds, listing the files: series, PNG, pruning, folder fsync */
    double wait_seconds;  /* time the caller spent blocked in ckpt_writer_make_room or _wait */
    double thread_sum;    /* over the finished writes, the threads each compressed on */
    int jobs;             /* writes that may be in flight at once */
} ckpt_writer_stats;

/* meta: everything but step and time (copied, config text included). The
 * series is taken over by the writer. With parts, every rank has a writer:
 * the root's writes the files, the others' compress their slabs and send
 * them (series unused); parts must outlive the writer. */
int ckpt_writer_create(const ckpt_writer_options *options, const ckpt_meta *meta, heat_series *series,
                       ckpt_writer **writer);

/* Makes room for the next snapshot: counts the writes that have finished
 * and waits for the oldest one if every buffer is taken; returns the first
 * failure among those it counted (HEAT_OK if none). */
int ckpt_writer_make_room(ckpt_writer *writer);

/* Where the next snapshot goes (the whole field, or this rank's slab);
 * valid after ckpt_writer_make_room. */
void *ckpt_writer_buffer(ckpt_writer *writer);

/* Every snapshot buffer (to page-lock them), each of ckpt_writer_buffer_bytes. */
int ckpt_writer_buffer_count(const ckpt_writer *writer);
void *ckpt_writer_buffer_at(ckpt_writer *writer, int index);
size_t ckpt_writer_buffer_bytes(const ckpt_writer *writer);

/* A snapshot may still be arriving when it is submitted (a GPU copies it
 * while it steps on): the writer thread calls arrived(context) before it
 * reads the buffer. */
void ckpt_writer_set_arrival(ckpt_writer *writer, int (*arrived)(void *context), void *context);

/* Waits until every write in flight has its snapshot (arrived() has
 * returned on its thread), so that the snapshots' source, a GPU, may be
 * released while the writes go on. Writes submitted later call arrived()
 * again. Any one thread may call it beside the one that submits and waits. */
void ckpt_writer_wait_snapshots(ckpt_writer *writer);

/* Starts writing the buffer as the checkpoint of step, or as a frame: a file
 * for viewing only (float32 unless frame_full), marked not restartable. */
int ckpt_writer_submit(ckpt_writer *writer, long step, double time, int frame);

/* Materials runs: the energy balance's sums (io/ckpt_energy.h) of the step
 * the next ckpt_writer_submit writes. */
void ckpt_writer_set_energy(ckpt_writer *writer, const double energy_in[4]);

/* The threads that later writes compress on (options.threads until then):
 * the run's last write, with nothing stepping beside it, takes every core. */
void ckpt_writer_set_threads(ckpt_writer *writer, int threads);

/* Is a write still running? (Does not wait.) */
int ckpt_writer_busy(const ckpt_writer *writer);

/* Waits until every write in flight has compressed its snapshot (with
 * parts: this rank's slab) or has ended, without collecting their results
 * (the next ckpt_writer_make_room or ckpt_writer_wait reports them as
 * before). What is left of a write then needs little of a core: sending,
 * the root's file, its fsync, the listing. */
void ckpt_writer_wait_compressed(const ckpt_writer *writer);

/* Waits for every write in flight; returns the first failure (HEAT_OK if none). */
int ckpt_writer_wait(ckpt_writer *writer);

ckpt_writer_stats ckpt_writer_get_stats(const ckpt_writer *writer);

/* Waits, then frees; accepts NULL and clears the handle. */
void ckpt_writer_destroy(ckpt_writer **writer);
