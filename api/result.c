/* result.c — result handles: made from the solver's lz_result (values and
 * residuals copied, eigenvectors downloaded and un-permuted into the
 * caller's row order: each rank holds the original rows [row0, row0 + n) of
 * its block, as app/solve_core.c writes them) and read back by the
 * pjds_result_* accessors. */
#include <stdlib.h>
#include <string.h>

#include "api_impl.h"

/* Column j of the solver's vectors, back in the original row order, into
 * the result's column j.  Local. */
static int unpermute_vectors(const pjds_matrix *A, const lz_result *lr, pjds_result *r)
{
    const int64_t *gi = pl_op_global_index(A->op);
    const size_t n = (size_t)r->n_local;
    double *perm = NULL;
    PL_MALLOC(perm, n + 1);
    int rc = PL_OK;
    for (int j = 0; j < r->nev; j++) {
        PL_CALL_GOTO(lr->be->download(lr->be, perm, lr->vectors + (size_t)j * lr->ld, n), out, rc);
        double *col = r->vec + (size_t)j * n;
        for (size_t p = 0; p < n; p++) {
            const int64_t l = gi[p] - r->row0;
            PL_CHECK_GOTO(l >= 0 && l < (int64_t)n, PL_ERR_INTERNAL, out, rc, "global index %lld outside the block",
                          (long long)gi[p]);
            col[l] = perm[p];
        }
    }
out:
    free(perm);
    return rc;
}

int api_result_make(const pjds_matrix *A, const lz_result *lr, pjds_method method, int cplx, pjds_result **res)
{
    pjds_result *r = calloc(1, sizeof *r);
    PL_CHECK(r, PL_ERR_MEM, "out of host memory");
    const int nev = lr->nev;
    *r = (pjds_result){.nev = nev,
                       .nconv = lr->nconv,
                       .ncv = lr->ncv,
                       .restarts = lr->restarts,
                       .cplx = cplx,
                       .verify_searches = lr->verifications,
                       .verify_missed = lr->missed,
                       .verify_bound = lr->verify_bound,
                       .reason = (pjds_stop_reason)lr->reason,
                       .method = method,
                       .iterations = lr->iterations,
                       .row0 = A->row0,
                       .n_local = A->n_local};
    r->re = malloc(((size_t)nev + 1) * sizeof *r->re);
    r->im = calloc((size_t)nev + 1, sizeof *r->im);
    r->resid = malloc(((size_t)nev + 1) * sizeof *r->resid);
    int rc = r->re && r->im && r->resid ? PL_OK : PL_ERROR(PL_ERR_MEM, "out of host memory");
    if (rc == PL_OK) {
        memcpy(r->re, lr->eigenvalues, (size_t)nev * sizeof *r->re);
        if (lr->eigenvalues_imag) memcpy(r->im, lr->eigenvalues_imag, (size_t)nev * sizeof *r->im);
        memcpy(r->resid, lr->residuals, (size_t)nev * sizeof *r->resid);
    }
    if (rc == PL_OK && lr->vectors) {
        r->vec = malloc(((size_t)nev * (size_t)r->n_local + 1) * sizeof *r->vec);
        rc = r->vec ? unpermute_vectors(A, lr, r) : PL_ERROR(PL_ERR_MEM, "out of host memory for the eigenvectors");
    }
    if (rc != PL_OK) {
        pjds_result_free(&r);
        return rc;
    }
    *res = r;
    return PL_OK;
}

const char *pjds_stop_reason_name(pjds_stop_reason r)
{
    switch (r) {
    case PJDS_STOP_CONVERGED: return "converged";
    case PJDS_STOP_MAX_RESTARTS: return "max_restarts";
    case PJDS_STOP_BREAKDOWN: return "breakdown";
    case PJDS_STOP_INACCURATE: return "inaccurate";
    case PJDS_STOP_STAGNATED: return "stagnated";
    default: return "unknown";
    }
}

pjds_status pjds_result_get_info(const pjds_result *res, pjds_result_info *info)
{
    if (!res || !info) return api_fail(PJDS_ERR_ARG, "pjds_result_get_info: %s is NULL", res ? "info" : "res");
    *info = (pjds_result_info){.nev = res->nev,
                               .nconv = res->nconv,
                               .reason = res->reason,
                               .method = res->method,
                               .is_complex = res->cplx,
                               .ncv = res->ncv,
                               .restarts = res->restarts,
                               .iterations = res->iterations,
                               .has_vectors = res->vec != NULL,
                               .row0 = res->row0,
                               .n_local = res->n_local,
                               .verify_searches = res->verify_searches,
                               .verify_missed = res->verify_missed,
                               .verify_bound = res->verify_bound};
    return PJDS_OK;
}

pjds_status pjds_result_eigenvalues(const pjds_result *res, double *re, double *im)
{
    if (!res || !re) return api_fail(PJDS_ERR_ARG, "pjds_result_eigenvalues: %s is NULL", res ? "re" : "res");
    memcpy(re, res->re, (size_t)res->nev * sizeof *re);
    if (im) memcpy(im, res->im, (size_t)res->nev * sizeof *im);
    return PJDS_OK;
}

pjds_status pjds_result_residuals(const pjds_result *res, double *r)
{
    if (!res || !r) return api_fail(PJDS_ERR_ARG, "pjds_result_residuals: %s is NULL", res ? "r" : "res");
    memcpy(r, res->resid, (size_t)res->nev * sizeof *r);
    return PJDS_OK;
}

pjds_status pjds_result_eigenvector(const pjds_result *res, int i, double *re, double *im)
{
    if (!res || !re) return api_fail(PJDS_ERR_ARG, "pjds_result_eigenvector: %s is NULL", res ? "re" : "res");
    if (i < 0 || i >= res->nev)
        return api_fail(PJDS_ERR_ARG, "pjds_result_eigenvector: index %d outside [0, %d)", i, res->nev);
    if (!res->vec)
        return api_fail(PJDS_ERR_ARG, "pjds_result_eigenvector: the solve kept no eigenvectors (want_vectors = 0)");
    /* a complex pair shares two columns: Re x at the first, Im x at the
     * second; the second eigenvalue of the pair has the conjugate vector */
    const size_t n = (size_t)res->n_local;
    int cr = i, ci = -1;
    double sgn = 1.0;
    if (res->cplx && res->im[i] > 0 && i + 1 < res->nev) ci = i + 1;
    if (res->cplx && res->im[i] < 0 && i > 0) {
        cr = i - 1;
        ci = i;
        sgn = -1.0;
    }
    memcpy(re, res->vec + (size_t)cr * n, n * sizeof *re);
    if (im)
        for (size_t p = 0; p < n; p++) im[p] = ci >= 0 ? sgn * res->vec[(size_t)ci * n + p] : 0.0;
    return PJDS_OK;
}

void pjds_result_free(pjds_result **res)
{
    if (!res || !*res) return;
    free((*res)->re);
    free((*res)->im);
    free((*res)->resid);
    free((*res)->vec);
    free(*res);
    *res = NULL;
}
