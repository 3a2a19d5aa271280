#pragma once
/*
 * Error handling shared by every module (PETSc style).
 *
 * Functions that can fail return an int: HEAT_OK, HEAT_ERR_RUNTIME (exit 1) or
 * HEAT_ERR_CONFIG (usage or configuration mistake, exit 2). The function that
 * detects a failure prints one message through heat_error() and returns the
 * code; callers pass it upwards with HEAT_CALL(). Only main() turns a code into
 * an exit status; library code never calls exit().
 */
#include <stdarg.h>

enum heat_status {
    HEAT_OK = 0,
    HEAT_ERR_RUNTIME = 1,
    HEAT_ERR_CONFIG = 2,
};

/* Prints "heatsolve: error: <message>" on stderr and returns code. A user's
 * error says where in the user's terms (file:line, key, step) inside the
 * message; file and line are for heat_internal_error_at. */
int heat_error_at(int code, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* An error that every rank of a job finds alike, at the same point, from
 * values the ranks agreed on (a global sum's verdict): the root prints it
 * once for the job, as it does a configuration error. */
int heat_error_alike_at(int code, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* A failure of a library call or a broken precondition, which the user can
 * only report: a runtime error that also names the source position. */
int heat_internal_error_at(const char *file, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* While on (1), heat_error_at prints its message as a warning: for callers
 * that expect a failure and handle it (a damaged file that is skipped). With
 * HEAT_ERRORS_SILENT it prints nothing and keeps the message for
 * heat_error_last_silenced (this thread's), so the caller says it once, its
 * own way. Returns the previous setting. */
enum { HEAT_ERRORS_SILENT = 2 };
int heat_errors_as_warnings(int on);
const char *heat_error_last_silenced(void);

/* Ranks above 0 of a job print only runtime errors, marked with the rank;
 * the root prints the rest once for the job. */
void heat_errors_set_rank(int rank);

/* Prints "heatsolve: warning: <message>" on stderr. */
void heat_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#define heat_error(code, ...) heat_error_at((code), __FILE__, __LINE__, __VA_ARGS__)
#define heat_error_alike(code, ...) heat_error_alike_at((code), __FILE__, __LINE__, __VA_ARGS__)
#define heat_internal_error(...) heat_internal_error_at(__FILE__, __LINE__, __VA_ARGS__)

/* Propagates a non-zero status to the caller. */
#define HEAT_CALL(expr)                                                        \
    do {                                                                       \
        int heat_call_status_ = (expr);                                        \
        if (heat_call_status_ != HEAT_OK) return heat_call_status_;            \
    } while (0)

/* Precondition check: returns a runtime error naming the failed condition. */
#define HEAT_CHECK(cond, ...)                                                  \
    do {                                                                       \
        if (!(cond)) return heat_internal_error(__VA_ARGS__);                  \
    } while (0)
