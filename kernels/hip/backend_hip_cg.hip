/*
 * The HIP backend's implicit-solver operations (backend.h, heat_cg_ops):
 * launchers of cg_kernels.hip and the deterministic two-stage reductions.
 * A translation unit of its own (backend_hip_internal.h).
 */
#include "backend_hip_internal.h"
#include "cg_sum_kernels.hip"

int cg_vector_count(const heat_problem *p)
{
    if (p->implicit.scheme == HEAT_EULER) return 0;
    return p->implicit.preconditioner == HEAT_PRECOND_CHEBYSHEV ? CG_VECTORS : CG_Q + 1;
}

/* The dot products' partials and bricks (cg_kernels.hip): a partial covers
 * `piece` points of a row, at most 32 and a divisor of the brick's width. */
static void plan_cg_bricks(hip_state *s)
{
    const heat_reduction &r = s->reduction;
    const int *n = s->problem.grid.n;
    s->cg_piece = std::min(r.brick[0], 32);
    s->cg_bricks.count[0] = (n[0] + s->cg_piece - 1) / s->cg_piece;
    s->cg_bricks.count[1] = n[1];
    s->cg_bricks.count[2] = (n[2] + CG_ZCHUNK - 1) / CG_ZCHUNK;
    s->cg_bricks.span[0] = r.brick[0] / s->cg_piece;
    s->cg_bricks.span[1] = r.brick[1];
    s->cg_bricks.span[2] = r.brick[2] / CG_ZCHUNK;
    for (int a = 0; a < 3; ++a) s->cg_bricks.own[a] = r.own[a];
}

static long cg_partial_count(const hip_state *s)
{
    return (long)s->cg_bricks.count[0] * s->cg_bricks.count[1] * s->cg_bricks.count[2];
}

static long cg_brick_count(const hip_state *s)
{
    return (long)s->cg_bricks.own[0] * s->cg_bricks.own[1] * s->cg_bricks.own[2];
}

int allocate_cg(hip_state *s)
{
    size_t field_bytes = (size_t)s->layout.total * s->elem;
    for (int v = 0; v < cg_vector_count(&s->problem); ++v) {
        HEAT_CALL(exchanged_alloc(s, (void **)&s->cg_vector[v], field_bytes));
        HIP_CALL(hipMemset(s->cg_vector[v], 0, field_bytes));
    }
    HEAT_CHECK(s->reduction.brick[2] % CG_ZCHUNK == 0, "reduction brick of %d planes: not a multiple of %d",
               s->reduction.brick[2], (int)CG_ZCHUNK);
    plan_cg_bricks(s);
    HIP_CALL(hipMalloc((void **)&s->cg_partials, (size_t)cg_partial_count(s) * sizeof(double2)));
    HIP_CALL(hipMalloc((void **)&s->cg_sums, (size_t)cg_brick_count(s) * sizeof(double2)));
    HIP_CALL(hipHostMalloc((void **)&s->cg_brick_host, (size_t)cg_brick_count(s) * sizeof(double2), hipHostMallocDefault));
    heat_cg_diagonal d = heat_cg_diagonal_make(&s->problem);
    s->diagonal.base = d.base, s->diagonal.jacobi = d.jacobi;
    for (int f = 0; f < 6; ++f) s->diagonal.face[f] = d.face[f];
    return HEAT_OK;
}

void free_cg(hip_state *s)
{
    for (char *v : s->cg_vector) exchanged_free(s, v);
    (void)hipFree(s->cg_partials);
    (void)hipFree(s->cg_sums);
    if (s->cg_brick_host) (void)hipHostFree(s->cg_brick_host);
}

/* Adds the partials of the last CG kernel: each brick's on the device, then
 * the bricks of the whole grid in order on the host (and across ranks). */
int cg_sum(hip_state *s, double *a, double *b)
{
    long bricks = cg_brick_count(s);
    const long threads = bricks * CG_BRICK_LANES;
    brick_sums<<<(unsigned)((threads + CG_SUM_THREADS - 1) / CG_SUM_THREADS), CG_SUM_THREADS>>>(s->cg_partials, s->cg_bricks,
                                                                                                s->cg_sums);
    HIP_CHECK_LAUNCH("brick_sums");
    HIP_CALL(hipMemcpy(s->cg_brick_host, s->cg_sums, (size_t)bricks * sizeof(double2), hipMemcpyDeviceToHost));
    HEAT_CALL(heat_reduction_sum_bricks(&s->reduction, &s->cg_brick_host[0].x, 2, a));
    if (b) HEAT_CALL(heat_reduction_sum_bricks(&s->reduction, &s->cg_brick_host[0].y, 2, b));
    return HEAT_OK;
}

/* A = I - theta alpha dt L0 as the heat step's coefficients. */
template <typename T> static stencil_coeffs<T> operator_coeffs(const hip_state *s)
{
    stencil_coeffs<T> c = cast_coeffs<T>(s->coeffs);
    c.alpha_dt = (T)(-heat_scheme_theta(s->problem.implicit.scheme) * s->coeffs.alpha_dt);
    return c;
}

