/* backend_cuda.cu — the CUDA backend: the pl_backend table of spmv.h with
 * device vectors, cuBLAS vector operations, the basis slots of
 * backend_cuda_dense.cu, the pJDS SpMV kernel
 * family of pjds_kernels.cu (and, for block-structured matrices, the pJDS-b
 * kernels through block_mode.cu), and the bench entry points of
 * pl_cuda_bench.h (cuda_bench.cu).
 *
 * Everything runs on one non-blocking stream owned by the backend context
 * (no globals).  Operations are asynchronous except those that deliver a
 * result to the host (download, dot, gemv_t), which synchronise the stream.
 * cuBLAS uses the 64-bit-size API (cublas*_64) so vectors may pass 2^31
 * entries.  Every host<->device transfer, small ones included (dot results,
 * h, Y), is counted in bytes_h2d / bytes_d2h.
 *
 * Device selection: pl_backend_cuda_create(device) uses device modulo the
 * number of devices, so callers pass the node-local MPI rank.
 */
#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_impl.h"
extern "C" {
#include "pjds_block.h"
}

/* ---- device count, context ----------------------------------------------- */

extern "C" int pl_cuda_device_count(void)
{
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) {
        (void)cudaGetLastError(); /* clear: no driver or no device is not an error here */
        return 0;
    }
    return n;
}

/* ---- vectors ---------------------------------------------------------------- */

static int cu_vec_alloc(pl_backend *be, size_t n, double **v)
{
    (void)be;
    size_t bytes = 0;
    PL_CHECK(!pl_mul_size(n ? n : 1, sizeof(double), &bytes), PL_ERR_OVERFLOW, "vector of %zu doubles overflows", n);
    *v = NULL;
    cudaError_t e = cudaMalloc((void **)v, bytes);
    if (e == cudaErrorMemoryAllocation) {
        (void)cudaGetLastError();
        return PL_ERROR(PL_ERR_MEM, "out of device memory for a vector of %zu doubles (%.2f GiB)", n,
                        (double)bytes / 1073741824.0);
    }
    PL_CUDA(e);
    return PL_OK;
}

static void cu_vec_free(pl_backend *be, double *v)
{
    (void)be;
    if (v) (void)cudaFree(v);
}

static int cu_upload(pl_backend *be, double *dst, const double *h_src, size_t n)
{
    pl_cuda_ctx *cx = pl_cuda_ctx_of(be);
    if (n == 0) return PL_OK;
    PL_CUDA(cudaMemcpyAsync(dst, h_src, n * sizeof(double), cudaMemcpyHostToDevice, cx->stream));
    PL_CUDA(cudaStreamSynchronize(cx->stream));
    be->bytes_h2d += (double)n * sizeof(double);
    return PL_OK;
}

static int cu_download(pl_backend *be, double *h_dst, const double *src, size_t n)
{
    pl_cuda_ctx *cx = pl_cuda_ctx_of(be);
    if (n == 0) return PL_OK;
    PL_CUDA(cudaMemcpyAsync(h_dst, src, n * sizeof(double), cudaMemcpyDeviceToHost, cx->stream));
    PL_CUDA(cudaStreamSynchronize(cx->stream));
    be->bytes_d2h += (double)n * sizeof(double);
    return PL_OK;
}

static int cu_copy(pl_backend *be, size_t n, const double *x, double *y)
{
    pl_cuda_ctx *cx = pl_cuda_ctx_of(be);
    if (n == 0 || x == y) return PL_OK;
    PL_CUDA(cudaMemcpyAsync(y, x, n * sizeof(double), cudaMemcpyDeviceToDevice, cx->stream));
    return PL_OK;
}

static int cu_set(pl_backend *be, size_t n, double a, double *x)
{
    pl_cuda_ctx *cx = pl_cuda_ctx_of(be);
    if (n == 0) return PL_OK;
    if (a == 0.0 && !signbit(a)) {
        PL_CUDA(cudaMemsetAsync(x, 0, n * sizeof(double), cx->stream));
        return PL_OK;
    }
    PL_CALL(pl_cuda_fill(cx, n, a, x));
    return PL_OK;
}

