/* lz_pro.c — Simon's omega recurrence: an estimate of the loss of
 * orthogonality of a Lanczos basis, without touching the vectors (partial
 * reorthogonalisation, lanczos.c; see krylov_impl.h for the interface).
 *
 * H. D. Simon, "The Lanczos algorithm with partial reorthogonalization",
 * Math. Comp. 42 (1984) 115-142.  With A V_j = V_j T_j + beta_j v_{j+1} e_j^T
 * (+ rounding) and omega_{a,b} = v_a^T v_b, taking v_i^T of the relation for
 * column j and subtracting v_j^T of it for column i gives, for i < j,
 *     beta_j omega_{j+1,i} = sum_l T[l][i] omega_{j,l}
 *                            - alpha_j omega_{j,i} - beta_{j-1} omega_{j-1,i}
 *                            + rounding.
 * T is the projected matrix as the solver holds it: tridiagonal, plus the
 * arrow of the thick restart (column k couples to every kept Ritz vector)
 * and locked columns on the diagonal only, so the sum over column i of T is
 * general (a few entries each; the whole row is O(j^2) flops on the host, a
 * few microseconds).  Rows j - 1 and j are the only ones needed.
 * Rounding: each step adds eps1 (normest + |r_i|) / beta_j, eps1 = eps
 * sqrt(N) / 2 (the dot-product rounding model PROPACK uses), with the sign
 * of the value so that the estimate only grows; |r_i| is the residual
 * estimate of a locked column (A x_i = theta_i x_i + r_i is not exact).
 * A vector orthogonalised against the whole basis starts at eps1; the first
 * vector of a thick-restart cycle starts from its measured overlaps
 * (kr_pro_measured: the cycle's first step leaves those below a hundredth of
 * the threshold in it, lanczos.c LZ_KEEP_FIRST).
 * Threshold: a full pass when an estimate passes min(sqrt(eps),
 * LZ_PRO_TOL_FACTOR tol), LZ_PRO_TOL_FACTOR = 100.  Semi-orthogonality
 * (sqrt(eps)) keeps T exact to eps ||A|| (Simon), but the local steps drop
 * the basis coefficients they do not compute (up to the threshold times
 * beta each, usually far less), and through the thick restart's kept Ritz
 * vectors these reach the residual estimates of the converged pairs: a
 * tolerance far below sqrt(eps) can be met by the estimates and missed by
 * the explicit residuals.  So lanczos.c checks the explicit residuals at
 * the end and, where one fails, solves again from the returned vectors with
 * the strict threshold min(sqrt(eps), tol) (the rule before 2026-11-25).
 * Measured (2026-11-25): with sqrt(eps) alone, e05r0000 at tol 1e-12
 * missed its dense eigenvalues by 2e-9 of ||A||, and lanczos.hh (tol 1e-12,
 * threshold 1e-10) had explicit residuals of 2.6e-11 against 1.5e-11; with
 * sqrt(eps) at tol 1e-10 HMEp took 58 full steps of 344 instead of 99, with
 * the same eigenvalues (3e-14) and residuals, and hh9 34 of 208 instead of
 * 91 (one H100). */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "krylov_impl.h"
#include "pl_error.h"

int kr_pro_init(kr_pro *p, int m, int64_t N, double tol)
{
    memset(p, 0, sizeof *p);
    p->m = m;
    p->eps1 = DBL_EPSILON * sqrt((double)(N > 0 ? N : 1)) / 2.0;
    p->strict = fmin(sqrt(DBL_EPSILON), tol);
    p->thresh = fmin(sqrt(DBL_EPSILON), LZ_PRO_TOL_FACTOR * tol);
    p->prev = calloc((size_t)m + 2, sizeof(double));
    p->cur = calloc((size_t)m + 2, sizeof(double));
    p->next = calloc((size_t)m + 2, sizeof(double));
    p->seed = calloc((size_t)m + 2, sizeof(double));
    p->expect = calloc((size_t)m + 2, sizeof(double));
    if (!p->prev || !p->cur || !p->next || !p->seed || !p->expect) {
        kr_pro_free(p);
        return PL_ERROR(PL_ERR_MEM, "out of host memory (omega recurrence, %d columns)", m);
    }
    return PL_OK;
}

void kr_pro_free(kr_pro *p)
{
    free(p->prev);
    free(p->cur);
    free(p->next);
    free(p->seed);
    free(p->expect);
    memset(p, 0, sizeof *p);
}

/* Row j of the estimate after v_j was orthogonalised against columns
 * 0..j-1 in full. */
void kr_pro_full(kr_pro *p, int j)
{
    double *t = p->prev;
    p->prev = p->cur;
    p->cur = t;
    for (int i = 0; i < j; i++) p->cur[i] = p->eps1;
    p->cur[j] = 1.0;
}

void kr_pro_measured(kr_pro *p, int j, const double *row)
{
    kr_pro_full(p, j);
    for (int i = 0; i < j; i++) p->cur[i] = fmax(p->eps1, row[i]);
}

