/*
 * How GPU halos travel between ranks (parallel.h: par_device_select), in
 * NVIDIA builds with MPI: NCCL on the GPUs' streams (nccl_transport.c) where
 * every rank has a GPU of its own, else device buffers handed to MPI itself
 * where the library is GPU-aware, else neither, and the backend stages its
 * faces through page-locked host memory. NCCL first because it leaves less
 * of the exchange exposed than a CUDA-built MPI (docs/PERFORMANCE.md): MPI
 * must wait for the faces' stream on the host, NCCL runs on it. Every
 * rank takes the same one: the messages of two transports never meet.
 * Ahead of NCCL, where every rank of the job is on this node with a GPU of
 * its own and can map the others' memory, the copy engines (ipc_transport.c):
 * they move a face without taking SMs from the update beside it.
 */
#include <cuda_runtime.h>
#include <mpi.h>
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h> /* Open MPI: MPIX_CUDA_AWARE_SUPPORT, MPIX_Query_cuda_support */
#endif
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

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

/* FNV-1a: a GPU's node and PCI address as one number. */
static unsigned long long identity_hash(const char *text, unsigned long long hash)
{
    for (; *text; ++text) hash = (hash ^ (unsigned char)*text) * 1099511628211ull;
    return hash;
}

/* The GPU this rank takes (backend_hip.hip: its node-local rank modulo the
 * GPUs it sees) as a number unique to that GPU on the whole job, exact in a
 * double; 0 where the rank sees no GPU. */
static double gpu_identity(void)
{
    int gpus = 0;
    char bus[64], host[256];
    if (cudaGetDeviceCount(&gpus) != cudaSuccess || gpus == 0 ||
        cudaDeviceGetPCIBusId(bus, sizeof bus, par_node_rank() % gpus) != cudaSuccess ||
        gethostname(host, sizeof host) != 0) {
        (void)cudaGetLastError();
        return 0.0;
    }
    host[sizeof host - 1] = '\0';
    unsigned long long hash = identity_hash(bus, identity_hash(host, 14695981039346656037ull));
    return (double)(hash >> 12) + 1.0;
}

static int same_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Collective: 1 where every rank takes a GPU that no other rank takes (NCCL
 * and the copy engines need that). The ranks compare the GPUs they take, not
 * their counts: under Slurm's --gpus-per-task every rank sees one GPU, its
 * own, while ranks that share a node's GPUs round-robin see them all. */
static int every_rank_has_own_gpu(void)
{
    int ranks = par_size(), own = 1;
    double *ids = calloc((size_t)ranks, sizeof *ids);
    long lacking = !ids; /* a few bytes a rank: agreed on before the sum, which every rank must join */
    if (par_max_longs(&lacking, 1) != HEAT_OK || lacking) return free(ids), 0;
    ids[par_rank()] = gpu_identity();
    if (par_sum_owned(ids, ranks) != HEAT_OK) own = 0;
    qsort(ids, (size_t)ranks, sizeof *ids, same_double);
    for (int r = 0; r < ranks && own; ++r) own = ids[r] != 0.0 && (r == 0 || ids[r] != ids[r - 1]);
    free(ids);
    return own;
}

static int refuse(const char *wanted, const char *why, const char *instead)
{
    return heat_error(HEAT_ERR_CONFIG, "parallel.transport = \"%s\": %s; use \"auto\"%s", wanted, why, instead);
}

/* Collective: whether the copy engines can serve GPU blocks, where they are
 * asked for or where "auto" would take them (every rank on this node with a
 * GPU of its own): then the ranks try what the exchanges will do, each
 * mapping every other rank's memory and event. Every rank takes part or none. */
static int ipc_maps(par_transport wanted, int on_gpu, int own_gpus, int *cuda_error)
{
    *cuda_error = cudaSuccess;
    long unwanted = !on_gpu || !(wanted == TRANSPORT_IPC || (wanted == TRANSPORT_AUTO && own_gpus)) || !ipc_usable();
    if (par_max_longs(&unwanted, 1) != HEAT_OK || unwanted) return 0;
    return ipc_reaches_every_rank(cuda_error);
}

/* What a refusal suggests instead of the transport it refuses: "auto", and
 * those that this job has (the copy engines only where the probe mapped every
 * rank's memory), so that the advice, followed, runs. */
