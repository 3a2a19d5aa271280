/* A checkpoint written and read back gives the same bits and metadata, in
 * both precisions and at compression 0 (no filter), 1 and 6, for both
 * writing methods, and on grids whose last chunks stick out of the field
 * next to chunks compressed in place. A field whose low bytes are random
 * is written with those byte planes in stored deflate blocks, and HDF5's
 * own filter reads it. A chunk's compressed bytes do not depend on what
 * the stack held. */
#include <hdf5.h>
#include <pthread.h>
#include <stdint.h>

#include "io/checkpoint.h"
#include "io/compress.h"
#include "solver/error.h"
#include "test_util.h"

static int roundtrip_grid(const int n[3], heat_precision precision, int level, ckpt_method method, const char *dir)
{
    heat_problem p = test_problem(n[0], n[1], n[2], 1.0, 0.7, 0.3, precision);
    void *field = test_alloc_field(&p), *back = test_alloc_field(&p);
    heat_initial init = {.type = INITIAL_LETTERS, .text = "AB", .letter_temperature = 7.5, .plate_thickness = 0.3,
                         .letter_height = 0.4, .margin = 0.05};
    heat_initial_fill(&init, &p.grid, precision, field);
    for (long at = 0; at < heat_grid_points(&p.grid); at += 7) test_set(&p, field, at, 0.1 * (double)at); /* no runs of zeros */
    ckpt_meta m = {.step = 42, .time = 0.125, .dt = 1.0 / 3.0, .precision = precision, .grid = p.grid, .alpha = 0.7,
                   .config_text = "grid = { n = [37, 23, 11]; };"};
    m.bc[FACE_Z_LOW] = (heat_bc){.type = HEAT_BC_DIRICHLET, .value = -2.5};
    const double energy_in[4] = {1.0 / 3.0, -2.5e-7, 1e300, -0.0};
    m.energy_present = level % 2; /* a materials run's energy balance (every other file) */
    memcpy(m.energy_in, energy_in, sizeof energy_in);
    char path[512];
    snprintf(path, sizeof path, "%s/roundtrip_%dx%dx%d_%d_%d_%d.hdf", dir, n[0], n[1], n[2], precision, level, method);
    EXPECT_OK(ckpt_write(path, &m, &(ckpt_source){field, precision, NULL}, &(ckpt_codec){level, method}, NULL));
    ckpt_meta r;
    EXPECT_OK(ckpt_read(path, &r, back));
    size_t bytes = (size_t)heat_grid_points(&p.grid) * heat_precision_size(precision);
    EXPECT(memcmp(field, back, bytes) == 0, "field differs after the round trip");
    EXPECT(r.step == 42 && r.time == 0.125 && r.dt == 1.0 / 3.0 && r.alpha == 0.7, "scalars differ");
    EXPECT(memcmp(r.grid.n, p.grid.n, sizeof r.grid.n) == 0 && r.precision == precision, "grid differs");
    EXPECT(r.bc[FACE_Z_LOW].type == HEAT_BC_DIRICHLET && r.bc[FACE_Z_LOW].value == -2.5, "boundary differs");
    EXPECT(strcmp(r.config_text, m.config_text) == 0, "config text differs");
    EXPECT(r.energy_present == m.energy_present, "the energy balance's sums are %s", r.energy_present ? "there" : "lost");
    EXPECT(!m.energy_present || memcmp(r.energy_in, energy_in, sizeof energy_in) == 0, "the energy balance's sums differ");
    printf("%d x %d x %d %s level %d method %d: round trip bitwise equal\n", n[0], n[1], n[2],
           heat_precision_name(precision), level, method);
    ckpt_meta_free(&r);
    free(field), free(back);
    return 0;
}

/* One chunk holding the whole field. */
static int roundtrip(heat_precision precision, int level, ckpt_method method, const char *dir)
{
    return roundtrip_grid((int[3]){37, 23, 11}, precision, level, method, dir);
}

/* Grids whose last chunks stick out of the field, along z (chunks of 17
 * planes over 40) and along y (chunks of 32 rows of 4096 values over 75):
 * those are gathered through a zero-padded copy, the others compressed in place. */
static int roundtrip_partial_chunks(const char *dir)
{
    int failed = 0;
    for (int level = 0; level <= 1; ++level) {
        failed |= roundtrip_grid((int[3]){96, 80, 40}, HEAT_DOUBLE, level, CKPT_PARALLEL_RLE, dir);
        failed |= roundtrip_grid((int[3]){4096, 75, 2}, HEAT_DOUBLE, level, CKPT_PARALLEL_RLE, dir);
    }
    return failed;
}

