#include "fsutil.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <stdatomic.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "../solver/error.h"

void fs_temp_name(char *buf, size_t len, const char *path)
{
    const char *slash = strrchr(path, '/');
    int dir_len = slash ? (int)(slash - path + 1) : 0;
    snprintf(buf, len, "%.*s.%s.tmp-%ld", dir_len, path, slash ? slash + 1 : path, (long)getpid());
}

int fs_temp_create(const char *tmp)
{
    unlink(tmp);
    return open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
}

enum { TEMP_SLOTS = 8, TEMP_PATH_MAX = 4200 };
static char temp_paths[TEMP_SLOTS][TEMP_PATH_MAX];
static atomic_int temp_used[TEMP_SLOTS];

int fs_temp_track(const char *tmp)
{
    for (int slot = 0; slot < TEMP_SLOTS; ++slot) {
        int expected = 0;
        if (!atomic_compare_exchange_strong(&temp_used[slot], &expected, 1)) continue;
        snprintf(temp_paths[slot], TEMP_PATH_MAX, "%s", tmp);
        atomic_store(&temp_used[slot], 2); /* the name is complete: a handler may use it */
        return slot;
    }
    return -1;
}

void fs_temp_untrack(int slot)
{
    if (slot >= 0) atomic_store(&temp_used[slot], 0);
}

void fs_temp_remove_all(void)
{
    for (int slot = 0; slot < TEMP_SLOTS; ++slot)
        if (atomic_load(&temp_used[slot]) == 2) unlink(temp_paths[slot]);
}

static int fsync_path(const char *path, int flags)
{
    int fd = open(path, flags);
    if (fd < 0) return -1;
    int status = fsync(fd);
    int saved = errno;
    close(fd);
    errno = saved;
    return status;
}

/* The steps below return 0, or an errno with the failure described in why:
 * `error` is the errno taken when the call failed, before anything else runs. */
static int failed(int error, char *why, size_t why_len, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int failed(int error, char *why, size_t why_len, const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    int n = vsnprintf(why, why_len, fmt, args);
    va_end(args);
    if (n >= 0 && (size_t)n < why_len) snprintf(why + n, why_len - (size_t)n, ": %s", strerror(error));
    return error ? error : EIO;
}

static int commit_why(const char *tmp, const char *path, int sync_folder, char *why, size_t why_len)
{
    if (fsync_path(tmp, O_RDONLY) != 0)
        return failed(errno, why, why_len, "cannot flush %s to disk", tmp);
    if (rename(tmp, path) != 0)
        return failed(errno, why, why_len, "cannot rename %s to %s", tmp, path);
    if (!sync_folder) return 0;
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    /* The rename is durable only once the folder itself reaches the disk. */
    if (fsync_path(dirname(dir), O_RDONLY | O_DIRECTORY) != 0)
        return failed(errno, why, why_len, "cannot flush folder %s", dir);
    return 0;
}

int fs_sync_folder(const char *dir)
{
    if (fsync_path(dir, O_RDONLY | O_DIRECTORY) != 0)
        return heat_error(HEAT_ERR_RUNTIME, "cannot flush folder %s: %s", dir, strerror(errno));
    return HEAT_OK;
}

int fs_commit(const char *tmp, const char *path)
{
    char why[8400];
    return commit_why(tmp, path, 1, why, sizeof why) ? heat_error(HEAT_ERR_RUNTIME, "%s", why) : HEAT_OK;
}

static int write_atomic_why(const char *path, const void *data, size_t len, int sync_folder, char *why,
                            size_t why_len)
{
    char tmp[4200];
    fs_temp_name(tmp, sizeof tmp, path);
    int fd = fs_temp_create(tmp);
    if (fd < 0) return failed(errno, why, why_len, "cannot create %s", tmp);
    int slot = fs_temp_track(tmp);
    const char *p = data;
    size_t left = len;
    int saved = 0;
    while (left > 0 && !saved) {
        ssize_t n = write(fd, p, left);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) saved = n < 0 ? errno : EIO;
        else p += n, left -= (size_t)n;
    }
    if (close(fd) != 0 && !saved) saved = errno;
    if (saved) failed(saved, why, why_len, "cannot write %s", path);
    else saved = commit_why(tmp, path, sync_folder, why, why_len);
    if (saved) unlink(tmp);
    fs_temp_untrack(slot);
    return saved;
}

static int write_atomic(const char *path, const void *data, size_t len, int sync_folder)
{
    char why[8400];
    return write_atomic_why(path, data, len, sync_folder, why, sizeof why) ? heat_error(HEAT_ERR_RUNTIME, "%s", why)
                                                                           : HEAT_OK;
}

int fs_write_atomic_quiet(const char *path, const void *data, size_t len, char *why, size_t why_len)
{
    return write_atomic_why(path, data, len, 0, why, why_len);
}

int fs_write_atomic_unsynced_folder(const char *path, const void *data, size_t len)
{
    return write_atomic(path, data, len, 0);
}

int fs_make_dirs(const char *dir)
{
    char path[4096];
    snprintf(path, sizeof path, "%s", dir);
    for (char *p = path + 1;; ++p) {
        int end = *p == '\0';
        if (*p != '/' && !end) continue;
        *p = '\0';
        if (mkdir(path, 0777) != 0 && errno != EEXIST)
            return heat_error(HEAT_ERR_RUNTIME, "cannot create output folder %s: %s; check output.dir", path,
                              strerror(errno));
        if (end) break;
        *p = '/';
    }
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
        return heat_error(HEAT_ERR_RUNTIME, "output.dir %s is not a folder", dir);
    return HEAT_OK;
}

double fs_free_bytes(const char *dir)
{
    struct statvfs st;
    if (statvfs(dir, &st) != 0) return -1.0;
    return (double)st.f_bavail * (double)st.f_frsize;
}

static int compare_longs(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

/* Step number of "<name>_<digits>.hdf", or -1. */
static long checkpoint_step(const char *file, const char *name)
{
    size_t len = strlen(name);
    if (strncmp(file, name, len) != 0 || file[len] != '_') return -1;
    const char *digits = file + len + 1;
    size_t count = strspn(digits, "0123456789");
    if (count < 6 || strcmp(digits + count, ".hdf") != 0) return -1;
    return strtol(digits, NULL, 10);
}

int fs_list_checkpoints(const char *dir, const char *name, long **steps)
{
    *steps = NULL;
    DIR *d = opendir(dir);
    if (!d) return -1;
    int count = 0, capacity = 0;
    for (struct dirent *e; (e = readdir(d));) {
        long step = checkpoint_step(e->d_name, name);
        if (step < 0) continue;
        if (count == capacity) {
            capacity = capacity ? 2 * capacity : 64;
            long *grown = realloc(*steps, sizeof **steps * (size_t)capacity);
            if (!grown) break;
            *steps = grown;
        }
        (*steps)[count++] = step;
    }
    closedir(d);
    if (count) qsort(*steps, (size_t)count, sizeof **steps, compare_longs);
    return count;
}
