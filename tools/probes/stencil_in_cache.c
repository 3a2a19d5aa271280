/*
 * The CPU heat step's arithmetic alone: stencil_vec's expression (the same
 * loads, multiplies and adds, 32-byte vectors of doubles) over rows that
 * stay in L1/L2, so memory plays no part. Three loop shapes that compute the
 * same bits: one vector an iteration (as heatsolve), and two or four
 * independent vectors interleaved statement by statement, which would help
 * if the chain of seven dependent multiply-adds (its latency) limited the
 * core rather than its arithmetic units.
 *
 *   gcc -O3 -march=native -fopenmp stencil_in_cache.c -o stencil_in_cache
 *   ./stencil_in_cache 8     # 8 rows of 320 points a plane (about 60 KiB)
 *   ./stencil_in_cache 64    # 64 rows (about 500 KiB: L2)
 *
 * Prints the best of 20 timings of each shape, in ns per point on one core.
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef double vec __attribute__((vector_size(32)));
typedef struct coeffs {
    double hx, hy, hz, diag, alpha_dt;
} coeffs;

static inline vec load(const double *p)
{
    vec v;
    memcpy(&v, p, sizeof v);
    return v;
}

static inline void store(double *p, vec v) { memcpy(p, &v, sizeof v); }

/* heatsolve's stencil_vec, lane by lane. */
static inline vec stencil_vec(const double *below, const double *c, const double *above, long sy, coeffs k)
{
    vec centre = load(c), lap = load(below) * k.hz;
    lap += load(c - sy) * k.hy;
    lap += load(c - 1) * k.hx;
    lap += centre * k.diag;
    lap += load(c + 1) * k.hx;
    lap += load(c + sy) * k.hy;
    lap += load(above) * k.hz;
    return centre + k.alpha_dt * lap;
}

/* The row's tail after the interleaved vectors. */
static void row_tail(double *out, const double *below, const double *c, const double *above, long i, long n, long sy,
                     coeffs k)
{
    for (; i + 4 <= n; i += 4) store(out + i, stencil_vec(below + i, c + i, above + i, sy, k));
}

__attribute__((noinline)) static void row_one(double *restrict out, const double *below, const double *c,
                                              const double *above, long n, long sy, coeffs k)
{
    row_tail(out, below, c, above, 0, n, sy, k);
}

/* `ways` vectors at once, each statement of the expression for all of them before the next. */
#define ROW_INTERLEAVED(name, ways)                                                                        \
    __attribute__((noinline)) static void name(double *restrict out, const double *below, const double *c, \
                                               const double *above, long n, long sy, coeffs k)             \
    {                                                                                                      \
        long i = 0;                                                                                        \
        for (; i + 4 * (ways) <= n; i += 4 * (ways)) {                                                     \
            vec centre[ways], lap[ways];                                                                   \
            for (int j = 0; j < (ways); ++j) centre[j] = load(c + i + 4 * j), lap[j] = load(below + i + 4 * j) * k.hz; \
            for (int j = 0; j < (ways); ++j) lap[j] += load(c + i + 4 * j - sy) * k.hy;                   \
            for (int j = 0; j < (ways); ++j) lap[j] += load(c + i + 4 * j - 1) * k.hx;                    \
            for (int j = 0; j < (ways); ++j) lap[j] += centre[j] * k.diag;                                 \
            for (int j = 0; j < (ways); ++j) lap[j] += load(c + i + 4 * j + 1) * k.hx;                    \
            for (int j = 0; j < (ways); ++j) lap[j] += load(c + i + 4 * j + sy) * k.hy;                   \
            for (int j = 0; j < (ways); ++j) lap[j] += load(above + i + 4 * j) * k.hz;                    \
            for (int j = 0; j < (ways); ++j) store(out + i + 4 * j, centre[j] + k.alpha_dt * lap[j]);      \
        }                                                                                                  \
        row_tail(out, below, c, above, i, n, sy, k);                                                       \
    }
ROW_INTERLEAVED(row_two, 2)
ROW_INTERLEAVED(row_four, 4)

typedef void (*row_fn)(double *, const double *, const double *, const double *, long, long, coeffs);

int main(int argc, char **argv)
{
    const long n = 320, sy = 336, rows = argc > 1 ? atol(argv[1]) : 8, plane = sy * (rows + 2);
    const coeffs k = {0.1, 0.12, 0.08, -0.6, 0.01};
    double *u = aligned_alloc(64, sizeof(double) * plane * 3), *out = aligned_alloc(64, sizeof(double) * plane);
    if (!u || !out || rows < 1) return fprintf(stderr, "usage: stencil_in_cache ROWS (>= 1)\n"), 2;
    for (long i = 0; i < plane * 3; ++i) u[i] = 1.0 + 0.01 * (double)(i % 97);
    memset(out, 0, sizeof(double) * plane);
    const row_fn shapes[3] = {row_one, row_two, row_four};
    const char *names[3] = {"one vector", "two interleaved", "four interleaved"};
    for (int round = 0; round < 3; ++round)
        for (int s = 0; s < 3; ++s) {
            double best = 1e30;
            for (int t = 0; t < 20; ++t) {
                double t0 = omp_get_wtime();
                for (int sweep = 0; sweep < 50; ++sweep)
                    for (long y = 1; y <= rows; ++y) {
                        const double *c = u + plane + y * sy + 8;
                        shapes[s](out + y * sy + 8, c - plane, c, c + plane, n, sy, k);
                    }
                double dt = omp_get_wtime() - t0;
                best = dt < best ? dt : best;
            }
            printf("%-17s %.3f ns a point\n", names[s], best * 1e9 / (50.0 * (double)rows * (double)n));
        }
    double check = 0;
    for (long i = 0; i < plane; ++i) check += out[i];
    printf("(checksum %.6g)\n", check);
    free(u), free(out);
    return 0;
}
