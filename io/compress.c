#include "compress.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#ifdef HEATSOLVE_ISAL
#include <isa-l/crc.h>
#include <isa-l/igzip_lib.h>
#endif

enum { CHUNK_TARGET_BYTES = 1 << 20 };

/* Planes per chunk when a chunk holds whole planes: a power of two up to 16,
 * so that chunks never straddle the z slabs of a decomposition (ranks own
 * whole reduction bricks, powers of two of at least 16 planes) and each rank
 * can compress its own (io/ckpt_parts.h). */
static int planes_per_chunk(long rows, int ny)
{
    long planes = rows / ny;
    int p = 1;
    while (p * 2 <= planes && p * 2 <= 16) p *= 2;
    return p;
}

chunk_plan chunk_plan_make(const int dims[3], size_t elem)
{
    long row = (long)dims[2] * (long)elem;
    long rows = CHUNK_TARGET_BYTES / row > 0 ? CHUNK_TARGET_BYTES / row : 1;
    int chunk[3] = {rows >= dims[1] ? planes_per_chunk(rows, dims[1]) : 1, rows >= dims[1] ? dims[1] : (int)rows,
                    dims[2]};
    if (chunk[0] > dims[0]) chunk[0] = dims[0];
    return chunk_plan_with(dims, chunk, elem);
}

chunk_plan chunk_plan_with(const int dims[3], const int chunk[3], size_t elem)
{
    chunk_plan p;
    memcpy(p.dims, dims, sizeof p.dims);
    memcpy(p.chunk, chunk, sizeof p.chunk);
    p.elem = elem;
    p.count[0] = (dims[0] + p.chunk[0] - 1) / p.chunk[0];
    p.count[1] = (dims[1] + p.chunk[1] - 1) / p.chunk[1];
    p.raw_bytes = (size_t)p.chunk[0] * p.chunk[1] * p.chunk[2] * elem;
    p.source_elem = elem;
    return p;
}

chunk_plan chunk_plan_from_doubles(chunk_plan plan)
{
    plan.source_elem = sizeof(double);
    return plan;
}

int chunk_plan_total(const chunk_plan *p) { return p->count[0] * p->count[1]; }

void chunk_plan_offset(const chunk_plan *p, int c, unsigned long long offset[3])
{
    offset[0] = (unsigned long long)(c / p->count[1]) * p->chunk[0];
    offset[1] = (unsigned long long)(c % p->count[1]) * p->chunk[1];
    offset[2] = 0;
}

/* One row of doubles as float32 (frames): what (float) does, value by value. */
static void row_to_float(float *restrict out, const double *restrict in, int n)
{
#pragma omp simd
    for (int i = 0; i < n; ++i) out[i] = (float)in[i];
}

/* Copies chunk c of the field into raw (zero padding past the field's edge),
 * converting where the plan says so, or, with `scatter`, raw back into the
 * field (never converted). */
static void chunk_copy(const chunk_plan *p, int c, unsigned char *raw, unsigned char *field, int scatter)
{
    unsigned long long off[3];
    chunk_plan_offset(p, c, off);
    size_t row = (size_t)p->chunk[2] * p->elem;
    int partial = off[0] + (unsigned long long)p->chunk[0] > (unsigned long long)p->dims[0] ||
                  off[1] + (unsigned long long)p->chunk[1] > (unsigned long long)p->dims[1];
    if (!scatter && partial) memset(raw, 0, p->raw_bytes); /* the padding past the field's edge */
    for (int z = 0; z < p->chunk[0] && off[0] + z < (unsigned long long)p->dims[0]; ++z)
        for (int y = 0; y < p->chunk[1] && off[1] + y < (unsigned long long)p->dims[1]; ++y) {
            unsigned char *f = field + (((off[0] + z) * p->dims[1] + off[1] + y) * p->dims[2]) * p->source_elem;
            unsigned char *r = raw + ((size_t)z * p->chunk[1] + y) * row;
            if (!scatter && p->source_elem != p->elem) row_to_float((float *)r, (const double *)f, p->chunk[2]);
            else if (scatter) memcpy(f, r, row);
            else memcpy(r, f, row);
        }
}

