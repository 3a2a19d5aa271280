/*
 * GPU-to-GPU halo transport through the GPUs' copy engines (NVIDIA, ranks of
 * one node): each rank maps the memory its neighbours receive into (CUDA
 * IPC) and copies its faces straight into it with cudaMemcpyAsync on the
 * stream that computed them. NCCL moves a face with CTAs that take SMs from
 * the interior update running beside it, at about a twentieth of the link's
 * bandwidth with the few CTAs it is allowed (docs/PERFORMANCE.md, "Models");
 * a copy engine takes no SM and runs at the link's pace.
 *
 * A copy into another process's memory must wait until that process no
 * longer reads what it overwrites, and the receiver must wait for the copy.
 * Both waits stay on the GPUs' streams, through events shared between the
 * processes; the hosts only tell each other that an event was recorded
 * (stream waits take the record that came before them on the host). Per
 * exchange, for every exchanged face:
 *   1. the receiver records "ready" on its stream (what read the old ghosts
 *      is queued before it) and sends the sender where its receive buffer
 *      is: the allocation's IPC handle and the offset in it;
 *   2. the sender's stream waits for "ready", copies, and records "sent";
 *      it tells the receiver;
 *   3. the receiver's stream waits for "sent".
 * The hosts wait only for each other's calls, never for a GPU.
 */
#include <cuda.h>
#include <cuda_runtime.h>
#include <mpi.h>
#include <string.h>

#include "../solver/error.h"
#include "ipc_transport.h"
#include "parallel.h"

#define CUDA_CALL(call)                                                                                      \
    do {                                                                                                     \
        cudaError_t cuda_status_ = (call);                                                                   \
        if (cuda_status_ != cudaSuccess)                                                                     \
            return heat_internal_error("rank %d: %s failed: %s", par_rank(), #call,                           \
                                       cudaGetErrorString(cuda_status_));                                     \
    } while (0)

