#pragma once
/*
 * Stencil kernels for the HIP backend, templated for float and double.
 * Pointers address owned point (0, 0, 0) of a field with one ghost layer;
 * point (i, j, k) is at i + j sy + k sz. Rows are padded to a multiple of 16
 * in y (zeroed), so tiled threads may load past ny without leaving the field.
 *
 * Every heat kernel accumulates in the CPU backend's order:
 *   lap = u[z-1] hz; += u[y-1] hy; += u[x-1] hx; += u[c] diag; += u[x+1] hx;
 *   += u[y+1] hy; += u[z+1] hz;  u_new = u[c] + alpha_dt lap
 */
#include "hip_compat.h"

template <typename T> struct stencil_coeffs {
    T hx, hy, hz, diag, alpha_dt;
};

struct stencil_shape {
    int nx, ny, nz;
    long sy, sz;
};

enum { HEAT_LAUNCH_BOUND = 256, HEAT_Y_PAD = 16 };

/* Fused heat kernels with small tiles ask for 8 resident 256-thread blocks
 * (NVIDIA: blocks per SM, AMD: waves per SIMD), i.e. at most 32 registers a
 * thread: without it nvcc gives fused m=4 double more registers and
 * occupancy drops below 8 blocks (ncu shows fewer warps active). Larger tiles
 * would spill under the cap (ptxas -v), so they get no hint (0). */
enum { HEAT_FUSED_OCCUPANCY = 8 };
