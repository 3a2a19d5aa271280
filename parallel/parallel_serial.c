/*
 * parallel.h for one process: every reduction is the identity, the field is
 * already whole, and a periodic axis is its own neighbour.
 */
#define _GNU_SOURCE /* sched_getaffinity */
#include "parallel.h"

#include "../solver/error.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>

int par_init(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    return 0;
}

void par_finalize(int status, int agreed) { (void)status, (void)agreed; }
int par_rank(void) { return 0; }
int par_size(void) { return 1; }
int par_node_rank(void) { return 0; }
int par_node_size(void) { return 1; }
int par_node_cores(void)
{
    cpu_set_t mask;
    return sched_getaffinity(0, sizeof mask, &mask) == 0 ? CPU_COUNT(&mask) : 1;
}
const char *par_description(void) { return "one process"; }

int par_dims_create(int ranks, int dims[3])
{
    (void)ranks;
    dims[0] = dims[1] = dims[2] = 1;
    return 0;
}

int par_cart_create(const heat_decomp *d)
{
    (void)d;
    return 0;
}

/* Across a periodic axis the block meets itself: the ghosts on face f are
 * the owned plane next to the opposite face. */
int par_halo_exchange(const heat_decomp *d, void *const send[FACE_COUNT], void *const recv[FACE_COUNT],
                      const size_t bytes[FACE_COUNT])
{
    for (int f = 0; f < FACE_COUNT; ++f)
        if (d->exchanged & 1u << f) memcpy(recv[f], send[f ^ 1], bytes[f]);
    return 0;
}

/* One process: the copy is the whole exchange, done at once. */
int par_halo_start(const heat_decomp *d, void *const send[FACE_COUNT], void *const recv[FACE_COUNT],
                   const size_t bytes[FACE_COUNT])
{
    return par_halo_exchange(d, send, recv, bytes);
}
int par_halo_progress(void) { return 1; }
int par_halo_wait(void) { return 0; }

int par_max_longs(long *values, int count) { return (void)values, (void)count, 0; }
int par_sum_owned(double *values, long count) { return (void)values, (void)count, 0; }
int par_min_max(double *min, double *max) { return (void)min, (void)max, 0; }
int par_sum_long(long *value) { return (void)value, 0; }
int par_broadcast(void *data, size_t bytes) { return (void)data, (void)bytes, 0; }

static size_t field_bytes(const heat_decomp *d, size_t elem)
{
    return (size_t)d->global_n[0] * d->global_n[1] * d->global_n[2] * elem;
}

int par_gather_field(const heat_decomp *d, const void *local, void *global, size_t elem)
{
    if (local != global) memcpy(global, local, field_bytes(d, elem));
    return 0;
}

int par_scatter_field(const heat_decomp *d, const void *global, void *local, size_t elem)
{
    if (local != global) memcpy(local, global, field_bytes(d, elem));
    return 0;
}

/* One process holds the whole field: no parts. */
int par_parts_available(void) { return 0; }
static int no_parts(void) { return heat_error(HEAT_ERR_RUNTIME, "checkpoint parts need several MPI ranks"); }
int par_part_send(const void *data, size_t bytes) { return (void)data, (void)bytes, no_parts(); }
int par_part_post(void *data, size_t bytes) { return free(data), (void)bytes, no_parts(); }
int par_part_posted_wait(void) { return HEAT_OK; }
int par_part_receive(int rank, void *buffer, size_t capacity, size_t *bytes)
{
    return (void)rank, (void)buffer, (void)capacity, (void)bytes, no_parts();
}
int par_part_broadcast(void *data, size_t bytes, int from) { return (void)data, (void)bytes, (void)from, no_parts(); }
int par_part_sum_to_root(double *values, long count) { return (void)values, (void)count, no_parts(); }
