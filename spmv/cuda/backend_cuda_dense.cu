/* backend_cuda_dense.cu — the dense slots of the CUDA backend that work
 * on the Krylov basis (spmv.h): gemv_t, gemv_n, gemm, gemm_t, gram,
 * cgs_step, basis_update, restart_step, sel_gram, sel_update and lz_step.
 * Our tall-skinny kernels (ts_kernels.cu, ts_restart.cu, ts_lanczos.cu)
 * where the sizes fit, else cuBLAS (or, for restart_step, the slots it
 * replaces).  The context's work array d_work holds what a call uploads
 * (Y, h); results that reach the host come through the page-locked
 * h_ts_pin and are counted in bytes_d2h. */
#include <cuda_runtime.h>
#include <string.h>

#include "cuda_impl.h"
#include "lz_coef.h"

/* (cuda_impl.h) */
extern "C" int pl_cuda_work_reserve(pl_cuda_ctx *cx, size_t n)
{
    if (n <= cx->work_n) return PL_OK;
    size_t want = n < 1024 ? 1024 : n;
    if (cx->d_work) PL_CUDA(cudaFree(cx->d_work)); /* cudaFree waits for the device */
    cx->d_work = NULL;
    cx->work_n = 0;
    PL_CUDA(cudaMalloc((void **)&cx->d_work, want * sizeof(double)));
    cx->work_n = want;
    return PL_OK;
}

/* The result of one of our tall-skinny reductions (ts_kernels.cu): count
 * doubles from d_ts_h through the pinned buffer to h, once the stream is
 * done; counted as downloaded. */
static int ts_fetch(pl_backend *be, pl_cuda_ctx *cx, double *h, size_t count)
{
    PL_CUDA(cudaMemcpyAsync(cx->h_ts_pin, cx->d_ts_h, count * sizeof(double), cudaMemcpyDeviceToHost, cx->stream));
    PL_CUDA(cudaStreamSynchronize(cx->stream));
    memcpy(h, cx->h_ts_pin, count * sizeof(double));
    be->bytes_d2h += (double)count * sizeof(double);
    return PL_OK;
}

static int cu_gemv_t(pl_backend *be, size_t n, int k, const double *V, size_t ld, const double *w, double *h_h)
{
    pl_cuda_ctx *cx = pl_cuda_ctx_of(be);
    PL_CHECK(k >= 0 && ld >= n, PL_ERR_ARG, "gemv_t: k = %d, ld = %zu < n = %zu", k, ld, n);
    if (k == 0) return PL_OK;
    if (n == 0) {
        for (int i = 0; i < k; i++) h_h[i] = 0.0;
        return PL_OK;
    }
    if (!cx->ts_cublas && k <= PL_TS_KMAX) {
        /* our kernel: V and w read once, k doubles to the pinned buffer */
        PL_CALL(pl_cuda_ts_gemv_t(cx, n, k, V, ld, w));
        return ts_fetch(be, cx, h_h, (size_t)k);
    }
    PL_CALL(pl_cuda_work_reserve(cx, (size_t)k));
    const double one = 1.0, zero = 0.0;
    PL_CUBLAS(pl_cublas.Dgemv_64(cx->cublas, CUBLAS_OP_T, (int64_t)n, k, &one, V, (int64_t)ld, w, 1, &zero, cx->d_work, 1));
    PL_CUDA(cudaMemcpyAsync(h_h, cx->d_work, (size_t)k * sizeof(double), cudaMemcpyDeviceToHost, cx->stream));
    PL_CUDA(cudaStreamSynchronize(cx->stream));
    be->bytes_d2h += (double)k * sizeof(double);
    return PL_OK;
}

