/* cusparse_ref.cu — the cuSPARSE peer of `pjds-bench` (cusparse_ref.h): CSR
 * (CUSPARSE_SPMV_CSR_ALG1), sliced ELLPACK (SELL_ALG1) and the CSR SpMM, built
 * from the host arrays and run on the CUDA backend's stream.  Each matrix owns
 * its cuSPARSE handle, so the backend itself never links cuSPARSE. */
#include <cuda_runtime.h>
#include <cusparse.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_impl.h"
extern "C" {
#include "cusparse_ref.h"
}

#define PL_CUSPARSE(e)                                                                                   \
    do {                                                                                                 \
        cusparseStatus_t pl_cse_ = (e);                                                                  \
        if (pl_cse_ != CUSPARSE_STATUS_SUCCESS)                                                          \
            return pl_error_set(PL_ERR_CUDA, __FILE__, __LINE__, __func__, "%s: %s (%s)", #e,            \
                                cusparseGetErrorName(pl_cse_), cusparseGetErrorString(pl_cse_));        \
    } while (0)

struct pl_cusparse_mat {
    cusparseHandle_t h;          /* on the backend's stream, host pointer mode */
    int64_t nrows, ncols;
    cusparseSpMatDescr_t A;
    void *d_off, *d_col, *d_val; /* offsets (row or slice), columns, values */
    void *d_buf;                 /* SpMV buffer                            */
    size_t buf_bytes, bytes;
    cusparseSpMVAlg_t alg;
    const char *what;
};

static int cusparse_handle(pl_cuda_ctx *cx, cusparseHandle_t *h)
{
    PL_CUSPARSE(cusparseCreate(h));
    PL_CUSPARSE(cusparseSetStream(*h, cx->stream));
    PL_CUSPARSE(cusparseSetPointerMode(*h, CUSPARSE_POINTER_MODE_HOST));
    return PL_OK;
}

extern "C" void pl_cusparse_destroy(pl_backend *be, pl_cusparse_mat **pm)
{
    (void)be;
    if (!pm || !*pm) return;
    pl_cusparse_mat *m = *pm;
    if (m->A) (void)cusparseDestroySpMat(m->A);
    if (m->d_off) (void)cudaFree(m->d_off);
    if (m->d_col) (void)cudaFree(m->d_col);
    if (m->d_val) (void)cudaFree(m->d_val);
    if (m->d_buf) (void)cudaFree(m->d_buf);
    if (m->h) (void)cusparseDestroy(m->h);
    free(m);
    *pm = NULL;
}

/* Query and allocate the SpMV buffer with dummy vectors (x, y = NULL is
 * allowed for the size query only through descriptors: use small
 * temporaries on the matrix's dimensions). */
