#pragma once
/*
 * Chunked field compression for checkpoints. The field (compact, x fastest,
 * dims nz x ny x nx) is cut into chunks of cz x cy x nx values; each chunk is
 * optionally byte-shuffled, then deflated (ISA-L, or zlib), all chunks in parallel
 * on every core (HDF5's own filter runs on one). The result is exactly what
 * HDF5's shuffle + deflate filters would store, so any HDF5 reader reads it.
 */
#include <stddef.h>
#include <stdint.h>

typedef struct chunk_plan {
    int dims[3];      /* field extent: nz, ny, nx */
    int chunk[3];     /* chunk extent: cz, cy, nx */
    int count[2];     /* chunks along z and y */
    size_t elem;      /* bytes per value */
    size_t raw_bytes; /* bytes of one full chunk, padding included */
    size_t source_elem; /* bytes per value of the field chunks are gathered from: elem, or 8 where
                         * float32 chunks (elem 4) are converted from doubles as they are gathered */
} chunk_plan;

typedef struct chunk_data {
    unsigned char *bytes; /* buffer for the compressed bytes (owned by the caller of chunk_compress) */
    const unsigned char *data; /* the bytes to store: bytes, or at level 0 the raw chunk (in the field or work) */
    size_t size;
    uint32_t crc;         /* CRC-32 of the chunk's raw (unshuffled) bytes */
    int stored_planes;    /* shuffled byte planes that looked random and went in stored blocks */
} chunk_data;

/* Chunks of about 1 MiB: enough of them to keep many cores busy. */
chunk_plan chunk_plan_make(const int dims_zyx[3], size_t elem);
/* The plan of a given chunk shape (cz, cy, nx): a file's, or a block's. */
chunk_plan chunk_plan_with(const int dims_zyx[3], const int chunk_zyx[3], size_t elem);
int chunk_plan_total(const chunk_plan *plan);
/* The same plan, gathering from a field of doubles converted to float32 (a
 * frame of a double run): the conversion happens chunk by chunk, in cache,
 * instead of in a pass over the whole field. */
chunk_plan chunk_plan_from_doubles(chunk_plan plan);
/* Offset (z, y, x) in values of chunk number c. */
void chunk_plan_offset(const chunk_plan *plan, int c, unsigned long long offset[3]);

/* How zlib compresses: level 0-9 (0 stores raw) and strategy. Z_RLE (rle = 1)
 * runs a few times faster than the default strategy on shuffled doubles for
 * a somewhat lower ratio; both are ordinary deflate streams. */
typedef struct chunk_codec {
    int level;
    int rle;
} chunk_codec;

/* "ISA-L igzip" or "zlib": the library that writes and reads the deflate streams. */
const char *chunk_engine_name(void);

/* CRC-32 (zlib's polynomial and convention) of len bytes. */
uint32_t chunk_crc32(const void *bytes, size_t len);
/* The same, computed in 16 MiB pieces on every thread and combined. */
uint32_t chunk_crc32_parallel(const void *bytes, size_t len);
/* The same, continuing from crc (0 to start). */
uint32_t chunk_crc32_update(uint32_t crc, const void *bytes, size_t len);

/* Capacity a chunk_data.bytes buffer needs for any chunk of the plan. */
size_t chunk_bound(const chunk_plan *plan, chunk_codec codec);

/* Scratch a thread needs for chunk_compress: the gathered chunk, its
 * shuffled bytes and the deflate engine's own buffer (ISA-L's hash table). */
size_t chunk_work_bytes(const chunk_plan *plan);

/* Compresses chunk c of field into out->bytes (capacity chunk_bound) and sets
 * out->data, size and crc. work: chunk_work_bytes of scratch. At level 0 no byte
 * is copied where the chunk lies contiguously in the field (out->data points
 * there); other chunks are gathered into out->bytes. Thread-safe for distinct out and work. Returns 0 on failure. */
int chunk_compress(const chunk_plan *plan, const void *field, int c, chunk_codec codec, int shuffle,
                   unsigned char *work, chunk_data *out);

/* Does shuffling improve the ratio? Compresses one sample chunk both ways:
 * the middle one, or (_at) chunk `sample`. */
int chunk_should_shuffle(const chunk_plan *plan, const void *field, chunk_codec codec);
int chunk_should_shuffle_at(const chunk_plan *plan, const void *field, int sample, chunk_codec codec);

/* Compresses every chunk of field into chunks[] (allocated by the caller,
 * chunk_plan_total entries; free with chunks_free). */
int chunks_compress(const chunk_plan *plan, const void *field, chunk_codec codec, int shuffle, chunk_data *chunks);

/* Inverse: inflates (when level > 0) and unshuffles every chunk into field,
 * checking sizes and CRCs. Returns the number of the first bad chunk + 1, 0 when all are good. */
int chunks_decompress(const chunk_plan *plan, const chunk_data *chunks, int compressed, int shuffle, void *field);

void chunks_free(chunk_data *chunks, int count);
