/*
 * The general step of materials runs (material_kernels.hip's material_step)
 * with V neighbouring points of a row a thread: one V-wide load of the
 * temperatures and one of their V zone bytes (a 2- or 4-byte word) where the
 * scalar step issues V of each, and the x faces between a thread's points
 * formed once, from registers. Per point the arithmetic and its order are
 * material_step's, term by term, so both give the same bits:
 *   flux = K(z-1) ; += y-1 ; += x-1 ; += x+1 ; += y+1 ; += z+1
 *   T_new = T + dt_over_heat_capacity * (flux + q)
 * A face's term is its neighbour's across the face negated, exactly (see
 * material_step): the x-low term of a point is 0 minus the x-high term of the
 * point before it in the thread, as the y- and z-low terms are.
 *
 * A row's owned point 0 sits on an aligned address (heat_layout_make) and the
 * zone index has the fields' layout, so the V-wide loads of points i0 = V t
 * are aligned. Lanes past the last owned point read the row's ghost and
 * padding (zeroed, zone 0) and are computed but never stored.
 */
#include "material_kernels.hip"

/* V values of a row, one aligned load or store wide. */
template <typename T, int V> struct alignas(sizeof(T) * V) material_lanes {
    T at[V];
};

/* The zone bytes of V points as one word (V = 2: 16 bits, V = 4: 32 bits), byte v of it point v's. */
template <int V> struct zone_word_of;
template <> struct zone_word_of<2> {
    typedef unsigned short type;
};
template <> struct zone_word_of<4> {
    typedef unsigned int type;
};

template <int V> __device__ __forceinline__ unsigned zone_word(const unsigned char *at)
{
    return *reinterpret_cast<const typename zone_word_of<V>::type *>(at);
}

__device__ __forceinline__ int zone_byte(unsigned word, int v) { return (word >> (8 * v)) & 0xffu; }

template <typename T, int V> __device__ __forceinline__ material_lanes<T, V> lanes_at(const T *at)
{
    return *reinterpret_cast<const material_lanes<T, V> *>(at);
}

/* The first `valid` (>= 1) of the V lanes into q. Lanes past them store lane valid - 1 again, in
 * its place: no branch a lane, whose stores the AMD compiler would merge into plain (cached) ones. */
template <typename T, int V> __device__ __forceinline__ void store_lanes(const material_lanes<T, V> &v, T *q, int valid)
{
#if defined(__CUDACC__) && !defined(__HIP_PLATFORM_AMD__)
    if (valid >= V) {
        if constexpr (V == 2) nontemporal_store_wide(v.at[0], v.at[1], q);
        else nontemporal_store_wide(v.at[0], v.at[1], v.at[2], v.at[3], q);
        return;
    }
#endif
    T last = v.at[0];
#pragma unroll
    for (int l = 0; l < V; ++l) {
        last = l < valid ? v.at[l] : last;
        nontemporal_store(last, q + min(l, valid - 1));
    }
}

/* The ghosts beside the V lanes v across boundary face f (material_ghost's rule, or k's). */
template <typename T, int V>
__device__ __forceinline__ material_lanes<T, V> ghost_lanes(const T *tab, const material_table &t, int f,
                                                            unsigned zones,
                                                            const material_lanes<T, V> &v)
{
    material_lanes<T, V> g;
#pragma unroll
    for (int l = 0; l < V; ++l) g.at[l] = material_ghost(tab, t, f, zone_byte(zones, l), v.at[l]);
    return g;
}

template <typename T, int V, typename K>
__device__ __forceinline__ material_lanes<T, V> ghost_lanes(const K &k, const T *tab, const material_table &t, int f,
                                                            unsigned zones, const material_lanes<T, V> &v)
{
    material_lanes<T, V> g;
#pragma unroll
    for (int l = 0; l < V; ++l) g.at[l] = k.ghost(tab, t, f, zone_byte(zones, l), v.at[l]);
    return g;
}

