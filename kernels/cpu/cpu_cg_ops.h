/*
 * The CPU backend's implicit-solver operations (backend.h, heat_cg_ops) for
 * one precision. Included twice by backend_cpu.c, after cpu_state, with
 * REAL = double / float and SUFFIX = _d / _f.
 */
#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#define FN(name) CAT(name, SUFFIX)

static const REAL *FN(bc_shift)(const cpu_state *s) { return (const REAL *)(sizeof(REAL) == 4 ? (const void *)s->shift_f : (const void *)s->shift); }
static const REAL *FN(bc_scale)(const cpu_state *s) { return (const REAL *)(sizeof(REAL) == 4 ? (const void *)s->scale_f : (const void *)s->scale); }

/* The stencil coefficients of A = I - theta alpha dt L0 as a "heat step". */
static FN(cpu_coeffs) FN(operator_coeffs)(const cpu_state *s)
{
    FN(cpu_coeffs) k = FN(coeffs_cast)(&s->coeffs);
    k.alpha_dt = (REAL)(-heat_scheme_theta(s->problem.implicit.scheme) * s->coeffs.alpha_dt);
    return k;
}

/* Homogeneous y/z ghosts of a CG vector (its x ghosts are set row by row). */
static void FN(fill_homogeneous_yz)(const cpu_state *s, void *v)
{
    static const REAL zero[6] = {0};
    FN(halo_fill_yz)(v, s->problem.grid.n, &s->layout, zero, FN(bc_scale)(s));
}

static void FN(cg_begin_typed)(cpu_state *s, double fraction, double *rr, double *rz)
{
    FN(halo_fill_yz)(s->current, s->problem.grid.n, &s->layout, FN(bc_shift)(s), FN(bc_scale)(s));
    FN(cg_rhs)(s->r, s->current, s->problem.grid.n, &s->layout, FN(coeffs_cast)(&s->coeffs), (REAL)(fraction * s->coeffs.alpha_dt),
               FN(bc_shift)(s), FN(bc_scale)(s), &s->diagonal, s->dots_a, s->dots_b);
    *rr = sum_rows(s, s->dots_a), *rz = sum_rows(s, s->dots_b);
}

static void FN(cg_precondition_typed)(cpu_state *s, const heat_chebyshev *c, double *rz)
{
    static const REAL zero[6] = {0};
    const int *n = s->problem.grid.n;
    void *current = s->z, *other = s->w;
    FN(cg_scale)(current, s->r, (REAL)c->inv_centre, n, &s->layout, c->degree == 1 ? s->dots_a : NULL);
    for (int k = 1; k < c->degree; ++k) {
        FN(fill_homogeneous_yz)(s, current);
        FN(cheb_step)(other, current, s->r, (REAL)c->keep[k], (REAL)c->push[k], k == 1, n, &s->layout,
                      FN(operator_coeffs)(s), zero, FN(bc_scale)(s), s->scratch, k == c->degree - 1 ? s->dots_a : NULL);
        void *t = current;
        current = other, other = t;
    }
    s->z_result = current;
    *rz = sum_rows(s, s->dots_a);
}

static void FN(cg_direction_typed)(cpu_state *s, double beta)
{
    const REAL *source = s->problem.implicit.preconditioner == HEAT_PRECOND_CHEBYSHEV ? s->z_result : s->r;
    FN(cg_direction)(s->p, source, (REAL)beta, s->problem.grid.n, &s->layout, &s->diagonal);
    FN(fill_homogeneous_yz)(s, s->p);
}

static void FN(cg_apply_typed)(cpu_state *s, double *pq)
{
    static const REAL zero[6] = {0};
    FN(cg_apply)(s->q, s->p, s->problem.grid.n, &s->layout, FN(operator_coeffs)(s), zero, FN(bc_scale)(s), s->dots_a);
    *pq = sum_rows(s, s->dots_a);
}

static void FN(cg_update_typed)(cpu_state *s, double a, int first, double *rr, double *rz)
{
    FN(cg_update)(s->next, s->p, s->r, s->q, (REAL)a, first, s->problem.grid.n, &s->layout, &s->diagonal, s->dots_a,
                  s->dots_b);
    *rr = sum_rows(s, s->dots_a), *rz = sum_rows(s, s->dots_b);
}

static void FN(cg_finish_typed)(cpu_state *s) { FN(cg_finish)(s->current, s->next, s->problem.grid.n, &s->layout); }

#undef FN
#undef CAT
#undef CAT_
