#pragma once
/*
 * The run's view of its processes: this rank's block of the grid, the
 * problem its backend solves (the block and its exchanged faces), the halo
 * transport beside it (the exchange and the ordered sums wired to
 * parallel.h), and the moves of whole fields between
 * the root, which reads and writes files, and every rank's block. With one
 * process the block is the grid and every move is a no-op.
 */
#include "../solver/solver.h"
#include "decomp.h"
#include "parallel.h"

typedef struct heat_domain {
    heat_decomp decomp;
    size_t elem;     /* bytes per value */
    void *block;     /* this rank's block, compact (several ranks only) */
    double halo_seconds; /* in host-side exchanges (blocking MPI); device transports are asynchronous */
} heat_domain;

/* How the ranks shared the stepping: the mean fraction of it spent in host
 * halo exchanges (-1 where the exchange runs on the GPUs' streams and the
 * host cannot time it), and the slowest rank's computing over the mean. */
typedef struct heat_balance {
    double halo_fraction, imbalance;
} heat_balance;
int heat_domain_balance(heat_domain *d, double stepping_seconds, heat_balance *balance);

/* Decomposes the grid of `global` over the ranks: requested[a] > 0 fixes the
 * ranks along axis a (parallel.ranks); chooses how GPU halos travel
 * (parallel.transport; on_gpu: the blocks will live on GPUs, where "auto"
 * may try the copy engines). Configuration errors exit 2 on every rank. */
int heat_domain_init(heat_domain *d, const heat_problem *global, const int requested[3], par_transport transport,
                     int on_gpu);
/* heat_domain_init's refusals of the layout alone (parallel.ranks, the grid's bricks, blocks thinner
 * than the space order's halo), arithmetic only: for a run to refuse before it claims the output
 * folder (which --overwrite empties). */
int heat_domain_check_layout(const heat_problem *global, const int requested[3]);
/* The layout heat_domain_init uses: requested[a] > 0 kept; with nothing
 * requested, z slabs where the grid (global_n; NULL: unknown) has a z brick
 * for every rank and every slab is at least `halo` planes thick; otherwise
 * MPI_Dims_create with the most ranks along z, or where that does not fit
 * (bricks, halo), the fitting layout with the smallest halo area. */
int heat_domain_dims(int ranks, const int requested[3], const int global_n[3], int halo, int dims[3]);
void heat_domain_free(heat_domain *d);
int heat_domain_is_split(const heat_domain *d);

/* The problem of this rank's block: its points, the whole grid's spacing,
 * boundary conditions on the outer faces, the exchanged faces on the others. */
void heat_domain_localize(heat_domain *d, const heat_problem *global, heat_problem *local);
/* How this rank's ghosts travel (parallel.h's exchange) and its sums add
 * up: for heat_solver_create_block beside the localized problem. */
heat_halo_transport heat_domain_transport(heat_domain *d);

/* The whole field on the root into every rank's solver, and back. */
int heat_domain_set_field(heat_domain *d, heat_solver *s, const void *whole, long step);
int heat_domain_get_field(heat_domain *d, heat_solver *s, void *whole);
/* Statistics of the whole field, on every rank. */
int heat_domain_stats(heat_domain *d, heat_solver *s, heat_field_stats *stats);

/* Every rank leaves with the largest of the ranks' statuses, so all go on or
 * all stop together. */
int heat_domain_agree(int status);
