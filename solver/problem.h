#pragma once
/*
 * What a backend needs to advance the heat equation u_t = alpha * lap(u):
 * geometry, boundary conditions, precision, time step and kernel choice.
 *
 * Points are cell-centred: owned point (i, j, k), 0 <= i < n[0], sits at
 * x = (i + 1/2) h[0] with h = length / n. Every field carries R ghost layers
 * on each side, R = space_order / 2 (heat_space_radius; 1 for the 7-point
 * stencil); a halo fill sets the ghosts before each stencil sweep so that
 * the stencil itself runs branch-free over the owned block. Ghost -1-m
 * (m = 0..R-1, m planes out from the face) mirrors owned point m about the
 * face, alike at the high face (ghost n+m mirrors owned n-1-m):
 *   Dirichlet face value g:  ghost(-1-m) = 2 g - u(m)  (odd about g: u = g on the face)
 *   Neumann (insulated):     ghost(-1-m) = u(m)        (even: zero flux through it)
 *   Periodic:                ghost(-1-m) = u(n-1-m)    (the wrap-around, exchanged)
 * and between ranks ghost(-1-m) is the neighbour's owned plane m in from the
 * shared face. The reflections keep sine (Dirichlet, g = 0) and cosine
 * (Neumann) modes exact eigenvectors of the reflected operator, which is the
 * periodic operator on the doubled box restricted to its symmetric or
 * antisymmetric fields, hence symmetric: CG applies at every order.
 * A block (and an axis of the whole grid) is at least R points thick, so
 * every ghost mirrors an owned point.
 */
#include <stddef.h>

typedef enum { HEAT_DOUBLE = 0, HEAT_FLOAT = 1 } heat_precision;

/* Periodic: set on both faces of an axis; the ghosts are the owned points
 * at the other end of the axis (the wrap-around), brought by the halo exchange. */
typedef enum {
    HEAT_BC_NEUMANN = 0,
    HEAT_BC_DIRICHLET = 1,
    HEAT_BC_PERIODIC = 2,
    HEAT_BC_CONVECTIVE = 3, /* materials runs: -k dT/dn = h (T - ambient) (solver/materials.h) */
    HEAT_BC_FLUX = 4,       /* materials runs: a heat flux `value` (power / area) into the body */
} heat_bc_type;

enum heat_face { FACE_X_LOW, FACE_X_HIGH, FACE_Y_LOW, FACE_Y_HIGH, FACE_Z_LOW, FACE_Z_HIGH, FACE_COUNT };

typedef struct heat_bc {
    heat_bc_type type;
    double value;   /* Dirichlet: the face's temperature; flux: power per area into the body */
    double h;       /* convective: heat transfer coefficient (power / (area temperature)) */
    double ambient; /* convective: the ambient temperature */
} heat_bc;

typedef struct heat_grid {
    int n[3];         /* owned points along x, y, z (halo excluded) */
    double length[3]; /* box edge lengths along x, y, z (length units) */
    double h[3];      /* point spacing length / n (length units) */
} heat_grid;

/* Memory layout of one field, halo included, counted in elements. The row
 * length is padded so that every row's first owned point (i = 0) starts on an
 * `align`-byte boundary (the seismic article's padding with an offset base). */
typedef struct heat_layout {
    long stride_y; /* elements between (i, j, k) and (i, j+1, k); >= n[0] + 2 ghost */
    long stride_z; /* elements between (i, j, k) and (i, j, k+1) */
    long origin;   /* element index of ghost point (-ghost, -ghost, -ghost) in the allocation */
    long total;    /* elements to allocate for one field */
    int ghost;     /* ghost layers on each side (R; 1 for the 7-point stencil) */
} heat_layout;

/* Element index of owned point (0, 0, 0). */
static inline long heat_layout_first_owned(const heat_layout *l)
{
    return l->origin + l->ghost * (1 + l->stride_y + l->stride_z);
}

/* Threads per GPU block the kernels are built for (their launch bounds). */
enum { HEAT_MAX_BLOCK_THREADS = 256 };

/* Which kernel advances the solution; "auto" lets the backend pick. */
typedef struct heat_kernel_choice {
    char name[32]; /* variant name or "auto" */
    int tile;      /* tile factor m (points per thread along y); 0 = auto */
    int block[3];  /* thread block shape; zeros = auto */
} heat_kernel_choice;

/* Time integration: explicit Euler, or an implicit theta scheme solved by
 * preconditioned conjugate gradients (solver/implicit.h). */
typedef enum { HEAT_EULER = 0, HEAT_BACKWARD_EULER = 1, HEAT_CRANK_NICOLSON = 2 } heat_scheme;

typedef enum { HEAT_PRECOND_CHEBYSHEV = 0, HEAT_PRECOND_JACOBI = 1, HEAT_PRECOND_NONE = 2 } heat_preconditioner;