/* Chunk c's bytes in place in the field, when they lie there contiguously as
 * one full chunk (whole x rows, and whole y planes unless one row deep);
 * NULL otherwise. Compressing from there skips a copy of the whole field. */
static const unsigned char *chunk_in_place(const chunk_plan *p, int c, const unsigned char *field)
{
    unsigned long long off[3];
    chunk_plan_offset(p, c, off);
    int whole_rows = p->chunk[2] == p->dims[2] && (p->chunk[0] == 1 || p->chunk[1] == p->dims[1]);
    if (p->source_elem != p->elem) return NULL; /* converted as it is gathered */
    int inside = off[0] + (unsigned long long)p->chunk[0] <= (unsigned long long)p->dims[0] &&
                 off[1] + (unsigned long long)p->chunk[1] <= (unsigned long long)p->dims[1];
    if (!whole_rows || !inside) return NULL;
    return field + ((off[0] * p->dims[1] + off[1]) * p->dims[2]) * p->elem;
}

/* HDF5's shuffle: byte b of every value goes to block b (values `first`
 * onwards, one byte at a time). */
static void shuffle_plain(const unsigned char *in, unsigned char *out, size_t values, size_t elem, size_t first,
                          int inverse)
{
    for (size_t v = first; v < values; ++v)
        for (size_t b = 0; b < elem; ++b) {
            if (inverse) out[v * elem + b] = in[b * values + v];
            else out[b * values + v] = in[v * elem + b];
        }
}

/* The same in blocks of 64 values through a local tile of known shape, which
 * the compiler vectorises (several times faster than the plain loop); the
 * plane pointers of `out` would otherwise need more run-time alias checks
 * than it makes. */
enum { SHUFFLE_TILE = 64, SHUFFLE_MAX_ELEM = 8 };

static inline __attribute__((always_inline)) void shuffle_tiled(const unsigned char *in, unsigned char *out,
                                                                size_t values, size_t elem, int inverse)
{
    unsigned char tile[SHUFFLE_MAX_ELEM][SHUFFLE_TILE];
    size_t v = 0;
    for (; v + SHUFFLE_TILE <= values; v += SHUFFLE_TILE) {
        if (inverse) {
            for (size_t b = 0; b < elem; ++b) memcpy(tile[b], in + b * values + v, SHUFFLE_TILE);
            for (size_t k = 0; k < SHUFFLE_TILE; ++k)
                for (size_t b = 0; b < elem; ++b) out[(v + k) * elem + b] = tile[b][k];
        } else {
            for (size_t k = 0; k < SHUFFLE_TILE; ++k)
                for (size_t b = 0; b < elem; ++b) tile[b][k] = in[(v + k) * elem + b];
            for (size_t b = 0; b < elem; ++b) memcpy(out + b * values + v, tile[b], SHUFFLE_TILE);
        }
    }
    shuffle_plain(in, out, values, elem, v, inverse);
}

static void shuffle_bytes(const unsigned char *in, unsigned char *out, size_t n, size_t elem, int inverse)
{
    if (elem == 8) shuffle_tiled(in, out, n / 8, 8, inverse); /* constant sizes: vectorised */
    else if (elem == 4) shuffle_tiled(in, out, n / 4, 4, inverse);
    else shuffle_plain(in, out, n / elem, elem, 0, inverse);
}

#ifndef HEATSOLVE_ISAL
/* A byte plane whose bytes look random: sampled order-0 entropy above 7.9
 * bits a byte and under 2% of bytes equal to their predecessor. Huffman
 * coding could then save at most 1.3% and Z_RLE's runs less still, so the
 * plane is worth storing, not deflating. The low six byte planes of an evolved
 * double field are like this: storing them keeps the ratio and makes the
 * chunk's deflate several times faster. */
