/* pjds_block_kernels.cu — SpMV of blocked pJDS (pJDS-b, spmv/pjds_block.h)
 * on the GPU: upload, kernel variants, launch.
 *
 * Method: one thread per (permuted) row r; chunk c = r / C, lane = r % C.
 * Per run j the thread loads the run's start column (the C lanes of a chunk
 * read C consecutive int32: coalesced), then b consecutive x entries
 * (x[start .. start + b - 1]; rows of one block row read the same ones, so
 * the warp's gathers mostly hit the same sectors) and the b values of the
 * run (for each k the C lanes read C consecutive doubles: coalesced).  The
 * kernel is templated on b (1..8), so the k loop unrolls, and on U, the runs
 * whose loads are issued together (1, 2, 4: U b values and U run starts in
 * flight per thread before the x gathers).  One accumulator, j then k
 * ascending: the sum is rounded in the CPU kernel's order (up to FMA).
 * Matrix loads either ld.global.nc (__ldg) or with an L2 evict_first policy
 * (createpolicy, sm_80+), so that the matrix stream does not evict x from
 * L2.  Loop bound: the row's run count (padding runs are not read).
 * Traffic per true entry: 8 + 4 / b bytes (plus fill), against 12 for pJDS.
 */
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_impl.h"

extern "C" {
#include "pjds_block.h"
}

struct pl_cuda_pjds_block {
    int32_t nrows, C, b, nchunks;
    int64_t nruns;
    int64_t *d_run_off;   /* nchunks + 1 */
    int32_t *d_row_runs;  /* nchunks * C */
    int32_t *d_rcol;      /* nruns       */
    double *d_val;        /* nruns * b   */
    size_t bytes;
    int borrowed_val;     /* d_val belongs to a pJDS matrix (pl_cuda_pjds_block_view) */
};

typedef struct pl_bkargs {
    int64_t nrows;
    int32_t C;
    const int64_t *__restrict__ run_off;
    const int32_t *__restrict__ row_runs;
    const int32_t *__restrict__ rcol;
    const double *__restrict__ val;
    const double *__restrict__ x;
    double *__restrict__ y;
} pl_bkargs;

enum { BHINT_NC = 0, BHINT_EF = 1 };

static __device__ __forceinline__ uint64_t bk_policy_evict_first(void)
{
    uint64_t p = 0;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(p));
#endif
    return p;
}

static __device__ __forceinline__ double bk_ld_val(const double *p, int hint, uint64_t pol)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    if (hint == BHINT_EF) {
        double r;
        asm("ld.global.nc.L2::cache_hint.f64 %0, [%1], %2;" : "=d"(r) : "l"(p), "l"(pol));
        return r;
    }
#endif
    (void)hint;
    (void)pol;
    return __ldg(p);
}

static __device__ __forceinline__ int32_t bk_ld_col(const int32_t *p, int hint, uint64_t pol)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    if (hint == BHINT_EF) {
        int32_t r;
        asm("ld.global.nc.L2::cache_hint.s32 %0, [%1], %2;" : "=r"(r) : "l"(p), "l"(pol));
        return r;
    }
#endif
    (void)hint;
    (void)pol;
    return __ldg(p);
}

/* one thread per row */
template <int B, int U, int HINT>
__global__ void __launch_bounds__(256) k_pjds_block(const pl_bkargs a)
{
    const int64_t r = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= a.nrows) return;
    const int64_t C = a.C;
    const int64_t c = r / C;
    const int64_t lane = r - c * C;
    const int len = a.row_runs[r];
    const int64_t ro = a.run_off[c];
    const int32_t *cp = a.rcol + ro + lane;
    const double *vp = a.val + ro * B + lane;
    const uint64_t pol = HINT == BHINT_EF ? bk_policy_evict_first() : 0;
    double s = 0.0;
    int j = 0;
    if (U >= 2) {
        for (; j + U <= len; j += U) {
            int32_t st[U];
            double v[U][B];
#pragma unroll
            for (int u = 0; u < U; u++) {
                st[u] = bk_ld_col(cp + u * C, HINT, pol);
#pragma unroll
                for (int k = 0; k < B; k++) v[u][k] = bk_ld_val(vp + (u * B + k) * C, HINT, pol);
            }
#pragma unroll
            for (int u = 0; u < U; u++) {
                const double *xs = a.x + st[u];
#pragma unroll
                for (int k = 0; k < B; k++) s += v[u][k] * __ldg(xs + k);
            }
            cp += U * C;
            vp += U * B * C;
        }
    }
    for (; j < len; j++) {
        const int32_t st = bk_ld_col(cp, HINT, pol);
        double v[B];
#pragma unroll
        for (int k = 0; k < B; k++) v[k] = bk_ld_val(vp + k * C, HINT, pol);
        const double *xs = a.x + st;
#pragma unroll
        for (int k = 0; k < B; k++) s += v[k] * __ldg(xs + k);
        cp += C;
        vp += B * C;
    }
    a.y[r] = s;
}

