/*
 * What an NVIDIA GPU's memory gives simple streams and the single-sweep
 * stencil kernels, each against cudaMemcpy in the same process (probe for
 * issue #37; not part of the build).
 *
 *   nvcc -std=c++17 -O3 -fmad=false -arch=sm_90 -Xcompiler -fopenmp -I kernels/hip tools/probes/sweep_probe.cu -o sweep_probe -lgomp
 *   sweep_probe stream             read+write streams: bytes a thread, loads in flight, occupancy, cache policies
 *   sweep_probe stencil N|NXxNYxNZ float|double [reps]   heat_zwindowg against heat_zwideg, bits first
 *   sweep_probe march N|NXxNYxNZ double|float [reps [NAME]]  the production marches stepping as a run does (each
 *                                                         launch reads the one before's output) at 8 down to 4
 *                                                         blocks an SM, block shapes and z chunks
 *
 * -fmad=false as the project's build: the kernels' bits are compared.
 */
#include <algorithm>
#include <utility>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "heat_kernels.hip"
#include "zahead_kernels.hip"
#include "zwideg_kernels.hip"

#define CHECK(call)                                                                                          \
    do {                                                                                                     \
        cudaError_t e_ = (call);                                                                             \
        if (e_ != cudaSuccess) {                                                                             \
            fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_));            \
            exit(1);                                                                                         \
        }                                                                                                    \
    } while (0)

static cudaEvent_t ev0, ev1;

/* Median ms of reps runs of f after one warm-up. */
template <typename F> static double median_ms(int reps, F f)
{
    std::vector<float> t(reps);
    f();
    CHECK(cudaGetLastError());
    for (int r = 0; r < reps; ++r) {
        CHECK(cudaEventRecord(ev0));
        f();
        CHECK(cudaEventRecord(ev1));
        CHECK(cudaEventSynchronize(ev1));
        CHECK(cudaEventElapsedTime(&t[r], ev0, ev1));
    }
    CHECK(cudaGetLastError());
    std::sort(t.begin(), t.end());
    return t[reps / 2];
}

/* ---- streams ---------------------------------------------------------------------------------- */

/* load policies: 0 ld.global, 1 ld.global.cs, 2 ld.global.nc, 3 ld.global.L1::no_allocate,
 * 4 ld.global.L2::256B, 5 ld.global.L1::no_allocate.L2::256B, 6 ld.global.L1::evict_last */
#define PTX_LOAD(QUALIFIERS)                                                                                 \
    do {                                                                                                     \
        if constexpr (sizeof(V) == 16)                                                                       \
            asm volatile("ld.global" QUALIFIERS ".v4.f32 {%0,%1,%2,%3}, [%4];"                               \
                         : "=f"(w[0]), "=f"(w[1]), "=f"(w[2]), "=f"(w[3]) : "l"(a));                         \
        else if constexpr (sizeof(V) == 8)                                                                   \
            asm volatile("ld.global" QUALIFIERS ".v2.f32 {%0,%1}, [%2];" : "=f"(w[0]), "=f"(w[1]) : "l"(a)); \
        else asm volatile("ld.global" QUALIFIERS ".f32 %0, [%1];" : "=f"(w[0]) : "l"(a));                   \
    } while (0)

template <int P, typename V> __device__ __forceinline__ V load_any(const V *a)
{
    if constexpr (P == 0) return *a;
    else if constexpr (P == 1) return __ldcs(a);
    else if constexpr (P == 2) return __ldg(a);
    else {
        float w[4];
        if constexpr (P == 3) PTX_LOAD(".L1::no_allocate");
        else if constexpr (P == 4) PTX_LOAD(".L2::256B");
        else if constexpr (P == 5) PTX_LOAD(".L1::no_allocate.L2::256B");
        else PTX_LOAD(".L1::evict_last");
        V v;
        memcpy(&v, w, sizeof v);
        return v;
    }
}

/* store policies: 0 st.global, 1 st.global.cs, 2 st.global with an L2 evict_first policy */
template <int P, typename V> __device__ __forceinline__ void store_any(V *a, V v)
{
    if constexpr (P == 0) *a = v;
    else if constexpr (P == 1) __stcs(a, v);
    else {
        unsigned long long policy;
        asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(policy));
        if constexpr (sizeof(V) == 16) {
            const float4 w = *reinterpret_cast<const float4 *>(&v);
            asm volatile("st.global.L2::cache_hint.v4.f32 [%0], {%1,%2,%3,%4}, %5;" ::"l"(a), "f"(w.x), "f"(w.y), "f"(w.z),
                         "f"(w.w), "l"(policy));
        } else if constexpr (sizeof(V) == 8) {
            const float2 w = *reinterpret_cast<const float2 *>(&v);
            asm volatile("st.global.L2::cache_hint.v2.f32 [%0], {%1,%2}, %3;" ::"l"(a), "f"(w.x), "f"(w.y), "l"(policy));
        } else {
            const float w = *reinterpret_cast<const float *>(&v);
            asm volatile("st.global.L2::cache_hint.f32 [%0], %1, %2;" ::"l"(a), "f"(w), "l"(policy));
        }
    }
}

/* Each thread copies U vectors of type V a turn (U loads issued before the first store), turns
 * grid-strided: a march of `turns` per thread when the grid is the resident blocks. */
