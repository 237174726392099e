/* kr_inner.c — the B-inner product of the Krylov workspace (krylov_impl.h,
 * "the B-inner product"): <x, y>_B = x^T B y for a symmetric positive
 * definite B given as an operator.  The workspace keeps BV = B V next to
 * the basis; this file allocates it, makes its columns, and holds the
 * Gram-Schmidt steps of that inner product (krylov.c's kr_orthogonalize
 * and kr_orthogonalize_local hand over to them).
 *
 * Why: for A x = lambda B x with A symmetric and B SPD the operators of the
 * spectral transformations, (A - sigma B)^{-1} B and B^{-1} A, are
 * self-adjoint in <.,.>_B, so Lanczos in that inner product has a
 * symmetric projected matrix (Ericsson & Ruhe 1980; Nour-Omid, Parlett,
 * Ericsson & Jensen 1987) and B-orthonormal Ritz vectors.
 *
 * How: the coefficients of a new vector x against the basis are BV^T x
 * (no B product); x is corrected with V; only the final x gets its B
 * image, by one product, which gives its norm sqrt(x^T B x) and its column
 * of BV.  Carrying B x through the corrections instead (bx -= BV c) costs
 * no product but keeps the rounding of each cancellation (eps times the
 * ratio of ||x|| before and after the pass) in BV, and the next
 * coefficients inherit it: measured on the 2-D FEM pair of st.definite,
 * |BV - B V| grew 10-30x per restart to 5e-1 after ten, and the solve
 * stopped on a false breakdown.
 *
 * Written against spmv.h only: no backend headers, no conditional code. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "krylov_impl.h"
#include "pl_error.h"

#define KR_SQRT1_2 0.70710678118654752440

int kr_ws_set_inner(kr_ws *w, pl_op *bop)
{
    pl_op_info bi;
    pl_op_get_info(bop, &bi);
    PL_CHECK(bi.n_global == w->N && (size_t)bi.n_local == w->n && pl_op_backend(bop) == w->be, PL_ERR_ARG,
             "inner product: B has %lld rows (%lld here), the operator %lld (%zu here), or another backend",
             (long long)bi.n_global, (long long)bi.n_local, (long long)w->N, w->n);
    size_t vlen;
    PL_CHECK(!pl_mul_size((size_t)w->m + 1, w->ld, &vlen), PL_ERR_OVERFLOW, "basis size (ncv + 1) x n_local overflows");
    PL_CALL(w->be->vec_alloc(w->be, vlen, &w->BV));
    w->bop = bop;
    w->lz_fuse = 0;
    return PL_OK;
}

double *kr_bcol(kr_ws *w, int j) { return w->BV ? w->BV + (size_t)j * w->ld : NULL; }

const double *kr_measure(const kr_ws *w) { return w->bop ? w->BV : w->V; }

int kr_b_image(kr_ws *w, int j)
{
    if (!w->bop) return PL_OK;
    PL_CALL(pl_op_apply(w->bop, kr_col(w, j), kr_bcol(w, j)));
    w->nbapply++;
    return PL_OK;
}

int kr_copy_col(kr_ws *w, int src, int dst)
{
    PL_CALL(w->be->copy(w->be, w->n, kr_col(w, src), kr_col(w, dst)));
    if (w->bop) PL_CALL(w->be->copy(w->be, w->n, kr_bcol(w, src), kr_bcol(w, dst)));
    return PL_OK;
}

/* x and its B image / nrm (the normalisation of a new column) */
static int b_scale(kr_ws *w, int j, double nrm)
{
    PL_CALL(w->be->scal(w->be, w->n, 1.0 / nrm, kr_col(w, j)));
    PL_CALL(w->be->scal(w->be, w->n, 1.0 / nrm, kr_bcol(w, j)));
    w->t.vec_bytes += 32.0 * (double)w->n;
    return PL_OK;
}

/* Two classical passes (x -= V (BV^T x), twice: "twice is enough"; the
 * DGKS test would need ||x||_B before the second pass, a B product), then
 * BV[:, k] = B x and ||x||_B^2 = x^T B x; the norms before the passes
 * follow by Pythagoras (n1^2 = n2^2 + |c2|^2, n0^2 = n1^2 + |c1|^2), so
 * that the breakdown guard is kr_orthogonalize's.  Three reductions and one
 * B product per call. */
