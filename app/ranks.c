#include "app/ranks.h"

#include <stdio.h>
#include <string.h>

#include "parallel/parallel.h"
#include "solver/error.h"

int ranks_agree_on_batch(batch_decision *d)
{
    long values[4] = {d->stop_signal, d->checkpoint_asked, d->check_due, -(long)d->steps_per_second};
    HEAT_CALL(par_max_longs(values, 4));
    d->stop_signal = values[0], d->checkpoint_asked = values[1], d->check_due = values[2];
    if (par_size() > 1) d->steps_per_second = (double)-values[3];
    return HEAT_OK;
}

/* The ranks' layout, when there are several. */
void ranks_print_layout(const heat_decomp *d, int gpu)
{
    const char *device = gpu ? par_device_transport() : NULL;
    const char *transport = !gpu     ? "MPI from host memory"
                            : device ? device
                                     : "MPI through page-locked host memory (NCCL needs a GPU per rank and an NCCL build)";
    printf("%s: %d x %d x %d blocks, about %d x %d x %d points each; halos: %s\n", par_description(), d->dims[0],
           d->dims[1], d->dims[2], d->local_n[0], d->local_n[1], d->local_n[2], transport);
}

/* The summary's line on the ranks: layout, halo share, balance. */
int ranks_describe(heat_domain *domain, const heat_solver *solver, double stepping_seconds, run_totals *t)
{
    const heat_decomp *d = &domain->decomp;
    t->ranks = d->ranks;
    memcpy(t->dims, d->dims, sizeof t->dims);
    heat_balance balance;
    HEAT_CALL(heat_domain_balance(domain, stepping_seconds, &balance));
    int device_transport = solver->problem.halo.exchange_device != NULL;
    t->halo_fraction = device_transport ? -1.0 : balance.halo_fraction;
    t->imbalance = balance.imbalance;
    return HEAT_OK;
}
