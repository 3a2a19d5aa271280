#include "compress.h"

#include <stdlib.h>
#include <string.h>
#include <zlib.h>

enum { CHUNK_TARGET_BYTES = 1 << 20 };

chunk_plan chunk_plan_make(const int dims[3], size_t elem)
{
    chunk_plan p;
    memcpy(p.dims, dims, sizeof p.dims);
    p.elem = elem;
    long row = (long)dims[2] * (long)elem;
    long rows = CHUNK_TARGET_BYTES / row > 0 ? CHUNK_TARGET_BYTES / row : 1;
    p.chunk[2] = dims[2];
    p.chunk[1] = rows >= dims[1] ? dims[1] : (int)rows;
    p.chunk[0] = rows >= dims[1] ? (int)(rows / dims[1]) : 1;
    if (p.chunk[0] > dims[0]) p.chunk[0] = dims[0];
    p.count[0] = (dims[0] + p.chunk[0] - 1) / p.chunk[0];
    p.count[1] = (dims[1] + p.chunk[1] - 1) / p.chunk[1];
    p.raw_bytes = (size_t)p.chunk[0] * p.chunk[1] * p.chunk[2] * elem;
    return p;
}

int chunk_plan_total(const chunk_plan *p) { return p->count[0] * p->count[1]; }

void chunk_plan_offset(const chunk_plan *p, int c, unsigned long long offset[3])
{
    offset[0] = (unsigned long long)(c / p->count[1]) * p->chunk[0];
    offset[1] = (unsigned long long)(c % p->count[1]) * p->chunk[1];
    offset[2] = 0;
}

/* Copies chunk c of the field into raw (zero padding past the field's edge)
 * or, with `scatter`, raw back into the field. */
static void chunk_copy(const chunk_plan *p, int c, unsigned char *raw, unsigned char *field, int scatter)
{
    unsigned long long off[3];
    chunk_plan_offset(p, c, off);
    size_t row = (size_t)p->chunk[2] * p->elem;
    if (!scatter) memset(raw, 0, p->raw_bytes);
    for (int z = 0; z < p->chunk[0] && off[0] + z < (unsigned long long)p->dims[0]; ++z)
        for (int y = 0; y < p->chunk[1] && off[1] + y < (unsigned long long)p->dims[1]; ++y) {
            unsigned char *f = field + (((off[0] + z) * p->dims[1] + off[1] + y) * p->dims[2]) * p->elem;
            unsigned char *r = raw + ((size_t)z * p->chunk[1] + y) * row;
            if (scatter) memcpy(f, r, row);
            else memcpy(r, f, row);
        }
}

/* HDF5's shuffle: byte b of every value goes to block b. */
static void shuffle_bytes(const unsigned char *in, unsigned char *out, size_t n, size_t elem, int inverse)
{
    size_t values = n / elem;
    for (size_t b = 0; b < elem; ++b)
        for (size_t v = 0; v < values; ++v) {
            if (inverse) out[v * elem + b] = in[b * values + v];
            else out[b * values + v] = in[v * elem + b];
        }
}

/* One zlib stream (header, deflate data, Adler-32), as HDF5's filter writes. */
static int deflate_buffer(const unsigned char *src, size_t len, chunk_codec codec, unsigned char *dst, size_t *size)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    if (deflateInit2(&z, codec.level, Z_DEFLATED, 15, 8, codec.rle ? Z_RLE : Z_DEFAULT_STRATEGY) != Z_OK) return 0;
    z.next_in = (Bytef *)src, z.avail_in = (uInt)len;
    z.next_out = dst, z.avail_out = (uInt)*size;
    int status = deflate(&z, Z_FINISH);
    *size = z.total_out;
    deflateEnd(&z);
    return status == Z_STREAM_END;
}