/* One general step as material_step does it over the tile (bx, by, bz) of blockDim x M rows of V
 * points (x: i0 = V thread) and zchunk planes, marching up z with each row's points here and above
 * and the next plane's (loaded one plane ahead) in registers; PREFETCH > 0 also hints the plane
 * that many ahead into L2. It writes its output's y and z boundary ghosts and forms the x faces'
 * where it reads them, as material_step does. */
template <typename T, int V, int M, int PREFETCH>
__device__ __forceinline__ void material_march_wide(T *__restrict__ out, const T *__restrict__ u,
                                                    const unsigned char *__restrict__ zone, const stencil_shape &s,
                                                    const T *tab, const material_table &t, unsigned exchanged,
                                                    int zchunk, int bx, int by, int bz)
{
    typedef material_lanes<T, V> lanes;
    const int i0 = V * (threadIdx.x + bx * blockDim.x);
    const int j = M * (threadIdx.y + by * blockDim.y);
    const int k0 = bz * zchunk, k1 = min(k0 + zchunk, s.nz);
    if (i0 >= s.nx || j >= s.ny) return;
    const int zones = t.zones, sy = (int)s.sy, valid = min(V, s.nx - i0);
    const bool west_ghost = i0 == 0 && !(exchanged & 1u), east_ghost = !(exchanged & 2u);
    const T *kx = tab + (int)t.conductance[0], *ky = tab + (int)t.conductance[1], *kz = tab + (int)t.conductance[2];
    const T *weight = tab + (int)t.weight, *source = tab + (int)t.source;
    const long start = i0 + (long)j * s.sy + (long)k0 * s.sz;
    const T *p = u + start;
    const unsigned char *zp = zone + start;
    T *q = out + start;
    lanes here[M], above[M], ahead[M], z_low[M];
    unsigned a[M], a_above[M], a_ahead[M];
#pragma unroll
    for (int n = 0; n < M; ++n) {
        here[n] = lanes_at<T, V>(p + n * sy), a[n] = zone_word<V>(zp + n * sy);
        above[n] = lanes_at<T, V>(p + n * sy + s.sz), a_above[n] = zone_word<V>(zp + n * sy + s.sz);
        const lanes below = lanes_at<T, V>(p + n * sy - s.sz);
        const unsigned a_below = zone_word<V>(zp + n * sy - s.sz);
#pragma unroll
        for (int l = 0; l < V; ++l)
            z_low[n].at[l] = kz[zone_byte(a[n], l) * zones + zone_byte(a_below, l)] * (below.at[l] - here[n].at[l]);
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
            for (int n = 0; n < M; ++n)
                ahead[n] = lanes_at<T, V>(p + n * sy + 2 * s.sz), a_ahead[n] = zone_word<V>(zp + n * sy + 2 * s.sz);
        }
        const lanes south = lanes_at<T, V>(p - sy), north = lanes_at<T, V>(p + M * sy);
        const unsigned a_south = zone_word<V>(zp - sy), a_north = zone_word<V>(zp + M * sy);
        T y_low[V];
#pragma unroll
        for (int l = 0; l < V; ++l)
            y_low[l] = ky[zone_byte(a[0], l) * zones + zone_byte(a_south, l)] * (south.at[l] - here[0].at[l]);
#pragma unroll
        for (int n = 0; n < M; ++n) {
            const T *at = p + n * sy;
            const unsigned char *zat = zp + n * sy;
            const unsigned row_above = n == M - 1 ? a_north : a[n + 1];
            const int a_first = zone_byte(a[n], 0);
            const T west = west_ghost ? material_ghost(tab, t, 0, a_first, here[n].at[0]) : at[-1];
            T x_low = kx[a_first * zones + zat[-1]] * (west - here[n].at[0]);
            /* past the row's ghost (nx not a multiple of V) lane V - 1 is not stored: no read */
            const bool inside = i0 + V <= s.nx;
            const T east_memory = inside ? at[V] : (T)0;
            const int a_east_memory = inside ? zat[V] : 0;
            lanes v;
#pragma unroll
            for (int l = 0; l < V; ++l) {
                const int al = zone_byte(a[n], l), row = al * zones;
                const T centre = here[n].at[l];
                const T beyond = l == V - 1 ? east_memory : here[n].at[l + 1];
                const T east = east_ghost && i0 + l == s.nx - 1 ? material_ghost(tab, t, 1, al, centre) : beyond;
                const int a_east = l == V - 1 ? a_east_memory : zone_byte(a[n], l + 1);
                T flux = z_low[n].at[l];
                flux += y_low[l];
                flux += x_low;
                const T x_high = kx[row + a_east] * (east - centre);
                flux += x_high;
                const T next = n == M - 1 ? north.at[l] : here[n + 1].at[l];
                const T y_high = ky[row + zone_byte(row_above, l)] * (next - centre);
                flux += y_high;
                const T z_high = kz[row + zone_byte(a_above[n], l)] * (above[n].at[l] - centre);
                flux += z_high;
                v.at[l] = centre + weight[al] * (flux + source[al]);
                x_low = (T)0 - x_high;
                y_low[l] = (T)0 - y_high;
                z_low[n].at[l] = (T)0 - z_high;
            }
            if (j + n < s.ny) {
                T *qn = q + n * sy;
                store_lanes<T, V>(v, qn, valid);
                if (j + n == 0 && !(exchanged & 4u))
                    store_lanes<T, V>(ghost_lanes<T, V>(tab, t, 2, a[n], v), qn - sy, valid);
                if (j + n == s.ny - 1 && !(exchanged & 8u))
                    store_lanes<T, V>(ghost_lanes<T, V>(tab, t, 3, a[n], v), qn + sy, valid);
                if (k == 0 && !(exchanged & 16u))
                    store_lanes<T, V>(ghost_lanes<T, V>(tab, t, 4, a[n], v), qn - s.sz, valid);
                if (k == s.nz - 1 && !(exchanged & 32u))
                    store_lanes<T, V>(ghost_lanes<T, V>(tab, t, 5, a[n], v), qn + s.sz, valid);
            }
        }
#pragma unroll
        for (int n = 0; n < M; ++n) here[n] = above[n], a[n] = a_above[n], above[n] = ahead[n], a_above[n] = a_ahead[n];
    }
}

