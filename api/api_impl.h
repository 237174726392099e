/* api_impl.h — what the files of api/ share: the handles behind the opaque
 * types of pjds.h and the translation of internal errors into pjds_status. */
#ifndef PJDS_API_IMPL_H
#define PJDS_API_IMPL_H

#include <stdint.h>

#include "lanczos.h"
#include "pjds/pjds.h"
#include "pl_csr.h"
#include "pl_error.h"
#include "spmv.h"

struct pjds_matrix {
    MPI_Comm comm;     /* a duplicate of the caller's communicator        */
    int rank, size;
    pl_backend *be;
    pl_op *op;
    int64_t n, row0, n_local, nnz;
    int symmetric;     /* 1 symmetric, 0 not                              */
    pjds_backend backend;
};

struct pjds_result {
    int nev, nconv, ncv, restarts, cplx;
    int verify_searches, verify_missed;
    double verify_bound;
    pjds_stop_reason reason;
    pjds_method method;
    int64_t iterations, row0, n_local;
    double *re, *im, *resid; /* nev each (im: zeros for Lanczos)                */
    double *vec;             /* NULL, or nev columns of n_local rows, original   */
                             /* order, in the solver's layout (a complex pair:   */
                             /* Re x in column i, Im x in column i + 1)          */
};

/* The public status of an internal error code; on an error, the recorded
 * internal message becomes this thread's pjds_last_error and is cleared.
 * Can't fail. */
pjds_status api_status(int rc);
/* pjds_last_error = msg for a check in api/ itself; returns s. */
pjds_status api_fail(pjds_status s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Make a step's error collective: every rank of comm returns the code and
 * message of the lowest rank that failed (prefixed with its rank when comm
 * has several), or PL_OK when none did.  Collective. */
int api_agree(MPI_Comm comm, int rc);
/* The internal log (pl_info: rank 0 of comm only) at the verbosity of
 * pjds_set_verbosity.  Local; can't fail. */
void api_log_init(MPI_Comm comm);

/* A matrix handle from this rank's CSR block (consumed: rows is destroyed):
 * the backend, the operator and, for symmetry PJDS_SYMMETRY_CHECK, the
 * symmetry test.  comm is the caller's; the handle duplicates it.
 * Collective. */
int api_matrix_from_rows(MPI_Comm comm, pl_csr *rows, const pjds_matrix_options *opt, int symmetric_known,
                         pjds_matrix **A);
/* y^T A x against x^T A y for two random vectors: *symmetric = 1 when they
 * agree to 1e-10 of norm_estimate |x| |y|.  Collective. */
int api_check_symmetric(pl_op *op, int *symmetric);

/* *res from a finished solve: values, residuals, the facts, and (when the
 * solve kept them) the eigenvectors downloaded and put back into the
 * original row order.  cplx: a nonsymmetric problem.  Local. */
int api_result_make(const pjds_matrix *A, const lz_result *lr, pjds_method method, int cplx, pjds_result **res);

#endif
