#pragma once
/*
 * Implicit time steps: the theta scheme
 *   (I - theta dt alpha L) u_new = (I + (1 - theta) dt alpha L) u_old
 * (theta = 1 backward Euler, 1/2 Crank-Nicolson), solved for the increment
 * x = u_new - u_old, which satisfies
 *   (I - theta dt alpha L0) x = dt alpha L(u_old)
 * with L0 the Laplacian under homogeneous boundary conditions: the boundary
 * values enter through L(u_old) only, so CG sees a symmetric positive
 * definite operator and starts from x = 0. Matrix-free preconditioned CG on
 * the backend's vectors (backend.h, heat_cg_ops).
 */
#include <stdio.h>

#include "backend.h"

typedef struct heat_cg_stats {
    long steps;              /* implicit steps taken by this process */
    long iterations;         /* CG iterations over those steps */
    int last_iterations, most_iterations;
    double last_residual;    /* final relative residual |r| / |r0| of the last step */
    double worst_residual;   /* largest final relative residual over the steps */
    int failed_alike;        /* the last solve stopped on its global sums' verdict (not converged, broken down,
                              * not finite): the same step on every rank, so no rank is left waiting */
} heat_cg_stats;

double heat_scheme_theta(heat_scheme scheme);
const char *heat_scheme_name(heat_scheme scheme);
const char *heat_preconditioner_name(heat_preconditioner preconditioner);

/* Eigenvalue bounds of A = I - theta dt alpha L0 (Gershgorin: [1, 1 + 4 theta
 * dt alpha sum 1/h^2]; space orders above 2: [1, 1 + theta dt alpha rho],
 * rho the operator radius of solver/space_order.h) and the Chebyshev
 * coefficients over them. */
heat_chebyshev heat_chebyshev_make(const heat_problem *problem);

/* One implicit step of the field held by the backend. `step` is the step
 * being taken (for messages); log (may be NULL) gets one line per step. */
int heat_implicit_step(const heat_backend_ops *ops, void *state, const heat_problem *problem,
                       const heat_chebyshev *cheb, long step, heat_cg_stats *stats, FILE *log);