typedef struct heat_implicit {
    heat_scheme scheme;
    double rtol;                  /* stop when |r| <= rtol |r0| */
    int max_iterations;           /* per step; more is an error */
    heat_preconditioner preconditioner;
    int chebyshev_degree;         /* operator applications per Chebyshev preconditioner call */
    int smoothing_steps;          /* crank_nicolson: the first N steps as two backward Euler half steps */
} heat_implicit;

/* Where this block sits and which of its faces get their ghosts from
 * elsewhere: a neighbouring rank's block, or this block's far side across a
 * periodic axis. On those faces a backend fills the ghosts through the halo
 * transport (solver/halo_transport.h, handed to it beside the problem); on
 * the others it applies the boundary condition. offset/global_n place the
 * block in the whole grid (sums in a fixed order, solver/reduce.h). */
typedef struct heat_halo {
    unsigned exchanged; /* bit f: face f's ghosts are exchanged */
    int fewest_z_planes; /* of any rank's block (the whole grid's with one process); 0: unknown */
    int offset[3];      /* global index of the block's first owned point */
    int device;         /* GPU of this process among its node's GPUs (node-local rank) */
    int global_n[3];    /* points of the whole grid */
    int single_steps;   /* 1: one explicit step a sweep where two would be allowed: some rank's block
                           is one plane thick along z (a pair needs two from each neighbour), or the
                           benchmark's blocks without exchange, compared with blocks that exchange */
} heat_halo;

typedef struct heat_problem {
    heat_grid grid;     /* this process's block; h is the whole grid's spacing */
    heat_bc bc[FACE_COUNT];
    heat_precision precision;
    double alpha; /* diffusivity (length^2 / time) */
    double dt;    /* time step (time units) */
    heat_kernel_choice kernel;
    heat_implicit implicit;
    heat_halo halo;
    /* Materials runs (solver/materials.h); NULL: constant coefficients alpha.
     * zones: this block's zone index per point, halo included, compact
     * (n[0]+2) x (n[1]+2) x (n[2]+2), x fastest, ghost (-1,-1,-1) first. */
    const struct heat_materials *materials;
    const unsigned char *zones;
    int quiet;    /* backends print their choices unless set */
    /* Order of the central-difference Laplacian in each axis: 2, 4, 6 or 8
     * (solver/space_order.h); 0 means 2, the 7-point stencil. Read it through
     * heat_space_radius. Orders above 2 take constant coefficients only. */
    int space_order;
} heat_problem;

/* Stencil coefficients in the operation order every backend uses. */
typedef struct heat_coeffs {
    double inv_h2[3]; /* 1 / h^2 per axis */
    double diag;      /* -2 (1/hx^2 + 1/hy^2 + 1/hz^2) */
    double alpha_dt;  /* alpha * dt */
} heat_coeffs;

size_t heat_precision_size(heat_precision precision);
const char *heat_precision_name(heat_precision precision);
long heat_grid_points(const heat_grid *grid);
void heat_grid_set_spacing(heat_grid *grid);
/* pad_y: the rows per plane (ghosts excluded) are rounded up to a multiple
 * of pad_y, so that kernels tiled in y may read past n[1] inside the field. */
heat_layout heat_layout_make(const int n[3], size_t elem_size, size_t align_bytes, int pad_y);
/* The same with `ghost` layers on each side (R of heat_space_radius); ghost 1
 * gives heat_layout_make's layout. */
heat_layout heat_layout_make_ghost(const int n[3], size_t elem_size, size_t align_bytes, int pad_y, int ghost);
/* R = space_order / 2: the stencil's radius and the ghost layers on each side
 * (1 for a problem that never set space_order). */
int heat_space_radius(const heat_problem *problem);
heat_coeffs heat_coeffs_make(const heat_problem *problem);
/* Largest stable forward-Euler step: 1 / (2 alpha sum(1/h^2)). */
double heat_dt_max(const heat_grid *grid, double alpha);

/* No face is exchanged but the z faces (ranks stacked along z, a periodic z
 * axis): their ghosts are read by the first and last planes alone. */
static inline int heat_only_z_exchanged(unsigned exchanged)
{
    return !(exchanged & ~(1u << FACE_Z_LOW | 1u << FACE_Z_HIGH));
}

/* May the CPU backend take explicit steps two a sweep? Where no face is
 * exchanged, or only z faces (ranks stacked along z, a periodic z axis:
 * their neighbours then send two planes), and not halo.single_steps; the
 * 7-point stencil's only (space order 2). */
int heat_pairs_allowed(const heat_problem *p);

/* The CPU backend's Chebyshev preconditioner takes its steps two a sweep
 * (cheb_pair, one more vector) where no face is exchanged, there are at least
 * three steps (degree >= 4: a pair and the last step, which forms r.z), and
 * not halo.single_steps; space order 2 only. The same bits as single steps. */
int heat_chebyshev_pairs_allowed(const heat_problem *p);
/* The seeds' theoretical traffic of one sweep over a field of `dims` points
 * (halo included): every point but the 8 corners and 12 edges read, every
 * interior point written. */
double heat_sweep_bytes(const int n[3], size_t elem_size);
