/*
 * Several heat steps a sweep (2.5D temporal blocking, Wellein et al.;
 * Nguyen et al., SC'10): a block owns a tile of columns TX x TY and marches
 * along z. Level 0 is the field read from memory, level l the field after l
 * steps; a thread keeps, for each level below K, the last two planes of its
 * own columns in registers (z neighbours) and publishes the newest plane of
 * each level in shared memory (x and y neighbours of the tile). At the plane
 * loaded as level 0 at t, level l is computed at plane t - l, and only level
 * K goes back to memory: 2 sizeof(T) bytes a point per K steps, bought with
 * halo columns the tile recomputes (K on each side, shrinking a level a step).
 *
 * Bitwise identical to K single steps: every point of every level is the
 * heat kernels' expression in their order (heat_kernels.h), and a ghost is
 * made as halo_fill makes it, shift + scale * the point next to it, so a
 * point beside a face reads the value a single step would read there. A
 * periodic axis held whole by this block (its exchanged faces meet
 * themselves) wraps the column and plane indices instead: the ghost then is
 * the far side's owned value, as the exchange brings it.
 *
 * DEEP: the faces of one axis (x or z) are cut between ranks, and the K
 * planes (z) or columns (x) beyond each come from the neighbour, exchanged
 * once a sweep (solver/deep_halo.h). The block then reads them where it
 * would read its own ghosts, and computes levels 1 .. K-1 on them as a tile
 * computes its halo: the rank's edge is a tile's edge. Since every point of
 * them is the neighbour's own value and the arithmetic is the same, so are
 * the bits, whatever the rank count.
 */
#include "heat_kernels.h"

/* Index i of a periodic axis of n points: planes, for i in [-n, 2n) (a z
 * chunk reaches K <= n planes beyond the field); columns and rows, any i (a
 * tile may be wider than a small periodic grid). */
__device__ __forceinline__ int wrap_near(int i, int n) { return i < 0 ? i + n : (i >= n ? i - n : i); }
__device__ __forceinline__ int wrap_any(int i, int n) { return ((i % n) + n) % n; }

/* Where a column, row (NEAR false) or plane (NEAR true) lies: in the field
 * (load it), or outside a non-periodic axis (nothing to load: the points
 * beside that face use the ghost formula instead of it). */
template <bool NEAR> __device__ __forceinline__ bool place_on_axis(int g, int n, bool periodic, int &at)
{
    if (periodic) {
        at = NEAR ? wrap_near(g, n) : wrap_any(g, n);
        return true;
    }
    at = g;
    return g >= 0 && g < n;
}

/* The ghosts K deep beyond the faces of one axis cut between ranks, as the
 * neighbours sent them: z, K whole planes of the field's layout (plane k of
 * `low` is plane k - K of this block, of `high` plane nz + k), addressed at
 * their point (0, 0); x, K columns a row, packed [z][y][K] (deep_pack_x).
 * NULL: that face is not cut. */
template <typename T> struct deep_ghosts {
    const T *low, *high;
    int axis; /* 0: x, 2: z */
};

/* The K owned columns next to each x face, packed [z][y][K] for the
 * neighbour across it (its ghosts beyond the opposite face). */
template <typename T>
__global__ void __launch_bounds__(HEAT_LAUNCH_BOUND) deep_pack_x(T *__restrict__ low, T *__restrict__ high,
                                                                 const T *__restrict__ in, stencil_shape s, int K)
{
    const int i = (int)threadIdx.x, j = (int)(blockIdx.x * blockDim.y + threadIdx.y), k = (int)blockIdx.y;
    if (j >= s.ny) return;
    const T *row = in + j * s.sy + k * s.sz;
    const long at = i + (long)K * (j + (long)s.ny * k);
    if (low) low[at] = row[i];
    if (high) high[at] = row[s.nx - K + i];
}

/* The heat step at one point, in the order of every heat kernel. FACES: the
 * tile touches a face that is not exchanged, and the at_* flags say which
 * faces this point lies beside; their ghosts are then made from the centre.
 * Most tiles touch none, and their planes skip the ghosts' arithmetic and
 * flags altogether (a branch the whole block takes alike). */
