/*
 * parallel.h with MPI. The main thread steps (halo exchange, agreement);
 * the checkpoint writer's thread sends and receives checkpoint parts on a
 * communicator of its own (parts_), which needs MPI_THREAD_MULTIPLE; where
 * the library gives less, there are no parts. Every call's status is checked:
 * the communicators return errors instead of aborting, and a failed call is
 * reported with the rank and what it was doing.
 */
#define _GNU_SOURCE /* sched_getaffinity */
#include "parallel.h"

#include <limits.h>
#include <mpi.h>
#include <sched.h>
#include <sys/prctl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../solver/error.h"

static int rank_ = 0, size_ = 1, node_rank_ = 0, node_size_ = 1, node_cores_ = 1;
static MPI_Comm cart_ = MPI_COMM_NULL, parts_ = MPI_COMM_NULL;
static char description_[160];

/* The messages posted and not yet waited for, with their buffers (one writer thread a rank posts). */
static struct {
    MPI_Request *requests;
    void **buffers;
    int count, capacity;
} posted;

static int check(int code, const char *what)
{
    if (code == MPI_SUCCESS) return HEAT_OK;
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(code, text, &len);
    return heat_internal_error("rank %d: %s failed: %s", rank_, what, text);
}

static MPI_Comm comm(void) { return cart_ != MPI_COMM_NULL ? cart_ : MPI_COMM_WORLD; }

/* The cores that any rank of the node may run on: the union of their
 * affinity masks (with --bind-to none each sees them all; bound, each its own). */
static int node_union_cores(MPI_Comm node)
{
    cpu_set_t mine, all;
    CPU_ZERO(&mine);
    if (sched_getaffinity(0, sizeof mine, &mine) != 0) return 1;
    if (MPI_Allreduce(&mine, &all, (int)sizeof mine, MPI_BYTE, MPI_BOR, node) != MPI_SUCCESS) return CPU_COUNT(&mine);
    return CPU_COUNT(&all);
}

#ifndef HEATSOLVE_DEVICE_TRANSPORT
/* MPI_Init has hwloc map the node in every rank, its PCI devices included
 * (a walk of /sys/bus/pci and the PCI names database, and the plugins that
 * look for GPUs and an X display): a good part of a rank's start-up CPU time.
 * Only network transports place themselves by those devices; shared memory
 * needs the cores and caches alone. Unless the user chose hwloc's components. */
static void skip_io_topology(void)
{
    if (getenv("HWLOC_COMPONENTS") || getenv("HWLOC_PLUGINS_BLACKLIST")) return;
    setenv("HWLOC_COMPONENTS", "-linuxio,-pci", 0);
    setenv("HWLOC_PLUGINS_BLACKLIST", "hwloc_pci,hwloc_gl,hwloc_opencl,hwloc_cuda,hwloc_nvml,hwloc_rsmi,hwloc_levelzero", 0);
}
#endif

/* Open MPI probes UCX's network transports at start-up even when every rank
 * shares one node, which costs a job of a few seconds a fifth of a second.
 * There, shared memory is the transport anyway: ob1 over vader starts at once.
 * Only where mpirun placed every rank on this node (its OMPI_COMM_WORLD_*
 * variables say so), the user chose no pml or btl, and the halos come from
 * host memory (a GPU build may hand device pointers to a CUDA-aware UCX). */
static void prefer_shared_memory_on_one_node(void)
{
#ifndef HEATSOLVE_DEVICE_TRANSPORT
    const char *local = getenv("OMPI_COMM_WORLD_LOCAL_SIZE"), *world = getenv("OMPI_COMM_WORLD_SIZE");
    if (!local || !world || strcmp(local, world) != 0) return;
    if (getenv("OMPI_MCA_pml") || getenv("OMPI_MCA_btl")) return;
    setenv("OMPI_MCA_pml", "ob1", 0);
    setenv("OMPI_MCA_btl", "self,vader", 0);
    skip_io_topology();
#endif
}

/* Open MPI waits for a message by polling without pause unless it knows
 * the node oversubscribed, and ranks that fill the cores are not, to it:
 * each rank's checkpoint writer, mpirun itself and whatever else runs there
 * then wait for a core that a rank holds only to poll. So where mpirun
 * started as many ranks on this node as this rank may run on cores, and the
 * user chose nothing, a waiting rank yields the core between polls; with
 * nothing else to run there the yield returns at once. */
static void yield_when_ranks_fill_cores(void)
{
    const char *local = getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
    cpu_set_t mine;
    if (!local || getenv("OMPI_MCA_mpi_yield_when_idle") || sched_getaffinity(0, sizeof mine, &mine) != 0) return;
    if (atoi(local) >= CPU_COUNT(&mine)) setenv("OMPI_MCA_mpi_yield_when_idle", "1", 0);
}

