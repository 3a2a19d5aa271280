/*
 * Materials runs split between two blocks (the grid cut along z, as ranks
 * stacked along z hold it), each on a thread of its own with the halo
 * exchange and the ordered sums between them (what MPI gives ranks), against
 * the whole grid in one block: explicit and implicit steps must give the
 * same bits, and so must the energy balance. Usage: test_materials_split
 * euler|backward_euler|crank_nicolson.
 */
#include <omp.h>
#include <pthread.h>

#include "test_materials.h"

enum { BLOCKS = 2, NX = 20, NY = 18, NZ = 32, CUT = 16, STEPS = 24 };

/* What the two threads share: each one's send buffers, a barrier, and a vector to sum. */
typedef struct mailbox {
    pthread_barrier_t barrier;
    void *const *send[BLOCKS];
    double sum[64 * 64];
} mailbox;

typedef struct block_context {
    mailbox *box;
    int block;
    heat_problem problem;
    heat_materials *materials;
    const void *whole_initial;
    void *field;           /* this block's final field, compact */
    heat_energy energy;
    int status;
} block_context;

static int exchange(void *context, void *const send[FACE_COUNT], void *const recv[FACE_COUNT],
                    const size_t bytes[FACE_COUNT])
{
    block_context *c = context;
    c->box->send[c->block] = send;
    pthread_barrier_wait(&c->box->barrier);
    /* block 0's z-high face meets block 1's z-low face */
    const int face = c->block == 0 ? FACE_Z_HIGH : FACE_Z_LOW, other = c->block == 0 ? FACE_Z_LOW : FACE_Z_HIGH;
    memcpy(recv[face], c->box->send[1 - c->block][other], bytes[face]);
    pthread_barrier_wait(&c->box->barrier);
    return HEAT_OK;
}

/* Element-wise sum of a vector whose entries each have one owner: block 0 writes, block 1 adds, both read. */
static int sum_owned(void *context, double *values, long count)
{
    block_context *c = context;
    if (count > (long)(sizeof c->box->sum / sizeof c->box->sum[0])) return heat_error(HEAT_ERR_RUNTIME, "too many");
    if (c->block == 0) memcpy(c->box->sum, values, sizeof(double) * (size_t)count);
    pthread_barrier_wait(&c->box->barrier);
    if (c->block == 1)
        for (long i = 0; i < count; ++i) c->box->sum[i] += values[i];
    pthread_barrier_wait(&c->box->barrier);
    memcpy(values, c->box->sum, sizeof(double) * (size_t)count);
    pthread_barrier_wait(&c->box->barrier);
    return HEAT_OK;
}

static int layered(const heat_problem *p, int i, int j, int k)
{
    (void)p;
    if (k >= 12 && k < 21 && i >= 4 && i < 15) return 1; /* a powered slab across the cut */
    return (i + j) % 9 == 0 ? 2 : 0;
}

static heat_problem whole_problem(heat_scheme scheme, heat_materials *m)
{
    heat_problem p = test_problem(NX, NY, NZ, 1.0, 0.9, 1.6, HEAT_DOUBLE);
    *m = (heat_materials){.material_count = 2, .material = {test_material("a", 1.0, 2.0), test_material("b", 20.0, 5.0)},
                          .zone_count = 3, .zone = {test_zone(0, 0.0), test_zone(1, 5.0), {1, 2.0, 0.0, 0.0}}};
    p.materials = m;
    p.bc[FACE_X_LOW] = (heat_bc){.type = HEAT_BC_FLUX, .value = 3.0};
    p.bc[FACE_Z_HIGH] = (heat_bc){.type = HEAT_BC_DIRICHLET, .value = 0.5};
    p.bc[FACE_Z_LOW] = (heat_bc){.type = HEAT_BC_CONVECTIVE, .h = 4.0, .ambient = 2.0};
    p.bc[FACE_Y_HIGH] = (heat_bc){.type = HEAT_BC_CONVECTIVE, .h = 0.5, .ambient = -1.0};
    p.implicit = (heat_implicit){scheme, 1e-10, 2000, HEAT_PRECOND_CHEBYSHEV, 8, 2};
    p.dt = (scheme == HEAT_EULER ? 0.9 : 10.0) * heat_materials_dt_max(&p.grid, p.bc, m);
    m->zone[2].source_on = 5.5 * p.dt, m->zone[2].source_off = 15.5 * p.dt;
    p.halo.global_n[0] = NX, p.halo.global_n[1] = NY, p.halo.global_n[2] = NZ;
    return p;
}

