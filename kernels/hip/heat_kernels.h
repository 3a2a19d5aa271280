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

/* The order in which a marching kernel's blocks take their (x tile, y tile, z
 * chunk): blocks start in linear index order as earlier ones finish, so a block
 * of index b starts about when block b - resident ends. Columns of tiles are
 * taken `group` at a time and each group's chunks one after another, in
 * `streams` runs of consecutive chunks side by side: the block that marches a
 * column's next chunk then starts as the one before it reads the planes around
 * their common face, and y-neighbouring columns march together: both reads of
 * a shared plane or row fall close together in time, while L2 still holds it.
 * group = columns and streams = 1 with chunks the slowest index is the grid's
 * own order. The host picks group <= resident blocks (several groups when a
 * slab of columns is larger) and streams dividing the chunks. */
struct march_order {
    int group, streams;
};

__device__ __forceinline__ void march_tile(const march_order &o, int &bx, int &by, int &bz)
{
    const int columns = (int)(gridDim.x * gridDim.y), chunks = (int)gridDim.z;
    const long index = blockIdx.x + (long)gridDim.x * (blockIdx.y + (long)gridDim.y * blockIdx.z);
    const long span = (long)o.group * chunks; /* blocks of a whole group */
    const int g = (int)(index / span), first = g * o.group;
    const int width = min(o.group, columns - first); /* the last group may be narrower */
    const long r = index - g * span;
    const int column = first + (int)(r % width), step = (int)(r / width);
    bz = (step % o.streams) * (chunks / o.streams) + step / o.streams;
    bx = column % (int)gridDim.x, by = column / (int)gridDim.x;
}
