/*
 * The second stage of the implicit solver's reductions (cg_kernels.hip): the
 * partials of each brick added in a fixed order. A kernel of no template: its
 * own file, included by the one translation unit that launches it
 * (backend_hip_cg.hip).
 */
/* Second stage: a group of CG_BRICK_LANES threads per brick b of this block
 * ([bz][by][bx]). Lane l adds the brick's partials l, l + 32, ... (numbered
 * in z-chunk, row, piece order), then the lanes combine in a fixed tree: the
 * order depends on the brick alone. One thread a brick, looping, would wait
 * on its loads one after another. */
enum { CG_BRICK_LANES = 32 };

__global__ void __launch_bounds__(CG_SUM_THREADS) brick_sums(const double2 *partial, cg_brick_geometry g, double2 *sums)
{
    __shared__ double sa[CG_SUM_THREADS], sb[CG_SUM_THREADS];
    const int t = threadIdx.x, lane = t % CG_BRICK_LANES;
    const long b = (threadIdx.x + (long)blockIdx.x * CG_SUM_THREADS) / CG_BRICK_LANES;
    double a = 0.0, c = 0.0;
    if (b < (long)g.own[0] * g.own[1] * g.own[2]) {
        const int brick[3] = {(int)(b % g.own[0]), (int)(b / g.own[0] % g.own[1]), (int)(b / g.own[0] / g.own[1])};
        int from[3], extent[3];
        for (int d = 0; d < 3; ++d) from[d] = brick[d] * g.span[d], extent[d] = min(g.span[d], g.count[d] - from[d]);
        const int items = extent[0] * extent[1] * extent[2];
        for (int q = lane; q < items; q += CG_BRICK_LANES) {
            const int x = from[0] + q % extent[0], y = from[1] + q / extent[0] % extent[1], z = from[2] + q / extent[0] / extent[1];
            const double2 v = partial[((long)z * g.count[1] + y) * g.count[0] + x];
            a += v.x, c += v.y;
        }
    }
    sa[t] = a, sb[t] = c;
    __syncthreads();
    for (int half = CG_BRICK_LANES / 2; half > 0; half /= 2) {
        if (lane < half) sa[t] += sa[t + half], sb[t] += sb[t + half];
        __syncthreads();
    }
    if (lane == 0 && b < (long)g.own[0] * g.own[1] * g.own[2]) sums[b] = make_double2(sa[t], sb[t]);
}
