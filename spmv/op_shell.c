/* op_shell.c — an operator without a stored matrix whose product is a
 * caller's function (pl_op_create_shell, spmv.h): a spectral
 * transformation (st/: x -> (A - sigma B)^{-1} B x) behind the interface
 * that Lanczos and Krylov-Schur see.  The rows are this rank's block of
 * the original order (no permutation), so the global index of local row i
 * is row0 + i.  pl_op_apply and pl_op_apply_queued call the function
 * (spmv_local in op_apply.c); the block products return PL_ERR_NOTSUP. */
#include <stdio.h>
#include <stdlib.h>

#include "op_impl.h"
#include "pl_error.h"
#include "spmv.h"

int pl_op_create_shell(MPI_Comm comm, pl_backend *be, int64_t n_global, int64_t row0, int64_t n_local,
                       pl_op_shell_fn fn, void *arg, double norm_estimate, pl_op **out)
{
    *out = NULL;
    PL_CHECK(fn && be && n_local >= 0 && n_local < INT32_MAX && row0 >= 0 && row0 + n_local <= n_global, PL_ERR_ARG,
             "pl_op_create_shell: bad rows [%lld, %lld) of %lld", (long long)row0, (long long)(row0 + n_local),
             (long long)n_global);
    pl_op *op = NULL;
    PL_CALL(pl_op_new(comm, be, &op));
    op->shell = fn;
    op->shell_arg = arg;
    op->n_global = n_global;
    op->row0 = row0;
    op->n = (int32_t)n_local;
    op->fmt = PL_FORMAT_PJDS;
    op->exchange = PL_EXCHANGE_VECTOR;
    op->norm_est = norm_estimate;
    op->cmp_nval = op->cmp_noff = -1;
    snprintf(op->fmt_note, sizeof op->fmt_note, "shell operator (spectral transformation)");
    op->gidx = malloc(((size_t)n_local + 1) * sizeof *op->gidx);
    if (!op->gidx) {
        pl_op_destroy(&op);
        return PL_ERROR(PL_ERR_MEM, "out of host memory");
    }
    for (int64_t i = 0; i < n_local; i++) op->gidx[i] = row0 + i;
    *out = op;
    return PL_OK;
}
