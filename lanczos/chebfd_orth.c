/* chebfd_orth.c — the block work of the Chebyshev filter diagonalization
 * besides the filter (chebfd_impl.h): layout conversions, Gram matrices,
 * orthonormalisation, Rayleigh-Ritz and explicit residuals.
 *
 * Orthonormalisation of the filtered columns [c0, c0 + k) against the
 * locked columns [0, c0) and among themselves, in rounds: one classical
 * Gram-Schmidt pass against the locked columns (recording the largest
 * overlap it removed), the Gram matrix G of the block, and the measured
 * loss max(overlap, max|G - I|).  Done when the loss is at most
 * 10 eps sqrt(N) + 1e-14 (the rounding of a dot product of N terms);
 * else CholQR (Yamamoto et al. 2015: V = V R^-1, G = R^T R) when the
 * Cholesky factor exists and its diagonal spans less than 1e5 (the
 * columns' condition number below about 1e8, where one CholQR leaves a
 * loss that the next round removes: CholQR2; columns scaled to unit norm
 * first), else SVQB (Stathopoulos &
 * Wu 2002) with the directions of D G D below 1e-13 of its largest
 * eigenvalue dropped and refilled with fresh random columns (a filtered
 * block can be numerically rank deficient).  At most CF_ROUNDS rounds. */
#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "chebfd_impl.h"
#include "pl_error.h"

#define CF_ROUNDS 8

int cf_bcast(cf_ws *w, double *x, int n)
{
    PL_CHECK(MPI_Bcast(x, n, MPI_DOUBLE, 0, w->comm) == MPI_SUCCESS, PL_ERR_MPI,
             "MPI_Bcast of the projected problem failed");
    return PL_OK;
}

static int make_table(cf_ws *w, int32_t **idx, size_t cnt, int fwd, int R)
{
    int32_t *t = malloc((cnt ? cnt : 1) * sizeof *t);
    PL_CHECK(t, PL_ERR_MEM, "out of host memory for a gather table");
    if (fwd)
        for (size_t i = 0; i < w->slab; i++)
            for (int c = 0; c < R; c++) t[i * (size_t)R + (size_t)c] = (int32_t)((size_t)c * w->ld + i);
    else
        for (size_t i = 0; i < w->n; i++) t[i] = (int32_t)(i * (size_t)R);
    if (*idx) w->be->idx_destroy(w->be, *idx);
    *idx = NULL;
    const int e = w->be->idx_create(w->be, t, cnt ? cnt : 1, idx);
    free(t);
    return e;
}

int cf_to_row(cf_ws *w, int col0, int Rc, double *X)
{
    if (w->rf != Rc) {
        PL_CALL(make_table(w, &w->idx_f, w->slab * (size_t)Rc, 1, Rc));
        w->rf = Rc;
    }
    const double *src = w->V + (size_t)col0 * w->ld;
    for (size_t i0 = 0; i0 < w->n; i0 += w->slab) {
        const size_t m = w->n - i0 < w->slab ? w->n - i0 : w->slab;
        PL_CALL(w->be->gather(w->be, m * (size_t)Rc, w->idx_f, src + i0, X + i0 * (size_t)Rc));
    }
    return PL_OK;
}

int cf_to_col(cf_ws *w, const double *X, int Rc, double *D)
{
    if (w->rb != Rc) {
        PL_CALL(make_table(w, &w->idx_b, w->n, 0, Rc));
        w->rb = Rc;
    }
    for (int c = 0; c < Rc && w->n; c++) PL_CALL(w->be->gather(w->be, w->n, w->idx_b, X + c, D + (size_t)c * w->ld));
    return PL_OK;
}

int cf_gram(cf_ws *w, int c0, int k, double *G)
{
    const double *B = w->V + (size_t)c0 * w->ld;
    PL_CALL(pl_vec_gemm_t(w->op, k, k, B, w->ld, B, w->ld, G));
    for (int j = 0; j < k; j++) /* the upper triangle's sums, mirrored: exactly symmetric */
        for (int i = j + 1; i < k; i++) G[(size_t)j * k + i] = G[(size_t)i * k + j];
    return cf_bcast(w, G, k * k);
}

int cf_random_column(cf_ws *w, int j)
{
    const uint64_t s = w->seed ^ UINT64_C(0x63686562666431) ^ (w->nrand++ * UINT64_C(0x9E3779B97F4A7C15));
    /* drawn by the backend where it can (lz_random.c), else by all host
     * threads: HMEp's 288 first columns were ~6 s on one core */
    return lz_rand_block(&w->rr, 1, &s, w->V + (size_t)j * w->ld);
}

