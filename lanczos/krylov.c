/* krylov.c — the basis core shared by the Krylov methods of lanczos/
 * (thick-restart Lanczos, Krylov-Schur): see krylov_impl.h.
 *
 * Gram-Schmidt: classical, two passes ("twice is enough", Giraud, Langou,
 * Rozloznik 2005), the norm after the second pass by Pythagoras; the relative
 * breakdown guard is described at kr_orthogonalize.  Written against spmv.h
 * only: no backend headers, no conditional code. */
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "krylov_impl.h"
#include "pl_error.h"
#include "pl_lapack_threads.h"
#include "pl_random.h"

#define KR_SQRT1_2 0.70710678118654752440

size_t kr_atleast1(size_t n) { return n ? n : 1; }

double lz_random_element(uint64_t seed, int64_t g) { return pl_random_from(pl_splitmix64(seed), g); }

double *kr_col(kr_ws *w, int j) { return w->V + (size_t)j * w->ld; }

int kr_apply(kr_ws *w, int jin, int jout)
{
    /* vector work still queued (a restart's copy, an update) finishes
     * first, so that the operator's timing sample is the product alone */
    PL_CALL(w->be->sync(w->be));
    double t0 = pl_wtime();
    PL_CALL(pl_op_apply(w->op, kr_col(w, jin), kr_col(w, jout)));
    w->t.spmv += pl_wtime() - t0;
    w->napply++;
    return PL_OK;
}

int kr_apply_queued(kr_ws *w, int jin, int jout)
{
    double t0 = pl_wtime();
    PL_CALL(pl_op_apply_queued(w->op, kr_col(w, jin), kr_col(w, jout)));
    w->t.spmv += pl_wtime() - t0;
    w->napply++;
    return PL_OK;
}

int kr_project_out(kr_ws *w, int nsel, int j)
{
    double t0 = pl_wtime();
    double *x = kr_col(w, j);
    PL_CALL(pl_vec_gemv_t(w->op, nsel, kr_measure(w), w->ld, x, w->c2));
    PL_CALL(w->be->gemv_n(w->be, w->n, nsel, -1.0, w->V, w->ld, w->c2, 1.0, x));
    w->t.reductions++;
    w->t.vec_bytes += 8.0 * (double)w->n * (double)(2 * nsel + 3);
    w->t.orth += pl_wtime() - t0;
    return PL_OK;
}

/* Column 0 = the normalised sum of the nret Ritz vectors in columns
 * 0..nret-1 (Re and Im of a pair in Krylov-Schur): the start of a fresh
 * relation after a failed residual check.  Not a restart that keeps them:
 * that needs A V_k = V_k S_k + v b^T (T_k for Lanczos) with a rank-one
 * remainder, which nret inexact Ritz vectors do not satisfy; their sum has
 * them all in its Krylov space after about nret steps.  *exhausted: no
 * start vector at all. */
int kr_reseed(kr_ws *w, int nret, int *exhausted)
{
    double *v0 = kr_col(w, 0), nrm = 0.0;
    int in_span = 0;
    *exhausted = 0;
    for (int i = 1; i < nret; i++) PL_CALL(w->be->axpy(w->be, w->n, 1.0, kr_col(w, i), v0));
    PL_CALL(kr_orthogonalize(w, 0, 0, w->cf, &nrm, &in_span)); /* normalises column 0 */
    if (in_span) return kr_random_direction(w, 0, 0, exhausted);
    return PL_OK;
}

int kr_orth_loss(kr_ws *w, int nev, double *loss)
{
    double t0 = pl_wtime(), worst = 0.0;
    for (int i = 0; i < nev; i++) {
        PL_CALL(pl_vec_gemv_t(w->op, i + 1, kr_measure(w), w->ld, kr_col(w, i), w->c1));
        for (int l = 0; l <= i; l++) worst = fmax(worst, fabs(w->c1[l] - (l == i ? 1.0 : 0.0)));
    }
    *loss = worst;
    w->t.other += pl_wtime() - t0;
    return PL_OK;
}

/* After a measuring pass: *n1 = sqrt(c2[k]), coef[0:k] = h_in + c2, *n2 =
 * the norm once c2 is removed too (by Pythagoras). */
static void measured_norms(const kr_ws *w, int k, const double *h_in, double *coef, double *n1, double *n2)
{
    *n1 = sqrt(fmax(w->c2[k], 0.0));
    double s2 = 0.0;
    for (int i = 0; i < k; i++) {
        coef[i] = h_in[i] + w->c2[i];
        s2 += w->c2[i] * w->c2[i];
    }
    *n2 = sqrt(fmax(*n1 * *n1 - s2, 0.0));
}

/* The measuring pass of classical Gram-Schmidt on x = column k: x -= V
 * h_in, then w->c2[0:k] = V^T x and ||x||^2 (the backend's fused cgs_step,
 * else gemv_n + gemv_t; one reduction); coef[0:k] = h_in + c2, *n1 = ||x||
 * after the correction, *n2 = its norm once c2 is removed too (by
 * Pythagoras). */
