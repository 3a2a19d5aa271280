#include "domain.h"
#include "layout.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../solver/clock.h"
#include "../solver/error.h"
#include "parallel.h"

static int requested_ranks_fit(const int requested[3], int ranks)
{
    long fixed = 1;
    int free_axes = 0;
    for (int a = 0; a < 3; ++a) {
        if (requested[a] > 0) fixed *= requested[a];
        else ++free_axes;
    }
    if (free_axes == 0 ? fixed == ranks : ranks % fixed == 0) return HEAT_OK;
#ifndef HEATSOLVE_MPI
    return heat_error(HEAT_ERR_CONFIG, "parallel.ranks = [%d, %d, %d] asks for %ld ranks, but this heatsolve was built "
                      "without MPI: remove parallel.ranks, or build with -DHEATSOLVE_MPI=ON and start it with mpirun -np "
                      "%ld", requested[0], requested[1], requested[2], fixed, fixed);
#endif
    return heat_error(HEAT_ERR_CONFIG, "parallel.ranks = [%d, %d, %d] does not fit the %d rank%s this job started; "
                      "make the product %d (zeros let MPI choose that axis), or start the job with %ld ranks",
                      requested[0], requested[1], requested[2], ranks, ranks == 1 ? "" : "s", ranks, fixed);
}

/* MPI_Dims_create puts the most ranks on its first axis: handed z first, it
 * cuts the grid into z slabs where it can, whose faces are whole planes,
 * contiguous in memory (an x face is one point per row: its pack and unpack
 * cost more than the transfer). */
/* z slabs where the grid has as many z bricks as ranks: their faces are
 * contiguous planes (exchanged faster than x faces), and the checkpoint
 * chunks of a slab are whole, so
 * every rank compresses its own (io/ckpt_parts.h). */
static int slabs_fit(int ranks, const int requested[3], const int global_n[3], int halo)
{
    if (requested[0] > 0 || requested[1] > 0 || requested[2] > 0 || !global_n) return 0;
    const int slabs[3] = {1, 1, ranks};
    return heat_layout_fits(global_n, slabs, halo);
}

int heat_domain_dims(int ranks, const int requested[3], const int global_n[3], int halo, int dims[3])
{
    HEAT_CALL(requested_ranks_fit(requested, ranks));
    if (slabs_fit(ranks, requested, global_n, halo)) {
        dims[0] = dims[1] = 1, dims[2] = ranks;
        return HEAT_OK;
    }
    int reversed[3] = {requested[2], requested[1], requested[0]};
    HEAT_CALL(par_dims_create(ranks, reversed));
    dims[0] = reversed[2], dims[1] = reversed[1], dims[2] = reversed[0];
    if (global_n && !heat_layout_fits(global_n, dims, halo)) heat_layout_search(ranks, requested, global_n, halo, dims);
    return HEAT_OK; /* none fits: heat_decomp_make names the axis and its limit */
}

/* Every block at least `halo` points thick along the axes it exchanges across: a neighbour's R ghost
 * planes are R of its owned planes. */
static int check_halo_depth(const heat_decomp *d, int space_order)
{
    static const char axes[] = "xyz";
    for (int r = 0; r < d->ranks; ++r) {
        int offset[3], size[3];
        heat_decomp_block_of(d, r, offset, size);
        for (int a = 0; a < 3; ++a) {
            if ((d->dims[a] == 1 && !d->periodic[a]) || size[a] >= d->halo) continue;
            return heat_error(HEAT_ERR_CONFIG, "parallel.ranks: %d x %d x %d blocks of grid.n = [%d, %d, %d] leave rank "
                              "%d a block %d point%s thick along %c, but solver.space_order = %d exchanges %d planes "
                              "with each neighbour; use fewer ranks along %c (parallel.ranks), or a grid.n[%d] that "
                              "leaves every block at least %d points", d->dims[0], d->dims[1], d->dims[2],
                              d->global_n[0], d->global_n[1], d->global_n[2], r, size[a], size[a] == 1 ? "" : "s",
                              axes[a], space_order, d->halo, axes[a], a, d->halo);
        }
    }
    return HEAT_OK;
}

