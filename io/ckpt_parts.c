#include "ckpt_parts.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../parallel/parallel.h"
#include "../solver/error.h"
#include "chunk_stream.h"

/* Each chunk travels as one message: this header, then its stored bytes. */
typedef struct part_header {
    uint32_t crc;    /* of the chunk's raw bytes, as the file records it */
    uint32_t failed; /* 1: the sender could not compress its part; no more chunks follow */
} part_header;

int ckpt_parts_create(int ranks, int rank, const int *z_offset, const int *z_count, ckpt_parts **out)
{
    ckpt_parts *p = calloc(1, sizeof *p);
    HEAT_CHECK(p, "out of memory");
    *out = p;
    p->ranks = ranks, p->rank = rank;
    p->z_offset = malloc(sizeof(int) * (size_t)ranks), p->z_count = malloc(sizeof(int) * (size_t)ranks);
    p->received = calloc((size_t)ranks, sizeof(int)), p->ended = calloc((size_t)ranks, sizeof(int));
    HEAT_CHECK(p->z_offset && p->z_count && p->received && p->ended, "out of memory");
    memcpy(p->z_offset, z_offset, sizeof(int) * (size_t)ranks);
    memcpy(p->z_count, z_count, sizeof(int) * (size_t)ranks);
    return HEAT_OK;
}

void ckpt_parts_destroy(ckpt_parts **parts)
{
    if (!parts || !*parts) return;
    ckpt_parts *p = *parts;
    free(p->z_offset), free(p->z_count), free(p->received), free(p->ended);
    free(p);
    *parts = NULL;
}

int ckpt_parts_fit(const ckpt_parts *p, const int dims[3], size_t elem)
{
    chunk_plan whole = chunk_plan_make(dims, elem);
    for (int r = 0; r < p->ranks; ++r) {
        int end = p->z_offset[r] + p->z_count[r];
        if (p->z_offset[r] % whole.chunk[0] != 0 || (end % whole.chunk[0] != 0 && end != dims[0])) return 0;
    }
    return 1;
}

chunk_plan ckpt_parts_plan(const ckpt_parts *p, const chunk_plan *whole, int rank, int *first)
{
    int dims[3] = {p->z_count[rank], whole->dims[1], whole->dims[2]};
    *first = p->z_offset[rank] / whole->chunk[0] * whole->count[1];
    chunk_plan mine = chunk_plan_with(dims, whole->chunk, whole->elem);
    mine.source_elem = whole->source_elem;
    return mine;
}

/* The rank whose slab holds chunk c. */
static int owner_of(const ckpt_parts *p, const chunk_plan *whole, int c)
{
    int plane = c / whole->count[1] * whole->chunk[0];
    for (int r = 0; r < p->ranks; ++r)
        if (plane < p->z_offset[r] + p->z_count[r]) return r;
    return p->ranks - 1;
}

int ckpt_parts_shuffle(const ckpt_parts *p, const chunk_plan *whole, const void *slab, chunk_codec codec, int *shuffle)
{
    int sample = chunk_plan_total(whole) / 2, owner = owner_of(p, whole, sample), first = 0;
    *shuffle = 0;
    if (p->rank == owner && slab) { /* without its slab (a failed frame conversion) it still answers */
        chunk_plan mine = ckpt_parts_plan(p, whole, owner, &first);
        *shuffle = chunk_should_shuffle_at(&mine, slab, sample - first, codec);
    }
    return par_part_broadcast(shuffle, sizeof *shuffle, owner);
}

/* ---- the other ranks: compress and send ------------------------------------------------------------ */

void ckpt_parts_compressed(const ckpt_parts *p)
{
    if (p->compressed) p->compressed(p->compressed_context);
}

/* Each chunk leaves as soon as it is compressed, without waiting for the
 * root to take it: the root compresses its own slab meanwhile (a send that
 * waited would put the ranks' compression one after the other). */
static int post_chunk(void *context, int chunk, const chunk_data *data)
{
    (void)context, (void)chunk;
    part_header h = {data->crc, 0};
    unsigned char *message = malloc(sizeof h + data->size);
    HEAT_CHECK(message, "out of memory for a %zu-byte checkpoint chunk", data->size);
    memcpy(message, &h, sizeof h);
    memcpy(message + sizeof h, data->data, data->size);
    return par_part_post(message, sizeof h + data->size);
}

int ckpt_parts_send(const ckpt_parts *p, const chunk_plan *whole, const void *slab, chunk_codec codec, int shuffle)
{
    int first = 0;
    chunk_plan mine = ckpt_parts_plan(p, whole, p->rank, &first);
    uint32_t *crcs = malloc(sizeof *crcs * (size_t)chunk_plan_total(&mine));
    chunk_stream_result result;
    int status = !slab ? HEAT_ERR_RUNTIME /* reported by the caller */
                 : crcs ? chunk_stream_each(&mine, slab, codec, shuffle, crcs, post_chunk, NULL, &result)
                        : heat_error(HEAT_ERR_RUNTIME, "out of memory for this rank's checkpoint part");
    free(crcs);
    ckpt_parts_compressed(p);
    int posted = par_part_posted_wait();
    if (status == HEAT_OK) status = posted;
    if (status != HEAT_OK) { /* the root stops waiting for this part */
        part_header failed = {0, 1};
        par_part_send(&failed, sizeof failed);
    }
    return status;
}