template <typename V, int U, int LP, int SP>
__global__ void __launch_bounds__(256) stream_copy(V *__restrict__ out, const V *__restrict__ in, long n)
{
    extern __shared__ char occupancy_limiter[];
    (void)occupancy_limiter;
    const long span = (long)gridDim.x * blockDim.x * U;
    for (long base = (long)blockIdx.x * blockDim.x * U + threadIdx.x; base < n; base += span) {
        V v[U];
#pragma unroll
        for (int u = 0; u < U; ++u) v[u] = load_any<LP>(in + base + u * (long)blockDim.x);
#pragma unroll
        for (int u = 0; u < U; ++u) store_any<SP>(out + base + u * (long)blockDim.x, v[u]);
    }
}

/* Read-only: the sum of U vectors a turn, one word a thread written at the end. */
template <typename V, int U>
__global__ void __launch_bounds__(256) stream_read(float *__restrict__ out, const V *__restrict__ in, long n)
{
    const long span = (long)gridDim.x * blockDim.x * U;
    float sum = 0.0f;
    for (long base = (long)blockIdx.x * blockDim.x * U + threadIdx.x; base < n; base += span) {
#pragma unroll
        for (int u = 0; u < U; ++u) {
            const V v = in[base + u * (long)blockDim.x];
            const float *w = reinterpret_cast<const float *>(&v);
#pragma unroll
            for (int e = 0; e < (int)(sizeof(V) / 4); ++e) sum += w[e];
        }
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = sum;
}

/* Write-only streaming stores of a value. */
template <typename V, int SP>
__global__ void __launch_bounds__(256) stream_write(V *__restrict__ out, long n, V value)
{
    for (long at = (long)blockIdx.x * blockDim.x + threadIdx.x; at < n; at += (long)gridDim.x * blockDim.x)
        store_any<SP>(out + at, value);
}

static int sm_count;

/* Blocks an SM of kernel k at 256 threads and `smem` dynamic shared bytes. */
static int resident(const void *k, size_t smem)
{
    int per = 0;
    CHECK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, 227 * 1024));
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per, k, 256, smem));
    return per;
}

struct stream_bufs {
    char *in, *out;
    size_t bytes;
    double copy_gbs;
};

/* One row: kernel copy of V with U in flight at `blocks_per_sm` (0: one-shot grid, every vector a
 * thread), policies LP / SP. */
template <typename V, int U, int LP, int SP>
static void stream_row(const stream_bufs &b, int blocks_per_sm, const char *label)
{
    auto k = stream_copy<V, U, LP, SP>;
    const long n = (long)(b.bytes / sizeof(V));
    size_t smem = 0;
    int grid;
    if (blocks_per_sm > 0) {
        smem = blocks_per_sm >= 8 ? 0 : std::min((size_t)(228 * 1024 / blocks_per_sm - 1024 - 64), (size_t)227 * 1024);
        const int per = resident((const void *)k, smem);
        grid = per * sm_count;
        blocks_per_sm = per;
    } else grid = (int)((n + 256L * U - 1) / (256L * U));
    const double ms = median_ms(15, [&] {
        k<<<grid, 256, smem>>>(reinterpret_cast<V *>(b.out), reinterpret_cast<const V *>(b.in), n);
    });
    const double gbs = 2.0 * b.bytes / (ms * 1e-3) / 1e9;
    printf("stream %-34s bytes %2d U %d blocks/SM %d load %d store %d  %8.4f ms %8.1f GB/s %6.1f%% of copy\n", label,
           (int)sizeof(V), U, blocks_per_sm, LP, SP, ms, gbs, 100.0 * gbs / b.copy_gbs);
}

template <typename V, int U> static void stream_read_row(const stream_bufs &b)
{
    const long n = (long)(b.bytes / sizeof(V));
    const int per = resident((const void *)stream_read<V, U>, 0);
    const int grid = per * sm_count;
    const double ms = median_ms(15, [&] {
        stream_read<V, U><<<grid, 256>>>(reinterpret_cast<float *>(b.out), reinterpret_cast<const V *>(b.in), n);
    });
    printf("stream read-only            bytes %2d U %d  %8.4f ms %8.1f GB/s read (copy's read+write %.1f)\n", (int)sizeof(V),
           U, ms, b.bytes / (ms * 1e-3) / 1e9, b.copy_gbs);
}

template <typename V, int SP> static void stream_write_row(const stream_bufs &b)
{
    const long n = (long)(b.bytes / sizeof(V));
    const int grid = resident((const void *)stream_write<V, SP>, 0) * sm_count;
    V value;
    memset(&value, 0x3f, sizeof value);
    const double ms = median_ms(15, [&] { stream_write<V, SP><<<grid, 256>>>(reinterpret_cast<V *>(b.out), n, value); });
    printf("stream write-only           bytes %2d store %d  %8.4f ms %8.1f GB/s written\n", (int)sizeof(V), SP, ms,
           b.bytes / (ms * 1e-3) / 1e9);
}

