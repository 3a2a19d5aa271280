#pragma once
#include "app/cli.h"
#include "solver/solver.h"

/* The benchmark problem (512^3 on a GPU, 256^3 on the CPU unless --size). */
void bench_problem(const heat_cli *cli, int gpu, heat_problem *problem);

/* Fills the solver's field with a smooth non-trivial one to time on. */
int bench_fill(heat_solver *solver);

/* Device names go into JSON: src with quotes, backslashes and control characters as spaces, cut to len. */
void bench_copy_plain(char *dst, size_t len, const char *src);
