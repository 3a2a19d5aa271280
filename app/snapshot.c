/*
 * The snapshot pipeline between the solver and the checkpoint writer
 * (app/snapshot.h): the host field, the page-locked buffers, the snapshots'
 * arrival on the writer's thread, and the thread that releases the GPU.
 */
#include "app/snapshot.h"

#include <pthread.h>
#include <stdlib.h>

#include "app/progress.h"
#include "parallel/parallel.h"
#include "solver/error.h"
#include "solver/host_memory.h"

struct snapshots {
    heat_solver *solver;
    heat_domain *domain;   /* this rank's block of the grid */
    const ckpt_parts *parts; /* each rank snapshots its own slab; NULL: the root gathers */
    ckpt_writer *writer;   /* this rank's, or NULL */
    size_t field_bytes;    /* the whole field */
    void *host_field;      /* one process: the field on the host, loaded there, then the writer's first buffer */
    long host_field_step;  /* the step whose field host_field holds as loaded (no snapshot needed); -1: none */
    void *pinned[CKPT_WRITER_MAX_JOBS + 1]; /* the snapshot buffers page-locked for the GPU's copies */
    size_t pinned_bytes[CKPT_WRITER_MAX_JOBS + 1];
    int pinned_count;
    double seconds;        /* spent copying the field for the writer */
    pthread_t releaser;    /* releases the solver's GPU beside the last writes */
    int releasing;         /* releaser runs (snapshots_destroy joins it) */
};

/* Each rank's block goes to the root's snapshot by MPI. */
static int gathered(const snapshots *s) { return heat_domain_is_split(s->domain) && !s->parts; }

/* What leaves the GPU at a checkpoint: the writer's snapshot (the whole
 * field, or with parts this rank's slab), or without parts each rank's block
 * (which MPI then takes to rank 0's snapshot). */
static void *copied_from_gpu(const snapshots *s, size_t *bytes)
{
    const int *n = s->domain->decomp.local_n;
    *bytes = (size_t)n[0] * n[1] * n[2] * s->domain->elem; /* the whole field, or this rank's block or slab */
    if (gathered(s)) return s->domain->block;
    if (s->host_field) return s->host_field;
    return s->writer ? ckpt_writer_buffer(s->writer) : NULL;
}

static int is_pinned(const snapshots *s, const void *host)
{
    for (int i = 0; i < s->pinned_count; ++i)
        if (s->pinned[i] == host) return 1;
    return 0;
}

static void pin(snapshots *s, void *host, size_t bytes)
{
    if (!host || is_pinned(s, host) || s->pinned_count == CKPT_WRITER_MAX_JOBS + 1) return;
    if (!heat_solver_pin_host(s->solver, host, bytes, 1)) return;
    s->pinned[s->pinned_count] = host, s->pinned_bytes[s->pinned_count++] = bytes;
}

/* A GPU copies into page-locked memory several times faster: every buffer
 * a snapshot leaves the GPU into is pinned once, while the GPU would
 * otherwise wait on pageable copies: the field loaded on the host, then the
 * writer's further buffers (several writes in flight). */
static void pin_snapshot(snapshots *s)
{
    size_t bytes;
    void *host = copied_from_gpu(s, &bytes);
    pin(s, host, bytes);
    if (!s->writer || gathered(s)) return; /* the root gathers into those */
    for (int i = 0; i < ckpt_writer_buffer_count(s->writer); ++i)
        pin(s, ckpt_writer_buffer_at(s->writer, i), ckpt_writer_buffer_bytes(s->writer));
}

/* Once no copy into them is in flight (writers may still read them). */
static void unpin_buffers(snapshots *s)
{
    for (int i = 0; i < s->pinned_count; ++i) heat_solver_pin_host(s->solver, s->pinned[i], s->pinned_bytes[i], 0);
    s->pinned_count = 0;
}

static void unpin_snapshot(snapshots *s)
{
    if (!s->pinned_count) return;
    if (s->writer) ckpt_writer_wait(s->writer); /* its status was reported by the run, or the run failed anyway */
    heat_solver_wait_field(s->solver);          /* a copy into it that no writer waited for */
    unpin_buffers(s);
}

