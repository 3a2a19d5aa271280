/*
 * GPU-to-GPU halo transport through the GPUs' copy engines (NVIDIA, ranks of
 * one node): each rank maps the memory its neighbours receive into (CUDA
 * IPC) and copies its faces straight into it with cudaMemcpyAsync on the
 * stream that computed them. NCCL moves a face with CTAs that take SMs from
 * the interior update running beside it, at a fraction of the link's
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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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

enum { TAG_EVENTS = 1, TAG_READY = 8, TAG_SENT = 16, TAG_CLOSED = 24 };

/* How long a teardown waits for the neighbours to let go of its memory. */
static const double LET_GO_SECONDS = 10.0;

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

/* Faces whose halo goes to another rank: a periodic axis with one rank along
 * it is the rank's own neighbour, and its faces are a plain copy. */
static int crosses(const heat_decomp *d, int f)
{
    return d->exchanged & 1u << f && d->neighbour[f] != par_rank();
}

/* What to suggest where the copy engines cannot serve. */
static const char *other_transports(void)
{
#ifdef HEATSOLVE_NCCL
    return "use \"auto\", \"nccl\", \"mpi\" or \"host\"";
#else
    return "use \"auto\", \"mpi\" or \"host\"";
#endif
}

static int open_shared_event(cudaEvent_t *event, cudaIpcEventHandle_t handle)
{
    cudaError_t status = cudaIpcOpenEventHandle(event, handle);
    if (status != cudaSuccess) /* a container without a shared /dev/shm, no IPC between these processes */
        return heat_error(HEAT_ERR_RUNTIME,
                          "rank %d: parallel.transport = \"ipc\": CUDA IPC could not open a neighbour's event (%s); %s",
                          par_rank(), cudaGetErrorString(status), other_transports());
    return HEAT_OK;
}

/* Face f's events go to the neighbour across f; its own for the face that
 * faces us (f ^ 1) come back. Tags carry the face, so both faces along an
 * axis may have the same neighbour; every message is posted before any is
 * waited for, so a ring of ranks (a periodic axis) cannot deadlock. */
static int trade_event_handles(const heat_decomp *d)
{
    cudaIpcEventHandle_t mine[FACE_COUNT][2], theirs[FACE_COUNT][2];
    MPI_Request requests[2 * FACE_COUNT];
    int count = 0;
    for (int f = 0; f < FACE_COUNT; ++f) {
        if (!crosses(d, f)) continue;
        CUDA_CALL(cudaIpcGetEventHandle(&mine[f][0], own_ready_[f]));
        CUDA_CALL(cudaIpcGetEventHandle(&mine[f][1], own_sent_[f]));
        MPI_CALL(MPI_Irecv(theirs[f], sizeof theirs[f], MPI_BYTE, d->neighbour[f], TAG_EVENTS + (f ^ 1), comm_,
                           &requests[count++]));
        MPI_CALL(MPI_Isend(mine[f], sizeof mine[f], MPI_BYTE, d->neighbour[f], TAG_EVENTS + f, comm_,
                           &requests[count++]));
    }
    MPI_CALL(MPI_Waitall(count, requests, MPI_STATUSES_IGNORE));
    for (int f = 0; f < FACE_COUNT; ++f) {
        if (!crosses(d, f)) continue;
        HEAT_CALL(open_shared_event(&peer_ready_[f], theirs[f][0]));
        HEAT_CALL(open_shared_event(&peer_sent_[f], theirs[f][1]));
    }
    return HEAT_OK;
}

static void destroy_events(cudaEvent_t events[FACE_COUNT])
{
    for (int f = 0; f < FACE_COUNT; ++f)
        if (events[f]) (void)cudaEventDestroy(events[f]), events[f] = NULL;
}

static int same_neighbours(const heat_decomp *a, const heat_decomp *b)
{
    if (a->exchanged != b->exchanged) return 0;
    for (int f = 0; f < FACE_COUNT; ++f)
        if (a->exchanged & 1u << f && a->neighbour[f] != b->neighbour[f]) return 0;
    return 1;
}