static int cgs_measure(kr_ws *w, int k, double *x, const double *h_in, double *coef, double *n1, double *n2)
{
    const double col_bytes = 8.0 * (double)w->n;
    if (w->be->cgs_step) {
        PL_CALL(pl_vec_cgs_step(w->op, k, w->V, w->ld, x, h_in, w->c2));
        w->t.vec_bytes += col_bytes * (double)(k + 2); /* k columns and x read, x written */
    } else {
        PL_CALL(w->be->gemv_n(w->be, w->n, k, -1.0, w->V, w->ld, h_in, 1.0, x));
        PL_CALL(pl_vec_gemv_t(w->op, k + 1, w->V, w->ld, x, w->c2));
        w->t.vec_bytes += col_bytes * (double)((k + 2) + (k + 1));
    }
    w->t.reductions++;
    measured_norms(w, k, h_in, coef, n1, n2);
    return PL_OK;
}

/* The range [*lo, *hi] of the overlaps c[0:k] above keep * nx (*lo > *hi:
 * none); coef, row (relative to the new norm, returned) and the new norm
 * by Pythagoras when only that range is removed. */
static double keep_range(int k, const double *c, double keep, double nx, int *lo, int *hi, double *coef, double *row)
{
    *lo = k;
    *hi = -1;
    for (int i = 0; i < k; i++) {
        if (!(fabs(c[i]) <= keep * nx)) {
            *lo = i < *lo ? i : *lo;
            *hi = i;
        }
    }
    double s2 = 0.0;
    for (int i = *lo; i <= *hi; i++) s2 += c[i] * c[i];
    const double n = sqrt(fmax(nx * nx - s2, 0.0));
    for (int i = 0; i < k; i++) {
        const int fixed = i >= *lo && i <= *hi;
        row[i] = fixed || !(n > 0.0) ? 0.0 : fabs(c[i]) / n;
        coef[i] = fixed ? c[i] : 0.0;
    }
    return n;
}

/* x = (x - V[:, lo:hi+1] c[lo:hi+1]) / n, or x / n for an empty range: the
 * last correction of a Gram-Schmidt pass and the normalisation. */
static int correct_range(kr_ws *w, double *x, int lo, int hi, const double *c, double n)
{
    const double col_bytes = 8.0 * (double)w->n;
    if (hi < lo) {
        PL_CALL(w->be->scal(w->be, w->n, 1.0 / n, x));
        w->t.vec_bytes += 2.0 * col_bytes;
        return PL_OK;
    }
    const int cnt = hi - lo + 1;
    PL_CALL(w->be->gemv_n(w->be, w->n, cnt, -1.0 / n, kr_col(w, lo), w->ld, c + lo, 1.0 / n, x));
    w->t.vec_bytes += col_bytes * (double)(cnt + 2);
    return PL_OK;
}

/* The second pass's coefficients w->c2[0:k] that may stay in x (at most
 * w->keep2 n1, n1 = ||x|| after the first pass): c2 keeps only the range
 * [lo, hi] that reaches past it (the rest set to 0, so that the correction
 * skips it and, empty, becomes the normalisation alone), coef drops the
 * rest too (coef = c1 + c2 as corrected: the relation A v = V coef + n x'
 * stays exact, the new column keeps overlaps of at most keep2 with the
 * basis), *n2 by Pythagoras over what is removed. */
static void second_keep(kr_ws *w, int k, double *coef, double n1, double *n2, int *lo_out, int *hi_out)
{
    int lo = k, hi = -1;
    for (int i = 0; i < k; i++)
        if (!(fabs(w->c2[i]) <= w->keep2 * n1)) {
            lo = i < lo ? i : lo;
            hi = i;
        }
    double s2 = 0.0;
    for (int i = 0; i < k; i++) {
        if (i < lo || i > hi) {
            coef[i] -= w->c2[i];
            w->c2[i] = 0.0;
        }
        s2 += w->c2[i] * w->c2[i];
    }
    *n2 = sqrt(fmax(n1 * n1 - s2, 0.0));
    *lo_out = lo;
    *hi_out = hi;
}

/* Orthogonalise column j against columns 0..k-1 with two classical
 * Gram-Schmidt passes and normalise it; coef[0:k] = the summed
 * coefficients, *nrm = the norm before the normalisation, *in_span = the
 * vector vanished numerically (see the file header; then column j is left
 * unnormalised, without the second correction, for the caller to replace).
 * Column j is column k of V (the callers orthogonalise the next column), so
 * the first pass's gemv_t over columns 0..k returns the coefficients and,
 * as its last entry, the squared norm of x.  The second pass's projection
 * and norm come from the backend's fused cgs_step (x -= V c1, c2 = V^T x,
 * ||x||^2: one pass over V) when it has one, else from gemv_n + gemv_t over
 * columns 0..k.  The norm after the second pass follows by Pythagoras,
 * ||x2||^2 = ||x1||^2 - ||c2||^2 (V has orthonormal columns and c2 is the
 * tiny correction of the second pass; a cancellation means x lies in
 * span(V), which in_span reports), so the last correction and the
 * normalisation are one gemv_n: x = (x - V c2) / ||x2||.
 * Per call: two reductions (two host synchronisations), 3k + 5 column
 * passes with cgs_step, 4k + 6 without (the normalisation folded into the
 * last gemv_n).  The backend is synchronised at the end so that the time of the
 * last, asynchronous correction is counted here, not in the next SpMV. */
