/*
 * The general step of materials runs (solver/materials.h) on the GPU, in the
 * CPU backend's operation order (kernels/cpu/cpu_materials.h), so that both
 * agree to rounding:
 *   flux = K(z-1) (T[z-1] - T) ; += y-1 ; += x-1 ; += x+1 ; += y+1 ; += z+1
 *   T_new = T + dt_over_heat_capacity * (flux + q)
 * A point reads its zone byte and its six neighbours' (cached) beside the
 * temperature: 17 bytes a point from memory in double (8 in, 8 out, 1 zone).
 * The tables (material_table) live in one device buffer, copied into shared
 * memory by every block where they fit.
 */
#include "heat_kernels.h"

/* Offsets of the tables in the buffer of T, for `zones` zones. */
struct material_table {
    int zones;
    long conductance[3]; /* [a * zones + b]: K_ab / h_d^2 */
    long weight;         /* dt / (rho c) */
    long source;         /* q of the step */
    long scale, shift;   /* [face * zones + a]: ghost = scale T + shift */
    long length;         /* values in all */
};

static inline material_table material_table_make(int zones)
{
    material_table t;
    const long pairs = (long)zones * zones;
    t.zones = zones;
    t.conductance[0] = 0, t.conductance[1] = pairs, t.conductance[2] = 2 * pairs;
    t.weight = 3 * pairs, t.source = t.weight + zones;
    t.scale = t.source + zones, t.shift = t.scale + 6L * zones;
    t.length = t.shift + 6L * zones;
    return t;
}

enum { MATERIAL_SHARED_BYTES = 32 << 10, MATERIAL_BLOCK_X = 64, MATERIAL_BLOCK_Y = 4, MATERIAL_ROWS = 2, MATERIAL_Z_CHUNK = 32 };

/* A register cap that lets `blocks` blocks share a multiprocessor, on NVIDIA; none on AMD, whose
 * compiler meets the same cap (as waves a SIMD) by spilling to scratch, which the isa test forbids. */
#if defined(__CUDACC__) && !defined(__HIP_PLATFORM_AMD__)
#define MATERIAL_CAP(blocks) (blocks)
#else
#define MATERIAL_CAP(blocks) 0
#endif

/* The tables from shared memory (SHARED: every block copies them there first) or from global
 * memory. Separate instantiations: a pointer that may be either is a generic one, whose loads and
 * 64-bit address arithmetic cost more than the shared loads they stand for. */
template <typename T, bool SHARED>
__device__ __forceinline__ const T *material_tables_at(const T *__restrict__ global, const material_table &t)
{
    extern __shared__ unsigned char material_shared[];
    if (!SHARED) return global;
    T *copy = reinterpret_cast<T *>(material_shared);
    const int threads = blockDim.x * blockDim.y * blockDim.z;
    const int thread = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    for (int i = thread; i < (int)t.length; i += threads) copy[i] = global[i];
    __syncthreads();
    return copy;
}

/* The ghost of a boundary face f beside a point of zone a holding v: scale v + shift (material_halo_fill's rule). */
template <typename T> __device__ __forceinline__ T material_ghost(const T *tab, const material_table &t, int f, int a, T v)
{
    return tab[(int)t.scale + f * t.zones + a] * v + tab[(int)t.shift + f * t.zones + a];
}

/* The coefficients of a step by zone: the tables' entries (conductances by the pair of zones), or
 * (zone_uniform) those of one zone a warp's points and all their neighbours share, read once for
 * the warp: the same values, so the same bits, without a table lookup a face. */
template <typename T> struct zone_lookup {
    const T *kx, *ky, *kz, *weight, *source;
    int zones;
    __device__ __forceinline__ T x(int a, int b) const { return kx[a * zones + b]; }
    __device__ __forceinline__ T x_at(int a, const unsigned char *b) const { return kx[a * zones + *b]; }
    __device__ __forceinline__ T y(int a, int b) const { return ky[a * zones + b]; }
    __device__ __forceinline__ T z(int a, int b) const { return kz[a * zones + b]; }
    __device__ __forceinline__ T w(int a) const { return weight[a]; }
    __device__ __forceinline__ T q(int a) const { return source[a]; }
    __device__ __forceinline__ T ghost(const T *tab, const material_table &t, int f, int a, T v) const
    {
        return material_ghost(tab, t, f, a, v);
    }
};

