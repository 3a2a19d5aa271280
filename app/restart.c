#include "restart.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/restart_aside.h"
#include "io/checkpoint.h"
#include "io/fsutil.h"
#include "app/restart_problem.h"
#include "solver/error.h"
#include "solver/implicit.h"

static int mismatch(const char *path, const char *what, const char *in_file, const char *in_config)
{
    return heat_error(HEAT_ERR_CONFIG, "%s has %s = %s but the configuration has %s; restart with the configuration "
                      "that wrote it (its text is in the file's /restart/config)", path, what, in_file, in_config);
}

static void format_triple(char *buf, size_t len, const double v[3])
{
    snprintf(buf, len, "[%.17g, %.17g, %.17g]", v[0], v[1], v[2]);
}

static int check_grid(const char *path, const ckpt_meta *m, const heat_config *c)
{
    char a[128], b[128];
    if (memcmp(m->grid.n, c->grid.n, sizeof m->grid.n) != 0) {
        snprintf(a, sizeof a, "[%d, %d, %d]", m->grid.n[0], m->grid.n[1], m->grid.n[2]);
        snprintf(b, sizeof b, "[%d, %d, %d]", c->grid.n[0], c->grid.n[1], c->grid.n[2]);
        return mismatch(path, "grid.n", a, b);
    }
    if (memcmp(m->grid.length, c->grid.length, sizeof m->grid.length) != 0) {
        format_triple(a, sizeof a, m->grid.length);
        format_triple(b, sizeof b, c->grid.length);
        return mismatch(path, "grid.length", a, b);
    }
    if ((int)m->precision != c->precision)
        return mismatch(path, "solver.precision", heat_precision_name(m->precision),
                        heat_precision_name((heat_precision)c->precision));
    return HEAT_OK;
}

static int check_physics(const char *path, const ckpt_meta *m, const heat_config *c)
{
    char a[64], b[64];
    if (m->alpha != c->alpha) {
        snprintf(a, sizeof a, "%.17g", m->alpha), snprintf(b, sizeof b, "%.17g", c->alpha);
        return mismatch(path, "physics.alpha", a, b);
    }
    /* An implicit scheme is stable at any dt, so a restart into one may change
     * it (the usual answer to a solve that did not converge, and the point of
     * switching from explicit); an explicit run keeps its dt, unless it
     * switches scheme (check_scheme let that through only when asked). */
    int new_dt_allowed = c->implicit.scheme != HEAT_EULER || m->implicit.scheme != c->implicit.scheme;
    if (m->dt != c->dt && !new_dt_allowed) {
        snprintf(a, sizeof a, "%.17g", m->dt), snprintf(b, sizeof b, "%.17g", c->dt);
        return mismatch(path, "the time step dt (time.dt, or time.cfl times dt_max)", a, b);
    }
    return HEAT_OK;
}

/* Another scheme continues a different computation: only when asked. */
static int check_scheme(const char *path, const ckpt_meta *m, const heat_config *c, int allow_change)
{
    if (m->implicit.scheme == c->implicit.scheme || allow_change) return HEAT_OK;
    return heat_error(HEAT_ERR_CONFIG, "%s was written with time.scheme = %s but the configuration has %s; use the "
                      "checkpoint's scheme, or add --allow-scheme-change to continue with %s on purpose", path,
                      heat_scheme_name(m->implicit.scheme), heat_scheme_name(c->implicit.scheme),
                      heat_scheme_name(c->implicit.scheme));
}

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
    int status = check_grid(path, &meta, c);
    if (status == HEAT_OK) status = check_scheme(path, &meta, c, allow & RESTART_ALLOW_SCHEME);
    if (status == HEAT_OK) status = check_physics(path, &meta, c);
    if (status == HEAT_OK && !(allow & RESTART_ALLOW_PROBLEM)) status = restart_check_problem(path, &meta, c);
    heat_errors_as_warnings(was);
    ckpt_meta_free(&meta);
    HEAT_CALL(status);
    HEAT_CALL(ckpt_read(path, &meta, field));
    found->step = meta.step, found->time = meta.time, found->dt = meta.dt;
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
    if (frames && status == HEAT_OK)
        printf("--restart latest: passed over %d newer frame%s (not restartable)\n", frames, frames == 1 ? "" : "s");
    if (status == HEAT_ERR_RUNTIME)
        return heat_error(HEAT_ERR_RUNTIME, "--restart latest: no valid checkpoint in %s", c->output.dir);
    return status;
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
               found.step, found.dt, c->dt, c->implicit.scheme != HEAT_EULER ? "implicit scheme" : "scheme change");
    if (found.step >= c->steps) return HEAT_OK;
    HEAT_CALL(restart_set_aside_later(c->output.dir, c->output.name, found.step, quiet));
    return series_scan(series, found.step);
}