static void close_mappings(void)
{
    for (int m = 0; m < MAX_MAPPED; ++m)
        if (mapped_[m].at) (void)cudaIpcCloseMemHandle(mapped_[m].at), mapped_[m].at = NULL;
}

/* Every neighbour has let go of this rank's memory and events (closed its
 * mappings, destroyed its copies of the events) once its message is here.
 * Bounded: a rank that failed alone reaches its teardown while its
 * neighbours still step; it goes on after the bound, and its exit ends
 * the job (par_finalize). */
static void wait_for_neighbours_to_let_go(void)
{
    static const char nothing = 0;
    char closed[FACE_COUNT];
    MPI_Request requests[2 * FACE_COUNT];
    int count = 0, done = 0;
    for (int f = 0; f < FACE_COUNT; ++f) {
        if (!crosses(&connected_, f)) continue;
        if (MPI_Irecv(&closed[f], 0, MPI_BYTE, connected_.neighbour[f], TAG_CLOSED + (f ^ 1), comm_,
                      &requests[count]) == MPI_SUCCESS)
            ++count;
        if (MPI_Isend(&nothing, 0, MPI_BYTE, connected_.neighbour[f], TAG_CLOSED + f, comm_, &requests[count]) ==
            MPI_SUCCESS)
            ++count;
    }
    for (double waited = 0.0; !done && waited < LET_GO_SECONDS; waited += 1e-3) {
        if (MPI_Testall(count, requests, &done, MPI_STATUSES_IGNORE) != MPI_SUCCESS) return;
        if (!done) nanosleep(&(struct timespec){0, 1000000}, NULL);
    }
    for (int r = 0; !done && r < count; ++r)
        if (requests[r] != MPI_REQUEST_NULL) (void)MPI_Cancel(&requests[r]), (void)MPI_Request_free(&requests[r]);
}

/* Collective with the neighbours, where the buffers the exchanges used are
 * freed (the backend's teardown, which every rank of a layout reaches
 * together): an owner may free memory that another process maps, or destroy
 * an event that another process opened, only once that process let go. */
static void disconnect(void)
{
    if (!ready_) return;
    (void)cudaDeviceSynchronize(); /* no copy or wait of ours is still queued */
    close_mappings();
    destroy_events(peer_ready_), destroy_events(peer_sent_);
    wait_for_neighbours_to_let_go();
    destroy_events(own_ready_), destroy_events(own_sent_);
    ready_ = 0;
}

/* Collective, at the first exchange, which every rank reaches together, and
 * again after a teardown or where the layout changed. */
static int connect(const heat_decomp *d)
{
    disconnect();
    if (comm_ == MPI_COMM_NULL) MPI_CALL(MPI_Comm_dup(MPI_COMM_WORLD, &comm_));
    for (int f = 0; f < FACE_COUNT; ++f) {
        if (!crosses(d, f)) continue;
        HEAT_CALL(create_shared_event(&own_ready_[f]));
        HEAT_CALL(create_shared_event(&own_sent_[f]));
    }
    HEAT_CALL(trade_event_handles(d));
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
                          "(%s); %s",
                          par_rank(), cudaGetErrorString(status), other_transports());
    mapped_[free_slot] = (ipc_mapping){place->allocation, at};
    *address = (char *)at + place->offset;
    return HEAT_OK;
}

/* Faces this exchange moves to another rank (a face without bytes is not
 * moved: the fused sweeps' deep exchange passes only the faces it cuts). */
static int moves(const heat_decomp *d, const size_t bytes[FACE_COUNT], int f)
{
    return crosses(d, f) && bytes[f] > 0;
}