static int run_block(block_context *c)
{
    omp_set_num_threads(1);
    heat_problem *p = &c->problem;
    const int z0 = c->block == 0 ? 0 : CUT, nz = c->block == 0 ? CUT : NZ - CUT;
    p->grid.n[2] = nz, p->grid.length[2] = p->grid.h[2] * nz;
    p->halo.offset[2] = z0;
    p->halo.exchanged = 1u << (c->block == 0 ? FACE_Z_HIGH : FACE_Z_LOW);
    heat_halo_transport transport = {.exchange = exchange, .sum_owned = sum_owned, .context = c};
    p->halo.single_steps = 1;
    p->zones = test_paint_zones(p, layered);
    const long plane = (long)NX * NY;
    c->field = test_alloc_field(p);
    heat_solver *s;
    EXPECT_OK(heat_solver_create_block(p, &transport, HEAT_SELECT_CPU, &s));
    memcpy(c->field, (const double *)c->whole_initial + z0 * plane, sizeof(double) * (size_t)(nz * plane));
    EXPECT_OK(heat_solver_set_field(s, c->field, 0));
    EXPECT_OK(heat_solver_advance(s, STEPS));
    EXPECT_OK(heat_solver_get_field(s, c->field));
    EXPECT_OK(heat_solver_energy(s, &c->energy));
    heat_solver_destroy(&s);
    free((void *)p->zones);
    return 0;
}

static void *block_thread(void *arg)
{
    block_context *c = arg;
    c->status = run_block(c);
    return NULL;
}

static int compare(heat_scheme scheme)
{
    heat_materials m;
    heat_problem p = whole_problem(scheme, &m);
    heat_initial init = {.type = INITIAL_GAUSSIAN, .amplitude = 5.0, .background = 1.0, .center = {0.3, 0.6, 0.8},
                         .width = 0.3};
    void *initial = test_alloc_field(&p), *whole = test_alloc_field(&p);
    heat_initial_fill(&init, &p.grid, p.precision, initial);
    p.zones = test_paint_zones(&p, layered);
    heat_solver *s;
    heat_energy energy;
    EXPECT_OK(heat_solver_create(&p, HEAT_SELECT_CPU, &s));
    EXPECT_OK(heat_solver_set_field(s, initial, 0));
    EXPECT_OK(heat_solver_advance(s, STEPS));
    EXPECT_OK(heat_solver_get_field(s, whole));
    EXPECT_OK(heat_solver_energy(s, &energy));
    heat_solver_destroy(&s);
    free((void *)p.zones);

    mailbox box;
    pthread_barrier_init(&box.barrier, NULL, BLOCKS);
    block_context blocks[BLOCKS];
    pthread_t threads[BLOCKS];
    for (int b = 0; b < BLOCKS; ++b) {
        blocks[b] = (block_context){.box = &box, .block = b, .problem = whole_problem(scheme, &m), .whole_initial = initial};
        pthread_create(&threads[b], NULL, block_thread, &blocks[b]);
    }
    for (int b = 0; b < BLOCKS; ++b) pthread_join(threads[b], NULL);
    pthread_barrier_destroy(&box.barrier);
    EXPECT(blocks[0].status == 0 && blocks[1].status == 0, "a block's run failed");
    const size_t low = sizeof(double) * (size_t)CUT * NX * NY, high = sizeof(double) * (size_t)(NZ - CUT) * NX * NY;
    EXPECT(memcmp(whole, blocks[0].field, low) == 0 && memcmp((char *)whole + low, blocks[1].field, high) == 0,
           "%s: two blocks give other bits than one", heat_scheme_name(scheme));
    EXPECT(memcmp(whole, initial, low + high) != 0, "the steps changed nothing");
    for (int b = 0; b < BLOCKS; ++b) {
        EXPECT(blocks[b].energy.heat == energy.heat, "%s: block %d's heat %.17g, one block's %.17g",
               heat_scheme_name(scheme), b, blocks[b].energy.heat, energy.heat);
        for (int kind = 0; kind < HEAT_ENERGY_KINDS; ++kind)
            EXPECT(blocks[b].energy.energy[kind] == energy.energy[kind] && energy.energy[kind] != 0.0,
                   "%s: energy in through %s on block %d %.17g, on one block %.17g", heat_scheme_name(scheme),
                   heat_energy_kind_name(kind), b, blocks[b].energy.energy[kind], energy.energy[kind]);
    }
    printf("%s: %d steps on two blocks (z cut at %d) give the bits of one block, field and energy balance\n",
           heat_scheme_name(scheme), STEPS, CUT);
    free(initial), free(whole), free(blocks[0].field), free(blocks[1].field);
    return 0;
}

int main(int argc, char **argv)
{
    static const heat_scheme schemes[] = {HEAT_EULER, HEAT_BACKWARD_EULER, HEAT_CRANK_NICOLSON};
    for (int k = 0; argc == 2 && k < 3; ++k)
        if (strcmp(argv[1], heat_scheme_name(schemes[k])) == 0) return compare(schemes[k]);
    fprintf(stderr, "usage: test_materials_split euler|backward_euler|crank_nicolson\n");
    return 2;
}
