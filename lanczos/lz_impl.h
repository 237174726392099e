/* lz_impl.h — the thick-restart Lanczos solver's state, shared by its
 * hooks (lanczos.c: extract, verify, lock, restart, finish; lz_step.c:
 * the expansion step).  Private to lanczos/. */
#pragma once /* no conditional compilation in lanczos/ (lanczos.no_ifdef) */

#include "krylov_impl.h"

/* A cycle's first step leaves the measured overlaps below LZ_KEEP_FIRST
 * times the omega threshold in the new vector (kr_orthogonalize_known): the
 * recurrence starts from them instead of eps1, and the correction reads only
 * the columns from the first to the last larger one; usually there is none,
 * as the restart vector kept semi-orthogonality.  A column it corrects
 * seeds the recurrence's relation-error term (kr_pro_seed) for the whole
 * cycle, so the factor is not smaller: at 1e-3, hh_184800 took 62 full
 * steps instead of 49.  hh_184800 on one core (2026-11-26, before / after):
 * 75 / 49 of 334 steps full, 29.5 / 22.6 MB of vector traffic a step,
 * orthogonalisation 0.87 / 0.48 ms a step, the same 338 products.  Leaving
 * overlaps in the triggered full passes as well (factor 1e-3) saved another
 * 0.04 ms a step but raised the lowest eigenvector's residual from 3e-14 to
 * 1.2e-9 (within tol, but hh.obs_ranks compares the recursion that starts
 * from it across rank counts to 1e-10), so those passes correct fully.
 * (Since 2026-11-29 a trigger measures first and skips its passes only
 * where nothing passes the lower LZ_KEEP_SEL level: lz_step.c.) */
#define LZ_KEEP_FIRST 1e-2

/* The selected columns (locked and converged kept Ritz vectors, lz_pro.c
 * kr_pro_nselected) are measured in every local step's reduction, but
 * projected out in its update only when an overlap passes LZ_KEEP_SEL
 * times the omega threshold (kr_sel); a step in between reads 4 columns in
 * its update instead of nsel + 4.  Overlaps left in reach the converged
 * pairs through the kept Ritz vectors, so the level is low: hh_184800 on
 * one core (2026-11-26), vector traffic a step 22.6 MB with a projection
 * every step, 20.7 / 20.9 / 21.6 MB at LZ_KEEP_SEL 1e-2 / 1e-3 / 1e-4, the
 * same 338 products and 49 full steps, the lowest eigenvector's residual
 * 6e-14 but 6.8e-10 at 1e-2; at 1e-1 and 1 the explicit residuals failed
 * the tolerance and the solve ran again (516 and 526 products). */
#define LZ_KEEP_SEL 1e-3

/* The search's certificate (lz_cert.c): the basis columns' polynomial
 * values at the edge, u^T v_i = c q_i for an eigenvector u there with start
 * component c; the best log S = log sum q_i^2 seen with every Ritz value
 * short of the edge. */
typedef struct lz_cert {
    int on;        /* 1: tracked (verification phase, no random injection)    */
    int npts;      /* 1, or 2 for largest magnitude (+|edge|, -|edge|)        */
    double mu[2];  /* the points                                               */
    double lsc[2]; /* log of the scale of q[p] (rescaled against overflow)     */
    double best;   /* the best log S so far (-inf: none)                       */
    double *q[2];  /* m + 1 each: the values of the basis columns             */
    double *tmp;   /* m + 1                                                    */
} lz_cert;
void lz_cert_begin(lz_cert *ct, int which, double edge, int col, int m);
void lz_cert_extend(lz_cert *ct, const double *T, int m, int lo, int k, int mm, double beta_m);
void lz_cert_note(lz_cert *ct, int lo, int mm, int hull_ok);
double lz_cert_bound(const lz_cert *ct, double N);
void lz_cert_restart(lz_cert *ct, const double *Ysel, int off, int sz, int kk, int mm, int vm, double *tmp);

/* ---- the method's state (kr_solver ctx; the cycle: kr_cycle.c) ---- */
typedef struct lz_ctx {
    int which;       /* smallest, largest or largest_magnitude (the _real      */
                     /* variants are those of a real spectrum)                 */
    int reorth;      /* enum lz_reorth                                          */
    int lcap;        /* locked columns at most (verify)                         */
    int force_full;  /* the next step orthogonalises against the whole basis    */
    int nsel;        /* leading kept columns projected out in this cycle        */
    double beta_m;   /* the last coupling of the expansion                      */
    kr_pro pro;      /* Simon's omega recurrence (lz_pro.c)                     */
    double *lock_theta, *lock_est; /* lcap: locked values, their estimates      */
    double *lsort;   /* 2 lcap: the nev most wanted locked values, estimates    */
    int *lord;       /* lcap: the locked columns in wanted order                */
    double *orow;    /* m + 2: the overlaps a cycle's first step leaves (relative) */
    double *trow;    /* 2 (m + 2): a trigger's measured overlaps (lz_step_local) */
    double *so[3];   /* m + 2 each: the selected columns' signed overlaps with  */
    int so_col[3];   /* the basis columns so_col[r] (-1: none; lz_sel_row).     */
                     /* nsel reaches nlock + the converged kept columns, more   */
                     /* than PL_SEL_KMAX at nev > 16 (the composed step)        */
    int first_ready; /* the restart did the next cycle's first product and its */
                     /* measuring pass (lz_first_pass): lz_step finishes it    */
    double first_G[4];  /* Gram matrix of v_k and A v_k before that pass        */
    double first_t;     /* the product's and the Gram matrix's time (a step's)  */
    double *first_c3;   /* m + 2: the coefficients that pass subtracted          */
    double *first_h;    /* m + 3: its measured overlaps and squared norm         */
    lz_cert cert;       /* verify's certificate (lz_cert.c)                      */
} lz_ctx;

/* The expansion hooks (lz_step.c): column j + 1 = A v_j orthogonalised
 * locally or in full, T[j][j]; the bookkeeping after an injected random
 * column; the coupling beta_j into T. */
int lz_step(kr_solver *s, int j, double *nrm, int *in_span);
/* The cycle's first step done by the restart (lz_step.c): whether it fits,
 * the product A v_m into column m + 1 before the update, and the update
 * fused with the step's measuring pass; lz_step finishes the step. */
int lz_first_fits(const kr_solver *s, int off, int sz, int kk);
int lz_first_product(kr_solver *s);
int lz_first_pass(kr_solver *s, int off, int sz, int kk);
void lz_injected(kr_solver *s, int j);
void lz_couple(kr_solver *s, int j, double beta);

/* The returned vectors' measured loss of orthogonality beyond which
 * lz_finish replaces them by the Ritz vectors of their own span (the
 * promise of docs/config.md; not in the B-inner product). */
#define LZ_RETURN_LOSS 1e-10
/* lz_return.c: columns 0..nev-1 made orthonormal, and T[0:nev, 0:nev] =
 * their projection X^T A X (symmetrised), for lz_finish's Rayleigh-Ritz
 * step (projected, then the Ritz vectors to the front).  nev products.
 * Collective. */
int lz_return_project(kr_solver *s);