/* Step 1: every receive buffer is free once this stream gets here. */
static int announce_receive_buffers(const heat_decomp *d, void *const recv[FACE_COUNT],
                                    const size_t bytes[FACE_COUNT], cudaStream_t stream, ipc_place places[FACE_COUNT],
                                    MPI_Request *requests, int *count)
{
    for (int g = 0; g < FACE_COUNT; ++g) {
        if (!moves(d, bytes, g)) continue;
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
        if (!moves(d, bytes, f)) continue;
        char *destination = NULL;
        HEAT_CALL(mapped_address(&theirs[f], &destination));
        CUDA_CALL(cudaStreamWaitEvent(stream, peer_ready_[f], 0));
        CUDA_CALL(cudaMemcpyAsync(destination, send[f], bytes[f], cudaMemcpyDeviceToDevice, stream));
        CUDA_CALL(cudaEventRecord(own_sent_[f], stream));
        MPI_CALL(MPI_Isend(&nothing, 0, MPI_BYTE, d->neighbour[f], TAG_SENT + (f ^ 1), comm_, &requests[(*count)++]));
    }
    return HEAT_OK;
}

/* A periodic axis with one rank along it: each face's planes are the
 * opposite face's ghosts, on this stream. */
static int copy_own_faces(const heat_decomp *d, void *const send[FACE_COUNT], void *const recv[FACE_COUNT],
                          const size_t bytes[FACE_COUNT], cudaStream_t stream)
{
    for (int f = 0; f < FACE_COUNT; ++f)
        if (d->exchanged & 1u << f && d->neighbour[f] == par_rank() && bytes[f] > 0)
            CUDA_CALL(cudaMemcpyAsync(recv[f ^ 1], send[f], bytes[f], cudaMemcpyDeviceToDevice, stream));
    return HEAT_OK;
}

static int exchange_faces(const heat_decomp *d, void *const send[FACE_COUNT], void *const recv[FACE_COUNT],
                          const size_t bytes[FACE_COUNT], cudaStream_t stream)
{
    ipc_place mine[FACE_COUNT], theirs[FACE_COUNT];
    MPI_Request requests[4 * FACE_COUNT];
    int count = 0;
    for (int f = 0; f < FACE_COUNT; ++f) /* where face f's copy goes: the neighbour's face f ^ 1 */
        if (moves(d, bytes, f))
            MPI_CALL(MPI_Irecv(&theirs[f], sizeof theirs[f], MPI_BYTE, d->neighbour[f], TAG_READY + (f ^ 1), comm_,
                               &requests[count++]));
    HEAT_CALL(announce_receive_buffers(d, recv, bytes, stream, mine, requests, &count));
    MPI_CALL(MPI_Waitall(count, requests, MPI_STATUSES_IGNORE));
    count = 0;
    char arrived[FACE_COUNT];
    for (int g = 0; g < FACE_COUNT; ++g)
        if (moves(d, bytes, g))
            MPI_CALL(MPI_Irecv(&arrived[g], 0, MPI_BYTE, d->neighbour[g], TAG_SENT + g, comm_, &requests[count++]));
    HEAT_CALL(copy_faces(d, send, bytes, theirs, stream, requests, &count));
    MPI_CALL(MPI_Waitall(count, requests, MPI_STATUSES_IGNORE));
    for (int g = 0; g < FACE_COUNT; ++g) /* step 3 */
        if (moves(d, bytes, g)) CUDA_CALL(cudaStreamWaitEvent(stream, peer_sent_[g], 0));
    return copy_own_faces(d, send, recv, bytes, stream);
}

/* A rank that fails here leaves its neighbours waiting for its messages,
 * and errors that every rank meets alike end no job (a bench's): this one
 * ends the job itself, after its message. */
