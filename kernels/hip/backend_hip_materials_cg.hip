/*
 * The HIP backend's implicit schemes of materials runs (backend.h,
 * heat_cg_ops): CG on the scaled system of kernels/cpu/cpu_materials_cg.h
 * with the kernels of material_cg_kernels.hip, the dot products through the
 * constant-coefficient solver's fixed-order reductions (cg_sum), and the
 * energy balance of a solve as the CPU backend keeps it
 * (implicit_solve_energy in kernels/cpu/backend_cpu.c). Included by
 * backend_hip_materials.hip after hip_materials (its translation unit);
 * backend_hip_cg.hip's operations hand materials runs to these.
 */
#include "material_cg_kernels.hip"

template <typename T> static const T *material_weights(const hip_state *s)
{
    return reinterpret_cast<const T *>(s->mat->cg_weights);
}

/* 1 / diag(S) per point (Jacobi), or NULL: weight 1. */
template <typename T> static const T *material_inverse(const hip_state *s)
{
    return s->mat->inverse ? owned_in<T>(s, s->mat->inverse) : nullptr;
}

/* The homogeneous ghosts of a CG vector: its boundary faces by the zones' rules, then the exchanged ones. */
template <typename T> static int material_vector_ghosts(hip_state *s, int which)
{
    HEAT_CALL(material_fill_at<T>(s, cg_vec<T>(s, which), 1));
    return exchange_buffer(s, s->cg_vector[which]);
}

/* A solve whose right-hand side is 0 (a steady field): the solver stops before any iteration and never calls
 * finish, but the sources and faces carried their power over the step all the same (as steady_solve_energy in
 * kernels/cpu/backend_cpu.c). */
static void material_steady_energy(hip_state *s)
{
    hip_materials *m = s->mat;
    const double span = m->cg_fraction * s->problem.dt;
    for (int kind = 0; kind < HEAT_ENERGY_KINDS; ++kind) m->energy_in[kind] += span * m->power_begin[kind];
}

template <typename T> static int material_cg_begin_typed(hip_state *s, double fraction, double *rr, double *rz)
{
    hip_materials *m = s->mat;
    s->x_pending = 0; /* a solve that failed may have left one */
    m->cg_fraction = fraction;
    HEAT_CALL(prepare_step<T>(s, m->power_begin));
    material_cg_rhs<T><<<cg_grid(s), CG_THREADS>>>(cg_vec<T>(s, CG_R), owned<T>(s, s->current), owned_zone<T>(s),
                                                   s->shape, (const T *)m->table, m->layout, material_weights<T>(s),
                                                   (T)fraction, material_inverse<T>(s), cg_out(s));
    HIP_CHECK_LAUNCH("material_cg_rhs");
    HEAT_CALL(cg_sum(s, rr, rz));
    if (*rr == 0.0) material_steady_energy(s); /* no finish follows (backend.h) */
    return HEAT_OK;
}

template <typename T> static int material_cg_precondition_typed(hip_state *s, const heat_chebyshev *cheb, double *rz)
{
    hip_materials *m = s->mat;
    int current = CG_Z, other = CG_W;
    HEAT_CALL(cg_scale_launch<T>(s, current, cheb->inv_centre));
    for (int k = 1; k < cheb->degree; ++k) {
        HEAT_CALL(material_vector_ghosts<T>(s, current)); /* over cg_scale's constant-coefficient ghosts */
        material_cheb_step<T><<<cg_grid(s), CG_THREADS>>>(cg_vec<T>(s, other), cg_vec<T>(s, current), cg_vec<T>(s, CG_R),
                                                          (T)cheb->keep[k], (T)cheb->push[k], k == 1, owned_zone<T>(s),
                                                          s->shape, (const T *)m->table, m->layout,
                                                          material_weights<T>(s), cg_out(s));
        HIP_CHECK_LAUNCH("material_cheb_step");
        std::swap(current, other);
    }
    s->z_result = current;
    return cg_sum(s, rz, NULL);
}