#define MPI_CALL(call)                                                                                       \
    HEAT_CHECK((call) == MPI_SUCCESS, "rank %d: %s failed in the copy-engine halo exchange", par_rank(), #call)

enum { TAG_EVENTS = 1, TAG_READY = 8, TAG_SENT = 16 };

/* Where a receive buffer is, as its owner tells the sender. */
typedef struct ipc_place {
    cudaIpcMemHandle_t allocation;
    unsigned long long offset;
} ipc_place;

/* A neighbour's allocation mapped into this process, found again by its handle. */
enum { MAX_MAPPED = 64 };
typedef struct ipc_mapping {
    cudaIpcMemHandle_t handle;
    char *at;
} ipc_mapping;

static MPI_Comm comm_ = MPI_COMM_NULL;
static int ready_ = 0;
static heat_decomp connected_; /* the faces and neighbours the events were traded for */
static cudaEvent_t own_ready_[FACE_COUNT], own_sent_[FACE_COUNT];   /* this rank's, recorded here */
static cudaEvent_t peer_ready_[FACE_COUNT], peer_sent_[FACE_COUNT]; /* the neighbours', waited for here */
static ipc_mapping mapped_[MAX_MAPPED];

static int create_shared_event(cudaEvent_t *event)
{
    CUDA_CALL(cudaEventCreateWithFlags(event, cudaEventDisableTiming | cudaEventInterprocess));
    return HEAT_OK;
}

/* Face f's events go to the neighbour across f; its own for the face that
 * faces us (f ^ 1) come back. Tags carry the face, so both faces along an
 * axis may have the same neighbour. */
static int trade_event_handles(const heat_decomp *d, int f)
{
    cudaIpcEventHandle_t mine[2], theirs[2];
    CUDA_CALL(cudaIpcGetEventHandle(&mine[0], own_ready_[f]));
    CUDA_CALL(cudaIpcGetEventHandle(&mine[1], own_sent_[f]));
    MPI_CALL(MPI_Sendrecv(mine, sizeof mine, MPI_BYTE, d->neighbour[f], TAG_EVENTS + f, theirs, sizeof theirs,
                          MPI_BYTE, d->neighbour[f], TAG_EVENTS + (f ^ 1), comm_, MPI_STATUS_IGNORE));
    CUDA_CALL(cudaIpcOpenEventHandle(&peer_ready_[f], theirs[0]));
    CUDA_CALL(cudaIpcOpenEventHandle(&peer_sent_[f], theirs[1]));
    return HEAT_OK;
}

static void destroy_events(void)
{
    for (int f = 0; f < FACE_COUNT; ++f) {
        if (own_ready_[f]) (void)cudaEventDestroy(own_ready_[f]), own_ready_[f] = NULL;
        if (own_sent_[f]) (void)cudaEventDestroy(own_sent_[f]), own_sent_[f] = NULL;
        if (peer_ready_[f]) (void)cudaEventDestroy(peer_ready_[f]), peer_ready_[f] = NULL;
        if (peer_sent_[f]) (void)cudaEventDestroy(peer_sent_[f]), peer_sent_[f] = NULL;
    }
}

static int same_neighbours(const heat_decomp *a, const heat_decomp *b)
{
    if (a->exchanged != b->exchanged) return 0;
    for (int f = 0; f < FACE_COUNT; ++f)
        if (a->exchanged & 1u << f && a->neighbour[f] != b->neighbour[f]) return 0;
    return 1;
}

/* Collective, at the first exchange, which every rank reaches together, and
 * again where the layout changed (bench times several in one process). */
static int connect(const heat_decomp *d)
{
    if (comm_ == MPI_COMM_NULL) MPI_CALL(MPI_Comm_dup(MPI_COMM_WORLD, &comm_));
    destroy_events();
    for (int f = 0; f < FACE_COUNT; ++f) {
        if (!(d->exchanged & 1u << f)) continue;
        HEAT_CALL(create_shared_event(&own_ready_[f]));
        HEAT_CALL(create_shared_event(&own_sent_[f]));
    }
    for (int f = 0; f < FACE_COUNT; ++f)
        if (d->exchanged & 1u << f) HEAT_CALL(trade_event_handles(d, f));
    connected_ = *d;
    ready_ = 1;
    return HEAT_OK;
}

/* This rank's allocations as it hands them out: the same handle for the same
 * allocation every time, so that the neighbour maps each once. The driver's
 * buffer id tells allocations apart even where a new one takes the address
 * of a freed one. */
enum { MAX_EXPORTED = 64 };
typedef struct ipc_export {
    unsigned long long buffer_id;
    cudaIpcMemHandle_t handle;
} ipc_export;
static ipc_export exported_[MAX_EXPORTED];
static int exported_count_ = 0, exported_next_ = 0;

static int handle_of(CUdeviceptr base, cudaIpcMemHandle_t *handle)
{
    unsigned long long id = 0;
    CUresult status = cuPointerGetAttribute(&id, CU_POINTER_ATTRIBUTE_BUFFER_ID, base);
    HEAT_CHECK(status == CUDA_SUCCESS, "rank %d: the buffer id of a halo buffer: driver error %d", par_rank(),
               (int)status);
    for (int e = 0; e < exported_count_; ++e)
        if (exported_[e].buffer_id == id) return *handle = exported_[e].handle, HEAT_OK;
    CUDA_CALL(cudaIpcGetMemHandle(handle, (void *)base));
    exported_[exported_next_] = (ipc_export){id, *handle}; /* the oldest makes room */
    exported_next_ = (exported_next_ + 1) % MAX_EXPORTED;
    exported_count_ += exported_count_ < MAX_EXPORTED;
    return HEAT_OK;
}

/* The allocation holding `buffer` (IPC hands out whole allocations) and the
 * buffer's offset in it. */
static int place_of(void *buffer, ipc_place *place)
{
    CUdeviceptr base = 0;
    size_t size = 0;
    CUresult status = cuMemGetAddressRange(&base, &size, (CUdeviceptr)buffer);
    HEAT_CHECK(status == CUDA_SUCCESS, "rank %d: cuMemGetAddressRange of a halo buffer failed (%d)", par_rank(),
               (int)status);
    memset(place, 0, sizeof *place);
    HEAT_CALL(handle_of(base, &place->allocation));
    place->offset = (unsigned long long)((CUdeviceptr)buffer - base);
    return HEAT_OK;
}

/* The neighbour's allocation in this process's addresses, mapped at first use. */
static int mapped_address(const ipc_place *place, char **address)
{
    int free_slot = -1;
    for (int m = 0; m < MAX_MAPPED; ++m) {
        if (!mapped_[m].at) {
            if (free_slot < 0) free_slot = m;
            continue;
        }
        if (memcmp(&mapped_[m].handle, &place->allocation, sizeof place->allocation) == 0)
            return *address = mapped_[m].at + place->offset, HEAT_OK;
    }
    HEAT_CHECK(free_slot >= 0, "rank %d: more than %d neighbour buffers to map", par_rank(), MAX_MAPPED);
    void *at = NULL;
    cudaError_t status = cudaIpcOpenMemHandle(&at, place->allocation, cudaIpcMemLazyEnablePeerAccess);
    if (status != cudaSuccess) /* no peer access between these GPUs, MIG slices, a container without IPC */
        return heat_error(HEAT_ERR_RUNTIME,
                          "rank %d: parallel.transport = \"ipc\": CUDA IPC could not map a neighbour's GPU memory "
                          "(%s); use \"auto\", \"nccl\" or \"host\"",
                          par_rank(), cudaGetErrorString(status));
    mapped_[free_slot] = (ipc_mapping){place->allocation, at};
    *address = (char *)at + place->offset;
    return HEAT_OK;
}

/* Step 1: every receive buffer is free once this stream gets here. */
static int announce_receive_buffers(const heat_decomp *d, void *const recv[FACE_COUNT], cudaStream_t stream,
                                    ipc_place places[FACE_COUNT], MPI_Request *requests, int *count)
{
    for (int g = 0; g < FACE_COUNT; ++g) {
        if (!(d->exchanged & 1u << g)) continue;
        CUDA_CALL(cudaEventRecord(own_ready_[g], stream));
        HEAT_CALL(place_of(recv[g], &places[g]));
        MPI_CALL(MPI_Isend(&places[g], sizeof places[g], MPI_BYTE, d->neighbour[g], TAG_READY + g, comm_,
                           &requests[(*count)++]));
    }
    return HEAT_OK;
}

/* Step 2: face f lands in the neighbour's face f ^ 1. */
static int copy_faces(const heat_decomp *d, void *const send[FACE_COUNT], const size_t bytes[FACE_COUNT],
                      const ipc_place theirs[FACE_COUNT], cudaStream_t stream, MPI_Request *requests, int *count)
{
    static const char nothing = 0;
    for (int f = 0; f < FACE_COUNT; ++f) {
        if (!(d->exchanged & 1u << f)) continue;
        char *destination = NULL;
        HEAT_CALL(mapped_address(&theirs[f], &destination));
        CUDA_CALL(cudaStreamWaitEvent(stream, peer_ready_[f], 0));
        CUDA_CALL(cudaMemcpyAsync(destination, send[f], bytes[f], cudaMemcpyDeviceToDevice, stream));
        CUDA_CALL(cudaEventRecord(own_sent_[f], stream));
        MPI_CALL(MPI_Isend(&nothing, 0, MPI_BYTE, d->neighbour[f], TAG_SENT + (f ^ 1), comm_, &requests[(*count)++]));
    }
    return HEAT_OK;
}

int ipc_exchange(const heat_decomp *d, void *const send[FACE_COUNT], void *const recv[FACE_COUNT],
                 const size_t bytes[FACE_COUNT], void *stream)
{
    if (!ready_ || !same_neighbours(d, &connected_)) HEAT_CALL(connect(d));
    cudaStream_t on = (cudaStream_t)stream;
    ipc_place mine[FACE_COUNT], theirs[FACE_COUNT];
    MPI_Request requests[4 * FACE_COUNT];
    int count = 0;
    for (int f = 0; f < FACE_COUNT; ++f) /* where face f's copy goes: the neighbour's face f ^ 1 */
        if (d->exchanged & 1u << f)
            MPI_CALL(MPI_Irecv(&theirs[f], sizeof theirs[f], MPI_BYTE, d->neighbour[f], TAG_READY + (f ^ 1), comm_,
                               &requests[count++]));
    HEAT_CALL(announce_receive_buffers(d, recv, on, mine, requests, &count));
    MPI_CALL(MPI_Waitall(count, requests, MPI_STATUSES_IGNORE));
    count = 0;
    char arrived[FACE_COUNT];
    for (int g = 0; g < FACE_COUNT; ++g)
        if (d->exchanged & 1u << g)
            MPI_CALL(MPI_Irecv(&arrived[g], 0, MPI_BYTE, d->neighbour[g], TAG_SENT + g, comm_, &requests[count++]));
    HEAT_CALL(copy_faces(d, send, bytes, theirs, on, requests, &count));
    MPI_CALL(MPI_Waitall(count, requests, MPI_STATUSES_IGNORE));
    for (int g = 0; g < FACE_COUNT; ++g) /* step 3 */
        if (d->exchanged & 1u << g) CUDA_CALL(cudaStreamWaitEvent(on, peer_sent_[g], 0));
    return HEAT_OK;
}

/* Copy engines reach another process's memory on the same node only. */
int ipc_usable(void) { return par_node_size() == par_size(); }

const char *ipc_transport_name(void) { return "copy engines, GPU to GPU (CUDA IPC)"; }

void ipc_release(void)
{
    if (!ready_) return;
    for (int m = 0; m < MAX_MAPPED; ++m)
        if (mapped_[m].at) (void)cudaIpcCloseMemHandle(mapped_[m].at), mapped_[m].at = NULL;
    destroy_events();
    (void)MPI_Comm_free(&comm_);
    ready_ = 0;
}