static void run_streams()
{
    stream_bufs b;
    b.bytes = (size_t)1 << 30;
    CHECK(cudaMalloc(&b.in, b.bytes));
    CHECK(cudaMalloc(&b.out, b.bytes));
    {
        std::vector<float> h(b.bytes / 4);
        for (size_t e = 0; e < h.size(); ++e) h[e] = 1.0f + (float)(e % 1013) * 1e-3f;
        CHECK(cudaMemcpy(b.in, h.data(), b.bytes, cudaMemcpyHostToDevice));
    }
    auto copy = [&] { return median_ms(15, [&] { CHECK(cudaMemcpy(b.out, b.in, b.bytes, cudaMemcpyDeviceToDevice)); }); };
    double ms = copy();
    b.copy_gbs = 2.0 * b.bytes / (ms * 1e-3) / 1e9;
    printf("copy (cudaMemcpy, 1 GiB): %.4f ms, %.1f GB/s read+write\n", ms, b.copy_gbs);
    /* bytes a thread x loads in flight, full occupancy, march (grid = resident blocks) */
    stream_row<float, 1, 0, 1>(b, 8, "4B");
    stream_row<float, 2, 0, 1>(b, 8, "4B");
    stream_row<float, 4, 0, 1>(b, 8, "4B");
    stream_row<float, 8, 0, 1>(b, 8, "4B");
    stream_row<float2, 1, 0, 1>(b, 8, "8B");
    stream_row<float2, 2, 0, 1>(b, 8, "8B");
    stream_row<float2, 4, 0, 1>(b, 8, "8B");
    stream_row<float4, 1, 0, 1>(b, 8, "16B");
    stream_row<float4, 2, 0, 1>(b, 8, "16B");
    stream_row<float4, 4, 0, 1>(b, 8, "16B");
    /* one-shot grids (every vector its own thread, as the copy engine's kernels) */
    stream_row<float, 1, 0, 1>(b, 0, "4B one-shot");
    stream_row<float2, 1, 0, 1>(b, 0, "8B one-shot");
    stream_row<float4, 1, 0, 1>(b, 0, "16B one-shot");
    stream_row<float4, 2, 0, 1>(b, 0, "16B one-shot");
    /* occupancy: blocks of 256 an SM */
    for (int bps : {1, 2, 3, 4, 6}) {
        stream_row<float, 2, 0, 1>(b, bps, "4B occupancy");
        stream_row<float2, 2, 0, 1>(b, bps, "8B occupancy");
        stream_row<float4, 2, 0, 1>(b, bps, "16B occupancy");
    }
    /* store policies */
    stream_row<float, 2, 0, 0>(b, 8, "4B plain store");
    stream_row<float, 2, 0, 2>(b, 8, "4B L2 evict_first store");
    stream_row<float2, 2, 0, 0>(b, 8, "8B plain store");
    stream_row<float2, 2, 0, 2>(b, 8, "8B L2 evict_first store");
    stream_row<float4, 2, 0, 0>(b, 8, "16B plain store");
    stream_row<float4, 2, 0, 2>(b, 8, "16B L2 evict_first store");
    /* load policies */
    stream_row<float, 2, 1, 1>(b, 8, "4B load .cs");
    stream_row<float, 2, 2, 1>(b, 8, "4B load .nc");
    stream_row<float, 2, 3, 1>(b, 8, "4B load L1::no_allocate");
    stream_row<float, 2, 4, 1>(b, 8, "4B load L2::256B");
    stream_row<float, 2, 5, 1>(b, 8, "4B load no_allocate+256B");
    stream_row<float, 2, 6, 1>(b, 8, "4B load L1::evict_last");
    stream_row<float2, 2, 3, 1>(b, 8, "8B load L1::no_allocate");
    stream_row<float2, 2, 4, 1>(b, 8, "8B load L2::256B");
    stream_row<float4, 2, 1, 1>(b, 8, "16B load .cs");
    stream_row<float4, 2, 2, 1>(b, 8, "16B load .nc");
    stream_row<float4, 2, 3, 1>(b, 8, "16B load L1::no_allocate");
    stream_row<float4, 2, 4, 1>(b, 8, "16B load L2::256B");
    stream_row<float4, 2, 5, 1>(b, 8, "16B load no_allocate+256B");
    /* read-only and write-only */
    stream_read_row<float, 2>(b);
    stream_read_row<float4, 2>(b);
    stream_write_row<float4, 1>(b);
    stream_write_row<float4, 0>(b);
    ms = copy();
    printf("copy again: %.4f ms, %.1f GB/s\n", ms, 2.0 * b.bytes / (ms * 1e-3) / 1e9);
    CHECK(cudaFree(b.in));
    CHECK(cudaFree(b.out));
}

/* ---- the stencil -------------------------------------------------------------------------------- */

static long round_up(long v, long a) { return (v + a - 1) / a * a; }

/* heat_layout_make_ghost (solver/problem.c) with the HIP backend's 256-byte rows and 16-row y padding. */
struct layout {
    long sy, sz, origin, total;
};
static layout layout_for(const int n[3], size_t elem)
{
    const long align = 256 / (long)elem;
    layout l;
    l.sy = round_up(n[0] + 2L, align);
    l.sz = l.sy * (round_up(n[1], 16) + 2L);
    l.origin = round_up(1, align) - 1;
    l.total = round_up(l.origin + l.sz * (n[2] + 2L), align);
    return l;
}