static int cu_scal(pl_backend *be, size_t n, double a, double *x)
{
    pl_cuda_ctx *cx = pl_cuda_ctx_of(be);
    if (n == 0) return PL_OK;
    PL_CUBLAS(pl_cublas.Dscal_64(cx->cublas, (int64_t)n, &a, x, 1));
    return PL_OK;
}

static int cu_axpy(pl_backend *be, size_t n, double a, const double *x, double *y)
{
    pl_cuda_ctx *cx = pl_cuda_ctx_of(be);
    if (n == 0) return PL_OK;
    PL_CUBLAS(pl_cublas.Daxpy_64(cx->cublas, (int64_t)n, &a, x, 1, y, 1));
    return PL_OK;
}

static int cu_dot(pl_backend *be, size_t n, const double *x, const double *y, double *h_r)
{
    pl_cuda_ctx *cx = pl_cuda_ctx_of(be);
    *h_r = 0.0;
    if (n == 0) return PL_OK;
    /* host pointer mode: cuBLAS waits for the result */
    PL_CUBLAS(pl_cublas.Ddot_64(cx->cublas, (int64_t)n, x, 1, y, 1, h_r));
    be->bytes_d2h += sizeof(double);
    return PL_OK;
}

/* ---- matrices --------------------------------------------------------------- */

/* (cuda_impl.h) */
extern "C" int pl_cuda_upload_array(pl_cuda_ctx *cx, void **d, const void *h, size_t bytes, size_t *total)
{
    *d = NULL;
    size_t b = bytes ? bytes : 8;
    cudaError_t e = cudaMalloc(d, b);
    if (e == cudaErrorMemoryAllocation) {
        (void)cudaGetLastError();
        return PL_ERROR(PL_ERR_MEM, "out of device memory for a matrix array of %.2f GiB", (double)b / 1073741824.0);
    }
    PL_CUDA(e);
    *total += b;
    if (bytes && h) PL_CUDA(cudaMemcpyAsync(*d, h, bytes, cudaMemcpyHostToDevice, cx->stream));
    return PL_OK;
}

static size_t cu_cmat_bytes(pl_backend *be, const void *mat)
{
    (void)be;
    return mat ? ((const pl_cuda_mat *)mat)->bytes : 0;
}

static void cu_mat_destroy(pl_backend *be, void *mat)
{
    (void)be;
    pl_cuda_mat *m = (pl_cuda_mat *)mat;
    if (!m) return;
    pl_cuda_pjds_block_free(be, &m->blk);
    (void)cudaFree(m->d_chunk_start);
    (void)cudaFree(m->d_chunk_width);
    (void)cudaFree(m->d_row_len);
    (void)cudaFree(m->d_col);
    (void)cudaFree(m->d_val);
    (void)cudaFree(m->d_ent);
    (void)cudaFree(m->d_ent16);
    (void)cudaFree(m->d_ent8);
    (void)cudaFree(m->d_len8);
    (void)cudaFree(m->d_vtab);
    (void)cudaFree(m->d_otab);
    if (m->d_row_map) (void)cudaFree(m->d_row_map);
    free(m);
}

/* Everything of p but the entries: chunk offsets and widths, row lengths,
 * row_map. */
static int upload_layout(pl_cuda_ctx *cx, const pjds *p, pl_cuda_mat *m, size_t *tot)
{
    const size_t nch = (size_t)p->nchunks, C = (size_t)p->C;
    PL_CALL(pl_cuda_upload_array(cx, (void **)&m->d_chunk_start, p->chunk_start, (nch + 1) * sizeof(int64_t), tot));
    PL_CALL(pl_cuda_upload_array(cx, (void **)&m->d_chunk_width, p->chunk_width, nch * sizeof(int32_t), tot));
    PL_CALL(pl_cuda_upload_array(cx, (void **)&m->d_row_len, p->row_len, nch * C * sizeof(int32_t), tot));
    if (p->row_map)
        PL_CALL(pl_cuda_upload_array(cx, (void **)&m->d_row_map, p->row_map, (size_t)p->nrows * sizeof(int32_t), tot));
    return PL_OK;
}

/* Staging of the pJDS entries (staging.cu): two page-locked sets of this
 * many entries (12 B each: 24 MiB per set), filled on the host in turn
 * while the other one is copied to the device. */
