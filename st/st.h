/* st.h — spectral transformations of A x = lambda B x (B = I when absent)
 * behind the operator interface of spmv.h, so that lz_solve and ks_solve
 * run on them unchanged (docs/config.md, "Spectral transformations").
 *
 * Shift-and-invert (PL_ST_SHIFT_INVERT): the operator x -> (A - sigma B)^{-1}
 * B x, whose eigenvalues theta = 1 / (lambda - sigma) are largest for the
 * lambda nearest sigma; lambda = sigma + 1 / theta.  For a complex sigma
 * and real A, B the operator is the real part Re[(A - sigma B)^{-1} B]
 * (ARPACK's mode 3 for a complex shift, dnaupd): real arithmetic in the
 * Krylov method, one complex factorisation; theta = (1/(lambda - sigma) +
 * 1/(lambda - conj sigma)) / 2 keeps lambda's eigenvector, and lambda is
 * recovered by the Rayleigh quotient x^H A x / x^H B x of that eigenvector.
 * B-inverse (PL_ST_B_INVERT, a B but no target): x -> B^{-1} A x, theta =
 * lambda.
 *
 * Rows: the caller's CSR row blocks of A and B (the same blocks, global
 * columns), kept by reference for the products and the residuals; the
 * operator's local rows are those rows in their original order.  The
 * factorisation is factor/fact.h's (MUMPS or cuDSS): analysed once,
 * factored once per shift (pl_st_set_shift refactors on the same
 * analysis).  Every function is collective over the communicator. */
#ifndef PL_ST_H
#define PL_ST_H

#include <mpi.h>

#include "fact.h"
#include "lanczos.h"
#include "pl_csr.h"
#include "spmv.h"

enum pl_st_kind { PL_ST_SHIFT_INVERT = 1, PL_ST_B_INVERT = 2 };

typedef struct pl_st_opts {
    int kind;                /* enum pl_st_kind                                    */
    double sigma_re, sigma_im; /* the shift (shift-and-invert)                     */
    int symmetric;           /* A and B are symmetric: a symmetric (LDL^T)         */
                             /* factorisation, and for B = I with a real sigma a   */
                             /* symmetric operator (pl_st_solve: Lanczos)          */
    pl_fact_opts fact;       /* kind, mem_limit, verbose (symmetric and is_complex */
                             /* are set from the above)                            */
} pl_st_opts;
void pl_st_opts_init(pl_st_opts *o);

typedef struct pl_st pl_st;

/* Analyse and factor; the shell operator on be (any backend: vectors are
 * moved to the host around the products where be's memory is not).  B
 * NULL: B = I.  PL_ERR_INPUT: B of another size or row block; the
 * factorisation refused by its memory estimate (the message gives it); a
 * singular A - sigma B (pl_st_singular() then returns 1). */
int pl_st_create(MPI_Comm comm, pl_backend *be, const pl_csr *A, const pl_csr *B, const pl_st_opts *o, pl_st **st);
/* The operator (owned by st), and the operator whose basis the returned
 * eigenvectors are in (pl_st_solve; the same one for a real sigma). */
pl_op *pl_st_op(pl_st *st);
pl_op *pl_st_vectors_op(pl_st *st);
/* A new shift on the same analysis (a refactorisation only).  Errors as
 * pl_st_create. */
int pl_st_set_shift(pl_st *st, double sigma_re, double sigma_im);
/* 1 when the last factorisation failed because the matrix is singular. */
int pl_st_singular(const pl_st *st);
/* The factorisation's figures (backend, estimate, times, solves). */
void pl_st_fact_info(const pl_st *st, pl_fact_info *info);
/* ||A||_inf and ||B||_inf (max row sums, all ranks). */
void pl_st_norms(const pl_st *st, double *anorm, double *bnorm);
void pl_st_free(pl_st **st);

/* Negative pivots of a symmetric LDL^T factorisation of B (its inertia):
 * 0 for a positive definite B.  *singular = 1 when B is singular (then
 * *neg is undefined).  PL_ERR_INPUT only for a refused factorisation. */
int pl_st_inertia(MPI_Comm comm, const pl_csr *B, const pl_fact_opts *fo, int64_t *neg, int *singular);

/* Run the eigensolver on the operator and map the result back to the
 * original problem: opt as for lz_solve (nev, tol, ncv, max_restarts,
 * seed, verify; which and want_vectors are set here), which: the
 * caller's order (PL_WHICH_NEAREST* relative to sigma, or any pl_which;
 * for shift-and-invert a non-nearest order is taken among the
 * max(2 nev, nev + 6) eigenvalues nearest sigma), method: PL_METHOD_LANCZOS
 * (only for a self-adjoint operator: opts.symmetric and a real sigma; with
 * a B, shift-and-invert or B-inverse, Lanczos runs in the B-inner product
 * <x, y>_B = x^T B y, in which (A - sigma B)^{-1} B and B^{-1} A are
 * self-adjoint: B must be positive definite, which the caller checks,
 * pl_st_inertia; the eigenvectors then come out B-orthonormal, x_i^T B x_j
 * = delta_ij) or PL_METHOD_KRYLOV_SCHUR (any pair; unit 2-norm vectors).
 * res: eigenvalues (and eigenvalues_imag) of the original problem in the
 * order of which, nev of them (nev + 1 when the nev-th has its conjugate
 * next; for a complex sigma the nev wanted ones each followed by its
 * conjugate where complex: up to 2 nev), residuals ||A x - lambda B x||_2
 * of the eigenvectors scaled to unit 2-norm, nconv = those with a backward error
 * ||r|| / ((||A|| + |lambda| ||B||) ||x||) <= opt->tol, the eigenvectors
 * (column layout of lz_result) in the operator's basis.  res->eigenvalues_imag
 * is set whatever the method (0 for real eigenvalues). */
int pl_st_solve(pl_st *st, const lz_options *opt, int which, int method, lz_result *res);

#endif