typedef void (*pl_bk_kernel)(const pl_bkargs);

typedef struct bk_variant {
    const char *name;
    int unroll, hint;
} bk_variant;

static const bk_variant bk_variants[] = {
    {"u1-nc", 1, BHINT_NC}, {"u2-nc", 2, BHINT_NC}, {"u4-nc", 4, BHINT_NC},
    {"u1-ef", 1, BHINT_EF}, {"u2-ef", 2, BHINT_EF}, {"u4-ef", 4, BHINT_EF},
};
#define BK_NVARIANTS (int)(sizeof bk_variants / sizeof bk_variants[0])
#define BK_BLOCK 256

template <int B>
static pl_bk_kernel bk_pick(int unroll, int hint)
{
    if (hint == BHINT_EF) {
        if (unroll == 1) return k_pjds_block<B, 1, BHINT_EF>;
        if (unroll == 2) return k_pjds_block<B, 2, BHINT_EF>;
        return k_pjds_block<B, 4, BHINT_EF>;
    }
    if (unroll == 1) return k_pjds_block<B, 1, BHINT_NC>;
    if (unroll == 2) return k_pjds_block<B, 2, BHINT_NC>;
    return k_pjds_block<B, 4, BHINT_NC>;
}

static pl_bk_kernel bk_kernel(int b, int unroll, int hint)
{
    switch (b) {
    case 1: return bk_pick<1>(unroll, hint);
    case 2: return bk_pick<2>(unroll, hint);
    case 3: return bk_pick<3>(unroll, hint);
    case 4: return bk_pick<4>(unroll, hint);
    case 5: return bk_pick<5>(unroll, hint);
    case 6: return bk_pick<6>(unroll, hint);
    case 7: return bk_pick<7>(unroll, hint);
    case 8: return bk_pick<8>(unroll, hint);
    default: return NULL;
    }
}

static int bk_check_backend(pl_backend *be)
{
    PL_CHECK(be && be->name && be->ctx && !strcmp(be->name, "cuda"), PL_ERR_ARG,
             "pJDS-b on the GPU needs the cuda backend (pl_backend_cuda_create)");
    return PL_OK;
}

extern "C" int pl_cuda_pjds_block_nvariants(void) { return BK_NVARIANTS; }

extern "C" const char *pl_cuda_pjds_block_variant_name(int v)
{
    if (v < 0 || v >= BK_NVARIANTS) return NULL;
    return bk_variants[v].name;
}

extern "C" void pl_cuda_pjds_block_free(pl_backend *be, pl_cuda_pjds_block **d)
{
    (void)be;
    if (!d || !*d) return;
    pl_cuda_pjds_block *m = *d;
    cudaFree(m->d_run_off);
    cudaFree(m->d_row_runs);
    cudaFree(m->d_rcol);
    if (!m->borrowed_val) cudaFree(m->d_val);
    free(m);
    *d = NULL;
}