int kr_orthogonalize(kr_ws *w, int k, int j, double *coef, double *nrm, int *in_span)
{
    double t0 = pl_wtime();
    double *x = kr_col(w, j);
    const double col_bytes = 8.0 * (double)w->n;
    double n0, n1, n2;
    int lo = 0, hi = k - 1; /* the columns of the last correction */
    PL_CHECK(j == k, PL_ERR_INTERNAL, "orthogonalize: column %d is not column k = %d", j, k);
    if (w->bop) return kr_b_orthogonalize(w, k, coef, nrm, in_span); /* the B-inner product (kr_inner.c) */
    if (k == 0) {
        PL_CALL(pl_vec_nrm2(w->op, x, &n0));
        n1 = n2 = n0;
        w->t.vec_bytes += col_bytes;
        w->t.reductions++;
    } else {
        PL_CALL(pl_vec_gemv_t(w->op, k + 1, w->V, w->ld, x, w->c1));
        n0 = sqrt(fmax(w->c1[k], 0.0));
        /* DGKS-style test (Daniel, Gragg, Kaufman, Stewart 1976; SLEPc's
         * "refine if needed", eta = 1/sqrt 2): if the first projection removed
         * at most half of ||x||^2, one pass is accurate, the new norm follows
         * by Pythagoras with relative error <= 2 eps, and the correction with
         * c1 below is the only one */
        double s1 = 0.0;
        for (int i = 0; i < k; i++) s1 += w->c1[i] * w->c1[i];
        if (w->refine_if_needed && n0 > 0.0 && n0 * n0 - s1 >= 0.5 * n0 * n0) {
            n1 = n2 = sqrt(n0 * n0 - s1);
            memcpy(coef, w->c1, (size_t)k * sizeof(double));
            memcpy(w->c2, w->c1, (size_t)k * sizeof(double));
            w->t.vec_bytes += col_bytes * (double)(k + 1);
            w->t.reductions++;
            w->t.single_pass++;
        } else {
            w->t.vec_bytes += col_bytes * (double)(k + 1); /* the gemv_t */
            w->t.reductions++;
            PL_CALL(cgs_measure(w, k, x, w->c1, coef, &n1, &n2));
            if (w->keep2 > 0.0) second_keep(w, k, coef, n1, &n2, &lo, &hi);
        }
    }
    *nrm = n2;
    *in_span = !(n2 > 0.0) || (k > 0 && n2 <= KR_SQRT1_2 * n1) || n2 <= 64.0 * DBL_EPSILON * n0;
    if (!*in_span) {
        if (k == 0) {
            PL_CALL(w->be->scal(w->be, w->n, 1.0 / n2, x));
            w->t.vec_bytes += 2.0 * col_bytes;
        } else {
            PL_CALL(correct_range(w, x, lo, hi, w->c2, n2));
        }
    }
    PL_CALL(w->be->sync(w->be));
    w->t.orth += pl_wtime() - t0;
    return PL_OK;
}

/* See krylov_impl.h: one pass over columns 0..j+1 for the two. */
int kr_overlaps_last2(kr_ws *w, int j, double *C)
{
    const double t0 = pl_wtime();
    PL_CHECK(j >= 1 && j + 1 <= w->m, PL_ERR_INTERNAL, "overlaps_last2: column %d", j);
    PL_CALL(pl_vec_gemm_t(w->op, j + 2, 2, w->V, w->ld, kr_col(w, j), w->ld, C));
    w->t.vec_bytes += 8.0 * (double)w->n * (double)(j + 2);
    w->t.reductions++;
    w->t.orth += pl_wtime() - t0;
    return PL_OK;
}

/* The rest of kr_orthogonalize_known once w->c3 (the subtracted
 * coefficients) and w->c2 (the measured overlaps and norm) are known. */