#define PL_FILL_STAGE_ENTRIES (INT64_C(2) << 20)

typedef struct pjds_src {
    const pjds *p;
    pl_pjds_fill_fn fill; /* NULL: copy from p->col, p->val */
    void *arg;
} pjds_src;

/* planes: col (int32), val (double) of chunks [c0, c1) */
static int pjds_stage_fill(void *arg, int64_t c0, int64_t c1, void *const *pl)
{
    const pjds_src *s = (const pjds_src *)arg;
    if (s->fill) return s->fill(s->arg, c0, c1, (int32_t *)pl[0], (double *)pl[1]);
    const int64_t off = s->p->chunk_start[c0], cnt = s->p->chunk_start[c1] - off;
    memcpy(pl[0], s->p->col + off, (size_t)cnt * sizeof(int32_t));
    memcpy(pl[1], s->p->val + off, (size_t)cnt * sizeof(double));
    return PL_OK;
}

/* The layout, then the entries through the staging buffers: written by fill
 * (mat_create_fill: the host never holds them whole) or copied from the
 * host arrays (mat_create). */
static int mat_upload(pl_backend *be, const pjds *p, pl_pjds_fill_fn fill, void *arg, pl_cuda_mat *m)
{
    pl_cuda_ctx *cx = pl_cuda_ctx_of(be);
    size_t tot = 0;
    const size_t nent = (size_t)p->nent;
    PL_CHECK(fill || nent == 0 || (p->col && p->val), PL_ERR_ARG, "mat_create: the pJDS matrix has no entries");
    PL_CALL(upload_layout(cx, p, m, &tot));
    PL_CALL(pl_cuda_upload_array(cx, (void **)&m->d_col, NULL, nent * sizeof(int32_t), &tot)); /* allocation only */
    PL_CALL(pl_cuda_upload_array(cx, (void **)&m->d_val, NULL, nent * sizeof(double), &tot));
    int64_t stage = PL_FILL_STAGE_ENTRIES;
    if (be->tune.fill_stage_entries > 0) stage = be->tune.fill_stage_entries; /* tests: several ranges */
    pjds_src src = {p, fill, arg};
    const size_t esize[2] = {sizeof(int32_t), sizeof(double)};
    void *const dst[2] = {m->d_col, m->d_val};
    PL_CALL(pl_cuda_staged_upload(cx, p->chunk_start, p->nchunks, stage, 2, esize, dst, pjds_stage_fill, &src));
    m->bytes = tot;
    be->bytes_h2d += (double)tot;
    return PL_OK;
}

/* Block mode: when every row of the (local) matrix stores its entries in
 * runs of b consecutive columns (dense b x b blocks, which the stable
 * length sort keeps together), be->spmv runs the pJDS-b kernel on a view
 * that shares the values and reads one column per run: 8 + 4/b bytes per
 * entry instead of 12 (1.37x cuSPARSE CSR on uhbr_like, H100).  b is tried
 * from 8 down over the divisors of the gcd of the row lengths; the remote
 * part of a split matrix (row_map) stays pJDS.  PJDS_CUDA_BLOCKED=0 turns
 * it off (comparisons). */
