#include "error.h"

#include <stdio.h>

static void print_message(const char *kind, const char *fmt, va_list args)
{
    fprintf(stderr, "heatsolve: %s: ", kind);
    vfprintf(stderr, fmt, args);
    fputc('\n', stderr);
}

static _Thread_local int demoted = 0;

int heat_errors_as_warnings(int on)
{
    int was = demoted;
    demoted = on;
    return was;
}

int heat_error_at(int code, const char *file, int line, const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    print_message(demoted ? "warning" : "error", fmt, args);
    va_end(args);
    if (code == HEAT_ERR_RUNTIME && !demoted) fprintf(stderr, "  (reported at %s:%d)\n", file, line);
    return code;
}

void heat_warn(const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    print_message("warning", fmt, args);
    va_end(args);
}