/* material_march_wide over the grid, a tile a block; MIN_BLOCKS > 0 caps the registers, as
 * material_step does. */
template <typename T, int V, int M, bool SHARED, int PREFETCH, int MIN_BLOCKS>
__global__ void __launch_bounds__(MATERIAL_BLOCK_X *MATERIAL_BLOCK_Y, MATERIAL_CAP(MIN_BLOCKS))
    material_step_wide(T *__restrict__ out, const T *__restrict__ u, const unsigned char *__restrict__ zone,
                       stencil_shape s, const T *__restrict__ table, material_table t, unsigned exchanged, int zchunk)
{
    const T *tab = material_tables_at<T, SHARED>(table, t);
    material_march_wide<T, V, M, PREFETCH>(out, u, zone, s, tab, t, exchanged, zchunk, (int)blockIdx.x, (int)blockIdx.y,
                                           (int)blockIdx.z);
}

/* One plane of material_step_wide's M rows of V points (p, zp at the first row's first point):
 * their new values v, coefficients from k (zone_lookup, or zone_uniform, which reads no zone
 * byte), the zones of the points here (a), above (a_above) and of the rows beside (a_south,
 * a_north) as words of V bytes. */
template <typename T, int V, int M, typename K>
__device__ __forceinline__ void material_wide_plane(const material_lanes<T, V> here[M],
                                                    const material_lanes<T, V> above[M], material_lanes<T, V> z_low[M],
                                                    const unsigned a[M], const unsigned a_above[M],
                                                    const material_lanes<T, V> &south, const material_lanes<T, V> &north,
                                                    unsigned a_south, unsigned a_north, const K &k, const T *p,
                                                    const unsigned char *zp, int i0, bool west_ghost, bool east_ghost,
                                                    const stencil_shape &s, const T *tab, const material_table &t,
                                                    material_lanes<T, V> v[M])
{
    const int sy = (int)s.sy;
    T y_low[V];
#pragma unroll
    for (int l = 0; l < V; ++l) y_low[l] = k.y(zone_byte(a[0], l), zone_byte(a_south, l)) * (south.at[l] - here[0].at[l]);
#pragma unroll
    for (int n = 0; n < M; ++n) {
        const T *at = p + n * sy;
        const unsigned char *zat = zp + n * sy;
        const unsigned row_above = n == M - 1 ? a_north : a[n + 1];
        const int a_first = zone_byte(a[n], 0);
        const T west = west_ghost ? k.ghost(tab, t, 0, a_first, here[n].at[0]) : at[-1];
        T x_low = k.x_at(a_first, zat - 1) * (west - here[n].at[0]);
        /* past the row's ghost (nx not a multiple of V) lane V - 1 is not stored: no read */
        const bool inside = i0 + V <= s.nx;
        const T east_memory = inside ? at[V] : (T)0;
#pragma unroll
        for (int l = 0; l < V; ++l) {
            const int al = zone_byte(a[n], l);
            const T centre = here[n].at[l];
            const T beyond = l == V - 1 ? east_memory : here[n].at[l + 1];
            const T east = east_ghost && i0 + l == s.nx - 1 ? k.ghost(tab, t, 1, al, centre) : beyond;
            T flux = z_low[n].at[l];
            flux += y_low[l];
            flux += x_low;
            const T k_east = l < V - 1 ? k.x(al, zone_byte(a[n], l + 1)) : inside ? k.x_at(al, zat + V) : k.x(al, 0);
            const T x_high = k_east * (east - centre);
            flux += x_high;
            const T next = n == M - 1 ? north.at[l] : here[n + 1].at[l];
            const T y_high = k.y(al, zone_byte(row_above, l)) * (next - centre);
            flux += y_high;
            const T z_high = k.z(al, zone_byte(a_above[n], l)) * (above[n].at[l] - centre);
            flux += z_high;
            v[n].at[l] = centre + k.w(al) * (flux + k.q(al));
            x_low = (T)0 - x_high;
            y_low[l] = (T)0 - y_high;
            z_low[n].at[l] = (T)0 - z_high;
        }
    }
}

