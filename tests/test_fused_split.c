/*
 * The GPU's fused sweeps across a cut between ranks (halos K deep, once a
 * sweep: solver/deep_halo.h): the grid cut in two blocks along z or along x,
 * as two ranks hold it, each block on a thread of its own with the halo
 * exchange and the ordered sums between them (what MPI gives ranks, through
 * page-locked host memory), both on the one GPU. advance() with
 * solver.kernel = heat_fusedK (K = 2, 3, 4) and "auto", for 7, 2 and 4 steps
 * (sweeps, the remainders' sweeps of 2 and 3 steps and single steps mixed),
 * must give the bits of 13 single steps on
 * the whole grid, in double and float, with the cut axis periodic or not and
 * boundaries of every type. A cut along y takes single steps (said in the
 * kernel description), with the same bits.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "../parallel/domain.h"
#include "test_util.h"

enum { BLOCKS = 2, NX = 37, NY = 34, NZ = 40 };

/* advance()'s calls: K = 3 takes 6 + 1, a remainder's sweep of 2, 3 + 1; K = 4 4 + a sweep of 3, a sweep of 2, 4 */
static const long calls[] = {7, 2, 4};
enum { CALLS = sizeof calls / sizeof calls[0], STEPS = 13 };

/* What the two threads share: each one's send buffers, a barrier, and a vector to sum. */
typedef struct mailbox {
    pthread_barrier_t barrier;
    void *const *send[BLOCKS];
    double sum[4096];
} mailbox;

typedef struct block_context {
    mailbox *box;
    heat_decomp decomp;       /* this block's place: offset, size, neighbours */
    heat_problem problem;     /* this block's problem */
    const char *kernel;       /* solver.kernel */
    const void *whole_initial;
    void *field;              /* this block's final field, compact */
    char description[256];
    int status;
} block_context;

/* Face f's ghosts are what the block across it sends through its opposite face (itself across a wrap). */
static int exchange(void *context, void *const send[FACE_COUNT], void *const recv[FACE_COUNT],
                    const size_t bytes[FACE_COUNT])
{
    block_context *c = context;
    c->box->send[c->decomp.rank] = send;
    pthread_barrier_wait(&c->box->barrier);
    for (int f = 0; f < FACE_COUNT; ++f)
        if (c->decomp.exchanged & 1u << f && bytes[f] > 0)
            memcpy(recv[f], c->box->send[c->decomp.neighbour[f]][f ^ 1], bytes[f]);
    pthread_barrier_wait(&c->box->barrier);
    return HEAT_OK;
}

/* Element-wise sum across the blocks: block 0 writes, block 1 adds, both read. */
static int sum_owned(void *context, double *values, long count)
{
    block_context *c = context;
    if (count > (long)(sizeof c->box->sum / sizeof c->box->sum[0])) return heat_error(HEAT_ERR_RUNTIME, "too many");
    if (c->decomp.rank == 0) memcpy(c->box->sum, values, sizeof(double) * (size_t)count);
    pthread_barrier_wait(&c->box->barrier);
    if (c->decomp.rank == 1)
        for (long i = 0; i < count; ++i) c->box->sum[i] += values[i];
    pthread_barrier_wait(&c->box->barrier);
    memcpy(values, c->box->sum, sizeof(double) * (size_t)count);
    pthread_barrier_wait(&c->box->barrier);
    return HEAT_OK;
}

/* Points of block (offset, size) copied between the whole grid's compact field and the block's. */
static void copy_block(const heat_problem *whole, const int offset[3], const int size[3], void *block,
                       const void *field, int into_block)
{
    size_t elem = heat_precision_size(whole->precision), row = elem * (size_t)size[0];
    for (int k = 0; k < size[2]; ++k)
        for (int j = 0; j < size[1]; ++j) {
            size_t at = (((size_t)(k + offset[2]) * whole->grid.n[1] + j + offset[1]) * whole->grid.n[0] + offset[0]);
            char *b = (char *)block + row * ((size_t)k * size[1] + j);
            char *w = (char *)field + elem * at;
            if (into_block) memcpy(b, w, row);
            else memcpy(w, b, row);
        }
}

