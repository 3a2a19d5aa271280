/*
 * The general step of materials runs split by blocks: a block whose tile (its columns, rows and
 * chunk of planes) and every point its stencils read hold one zone takes that zone's five
 * coefficients once and marches like the one-material heat_zwindow (material_step_zone_made, a
 * launch a zone, which makes its boundary ghosts as heat_zwindowg does: the temperatures' 16 bytes
 * a point in double, no zone byte, no table lookup a face; material_step_wide_zones); the
 * few blocks that meet a zone boundary take material_step's general march (material_step_listed,
 * launched over their list beside the other). The map of the blocks' zones (material_block_zones) is built
 * once a tile shape, since the zones never change in a run. Both kernels compute every point with
 * material_step's terms in its order (material_plane), so all give material_step's bits.
 */
#include "material_wide_kernels.hip"

/* The zone of every point the stencils of tile (blockIdx) read: its points and the faces' layers
 * beside them (no edges or corners), or MATERIAL_MIXED where they hold several. One block a tile
 * of cols x rows x zchunk points; map[(bz gy + by) gx + bx]. */
__global__ void material_block_zones(unsigned char *map, const unsigned char *__restrict__ zone, stencil_shape s,
                                     int cols, int rows, int zchunk)
{
    const int i0 = (int)blockIdx.x * cols, j0 = (int)blockIdx.y * rows, k0 = (int)blockIdx.z * zchunk;
    const int wx = min(cols, s.nx - i0) + 2, wy = min(rows, s.ny - j0) + 2, wz = min(zchunk, s.nz - k0) + 2;
    const int a = zone[i0 + (long)j0 * s.sy + (long)k0 * s.sz];
    int same = 1;
    for (long n = threadIdx.x; n < (long)wx * wy * wz; n += blockDim.x) {
        const int x = (int)(n % wx), y = (int)(n / wx % wy), z = (int)(n / ((long)wx * wy));
        const int outside = (x == 0 || x == wx - 1) + (y == 0 || y == wy - 1) + (z == 0 || z == wz - 1);
        if (outside <= 1) same &= zone[(i0 + x - 1) + (long)(j0 + y - 1) * s.sy + (long)(k0 + z - 1) * s.sz] == a;
    }
    same = __syncthreads_and(same);
    if (threadIdx.x == 0)
        map[((long)blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x] =
            same ? (unsigned char)a : (unsigned char)MATERIAL_MIXED;
}

/* material_step's march of one block's tile (bx, by, bz) of blockDim x M rows and planes
 * [k0, k0 + zchunk): its code, for a block taken from a list. */
template <typename T, bool SHARED, int M>
__device__ __forceinline__ void material_march_general(T *__restrict__ out, const T *__restrict__ u,
                                                       const unsigned char *__restrict__ zone, const stencil_shape &s,
                                                       const T *tab, const material_table &t, unsigned exchanged,
                                                       int bx, int by, int bz, int zchunk)
{
    const int i = threadIdx.x + bx * blockDim.x;
    const int j = M * (threadIdx.y + by * blockDim.y);
    const int k0 = bz * zchunk, k1 = min(k0 + zchunk, s.nz);
    if (i >= s.nx || j >= s.ny) return;
    const int sy = (int)s.sy;
    const zone_lookup<T> lookup = {tab + (int)t.conductance[0], tab + (int)t.conductance[1],
                                   tab + (int)t.conductance[2], tab + (int)t.weight, tab + (int)t.source, t.zones};
    const long start = i + (long)j * s.sy + (long)k0 * s.sz;
    const T *p = u + start;
    const unsigned char *zp = zone + start;
    T *q = out + start;
    material_column<T, M> c;
#pragma unroll
    for (int n = 0; n < M; ++n) {
        c.here[n] = p[n * sy], c.a[n] = zp[n * sy];
        c.above[n] = p[n * sy + s.sz], c.a_above[n] = zp[n * sy + s.sz];
        c.z_low[n] = lookup.z(c.a[n], zp[n * sy - s.sz]) * (p[n * sy - s.sz] - c.here[n]);
    }
    for (int k = k0; k < k1; ++k, p += s.sz, zp += s.sz, q += s.sz) {
        if (k + 1 < k1) {
#pragma unroll
            for (int n = 0; n < M; ++n) c.ahead[n] = p[n * sy + 2 * s.sz], c.a_ahead[n] = zp[n * sy + 2 * s.sz];
        }
        const T south = p[-sy], north = p[M * sy];
        const int a_south = zp[-sy], a_north = zp[M * sy];
        T v[M];
        material_plane<T, M, true>(c, c.a, c.a_above, lookup, p, zp, q, south, north, a_south, a_north, i, j, k, s, tab,
                                   t, exchanged, v);
#pragma unroll
        for (int n = 0; n < M; ++n)
            c.here[n] = c.above[n], c.a[n] = c.a_above[n], c.above[n] = c.ahead[n], c.a_above[n] = c.a_ahead[n];
    }
}

/* The tiles (cols x rows x zchunk points) of a grid of gx x gy tiles that meet a zone boundary,
 * listed (index (bz gy + by) gx + bx): material_step's march of each, beside the one-zone kernels,
 * which leave them. Block (x, y) marches sub-tile y of tile blocks[x] (blockDim.x x M blockDim.y
 * points, the tile a whole number of them, x fastest): a latency-bound few tiles in as many short
 * marches as they hold sub-tiles, at 48 registers (a loop over a tile's sub-tiles needs 64 to 80). */
template <typename T, bool SHARED, int M>
__global__ void __launch_bounds__(MATERIAL_BLOCK_X *MATERIAL_BLOCK_Y)
    material_step_listed(T *__restrict__ out, const T *__restrict__ u, const unsigned char *__restrict__ zone,
                         stencil_shape s, const T *__restrict__ table, material_table t, unsigned exchanged,
                         const int *__restrict__ blocks, int gx, int gy, int cols, int rows, int zchunk)
{
    const T *tab = material_tables_at<T, SHARED>(table, t);
    const int b = blocks[blockIdx.x], sub = (int)blockIdx.y;
    const int across = cols / (int)blockDim.x, along = rows / (M * (int)blockDim.y);
    const int bx = b % gx * across + sub % across, by = b / gx % gy * along + sub / across, bz = b / (gx * gy);
    material_march_general<T, SHARED, M>(out, u, zone, s, tab, t, exchanged, bx, by, bz, zchunk);
}

/* material_step_listed with V points of a row a thread (material_march_wide: one V-wide load of a
 * row's temperatures and one word of its zone bytes where the scalar march issues V of each): for
 * the tiles of the one-zone kernels that march V points a thread, whose mixed tiles are as wide
 * and would otherwise take a quarter of a row a thread in a load of their own. Block (x, y)
 * marches sub-tile y of tile blocks[x] (V blockDim.x x M blockDim.y points, x fastest). The
 * mixed blocks start first and hold the multiprocessors until the last is placed: one row a
 * thread under a register cap (MIN_BLOCKS blocks a multiprocessor) keeps more of a row's
 * latency-bound marches in flight there than two rows a thread at the compiler's registers. */
template <typename T, int V, int M, bool SHARED, int MIN_BLOCKS>
__global__ void __launch_bounds__(MATERIAL_BLOCK_X *MATERIAL_BLOCK_Y, MATERIAL_CAP(MIN_BLOCKS))
    material_step_wide_listed(T *__restrict__ out, const T *__restrict__ u, const unsigned char *__restrict__ zone,
                              stencil_shape s, const T *__restrict__ table, material_table t, unsigned exchanged,
                              const int *__restrict__ blocks, int gx, int gy, int cols, int rows, int zchunk)
{
    const T *tab = material_tables_at<T, SHARED>(table, t);
    const int b = blocks[blockIdx.x], sub = (int)blockIdx.y;
    const int across = cols / (V * (int)blockDim.x), along = rows / (M * (int)blockDim.y);
    const int bx = b % gx * across + sub % across, by = b / gx % gy * along + sub / across, bz = b / (gx * gy);
    material_march_wide<T, V, M, 0>(out, u, zone, s, tab, t, exchanged, zchunk, bx, by, bz);
}

/* The ghost rules of zone a (scale by face, then shift by face) into the block's rule (zone_block). */
template <typename T>
__device__ __forceinline__ void block_ghost_rules(T *rule, const T *__restrict__ table, const material_table &t, int a)
{
    const int thread = threadIdx.x + blockDim.x * threadIdx.y;
    if (thread < 12) rule[thread] = table[(thread < 6 ? t.scale : t.shift) + (thread % 6) * t.zones + a];
    __syncthreads();
}

/* The blocks of one zone a (the map's, in march_order o where ORDERED), V points of a row a thread:
 * material_step_wide's march and stores (one V-wide load of a row's temperatures, the x faces
 * between a thread's points formed once) with the zone's coefficients in registers (zone_block)
 * and no zone byte read. Blocks the map calls mixed leave at once. */
template <typename T, int V, int M, bool ORDERED, int MIN_BLOCKS>
__global__ void __launch_bounds__(MATERIAL_BLOCK_X *MATERIAL_BLOCK_Y, MATERIAL_CAP(MIN_BLOCKS))
    material_step_wide_zones(T *__restrict__ out, const T *__restrict__ u, const unsigned char *__restrict__ zone,
                             const unsigned char *__restrict__ map, stencil_shape s, const T *__restrict__ table,
                             material_table t, unsigned exchanged, int zchunk, march_order o)
{
    typedef material_lanes<T, V> lanes;
    int bx = (int)blockIdx.x, by = (int)blockIdx.y, bz = (int)blockIdx.z;
    if (ORDERED) march_tile(o, bx, by, bz);
    const int a = map[((long)bz * gridDim.y + by) * gridDim.x + bx];
    if (a == MATERIAL_MIXED) return;
    __shared__ T rule[12];
    block_ghost_rules(rule, table, t, a);
    const int i0 = V * (threadIdx.x + bx * blockDim.x);
    const int j = M * (threadIdx.y + by * blockDim.y);
    const int k0 = bz * zchunk, k1 = min(k0 + zchunk, s.nz);
    if (i0 >= s.nx || j >= s.ny) return;
    const int sy = (int)s.sy, valid = min(V, s.nx - i0);
    const bool west_ghost = i0 == 0 && !(exchanged & 1u), east_ghost = !(exchanged & 2u);
    const zone_lookup<T> lookup = {table + t.conductance[0], table + t.conductance[1], table + t.conductance[2],
                                   table + t.weight, table + t.source, t.zones};
    const zone_block<T> k(lookup, a, rule);
    const unsigned word = (unsigned)a * (V == 2 ? 0x0101u : 0x01010101u); /* every lane's zone a */
    const long start = i0 + (long)j * s.sy + (long)k0 * s.sz;
    const T *p = u + start;
    const unsigned char *zp = zone + start; /* not read: zone_uniform knows every neighbour's zone */
    T *q = out + start;
    lanes here[M], above[M], ahead[M], z_low[M];
    unsigned words[M];
#pragma unroll
    for (int n = 0; n < M; ++n) {
        words[n] = word;
        here[n] = lanes_at<T, V>(p + n * sy), above[n] = lanes_at<T, V>(p + n * sy + s.sz);
        const lanes below = lanes_at<T, V>(p + n * sy - s.sz);
#pragma unroll
        for (int l = 0; l < V; ++l) z_low[n].at[l] = k.z(a, a) * (below.at[l] - here[n].at[l]);
    }
    for (int kz = k0; kz < k1; ++kz, p += s.sz, zp += s.sz, q += s.sz) {
        if (kz + 1 < k1) {
#pragma unroll
            for (int n = 0; n < M; ++n) ahead[n] = lanes_at<T, V>(p + n * sy + 2 * s.sz);
        }
        const lanes south = lanes_at<T, V>(p - sy), north = lanes_at<T, V>(p + M * sy);
        lanes v[M];
        material_wide_plane<T, V, M>(here, above, z_low, words, words, south, north, word, word, k, p, zp, i0,
                                     west_ghost, east_ghost, s, table, t, v);
#pragma unroll
        for (int n = 0; n < M; ++n) {
            if (j + n >= s.ny) continue;
            T *qn = q + n * sy;
            store_lanes<T, V>(v[n], qn, valid);
            if (j + n == 0 && !(exchanged & 4u)) store_lanes<T, V>(ghost_lanes<T, V>(k, table, t, 2, word, v[n]), qn - sy, valid);
            if (j + n == s.ny - 1 && !(exchanged & 8u))
                store_lanes<T, V>(ghost_lanes<T, V>(k, table, t, 3, word, v[n]), qn + sy, valid);
            if (kz == 0 && !(exchanged & 16u))
                store_lanes<T, V>(ghost_lanes<T, V>(k, table, t, 4, word, v[n]), qn - s.sz, valid);
            if (kz == s.nz - 1 && !(exchanged & 32u))
                store_lanes<T, V>(ghost_lanes<T, V>(k, table, t, 5, word, v[n]), qn + s.sz, valid);
        }
#pragma unroll
        for (int n = 0; n < M; ++n) here[n] = above[n], above[n] = ahead[n];
    }
}

/* One zone's coefficients and ghost rules (scale by face, then shift by face) as a kernel
 * parameter: the values material_step_wide_zones reads from the tables, which the kernel then takes
 * from the constant bank as the one-material kernels take theirs (no register holds them, no
 * address of a rule either). */
template <typename T> struct material_zone_params {
    T kx, ky, kz, weight, source, rule[12];
    int zone;
};

/* zone_uniform's interface on material_zone_params. */
template <typename T> struct zone_fixed {
    material_zone_params<T> p;
    __device__ __forceinline__ T x(int, int) const { return p.kx; }
    __device__ __forceinline__ T x_at(int, const unsigned char *) const { return p.kx; }
    __device__ __forceinline__ T y(int, int) const { return p.ky; }
    __device__ __forceinline__ T z(int, int) const { return p.kz; }
    __device__ __forceinline__ T w(int) const { return p.weight; }
    __device__ __forceinline__ T q(int) const { return p.source; }
    __device__ __forceinline__ T ghost(const T *, const material_table &, int f, int, T v) const
    {
        return p.rule[f] * v + p.rule[6 + f];
    }
};

/* Where a launch of material_step_zone_made finds its tiles: the grid's own, in march_order o,
 * those of zone z.zone among them by the map (LISTED false), or tiles[blockIdx.x] of a grid of
 * gx x gy tiles (LISTED: a zone of few tiles, launched over its list). */
struct material_zone_tiles {
    const unsigned char *map;
    const int *list;
    int gx, gy;
};

/* material_step's march (two rows a thread, or M) for the blocks of the one zone z.zone, with the
 * zone's coefficients and rules a kernel parameter (one launch a zone present), making every ghost
 * of a physical face on the fly by the zone's rule, as the one-material heat_zwindow does with
 * GHOSTS_MADE, and writing none: a tile of one zone whose
 * faces' layers hold that zone has each boundary ghost it reads beside one of its own points, so
 * the rule (scale T + shift) of its zone gives the value that a halo pass or the step before
 * would have stored there, bit for bit. The mixed tiles (material_step_listed) keep reading and
 * writing their own ghosts: a ghost is read by the point beside it alone, in the same tile of
 * every step. material_step's arithmetic (material_plane), so its bits. */
template <typename T, int M, bool LISTED, int MIN_BLOCKS>
__global__ void __launch_bounds__(MATERIAL_BLOCK_X *MATERIAL_BLOCK_Y, MATERIAL_CAP(MIN_BLOCKS))
    material_step_zone_made(T *__restrict__ out, const T *__restrict__ u, const unsigned char *__restrict__ zone,
                            material_zone_tiles tiles, stencil_shape s, material_zone_params<T> z, material_table t,
                            unsigned exchanged, int zchunk, march_order o)
{
    int bx = (int)blockIdx.x, by = (int)blockIdx.y, bz = (int)blockIdx.z;
    if (LISTED) {
        const int b = tiles.list[blockIdx.x];
        bx = b % tiles.gx, by = b / tiles.gx % tiles.gy, bz = b / (tiles.gx * tiles.gy);
    } else march_tile(o, bx, by, bz);
    const int a = z.zone;
    const int i = threadIdx.x + bx * blockDim.x;
    const int j = M * (threadIdx.y + by * blockDim.y);
    const int k0 = bz * zchunk, k1 = min(k0 + zchunk, s.nz);
    if (i >= s.nx || j >= s.ny) return;
    /* the map's byte on its way beside the first planes' loads, not before them */
    const int tile_zone = LISTED ? a : tiles.map[((long)bz * gridDim.y + by) * gridDim.x + bx];
    const int sy = (int)s.sy;
    const zone_fixed<T> k = {z};
    const T *none = nullptr; /* zone_fixed reads no table */
    const bool made_below = k0 == 0 && !(exchanged & 16u), made_top = !(exchanged & 32u);
    const bool made_south = j == 0 && !(exchanged & 4u);
    const int last_row = exchanged & 8u ? -1 : s.ny - 1 - j; /* the thread's row whose y-high ghost it makes */
    const long start = i + (long)j * s.sy + (long)k0 * s.sz;
    const T *p = u + start;
    const unsigned char *zp = zone + start; /* not read: every neighbour's zone is a */
    T *q = out + start;
    int zones[M];
    material_column<T, M> c;
#pragma unroll
    for (int n = 0; n < M; ++n) {
        zones[n] = a;
        c.here[n] = p[n * sy];
        c.z_low[n] = made_below ? k.ghost(none, t, 4, a, c.here[n]) : p[n * sy - s.sz]; /* the plane below, for now */
    }
    if (tile_zone != a) return;
#pragma unroll
    for (int n = 0; n < M; ++n) c.z_low[n] = k.z(a, a) * (c.z_low[n] - c.here[n]);
#pragma unroll 1
    for (int kz = k0; kz < k1; ++kz, p += s.sz, zp += s.sz, q += s.sz) {
        if (made_top && kz == s.nz - 1) {
#pragma unroll
            for (int n = 0; n < M; ++n) c.above[n] = k.ghost(none, t, 5, a, c.here[n]);
        } else {
#pragma unroll
            for (int n = 0; n < M; ++n) c.above[n] = p[n * sy + s.sz];
        }
        const T south = made_south ? k.ghost(none, t, 2, a, c.here[0]) : p[-sy];
        const T north = p[M * sy];
        T v[M];
        material_plane<T, M, false, true>(c, zones, zones, k, p, zp, q, south, north, a, a, i, j, kz, s, none, t,
                                          exchanged, v, last_row);
#pragma unroll
        for (int n = 0; n < M; ++n)
            if (j + n < s.ny) nontemporal_store(v[n], q + n * sy);
#pragma unroll
        for (int n = 0; n < M; ++n) c.here[n] = c.above[n];
    }
}

/* The ghosts of a row's W values beyond face f, by zone_fixed's rule (material_step_zone_made's). */
template <typename T, int W>
__device__ __forceinline__ row_values<T, W> zone_ghosts(const zone_fixed<T> &k, int f, const row_values<T, W> &v)
{
    row_values<T, W> g;
#pragma unroll
    for (int w = 0; w < W; ++w) g.v[w] = k.ghost(nullptr, material_table(), f, 0, v.v[w]);
    return g;
}

/* Row `here`'s W new values by material_plane's terms in its order, with zone_fixed's coefficients:
 * z_low and y_low are the points' low faces' terms (0 minus the high term of the plane below or of
 * the row beside), left holding 0 minus this row's z-high and y-high terms for the next plane and
 * row; x_low / x_high the neighbours west of point 0 and east of point W - 1; `last` the index of
 * the thread's point at nx - 1 (W or more where it holds none), whose east ghost is made here
 * where nx is not a multiple of W (zwideg_row's rule). */
template <typename T, int W>
__device__ __forceinline__ row_values<T, W> material_zonew_row(row_values<T, W> &z_low, row_values<T, W> &y_low,
                                                               const row_values<T, W> &here, const row_values<T, W> &yn,
                                                               const row_values<T, W> &above, T x_low, T x_high,
                                                               int last, const zone_fixed<T> &k)
{
    row_values<T, W> out;
#pragma unroll
    for (int w = 0; w < W; ++w) {
        const T centre = here.v[w];
        const T west = w == 0 ? x_low : here.v[w - 1];
        T east = w == W - 1 ? x_high : here.v[w + 1];
        if (w < W - 1 && w == last) east = k.ghost(nullptr, material_table(), 1, 0, centre);
        T flux = z_low.v[w];
        flux += y_low.v[w];
        flux += k.x(0, 0) * (west - centre);
        flux += k.x(0, 0) * (east - centre);
        const T y_high = k.y(0, 0) * (yn.v[w] - centre);
        flux += y_high;
        const T z_high = k.z(0, 0) * (above.v[w] - centre);
        flux += z_high;
        out.v[w] = centre + k.w(0) * (flux + k.q(0));
        y_low.v[w] = (T)0 - y_high;
        z_low.v[w] = (T)0 - z_high;
    }
    return out;
}

/* material_step_zone_made (its tiles, parameters and made ghosts, none written) marching as
 * heat_zwideg marches: W points along x a thread, each row of a plane one aligned W-vector load
 * and one streaming vector store, the planes above loaded in the iteration that uses them (no
 * plane ahead in registers). Float's march of one value a thread falls short of a faster
 * memory's copy bandwidth where 16-byte rows reach it (zwideg_kernels.hip says why). Every point
 * is material_plane's arithmetic in its order (material_zonew_row), so material_step's bits.
 * Needs heat_kernels.hip's row_values and zahead_kernels.hip's store_row before it. */
template <typename T, int W, int M, bool LISTED, int MIN_BLOCKS>
__global__ void __launch_bounds__(MATERIAL_BLOCK_X *MATERIAL_BLOCK_Y, MATERIAL_CAP(MIN_BLOCKS))
    material_step_zone_wide(T *__restrict__ out, const T *__restrict__ u, const unsigned char *__restrict__,
                            material_zone_tiles tiles, stencil_shape s, material_zone_params<T> z, material_table,
                            unsigned exchanged, int zchunk, march_order o)
{
    using V = row_values<T, W>;
    int bx = (int)blockIdx.x, by = (int)blockIdx.y, bz = (int)blockIdx.z;
    if (LISTED) {
        const int b = tiles.list[blockIdx.x];
        bx = b % tiles.gx, by = b / tiles.gx % tiles.gy, bz = b / (tiles.gx * tiles.gy);
    } else march_tile(o, bx, by, bz);
    const int i = W * (int)(threadIdx.x + bx * blockDim.x);
    const int j = M * (int)(threadIdx.y + by * blockDim.y);
    const int k0 = bz * zchunk, k1 = min(k0 + zchunk, s.nz);
    if (i >= s.nx || j >= s.ny) return;
    /* the map's byte on its way beside the first plane's loads, not before them */
    const int tile_zone = LISTED ? z.zone : tiles.map[((long)bz * gridDim.y + by) * gridDim.x + bx];
    const zone_fixed<T> k = {z};
    const int valid = min(W, s.nx - i);
    const long start = i + (long)j * s.sy + (long)k0 * s.sz;
    const T *p = u + start;
    T *q = out + start;
    auto row = [&](const T *at) { return *reinterpret_cast<const V *>(at); };
    const bool made_below = k0 == 0 && !(exchanged & 16u), made_south = j == 0 && !(exchanged & 4u);
    const bool made_top = !(exchanged & 32u), made_north = !(exchanged & 8u);
    const bool made_west = i == 0 && !(exchanged & 1u);
    const int last = exchanged & 2u ? W : s.nx - 1 - i; /* the thread's point whose east ghost it makes */
    V here[M], z_low[M];
#pragma unroll
    for (int n = 0; n < M; ++n) {
        here[n] = row(p + n * s.sy);
        /* the plane below, for now */
        z_low[n] = made_below ? zone_ghosts<T, W>(k, 4, here[n]) : row(p + n * s.sy - s.sz);
    }
    if (tile_zone != z.zone) return;
#pragma unroll
    for (int n = 0; n < M; ++n)
#pragma unroll
        for (int w = 0; w < W; ++w) z_low[n].v[w] = k.z(0, 0) * (z_low[n].v[w] - here[n].v[w]);
#pragma unroll 1
    for (int kz = k0; kz < k1; ++kz, p += s.sz, q += s.sz) {
        const V south = made_south ? zone_ghosts<T, W>(k, 2, here[0]) : row(p - s.sy);
        T west[M], east[M];
#pragma unroll
        for (int n = 0; n < M; ++n) {
            west[n] = made_west ? k.ghost(nullptr, material_table(), 0, 0, here[n].v[0]) : p[n * s.sy - 1];
            east[n] = last == W - 1 ? k.ghost(nullptr, material_table(), 1, 0, here[n].v[W - 1]) : p[n * s.sy + W];
        }
        const V north = row(p + M * s.sy);
        V above[M];
        if (made_top && kz == s.nz - 1) {
#pragma unroll
            for (int n = 0; n < M; ++n) above[n] = zone_ghosts<T, W>(k, 5, here[n]);
        } else {
#pragma unroll
            for (int n = 0; n < M; ++n) above[n] = row(p + n * s.sy + s.sz);
        }
        V y_low;
#pragma unroll
        for (int w = 0; w < W; ++w) y_low.v[w] = k.y(0, 0) * (south.v[w] - here[0].v[w]);
#pragma unroll
        for (int n = 0; n < M; ++n) {
            V yn = n == M - 1 ? north : here[n + 1];
            if (made_north && j + n == s.ny - 1) yn = zone_ghosts<T, W>(k, 3, here[n]);
            const V v = material_zonew_row<T, W>(z_low[n], y_low, here[n], yn, above[n], west[n], east[n], last, k);
            if (j + n < s.ny) store_row<T, W>(v, q + n * s.sy, valid);
        }
#pragma unroll
        for (int n = 0; n < M; ++n) here[n] = above[n];
    }
}