static int cu_gram(pl_backend *be, size_t n, int k, const double *V, size_t ld, double *h_G)
{
    pl_cuda_ctx *cx = pl_cuda_ctx_of(be);
    PL_CHECK(k >= 1 && k <= PL_GRAM_KMAX && ld >= n, PL_ERR_ARG, "gram: k = %d, ld = %zu < n = %zu", k, ld, n);
    const int ns = k * (k + 1) / 2;
    double pk[PL_GRAM_KMAX * (PL_GRAM_KMAX + 1) / 2] = {0};
    if (n > 0) {
        PL_CALL(pl_cuda_ts_gram(cx, n, k, V, ld));
        PL_CALL(ts_fetch(be, cx, pk, (size_t)ns));
    }
    for (int c = 0, q = 0; c < k; c++)
        for (int r = 0; r <= c; r++, q++) h_G[(size_t)c * k + r] = h_G[(size_t)r * k + c] = pk[q];
    return PL_OK;
}

static int cu_sel_gram(pl_backend *be, size_t n, int ka, const double *A, const double *B, size_t ld, double *h)
{
    pl_cuda_ctx *cx = pl_cuda_ctx_of(be);
    PL_CHECK(ka >= 1 && ka <= PL_SEL_KMAX && ld >= n, PL_ERR_ARG, "sel_gram: ka = %d, ld = %zu < n = %zu", ka, ld, n);
    double pk[PL_SEL_KMAX + 6] = {0};
    if (n > 0) {
        PL_CALL(pl_cuda_ts_sel_gram(cx, n, ka, A, B, ld));
        PL_CALL(ts_fetch(be, cx, pk, (size_t)(ka + 6)));
    }
    memcpy(h, pk, (size_t)ka * sizeof(double));
    const double *g = pk + ka; /* (0,0) (0,1) (1,1) (0,2) (1,2) (2,2) */
    const double G[9] = {g[0], g[1], g[3], g[1], g[2], g[4], g[3], g[4], g[5]};
    memcpy(h + ka, G, sizeof G);
    return PL_OK;
}

static int cu_sel_update(pl_backend *be, size_t n, int ka, const double *A, const double *ca, const double *B,
                         const double *cb, size_t ld, double s, double *x)
{
    pl_cuda_ctx *cx = pl_cuda_ctx_of(be);
    PL_CHECK(ka >= 0 && ka <= PL_SEL_KMAX && ld >= n, PL_ERR_ARG, "sel_update: ka = %d, ld = %zu < n = %zu", ka, ld,
             n);
    if (n == 0) return PL_OK;
    return pl_cuda_ts_sel_update(cx, n, ka, A, ca, B, cb, ld, s, x);
}

static int cu_lz_step(pl_backend *be, size_t n, int ka, const double *A, const double *x, size_t ld, double beta,
                      const double *d_dots, double *y, double *out)
{
    pl_cuda_ctx *cx = pl_cuda_ctx_of(be);
    PL_CHECK(ka >= 0 && ka <= PL_SEL_KMAX && ld >= n && d_dots && out, PL_ERR_ARG,
             "lz_step: ka = %d, ld = %zu < n = %zu", ka, ld, n);
    PL_CHECK(n >= 1, PL_ERR_ARG, "lz_step: no rows");
    const size_t nout = PL_LZ_OUT + (size_t)ka;
    PL_CALL(pl_cuda_ts_lz_step(cx, n, ka, A, x, ld, beta, d_dots, y));
    return ts_fetch(be, cx, out, nout);
}