/* order_for (backend_hip.hip): the march order with the fewest chunk faces read twice. */
static march_order order_for(dim3 grid, long slots)
{
    const long columns = (long)grid.x * grid.y, fewest = (columns + slots - 1) / slots;
    march_order o = {(int)columns, 1};
    double least = 1e300;
    for (long groups = fewest; groups <= columns && groups < fewest + 8; ++groups) {
        const long group = (columns + groups - 1) / groups;
        for (long p = 1; p <= (long)grid.z && group * p <= slots; ++p) {
            if (grid.z % p != 0) continue;
            const double twice = (double)(p - 1) / grid.z + 1.0 - (double)(group * p) / slots;
            if (twice < least - 1e-9) least = twice, o = {(int)group, (int)p};
        }
    }
    return o;
}

template <typename T> struct field_set {
    int n[3];
    layout l;
    T *u, *ref, *out;
    stencil_shape s;
    stencil_coeffs<T> c;
    halo_coeffs<T> h;
    double copy_gbs, bytes;
};

typedef void (*zkernel_t)(void);

/* Launch a marching kernel over the field with block bx x by, tile M x W, z chunk. */
template <typename T, typename K>
static void launch_march(K kernel, const field_set<T> &F, T *out, int bx, int by, int W, int M, int zchunk)
{
    dim3 block(bx, by, 1);
    const int tx = (F.n[0] + W - 1) / W;
    dim3 grid((tx + bx - 1) / bx, (F.n[1] + by * M - 1) / (by * M), (F.n[2] + zchunk - 1) / zchunk);
    int per = 0;
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per, kernel, bx * by, 0));
    const march_order o = order_for(grid, (long)per * sm_count);
    const long first = F.l.origin + 1 + F.l.sy + F.l.sz;
    kernel<<<grid, block>>>(out + first, F.u + first, F.s, F.c, F.h, zchunk, o);
}

template <typename T> static bool same_bits(const field_set<T> &F)
{
    std::vector<T> a(F.l.total), b(F.l.total);
    CHECK(cudaMemcpy(a.data(), F.ref, F.l.total * sizeof(T), cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(b.data(), F.out, F.l.total * sizeof(T), cudaMemcpyDeviceToHost));
    return memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

template <typename T, typename K>
static void stencil_row(field_set<T> &F, const char *name, K kernel, int bx, int by, int W, int M, int zchunk, int reps,
                        bool check)
{
    int per = 0, regs = 0;
    cudaFuncAttributes attr;
    CHECK(cudaFuncGetAttributes(&attr, kernel));
    regs = attr.numRegs;
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per, kernel, bx * by, 0));
    const char *bits = "";
    if (check) {
        CHECK(cudaMemset(F.out, 0xff, F.l.total * sizeof(T)));
        launch_march<T>(kernel, F, F.out, bx, by, W, M, zchunk);
        CHECK(cudaDeviceSynchronize());
        bits = same_bits(F) ? "bits=ref" : "BITS DIFFER";
    }
    const double ms = median_ms(reps, [&] { launch_march<T>(kernel, F, F.out, bx, by, W, M, zchunk); });
    const double gbs = F.bytes / (ms * 1e-3) / 1e9;
    printf("stencil %-7s %-22s %3dx%d z%-3d regs %3d blocks/SM %2d %8.4f ms %8.1f GB/s %6.1f%% of copy %7.2f GLUP/s %s\n",
           sizeof(T) == 4 ? "float" : "double", name, bx, by, zchunk, regs, per, ms, gbs, 100.0 * gbs / F.copy_gbs,
           (double)F.n[0] * F.n[1] * F.n[2] / (ms * 1e-3) / 1e9, bits);
    fflush(stdout);
}

/* The probe's field: n points, the stencil of a unit box at dt = 0.45 of the stable one, and every face
 * type once (x low Dirichlet 0.3, x high Neumann, y low Neumann, y high Dirichlet 1, z low Dirichlet 0.5,
 * z high Neumann); u, ref and out allocated. */
template <typename T> static void field_set_create(field_set<T> &F, const int n[3])
{
    memcpy(F.n, n, sizeof F.n);
    F.l = layout_for(n, sizeof(T));
    F.s = {n[0], n[1], n[2], F.l.sy, F.l.sz};
    const double hx = (double)n[0] * n[0], hy = (double)n[1] * n[1], hz = (double)n[2] * n[2];
    F.c = {(T)hx, (T)hy, (T)hz, (T)(-2.0 * (hx + hy + hz)), (T)(0.45 / (hx + hy + hz))};
    const double shift[6] = {0.6, 0.0, 0.0, 2.0, 1.0, 0.0}, scale[6] = {-1, 1, 1, -1, -1, 1};
    for (int f = 0; f < 6; ++f) F.h.shift[f] = (T)shift[f], F.h.scale[f] = (T)scale[f];
    F.h.exchanged = 0;
    const size_t bytes = F.l.total * sizeof(T);
    CHECK(cudaMalloc(&F.u, bytes));
    CHECK(cudaMalloc(&F.ref, bytes));
    CHECK(cudaMalloc(&F.out, bytes));
}

