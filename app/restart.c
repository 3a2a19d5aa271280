#include "restart.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/restart_aside.h"
#include "app/zones.h"
#include "io/checkpoint.h"
#include "io/ckpt_compat.h"
#include "io/fsutil.h"
#include "solver/error.h"
#include "solver/implicit.h"

static int load_file(const char *path, const heat_config *c, int allow, void *field, ckpt_meta *found)
{
    ckpt_meta meta;
    HEAT_CALL(ckpt_read_meta(path, &meta));
    if (meta.frame) {
        ckpt_meta_free(&meta);
        return heat_error(HEAT_ERR_CONFIG, "%s is a frame (written for viewing by output.frame_every, not "
                          "restartable); restart from a checkpoint written every output.every steps, or use "
                          "--restart latest", path);
    }
    /* A contradiction with the configuration is the user's to resolve: an
     * error even where damaged files are only warned about (load_latest). */
    int was = heat_errors_as_warnings(0);
    heat_painting painting = zones_painting(c); /* the zone index to compare, from the configuration's regions */
    int status = ckpt_compat_run(path, &meta, c, allow & RESTART_ALLOW_SCHEME);
    if (status == HEAT_OK && !(allow & RESTART_ALLOW_PROBLEM)) status = ckpt_compat_problem(path, &meta, c, &painting);
    heat_errors_as_warnings(was);
    ckpt_meta_free(&meta);
    HEAT_CALL(status);
    HEAT_CALL(ckpt_read(path, &meta, field));
    found->step = meta.step, found->time = meta.time, found->dt = meta.dt;
    found->implicit.scheme = meta.implicit.scheme, found->space_order = meta.space_order;
    found->energy_present = meta.energy_present;
    memcpy(found->energy_in, meta.energy_in, sizeof found->energy_in);
    ckpt_meta_free(&meta);
    return HEAT_OK;
}

static int is_frame(const char *path)
{
    ckpt_meta meta;
    int was = heat_errors_as_warnings(HEAT_ERRORS_SILENT); /* load_file says what is wrong with it */
    int read = ckpt_read_meta(path, &meta) == HEAT_OK, frame = read && meta.frame;
    heat_errors_as_warnings(was);
    if (read) ckpt_meta_free(&meta);
    return frame;
}

/* Frames but no checkpoint (removed to save room, say): none was damaged, so
 * "none reads back whole" would send the user looking for warnings that
 * were never printed. */
static int only_frames(const heat_config *c, int frames)
{
    return heat_error(HEAT_ERR_CONFIG, "--restart latest: %s holds %d frame%s %s_NNNNNN.hdf (written for viewing by "
                      "output.frame_every, not restartable) and no checkpoint to continue from; restart from a "
                      "checkpoint kept elsewhere with --restart FILE, or start afresh in another output.dir or with "
                      "--overwrite (which removes them)", c->output.dir,
                      frames, frames == 1 ? "" : "s", c->output.name);
}

/* The newest checkpoint in output.dir that reads back whole; frames are
 * passed over. A mismatch with the configuration is an error, not a reason
 * to look further back. */
static int load_latest(const heat_config *c, int allow, void *field, ckpt_meta *found, char *path,
                       size_t len)
{
    long *steps;
    int count = fs_list_checkpoints(c->output.dir, c->output.name, &steps);
    if (count <= 0) {
        free(steps);
        return heat_error(HEAT_ERR_CONFIG, "--restart latest: no checkpoint %s_NNNNNN.hdf in %s; run without "
                          "--restart first, or check output.dir and output.name", c->output.name, c->output.dir);
    }
    int status = HEAT_ERR_RUNTIME, frames = 0;
    for (int i = count - 1; i >= 0 && status == HEAT_ERR_RUNTIME; --i) {
        ckpt_path(path, len, c->output.dir, c->output.name, steps[i]);
        if (is_frame(path)) {
            ++frames;
            continue;
        }
        /* A damaged file here is expected and skipped: one warning says why. */
        int was = heat_errors_as_warnings(HEAT_ERRORS_SILENT);
        status = load_file(path, c, allow, field, found);
        heat_errors_as_warnings(was);
        if (status == HEAT_ERR_RUNTIME)
            heat_warn("--restart latest: skipping %s, which does not read back whole: %s", path,
                      heat_error_last_silenced());
    }
    free(steps);
    if (frames == count) return only_frames(c, count);
    if (frames && status == HEAT_OK)
        printf("--restart latest: passed over %d newer frame%s (not restartable)\n", frames, frames == 1 ? "" : "s");
    if (status == HEAT_ERR_RUNTIME)
        return heat_error(HEAT_ERR_RUNTIME, "--restart latest: none of the %d checkpoints %s_NNNNNN.hdf in %s reads "
                          "back whole (see the warnings above); restart from a copy kept elsewhere with --restart "
                          "FILE, or start afresh with --overwrite", count - frames, c->output.name, c->output.dir);
    return status;
}

/* Why a restart may take another dt (io/ckpt_compat.c let it through): an implicit scheme is stable
 * at any dt, and another scheme or space order has an explicit limit of its own. */
static const char *dt_change_reason(const ckpt_meta *found, const heat_config *c)
{
    if (c->implicit.scheme != HEAT_EULER) return "implicit scheme";
    if (found->implicit.scheme != c->implicit.scheme) return "scheme change";
    return "space order change";
}

/* The series on disk still lists the files just set aside, and the run lists
 * its own only at its first write, which may come hours later or never (a
 * crash, a kill -9): meanwhile ParaView would meet missing files. So it lists
 * the run as it stands at once. */
static int list_run_so_far(const heat_series *series, const char *dir)
{
    HEAT_CALL(series_write(series));
    return fs_sync_folder(dir);
}

int restart_load(const char *spec, int allow, const heat_config *c, void *field, restart_point *point,
                 heat_series *series, int quiet)
{
    char path[1024];
    ckpt_meta found = {0};
    if (strcmp(spec, "latest") == 0) {
        HEAT_CALL(load_latest(c, allow, field, &found, path, sizeof path));
    } else {
        snprintf(path, sizeof path, "%s", spec);
        HEAT_CALL(load_file(path, c, allow, field, &found));
    }
    point->step = found.step, point->time = found.time;
    if (!quiet) printf("restarted from %s at step %ld (t = %.6g)\n", path, found.step, found.time);
    point->energy_present = found.energy_present;
    memcpy(point->energy_in, found.energy_in, sizeof point->energy_in);
    if (found.dt != c->dt && !quiet)
        printf("the time step changes at step %ld from %.6g to %.6g (%s); later checkpoints record the new one\n",
               found.step, found.dt, c->dt, dt_change_reason(&found, c));
    if (found.step >= c->steps) return HEAT_OK;
    int set_aside;
    HEAT_CALL(restart_set_aside_later(c->output.dir, c->output.name, found.step, quiet, &set_aside));
    HEAT_CALL(series_scan(series, found.step));
    return set_aside ? list_run_so_far(series, c->output.dir) : HEAT_OK;
}
