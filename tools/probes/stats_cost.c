/*
 * What the field's statistics cost on the CPU backend (heat_solver_stats:
 * min, max, the non-finite count and the whole grid's sum, the NaN check and
 * the history's row): the best of ten calls on a double field of NX x NY x NZ.
 * Built against a build's static library, from the project root:
 *
 *   gcc -O2 -fopenmp -I. -I/usr/include/hdf5/serial tools/probes/stats_cost.c build/libheatcore.a \
 *       -L/usr/lib/x86_64-linux-gnu/hdf5/serial -lhdf5 -lz -lisal -lm -o /tmp/stats_cost
 *   /tmp/stats_cost 320 160 64     # the letters demo's grid
 *   /tmp/stats_cost 512            # 512^3
 *
 * Prints the time and the sum (17 digits: the summation order shows in the last ones).
 */
#include <omp.h>

#include "tests/test_util.h"

int main(int argc, char **argv)
{
    if (argc < 2) return fprintf(stderr, "usage: stats_cost NX [NY NZ]\n"), 2;
    int nx = atoi(argv[1]), ny = argc > 3 ? atoi(argv[2]) : nx, nz = argc > 3 ? atoi(argv[3]) : nx;
    if (nx < 3 || ny < 3 || nz < 3) return fprintf(stderr, "stats_cost: each size >= 3\n"), 2;
    heat_problem p = test_problem(nx, ny, nz, 1, 1, 1, HEAT_DOUBLE);
    heat_solver *s;
    if (heat_solver_create(&p, HEAT_SELECT_CPU, &s) != HEAT_OK) return 1;
    double *field = test_alloc_field(&p);
    if (!field) return fprintf(stderr, "stats_cost: out of memory\n"), 1;
    long points = (long)nx * ny * nz;
    for (long i = 0; i < points; ++i) field[i] = 1.0 + (double)(i % 1000) * 1e-3;
    if (heat_solver_set_field(s, field, 0) != HEAT_OK) return 1;
    heat_field_stats stats;
    double best = 1e30;
    for (int r = 0; r < 10; ++r) {
        double start = omp_get_wtime();
        if (heat_solver_stats(s, &stats) != HEAT_OK) return 1;
        double t = omp_get_wtime() - start;
        best = t < best ? t : best;
    }
    printf("%d x %d x %d: stats best of 10 %.2f ms, sum %.17g\n", nx, ny, nz, best * 1e3, stats.sum);
    free(field);
    heat_solver_destroy(&s);
    return 0;
}