static int cusparse_prepare(pl_backend *be, pl_cusparse_mat *m)
{
    pl_cuda_ctx *cx = pl_cuda_ctx_of(be);
    double *x = NULL, *y = NULL;
    cusparseDnVecDescr_t vx = NULL, vy = NULL;
    int r = PL_OK;
    const double one = 1.0, zero = 0.0;
    cusparseStatus_t s;
    PL_CUDA_GOTO(cudaMalloc((void **)&x, (size_t)(m->ncols ? m->ncols : 1) * sizeof(double)), out, r);
    PL_CUDA_GOTO(cudaMalloc((void **)&y, (size_t)(m->nrows ? m->nrows : 1) * sizeof(double)), out, r);
    PL_CUDA_GOTO(cudaMemsetAsync(x, 0, (size_t)(m->ncols ? m->ncols : 1) * sizeof(double), cx->stream), out, r);
    s = cusparseCreateDnVec(&vx, m->ncols, x, CUDA_R_64F);
    if (s == CUSPARSE_STATUS_SUCCESS) s = cusparseCreateDnVec(&vy, m->nrows, y, CUDA_R_64F);
    if (s == CUSPARSE_STATUS_SUCCESS)
        s = cusparseSpMV_bufferSize(m->h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, m->A, vx, &zero, vy,
                                    CUDA_R_64F, m->alg, &m->buf_bytes);
    if (s == CUSPARSE_STATUS_SUCCESS && m->buf_bytes) {
        cudaError_t ce = cudaMalloc(&m->d_buf, m->buf_bytes);
        if (ce != cudaSuccess) {
            r = PL_ERROR(PL_ERR_CUDA, "cudaMalloc of the cuSPARSE buffer (%zu bytes): %s", m->buf_bytes,
                         cudaGetErrorName(ce));
            goto out;
        }
    }
#if CUSPARSE_VERSION >= 12400
    if (s == CUSPARSE_STATUS_SUCCESS)
        s = cusparseSpMV_preprocess(m->h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, m->A, vx, &zero, vy,
                                    CUDA_R_64F, m->alg, m->d_buf);
#endif
    if (s == CUSPARSE_STATUS_SUCCESS) {
        /* one trial SpMV: cuSPARSE reports unsupported configurations here */
        s = cusparseSpMV(m->h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, m->A, vx, &zero, vy, CUDA_R_64F, m->alg,
                         m->d_buf);
    }
    if (s == CUSPARSE_STATUS_NOT_SUPPORTED) {
        r = PL_ERROR(PL_ERR_NOTSUP, "cuSPARSE does not support SpMV on %s (double): %s", m->what,
                     cusparseGetErrorString(s));
        goto out;
    }
    if (s != CUSPARSE_STATUS_SUCCESS) {
        r = PL_ERROR(PL_ERR_CUDA, "cuSPARSE SpMV set-up on %s: %s (%s)", m->what, cusparseGetErrorName(s),
                     cusparseGetErrorString(s));
        goto out;
    }
    PL_CUDA_GOTO(cudaStreamSynchronize(cx->stream), out, r);
    m->bytes += m->buf_bytes;
out:
    if (vx) (void)cusparseDestroyDnVec(vx);
    if (vy) (void)cusparseDestroyDnVec(vy);
    if (x) (void)cudaFree(x);
    if (y) (void)cudaFree(y);
    return r;
}

static int dev_copy(pl_cuda_ctx *cx, void **d, const void *h, size_t bytes, size_t *tot)
{
    size_t b = bytes ? bytes : 8;
    PL_CUDA(cudaMalloc(d, b));
    *tot += b;
    if (bytes) PL_CUDA(cudaMemcpyAsync(*d, h, bytes, cudaMemcpyHostToDevice, cx->stream));
    return PL_OK;
}

