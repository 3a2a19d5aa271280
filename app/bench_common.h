#pragma once
#include <stdio.h>

#include "app/cli.h"
#include "solver/solver.h"

/* The benchmark problem (512^3 on a GPU, 256^3 on the CPU unless --size). */
void bench_problem(const heat_cli *cli, int gpu, heat_problem *problem);

/* Fills the solver's field with a smooth non-trivial one to time on. */
int bench_fill(heat_solver *solver);

/* Device names go into JSON: src with quotes, backslashes and control characters as spaces, cut to len. */
void bench_copy_plain(char *dst, size_t len, const char *src);

/* A JSON report written whole or not at all: bench_json_open gives a stream in memory (j->f) to
 * print the report into, bench_json_commit puts it at path through a temporary file and a rename,
 * so that a full disk or a crash leaves the earlier file or none, never half of one. */
typedef struct bench_json {
    FILE *f;
    char *text;
    size_t len;
} bench_json;
int bench_json_open(bench_json *j);
int bench_json_commit(bench_json *j, const char *path);
