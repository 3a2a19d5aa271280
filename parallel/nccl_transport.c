/*
 * GPU-to-GPU halo transport through NCCL (NVIDIA; RCCL keeps the same API on
 * AMD): the faces go device to device over NVLink or the network, never
 * through host memory. Chosen first where every rank has a GPU of its own
 * (device_transport.c), and the only GPU path where MPI is not GPU-aware
 * (mpi_built_with_cuda_support = false). The
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
 * update its SMs: the step is no slower and less of the exchange is exposed.
 * With registered buffers (below) four expose as little as eight, but take
 * twice as long where nothing runs beside the exchange (the CG solver's).
 * NCCL_MAX_CTAS in the environment still overrides it. */
enum { HALO_MAX_CTAS = 8 };

static ncclComm_t comm_;
static int ready_ = 0;

/* ---- buffers that NCCL moves without a copy ----
 * Since NCCL 2.23 a send between two GPUs of a node goes straight from the
 * sender's buffer into the receiver's where both are registered with the
 * communicator, instead of through NCCL's FIFO: half the memory traffic, on
 * fewer of the SMs that the interior update runs on beside it. Registration
 * takes memory from NCCL's allocator (cuMem); NCCL refuses cudaMalloc memory
 * unless NCCL_LEGACY_CUDA_REGISTER=1, which it advises against. NCCL forbids
 * pairing a registered buffer with an unregistered one: every rank allocates
 * the same buffers in the same order, so the table fills alike on all of
 * them. The communicator exists from the first exchange on: buffers
 * allocated before it are registered then. NCCL_LOCAL_REGISTER=0 turns the
 * direct path off (NCCL's own switch). */
enum { MAX_BUFFERS = 32 };
typedef struct nccl_buffer {
    void *at, *handle;
    size_t bytes;
} nccl_buffer;
static nccl_buffer buffers_[MAX_BUFFERS];

#define NCCL_CALL(call)                                                                                      \
    do {                                                                                                     \
        ncclResult_t nccl_status_ = (call);                                                                  \
        if (nccl_status_ != ncclSuccess)                                                                     \
            return heat_internal_error("rank %d: %s failed: %s", par_rank(), #call,                           \
                              ncclGetErrorString(nccl_status_));                                             \
    } while (0)

static int register_buffers(void)
{
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 19, 0) /* ncclMemAlloc, ncclCommRegister */
    for (int b = 0; b < MAX_BUFFERS; ++b)
        if (buffers_[b].at && !buffers_[b].handle)
            NCCL_CALL(ncclCommRegister(comm_, buffers_[b].at, buffers_[b].bytes, &buffers_[b].handle));
#endif
    return HEAT_OK;
}

static void deregister_buffers(void)
{
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 19, 0)
    for (int b = 0; b < MAX_BUFFERS; ++b)
        if (buffers_[b].handle) (void)ncclCommDeregister(comm_, buffers_[b].handle), buffers_[b].handle = NULL;
#endif
}

/* Whether NCCL takes the registered buffers' direct path: version 2.23 on
 * (intra-node registration) and not switched off by NCCL_LOCAL_REGISTER=0. */
static int direct_transfers(void)
{
    int version = 0;
    const char *env = getenv("NCCL_LOCAL_REGISTER");
    if (ncclGetVersion(&version) != ncclSuccess || version < NCCL_VERSION(2, 23, 0)) return 0;
    return !(env && atoi(env) == 0);
}

/* The CTAs the exchange may hold: NCCL_MAX_CTAS, else ours (NCCL 2.17 and
 * later take it); 0: NCCL's own choice. */
static int cta_limit(void)
{
    const char *env = getenv("NCCL_MAX_CTAS");
    if (env && *env) return atoi(env);
    return NCCL_VERSION_CODE >= NCCL_VERSION(2, 17, 0) ? HALO_MAX_CTAS : 0;
}

static int connect(void)
{
    ncclUniqueId id;
    if (par_is_root()) NCCL_CALL(ncclGetUniqueId(&id));
    HEAT_CHECK(MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD) == MPI_SUCCESS, "MPI_Bcast of the NCCL id failed");
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 17, 0) /* ncclConfig_t.maxCTAs */
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    if (cta_limit() > 0) config.maxCTAs = cta_limit();
    NCCL_CALL(ncclCommInitRankConfig(&comm_, par_size(), id, par_rank(), &config));
#else
    NCCL_CALL(ncclCommInitRank(&comm_, par_size(), id, par_rank()));
#endif
    ready_ = 1;
    return register_buffers();
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

const char *nccl_transport_name(void)
{
    static char name[96];
    int version = 0;
    ncclGetVersion(&version);
    int at = snprintf(name, sizeof name, "NCCL %d.%d.%d, GPU to GPU", version / 10000, version / 100 % 100,
                      version % 100);
    at += snprintf(name + at, sizeof name - (size_t)at, "%s", direct_transfers() ? ", registered buffers" : "");
    if (cta_limit() > 0) snprintf(name + at, sizeof name - (size_t)at, ", at most %d CTAs", cta_limit());
    return name;
}

int nccl_alloc(void **buffer, size_t bytes)
{
    *buffer = NULL;
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 19, 0)
    for (int b = 0; b < MAX_BUFFERS; ++b) {
        if (buffers_[b].at) continue;
        NCCL_CALL(ncclMemAlloc(buffer, bytes));
        buffers_[b] = (nccl_buffer){*buffer, NULL, bytes};
        return ready_ ? register_buffers() : HEAT_OK;
    }
#endif
    (void)bytes;
    return HEAT_OK; /* the table is full (alike on every rank): the caller allocates as usual */
}

int nccl_free(void *buffer)
{
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 19, 0)
    for (int b = 0; buffer && b < MAX_BUFFERS; ++b) {
        if (buffers_[b].at != buffer) continue;
        if (buffers_[b].handle) (void)ncclCommDeregister(comm_, buffers_[b].handle);
        (void)ncclMemFree(buffer);
        buffers_[b] = (nccl_buffer){0};
        return 1;
    }
#endif
    (void)buffer;
    return 0;
}

void nccl_release(void)
{
    if (ready_) deregister_buffers(), ncclCommDestroy(comm_);
    ready_ = 0;
}