static int cu_gemv_n(pl_backend *be, size_t n, int k, double alpha, const double *V, size_t ld, const double *h_h,
                     double beta, double *w)
{
    pl_cuda_ctx *cx = pl_cuda_ctx_of(be);
    PL_CHECK(k >= 0 && ld >= n, PL_ERR_ARG, "gemv_n: k = %d, ld = %zu < n = %zu", k, ld, n);
    if (n == 0) return PL_OK;
    if (k == 0) return beta == 0.0 ? be->set(be, n, 0.0, w) : be->scal(be, n, beta, w);
    if (!cx->ts_cublas && k <= PL_TS_KMAX) {
        /* h travels in the kernel parameters: no separate copy, h_h free at return */
        PL_CALL(pl_cuda_ts_gemv_n(cx, n, k, alpha, V, ld, h_h, beta, w));
        be->bytes_h2d += (double)k * sizeof(double);
        return PL_OK;
    }
    PL_CALL(pl_cuda_work_reserve(cx, (size_t)k));
    /* pageable source: returns once staged, so h_h may change afterwards */
    PL_CUDA(cudaMemcpyAsync(cx->d_work, h_h, (size_t)k * sizeof(double), cudaMemcpyHostToDevice, cx->stream));
    be->bytes_h2d += (double)k * sizeof(double);
    PL_CUBLAS(pl_cublas.Dgemv_64(cx->cublas, CUBLAS_OP_N, (int64_t)n, k, &alpha, V, (int64_t)ld, cx->d_work, 1, &beta, w, 1));
    return PL_OK;
}

static int cu_gemm(pl_backend *be, size_t n, int k, int m, const double *V, size_t ld, const double *h_Y, int ldy,
                   double *W, size_t ldw)
{
    pl_cuda_ctx *cx = pl_cuda_ctx_of(be);
    PL_CHECK(k >= 0 && m >= 0 && ld >= n && ldw >= n && ldy >= k, PL_ERR_ARG,
             "gemm: bad sizes n = %zu k = %d m = %d ld = %zu ldy = %d ldw = %zu", n, k, m, ld, ldy, ldw);
    if (n == 0 || m == 0) return PL_OK;
    if (k == 0) {
        for (int c = 0; c < m; c++) PL_CALL(be->set(be, n, 0.0, W + (size_t)c * ldw));
        return PL_OK;
    }
    size_t ny = (size_t)ldy * (size_t)m;
    PL_CALL(pl_cuda_work_reserve(cx, ny));
    PL_CUDA(cudaMemcpyAsync(cx->d_work, h_Y, ny * sizeof(double), cudaMemcpyHostToDevice, cx->stream));
    be->bytes_h2d += (double)ny * sizeof(double);
    if (!cx->ts_cublas && k <= PL_TS_KMAX && m <= PL_TS_KMAX) {
        PL_CALL(pl_cuda_ts_gemm(cx, n, k, m, V, ld, cx->d_work, ldy, W, ldw));
        return PL_OK;
    }
    const double one = 1.0, zero = 0.0;
    PL_CUBLAS(pl_cublas.Dgemm_64(cx->cublas, CUBLAS_OP_N, CUBLAS_OP_N, (int64_t)n, m, k, &one, V, (int64_t)ld, cx->d_work,
                             ldy, &zero, W, (int64_t)ldw));
    return PL_OK;
}

/* C = V^T W (spmv.h gemm_t): one cuBLAS dgemm into d_work, then the k x m
 * result to the host. */
static int cu_gemm_t(pl_backend *be, size_t n, int k, int m, const double *V, size_t ld, const double *W, size_t ldw,
                     double *h_C)
{
    pl_cuda_ctx *cx = pl_cuda_ctx_of(be);
    PL_CHECK(k >= 0 && m >= 0 && ld >= n && ldw >= n, PL_ERR_ARG,
             "gemm_t: bad sizes n = %zu k = %d m = %d ld = %zu ldw = %zu", n, k, m, ld, ldw);
    const size_t nc = (size_t)k * (size_t)m;
    if (nc == 0) return PL_OK;
    if (n == 0) {
        memset(h_C, 0, nc * sizeof(double));
        return PL_OK;
    }
    if (!cx->ts_cublas && m == 2 && k >= 1 && 2 * k <= PL_TS_KMAX) {
        /* two columns (Lanczos' trigger check): our kernel, one pass over V */
        PL_CALL(pl_cuda_ts_gemv_t2(cx, n, k, V, ld, W, W + ldw));
        return ts_fetch(be, cx, h_C, nc);
    }
    PL_CALL(pl_cuda_work_reserve(cx, nc));
    const double one = 1.0, zero = 0.0;
    PL_CUBLAS(pl_cublas.Dgemm_64(cx->cublas, CUBLAS_OP_T, CUBLAS_OP_N, k, m, (int64_t)n, &one, V, (int64_t)ld, W,
                                 (int64_t)ldw, &zero, cx->d_work, k));
    PL_CUDA(cudaMemcpyAsync(h_C, cx->d_work, nc * sizeof(double), cudaMemcpyDeviceToHost, cx->stream));
    PL_CUDA(cudaStreamSynchronize(cx->stream));
    be->bytes_d2h += (double)nc * sizeof(double);
    return PL_OK;
}