/* ---- the root: receive and write ------------------------------------------------------------------- */

void ckpt_parts_begin(ckpt_parts *p)
{
    memset(p->received, 0, sizeof(int) * (size_t)p->ranks);
    memset(p->ended, 0, sizeof(int) * (size_t)p->ranks);
    p->ended[0] = 1; /* the root's own chunks go straight to the file */
}

/* The next chunk of rank r into buffer; *failed when r reported a failure
 * (its part ends there). */
static int take_chunk(ckpt_parts *p, const chunk_plan *whole, int r, unsigned char *buffer, size_t capacity,
                      size_t *size, int *failed)
{
    int first = 0;
    chunk_plan theirs = ckpt_parts_plan(p, whole, r, &first);
    HEAT_CALL(par_part_receive(r, buffer, capacity, size));
    part_header h;
    if (*size < sizeof h) return heat_error(HEAT_ERR_RUNTIME, "rank %d sent a damaged checkpoint part", r);
    memcpy(&h, buffer, sizeof h);
    *failed = h.failed != 0;
    if (*failed || ++p->received[r] == chunk_plan_total(&theirs)) p->ended[r] = 1;
    return HEAT_OK;
}

static int write_received(const char *path, hid_t dset, const chunk_plan *whole, int c, const unsigned char *bytes,
                          size_t size)
{
    unsigned long long off[3];
    chunk_plan_offset(whole, c, off);
    hsize_t offset[3] = {off[0], off[1], off[2]};
    errno = 0;
    if (H5Dwrite_chunk(dset, H5P_DEFAULT, 0, offset, size, bytes) >= 0) return HEAT_OK;
    int saved = errno;
    return heat_error(HEAT_ERR_RUNTIME, "cannot write %s: %s", path,
                      saved ? strerror(saved) : "HDF5 call H5Dwrite_chunk failed");
}

int ckpt_parts_receive(ckpt_parts *p, const char *path, hid_t dset, const chunk_plan *whole, chunk_codec codec,
                       uint32_t *crcs, size_t *stored)
{
    size_t capacity = sizeof(part_header) + chunk_bound(whole, codec);
    unsigned char *buffer = malloc(capacity);
    HEAT_CHECK(buffer, "out of memory for receiving checkpoint parts");
    int status = HEAT_OK;
    *stored = 0;
    for (int r = 1; r < p->ranks && status == HEAT_OK; ++r) {
        int first = 0;
        ckpt_parts_plan(p, whole, r, &first);
        while (!p->ended[r] && status == HEAT_OK) {
            size_t size = 0;
            int failed = 0, c = first + p->received[r];
            status = take_chunk(p, whole, r, buffer, capacity, &size, &failed);
            if (status == HEAT_OK && failed)
                status = heat_error(HEAT_ERR_RUNTIME, "%s: rank %d could not compress its part of the field", path, r);
            if (status != HEAT_OK) break;
            part_header h;
            memcpy(&h, buffer, sizeof h);
            crcs[c] = h.crc;
            *stored += size - sizeof h;
            status = write_received(path, dset, whole, c, buffer + sizeof h, size - sizeof h);
        }
    }
    free(buffer);
    return status;
}

void ckpt_parts_drain(ckpt_parts *p, const chunk_plan *whole, chunk_codec codec)
{
    size_t capacity = sizeof(part_header) + chunk_bound(whole, codec);
    unsigned char *buffer = malloc(capacity);
    for (int r = 1; r < p->ranks && buffer; ++r)
        while (!p->ended[r]) {
            size_t size = 0;
            int failed = 0;
            if (take_chunk(p, whole, r, buffer, capacity, &size, &failed) != HEAT_OK) break; /* MPI itself failed */
        }
    free(buffer);
}

/* ---- the quick-look slice ------------------------------------------------------------------------ */

int ckpt_parts_slice(const ckpt_parts *p, const int dims[3], heat_precision precision, const png_slice *slice,
                     const void *slab, double *plane)
{
    int n[3] = {dims[0], dims[1], dims[2]}; /* the plane: the whole grid, one point thick along the slice's axis */
    n[slice->axis] = 1;
    memset(plane, 0, sizeof *plane * (size_t)n[0] * n[1] * n[2]);
    int z0 = p->z_offset[p->rank];
    int lo[3] = {0, 0, z0}, hi[3] = {dims[0], dims[1], z0 + p->z_count[p->rank]}; /* this slab, in whole-grid points */
    if (slice->index < lo[slice->axis] || slice->index >= hi[slice->axis]) lo[0] = hi[0]; /* no piece here */
    else lo[slice->axis] = slice->index, hi[slice->axis] = slice->index + 1;
    for (int z = lo[2]; z < hi[2]; ++z)
        for (int y = lo[1]; y < hi[1]; ++y)
            for (int x = lo[0]; x < hi[0]; ++x) {
                int at[3] = {x, y, z};
                at[slice->axis] = 0;
                long from = ((long)(z - z0) * dims[1] + y) * dims[0] + x;
                double t = precision == HEAT_FLOAT ? ((const float *)slab)[from] : ((const double *)slab)[from];
                plane[((long)at[2] * n[1] + at[1]) * n[0] + at[0]] = t;
            }
    return par_part_sum_to_root(plane, (long)n[0] * n[1] * n[2]);
}