/* A = I - theta alpha dt L0 with the order's coefficients. */
template <typename T> static order_coeffs<T> order_operator_coeffs(const hip_state *s)
{
    return cast_order_coeffs<T>(s, -heat_scheme_theta(s->problem.implicit.scheme) * s->space.alpha_dt);
}

/* Space orders above 2: the order kernels of order_kernels.hip in place of
 * the 7-point ones, which mirror across the boundary faces as they read (the
 * ghosts the 7-point kernels write beside their values go unread). */
template <typename T, int R> static void order_cg_rhs_launch(hip_state *s, double fraction)
{
    order_cg_rhs<T, R><<<cg_grid(s), CG_THREADS>>>(cg_vec<T>(s, CG_R), owned<T>(s, s->current), s->shape,
                                                   cast_order_coeffs<T>(s, s->space.alpha_dt), cast_halo<T>(s),
                                                   (T)(fraction * s->space.alpha_dt), s->diagonal, cg_out(s));
}

template <typename T, int R> static void order_cg_apply_launch(hip_state *s)
{
    order_cg_apply<T, R><<<cg_grid(s), CG_THREADS>>>(cg_vec<T>(s, CG_Q), cg_vec<T>(s, CG_P), s->shape,
                                                     order_operator_coeffs<T>(s), homogeneous_halo<T>(s), cg_out(s));
}

template <typename T, int R>
static void order_cheb_step_launch(hip_state *s, const heat_chebyshev *cheb, int k, int current, int other)
{
    order_cheb_step<T, R><<<cg_grid(s), CG_THREADS>>>(cg_vec<T>(s, other), cg_vec<T>(s, current), cg_vec<T>(s, CG_R),
                                                      (T)cheb->keep[k], (T)cheb->push[k], k == 1, s->shape,
                                                      order_operator_coeffs<T>(s), homogeneous_halo<T>(s), cg_out(s));
}

