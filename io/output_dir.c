#include "output_dir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../solver/error.h"
#include "fsutil.h"

struct output_dir {
    char dir[512], name[128];
    char lock_path[1024];
    int lock_fd;     /* holds the flock; -1 where the file system has no locks */
    int created_dir; /* the claim made the folder */
};

/* ---- the run's files ---------------------------------------------------------------------- */

/* "<name>_<digits>.<ext>" with ext hdf or png, "<name>.hdf.series" or "<name>.history.csv". */
static int is_run_file(const char *file, const char *name)
{
    size_t len = strlen(name);
    if (strncmp(file, name, len) != 0) return 0;
    if (strcmp(file + len, ".hdf.series") == 0 || strcmp(file + len, ".history.csv") == 0) return 1;
    if (file[len] != '_') return 0;
    const char *digits = file + len + 1;
    size_t count = strspn(digits, "0123456789");
    return count >= 6 && (strcmp(digits + count, ".hdf") == 0 || strcmp(digits + count, ".png") == 0);
}

/* ".<run file>.tmp-<pid>": what fs_temp_name makes of a run file. */
static int is_run_temp(const char *file, const char *name)
{
    const char *tmp = strstr(file, ".tmp-");
    if (file[0] != '.' || !tmp || tmp[5] == '\0' || strspn(tmp + 5, "0123456789") != strlen(tmp + 5)) return 0;
    char base[512];
    snprintf(base, sizeof base, "%.*s", (int)(tmp - file - 1), file + 1);
    return is_run_file(base, name);
}

/* "<name>.after_step_<digits>", or with "-<n>": where a restart from an
 * older checkpoint set the files of later steps aside (app/restart_aside.c). */
static int is_aside_folder(const char *file, const char *name)
{
    static const char tag[] = ".after_step_";
    size_t len = strlen(name);
    if (strncmp(file, name, len) != 0 || strncmp(file + len, tag, sizeof tag - 1) != 0) return 0;
    const char *digits = file + len + sizeof tag - 1, *rest = digits + strspn(digits, "0123456789");
    if (rest - digits < 6) return 0;
    return *rest == '\0' || (rest[0] == '-' && rest[1] != '\0' && strspn(rest + 1, "0123456789") == strlen(rest + 1));
}

typedef int (*file_filter)(const char *file, const char *name);

/* Calls visit(dir/file) for each file that passes the filter; returns how many. */
static int for_each_file(const char *dir, const char *name, file_filter filter, void (*visit)(const char *, void *),
                         void *arg)
{
    DIR *d = opendir(dir);
    if (!d) return 0;
    int count = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (!filter(e->d_name, name)) continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (visit) visit(path, arg);
        ++count;
    }
    closedir(d);
    return count;
}

static void remove_file(const char *path, void *failures)
{
    if (unlink(path) != 0 && errno != ENOENT) {
        heat_warn("cannot remove %s: %s", path, strerror(errno));
        ++*(int *)failures;
    }
}

/* Why unlink would refuse path, or NULL: a folder at a run file's name, a
 * folder that this user may not change, a sticky folder's file of another
 * user, an immutable or append-only file. */
static const char *unremovable(const char *path, const struct stat *folder)
{
    struct stat st;
    if (lstat(path, &st) != 0) return errno == ENOENT ? NULL : strerror(errno);
    if (S_ISDIR(st.st_mode)) return "it is a folder";
    char dir[1024];
    snprintf(dir, sizeof dir, "%s", path);
    *strrchr(dir, '/') = '\0';
    if (access(dir, W_OK | X_OK) != 0) return "its folder is not writable by this user";
    uid_t me = geteuid();
    if ((folder->st_mode & S_ISVTX) && me != 0 && st.st_uid != me && folder->st_uid != me)
        return "another user's file in a sticky folder";
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
    unsigned flags = 0;
    int held = fd >= 0 && ioctl(fd, FS_IOC_GETFLAGS, &flags) == 0 && (flags & (FS_IMMUTABLE_FL | FS_APPEND_FL));
    if (fd >= 0) close(fd);
    return held ? "it is immutable or append-only (chattr)" : NULL;
}

typedef struct removal_check {
    struct stat folder;
    int refused;
    char first[1100]; /* the first refused file and why */
} removal_check;

