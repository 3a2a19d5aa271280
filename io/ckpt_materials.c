#include "ckpt_materials.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../solver/error.h"

static int h5_error(const char *path, const char *call)
{
    int saved = errno;
    return heat_error(HEAT_ERR_RUNTIME, "%s: HDF5 call %s failed%s%s", path, call, saved ? ": " : "",
                      saved ? strerror(saved) : "");
}

/* ---- painting and compressing once ------------------------------------------------------------ */

static int keep_chunk(const chunk_data *made, chunk_data *kept)
{
    kept->bytes = malloc(made->size ? made->size : 1);
    HEAT_CHECK(kept->bytes, "out of memory for a checkpoint chunk of the zones");
    memcpy(kept->bytes, made->data, made->size);
    kept->data = kept->bytes, kept->size = made->size, kept->crc = made->crc;
    return HEAT_OK;
}

/* One chunk of the field in `raw` (painted), compressed into *kept. */
static int compress_chunk(const ckpt_materials *cm, const unsigned char *raw, unsigned char *work,
                          unsigned char *bound, chunk_data *kept)
{
    const int *c = cm->plan.chunk;
    chunk_plan one = chunk_plan_with(c, c, 1); /* the chunk as a field of its own: the same bytes */
    chunk_data made = {.bytes = bound};
    HEAT_CHECK(chunk_compress(&one, raw, 0, cm->codec, 0, work, &made), "compressing the zones failed");
    return keep_chunk(&made, kept);
}

static int paint_chunks(ckpt_materials *cm, const heat_painting *p)
{
    size_t raw = cm->plan.raw_bytes;
    unsigned char *zones = malloc(raw), *materials = malloc(raw);
    unsigned char *work = malloc(chunk_work_bytes(&cm->plan)), *bound = malloc(chunk_bound(&cm->plan, cm->codec));
    int status = zones && materials && work && bound ? HEAT_OK
                 : heat_error(HEAT_ERR_RUNTIME, "out of memory for the checkpoint's zone chunks");
    for (int c = 0; c < chunk_plan_total(&cm->plan) && status == HEAT_OK; ++c) {
        unsigned long long off[3];
        chunk_plan_offset(&cm->plan, c, off);
        heat_regions_paint_slab(p, &cm->table, (int)off[0], cm->plan.chunk[0], (int)off[1], cm->plan.chunk[1], zones,
                                materials);
        status = compress_chunk(cm, zones, work, bound, &cm->zone[c]);
        if (status == HEAT_OK) status = compress_chunk(cm, materials, work, bound, &cm->material[c]);
    }
    free(zones), free(materials), free(work), free(bound);
    return status;
}

int ckpt_materials_create(const heat_materials *m, const heat_painting *p, int level, int rle, ckpt_materials **out)
{
    *out = NULL;
    ckpt_materials *cm = calloc(1, sizeof *cm);
    HEAT_CHECK(cm, "out of memory");
    cm->table = *m;
    const int *n = p->grid->n;
    cm->plan = chunk_plan_make((int[3]){n[2], n[1], n[0]}, 1);
    cm->codec = (chunk_codec){level, rle};
    int total = chunk_plan_total(&cm->plan);
    cm->zone = calloc((size_t)total, sizeof *cm->zone);
    cm->material = calloc((size_t)total, sizeof *cm->material);
    int status = cm->zone && cm->material ? paint_chunks(cm, p) : heat_error(HEAT_ERR_RUNTIME, "out of memory");
    if (status != HEAT_OK) return ckpt_materials_destroy(&cm), status;
    *out = cm;
    return HEAT_OK;
}

void ckpt_materials_destroy(ckpt_materials **cm)
{
    if (!cm || !*cm) return;
    int total = chunk_plan_total(&(*cm)->plan);
    if ((*cm)->zone) chunks_free((*cm)->zone, total);
    if ((*cm)->material) chunks_free((*cm)->material, total);
    free((*cm)->zone), free((*cm)->material), free(*cm);
    *cm = NULL;
}

