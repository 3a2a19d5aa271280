#include "checkpoint.h"

#include <errno.h>
#include <fcntl.h>
#include <hdf5.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "../solver/clock.h"
#include "../solver/error.h"
#include "compress.h"
#include "../solver/implicit.h"
#include "chunk_stream.h"
#include "ckpt_materials.h"
#include "ckpt_parts.h"
#include "fsutil.h"

#ifndef HEATSOLVE_VERSION
#define HEATSOLVE_VERSION "unknown"
#endif

/* Every HDF5 handle opened by one operation, closed together on any exit. */
typedef struct h5_scope {
    hid_t ids[24];
    herr_t (*close[24])(hid_t);
    int count;
    const char *path; /* file being read or written, for messages */
} h5_scope;

/* Returns id, recorded so that h5_scope_close closes it with `close`; a failed call's id (< 0) is not recorded. */
static hid_t h5_scope_keep(h5_scope *s, hid_t id, herr_t (*close)(hid_t))
{
    if (id >= 0 && s->count < 24) s->ids[s->count] = id, s->close[s->count++] = close;
    return id;
}

static void h5_scope_close(h5_scope *s)
{
    while (s->count > 0) --s->count, s->close[s->count](s->ids[s->count]);
}

static int h5_failed(const h5_scope *s, const char *call)
{
    int saved = errno;
    if (saved) return heat_error(HEAT_ERR_RUNTIME, "%s: HDF5 call %s failed: %s", s->path, call, strerror(saved));
    return heat_error(HEAT_ERR_RUNTIME, "%s: HDF5 call %s failed", s->path, call);
}