static int known_finish(kr_ws *w, int k, double n0, double keep, double *row, double *coef, double *nrm, int *in_span,
                        double t0)
{
    double n1, n2;
    measured_norms(w, k, w->c3, coef, &n1, &n2);
    if (!(n2 > KR_SQRT1_2 * n1)) { /* the expectation was off: two passes on the rest */
        w->t.orth += pl_wtime() - t0;
        memset(row, 0, (size_t)k * sizeof(double));
        PL_CALL(kr_orthogonalize(w, k, k, coef, nrm, in_span));
        for (int i = 0; i < k; i++) coef[i] += w->c3[i];
        return PL_OK;
    }
    int lo, hi; /* only the range of overlaps above keep ||x|| */
    n2 = keep_range(k, w->c2, keep, n1, &lo, &hi, coef, row);
    for (int i = 0; i < k; i++) coef[i] += w->c3[i];
    *nrm = n2;
    *in_span = n2 <= 64.0 * DBL_EPSILON * n0;
    if (!*in_span) PL_CALL(correct_range(w, kr_col(w, k), lo, hi, w->c2, n2));
    w->t.single_pass++;
    PL_CALL(w->be->sync(w->be));
    w->t.orth += pl_wtime() - t0;
    return PL_OK;
}

/* See krylov_impl.h.  The first pass subtracts the expected coefficients
 * (the arrow of the thick restart) and the measured alpha = v_{k-1}^T x /
 * ||v_{k-1}||^2 (one Gram matrix of the two adjacent columns); the fused
 * cgs_step then measures what is left in the same pass over V.  The
 * measured overlaps c2 = V^T x that stay below keep ||x|| are left in x
 * (row[i] = |c2_i| / ||x||, the caller's omega row; 0 where corrected) and
 * only the contiguous range of columns from the first to the last larger
 * one is read by the correction: the semi-orthogonal Lanczos basis needs
 * no more, and a cycle whose restart vector kept orthogonality skips the
 * k-column sweep (2 column passes instead of k + 2; keep = 0 corrects
 * every nonzero overlap, 2k + 8 passes in all).  Where the expectation was poor (the measured pass
 * still cancels more than half of the norm), the two standard passes run
 * on what is left. */
int kr_orthogonalize_known(kr_ws *w, int k, const double *known, double keep, double *row, double *coef,
                           double *nrm, int *in_span)
{
    double t0 = pl_wtime();
    double *x = kr_col(w, k);
    const double col_bytes = 8.0 * (double)w->n;
    double G[4];
    PL_CHECK(k >= 1, PL_ERR_INTERNAL, "orthogonalize_known: column %d has nothing before it", k);
    if (w->bop) { /* measured, not expected */
        memset(row, 0, (size_t)k * sizeof(double));
        return kr_orthogonalize(w, k, k, coef, nrm, in_span);
    }
    PL_CALL(pl_vec_gram(w->op, 2, kr_col(w, k - 1), w->ld, G));
    w->t.reductions++;
    w->t.vec_bytes += 2.0 * col_bytes;
    kr_known_coefficients(k, known, G, w->c3);
    double n1, n2;
    PL_CALL(cgs_measure(w, k, x, w->c3, coef, &n1, &n2));
    return known_finish(w, k, sqrt(fmax(G[3], 0.0)), keep, row, coef, nrm, in_span, t0);
}

void kr_known_coefficients(int k, const double *known, const double *G, double *c3)
{
    memcpy(c3, known, (size_t)(k - 1) * sizeof(double));
    c3[k - 1] = G[0] > 0.0 ? G[2] / G[0] : 0.0;
}

int kr_orthogonalize_measured(kr_ws *w, int k, const double *c3, const double *h, const double *G, double keep,
                              double *row, double *coef, double *nrm, int *in_span)
{
    const double t0 = pl_wtime();
    memcpy(w->c3, c3, (size_t)k * sizeof(double));
    memcpy(w->c2, h, (size_t)(k + 1) * sizeof(double));
    return known_finish(w, k, sqrt(fmax(G[3], 0.0)), keep, row, coef, nrm, in_span, t0);
}

/* Column j = the reproducible random vector of seed s (lz_random_element
 * of each row's global original index): made by the backend where it can
 * (be->rand_fill, consecutive indices), else on the host and uploaded
 * through h_vec (page-locked where the backend offers it, allocated at the
 * first use).  Asynchronous. */
static int kr_fill_random(kr_ws *w, uint64_t s, int j)
{
    if (w->g_consec) return w->be->rand_fill(w->be, w->n, s, w->g0, kr_col(w, j));
    if (!w->h_vec) {
        if (w->be->host_alloc && w->be->host_free) {
            PL_CALL(w->be->host_alloc(w->be, kr_atleast1(w->n), &w->h_vec));
            w->h_vec_pinned = 1;
        } else {
            w->h_vec = malloc(kr_atleast1(w->n) * sizeof(double));
            PL_CHECK(w->h_vec, PL_ERR_MEM, "out of host memory (random vector of %zu rows)", w->n);
        }
    }
    double *hv = w->h_vec;
    const int64_t *gi = w->gidx;
    const size_t n = w->n;
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; i++) hv[i] = lz_random_element(s, gi[i]);
    return w->be->upload(w->be, kr_col(w, j), w->h_vec, w->n);
}

/* Column j = a reproducible random vector (original-basis hash), made
 * orthonormal to columns 0..j-1.  *exhausted = it vanished (span(V) is the
 * whole space). */