/* A smooth field with a little noise in its last bits: every kernel's rounding shows in a bit comparison. */
template <typename T> static void fill_smooth_noisy(field_set<T> &F)
{
    std::vector<T> h(F.l.total);
#pragma omp parallel for
    for (long e = 0; e < F.l.total; ++e) {
        const long k = e / F.l.sz, j = e % F.l.sz / F.l.sy, i = e % F.l.sy;
        h[e] = (T)(1.0 + 0.5 * sin(0.013 * i + 0.3) * cos(0.021 * j) + 0.25 * sin(0.017 * k + 0.1 * i) +
                   1e-3 * (double)((e * 2654435761u) % 1000) / 1000.0);
    }
    CHECK(cudaMemcpy(F.u, h.data(), F.l.total * sizeof(T), cudaMemcpyHostToDevice));
}

template <typename T> static void run_stencil(const int n[3], int reps)
{
    field_set<T> F;
    field_set_create(F, n);
    const size_t bytes = F.l.total * sizeof(T);
    fill_smooth_noisy(F);
    /* the bench's bytes: the halo-included array but its 8 corners and 12 edges, plus the owned points */
    const double X = n[0] + 2.0, Y = n[1] + 2.0, Z = n[2] + 2.0;
    F.bytes = sizeof(T) * (X * Y * Z - 8.0 - 4.0 * (n[0] + n[1] + n[2]) + (double)n[0] * n[1] * n[2]);
    auto copy = [&] { return median_ms(reps, [&] { CHECK(cudaMemcpy(F.out, F.u, bytes, cudaMemcpyDeviceToDevice)); }); };
    double ms = copy();
    F.copy_gbs = 2.0 * bytes / (ms * 1e-3) / 1e9;
    printf("stencil %s %dx%dx%d: copy %.4f ms %.1f GB/s\n", sizeof(T) == 4 ? "float" : "double", n[0], n[1], n[2], ms, F.copy_gbs);
    /* the reference: heat_zwindowg<M = 2> at the bench's choice */
    auto ref = heat_zwindow<T, 2, GHOSTS_MADE, true>;
    CHECK(cudaMemset(F.ref, 0xff, bytes));
    launch_march<T>(ref, F, F.ref, sizeof(T) == 8 ? 64 : 128, sizeof(T) == 8 ? 4 : 2, 1, 2, sizeof(T) == 8 ? 8 : 32);
    CHECK(cudaDeviceSynchronize());
    const bool big = n[0] > 600;
    const bool every = n[0] * (long)n[1] * n[2] < 1000000; /* small: check the bits of every row */
    const std::vector<int> zs = big ? std::vector<int>{8, 16, 32} : std::vector<int>{4, 8, 16, 32, 64};
    const std::vector<std::pair<int, int>> shapes = {{256, 1}, {128, 2}, {64, 4}, {32, 8}};
    for (int z : zs)
        for (auto &b : shapes) stencil_row<T>(F, "heat_zwindowg m=2", ref, b.first, b.second, 1, 2, z, reps, every || z == 16);
    const std::vector<std::pair<int, int>> wshapes =
        big ? std::vector<std::pair<int, int>>{{32, 8}, {64, 4}, {128, 2}}
            : std::vector<std::pair<int, int>>{{32, 8}, {64, 4}, {128, 2}, {32, 4}, {256, 1}};
    auto sweep_w = [&](const char *name, auto kernel, int W, int M) {
        for (int z : zs)
            for (auto &b : wshapes)
                stencil_row<T>(F, name, kernel, b.first, b.second, W, M, z, reps, every || (z == 16 && b.first == 64));
    };
    if constexpr (sizeof(T) == 4) {
        sweep_w("zwideg W4 M1 b8", heat_zwideg<T, 4, 1, true, 8>, 4, 1);
        sweep_w("zwideg W4 M2", heat_zwideg<T, 4, 2, true>, 4, 2);
        if (!big) sweep_w("zwideg W4 M1", heat_zwideg<T, 4, 1, true>, 4, 1);
    } else {
        sweep_w("zwideg W1 M2 b8", heat_zwideg<T, 1, 2, true, 8>, 1, 2);
        sweep_w("zwideg W2 M2", heat_zwideg<T, 2, 2, true>, 2, 2);
        sweep_w("zwideg W2 M1 b8", heat_zwideg<T, 2, 1, true, 8>, 2, 1);
        if (!big) sweep_w("zwideg W2 M1", heat_zwideg<T, 2, 1, true>, 2, 1);
        if (!big) sweep_w("zwideg W1 M4", heat_zwideg<T, 1, 4, true>, 1, 4);
    }
    ms = copy();
    printf("stencil copy again: %.4f ms %.1f GB/s\n", ms, 2.0 * bytes / (ms * 1e-3) / 1e9);
    CHECK(cudaFree(F.u));
    CHECK(cudaFree(F.ref));
    CHECK(cudaFree(F.out));
}

/* ---- a step that starts where the one before ended ------------------------------------------- */

/* heat_zwideg<T, W, 1> with DOWN: the blocks take march_order o's order from its end and march their
 * chunk from its top plane down, the mirror in time of the upward march. Steps taken upward and downward
 * in turn begin on the planes the previous step wrote last, which L2 may still hold. The same points and
 * expression: heat_zwideg's bits. */