template <typename T> struct zone_uniform {
    T kx, ky, kz, weight, source;
    __device__ __forceinline__ zone_uniform(const zone_lookup<T> &k, int a)
        : kx(k.x(a, a)), ky(k.y(a, a)), kz(k.z(a, a)), weight(k.w(a)), source(k.q(a))
    {
    }
    __device__ __forceinline__ T x(int, int) const { return kx; }
    __device__ __forceinline__ T x_at(int, const unsigned char *) const { return kx; } /* reads no zone byte */
    __device__ __forceinline__ T y(int, int) const { return ky; }
    __device__ __forceinline__ T z(int, int) const { return kz; }
    __device__ __forceinline__ T w(int) const { return weight; }
    __device__ __forceinline__ T q(int) const { return source; }
    __device__ __forceinline__ T ghost(const T *tab, const material_table &t, int f, int a, T v) const
    {
        return material_ghost(tab, t, f, a, v);
    }
};

/* zone_uniform of a block of one zone whose ghost rules (scale[6], then shift[6]) the block keeps
 * in shared memory: material_ghost's values and arithmetic, at addresses the compiler needs no
 * register for (the V lanes' addresses of the rules in the tables, a register pair each, filled
 * the registers of material_step_wide_zones). */
template <typename T> struct zone_block : zone_uniform<T> {
    const T *rule;
    __device__ __forceinline__ zone_block(const zone_lookup<T> &k, int a, const T *rule) : zone_uniform<T>(k, a), rule(rule)
    {
    }
    __device__ __forceinline__ T ghost(const T *, const material_table &, int f, int, T v) const
    {
        return rule[f] * v + rule[6 + f];
    }
};

/* The state of a thread of material_step between planes: its M rows' points here and above, the
 * plane ahead's, their zones, and each row's z-low term (the z-high term of the plane below). */
template <typename T, int M> struct material_column {
    T here[M], above[M], ahead[M], z_low[M];
    int a[M], a_above[M], a_ahead[M];
};

/* Row n's new value v of zone a into q (the first row's point) if it is the block's, with the y and
 * z boundary ghosts beside it (material_halo_fill's rule). */
template <typename T, typename K>
__device__ __forceinline__ void material_store_row(T v, int a, int n, T *q, int j, int kz, const stencil_shape &s,
                                                   const T *tab, const material_table &t, unsigned exchanged, const K &k)
{
    const int sy = (int)s.sy;
    if (j + n >= s.ny) return;
    nontemporal_store(v, q + n * sy);
    if (j + n == 0 && !(exchanged & 4u)) nontemporal_store(k.ghost(tab, t, 2, a, v), q - sy);
    if (j + n == s.ny - 1 && !(exchanged & 8u)) nontemporal_store(k.ghost(tab, t, 3, a, v), q + (n + 1) * sy);
    if (kz == 0 && !(exchanged & 16u)) nontemporal_store(k.ghost(tab, t, 4, a, v), q + n * sy - s.sz);
    if (kz == s.nz - 1 && !(exchanged & 32u)) nontemporal_store(k.ghost(tab, t, 5, a, v), q + n * sy + s.sz);
}

/* One plane of material_step's M rows (p, zp, q at the first row's point), coefficients from k
 * (zone_lookup, or zone_uniform, which reads no zone byte): their new values into v, and into q
 * row by row where STORE (else material_store_plane stores them: a kernel whose paths each
 * stored would have its stores merged by the AMD compiler, which drops their nontemporal hint).
 * Rows past the block's last are computed on its ghost and padding, and not stored. MADE_NORTH:
 * the y-high ghost beyond row last_row (the block's last, where it is the field's) is made by
 * its rule from that row's value instead of read. */
