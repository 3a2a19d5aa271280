#pragma once
/*
 * The copy engines' halo transport, for device_transport.c (NVIDIA builds
 * with MPI): faces copied on a GPU stream into the neighbour's memory, which
 * CUDA IPC maps into this process; ranks of one node only.
 */
#include "decomp.h"

/* "copy engines, GPU to GPU (CUDA IPC)". */
const char *ipc_transport_name(void);
/* 1 where every rank runs on this node (IPC maps memory of the same node only). */
int ipc_usable(void);
/* Collective, with every rank on this node: 1 where each rank's GPU memory
 * and events map into every other rank; else 0, with *cuda_error a
 * cudaError_t that a rank met (the same on every rank). Makes the backend's
 * GPU (the node-local rank modulo the GPUs a rank sees) current. */
int ipc_reaches_every_rank(int *cuda_error);
int ipc_exchange(const heat_decomp *d, void *const send[FACE_COUNT], void *const recv[FACE_COUNT],
                 const size_t bytes[FACE_COUNT], void *stream);
/* The backend's teardown frees a buffer (every rank of the layout together):
 * first this rank and its neighbours let go of each other's memory and
 * events. Returns 0: the caller frees the buffer. */
int ipc_free(void *buffer);
/* Unmaps the neighbours' memory and destroys the shared events. */
void ipc_release(void);