/* One process loads its field where the checkpoints' snapshots will go, a
 * buffer page-locked once: the upload to a GPU runs at full speed and the
 * initial checkpoint needs no copy back, and no second buffer of the
 * field's size is touched. Several ranks load on the root and scatter the
 * blocks (parallel/domain.h). */
static int allocate_host_field(snapshots *s)
{
    if (heat_domain_is_split(s->domain)) return HEAT_OK;
    s->host_field = heat_host_alloc(s->field_bytes); /* its pages present: pinning it faults none */
    HEAT_CHECK(s->host_field, "cannot allocate the %zu-byte host field", s->field_bytes);
    pin_snapshot(s);
    return HEAT_OK;
}

int snapshots_create(heat_solver *solver, heat_domain *domain, const ckpt_parts *parts, size_t field_bytes,
                     snapshots **snap)
{
    snapshots *s = calloc(1, sizeof *s);
    HEAT_CHECK(s, "cannot allocate the snapshot pipeline");
    *s = (snapshots){.solver = solver, .domain = domain, .parts = parts, .field_bytes = field_bytes,
                     .host_field_step = -1};
    *snap = s;
    return allocate_host_field(s);
}

void *snapshots_host_field(const snapshots *s) { return s->host_field; }

void snapshots_loaded(snapshots *s, long step)
{
    if (s->host_field) s->host_field_step = step;
}

static int snapshot_arrived(void *solver) { return heat_solver_wait_field(solver); }

void snapshots_attach_writer(snapshots *s, ckpt_writer *writer)
{
    s->writer = writer;
    if (writer) ckpt_writer_set_arrival(writer, snapshot_arrived, s->solver);
    pin_snapshot(s);
}

/* The field (one process) or each rank's slab (parts) leaves the GPU while
 * it steps on, and the writer waits for it (snapshot_arrived). Otherwise
 * each block is gathered on the root. */
static int copy_field(snapshots *s)
{
    void *buffer = s->writer ? ckpt_writer_buffer(s->writer) : NULL;
    if (gathered(s)) return heat_domain_get_field(s->domain, s->solver, buffer);
    return heat_solver_get_field_async(s->solver, buffer);
}

int snapshots_take(snapshots *s)
{
    double start = progress_now();
    if (s->host_field_step == s->solver->step) s->host_field_step = -1; /* the field is there, as loaded */
    else HEAT_CALL(copy_field(s));
    s->seconds += progress_now() - start;
    return HEAT_OK;
}

double snapshots_seconds(const snapshots *s) { return s->seconds; }

static void *release_solver(void *snap)
{
    snapshots *s = snap;
    if (s->writer) ckpt_writer_wait_snapshots(s->writer); /* no writer asks the solver for its copy again */
    heat_solver_wait_field(s->solver);
    unpin_buffers(s);
    heat_solver_release_backend(s->solver);
    return NULL;
}

/* The stepping is over once the last snapshot is on the host: one process
 * lets its GPU go on a thread of its own while the last writes compress and
 * reach the disk and the summary is printed, rather than after main in the
 * CUDA runtime's exit handler, where releasing the context is most of the
 * time a process spends after main. From here on the run reads only the
 * solver's clock and statistics; snapshots_destroy joins the thread first.
 * Several ranks keep their GPUs: NCCL uses them to the end. */
void snapshots_release_solver_beside_writes(snapshots *s)
{
    if (par_size() > 1) return;
    s->releasing = pthread_create(&s->releaser, NULL, release_solver, s) == 0; /* else: released at the end */
}

void snapshots_destroy(snapshots **snap)
{
    if (!snap || !*snap) return;
    snapshots *s = *snap;
    if (s->releasing) pthread_join(s->releaser, NULL), s->releasing = 0;
    unpin_snapshot(s);
    if (s->writer) ckpt_writer_wait(s->writer); /* no write reads the host field any more */
    free(s->host_field);
    free(s);
    *snap = NULL;
}