template <typename T, bool FACES>
__device__ __forceinline__ T fused_point(T below, T south, T west, T centre, T east, T north, T above, bool at_x_low,
                                         bool at_x_high, bool at_y_low, bool at_y_high, bool at_z_low, bool at_z_high,
                                         const stencil_coeffs<T> &c, const halo_coeffs<T> &h)
{
    if (FACES) {
        if (at_x_low) west = h.shift[0] + h.scale[0] * centre;
        if (at_x_high) east = h.shift[1] + h.scale[1] * centre;
        if (at_y_low) south = h.shift[2] + h.scale[2] * centre;
        if (at_y_high) north = h.shift[3] + h.scale[3] * centre;
        if (at_z_low) below = h.shift[4] + h.scale[4] * centre;
        if (at_z_high) above = h.shift[5] + h.scale[5] * centre;
    }
    T lap = below * c.hz;
    lap = fma(south, c.hy, lap);
    lap = fma(west, c.hx, lap);
    lap = fma(centre, c.diag, lap);
    lap = fma(east, c.hx, lap);
    lap = fma(north, c.hy, lap);
    lap = fma(above, c.hz, lap);
    return fma(c.alpha_dt, lap, centre);
}

/* A compile-time value passed to a generic lambda (std::integral_constant without the header). */
template <int V> struct fused_constant {
    static constexpr int value = V;
};

/* f(fused_constant<0>()), f(fused_constant<1>()), ... f(fused_constant<N - 1>()), in that order. */
template <int N, typename F> __device__ __forceinline__ void fused_unroll(F &&f)
{
    if constexpr (N > 0) {
        fused_unroll<N - 1>(f);
        f(fused_constant<N - 1>());
    }
}

/* Shared memory of heat_fused: the planes of levels 0 .. K-1, each with a
 * ring of V columns and one row around the tile (so no neighbour index is
 * clamped, and a thread's V points stay aligned for one vector access),
 * twice over where PAIRED. */
template <typename T, int K, int BX, int BY, int R, int V = 1> constexpr size_t fused_plane_bytes()
{
    return sizeof(T) * K * (size_t)(BY * R + 2) * (BX * V + 2 * V);
}
enum { FUSED_SHARED_LIMIT = 64 * 1024 }; /* shared memory a block may have on both vendors (AMD's LDS) */
/* Double-buffered planes where both copies fit a block: AMD's 64 KB, or on NVIDIA the half of an SM's
 * 228 KB that still lets two blocks share it (a second barrier a plane costs more than shared memory). */
#if defined(__CUDACC__) && !defined(__HIP_PLATFORM_AMD__)
enum { FUSED_PAIRED_LIMIT = 112 * 1024 };
#else
enum { FUSED_PAIRED_LIMIT = FUSED_SHARED_LIMIT };
#endif
template <typename T, int K, int BX, int BY, int R, int V = 1> constexpr bool fused_paired()
{
    return 2 * fused_plane_bytes<T, K, BX, BY, R, V>() <= FUSED_PAIRED_LIMIT;
}

/* A thread's V neighbouring points of a plane in shared memory, moved as one access. */
template <typename T, int V> struct alignas(V * sizeof(T)) fused_points {
    T at[V];
};

/* The halo columns on each side of a tile of V columns a thread: K rounded up to a multiple of V. */
__host__ __device__ constexpr int fused_halo_columns(int K, int V) { return (K + V - 1) / V * V; }

/* V points of a row, aligned, from the field as one access. */
template <typename T, int V> __device__ __forceinline__ void load_points(const T *at, T (&p)[V])
{
    const fused_points<T, V> row = *reinterpret_cast<const fused_points<T, V> *>(at);
#pragma unroll
    for (int v = 0; v < V; ++v) p[v] = row.at[v];
}

