/* cusparse_ref.h — the cuSPARSE peer of `pjds-bench` (cusparse_ref.cu; built
 * only with CUDA, callers guard with #if PJDS_HAVE_CUDA): y = A x with
 * cusparseSpMV on CSR and sliced ELLPACK, and the CSR SpMM, on the stream of
 * a backend made by pl_backend_cuda_create (PL_ERR_ARG for another one).
 * Plain C header, no CUDA include.  Also the independent oracle of the GPU
 * backend test.  Not collective.
 */
#ifndef PL_CUSPARSE_REF_H
#define PL_CUSPARSE_REF_H

#include <stddef.h>
#include <stdint.h>

#include "spmv.h"

typedef struct pl_cusparse_mat pl_cusparse_mat;
/* CSR from a host CSR with int32 column indices (nrows + 1 row offsets). */
int pl_cusparse_csr_create(pl_backend *be, int64_t nrows, int64_t ncols, const int64_t *row_ptr, const int32_t *col,
                           const double *val, pl_cusparse_mat **m);
/* Sliced ELLPACK (CUSPARSE_FORMAT_SLICED_ELLPACK, slice = p->C) from the
 * arrays of a host pJDS (same layout; padding columns become -1).
 * PL_ERR_NOTSUP if cuSPARSE refuses the configuration (message says why);
 * p->row_map must be NULL. */
int pl_cusparse_sell_create(pl_backend *be, const pjds *p, pl_cusparse_mat **m);
int pl_cusparse_spmv(pl_backend *be, pl_cusparse_mat *m, const double *d_x, double *d_y);
size_t pl_cusparse_bytes(const pl_cusparse_mat *m);
void pl_cusparse_destroy(pl_backend *be, pl_cusparse_mat **m);

/* cuSPARSE SpMM of a CSR reference matrix with row-major dense blocks:
 * Y (nrows x R) = A X (ncols x R), ld = R; create binds the device blocks
 * and runs one trial product; run queues one product on the stream. */
typedef struct pl_cusparse_spmm pl_cusparse_spmm;
int pl_cusparse_spmm_create(pl_backend *be, pl_cusparse_mat *m, int R, const double *d_X, double *d_Y,
                            pl_cusparse_spmm **p);
int pl_cusparse_spmm_run(pl_backend *be, pl_cusparse_mat *m, pl_cusparse_spmm *p);
void pl_cusparse_spmm_destroy(pl_cusparse_spmm **p);
const char *pl_cusparse_spmm_alg(const pl_cusparse_spmm *p);

#endif