template <typename T, int W, int BLOCKS_PER_SM, bool DOWN>
__global__ void __launch_bounds__(HEAT_LAUNCH_BOUND, BLOCKS_PER_SM)
    zwideg_turning(T *__restrict__ f, const T *__restrict__ u, stencil_shape s, stencil_coeffs<T> c, halo_coeffs<T> h,
                   int zchunk, march_order o)
{
    using V = row_values<T, W>;
    int bx, by, bz;
    {
        const int columns = (int)(gridDim.x * gridDim.y), chunks = (int)gridDim.z;
        long index = blockIdx.x + (long)gridDim.x * (blockIdx.y + (long)gridDim.y * blockIdx.z);
        if (DOWN) index = (long)columns * chunks - 1 - index;
        const long span = (long)o.group * chunks;
        const int g = (int)(index / span), first = g * o.group;
        const int width = min(o.group, columns - first);
        const long r = index - g * span;
        const int column = first + (int)(r % width), step = (int)(r / width);
        bz = (step % o.streams) * (chunks / o.streams) + step / o.streams;
        bx = column % (int)gridDim.x, by = column / (int)gridDim.x;
    }
    const int i = W * (int)(threadIdx.x + bx * blockDim.x);
    const int j = (int)(threadIdx.y + by * blockDim.y);
    const int k0 = bz * zchunk, k1 = k0 + zchunk < s.nz ? k0 + zchunk : s.nz;
    if (i >= s.nx || j >= s.ny) return;
    const int valid = s.nx - i < W ? s.nx - i : W, last = s.nx - 1 - i;
    const int kfirst = DOWN ? k1 - 1 : k0;
    const long start = i + (long)j * s.sy + (long)kfirst * s.sz;
    const long dz = DOWN ? -s.sz : s.sz;
    const T *p = u + start;
    T *q = f + start;
    auto row = [&](const T *at) { return *reinterpret_cast<const V *>(at); };
    const bool made_south = j == 0 && applies(h, 2), made_north = j == s.ny - 1 && applies(h, 3);
    const bool made_west = i == 0 && applies(h, 0), made_east = last == W - 1 && applies(h, 1);
    const int end_face = DOWN ? 4 : 5, end_plane = DOWN ? 0 : s.nz - 1, start_plane = DOWN ? s.nz - 1 : 0;
    V behind, here = row(p), ahead;
    behind = kfirst == start_plane && applies(h, 9 - end_face) ? made_ghosts<T, W>(h, 9 - end_face, here) : row(p - dz);
    for (int n = k1 - k0, k = kfirst; n > 0; --n, k += DOWN ? -1 : 1, p += dz, q += dz) {
        const V south = made_south ? made_ghosts<T, W>(h, 2, here) : row(p - s.sy);
        const T west = made_west ? made_ghost(h, 0, here.v[0]) : p[-1];
        const T east = made_east ? made_ghost(h, 1, here.v[W - 1]) : p[W];
        const V north = made_north ? made_ghosts<T, W>(h, 3, here) : row(p + s.sy);
        ahead = k == end_plane && applies(h, end_face) ? made_ghosts<T, W>(h, end_face, here) : row(p + dz);
        const V v = DOWN ? zwideg_row<T, W>(ahead, south, here, north, behind, west, east, last, c, h)
                         : zwideg_row<T, W>(behind, south, here, north, ahead, west, east, last, c, h);
        store_row<T, W>(v, q, valid);
        behind = here, here = ahead;
    }
}

/* ---- the production marches stepping as a run does ----------------------------------------- */

/* Dynamic shared bytes a block that leave `blocks` 256-thread blocks an SM within a shared-memory
 * carve-out of `carve` KB (64: L1 keeps 192 KB; 228: 28 KB); blocks 0: none asked, the whole L1. */
static size_t limiter_bytes(int blocks, int carve) { return blocks > 0 ? (size_t)(carve * 1024 / blocks - 1024 - 64) : 0; }

struct march_row {
    std::string label;
    double ms, pct;
};

/* Median of `reps` launches, each reading the previous launch's output (a and b in turn, as a run
 * steps), at `blocks` blocks an SM (limiter_bytes); the bits of one launch from F.u against F.ref first. */
