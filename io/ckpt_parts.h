#pragma once
/*
 * Checkpoints of a field cut into z slabs, one per rank (DESIGN.md,
 * "As built (scale-out)"): each rank's writer compresses the chunks of its
 * own slab on its own cores and sends them, in chunk order, to the root's
 * writer, which writes its own chunks and then every other rank's as they
 * arrive (H5Dwrite_chunk). Only compressed bytes cross between ranks, and
 * the file is the one a single process writes: the same chunks in the same
 * order. Every writer takes part in every step of every write (the shuffle
 * decision, the chunks, the quick-look slice), failed or not, so that no
 * writer waits for one that has given up.
 *
 * One caller drives the file's steps: ckpt_write (io/checkpoint.h) with a
 * source in parts, which every rank's writer calls for every write. The
 * quick-look slice, the PNG's, is the writer's (io/ckpt_writer.c).
 */
#include <hdf5.h>

#include "compress.h"
#include "png.h"

typedef struct ckpt_parts {
    int ranks, rank;
    int *z_offset, *z_count; /* per rank: its slab's first plane, and its planes */
    int *received;           /* root, per rank: chunks taken during the current write */
    int *ended;              /* root, per rank: its part is complete, or it reported a failure */
    /* Called on the writer's thread once this rank's slab is compressed: what
     * is left of the write waits mostly for the disk and the other ranks. NULL: none. */
    void (*compressed)(void *context);
    void *compressed_context;
} ckpt_parts;

/* z_offset, z_count: `ranks` entries each (copied). */
int ckpt_parts_create(int ranks, int rank, const int *z_offset, const int *z_count, ckpt_parts **parts);
void ckpt_parts_destroy(ckpt_parts **parts);

/* Does every chunk of a field of dims (elem bytes a value) lie within one slab? */
int ckpt_parts_fit(const ckpt_parts *parts, const int dims_zyx[3], size_t elem);

/* The chunks of rank's slab, in the whole field's chunk shape; *first: the
 * whole field's number of its first chunk. */
chunk_plan ckpt_parts_plan(const ckpt_parts *parts, const chunk_plan *whole, int rank, int *first);

/* Every writer: the whole field's shuffle decision (chunk_should_shuffle),
 * made by the rank whose slab holds the sample chunk (no shuffle where that
 * rank has no slab to look at: slab NULL). */
int ckpt_parts_shuffle(const ckpt_parts *parts, const chunk_plan *whole, const void *slab, chunk_codec codec,
                       int *shuffle);

/* A writer other than the root's: compresses its slab and sends the chunks;
 * on a failure (or slab NULL: it failed before) the root is told, so that it
 * stops waiting for the rest. */
int ckpt_parts_send(const ckpt_parts *parts, const chunk_plan *whole, const void *slab, chunk_codec codec,
                    int shuffle);

/* Tells the compressed callback (if any): this rank's chunks are all compressed. */
void ckpt_parts_compressed(const ckpt_parts *parts);

/* The root's writer. begin, once per write; receive: the other ranks'
 * chunks into dset as they arrive (crcs[c] for each, *stored: their bytes);
 * drain: whatever receive did not take, because it failed or never ran. */
void ckpt_parts_begin(ckpt_parts *parts);
int ckpt_parts_receive(ckpt_parts *parts, const char *path, hid_t dset, const chunk_plan *whole, chunk_codec codec,
                       uint32_t *crcs, size_t *stored);
void ckpt_parts_drain(ckpt_parts *parts, const chunk_plan *whole, chunk_codec codec);

/* Every writer: the quick-look slice of the whole field, summed on the root
 * into plane (doubles, the slice's points) from the ranks' pieces of it. */
int ckpt_parts_slice(const ckpt_parts *parts, const int dims_xyz[3], heat_precision precision,
                     const png_slice *slice, const void *slab, double *plane);