/* One classical Gram-Schmidt pass of columns [c0, c0+k) against [0, c0)
 * as whole blocks: C = V_l^T V_a (one gemm_t, one reduction), V_a -= V_l C
 * (a gemm into the scratch block and an axpy per R columns); *ov = the
 * largest coefficient removed. */
static int project_locked(cf_ws *w, int c0, int k, double *ov)
{
    *ov = 0.0;
    if (c0 == 0) return PL_OK;
    double *C = malloc((size_t)c0 * (size_t)k * sizeof *C);
    PL_CHECK(C, PL_ERR_MEM, "out of host memory for the projection on the locked columns");
    int rc = PL_OK;
    double *A = w->V + (size_t)c0 * w->ld;
    PL_CALL_GOTO(pl_vec_gemm_t(w->op, c0, k, w->V, w->ld, A, w->ld, C), out, rc);
    PL_CALL_GOTO(cf_bcast(w, C, c0 * k), out, rc);
    for (size_t i = 0; i < (size_t)c0 * k; i++) *ov = fmax(*ov, fabs(C[i]));
    for (int j0 = 0; j0 < k && w->n; j0 += w->R) {
        const int Rc = k - j0 < w->R ? k - j0 : w->R;
        PL_CALL_GOTO(w->be->gemm(w->be, w->n, c0, Rc, w->V, w->ld, C + (size_t)j0 * c0, c0, w->Acc, w->ld), out, rc);
        PL_CALL_GOTO(w->be->axpy(w->be, (size_t)Rc * w->ld, -1.0, w->Acc, A + (size_t)j0 * w->ld), out, rc);
    }
out:
    free(C);
    return rc;
}

/* CholQR of the columns scaled to unit norm (D = diag(G)^-1/2): V = V D
 * R^-1 when D G D = R^T R exists with a diagonal ratio above 1e-5; *ok = 0
 * otherwise (V untouched). */
static int cholqr(cf_ws *w, int c0, int k, int *ok)
{
    double *Y = w->Y, *d = w->tmp;
    *ok = 0;
    for (int i = 0; i < k; i++) {
        const double g = w->G[(size_t)i * k + i];
        if (!(g > 0)) return PL_OK;
        d[i] = 1.0 / sqrt(g);
    }
    for (int j = 0; j < k; j++)
        for (int i = 0; i < k; i++) Y[(size_t)j * k + i] = d[i] * w->G[(size_t)j * k + i] * d[j];
    if (LAPACKE_dpotrf(LAPACK_COL_MAJOR, 'U', k, Y, k) != 0) return PL_OK;
    double dmin = INFINITY, dmax = 0.0;
    for (int i = 0; i < k; i++) dmin = fmin(dmin, fabs(Y[(size_t)i * k + i])), dmax = fmax(dmax, fabs(Y[(size_t)i * k + i]));
    if (!(dmin > 1e-5 * dmax)) return PL_OK;
    PL_CHECK(LAPACKE_dtrtri(LAPACK_COL_MAJOR, 'U', 'N', k, Y, k) == 0, PL_ERR_LAPACK, "chebfd: LAPACKE_dtrtri failed");
    for (int j = 0; j < k; j++)
        for (int i = 0; i < k; i++) Y[(size_t)j * k + i] = i > j ? 0.0 : d[i] * Y[(size_t)j * k + i];
    PL_CALL(w->be->basis_update(w->be, w->n, k, k, w->V + (size_t)c0 * w->ld, w->ld, Y, k));
    *ok = 1;
    return PL_OK;
}