static void refuse_removal(removal_check *c, const char *path, const char *why)
{
    if (c->refused++ == 0) snprintf(c->first, sizeof c->first, "%s (%s)", path, why);
}

static void check_removal(const char *path, void *arg)
{
    removal_check *c = arg;
    const char *why = unremovable(path, &c->folder);
    if (why) refuse_removal(c, path, why);
}

typedef struct aside_visit {
    const char *name;
    removal_check *check; /* checking: each run file in the folder; else removing */
    int files, folders, failures; /* run files and folders visited, files not removed */
} aside_visit;

/* The run files in the set-aside folder at path, removed through the folder
 * opened once without following a link: a folder swapped for a link after it
 * was checked (in a folder others may write) cannot send the removals
 * elsewhere. Returns how many there were; *failures counts those that stay. */
static int remove_run_files_in(const char *path, const char *name, int *failures)
{
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0) close(fd);
        heat_warn("cannot open %s to remove its files: %s", path, strerror(errno));
        return ++*failures, 1;
    }
    int count = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (!is_run_file(e->d_name, name)) continue;
        ++count;
        if (unlinkat(dirfd(d), e->d_name, 0) != 0 && errno != ENOENT) {
            heat_warn("cannot remove %s/%s: %s", path, e->d_name, strerror(errno));
            ++*failures;
        }
    }
    closedir(d);
    return count;
}

/* A set-aside folder's run files: checked or removed, then the folder, which
 * stays (each named) where it holds anything else. A folder that cannot be
 * listed would keep its run files unseen: it refuses the overwrite. */
static void visit_aside(const char *path, void *arg)
{
    aside_visit *v = arg;
    struct stat st;
    if (lstat(path, &st) != 0 || !S_ISDIR(st.st_mode)) return;
    if (v->check) {
        DIR *listing = opendir(path);
        if (!listing) {
            refuse_removal(v->check, path, strerror(errno));
            return;
        }
        closedir(listing);
        removal_check inside = {.folder = st};
        for_each_file(path, v->name, is_run_file, check_removal, &inside);
        if (inside.refused && v->check->refused == 0)
            snprintf(v->check->first, sizeof v->check->first, "%s", inside.first);
        v->check->refused += inside.refused;
        return;
    }
    int failed_before = v->failures;
    v->files += remove_run_files_in(path, v->name, &v->failures);
    ++v->folders;
    if (rmdir(path) == 0 || v->failures > failed_before) return; /* remove_file named the files that stayed */
    heat_warn("--overwrite: kept %s: %s", path,
              errno == ENOTEMPTY || errno == EEXIST ? "it holds files that are not the run's" : strerror(errno));
}

/* --overwrite removes all of the earlier run's files or none, those in the
 * folders where restarts set files aside included. */
static int check_all_removable(const output_dir *o)
{
    removal_check c = {0};
    if (stat(o->dir, &c.folder) != 0) return HEAT_OK;
    for_each_file(o->dir, o->name, is_run_file, check_removal, &c);
    aside_visit asides = {.name = o->name, .check = &c};
    for_each_file(o->dir, o->name, is_aside_folder, visit_aside, &asides);
    if (!c.refused) return HEAT_OK;
    return heat_error(HEAT_ERR_CONFIG, "--overwrite: %d file%s of the earlier run '%s' cannot be removed, such as %s; "
                      "nothing was removed: remove or fix %s yourself, or choose another output.dir", c.refused,
                      c.refused == 1 ? "" : "s", o->name, c.first, c.refused == 1 ? "it" : "them");
}

/* ---- the lock ------------------------------------------------------------------------------ */

static void describe_holder(int fd, char *buf, size_t len)
{
    ssize_t n = pread(fd, buf, len - 1, 0);
    buf[n > 0 ? n : 0] = '\0';
    buf[strcspn(buf, "\n")] = '\0';
    if (buf[0] == '\0') snprintf(buf, len, "a process that has not yet written its name");
}

static void write_holder(int fd)
{
    char host[256] = "unknown host", when[64] = "";
    gethostname(host, sizeof host - 1);
    time_t now = time(NULL);
    strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S %Z", localtime(&now));
    char line[512];
    int len = snprintf(line, sizeof line, "pid %ld on %s, started %s\n", (long)getpid(), host, when);
    /* The lock is what matters; a holder line that cannot be written only makes a refusal less precise. */
    if (ftruncate(fd, 0) != 0 || pwrite(fd, line, (size_t)len, 0) != len)
        heat_warn("cannot record this run in its lock file: %s", strerror(errno));
}