extern "C" int pl_cuda_pjds_block_upload(pl_backend *be, const pjds_block *h, pl_cuda_pjds_block **d)
{
    PL_CALL(bk_check_backend(be));
    PL_CHECK(h && d, PL_ERR_ARG, "pl_cuda_pjds_block_upload: NULL argument");
    PL_CHECK(h->b >= 1 && h->b <= PJDS_BLOCK_MAX_B && h->C >= 1, PL_ERR_ARG,
             "pl_cuda_pjds_block_upload: run length b = %d or chunk height C = %d out of range", h->b, h->C);
    *d = NULL;
    pl_cuda_ctx *cx = pl_cuda_ctx_of(be);
    PL_CUDA(cudaSetDevice(cx->device));
    pl_cuda_pjds_block *m = (pl_cuda_pjds_block *)calloc(1, sizeof *m);
    PL_CHECK(m, PL_ERR_MEM, "out of host memory");
    m->nrows = h->nrows;
    m->C = h->C;
    m->b = h->b;
    m->nchunks = h->nchunks;
    m->nruns = h->nruns;
    const size_t nslots = (size_t)h->nchunks * (size_t)h->C;
    const size_t b_off = (size_t)(h->nchunks + 1) * sizeof(int64_t), b_rr = (nslots ? nslots : 1) * sizeof(int32_t);
    size_t b_rc = 0, b_v = 0;
    int rc = PL_OK;
    PL_CHECK_GOTO(!pl_mul_size((size_t)h->nruns, sizeof(int32_t), &b_rc) &&
                      !pl_mul_size((size_t)h->nruns * (size_t)h->b, sizeof(double), &b_v),
                  PL_ERR_OVERFLOW, fail, rc, "pl_cuda_pjds_block_upload: %lld runs overflow size_t",
                  (long long)h->nruns);
    m->bytes = b_off + b_rr + b_rc + b_v;
    PL_CALL_GOTO(pl_backend_mem_check(be, (double)m->bytes), fail, rc);
    PL_CUDA_GOTO(cudaMalloc((void **)&m->d_run_off, b_off), fail, rc);
    PL_CUDA_GOTO(cudaMalloc((void **)&m->d_row_runs, b_rr), fail, rc);
    PL_CUDA_GOTO(cudaMalloc((void **)&m->d_rcol, b_rc ? b_rc : 4), fail, rc);
    PL_CUDA_GOTO(cudaMalloc((void **)&m->d_val, b_v ? b_v : 8), fail, rc);
    PL_CUDA_GOTO(cudaMemcpy(m->d_run_off, h->run_off, b_off, cudaMemcpyHostToDevice), fail, rc);
    if (nslots) PL_CUDA_GOTO(cudaMemcpy(m->d_row_runs, h->row_runs, b_rr, cudaMemcpyHostToDevice), fail, rc);
    if (b_rc) PL_CUDA_GOTO(cudaMemcpy(m->d_rcol, h->rcol, b_rc, cudaMemcpyHostToDevice), fail, rc);
    if (b_v) PL_CUDA_GOTO(cudaMemcpy(m->d_val, h->val, b_v, cudaMemcpyHostToDevice), fail, rc);
    /* a cudaMemcpy from pageable memory may return before its DMA (queued
     * on the legacy default stream) lands, and the kernels run on the
     * non-blocking cx->stream, which does not wait for that stream: without
     * this, gpu_pjds_block read half-copied arrays under load (2 of 3 runs
     * of ctest -L gpu -j2 on the H100 host, 2026-11-25) */
    PL_CUDA_GOTO(cudaDeviceSynchronize(), fail, rc);
    be->bytes_h2d += (double)m->bytes;
    *d = m;
    return PL_OK;
fail:
    pl_cuda_pjds_block_free(be, &m);
    return rc;
}

extern "C" int pl_cuda_pjds_block_spmv(pl_backend *be, const pl_cuda_pjds_block *d, int variant, const double *d_x,
                                       double *d_y)
{
    PL_CALL(bk_check_backend(be));
    PL_CHECK(d, PL_ERR_ARG, "pl_cuda_pjds_block_spmv: NULL matrix");
    PL_CHECK(variant >= 0 && variant < BK_NVARIANTS, PL_ERR_ARG, "pJDS-b kernel variant %d out of range [0, %d)",
             variant, BK_NVARIANTS);
    if (d->nrows == 0) return PL_OK;
    pl_bk_kernel k = bk_kernel(d->b, bk_variants[variant].unroll, bk_variants[variant].hint);
    PL_CHECK(k, PL_ERR_ARG, "pJDS-b: run length b = %d out of range [1, %d]", d->b, PJDS_BLOCK_MAX_B);
    pl_cuda_ctx *cx = pl_cuda_ctx_of(be);
    pl_bkargs a;
    a.nrows = d->nrows;
    a.C = d->C;
    a.run_off = d->d_run_off;
    a.row_runs = d->d_row_runs;
    a.rcol = d->d_rcol;
    a.val = d->d_val;
    a.x = d_x;
    a.y = d_y;
    const int64_t nb = ((int64_t)d->nrows + BK_BLOCK - 1) / BK_BLOCK;
    k<<<(unsigned)nb, BK_BLOCK, 0, cx->stream>>>(a);
    PL_CUDA_LAUNCH();
    return PL_OK;
}

