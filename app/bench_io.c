/*
 * heatsolve bench --io: what a checkpoint costs and what it could cost.
 * The floor of a checkpoint is max(compressed bytes / the folder's fsync
 * bandwidth, raw bytes / the compression stage's rate): a pipelined writer
 * cannot beat the slower of its two stages. All figures come from this run:
 * the compression stage alone (in memory, every thread), the whole
 * checkpoint (compress, write, one fsync, rename), the fsync bandwidth
 * (a scratch file of the checkpoint's compressed size in the same folder),
 * and the restart read (CRC checks, inflate, unshuffle).
 */
#define _GNU_SOURCE /* sync_file_range */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "app/bench.h"
#include "app/bench_common.h"
#include "app/progress.h"
#include "io/checkpoint.h"
#include "io/compress.h"
#include "io/chunk_stream.h"
#include "io/config.h"
#include "solver/error.h"
#include "solver/solver.h"

enum { REPEATS = 3 };

typedef struct io_report {
    int n[3];
    heat_precision precision;
    int level, threads;
    double raw_bytes, stored_bytes, file_bytes, filter_file_bytes;
    double compress_s, write_s, fsync_s, read_s, filter_s;
    ckpt_write_stats phases; /* of the fastest whole checkpoint */
} io_report;

/* A realistic field: the letters after 200 steps of diffusion (the initial
 * field, mostly constant, compresses unrealistically fast). */
static int evolved_letters(heat_config *c, void *field)
{
    heat_problem p;
    heat_config_problem(c, &p);
    p.quiet = 1;
    heat_solver *s;
    HEAT_CALL(heat_solver_create(&p, HEAT_SELECT_CPU, &s));
    heat_initial_fill(&c->initial, &p.grid, p.precision, field);
    int status = heat_solver_set_field(s, field, 0);
    if (status == HEAT_OK) status = heat_solver_advance(s, 200);
    if (status == HEAT_OK) status = heat_solver_get_field(s, field);
    heat_solver_destroy(&s);
    return status;
}

/* The compression stage alone: every chunk, every thread, in memory. */
static int time_compression(const ckpt_meta *m, const void *field, int level, io_report *r)
{
    int dims[3] = {m->grid.n[2], m->grid.n[1], m->grid.n[0]};
    chunk_plan plan = chunk_plan_make(dims, heat_precision_size(m->precision));
    chunk_codec codec = {level, 1};
    int total = chunk_plan_total(&plan), shuffle = chunk_should_shuffle(&plan, field, codec);
    chunk_data *chunks = calloc((size_t)total, sizeof *chunks);
    HEAT_CHECK(chunks, "out of memory");
    r->compress_s = -1;
    int ok = 1;
    for (int rep = 0; rep < REPEATS && ok; ++rep) {
        double start = progress_now();
        ok = chunks_compress(&plan, field, codec, shuffle, chunks);
        double t = progress_now() - start;
        if (r->compress_s < 0 || t < r->compress_s) r->compress_s = t;
        r->stored_bytes = 0;
        for (int c = 0; c < total; ++c) r->stored_bytes += (double)chunks[c].size;
        chunks_free(chunks, total);
    }
    free(chunks);
    HEAT_CHECK(ok, "compressing the benchmark field failed");
    return HEAT_OK;
}

/* The fastest of `repeats` writes, and its phases (phases may be NULL). */
static double best_write(const char *path, const ckpt_meta *m, const void *field, int level, ckpt_method method,
                         int repeats, ckpt_write_stats *phases)
{
    double best = -1.0;
    ckpt_source whole = {field, m->precision, NULL};
    ckpt_codec codec = {level, method};
    for (int rep = 0; rep < repeats; ++rep) {
        ckpt_write_stats stats;
        double start = progress_now();
        if (ckpt_write(path, m, &whole, &codec, &stats) != HEAT_OK) return -1.0;
        double t = progress_now() - start;
        if (best < 0 || t < best) {
            best = t;
            if (phases) *phases = stats;
        }
    }
    return best;
}

/* Writes `bytes` of incompressible-looking data to a scratch file in dir the
 * way the checkpoint writer does (8 MiB writes, writeback started every
 * CHUNK_WRITEBACK_BYTES, one fsync), then removes it: the disk's own speed for a
 * checkpoint's bytes. Best of REPEATS, like the checkpoint itself. */
static int fsync_once(const char *path, const unsigned char *data, size_t block, double bytes, double *seconds)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0) return heat_error(HEAT_ERR_RUNTIME, "cannot create %s: %s", path, strerror(errno));
    double start = progress_now(), since_hint = 0, done = 0;
    int err = 0;
    while (done < bytes && !err) {
        size_t n = bytes - done < (double)block ? (size_t)(bytes - done) : block;
        ssize_t w = write(fd, data, n);
        if (w <= 0) err = w < 0 ? errno : EIO;
        else done += (double)w, since_hint += (double)w;
        if (since_hint >= CHUNK_WRITEBACK_BYTES) sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE), since_hint = 0;
    }
    if (!err && fsync(fd) != 0) err = errno;
    *seconds = progress_now() - start;
    close(fd);
    unlink(path);
    if (err) return heat_error(HEAT_ERR_RUNTIME, "cannot write %s: %s", path, strerror(err));
    return HEAT_OK;
}

