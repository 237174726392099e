/* lz_cert.c — what the search of verify (lanczos.c, lz_verify) has shown:
 * the certificate that a wanted eigenvector beyond the edge was not missed.
 *
 * The search runs thick-restart Lanczos from a random unit vector r in the
 * complement of the locked vectors.  Let u be a unit eigenvector there,
 * A u = mu u, and c = u^T r.  Every basis vector of the search is a
 * polynomial in A applied to r, so u^T v_i = c q_i(mu) with scalars q_i that
 * follow from the projected matrix alone: q = 1 for r; an expansion step
 * A v_j = sum_{i <= j} T_ij v_i + beta_j v_{j+1} gives
 *     beta_j q_{j+1} = mu q_j - sum_{i <= j} T_ij q_i,
 * and a thick restart V' = V Y gives q' = Y^T q (the restart vector keeps
 * its value).  The basis (with the residual direction v_m) is orthonormal,
 * so by Bessel's inequality c^2 S(mu) <= 1 with S = sum_i q_i^2.  While every
 * Ritz value of the search lies short of mu, each q_i only grows beyond it
 * (their zeros, and those of the restarts' filters, lie on the other side),
 * so S(mu) >= S(edge) for every mu beyond the edge.  A random start has
 * c^2 < t / N with probability about sqrt(2 t / pi) (c^2 ~ chi^2_1 / N), so
 * once S(edge) >= N / t, a wanted eigenvector beyond the edge that the
 * search did not show would have needed a start component of probability
 * P = sqrt(2 t / pi) or less.  (For largest magnitude, two points, +|edge|
 * and -|edge|, and the smaller S.)  A value that was once certified stays
 * so: the inequality is about r and u, whatever the basis becomes.
 *
 * The edge is the one when the search starts; locking a missed value moves
 * the edge inwards, where S(edge) still bounds S from below.  An injected
 * random vector (a breakdown) breaks the link to r: the certificate is off
 * for the rest of the search and the search stops by its convergence test
 * alone; likewise in a B-inner product (st/), where the start's component
 * along a B-unit eigenvector is not distributed as assumed above.
 * bench/verify_certificate.py models the same quantity on plain
 * Lanczos; docs/performance.md has the measured levels.
 *
 * Written against spmv.h only: no backend headers, no conditional code. */
#include <float.h>
#include <math.h>
#include <string.h>

#include "lz_impl.h"

#define CERT_BIG 1e150 /* rescale the values past this (they grow geometrically) */
#define CERT_2_PI 0.63661977236758134308 /* 2 / pi */

void lz_cert_begin(lz_cert *ct, int which, double edge, int col, int m)
{
    ct->on = 1;
    ct->npts = which == PL_WHICH_LARGEST_MAGNITUDE ? 2 : 1;
    ct->mu[0] = which == PL_WHICH_LARGEST_MAGNITUDE ? fabs(edge) : edge;
    ct->mu[1] = -fabs(edge);
    ct->best = -INFINITY;
    for (int p = 0; p < 2; p++) {
        memset(ct->q[p], 0, ((size_t)m + 1) * sizeof(double));
        ct->q[p][col] = 1.0;
        ct->lsc[p] = 0.0;
    }
}

/* The values of columns k + 1 .. mm from the expansion steps k .. mm - 1 of
 * the block [lo, mm) (T column-major, ld m; the last coupling beta_m). */
void lz_cert_extend(lz_cert *ct, const double *T, int m, int lo, int k, int mm, double beta_m)
{
    if (!ct->on) return;
    for (int p = 0; p < ct->npts; p++) {
        double *q = ct->q[p];
        for (int j = k; j < mm; j++) {
            const double *col = T + (size_t)j * m;
            const double beta = j + 1 < m && j + 1 < mm ? col[j + 1] : beta_m;
            double sum = ct->mu[p] * q[j];
            for (int i = lo; i <= j; i++) sum -= col[i] * q[i];
            if (!(beta > 0.0) || !isfinite(sum)) {
                ct->on = 0; /* an invariant subspace: a random vector follows */
                return;
            }
            q[j + 1] = sum / beta;
            if (fabs(q[j + 1]) > CERT_BIG) {
                for (int i = lo; i <= j + 1; i++) q[i] /= CERT_BIG;
                ct->lsc[p] += log(CERT_BIG);
            }
        }
    }
}

/* Note S over columns lo .. mm (mm: the residual direction) when every
 * Ritz value lies short of the points (hull_ok). */
void lz_cert_note(lz_cert *ct, int lo, int mm, int hull_ok)
{
    if (!ct->on || !hull_ok) return;
    double worst = INFINITY;
    for (int p = 0; p < ct->npts; p++) {
        double s = 0.0;
        for (int i = lo; i <= mm; i++) s += ct->q[p][i] * ct->q[p][i];
        worst = fmin(worst, s > 0.0 ? log(s) + 2.0 * ct->lsc[p] : -INFINITY);
    }
    ct->best = fmax(ct->best, worst);
}

/* The probability bound P of the best S so far in a space of dimension N
 * (1 where nothing is shown): t = N / S, P = sqrt(2 t / pi). */
double lz_cert_bound(const lz_cert *ct, double N)
{
    if (!(ct->best > -INFINITY)) return 1.0;
    const double lt = log(N) - ct->best;
    return fmin(1.0, exp(0.5 * (log(CERT_2_PI) + lt)));
}

/* The thick restart of the block [off, off + sz) to its kk Ritz vectors
 * (Ysel, sz x kk) and the restart vector (column mm's value, vm) in column
 * off + kk; tmp holds sz values. */
void lz_cert_restart(lz_cert *ct, const double *Ysel, int off, int sz, int kk, int mm, int vm, double *tmp)
{
    if (!ct->on) return;
    if (!vm) {
        ct->on = 0; /* a random restart vector */
        return;
    }
    for (int p = 0; p < ct->npts; p++) {
        double *q = ct->q[p];
        const double qm = q[mm];
        for (int c = 0; c < kk; c++) {
            double sum = 0.0;
            for (int r = 0; r < sz; r++) sum += Ysel[(size_t)c * sz + r] * q[off + r];
            tmp[c] = sum;
        }
        memcpy(q + off, tmp, (size_t)kk * sizeof(double));
        q[off + kk] = qm;
    }
}
