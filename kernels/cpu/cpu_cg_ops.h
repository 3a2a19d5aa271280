/*
 * The CPU backend's implicit-solver operations (backend.h, heat_cg_ops) for
 * one precision. Included twice by backend_cpu.c, after cpu_state, with
 * REAL = double / float and SUFFIX = _d / _f.
 */
#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#define FN(name) CAT(name, SUFFIX)

static const FN(ghost_rule) *FN(bc_rule)(const cpu_state *s) { return (const FN(ghost_rule) *)(sizeof(REAL) == 4 ? (const void *)&s->bc_f : (const void *)&s->bc_d); }
static const FN(ghost_rule) *FN(zero_rule)(const cpu_state *s) { return (const FN(ghost_rule) *)(sizeof(REAL) == 4 ? (const void *)&s->zero_f : (const void *)&s->zero_d); }

static const FN(material_tables) *FN(mat)(const cpu_state *s) { return (const FN(material_tables) *)(sizeof(REAL) == 4 ? (const void *)&s->mat_f : (const void *)&s->mat_d); }
static FN(material_tables) *FN(mat_mutable)(cpu_state *s) { return (FN(material_tables) *)(sizeof(REAL) == 4 ? (void *)&s->mat_f : (void *)&s->mat_d); }

/* The stencil coefficients of A = I - theta alpha dt L0 as a "heat step". */
static FN(cpu_coeffs) FN(operator_coeffs)(const cpu_state *s)
{
    FN(cpu_coeffs) k = FN(coeffs_cast)(&s->coeffs);
    k.alpha_dt = (REAL)(-heat_scheme_theta(s->problem.implicit.scheme) * s->coeffs.alpha_dt);
    return k;
}

/* The order-2R operator A = I - theta alpha dt L0 as a "heat step" (cpu_wide.h). */
static FN(wide_coeffs) FN(wide_operator_coeffs)(const cpu_state *s)
{
    FN(wide_coeffs) k = FN(wide_coeffs_cast)(&s->wide);
    k.alpha_dt = (REAL)(-heat_scheme_theta(s->problem.implicit.scheme) * s->wide.alpha_dt);
    return k;
}

/* The y/z ghosts of a field by the rule, and the exchanged faces' from the neighbours (x ghosts of
 * physical faces are set row by row inside the kernels; at orders above 2 all of them here). */
static int FN(fill_ghosts)(cpu_state *s, void *v, const FN(ghost_rule) *rule)
{
    if (s->radius > 1) {
        FN(wide_halo_fill)(v, s->problem.grid.n, &s->layout, s->radius, rule, 1);
        return exchange_ghosts(s, v);
    }
    if (s->materials) { /* every boundary face by its zones' rules; homogeneous ones for the CG vectors */
        FN(material_halo_fill)(v, s->zone, s->problem.grid.n, &s->layout, FN(mat)(s), rule == FN(zero_rule)(s));
        return exchange_ghosts(s, v);
    }
    FN(halo_fill_yz)(v, s->problem.grid.n, &s->layout, rule);
    return exchange_ghosts(s, v);
}

/* The x step cg_update left waiting, for the next pass over p. */
static FN(x_step) FN(x_step_waiting)(const cpu_state *s)
{
    return (FN(x_step)){s->x_pending ? (REAL *)s->next : NULL, (REAL)s->x_a, s->x_first};
}