int kr_random_direction(kr_ws *w, int j, int first, int *exhausted)
{
    double t0 = pl_wtime();
    uint64_t s = first ? w->seed : pl_splitmix64(w->seed + 0xD1B54A32D192ED03ull * ++w->n_random);
    PL_CALL(kr_fill_random(w, s, j));
    w->t.other += pl_wtime() - t0;
    double nrm;
    int in_span;
    PL_CALL(kr_orthogonalize(w, j, j, w->cf, &nrm, &in_span)); /* normalises column j */
    /* a random vector that keeps < 64 eps of its norm is in span(V) */
    *exhausted = in_span;
    return PL_OK;
}

/* V[:, off:off+kk] = V[:, off:off+s] Ysel (s x kk, ld s), in place: the
 * backend's basis_update when it has one (one pass, no workspace), else by
 * row blocks through the workspace W (gemm, then kk copies back). */
static int update_block(kr_ws *w, double *Vo, int s, int kk)
{
    if (w->be->basis_update) return w->be->basis_update(w->be, w->n, s, kk, Vo, w->ld, w->Ysel, s);
    for (size_t r0 = 0; r0 < w->n; r0 += w->blk) {
        size_t b = w->n - r0 < w->blk ? w->n - r0 : w->blk;
        PL_CALL(w->be->gemm(w->be, b, s, kk, Vo + r0, w->ld, w->Ysel, s, w->W, b));
        for (int c = 0; c < kk; c++) PL_CALL(w->be->copy(w->be, b, w->W + (size_t)c * b, Vo + (size_t)c * w->ld + r0));
    }
    return PL_OK;
}

/* The B-inner product: BV Y too (Y orthogonal: no amplification of BV's
 * rounding, unlike the cancellation of a Gram-Schmidt pass) */
int kr_update_basis(kr_ws *w, int off, int s, int kk)
{
    double t0 = pl_wtime();
    PL_CALL(update_block(w, kr_col(w, off), s, kk));
    if (w->bop) PL_CALL(update_block(w, kr_bcol(w, off), s, kk));
    PL_CALL(w->be->sync(w->be));
    w->t.restart += pl_wtime() - t0;
    return PL_OK;
}

void kr_ws_free(kr_ws *w)
{
    if (w->be) {
        if (w->V) w->be->vec_free(w->be, w->V);
        if (w->BV) w->be->vec_free(w->be, w->BV);
        if (w->W) w->be->vec_free(w->be, w->W);
        if (w->d_lz) w->be->vec_free(w->be, w->d_lz);
    }
    if (w->h_vec_pinned && w->be && w->be->host_free) w->be->host_free(w->be, w->h_vec);
    else free(w->h_vec);
    free(w->T);
    free(w->Y);
    free(w->theta);
    free(w->bcast);
    free(w->c1);
    free(w->c2);
    free(w->cf);
    free(w->c3);
    free(w->Ysel);
    free(w->ord);
    free(w->pg.score);
    free(w->pg.decades);
    free(w->pg.scr);
    pl_lapack_threads_restore(w->blas_threads);
    memset(w, 0, sizeof *w);
}