static int csr_fill(pl_backend *be, pl_cusparse_mat *m, const int64_t *row_ptr, const int32_t *col, const double *val)
{
    pl_cuda_ctx *cx = pl_cuda_ctx_of(be);
    const int64_t nnz = row_ptr[m->nrows];
    size_t tot = 0;
    if (nnz < INT32_MAX) {
        /* 32-bit offsets: half the row-pointer traffic, the fast path of cuSPARSE */
        int32_t *off = (int32_t *)malloc((size_t)(m->nrows + 1) * sizeof(int32_t));
        PL_CHECK(off, PL_ERR_MEM, "out of host memory");
        for (int64_t i = 0; i <= m->nrows; i++) off[i] = (int32_t)row_ptr[i];
        int e = dev_copy(cx, &m->d_off, off, (size_t)(m->nrows + 1) * sizeof(int32_t), &tot);
        if (e == PL_OK) e = cudaStreamSynchronize(cx->stream) == cudaSuccess ? PL_OK : PL_ERR_CUDA;
        free(off);
        PL_CHECK(e == PL_OK, e, "uploading CSR row offsets failed");
        PL_CALL(dev_copy(cx, &m->d_col, col, (size_t)nnz * sizeof(int32_t), &tot));
        PL_CALL(dev_copy(cx, &m->d_val, val, (size_t)nnz * sizeof(double), &tot));
        PL_CUSPARSE(cusparseCreateCsr(&m->A, m->nrows, m->ncols, nnz, m->d_off, m->d_col, m->d_val, CUSPARSE_INDEX_32I,
                                      CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F));
    } else {
        int64_t *c64 = (int64_t *)malloc((size_t)nnz * sizeof(int64_t));
        PL_CHECK(c64, PL_ERR_MEM, "out of host memory");
        for (int64_t k = 0; k < nnz; k++) c64[k] = col[k];
        int e = dev_copy(cx, &m->d_col, c64, (size_t)nnz * sizeof(int64_t), &tot);
        if (e == PL_OK) e = cudaStreamSynchronize(cx->stream) == cudaSuccess ? PL_OK : PL_ERR_CUDA;
        free(c64);
        PL_CHECK(e == PL_OK, e, "uploading CSR columns failed");
        PL_CALL(dev_copy(cx, &m->d_off, row_ptr, (size_t)(m->nrows + 1) * sizeof(int64_t), &tot));
        PL_CALL(dev_copy(cx, &m->d_val, val, (size_t)nnz * sizeof(double), &tot));
        PL_CUSPARSE(cusparseCreateCsr(&m->A, m->nrows, m->ncols, nnz, m->d_off, m->d_col, m->d_val, CUSPARSE_INDEX_64I,
                                      CUSPARSE_INDEX_64I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F));
    }
    PL_CUDA(cudaStreamSynchronize(cx->stream));
    m->bytes = tot;
    be->bytes_h2d += (double)tot;
    return PL_OK;
}

extern "C" int pl_cusparse_csr_create(pl_backend *be, int64_t nrows, int64_t ncols, const int64_t *row_ptr,
                                      const int32_t *col, const double *val, pl_cusparse_mat **pm)
{
    PL_CHECK_CUDA_BE(be);
    *pm = NULL;
    pl_cusparse_mat *m = (pl_cusparse_mat *)calloc(1, sizeof *m);
    PL_CHECK(m, PL_ERR_MEM, "out of host memory");
    m->nrows = nrows;
    m->ncols = ncols;
    m->alg = CUSPARSE_SPMV_CSR_ALG1;
    m->what = "CSR";
    int e = cusparse_handle(pl_cuda_ctx_of(be), &m->h);
    if (e == PL_OK) e = csr_fill(be, m, row_ptr, col, val);
    if (e == PL_OK) e = cusparse_prepare(be, m);
    if (e != PL_OK) {
        pl_cusparse_destroy(be, &m);
        return pl_error_trace(e, __FILE__, __LINE__, __func__, "CSR set-up");
    }
    *pm = m;
    return PL_OK;
}

static int sell_fill(pl_backend *be, pl_cusparse_mat *m, const pjds *p)
{
    pl_cuda_ctx *cx = pl_cuda_ctx_of(be);
    size_t tot = 0;
    PL_CHECK(p->nent < INT32_MAX, PL_ERR_NOTSUP, "sliced ELLPACK via cuSPARSE: %lld stored entries need 64-bit offsets",
             (long long)p->nent);
    const size_t nch = (size_t)p->nchunks, nent = (size_t)p->nent;
    int32_t *off = (int32_t *)malloc((nch + 1) * sizeof(int32_t));
    int32_t *col = (int32_t *)malloc((nent ? nent : 1) * sizeof(int32_t));
    if (!off || !col) {
        free(off);
        free(col);
        return PL_ERROR(PL_ERR_MEM, "out of host memory");
    }
    for (size_t c = 0; c <= nch; c++) off[c] = (int32_t)p->chunk_start[c];
    /* padding (j >= row_len) becomes column -1, as cuSPARSE's SELL wants */
    for (size_t c = 0; c < nch; c++)
        for (int32_t j = 0; j < p->chunk_width[c]; j++)
            for (int32_t l = 0; l < p->C; l++) {
                size_t k = (size_t)p->chunk_start[c] + (size_t)j * (size_t)p->C + (size_t)l;
                col[k] = j < p->row_len[c * (size_t)p->C + (size_t)l] ? p->col[k] : -1;
            }
    int e = dev_copy(cx, &m->d_off, off, (nch + 1) * sizeof(int32_t), &tot);
    if (e == PL_OK) e = dev_copy(cx, &m->d_col, col, nent * sizeof(int32_t), &tot);
    if (e == PL_OK) e = dev_copy(cx, &m->d_val, p->val, nent * sizeof(double), &tot);
    if (e == PL_OK && cudaStreamSynchronize(cx->stream) != cudaSuccess)
        e = PL_ERROR(PL_ERR_CUDA, "upload of the sliced ELLPACK arrays failed");
    free(off);
    free(col);
    PL_CALL(e);
    PL_CUSPARSE(cusparseCreateSlicedEll(&m->A, p->nrows, p->ncols, p->nnz, p->nent, p->C, m->d_off, m->d_col, m->d_val,
                                        CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F));
    m->bytes = tot;
    be->bytes_h2d += (double)tot;
    return PL_OK;
}

