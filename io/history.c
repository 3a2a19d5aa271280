#include "history.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../solver/error.h"
#include "fsutil.h"

struct heat_history {
    char path[1024];
    int fd;
    long rows;    /* written by this segment */
    int energy;   /* 1: a materials run's columns of the energy balance */
};

static const char HEADER[] = "step,time,min,max,mean,heat\n";
static const char ENERGY_HEADER[] = "step,time,min,max,mean,heat,power_sources,power_dirichlet,power_convective,"
                                    "power_flux,energy_in\n";
enum { COLUMNS = 6, ENERGY_COLUMNS = 11, ROW_MAX = 512, LINE_MAX_BYTES = 1024 };

static const char *header_of(const heat_history *h) { return h->energy ? ENERGY_HEADER : HEADER; }

/* A whole row: a step, then columns - 1 numbers, all of it parsed, ended by a
 * line feed, a CRLF (the file was edited on Windows) or the end of the file
 * (a last row whose line feed a crash took). */
static int row_step(const char *line, int columns, long *step)
{
    char *end;
    errno = 0;
    *step = strtol(line, &end, 10);
    if (errno || end == line || *end != ',') return 0;
    for (int column = 1; column < columns; ++column) {
        const char *start = end + 1;
        strtod(start, &end);
        if (end == start) return 0;
        if (column + 1 < columns ? *end != ',' : strcmp(end, "\n") && strcmp(end, "\r\n") && *end) return 0;
    }
    return 1;
}

/* What a restart left out of the earlier file, for one line each. */
typedef struct dropped_rows {
    long unreadable, first_unreadable_line, last_unreadable_line;
    long after, first_after, last_after; /* rows of steps at or after the restart */
} dropped_rows;

static void note_unreadable(dropped_rows *d, long line)
{
    if (d->unreadable++ == 0) d->first_unreadable_line = line;
    d->last_unreadable_line = line;
}

static void note_after(dropped_rows *d, long step)
{
    if (d->after++ == 0 || step < d->first_after) d->first_after = step;
    if (step > d->last_after) d->last_after = step;
}

static void report_dropped(const char *path, const char *header, long first_step, const dropped_rows *d)
{
    char lines[64];
    if (d->unreadable == 1) snprintf(lines, sizeof lines, "line %ld", d->first_unreadable_line);
    else snprintf(lines, sizeof lines, "lines %ld to %ld", d->first_unreadable_line, d->last_unreadable_line);
    if (d->unreadable)
        heat_warn("%s: dropped %ld row%s that do%s not read as %.*s (%s); the other rows are kept", path,
                  d->unreadable, d->unreadable == 1 ? "" : "s", d->unreadable == 1 ? "es" : "",
                  (int)strcspn(header, "\n"), header, lines);
    char steps[64];
    if (d->first_after == d->last_after) snprintf(steps, sizeof steps, "step %ld", d->first_after);
    else snprintf(steps, sizeof steps, "steps %ld to %ld", d->first_after, d->last_after);
    if (d->after)
        heat_warn("%s: dropped %ld row%s of %s, written after the restart's step %ld by a run that went further; "
                  "this run writes its own", path, d->after, d->after == 1 ? "" : "s", steps, first_step);
}

static int append(char **kept, size_t *len, size_t *size, const char *text, size_t n)
{
    if (*len + n + 1 > *size) {
        char *bigger = realloc(*kept, *size * 2 + n);
        if (!bigger) return 0;
        *kept = bigger, *size = *size * 2 + n;
    }
    memcpy(*kept + *len, text, n), *len += n;
    return 1;
}

/* The header and the earlier file's whole rows of steps before first_step, in
 * their order, each ended by a line feed, into a malloc'ed buffer (*len
 * bytes); NULL when out of memory. What it leaves out, it names. */