/* launcher<T, R>(s, ...) for the run's radius 2..4. */
#define ORDER_RADIUS_CALL(launcher, T, s, ...)                                                                   \
    do {                                                                                                         \
        switch ((s)->space.radius) {                                                                             \
        case 2: launcher<T, 2>(s, ##__VA_ARGS__); break;                                                         \
        case 3: launcher<T, 3>(s, ##__VA_ARGS__); break;                                                         \
        default: launcher<T, 4>(s, ##__VA_ARGS__); break;                                                        \
        }                                                                                                        \
    } while (0)

template <typename T> static int cg_begin_typed(hip_state *s, double fraction, double *rr, double *rz)
{
    s->x_pending = 0; /* a solve that failed may have left one */
    if (!halo_ready(s->halo_valid, 1)) HEAT_CALL(fill_halo(s));
    HEAT_CALL(exchange_buffer(s, s->field[s->current]));
    if (s->space.radius > 1) {
        ORDER_RADIUS_CALL(order_cg_rhs_launch, T, s, fraction);
        HIP_CHECK_LAUNCH("order_cg_rhs");
        return cg_sum(s, rr, rz);
    }
    cg_rhs<T><<<cg_grid(s), CG_THREADS>>>(cg_vec<T>(s, CG_R), owned<T>(s, s->current), s->shape, cast_coeffs<T>(s->coeffs),
                                          cast_halo<T>(s), (T)(fraction * s->coeffs.alpha_dt), s->diagonal, cg_out(s));
    HIP_CHECK_LAUNCH("cg_rhs");
    return cg_sum(s, rr, rz);
}

/* z = r / centre (the first Chebyshev iterate), materials runs' too: its instances in this unit only. */
template <typename T> int cg_scale_launch(hip_state *s, int to, double factor)
{
    cg_scale<T><<<cg_grid(s), CG_THREADS>>>(cg_vec<T>(s, to), cg_vec<T>(s, CG_R), (T)factor, s->shape,
                                            homogeneous_halo<T>(s), cg_out(s));
    HIP_CHECK_LAUNCH("cg_scale");
    return HEAT_OK;
}
template int cg_scale_launch<float>(hip_state *, int, double);
template int cg_scale_launch<double>(hip_state *, int, double);

template <typename T> static int cg_precondition_typed(hip_state *s, const heat_chebyshev *cheb, double *rz)
{
    int current = CG_Z, other = CG_W;
    HEAT_CALL(cg_scale_launch<T>(s, current, cheb->inv_centre));
    for (int k = 1; k < cheb->degree; ++k) {
        HEAT_CALL(exchange_buffer(s, s->cg_vector[current]));
        if (s->space.radius > 1) {
            ORDER_RADIUS_CALL(order_cheb_step_launch, T, s, cheb, k, current, other);
            HIP_CHECK_LAUNCH("order_cheb_step");
            std::swap(current, other);
            continue;
        }
        cheb_step<T><<<cg_grid(s), CG_THREADS>>>(cg_vec<T>(s, other), cg_vec<T>(s, current), cg_vec<T>(s, CG_R),
                                                 (T)cheb->keep[k], (T)cheb->push[k], k == 1, s->shape,
                                                 operator_coeffs<T>(s), homogeneous_halo<T>(s), cg_out(s));
        HIP_CHECK_LAUNCH("cheb_step");
        std::swap(current, other);
    }
    s->z_result = current;
    return cg_sum(s, rz, NULL);
}

template <typename T> static int cg_direction_typed(hip_state *s, double beta)
{
    int source = s->problem.implicit.preconditioner == HEAT_PRECOND_CHEBYSHEV ? s->z_result : CG_R;
    cg_direction<T><<<cg_grid(s), CG_THREADS>>>(cg_vec<T>(s, CG_P), cg_vec<T>(s, source), (T)beta,
                                                x_step_waiting<T>(s), s->shape, s->diagonal, homogeneous_halo<T>(s));
    HIP_CHECK_LAUNCH("cg_direction");
    s->x_pending = 0;
    return exchange_buffer(s, s->cg_vector[CG_P]); /* cg_apply reads its neighbours next */
}

template <typename T> static int cg_apply_typed(hip_state *s, double *pq)
{
    if (s->space.radius > 1) {
        ORDER_RADIUS_CALL(order_cg_apply_launch, T, s);
        HIP_CHECK_LAUNCH("order_cg_apply");
        return cg_sum(s, pq, NULL);
    }
    cg_apply<T><<<cg_grid(s), CG_THREADS>>>(cg_vec<T>(s, CG_Q), cg_vec<T>(s, CG_P), s->shape, operator_coeffs<T>(s),
                                            homogeneous_halo<T>(s), cg_out(s));
    HIP_CHECK_LAUNCH("cg_apply");
    return cg_sum(s, pq, NULL);
}

template <typename T> static int cg_update_typed(hip_state *s, double a, int first, double *rr, double *rz)
{
    cg_update<T><<<cg_grid(s), CG_THREADS>>>(cg_vec<T>(s, CG_R), cg_vec<T>(s, CG_Q), (T)a, s->shape, s->diagonal,
                                             cg_out(s));
    HIP_CHECK_LAUNCH("cg_update");
    s->x_pending = 1, s->x_a = a, s->x_first = first;
    return cg_sum(s, rr, rz);
}

template <typename T> static int cg_finish_typed(hip_state *s)
{
    if (!s->x_pending) return heat_error(HEAT_ERR_RUNTIME, "CG finished without an update (internal error)");
    cg_finish<T><<<cg_grid(s), CG_THREADS>>>(x_step_waiting<T>(s), cg_vec<T>(s, CG_P), owned<T>(s, s->current),
                                             s->shape, cast_halo<T>(s));
    HIP_CHECK_LAUNCH("cg_finish");
    s->x_pending = 0;
    s->current = 1 - s->current;
    s->halo_valid = HALO_YZ;
    HIP_CALL(hipStreamSynchronize(0));
    return HEAT_OK;
}

/* Materials runs' operations are backend_hip_materials_cg.hip's. */
static bool has_materials(void *state) { return static_cast<hip_state *>(state)->mat != NULL; }
#define HIP_MATERIAL(state, name, ...) \
    if (has_materials(state)) return name(static_cast<hip_state *>(state), __VA_ARGS__)

static int hip_cg_begin(void *state, double fraction, double *rr, double *rz)
{
    HIP_MATERIAL(state, material_cg_begin, fraction, rr, rz);
    return HIP_TYPED(state, cg_begin_typed, fraction, rr, rz);
}
static int hip_cg_precondition(void *state, const heat_chebyshev *cheb, double *rz)
{
    HIP_MATERIAL(state, material_cg_precondition, cheb, rz);
    return HIP_TYPED(state, cg_precondition_typed, cheb, rz);
}
static int hip_cg_direction(void *state, double beta)
{
    HIP_MATERIAL(state, material_cg_direction, beta);
    return HIP_TYPED(state, cg_direction_typed, beta);
}
static int hip_cg_apply(void *state, double *pq)
{
    HIP_MATERIAL(state, material_cg_apply, pq);
    return HIP_TYPED(state, cg_apply_typed, pq);
}
static int hip_cg_update(void *state, double a, int first, double *rr, double *rz)
{
    HIP_MATERIAL(state, material_cg_update, a, first, rr, rz);
    return HIP_TYPED(state, cg_update_typed, a, first, rr, rz);
}
static int hip_cg_finish(void *state)
{
    hip_state *s = static_cast<hip_state *>(state);
    if (s->mat) return material_cg_finish(s);
    return s->problem.precision == HEAT_FLOAT ? cg_finish_typed<float>(s) : cg_finish_typed<double>(s);
}

/* Host only, as backend_hip.hip's tables: clang would otherwise copy it into the device code object,
 * where the host functions it points to do not exist. */
#if !defined(__HIP_DEVICE_COMPILE__)
const heat_cg_ops hip_cg = {
    .begin = hip_cg_begin,
    .precondition = hip_cg_precondition,
    .direction = hip_cg_direction,
    .apply = hip_cg_apply,
    .update = hip_cg_update,
    .finish = hip_cg_finish,
};
#endif