double kr_pro_estimate(kr_pro *p, const double *T, int j, double alpha, double beta_prev, double beta,
                       const double *ovl, double normest)
{
    const int m = p->m;
    double worst = 0.0;
    for (int i = 0; i < j - 1; i++) {
        const double *Ti = T + (size_t)i * m; /* column i of T */
        double s = 0.0;
        for (int l = 0; l <= j && l < m; l++) s += Ti[l] * p->cur[l];
        s -= alpha * p->cur[i];
        s -= beta_prev * (i == j - 1 ? 1.0 : p->prev[i]); /* omega_{j-1,j-1} = 1 */
        double noise = p->eps1 * normest + PL_PRO_SEED_FACTOR * p->seed[i];
        s += s >= 0.0 ? noise : -noise;
        p->next[i] = s / beta;
        worst = fmax(worst, fabs(p->next[i]));
    }
    /* the two neighbours: measured by the local step */
    p->next[j - 1] = fmax(fabs(ovl[0]), p->eps1);
    p->next[j] = fmax(fabs(ovl[1]), p->eps1);
    p->next[j + 1] = 1.0;
    return fmax(worst, fmax(p->next[j - 1], p->next[j]));
}

void kr_pro_accept(kr_pro *p, int j)
{
    (void)j;
    double *t = p->prev;
    p->prev = p->cur;
    p->cur = p->next;
    p->next = t;
}

int kr_pro_accept_measured(kr_pro *p, int j, const double *C, double keep, double *worst_out)
{
    const int k = j + 2;
    const double nj = sqrt(fmax(C[j], 0.0)), nj1 = sqrt(fmax(C[k + j + 1], 0.0));
    int clean = nj > 0.0 && nj1 > 0.0;
    for (int i = 0; clean && i < j; i++) clean = fabs(C[i]) <= keep * nj;
    for (int i = 0; clean && i <= j; i++) clean = fabs(C[k + i]) <= keep * nj1;
    if (!clean) return 0;
    double worst = 0.0;
    for (int i = 0; i < j; i++) {
        p->cur[i] = fmax(p->eps1, fabs(C[i]) / nj);
        worst = fmax(worst, p->cur[i]);
    }
    for (int i = 0; i <= j; i++) {
        p->next[i] = fmax(p->eps1, fabs(C[k + i]) / nj1);
        worst = fmax(worst, p->next[i]);
    }
    p->next[j + 1] = 1.0;
    kr_pro_accept(p, j);
    *worst_out = worst;
    return 1;
}

void kr_pro_restart(kr_pro *p, int nlock, int s, int kk, const double *Ysel, int k_new)
{
    /* row of the restart vector v_k (the old v_m, row cur) against the new
     * kept columns: locked ones unchanged, Ritz vector c = V[:, nlock:nlock+s]
     * Ysel[:, c] -> sum_l |omega_{m,nlock+l}| |Ysel[l, c]| */
    double *nw = p->next;
    for (int i = 0; i < nlock; i++) nw[i] = p->cur[i];
    for (int c = 0; c < kk; c++) {
        double a = 0.0;
        for (int l = 0; l < s; l++) a += fabs(p->cur[nlock + l]) * fabs(Ysel[(size_t)c * s + l]);
        nw[nlock + c] = fmax(a, p->eps1);
    }
    nw[k_new] = 1.0;
    /* the arrow step of the next cycle expects A v_k to couple to kept
     * column c by beta_m Y[s-1, c] (set by the caller through expect) and
     * to nothing else */
    double *t = p->cur;
    p->cur = nw;
    p->next = t;
}

void kr_pro_seed(kr_pro *p, int k, const double *coef)
{
    for (int i = 0; i < k; i++) p->seed[i] = fabs(coef[i] - p->expect[i]);
}

void kr_pro_set_row(kr_pro *p, int j, const double *row)
{
    memcpy(p->cur, row, (size_t)j * sizeof(double));
    p->cur[j] = 1.0;
}

/* Paige: once a kept Ritz vector y_i has converged with coupling s_i (its
 * arrow entry), new Lanczos vectors pick up overlaps of about
 * eps ||A|| / |s_i| with it at once, so with a tolerance below that level
 * the estimate would trigger a full pass every few steps.  Such columns
 * (and locked ones) are instead projected out of every new vector
 * (selective orthogonalisation, Parlett & Scott 1979): the columns
 * 0..nsel-1, the longest prefix whose last member has
 * eps normest / |s_i| > thresh / 100. */
int kr_pro_nselected(const kr_pro *p, int k, int nlock, double normest)
{
    int nsel = nlock;
    for (int i = nlock; i < k; i++)
        if (DBL_EPSILON * normest > 0.01 * p->thresh * fabs(p->expect[i])) nsel = i + 1;
    return nsel;
}

/* After the local step with selected columns: their overlaps with v_{j+1}.
 * exact: meas holds them, measured on v_{j+1} itself (kr_local_fused; 0
 * where projected out).  Else they are what the subtraction of beta
 * v_{j-1} and alpha v_j brought back (the leftovers of the earlier steps,
 * which a projection with the recorded overlaps removes only as far as
 * those records are exact), plus, where the fused composed step measured
 * them and left them in (meas, NULL: none), the overlaps it left.
 * Returns the new largest entry of next. */
double kr_pro_selected(kr_pro *p, int nsel, int j, double alpha, double beta_prev, double beta, const double *meas,
                       int exact)
{
    for (int i = 0; i < nsel && i < j - 1; i++)
        p->next[i] = exact ? fmax(p->eps1, fabs(meas[i]))
                           : p->eps1 + (fabs(beta_prev) * fabs(p->prev[i]) + fabs(alpha) * fabs(p->cur[i])) / beta +
                                 (meas ? fabs(meas[i]) : 0.0);
    double worst = 0.0;
    for (int i = 0; i <= j; i++) worst = fmax(worst, fabs(p->next[i]));
    return worst;
}
