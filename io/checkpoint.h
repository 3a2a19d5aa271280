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
    int space_order;        /* solver.space_order of the field (0 when writing, and files without it: 2) */
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

/* How the field is compressed. */
typedef struct ckpt_codec {
    int level;          /* deflate level 0-9 (0: uncompressed, no copy of the field) */
    ckpt_method method;
} ckpt_codec;

/* Where the field comes from: compact, x fastest, the whole field or, with
 * parts (io/ckpt_parts.h), this rank's z slab. precision: the field's in
 * memory, meta's or double for a float32 frame (meta->frame), converted
 * chunk by chunk. */
struct ckpt_parts;
typedef struct ckpt_source {
    const void *field;        /* with parts, NULL on a rank whose snapshot failed: it still takes its part */
    heat_precision precision;
    struct ckpt_parts *parts; /* NULL: field is the whole field */
} ckpt_source;

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

/* Writes the source's field with meta to path, atomically: under a
 * temporary name, chunks written while later ones compress (on the calling
 * context's OpenMP threads), one fsync, then the rename. With parts every
 * rank calls it for every write, failed or not: the others' chunks travel
 * to the root, whose call writes the file (ckpt_parts.h); only the root's
 * call measures (stats zero elsewhere). stats may be NULL. */
int ckpt_write(const char *path, const ckpt_meta *meta, const ckpt_source *source, const ckpt_codec *codec,
               ckpt_write_stats *stats);

/* Reads only the /restart metadata (checks the layout). Free with ckpt_meta_free. */
int ckpt_read_meta(const char *path, ckpt_meta *meta);

/* Reads metadata and the field, verifying every chunk's checksum. `field`
 * must hold grid.n[0]*n[1]*n[2] values of the precision given by meta. */
int ckpt_read(const char *path, ckpt_meta *meta, void *field);

void ckpt_meta_free(ckpt_meta *meta);

/* "<dir>/<name>_<step, 6+ digits>.hdf" */
void ckpt_path(char *buf, size_t len, const char *dir, const char *name, long step);