/* A smooth double field whose low five bytes are noise, as in any evolved
 * field: after the shuffle its first byte planes look random. */
static void fill_noisy_doubles(double *field, long points)
{
    uint64_t state = 12345;
    for (long at = 0; at < points; ++at) {
        double smooth = 300.0 + 50.0 * sin(1e-4 * (double)at);
        uint64_t bits;
        memcpy(&bits, &smooth, sizeof bits);
        state = state * 6364136223846793005u + 1442695040888963407u;
        bits = (bits & ~UINT64_C(0xffffffffff)) | (state >> 24);
        memcpy(&field[at], &bits, sizeof bits);
    }
}

/* Reads the field through HDF5's own shuffle + deflate filters. */
static int read_with_hdf5(const char *path, double *field)
{
    hid_t file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    EXPECT(file >= 0, "H5Fopen(%s) failed", path);
    hid_t d = H5Dopen2(file, "/VTKHDF/PointData/temperature", H5P_DEFAULT);
    EXPECT(d >= 0, "H5Dopen2 failed");
    EXPECT(H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, field) >= 0, "H5Dread failed");
    H5Dclose(d);
    H5Fclose(file);
    return 0;
}

/* Which byte planes go in stored blocks: the noisy ones of a noisy field,
 * none of a field of small integers (whose low bytes are all zero). */
static int stored_planes(const chunk_plan *plan, const double *field, int *stored, int *chunks_out)
{
    int total = chunk_plan_total(plan);
    chunk_data *chunks = calloc((size_t)total, sizeof *chunks);
    EXPECT(chunks && chunks_compress(plan, field, (chunk_codec){1, 1}, 1, chunks), "chunks_compress failed");
    *stored = 0;
    for (int c = 0; c < total; ++c) *stored += chunks[c].stored_planes;
    *chunks_out = total;
    chunks_free(chunks, total);
    free(chunks);
    return 0;
}

static int random_planes_stored(const char *dir)
{
    heat_problem p = test_problem(96, 80, 51, 1.0, 1.0, 1.0, HEAT_DOUBLE); /* 3 full chunks of 16 planes, and 3 */
    long points = heat_grid_points(&p.grid);
    double *field = test_alloc_field(&p), *back = test_alloc_field(&p), *by_hdf5 = test_alloc_field(&p);
    int dims[3] = {p.grid.n[2], p.grid.n[1], p.grid.n[0]}, stored = 0, chunks = 0;
    chunk_plan plan = chunk_plan_make(dims, sizeof(double));
    for (long at = 0; at < points; ++at) field[at] = (double)(at % 1000);
    if (stored_planes(&plan, field, &stored, &chunks)) return 1;
    EXPECT(stored == 0, "a field of integers had %d byte planes stored", stored);
    fill_noisy_doubles(field, points);
    if (stored_planes(&plan, field, &stored, &chunks)) return 1;
    /* Only the zlib engine stores random-looking planes (with ISA-L, storing them is no
     * faster): the five noise planes of each full chunk; the last chunk (3 of its 16 planes
     * in the field) is mostly zero padding, which compresses. */
    int expected = strcmp(chunk_engine_name(), "zlib") == 0 ? 5 * (chunks - 1) : 0;
    EXPECT(stored == expected, "%d byte planes stored in %d chunks by %s, expected %d", stored, chunks,
           chunk_engine_name(), expected);

    ckpt_meta m = {.step = 1, .dt = 1e-3, .precision = HEAT_DOUBLE, .grid = p.grid, .alpha = 1.0, .config_text = ""};
    char path[512];
    snprintf(path, sizeof path, "%s/random_planes.hdf", dir);
    EXPECT_OK(ckpt_write(path, &m, &(ckpt_source){field, HEAT_DOUBLE, NULL}, &(ckpt_codec){1, CKPT_PARALLEL_RLE}, NULL));
    ckpt_meta r;
    EXPECT_OK(ckpt_read(path, &r, back));
    ckpt_meta_free(&r);
    if (read_with_hdf5(path, by_hdf5)) return 1;
    EXPECT(memcmp(field, back, (size_t)points * sizeof *field) == 0, "heatsolve's reader: field differs");
    EXPECT(memcmp(field, by_hdf5, (size_t)points * sizeof *field) == 0, "HDF5's filter: field differs");
    printf("noisy byte planes: %d of %d stored, read back bitwise by heatsolve and by HDF5's filter\n", stored,
           8 * chunks);
    free(field), free(back), free(by_hdf5);
    return 0;
}

