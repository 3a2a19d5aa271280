#include "fsutil.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "../solver/error.h"

void fs_temp_name(char *buf, size_t len, const char *path)
{
    const char *slash = strrchr(path, '/');
    int dir_len = slash ? (int)(slash - path + 1) : 0;
    snprintf(buf, len, "%.*s.%s.tmp-%ld", dir_len, path, slash ? slash + 1 : path, (long)getpid());
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

int fs_commit(const char *tmp, const char *path)
{
    if (fsync_path(tmp, O_RDONLY) != 0)
        return heat_error(HEAT_ERR_RUNTIME, "cannot flush %s to disk: %s", tmp, strerror(errno));
    if (rename(tmp, path) != 0)
        return heat_error(HEAT_ERR_RUNTIME, "cannot rename %s to %s: %s", tmp, path, strerror(errno));
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    /* The rename is durable only once the folder itself reaches the disk. */
    if (fsync_path(dirname(dir), O_RDONLY | O_DIRECTORY) != 0)
        return heat_error(HEAT_ERR_RUNTIME, "cannot flush folder of %s: %s", path, strerror(errno));
    return HEAT_OK;
}

int fs_write_atomic(const char *path, const void *data, size_t len)
{
    char tmp[4200];
    fs_temp_name(tmp, sizeof tmp, path);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0666);
    if (fd < 0) return heat_error(HEAT_ERR_RUNTIME, "cannot create %s: %s", tmp, strerror(errno));
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
    if (saved) {
        unlink(tmp);
        return heat_error(HEAT_ERR_RUNTIME, "cannot write %s: %s", path, strerror(saved));
    }
    int status = fs_commit(tmp, path);
    if (status != HEAT_OK) unlink(tmp);
    return status;
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