static int lock_unsupported(int err) { return err == ENOLCK || err == EOPNOTSUPP || err == ENOSYS || err == EINVAL; }

static int lock_not_opened(const output_dir *o, int error)
{
    if (error == ELOOP)
        return heat_error(HEAT_ERR_CONFIG, "the lock file %s is a symbolic link, which heatsolve never makes; remove "
                          "it (the file it points to is left alone), or choose another output.dir", o->lock_path);
    return heat_error(HEAT_ERR_CONFIG, "cannot create the lock file %s: %s; check that output.dir is writable, or "
                      "choose another output.dir", o->lock_path, strerror(error));
}

/* Opens and flocks the lock file. The holder removes the file when it ends,
 * so a lock taken on a file that is no longer at lock_path is retried. Never
 * through a link: in a folder others may write, one planted at the lock's
 * name would have write_holder truncate and overwrite the file it points to. */
static int take_lock(output_dir *o)
{
    for (int attempt = 0; attempt < 100; ++attempt) {
        int fd = open(o->lock_path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0666);
        if (fd < 0) return lock_not_opened(o, errno);
        if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
            int err = errno;
            if (lock_unsupported(err)) {
                heat_warn("the file system of %s does not support file locks (%s): a second run into this folder "
                          "would not be detected", o->dir, strerror(err));
                o->lock_fd = fd;
                return HEAT_OK;
            }
            char holder[400];
            describe_holder(fd, holder, sizeof holder);
            close(fd);
            return heat_error(HEAT_ERR_CONFIG, "another heatsolve run (%s) is writing '%s' files into %s; wait "
                              "for it to end, or choose another output.dir or output.name", holder, o->name, o->dir);
        }
        struct stat held, named;
        if (fstat(fd, &held) == 0 && stat(o->lock_path, &named) == 0 && held.st_ino == named.st_ino &&
            held.st_dev == named.st_dev) {
            o->lock_fd = fd;
            write_holder(fd);
            return HEAT_OK;
        }
        close(fd); /* the previous holder removed this file as we locked it */
    }
    return heat_error(HEAT_ERR_RUNTIME, "cannot take the lock %s: it keeps being replaced", o->lock_path);
}

/* ---- claim and release ---------------------------------------------------------------------- */

static int check_folder(output_dir *o)
{
    struct stat st;
    if (stat(o->dir, &st) == 0) {
        if (!S_ISDIR(st.st_mode))
            return heat_error(HEAT_ERR_CONFIG, "output.dir = \"%s\" is a file, not a folder; choose another "
                              "output.dir", o->dir);
        return HEAT_OK;
    }
    int status = fs_make_dirs(o->dir);
    if (status != HEAT_OK) return HEAT_ERR_CONFIG; /* fs_make_dirs said why and named output.dir */
    o->created_dir = 1;
    return HEAT_OK;
}

/* The lock file alone does not prove the folder writable: a run killed by
 * SIGKILL (or a node failure) leaves its lock file behind, and opening that
 * needs no write access to the folder. A restart into a folder made read-only
 * since would then compute up to its first checkpoint before failing. So a
 * file is created there as the checkpoints' temporary files are (named as one
 * of them: remove_stale_temps takes it should the run die at once); trying
 * it, rather than asking access(), also holds on file systems whose mode bits
 * are not what the server decides by. */
static int check_writable(const output_dir *o)
{
    char series[1024], probe[4200];
    snprintf(series, sizeof series, "%s/%s.hdf.series", o->dir, o->name);
    fs_temp_name(probe, sizeof probe, series);
    int fd = fs_temp_create(probe);
    if (fd < 0)
        return heat_error(HEAT_ERR_CONFIG, "cannot write into output.dir %s (creating %s: %s); make it writable, or "
                          "choose another output.dir", o->dir, probe, strerror(errno));
    close(fd);
    unlink(probe);
    return HEAT_OK;
}

