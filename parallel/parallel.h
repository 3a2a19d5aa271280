#pragma once
/*
 * The one interface between heatsolve and its processes (DESIGN.md,
 * Scale-out): start-up, rank roles, halo exchange, agreement and reductions
 * in a fixed order, and moving blocks of the field to and from the rank that
 * reads and writes files. parallel_mpi.c implements it with MPI
 * (HEATSOLVE_MPI=ON); parallel_serial.c for one process, where the only
 * "neighbour" is the block itself across a periodic axis. The time loop and
 * the kernels never call MPI.
 */
#include <stddef.h>

#include "decomp.h"

/* Starts the process group (MPI_Init_thread) and reads the rank and size. */
int par_init(int *argc, char ***argv);
/* Ends it; with a failure that the other ranks may not know of, ends them too
 * (MPI_Abort), so that no rank waits forever for one that has gone. */
void par_finalize(int status, int agreed);

int par_rank(void);
int par_size(void);
static inline int par_is_root(void) { return par_rank() == 0; }
/* This rank among the ranks of its node (MPI_COMM_TYPE_SHARED): which GPU it takes. */
int par_node_rank(void);
int par_node_size(void);
/* The cores the ranks of this node may run on together (the union of their affinity masks). */
int par_node_cores(void);
/* "MPI (OpenMPI 4.1.6), 4 ranks" or "one process". */
const char *par_description(void);

/* Ranks along x, y, z for `ranks` processes (MPI_Dims_create; entries > 0 are kept). */
int par_dims_create(int ranks, int dims[3]);
/* Creates the Cartesian communicator of d (a no-op for one process). */
int par_cart_create(const heat_decomp *d);

/* Sends send[f] to the neighbour across face f and receives recv[f] from it,
 * bytes[f] each way, for every face in d->exchanged. Blocking. */
int par_halo_exchange(const heat_decomp *d, void *const send[FACE_COUNT], void *const recv[FACE_COUNT],
                      const size_t bytes[FACE_COUNT]);
/* The same exchange in three calls, so that the caller computes while it
 * travels (one in flight at a time): start posts it; progress lets MPI move
 * it (MPI moves messages, shared memory included, only inside its calls) and
 * returns 1 once it has arrived, 0 before, < 0 on an error; wait ends it.
 * The buffers must stay untouched until wait returns. */
int par_halo_start(const heat_decomp *d, void *const send[FACE_COUNT], void *const recv[FACE_COUNT],
                   const size_t bytes[FACE_COUNT]);
int par_halo_progress(void);
int par_halo_wait(void);

/* How GPU halos travel (parallel.transport). */
typedef enum par_transport {
    TRANSPORT_AUTO, /* the first the machine has of the copy engines, NCCL, MPI, host */
    TRANSPORT_MPI,  /* device buffers handed to a GPU-aware MPI (MPIX_Query_cuda_support) */
    TRANSPORT_NCCL, /* NCCL on the GPUs' streams: needs a GPU per rank */
    TRANSPORT_HOST, /* the backend stages the faces through page-locked host memory */
    TRANSPORT_IPC,  /* the GPUs' copy engines into the neighbours' memory (CUDA IPC): ranks of one node */
} par_transport;

/* Chooses the transport, the same on every rank (collective): `wanted`, or
 * for TRANSPORT_AUTO the fastest: where the blocks live on GPUs (on_gpu)
 * and every rank has a GPU of its own, the copy engines where all ranks are
 * on one node and map each other's memory, else NCCL; otherwise GPU-aware
 * MPI where the library reports it (ranks sharing a GPU), otherwise host
 * memory. A wanted transport that this build or machine lacks is a
 * configuration error. Without a GPU build, or with one process, the choice
 * is host. */
int par_device_select(par_transport wanted, int on_gpu);
/* par_device_select's refusals that the build alone decides (a transport it
 * was built without), for `ranks` ranks: local, no device touched, so that
 * one rank can refuse before the run claims its output folder. */
int par_device_check_built(par_transport wanted, int ranks);
/* GPU-to-GPU exchange of device buffers (face-packed) as par_halo_exchange
 * does with host buffers, after the work queued on `stream` (a cudaStream_t;
 * NULL: the default stream). NCCL queues it on the stream and returns; MPI
 * waits for the stream, then moves the faces and returns once they are in
 * (par_device_exchange_blocks). */
int par_device_exchange(const heat_decomp *d, void *const send[FACE_COUNT], void *const recv[FACE_COUNT],
                        const size_t bytes[FACE_COUNT], void *stream);
/* The chosen GPU-to-GPU transport, in words; NULL for host memory. */
const char *par_device_transport(void);
int par_device_exchange_blocks(void);
/* Device memory for a buffer whose planes the GPU-to-GPU transport moves:
 * NCCL's, registered for direct transfers, where NCCL carries the halos;
 * elsewhere *buffer stays NULL and the backend allocates as usual.
 * par_device_free returns 1 where it freed one of these, 0 otherwise. */
int par_device_alloc(void **buffer, size_t bytes);
int par_device_free(void *buffer);
void par_device_release(void);

/* Element-wise maximum of `count` longs over all ranks, in place: how ranks
 * agree on a status, a stop signal or a batch length. */
int par_max_longs(long *values, int count);
/* Element-wise sum over ranks, in place, of a vector in which every entry is
 * non-zero on at most one rank: exact (adding zeros rounds nothing), so the
 * result does not depend on the reduction order. */
int par_sum_owned(double *values, long count);
int par_min_max(double *min, double *max);
int par_sum_long(long *value);

/* Root's `bytes` to every rank. */
int par_broadcast(void *data, size_t bytes);

/* The whole field (compact, x fastest, on the root) from each rank's block
 * (compact, local_n), and back. elem: 4 or 8 bytes. */
int par_gather_field(const heat_decomp *d, const void *local, void *global, size_t elem);
int par_scatter_field(const heat_decomp *d, const void *global, void *local, size_t elem);

/* Checkpoint parts: the checkpoint writers' threads of all ranks talk on a
 * communicator of their own while the main threads step on. Needs
 * MPI_THREAD_MULTIPLE; without it (or with one process) there are no parts
 * and the field is gathered on the root instead. Every wait in these calls
 * sleeps between looks instead of spinning: the ranks' steppers may share
 * the writer's core. */
int par_parts_available(void);
/* To the root; received by the root in the order sent. */
int par_part_send(const void *data, size_t bytes);
/* The same without waiting for the root to take it: data (malloc'd) is the
 * call's, freed once sent (or at once when the call fails). */
int par_part_post(void *data, size_t bytes);
/* Waits until every posted message has been taken; the first failure. */
int par_part_posted_wait(void);
/* The next message from `rank` (at most `capacity` bytes; its size in *bytes). */
int par_part_receive(int rank, void *buffer, size_t capacity, size_t *bytes);
/* `from`'s bytes to every rank's writer. */
int par_part_broadcast(void *data, size_t bytes, int from);
/* Element-wise sum over ranks onto the root's values. */
int par_part_sum_to_root(double *values, long count);
