#include "error.h"

#include <stdio.h>

/* Several ranks: the root speaks for the job. Configuration errors,
 * warnings and the errors raised as alike are found alike on every rank, so
 * only the root prints them; any other runtime error may be one rank's own,
 * so it is printed with that rank. */
static int message_rank = 0;

void heat_errors_set_rank(int rank) { message_rank = rank; }

static void print_message(const char *kind, const char *fmt, va_list args)
{
    if (message_rank > 0) fprintf(stderr, "heatsolve (rank %d): %s: ", message_rank, kind);
    else fprintf(stderr, "heatsolve: %s: ", kind);
    vfprintf(stderr, fmt, args);
    fputc('\n', stderr);
}

static _Thread_local int demoted = 0;
static _Thread_local char last_message[1024]; /* of a silenced error */

int heat_errors_as_warnings(int on)
{
    int was = demoted;
    demoted = on;
    return was;
}

const char *heat_error_last_silenced(void) { return last_message; }

static int report(int code, int internal, int alike, const char *file, int line, const char *fmt, va_list args)
{
    if (demoted == HEAT_ERRORS_SILENT) {
        vsnprintf(last_message, sizeof last_message, fmt, args);
        return code;
    }
    if (message_rank > 0 && (code != HEAT_ERR_RUNTIME || alike || demoted)) return code;
    print_message(demoted ? "warning" : "error", fmt, args);
    if (internal && !demoted) fprintf(stderr, "  (reported at %s:%d)\n", file, line);
    return code;
}

int heat_error_at(int code, const char *file, int line, const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    report(code, 0, 0, file, line, fmt, args);
    va_end(args);
    return code;
}

int heat_error_alike_at(int code, const char *file, int line, const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    report(code, 0, 1, file, line, fmt, args);
    va_end(args);
    return code;
}

int heat_internal_error_at(const char *file, int line, const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    report(HEAT_ERR_RUNTIME, 1, 0, file, line, fmt, args);
    va_end(args);
    return HEAT_ERR_RUNTIME;
}

void heat_warn(const char *fmt, ...)
{
    if (message_rank > 0) return;
    va_list args;
    va_start(args, fmt);
    print_message("warning", fmt, args);
    va_end(args);
}