/* ---- writing ---------------------------------------------------------------------------------- */

static int write_field(const ckpt_materials *cm, const char *path, hid_t file, const char *name,
                       const chunk_data *chunks)
{
    const chunk_plan *pl = &cm->plan;
    hsize_t dims[3] = {(hsize_t)pl->dims[0], (hsize_t)pl->dims[1], (hsize_t)pl->dims[2]};
    hsize_t chunk[3] = {(hsize_t)pl->chunk[0], (hsize_t)pl->chunk[1], (hsize_t)pl->chunk[2]};
    hid_t space = H5Screate_simple(3, dims, NULL), dcpl = H5Pcreate(H5P_DATASET_CREATE), dset = -1;
    int ok = space >= 0 && dcpl >= 0 && H5Pset_obj_track_times(dcpl, 0) >= 0 && H5Pset_chunk(dcpl, 3, chunk) >= 0 &&
             (cm->codec.level == 0 || H5Pset_deflate(dcpl, (unsigned)cm->codec.level) >= 0);
    if (ok) dset = H5Dcreate2(file, name, H5T_STD_U8LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    ok = dset >= 0;
    for (int c = 0; ok && c < chunk_plan_total(pl); ++c) {
        unsigned long long off[3];
        chunk_plan_offset(pl, c, off);
        hsize_t offset[3] = {off[0], off[1], off[2]};
        ok = H5Dwrite_chunk(dset, H5P_DEFAULT, 0, offset, chunks[c].size, chunks[c].data) >= 0;
    }
    if (dset >= 0) H5Dclose(dset);
    if (dcpl >= 0) H5Pclose(dcpl);
    if (space >= 0) H5Sclose(space);
    return ok ? HEAT_OK : h5_error(path, name);
}

static int write_array(const char *path, hid_t g, const char *name, hid_t type, int count, const void *data)
{
    hsize_t n = (hsize_t)count;
    hid_t space = H5Screate_simple(1, &n, NULL);
    hid_t attr = space >= 0 ? H5Acreate2(g, name, type, space, H5P_DEFAULT, H5P_DEFAULT) : -1;
    int ok = attr >= 0 && H5Awrite(attr, type, data) >= 0;
    if (attr >= 0) H5Aclose(attr);
    if (space >= 0) H5Sclose(space);
    return ok ? HEAT_OK : h5_error(path, name);
}

static int write_string(const char *path, hid_t g, const char *name, const char *text)
{
    hid_t type = H5Tcopy(H5T_C_S1), space = H5Screate(H5S_SCALAR), attr = -1;
    int ok = type >= 0 && space >= 0 && H5Tset_size(type, strlen(text) ? strlen(text) : 1) >= 0 &&
             H5Tset_strpad(type, H5T_STR_NULLPAD) >= 0 &&
             (attr = H5Acreate2(g, name, type, space, H5P_DEFAULT, H5P_DEFAULT)) >= 0 && H5Awrite(attr, type, text) >= 0;
    if (attr >= 0) H5Aclose(attr);
    if (space >= 0) H5Sclose(space);
    if (type >= 0) H5Tclose(type);
    return ok ? HEAT_OK : h5_error(path, name);
}

static int write_material_table(const char *path, hid_t g, const heat_materials *m)
{
    char names[HEAT_MATERIALS_MAX * HEAT_MATERIAL_NAME] = "";
    double k[HEAT_MATERIALS_MAX], rho[HEAT_MATERIALS_MAX], c[HEAT_MATERIALS_MAX];
    for (int i = 0; i < m->material_count; ++i) {
        if (i) strcat(names, "\n");
        strcat(names, m->material[i].name);
        k[i] = m->material[i].conductivity, rho[i] = m->material[i].density, c[i] = m->material[i].specific_heat;
    }
    HEAT_CALL(write_string(path, g, "material_names", names));
    HEAT_CALL(write_array(path, g, "material_conductivity", H5T_NATIVE_DOUBLE, m->material_count, k));
    HEAT_CALL(write_array(path, g, "material_density", H5T_NATIVE_DOUBLE, m->material_count, rho));
    return write_array(path, g, "material_specific_heat", H5T_NATIVE_DOUBLE, m->material_count, c);
}

static int write_zone_table(const char *path, hid_t g, const heat_materials *m)
{
    int material[HEAT_ZONES_MAX];
    double source[HEAT_ZONES_MAX], on[HEAT_ZONES_MAX], off[HEAT_ZONES_MAX];
    for (int z = 0; z < m->zone_count; ++z)
        material[z] = m->zone[z].material, source[z] = m->zone[z].source, on[z] = m->zone[z].source_on,
        off[z] = m->zone[z].source_off;
    HEAT_CALL(write_array(path, g, "zone_material", H5T_NATIVE_INT, m->zone_count, material));
    HEAT_CALL(write_array(path, g, "zone_source", H5T_NATIVE_DOUBLE, m->zone_count, source));
    HEAT_CALL(write_array(path, g, "zone_source_on", H5T_NATIVE_DOUBLE, m->zone_count, on));
    return write_array(path, g, "zone_source_off", H5T_NATIVE_DOUBLE, m->zone_count, off);
}

int ckpt_materials_write(const ckpt_materials *cm, const char *path, hid_t file, hid_t restart, const heat_bc *bc)
{
    HEAT_CALL(write_field(cm, path, file, "VTKHDF/PointData/zone", cm->zone));
    HEAT_CALL(write_field(cm, path, file, "VTKHDF/PointData/material", cm->material));
    HEAT_CALL(write_material_table(path, restart, &cm->table));
    HEAT_CALL(write_zone_table(path, restart, &cm->table));
    double h[FACE_COUNT], ambient[FACE_COUNT];
    for (int f = 0; f < FACE_COUNT; ++f) h[f] = bc[f].h, ambient[f] = bc[f].ambient;
    HEAT_CALL(write_array(path, restart, "boundary_h", H5T_NATIVE_DOUBLE, FACE_COUNT, h));
    return write_array(path, restart, "boundary_ambient", H5T_NATIVE_DOUBLE, FACE_COUNT, ambient);
}

/* ---- reading ---------------------------------------------------------------------------------- */

static int damaged(const char *path, const char *what)
{
    return heat_error(HEAT_ERR_RUNTIME, "%s: its materials tables are damaged (%s); restart from another "
                      "checkpoint", path, what);
}

/* An array attribute of exactly count values. */
static int read_array(const char *path, hid_t g, const char *name, hid_t type, int count, void *out)
{
    if (H5Aexists(g, name) <= 0) return damaged(path, name);
    hid_t attr = H5Aopen(g, name, H5P_DEFAULT);
    hid_t space = attr >= 0 ? H5Aget_space(attr) : -1;
    int sized = space >= 0 && H5Sget_simple_extent_npoints(space) == count;
    int ok = sized && H5Aread(attr, type, out) >= 0;
    if (space >= 0) H5Sclose(space);
    if (attr >= 0) H5Aclose(attr);
    if (!sized) return damaged(path, name);
    return ok ? HEAT_OK : h5_error(path, name);
}

/* The number of values of an array attribute (0 when absent or too large). */
static int array_length(hid_t g, const char *name, int most)
{
    if (H5Aexists(g, name) <= 0) return 0;
    hid_t attr = H5Aopen(g, name, H5P_DEFAULT);
    hid_t space = attr >= 0 ? H5Aget_space(attr) : -1;
    hssize_t n = space >= 0 ? H5Sget_simple_extent_npoints(space) : 0;
    if (space >= 0) H5Sclose(space);
    if (attr >= 0) H5Aclose(attr);
    return n > 0 && n <= most ? (int)n : 0;
}

static int read_names(const char *path, hid_t g, heat_materials *m)
{
    hid_t attr = H5Aopen(g, "material_names", H5P_DEFAULT);
    hid_t type = attr >= 0 ? H5Aget_type(attr) : -1;
    size_t size = type >= 0 && H5Tget_class(type) == H5T_STRING && !H5Tis_variable_str(type) ? H5Tget_size(type) : 0;
    char *text = size > 0 && size < HEAT_MATERIALS_MAX * HEAT_MATERIAL_NAME ? calloc(size + 1, 1) : NULL;
    int ok = text && H5Aread(attr, type, text) >= 0;
    if (type >= 0) H5Tclose(type);
    if (attr >= 0) H5Aclose(attr);
    int count = 0;
    for (char *name = ok ? text : NULL, *end; name && count < m->material_count; name = end ? end + 1 : NULL) {
        end = strchr(name, '\n');
        if (end) *end = '\0';
        snprintf(m->material[count++].name, HEAT_MATERIAL_NAME, "%s", name);
    }
    free(text);
    return ok && count == m->material_count ? HEAT_OK : damaged(path, "material_names");
}

static int read_tables(const char *path, hid_t g, heat_materials *m)
{
    m->material_count = array_length(g, "material_conductivity", HEAT_MATERIALS_MAX);
    m->zone_count = array_length(g, "zone_material", HEAT_ZONES_MAX);
    if (m->material_count == 0 || m->zone_count == 0) return damaged(path, "no materials or zones");
    double k[HEAT_MATERIALS_MAX], rho[HEAT_MATERIALS_MAX], c[HEAT_MATERIALS_MAX];
    HEAT_CALL(read_array(path, g, "material_conductivity", H5T_NATIVE_DOUBLE, m->material_count, k));
    HEAT_CALL(read_array(path, g, "material_density", H5T_NATIVE_DOUBLE, m->material_count, rho));
    HEAT_CALL(read_array(path, g, "material_specific_heat", H5T_NATIVE_DOUBLE, m->material_count, c));
    for (int i = 0; i < m->material_count; ++i)
        m->material[i].conductivity = k[i], m->material[i].density = rho[i], m->material[i].specific_heat = c[i];
    HEAT_CALL(read_names(path, g, m));
    int material[HEAT_ZONES_MAX];
    double source[HEAT_ZONES_MAX], on[HEAT_ZONES_MAX], off[HEAT_ZONES_MAX];
    HEAT_CALL(read_array(path, g, "zone_material", H5T_NATIVE_INT, m->zone_count, material));
    HEAT_CALL(read_array(path, g, "zone_source", H5T_NATIVE_DOUBLE, m->zone_count, source));
    HEAT_CALL(read_array(path, g, "zone_source_on", H5T_NATIVE_DOUBLE, m->zone_count, on));
    HEAT_CALL(read_array(path, g, "zone_source_off", H5T_NATIVE_DOUBLE, m->zone_count, off));
    for (int z = 0; z < m->zone_count; ++z) {
        if (material[z] < 0 || material[z] >= m->material_count) return damaged(path, "zone_material");
        m->zone[z] = (heat_zone){material[z], source[z], on[z], off[z]};
    }
    return HEAT_OK;
}

int ckpt_materials_read(const char *path, hid_t restart, heat_materials **m, heat_bc *bc)
{
    *m = NULL;
    if (H5Aexists(restart, "material_conductivity") <= 0) return HEAT_OK; /* a run without materials */
    *m = calloc(1, sizeof **m);
    HEAT_CHECK(*m, "out of memory");
    int status = read_tables(path, restart, *m);
    double h[FACE_COUNT], ambient[FACE_COUNT];
    if (status == HEAT_OK) status = read_array(path, restart, "boundary_h", H5T_NATIVE_DOUBLE, FACE_COUNT, h);
    if (status == HEAT_OK) status = read_array(path, restart, "boundary_ambient", H5T_NATIVE_DOUBLE, FACE_COUNT, ambient);
    for (int f = 0; status == HEAT_OK && f < FACE_COUNT; ++f) bc[f].h = h[f], bc[f].ambient = ambient[f];
    if (status != HEAT_OK) free(*m), *m = NULL;
    return status;
}

/* ---- comparing the zone index ----------------------------------------------------------------- */

/* z planes [z0, z0 + nz) of the file's zone field into zones. */
static int read_planes(const char *path, hid_t dset, const int *n, int z0, int nz, unsigned char *zones)
{
    hsize_t start[3] = {(hsize_t)z0, 0, 0}, count[3] = {(hsize_t)nz, (hsize_t)n[1], (hsize_t)n[0]};
    hid_t file_space = H5Dget_space(dset), memory = H5Screate_simple(3, count, NULL);
    int ok = file_space >= 0 && memory >= 0 &&
             H5Sselect_hyperslab(file_space, H5S_SELECT_SET, start, NULL, count, NULL) >= 0 &&
             H5Dread(dset, H5T_NATIVE_UCHAR, memory, file_space, H5P_DEFAULT, zones) >= 0;
    if (memory >= 0) H5Sclose(memory);
    if (file_space >= 0) H5Sclose(file_space);
    return ok ? HEAT_OK : damaged(path, "the zone field does not read back");
}

static int compare_planes(const char *path, hid_t dset, const heat_painting *p, long long *point, int *file_zone,
                          int *config_zone)
{
    const int *n = p->grid->n;
    int planes = 1 + (int)((16L << 20) / ((long)n[0] * n[1])); /* about 16 MB a pass */
    size_t bytes = (size_t)n[0] * n[1] * (size_t)planes;
    unsigned char *in_file = malloc(bytes), *painted = malloc(bytes);
    int status = in_file && painted ? HEAT_OK : heat_error(HEAT_ERR_RUNTIME, "out of memory comparing zones");
    for (int z0 = 0; status == HEAT_OK && *point < 0 && z0 < n[2]; z0 += planes) {
        int nz = z0 + planes <= n[2] ? planes : n[2] - z0;
        status = read_planes(path, dset, n, z0, nz, in_file);
        if (status == HEAT_OK) heat_regions_paint_slab(p, NULL, z0, nz, 0, n[1], painted, NULL);
        for (size_t i = 0; status == HEAT_OK && i < (size_t)nz * n[0] * n[1]; ++i)
            if (in_file[i] != painted[i]) {
                *point = (long long)z0 * n[0] * n[1] + (long long)i;
                *file_zone = in_file[i], *config_zone = painted[i];
                break;
            }
    }
    free(in_file), free(painted);
    return status;
}

int ckpt_materials_first_difference(const char *path, const heat_painting *p, long long *point, int *file_zone,
                                    int *config_zone)
{
    *point = -1;
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    hid_t file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (file < 0) return h5_error(path, "H5Fopen");
    int status = HEAT_OK;
    if (H5Lexists(file, "VTKHDF/PointData/zone", H5P_DEFAULT) <= 0) status = damaged(path, "no zone field");
    hid_t dset = status == HEAT_OK ? H5Dopen2(file, "VTKHDF/PointData/zone", H5P_DEFAULT) : -1;
    hid_t space = dset >= 0 ? H5Dget_space(dset) : -1;
    hsize_t dims[3] = {0, 0, 0};
    if (status == HEAT_OK && (space < 0 || H5Sget_simple_extent_ndims(space) != 3 ||
                              H5Sget_simple_extent_dims(space, dims, NULL) != 3 || dims[0] != (hsize_t)p->grid->n[2] ||
                              dims[1] != (hsize_t)p->grid->n[1] || dims[2] != (hsize_t)p->grid->n[0]))
        status = damaged(path, "the zone field's shape is not the grid's");
    if (status == HEAT_OK) status = compare_planes(path, dset, p, point, file_zone, config_zone);
    if (space >= 0) H5Sclose(space);
    if (dset >= 0) H5Dclose(dset);
    H5Fclose(file);
    return status;
}
