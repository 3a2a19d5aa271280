#include "app/ranks.h"

#include <omp.h>
#include <stdio.h>
#include <string.h>

#include "parallel/parallel.h"
#include "solver/error.h"

int ranks_agree_on_batch(batch_decision *d)
{
    long values[5] = {d->stop_signal, d->checkpoint_asked, d->check_due, d->clock_due, -(long)d->steps_per_second};
    HEAT_CALL(par_max_longs(values, 5));
    d->stop_signal = values[0], d->checkpoint_asked = values[1], d->check_due = values[2], d->clock_due = values[3];
    if (par_size() > 1) d->steps_per_second = (double)-values[4];
    return HEAT_OK;
}

/* Why the root gathers the field, or NULL where the ranks write in parts. */
static const char *parts_refused(const heat_decomp *d)
{
    if (d->ranks < 2) return "one process";
    if (!par_parts_available()) return "MPI gives no MPI_THREAD_MULTIPLE";
    if (d->dims[0] != 1 || d->dims[1] != 1) return "the blocks are not z slabs";
    return NULL;
}

int ranks_checkpoint_parts(const heat_decomp *d, heat_precision precision, ckpt_parts **parts)
{
    *parts = NULL;
    if (parts_refused(d)) return HEAT_OK;
    int z_offset[d->ranks], z_count[d->ranks];
    for (int r = 0; r < d->ranks; ++r) {
        int offset[3], size[3];
        heat_decomp_block_of(d, r, offset, size);
        z_offset[r] = offset[2], z_count[r] = size[2];
    }
    HEAT_CALL(ckpt_parts_create(d->ranks, d->rank, z_offset, z_count, parts));
    int dims[3] = {d->global_n[2], d->global_n[1], d->global_n[0]};
    /* frames of a double run are float32: their chunks must fit too */
    if (ckpt_parts_fit(*parts, dims, heat_precision_size(precision)) && ckpt_parts_fit(*parts, dims, sizeof(float)))
        return HEAT_OK;
    ckpt_parts_destroy(parts);
    return HEAT_OK;
}

/* The ranks' layout, when there are several. */
void ranks_print_layout(const heat_decomp *d, int gpu, const ckpt_parts *parts)
{
    const char *device = gpu ? par_device_transport() : NULL;
    const char *transport = !gpu     ? "MPI from host memory"
                            : device ? device
                                     : "MPI through page-locked host memory (GPU to GPU needs a GPU-aware MPI, or NCCL and a GPU "
                                       "per rank)";
    printf("%s: %d x %d x %d blocks, about %d x %d x %d points each; halos: %s\n", par_description(), d->dims[0],
           d->dims[1], d->dims[2], d->local_n[0], d->local_n[1], d->local_n[2], transport);
    if (parts) printf("checkpoints: every rank compresses its own slab, rank 0 writes the file\n");
    else printf("checkpoints: rank 0 gathers the field and compresses it alone (%s)\n",
                parts_refused(d) ? parts_refused(d) : "slab edges fall inside checkpoint chunks");
}

/* The summary's line on the ranks: layout, halo share, balance. */
int ranks_describe(heat_domain *domain, const heat_solver *solver, double stepping_seconds, run_totals *t)
{
    const heat_decomp *d = &domain->decomp;
    t->ranks = d->ranks;
    memcpy(t->dims, d->dims, sizeof t->dims);
    heat_balance balance;
    HEAT_CALL(heat_domain_balance(domain, stepping_seconds, &balance));
    int device_transport = solver->transport.exchange_device != NULL && solver->ops != &heat_backend_cpu;
    t->halo_fraction = device_transport ? -1.0 : balance.halo_fraction;
    /* as the backends decide (the GPU's prepare_overlap with its own transport, the
     * CPU's overlappable and pair_overlappable): z faces only, three planes or more,
     * six for the CPU's pairs (two next to each face wait for the exchange) */
    int cpu = solver->ops == &heat_backend_cpu, cpu_pairs = cpu && heat_pairs_allowed(&solver->problem);
    int planes = device_transport || cpu_pairs ? solver->problem.halo.fewest_z_planes : d->local_n[2];
    int planes_needed = cpu_pairs ? 6 : 3;
    t->halo_beside_update = (device_transport || cpu) && heat_only_z_exchanged(d->exchanged) && planes >= planes_needed;
    t->imbalance = balance.imbalance;
    return HEAT_OK;
}

/* mpirun binds each of 1 or 2 ranks to a single core by default: OpenMP's
 * threads (the stencil's, the checkpoint compression's) would then share it.
 * The root says so for all ranks (the fewest cores, the most threads). */
void ranks_check_binding(void)
{
    /* The process's cores as the OpenMP runtime found them at start: with OMP_PROC_BIND set it
     * has bound this (main) thread to one of them since, so its own mask would say 1. */
    long cores = omp_get_num_procs(), threads = omp_get_max_threads(), crowded = cores > 0 && threads > cores;
    long seen[3] = {crowded, crowded ? -cores : -(1L << 30), crowded ? threads : 0};
    if (par_max_longs(seen, 3) != HEAT_OK || !seen[0]) return;
    cores = -seen[1], threads = seen[2];
    if (par_size() == 1)
        heat_warn("heatsolve may run on %ld core%s but has %ld OpenMP threads, which share them; set OMP_NUM_THREADS=%ld",
                  cores, cores == 1 ? "" : "s", threads, cores);
    else {
        /* The value to name fits the node too: ranks that see all its cores share them (threads_fit_ranks). */
        long share = par_node_cores() / par_node_size() > 1 ? par_node_cores() / par_node_size() : 1;
        heat_warn("a rank may run on %ld core%s but has %ld OpenMP threads, which share them; give each rank its cores "
                  "(mpirun --bind-to none, or --map-by slot:PE=%ld) or set OMP_NUM_THREADS=%ld",
                  cores, cores == 1 ? "" : "s", threads, threads, share < cores ? share : cores);
    }
}