/* Fused Gram-Schmidt pass (spmv.h cgs_step): our kernel when k < PL_TS_KMAX,
 * else (or in cuBLAS mode) gemv_n, gemv_t and dot composed. */
static int cu_cgs_step(pl_backend *be, size_t n, int k, const double *V, size_t ld, double *w, const double *h_in,
                       double *h_out)
{
    pl_cuda_ctx *cx = pl_cuda_ctx_of(be);
    PL_CHECK(k >= 0 && ld >= n, PL_ERR_ARG, "cgs_step: k = %d, ld = %zu < n = %zu", k, ld, n);
    if (n == 0) {
        for (int i = 0; i <= k; i++) h_out[i] = 0.0;
        return PL_OK;
    }
    if (!cx->ts_cublas && k >= 1 && k < PL_TS_KMAX) {
        PL_CALL(pl_cuda_ts_cgs_step(cx, n, k, V, ld, w, h_in));
        be->bytes_h2d += (double)k * sizeof(double); /* h_in, in the launch parameters */
        return ts_fetch(be, cx, h_out, (size_t)(k + 1));
    }
    PL_CALL(cu_gemv_n(be, n, k, -1.0, V, ld, h_in, 1.0, w));
    PL_CALL(cu_gemv_t(be, n, k, V, ld, w, h_out));
    PL_CALL(be->dot(be, n, w, w, h_out + k));
    return PL_OK;
}

/* In-place basis update (spmv.h basis_update): our row-private kernel for
 * k, m <= PL_TS_KMAX; else (or in cuBLAS mode) cuBLAS gemm by row blocks
 * into a temporary and one 2-D copy back per block. */
static int cu_basis_update(pl_backend *be, size_t n, int k, int m, double *V, size_t ld, const double *h_Y, int ldy)
{
    pl_cuda_ctx *cx = pl_cuda_ctx_of(be);
    PL_CHECK(k >= 0 && m >= 0 && m <= k && ld >= n && ldy >= k, PL_ERR_ARG,
             "basis_update: bad sizes n = %zu k = %d m = %d ld = %zu ldy = %d", n, k, m, ld, ldy);
    if (n == 0 || m == 0) return PL_OK;
    size_t ny = (size_t)ldy * (size_t)m;
    PL_CALL(pl_cuda_work_reserve(cx, ny));
    PL_CUDA(cudaMemcpyAsync(cx->d_work, h_Y, ny * sizeof(double), cudaMemcpyHostToDevice, cx->stream));
    be->bytes_h2d += (double)ny * sizeof(double);
    if (!cx->ts_cublas && k <= PL_TS_KMAX) {
        PL_CALL(pl_cuda_ts_basis_update(cx, n, k, m, V, ld, cx->d_work, ldy));
        return PL_OK;
    }
    const size_t blk = n < 65536 ? n : 65536;
    double *tmp = NULL;
    int r = PL_OK;
    const double one = 1.0, zero = 0.0;
    PL_CUDA(cudaMalloc((void **)&tmp, blk * (size_t)m * sizeof(double)));
    for (size_t r0 = 0; r0 < n && r == PL_OK; r0 += blk) {
        const size_t b = n - r0 < blk ? n - r0 : blk;
        cublasStatus_t st = pl_cublas.Dgemm_64(cx->cublas, CUBLAS_OP_N, CUBLAS_OP_N, (int64_t)b, m, k, &one, V + r0,
                                           (int64_t)ld, cx->d_work, ldy, &zero, tmp, (int64_t)b);
        if (st != CUBLAS_STATUS_SUCCESS) {
            r = PL_ERROR(PL_ERR_CUDA, "cublasDgemm_64 (basis update): %s", pl_cublas.GetStatusName(st));
            break;
        }
        cudaError_t ce = cudaMemcpy2DAsync(V + r0, ld * sizeof(double), tmp, b * sizeof(double), b * sizeof(double),
                                           (size_t)m, cudaMemcpyDeviceToDevice, cx->stream);
        if (ce != cudaSuccess) r = PL_ERROR(PL_ERR_CUDA, "cudaMemcpy2DAsync (basis update): %s", cudaGetErrorName(ce));
    }
    cudaError_t ce = cudaStreamSynchronize(cx->stream);
    if (r == PL_OK && ce != cudaSuccess) r = PL_ERROR(PL_ERR_CUDA, "basis update: %s", cudaGetErrorName(ce));
    (void)cudaFree(tmp);
    return r;
}

