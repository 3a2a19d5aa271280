#pragma once
/*
 * How a block's ghosts travel and how processes add their sums: handed to
 * a backend beside the problem (heat_backend_ops.create), never inside it.
 * parallel/domain.c fills one for a run's ranks; a single block with no
 * exchanged face needs none (NULL). Which faces are exchanged is the
 * problem's (heat_problem.halo.exchanged); this says how.
 *
 * A backend packs the owned plane next to each exchanged face into send[f],
 * calls exchange, and copies recv[f] into the face's ghosts. With R ghost
 * layers (heat_space_radius) it packs R planes a face, nearest the face
 * first; received plane m (m in from the neighbour's side of the face) goes
 * into ghost layer -1-m.
 */
#include <stddef.h>
#include <string.h>

#include "problem.h"

typedef struct heat_halo_transport {
    int (*exchange)(void *context, void *const send[FACE_COUNT], void *const recv[FACE_COUNT],
                    const size_t bytes[FACE_COUNT]);
    /* The same exchange in three calls (parallel.h: par_halo_start), so that
     * a backend updates the interior while the faces travel; NULL: only the
     * blocking one. progress returns 1 once the faces arrived, < 0 on error. */
    int (*exchange_start)(void *context, void *const send[FACE_COUNT], void *const recv[FACE_COUNT],
                          const size_t bytes[FACE_COUNT]);
    int (*exchange_progress)(void *context);
    int (*exchange_wait)(void *context);
    /* Where set, GPU backends hand device buffers (face-packed, same layout)
     * to this instead of staging them through host memory; the transfer is
     * queued on `stream` (the GPU's; NULL: its default stream). */
    int (*exchange_device)(void *context, void *const send[FACE_COUNT], void *const recv[FACE_COUNT],
                           const size_t bytes[FACE_COUNT], void *stream);
    int device_exchange_blocks; /* 1: exchange_device waits for `stream` and returns with the faces
                                   in (GPU-aware MPI); 0: it only queues them there (NCCL) */
    /* Where set, GPU backends take the buffers whose planes exchange_device
     * moves (fields, CG vectors, packed faces) from alloc_device, which may
     * decline (*buffer NULL), and give back with free_device what it gave. */
    int (*alloc_device)(void *context, void **buffer, size_t bytes);
    int (*free_device)(void *context, void *buffer);
    /* Element-wise sum across processes of a vector whose entries each have
     * one owner (parallel.h); NULL: one process. */
    int (*sum_owned)(void *context, double *values, long count);
    void *context;
    int serial; /* 1: the exchange before the update, never beside it (the scaling benchmark's comparison) */
} heat_halo_transport;

/* The transport of a block that exchanges nothing with anyone: all NULL. */
static inline heat_halo_transport heat_halo_transport_or_none(const heat_halo_transport *transport)
{
    heat_halo_transport t;
    memset(&t, 0, sizeof t);
    if (transport) t = *transport;
    return t;
}