template <typename T> static int material_cg_direction_typed(hip_state *s, double beta)
{
    int source = s->problem.implicit.preconditioner == HEAT_PRECOND_CHEBYSHEV ? s->z_result : CG_R;
    material_cg_direction<T><<<cg_grid(s), CG_THREADS>>>(cg_vec<T>(s, CG_P), cg_vec<T>(s, source), (T)beta,
                                                         x_step_waiting<T>(s), s->shape, material_inverse<T>(s));
    HIP_CHECK_LAUNCH("material_cg_direction");
    s->x_pending = 0;
    return material_vector_ghosts<T>(s, CG_P); /* material_cg_apply reads its neighbours next */
}

template <typename T> static int material_cg_apply_typed(hip_state *s, double *pq)
{
    hip_materials *m = s->mat;
    material_cg_apply<T><<<cg_grid(s), CG_THREADS>>>(cg_vec<T>(s, CG_Q), cg_vec<T>(s, CG_P), owned_zone<T>(s), s->shape,
                                                     (const T *)m->table, m->layout, material_weights<T>(s), cg_out(s));
    HIP_CHECK_LAUNCH("material_cg_apply");
    return cg_sum(s, pq, NULL);
}

template <typename T> static int material_cg_update_typed(hip_state *s, double a, int first, double *rr, double *rz)
{
    material_cg_update<T><<<cg_grid(s), CG_THREADS>>>(cg_vec<T>(s, CG_R), cg_vec<T>(s, CG_Q), (T)a, s->shape,
                                                      material_inverse<T>(s), cg_out(s));
    HIP_CHECK_LAUNCH("material_cg_update");
    s->x_pending = 1, s->x_a = a, s->x_first = first;
    return cg_sum(s, rr, rz);
}

/* A solve's energy: fraction dt ((1 - theta') P(u) + theta' P(u_new)) through the faces, theta' =
 * theta / fraction (a half step is a backward Euler one), and fraction dt times the sources' power. */
template <typename T> static int material_solve_energy(hip_state *s)
{
    hip_materials *m = s->mat;
    double end[HEAT_ENERGY_KINDS];
    HEAT_CALL(exchange_ghosts(s, s->current));
    HEAT_CALL(material_fill_typed<T>(s, s->current));
    HEAT_CALL(boundary_power<T>(s, s->current, end));
    const double span = m->cg_fraction * s->problem.dt;
    const double weight = heat_scheme_theta(s->problem.implicit.scheme) / m->cg_fraction;
    m->energy_in[HEAT_ENERGY_SOURCES] += span * m->power_begin[HEAT_ENERGY_SOURCES];
    for (int kind = HEAT_ENERGY_DIRICHLET; kind < HEAT_ENERGY_KINDS; ++kind)
        m->energy_in[kind] += span * ((1.0 - weight) * m->power_begin[kind] + weight * end[kind]);
    return HEAT_OK;
}

template <typename T> static int material_cg_finish_typed(hip_state *s)
{
    if (!s->x_pending) return heat_error(HEAT_ERR_RUNTIME, "CG finished without an update (internal error)");
    material_cg_finish<T><<<cg_grid(s), CG_THREADS>>>(x_step_waiting<T>(s), cg_vec<T>(s, CG_P), owned<T>(s, s->current),
                                                      owned_zone<T>(s), s->shape, material_weights<T>(s),
                                                      s->mat->tables.zones);
    HIP_CHECK_LAUNCH("material_cg_finish");
    s->x_pending = 0;
    s->current = 1 - s->current;
    s->halo_valid = HALO_NONE;
    HEAT_CALL(material_solve_energy<T>(s));
    HIP_CALL(hipStreamSynchronize(0));
    return HEAT_OK;
}

