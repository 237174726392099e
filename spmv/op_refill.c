/* op_refill.c — value refill of the distributed operator (pl_op_refill,
 * spmv.h) for sweeps that change only matrix values: the matrix becomes
 * sum_k coef[k] A_k in place, from the value terms pl_op_create kept in
 * backend memory in the layout of the values (op_build.c, upload_terms).
 * Nothing else changes: permutation, layout, halo plan, column indices and
 * the CUDA block view (which borrows the values) stay.  Cost: (2K + 1)
 * passes over the stored values on the backend (copy/scal/axpy), no
 * host/device traffic of entries; the norm estimate is one pass over the
 * host's n x K row sums. */
#include <math.h>
#include <stdlib.h>

#include "pl_error.h"
#include "spmv.h"
#include "spmv_impl.h"
#include "op_impl.h"

int pl_op_nterms(const pl_op *op) { return op ? op->nterms : 0; }

/* val = sum_k coef[k] T_k for one part (its backend matrix mat). */
static int combine(pl_backend *be, void *mat, double *const *T, int K, const double *coef)
{
    double *val = NULL;
    size_t n = 0;
    PL_CALL(be->mat_values(be, mat, &val, &n));
    PL_CALL(be->copy(be, n, T[0], val));
    if (coef[0] != 1.0) PL_CALL(be->scal(be, n, coef[0], val));
    for (int k = 1; k < K; k++)
        if (coef[k] != 0.0) PL_CALL(be->axpy(be, n, coef[k], T[k], val));
    return PL_OK;
}

static int refill_local(pl_op *op, int K, const double *coef)
{
    pl_backend *be = op->be;
    PL_CHECK(op->nterms > 0, PL_ERR_ARG, "pl_op_refill: the operator keeps no value terms (create it from a CSR "
                                         "block with nterms > 0)");
    PL_CHECK(K == op->nterms, PL_ERR_ARG, "pl_op_refill: %d coefficients for %d value terms", K, op->nterms);
    PL_CHECK(be->mat_values, PL_ERR_NOTSUP, "pl_op_refill: backend %s cannot expose its matrix values", be->name);
    for (int k = 0; k < K; k++)
        PL_CHECK(isfinite(coef[k]), PL_ERR_ARG, "pl_op_refill: coefficient %d is %g", k, coef[k]);
    double t0 = pl_wtime();
    PL_CALL(combine(be, op->d_loc, op->d_term_loc, K, coef));
    if (op->d_rem) PL_CALL(combine(be, op->d_rem, op->d_term_rem, K, coef));
    PL_CALL(be->sync(be));
    double t1 = pl_wtime(), rowmax = 0.0;
    const int64_t n = op->n;
    const double *rs = op->term_rowsum;
#pragma omp parallel for schedule(static) reduction(max : rowmax)
    for (int64_t i = 0; i < n; i++) {
        double a = 0.0;
        for (int k = 0; k < K; k++) a += fabs(coef[k]) * rs[(size_t)k * (size_t)n + i];
        rowmax = a > rowmax ? a : rowmax;
    }
    op->norm_est = rowmax;
    pl_debug("pl_op_refill: %d terms, values %.3f ms, norm estimate %.3f ms", K, 1e3 * (t1 - t0),
             1e3 * (pl_wtime() - t1));
    return PL_OK;
}

int pl_op_refill(pl_op *op, int nterms, const double *coef)
{
    PL_CHECK(op && coef, PL_ERR_ARG, "pl_op_refill: NULL argument");
    PL_CHECK(op->fmt != PL_FORMAT_MATRIX_FREE, PL_ERR_NOTSUP,
             "pl_op_refill: format = matrix_free has no value refill yet (rebuild the operator)");
    PL_CALL(pl_op_agree(op->comm, refill_local(op, nterms, coef), "refilling the operator's values"));
    double g = 0.0;
    PL_MPI(MPI_Allreduce(&op->norm_est, &g, 1, MPI_DOUBLE, MPI_MAX, op->comm), "MPI_Allreduce of the norm estimate");
    op->norm_est = g;
    return PL_OK;
}
