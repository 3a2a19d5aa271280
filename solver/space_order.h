#pragma once
/*
 * The central-difference Laplacian of order 2R in each axis (R = 1..4,
 * heat_problem.space_order = 2R): along one axis of spacing h,
 *   d2u/dx2 (i) ~ (c_0 u(i) + sum_{m=1..R} c_m (u(i-m) + u(i+m))) / h^2,
 * the standard coefficients (Fornberg's table, the seismic seed's radius-4
 * stencil). Order 2 is the 7-point stencil, c = (-2, 1), whose kernels,
 * coefficients (heat_coeffs) and stable step (heat_dt_max) stay as they are.
 *
 * Ghost layers and what they mirror: solver/problem.h.
 */
#include "problem.h"

enum { HEAT_SPACE_RADIUS_MAX = 4 };

/* Orders the solver takes: 2, 4, 6 and 8. */
int heat_space_order_valid(int order);

/* c_0..c_R of the second derivative of order 2R (R = 1..4), dimensionless. */
const double *heat_space_weights(int radius);

/* The symbol's largest magnitude per axis, at theta = pi:
 * -(c_0 + 2 sum_m c_m (-1)^m) / h^2 (4 / h^2 at order 2; 1 / length^2). */
double heat_space_spectral_radius(int radius, double h);

/* Sum over the axes of the spectral radius: the largest eigenvalue of -lap
 * (periodic), an upper bound with reflecting faces (1 / length^2). */
double heat_space_operator_radius(const heat_grid *grid, int radius);

/* Largest stable forward-Euler step, 2 / (alpha * operator radius); radius 1
 * returns heat_dt_max's bits. */
double heat_space_dt_max(const heat_grid *grid, double alpha, int radius);

/* Stencil coefficients of order 2R in the operation order every backend uses:
 * loads in ascending address order, accumulated as
 *   lap  = u[z-R] wz[R] ; ... ; += u[z-1] wz[1] ;
 *       += u[y-R] wy[R] ; ... ; += u[y-1] wy[1] ;
 *       += u[x-R] wx[R] ; ... ; += u[x-1] wx[1] ;
 *       += u[c] diag ;
 *       += u[x+1] wx[1] ; ... ; += u[x+R] wx[R] ;
 *       += u[y+1] wy[1] ; ... ; += u[z+R] wz[R]
 *   u_new = u[c] + alpha_dt * lap
 * (radius 1: heat_coeffs' order and values, the 7-point stencil's bits). */
typedef struct heat_space_coeffs {
    int radius;                                  /* R */
    double weight[3][HEAT_SPACE_RADIUS_MAX + 1]; /* [axis][m] = c_m / h_axis^2, m = 1..R; [axis][0] = 0 */
    double diag;                                 /* c_0 (1/hx^2 + 1/hy^2 + 1/hz^2) */
    double alpha_dt;                             /* alpha * dt */
} heat_space_coeffs;

heat_space_coeffs heat_space_coeffs_make(const heat_problem *problem);