static const char *instead_of(par_transport refused, int ipc, int nccl, int mpi)
{
    static char list[64];
    const struct {
        par_transport transport;
        int has;
        const char *name;
    } options[] = {{TRANSPORT_IPC, ipc, "ipc"}, {TRANSPORT_NCCL, nccl, "nccl"}, {TRANSPORT_MPI, mpi, "mpi"},
                   {TRANSPORT_HOST, 1, "host"}};
    const char *names[4];
    int count = 0;
    for (int o = 0; o < 4; ++o)
        if (options[o].has && options[o].transport != refused) names[count++] = options[o].name;
    int at = 0;
    for (int o = 0; o < count; ++o)
        at += snprintf(list + at, sizeof list - (size_t)at, "%s\"%s\"", o + 1 == count ? " or " : ", ", names[o]);
    return list;
}

int par_device_check_built(par_transport wanted, int ranks)
{
#ifdef HEATSOLVE_NCCL
    (void)wanted, (void)ranks;
#else
    /* before the GPUs are set up, the copy engines cannot be probed: suggested are those known to run */
    if (ranks >= 2 && wanted == TRANSPORT_NCCL)
        return refuse("nccl", "this heatsolve was built without NCCL (CMake did not find nccl.h)",
                      instead_of(wanted, 0, 0, mpi_gpu_aware()));
#endif
    return HEAT_OK;
}

int par_device_select(par_transport wanted, int on_gpu)
{
    chosen_ = TRANSPORT_HOST;
    if (par_size() < 2 || wanted == TRANSPORT_HOST) return HEAT_OK;
    int own_gpus = every_rank_has_own_gpu();
    /* a transport counts only where every rank has it (a node may have fewer GPUs than ranks);
     * blocks on a GPU anywhere count everywhere, so that a rank without one refuses with the others
     * (only the root prints a configuration error) */
    long agreed[2] = {!mpi_gpu_aware(), on_gpu};
    HEAT_CALL(par_max_longs(agreed, 2));
    on_gpu = (int)agreed[1];
    int cuda_error, mpi = !agreed[0], ipc = ipc_maps(wanted, on_gpu, own_gpus, &cuda_error);
#ifdef HEATSOLVE_NCCL
    int nccl = own_gpus;
#else
    int nccl = 0;
#endif
    /* a refused "mpi" or "nccl" probes the copy engines too, to suggest them only where they work */
    int refused = (wanted == TRANSPORT_MPI && !mpi) || (wanted == TRANSPORT_NCCL && !nccl);
    if (refused) ipc = ipc_maps(TRANSPORT_IPC, on_gpu, own_gpus, &cuda_error);
    if (wanted == TRANSPORT_MPI && !mpi)
        return refuse("mpi", "this MPI library is not GPU-aware (MPIX_Query_cuda_support)",
                      instead_of(wanted, ipc, nccl, mpi));
#ifdef HEATSOLVE_NCCL
    if (wanted == TRANSPORT_NCCL && !nccl)
        return refuse("nccl", "NCCL needs a GPU for each rank, and some ranks share one",
                      instead_of(wanted, ipc, nccl, mpi));
#else
    if (wanted == TRANSPORT_NCCL)
        return refuse("nccl", "this heatsolve was built without NCCL (CMake did not find nccl.h)",
                      instead_of(wanted, ipc, nccl, mpi));
#endif
    if (wanted == TRANSPORT_IPC && !ipc_usable())
        return refuse("ipc", "CUDA IPC maps memory between processes of one node, and the ranks run on several",
                      instead_of(wanted, ipc, nccl, mpi));
    if (wanted == TRANSPORT_IPC && on_gpu && !ipc) {
        char why[400];
        snprintf(why, sizeof why, "CUDA IPC could not map one rank's GPU memory or event into another rank (%s: "
                 "%s): every rank needs a GPU, the ranks' processes one IPC namespace (a container: a shared "
                 "/dev/shm) and their GPUs peer access, which MIG slices lack",
                 cudaGetErrorName((cudaError_t)cuda_error), cudaGetErrorString((cudaError_t)cuda_error));
        return refuse("ipc", why, instead_of(wanted, ipc, nccl, mpi));
    }
    chosen_ = wanted != TRANSPORT_AUTO ? wanted
              : ipc                    ? TRANSPORT_IPC
              : nccl                   ? TRANSPORT_NCCL
              : mpi                    ? TRANSPORT_MPI
                                       : TRANSPORT_HOST;
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
