/*
 * How GPU halos travel between ranks (parallel.h: par_device_select), in
 * NVIDIA builds with MPI: NCCL on the GPUs' streams (nccl_transport.c) where
 * every rank has a GPU of its own, else device buffers handed to MPI itself
 * where the library is GPU-aware, else neither, and the backend stages its
 * faces through page-locked host memory. NCCL first because it leaves less
 * of the exchange exposed than a CUDA-built MPI (docs/PERFORMANCE.md): MPI
 * must wait for the faces' stream on the host, NCCL runs on it. Every
 * rank takes the same one: the messages of two transports never meet.
 * The copy engines (ipc_transport.c) when asked for, on one node.
 */
#include <cuda_runtime.h>
#include <mpi.h>
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h> /* Open MPI: MPIX_CUDA_AWARE_SUPPORT, MPIX_Query_cuda_support */
#endif
#include <stdio.h>

#include "../solver/error.h"
#include "ipc_transport.h"
#ifdef HEATSOLVE_NCCL
#include "nccl_transport.h"
#endif
#include "parallel.h"

static par_transport chosen_ = TRANSPORT_HOST;

/* A library built with CUDA says so when compiled against, and again at run
 * time, where its CUDA support can be switched off (Open MPI's
 * mpi_cuda_support). MPI libraries without mpi-ext.h are taken as not
 * GPU-aware. */
static int mpi_gpu_aware(void)
{
#if defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
    return MPIX_Query_cuda_support() == 1;
#else
    return 0;
#endif
}

static const char *nccl_name(void)
{
#ifdef HEATSOLVE_NCCL
    return nccl_transport_name();
#else
    return NULL;
#endif
}

/* Collective. */
static int nccl_usable(void)
{
#ifdef HEATSOLVE_NCCL
    return nccl_every_rank_has_own_gpu();
#else
    return 0;
#endif
}

static int refuse(const char *wanted, const char *why, const char *instead)
{
    return heat_error(HEAT_ERR_CONFIG, "parallel.transport = \"%s\": %s; use \"auto\"%s", wanted, why, instead);
}

int par_device_select(par_transport wanted)
{
    chosen_ = TRANSPORT_HOST;
    if (par_size() < 2 || wanted == TRANSPORT_HOST) return HEAT_OK;
    /* a transport counts only where every rank has it (a node may have fewer GPUs than ranks) */
    long lacking[3] = {!mpi_gpu_aware(), !nccl_usable(), !ipc_usable()};
    HEAT_CALL(par_max_longs(lacking, 3));
    int mpi = !lacking[0], nccl = !lacking[1];
    if (wanted == TRANSPORT_MPI && !mpi)
        return refuse("mpi", "this MPI library is not GPU-aware (MPIX_Query_cuda_support)",
                      ", \"nccl\", \"ipc\" or \"host\"");
#ifdef HEATSOLVE_NCCL
    if (wanted == TRANSPORT_NCCL && !nccl)
        return refuse("nccl", "NCCL needs a GPU for each rank, and some ranks share one",
                      ", \"ipc\", \"mpi\" or \"host\"");
#else
    if (wanted == TRANSPORT_NCCL)
        return refuse("nccl", "this heatsolve was built without NCCL (CMake did not find nccl.h)", ", \"mpi\" or \"host\"");
#endif
    if (wanted == TRANSPORT_IPC && lacking[2])
        return refuse("ipc", "CUDA IPC maps memory between processes of one node, and the ranks run on several",
                      ", \"nccl\", \"mpi\" or \"host\"");
    chosen_ = wanted != TRANSPORT_AUTO ? wanted : nccl ? TRANSPORT_NCCL : mpi ? TRANSPORT_MPI : TRANSPORT_HOST;
    return HEAT_OK;
}

/* MPI moves what is in the buffers when it is called: first the faces that
 * the GPU is still writing on `stream` must be complete. */
static int mpi_exchange(const heat_decomp *d, void *const send[FACE_COUNT], void *const recv[FACE_COUNT],
                        const size_t bytes[FACE_COUNT], void *stream)
{
    cudaError_t e = cudaStreamSynchronize((cudaStream_t)stream);
    if (e != cudaSuccess)
        return heat_error(HEAT_ERR_RUNTIME, "rank %d: the GPU failed before a halo exchange: %s", par_rank(),
                          cudaGetErrorString(e));
    return par_halo_exchange(d, send, recv, bytes);
}

int par_device_exchange(const heat_decomp *d, void *const send[FACE_COUNT], void *const recv[FACE_COUNT],
                        const size_t bytes[FACE_COUNT], void *stream)
{
    if (chosen_ == TRANSPORT_MPI) return mpi_exchange(d, send, recv, bytes, stream);
    if (chosen_ == TRANSPORT_IPC) return ipc_exchange(d, send, recv, bytes, stream);
#ifdef HEATSOLVE_NCCL
    if (chosen_ == TRANSPORT_NCCL) return nccl_exchange(d, send, recv, bytes, stream);
#endif
    return heat_error(HEAT_ERR_RUNTIME, "rank %d: no GPU-to-GPU transport was chosen", par_rank());
}

const char *par_device_transport(void)
{
    if (chosen_ == TRANSPORT_MPI) return "GPU to GPU through GPU-aware MPI";
    if (chosen_ == TRANSPORT_IPC) return ipc_transport_name();
    return chosen_ == TRANSPORT_NCCL ? nccl_name() : NULL;
}

int par_device_exchange_blocks(void) { return chosen_ == TRANSPORT_MPI; }

int par_device_alloc(void **buffer, size_t bytes)
{
    *buffer = NULL;
#ifdef HEATSOLVE_NCCL
    if (chosen_ == TRANSPORT_NCCL) return nccl_alloc(buffer, bytes);
#endif
    (void)bytes;
    return HEAT_OK;
}

int par_device_free(void *buffer)
{
    if (chosen_ == TRANSPORT_IPC) return ipc_free(buffer);
#ifdef HEATSOLVE_NCCL
    return nccl_free(buffer);
#else
    return (void)buffer, 0;
#endif
}

void par_device_release(void)
{
    ipc_release();
#ifdef HEATSOLVE_NCCL
    nccl_release();
#endif
    chosen_ = TRANSPORT_HOST;
}