/* SVQB with dropped directions refilled at random. */
static int svqb(cf_ws *w, int c0, int k)
{
    double *S = w->Y, *d = w->tmp, *lam = w->res;
    for (int i = 0; i < k; i++) {
        const double g = w->G[(size_t)i * k + i];
        d[i] = g > 0 ? 1.0 / sqrt(g) : 0.0;
    }
    for (int j = 0; j < k; j++)
        for (int i = 0; i < k; i++) S[(size_t)j * k + i] = d[i] * w->G[(size_t)j * k + i] * d[j];
    PL_CHECK(LAPACKE_dsyev(LAPACK_COL_MAJOR, 'V', 'U', k, S, k, lam) == 0, PL_ERR_LAPACK, "chebfd: LAPACKE_dsyev (SVQB) failed");
    PL_CALL(cf_bcast(w, S, k * k));
    PL_CALL(cf_bcast(w, lam, k));
    const double top = lam[k - 1];
    int keep = 0;
    /* kept directions, the largest first: Y[:, keep] = D u_i / sqrt(lambda_i) */
    double *Y = w->G; /* G is not needed any more */
    for (int i = k - 1; i >= 0; i--) {
        if (!(lam[i] > 1e-13 * top)) break;
        const double s = 1.0 / sqrt(lam[i]);
        for (int r = 0; r < k; r++) Y[(size_t)keep * k + r] = d[r] * S[(size_t)i * k + r] * s;
        keep++;
    }
    if (keep > 0) PL_CALL(w->be->basis_update(w->be, w->n, k, keep, w->V + (size_t)c0 * w->ld, w->ld, Y, k));
    for (int j = keep; j < k; j++) PL_CALL(cf_random_column(w, c0 + j));
    w->svqb++;
    return PL_OK;
}

int cf_orthonormalize(cf_ws *w, int c0, int k, double *loss)
{
    const double thresh = 10.0 * 2.220446049250313e-16 * sqrt((double)w->N) + 1e-14;
    *loss = INFINITY;
    if (k == 0) return PL_OK;
    for (int round = 0; round < CF_ROUNDS; round++) {
        double ov = 0.0, dev = 0.0;
        PL_CALL(project_locked(w, c0, k, &ov));
        PL_CALL(cf_gram(w, c0, k, w->G));
        for (int j = 0; j < k; j++)
            for (int i = 0; i < k; i++) dev = fmax(dev, fabs(w->G[(size_t)j * k + i] - (i == j ? 1.0 : 0.0)));
        *loss = fmax(ov, dev);
        if (*loss <= thresh) break;
        int ok = 0;
        PL_CALL(cholqr(w, c0, k, &ok));
        if (!ok) PL_CALL(svqb(w, c0, k));
    }
    if (*loss > w->orth) w->orth = *loss;
    return PL_OK;
}

/* S[:, 0:Rc] (column-major in w->Acc) = A V[:, col0:col0+Rc]. */
static int apply_cols(cf_ws *w, int col0, int Rc)
{
    PL_CALL(cf_to_row(w, col0, Rc, w->X0));
    PL_CALL(pl_op_apply_block(w->op, Rc, w->X0, w->X1));
    PL_CALL(cf_to_col(w, w->X1, Rc, w->Acc));
    w->spmmv += Rc;
    return PL_OK;
}

int cf_rayleigh_ritz(cf_ws *w, int c0, int k)
{
    double *H = w->G;
    const double *B = w->V + (size_t)c0 * w->ld;
    for (int j0 = 0; j0 < k; j0 += w->R) {
        const int Rc = k - j0 < w->R ? k - j0 : w->R;
        PL_CALL(apply_cols(w, c0 + j0, Rc));
        PL_CALL(pl_vec_gemm_t(w->op, k, Rc, B, w->ld, w->Acc, w->ld, H + (size_t)j0 * k));
    }
    for (int j = 0; j < k; j++)
        for (int i = j + 1; i < k; i++) {
            const double s = 0.5 * (H[(size_t)j * k + i] + H[(size_t)i * k + j]);
            H[(size_t)j * k + i] = H[(size_t)i * k + j] = s;
        }
    PL_CHECK(LAPACKE_dsyev(LAPACK_COL_MAJOR, 'V', 'U', k, H, k, w->theta) == 0, PL_ERR_LAPACK,
             "chebfd: LAPACKE_dsyev (Rayleigh-Ritz) failed");
    PL_CALL(cf_bcast(w, H, k * k));
    PL_CALL(cf_bcast(w, w->theta, k));
    return w->be->basis_update(w->be, w->n, k, k, w->V + (size_t)c0 * w->ld, w->ld, H, k);
}

int cf_residuals(cf_ws *w, int c0, int k)
{
    for (int j0 = 0; j0 < k; j0 += w->R) {
        const int Rc = k - j0 < w->R ? k - j0 : w->R;
        PL_CALL(apply_cols(w, c0 + j0, Rc));
        for (int c = 0; c < Rc; c++) {
            double *s = w->Acc + (size_t)c * w->ld;
            PL_CALL(w->be->axpy(w->be, w->n, -w->theta[j0 + c], w->V + (size_t)(c0 + j0 + c) * w->ld, s));
            PL_CALL(pl_vec_nrm2(w->op, s, &w->res[j0 + c]));
        }
    }
    return cf_bcast(w, w->res, k);
}