/* V points of a row, aligned, to the field as streaming stores. */
template <typename T, int V> __device__ __forceinline__ void store_points(const T (&p)[V], T *at)
{
    if constexpr (V == 1) nontemporal_store(p[0], at);
    else if constexpr (V == 2) nontemporal_store_wide(p[0], p[1], at);
    else if constexpr (V == 4 && sizeof(T) == 4) nontemporal_store_wide(p[0], p[1], p[2], p[3], at);
    else
#pragma unroll
        for (int v = 0; v < V; v += 2) nontemporal_store_wide(p[v], p[v + 1], at + v);
}

/* The same V points as the general path stores them: one vector store where the platform has one
 * (HEAT_WIDE_STORES), else a streaming store each (AMD would merge a mix of both into plain stores). */
template <typename T, int V> __device__ __forceinline__ void store_row_points(const T (&p)[V], T *at)
{
    if (HEAT_WIDE_STORES) store_points<T, V>(p, at);
    else
#pragma unroll
        for (int v = 0; v < V; ++v) nontemporal_store(p[v], at + v);
}

extern __shared__ double fused_shared_words[] __attribute__((aligned(16)));

/* K steps over output planes [z_begin + blockIdx.z * zchunk, + zchunk) of
 * [z_begin, z_end) (outputs K or more planes from a cut z face read no
 * ghost: they are swept while the ghosts travel), of a tile of BX V
 * columns by BY R rows (thread (x, y) holds the V columns V x, V x + 1, ...
 * of rows y, y + BY, ...), whose outer K columns and rows on each side are
 * recomputed halo. Every level is computed on the whole tile, though only
 * rows [l, TY - l) of level l are right and read: a branch a row and level
 * to skip the others costs more than the rows (a convergence barrier
 * each). TOGETHER: a thread's R rows are neighbours (rows R y .. R y + R -
 * 1, not y, y + BY, ...), so the y neighbours between them come from the
 * thread's own registers and only the outer two from shared memory. Planes go two at
 * a time, so that which register holds which plane is fixed at compile time
 * (no copies between them). PAIRED: the planes in shared memory are
 * double-buffered, written at plane t into the copy that plane t - 1 did not
 * write, so one barrier a plane suffices; otherwise two (all read, then all
 * written). V > 1: a point's x neighbours inside its thread come from the
 * thread's own registers, the others and the y neighbours from shared
 * memory as one access of V points a row (fewer shared-memory instructions
 * and less of a thread's fixed work a point). PF > 0: the plane PF beyond
 * the one loaded next is hinted into L2 (l2_prefetch, from lanes a cache
 * line apart), so that the register loads, one plane ahead
 * only, wait on L2 rather than DRAM. Kernels whose levels hold at most 6
 * points a thread (K R V) keep to 64 registers a thread, so that 1024
 * threads fit an SM (left to itself the compiler takes 64 with a spill or
 * 80, half the warps); those of more points take what they need.
 * INTERIOR: a
 * tile that touches no face and lies wholly in the field marches the
 * planes whose levels reach no z face on a path of its own, its loads and
 * stores by row pointers moved a plane at a time: none of the per-plane
 * tests of the general path (where a plane lies, which rows load, whether a
 * face's ghosts apply), the same arithmetic. FACE_MARCH: so does a tile
 * whose sides lie in the field or beyond faces whose ghosts are made (no
 * wrap, no cut), making those ghosts in every plane of its march (the
 * flags' registers: only where they fit without spilling). BLOCKS > 0: kept to the
 * registers that let BLOCKS blocks share an SM (float, K R V <= 6: 3 blocks
 * of 512 threads at 40 registers, 48 warps to cover the barrier and the
 * loads instead of 32). ALIGNED (V > 1, the host's promise that nx is a
 * multiple of V and no x face is cut between ranks): a thread's V columns
 * are one aligned vector of the field, or lie wholly beyond a face, so the
 * per-column state collapses to the first column's (registers for the
 * levels instead), only the first column can be beside the low x face and
 * only the last beside the high one, and tiles away from the faces take the
 * interior march with one vector load and store a row. */
