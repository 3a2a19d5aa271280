/*
 * GPU-to-GPU halo transport through NCCL (NVIDIA; RCCL keeps the same API on
 * AMD): the faces go device to device over NVLink or the network, never
 * through host memory. Chosen where MPI is not GPU-aware (the machines
 * measured: mpi_built_with_cuda_support = false; device_transport.c). The
 * communicator is made at the first exchange, which every rank reaches
 * together.
 */
#include <cuda_runtime.h>
#include <mpi.h>
#include <nccl.h>
#include <stdio.h>
#include <stdlib.h>

#include "../solver/error.h"
#include "nccl_transport.h"
#include "parallel.h"

/* NCCL would spread a face over up to 32 CTAs, one SM each, for the whole
 * exchange, taking them from the interior update that the exchange runs
 * beside. Eight finish a 2 MiB face well inside a 512^3 step and leave the
 * update its SMs; measured on two H200 (docs/PERFORMANCE.md), the step is no
 * slower at 512^3 and 1024^3 and the exposed exchange fell from 9-10 to 7 us
 * at 512^3. NCCL_MAX_CTAS in the environment still overrides it. */
enum { HALO_MAX_CTAS = 8 };

static ncclComm_t comm_;
static int ready_ = 0;

#define NCCL_CALL(call)                                                                                      \
    do {                                                                                                     \
        ncclResult_t nccl_status_ = (call);                                                                  \
        if (nccl_status_ != ncclSuccess)                                                                     \
            return heat_error(HEAT_ERR_RUNTIME, "rank %d: %s failed: %s", par_rank(), #call,                \
                              ncclGetErrorString(nccl_status_));                                             \
    } while (0)

static int connect(void)
{
    ncclUniqueId id;
    if (par_is_root()) NCCL_CALL(ncclGetUniqueId(&id));
    HEAT_CHECK(MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD) == MPI_SUCCESS, "MPI_Bcast of the NCCL id failed");
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 17, 0) /* ncclConfig_t.maxCTAs */
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.maxCTAs = HALO_MAX_CTAS;
    NCCL_CALL(ncclCommInitRankConfig(&comm_, par_size(), id, par_rank(), &config));
#else
    NCCL_CALL(ncclCommInitRank(&comm_, par_size(), id, par_rank()));
#endif
    ready_ = 1;
    return HEAT_OK;
}

/* Sends go out in face order; the receives are posted in the order of the
 * faces they answer (face f's message lands in the neighbour's face f ^ 1),
 * so the k-th send to a peer meets the peer's k-th receive from us, also
 * when both neighbours along an axis are the same rank. */
int nccl_exchange(const heat_decomp *d, void *const send[FACE_COUNT], void *const recv[FACE_COUNT],
                  const size_t bytes[FACE_COUNT], void *stream)
{
    if (!ready_) HEAT_CALL(connect());
    cudaStream_t on = (cudaStream_t)stream;
    NCCL_CALL(ncclGroupStart());
    for (int f = 0; f < FACE_COUNT; ++f)
        if (d->exchanged & 1u << f) NCCL_CALL(ncclSend(send[f], bytes[f], ncclChar, d->neighbour[f], comm_, on));
    for (int f = 0; f < FACE_COUNT; ++f) {
        int g = f ^ 1;
        if (d->exchanged & 1u << g) NCCL_CALL(ncclRecv(recv[g], bytes[g], ncclChar, d->neighbour[g], comm_, on));
    }
    NCCL_CALL(ncclGroupEnd());
    return HEAT_OK;
}

/* The CTAs the exchange may hold: NCCL_MAX_CTAS, else ours (NCCL 2.17 and
 * later take it); 0: NCCL's own choice. */
static int cta_limit(void)
{
    const char *env = getenv("NCCL_MAX_CTAS");
    if (env && *env) return atoi(env);
    return NCCL_VERSION_CODE >= NCCL_VERSION(2, 17, 0) ? HALO_MAX_CTAS : 0;
}

/* NCCL takes one GPU per rank: where a node has more ranks than GPUs, the
 * shared GPUs exchange otherwise. */
const char *nccl_transport_name(void)
{
    int gpus = 0;
    if (cudaGetDeviceCount(&gpus) != cudaSuccess) {
        (void)cudaGetLastError();
        return NULL;
    }
    if (par_node_size() > gpus) return NULL;
    static char name[96];
    int version = 0;
    ncclGetVersion(&version);
    int at = snprintf(name, sizeof name, "NCCL %d.%d.%d, GPU to GPU", version / 10000, version / 100 % 100,
                      version % 100);
    if (cta_limit() > 0) snprintf(name + at, sizeof name - (size_t)at, ", at most %d CTAs", cta_limit());
    return name;
}

void nccl_release(void)
{
    if (ready_) ncclCommDestroy(comm_);
    ready_ = 0;
}
