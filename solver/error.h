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

/* Prints "heatsolve: error: <message>" on stderr and returns code. Runtime
 * errors also name the source position, which helps bug reports; configuration
 * errors name the user's file:line instead (inside the message). */
int heat_error_at(int code, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* While on, heat_error_at prints its message as a warning: for callers that
 * expect a failure and handle it (a damaged file that is skipped). Returns
 * the previous setting. */
int heat_errors_as_warnings(int on);

/* Ranks above 0 of a job print only runtime errors, marked with the rank;
 * the root prints the rest once for the job. */
void heat_errors_set_rank(int rank);

/* Prints "heatsolve: warning: <message>" on stderr. */
void heat_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#define heat_error(code, ...) heat_error_at((code), __FILE__, __LINE__, __VA_ARGS__)

/* Propagates a non-zero status to the caller. */
#define HEAT_CALL(expr)                                                        \
    do {                                                                       \
        int heat_call_status_ = (expr);                                        \
        if (heat_call_status_ != HEAT_OK) return heat_call_status_;            \
    } while (0)

/* Precondition check: returns a runtime error naming the failed condition. */
#define HEAT_CHECK(cond, ...)                                                  \
    do {                                                                       \
        if (!(cond)) return heat_error(HEAT_ERR_RUNTIME, __VA_ARGS__);         \
    } while (0)