template <typename T, int K, int BX, int BY, int R, int V, bool PAIRED, bool DEEP, int PF, bool TOGETHER, bool INTERIOR,
          int BLOCKS = 0, bool ALIGNED = false, bool FACE_MARCH = false>
__global__ void __launch_bounds__(BX *BY, BLOCKS > 0                             ? BLOCKS
                                          : K *R *V <= 6 && BX * BY < 1024 ? 1024 / (BX * BY)
                                                                            : 1)
    heat_fused(T *__restrict__ out, const T *__restrict__ in, stencil_shape s, stencil_coeffs<T> c, halo_coeffs<T> h,
               int zchunk, int z_begin, int z_end, deep_ghosts<T> d)
{
    /* KX: the halo columns on each side, K rounded up to whole threads, so that a thread's V points
     * start at a multiple of V and are one aligned vector in the field */
    constexpr int TX = BX * V, TY = BY * R, PX = TX + 2 * V, PLANE = (TY + 2) * PX, KX = fused_halo_columns(K, V);
    static_assert(TX > 2 * KX && TY > 2 * K, "a tile wider than its halo");
    static_assert(!INTERIOR || V == 1 || ALIGNED, "the interior march: one column a thread, or aligned vectors");
    static_assert(!ALIGNED || V > 1, "aligned vectors of several columns");
    typedef fused_points<T, V> points;
    T *const shared = reinterpret_cast<T *>(fused_shared_words);
    const int tx = threadIdx.x, ty = threadIdx.y;
    auto tile_row = [&](int r) { return TOGETHER ? R * ty + r : ty + BY * r; }; /* the tile's row of the thread's row r */
    const bool deep_x = DEEP && !ALIGNED && d.axis == 0, deep_z = DEEP && d.axis == 2;
    const bool wrap_x = (h.exchanged & 1u) && !deep_x, wrap_y = h.exchanged & 4u, wrap_z = (h.exchanged & 16u) && !deep_z;
    const int x0 = (int)blockIdx.x * (TX - 2 * KX) - KX, y0 = (int)blockIdx.y * (TY - 2 * K) - K;
    /* each of the thread's columns: where it lies, and whether a point of it is written or beside a face */
    const T *src[V];
    long sy[V], sz[V];
    int x_at[V];
    bool x_in[V], x_low[V], x_high[V], x_out[V];
#pragma unroll
    for (int v = 0; v < V; ++v) {
        const int gx = x0 + V * tx + v;
        if (ALIGNED && v > 0) { /* the first column's, moved by v (x0 and nx are multiples of V) */
            x_in[v] = x_in[0], x_at[v] = x_at[0] + v, src[v] = in, sy[v] = s.sy, sz[v] = s.sz;
            x_low[v] = false, x_high[v] = v == V - 1 && gx == s.nx - 1 && applies(h, 1);
            x_out[v] = x_out[0];
            continue;
        }
        x_in[v] = place_on_axis<false>(gx, s.nx, wrap_x, x_at[v]);
        /* a column beyond a cut x face: the neighbour's, from the packed ghosts (the field's own columns elsewhere) */
        const T *x_ghosts = deep_x ? (gx < 0 ? d.low : gx >= s.nx && gx < s.nx + K ? d.high : nullptr) : nullptr;
        if (x_ghosts) x_in[v] = true, x_at[v] = gx < 0 ? gx + K : gx - s.nx;
        src[v] = x_ghosts ? x_ghosts : in;
        sy[v] = x_ghosts ? (long)K : s.sy, sz[v] = x_ghosts ? (long)K * s.ny : s.sz;
        x_low[v] = gx == 0 && applies(h, 0), x_high[v] = gx == s.nx - 1 && applies(h, 1);
        x_out[v] = V * tx + v >= KX && V * tx + v < TX - KX && gx < s.nx;
    }
    /* the V points are one aligned vector of the field (not split by a wrap or ghosts, all inside, and
     * not moved off a multiple of V by a wrap of an axis whose length is not one) */
    bool vector = V > 1 && src[0] == in && x_at[0] % V == 0;
#pragma unroll
    for (int v = 0; v < V; ++v) vector = vector && src[v] == in && x_in[v] && x_at[v] == x_at[0] + v;
    if (ALIGNED) vector = x_in[0];
    bool vector_out = vector;
#pragma unroll
    for (int v = 0; v < V; ++v) vector_out = vector_out && x_out[v];
    if (ALIGNED) vector_out = x_in[0] && x_out[0];
    /* the tile reaches a face whose ghosts are boundary values: the same for every thread */
    const bool tile_faces = (x0 <= 0 && applies(h, 0)) || (x0 + TX > s.nx - 1 && applies(h, 1)) ||
                            (y0 <= 0 && applies(h, 2)) || (y0 + TY > s.ny - 1 && applies(h, 3));
    long column[R][V];
    bool loads[R][V], y_low[R], y_high[R], y_out[R];
#pragma unroll
    for (int r = 0; r < R; ++r) {
        const int ly = tile_row(r), gy = y0 + ly;
        int y_at;
        const bool y_in = place_on_axis<false>(gy, s.ny, wrap_y, y_at);
#pragma unroll
        for (int v = 0; v < V; ++v) {
            loads[r][v] = x_in[v] && y_in;
            column[r][v] = loads[r][v] ? x_at[v] + y_at * sy[v] : 0;
            if (ALIGNED) loads[r][v] = loads[r][0], column[r][v] = column[r][0] + v; /* beside the first */
        }
        y_low[r] = gy == 0 && applies(h, 2), y_high[r] = gy == s.ny - 1 && applies(h, 3);
        y_out[r] = ly >= K && ly < TY - K && gy < s.ny;
    }
    const int z0 = z_begin + (int)blockIdx.z * zchunk, z1 = z0 + zchunk < z_end ? z0 + zchunk : z_end;
    const bool z_low_face = applies(h, 4), z_high_face = applies(h, 5);

    /* With P = (t - z0 + K) & 1 at plane t: win[m][r][v][P], level m two planes behind its newest, and
     * win[m][r][v][1 - P] one plane behind; ahead[P], the level-0 plane t, and ahead[1 - P] the next, in flight */
    T win[K][R][V][2], fresh[K + 1][R][V], ahead[2][R][V];
#pragma unroll
    for (int m = 0; m < K; ++m)
#pragma unroll
        for (int r = 0; r < R; ++r)
#pragma unroll
            for (int v = 0; v < V; ++v) win[m][r][v][0] = win[m][r][v][1] = fresh[m + 1][r][v] = T(0);
    /* plane t from the field, or beyond a cut z face from the neighbour's planes */
    auto load_plane = [&](int t, T values[R][V]) {
        int z_at;
        if (vector && !(deep_z && (t < 0 || t >= s.nz)) && place_on_axis<true>(t, s.nz, wrap_z, z_at)) {
            const T *base = in + (long)z_at * s.sz;
#pragma unroll
            for (int r = 0; r < R; ++r) {
                points p = {};
                if (loads[r][0]) p = *reinterpret_cast<const points *>(base + column[r][0]);
#pragma unroll
                for (int v = 0; v < V; ++v) values[r][v] = p.at[v];
            }
            return;
        }
#pragma unroll
        for (int v = 0; v < V; ++v) {
            int z_at = 0;
            const T *base = src[v];
            bool z_in = true;
            if (deep_z && t < 0 && d.low) base = d.low + (long)(t + K) * s.sz;
            else if (deep_z && t >= s.nz && d.high) base = d.high + (long)(t - s.nz) * s.sz;
            else z_in = place_on_axis<true>(t, s.nz, wrap_z, z_at), base += (long)z_at * sz[v];
#pragma unroll
            for (int r = 0; r < R; ++r) values[r][v] = z_in && loads[r][v] ? base[column[r][v]] : T(0);
        }
    };
    /* Plane t into L2 where it is a plane of this block's chunk in the field (nothing beyond it), from
     * every LINE-th lane of a row and its last: lanes LINE apart are 128 bytes (a cache line) apart, so
     * together they touch every line of the row's span, whatever its alignment, at a test fixed for the
     * whole march (one a row; a test of each plane's address cost a tenth of a plane's instructions). */
    constexpr int LINE = 128 / (V * sizeof(T)) > 0 ? 128 / (V * sizeof(T)) : 1;
    bool hints[R];
#pragma unroll
    for (int r = 0; r < R; ++r) hints[r] = PF > 0 && loads[r][0] && src[0] == in && (tx % LINE == 0 || tx == BX - 1);
    auto hint_plane = [&](int t) {
        if (t >= z1 + K || t >= s.nz) return;
#pragma unroll
        for (int r = 0; r < R; ++r)
            if (hints[r]) l2_prefetch(in + column[r][0] + (long)t * s.sz);
    };
    /* the interior march's next load and store of the thread's row 0 (FACE_MARCH: of the plane), and each
     * row's from it: rows s.sy apart in a tile that lies in the field; FACE_MARCH, the row's own place where
     * it lies in the field, else the nearest in the field (what a tile beside a face whose ghosts are made
     * loads beyond the face only feeds points beyond it, which no point in the field reads, so any value of
     * the field will do, and nothing is read outside the field) */
    const T *march_in = in;
    T *march_out = out;
    long march_at[R];
#pragma unroll
    for (int r = 0; r < R; ++r) {
        const int gx = min(max(x0 + V * tx, 0), s.nx - V), gy = min(max(y0 + tile_row(r), 0), s.ny - 1);
        march_at[r] = FACE_MARCH ? gx + (long)gy * s.sy : (long)(tile_row(r) - tile_row(0)) * s.sy;
    }
    /* Plane t: every level one plane on (level K in fresh[K]); parity P as above, faces: FACES of fused_point;
     * march 1: the interior march, plane t + 1 loaded by pointer (it lies in the field); 2: the same beyond
     * the field's last plane (t + 1 >= nz), nothing loaded, since only the ghosts of the top z face (FACES)
     * read the planes beyond it. Levels above `levels` are left as they were (advance_levels: where nothing
     * reads them). */
    auto advance_levels = [&](int t, auto parity, auto faces, auto march, auto levels) {
        constexpr int P = decltype(parity)::value, LEVELS = decltype(levels)::value;
        constexpr bool F = decltype(faces)::value != 0, M = decltype(march)::value != 0;
        constexpr bool LOADS = decltype(march)::value != 2, XY = F && (!M || FACE_MARCH); /* faces beside x or y */
        const T *read = shared + (PAIRED ? (1 - P) * K * PLANE : 0);
#pragma unroll
        for (int r = 0; r < R; ++r)
#pragma unroll
            for (int v = 0; v < V; ++v) fresh[0][r][v] = ahead[P][r][v];
        if (M && LOADS) {
#pragma unroll
            for (int r = 0; r < R; ++r) load_points<T, V>(march_in + march_at[r], ahead[1 - P][r]);
            march_in += s.sz;
        } else if (!M && t + 1 < z1 + K) load_plane(t + 1, ahead[1 - P]); /* in flight while the levels are computed */
        if (PF > 0) hint_plane(t + 1 + PF);
#pragma unroll
        for (int l = 1; l <= LEVELS; ++l) {
            const int p = t - l; /* level l's plane */
            /* FACE_MARCH: the march starts at t > K (p > 0) and loads planes t + 1 < nz (p < nz - 1) with march 1,
             * which no z face's ghosts reach (fewer live flags for the faces beside x and y) */
            const bool z_low = F && !(FACE_MARCH && M) && p == 0 && z_low_face;
            const bool z_high = F && !(FACE_MARCH && decltype(march)::value == 1) && p == s.nz - 1 && z_high_face;
            const T *level = read + (l - 1) * PLANE;
#pragma unroll
            for (int r = 0; r < R; ++r) {
                const T *at = level + (tile_row(r) + 1) * PX + V * (tx + 1);
                /* y neighbours: the thread's own centres of its rows beside (as shared memory holds them), or shared memory */
                points south, north;
                if (TOGETHER && r > 0) {
#pragma unroll
                    for (int v = 0; v < V; ++v) south.at[v] = win[l - 1][r > 0 ? r - 1 : 0][v][1 - P];
                } else south = *reinterpret_cast<const points *>(at - PX);
                if (TOGETHER && r < R - 1) {
#pragma unroll
                    for (int v = 0; v < V; ++v) north.at[v] = win[l - 1][r < R - 1 ? r + 1 : 0][v][1 - P];
                } else north = *reinterpret_cast<const points *>(at + PX);
#pragma unroll
                for (int v = 0; v < V; ++v) {
                    /* x neighbours inside the thread are its own centres (the values shared memory holds) */
                    const T west = v > 0 ? win[l - 1][r][v > 0 ? v - 1 : 0][1 - P] : at[-1];
                    const T east = v < V - 1 ? win[l - 1][r][v < V - 1 ? v + 1 : 0][1 - P] : at[V];
                    fresh[l][r][v] = fused_point<T, F>(win[l - 1][r][v][P], south.at[v], west, win[l - 1][r][v][1 - P], east,
                                                       north.at[v], fresh[l - 1][r][v], XY && x_low[v],
                                                       XY && x_high[v], XY && y_low[r], XY && y_high[r], z_low, z_high,
                                                       c, h);
                }
            }
        }
        if (!PAIRED) __syncthreads(); /* every level's previous plane has been read */
        T *write = shared + (PAIRED ? P * K * PLANE : 0);
#pragma unroll
        for (int m = 0; m < K; ++m)
#pragma unroll
            for (int r = 0; r < R; ++r) {
                points newest;
#pragma unroll
                for (int v = 0; v < V; ++v) {
                    newest.at[v] = fresh[m][r][v];
                    win[m][r][v][P] = fresh[m][r][v]; /* the oldest plane gives way to the newest */
                }
                *reinterpret_cast<points *>(write + m * PLANE + (tile_row(r) + 1) * PX + V * (tx + 1)) = newest;
            }
        __syncthreads(); /* the new planes are published */
    };
    auto advance_plane = [&](int t, auto parity, auto faces, auto march) {
        advance_levels(t, parity, faces, march, fused_constant<K>());
    };
    /* planes whose levels reach a z face that is not exchanged take the ghosts' path too */
    auto faces_at = [&](int t) {
        return tile_faces || (z_low_face && t - K <= 0 && t - 1 >= 0) ||
               (z_high_face && t - K <= s.nz - 1 && t - 1 >= s.nz - 1);
    };
    /* one store after both paths: stores in each, the AMD compiler merges into plain (cached) ones */
    auto plane_step = [&](int t, auto parity) {
        if (faces_at(t)) advance_plane(t, parity, fused_constant<1>(), fused_constant<0>());
        else advance_plane(t, parity, fused_constant<0>(), fused_constant<0>());
        if (t - K < z0) return;
#pragma unroll
        for (int r = 0; r < R; ++r) {
            if (!y_out[r]) continue;
            T *at = out + column[r][0] + (long)(t - K) * s.sz;
            if (HEAT_WIDE_STORES && vector_out) store_points<T, V>(fresh[K][r], at);
            else
#pragma unroll
                for (int v = 0; v < V; ++v)
                    if (x_out[v]) nontemporal_store(fresh[K][r][v], out + column[r][v] + (long)(t - K) * s.sz);
        }
    };
    /* The interior march, in tiles beside no x or y face (FACE_MARCH: sides_march), from the first plane t
     * whose levels reach no low z face (t > K: fused_point's z_low is at t <= K; from z0 - K in every chunk
     * but the lowest), at an even distance from z0 - K (the parities stay where the general loop has them),
     * to the chunk's end: planes t + 1 < nz by pointer, then (a chunk at a top z face that is not
     * exchanged) the last planes with that face's ghosts and no loads. Chunks that reach an exchanged top face (periodic, or cut
     * between ranks) take the general loop throughout. Nothing follows the march, so none of the general
     * path's state lives through it. */
    if constexpr (!INTERIOR) {
        load_plane(z0 - K, ahead[0]);
        for (int t = z0 - K; t < z1 + K; t += 2) {
            plane_step(t, fused_constant<0>());
            if (t + 1 < z1 + K) plane_step(t + 1, fused_constant<1>());
        }
        return;
    }
    int march_begin = z1 + K;
    /* each side of the tile: inside the field, or beyond a face whose ghosts are made (not wrapped, not cut) */
    auto made = [&](int face) { return FACE_MARCH && applies(h, face); };
    const bool sides_march =
        (x0 > 0 || made(0)) && (x0 + TX < s.nx || made(1)) && (y0 > 0 || made(2)) && (y0 + TY < s.ny || made(3));
    if (sides_march && (z1 + K < s.nz || z_high_face)) {
        int b = max(z0 - K, K + 1);
        march_begin = min(b + ((b - (z0 - K)) & 1), z1 + K); /* z1 + K: none (the loop below runs to the end) */
    }
    int t = z0 - K;
    load_plane(t, ahead[0]);
    for (; t < march_begin; t += 2) {
        plane_step(t, fused_constant<0>());
        if (t + 1 < z1 + K) plane_step(t + 1, fused_constant<1>());
    }
    if (t >= z1 + K) return;
    const long first = FACE_MARCH ? 0 : column[0][0];
    march_in = in + first + (long)(t + 1) * s.sz;
    march_out = out + first + (long)(t - K) * s.sz;
    const bool x_stores = x_out[0];
    /* level K of plane t - K to the field (the chunk's first K planes store nothing); one store after
     * both parities' paths at the top face, since stores in each the AMD compiler merges into plain ones */
    auto march_store = [&](int plane) {
        const bool stores = x_stores && plane - K >= z0;
#pragma unroll
        for (int r = 0; r < R; ++r)
            if (stores && y_out[r]) store_row_points<T, V>(fresh[K][r], march_out + march_at[r]);
        march_out += s.sz;
    };
    const int loaded_end = min(z1 + K, s.nz - 1); /* planes t whose t + 1 lies in the field */
    /* the planes that load, in a tile beside an x or y face (FACES: those ghosts in every point) or not */
    auto march = [&](auto faces) {
        /* A march from the chunk's first loaded plane z0 - K: at t = z0 - K + j, level l's plane t - l lies
         * below z0 - K + l, where no output reads it, unless j >= 2 l, so the first 2 K planes compute levels
         * up to j / 2 only (K = 3: 12 of their 18 level-planes skipped, 6% of a 64-plane chunk's) */
        if (t == z0 - K && z0 + K < loaded_end)
            fused_unroll<2 * K>([&](auto j) {
                constexpr int J = decltype(j)::value;
                advance_levels(t, fused_constant<J & 1>(), faces, fused_constant<1>(), fused_constant<J / 2>());
                march_store(t++);
            });
        for (; t + 1 < loaded_end; t += 2) {
            advance_plane(t, fused_constant<0>(), faces, fused_constant<1>());
            march_store(t);
            advance_plane(t + 1, fused_constant<1>(), faces, fused_constant<1>());
            march_store(t + 1);
        }
        if (t < loaded_end) {
            advance_plane(t, fused_constant<0>(), faces, fused_constant<1>());
            march_store(t++);
        }
    };
    if (FACE_MARCH && tile_faces) march(fused_constant<1>());
    else march(fused_constant<0>());
    /* then, at a top z face that is not exchanged, the planes that load nothing, once for both marches
     * (the AMD compiler would not inline two copies of them) */
    for (; t < z1 + K; ++t) {
        if ((t - (z0 - K)) & 1) advance_plane(t, fused_constant<1>(), fused_constant<1>(), fused_constant<2>());
        else advance_plane(t, fused_constant<0>(), fused_constant<1>(), fused_constant<2>());
        march_store(t);
    }
}