int kr_ws_init(kr_ws *w, pl_op *op, int m, int xcol, uint64_t seed)
{
    int err = PL_OK;
    pl_op_info info;
    memset(w, 0, sizeof *w);
    w->blas_threads = pl_lapack_threads_serial(); /* projected problems: tiny LAPACK calls */
    pl_op_get_info(op, &info);
    w->op = op;
    w->be = pl_op_backend(op);
    w->comm = pl_op_comm(op);
    if (MPI_Comm_rank(w->comm, &w->rank) != MPI_SUCCESS) return PL_ERROR(PL_ERR_MPI, "MPI_Comm_rank failed");
    if (MPI_Comm_size(w->comm, &w->size) != MPI_SUCCESS) return PL_ERROR(PL_ERR_MPI, "MPI_Comm_size failed");
    w->N = info.n_global;
    w->n = (size_t)info.n_local;
    w->ld = w->n ? w->n : 1;
    w->m = (int)m;
    w->gidx = pl_op_global_index(op);
    w->seed = seed;

    size_t vlen;
    const double t0 = pl_wtime();
    w->xcol = xcol ? 1 : 0;
    PL_CHECK(!pl_mul_size((size_t)m + 1 + (size_t)w->xcol, w->ld, &vlen), PL_ERR_OVERFLOW,
             "basis size (ncv + 1) x n_local overflows");
    PL_CALL_GOTO(w->be->vec_alloc(w->be, vlen, &w->V), fail, err);
    const double t_basis = pl_wtime() - t0;
    w->blk = w->n / 16;
    if (w->blk < 8192) w->blk = 8192;
    if (w->blk > w->n) w->blk = w->n ? w->n : 1;
    if (!w->be->basis_update) PL_CALL_GOTO(w->be->vec_alloc(w->be, w->blk * (size_t)m, &w->W), fail, err);
    /* consecutive global indices (a matrix-free operator's rows): the
     * backend makes the random vectors, no host buffer */
    w->g0 = w->n && w->gidx ? w->gidx[0] : 0;
    int consec = w->gidx != NULL && w->be->rand_fill != NULL;
    const int64_t *gi = w->gidx, g0 = w->g0;
    const size_t n = w->n;
    if (consec) {
#pragma omp parallel for schedule(static) reduction(&& : consec)
        for (size_t i = 0; i < n; i++) consec = consec && gi[i] == g0 + (int64_t)i;
    }
    w->g_consec = consec;
    /* pl_op_apply_lz decides the rest; PJDS_LZ_STEP_FUSED=0 composes the
     * step (for comparisons) */
    const char *fz = getenv("PJDS_LZ_STEP_FUSED");
    w->lz_fuse = w->be->kron_lz != NULL && w->be->lz_step != NULL && !(fz && fz[0] == '0');
    if (w->lz_fuse) PL_CALL_GOTO(w->be->vec_alloc(w->be, PL_KRON_LZ_DOTS, &w->d_lz), fail, err);
    pl_debug("krylov: workspace: basis of %d columns (%.1f MB) in %.3f s; random vectors %s", m + 1 + w->xcol,
             8e-6 * (double)vlen, t_basis, consec ? "made by the backend" : "made on the host");
    KR_HOST_ALLOC(w->T, m * m, fail);
    KR_HOST_ALLOC(w->Y, m * m, fail);
    KR_HOST_ALLOC(w->theta, m, fail);
    KR_HOST_ALLOC(w->bcast, m * m + m + 1, fail);
    KR_HOST_ALLOC(w->c1, m + 1, fail);
    KR_HOST_ALLOC(w->c2, m + 1, fail);
    KR_HOST_ALLOC(w->cf, m + 1, fail);
    KR_HOST_ALLOC(w->c3, m + 1, fail);
    KR_HOST_ALLOC(w->Ysel, m * m + m + 1, fail);
    KR_HOST_ALLOC(w->ord, m, fail);
    return PL_OK;
fail:
    kr_ws_free(w);
    return err;
}

int kr_push_history(lz_result *res, int *cap, int nev, int64_t it, const double *ritz, const double *ritz_imag,
                    const double *resid)
{
    if (res->nhist == *cap) {
        int nc = *cap ? 2 * *cap : 16;
        int64_t *hi = realloc(res->hist_iterations, (size_t)nc * sizeof *hi);
        PL_CHECK(hi, PL_ERR_MEM, "out of host memory (history)");
        res->hist_iterations = hi;
        double *hr = realloc(res->hist_ritz, (size_t)nc * nev * sizeof *hr);
        PL_CHECK(hr, PL_ERR_MEM, "out of host memory (history)");
        res->hist_ritz = hr;
        double *he = realloc(res->hist_resid, (size_t)nc * nev * sizeof *he);
        PL_CHECK(he, PL_ERR_MEM, "out of host memory (history)");
        res->hist_resid = he;
        if (ritz_imag) {
            double *hm = realloc(res->hist_ritz_imag, (size_t)nc * nev * sizeof *hm);
            PL_CHECK(hm, PL_ERR_MEM, "out of host memory (history)");
            res->hist_ritz_imag = hm;
        }
        *cap = nc;
    }
    res->hist_iterations[res->nhist] = it;
    memcpy(res->hist_ritz + (size_t)res->nhist * nev, ritz, (size_t)nev * sizeof(double));
    memcpy(res->hist_resid + (size_t)res->nhist * nev, resid, (size_t)nev * sizeof(double));
    if (ritz_imag) memcpy(res->hist_ritz_imag + (size_t)res->nhist * nev, ritz_imag, (size_t)nev * sizeof(double));
    res->nhist++;
    return PL_OK;
}

int kr_check_options(pl_op *op, const lz_options *opt, int last_which, int min_extra, int ncv_floor, int64_t *ncv)
{
    PL_CHECK(op && opt, PL_ERR_ARG, "NULL operator or options");
    pl_op_info info;
    pl_op_get_info(op, &info);
    PL_CHECK(opt->nev >= 1 && opt->nev < info.n_global, PL_ERR_INPUT, "nev = %d must be < N = %lld (and >= 1)",
             opt->nev, (long long)info.n_global);
    PL_CHECK(opt->tol > 0 && opt->tol < 1, PL_ERR_INPUT, "tolerance = %g must be in (0, 1)", opt->tol);
    PL_CHECK(!(opt->which == PL_WHICH_LARGEST_IMAGINARY && last_which < PL_WHICH_LARGEST_IMAGINARY), PL_ERR_INPUT,
             "which = largest_imaginary: a symmetric matrix has a real spectrum (use largest_magnitude, "
             "largest or smallest)");
    PL_CHECK(opt->which >= PL_WHICH_SMALLEST && opt->which <= last_which, PL_ERR_INPUT, "which = %d: unknown",
             opt->which);
    PL_CHECK(opt->max_restarts >= 0 || opt->max_restarts == LZ_RESTARTS_AUTO, PL_ERR_INPUT,
             "max_restarts = %d must be >= 0 (or auto)", opt->max_restarts);
    int64_t m = opt->ncv > 0 ? opt->ncv : lz_ncv_auto(opt->nev, ncv_floor);
    PL_CHECK(m >= opt->nev + min_extra, PL_ERR_INPUT, "ncv = %lld must be >= nev + %d = %d", (long long)m,
             min_extra, opt->nev + min_extra);
    *ncv = m > info.n_global ? info.n_global : m;
    return PL_OK;
}