extern "C" int pl_cusparse_sell_create(pl_backend *be, const pjds *p, pl_cusparse_mat **pm)
{
    PL_CHECK_CUDA_BE(be);
    *pm = NULL;
    PL_CHECK(!p->row_map, PL_ERR_ARG, "sliced ELLPACK via cuSPARSE: row_map is not supported");
    pl_cusparse_mat *m = (pl_cusparse_mat *)calloc(1, sizeof *m);
    PL_CHECK(m, PL_ERR_MEM, "out of host memory");
    m->nrows = p->nrows;
    m->ncols = p->ncols;
    m->alg = CUSPARSE_SPMV_SELL_ALG1;
    m->what = "sliced ELLPACK";
    int e = cusparse_handle(pl_cuda_ctx_of(be), &m->h);
    if (e == PL_OK) e = sell_fill(be, m, p);
    if (e == PL_OK) e = cusparse_prepare(be, m);
    if (e != PL_OK) {
        pl_cusparse_destroy(be, &m);
        return pl_error_trace(e, __FILE__, __LINE__, __func__, "sliced ELLPACK set-up");
    }
    *pm = m;
    return PL_OK;
}

extern "C" int pl_cusparse_spmv(pl_backend *be, pl_cusparse_mat *m, const double *d_x, double *d_y)
{
    PL_CHECK_CUDA_BE(be);
    if (m->nrows == 0) return PL_OK;
    cusparseConstDnVecDescr_t vx = NULL;
    cusparseDnVecDescr_t vy = NULL;
    const double one = 1.0, zero = 0.0;
    PL_CUSPARSE(cusparseCreateConstDnVec(&vx, m->ncols, d_x, CUDA_R_64F));
    cusparseStatus_t s = cusparseCreateDnVec(&vy, m->nrows, d_y, CUDA_R_64F);
    if (s == CUSPARSE_STATUS_SUCCESS)
        s = cusparseSpMV(m->h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, m->A, vx, &zero, vy, CUDA_R_64F, m->alg,
                         m->d_buf);
    (void)cusparseDestroyDnVec(vx);
    if (vy) (void)cusparseDestroyDnVec(vy);
    PL_CUSPARSE(s);
    return PL_OK;
}

extern "C" size_t pl_cusparse_bytes(const pl_cusparse_mat *m) { return m ? m->bytes : 0; }

/* ---- SpMM: Y = A X with row-major dense blocks (bench's SpMMV table) ---- */

struct pl_cusparse_spmm {
    int R;
    cusparseDnMatDescr_t X, Y;
    void *d_buf;
    size_t buf_bytes;
    cusparseSpMMAlg_t alg;
};

extern "C" void pl_cusparse_spmm_destroy(pl_cusparse_spmm **pp)
{
    if (!pp || !*pp) return;
    pl_cusparse_spmm *p = *pp;
    if (p->X) (void)cusparseDestroyDnMat(p->X);
    if (p->Y) (void)cusparseDestroyDnMat(p->Y);
    if (p->d_buf) (void)cudaFree(p->d_buf);
    free(p);
    *pp = NULL;
}