/* The restart's update and the first Gram-Schmidt pass in one pass (spmv.h
 * restart_step): our kernel where the sizes fit (ts_restart.cu), else the
 * slots it replaces, composed as pl_vec_restart_step composes them. */
static int cu_restart_step(pl_backend *be, size_t n, int off, int sz, int kk, double *V, size_t ld, const double *h_Y,
                           int ldy, const double *h_in, double *h_out)
{
    pl_cuda_ctx *cx = pl_cuda_ctx_of(be);
    PL_CHECK(off >= 0 && kk >= 1 && sz > kk + 1 && ld >= n && ldy >= sz, PL_ERR_ARG,
             "restart_step: bad sizes n = %zu off = %d sz = %d kk = %d ld = %zu ldy = %d", n, off, sz, kk, ld, ldy);
    const int k = off + kk;
    if (cx->ts_cublas || n == 0 || !pl_cuda_ts_restart_fits(off, sz, kk)) {
        PL_CALL(be->basis_update(be, n, sz, kk, V + (size_t)off * ld, ld, h_Y, ldy));
        PL_CALL(be->copy(be, n, V + (size_t)(off + sz) * ld, V + (size_t)k * ld));
        PL_CALL(be->copy(be, n, V + (size_t)(off + sz + 1) * ld, V + (size_t)(k + 1) * ld));
        return be->cgs_step(be, n, k + 1, V, ld, V + (size_t)(k + 1) * ld, h_in, h_out);
    }
    const size_t ny = (size_t)ldy * (size_t)kk;
    PL_CALL(pl_cuda_work_reserve(cx, ny));
    PL_CUDA(cudaMemcpyAsync(cx->d_work, h_Y, ny * sizeof(double), cudaMemcpyHostToDevice, cx->stream));
    be->bytes_h2d += (double)(ny + (size_t)(k + 1)) * sizeof(double);
    PL_CALL(pl_cuda_ts_restart_step(cx, n, off, sz, kk, V, ld, cx->d_work, ldy, h_in));
    return ts_fetch(be, cx, h_out, (size_t)(k + 2));
}

void pl_cuda_dense_slots(pl_backend *be)
{
    be->gemv_t = cu_gemv_t;
    be->gemv_n = cu_gemv_n;
    be->gemm = cu_gemm;
    be->gemm_t = cu_gemm_t;
    be->cgs_step = cu_cgs_step;
    be->restart_step = cu_restart_step;
    be->gram = cu_gram;
    be->sel_gram = cu_sel_gram;
    be->sel_update = cu_sel_update;
    be->lz_step = cu_lz_step;
    be->basis_update = cu_basis_update;
}
