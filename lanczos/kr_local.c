/* kr_local.c — the local step of the Lanczos recurrence (partial
 * reorthogonalisation, lanczos.c): column j + 1 = A v_j made orthogonal to
 * v_{j-1} and v_j by the three-term recurrence with measured coefficients,
 * and the selected columns (selective orthogonalisation, lz_pro.c) kept
 * out of it.  Two forms (krylov_impl.h):
 *   kr_orthogonalize_local, composed: the queued product, then one
 *     reduction (the Gram matrix of [v_{j-1} v_j x], with the selected
 *     columns' overlaps where the backend fuses them: sel_gram) and one
 *     update (sel_update or gemv_n): 7 column passes after the product's,
 *     2 nsel + 7 with nsel selected columns projected;
 *   kr_local_fused, where the operator fuses the step into its product
 *     (pl_op_apply_lz: one rank, matrix-free): the product writes A v_j -
 *     beta v_{j-1} and the five sums the step needs, and one more pass,
 *     which takes alpha and the new norm from those sums on the device
 *     (lz_coef.h), updates and normalises (3 columns; with selected
 *     columns it also measures their overlaps with v_{j+1} itself): one
 *     host round trip.  A further pass projects the selected columns out
 *     only when one passes the keep level: 4 passes, nsel + 4 with nsel
 *     selected ones kept, 2 nsel + 6 projected.
 * Written against spmv.h only: no backend headers, no conditional code. */
#include <math.h>
#include <string.h>

#include "krylov_impl.h"
#include "lz_coef.h"
#include "pl_error.h"

/* The selected columns' overlaps with x' = x - beta v_{j-1} - alpha v_j
 * from h = V_sel^T x and those of v_{j-1}, v_j (sel->prev, sel->cur; NULL:
 * 0); ||hp||^2 out. */
static double sel_overlaps(const kr_sel *sel, const double *h, double be, double al, double *hp)
{
    double q = 0.0;
    for (int i = 0; i < sel->n; i++) {
        hp[i] = h[i] - be * (sel->prev ? sel->prev[i] : 0.0) - al * (sel->cur ? sel->cur[i] : 0.0);
        q += hp[i] * hp[i];
    }
    return q;
}

/* See krylov_impl.h.  Column j + 1 is next to columns j - 1 and j in V, so
 * one Gram matrix of the three adjacent columns (one pass, one reduction)
 * gives the coefficients, ||x||^2 and the actual norms and overlap of
 * v_{j-1} and v_j.  The projection solves the 2 x 2 Gram system, so the new
 * norm ||x||^2 - r^T G^{-1} r is exact up to eps ||x||^2 whatever the
 * normalisation error of the earlier columns: assuming unit columns
 * (||x||^2 - c0^2 - c1^2) would amplify their norm error by
 * (alpha_j / beta_j)^2 at every step. */
int kr_orthogonalize_local(kr_ws *w, int j, kr_sel *sel, double beta_prev, double *alpha, double *nrm,
                           double *growth, double *ovl, int *done)
{
    double t0 = pl_wtime();
    double *x = kr_col(w, j + 1);
    const double col_bytes = 8.0 * (double)w->n;
    const int nsel = sel ? sel->n : 0;
    double G[9], H[PL_SEL_KMAX + 9], hp[PL_SEL_KMAX];
    *done = 0;
    PL_CHECK(j >= 1, PL_ERR_INTERNAL, "local orthogonalisation needs j >= 1 (got %d)", j);
    if (sel) sel->measured = sel->exact = 0;
    if (w->bop) { /* kr_inner.c: projects every time */
        if (sel) memset(sel->next, 0, (size_t)nsel * sizeof *sel->next);
        return kr_b_local(w, j, nsel, beta_prev, alpha, nrm, growth, ovl, done);
    }
    const int fused = nsel > 0 && nsel <= PL_SEL_KMAX && nsel < j && w->be->sel_gram && w->be->sel_update;
    if (fused) { /* V_sel^T x and the Gram matrix in one pass */
        PL_CALL(pl_vec_sel_gram(w->op, nsel, w->V, kr_col(w, j - 1), w->ld, H));
        memcpy(G, H + nsel, sizeof G);
        w->t.vec_bytes += col_bytes * (double)(nsel + 3);
    } else {
        if (nsel > 0) PL_CALL(kr_project_out(w, nsel, j + 1));
        PL_CALL(pl_vec_gram(w->op, 3, kr_col(w, j - 1), w->ld, G));
        w->t.vec_bytes += col_bytes * 3.0;
    }
    w->t.reductions++;
    const double g00 = G[0], g01 = G[3], g11 = G[4], r0 = G[6], r1 = G[7], be = beta_prev;
    if (!(g11 > 0.5 && G[8] > 0.0)) {
        w->t.orth += pl_wtime() - t0;
        return PL_OK;
    }
    /* x' = x - beta v_{j-1} - alpha v_j, alpha making x' orthogonal to v_j;
     * fused: the selected columns' overlaps hp with x' follow from h and
     * those of v_{j-1}, v_j; they stay in x' while all are at most
     * sel->keep of its norm, else x' -= V_sel hp, and ||x'||^2 drops by
     * ||hp||^2 (V_sel orthonormal; its overlaps with v_{j-1}, v_j change
     * r0, r1 by the product of two loss levels, below eps) */
    const double al = (r1 - be * g01) / g11;
    const double b2x = G[8] + be * be * g00 + al * al * g11 - 2.0 * be * r0 - 2.0 * al * r1 + 2.0 * al * be * g01;
    const double q = fused ? sel_overlaps(sel, H, be, al, hp) : 0.0;
    int project = 0;
    for (int i = 0; fused && i < nsel; i++) project |= !(hp[i] * hp[i] <= sel->keep * sel->keep * b2x);
    const double xx = project ? G[8] - q : G[8], b2 = project ? b2x - q : b2x;
    if (!(xx > 0.0) || !(b2 > 1e-4 * xx)) {
        w->t.orth += pl_wtime() - t0;
        return PL_OK;
    }
    const double b = sqrt(b2), c[2] = {be, al};
    if (project) {
        PL_CALL(w->be->sel_update(w->be, w->n, nsel, w->V, hp, kr_col(w, j - 1), c, w->ld, 1.0 / b, x));
        w->t.vec_bytes += col_bytes * (double)(nsel + 4);
    } else {
        PL_CALL(w->be->gemv_n(w->be, w->n, 2, -1.0 / b, kr_col(w, j - 1), w->ld, c, 1.0 / b, x));
        w->t.vec_bytes += col_bytes * 4.0;
    }
    if (sel) {
        sel->measured = fused;
        for (int i = 0; i < nsel; i++) sel->next[i] = fused && !project ? hp[i] / b : 0.0;
    }
    *alpha = al;
    *nrm = b;
    *growth = sqrt(xx) / b;
    ovl[0] = (r0 - be * g00 - al * g01) / b; /* v_{j-1}^T v_{j+1} */
    ovl[1] = (r1 - be * g01 - al * g11) / b; /* v_j^T v_{j+1} (0 up to rounding) */
    *done = 1;
    w->t.local_steps++;
    w->t.orth += pl_wtime() - t0;
    return PL_OK;
}

