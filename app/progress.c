#include "progress.h"

#include <errno.h>
#include <stdio.h>
#include <unistd.h>

#include "app/launcher.h"
#include "solver/clock.h"

double progress_now(void) { return monotonic_seconds(); }

void progress_start(heat_progress *p, long first_step, long last_step, double points, int quiet)
{
    p->first_step = first_step;
    p->last_step = last_step;
    p->points = points;
    p->start = p->last_print = progress_now();
    p->last_logged_decile = 0;
    /* Open MPI hands its ranks a pseudo-terminal even where mpirun's own output goes to a file. */
    p->tty = isatty(STDOUT_FILENO) && launcher_job_size() == 1;
    p->quiet = quiet;
}

/* Grid-point updates per second (1e9) since the start. */
static double progress_glups(const heat_progress *p, long step)
{
    double elapsed = progress_now() - p->start;
    return elapsed > 0 ? p->points * (double)(step - p->first_step) / elapsed / 1e9 : 0.0;
}

static void format_eta(double seconds, char *buf, size_t len)
{
    if (seconds < 0) snprintf(buf, len, "--");
    else if (seconds < 120) snprintf(buf, len, "%.0f s", seconds);
    else if (seconds < 7200) snprintf(buf, len, "%.0f min", seconds / 60);
    else if (seconds < 172800) snprintf(buf, len, "%.1f h", seconds / 3600);
    else snprintf(buf, len, "%.1f d", seconds / 86400); /* week-long runs */
}

void progress_update(heat_progress *p, long step, double time)
{
    if (p->quiet) return;
    double now = progress_now(), elapsed = now - p->start;
    long done = step - p->first_step, total = p->last_step - p->first_step;
    double percent = total > 0 ? 100.0 * (double)done / (double)total : 100.0;
    long decile = total > 0 ? 10 * done / total : 10;
    int due = p->tty ? now - p->last_print >= 0.2 : (decile > p->last_logged_decile || now - p->last_print >= 30.0);
    if (!due && step != p->last_step) return;
    char eta[32];
    format_eta(done > 0 ? elapsed * (double)(total - done) / (double)done : -1.0, eta, sizeof eta);
    printf("%sstep %ld/%ld  t = %.6g  %5.1f%%  ETA %s  %.3f GLUP/s%s", p->tty ? "\r" : "", step, p->last_step,
           time, percent, eta, progress_glups(p, step), p->tty ? "   " : "\n");
    /* A closed reader (`heatsolve ... | head`): SIGPIPE is ignored, so the run goes on, silent. */
    if (fflush(stdout) != 0 && errno == EPIPE) p->quiet = 1;
    p->last_print = now;
    p->last_logged_decile = decile;
}

void progress_finish(heat_progress *p)
{
    if (p->tty && !p->quiet) printf("\n");
}