/* Descriptors and buffer for Y (nrows x R) = A (CSR) X (ncols x R), both
 * row-major (ld = R), with CUSPARSE_SPMM_CSR_ALG2 (the row-major algorithm;
 * ALG_DEFAULT where the library refuses it). */
extern "C" int pl_cusparse_spmm_create(pl_backend *be, pl_cusparse_mat *m, int R, const double *d_X, double *d_Y,
                                       pl_cusparse_spmm **out)
{
    PL_CHECK_CUDA_BE(be);
    pl_cuda_ctx *cx = pl_cuda_ctx_of(be);
    pl_cusparse_spmm *p = (pl_cusparse_spmm *)calloc(1, sizeof *p);
    PL_CHECK(p, PL_ERR_MEM, "out of host memory");
    p->R = R;
    const double one = 1.0, zero = 0.0;
    cusparseStatus_t s = cusparseCreateDnMat(&p->X, m->ncols, R, R, (void *)d_X, CUDA_R_64F, CUSPARSE_ORDER_ROW);
    if (s == CUSPARSE_STATUS_SUCCESS) s = cusparseCreateDnMat(&p->Y, m->nrows, R, R, d_Y, CUDA_R_64F, CUSPARSE_ORDER_ROW);
    const cusparseSpMMAlg_t algs[2] = {CUSPARSE_SPMM_CSR_ALG2, CUSPARSE_SPMM_ALG_DEFAULT};
    for (int a = 0; a < 2 && s == CUSPARSE_STATUS_SUCCESS; a++) {
        p->alg = algs[a];
        s = cusparseSpMM_bufferSize(m->h, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE,
                                    &one, m->A, p->X, &zero, p->Y, CUDA_R_64F, p->alg, &p->buf_bytes);
        if (s == CUSPARSE_STATUS_SUCCESS && p->buf_bytes && !p->d_buf &&
            cudaMalloc(&p->d_buf, p->buf_bytes) != cudaSuccess) {
            const size_t bytes = p->buf_bytes;
            pl_cusparse_spmm_destroy(&p);
            return PL_ERROR(PL_ERR_CUDA, "cudaMalloc of the cuSPARSE SpMM buffer (%zu bytes)", bytes);
        }
        if (s == CUSPARSE_STATUS_SUCCESS)
            s = cusparseSpMM(m->h, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE, &one,
                             m->A, p->X, &zero, p->Y, CUDA_R_64F, p->alg, p->d_buf);
        if (s == CUSPARSE_STATUS_SUCCESS) break;
        if (a == 0) {
            if (p->d_buf) (void)cudaFree(p->d_buf);
            p->d_buf = NULL;
            s = CUSPARSE_STATUS_SUCCESS; /* try the default algorithm */
        }
    }
    if (s != CUSPARSE_STATUS_SUCCESS) {
        pl_cusparse_spmm_destroy(&p);
        return PL_ERROR(PL_ERR_CUDA, "cuSPARSE SpMM set-up (R = %d): %s", R, cusparseGetErrorString(s));
    }
    PL_CUDA(cudaStreamSynchronize(cx->stream));
    *out = p;
    return PL_OK;
}

extern "C" int pl_cusparse_spmm_run(pl_backend *be, pl_cusparse_mat *m, pl_cusparse_spmm *p)
{
    PL_CHECK_CUDA_BE(be);
    const double one = 1.0, zero = 0.0;
    PL_CUSPARSE(cusparseSpMM(m->h, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, m->A,
                             p->X, &zero, p->Y, CUDA_R_64F, p->alg, p->d_buf));
    return PL_OK;
}

extern "C" const char *pl_cusparse_spmm_alg(const pl_cusparse_spmm *p)
{
    return p && p->alg == CUSPARSE_SPMM_CSR_ALG2 ? "CSR_ALG2" : "ALG_DEFAULT";
}
