/* chebfd_impl.h — what the files of the Chebyshev filter diagonalization
 * share (chebfd.c the iteration, chebfd_filter.c the filter and the plan,
 * chebfd_orth.c the block layouts, orthonormalisation and Rayleigh-Ritz).
 * Private to lanczos/.  Written against spmv.h only.
 *
 * Layouts: the search block V is column-major (column j at V + j ld, ld =
 * n_local), as the backend's gemm_t, gemm, gemv_n and basis_update want it.  The
 * block products want row-major blocks of R <= PL_SPMM_RMAX columns (the R
 * values of row i at X + i R).  The two are converted with the backend's
 * gather (buf[i] = x[idx[i]]): forward one gather per slab of rows with an
 * index table of slab x R entries (the same for every slab, the source
 * pointer moved), back one gather per column with the table i R.  Every
 * backend has gather (the halo packing), so no new slot is needed. */
#pragma once /* no conditional compilation anywhere in lanczos/: a test greps for it */

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include "lanczos.h"
#include "lz_random.h"
#include "spmv.h"

#define CF_SLAB 16384 /* rows per forward gather (the table is CF_SLAB x R int32) */

typedef struct cf_ws {
    pl_op *op;
    pl_backend *be;
    MPI_Comm comm;
    int rank;
    int64_t N;             /* global rows                                       */
    size_t n, ld;          /* local rows; column stride of V (>= 1)             */
    const int64_t *gidx;
    int nb, R;             /* search block columns, columns per block product   */
    double *V;             /* backend, nb * ld, column-major                     */
    double *X0, *X1, *Acc, *W; /* backend, R * n + 1 each, row-major blocks     */
    size_t xs;             /* X1 = X0 + xs (one allocation: the step pair)       */
    int32_t *idx_f, *idx_b; /* backend gather tables (forward: CF_SLAB x rf,     */
    int rf, rb;            /* back: n entries i rb); the R they were made for   */
    size_t slab;
    lz_rand_rows rr;       /* the rows of the random columns (lz_random.h)        */
    uint64_t seed, nrand;  /* random columns drawn so far                         */
    /* host, nb x nb (column-major, ld nb) and nb */
    double *G, *Y, *theta, *res, *tmp;
    int64_t spmmv;         /* vectors multiplied                                  */
    double orth;           /* largest measured orthogonality loss                 */
    int svqb;              /* SVQB fallbacks                                      */
    int nofuse;            /* 1: the backend does not fuse the filter step        */
} cf_ws;

/* Jackson-damped Chebyshev coefficients c[0..deg] of the indicator of
 * [xlo, xhi] (subset of [-1, 1]): 1_[xlo,xhi](x) ~ sum_k c[k] T_k(x).
 * Can't fail. */
void cf_window_coef(double xlo, double xhi, int deg, double *c);
/* The filter's coefficients: cf_window_coef's series with the sigma
 * factors sinc(k / (deg + 1))^mu (mu = 0: Jackson's).  Can't fail. */
void cf_filter_coef(double xlo, double xhi, int deg, int mu, double *c);
/* The filter kernel of a run: PJDS_CHEBFD_KERNEL (a tuning switch: the
 * sigma power, 0 Jackson), else CF_KERNEL_DEFAULT. */
#define CF_KERNEL_DEFAULT 3
int cf_kernel_default(void);
/* The width rule's degree of the window [xlo, xhi] for kernel mu
 * (docs/config.md). */
int cf_degree_rule(double xlo, double xhi, int mu);

/* ---- layouts (chebfd_orth.c) ---- */
/* X (row-major, Rc columns) = V[:, col0:col0+Rc].  Collective: no. */
int cf_to_row(cf_ws *w, int col0, int Rc, double *X);
/* D[:, 0:Rc] (column-major, ld w->ld) = X (row-major, Rc columns). */
int cf_to_col(cf_ws *w, const double *X, int Rc, double *D);
/* G (k x k, ld k, host) = V[:, c0:c0+k]^T V[:, c0:c0+k].  Collective. */
int cf_gram(cf_ws *w, int c0, int k, double *G);
/* Columns [c0, c0+k) orthogonal to columns [0, c0) (two classical
 * Gram-Schmidt passes) and orthonormal among themselves (CholQR until the
 * measured loss max|G - I| <= 1e-13, SVQB with dropped directions refilled
 * at random where Cholesky fails); *loss the last measured loss.
 * Collective. */
int cf_orthonormalize(cf_ws *w, int c0, int k, double *loss);
/* Rayleigh-Ritz on columns [c0, c0+k): H = V^T A V (block products),
 * eigenpairs ascending into w->theta[0:k], V[:, c0:c0+k] = the Ritz
 * vectors.  Collective. */
int cf_rayleigh_ritz(cf_ws *w, int c0, int k);
/* Explicit residuals ||A v_j - theta_j v_j|| of columns [c0, c0+k) into
 * w->res[0:k] (theta from w->theta).  Collective. */
int cf_residuals(cf_ws *w, int c0, int k);
/* Column j = a reproducible random vector (seed, global row). */
int cf_random_column(cf_ws *w, int j);
/* Broadcast n doubles from rank 0 (the host decisions agree bit for bit). */
int cf_bcast(cf_ws *w, double *x, int n);
