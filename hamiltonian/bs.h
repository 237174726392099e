/* bs.h — the CFD-like block-stencil operator as a row generator: a
 * nonsymmetric test matrix with dense b x b blocks on a 3D grid whose whole
 * spectrum is known in closed form.
 *
 * A = M (x) B.  Grid nx x ny x nz, b unknowns per point, row
 * r = ((k ny + j) nx + i) b + c (x fastest, block component innermost).
 * Per direction d with n points: T_d = s_d D K_n D^-1, K_n the Clement
 * (Sylvester-Kac) matrix (K[p-1][p] = K[p][p-1] = sqrt(p (n-p)), eigenvalues
 * n-1-2q), s_d = h_d / (n-1), h = (1, (sqrt 5 - 1)/2, sqrt 2 - 1),
 * D = diag(rho^p), rho = sqrt((1+c)/(1-c)), c = convection: super-diagonal
 * s sqrt(p(n-p)) / rho, sub-diagonal s sqrt(p(n-p)) rho; eigenvalues
 * mu_{d,q} = h_d (1 - 2q/(n-1)) (0 when n = 1).
 * Stencil 7:  M = shift I + T_x (+) T_y (+) T_z (Kronecker sum).
 * Stencil 27: M = the same + corner (I+T_x) (x) (I+T_y) (x) (I+T_z).
 * B = X Lambda X^-1, X = I + 0.5/sqrt(b) R, R[r][c] in (-1, 1) from a
 * splitmix64 hash of (seed, r b + c); Lambda real block-diagonal with 2x2
 * rotations r_p [[cos phi, sin phi], [-sin phi, cos phi]], r_p = 1 - p/b,
 * phi = rotation, and for odd b a last real 1 - floor(b/2)/b.
 * Eigenvalues of A: m delta, m = shift + sum_d mu_d [+ corner prod_d (1 + mu_d)],
 * delta = r_p exp(+-i phi) (and the real one).  docs/models.md "Block-stencil".
 *
 * Only true non-zeros are stored (an entry that is exactly 0.0 is dropped);
 * columns of a row ascending.  Knows no GPU, MPI or files. */
#ifndef BS_H
#define BS_H

#include <stdint.h>

#include "pl_csr.h"

enum bs_stencil { PL_STENCIL_7 = 0, PL_STENCIL_27 = 1 };

/* The parameters of the block-stencil operator (see the top of this file). */
typedef struct bs_params {
    int nx, ny, nz;          /* grid points per direction                       */
    int block_size;          /* b unknowns per point                            */
    int stencil;             /* enum bs_stencil                                 */
    double convection;       /* c in [0, 1): upwind/downwind ratio (1+c)/(1-c)  */
    double shift;            /* sigma added to the grid operator                */
    double corner;           /* w, weight of the 27-point product term          */
    double rotation;         /* argument (radians) of the complex block         */
                             /* eigenvalues, in (0, pi)                         */
    uint64_t seed;           /* of the dense block eigenbasis X                 */
} bs_params;

typedef struct bs_model bs_model; /* opaque */

/* Build the model (1D factors, the dense block B through LAPACKE
 * dgetrf/dgetri).  PL_ERR_INPUT for invalid parameters (the message names the
 * parameter), PL_ERR_OVERFLOW if N or nnz do not fit int64, PL_ERR_INTERNAL if
 * X is singular for this seed, PL_ERR_MEM.  *model is owned by the caller
 * (bs_model_destroy).  Not collective. */
int bs_model_create(const bs_params *par, bs_model **model);
/* Free; accepts NULL, sets *model = NULL.  Can't fail. */
void bs_model_destroy(bs_model **model);
/* N = nx ny nz b, the number of rows.  Can't fail. */
int64_t bs_model_rows(const bs_model *model);
/* The exact number of stored entries (dropped zeros accounted for), by
 * counting the non-zero grid couplings (O(nx ny nz), OpenMP).  Can't fail. */
int64_t bs_model_nnz(const bs_model *model);
/* The count if no entry is exactly zero: stencil 27 b^2 prod_d (3 n_d - 2);
 * stencil 7 b^2 (nx ny nz + 2 [(nx-1) ny nz + nx (ny-1) nz + nx ny (nz-1)]).
 * Can't fail. */
int64_t bs_model_nnz_formula(const bs_model *model);
/* An upper bound of the entries in any row: b times 27 or 7.  Can't fail. */
int bs_model_max_row_len(const bs_model *model);

/* The factors' eigenvalues, for the closed form: mu_x[nx], mu_y[ny], mu_z[nz]
 * (mu_{d,q} = h_d (1 - 2q/(n_d - 1))) and delta_re[b], delta_im[b] (the block
 * eigenvalues).  Any pointer may be NULL.  Can't fail. */
void bs_model_factor_eigenvalues(const bs_model *model, double *mu_x, double *mu_y, double *mu_z, double *delta_re,
                                 double *delta_im);
/* The dense block B, row-major b x b, copied into blk[b * b].  Can't fail. */
void bs_model_block(const bs_model *model, double *blk);

/* One row: its length into *len, columns ascending and values into col/val
 * (room for bs_model_max_row_len entries).  PL_ERR_ARG for a row outside
 * [0, N).  Thread-safe. */
int bs_row(const bs_model *model, int64_t row, int *len, int64_t *col, double *val);

/* Row lengths of rows [r0, r1) into len[r1 - r0] (OpenMP-parallel); used to
 * balance row blocks by non-zeros.  PL_ERR_ARG for a bad range. */
int bs_row_lengths(const bs_model *model, int64_t r0, int64_t r1, int32_t *len);

/* CSR rows [r0, r1) into a freshly allocated block *out (OpenMP-parallel, two
 * passes: lengths, then fill; rows are independent).  The caller owns *out
 * (pl_csr_destroy).  Builds longer than ~2 s report progress on stderr
 * (pl_info, at most once per second).  PL_ERR_ARG for a bad range,
 * PL_ERR_MEM; on failure *out is left empty.  Not collective. */
int bs_rows_csr(const bs_model *model, int64_t r0, int64_t r1, pl_csr *out);

#endif