/* Where the ranks fill the node's cores, their waits sleep between looks
 * (wait_halo_sleeping, wait_without_core); Linux lets a sleep overrun by
 * its timer slack (50 us by default), several times the pause asked for,
 * and a halo that arrives during one waits for its end. A slack of 1 us
 * keeps the pauses as asked; threads started later (the checkpoint
 * writer) inherit it. */
static void sleep_on_time(void)
{
    if (node_size_ < node_cores_) return;
    /* A kernel that refuses keeps the default slack: the waits only wake later, as before. */
    if (prctl(PR_SET_TIMERSLACK, 1000UL, 0UL, 0UL, 0UL) != 0) return;
}

int par_init(int *argc, char ***argv)
{
    int provided = 0;
    prefer_shared_memory_on_one_node();
    yield_when_ranks_fill_cores();
    if (MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS) {
        fprintf(stderr, "heatsolve: error: MPI_Init_thread failed; is this run started by mpirun or srun?\n");
        return HEAT_ERR_RUNTIME;
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
    if (provided == MPI_THREAD_MULTIPLE && size_ > 1 && MPI_Comm_dup(MPI_COMM_WORLD, &parts_) == MPI_SUCCESS)
        MPI_Comm_set_errhandler(parts_, MPI_ERRORS_RETURN);
    MPI_Comm node;
    if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node) == MPI_SUCCESS) {
        MPI_Comm_rank(node, &node_rank_);
        MPI_Comm_size(node, &node_size_);
        node_cores_ = node_union_cores(node);
        MPI_Comm_free(&node);
    }
    sleep_on_time();
    char library[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_Get_library_version(library, &len);
    library[strcspn(library, ",\n")] = '\0';
    snprintf(description_, sizeof description_, "MPI (%.100s), %d rank%s", library, size_, size_ == 1 ? "" : "s");
    return HEAT_OK;
}

void par_finalize(int status, int agreed)
{
    /* A rank that failed alone would leave the others waiting in their next
     * collective call: end them all, with this rank's status. */
    if (status != HEAT_OK && !agreed && size_ > 1) {
        fprintf(stderr, "heatsolve: rank %d failed (exit %d); ending the other ranks\n", rank_, status);
        fflush(NULL);
        MPI_Abort(MPI_COMM_WORLD, status);
    }
    par_device_release();
    if (cart_ != MPI_COMM_NULL) MPI_Comm_free(&cart_);
    if (parts_ != MPI_COMM_NULL) MPI_Comm_free(&parts_);
    free(posted.requests), free(posted.buffers);
    MPI_Finalize();
}

int par_rank(void) { return rank_; }
int par_size(void) { return size_; }
int par_node_rank(void) { return node_rank_; }
int par_node_size(void) { return node_size_; }
int par_node_cores(void) { return node_cores_; }
const char *par_description(void) { return description_; }

int par_dims_create(int ranks, int dims[3])
{
    return check(MPI_Dims_create(ranks, 3, dims), "MPI_Dims_create");
}