static int64_t gcd64(int64_t a, int64_t b)
{
    while (b) {
        int64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* The device values of a matrix; the block-mode view borrows the same
 * array, so writing them changes both. */
static int cu_mat_values(pl_backend *be, void *mat, double **val, size_t *n)
{
    (void)be;
    pl_cuda_mat *m = (pl_cuda_mat *)mat;
    if (m->compressed) return PL_ERR_NOTSUP; /* compressed: the values are a table */
    *val = m->d_val;
    *n = (size_t)m->nent;
    return PL_OK;
}

static int block_mode(pl_backend *be, const pjds *p, pl_cuda_mat *m)
{
    if (pl_cuda_ctx_of(be)->block_off || p->row_map || p->nrows == 0) return PL_OK;
    int64_t g = 0;
    for (int64_t r = 0; r < (int64_t)p->nchunks * p->C && g != 1; r++) g = gcd64(g, p->row_len[r]);
    for (int b = PJDS_BLOCK_MAX_B; b >= 2 && g > 1; b--) {
        if (g % b || p->ncols < b) continue;
        pl_cuda_pjds_block *v = NULL;
        PL_CALL(pl_cuda_pjds_block_view(be, p, m->d_chunk_start, m->d_row_len, m->d_col, m->d_val, b, &v));
        if (!v) continue;
        m->blk = v;
        m->blk_b = b;
        m->bytes += pl_cuda_pjds_block_bytes(v);
        pl_info("cuda: pJDS-b (b = %d): the %lld rows store their entries in runs of %d columns; SpMV reads one "
                "column index per run (%.2f instead of 12 bytes per entry)",
                b, (long long)p->nrows, b, 8.0 + 4.0 / b);
        break;
    }
    return PL_OK;
}

/* The device matrix of p: whole host arrays (fill NULL) or filled chunk
 * range by chunk range through fill (mat_create_fill). */
static int mat_make(pl_backend *be, const pjds *p, pl_pjds_fill_fn fill, void *arg, void **mat)
{
    *mat = NULL;
    PL_CHECK(p->nrows >= 0 && p->C >= 1 && p->nchunks == (p->nrows + p->C - 1) / p->C, PL_ERR_ARG,
             "inconsistent pJDS: nrows %d, C %d, nchunks %d", p->nrows, p->C, p->nchunks);
    PL_CHECK(p->chunk_start[p->nchunks] == p->nent, PL_ERR_ARG, "inconsistent pJDS: chunk_start[nchunks] != nent");
    /* the kernel advances pointers by C per entry: the offset j*C + lane must fit int64 (it does), and
     * chunk width * C must fit the entry count, checked by pjds_create */
    pl_cuda_mat *m = (pl_cuda_mat *)calloc(1, sizeof *m);
    PL_CHECK(m, PL_ERR_MEM, "out of host memory");
    m->nrows = p->nrows;
    m->ncols = p->ncols;
    m->C = p->C;
    m->nchunks = p->nchunks;
    m->nnz = p->nnz;
    m->nent = p->nent;
    int e = mat_upload(be, p, fill, arg, m);
    if (e != PL_OK) {
        cu_mat_destroy(be, m);
        return pl_error_trace(e, __FILE__, __LINE__, __func__, "mat_upload");
    }
    e = block_mode(be, p, m);
    if (e != PL_OK) {
        cu_mat_destroy(be, m);
        return pl_error_trace(e, __FILE__, __LINE__, __func__, "block_mode");
    }
    *mat = m;
    return PL_OK;
}

static int cu_mat_create(pl_backend *be, const pjds *p, void **mat) { return mat_make(be, p, NULL, NULL, mat); }

static int cu_mat_create_fill(pl_backend *be, const pjds *p, pl_pjds_fill_fn fill, void *arg, void **mat)
{
    PL_CHECK(fill, PL_ERR_ARG, "mat_create_fill: no fill function");
    return mat_make(be, p, fill, arg, mat);
}

static int cu_spmv(pl_backend *be, const void *mat, const double *x, double *y)
{
    pl_cuda_ctx *cx = pl_cuda_ctx_of(be);
    const pl_cuda_mat *m = (const pl_cuda_mat *)mat;
    if (m->compressed) return pl_cuda_cpjds_spmv(cx, m, cx->cvariant_bench >= 0 ? cx->cvariant_bench : m->cvariant, x, y);
    if (m->blk) return pl_cuda_pjds_block_spmv(be, m->blk, cx->blk_variant, x, y);
    PL_CALL(pl_cuda_spmv_launch(cx, m, cx->variant, x, y));
    return PL_OK;
}

static int cu_spmm(pl_backend *be, const void *mat, int R, const double *X, double *Y)
{
    const pl_cuda_mat *m = (const pl_cuda_mat *)mat;
    if (m->compressed) return pl_cuda_cpjds_spmm(pl_cuda_ctx_of(be), m, R, X, Y);
    return pl_cuda_spmm(pl_cuda_ctx_of(be), m, R, X, Y);
}

static int cu_gather_block(pl_backend *be, size_t n, int R, const int32_t *idx, const double *X, double *buf)
{
    return pl_cuda_gather_block(pl_cuda_ctx_of(be), n, R, idx, X, buf);
}

static int cu_bdot(pl_backend *be, size_t n, int R, const double *X, const double *Y, double *h)
{
    return pl_cuda_bdot(pl_cuda_ctx_of(be), n, R, X, Y, h);
}

/* PL_ERR_NOTSUP (no message) when the fused kernel does not cover R or the
 * layout: pl_op_apply_block_aug then composes the step */
static int cu_spmm_aug(pl_backend *be, const void *mat, int R, double alpha, double gamma, double beta,
                       const double *X, double *Y, double *h_dots)
{
    int done = 0;
    if (((const pl_cuda_mat *)mat)->compressed) return PL_ERR_NOTSUP; /* compressed: composed */
    PL_CALL(pl_cuda_spmm_aug(pl_cuda_ctx_of(be), (const pl_cuda_mat *)mat, R, alpha, gamma, beta, X, Y, h_dots, &done));
    return done ? PL_OK : PL_ERR_NOTSUP;
}

/* PL_ERR_NOTSUP (no message) as cu_spmm_aug */
static int cu_spmm_cheb(pl_backend *be, const void *mat, int R, double alpha, double gamma, double beta,
                        const double *X, double *Y, double c1, double c2, double *Acc)
{
    int done = 0;
    if (((const pl_cuda_mat *)mat)->compressed) return PL_ERR_NOTSUP;
    PL_CALL(pl_cuda_spmm_cheb(pl_cuda_ctx_of(be), (const pl_cuda_mat *)mat, R, alpha, gamma, beta, X, Y, c1, c2, Acc,
                              &done));
    return done ? PL_OK : PL_ERR_NOTSUP;
}

static int cu_idx_create(pl_backend *be, const int32_t *h_idx, size_t n, int32_t **idx)
{
    pl_cuda_ctx *cx = pl_cuda_ctx_of(be);
    size_t tot = 0;
    *idx = NULL;
    PL_CALL(pl_cuda_upload_array(cx, (void **)idx, h_idx, n * sizeof(int32_t), &tot));
    PL_CUDA(cudaStreamSynchronize(cx->stream));
    be->bytes_h2d += (double)(n * sizeof(int32_t));
    return PL_OK;
}

static void cu_idx_destroy(pl_backend *be, int32_t *idx)
{
    (void)be;
    if (idx) (void)cudaFree(idx);
}

static int cu_gather(pl_backend *be, size_t n, const int32_t *idx, const double *x, double *buf)
{
    PL_CALL(pl_cuda_gather(pl_cuda_ctx_of(be), n, idx, x, buf));
    return PL_OK;
}

static int cu_sync(pl_backend *be)
{
    PL_CUDA(cudaStreamSynchronize(pl_cuda_ctx_of(be)->stream));
    return PL_OK;
}

static int cu_mem_info(pl_backend *be, int *device, size_t *free_bytes, size_t *total_bytes)
{
    pl_cuda_ctx *cx = pl_cuda_ctx_of(be);
    PL_CUDA(cudaSetDevice(cx->device));
    PL_CUDA(cudaMemGetInfo(free_bytes, total_bytes));
    *device = cx->device;
    return PL_OK;
}

/* page-locked host staging (halos): full-speed, truly asynchronous copies */
static int cu_host_alloc(pl_backend *be, size_t n, double **h)
{
    (void)be;
    size_t bytes = 0;
    PL_CHECK(!pl_mul_size(n ? n : 1, sizeof(double), &bytes), PL_ERR_OVERFLOW, "host buffer of %zu doubles overflows", n);
    *h = NULL;
    PL_CUDA(cudaMallocHost((void **)h, bytes));
    return PL_OK;
}

static void cu_host_free(pl_backend *be, double *h)
{
    (void)be;
    if (h) (void)cudaFreeHost(h);
}

static void cu_destroy(pl_backend **pbe)
{
    if (!pbe || !*pbe) return;
    pl_backend *be = *pbe;
    pl_cuda_ctx *cx = pl_cuda_ctx_of(be);
    if (cx) {
        if (cx->stream) (void)cudaStreamSynchronize(cx->stream);
        if (cx->d_work) (void)cudaFree(cx->d_work);
        pl_cuda_ts_free(cx);
        if (cx->cublas) (void)pl_cublas.Destroy(cx->cublas); /* made only after the load */
        if (cx->ev0) (void)cudaEventDestroy(cx->ev0);
        if (cx->ev1) (void)cudaEventDestroy(cx->ev1);
        if (cx->stream) (void)cudaStreamDestroy(cx->stream);
        free(cx);
    }
    free(be);
    *pbe = NULL;
}

/* tune.cuda_variant (PJDS_CUDA_VARIANT): a variant name or number; else
 * the default. */
static int variant_from_tuning(const char *s)
{
    int nv = pl_cuda_nvariants_impl();
    if (!s || !*s) return pl_cuda_spmv_variant_default();
    for (int v = 0; v < nv; v++)
        if (!strcmp(s, pl_cuda_variant_get(v)->name)) return v;
    char *end = NULL;
    long v = strtol(s, &end, 10);
    if (end && *end == 0 && v >= 0 && v < nv) return (int)v;
    pl_warn("PJDS_CUDA_VARIANT=%s is not a kernel variant; using %s", s,
            pl_cuda_variant_get(pl_cuda_spmv_variant_default())->name);
    return pl_cuda_spmv_variant_default();
}

/* The kernels of a solve loaded while the backend is made (beside the
 * matrix's generation), not at their first launch inside the solve: lazy
 * loading, CUDA's default since 12.2, loads a kernel at its first launch,
 * and HMEp's default solve took 0.139 s instead of 0.131 s with every
 * module loaded at start-up (CUDA_MODULE_LOADING=EAGER, one H200,
 * docs/performance.md).  cuBLAS's level-1 kernels (scal, axpy, dot) by one
 * call each on cx->d_ts_h. */
static int preload(pl_cuda_ctx *cx)
{
    const double t0 = pl_wtime();
    PL_CALL(pl_cuda_ts_preload());
    PL_CALL(pl_cuda_ts_restart_preload());
    PL_CALL(pl_cuda_ts_lanczos_preload());
    PL_CALL(pl_cuda_rand_preload());
    PL_CALL(pl_cuda_pjds_preload(cx->variant));
    const double one = 1.0;
    double r = 0.0;
    PL_CUDA(cudaMemsetAsync(cx->d_ts_h, 0, 2 * sizeof(double), cx->stream));
    PL_CUBLAS(pl_cublas.Dscal_64(cx->cublas, 1, &one, cx->d_ts_h, 1));
    PL_CUBLAS(pl_cublas.Daxpy_64(cx->cublas, 1, &one, cx->d_ts_h, 1, cx->d_ts_h + 1, 1));
    PL_CUBLAS(pl_cublas.Ddot_64(cx->cublas, 1, cx->d_ts_h, 1, cx->d_ts_h + 1, 1, &r)); /* waits */
    pl_debug("cuda: the solve's kernels loaded in %.1f ms", 1e3 * (pl_wtime() - t0));
    return PL_OK;
}

static int ctx_init(pl_cuda_ctx *cx, int device, const pl_spmv_tuning *tu)
{
    cx->device = device;
    PL_CUDA(cudaSetDevice(device));
    PL_CUDA(cudaStreamCreateWithFlags(&cx->stream, cudaStreamNonBlocking));
    PL_CALL(pl_cublas_load()); /* cublas_load.h: opened, not linked */
    PL_CUBLAS(pl_cublas.Create(&cx->cublas));
    PL_CUBLAS(pl_cublas.SetStream(cx->cublas, cx->stream));
    PL_CUBLAS(pl_cublas.SetPointerMode(cx->cublas, CUBLAS_POINTER_MODE_HOST));
    PL_CUDA(cudaEventCreate(&cx->ev0));
    PL_CUDA(cudaEventCreate(&cx->ev1));
    cx->variant = variant_from_tuning(tu->cuda_variant);
    cx->cvariant_upload = pl_cuda_cpjds_variant_by_name(tu->cpjds_variant); /* -1: each upload by its layout */
    cx->cvariant_bench = -1;
    cx->cvariant_last = 0;
    /* pJDS-b kernel of block mode: 2 runs in flight, L2 evict-first (the bench's best on uhbr/dlr1-like) */
    const int bv = pl_cuda_pjds_block_variant_by_name("u2-ef");
    cx->blk_variant = bv >= 0 ? bv : 0;
    PL_CALL(pl_cuda_ts_init(cx));
    cx->ts_cublas = tu->cuda_ts_cublas; /* dense tall-skinny products through cuBLAS (A/B runs) */
    if (!tu->cuda_no_preload) PL_CALL(preload(cx));
    return PL_OK;
}

extern "C" int pl_backend_cuda_create(int device, pl_backend **pbe)
{
    *pbe = NULL;
    int n = pl_cuda_device_count();
    PL_CHECK(n > 0, PL_ERR_INPUT,
             "backend = cuda, but no CUDA device is available (no GPU or no driver): use backend = cpu or auto");
    pl_cublas_prefetch(); /* cuBLAS loads beside the context creation (cublas_load.h) */
    PL_CHECK(device >= 0, PL_ERR_ARG, "device %d < 0", device);
    pl_backend *be = (pl_backend *)calloc(1, sizeof *be);
    pl_cuda_ctx *cx = (pl_cuda_ctx *)calloc(1, sizeof *cx);
    if (!be || !cx) {
        free(be);
        free(cx);
        return PL_ERROR(PL_ERR_MEM, "out of host memory");
    }
    be->name = "cuda";
    be->ctx = cx;
    be->host_memory = 0;
    be->sort_window_auto = PL_SORT_WINDOW_AUTO_CUDA;
    be->compressed_auto = 1;
    be->halo = &pl_cuda_halo_ops;
    pl_spmv_tuning_from_env(&be->tune);
    be->vec_alloc = cu_vec_alloc;
    be->vec_free = cu_vec_free;
    be->upload = cu_upload;
    be->download = cu_download;
    be->copy = cu_copy;
    be->set = cu_set;
    be->scal = cu_scal;
    be->axpy = cu_axpy;
    be->dot = cu_dot;
    pl_cuda_dense_slots(be); /* backend_cuda_dense.cu */
    be->mat_create = cu_mat_create;
    be->cmat_create = pl_cuda_cmat_create;
    be->cmat_create_fill = pl_cuda_cmat_create_fill;
    be->cmat_bytes = cu_cmat_bytes;
    be->mat_create_fill = cu_mat_create_fill;
    be->mat_values = cu_mat_values;
    be->mat_destroy = cu_mat_destroy;
    be->spmv = cu_spmv;
    be->idx_create = cu_idx_create;
    be->idx_destroy = cu_idx_destroy;
    be->gather = cu_gather;
    be->rand_fill = pl_cuda_rand_fill;
    be->rand_block = pl_cuda_rand_block;
    be->sync = cu_sync;
    be->destroy = cu_destroy;
    be->mem_info = cu_mem_info;
    be->host_alloc = cu_host_alloc;
    be->host_free = cu_host_free;
    be->spmm = cu_spmm;
    be->gather_block = cu_gather_block;
    be->bdot = cu_bdot;
    be->spmm_aug = cu_spmm_aug;
    be->spmm_cheb = cu_spmm_cheb;
    be->kron_create = pl_cuda_kron_create; /* kron.cu: the matrix-free operator */
    be->kron_apply = pl_cuda_kron_apply;
    be->kron_destroy = pl_cuda_kron_destroy;
    be->kron_spmm = pl_cuda_kron_spmm; /* kron_block.cu */
    be->kron_spmm_aug = pl_cuda_kron_spmm_aug;
    be->kron_block_width = 0; /* ChebFD's composed step in blocks of 2: 3.6x slower than of 32 (op_block.c) */
    be->kron_lz = pl_cuda_kron_lz;
    be->kron_rem_create = pl_cuda_kron_rem_create; /* kron_remote.cu: several ranks */
    be->kron_rem_apply = pl_cuda_kron_rem_apply;
    be->kron_rem_spmm = pl_cuda_kron_rem_spmm;
    be->kron_rem_destroy = pl_cuda_kron_rem_destroy;
    int e = ctx_init(cx, device % n, &be->tune);
    if (e != PL_OK) {
        cu_destroy(&be);
        return pl_error_trace(e, __FILE__, __LINE__, __func__, "ctx_init");
    }
    *pbe = be;
    return PL_OK;
}
