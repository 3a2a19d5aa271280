/*
 * CPU stencil kernels for one precision. Included twice by backend_cpu.c (for_each_precision.h) with
 * REAL = double / float and SUFFIX = _d / _f (C has no templates).
 *
 * Operation order (shared with the HIP kernels so that GPU and CPU agree to
 * rounding): loads in ascending address order, accumulated as
 *   lap = u[z-1] hz ; += u[y-1] hy ; += u[x-1] hx ; += u[c] diag ;
 *         += u[x+1] hx ; += u[y+1] hy ; += u[z+1] hz
 *   u_new = u[c] + alpha_dt * lap
 */
#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#define FN(name) CAT(name, SUFFIX)

typedef struct FN(cpu_coeffs) {
    REAL hx, hy, hz, diag, alpha_dt;
} FN(cpu_coeffs);

static FN(cpu_coeffs) FN(coeffs_cast)(const heat_coeffs *c)
{
    FN(cpu_coeffs) r = {(REAL)c->inv_h2[0], (REAL)c->inv_h2[1], (REAL)c->inv_h2[2], (REAL)c->diag,
                        (REAL)c->alpha_dt};
    return r;
}

/* One row of the stencil: `laplacian_only` selects f = lap(u) over u_new. */
static inline void FN(stencil_row)(REAL *restrict out, const REAL *restrict c, long n, long sy,
                                   long sz, FN(cpu_coeffs) k, int laplacian_only)
{
#pragma omp simd
    for (long i = 0; i < n; ++i) {
        REAL lap = c[i - sz] * k.hz;
        lap += c[i - sy] * k.hy;
        lap += c[i - 1] * k.hx;
        lap += c[i] * k.diag;
        lap += c[i + 1] * k.hx;
        lap += c[i + sy] * k.hy;
        lap += c[i + sz] * k.hz;
        out[i] = laplacian_only ? lap : c[i] + k.alpha_dt * lap;
    }
}

/* ghost = shift + scale * adjacent on the two x faces of one row. */
static inline void FN(set_x_ghosts)(REAL *row, long n, const REAL shift[6], const REAL scale[6])
{
    row[-1] = shift[FACE_X_LOW] + scale[FACE_X_LOW] * row[0];
    row[n] = shift[FACE_X_HIGH] + scale[FACE_X_HIGH] * row[n - 1];
}

/* Sweeps the owned block of u into out (both laid out by `l`). The x-face
 * ghosts of each row are set just before the row is swept, while it is in
 * cache (a separate pass would touch two cache lines per row); only this
 * row's stencil reads them, so threads never race. */
static void FN(stencil_sweep)(REAL *restrict out, REAL *restrict u, const int n[3], const heat_layout *l,
                              FN(cpu_coeffs) k, const REAL shift[6], const REAL scale[6], int laplacian_only)
{
    const long sy = l->stride_y, sz = l->stride_z;
    const long first = l->origin + 1 + sy + sz; /* owned point (0, 0, 0) */
#pragma omp parallel for collapse(2) schedule(static)
    for (int z = 0; z < n[2]; ++z)
        for (int y = 0; y < n[1]; ++y) {
            long row = first + y * sy + z * sz;
            FN(set_x_ghosts)(u + row, n[0], shift, scale);
            FN(stencil_row)(out + row, u + row, n[0], sy, sz, k, laplacian_only);
        }
}

/* ghost = shift + scale * adjacent: Neumann (0, 1), Dirichlet (2g, -1).
 * y and z faces only: stencil_sweep sets the x-face ghosts row by row. */
static void FN(halo_fill_yz)(REAL *u, const int n[3], const heat_layout *l, const REAL shift[6],
                             const REAL scale[6])
{
    const long sy = l->stride_y, sz = l->stride_z;
    REAL *o = u + l->origin + 1 + sy + sz;
#pragma omp parallel for schedule(static)
    for (int z = 0; z < n[2]; ++z) {
        REAL *low = o + z * sz, *high = o + (n[1] - 1) * sy + z * sz;
        for (int x = 0; x < n[0]; ++x) {
            low[x - sy] = shift[FACE_Y_LOW] + scale[FACE_Y_LOW] * low[x];
            high[x + sy] = shift[FACE_Y_HIGH] + scale[FACE_Y_HIGH] * high[x];
        }
    }
#pragma omp parallel for schedule(static)
    for (int y = 0; y < n[1]; ++y) {
        REAL *low = o + y * sy, *high = o + y * sy + (n[2] - 1) * sz;
        for (int x = 0; x < n[0]; ++x) {
            low[x - sz] = shift[FACE_Z_LOW] + scale[FACE_Z_LOW] * low[x];
            high[x + sz] = shift[FACE_Z_HIGH] + scale[FACE_Z_HIGH] * high[x];
        }
    }
}

/* Per-plane partial results combined in plane order: the sum does not depend
 * on the number of threads. */
static void FN(field_stats)(const REAL *u, const int n[3], const heat_layout *l,
                            heat_field_stats *planes)
{
    const long sy = l->stride_y, sz = l->stride_z;
    const REAL *o = u + l->origin + 1 + sy + sz;
#pragma omp parallel for schedule(static)
    for (int z = 0; z < n[2]; ++z) {
        heat_field_stats s = {HUGE_VAL, -HUGE_VAL, 0.0, 0};
        for (int y = 0; y < n[1]; ++y) {
            const REAL *row = o + y * sy + z * sz;
            for (int x = 0; x < n[0]; ++x) {
                double v = row[x];
                if (!isfinite(v)) { ++s.nonfinite; continue; }
                s.sum += v;
                if (v < s.min) s.min = v;
                if (v > s.max) s.max = v;
            }
        }
        planes[z] = s;
    }
}

static void FN(pack)(REAL *restrict compact, const REAL *restrict u, const int n[3],
                     const heat_layout *l)
{
    const REAL *o = u + l->origin + 1 + l->stride_y + l->stride_z;
#pragma omp parallel for collapse(2) schedule(static)
    for (int z = 0; z < n[2]; ++z)
        for (int y = 0; y < n[1]; ++y)
            memcpy(compact + ((long)z * n[1] + y) * n[0], o + y * l->stride_y + z * l->stride_z,
                   sizeof(REAL) * n[0]);
}

static void FN(unpack)(REAL *restrict u, const REAL *restrict compact, const int n[3],
                       const heat_layout *l)
{
    REAL *o = u + l->origin + 1 + l->stride_y + l->stride_z;
#pragma omp parallel for collapse(2) schedule(static)
    for (int z = 0; z < n[2]; ++z)
        for (int y = 0; y < n[1]; ++y)
            memcpy(o + y * l->stride_y + z * l->stride_z, compact + ((long)z * n[1] + y) * n[0],
                   sizeof(REAL) * n[0]);
}

#include "cpu_cg_kernels.h"

#undef FN
#undef CAT
#undef CAT_