static int run_block(block_context *c)
{
    heat_domain domain = {.decomp = c->decomp};
    heat_problem whole = c->problem, *p = &c->problem;
    heat_domain_localize(&domain, &whole, p);
    snprintf(p->kernel.name, sizeof p->kernel.name, "%s", c->kernel);
    p->quiet = 1;
    heat_halo_transport transport = {.exchange = exchange, .sum_owned = sum_owned, .context = c};
    c->field = test_alloc_field(p);
    copy_block(&whole, c->decomp.offset, c->decomp.local_n, c->field, c->whole_initial, 1);
    heat_solver *s;
    EXPECT_OK(heat_solver_create_block(p, &transport, HEAT_SELECT_HIP, &s));
    EXPECT_OK(heat_solver_set_field(s, c->field, 0));
    for (int i = 0; i < CALLS; ++i) EXPECT_OK(heat_solver_advance(s, calls[i]));
    EXPECT_OK(heat_solver_get_field(s, c->field));
    snprintf(c->description, sizeof c->description, "%s", s->ops->kernel_description(s->state));
    heat_solver_destroy(&s);
    return 0;
}

static void *block_thread(void *arg)
{
    block_context *c = arg;
    c->status = run_block(c);
    if (c->status) { /* the other block would wait for this one's halos for ever: end the test, as MPI ends a job */
        fflush(stdout), fflush(stderr);
        _exit(1);
    }
    return NULL;
}

/* 13 single steps on the whole grid in one block (a periodic axis wraps through the domain's transport). */
static int reference(const heat_problem *whole, const void *initial, void *out)
{
    heat_domain domain;
    heat_problem p;
    const int automatic[3] = {0, 0, 0};
    EXPECT_OK(heat_domain_init(&domain, whole, automatic, TRANSPORT_AUTO, 1));
    heat_domain_localize(&domain, whole, &p);
    snprintf(p.kernel.name, sizeof p.kernel.name, "heat_tiled_ntf"), p.kernel.tile = 1, p.quiet = 1;
    heat_halo_transport transport = heat_domain_transport(&domain);
    heat_solver *s;
    EXPECT_OK(heat_solver_create_block(&p, &transport, HEAT_SELECT_HIP, &s));
    EXPECT_OK(heat_solver_set_field(s, initial, 0));
    EXPECT_OK(heat_solver_advance(s, STEPS));
    EXPECT_OK(heat_solver_get_field(s, out));
    heat_solver_destroy(&s);
    heat_domain_free(&domain);
    return 0;
}

/* Two blocks cut along `axis` running `kernel`: their fields together against
 * `ref`, and each block's kernel description holding `said` (and `also`). */
static int split_run(const heat_problem *whole, int axis, const char *kernel, const void *initial, const void *ref,
                     const char *what, const char *said, const char *also)
{
    mailbox box;
    pthread_barrier_init(&box.barrier, NULL, BLOCKS);
    block_context blocks[BLOCKS];
    pthread_t threads[BLOCKS];
    int dims[3] = {1, 1, 1}, periodic[3];
    dims[axis] = BLOCKS;
    for (int a = 0; a < 3; ++a) periodic[a] = whole->bc[2 * a].type == HEAT_BC_PERIODIC;
    for (int b = 0; b < BLOCKS; ++b) {
        blocks[b] = (block_context){.box = &box, .problem = *whole, .kernel = kernel, .whole_initial = initial};
        EXPECT_OK(heat_decomp_make(whole->grid.n, dims, periodic, b, &blocks[b].decomp));
    }
    for (int b = 0; b < BLOCKS; ++b) pthread_create(&threads[b], NULL, block_thread, &blocks[b]);
    for (int b = 0; b < BLOCKS; ++b) pthread_join(threads[b], NULL);
    pthread_barrier_destroy(&box.barrier);
    EXPECT(blocks[0].status == 0 && blocks[1].status == 0, "%s, %s: a block's run failed", what, kernel);
    size_t bytes = (size_t)heat_grid_points(&whole->grid) * heat_precision_size(whole->precision);
    void *joined = malloc(bytes);
    EXPECT(joined, "out of memory");
    for (int b = 0; b < BLOCKS; ++b) {
        copy_block(whole, blocks[b].decomp.offset, blocks[b].decomp.local_n, blocks[b].field, joined, 0);
        const char *d = blocks[b].description;
        EXPECT(strstr(d, said) && strstr(d, also), "%s, %s, block %d: \"%s\" and \"%s\" not in \"%s\"", what, kernel,
               b, said, also, d);
        free(blocks[b].field);
    }
    EXPECT(memcmp(joined, ref, bytes) == 0, "%s, %s: two blocks cut along %c differ from 13 single steps on one", what,
           kernel, "xyz"[axis]);
    free(joined);
    printf("%s, %s: bitwise equal to 13 single steps on one block (%s)\n", what, kernel, blocks[0].description);
    return 0;
}