static void remove_stale_temps(const output_dir *o, int quiet)
{
    int failures = 0;
    int count = for_each_file(o->dir, o->name, is_run_temp, remove_file, &failures);
    if (count > failures && !quiet)
        printf("removed %d temporary file%s in %s left by an earlier run that stopped while writing\n",
               count - failures, count - failures == 1 ? "" : "s", o->dir);
}

/* The set-aside folders of the earlier run, their run files and then the folders. */
static int remove_aside_folders(const output_dir *o, aside_visit *v)
{
    for_each_file(o->dir, o->name, is_aside_folder, visit_aside, v);
    if (v->failures)
        return heat_error(HEAT_ERR_CONFIG, "--overwrite: %d file%s set aside by the earlier run's restarts in %s could "
                          "not be removed", v->failures, v->failures == 1 ? "" : "s", o->dir);
    return HEAT_OK;
}

/* A file or link at a set-aside folder's name is not one: visit_aside passes it by. */
static void count_folder(const char *path, void *count)
{
    struct stat st;
    if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode)) ++*(int *)count;
}

static int apply_mode(const output_dir *o, output_dir_mode mode, int quiet)
{
    int count = for_each_file(o->dir, o->name, is_run_file, NULL, NULL), asides = 0;
    if (mode == OUTPUT_OVERWRITE) for_each_file(o->dir, o->name, is_aside_folder, count_folder, &asides);
    if ((count == 0 && asides == 0) || mode == OUTPUT_CONTINUE) return HEAT_OK;
    if (mode == OUTPUT_FRESH) {
        long *steps;
        int checkpoints = fs_list_checkpoints(o->dir, o->name, &steps);
        free(steps);
        return heat_error(HEAT_ERR_CONFIG, "%s already holds %d file%s of an earlier run named '%s' "
                          "(%s_*.hdf, %s.hdf.series, ...); %s, or pass --overwrite, or choose another output.dir",
                          o->dir, count, count == 1 ? "" : "s", o->name, o->name, o->name,
                          checkpoints > 0 ? "continue with --restart latest"
                                          : "none of them is a checkpoint to continue from");
    }
    HEAT_CALL(check_all_removable(o));
    int failures = 0;
    for_each_file(o->dir, o->name, is_run_file, remove_file, &failures);
    if (failures)
        return heat_error(HEAT_ERR_CONFIG, "--overwrite: %d file%s of the earlier run in %s could not be removed",
                          failures, failures == 1 ? "" : "s", o->dir);
    aside_visit aside = {.name = o->name};
    HEAT_CALL(remove_aside_folders(o, &aside));
    if (quiet) return HEAT_OK;
    printf("--overwrite: removed %d file%s of the earlier run '%s' from %s", count, count == 1 ? "" : "s", o->name,
           o->dir);
    if (aside.folders || aside.files)
        printf(", and %d set aside by its restarts in %d folder%s", aside.files, aside.folders,
               aside.folders == 1 ? "" : "s");
    printf("\n");
    return HEAT_OK;
}

int output_dir_claim(const char *dir, const char *name, output_dir_mode mode, int quiet, output_dir **claim)
{
    *claim = NULL;
    output_dir *o = calloc(1, sizeof *o);
    HEAT_CHECK(o, "out of memory");
    o->lock_fd = -1;
    snprintf(o->dir, sizeof o->dir, "%s", dir);
    snprintf(o->name, sizeof o->name, "%s", name);
    snprintf(o->lock_path, sizeof o->lock_path, "%s/.%s.lock", dir, name);
    int status = check_folder(o);
    if (status == HEAT_OK) status = check_writable(o);
    if (status == HEAT_OK) status = take_lock(o);
    if (status == HEAT_OK) status = apply_mode(o, mode, quiet);
    if (status != HEAT_OK) {
        output_dir_release(&o);
        return status;
    }
    remove_stale_temps(o, quiet);
    *claim = o;
    return HEAT_OK;
}

void output_dir_release(output_dir **claim)
{
    if (!claim || !*claim) return;
    output_dir *o = *claim;
    if (o->lock_fd >= 0) {
        unlink(o->lock_path); /* while still holding it: see take_lock */
        close(o->lock_fd);
    }
    if (o->created_dir) rmdir(o->dir); /* only succeeds when nothing was written */
    free(o);
    *claim = NULL;
}
