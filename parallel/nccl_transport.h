#pragma once
/*
 * NCCL's halo transport, for device_transport.c (HEATSOLVE_NCCL builds):
 * faces queued on a GPU stream, device to device.
 */
#include "decomp.h"

/* "NCCL 2.28.3, GPU to GPU, at most 8 CTAs". */
const char *nccl_transport_name(void);
int nccl_exchange(const heat_decomp *d, void *const send[FACE_COUNT], void *const recv[FACE_COUNT],
                  const size_t bytes[FACE_COUNT], void *stream);
/* Device memory from NCCL's allocator, registered with the communicator
 * for direct transfers (*buffer NULL: declined, allocate as usual). */
int nccl_alloc(void **buffer, size_t bytes);
/* Frees a buffer from nccl_alloc and returns 1; 0 where it is not one. */
int nccl_free(void *buffer);
/* Deregisters the buffers and destroys the communicator; buffers still
 * allocated are freed later by nccl_free. */
void nccl_release(void);