/* One chunk compressed on a thread whose stack starts out as 16-bit words
 * of `value` (what earlier calls left there, on a real thread). */
typedef struct soiled_job {
    const chunk_plan *plan;
    const double *field;
    unsigned char *work;
    chunk_data *out;
    int ok;
} soiled_job;

static void *compress_soiled(void *arg)
{
    soiled_job *j = arg;
    j->ok = chunk_compress(j->plan, j->field, 0, (chunk_codec){1, 1}, 1, j->work, j->out);
    return NULL;
}

static int compress_on_soiled_stack(soiled_job *job, uint16_t value)
{
    enum { STACK_BYTES = 4 << 20 };
    uint16_t *stack = aligned_alloc(4096, STACK_BYTES);
    EXPECT(stack, "out of memory");
    for (size_t i = 0; i < STACK_BYTES / sizeof *stack; ++i) stack[i] = value;
    pthread_attr_t attr;
    pthread_t thread;
    EXPECT(pthread_attr_init(&attr) == 0 && pthread_attr_setstack(&attr, stack, STACK_BYTES) == 0, "pthread_attr");
    EXPECT(pthread_create(&thread, &attr, compress_soiled, job) == 0, "pthread_create failed");
    pthread_join(thread, NULL);
    pthread_attr_destroy(&attr);
    free(stack);
    EXPECT(job->ok, "chunk_compress failed (a stack of %u)", value);
    return 0;
}

/* A 256 x 64 x 8 field of noise whose rows repeat every 16 rows, 4 KiB apart
 * in each shuffled byte plane: matches that a shrunken deflate window (512 B)
 * misses. dims: its extent as z, y, x. */
static double *repeating_rows_field(int dims[3])
{
    heat_problem p = test_problem(256, 64, 8, 1.0, 1.0, 1.0, HEAT_DOUBLE);
    long points = heat_grid_points(&p.grid);
    double *field = test_alloc_field(&p);
    fill_noisy_doubles(field, points);
    for (long at = 16 * 256; at < points; ++at) field[at] = field[at - 16 * 256];
    dims[0] = p.grid.n[2], dims[1] = p.grid.n[1], dims[2] = p.grid.n[0];
    return field;
}

/* A chunk compresses to the same bytes whatever its thread's stack held
 * before: ISA-L's stream has fields (the window's hist_bits among them) that
 * its init leaves alone, and garbage there shrinks the window on some
 * threads (much larger checkpoints). */
static int compression_ignores_stack(void)
{
    int dims[3];
    double *field = repeating_rows_field(dims);
    chunk_plan plan = chunk_plan_make(dims, sizeof(double));
    size_t bound = chunk_bound(&plan, (chunk_codec){1, 1});
    unsigned char *work = malloc(chunk_work_bytes(&plan));
    chunk_data clean = {.bytes = malloc(bound)}, soiled = {.bytes = malloc(bound)};
    EXPECT(work && clean.bytes && soiled.bytes, "out of memory");
    soiled_job job = {&plan, field, work, &clean, 0};
    if (compress_on_soiled_stack(&job, 0)) return 1;
    job.out = &soiled;
    for (uint16_t value = 1; value <= 15; ++value) {
        if (compress_on_soiled_stack(&job, value)) return 1;
        EXPECT(soiled.size == clean.size && memcmp(soiled.data, clean.data, clean.size) == 0,
               "a stack of %u made the chunk %zu bytes, against %zu", value, soiled.size, clean.size);
    }
    printf("a chunk compresses to the same %zu bytes (of %zu) whatever the stack held\n", clean.size, plan.raw_bytes);
    free(work), free(clean.bytes), free(soiled.bytes), free(field);
    return 0;
}

/* A chunk compresses to the same bytes whatever its thread's work area held:
 * the area (and ISA-L's hash table in it) is allocated once a thread and
 * reused for every chunk, so it holds what the previous chunk left, or
 * anything at all. */
