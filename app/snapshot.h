#pragma once
/*
 * The field's way from the solver to the checkpoint writer. One process
 * loads its field into a host buffer that then serves as the writer's first
 * snapshot buffer; every buffer a GPU copies a snapshot into is page-locked
 * once; a snapshot leaves the GPU while it steps on and the writer's thread
 * waits for it to arrive (ckpt_writer_set_arrival); once the last snapshot is
 * taken, one process lets its GPU go beside the last writes. Several ranks
 * without checkpoint parts gather each block on the root instead.
 */
#include <stddef.h>

#include "io/ckpt_parts.h"
#include "io/ckpt_writer.h"
#include "parallel/domain.h"
#include "solver/solver.h"

typedef struct snapshots snapshots;

/* For the run's solver, this rank's block and, with parts, the checkpoint
 * parts (NULL: the root gathers the field). field_bytes: the whole field in
 * the run's precision. One process allocates its host field here and pins it. */
int snapshots_create(heat_solver *solver, heat_domain *domain, const ckpt_parts *parts, size_t field_bytes,
                     snapshots **snap);

/* One process: where the field is loaded (the whole field); NULL otherwise. */
void *snapshots_host_field(const snapshots *snap);

/* The host field holds the field of step as loaded: a snapshot of that step needs no copy. */
void snapshots_loaded(snapshots *snap, long step);

/* The writer (NULL on ranks without one) waits for each snapshot to arrive;
 * the buffers that snapshots leave the GPU into are page-locked. */
void snapshots_attach_writer(snapshots *snap, ckpt_writer *writer);

/* Copies the field of the solver's step into the writer's next buffer
 * (after ckpt_writer_make_room), or gathers it on the root. */
int snapshots_take(snapshots *snap);

/* Wall seconds the run spent taking snapshots. */
double snapshots_seconds(const snapshots *snap);

/* The stepping is over: one process releases its GPU on a thread of its own
 * once every write in flight has its snapshot (snapshots_destroy joins it). */
void snapshots_release_solver_beside_writes(snapshots *snap);

/* Waits for the writes and copies in flight, unpins and frees; before the
 * writer is destroyed (its first buffer is the host field). Accepts NULL. */
void snapshots_destroy(snapshots **snap);