static int plane_looks_random(const unsigned char *plane, size_t n)
{
    enum { SAMPLE_STRIDE = 8 }; /* 16k samples of a 1 MiB chunk's double plane */
    size_t counts[256] = {0}, sampled = 0, repeats = 0;
    for (size_t i = 0; i + 1 < n; i += SAMPLE_STRIDE, ++sampled) {
        ++counts[plane[i]];
        repeats += plane[i + 1] == plane[i];
    }
    double bits = 0;
    for (int b = 0; b < 256; ++b)
        if (counts[b]) bits -= (double)counts[b] / sampled * log2((double)counts[b] / sampled);
    return bits > 7.9 && (double)repeats < 0.02 * (double)sampled;
}
#endif

/* ---- the deflate engine ------------------------------------------------------------------------
 * Every stream is a zlib stream (header, deflate data, Adler-32): what HDF5's
 * deflate filter writes and reads. ISA-L's igzip writes it several times
 * faster than zlib at level 1 for about the same ratio; zlib stays as the
 * fallback where ISA-L is not installed. */

const char *chunk_engine_name(void)
{
#ifdef HEATSOLVE_ISAL
    return "ISA-L igzip";
#else
    return "zlib";
#endif
}

uint32_t chunk_crc32_update(uint32_t crc, const void *bytes, size_t len)
{
#ifdef HEATSOLVE_ISAL
    return crc32_gzip_refl(crc, (const unsigned char *)bytes, (uint64_t)len); /* the same CRC-32 as zlib's */
#else
    for (size_t at = 0; at < len; at += 1u << 30) /* in pieces zlib's uInt can count */
        crc = (uint32_t)crc32(crc, (const Bytef *)bytes + at, (uInt)(len - at < (1u << 30) ? len - at : 1u << 30));
    return crc;
#endif
}

uint32_t chunk_crc32(const void *bytes, size_t len) { return chunk_crc32_update(0, bytes, len); }

uint32_t chunk_crc32_parallel(const void *bytes, size_t len)
{
    enum { PIECE = 16 << 20 };
    long pieces = (long)((len + PIECE - 1) / PIECE);
    if (pieces <= 1) return chunk_crc32(bytes, len);
    uint32_t *crcs = malloc(sizeof *crcs * (size_t)pieces);
    if (!crcs) return chunk_crc32(bytes, len);
#pragma omp parallel for schedule(dynamic)
    for (long p = 0; p < pieces; ++p) {
        size_t at = (size_t)p * PIECE, n = len - at < PIECE ? len - at : PIECE;
        crcs[p] = chunk_crc32((const unsigned char *)bytes + at, n);
    }
    uint32_t crc = crcs[0];
    for (long p = 1; p < pieces; ++p) {
        size_t at = (size_t)p * PIECE, n = len - at < PIECE ? len - at : PIECE;
        crc = (uint32_t)crc32_combine(crc, crcs[p], (z_off_t)n); /* zlib's combine: the same CRC-32 */
    }
    free(crcs);
    return crc;
}

#ifdef HEATSOLVE_ISAL
/* ISA-L has levels 0-3; heatsolve's 1-5 map onto 2 and 6-9 onto 3. ISA-L's
 * level 1 (an 8K-entry hash) compresses no faster than level 2 (32K) on the
 * letters fields and writes slightly larger files. */
static int isal_level(int level) { return level <= 5 ? 2 : 3; }

static const size_t level_buf_size[4] = {ISAL_DEF_LVL0_DEFAULT, ISAL_DEF_LVL1_DEFAULT, ISAL_DEF_LVL2_DEFAULT,
                                         ISAL_DEF_LVL3_DEFAULT};

/* ISA-L's level buffer (hash table and tokens) for any level heatsolve uses:
 * part of each thread's work area, allocated with it: allocated for every
 * chunk, its pages would come back from the kernel freshly zeroed each
 * time, slowing the compression stage. */
static size_t deflate_work_bytes(void) { return level_buf_size[isal_level(9)]; }

