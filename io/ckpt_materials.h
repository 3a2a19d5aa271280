#pragma once
/*
 * A materials run's checkpoints (io/checkpoint.h) carry what the run's
 * problem was, so that ParaView shows the materials and a restart can
 * check that it continues the same problem:
 *
 *   /VTKHDF/PointData/zone       uint8 (nz, ny, nx): the zone index of every point
 *   /VTKHDF/PointData/material   uint8 (nz, ny, nx): its material (the zone's)
 *   /restart attrs  material_names (one string, names separated by '\n'),
 *                   material_conductivity, material_density, material_specific_heat (double[M]),
 *                   zone_material (int[Z]), zone_source, zone_source_on, zone_source_off (double[Z]),
 *                   boundary_h, boundary_ambient (double[6])
 *
 * The zones are a function of the configuration and the global
 * coordinates (solver/regions.h), never of the ranks: the root paints and
 * compresses both fields once, chunk by chunk, and every checkpoint writes
 * the same chunks, so the file's layout is the one a single process writes.
 * Runs without materials write none of this (their files are unchanged).
 */
#include <hdf5.h>
#include <stdint.h>

#include "../solver/materials.h"
#include "../solver/regions.h"
#include "compress.h"

typedef struct ckpt_materials {
    heat_materials table;
    chunk_plan plan;          /* the uint8 fields' chunks (nz, ny, nx) */
    chunk_codec codec;
    chunk_data *zone, *material; /* chunk_plan_total compressed chunks each (owned) */
} ckpt_materials;

/* Paints the whole grid of p chunk by chunk and compresses both fields at
 * `level` (0-9, rle: zlib's Z_RLE). Free with ckpt_materials_destroy. */
int ckpt_materials_create(const heat_materials *m, const heat_painting *p, int level, int rle, ckpt_materials **out);
void ckpt_materials_destroy(ckpt_materials **cm);

/* Writes the two fields into an open checkpoint (its /VTKHDF/PointData
 * exists) and the tables into its /restart group; bc: the faces' h and ambient. */
int ckpt_materials_write(const ckpt_materials *cm, const char *path, hid_t file, hid_t restart, const heat_bc *bc);

/* Reads the tables of an open checkpoint's /restart group into *m (malloc'd;
 * NULL where the file has none) and the faces' h and ambient into bc. */
int ckpt_materials_read(const char *path, hid_t restart, heat_materials **m, heat_bc *bc);

/* The first point (x fastest) whose zone in the checkpoint at path differs
 * from p's painting: *point = -1 when none does; *file_zone, *config_zone
 * its two zones. The file's whole-file checksum must have been checked. */
int ckpt_materials_first_difference(const char *path, const heat_painting *p, long long *point, int *file_zone,
                                    int *config_zone);
