#pragma once
/*
 * Checkpoint files: one HDF5 file per checkpoint that is at once a VTKHDF
 * ImageData snapshot for ParaView 5.11 and a restart file.
 *
 *   /VTKHDF                      attrs Version {1,0}, Type "ImageData" (9-byte ASCII),
 *                                WholeExtent, Origin, Spacing, Direction
 *   /VTKHDF/PointData/temperature  (nz, ny, nx), chunked, [shuffle +] deflate
 *   /restart                     attrs step, time, dt, precision, grid_n, grid_length,
 *                                alpha, boundary_type, boundary_value, config,
 *                                version, format_version; dataset chunk_crc32
 *   materials runs also: PointData zone and material, tables in /restart (io/ckpt_materials.h)
 *
 * Files are built as an HDF5 image in memory, written under a temporary
 * name, fsynced and renamed: a checkpoint's name never holds a half-written file.
 */
#include "../solver/problem.h"

enum { CKPT_FORMAT_VERSION = 1 };

typedef struct ckpt_meta {
    long step;
    double time, dt;
    heat_precision precision;
    heat_grid grid;
    double alpha;
    heat_bc bc[FACE_COUNT];
    heat_implicit implicit; /* time scheme and CG settings (files without them: euler) */
    double energy_in[4];  /* materials runs: the energy balance's sums (io/ckpt_energy.h) */
    int energy_present;   /* 1: written / read with the file */
    char *config_text;    /* effective configuration; owned by the caller when writing, by meta after reading */
    char version[32];     /* heatsolve version that wrote the file */
    int format_version;
    int frame;            /* 1: a frame for viewing (attribute /restart/frame), not a restart point */
    /* Materials runs (io/ckpt_materials.h). Writing: the zone and material
     * fields and tables to add (not owned; NULL: none, the file as without
     * materials). Reading: the file's tables (owned by meta; NULL: none), and
     * bc[].h, bc[].ambient read too. */
    const struct ckpt_materials *materials;
    struct heat_materials *file_materials;
} ckpt_meta;

typedef enum {
    CKPT_PARALLEL_ZLIB = 0, /* chunks deflated on all cores, written with H5Dwrite_chunk */
    CKPT_PARALLEL_RLE = 1,  /* the same with zlib's Z_RLE strategy (zlib engine only; ISA-L ignores it) */
    CKPT_HDF5_FILTER = 2,   /* HDF5's built-in filter (for the benchmark comparison) */
} ckpt_method;

/* Writes field (compact, x fastest) with meta to path, atomically: under a
 * temporary name, chunks written while later ones compress (on the calling
 * context's OpenMP threads), one fsync, then the rename. `level` 0-9 is the
 * deflate level (0: uncompressed, no copy of the field). */
int ckpt_write(const char *path, const ckpt_meta *meta, const void *field, int level, ckpt_method method);

/* Where a write's time went (benchmark, run summary). */
typedef struct ckpt_write_stats {
    size_t stored_bytes;     /* field bytes on disk (compressed) */
    double compress_seconds; /* compression work summed over threads */
    int threads;
    /* The write's phases in turn, wall time: the HDF5 file (created, chunks
     * compressed and written, metadata, closed), the seal (the whole-file CRC
     * into the user block), the commit (fsync, rename, folder fsync). */
    double file_seconds, seal_seconds, commit_seconds;
} ckpt_write_stats;

int ckpt_write_measured(const char *path, const ckpt_meta *meta, const void *field, int level, ckpt_method method,
                        ckpt_write_stats *stats);

/* The same, from a field held in field_precision: meta's precision, or
 * double for a float32 frame (meta->frame), converted chunk by chunk. */
int ckpt_write_from(const char *path, const ckpt_meta *meta, const void *field, heat_precision field_precision,
                    int level, ckpt_method method);

/* The same file from a field cut into z slabs (io/ckpt_parts.h): the root's
 * call, with its own slab; the other ranks' chunks arrive during it and are
 * written as they come. shuffle: the decision every writer agreed on
 * (ckpt_parts_shuffle). */
struct ckpt_parts;
int ckpt_write_parts(const char *path, const ckpt_meta *meta, const void *slab, heat_precision slab_precision,
                     int level, ckpt_method method, struct ckpt_parts *parts, int shuffle, ckpt_write_stats *stats);

/* Reads only the /restart metadata (checks the layout). Free with ckpt_meta_free. */
int ckpt_read_meta(const char *path, ckpt_meta *meta);

/* Reads metadata and the field, verifying every chunk's checksum. `field`
 * must hold grid.n[0]*n[1]*n[2] values of the precision given by meta. */
int ckpt_read(const char *path, ckpt_meta *meta, void *field);

void ckpt_meta_free(ckpt_meta *meta);

/* "<dir>/<name>_<step, 6+ digits>.hdf" */
void ckpt_path(char *buf, size_t len, const char *dir, const char *name, long step);