/* This rank's block of the layout, or the configuration error that refuses the layout. */
static int make_decomp(const heat_problem *global, const int requested[3], heat_decomp *decomp)
{
    int dims[3], periodic[3];
    HEAT_CALL(heat_domain_dims(par_size(), requested, global->grid.n, heat_space_radius(global), dims));
    for (int a = 0; a < 3; ++a) periodic[a] = global->bc[2 * a].type == HEAT_BC_PERIODIC;
    HEAT_CALL(heat_decomp_make(global->grid.n, dims, periodic, par_rank(), decomp));
    decomp->halo = heat_space_radius(global);
    return check_halo_depth(decomp, 2 * decomp->halo);
}

int heat_domain_check_layout(const heat_problem *global, const int requested[3])
{
    heat_decomp decomp;
    return make_decomp(global, requested, &decomp);
}

int heat_domain_init(heat_domain *d, const heat_problem *global, const int requested[3], par_transport transport,
                     int on_gpu)
{
    memset(d, 0, sizeof *d);
    d->elem = heat_precision_size(global->precision);
    HEAT_CALL(make_decomp(global, requested, &d->decomp));
    if (par_size() > 1) {
        HEAT_CALL(par_cart_create(&d->decomp));
        HEAT_CALL(par_device_select(transport, on_gpu));
        const int *n = d->decomp.local_n;
        d->block = malloc((size_t)n[0] * n[1] * n[2] * d->elem);
        HEAT_CHECK(d->block, "cannot allocate this rank's block of the field");
    }
    return HEAT_OK;
}

void heat_domain_free(heat_domain *d)
{
    free(d->block);
    d->block = NULL;
}

int heat_domain_is_split(const heat_domain *d) { return d->decomp.ranks > 1; }

/* The host-side exchange's calls add their time to the halo share. */
static int timed(heat_domain *d, double start, int status)
{
    d->halo_seconds += monotonic_seconds() - start;
    return status;
}

static int exchange(void *context, void *const send[FACE_COUNT], void *const recv[FACE_COUNT],
                    const size_t bytes[FACE_COUNT])
{
    heat_domain *d = context;
    double start = monotonic_seconds();
    return timed(d, start, par_halo_exchange(&d->decomp, send, recv, bytes));
}

/* Started and waited for around the interior update: the time in these
 * two calls is the exchange's cost that the update did not hide. */
static int exchange_start(void *context, void *const send[FACE_COUNT], void *const recv[FACE_COUNT],
                          const size_t bytes[FACE_COUNT])
{
    heat_domain *d = context;
    double start = monotonic_seconds();
    return timed(d, start, par_halo_start(&d->decomp, send, recv, bytes));
}

static int exchange_progress(void *context) { return (void)context, par_halo_progress(); }

static int exchange_wait(void *context)
{
    double start = monotonic_seconds();
    return timed(context, start, par_halo_wait());
}

static int exchange_device(void *context, void *const send[FACE_COUNT], void *const recv[FACE_COUNT],
                           const size_t bytes[FACE_COUNT], void *stream)
{
    return par_device_exchange(&((heat_domain *)context)->decomp, send, recv, bytes, stream);
}

static int alloc_device(void *context, void **buffer, size_t bytes)
{
    return (void)context, par_device_alloc(buffer, bytes);
}

static int free_device(void *context, void *buffer) { return (void)context, par_device_free(buffer); }

static int sum_owned(void *context, double *values, long count)
{
    (void)context;
    return par_sum_owned(values, count);
}

/* The fewest points along `axis` of any rank's block: a pair of CPU steps
 * needs two planes from each z neighbour, a GPU sweep of K steps K. */
static int thinnest(const heat_decomp *d, int axis)
{
    int fewest = d->global_n[axis];
    for (int r = 0; r < d->ranks; ++r) {
        int offset[3], size[3];
        heat_decomp_block_of(d, r, offset, size);
        if (size[axis] < fewest) fewest = size[axis];
    }
    return fewest;
}

