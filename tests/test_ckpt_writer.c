/* The checkpoint writer lets go of its snapshots' source in time: once
 * ckpt_writer_wait_snapshots returns, every write in flight has its
 * snapshot (its arrival wait has returned), however slowly snapshots
 * arrive, so a run may release its GPU while the writes go on; a write
 * submitted afterwards waits for its own snapshot again. The writes then
 * finish whole, each file holding the field it was given. */
#include <stdatomic.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/checkpoint.h"
#include "io/ckpt_writer.h"
#include "test_util.h"

enum { ARRIVAL_MICROSECONDS = 60000, WRITES_AT_ONCE = 3 };

static atomic_int arrivals;

/* Stands in for a GPU's copy that is still running when the write starts. */
static int slow_arrival(void *context)
{
    (void)context;
    usleep(ARRIVAL_MICROSECONDS);
    atomic_fetch_add(&arrivals, 1);
    return HEAT_OK;
}

static void fill(const heat_problem *p, void *field, long step)
{
    for (long at = 0; at < heat_grid_points(&p->grid); ++at) test_set(p, field, at, (double)(step * 1000 + at % 97));
}

static int file_holds(const heat_problem *p, const char *dir, long step)
{
    char path[600];
    ckpt_path(path, sizeof path, dir, "snap", step);
    void *back = test_alloc_field(p), *expected = test_alloc_field(p);
    ckpt_meta m;
    EXPECT_OK(ckpt_read(path, &m, back));
    ckpt_meta_free(&m);
    fill(p, expected, step);
    EXPECT(memcmp(back, expected, (size_t)heat_grid_points(&p->grid) * sizeof(double)) == 0,
           "the checkpoint of step %ld does not hold the field it was given", step);
    free(back), free(expected);
    return 0;
}

static int submit(ckpt_writer *w, const heat_problem *p, long step)
{
    EXPECT_OK(ckpt_writer_make_room(w));
    fill(p, ckpt_writer_buffer(w), step);
    EXPECT_OK(ckpt_writer_submit(w, step, (double)step * p->dt, 0));
    return 0;
}

int main(int argc, char **argv)
{
    char dir[512];
    snprintf(dir, sizeof dir, "%s/writer_snapshots", argc > 1 ? argv[1] : ".");
    mkdir(dir, 0755);
    heat_problem p = test_problem(40, 24, 16, 1.0, 0.6, 0.4, HEAT_DOUBLE);
    ckpt_writer_options o = {.dir = dir, .name = "snap", .codec = {1, CKPT_PARALLEL_ZLIB}, .threads = 1,
                             .frame_full = 1, .jobs = WRITES_AT_ONCE};
    ckpt_meta meta = {.dt = p.dt, .precision = p.precision, .grid = p.grid, .alpha = 1.0, .config_text = ""};
    heat_series series;
    series_init(&series, dir, "snap");
    ckpt_writer *w;
    EXPECT_OK(ckpt_writer_create(&o, &meta, &series, &w));
    ckpt_writer_set_arrival(w, slow_arrival, NULL);

    for (long step = 0; step < WRITES_AT_ONCE; ++step)
        if (submit(w, &p, step)) return 1;
    ckpt_writer_wait_snapshots(w);
    EXPECT(atomic_load(&arrivals) == WRITES_AT_ONCE, "%d of %d snapshots had arrived when the wait returned",
           atomic_load(&arrivals), WRITES_AT_ONCE);

    if (submit(w, &p, WRITES_AT_ONCE)) return 1;
    ckpt_writer_wait_snapshots(w);
    EXPECT(atomic_load(&arrivals) == WRITES_AT_ONCE + 1, "a write submitted after the wait did not wait for its own "
           "snapshot");

    EXPECT_OK(ckpt_writer_wait(w));
    ckpt_writer_stats stats = ckpt_writer_get_stats(w);
    EXPECT(stats.writes == WRITES_AT_ONCE + 1 && stats.failed == 0, "%ld writes, %ld failed", stats.writes,
           stats.failed);
    ckpt_writer_destroy(&w);
    for (long step = 0; step <= WRITES_AT_ONCE; ++step)
        if (file_holds(&p, dir, step)) return 1;
    return 0;
}