/* See krylov_impl.h. */
int kr_local_fused(kr_ws *w, int j, kr_sel *sel, double beta_prev, double *alpha, double *nrm, double *growth,
                   double *ovl, int *done, int *fused)
{
    *done = *fused = 0;
    const int nsel = sel ? sel->n : 0;
    if (sel) sel->measured = sel->exact = 0;
    if (!w->lz_fuse || w->bop || j < 1 || nsel > PL_SEL_KMAX || nsel >= j) return PL_OK;
    double out[PL_LZ_OUT + PL_SEL_KMAX];
    double *y = kr_col(w, j + 1);
    /* the product writes y = A v_j - beta v_{j-1} and its sums (x = v_j, z
     * = v_{j-1}): x.x, y.x, y.y, z.y, z.x; the update takes alpha and the
     * new norm from them on the device (lz_coef.h) and measures the
     * selected columns' overlaps with v_{j+1} itself; one round trip.  The
     * operator times the whole call (its products' time), so the
     * orthogonalisation's time starts after it and the two do not overlap */
    const int e = pl_op_apply_lz(w->op, nsel, w->V, w->ld, kr_col(w, j), kr_col(w, j - 1), beta_prev, y, w->d_lz, out);
    const double t0 = pl_wtime();
    if (e == PL_ERR_NOTSUP) { /* not this operator or kernel: the composed step from now on */
        w->lz_fuse = 0;
        return PL_OK;
    }
    PL_CALL(e);
    w->napply++;
    *fused = 1;
    w->t.reductions++;
    const double col_bytes = 8.0 * (double)w->n;
    w->t.vec_bytes += col_bytes; /* z = v_{j-1}, read by the product */
    if (out[PL_LZ_OUT_DECLINED] != 0.0) { /* the caller orthogonalises y in full */
        w->t.orth += pl_wtime() - t0;
        return PL_OK;
    }
    const double xx = out[0], xy = out[1], yy = out[2], zy = out[3], zx = out[4];
    const double al = out[PL_LZ_OUT_ALPHA], b = out[PL_LZ_OUT_NORM];
    w->t.vec_bytes += col_bytes * (double)(nsel + 3);
    if (nsel > 0) {
        /* projected out (one more pass, queued) only when an overlap passes
         * sel->keep.  The projection leaves ||v_{j+1}||^2 = 1 - ||h||^2 (h
         * below the omega threshold: 1 to rounding), and its coefficients
         * are dropped from T as in the composed step */
        const double *h = out + PL_LZ_OUT;
        int project = 0;
        for (int i = 0; i < nsel; i++) project |= !(fabs(h[i]) <= sel->keep);
        if (project) {
            PL_CALL(w->be->gemv_n(w->be, w->n, nsel, -1.0, w->V, w->ld, h, 1.0, y));
            w->t.vec_bytes += col_bytes * (double)(nsel + 2);
        }
        for (int i = 0; i < nsel; i++) sel->next[i] = project ? 0.0 : h[i];
        sel->measured = sel->exact = 1;
    }
    *alpha = al;
    *nrm = b;
    *growth = sqrt(yy + 2.0 * beta_prev * zy + beta_prev * beta_prev) / b; /* ||A v_j|| / b (||z|| = 1) */
    ovl[0] = (zy - al * zx) / b; /* v_{j-1}^T v_{j+1} */
    ovl[1] = (xy - al * xx) / b; /* v_j^T v_{j+1} (0 up to rounding) */
    *done = 1;
    w->t.local_steps++;
    w->t.orth += pl_wtime() - t0;
    return PL_OK;
}
