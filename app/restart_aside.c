#include "app/restart_aside.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/fsutil.h"
#include "solver/error.h"

/* The step of a file "<name>_<digits>.hdf" or ".png", or -1 (also for a
 * folder of that name: not the run's to move). */
static long file_step(const struct dirent *e, const char *name)
{
    if (e->d_type != DT_REG && e->d_type != DT_UNKNOWN) return -1;
    const char *file = e->d_name;
    size_t len = strlen(name);
    if (strncmp(file, name, len) != 0 || file[len] != '_') return -1;
    const char *digits = file + len + 1;
    size_t count = strspn(digits, "0123456789");
    if (count < 6 || (strcmp(digits + count, ".hdf") != 0 && strcmp(digits + count, ".png") != 0)) return -1;
    return strtol(digits, NULL, 10);
}

/* A folder of its own: .after_step_<S>, else with -2, -3, ... */
static int make_aside_folder(const char *dir, const char *name, long step, char *aside, size_t len)
{
    for (int attempt = 1; attempt < 1000; ++attempt) {
        if (attempt == 1) snprintf(aside, len, "%s/%s.after_step_%06ld", dir, name, step);
        else snprintf(aside, len, "%s/%s.after_step_%06ld-%d", dir, name, step, attempt);
        if (mkdir(aside, 0777) == 0) return HEAT_OK;
        if (errno != EEXIST) break;
    }
    return heat_error(HEAT_ERR_RUNTIME, "cannot create %s to set aside the files after step %ld: %s; move or remove "
                      "%s/%s_*.hdf and .png of later steps yourself", aside, step, strerror(errno), dir, name);
}

typedef struct later_files {
    int count;
    long first, last; /* their steps */
} later_files;

static int move_later(DIR *d, const char *dir, const char *name, long step, const char *aside, later_files *moved)
{
    for (struct dirent *e; (e = readdir(d));) {
        long n = file_step(e, name);
        if (n <= step) continue;
        char from[1024], to[1280];
        snprintf(from, sizeof from, "%s/%s", dir, e->d_name);
        snprintf(to, sizeof to, "%s/%s", aside, e->d_name);
        if (rename(from, to) != 0)
            return heat_error(HEAT_ERR_RUNTIME, "cannot set aside %s (a file of a step after the restart's %ld) into "
                              "%s: %s; move or remove it yourself", from, step, aside, strerror(errno));
        if (moved->count++ == 0 || n < moved->first) moved->first = n;
        if (n > moved->last) moved->last = n;
    }
    return HEAT_OK;
}

static int any_later(const char *dir, const char *name, long step)
{
    DIR *d = opendir(dir);
    int found = 0;
    for (struct dirent *e; d && !found && (e = readdir(d));) found = file_step(e, name) > step;
    if (d) closedir(d);
    return found;
}

int restart_set_aside_later(const char *dir, const char *name, long step, int quiet, int *files_moved)
{
    *files_moved = 0;
    if (!any_later(dir, name, step)) return HEAT_OK;
    char aside[1024];
    HEAT_CALL(make_aside_folder(dir, name, step, aside, sizeof aside));
    DIR *d = opendir(dir);
    if (!d) return heat_error(HEAT_ERR_RUNTIME, "cannot read %s: %s", dir, strerror(errno));
    later_files moved = {0};
    int status = move_later(d, dir, name, step, aside, &moved);
    closedir(d);
    if (moved.count == 0) rmdir(aside);
    *files_moved = moved.count;
    HEAT_CALL(status);
    HEAT_CALL(fs_sync_folder(dir));
    char steps[64];
    if (moved.first == moved.last) snprintf(steps, sizeof steps, "step %ld", moved.first);
    else snprintf(steps, sizeof steps, "steps %ld to %ld", moved.first, moved.last);
    if (!quiet)
        printf("restart from step %ld: set aside %d file%s of %s (written after it) in %s; they are not part of "
               "this run (remove that folder once they are not needed)\n", step, moved.count,
               moved.count == 1 ? "" : "s", steps, aside);
    return HEAT_OK;
}