int par_cart_create(const heat_decomp *d)
{
    if (cart_ != MPI_COMM_NULL) MPI_Comm_free(&cart_);
    /* No reordering: rank r holds the block heat_decomp_rank_of() gives it. */
    HEAT_CALL(check(MPI_Cart_create(MPI_COMM_WORLD, 3, d->dims, d->periodic, 0, &cart_), "MPI_Cart_create"));
    return check(MPI_Comm_set_errhandler(cart_, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
}

/* A message to the neighbour across face f lands in its ghosts of the
 * opposite face f ^ 1: the tag names the receiving face, so the two
 * messages between the same pair of ranks (periodic, two ranks) stay apart. */
/* The exchange in flight (par_halo_start .. par_halo_wait). */
static struct {
    MPI_Request requests[2 * FACE_COUNT];
    int count, arrived;
} halo;

int par_halo_start(const heat_decomp *d, void *const send[FACE_COUNT], void *const recv[FACE_COUNT],
                   const size_t bytes[FACE_COUNT])
{
    HEAT_CHECK(halo.count == 0, "a halo exchange was started before the previous one ended");
    MPI_Request *requests = halo.requests;
    int count = 0;
    halo.arrived = 0;
    for (int f = 0; f < FACE_COUNT; ++f) {
        if (!(d->exchanged & 1u << f)) continue;
        HEAT_CALL(check(MPI_Irecv(recv[f], (int)bytes[f], MPI_BYTE, d->neighbour[f], f, comm(), &requests[count++]),
                        "MPI_Irecv (halo)"));
    }
    for (int f = 0; f < FACE_COUNT; ++f) {
        if (!(d->exchanged & 1u << f)) continue;
        HEAT_CALL(check(MPI_Isend(send[f], (int)bytes[f], MPI_BYTE, d->neighbour[f], f ^ 1, comm(),
                                  &requests[count++]), "MPI_Isend (halo)"));
    }
    halo.count = count;
    return HEAT_OK;
}

int par_halo_progress(void)
{
    if (halo.arrived || halo.count == 0) return 1;
    int status = check(MPI_Testall(halo.count, halo.requests, &halo.arrived, MPI_STATUSES_IGNORE), "MPI_Testall (halo)");
    return status != HEAT_OK ? -1 : halo.arrived;
}

/* Where the ranks fill their node's cores, a halo that is late waits for a
 * rank that lost its core to other work (its checkpoint writer, mpirun):
 * polling, even yielding, keeps this core busy in the scheduler's eyes, so
 * that work stays queued behind the late rank's stepper. Sleeping between
 * looks, after a short spin for the usual few microseconds' delay, lets the
 * scheduler move it here. */
static const double HALO_SPIN_SECONDS = 50e-6;
static const struct timespec HALO_PAUSE = {0, 20000};

/* A blocking exchange starts with the whole transfer ahead of it, and
 * shared memory moves a large message in fragments, a few in each MPI call
 * of either rank: a rank that slept between its looks would make every
 * batch of fragments wait for a pause, and two planes of a face would take
 * a good part of a step's time. It looks without pause for about as long as
 * such a transfer takes when both ranks are there, then sleeps as a late
 * halo's wait does (docs/PERFORMANCE.md, the README's MPI example). */
static const double EXCHANGE_SPIN_SECONDS = 1e-3;

static int wait_halo_sleeping(int count, double spin_seconds)
{
    double start = MPI_Wtime();
    for (;;) {
        int done = 0;
        HEAT_CALL(check(MPI_Testall(count, halo.requests, &done, MPI_STATUSES_IGNORE), "MPI_Testall (halo)"));
        if (done) return HEAT_OK;
        if (MPI_Wtime() - start > spin_seconds) nanosleep(&HALO_PAUSE, NULL);
    }
}

static int wait_halo(double spin_seconds)
{
    int count = halo.count;
    halo.count = 0;
    if (halo.arrived || count == 0) return HEAT_OK;
    if (node_size_ >= node_cores_) return wait_halo_sleeping(count, spin_seconds);
    return check(MPI_Waitall(count, halo.requests, MPI_STATUSES_IGNORE), "MPI_Waitall (halo)");
}

int par_halo_wait(void) { return wait_halo(HALO_SPIN_SECONDS); }

/* Where the ranks outnumber the cores, a rank that spins holds a core that
 * the rank it waits for may need: there it sleeps after the short spin. */
int par_halo_exchange(const heat_decomp *d, void *const send[FACE_COUNT], void *const recv[FACE_COUNT],
                      const size_t bytes[FACE_COUNT])
{
    HEAT_CALL(par_halo_start(d, send, recv, bytes));
    return wait_halo(node_size_ > node_cores_ ? HALO_SPIN_SECONDS : EXCHANGE_SPIN_SECONDS);
}

int par_max_longs(long *values, int count)
{
    return check(MPI_Allreduce(MPI_IN_PLACE, values, count, MPI_LONG, MPI_MAX, comm()), "MPI_Allreduce (agreement)");
}

int par_sum_owned(double *values, long count)
{
    return check(MPI_Allreduce(MPI_IN_PLACE, values, (int)count, MPI_DOUBLE, MPI_SUM, comm()),
                 "MPI_Allreduce (ordered sum)");
}

int par_min_max(double *min, double *max)
{
    HEAT_CALL(check(MPI_Allreduce(MPI_IN_PLACE, min, 1, MPI_DOUBLE, MPI_MIN, comm()), "MPI_Allreduce (min)"));
    return check(MPI_Allreduce(MPI_IN_PLACE, max, 1, MPI_DOUBLE, MPI_MAX, comm()), "MPI_Allreduce (max)");
}

int par_sum_long(long *value)
{
    return check(MPI_Allreduce(MPI_IN_PLACE, value, 1, MPI_LONG, MPI_SUM, comm()), "MPI_Allreduce (count)");
}

int par_broadcast(void *data, size_t bytes)
{
    return check(MPI_Bcast(data, (int)bytes, MPI_BYTE, 0, comm()), "MPI_Bcast");
}

/* The block of `rank` inside the whole compact field, as an MPI datatype. */
static int block_type(const heat_decomp *d, int rank, size_t elem, MPI_Datatype *type)
{
    int offset[3], size[3];
    heat_decomp_block_of(d, rank, offset, size);
    int sizes[3] = {d->global_n[2], d->global_n[1], d->global_n[0]};
    int sub[3] = {size[2], size[1], size[0]}, starts[3] = {offset[2], offset[1], offset[0]};
    MPI_Datatype scalar = elem == 4 ? MPI_FLOAT : MPI_DOUBLE;
    HEAT_CALL(check(MPI_Type_create_subarray(3, sizes, sub, starts, MPI_ORDER_C, scalar, type), "MPI_Type_create_subarray"));
    return check(MPI_Type_commit(type), "MPI_Type_commit");
}

static long local_points(const heat_decomp *d) { return (long)d->local_n[0] * d->local_n[1] * d->local_n[2]; }

enum { FIELD_TAG = 100 };

/* One direction of the field's journey: to_root gathers, else scatters. */
static int move_field(const heat_decomp *d, void *local, void *global, size_t elem, int to_root)
{
    MPI_Datatype scalar = elem == 4 ? MPI_FLOAT : MPI_DOUBLE;
    if (rank_ != 0) {
        int code = to_root ? MPI_Send(local, (int)local_points(d), scalar, 0, FIELD_TAG, comm())
                           : MPI_Recv(local, (int)local_points(d), scalar, 0, FIELD_TAG, comm(), MPI_STATUS_IGNORE);
        return check(code, to_root ? "MPI_Send (field to the writer)" : "MPI_Recv (field from the reader)");
    }
    MPI_Request *requests = malloc(sizeof *requests * (size_t)size_);
    MPI_Datatype *types = malloc(sizeof *types * (size_t)size_);
    HEAT_CHECK(requests && types, "out of memory");
    int status = HEAT_OK, posted = 0;
    for (int r = 1; r < size_ && status == HEAT_OK; ++r) {
        status = block_type(d, r, elem, &types[r - 1]);
        if (status != HEAT_OK) break;
        int code = to_root ? MPI_Irecv(global, 1, types[r - 1], r, FIELD_TAG, comm(), &requests[posted])
                           : MPI_Isend(global, 1, types[r - 1], r, FIELD_TAG, comm(), &requests[posted]);
        status = check(code, to_root ? "MPI_Irecv (field)" : "MPI_Isend (field)");
        if (status == HEAT_OK) ++posted;
    }
    if (status == HEAT_OK) {
        /* The root's own block, while the others travel. */
        MPI_Datatype own;
        status = block_type(d, 0, elem, &own);
        if (status == HEAT_OK) {
            int code = to_root ? MPI_Sendrecv(local, (int)local_points(d), scalar, 0, FIELD_TAG + 1, global, 1, own, 0,
                                              FIELD_TAG + 1, MPI_COMM_SELF, MPI_STATUS_IGNORE)
                               : MPI_Sendrecv(global, 1, own, 0, FIELD_TAG + 1, local, (int)local_points(d), scalar, 0,
                                              FIELD_TAG + 1, MPI_COMM_SELF, MPI_STATUS_IGNORE);
            status = check(code, "MPI_Sendrecv (own block)");
            MPI_Type_free(&own);
        }
    }
    int waited = check(MPI_Waitall(posted, requests, MPI_STATUSES_IGNORE), "MPI_Waitall (field)");
    for (int r = 0; r < posted; ++r) MPI_Type_free(&types[r]);
    free(requests), free(types);
    return status != HEAT_OK ? status : waited;
}

int par_gather_field(const heat_decomp *d, const void *local, void *global, size_t elem)
{
    return move_field(d, (void *)local, global, elem, 1);
}

int par_scatter_field(const heat_decomp *d, const void *global, void *local, size_t elem)
{
    return move_field(d, local, (void *)global, elem, 0);
}

int par_parts_available(void) { return parts_ != MPI_COMM_NULL; }

static int part_size(size_t bytes, const char *what)
{
    if (bytes <= (size_t)INT_MAX) return HEAT_OK;
    return heat_error(HEAT_ERR_RUNTIME, "rank %d: %s: %zu bytes in one message", rank_, what, bytes);
}

/* Open MPI's blocking calls poll without pause, and a writer's thread
 * waiting so for another rank would take half the core from this rank's
 * stepper wherever the ranks fill the node's cores; a look every tenth of
 * a millisecond costs a write nothing it would notice. */
static const struct timespec PART_PAUSE = {0, 100000};

static int wait_without_core(MPI_Request *request, const char *what)
{
    for (;;) {
        int done = 0;
        HEAT_CALL(check(MPI_Test(request, &done, MPI_STATUS_IGNORE), what));
        if (done) return HEAT_OK;
        nanosleep(&PART_PAUSE, NULL);
    }
}

int par_part_send(const void *data, size_t bytes)
{
    HEAT_CALL(part_size(bytes, "sending a checkpoint part"));
    MPI_Request request;
    HEAT_CALL(check(MPI_Isend(data, (int)bytes, MPI_BYTE, 0, 0, parts_, &request), "MPI_Isend (checkpoint part)"));
    return wait_without_core(&request, "MPI_Test (checkpoint part)");
}

static int make_room_to_post(void)
{
    if (posted.count < posted.capacity) return HEAT_OK;
    int capacity = posted.capacity ? 2 * posted.capacity : 64;
    MPI_Request *requests = realloc(posted.requests, sizeof *requests * (size_t)capacity);
    if (requests) posted.requests = requests;
    void **buffers = realloc(posted.buffers, sizeof *buffers * (size_t)capacity);
    if (buffers) posted.buffers = buffers;
    HEAT_CHECK(requests && buffers, "rank %d: out of memory for posting checkpoint parts", rank_);
    posted.capacity = capacity;
    return HEAT_OK;
}

int par_part_post(void *data, size_t bytes)
{
    int status = part_size(bytes, "sending a checkpoint part");
    if (status == HEAT_OK) status = make_room_to_post();
    MPI_Request *request = status == HEAT_OK ? &posted.requests[posted.count] : NULL;
    if (status == HEAT_OK)
        status = check(MPI_Isend(data, (int)bytes, MPI_BYTE, 0, 0, parts_, request), "MPI_Isend (checkpoint part)");
    if (status != HEAT_OK) return free(data), status;
    posted.buffers[posted.count++] = data;
    return HEAT_OK;
}

/* After a failed wait MPI may still read the later buffers: they stay allocated (the run ends anyway). */
int par_part_posted_wait(void)
{
    int status = HEAT_OK;
    for (int i = 0; i < posted.count && status == HEAT_OK; ++i) {
        status = wait_without_core(&posted.requests[i], "MPI_Test (checkpoint part)");
        if (status == HEAT_OK) free(posted.buffers[i]);
    }
    posted.count = 0;
    return status;
}

/* Matched probe: the size is known before the receive, and no other thread
 * can take the message in between. */
int par_part_receive(int rank, void *buffer, size_t capacity, size_t *bytes)
{
    MPI_Message message;
    MPI_Status status;
    int count = 0, found = 0;
    for (;;) {
        HEAT_CALL(check(MPI_Improbe(rank, 0, parts_, &found, &message, &status), "MPI_Improbe (checkpoint part)"));
        if (found) break;
        nanosleep(&PART_PAUSE, NULL);
    }
    HEAT_CALL(check(MPI_Get_count(&status, MPI_BYTE, &count), "MPI_Get_count (checkpoint part)"));
    if ((size_t)count > capacity) {
        MPI_Mrecv(NULL, 0, MPI_BYTE, &message, MPI_STATUS_IGNORE); /* fails: truncated; the message is gone either way */
        return heat_error(HEAT_ERR_RUNTIME, "rank %d: a checkpoint part of %d bytes from rank %d exceeds %zu", rank_,
                          count, rank, capacity);
    }
    *bytes = (size_t)count;
    return check(MPI_Mrecv(buffer, count, MPI_BYTE, &message, MPI_STATUS_IGNORE), "MPI_Mrecv (checkpoint part)");
}

int par_part_broadcast(void *data, size_t bytes, int from)
{
    HEAT_CALL(part_size(bytes, "broadcasting a checkpoint setting"));
    MPI_Request request;
    HEAT_CALL(check(MPI_Ibcast(data, (int)bytes, MPI_BYTE, from, parts_, &request), "MPI_Ibcast (checkpoint)"));
    return wait_without_core(&request, "MPI_Test (checkpoint broadcast)");
}

int par_part_sum_to_root(double *values, long count)
{
    HEAT_CALL(part_size((size_t)count * sizeof *values, "summing a checkpoint slice"));
    void *send = rank_ == 0 ? MPI_IN_PLACE : values;
    MPI_Request request;
    HEAT_CALL(check(MPI_Ireduce(send, values, (int)count, MPI_DOUBLE, MPI_SUM, 0, parts_, &request),
                    "MPI_Ireduce (checkpoint slice)"));
    return wait_without_core(&request, "MPI_Test (checkpoint slice)");
}