/* Compresses one raw chunk into out; returns 0 on failure. */
static int compress_one(const chunk_plan *p, const unsigned char *raw, unsigned char *scratch, chunk_codec codec,
                        int shuffle, chunk_data *out)
{
    const unsigned char *src = raw;
    if (shuffle) shuffle_bytes(raw, scratch, p->raw_bytes, p->elem, 0), src = scratch;
    size_t bound = codec.level > 0 ? compressBound((uLong)p->raw_bytes) : p->raw_bytes;
    out->bytes = malloc(bound);
    if (!out->bytes) return 0;
    if (codec.level == 0) {
        memcpy(out->bytes, raw, p->raw_bytes);
        out->size = p->raw_bytes;
        return 1;
    }
    out->size = bound;
    return deflate_buffer(src, p->raw_bytes, codec, out->bytes, &out->size);
}

int chunk_should_shuffle(const chunk_plan *p, const void *field, chunk_codec codec)
{
    if (codec.level == 0 || p->elem == 1) return 0;
    unsigned char *raw = malloc(p->raw_bytes), *scratch = malloc(p->raw_bytes);
    chunk_data plain = {0}, shuffled = {0};
    int use = 0;
    if (raw && scratch) {
        chunk_copy(p, chunk_plan_total(p) / 2, raw, (unsigned char *)field, 0);
        if (compress_one(p, raw, scratch, codec, 0, &plain) && compress_one(p, raw, scratch, codec, 1, &shuffled))
            use = shuffled.size < plain.size;
    }
    free(plain.bytes), free(shuffled.bytes), free(raw), free(scratch);
    return use;
}

int chunks_compress(const chunk_plan *p, const void *field, chunk_codec codec, int shuffle, chunk_data *chunks)
{
    int total = chunk_plan_total(p), failed = 0;
#pragma omp parallel reduction(+ : failed)
    {
        unsigned char *raw = malloc(p->raw_bytes), *scratch = malloc(p->raw_bytes);
        if (!raw || !scratch) failed = 1;
#pragma omp for schedule(dynamic)
        for (int c = 0; c < total; ++c) {
            chunks[c].bytes = NULL;
            if (!raw || !scratch) continue;
            chunk_copy(p, c, raw, (unsigned char *)field, 0);
            chunks[c].crc = (uint32_t)crc32(0L, raw, (uInt)p->raw_bytes);
            if (!compress_one(p, raw, scratch, codec, shuffle, &chunks[c])) ++failed;
        }
        free(raw);
        free(scratch);
    }
    return failed == 0;
}

int chunks_decompress(const chunk_plan *p, const chunk_data *chunks, int compressed, int shuffle, void *field)
{
    int total = chunk_plan_total(p), first_bad = 0;
#pragma omp parallel
    {
        unsigned char *raw = malloc(p->raw_bytes), *scratch = malloc(p->raw_bytes);
#pragma omp for schedule(dynamic)
        for (int c = 0; c < total; ++c) {
            uLongf size = (uLongf)p->raw_bytes;
            unsigned char *dst = shuffle ? scratch : raw;
            int ok = raw && scratch;
            if (ok && compressed) ok = uncompress(dst, &size, chunks[c].bytes, (uLong)chunks[c].size) == Z_OK;
            else if (ok) ok = chunks[c].size == p->raw_bytes && memcpy(dst, chunks[c].bytes, p->raw_bytes);
            ok = ok && size == p->raw_bytes;
            if (ok && shuffle) shuffle_bytes(scratch, raw, p->raw_bytes, p->elem, 1);
            ok = ok && (uint32_t)crc32(0L, raw, (uInt)p->raw_bytes) == chunks[c].crc;
            if (ok) chunk_copy(p, c, raw, field, 1);
#pragma omp critical(heat_first_bad)
            if (!ok && (first_bad == 0 || c + 1 < first_bad)) first_bad = c + 1;
        }
        free(raw);
        free(scratch);
    }
    return first_bad;
}

void chunks_free(chunk_data *chunks, int count)
{
    if (!chunks) return;
    for (int c = 0; c < count; ++c) free(chunks[c].bytes);
}