/* ---- restart budget and progress (krylov_impl.h, kr_progress) -------- */

void kr_restart_budget(kr_ws *w, const lz_options *opt, lz_result *res)
{
    kr_progress *p = &w->pg;
    pl_op_info info;
    pl_op_get_info(w->op, &info);
    p->nev = opt->nev;
    p->tol = opt->tol;
    p->scale = info.norm_estimate;
    p->next = 8;
    p->trend = -1;
    p->is_auto = opt->max_restarts == LZ_RESTARTS_AUTO;
    if (!p->is_auto) {
        p->budget = opt->max_restarts;
    } else {
        /* KR_PEER_FACTOR x the products of ARPACK's default, 10 N (ncv - nev),
         * in restarts of p = ncv - kk = ceil((ncv - nev) / 2) products */
        double extra = (double)(w->m - opt->nev), per = ceil(0.5 * extra);
        if (extra < 1.0) extra = 1.0;
        if (per < 1.0) per = 1.0;
        double b = ceil((double)KR_PEER_FACTOR * (double)KR_PEER_MAXITER_PER_ROW * (double)w->N * extra / per);
        p->budget = b >= (double)INT_MAX ? INT_MAX : b < LZ_RESTARTS_FLOOR ? LZ_RESTARTS_FLOOR : (int)b;
    }
    res->max_restarts = p->budget;
    res->restarts_auto = p->is_auto;
}

/* The progress score and the decades above tol of history row r. */
static void kr_row_score(const kr_progress *p, const lz_result *res, int r, double *score, double *decades)
{
    const int ne = res->hist_nev;
    const double c = -log10(p->tol);
    double s = 0.0, d = 0.0;
    for (int i = 0; i < ne && i < p->nev; i++) {
        size_t at = (size_t)r * (size_t)ne + (size_t)i;
        double re = res->hist_ritz[at], im = res->hist_ritz_imag ? res->hist_ritz_imag[at] : 0.0;
        double est = res->hist_resid[at], mag = hypot(re, im), sc = p->tol * kr_scale(mag, p->scale);
        if (kr_converged_relative(est, mag, p->scale, p->tol, NULL)) continue; /* as the solvers test; 0 <= 0 too */
        double e = est / sc > 0.0 ? log10(est / sc) : c; /* NaN, or sc = 0: the cap */
        e = e < c ? e : c;
        d += e;
        s += c + e;
    }
    *score = s;
    *decades = d;
}

/* The lower quartile (the element at (n - 1) / 4 in ascending order) of
 * a[0:n], n >= 1, by quickselect; a is permuted. */
static double kr_lower_quartile(double *a, int n)
{
    int k = (n - 1) / 4, lo = 0, hi = n - 1;
    while (lo < hi) {
        double piv = a[lo + (hi - lo) / 2];
        int i = lo, j = hi;
        while (i <= j) {
            while (a[i] < piv) i++;
            while (a[j] > piv) j--;
            if (i <= j) {
                double t = a[i];
                a[i] = a[j];
                a[j] = t;
                i++;
                j--;
            }
        }
        if (k <= j) hi = j;
        else if (k >= i) lo = i;
        else break;
    }
    return a[k];
}

/* Score the history rows not scored yet, then the trend at the last check
 * row <= the newest row (see kr_progress). */