static int compression_ignores_work(void)
{
    int dims[3];
    double *field = repeating_rows_field(dims);
    chunk_plan plan = chunk_plan_with(dims, (int[3]){2, dims[1], dims[2]}, sizeof(double));
    size_t bound = chunk_bound(&plan, (chunk_codec){1, 1}), work_bytes = chunk_work_bytes(&plan);
    unsigned char *work = calloc(1, work_bytes);
    chunk_data clean = {.bytes = malloc(bound)}, other = {.bytes = malloc(bound)};
    EXPECT(work && clean.bytes && other.bytes, "out of memory");
    EXPECT(chunk_compress(&plan, field, 0, (chunk_codec){1, 1}, 1, work, &clean), "chunk_compress failed");
    const unsigned char fills[] = {0xff, 0x01, 0x5a};
    for (int round = 0; round < 4; ++round) {
        if (round < 3) memset(work, fills[round], work_bytes);
        else EXPECT(chunk_compress(&plan, field, 2, (chunk_codec){1, 1}, 1, work, &other), "chunk_compress failed");
        EXPECT(chunk_compress(&plan, field, 0, (chunk_codec){1, 1}, 1, work, &other), "chunk_compress failed");
        EXPECT(other.size == clean.size && memcmp(other.data, clean.data, clean.size) == 0,
               "a work area %s made the chunk %zu bytes, against %zu",
               round < 3 ? "filled with garbage" : "used for another chunk", other.size, clean.size);
    }
    printf("a chunk compresses to the same %zu bytes whatever its work area held\n", clean.size);
    free(work), free(clean.bytes), free(other.bytes), free(field);
    return 0;
}

/* A frame of a double field: chunks converted to float32 as they are
 * gathered (whole-field chunks, chunks sticking out of the field, every
 * writing method) read back as exactly (float) of every value. Narrowing a
 * restart checkpoint is refused. */
static int frame_from_doubles(const char *dir)
{
    heat_problem p = test_problem(96, 80, 40, 1.0, 1.0, 1.0, HEAT_DOUBLE);
    long points = heat_grid_points(&p.grid);
    double *field = test_alloc_field(&p);
    float *back = malloc(sizeof *back * (size_t)points), *expected = malloc(sizeof *expected * (size_t)points);
    EXPECT(back && expected, "out of memory");
    fill_noisy_doubles(field, points);
    for (long at = 0; at < points; ++at) expected[at] = (float)field[at];
    ckpt_meta m = {.step = 7, .dt = 1e-3, .precision = HEAT_FLOAT, .grid = p.grid, .alpha = 1.0, .config_text = "",
                   .frame = 1};
    ckpt_source doubles = {field, HEAT_DOUBLE, NULL};
    for (int level = 0; level <= 1; ++level)
        for (int method = 0; method < 3; ++method) {
            if (level == 0 && method == CKPT_HDF5_FILTER) continue;
            char path[512];
            snprintf(path, sizeof path, "%s/frame_from_doubles_%d_%d.hdf", dir, level, method);
            EXPECT_OK(ckpt_write(path, &m, &doubles, &(ckpt_codec){level, (ckpt_method)method}, NULL));
            ckpt_meta r;
            EXPECT_OK(ckpt_read(path, &r, back));
            EXPECT(r.precision == HEAT_FLOAT && r.frame, "the frame reads back as %s, frame %d",
                   heat_precision_name(r.precision), r.frame);
            ckpt_meta_free(&r);
            EXPECT(memcmp(back, expected, sizeof *back * (size_t)points) == 0,
                   "level %d method %d: the frame is not (float) of the field", level, method);
        }
    m.frame = 0;
    char path[512];
    snprintf(path, sizeof path, "%s/narrowed_restart.hdf", dir);
    EXPECT(ckpt_write(path, &m, &doubles, &(ckpt_codec){1, CKPT_PARALLEL_RLE}, NULL) != HEAT_OK,
           "a double field was written as a float32 restart checkpoint");
    printf("frames from doubles: converted chunk by chunk, (float) of every value, all methods\n");
    free(field), free(back), free(expected);
    return 0;
}

int main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : ".";
    int failed = 0;
    for (int precision = 0; precision < 2; ++precision)
        for (int level = 0; level <= 6; level += level ? 5 : 1)
            for (int method = 0; method < 2; ++method)
                failed |= roundtrip((heat_precision)precision, level, (ckpt_method)method, dir);
    failed |= roundtrip_partial_chunks(dir);
    failed |= random_planes_stored(dir);
    failed |= frame_from_doubles(dir);
    failed |= compression_ignores_stack();
    failed |= compression_ignores_work();
    return failed;
}
