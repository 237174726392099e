/* matrix.c — matrix handles: options, the CSR constructor, the shared path
 * from a CSR row block to a handle (backend, pJDS operator, symmetry),
 * facts and freeing. */
#include <stdlib.h>
#include <string.h>

#include "api_csr.h"
#include "api_impl.h"

void pjds_matrix_options_init(pjds_matrix_options *opt)
{
    if (!opt) return;
    memset(opt, 0, sizeof *opt);
    opt->backend = PJDS_BACKEND_AUTO;
    opt->symmetry = PJDS_SYMMETRY_CHECK;
    opt->device = -1;
}

/* The backend of this rank: the GPU of opt->device, else of the rank's
 * index on its node (as the app picks it), modulo the node's GPUs (ranks
 * beyond the GPUs share them, where the app refuses).  Local. */
static int make_backend(MPI_Comm comm, const pjds_matrix_options *opt, pl_backend **be)
{
    PL_CHECK(opt->backend >= PJDS_BACKEND_AUTO && opt->backend <= PJDS_BACKEND_CUDA, PL_ERR_INPUT,
             "backend %d is none of auto (0), cpu (1), cuda (2)", (int)opt->backend);
    int device = opt->device;
    if (device < 0) {
        MPI_Comm node;
        PL_CHECK(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) == MPI_SUCCESS, PL_ERR_MPI,
                 "MPI_Comm_split_type failed");
        int e = MPI_Comm_rank(node, &device);
        MPI_Comm_free(&node);
        PL_CHECK(e == MPI_SUCCESS, PL_ERR_MPI, "MPI_Comm_rank failed");
        const int count = opt->backend == PJDS_BACKEND_CPU ? 0 : pl_cuda_device_count();
        if (count > 0) device %= count;
    }
    const int kind = opt->backend == PJDS_BACKEND_CPU ? PL_BACKEND_CPU
                     : opt->backend == PJDS_BACKEND_CUDA ? PL_BACKEND_CUDA
                                                          : PL_BACKEND_AUTO;
    PL_CALL(pl_backend_create(kind, device, be));
    return PL_OK;
}

/* Backend and operator of the handle m (its comm set); rows consumed.  Collective. */
static int build_operator(pjds_matrix *m, pl_csr *rows, const pjds_matrix_options *opt)
{
    PL_CALL(api_agree(m->comm, make_backend(m->comm, opt, &m->be)));
    m->backend = strcmp(m->be->name, "cpu") == 0 ? PJDS_BACKEND_CPU : PJDS_BACKEND_CUDA;
    pl_op_options o;
    pl_op_options_defaults(&o);
    PL_CALL(api_agree(m->comm, pl_op_create(rows, &o, m->be, m->comm, &m->op)));
    pl_csr_destroy(rows);
    pl_op_info info;
    pl_op_get_info(m->op, &info);
    m->n = info.n_global;
    m->row0 = info.row0;
    m->n_local = info.n_local;
    m->nnz = info.nnz_local;
    PL_CHECK(MPI_Allreduce(MPI_IN_PLACE, &m->nnz, 1, MPI_INT64_T, MPI_SUM, m->comm) == MPI_SUCCESS, PL_ERR_MPI,
             "MPI_Allreduce failed");
    return PL_OK;
}

int api_matrix_from_rows(MPI_Comm comm, pl_csr *rows, const pjds_matrix_options *opt, int symmetric_known,
                         pjds_matrix **A)
{
    pjds_matrix_options def;
    if (!opt) {
        pjds_matrix_options_init(&def);
        opt = &def;
    }
    pjds_matrix *m = calloc(1, sizeof *m);
    int rc = api_agree(comm, m ? PL_OK : PL_ERROR(PL_ERR_MEM, "out of host memory"));
    if (rc != PL_OK) {
        free(m);
        pl_csr_destroy(rows);
        return rc;
    }
    m->comm = MPI_COMM_NULL;
    if (MPI_Comm_dup(comm, &m->comm) != MPI_SUCCESS) rc = PL_ERROR(PL_ERR_MPI, "MPI_Comm_dup failed");
    else {
        MPI_Comm_rank(m->comm, &m->rank);
        MPI_Comm_size(m->comm, &m->size);
        rc = build_operator(m, rows, opt);
    }
    if (rc == PL_OK) {
        m->symmetric = symmetric_known >= 0 ? symmetric_known : opt->symmetry != PJDS_NONSYMMETRIC;
        if (symmetric_known < 0 && opt->symmetry == PJDS_SYMMETRY_CHECK) rc = api_check_symmetric(m->op, &m->symmetric);
    }
    pl_csr_destroy(rows);
    if (rc != PL_OK) {
        pjds_matrix_free(&m);
        return rc;
    }
    *A = m;
    return PL_OK;
}

pjds_status pjds_matrix_create_csr(MPI_Comm comm, int64_t n_rows, int64_t n_cols, int64_t row0, int64_t n_local,
                                   const int64_t *row_ptr, const int64_t *col, const double *val,
                                   const pjds_matrix_options *opt, pjds_matrix **A)
{
    if (A) *A = NULL;
    api_log_init(comm);
    int rc = api_agree(comm, A ? PL_OK : PL_ERROR(PL_ERR_ARG, "A is NULL"));
    if (rc != PL_OK) return api_status(rc);
    pl_csr rows;
    rc = api_csr_copy(comm, n_rows, n_cols, row0, n_local, row_ptr, col, val, &rows);
    if (rc != PL_OK) return api_status(rc);
    return api_status(api_matrix_from_rows(comm, &rows, opt, -1, A));
}

pjds_status pjds_matrix_get_info(const pjds_matrix *A, pjds_matrix_info *info)
{
    if (!A || !info) return api_fail(PJDS_ERR_ARG, "pjds_matrix_get_info: %s is NULL", A ? "info" : "A");
    info->n_rows = A->n;
    info->row0 = A->row0;
    info->n_local = A->n_local;
    info->nnz = A->nnz;
    info->symmetric = A->symmetric;
    info->backend = A->backend;
    return PJDS_OK;
}

void pjds_matrix_free(pjds_matrix **A)
{
    if (!A || !*A) return;
    pjds_matrix *m = *A;
    pl_op_destroy(&m->op);
    if (m->be) pl_backend_destroy(&m->be);
    if (m->comm != MPI_COMM_NULL) MPI_Comm_free(&m->comm);
    free(m);
    *A = NULL;
}