static int kr_progress_sync(kr_ws *w, const lz_result *res)
{
    kr_progress *p = &w->pg;
    const int n = res->nhist;
    if (n <= p->nrow) return PL_OK;
    if (n > p->cap) {
        int nc = p->cap ? p->cap : 256;
        while (nc < n) nc = nc > INT_MAX / 2 ? n : 2 * nc;
        double *a = realloc(p->score, (size_t)nc * sizeof *a);
        PL_CHECK(a, PL_ERR_MEM, "out of host memory (progress)");
        p->score = a;
        double *b = realloc(p->decades, (size_t)nc * sizeof *b);
        PL_CHECK(b, PL_ERR_MEM, "out of host memory (progress)");
        p->decades = b;
        double *c = realloc(p->scr, (size_t)nc * sizeof *c);
        PL_CHECK(c, PL_ERR_MEM, "out of host memory (progress)");
        p->scr = c;
        p->cap = nc;
    }
    for (int r = p->nrow; r < n; r++) kr_row_score(p, res, r, &p->score[r], &p->decades[r]);
    p->nrow = n;
    int t = -1; /* the last check row that is due */
    while (p->next <= n - 1) {
        t = p->next;
        p->next += t / 64 > 1 ? t / 64 : 1;
    }
    if (t < 0) return PL_OK;
    int a = t / 8 + 1, b = t / 4 + 1, c = t / 2 + 1, zero = 0; /* older window [a, b), recent [c, t] */
    if (b <= a) return PL_OK; /* (t >= 8: never) */
    for (int r = c; r <= t; r++) zero |= p->score[r] == 0.0;
    memcpy(p->scr, p->score + c, (size_t)(t + 1 - c) * sizeof(double));
    p->recent = kr_lower_quartile(p->scr, t + 1 - c);
    memcpy(p->scr, p->score + a, (size_t)(b - a) * sizeof(double));
    p->before = kr_lower_quartile(p->scr, b - a);
    p->trend = zero || p->recent < p->before - KR_FLAT_DECADES;
    return PL_OK;
}

int kr_give_up(kr_ws *w, const lz_result *res, int restarts, int *reason)
{
    *reason = LZ_ITERATING;
    if (restarts >= w->pg.budget) {
        *reason = LZ_MAX_RESTARTS;
        return PL_OK;
    }
    if (!w->pg.is_auto || restarts < LZ_RESTARTS_FLOOR) return PL_OK;
    PL_CALL(kr_progress_sync(w, res));
    if (w->pg.trend == 0) *reason = LZ_STAGNATED;
    return PL_OK;
}

int kr_progress_info(kr_ws *w, const lz_result *res, lz_monitor_info *mi)
{
    PL_CALL(kr_progress_sync(w, res));
    const kr_progress *p = &w->pg;
    mi->max_restarts = p->budget;
    mi->restarts_auto = p->is_auto;
    mi->decades = p->nrow > 0 ? p->decades[p->nrow - 1] : 0.0;
    mi->trend = p->trend;
    mi->score_recent = p->recent;
    mi->score_before = p->before;
    return PL_OK;
}

int kr_monitor(kr_ws *w, const lz_options *opt, const lz_result *res, lz_monitor_info *mi)
{
    if (!opt->monitor) return PL_OK;
    PL_CALL(kr_progress_info(w, res, mi));
    opt->monitor(opt->monitor_arg, mi);
    return PL_OK;
}

int kr_poll(const lz_options *opt, int steps_left, int *stop)
{
    *stop = 0;
    if (!opt->poll) return PL_OK;
    PL_CALL(opt->poll(opt->checkpoint_arg, steps_left, stop));
    return PL_OK;
}

int kr_residual_real(kr_ws *w, int i, double lambda, int jw, double *r)
{
    PL_CALL(kr_apply(w, i, jw));
    PL_CALL(w->be->axpy(w->be, w->n, -lambda, kr_col(w, i), kr_col(w, jw)));
    if (!w->bop) return pl_vec_nrm2(w->op, kr_col(w, jw), r);
    PL_CALL(kr_b_image(w, jw)); /* ||r||_B */
    PL_CALL(pl_vec_dot(w->op, kr_col(w, jw), kr_bcol(w, jw), r));
    *r = sqrt(fmax(*r, 0.0));
    return PL_OK;
}

/* ---- start vector ---------------------------------------------------- */

int kr_start_vector(kr_ws *w, const lz_options *opt, int *exhausted)
{
    *exhausted = 0;
    if (!opt->start || opt->nstart < 1 || w->m < 1) return kr_random_direction(w, 0, 1, exhausted);
    pl_backend *be = w->be;
    double *v0 = kr_col(w, 0), nrm = 0.0;
    PL_CALL(be->copy(be, w->n, opt->start, v0));
    for (int j = 1; j < opt->nstart; j++) PL_CALL(be->axpy(be, w->n, 1.0, opt->start + (size_t)j * opt->start_ld, v0));
    PL_CALL(pl_vec_nrm2(w->op, v0, &nrm));
    if (!(nrm > 0.0) || !isfinite(nrm)) return kr_random_direction(w, 0, 1, exhausted);
    PL_CALL(be->scal(be, w->n, 1.0 / nrm, v0));
    if (opt->start_noise > 0.0) { /* the seed's random vector, unit, in column 1 */
        double *v1 = kr_col(w, 1), rn = 0.0;
        PL_CALL(kr_fill_random(w, w->seed, 1));
        PL_CALL(pl_vec_nrm2(w->op, v1, &rn));
        if (rn > 0.0) PL_CALL(be->axpy(be, w->n, opt->start_noise / rn, v1, v0));
    }
    double n2 = 0.0;
    int in_span = 0;
    PL_CALL(kr_orthogonalize(w, 0, 0, w->cf, &n2, &in_span)); /* normalises column 0 */
    if (in_span) return kr_random_direction(w, 0, 1, exhausted);
    return PL_OK;
}