static char *rows_before(const heat_history *h, long first_step, int restarting, size_t *len)
{
    const char *header = header_of(h);
    const int columns = h->energy ? ENERGY_COLUMNS : COLUMNS;
    size_t size = strlen(header) + 4096;
    char *kept = malloc(size);
    if (!kept) return NULL;
    *len = strlen(header);
    memcpy(kept, header, *len);
    FILE *f = restarting ? fopen(h->path, "r") : NULL;
    if (!f) return kept; /* a fresh run, or none yet: a restart in another folder */
    char line[LINE_MAX_BYTES];
    long step, number = 0;
    dropped_rows dropped = {0};
    while (fgets(line, sizeof line, f)) {
        size_t n = strlen(line);
        int whole = n + 1 < sizeof line || line[n - 1] == '\n';
        for (int c; !whole && (c = fgetc(f)) != EOF && c != '\n';) continue; /* the rest of an overlong line */
        if (++number == 1 && strncmp(line, header, strlen(header) - 1) == 0) continue;
        if (!whole || !row_step(line, columns, &step)) {
            if (strspn(line, " \t\r\n") != n) note_unreadable(&dropped, number);
            continue;
        }
        if (step >= first_step) {
            if (step > first_step) note_after(&dropped, step); /* the restart's own row comes again, the same */
            continue;
        }
        n = strcspn(line, "\r\n");
        if (!append(&kept, len, &size, line, n) || !append(&kept, len, &size, "\n", 1))
            return fclose(f), free(kept), NULL;
    }
    fclose(f);
    report_dropped(h->path, header, first_step, &dropped);
    return kept;
}

static void give_up(heat_history *h, const char *doing, int error)
{
    heat_warn("%s %s: %s; the run goes on without its history", doing, h->path, strerror(error));
    if (h->fd >= 0) close(h->fd);
    h->fd = -1;
}

/* The file as it starts this segment: the header and the rows to keep, committed atomically
 * (its folder's fsync comes with the checkpoints'); 0 or an errno, after a warning. */
static int start_file(heat_history *h, long keep_before, int restarting)
{
    size_t len;
    char *kept = rows_before(h, keep_before, restarting, &len), why[8400];
    if (!kept) return heat_warn("out of memory for the run's history"), ENOMEM;
    int error = fs_write_atomic_quiet(h->path, kept, len, why, sizeof why);
    free(kept);
    if (error) heat_warn("%s; the run goes on without its history", why);
    return error;
}

void history_open(const char *dir, const char *name, long first_step, int restarting, int energy,
                  heat_history **history)
{
    *history = NULL;
    heat_history *h = calloc(1, sizeof *h);
    if (!h) {
        heat_warn("out of memory for the run's history");
        return;
    }
    h->fd = -1;
    h->energy = energy;
    snprintf(h->path, sizeof h->path, "%s/%s.history.csv", dir, name);
    if (start_file(h, first_step, restarting) != 0) {
        free(h);
        return;
    }
    h->fd = open(h->path, O_WRONLY | O_APPEND);
    if (h->fd < 0) {
        give_up(h, "cannot open", errno);
        free(h);
        return;
    }
    *history = h;
}

void history_record(heat_history *h, long step, double time, const heat_field_stats *stats, double points,
                    double cell_volume, const heat_energy *energy)
{
    if (!h || h->fd < 0) return;
    char row[ROW_MAX];
    int n;
    if (h->energy && energy) {
        double in = 0.0;
        for (int kind = 0; kind < HEAT_ENERGY_KINDS; ++kind) in += energy->energy[kind];
        n = snprintf(row, sizeof row, "%ld,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g\n", step, time,
                     stats->min, stats->max, stats->sum / points, energy->heat, energy->power[HEAT_ENERGY_SOURCES],
                     energy->power[HEAT_ENERGY_DIRICHLET], energy->power[HEAT_ENERGY_CONVECTIVE],
                     energy->power[HEAT_ENERGY_FLUX], in);
    } else {
        n = snprintf(row, sizeof row, "%ld,%.17g,%.17g,%.17g,%.17g,%.17g\n", step, time, stats->min, stats->max,
                     stats->sum / points, stats->sum * cell_volume);
    }
    ssize_t written;
    do written = write(h->fd, row, (size_t)n);
    while (written < 0 && errno == EINTR);
    if (written != n) give_up(h, "cannot write a row to", written < 0 ? errno : EIO);
    else ++h->rows;
}

const char *history_path(const heat_history *h) { return h->path; }

long history_rows(const heat_history *h) { return h->rows; }

void history_close(heat_history **history)
{
    heat_history *h = *history;
    if (!h) return;
    if (h->fd >= 0 && close(h->fd) != 0) heat_warn("cannot close %s: %s", h->path, strerror(errno));
    free(h);
    *history = NULL;
}
