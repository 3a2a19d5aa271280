#pragma once
#include "app/cli.h"

/* `heatsolve bench`: the effective-bandwidth table of every kernel variant
 * (or, with --io, checkpoint write throughput). Returns the exit status. */
int bench_main(const heat_cli *cli);

/* `heatsolve bench --cg`: the implicit solver's operator, Chebyshev step and
 * whole CG iterations as effective bandwidth against copy. */
int bench_cg(const heat_cli *cli);

/* `heatsolve bench --io`: the checkpoint pipeline against its floor (the
 * compression stage alone, the output folder's fsync bandwidth), restart
 * read time, and HDF5's own filter for comparison. */
int bench_io(const heat_cli *cli);

/* `mpirun -np N heatsolve bench`: strong and weak scaling of the production
 * step against one rank alone, and the halo exchange time it does not hide. */
int bench_scaling(const heat_cli *cli);
