/*
 * The CPU backend's explicit steps' sweeps for one precision: the state's
 * tables and rules of that precision handed to the kernels. Included twice
 * by backend_cpu.c, after cpu_cg_ops.h (bc_rule, mat), with REAL = double /
 * float and SUFFIX = _d / _f; backend_cpu.c picks one by TYPED.
 */
#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#define FN(name) CAT(name, SUFFIX)

/* The y and z faces' ghosts (all R layers of them above order 2) by the run's rules. */
static void FN(fill_halo_yz_typed)(cpu_state *s, void *field)
{
    if (s->radius > 1) FN(wide_halo_fill)(field, s->problem.grid.n, &s->layout, s->radius, FN(bc_rule)(s), 0);
    else FN(halo_fill_yz)(field, s->problem.grid.n, &s->layout, FN(bc_rule)(s));
}

/* Planes [z_begin, z_end) of out = step(in) or lap(in) (variant v), an exchange travelling meanwhile (NULL: none). */
static void FN(sweep_planes_typed)(cpu_state *s, void *out, void *in, const heat_variant *v, int z_begin, int z_end,
                                   const heat_halo_transport *travelling)
{
    const int *n = s->problem.grid.n;
    if (s->radius > 1) {
        const int mode = v->laplacian ? WIDE_LAPLACIAN : variant_streams(v) ? WIDE_STEP_STREAM : WIDE_STEP;
        const FN(wide_coeffs) k = FN(wide_coeffs_cast)(&s->wide);
        int rows_y, rows_z;
        variant_tile_rows(v, &rows_y, &rows_z);
        FN(wide_sweep_planes)(out, in, n, &s->layout, &k, FN(bc_rule)(s), mode, variant_vectors(v), rows_y, rows_z,
                              s->block_rows, z_begin, z_end, travelling);
        return;
    }
    FN(stencil_sweep_planes)(out, in, n, &s->layout, FN(coeffs_cast)(&s->coeffs), FN(bc_rule)(s), v->laplacian,
                             variant_streams(v), s->block_rows, z_begin, z_end, travelling);
}

/* out = two 7-point steps of in; beyond: the outer received planes (NULL: a boundary face). */
/* Planes [z_begin, z_end) of out = two steps of in, on `threads` threads;
 * with an exchange travelling, keeping v's planes next to the faces in
 * s->edges for sweep2_edges_typed. */
static void FN(sweep2_planes_typed)(cpu_state *s, void *out, void *in, int stream, const void *const beyond[2],
                                    int threads, int z_begin, int z_end, const heat_halo_transport *travelling)
{
    const int *n = s->problem.grid.n;
    const long sy = s->layout.stride_y;
    const REAL *const outer[2] = {beyond[0], beyond[1]};
    FN(edge_planes) keep = {s->edges, FN(edge_plane_values)(sy, n[1]), sy, n[2]};
    FN(stencil_sweep2_planes)(out, in, n, &s->layout, FN(coeffs_cast)(&s->coeffs), FN(bc_rule)(s), stream,
                              s->fused_rows, s->rings, outer, threads, z_begin, z_end, travelling,
                              travelling ? &keep : NULL);
}

/* The two planes next to each z face, once the exchanged planes have arrived. */
static void FN(sweep2_edges_typed)(cpu_state *s, void *out, void *in, int stream, const void *const beyond[2])
{
    const int *n = s->problem.grid.n;
    const long sy = s->layout.stride_y;
    const REAL *const outer[2] = {beyond[0], beyond[1]};
    FN(edge_planes) e = {s->edges, FN(edge_plane_values)(sy, n[1]), sy, n[2]};
    FN(stencil_sweep2_edges)(out, in, n, &s->layout, FN(coeffs_cast)(&s->coeffs), FN(bc_rule)(s), stream, &e,
                             outer, pair_threads(s));
}

/* s->next = one general step of s->current, its exchanged ghosts set (the sweep sets the boundary faces'). */
static void FN(material_sweep_typed)(cpu_state *s, int stream)
{
    FN(material_sweep)(s->next, s->current, s->zone, &s->runs, s->problem.grid.n, &s->layout, FN(mat)(s),
                       s->block_rows, stream, s->row_scratch, s->scratch_threads);
}

/* s->next = two general steps of s->current, the second with the sources of second_time; each
 * step's boundary power into its bricks (bricks[0], bricks[1]). */
static void FN(material_pair_typed)(cpu_state *s, int stream, double second_time, double *const bricks[2])
{
    FN(material_tables) second = *FN(mat)(s); /* shares the conductances; its own sources */
    second.set_wq = second.set_wq_other;
    FN(material_sources_at)(&second, s->problem.materials, second_time);
    FN(boundary_energy) energy[2] = {FN(boundary_energy_of)(s, NULL, 0, bricks[0]),
                                     FN(boundary_energy_of)(s, NULL, 1, bricks[1])};
    FN(material_pair) pair = {FN(mat)(s), &second, {{0}}, {&energy[0], &energy[1]}};
    memcpy(pair.captured, s->captured, sizeof pair.captured);
    FN(material_sweep2)(s->next, s->current, s->zone, &s->runs, s->problem.grid.n, &s->layout, &pair, stream,
                        s->fused_rows, s->rings, pair_threads(s), s->row_scratch, s->scratch_threads);
}

#undef FN
#undef CAT
#undef CAT_