static int deflate_buffer(const unsigned char *src, size_t len, size_t planes, chunk_codec codec,
                          unsigned char *level_buf, chunk_data *out)
{
    /* The chunk in one piece: deflating it plane by plane, with random-looking planes stored,
     * makes files slightly smaller but checkpoints no faster (docs/PERFORMANCE.md, ideas not kept). */
    (void)planes;
    int level = isal_level(codec.level);
    /* Zeroed first: isal_deflate_stateless_init leaves fields such as
     * hist_bits (the window) as they are, and stack garbage there shrinks
     * the window on some threads, making their chunks much larger. */
    struct isal_zstream z = {0};
    isal_deflate_stateless_init(&z);
    z.level = (uint32_t)level;
    z.level_buf = level_buf, z.level_buf_size = (uint32_t)level_buf_size[level];
    z.gzip_flag = IGZIP_ZLIB;
    z.end_of_stream = 1;
    z.flush = NO_FLUSH;
    z.next_in = (uint8_t *)src, z.avail_in = (uint32_t)len;
    z.next_out = out->bytes, z.avail_out = (uint32_t)out->size;
    int ok = isal_deflate_stateless(&z) == COMP_OK;
    out->size = z.total_out;
    out->stored_planes = 0;
    return ok;
}

static int inflate_buffer(const unsigned char *src, size_t len, unsigned char *dst, size_t dst_len)
{
    struct inflate_state st; /* isal_inflate_init sets every field that inflate reads (hist_bits too) */
    isal_inflate_init(&st);
    st.crc_flag = ISAL_ZLIB;
    st.next_in = (uint8_t *)src, st.avail_in = (uint32_t)len;
    st.next_out = dst, st.avail_out = (uint32_t)dst_len;
    return isal_inflate_stateless(&st) == ISAL_DECOMP_OK && st.total_out == dst_len;
}
#else
static size_t deflate_work_bytes(void) { return 0; } /* zlib allocates its own state */

/* With Z_RLE a shuffled chunk goes plane by plane (`planes` > 1): the planes
 * that look random in stored blocks, the others deflated. Any inflate reads
 * the mixed blocks; with the default strategy every plane is deflated, as its
 * longer matches can find structure that the sample cannot see. */
static int deflate_buffer(const unsigned char *src, size_t len, size_t planes, chunk_codec codec,
                          unsigned char *unused, chunk_data *out)
{
    (void)unused;
    z_stream z;
    memset(&z, 0, sizeof z);
    int strategy = codec.rle ? Z_RLE : Z_DEFAULT_STRATEGY;
    if (deflateInit2(&z, codec.level, Z_DEFLATED, 15, 8, strategy) != Z_OK) return 0;
    if (!codec.rle) planes = 1;
    size_t plane_bytes = len / planes;
    z.next_in = (Bytef *)src;
    z.next_out = out->bytes, z.avail_out = (uInt)out->size;
    int ok = 1;
    out->stored_planes = 0;
    for (size_t b = 0; ok && b < planes; ++b) {
        int last = b + 1 == planes;
        const unsigned char *plane = src + b * plane_bytes;
        size_t n = last ? len - b * plane_bytes : plane_bytes;
        int store = planes > 1 && plane_looks_random(plane, n);
        out->stored_planes += store;
        ok = deflateParams(&z, store ? 0 : codec.level, store ? Z_DEFAULT_STRATEGY : strategy) == Z_OK;
        z.avail_in += (uInt)n;
        ok = ok && deflate(&z, last ? Z_FINISH : Z_NO_FLUSH) == (last ? Z_STREAM_END : Z_OK);
    }
    out->size = z.total_out;
    deflateEnd(&z);
    return ok;
}

static int inflate_buffer(const unsigned char *src, size_t len, unsigned char *dst, size_t dst_len)
{
    uLongf size = (uLongf)dst_len;
    return uncompress(dst, &size, src, (uLong)len) == Z_OK && size == dst_len;
}
#endif

size_t chunk_work_bytes(const chunk_plan *p) { return 2 * p->raw_bytes + deflate_work_bytes(); }

size_t chunk_bound(const chunk_plan *p, chunk_codec codec)
{
    /* Both engines fall back to stored blocks: 5 bytes per 64 KiB block plus header and trailer. */
    return codec.level > 0 ? compressBound((uLong)p->raw_bytes) + 64 : p->raw_bytes;
}