int ipc_exchange(const heat_decomp *d, void *const send[FACE_COUNT], void *const recv[FACE_COUNT],
                 const size_t bytes[FACE_COUNT], void *stream)
{
    int status = ready_ && same_neighbours(d, &connected_) ? HEAT_OK : connect(d);
    if (status == HEAT_OK) status = exchange_faces(d, send, recv, bytes, (cudaStream_t)stream);
    if (status != HEAT_OK) {
        fprintf(stderr, "heatsolve: rank %d: the copy-engine halo exchange failed; ending the job so that no rank "
                        "waits for this one\n", par_rank());
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    return status;
}

/* Copy engines reach another process's memory on the same node only. */
int ipc_usable(void) { return par_node_size() == par_size(); }

/* What a rank shows the others in ipc_reaches_every_rank: a small allocation
 * and an event of its GPU, as the exchanges share theirs, or why it has none. */
typedef struct ipc_card {
    cudaIpcMemHandle_t memory;
    cudaIpcEventHandle_t event;
    cudaError_t error; /* cudaSuccess where the card holds both */
} ipc_card;

/* The GPU the backend will take (backend_hip.hip: the node-local rank modulo
 * the GPUs this rank sees), with a small allocation and event to show. */
static cudaError_t make_card(ipc_card *card, void **memory, cudaEvent_t *event)
{
    int gpus = 0;
    memset(card, 0, sizeof *card);
    cudaError_t e = cudaGetDeviceCount(&gpus);
    if (e == cudaSuccess && gpus == 0) e = cudaErrorNoDevice;
    if (e == cudaSuccess) e = cudaSetDevice(par_node_rank() % gpus);
    if (e == cudaSuccess) e = cudaMalloc(memory, 256);
    if (e == cudaSuccess) e = cudaIpcGetMemHandle(&card->memory, *memory);
    if (e == cudaSuccess) e = cudaEventCreateWithFlags(event, cudaEventDisableTiming | cudaEventInterprocess);
    if (e == cudaSuccess) e = cudaIpcGetEventHandle(&card->event, *event);
    return e;
}

/* Maps another rank's allocation and opens its event, then lets go of both. */
static cudaError_t opens(const ipc_card *card)
{
    void *at = NULL;
    cudaEvent_t event = NULL;
    cudaError_t e = cudaIpcOpenMemHandle(&at, card->memory, cudaIpcMemLazyEnablePeerAccess);
    if (e != cudaSuccess) return e;
    (void)cudaIpcCloseMemHandle(at);
    e = cudaIpcOpenEventHandle(&event, card->event);
    if (e == cudaSuccess) (void)cudaEventDestroy(event);
    return e;
}

/* Collective over the whole job. Processes in separate IPC namespaces (a
 * container without a shared /dev/shm), GPUs without peer access, MIG slices
 * or devices a cgroup hides fail here rather than at the first exchange. The
 * same calls on every rank whatever fails, so none waits. */
int ipc_reaches_every_rank(int *cuda_error)
{
    int ranks = par_size();
    ipc_card mine, *cards = calloc((size_t)ranks, sizeof *cards);
    void *memory = NULL;
    cudaEvent_t event = NULL;
    mine.error = make_card(&mine, &memory, &event);
    /* a few bytes a rank: agreed on before the gather, which needs them everywhere */
    long failed = cards ? cudaSuccess : cudaErrorMemoryAllocation;
    if (par_max_longs(&failed, 1) != HEAT_OK) failed = cudaErrorUnknown;
    if (!failed && MPI_Allgather(&mine, (int)sizeof mine, MPI_BYTE, cards, (int)sizeof mine, MPI_BYTE,
                                 MPI_COMM_WORLD) != MPI_SUCCESS)
        failed = cudaErrorUnknown;
    for (int r = 0; !failed && r < ranks; ++r)
        failed = cards[r].error != cudaSuccess ? cards[r].error : r != par_rank() ? opens(&cards[r]) : cudaSuccess;
    (void)cudaGetLastError(); /* a failed open is this probe's answer, not the backend's error */
    /* every rank has let go of the others' memory and events once this returns; the
     * largest error any rank met is the one every rank reports */
    if (par_max_longs(&failed, 1) != HEAT_OK) failed = cudaErrorUnknown;
    if (event) (void)cudaEventDestroy(event);
    if (memory) (void)cudaFree(memory);
    free(cards);
    *cuda_error = (int)failed;
    return !failed;
}

const char *ipc_transport_name(void) { return "copy engines, GPU to GPU (CUDA IPC)"; }

int ipc_free(void *buffer)
{
    (void)buffer;
    disconnect(); /* the first free of a teardown; the buffer itself is the caller's to free */
    return 0;
}

void ipc_release(void)
{
    disconnect();
    if (comm_ != MPI_COMM_NULL) (void)MPI_Comm_free(&comm_);
}