static int time_fsync(const char *dir, double bytes, double *seconds)
{
    char path[1100];
    snprintf(path, sizeof path, "%s/.heatsolve_fsync_probe_%ld", dir, (long)getpid());
    size_t block = 8 << 20;
    unsigned char *data = malloc(block);
    HEAT_CHECK(data, "out of memory");
    for (size_t i = 0; i < block; ++i) data[i] = (unsigned char)(i * 2654435761u >> 13);
    int status = HEAT_OK;
    *seconds = -1;
    for (int rep = 0; rep < REPEATS && status == HEAT_OK; ++rep) {
        double t = 0;
        status = fsync_once(path, data, block, bytes, &t);
        if (*seconds < 0 || t < *seconds) *seconds = t;
    }
    free(data);
    return status;
}

static int time_read(const char *path, const ckpt_meta *m, double *seconds)
{
    void *back = malloc((size_t)heat_grid_points(&m->grid) * heat_precision_size(m->precision));
    HEAT_CHECK(back, "out of memory");
    int status = HEAT_OK;
    *seconds = -1;
    for (int rep = 0; rep < REPEATS && status == HEAT_OK; ++rep) {
        ckpt_meta r;
        double start = progress_now();
        status = ckpt_read(path, &r, back);
        double t = progress_now() - start;
        if (status == HEAT_OK) ckpt_meta_free(&r);
        if (*seconds < 0 || t < *seconds) *seconds = t;
    }
    free(back);
    return status;
}

static double file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (double)st.st_size : 0.0;
}

static void print_report(const io_report *r, const char *dir)
{
    double compress_rate = r->raw_bytes / r->compress_s, fsync_rate = r->stored_bytes / r->fsync_s;
    double floor = r->stored_bytes / fsync_rate > r->raw_bytes / compress_rate ? r->stored_bytes / fsync_rate
                                                                                 : r->raw_bytes / compress_rate;
    printf("  compression stage (%s, %d threads, in memory)  %.3f s  %6.3f GB/s raw  ratio %.3f\n",
           chunk_engine_name(), r->threads, r->compress_s, compress_rate / 1e9, r->raw_bytes / r->stored_bytes);
    printf("  fsync bandwidth of %s                           %.3f s  %6.3f GB/s (%.1f MB scratch file)\n", dir,
           r->fsync_s, fsync_rate / 1e9, r->stored_bytes / 1e6);
    printf("  whole checkpoint (write, fsync, rename)            %.3f s  %6.3f GB/s raw  file %.1f MB\n", r->write_s,
           r->raw_bytes / r->write_s / 1e9, r->file_bytes / 1e6);
    printf("    of which the file (compressed, written, closed) %.3f s, whole-file CRC %.3f s, fsync and rename %.3f s\n",
           r->phases.file_seconds, r->phases.seal_seconds, r->phases.commit_seconds);
    printf("  floor max(compressed / fsync, raw / compression)   %.3f s: the checkpoint takes %.2fx its floor\n",
           floor, r->write_s / floor);
    printf("  restart read (CRCs, inflate)                       %.3f s  %6.3f GB/s raw\n", r->read_s,
           r->raw_bytes / r->read_s / 1e9);
    if (r->filter_s > 0) {
        printf("  HDF5's own deflate filter, one thread, for comparison %.3f s  %6.3f GB/s raw (%.1fx slower)\n",
               r->filter_s, r->raw_bytes / r->filter_s / 1e9, r->filter_s / r->write_s);
        /* the same field, chunks, shuffle and level through zlib: the ratio to compare against */
        printf("    its file (zlib) %.1f MB, ratio %.3f: ours is %.1f%% %s\n", r->filter_file_bytes / 1e6,
               r->raw_bytes / r->filter_file_bytes, 100 * fabs(r->file_bytes / r->filter_file_bytes - 1),
               r->file_bytes > r->filter_file_bytes ? "larger" : "smaller");
    }
}

/* A folder name may hold quotes or backslashes; JSON needs them escaped. */
static void write_json_string(FILE *f, const char *text)
{
    fputc('"', f);
    for (const unsigned char *c = (const unsigned char *)text; *c; c++) {
        if (*c == '"' || *c == '\\') fprintf(f, "\\%c", *c);
        else if (*c < 0x20) fprintf(f, "\\u%04x", *c);
        else fputc(*c, f);
    }
    fputc('"', f);
}