void heat_domain_localize(heat_domain *d, const heat_problem *global, heat_problem *local)
{
    *local = *global;
    const heat_decomp *dc = &d->decomp;
    for (int a = 0; a < 3; ++a) {
        local->grid.n[a] = dc->local_n[a];
        local->grid.length[a] = global->grid.h[a] * dc->local_n[a]; /* h itself stays the whole grid's */
        local->halo.offset[a] = dc->offset[a];
        local->halo.global_n[a] = dc->global_n[a];
    }
    local->halo.exchanged = dc->exchanged;
    for (int a = 0; a < 3; ++a) local->halo.fewest[a] = thinnest(dc, a);
    local->halo.fewest_z_planes = local->halo.fewest[2];
    if (local->halo.fewest_z_planes < 2) local->halo.single_steps = 1;
    local->halo.device = par_node_rank();
}

heat_halo_transport heat_domain_transport(heat_domain *d)
{
    int device = d->decomp.ranks > 1 && par_device_transport();
    heat_halo_transport t = {
        .exchange = exchange,
        .exchange_start = exchange_start,
        .exchange_progress = exchange_progress,
        .exchange_wait = exchange_wait,
        .exchange_device = device ? exchange_device : NULL,
        .device_exchange_blocks = par_device_exchange_blocks(),
        .alloc_device = device ? alloc_device : NULL,
        .free_device = device ? free_device : NULL,
        .sum_owned = d->decomp.ranks > 1 ? sum_owned : NULL,
        .context = d,
    };
    return t;
}

int heat_domain_set_field(heat_domain *d, heat_solver *s, const void *whole, long step)
{
    if (!heat_domain_is_split(d)) return heat_solver_set_field(s, whole, step);
    HEAT_CALL(par_scatter_field(&d->decomp, whole, d->block, d->elem));
    return heat_solver_set_field(s, d->block, step);
}

int heat_domain_get_field(heat_domain *d, heat_solver *s, void *whole)
{
    if (!heat_domain_is_split(d)) return heat_solver_get_field(s, whole);
    HEAT_CALL(heat_solver_get_field(s, d->block));
    return par_gather_field(&d->decomp, d->block, whole, d->elem);
}

int heat_domain_stats(heat_domain *d, heat_solver *s, heat_field_stats *stats)
{
    HEAT_CALL(heat_solver_stats(s, stats)); /* the sum is the whole grid's already (solver/backend.h) */
    if (!heat_domain_is_split(d)) return HEAT_OK;
    HEAT_CALL(par_min_max(&stats->min, &stats->max));
    return par_sum_long(&stats->nonfinite);
}

int heat_domain_balance(heat_domain *d, double stepping_seconds, heat_balance *balance)
{
    int ranks = d->decomp.ranks, rank = d->decomp.rank;
    double *v = calloc((size_t)ranks * 2, sizeof *v); /* per rank: stepping, halo */
    HEAT_CHECK(v, "out of memory");
    v[2 * rank] = stepping_seconds, v[2 * rank + 1] = d->halo_seconds;
    int status = ranks > 1 ? par_sum_owned(v, 2L * ranks) : HEAT_OK;
    double halo = 0.0, computing = 0.0, slowest = 0.0, stepping = 0.0;
    for (int r = 0; r < ranks; ++r) {
        double own = v[2 * r] - v[2 * r + 1];
        stepping += v[2 * r], halo += v[2 * r + 1], computing += own;
        if (own > slowest) slowest = own;
    }
    balance->halo_fraction = stepping > 0 ? halo / stepping : 0.0;
    balance->imbalance = computing > 0 ? slowest / (computing / ranks) : 1.0;
    free(v);
    return status;
}

int heat_domain_agree(int status)
{
    long value = status;
    if (par_max_longs(&value, 1) != HEAT_OK) return HEAT_ERR_RUNTIME;
    return (int)value;
}