static int check(const heat_problem *whole, int axis, const char *what)
{
    size_t bytes = (size_t)heat_grid_points(&whole->grid) * heat_precision_size(whole->precision);
    void *initial = test_alloc_field(whole), *ref = test_alloc_field(whole);
    test_rough_field(whole, initial);
    if (reference(whole, initial, ref)) return 1;
    EXPECT(memcmp(initial, ref, bytes) != 0, "%s: the steps changed nothing", what);
    for (int k = 2; k <= 4; ++k) {
        char kernel[32], said[64], also[64];
        snprintf(kernel, sizeof kernel, "heat_fused%d", k);
        snprintf(said, sizeof said, "%d steps a sweep: heat_fused%d_", k, k);
        snprintf(also, sizeof also, "halos %d deep across the cut along %c", k, "xyz"[axis]);
        if (axis == 1) snprintf(said, sizeof said, "single steps: ranks cut along y"), also[0] = '\0';
        if (split_run(whole, axis, kernel, initial, ref, what, said, also)) return 1;
    }
    /* auto: whatever times fastest, with the same bits */
    if (split_run(whole, axis, "auto", initial, ref, what, axis == 1 ? "single steps: ranks cut along y" : "", ""))
        return 1;
    free(initial), free(ref);
    return 0;
}

static heat_problem mixed(heat_precision precision, heat_bc_type x, heat_bc_type y, heat_bc_type z)
{
    heat_problem p = test_problem(NX, NY, NZ, 1.3, 1.0, 1.4, precision);
    const heat_bc_type per_axis[3] = {x, y, z};
    for (int f = 0; f < FACE_COUNT; ++f) p.bc[f] = (heat_bc){.type = per_axis[f / 2], .value = 0.5 * f - 1.0};
    if (z != HEAT_BC_PERIODIC) p.bc[FACE_Z_HIGH].type = HEAT_BC_NEUMANN; /* a Dirichlet face beside a Neumann one */
    return p;
}

static int check_case(heat_precision precision, heat_bc_type x, heat_bc_type y, heat_bc_type z, int axis)
{
    static const char *const names[] = {"Neumann", "Dirichlet", "periodic"};
    heat_problem p = mixed(precision, x, y, z);
    char what[128];
    snprintf(what, sizeof what, "%s, cut along %c, x %s, y %s, z %s%s", heat_precision_name(precision), "xyz"[axis],
             names[x], names[y], names[z], z == HEAT_BC_PERIODIC ? "" : " (Neumann z high)");
    return check(&p, axis, what);
}

static int check_precision(heat_precision precision)
{
    return check_case(precision, HEAT_BC_PERIODIC, HEAT_BC_DIRICHLET, HEAT_BC_DIRICHLET, 2) ||
           check_case(precision, HEAT_BC_NEUMANN, HEAT_BC_NEUMANN, HEAT_BC_PERIODIC, 2) ||
           check_case(precision, HEAT_BC_PERIODIC, HEAT_BC_DIRICHLET, HEAT_BC_DIRICHLET, 0) ||
           check_case(precision, HEAT_BC_DIRICHLET, HEAT_BC_PERIODIC, HEAT_BC_DIRICHLET, 0) ||
           check_case(precision, HEAT_BC_DIRICHLET, HEAT_BC_DIRICHLET, HEAT_BC_DIRICHLET, 1);
}

static int checks(int argc, char **argv)
{
    (void)argc, (void)argv;
    char reason[256];
    if (!(heat_backend_hip && heat_hip_available(reason, sizeof reason)))
        return printf("no GPU (%s): skipped\n", heat_backend_hip ? reason : "built without one"), TEST_SKIP;
    setenv("HEATSOLVE_TUNING_CACHE", "/dev/null", 1); /* both blocks tune by timing, neither writes the cache */
    return check_precision(HEAT_DOUBLE) || check_precision(HEAT_FLOAT);
}

int main(int argc, char **argv) { return run_between_par_init_and_finalize(argc, argv, checks); }