static int FN(cg_begin_typed)(cpu_state *s, double fraction, double *rr, double *rz)
{
    s->x_pending = 0; /* a solve that failed may have left one */
    HEAT_CALL(FN(fill_ghosts)(s, s->current, FN(bc_rule)(s)));
    if (s->materials) {
        FN(material_sources_at)(FN(mat_mutable)(s), s->problem.materials, step_time(s));
        s->cg_fraction = fraction;
        HEAT_CALL(step_power(s, s->current, s->power_begin));
        FN(mat_cg_rhs)(s->r, s->current, s->zone, s->problem.grid.n, &s->layout, FN(mat)(s), (REAL)fraction,
                       s->inv_diagonal, s->reduction.brick[0], s->dots_a, s->dots_b);
    } else if (s->radius > 1) {
        FN(wide_coeffs) k = FN(wide_coeffs_cast)(&s->wide);
        FN(wide_cg_rhs)(s->r, s->current, s->problem.grid.n, &s->layout, &k, (REAL)(fraction * s->wide.alpha_dt),
                        &s->diagonal, s->reduction.brick[0], s->dots_a, s->dots_b);
    } else
    FN(cg_rhs)(s->r, s->current, s->problem.grid.n, &s->layout, FN(coeffs_cast)(&s->coeffs), (REAL)(fraction * s->coeffs.alpha_dt),
               FN(bc_rule)(s), &s->diagonal, s->reduction.brick[0], s->dots_a, s->dots_b);
    HEAT_CALL(heat_reduction_sum(&s->reduction, s->dots_a, rr));
    HEAT_CALL(heat_reduction_sum(&s->reduction, s->dots_b, rz));
    if (s->materials && *rr == 0.0) steady_solve_energy(s); /* no finish follows (backend.h) */
    return HEAT_OK;
}

/* Chebyshev step k: out (holding step k-1's z) = step k from current. */
static int FN(cheb_single)(cpu_state *s, const heat_chebyshev *c, int k, void *out, void *current, double *dots)
{
    HEAT_CALL(FN(fill_ghosts)(s, current, FN(zero_rule)(s)));
    if (s->materials) {
        FN(mat_cheb_step)(out, current, s->r, (REAL)c->keep[k], (REAL)c->push[k], k == 1, s->zone, s->problem.grid.n,
                          &s->layout, FN(mat)(s), s->reduction.brick[0], dots);
        return HEAT_OK;
    }
    if (s->radius > 1) {
        FN(wide_coeffs) op = FN(wide_operator_coeffs)(s);
        FN(wide_cheb_step)(out, current, s->r, (REAL)c->keep[k], (REAL)c->push[k], k == 1, s->problem.grid.n,
                           &s->layout, &op, s->reduction.brick[0], dots, s->wide_rows, s->wide_row_threads);
        return HEAT_OK;
    }
    FN(cheb_step)(out, current, s->r, (REAL)c->keep[k], (REAL)c->push[k], k == 1, s->problem.grid.n, &s->layout,
                  FN(operator_coeffs)(s), FN(zero_rule)(s), s->reduction.brick[0], dots, s->block_rows);
    return HEAT_OK;
}

/* Chebyshev steps k and k+1 in one sweep (cheb_pair) into mid and out. */
static int FN(cheb_two)(cpu_state *s, const heat_chebyshev *c, int k, const void *previous, void *current, void *mid,
                        void *out)
{
    HEAT_CALL(FN(fill_ghosts)(s, current, FN(zero_rule)(s)));
    FN(cheb_pair_args) a = {mid, out, current, k == 1 ? NULL : previous, s->r,
                            {(REAL)c->keep[k], (REAL)c->keep[k + 1]}, {(REAL)c->push[k], (REAL)c->push[k + 1]},
                            FN(operator_coeffs)(s), FN(zero_rule)(s)};
    FN(cheb_pair)(&a, s->problem.grid.n, &s->layout, s->fused_rows, s->rings, pair_threads(s));
    return HEAT_OK;
}

/* z = poly(A) r: steps 1 to degree-1 after the start. Where the run allows
 * and its trial chooses (cheb_pairs_now), they go two a sweep through four vectors in turn (z, w, q,
 * which the iteration recomputes after this, and z2); a single step leads
 * where their count is even, and the last step is always a single one,
 * which forms the dot products r.z. The same bits either way. */