/* Checks an HDF5 call that returns a negative value on failure. */
#define H5TRY(scope, call)                                                                                   \
    do {                                                                                                     \
        if ((call) < 0) return h5_failed((scope), #call);                                                    \
    } while (0)

static void quiet_hdf5(void)
{
    /* A file whose write failed cannot always be closed (HDF5 1.10 keeps
     * failing to flush it); HDF5's exit handler would then crash on it. Before
     * the library's first use: no exit handler (the file was removed anyway). */
    static int first = 1;
    if (first) H5dont_atexit(), first = 0;
    /* heatsolve reports HDF5 failures itself, with the file and the call. */
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
}

/* ---- whole-file checksum in the HDF5 user block ------------------------------------------------
 * The first 512 bytes of every checkpoint are an HDF5 user block, which HDF5
 * readers (ParaView too) skip. heatsolve writes there a text header with the
 * CRC-32 and length of the rest of the file, and checks it before HDF5 parses
 * a single byte: HDF5 1.10 itself can crash on damaged files (a fuzzer found
 * a heap-use-after-free in its attribute parsing), so it only ever sees files
 * whose bytes are exactly the ones heatsolve wrote. */
enum { USER_BLOCK = 512 };
static const char user_block_magic[] = "HEATSOLVE CHECKPOINT\n";

/* CRC-32 of everything after the user block. */
static unsigned long body_crc(const unsigned char *image, size_t size)
{
    return chunk_crc32_parallel(image + USER_BLOCK, size - USER_BLOCK);
}

/* Returns 1 when image carries heatsolve's header and its CRC matches. */
static int image_sealed(const unsigned char *image, size_t size, int *has_magic)
{
    *has_magic = size >= USER_BLOCK && memcmp(image, user_block_magic, sizeof user_block_magic - 1) == 0;
    if (!*has_magic) return 0;
    char header[USER_BLOCK + 1];
    memcpy(header, image, USER_BLOCK);
    header[USER_BLOCK] = '\0';
    unsigned long crc_stored = 0;
    size_t bytes = 0;
    if (sscanf(header + sizeof user_block_magic - 1, "crc32 %lx\nbytes %zu", &crc_stored, &bytes) != 2) return 0;
    if (bytes != size - USER_BLOCK) return 0;
    return body_crc(image, size) == crc_stored;
}

void ckpt_path(char *buf, size_t len, const char *dir, const char *name, long step)
{
    snprintf(buf, len, "%s/%s_%06ld.hdf", dir, name, step);
}

/* ---- writing ---------------------------------------------------------------------------------- */

static int write_attr_in(h5_scope *s, hid_t loc, const char *name, hid_t type, int rank, hsize_t n,
                         const void *data)
{
    hid_t space = h5_scope_keep(s, rank ? H5Screate_simple(1, &n, NULL) : H5Screate(H5S_SCALAR), H5Sclose);
    H5TRY(s, space);
    hid_t attr = h5_scope_keep(s, H5Acreate2(loc, name, type, space, H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
    H5TRY(s, attr);
    H5TRY(s, H5Awrite(attr, type, data));
    return HEAT_OK;
}

/* Attribute handles are closed at once: a file only closes when nothing in it is open. */
static int write_attr(h5_scope *s, hid_t loc, const char *name, hid_t type, int rank, hsize_t n, const void *data)
{
    h5_scope local = {.path = s->path};
    int status = write_attr_in(&local, loc, name, type, rank, n, data);
    h5_scope_close(&local);
    return status;
}

/* Fixed-length ASCII string of exactly strlen(text) bytes (ParaView wants "ImageData" as 9 bytes). */
static int write_string_attr(h5_scope *s, hid_t loc, const char *name, const char *text)
{
    h5_scope local = {.path = s->path};
    hid_t type = h5_scope_keep(&local, H5Tcopy(H5T_C_S1), H5Tclose);
    int status = type < 0 || H5Tset_size(type, strlen(text) > 0 ? strlen(text) : 1) < 0 ||
                         H5Tset_strpad(type, H5T_STR_NULLPAD) < 0
                     ? h5_failed(s, "H5Tcopy/H5Tset_size")
                     : write_attr(s, loc, name, type, 0, 1, text);
    h5_scope_close(&local);
    return status;
}

static int write_vtkhdf_group(h5_scope *s, hid_t file, const ckpt_meta *m)
{
    hid_t vtk = h5_scope_keep(s, H5Gcreate2(file, "VTKHDF", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Gclose);
    H5TRY(s, vtk);
    int version[2] = {1, 0};
    int extent[6] = {0, m->grid.n[0] - 1, 0, m->grid.n[1] - 1, 0, m->grid.n[2] - 1};
    double origin[3], direction[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
    for (int d = 0; d < 3; ++d) origin[d] = 0.5 * m->grid.h[d]; /* cell-centred points */
    HEAT_CALL(write_attr(s, vtk, "Version", H5T_NATIVE_INT, 1, 2, version));
    HEAT_CALL(write_string_attr(s, vtk, "Type", "ImageData"));
    HEAT_CALL(write_attr(s, vtk, "WholeExtent", H5T_NATIVE_INT, 1, 6, extent));
    HEAT_CALL(write_attr(s, vtk, "Origin", H5T_NATIVE_DOUBLE, 1, 3, origin));
    HEAT_CALL(write_attr(s, vtk, "Spacing", H5T_NATIVE_DOUBLE, 1, 3, m->grid.h));
    HEAT_CALL(write_attr(s, vtk, "Direction", H5T_NATIVE_DOUBLE, 1, 9, direction));
    H5TRY(s, h5_scope_keep(s, H5Gcreate2(vtk, "PointData", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Gclose));
    return HEAT_OK;
}

/* The time scheme and the CG settings that produced the field. */
static int write_scheme(h5_scope *s, hid_t g, const heat_implicit *im)
{
    HEAT_CALL(write_string_attr(s, g, "scheme", heat_scheme_name(im->scheme)));
    HEAT_CALL(write_string_attr(s, g, "solver_preconditioner", heat_preconditioner_name(im->preconditioner)));
    HEAT_CALL(write_attr(s, g, "solver_rtol", H5T_NATIVE_DOUBLE, 0, 1, &im->rtol));
    HEAT_CALL(write_attr(s, g, "solver_max_iterations", H5T_NATIVE_INT, 0, 1, &im->max_iterations));
    return write_attr(s, g, "solver_chebyshev_degree", H5T_NATIVE_INT, 0, 1, &im->chebyshev_degree);
}

/* A materials run's energy balance (solver/materials.h): the energy in since
 * t = 0 by kind (sources, dirichlet, convective, flux), so that a restarted
 * run goes on with the same sums and history rows as one that never stopped:
 * /restart attr energy_in, double[4]. Files without it restart from 0. */
static const char ENERGY_ATTRIBUTE[] = "energy_in";

static int write_energy(hid_t restart, const char *path, const double energy_in[4])
{
    hsize_t count = 4;
    hid_t space = H5Screate_simple(1, &count, NULL);
    if (space < 0) return heat_error(HEAT_ERR_RUNTIME, "%s: cannot describe /restart/%s", path, ENERGY_ATTRIBUTE);
    hid_t attr = H5Acreate2(restart, ENERGY_ATTRIBUTE, H5T_IEEE_F64LE, space, H5P_DEFAULT, H5P_DEFAULT);
    herr_t written = attr >= 0 ? H5Awrite(attr, H5T_NATIVE_DOUBLE, energy_in) : -1;
    herr_t closed = (attr >= 0 ? H5Aclose(attr) : 0) | H5Sclose(space);
    if (attr < 0 || written < 0 || closed < 0)
        return heat_error(HEAT_ERR_RUNTIME, "%s: cannot write /restart/%s", path, ENERGY_ATTRIBUTE);
    return HEAT_OK;
}

/* Where the file has it (*present = 1); else energy_in stays as it is. */
static int read_energy(hid_t restart, const char *path, double energy_in[4], int *present)
{
    *present = 0;
    htri_t exists = H5Aexists(restart, ENERGY_ATTRIBUTE);
    if (exists < 0) return heat_error(HEAT_ERR_RUNTIME, "%s: cannot look for /restart/%s", path, ENERGY_ATTRIBUTE);
    if (!exists) return HEAT_OK;
    hid_t attr = H5Aopen(restart, ENERGY_ATTRIBUTE, H5P_DEFAULT);
    hid_t space = attr >= 0 ? H5Aget_space(attr) : -1;
    hssize_t count = space >= 0 ? H5Sget_simple_extent_npoints(space) : -1;
    herr_t read = count == 4 ? H5Aread(attr, H5T_NATIVE_DOUBLE, energy_in) : -1;
    if (space >= 0) H5Sclose(space);
    if (attr >= 0) H5Aclose(attr);
    if (read < 0)
        return heat_error(HEAT_ERR_RUNTIME, "%s: /restart/%s is not 4 numbers: the file is damaged; restart from "
                          "another checkpoint", path, ENERGY_ATTRIBUTE);
    *present = 1;
    return HEAT_OK;
}

static int write_restart_group(h5_scope *s, hid_t file, const ckpt_meta *m, const chunk_plan *plan,
                               const uint32_t *crcs)
{
    hid_t g = h5_scope_keep(s, H5Gcreate2(file, "restart", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Gclose);
    H5TRY(s, g);
    long long step = m->step;
    int format = CKPT_FORMAT_VERSION, bc_type[FACE_COUNT], space_order = m->space_order > 0 ? m->space_order : 2;
    double bc_value[FACE_COUNT];
    for (int f = 0; f < FACE_COUNT; ++f) bc_type[f] = m->bc[f].type, bc_value[f] = m->bc[f].value;
    HEAT_CALL(write_attr(s, g, "step", H5T_NATIVE_LLONG, 0, 1, &step));
    HEAT_CALL(write_attr(s, g, "time", H5T_NATIVE_DOUBLE, 0, 1, &m->time));
    HEAT_CALL(write_attr(s, g, "dt", H5T_NATIVE_DOUBLE, 0, 1, &m->dt));
    HEAT_CALL(write_attr(s, g, "alpha", H5T_NATIVE_DOUBLE, 0, 1, &m->alpha));
    HEAT_CALL(write_attr(s, g, "grid_n", H5T_NATIVE_INT, 1, 3, m->grid.n));
    HEAT_CALL(write_attr(s, g, "grid_length", H5T_NATIVE_DOUBLE, 1, 3, m->grid.length));
    HEAT_CALL(write_attr(s, g, "boundary_type", H5T_NATIVE_INT, 1, FACE_COUNT, bc_type));
    HEAT_CALL(write_attr(s, g, "boundary_value", H5T_NATIVE_DOUBLE, 1, FACE_COUNT, bc_value));
    HEAT_CALL(write_attr(s, g, "format_version", H5T_NATIVE_INT, 0, 1, &format));
    HEAT_CALL(write_string_attr(s, g, "precision", heat_precision_name(m->precision)));
    HEAT_CALL(write_string_attr(s, g, "version", HEATSOLVE_VERSION));
    HEAT_CALL(write_string_attr(s, g, "config", m->config_text ? m->config_text : ""));
    HEAT_CALL(write_scheme(s, g, &m->implicit));
    HEAT_CALL(write_attr(s, g, "space_order", H5T_NATIVE_INT, 0, 1, &space_order));
    if (m->energy_present) HEAT_CALL(write_energy(g, s->path, m->energy_in));
    int restartable = !m->frame;
    HEAT_CALL(write_attr(s, g, "restartable", H5T_NATIVE_INT, 0, 1, &restartable));
    hsize_t n = (hsize_t)chunk_plan_total(plan);
    hid_t space = h5_scope_keep(s, H5Screate_simple(1, &n, NULL), H5Sclose);
    H5TRY(s, space);
    hid_t dcpl = h5_scope_keep(s, H5Pcreate(H5P_DATASET_CREATE), H5Pclose);
    H5TRY(s, dcpl);
    H5TRY(s, H5Pset_obj_track_times(dcpl, 0)); /* no clock in the file: the same run gives the same bytes */
    hid_t d = h5_scope_keep(s, H5Dcreate2(g, "chunk_crc32", H5T_STD_U32LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT),
                            H5Dclose);
    H5TRY(s, d);
    H5TRY(s, H5Dwrite(d, H5T_NATIVE_UINT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, crcs));
    if (m->materials) HEAT_CALL(ckpt_materials_write(m->materials, s->path, file, g, m->bc));
    return HEAT_OK;
}

static hid_t field_type(heat_precision p) { return p == HEAT_FLOAT ? H5T_NATIVE_FLOAT : H5T_NATIVE_DOUBLE; }
static hid_t file_type(heat_precision p) { return p == HEAT_FLOAT ? H5T_IEEE_F32LE : H5T_IEEE_F64LE; }

static int create_field_dataset(h5_scope *s, hid_t file, const ckpt_meta *m, const chunk_plan *plan, int level,
                                int shuffle, hid_t *dset)
{
    hsize_t dims[3] = {(hsize_t)plan->dims[0], (hsize_t)plan->dims[1], (hsize_t)plan->dims[2]};
    hsize_t chunk[3] = {(hsize_t)plan->chunk[0], (hsize_t)plan->chunk[1], (hsize_t)plan->chunk[2]};
    hid_t space = h5_scope_keep(s, H5Screate_simple(3, dims, NULL), H5Sclose);
    H5TRY(s, space);
    hid_t dcpl = h5_scope_keep(s, H5Pcreate(H5P_DATASET_CREATE), H5Pclose);
    H5TRY(s, dcpl);
    H5TRY(s, H5Pset_obj_track_times(dcpl, 0)); /* the same field gives the same file, whoever wrote it when */
    H5TRY(s, H5Pset_chunk(dcpl, 3, chunk));
    if (level > 0 && shuffle) H5TRY(s, H5Pset_shuffle(dcpl));
    if (level > 0) H5TRY(s, H5Pset_deflate(dcpl, (unsigned)level));
    *dset = h5_scope_keep(s, H5Dcreate2(file, "VTKHDF/PointData/temperature", file_type(m->precision), space,
                                        H5P_DEFAULT, dcpl, H5P_DEFAULT), H5Dclose);
    H5TRY(s, *dset);
    return HEAT_OK;
}

/* What the file's field comes from: the whole field, or the root's slab
 * with the other ranks' chunks arriving (parts, shuffle agreed); in memory
 * as doubles while the file holds float32 (a frame) or as the file. */
typedef struct field_source {
    const void *field;
    ckpt_parts *parts;
    int shuffle;
    int from_doubles;
} field_source;

/* The root's slab first (it starts at plane 0, so its chunks are the
 * whole field's first), then the other ranks' as they arrive. */
static int write_parts(h5_scope *s, hid_t dset, int fd, const chunk_plan *whole, const field_source *src,
                       chunk_codec codec, uint32_t *crcs, ckpt_write_stats *stats)
{
    int first = 0;
    chunk_plan mine = ckpt_parts_plan(src->parts, whole, 0, &first);
    chunk_stream_result r;
    HEAT_CALL(chunk_stream_write(s->path, dset, fd, &mine, src->field, codec, src->shuffle, crcs, &r));
    ckpt_parts_compressed(src->parts);
    size_t received = 0;
    HEAT_CALL(ckpt_parts_receive(src->parts, s->path, dset, whole, codec, crcs, &received));
    stats->stored_bytes = r.stored_bytes + received, stats->compress_seconds = r.compress_seconds;
    stats->threads = r.threads;
    return HEAT_OK;
}

/* The whole field's chunks in the file's precision (gathered from doubles: from_doubles). */
static chunk_plan field_plan(const ckpt_meta *m, int from_doubles)
{
    int dims[3] = {m->grid.n[2], m->grid.n[1], m->grid.n[0]};
    chunk_plan plan = chunk_plan_make(dims, heat_precision_size(m->precision));
    return from_doubles ? chunk_plan_from_doubles(plan) : plan;
}

static chunk_codec chunk_codec_of(const ckpt_codec *codec)
{
    return (chunk_codec){codec->level, codec->method == CKPT_PARALLEL_RLE};
}

static int write_field(h5_scope *s, hid_t file, int fd, const ckpt_meta *m, const field_source *src,
                       const ckpt_codec *how, uint32_t *crcs, ckpt_write_stats *stats)
{
    chunk_plan plan = field_plan(m, src->from_doubles);
    chunk_codec codec = chunk_codec_of(how);
    const void *field = src->field;
    int shuffle = src->parts ? src->shuffle : chunk_should_shuffle(&plan, field, codec);
    hid_t dset = -1;
    HEAT_CALL(create_field_dataset(s, file, m, &plan, how->level, shuffle, &dset));
    if (src->parts) {
        HEAT_CHECK(how->method != CKPT_HDF5_FILTER, "HDF5's own filter cannot write a field in parts");
        return write_parts(s, dset, fd, &plan, src, codec, crcs, stats);
    }
    if (how->method != CKPT_HDF5_FILTER) {
        chunk_stream_result r;
        HEAT_CALL(chunk_stream_write(s->path, dset, fd, &plan, field, codec, shuffle, crcs, &r));
        stats->stored_bytes = r.stored_bytes, stats->compress_seconds = r.compress_seconds, stats->threads = r.threads;
        return HEAT_OK;
    }
    /* HDF5's own filter (the benchmark's comparison): heatsolve only adds the checksums. */
    int total = chunk_plan_total(&plan);
    chunk_data *chunks = calloc((size_t)total, sizeof *chunks);
    HEAT_CHECK(chunks, "out of memory for %d checkpoint chunks", total);
    int status = chunks_compress(&plan, field, (chunk_codec){0, 0}, 0, chunks)
                     ? HEAT_OK
                     : heat_error(HEAT_ERR_RUNTIME, "%s: checksumming the field failed (out of memory?)", s->path);
    for (int c = 0; c < total; ++c) crcs[c] = chunks[c].crc;
    chunks_free(chunks, total);
    free(chunks);
    hid_t memory_type = src->from_doubles ? H5T_NATIVE_DOUBLE : field_type(m->precision); /* HDF5 converts */
    if (status == HEAT_OK && H5Dwrite(dset, memory_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, field) < 0)
        status = h5_failed(s, "H5Dwrite");
    return status;
}

/* A file whose write failed (disk full, file-size limit) stays open inside
 * HDF5, which would flush it again at exit and, in 1.10, crash there. Its
 * descriptor is pointed at /dev/null so that the close succeeds; the caller
 * removes the temporary file. */
static void discard_file(h5_scope *open_objects, hid_t file, int fd)
{
    int null = open("/dev/null", O_RDWR);
    if (fd >= 0 && null >= 0) dup2(null, fd);
    if (null >= 0) close(null);
    h5_scope_close(open_objects);
    H5Fclose(file);
}

/* The file goes straight to its temporary name through HDF5's POSIX driver,
 * chunk by chunk while later chunks compress (chunk_stream). Its descriptor
 * serves the writeback hints. */
static int write_file(h5_scope *s, const char *tmp, const ckpt_meta *m, const field_source *field,
                      const ckpt_codec *codec, ckpt_write_stats *stats)
{
    hid_t fcpl = h5_scope_keep(s, H5Pcreate(H5P_FILE_CREATE), H5Pclose);
    H5TRY(s, fcpl);
    H5TRY(s, H5Pset_userblock(fcpl, USER_BLOCK));
    /* A new file, never through a link planted at the temporary name (fs_temp_create says why). */
    unlink(tmp);
    errno = 0;
    hid_t file = H5Fcreate(tmp, H5F_ACC_EXCL, fcpl, H5P_DEFAULT);
    if (file < 0)
        return heat_error(HEAT_ERR_RUNTIME, "cannot create %s: %s", tmp, errno ? strerror(errno) : "HDF5 H5Fcreate failed");
    int *handle = NULL;
    int fd = H5Fget_vfd_handle(file, H5P_DEFAULT, (void **)&handle) >= 0 && handle ? *handle : -1;
    h5_scope inner = {.path = s->path};
    int dims[3] = {m->grid.n[2], m->grid.n[1], m->grid.n[0]};
    chunk_plan plan = chunk_plan_make(dims, heat_precision_size(m->precision));
    uint32_t *crcs = malloc(sizeof *crcs * (size_t)chunk_plan_total(&plan));
    int status = crcs ? write_vtkhdf_group(&inner, file, m) : heat_error(HEAT_ERR_RUNTIME, "out of memory");
    if (status == HEAT_OK) status = write_field(&inner, file, fd, m, field, codec, crcs, stats);
    if (status == HEAT_OK) status = write_restart_group(&inner, file, m, &plan, crcs);
    free(crcs);
    if (status != HEAT_OK) return discard_file(&inner, file, fd), status;
    h5_scope_close(&inner);
    errno = 0;
    /* Closing flushes HDF5's metadata: a disk that is full now fails here. */
    if (H5Fclose(file) < 0) {
        status = heat_error(HEAT_ERR_RUNTIME, "cannot write %s: %s", s->path,
                            errno ? strerror(errno) : "HDF5 call H5Fclose failed");
        discard_file(&inner, file, fd);
    }
    return status;
}

/* The whole-file CRC goes into the user block once the file is complete:
 * the bytes HDF5 laid out are read back from the page cache (mapped, the
 * CRC on every thread), cheaper than any other way to see them. */
static int seal_file(const char *tmp, const char *path)
{
    int fd = open(tmp, O_RDWR | O_NOFOLLOW | O_CLOEXEC); /* a link swapped in for it is not followed */
    if (fd < 0) return heat_error(HEAT_ERR_RUNTIME, "cannot reopen %s: %s", tmp, strerror(errno));
    struct stat st;
    int err = fstat(fd, &st) != 0 ? errno : st.st_size <= USER_BLOCK ? EIO : 0;
    size_t size = err ? 0 : (size_t)st.st_size;
    void *image = err ? MAP_FAILED : mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
    if (!err && image == MAP_FAILED) err = errno;
    if (!err) {
        char header[USER_BLOCK] = {0};
        snprintf(header, sizeof header, "%scrc32 %08lx\nbytes %zu\n", user_block_magic, body_crc(image, size),
                 size - USER_BLOCK);
        munmap(image, size);
        if (pwrite(fd, header, USER_BLOCK, 0) != USER_BLOCK) err = errno ? errno : EIO;
    }
    close(fd);
    if (err) return heat_error(HEAT_ERR_RUNTIME, "cannot write %s: %s", path, strerror(err));
    return HEAT_OK;
}

/* HDF5 1.10 is thread-safe only where it was built so (Debian's is; a
 * serial build elsewhere may not be), and several writes may be in flight
 * (io/ckpt_writer.h): their HDF5 phases, creating and filling a file or
 * reading one, take turns. Sealing and the fsync run beside each other. */
static pthread_mutex_t hdf5_turn = PTHREAD_MUTEX_INITIALIZER;

static int write_checkpoint(const char *path, const ckpt_meta *m, const field_source *field,
                            const ckpt_codec *codec, ckpt_write_stats *stats)
{
    char tmp[4200];
    fs_temp_name(tmp, sizeof tmp, path);
    int slot = fs_temp_track(tmp);
    h5_scope s = {.path = path};
    double start = monotonic_seconds();
    pthread_mutex_lock(&hdf5_turn);
    quiet_hdf5();
    int status = write_file(&s, tmp, m, field, codec, stats);
    h5_scope_close(&s);
    pthread_mutex_unlock(&hdf5_turn);
    double written = monotonic_seconds();
    if (status == HEAT_OK) status = seal_file(tmp, path);
    double sealed = monotonic_seconds();
    if (status == HEAT_OK) status = fs_commit(tmp, path); /* the one fsync, then the rename */
    stats->file_seconds = written - start, stats->seal_seconds = sealed - written;
    stats->commit_seconds = monotonic_seconds() - sealed;
    if (status != HEAT_OK) unlink(tmp);
    fs_temp_untrack(slot);
    return status;
}

/* A double field written as float32 (a frame): only a frame may be narrowed. */
static int narrowing(const ckpt_meta *m, heat_precision field_precision, int *from_doubles)
{
    *from_doubles = field_precision == HEAT_DOUBLE && m->precision == HEAT_FLOAT;
    HEAT_CHECK(field_precision == m->precision || (*from_doubles && m->frame),
               "a %s field cannot be written as a %s checkpoint", heat_precision_name(field_precision),
               heat_precision_name(m->precision));
    return HEAT_OK;
}

/* Every rank of a write in parts takes every step of it, failed or not
 * (io/ckpt_parts.h): the shuffle decision, then its chunks: sent to the
 * root, or, on the root, its own written with the others' as they arrive;
 * what the root did not take is drained. */
static int write_in_parts(const char *path, const ckpt_meta *m, const ckpt_source *source, const ckpt_codec *codec,
                          ckpt_write_stats *stats)
{
    ckpt_parts *parts = source->parts;
    int from_doubles = 0, shuffle = 0;
    /* No slab: this rank's snapshot failed, and its caller has said why. */
    int status = source->field ? narrowing(m, source->precision, &from_doubles) : HEAT_ERR_RUNTIME;
    const void *slab = status == HEAT_OK ? source->field : NULL;
    chunk_plan whole = field_plan(m, source->precision != m->precision);
    int agreed = ckpt_parts_shuffle(parts, &whole, slab, chunk_codec_of(codec), &shuffle);
    if (status == HEAT_OK) status = agreed;
    if (parts->rank != 0) {
        int sent = ckpt_parts_send(parts, &whole, status == HEAT_OK ? slab : NULL, chunk_codec_of(codec), shuffle);
        return status == HEAT_OK ? sent : status;
    }
    ckpt_parts_begin(parts);
    if (status == HEAT_OK) {
        field_source mine = {slab, parts, shuffle, from_doubles};
        status = write_checkpoint(path, m, &mine, codec, stats);
    }
    ckpt_parts_drain(parts, &whole, chunk_codec_of(codec));
    return status;
}

int ckpt_write(const char *path, const ckpt_meta *m, const ckpt_source *source, const ckpt_codec *codec,
               ckpt_write_stats *stats)
{
    ckpt_write_stats local;
    if (!stats) stats = &local;
    memset(stats, 0, sizeof *stats);
    if (source->parts) return write_in_parts(path, m, source, codec, stats);
    field_source whole = {source->field, NULL, 0, 0};
    HEAT_CALL(narrowing(m, source->precision, &whole.from_doubles));
    return write_checkpoint(path, m, &whole, codec, stats);
}

/* ---- reading ---------------------------------------------------------------------------------- */

static int not_checkpoint(const char *path, const char *why)
{
    return heat_error(HEAT_ERR_RUNTIME, "%s is not a heatsolve checkpoint (%s); give --restart a .hdf file "
                      "written by heatsolve, or 'latest'", path, why);
}

static int read_attr_in(h5_scope *s, hid_t loc, const char *name, hid_t type, hsize_t expect, void *out)
{
    if (H5Aexists(loc, name) <= 0) return not_checkpoint(s->path, name);
    hid_t attr = h5_scope_keep(s, H5Aopen(loc, name, H5P_DEFAULT), H5Aclose);
    H5TRY(s, attr);
    hid_t space = h5_scope_keep(s, H5Aget_space(attr), H5Sclose);
    H5TRY(s, space);
    hssize_t n = H5Sget_simple_extent_npoints(space);
    if (n != (hssize_t)expect) return not_checkpoint(s->path, "an attribute has the wrong size");
    H5TRY(s, H5Aread(attr, type, out));
    return HEAT_OK;
}

static int read_attr(h5_scope *s, hid_t loc, const char *name, hid_t type, hsize_t expect, void *out)
{
    h5_scope local = {.path = s->path};
    int status = read_attr_in(&local, loc, name, type, expect, out);
    h5_scope_close(&local);
    return status;
}

static int read_string_attr_in(h5_scope *s, hid_t loc, const char *name, char **out)
{
    if (H5Aexists(loc, name) <= 0) return not_checkpoint(s->path, name);
    hid_t attr = h5_scope_keep(s, H5Aopen(loc, name, H5P_DEFAULT), H5Aclose);
    H5TRY(s, attr);
    hid_t type = h5_scope_keep(s, H5Aget_type(attr), H5Tclose);
    H5TRY(s, type);
    if (H5Tget_class(type) != H5T_STRING || H5Tis_variable_str(type) != 0)
        return not_checkpoint(s->path, "a string attribute has another type");
    size_t size = H5Tget_size(type);
    HEAT_CHECK(size > 0 && size < (1u << 26), "%s: string attribute %s has size %zu", s->path, name, size);
    *out = calloc(size + 1, 1);
    HEAT_CHECK(*out, "out of memory");
    H5TRY(s, H5Aread(attr, type, *out));
    return HEAT_OK;
}

static int read_string_attr(h5_scope *s, hid_t loc, const char *name, char **out)
{
    h5_scope local = {.path = s->path};
    int status = read_string_attr_in(&local, loc, name, out);
    h5_scope_close(&local);
    return status;
}

static int read_precision(h5_scope *s, hid_t g, ckpt_meta *m)
{
    char *name = NULL;
    HEAT_CALL(read_string_attr(s, g, "precision", &name));
    int known = strcmp(name, "double") == 0 || strcmp(name, "float") == 0;
    m->precision = strcmp(name, "float") == 0 ? HEAT_FLOAT : HEAT_DOUBLE;
    free(name);
    return known ? HEAT_OK : not_checkpoint(s->path, "unknown precision");
}

/* Files written before implicit schemes existed hold no "scheme": euler. */
static int read_scheme(h5_scope *s, hid_t g, ckpt_meta *m)
{
    m->implicit.scheme = HEAT_EULER;
    if (H5Aexists(g, "scheme") <= 0) return HEAT_OK;
    char *name = NULL;
    HEAT_CALL(read_string_attr(s, g, "scheme", &name));
    int known = 0;
    for (int k = HEAT_EULER; k <= HEAT_CRANK_NICOLSON; ++k)
        if (strcmp(name, heat_scheme_name((heat_scheme)k)) == 0) m->implicit.scheme = (heat_scheme)k, known = 1;
    free(name);
    return known ? HEAT_OK : not_checkpoint(s->path, "unknown time scheme");
}

/* The Laplacian's order (solver.space_order); files older than orders say nothing: 2. */
static int read_space_order(h5_scope *s, hid_t g, ckpt_meta *m)
{
    m->space_order = 2;
    if (H5Aexists(g, "space_order") > 0) HEAT_CALL(read_attr(s, g, "space_order", H5T_NATIVE_INT, 1, &m->space_order));
    return HEAT_OK;
}

/* Frames (output.frame_every) say restartable = 0; files older than frames say nothing: restartable. */
static int read_frame_mark(h5_scope *s, hid_t g, ckpt_meta *m)
{
    int restartable = 1;
    if (H5Aexists(g, "restartable") > 0) HEAT_CALL(read_attr(s, g, "restartable", H5T_NATIVE_INT, 1, &restartable));
    m->frame = !restartable;
    return HEAT_OK;
}

static int read_restart_group(h5_scope *s, hid_t file, ckpt_meta *m)
{
    if (H5Lexists(file, "restart", H5P_DEFAULT) <= 0) return not_checkpoint(s->path, "no /restart group");
    hid_t g = h5_scope_keep(s, H5Gopen2(file, "restart", H5P_DEFAULT), H5Gclose);
    H5TRY(s, g);
    long long step;
    int bc_type[FACE_COUNT];
    double bc_value[FACE_COUNT];
    HEAT_CALL(read_attr(s, g, "format_version", H5T_NATIVE_INT, 1, &m->format_version));
    if (m->format_version != CKPT_FORMAT_VERSION)
        return heat_error(HEAT_ERR_RUNTIME, "%s has checkpoint format %d; this heatsolve reads format %d",
                          s->path, m->format_version, CKPT_FORMAT_VERSION);
    HEAT_CALL(read_attr(s, g, "step", H5T_NATIVE_LLONG, 1, &step));
    HEAT_CALL(read_attr(s, g, "time", H5T_NATIVE_DOUBLE, 1, &m->time));
    HEAT_CALL(read_attr(s, g, "dt", H5T_NATIVE_DOUBLE, 1, &m->dt));
    HEAT_CALL(read_attr(s, g, "alpha", H5T_NATIVE_DOUBLE, 1, &m->alpha));
    HEAT_CALL(read_attr(s, g, "grid_n", H5T_NATIVE_INT, 3, m->grid.n));
    HEAT_CALL(read_attr(s, g, "grid_length", H5T_NATIVE_DOUBLE, 3, m->grid.length));
    HEAT_CALL(read_attr(s, g, "boundary_type", H5T_NATIVE_INT, FACE_COUNT, bc_type));
    HEAT_CALL(read_attr(s, g, "boundary_value", H5T_NATIVE_DOUBLE, FACE_COUNT, bc_value));
    HEAT_CALL(read_precision(s, g, m));
    HEAT_CALL(read_scheme(s, g, m));
    HEAT_CALL(read_space_order(s, g, m));
    HEAT_CALL(read_frame_mark(s, g, m));
    HEAT_CALL(read_energy(g, s->path, m->energy_in, &m->energy_present));
    char *version = NULL;
    HEAT_CALL(read_string_attr(s, g, "version", &version));
    snprintf(m->version, sizeof m->version, "%s", version);
    free(version);
    HEAT_CALL(read_string_attr(s, g, "config", &m->config_text));
    m->step = (long)step;
    for (int f = 0; f < FACE_COUNT; ++f) m->bc[f].type = (heat_bc_type)bc_type[f], m->bc[f].value = bc_value[f];
    HEAT_CALL(ckpt_materials_read(s->path, g, &m->file_materials, m->bc));
    for (int d = 0; d < 3; ++d)
        if (m->grid.n[d] < 1 || m->grid.length[d] <= 0) return not_checkpoint(s->path, "invalid grid");
    heat_grid_set_spacing(&m->grid);
    return HEAT_OK;
}

/* The file mapped read-only (the restart's whole-file CRC reads it once,
 * from the page cache, without a copy); unmap with munmap. */
static int load_file(const char *path, unsigned char **image, size_t *size)
{
    *image = NULL, *size = 0;
    /* O_NONBLOCK: a FIFO at a checkpoint's name would otherwise block the open
     * until a writer comes (a hang); on a regular file the flag changes nothing. */
    int fd = open(path, O_RDONLY | O_NONBLOCK);
    if (fd < 0) return heat_error(HEAT_ERR_RUNTIME, "cannot read checkpoint %s: %s", path, strerror(errno));
    struct stat st;
    int status = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? HEAT_OK
                 : heat_error(HEAT_ERR_RUNTIME, "checkpoint %s is not a regular file", path);
    if (status == HEAT_OK && st.st_size == 0) status = not_checkpoint(path, "it is empty");
    if (status == HEAT_OK) {
        void *map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
        if (map == MAP_FAILED) status = heat_error(HEAT_ERR_RUNTIME, "cannot read checkpoint %s: %s", path, strerror(errno));
        else *image = map, *size = (size_t)st.st_size;
    }
    close(fd);
    return status;
}

/* Opens the checkpoint with HDF5 once its whole-file CRC has been checked
 * (HDF5's own read then comes from the page cache). */
static int open_checkpoint(h5_scope *s, const char *path, hid_t *file)
{
    quiet_hdf5();
    size_t size = 0;
    unsigned char *image = NULL;
    int status = load_file(path, &image, &size), has_magic = 0;
    int sealed = status == HEAT_OK && image_sealed(image, size, &has_magic);
    if (image) munmap(image, size);
    HEAT_CALL(status);
    if (!sealed)
        return has_magic ? heat_error(HEAT_ERR_RUNTIME, "%s is corrupt or truncated: its checksum does not match; "
                                      "restart from an earlier checkpoint", path)
                         : not_checkpoint(path, "no heatsolve header: another program's file, or not HDF5 at all");
    *file = h5_scope_keep(s, H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
    if (*file < 0) return not_checkpoint(path, "HDF5 cannot open it");
    return HEAT_OK;
}

/* The dataset must be chunked in whole x rows (any chunk shape that
 * heatsolve has written: earlier versions chose another number of
 * planes), with no filters or deflate, optionally after shuffle. */
static int read_filters(h5_scope *s, hid_t dset, chunk_plan *plan, int *compressed, int *shuffle)
{
    hid_t dcpl = h5_scope_keep(s, H5Dget_create_plist(dset), H5Pclose);
    H5TRY(s, dcpl);
    hsize_t chunk[3];
    if (H5Pget_layout(dcpl) != H5D_CHUNKED || H5Pget_chunk(dcpl, 3, chunk) != 3 || chunk[0] < 1 ||
        chunk[0] > (hsize_t)plan->dims[0] || chunk[1] < 1 || chunk[1] > (hsize_t)plan->dims[1] ||
        chunk[2] != (hsize_t)plan->dims[2])
        return not_checkpoint(s->path, "field dataset chunked differently");
    *plan = chunk_plan_with(plan->dims, (int[3]){(int)chunk[0], (int)chunk[1], (int)chunk[2]}, plan->elem);
    int nfilters = H5Pget_nfilters(dcpl);
    *compressed = *shuffle = 0;
    for (int f = 0; f < nfilters; ++f) {
        unsigned flags, values[8];
        size_t nvalues = 8;
        H5Z_filter_t id = H5Pget_filter2(dcpl, (unsigned)f, &flags, &nvalues, values, 0, NULL, NULL);
        if (id == H5Z_FILTER_SHUFFLE && f == 0) *shuffle = 1;
        else if (id == H5Z_FILTER_DEFLATE && f == nfilters - 1) *compressed = 1;
        else return not_checkpoint(s->path, "field dataset uses an unexpected filter");
    }
    if (*shuffle && !*compressed) return not_checkpoint(s->path, "shuffle without deflate");
    return HEAT_OK;
}

static int read_chunks(h5_scope *s, hid_t dset, const chunk_plan *plan, chunk_data *chunks)
{
    for (int c = 0; c < chunk_plan_total(plan); ++c) {
        unsigned long long off[3];
        hsize_t offset[3], size = 0;
        chunk_plan_offset(plan, c, off);
        for (int d = 0; d < 3; ++d) offset[d] = off[d];
        if (H5Dget_chunk_storage_size(dset, offset, &size) < 0 || size == 0 || size > 4 * plan->raw_bytes + 4096)
            return heat_error(HEAT_ERR_RUNTIME, "%s: chunk %d of the field is missing or damaged", s->path, c);
        chunks[c].bytes = malloc(size);
        HEAT_CHECK(chunks[c].bytes, "out of memory");
        chunks[c].size = size;
        uint32_t mask = 0;
        if (H5Dread_chunk(dset, H5P_DEFAULT, offset, &mask, chunks[c].bytes) < 0 || mask != 0)
            return heat_error(HEAT_ERR_RUNTIME, "%s: cannot read chunk %d of the field (truncated file?)", s->path, c);
    }
    return HEAT_OK;
}

static int read_crcs(h5_scope *s, hid_t file, const chunk_plan *plan, chunk_data *chunks)
{
    int total = chunk_plan_total(plan);
    if (H5Lexists(file, "restart/chunk_crc32", H5P_DEFAULT) <= 0) return not_checkpoint(s->path, "no checksums");
    hid_t d = h5_scope_keep(s, H5Dopen2(file, "restart/chunk_crc32", H5P_DEFAULT), H5Dclose);
    H5TRY(s, d);
    hid_t space = h5_scope_keep(s, H5Dget_space(d), H5Sclose);
    H5TRY(s, space);
    if (H5Sget_simple_extent_npoints(space) != total) return not_checkpoint(s->path, "checksum count differs");
    uint32_t *crcs = malloc(sizeof *crcs * (size_t)total);
    HEAT_CHECK(crcs, "out of memory");
    herr_t err = H5Dread(d, H5T_NATIVE_UINT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, crcs);
    for (int c = 0; c < total && err >= 0; ++c) chunks[c].crc = crcs[c];
    free(crcs);
    if (err < 0) return h5_failed(s, "H5Dread(chunk_crc32)");
    return HEAT_OK;
}

static int read_field(h5_scope *s, hid_t file, const ckpt_meta *m, void *field)
{
    if (H5Lexists(file, "VTKHDF", H5P_DEFAULT) <= 0 || H5Lexists(file, "VTKHDF/PointData", H5P_DEFAULT) <= 0 ||
        H5Lexists(file, "VTKHDF/PointData/temperature", H5P_DEFAULT) <= 0)
        return not_checkpoint(s->path, "no /VTKHDF/PointData/temperature");
    hid_t dset = h5_scope_keep(s, H5Dopen2(file, "VTKHDF/PointData/temperature", H5P_DEFAULT), H5Dclose);
    H5TRY(s, dset);
    hid_t space = h5_scope_keep(s, H5Dget_space(dset), H5Sclose);
    hsize_t dims[3];
    if (space < 0 || H5Sget_simple_extent_ndims(space) != 3 || H5Sget_simple_extent_dims(space, dims, NULL) != 3 ||
        dims[0] != (hsize_t)m->grid.n[2] || dims[1] != (hsize_t)m->grid.n[1] || dims[2] != (hsize_t)m->grid.n[0])
        return not_checkpoint(s->path, "field shape differs from /restart/grid_n");
    int zyx[3] = {m->grid.n[2], m->grid.n[1], m->grid.n[0]}, compressed = 0, shuffle = 0;
    chunk_plan plan = chunk_plan_make(zyx, heat_precision_size(m->precision));
    HEAT_CALL(read_filters(s, dset, &plan, &compressed, &shuffle));
    int total = chunk_plan_total(&plan);
    chunk_data *chunks = calloc((size_t)total, sizeof *chunks);
    HEAT_CHECK(chunks, "out of memory");
    int status = read_chunks(s, dset, &plan, chunks);
    if (status == HEAT_OK) status = read_crcs(s, file, &plan, chunks);
    int bad = status == HEAT_OK ? chunks_decompress(&plan, chunks, compressed, shuffle, field) : 0;
    if (bad) status = heat_error(HEAT_ERR_RUNTIME, "%s is corrupt: chunk %d of the field fails its checksum or "
                                 "does not decompress; restart from an earlier checkpoint", s->path, bad - 1);
    chunks_free(chunks, total);
    free(chunks);
    return status;
}

/* Metadata, and the field too when field is not NULL. */
static int read_checkpoint(const char *path, ckpt_meta *m, void *field)
{
    memset(m, 0, sizeof *m);
    h5_scope s = {.path = path};
    hid_t file = -1;
    pthread_mutex_lock(&hdf5_turn);
    int status = open_checkpoint(&s, path, &file);
    if (status == HEAT_OK) status = read_restart_group(&s, file, m);
    if (status == HEAT_OK && field) status = read_field(&s, file, m, field);
    h5_scope_close(&s);
    pthread_mutex_unlock(&hdf5_turn);
    if (status != HEAT_OK) ckpt_meta_free(m);
    return status;
}

int ckpt_read_meta(const char *path, ckpt_meta *m) { return read_checkpoint(path, m, NULL); }

int ckpt_read(const char *path, ckpt_meta *m, void *field) { return read_checkpoint(path, m, field); }

void ckpt_meta_free(ckpt_meta *m)
{
    if (!m) return;
    free(m->config_text);
    m->config_text = NULL;
    free(m->file_materials);
    m->file_materials = NULL;
}
