#pragma once
#include "app/cli.h"

/* `heatsolve bench`: the effective-bandwidth table of every kernel variant
 * (or, with --io, checkpoint write throughput). Returns the exit status. */
int bench_main(const heat_cli *cli);