extern "C" size_t pl_cuda_pjds_block_bytes(const pl_cuda_pjds_block *d) { return d ? d->bytes : 0; }

/* ---- pJDS-b view of a pJDS matrix (the solve path: block_mode) ------------ */

/* One thread per row: do the row's stored entries come in runs of b
 * consecutive columns (entry j b + k = entry j b plus k)?  *bad = 1 if not. */
__global__ void k_runs_check(int64_t nrows, int32_t C, int b, const int64_t *__restrict__ chunk_start,
                             const int32_t *__restrict__ row_len, const int32_t *__restrict__ col, int *bad)
{
    const int64_t r = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= nrows) return;
    const int64_t c = r / C, lane = r % C;
    const int32_t len = row_len[r];
    if (len % b) {
        *bad = 1;
        return;
    }
    const int32_t *p = col + chunk_start[c] + lane;
    for (int32_t j = 0; j < len; j += b) {
        const int32_t s = p[(int64_t)j * C];
        for (int k = 1; k < b; k++)
            if (p[(int64_t)(j + k) * C] != s + k) {
                *bad = 1;
                return;
            }
    }
}

/* One thread per (chunk lane, run): rcol = the first column of each run;
 * padding runs (beyond the row) get a start that keeps start + b <= ncols. */
__global__ void k_runs_rcol(int64_t nrows, int32_t C, int b, int32_t ncols, const int64_t *__restrict__ chunk_start,
                            const int64_t *__restrict__ run_off, const int32_t *__restrict__ col, int32_t *rcol)
{
    const int64_t r = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    const int64_t nchunks = (nrows + C - 1) / C;
    if (r >= nchunks * C) return;
    const int64_t c = r / C, lane = r % C;
    const int64_t w = (run_off[c + 1] - run_off[c]) / C; /* runs of the chunk */
    for (int64_t j = 0; j < w; j++) {
        int32_t s = col[chunk_start[c] + j * b * C + lane];
        if (s > ncols - b) s = ncols - b;
        if (s < 0) s = 0;
        rcol[run_off[c] + j * C + lane] = s;
    }
}