template <typename T, int M, bool STORE, bool MADE_NORTH = false, typename K>
__device__ __forceinline__ void material_plane(material_column<T, M> &c, const int a[M], const int a_above[M],
                                               const K &k, const T *p, const unsigned char *zp, T *q, T south,
                                               T north, int a_south, int a_north, int i, int j, int kz,
                                               const stencil_shape &s, const T *tab, const material_table &t,
                                               unsigned exchanged, T v[M], int last_row = -1)
{
    const int sy = (int)s.sy;
    T y_low = k.y(a[0], a_south) * (south - c.here[0]);
#pragma unroll
    for (int n = 0; n < M; ++n) {
        const int an = a[n];
        const T *at = p + n * sy;
        const unsigned char *zat = zp + n * sy;
        const T here = c.here[n];
        const T west = i == 0 && !(exchanged & 1u) ? k.ghost(tab, t, 0, an, here) : at[-1];
        const T east = i == s.nx - 1 && !(exchanged & 2u) ? k.ghost(tab, t, 1, an, here) : at[1];
        T flux = c.z_low[n];
        flux += y_low;
        flux += k.x_at(an, zat - 1) * (west - here);
        flux += k.x_at(an, zat + 1) * (east - here);
        T y_next = n == M - 1 ? north : c.here[n + 1];
        if (MADE_NORTH && n == last_row) y_next = k.ghost(tab, t, 3, an, here);
        const T y_high = k.y(an, n == M - 1 ? a_north : a[n + 1]) * (y_next - here);
        flux += y_high;
        const T z_high = k.z(an, a_above[n]) * (c.above[n] - here);
        flux += z_high;
        v[n] = here + k.w(an) * (flux + k.q(an));
        if (STORE) material_store_row(v[n], an, n, q, j, kz, s, tab, t, exchanged, k);
        y_low = (T)0 - y_high;
        c.z_low[n] = (T)0 - z_high;
    }
}

template <typename T, int M>
__device__ __forceinline__ void material_store_plane(const T v[M], const int a[M], T *q, int j, int kz,
                                                     const stencil_shape &s, const T *tab, const material_table &t,
                                                     unsigned exchanged)
{
#pragma unroll
    for (int n = 0; n < M; ++n) material_store_row(v[n], a[n], n, q, j, kz, s, tab, t, exchanged, zone_lookup<T>());
}

/* One general step of the owned block (u's ghosts set). Each thread walks a
 * chunk of MATERIAL_Z_CHUNK planes up M neighbouring rows of its
 * column i, keeping each row's point here and above, their zones and the
 * next plane's (loaded one plane ahead, so that a load's latency spans a
 * plane's arithmetic) in registers; per plane and row it loads one
 * temperature and one zone byte from memory and the x neighbours from cache,
 * the rows' y neighbours inside the thread come from registers, and the
 * block's copy of the tables serves the whole chunk.
 * A face's flux term K_ab (T_b - T_a) is its neighbour's across the face
 * negated, exactly (K_ab = K_ba bit for bit: heat_face_conductivity is
 * symmetric; T_a - T_b = -(T_b - T_a)): the z-low term of a plane is 0 minus
 * the z-high term of the plane below, the y-low term of a row 0 minus the
 * y-high term of the row beside it (0 - x, not -x: the direct term of two
 * equal temperatures is +0). So the arithmetic and its bits are the CPU's,
 * term by term, with two of the six terms of a point formed once a face.
 * The step also writes its output's y and z boundary ghosts (not the
 * exchanged faces'), by the rule of material_halo_fill, so the next step needs
 * no halo pass; the x faces' ghosts, one strided value a row, it forms on the
 * fly by the same rule instead of reading them (material_ghost). PREFETCH > 0
 * hints the plane that many ahead into L2 (l2_prefetch), which holds no
 * register: more bytes on their way than the registers' one plane ahead (a
 * template parameter: as a run-time one, nvcc gave the kernel twice the
 * registers). M rows a thread; MIN_BLOCKS > 0 asks the compiler for registers
 * that let that many blocks of 256 threads share a multiprocessor (more
 * threads, so more loads in flight, where the kernel waits on memory). */
