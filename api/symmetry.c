/* symmetry.c — is a CSR matrix symmetric?  Two products instead of a
 * transpose: for random x and y, y^T A x - x^T A y = y^T (A - A^T) x, which
 * is zero up to rounding exactly when A = A^T (with probability one over
 * the random vectors).  The vectors depend on the global row only, so the
 * answer is the same for any number of ranks. */
#include <math.h>
#include <stdlib.h>

#include "api_impl.h"

#define SYM_SEED_X UINT64_C(0x73796d6d65747279) /* fixed: the check is reproducible */
#define SYM_SEED_Y UINT64_C(0x7472616e73706f73)
#define SYM_RTOL 1e-10

int api_check_symmetric(pl_op *op, int *symmetric)
{
    pl_op_info info;
    pl_op_get_info(op, &info);
    pl_backend *be = pl_op_backend(op);
    const int64_t *gi = pl_op_global_index(op);
    const size_t n = (size_t)info.n_local;
    double *h = NULL, *x = NULL, *y = NULL, *ax = NULL, *ay = NULL;
    int rc = PL_OK;
    PL_MALLOC(h, n + 1);
    PL_CALL_GOTO(be->vec_alloc(be, n + 1, &x), out, rc);
    PL_CALL_GOTO(be->vec_alloc(be, n + 1, &y), out, rc);
    PL_CALL_GOTO(be->vec_alloc(be, n + 1, &ax), out, rc);
    PL_CALL_GOTO(be->vec_alloc(be, n + 1, &ay), out, rc);
    for (size_t i = 0; i < n; i++) h[i] = lz_random_element(SYM_SEED_X, gi[i]);
    PL_CALL_GOTO(be->upload(be, x, h, n), out, rc);
    for (size_t i = 0; i < n; i++) h[i] = lz_random_element(SYM_SEED_Y, gi[i]);
    PL_CALL_GOTO(be->upload(be, y, h, n), out, rc);
    PL_CALL_GOTO(pl_op_apply(op, x, ax), out, rc);
    PL_CALL_GOTO(pl_op_apply(op, y, ay), out, rc);
    double yax = 0, xay = 0, nx = 0, ny = 0;
    PL_CALL_GOTO(pl_vec_dot(op, y, ax, &yax), out, rc);
    PL_CALL_GOTO(pl_vec_dot(op, x, ay, &xay), out, rc);
    PL_CALL_GOTO(pl_vec_nrm2(op, x, &nx), out, rc);
    PL_CALL_GOTO(pl_vec_nrm2(op, y, &ny), out, rc);
    *symmetric = fabs(yax - xay) <= SYM_RTOL * info.norm_estimate * nx * ny;
    pl_op_reset_counters(op);
out:
    free(h);
    if (x) be->vec_free(be, x);
    if (y) be->vec_free(be, y);
    if (ax) be->vec_free(be, ax);
    if (ay) be->vec_free(be, ay);
    return rc;
}