template <typename T, typename K>
static void march_row_of(field_set<T> &F, T *a, T *b, std::vector<march_row> &rows, const char *name, K kernel, int bx,
                         int by, int W, int M, int zchunk, int blocks, int carve, int reps, bool check, K odd = nullptr)
{
    const size_t smem = limiter_bytes(blocks, carve);
    CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, 227 * 1024));
    CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                               !smem ? 0 : carve == 64 ? 28 : 100));
    int per = 0;
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per, kernel, bx * by, smem));
    if (blocks > 0 && per != blocks) return; /* the registers allow fewer: the row of the kernel's own limit */
    dim3 block(bx, by, 1);
    const int tx = (F.n[0] + W - 1) / W;
    dim3 grid((tx + bx - 1) / bx, (F.n[1] + by * M - 1) / (by * M), (F.n[2] + zchunk - 1) / zchunk);
    const march_order o = order_for(grid, (long)per * sm_count);
    const long first = F.l.origin + 1 + F.l.sy + F.l.sz;
    if (odd) {
        CHECK(cudaFuncSetAttribute(odd, cudaFuncAttributeMaxDynamicSharedMemorySize, 227 * 1024));
        CHECK(cudaFuncSetAttribute(odd, cudaFuncAttributePreferredSharedMemoryCarveout, !smem ? 0 : carve == 64 ? 28 : 100));
    }
    K now = kernel;
    auto go = [&](T *out, const T *in) { now<<<grid, block, smem>>>(out + first, in + first, F.s, F.c, F.h, zchunk, o); };
    const char *bits = "";
    if (check) {
        CHECK(cudaMemset(F.out, 0xff, F.l.total * sizeof(T)));
        go(F.out, F.u);
        CHECK(cudaDeviceSynchronize());
        bits = same_bits(F) ? "bits=ref" : "BITS DIFFER";
        if (odd) {
            now = odd;
            CHECK(cudaMemset(F.out, 0xff, F.l.total * sizeof(T)));
            go(F.out, F.u);
            CHECK(cudaDeviceSynchronize());
            if (!same_bits(F)) bits = "BITS DIFFER (odd)";
            now = kernel;
        }
    }
    CHECK(cudaMemcpy(a, F.u, F.l.total * sizeof(T), cudaMemcpyDeviceToDevice));
    int turn = 0;
    const double ms = median_ms(reps, [&] {
        now = odd && turn % 2 ? odd : kernel;
        if (turn++ % 2) go(a, b);
        else go(b, a);
    });
    cudaFuncAttributes attr;
    CHECK(cudaFuncGetAttributes(&attr, kernel));
    const double pct = 100.0 * F.bytes / (ms * 1e-3) / 1e9 / F.copy_gbs;
    const long blocks_all = (long)grid.x * grid.y * grid.z, slots = (long)per * sm_count;
    char label[200];
    snprintf(label, sizeof label, "%-18s %3dx%d z%-3d regs %3d blocks/SM %d c%-3d waves %6.2f", name, bx, by, zchunk,
             attr.numRegs, per, smem ? carve : 0, (double)blocks_all / slots);
    printf("march %s %8.4f ms %6.2f%% of copy %s\n", label, ms, pct, bits);
    fflush(stdout);
    rows.push_back({label, ms, pct});
}