template <typename T, bool SHARED, int PREFETCH, int M, int MIN_BLOCKS>
__global__ void __launch_bounds__(MATERIAL_BLOCK_X *MATERIAL_BLOCK_Y, MATERIAL_CAP(MIN_BLOCKS))
    material_step(T *__restrict__ out, const T *__restrict__ u, const unsigned char *__restrict__ zone,
                  stencil_shape s, const T *__restrict__ table, material_table t, unsigned exchanged)
{
    const T *tab = material_tables_at<T, SHARED>(table, t);
    const int i = threadIdx.x + blockIdx.x * blockDim.x;
    const int j = M * (threadIdx.y + blockIdx.y * blockDim.y);
    const int k0 = blockIdx.z * MATERIAL_Z_CHUNK, k1 = min(k0 + MATERIAL_Z_CHUNK, s.nz);
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
        if (PREFETCH > 0 && k + PREFETCH <= k1) {
#pragma unroll
            for (int n = 0; n < M; ++n) {
                l2_prefetch(p + n * sy + PREFETCH * s.sz);
                l2_prefetch(zp + n * sy + PREFETCH * s.sz);
            }
        }
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

/* The zone map by row segments: segment g of row j, plane k (its points 32 g .. 32 g + 31) holds,
 * at segments[(k ny + j) G + g] (G segments a row), the zone of every point its points' stencils
 * touch (the points, their x neighbours and ghosts, the rows beside them and the planes above and
 * below), or MATERIAL_MIXED where they touch several. The zones never change in a run: built once. */
enum { MATERIAL_SEGMENT = 32, MATERIAL_MIXED = 255 };

__global__ void material_segment_zones(unsigned char *segments, const unsigned char *__restrict__ zone, stencil_shape s,
                                       int per_row)
{
    const long id = threadIdx.x + (long)blockIdx.x * blockDim.x, count = (long)per_row * s.ny * s.nz;
    if (id >= count) return;
    const int g = (int)(id % per_row), j = (int)(id / per_row % s.ny), k = (int)(id / per_row / s.ny);
    const int i0 = g * MATERIAL_SEGMENT, i1 = min(i0 + MATERIAL_SEGMENT, s.nx);
    const unsigned char *row = zone + (long)j * s.sy + (long)k * s.sz;
    const int a = row[i0];
    bool same = row[i0 - 1] == a && row[i1] == a;
    for (int i = i0; i < i1; ++i)
        same = same && row[i] == a && row[i - s.sy] == a && row[i + s.sy] == a && row[i - s.sz] == a && row[i + s.sz] == a;
    segments[id] = same ? (unsigned char)a : (unsigned char)MATERIAL_MIXED;
}

/* material_step reading the zone map by row segments (material_segment_zones) instead of the zone
 * bytes: where a plane's M segments of a thread are one zone (most of them: a zone boundary
 * crosses few), its five coefficients serve every face (zone_uniform) and no zone byte is read, so
 * the step moves the temperatures' 16 bytes a point (double) like the one-material step; elsewhere
 * the plane reads its points' zones and looks the pairs up as material_step does. The same
 * arithmetic in the same order, so the same bits. Blocks MATERIAL_BLOCK_X wide (a multiple of
 * MATERIAL_SEGMENT) keep a warp's lanes in one segment: the choice is one for the warp. PREFETCH
 * hints the temperatures that many planes ahead into L2, as material_step does. */
template <typename T, bool SHARED, int PREFETCH, int M, int MIN_BLOCKS>
__global__ void __launch_bounds__(MATERIAL_BLOCK_X *MATERIAL_BLOCK_Y, MATERIAL_CAP(MIN_BLOCKS))
    material_step_segments(T *__restrict__ out, const T *__restrict__ u, const unsigned char *__restrict__ zone,
                           const unsigned char *__restrict__ segments, int per_row, stencil_shape s,
                           const T *__restrict__ table, material_table t, unsigned exchanged)
{
    const T *tab = material_tables_at<T, SHARED>(table, t);
    const int i = threadIdx.x + blockIdx.x * blockDim.x;
    const int j = M * (threadIdx.y + blockIdx.y * blockDim.y);
    const int k0 = blockIdx.z * MATERIAL_Z_CHUNK, k1 = min(k0 + MATERIAL_Z_CHUNK, s.nz);
    if (i >= s.nx || j >= s.ny) return;
    const int sy = (int)s.sy;
    const zone_lookup<T> lookup = {tab + (int)t.conductance[0], tab + (int)t.conductance[1],
                                   tab + (int)t.conductance[2], tab + (int)t.weight, tab + (int)t.source, t.zones};
    const long start = i + (long)j * s.sy + (long)k0 * s.sz;
    const T *p = u + start;
    const unsigned char *zp = zone + start;
    const unsigned char *segment = segments + ((long)k0 * s.ny + j) * per_row + i / MATERIAL_SEGMENT;
    const long segment_plane = (long)s.ny * per_row;
    T *q = out + start;
    material_column<T, M> c;
#pragma unroll
    for (int n = 0; n < M; ++n) {
        c.here[n] = p[n * sy], c.above[n] = p[n * sy + s.sz];
        c.z_low[n] = lookup.z(zp[n * sy], zp[n * sy - s.sz]) * (p[n * sy - s.sz] - c.here[n]);
    }
    for (int k = k0; k < k1; ++k, p += s.sz, zp += s.sz, q += s.sz, segment += segment_plane) {
        if (PREFETCH > 0 && k + PREFETCH <= k1) {
#pragma unroll
            for (int n = 0; n < M; ++n) l2_prefetch(p + n * sy + PREFETCH * s.sz);
        }
        if (k + 1 < k1) {
#pragma unroll
            for (int n = 0; n < M; ++n) c.ahead[n] = p[n * sy + 2 * s.sz];
        }
        const T south = p[-sy], north = p[M * sy];
        const int first = segment[0];
        bool uniform = first != MATERIAL_MIXED;
#pragma unroll
        for (int n = 1; n < M; ++n) uniform = uniform && (j + n >= s.ny || segment[n * per_row] == first);
        T v[M];
        int a[M];
        if (uniform) {
#pragma unroll
            for (int n = 0; n < M; ++n) a[n] = first;
            material_plane<T, M, false>(c, a, a, zone_uniform<T>(lookup, first), p, zp, q, south, north, first, first, i,
                                        j, k, s, tab, t, exchanged, v);
        } else {
            int a_above[M];
#pragma unroll
            for (int n = 0; n < M; ++n) a[n] = zp[n * sy], a_above[n] = zp[n * sy + s.sz];
            material_plane<T, M, false>(c, a, a_above, lookup, p, zp, q, south, north, zp[-sy], zp[M * sy], i, j, k, s,
                                        tab, t, exchanged, v);
        }
        material_store_plane<T, M>(v, a, q, j, k, s, tab, t, exchanged);
#pragma unroll
        for (int n = 0; n < M; ++n) c.here[n] = c.above[n], c.above[n] = c.ahead[n];
    }
}

/* The boundary faces' ghosts (not the exchanged ones) by the rules of the zones beside them:
 * ghost = scale T + shift (shift 0 when `homogeneous`: the CG vectors). */
template <typename T>
__global__ void material_halo_fill(T *u, const unsigned char *__restrict__ zone, stencil_shape s,
                                   const T *__restrict__ table, material_table t, unsigned exchanged, int homogeneous)
{
    const int face = blockIdx.z;
    long inner, step, packed;
    if ((exchanged & (1u << face)) ||
        !face_point(face, threadIdx.x + blockIdx.x * blockDim.x, threadIdx.y + blockIdx.y * blockDim.y, s, inner,
                    step, packed))
        return;
    const int a = zone[inner];
    const T shift = homogeneous ? (T)0 : table[t.shift + (long)face * t.zones + a];
    u[inner + step] = table[t.scale + (long)face * t.zones + a] * u[inner] + shift;
}

/* Geometry of the reduction bricks (solver/reduce.h) of this block. */
struct material_bricks {
    int brick[3], own[3];
    int kind[6]; /* each face's energy kind, -1: none (or exchanged) */
    double volume;
};

/* The energy kinds of solver/materials.h (sources, dirichlet, convective, flux), a header the
 * kernels do not include (backend_hip_materials.hip checks that the two agree). */
enum { MATERIAL_BRICK_SUMS = 128, MATERIAL_BRICK_THREADS = 32, MATERIAL_ENERGY_KINDS = 4 };
enum { MATERIAL_BRICK_SHARE = MATERIAL_BRICK_SUMS / MATERIAL_BRICK_THREADS };

/* A brick face's points in the boundary items' zone list (material_boundary_bricks' face_zone): a whole
 * number of MATERIAL_BRICK_SUMS, so that every face's first point starts partial sum 0. */
__host__ __device__ __forceinline__ int material_face_padded(int points)
{
    return (points + MATERIAL_BRICK_SUMS - 1) / MATERIAL_BRICK_SUMS * MATERIAL_BRICK_SUMS;
}

/* The power in through the boundary faces per brick and kind (out[item * 4 + kind]) of the bricks
 * bricks[item] (those on a face that brings some), one block a brick: each of MATERIAL_BRICK_SUMS
 * partial sums takes every MATERIAL_BRICK_SUMS-th point of the brick's face points, face by face,
 * then the block adds the partial sums in a fixed tree. The order depends on the brick alone, never
 * on the ranks, so every rank count and restart gives the same bits; against the CPU's row order
 * it differs by rounding. A thread forms MATERIAL_BRICK_SHARE of the sums (sum v = thread + q
 * MATERIAL_BRICK_THREADS), their points' loads side by side: the work runs beside the step on a
 * stream of the highest priority, and a block of 32 threads with four points' loads in flight each
 * holds a quarter of the slots that 128 threads with one each held, for about as long. The points'
 * zones come from face_zone (setup_face_zones: item `item`'s from item_first[item], face by face
 * in this order, each face's points padded to a whole number of MATERIAL_BRICK_SUMS), side by side,
 * where the zone index would cost a 32-byte sector a point on the x faces. */
template <typename T>
__global__ void __launch_bounds__(MATERIAL_BRICK_THREADS)
    material_boundary_bricks(const T *__restrict__ u, const unsigned char *__restrict__ face_zone,
                             const int *__restrict__ item_first, stencil_shape s, const T *__restrict__ table,
                             material_table t, material_bricks g, const int *__restrict__ bricks, int count,
                             double *out)
{
    __shared__ double partial[MATERIAL_ENERGY_KINDS][MATERIAL_BRICK_SUMS];
    const int item = blockIdx.x, thread = threadIdx.x;
    if (item >= count) return; /* never: one block an item */
    const long b = bricks[item];
    const unsigned char *zone = face_zone + item_first[item]; /* the face's points' zones, in point order */
    const int at[3] = {(int)(b % g.own[0]), (int)(b / g.own[0] % g.own[1]), (int)(b / ((long)g.own[0] * g.own[1]))};
    const int n[3] = {s.nx, s.ny, s.nz};
    const long stride[3] = {1, s.sy, s.sz};
    double power[MATERIAL_BRICK_SHARE][MATERIAL_ENERGY_KINDS] = {};
    for (int face = 0; face < 6; ++face) {
        if (g.kind[face] < 0) continue;
        const int axis = face / 2, fast = axis == 0 ? 1 : 0, slow = axis == 2 ? 1 : 2;
        const int plane = face % 2 ? n[axis] - 1 : 0;
        if (plane / g.brick[axis] != at[axis]) continue;
        const T *k = table + t.conductance[axis];
        const int b0 = at[slow] * g.brick[slow], rows = min(b0 + g.brick[slow], n[slow]) - b0;
        const int a0 = at[fast] * g.brick[fast], columns = min(a0 + g.brick[fast], n[fast]) - a0;
        const int kind = g.kind[face], points = rows * columns;
        for (int first = 0; first < points; first += MATERIAL_BRICK_SUMS) {
            /* the round's loads first, then its terms in order */
            T value[MATERIAL_BRICK_SHARE] = {};
            int a[MATERIAL_BRICK_SHARE] = {};
#pragma unroll
            for (int q = 0; q < MATERIAL_BRICK_SHARE; ++q) {
                const int point = first + thread + q * MATERIAL_BRICK_THREADS;
                if (point >= points) continue;
                const long p = plane * stride[axis] + (long)(b0 + point / columns) * stride[slow] +
                               (long)(a0 + point % columns) * stride[fast];
                a[q] = zone[point], value[q] = u[p];
            }
#pragma unroll
            for (int q = 0; q < MATERIAL_BRICK_SHARE; ++q) {
                if (first + thread + q * MATERIAL_BRICK_THREADS >= points) continue;
                const T ghost = material_ghost(table, t, face, a[q], value[q]); /* the step's x ghosts are not stored */
                const double in = (double)(k[(long)a[q] * (t.zones + 1)] * (ghost - value[q])) * g.volume;
#pragma unroll
                for (int e = 0; e < MATERIAL_ENERGY_KINDS; ++e) /* a register index: no local memory */
                    if (e == kind) power[q][e] += in;
            }
        }
        zone += material_face_padded(points);
    }
#pragma unroll
    for (int q = 0; q < MATERIAL_BRICK_SHARE; ++q)
        for (int kind = 0; kind < MATERIAL_ENERGY_KINDS; ++kind)
            partial[kind][thread + q * MATERIAL_BRICK_THREADS] = power[q][kind];
    __syncthreads();
    for (int half = MATERIAL_BRICK_SUMS / 2; half > 0; half /= 2) {
        for (int v = thread; v < half; v += MATERIAL_BRICK_THREADS)
            for (int kind = 0; kind < MATERIAL_ENERGY_KINDS; ++kind) partial[kind][v] += partial[kind][v + half];
        __syncthreads();
    }
    if (thread < MATERIAL_ENERGY_KINDS) out[(long)item * MATERIAL_ENERGY_KINDS + thread] = partial[thread][0];
}

/* sum of rho c T V per brick, one thread a brick, rows in order (the CPU's material_heat_bricks). */
template <typename T>
__global__ void material_heat_bricks(const T *__restrict__ u, const unsigned char *__restrict__ zone, stencil_shape s,
                                     const double *__restrict__ heat_capacity, material_bricks g, double *out)
{
    const long b = threadIdx.x + (long)blockIdx.x * blockDim.x, count = (long)g.own[0] * g.own[1] * g.own[2];
    if (b >= count) return;
    const int bx = (int)(b % g.own[0]), by = (int)(b / g.own[0] % g.own[1]), bz = (int)(b / ((long)g.own[0] * g.own[1]));
    const int x0 = bx * g.brick[0], x1 = min(x0 + g.brick[0], s.nx);
    const int y0 = by * g.brick[1], y1 = min(y0 + g.brick[1], s.ny);
    const int z0 = bz * g.brick[2], z1 = min(z0 + g.brick[2], s.nz);
    double sum = 0.0;
    for (int z = z0; z < z1; ++z)
        for (int y = y0; y < y1; ++y) {
            const long row = (long)y * s.sy + (long)z * s.sz;
            double piece = 0.0;
            for (int x = x0; x < x1; ++x) piece += heat_capacity[zone[row + x]] * (double)u[row + x] * g.volume;
            sum += piece;
        }
    out[b] = sum;
}

/* The explicit step's energy balance without the host (one process): the boundary powers of
 * material_boundary_bricks summed over the bricks as the host sums them (solver/reduce.c, lane_sum:
 * brick b into lane b % 8 in brick order, then the lanes pairwise; the bricks off the faces add
 * nothing, lanes never hold -0), then energy[kind] += dt power[kind], each product rounded before
 * its addition as on the host, so that a run on one process has the bits of one on several (whose
 * powers the host sums across processes). The boundary list is in lane order: lane l's items are
 * bricks[lane_first[l] .. lane_first[l + 1]), in brick order, so that a thread's loads are
 * independent of each other and of its sum. One block of MATERIAL_ENERGY_KINDS x MATERIAL_LANES
 * threads. */
enum { MATERIAL_LANES = 8 };

__global__ void __launch_bounds__(MATERIAL_ENERGY_KINDS *MATERIAL_LANES)
    material_energy_step(const double *__restrict__ bricks, const int *__restrict__ lane_first, double dt,
                         double source_power, double *energy)
{
    __shared__ double lanes[MATERIAL_ENERGY_KINDS][MATERIAL_LANES];
    const int kind = threadIdx.x / MATERIAL_LANES, lane = threadIdx.x % MATERIAL_LANES;
    double sum = 0.0;
#pragma unroll 8
    for (int q = lane_first[lane]; q < lane_first[lane + 1]; ++q) sum += bricks[(long)q * MATERIAL_ENERGY_KINDS + kind];
    lanes[kind][lane] = sum;
    __syncthreads();
    if (lane != 0) return;
    const double *l = lanes[kind];
    const double power = kind == 0 ? source_power : ((l[0] + l[1]) + (l[2] + l[3])) + ((l[4] + l[5]) + (l[6] + l[7]));
    energy[kind] = __dadd_rn(energy[kind], __dmul_rn(dt, power));
}