static int write_json(const char *path, const io_report *r, const char *dir)
{
    bench_json j;
    HEAT_CALL(bench_json_open(&j));
    FILE *f = j.f;
    double floor = r->fsync_s > r->compress_s ? r->fsync_s : r->compress_s;
    /* Times keep nine significant digits: a small grid writes in milliseconds, and six decimals
       would round away the ratios a reader recomputes from them. */
    fprintf(f, "{\n  \"benchmark\": \"io\",\n  \"size\": [%d, %d, %d],\n  \"precision\": \"%s\",\n  \"level\": %d,\n"
               "  \"engine\": \"%s\",\n  \"threads\": %d,\n  \"dir\": ",
            r->n[0], r->n[1], r->n[2], heat_precision_name(r->precision), r->level, chunk_engine_name(), r->threads);
    write_json_string(f, dir);
    fprintf(f, ",\n  \"raw_bytes\": %.0f,\n"
               "  \"compressed_bytes\": %.0f,\n  \"ratio\": %.9g,\n  \"compression_s\": %.9g,\n"
               "  \"compression_GBs\": %.9g,\n  \"checkpoint_s\": %.9g,\n  \"checkpoint_GBs\": %.9g,\n"
               "  \"fsync_s\": %.9g,\n  \"fsync_GBs\": %.9g,\n  \"floor_s\": %.9g,\n  \"checkpoint_over_floor\": %.9g,\n"
               "  \"restart_read_s\": %.9g,\n  \"restart_read_GBs\": %.9g,\n  \"hdf5_filter_s\": %.9g,\n"
               "  \"file_bytes\": %.0f,\n  \"hdf5_filter_file_bytes\": %.0f,\n"
               "  \"file_s\": %.9g,\n  \"seal_s\": %.9g,\n  \"commit_s\": %.9g\n}\n",
            r->raw_bytes, r->stored_bytes, r->raw_bytes / r->stored_bytes, r->compress_s,
            r->raw_bytes / r->compress_s / 1e9, r->write_s, r->raw_bytes / r->write_s / 1e9, r->fsync_s,
            r->stored_bytes / r->fsync_s / 1e9, floor, r->write_s / floor, r->read_s, r->raw_bytes / r->read_s / 1e9,
            r->filter_s, r->file_bytes, r->filter_file_bytes, r->phases.file_seconds, r->phases.seal_seconds,
            r->phases.commit_seconds);
    return bench_json_commit(&j, path);
}

static int measure(const heat_cli *cli, const ckpt_meta *m, const void *field, io_report *r)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/heatsolve_bench_io_%ld.hdf", cli->io_dir, (long)getpid());
    HEAT_CALL(time_compression(m, field, r->level, r));
    r->write_s = best_write(path, m, field, r->level, CKPT_PARALLEL_RLE, REPEATS, &r->phases);
    HEAT_CHECK(r->write_s > 0, "checkpoint benchmark write to %s failed", path);
    r->file_bytes = file_size(path);
    int status = time_fsync(cli->io_dir, r->stored_bytes, &r->fsync_s);
    if (status == HEAT_OK) status = time_read(path, m, &r->read_s);
    /* HDF5's filter on one thread: at 512^3 it takes tens of seconds, so only where the field is small. */
    if (status == HEAT_OK && r->level > 0 && r->raw_bytes <= 300e6)
        r->filter_s = best_write(path, m, field, r->level, CKPT_HDF5_FILTER, 1, NULL);
    if (r->filter_s > 0) r->filter_file_bytes = file_size(path);
    unlink(path);
    return status;
}

int bench_io(const heat_cli *cli)
{
    heat_config c;
    char *overrides[] = {"output.name=\"bench_io\""};
    HEAT_CALL(heat_config_load_string("", "bench", overrides, 1, &c));
    for (int d = 0; d < 3; ++d) c.grid.n[d] = cli->size[0] ? cli->size[d] : 256;
    c.grid.length[0] = 4.0, c.grid.length[1] = 2.0, c.grid.length[2] = 1.0;
    heat_grid_set_spacing(&c.grid);
    c.dt = 0.9 * heat_dt_max(&c.grid, c.alpha);
    c.precision = cli->precision;
    ckpt_meta m = {.step = 0, .dt = c.dt, .precision = (heat_precision)c.precision, .grid = c.grid, .alpha = 1.0,
                   .config_text = c.text};
    io_report r = {.precision = m.precision, .level = cli->level, .threads = omp_get_max_threads()};
    memcpy(r.n, c.grid.n, sizeof r.n);
    r.raw_bytes = (double)heat_grid_points(&c.grid) * (double)heat_precision_size(m.precision);
    void *field = malloc((size_t)r.raw_bytes);
    HEAT_CHECK(field, "cannot allocate %.0f bytes", r.raw_bytes);
    int status = evolved_letters(&c, field);
    if (status == HEAT_OK)
        printf("checkpoint of %d x %d x %d %s, letters after 200 steps (%.1f MB raw), deflate level %d, best of %d:\n",
               r.n[0], r.n[1], r.n[2], heat_precision_name(m.precision), r.raw_bytes / 1e6, r.level, REPEATS);
    if (status == HEAT_OK) status = measure(cli, &m, field, &r);
    if (status == HEAT_OK) print_report(&r, cli->io_dir);
    if (status == HEAT_OK && cli->json) status = write_json(cli->json, &r, cli->io_dir);
    free(field);
    heat_config_destroy(&c);
    return status;
}