extern "C" int pl_cuda_pjds_block_view(pl_backend *be, const pjds *h, const int64_t *d_chunk_start, const int32_t *d_row_len,
                                       const int32_t *d_col, double *d_val, int b, pl_cuda_pjds_block **out)
{
    PL_CALL(bk_check_backend(be));
    PL_CHECK(h && out && b >= 2 && b <= PJDS_BLOCK_MAX_B && h->ncols >= b, PL_ERR_ARG, "pl_cuda_pjds_block_view: bad arguments");
    *out = NULL;
    pl_cuda_ctx *cx = pl_cuda_ctx_of(be);
    const int64_t nrows = h->nrows, nch = h->nchunks, C = h->C;
    /* the chunk widths must be multiples of b (rows are, if the check passes) */
    for (int64_t c = 0; c < nch; c++)
        if (h->chunk_width[c] % b) return PL_OK;
    int *d_bad = NULL, bad = 0;
    PL_CUDA(cudaMalloc((void **)&d_bad, sizeof(int)));
    int rc = PL_OK;
    if (cudaMemsetAsync(d_bad, 0, sizeof(int), cx->stream) != cudaSuccess) rc = PL_ERROR(PL_ERR_CUDA, "cudaMemsetAsync failed");
    if (rc == PL_OK && nrows > 0) {
        k_runs_check<<<(unsigned)((nrows + 255) / 256), 256, 0, cx->stream>>>(nrows, (int32_t)C, b, d_chunk_start, d_row_len,
                                                                          d_col, d_bad);
        if (cudaGetLastError() != cudaSuccess) rc = PL_ERROR(PL_ERR_CUDA, "k_runs_check launch failed");
    }
    if (rc == PL_OK && cudaMemcpyAsync(&bad, d_bad, sizeof(int), cudaMemcpyDeviceToHost, cx->stream) != cudaSuccess)
        rc = PL_ERROR(PL_ERR_CUDA, "cudaMemcpyAsync failed");
    if (rc == PL_OK && cudaStreamSynchronize(cx->stream) != cudaSuccess) rc = PL_ERROR(PL_ERR_CUDA, "cudaStreamSynchronize failed");
    cudaFree(d_bad);
    PL_CALL(rc);
    if (bad) return PL_OK; /* not block-structured for this b */
    pl_cuda_pjds_block *m = (pl_cuda_pjds_block *)calloc(1, sizeof *m);
    PL_CHECK(m, PL_ERR_MEM, "out of host memory");
    m->nrows = h->nrows;
    m->C = h->C;
    m->b = b;
    m->nchunks = h->nchunks;
    m->nruns = h->nent / b;
    m->d_val = d_val;
    m->borrowed_val = 1;
    int64_t *h_off = (int64_t *)malloc((size_t)(nch + 1) * sizeof *h_off);
    int32_t *h_runs = (int32_t *)malloc((size_t)(nch * C + 1) * sizeof *h_runs);
    if (!h_off || !h_runs) rc = PL_ERROR(PL_ERR_MEM, "out of host memory");
    for (int64_t c = 0; rc == PL_OK && c <= nch; c++) h_off[c] = h->chunk_start[c] / b;
    for (int64_t r = 0; rc == PL_OK && r < nch * C; r++) h_runs[r] = h->row_len[r] / b;
    const size_t b_off = (size_t)(nch + 1) * sizeof(int64_t), b_runs = (size_t)(nch * C) * sizeof(int32_t),
                 b_rcol = (size_t)m->nruns * sizeof(int32_t);
    if (rc == PL_OK && (cudaMalloc((void **)&m->d_run_off, b_off) != cudaSuccess ||
                        cudaMalloc((void **)&m->d_row_runs, b_runs ? b_runs : 4) != cudaSuccess ||
                        cudaMalloc((void **)&m->d_rcol, b_rcol ? b_rcol : 4) != cudaSuccess))
        rc = PL_ERROR(PL_ERR_CUDA, "cudaMalloc of the pJDS-b run arrays (%.2f GB) failed", (double)(b_off + b_runs + b_rcol) * 1e-9);
    if (rc == PL_OK && (cudaMemcpy(m->d_run_off, h_off, b_off, cudaMemcpyHostToDevice) != cudaSuccess ||
                        (b_runs && cudaMemcpy(m->d_row_runs, h_runs, b_runs, cudaMemcpyHostToDevice) != cudaSuccess)))
        rc = PL_ERROR(PL_ERR_CUDA, "cudaMemcpy of the pJDS-b run arrays failed");
    /* the copies' DMA on the legacy stream before k_runs_rcol on cx->stream
     * (non-blocking) reads them (see pl_cuda_pjds_block_upload) */
    if (rc == PL_OK && cudaDeviceSynchronize() != cudaSuccess)
        rc = PL_ERROR(PL_ERR_CUDA, "cudaDeviceSynchronize after the pJDS-b run arrays failed");
    if (rc == PL_OK && nch > 0) {
        k_runs_rcol<<<(unsigned)((nch * C + 255) / 256), 256, 0, cx->stream>>>(nrows, (int32_t)C, b, h->ncols, d_chunk_start,
                                                                            m->d_run_off, d_col, m->d_rcol);
        if (cudaGetLastError() != cudaSuccess) rc = PL_ERROR(PL_ERR_CUDA, "k_runs_rcol launch failed");
        if (rc == PL_OK && cudaStreamSynchronize(cx->stream) != cudaSuccess)
            rc = PL_ERROR(PL_ERR_CUDA, "cudaStreamSynchronize failed");
    }
    free(h_off);
    free(h_runs);
    if (rc != PL_OK) {
        pl_cuda_pjds_block_free(be, &m);
        return rc;
    }
    m->bytes = b_off + b_runs + b_rcol;
    be->bytes_h2d += (double)(b_off + b_runs);
    *out = m;
    return PL_OK;
}

extern "C" int pl_cuda_pjds_block_variant_by_name(const char *name)
{
    for (int v = 0; v < BK_NVARIANTS; v++)
        if (!strcmp(pl_cuda_pjds_block_variant_name(v), name)) return v;
    return -1;
}