int chunk_compress(const chunk_plan *p, const void *field, int c, chunk_codec codec, int shuffle,
                   unsigned char *work, chunk_data *out)
{
    const unsigned char *src = chunk_in_place(p, c, field);
    unsigned char *gather = codec.level == 0 ? out->bytes : work; /* level 0 stores what it gathers */
    if (!src) chunk_copy(p, c, gather, (unsigned char *)field, 0), src = gather;
    out->crc = chunk_crc32(src, p->raw_bytes);
    out->stored_planes = 0;
    if (codec.level == 0) {
        out->data = src, out->size = p->raw_bytes;
        return 1;
    }
    const unsigned char *input = src;
    if (shuffle) shuffle_bytes(src, work + p->raw_bytes, p->raw_bytes, p->elem, 0), input = work + p->raw_bytes;
    out->size = chunk_bound(p, codec);
    out->data = out->bytes;
    return deflate_buffer(input, p->raw_bytes, shuffle ? p->elem : 1, codec, work + 2 * p->raw_bytes, out);
}

/* Compresses one raw chunk into a new buffer; returns 0 on failure. work:
 * chunk_work_bytes, laid out as chunk_compress's (raw may be its first part). */
static int compress_one(const chunk_plan *p, const unsigned char *raw, unsigned char *work, chunk_codec codec,
                        int shuffle, chunk_data *out)
{
    const unsigned char *src = raw;
    if (shuffle) shuffle_bytes(raw, work + p->raw_bytes, p->raw_bytes, p->elem, 0), src = work + p->raw_bytes;
    size_t bound = chunk_bound(p, codec);
    out->bytes = malloc(bound);
    out->data = out->bytes;
    if (!out->bytes) return 0;
    if (codec.level == 0) {
        memcpy(out->bytes, raw, p->raw_bytes);
        out->size = p->raw_bytes;
        return 1;
    }
    out->size = bound;
    return deflate_buffer(src, p->raw_bytes, shuffle ? p->elem : 1, codec, work + 2 * p->raw_bytes, out);
}

int chunk_should_shuffle(const chunk_plan *p, const void *field, chunk_codec codec)
{
    return chunk_should_shuffle_at(p, field, chunk_plan_total(p) / 2, codec);
}

int chunk_should_shuffle_at(const chunk_plan *p, const void *field, int sample, chunk_codec codec)
{
    if (codec.level == 0 || p->elem == 1) return 0;
    unsigned char *work = malloc(chunk_work_bytes(p));
    chunk_data plain = {0}, shuffled = {0};
    int use = 0;
    if (work) {
        chunk_copy(p, sample, work, (unsigned char *)field, 0);
        if (compress_one(p, work, work, codec, 0, &plain) && compress_one(p, work, work, codec, 1, &shuffled))
            use = shuffled.size < plain.size;
    }
    free(plain.bytes), free(shuffled.bytes), free(work);
    return use;
}

int chunks_compress(const chunk_plan *p, const void *field, chunk_codec codec, int shuffle, chunk_data *chunks)
{
    int total = chunk_plan_total(p), failed = 0;
#pragma omp parallel reduction(+ : failed)
    {
        unsigned char *work = malloc(chunk_work_bytes(p));
        if (!work) failed = 1;
#pragma omp for schedule(dynamic)
        for (int c = 0; c < total; ++c) {
            chunks[c].bytes = NULL, chunks[c].stored_planes = 0;
            if (!work) continue;
            const unsigned char *src = chunk_in_place(p, c, field);
            if (!src) chunk_copy(p, c, work, (unsigned char *)field, 0), src = work;
            chunks[c].crc = chunk_crc32(src, p->raw_bytes);
            if (!compress_one(p, src, work, codec, shuffle, &chunks[c])) ++failed;
        }
        free(work);
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
            unsigned char *dst = shuffle ? scratch : raw;
            int ok = raw && scratch;
            if (ok && compressed) ok = inflate_buffer(chunks[c].bytes, chunks[c].size, dst, p->raw_bytes);
            else if (ok) ok = chunks[c].size == p->raw_bytes && memcpy(dst, chunks[c].bytes, p->raw_bytes);
            if (ok && shuffle) shuffle_bytes(scratch, raw, p->raw_bytes, p->elem, 1);
            ok = ok && chunk_crc32(raw, p->raw_bytes) == chunks[c].crc;
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