template <typename T> static void run_march(const int n[3], int reps, const char *only)
{
    field_set<T> F;
    field_set_create(F, n);
    const size_t bytes = F.l.total * sizeof(T);
    T *a, *b;
    CHECK(cudaMalloc(&a, bytes));
    CHECK(cudaMalloc(&b, bytes));
    fill_smooth_noisy(F);
    CHECK(cudaMemcpy(a, F.u, bytes, cudaMemcpyDeviceToDevice));
    CHECK(cudaMemcpy(b, F.u, bytes, cudaMemcpyDeviceToDevice));
    const double X = n[0] + 2.0, Y = n[1] + 2.0, Z = n[2] + 2.0;
    F.bytes = sizeof(T) * (X * Y * Z - 8.0 - 4.0 * (n[0] + n[1] + n[2]) + (double)n[0] * n[1] * n[2]);
    /* the bench's copy: the faster of one before and one after the kernels */
    auto copy = [&] { return median_ms(reps, [&] { CHECK(cudaMemcpy(a, b, bytes, cudaMemcpyDeviceToDevice)); }); };
    const double before = copy();
    F.copy_gbs = 2.0 * bytes / (before * 1e-3) / 1e9;
    auto ref = heat_zwindow<T, 2, GHOSTS_MADE, true>;
    CHECK(cudaMemset(F.ref, 0xff, bytes));
    launch_march<T>(ref, F, F.ref, 64, 4, 1, 2, 8);
    CHECK(cudaDeviceSynchronize());
    std::vector<march_row> rows;
    const std::vector<std::pair<int, int>> shapes = {{64, 4}, {128, 2}, {32, 8}};
    const bool big = n[0] > 600; /* 1024: fewer rows, no bits (the host's compare of 9 GB) */
    auto sweep = [&](const char *name, auto kernel, int W, int M, std::vector<int> zs) {
        if (only && !strstr(name, only)) return;
        bool check = !big;
        for (int blocks : {0, 7, 6, 5, 4})
            for (int carve : {64, 228})
                for (int z : zs)
                    for (auto &s : shapes)
                        if ((blocks || carve == 64) && (!big || ((blocks == 0 || blocks == 6) && z >= 8 && s.second != 8)))
                            march_row_of<T>(F, a, b, rows, name, kernel, s.first, s.second, W, M, z, blocks, carve, reps,
                                            std::exchange(check, false));
    };
    /* the fixed cost of a launch (ramp and tail): the same march over the first 128, 256 and 512 planes */
    if (!only || !strcmp(only, "fixed"))
        for (int planes : {64, 128, 256, 512, 1024})
            if (planes <= n[2]) {
                const int nz = F.s.nz;
                F.s.nz = planes;
                const double bytes_all = F.bytes;
                F.bytes = bytes_all * planes / nz;
                char name[64];
                snprintf(name, sizeof name, "fixed nz=%d", planes);
                march_row_of<T>(F, a, b, rows, name, heat_zwideg<T, 16 / sizeof(T), 1, true, 8>, 64, 4, 16 / sizeof(T), 1, 8,
                                0, 64, reps, false);
                F.s.nz = nz, F.bytes = bytes_all;
            }
    if (only && !strcmp(only, "fixed")) rows.clear();
    if constexpr (sizeof(T) == 8)
        if (!only || strstr("turning", only)) {
            /* upward only, then upward and downward in turn: the same kernel, bits first */
            for (int blocks : {0, 5}) /* downward: 48 registers, 5 blocks; upward 32, 8 */
                for (int z : {8, 16, 32})
                    for (auto &sh : std::vector<std::pair<int, int>>{{64, 4}, {128, 2}}) {
                        march_row_of<T>(F, a, b, rows, "turning up only", zwideg_turning<T, 2, 0, false>, sh.first,
                                        sh.second, 2, 1, z, blocks, 64, reps, z == 8 && blocks == 0);
                        march_row_of<T>(F, a, b, rows, "turning up/down", zwideg_turning<T, 2, 0, false>, sh.first,
                                        sh.second, 2, 1, z, blocks, 64, reps, z == 8 && blocks == 0,
                                        zwideg_turning<T, 2, 0, true>);
                    }
        }
    if constexpr (sizeof(T) == 8) {
        sweep("zwide2g m=1 b8", heat_zwideg<T, 2, 1, true, 8>, 2, 1, {6, 8, 11, 12, 15, 16, 24, 32});
        sweep("zwindowg m=2", ref, 1, 2, {8, 12, 15, 16});
        sweep("zwide2g m=2 b6", heat_zwideg<T, 2, 2, true, 6>, 2, 2, {8, 16, 32});
        sweep("zwide2g m=2 b5", heat_zwideg<T, 2, 2, true, 5>, 2, 2, {8, 16, 32});
        sweep("zwide1g m=2 b8", heat_zwideg<T, 1, 2, true, 8>, 1, 2, {8, 16});
        sweep("zwide1g m=1 b8", heat_zwideg<T, 1, 1, true, 8>, 1, 1, {8, 16});
        sweep("zwide2g m=2", heat_zwideg<T, 2, 2, true>, 2, 2, {8, 16, 32});
        sweep("zwide2g m=1 b6", heat_zwideg<T, 2, 1, true, 6>, 2, 1, {8, 16, 32});
        sweep("zwide4g m=1", heat_zwideg<T, 4, 1, true>, 4, 1, {8, 16, 32});
        sweep("zwide4g m=1 b6", heat_zwideg<T, 4, 1, true, 6>, 4, 1, {8, 16, 32});
    } else {
        sweep("zwide4g m=1 b8", heat_zwideg<T, 4, 1, true, 8>, 4, 1, {8, 16, 32});
        sweep("zwide4g m=2", heat_zwideg<T, 4, 2, true>, 4, 2, {8, 16, 32});
    }
    const double after = copy();
    const double best_copy = std::min(before, after);
    printf("march copy %.4f ms before, %.4f after: %.1f / %.1f GB/s (rows against the first)\n", before, after,
           2.0 * bytes / (before * 1e-3) / 1e9, 2.0 * bytes / (after * 1e-3) / 1e9);
    std::sort(rows.begin(), rows.end(), [](const march_row &x, const march_row &y) { return x.ms < y.ms; });
    for (size_t r = 0; r < rows.size() && r < 15; ++r)
        printf("best %2zu %s %8.4f ms %6.2f%% of the first copy, %6.2f%% of the faster\n", r + 1, rows[r].label.c_str(),
               rows[r].ms, rows[r].pct, 100.0 * F.bytes / (rows[r].ms * 1e-3) / 1e9 / (2.0 * bytes / (best_copy * 1e-3) / 1e9));
    CHECK(cudaFree(F.u));
    CHECK(cudaFree(F.ref));
    CHECK(cudaFree(F.out));
    CHECK(cudaFree(a));
    CHECK(cudaFree(b));
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s stream | stencil|march N float|double [reps]\n", argv[0]);
        return 2;
    }
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, 0));
    sm_count = prop.multiProcessorCount;
    printf("device %s, %d SMs, L2 %d MB\n", prop.name, sm_count, prop.l2CacheSize >> 20);
    CHECK(cudaEventCreate(&ev0));
    CHECK(cudaEventCreate(&ev1));
    if (strcmp(argv[1], "stream") == 0) run_streams();
    else if (strcmp(argv[1], "stencil") == 0 && argc >= 4) {
        int n[3];
        if (sscanf(argv[2], "%dx%dx%d", &n[0], &n[1], &n[2]) != 3) n[0] = n[1] = n[2] = atoi(argv[2]);
        const int reps = argc > 4 ? atoi(argv[4]) : 15;
        if (strcmp(argv[3], "float") == 0) run_stencil<float>(n, reps);
        else run_stencil<double>(n, reps);
    } else if (strcmp(argv[1], "march") == 0 && argc >= 4) {
        int n[3];
        if (sscanf(argv[2], "%dx%dx%d", &n[0], &n[1], &n[2]) != 3) n[0] = n[1] = n[2] = atoi(argv[2]);
        const int reps = argc > 4 ? atoi(argv[4]) : 15;
        const char *only = argc > 5 ? argv[5] : NULL;
        if (strcmp(argv[3], "float") == 0) run_march<float>(n, reps, only);
        else run_march<double>(n, reps, only);
    } else return 2;
    return 0;
}