int kr_b_orthogonalize(kr_ws *w, int k, double *coef, double *nrm, int *in_span)
{
    double t0 = pl_wtime();
    double *x = kr_col(w, k), *bx = kr_bcol(w, k);
    const double col_bytes = 8.0 * (double)w->n;
    double s1 = 0.0, s2 = 0.0, q = 0.0;
    for (int pass = 0; pass < 2 && k > 0; pass++) {
        double *c = pass ? w->c2 : w->c1;
        PL_CALL(pl_vec_gemv_t(w->op, k, w->BV, w->ld, x, c));
        PL_CALL(w->be->gemv_n(w->be, w->n, k, -1.0, w->V, w->ld, c, 1.0, x));
        w->t.reductions++;
        w->t.vec_bytes += col_bytes * (double)(2 * k + 3);
    }
    for (int i = 0; i < k; i++) {
        coef[i] = w->c1[i] + w->c2[i];
        s1 += w->c1[i] * w->c1[i];
        s2 += w->c2[i] * w->c2[i];
    }
    PL_CALL(kr_b_image(w, k));
    PL_CALL(pl_vec_dot(w->op, x, bx, &q));
    w->t.reductions++;
    w->t.vec_bytes += 2.0 * col_bytes;
    const double n2 = sqrt(fmax(q, 0.0)), n1 = sqrt(n2 * n2 + s2), n0 = sqrt(n1 * n1 + s1);
    *nrm = n2;
    *in_span = !(n2 > 0.0) || (k > 0 && n2 <= KR_SQRT1_2 * n1) || n2 <= 64.0 * DBL_EPSILON * n0;
    if (!*in_span) PL_CALL(b_scale(w, k, n2));
    PL_CALL(w->be->sync(w->be));
    w->t.orth += pl_wtime() - t0;
    return PL_OK;
}

/* The local step (kr_orthogonalize_local's contract) in the B-inner
 * product: the coefficients against v_{j-1}, v_j and their Gram matrix in
 * one reduction (C = [v_{j-1} v_j x]^T [Bv_{j-1} Bv_j]), the update
 * x' = x - beta_prev v_{j-1} - alpha v_j, then B x' by one product and
 * [v_{j-1} v_j x']^T B x' in a second reduction: the new norm and the
 * overlaps ovl measured, ||x||_B before the step from them.  Declined
 * (the new norm below 1e-2 ||x||_B): x is restored, *done = 0. */
int kr_b_local(kr_ws *w, int j, int nsel, double beta_prev, double *alpha, double *nrm, double *growth, double *ovl,
               int *done)
{
    double t0 = pl_wtime();
    double *x = kr_col(w, j + 1);
    const double col_bytes = 8.0 * (double)w->n;
    double C[6], h[3];
    *done = 0;
    if (nsel > 0) PL_CALL(kr_project_out(w, nsel, j + 1)); /* x -= V_sel (BV_sel^T x) */
    PL_CALL(pl_vec_gemm_t(w->op, 3, 2, kr_col(w, j - 1), w->ld, kr_bcol(w, j - 1), w->ld, C));
    w->t.reductions++;
    w->t.vec_bytes += col_bytes * 5.0;
    const double g00 = C[0], g01 = C[3], g11 = C[4], r1 = C[5], be = beta_prev;
    if (!(g11 > 0.5)) {
        w->t.orth += pl_wtime() - t0;
        return PL_OK;
    }
    const double al = (r1 - be * g01) / g11, c[2] = {be, al}, cr[2] = {-be, -al};
    PL_CALL(w->be->gemv_n(w->be, w->n, 2, -1.0, kr_col(w, j - 1), w->ld, c, 1.0, x));
    PL_CALL(kr_b_image(w, j + 1));
    PL_CALL(pl_vec_gemv_t(w->op, 3, kr_col(w, j - 1), w->ld, kr_bcol(w, j + 1), h));
    w->t.reductions++;
    w->t.vec_bytes += col_bytes * 8.0;
    const double b2 = h[2];
    const double xx = b2 + be * be * g00 + al * al * g11 + 2.0 * be * al * g01 + 2.0 * be * h[0] + 2.0 * al * h[1];
    if (!(xx > 0.0) || !(b2 > 1e-4 * xx)) { /* declined: x back as it was, the caller orthogonalises in full */
        PL_CALL(w->be->gemv_n(w->be, w->n, 2, -1.0, kr_col(w, j - 1), w->ld, cr, 1.0, x));
        w->t.orth += pl_wtime() - t0;
        return PL_OK;
    }
    const double b = sqrt(b2);
    PL_CALL(b_scale(w, j + 1, b));
    *alpha = al;
    *nrm = b;
    *growth = sqrt(xx) / b;
    ovl[0] = h[0] / b; /* <v_{j-1}, v_{j+1}>_B */
    ovl[1] = h[1] / b; /* <v_j, v_{j+1}>_B (0 up to rounding) */
    *done = 1;
    w->t.local_steps++;
    w->t.orth += pl_wtime() - t0;
    return PL_OK;
}