int material_cg_begin(hip_state *s, double fraction, double *rr, double *rz)
{
    return HIP_TYPED(s, material_cg_begin_typed, fraction, rr, rz);
}
int material_cg_precondition(hip_state *s, const heat_chebyshev *cheb, double *rz)
{
    return HIP_TYPED(s, material_cg_precondition_typed, cheb, rz);
}
int material_cg_direction(hip_state *s, double beta) { return HIP_TYPED(s, material_cg_direction_typed, beta); }
int material_cg_apply(hip_state *s, double *pq) { return HIP_TYPED(s, material_cg_apply_typed, pq); }
int material_cg_update(hip_state *s, double a, int first, double *rr, double *rz)
{
    return HIP_TYPED(s, material_cg_update_typed, a, first, rr, rz);
}
int material_cg_finish(hip_state *s)
{
    return s->problem.precision == HEAT_FLOAT ? material_cg_finish_typed<float>(s) : material_cg_finish_typed<double>(s);
}

/* The scaled system's per-zone weights in the run's precision (the CPU's material_tables_from). */
template <typename T> static std::vector<T> material_cg_weight_values(const hip_state *s)
{
    const heat_material_tables &t = s->mat->tables;
    const double theta = heat_scheme_theta(s->problem.implicit.scheme), dt = s->problem.dt;
    std::vector<T> w((size_t)MATERIAL_CG_WEIGHTS * t.zones);
    for (int z = 0; z < t.zones; ++z) {
        w[(size_t)MATERIAL_CG_INV_SQRT * t.zones + z] = (T)(1.0 / sqrt(t.heat_capacity[z]));
        w[(size_t)MATERIAL_CG_OPERATOR * t.zones + z] = (T)(theta * dt / sqrt(t.heat_capacity[z]));
        w[(size_t)MATERIAL_CG_RHS * t.zones + z] = (T)(dt / sqrt(t.heat_capacity[z]));
    }
    return w;
}

template <typename T> static int setup_material_cg_typed(hip_state *s)
{
    hip_materials *m = s->mat;
    const std::vector<T> w = material_cg_weight_values<T>(s);
    HIP_CALL(hipMalloc((void **)&m->cg_weights, w.size() * sizeof(T)));
    HIP_CALL(hipMemcpy(m->cg_weights, w.data(), w.size() * sizeof(T), hipMemcpyHostToDevice));
    if (s->problem.implicit.preconditioner != HEAT_PRECOND_JACOBI) return HEAT_OK;
    const size_t bytes = (size_t)s->layout.total * sizeof(T);
    HIP_CALL(hipMalloc((void **)&m->inverse, bytes));
    HIP_CALL(hipMemset(m->inverse, 0, bytes));
    material_inverse_diagonal<T><<<cg_grid(s), CG_THREADS>>>(owned_in<T>(s, m->inverse), owned_zone<T>(s), s->shape,
                                                             (const T *)m->table, m->layout, material_weights<T>(s),
                                                             s->problem.halo.exchanged);
    HIP_CHECK_LAUNCH("material_inverse_diagonal");
    return HEAT_OK;
}

/* The implicit schemes' weights and, for Jacobi, 1 / diag(S) (setup_materials, after the tables). */
static int setup_material_cg(hip_state *s)
{
    if (s->problem.implicit.scheme == HEAT_EULER) return HEAT_OK;
    HEAT_CALL(s->problem.precision == HEAT_FLOAT ? setup_material_cg_typed<float>(s) : setup_material_cg_typed<double>(s));
    snprintf(s->description, sizeof s->description,
             "CG kernels material_cg_apply/material_cheb_step, %d zones (block %d, %d planes a thread)",
             s->mat->tables.zones, (int)CG_THREADS, (int)CG_ZCHUNK);
    return HEAT_OK;
}

static void free_material_cg(hip_materials *m) { (void)hipFree(m->cg_weights), (void)hipFree(m->inverse); }