static int FN(cg_precondition_typed)(cpu_state *s, const heat_chebyshev *c, double *rz)
{
    const int *n = s->problem.grid.n;
    const long seg = s->reduction.brick[0];
    const int pairs = cheb_pairs_now(s);
    const double start = omp_get_wtime();
    void *current = s->z, *other = s->w, *spare[2] = {s->q, s->z2};
    FN(cg_scale)(current, s->r, (REAL)c->inv_centre, n, &s->layout, seg, c->degree == 1 ? s->dots_a : NULL, pairs);
    int k = 1;
    if (pairs && (c->degree - 1) % 2 == 0) {
        HEAT_CALL(FN(cheb_single)(s, c, k++, other, current, NULL));
        void *t = current;
        current = other, other = t;
    }
    for (; pairs && k + 2 < c->degree; k += 2) {
        HEAT_CALL(FN(cheb_two)(s, c, k, other, current, spare[0], spare[1]));
        void *was_previous = other, *was_current = current;
        other = spare[0], current = spare[1];
        spare[0] = was_previous, spare[1] = was_current;
    }
    for (; k < c->degree; ++k) {
        HEAT_CALL(FN(cheb_single)(s, c, k, other, current, k == c->degree - 1 ? s->dots_a : NULL));
        void *t = current;
        current = other, other = t;
    }
    s->z_result = current;
    cheb_trial_call(s, (omp_get_wtime() - start) * 1e3);
    return heat_reduction_sum(&s->reduction, s->dots_a, rz);
}

static int FN(cg_direction_typed)(cpu_state *s, double beta)
{
    const REAL *source = s->problem.implicit.preconditioner == HEAT_PRECOND_CHEBYSHEV ? s->z_result : s->r;
    if (s->materials)
        FN(mat_cg_direction)(s->p, source, (REAL)beta, FN(x_step_waiting)(s), s->inv_diagonal, s->problem.grid.n,
                             &s->layout);
    else FN(cg_direction)(s->p, source, (REAL)beta, FN(x_step_waiting)(s), s->problem.grid.n, &s->layout, &s->diagonal);
    s->x_pending = 0;
    return FN(fill_ghosts)(s, s->p, FN(zero_rule)(s));
}

static int FN(cg_apply_typed)(cpu_state *s, double *pq)
{
    if (s->materials) {
        FN(mat_cg_apply)(s->q, s->p, s->zone, s->problem.grid.n, &s->layout, FN(mat)(s), s->reduction.brick[0], s->dots_a);
        return heat_reduction_sum(&s->reduction, s->dots_a, pq);
    }
    if (s->radius > 1) {
        FN(wide_coeffs) k = FN(wide_operator_coeffs)(s);
        FN(wide_cg_apply)(s->q, s->p, s->problem.grid.n, &s->layout, &k, s->reduction.brick[0], s->dots_a);
        return heat_reduction_sum(&s->reduction, s->dots_a, pq);
    }
    FN(cg_apply)(s->q, s->p, s->problem.grid.n, &s->layout, FN(operator_coeffs)(s), FN(zero_rule)(s),
                 s->reduction.brick[0], s->dots_a, s->block_rows);
    return heat_reduction_sum(&s->reduction, s->dots_a, pq);
}

static int FN(cg_update_typed)(cpu_state *s, double a, int first, double *rr, double *rz)
{
    if (s->materials)
        FN(mat_cg_update)(s->r, s->q, (REAL)a, s->inv_diagonal, s->problem.grid.n, &s->layout, s->reduction.brick[0],
                          s->dots_a, s->dots_b);
    else
        FN(cg_update)(s->r, s->q, (REAL)a, s->problem.grid.n, &s->layout, &s->diagonal, s->reduction.brick[0],
                      s->dots_a, s->dots_b);
    s->x_pending = 1, s->x_a = a, s->x_first = first;
    HEAT_CALL(heat_reduction_sum(&s->reduction, s->dots_a, rr));
    return heat_reduction_sum(&s->reduction, s->dots_b, rz);
}

static int FN(cg_finish_typed)(cpu_state *s)
{
    if (!s->x_pending) return heat_error(HEAT_ERR_RUNTIME, "CG finished without an update (internal error)");
    FN(x_step) waiting = FN(x_step_waiting)(s);
    s->x_pending = 0;
    if (s->materials) {
        FN(mat_cg_finish)(s->current, waiting, s->p, s->zone, FN(mat)(s), s->problem.grid.n, &s->layout);
        return implicit_solve_energy(s);
    }
    FN(cg_finish)(s->current, waiting, s->p, s->problem.grid.n, &s->layout);
    return HEAT_OK;
}

#undef FN
#undef CAT
#undef CAT_
