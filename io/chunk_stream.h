#pragma once
/*
 * The checkpoint pipeline's middle: chunks of the field are compressed on
 * every thread of the calling OpenMP context while the calling thread writes
 * the finished ones, in chunk order, with H5Dwrite_chunk, and asks the kernel
 * to start writing them to disk (sync_file_range) so that the final fsync
 * finds little left to do. The file layout is the same as a serial write.
 *
 * Memory: a window of 2 x threads + 2 compressed chunks (about 1 MiB each)
 * plus 2 MiB of scratch per thread, whatever the field's size: at 16 threads
 * about 70 MiB. A larger window would only help if compression times varied
 * by more than a window's worth of chunks, which chunks of one field do not.
 */
#include <hdf5.h>
#include <stdint.h>

#include "compress.h"

/* The kernel's writeback is started every this many bytes written. Small
 * enough that a checkpoint of tens of MB (the letters demo's: 18-20 MB)
 * reaches the disk while it is still being compressed, instead of all at
 * its fsync. */
enum { CHUNK_WRITEBACK_BYTES = 4 << 20 };

typedef struct chunk_stream_result {
    size_t stored_bytes;      /* chunk bytes written */
    double compress_seconds;  /* summed over threads: compression work */
    int threads;
} chunk_stream_result;

/* Writes every chunk of field into dset (chunked like plan, filters set to
 * match codec and shuffle); fd: the file's descriptor for writeback hints, or
 * -1. crcs[c]: CRC-32 of chunk c's raw bytes. Returns HEAT_OK or a runtime
 * error naming path. */
int chunk_stream_write(const char *path, hid_t dset, int fd, const chunk_plan *plan, const void *field,
                       chunk_codec codec, int shuffle, uint32_t *crcs, chunk_stream_result *result);

/* The same pipeline with another destination: every chunk of field,
 * compressed, goes to put(context, chunk number, data) in chunk order on the
 * calling thread (a rank's writer sending its part to the root). */
int chunk_stream_each(const chunk_plan *plan, const void *field, chunk_codec codec, int shuffle, uint32_t *crcs,
                      int (*put)(void *context, int chunk, const chunk_data *data), void *context,
                      chunk_stream_result *result);