/* material_step_wide reading the zone map by row segments first, as material_step_segments does:
 * a plane whose segments are one zone takes its coefficients for every face and reads no zone
 * word; the others read theirs. The same arithmetic, so the same bits. A thread's V points lie in
 * one segment (MATERIAL_SEGMENT a multiple of V); a warp may span several, each thread choosing
 * for its own. Both paths share one store a value (material_store_plane says why). */
template <typename T, int V, int M, bool SHARED, int PREFETCH, int MIN_BLOCKS>
__global__ void __launch_bounds__(MATERIAL_BLOCK_X *MATERIAL_BLOCK_Y, MATERIAL_CAP(MIN_BLOCKS))
    material_step_wide_segments(T *__restrict__ out, const T *__restrict__ u, const unsigned char *__restrict__ zone,
                                const unsigned char *__restrict__ segments, int per_row, stencil_shape s,
                                const T *__restrict__ table, material_table t, unsigned exchanged, int zchunk)
{
    typedef material_lanes<T, V> lanes;
    static_assert(MATERIAL_SEGMENT % V == 0, "a thread's points lie in one segment");
    const T *tab = material_tables_at<T, SHARED>(table, t);
    const int i0 = V * (threadIdx.x + blockIdx.x * blockDim.x);
    const int j = M * (threadIdx.y + blockIdx.y * blockDim.y);
    const int k0 = blockIdx.z * zchunk, k1 = min(k0 + zchunk, s.nz);
    if (i0 >= s.nx || j >= s.ny) return;
    const int sy = (int)s.sy, valid = min(V, s.nx - i0);
    const bool west_ghost = i0 == 0 && !(exchanged & 1u), east_ghost = !(exchanged & 2u);
    const zone_lookup<T> lookup = {tab + (int)t.conductance[0], tab + (int)t.conductance[1],
                                   tab + (int)t.conductance[2], tab + (int)t.weight, tab + (int)t.source, t.zones};
    const long start = i0 + (long)j * s.sy + (long)k0 * s.sz;
    const T *p = u + start;
    const unsigned char *zp = zone + start;
    const unsigned char *segment = segments + ((long)k0 * s.ny + j) * per_row + i0 / MATERIAL_SEGMENT;
    const long segment_plane = (long)s.ny * per_row;
    T *q = out + start;
    lanes here[M], above[M], ahead[M], z_low[M];
#pragma unroll
    for (int n = 0; n < M; ++n) {
        here[n] = lanes_at<T, V>(p + n * sy), above[n] = lanes_at<T, V>(p + n * sy + s.sz);
        const lanes below = lanes_at<T, V>(p + n * sy - s.sz);
        const unsigned a = zone_word<V>(zp + n * sy), a_below = zone_word<V>(zp + n * sy - s.sz);
#pragma unroll
        for (int l = 0; l < V; ++l)
            z_low[n].at[l] = lookup.z(zone_byte(a, l), zone_byte(a_below, l)) * (below.at[l] - here[n].at[l]);
    }
    for (int k = k0; k < k1; ++k, p += s.sz, zp += s.sz, q += s.sz, segment += segment_plane) {
        if (PREFETCH > 0 && k + PREFETCH <= k1) {
#pragma unroll
            for (int n = 0; n < M; ++n) l2_prefetch(p + n * sy + PREFETCH * s.sz);
        }
        if (k + 1 < k1) {
#pragma unroll
            for (int n = 0; n < M; ++n) ahead[n] = lanes_at<T, V>(p + n * sy + 2 * s.sz);
        }
        const lanes south = lanes_at<T, V>(p - sy), north = lanes_at<T, V>(p + M * sy);
        const int first = segment[0];
        bool uniform = first != MATERIAL_MIXED;
#pragma unroll
        for (int n = 1; n < M; ++n) uniform = uniform && (j + n >= s.ny || segment[n * per_row] == first);
        lanes v[M];
        unsigned a[M];
        if (uniform) {
#pragma unroll
            for (int n = 0; n < M; ++n) a[n] = (unsigned)first * (V == 2 ? 0x0101u : 0x01010101u);
            material_wide_plane<T, V, M>(here, above, z_low, a, a, south, north, a[0], a[0],
                                         zone_uniform<T>(lookup, first), p, zp, i0, west_ghost, east_ghost, s, tab, t,
                                         v);
        } else {
            unsigned a_above[M];
#pragma unroll
            for (int n = 0; n < M; ++n) a[n] = zone_word<V>(zp + n * sy), a_above[n] = zone_word<V>(zp + n * sy + s.sz);
            material_wide_plane<T, V, M>(here, above, z_low, a, a_above, south, north, zone_word<V>(zp - sy),
                                         zone_word<V>(zp + M * sy), lookup, p, zp, i0, west_ghost, east_ghost, s, tab,
                                         t, v);
        }
#pragma unroll
        for (int n = 0; n < M; ++n) {
            if (j + n >= s.ny) continue;
            T *qn = q + n * sy;
            store_lanes<T, V>(v[n], qn, valid);
            if (j + n == 0 && !(exchanged & 4u)) store_lanes<T, V>(ghost_lanes<T, V>(tab, t, 2, a[n], v[n]), qn - sy, valid);
            if (j + n == s.ny - 1 && !(exchanged & 8u))
                store_lanes<T, V>(ghost_lanes<T, V>(tab, t, 3, a[n], v[n]), qn + sy, valid);
            if (k == 0 && !(exchanged & 16u))
                store_lanes<T, V>(ghost_lanes<T, V>(tab, t, 4, a[n], v[n]), qn - s.sz, valid);
            if (k == s.nz - 1 && !(exchanged & 32u))
                store_lanes<T, V>(ghost_lanes<T, V>(tab, t, 5, a[n], v[n]), qn + s.sz, valid);
        }
#pragma unroll
        for (int n = 0; n < M; ++n) here[n] = above[n], above[n] = ahead[n];
    }
}
