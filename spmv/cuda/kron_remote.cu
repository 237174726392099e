/* kron_remote.cu — the CUDA backend's remote part of a matrix-free operator
 * on several ranks (be->kron_rem_create, kron_rem_apply, kron_rem_spmm,
 * kron_rem_destroy; spmv.h pl_kron_remote, op_kron_dist.c):
 *   y[row[i] n_right + r] += sum_{j in [ptr[i], ptr[i+1])} val[j] x_halo[hrow[j] n_right + r].
 *
 * Upload: the four lists by pl_cuda_upload_array on the backend stream, one
 * stream synchronisation at the end (the host lists may go on return).
 *
 * Kernel: one thread per (remote row i, right row r); blockIdx.y strides
 * over the remote rows, blockIdx.x and threadIdx.x over r (grid-stride), so
 * x_halo[h, r] and y[l, r] are coalesced and a row's list is uniform in the
 * block.  Each thread starts from y and adds the entries in j order with
 * explicitly rounded products and sums (__dmul_rn, __dadd_rn: no FMA), the
 * CPU backend's bits (cpu_kron_remote.c).  Launched on the backend's
 * stream after the halo is there (op_apply.c), asynchronous like spmv.
 * kron_rem_spmm (R row-major vectors, op_block.c) is the same kernel with
 * n_right R values per left row (krem_launch).
 *
 * The RIGHT split (pl_kron_remote.split, op_kron_right.c): one thread per
 * (left row l, vector v) of a remote right row i (blockIdx.y strides over
 * i), t = l R + v, so x_halo[(h n_left + l) R + v] is coalesced; the sum
 * starts from y[(l w + row[i]) R + v] and takes j in order, (c * val) * x
 * rounded like the CPU backend's, terms with c = 0 skipped. */
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdlib.h>

#include "cuda_impl.h"

#define KREM_BLOCK 256  /* threads (right rows) per block */
#define KREM_GRID_Y 65535

typedef struct pl_cuda_krem {
    int64_t n_right;
    int32_t n_rows;
    int32_t *row, *hrow;
    int64_t *ptr;
    double *val;
    int split;      /* RIGHT: the fields below */
    int64_t n_left;
    int nterms;
    int32_t *term;
    double *c;
    size_t bytes;
} pl_cuda_krem;

/* RIGHT split: one thread per (left row, vector) of a remote right row */
static __global__ void __launch_bounds__(KREM_BLOCK)
    krem_right_kernel(int64_t nl, int64_t w, int64_t R, int nt, int32_t n_rows, const int32_t *__restrict__ row,
                      const int64_t *__restrict__ ptr, const int32_t *__restrict__ hcol,
                      const int32_t *__restrict__ term, const double *__restrict__ val,
                      const double *__restrict__ c, const double *__restrict__ xh, double *__restrict__ y)
{
    const int64_t nt_all = nl * R;
    for (int64_t i = blockIdx.y; i < n_rows; i += gridDim.y) {
        const int64_t j0 = __ldg(ptr + i), j1 = __ldg(ptr + i + 1), ri = __ldg(row + i);
        for (int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; t < nt_all;
             t += (int64_t)gridDim.x * blockDim.x) {
            const int64_t l = t / R, v = t - l * R;
            double *yp = y + (l * w + ri) * R + v;
            double s = *yp;
            for (int64_t j = j0; j < j1; j++) {
                const double cm = __ldg(c + l * nt + __ldg(term + j));
                if (cm == 0.0) continue;
                s = __dadd_rn(s, __dmul_rn(__dmul_rn(cm, __ldg(val + j)),
                                           __ldg(xh + ((int64_t)__ldg(hcol + j) * nl + l) * R + v)));
            }
            *yp = s;
        }
    }
}

/* one thread per (remote row, right row) */
static __global__ void __launch_bounds__(KREM_BLOCK)
    krem_kernel(int64_t nr, int32_t n_rows, const int32_t *__restrict__ row, const int64_t *__restrict__ ptr,
                const int32_t *__restrict__ hrow, const double *__restrict__ val, const double *__restrict__ xh,
                double *__restrict__ y)
{
    for (int64_t i = blockIdx.y; i < n_rows; i += gridDim.y) {
        const int64_t j0 = __ldg(ptr + i), j1 = __ldg(ptr + i + 1);
        double *yl = y + (int64_t)__ldg(row + i) * nr;
        for (int64_t r = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; r < nr; r += (int64_t)gridDim.x * blockDim.x) {
            double s = yl[r];
            for (int64_t j = j0; j < j1; j++)
                s = __dadd_rn(s, __dmul_rn(__ldg(val + j), __ldg(xh + (int64_t)__ldg(hrow + j) * nr + r)));
            yl[r] = s;
        }
    }
}

extern "C" void pl_cuda_kron_rem_destroy(pl_backend *be, void *mat)
{
    (void)be;
    pl_cuda_krem *m = (pl_cuda_krem *)mat;
    if (!m) return;
    /* (errors of cudaFree cannot be reported from a destroy) */
    cudaFree(m->row);
    cudaFree(m->hrow);
    cudaFree(m->ptr);
    cudaFree(m->val);
    cudaFree(m->term);
    cudaFree(m->c);
    free(m);
}

static int krem_upload(pl_cuda_ctx *cx, const pl_kron_remote *r, pl_cuda_krem *m)
{
    const size_t n = (size_t)r->n_rows, e = (size_t)r->ptr[n];
    size_t *tot = &m->bytes;
    PL_CALL(pl_cuda_upload_array(cx, (void **)&m->row, r->row, n * sizeof(int32_t), tot));
    PL_CALL(pl_cuda_upload_array(cx, (void **)&m->ptr, r->ptr, (n + 1) * sizeof(int64_t), tot));
    PL_CALL(pl_cuda_upload_array(cx, (void **)&m->hrow, r->hrow, e * sizeof(int32_t), tot));
    PL_CALL(pl_cuda_upload_array(cx, (void **)&m->val, r->val, e * sizeof(double), tot));
    if (r->split == PL_KRON_SPLIT_RIGHT) {
        PL_CHECK(r->term && r->c && r->n_left >= 1 && r->nterms >= 1, PL_ERR_ARG,
                 "kron_rem_create: the RIGHT split's remote part without its tables");
        PL_CALL(pl_cuda_upload_array(cx, (void **)&m->term, r->term, e * sizeof(int32_t), tot));
        PL_CALL(pl_cuda_upload_array(cx, (void **)&m->c, r->c, (size_t)(r->n_left * r->nterms) * sizeof(double), tot));
    }
    PL_CUDA(cudaStreamSynchronize(cx->stream)); /* the host lists may go now */
    return PL_OK;
}

extern "C" int pl_cuda_kron_rem_create(pl_backend *be, const pl_kron_remote *r, void **mat)
{
    PL_CHECK_CUDA_BE(be);
    PL_CHECK(r && mat && r->n_rows >= 0 && r->n_right >= 1, PL_ERR_ARG, "kron_rem_create: bad argument");
    *mat = NULL;
    pl_cuda_ctx *cx = pl_cuda_ctx_of(be);
    pl_cuda_krem *m = (pl_cuda_krem *)calloc(1, sizeof *m);
    PL_CHECK(m, PL_ERR_MEM, "out of host memory for the remote part");
    m->n_right = r->n_right;
    m->n_rows = r->n_rows;
    m->split = r->split;
    m->n_left = r->n_left;
    m->nterms = r->nterms;
    const int rc = krem_upload(cx, r, m);
    if (rc != PL_OK) {
        pl_cuda_kron_rem_destroy(be, m);
        return pl_error_trace(rc, __FILE__, __LINE__, __func__, "krem_upload");
    }
    be->bytes_h2d += (double)m->bytes;
    *mat = m;
    return PL_OK;
}

/* krem_kernel over w values per left row: w = n_right (one vector) or
 * n_right R (a row-major block: left row l's values (r, c) at
 * (l n_right + r) R + c, contiguous, so the block's product is the single
 * one with w = n_right R and each column keeps kron_rem_apply's bits). */
static int krem_launch(pl_backend *be, const pl_cuda_krem *m, int64_t w, const double *x_halo, double *y)
{
    if (m->n_rows == 0) return PL_OK;
    pl_cuda_ctx *cx = pl_cuda_ctx_of(be);
    const int64_t bx = (w + KREM_BLOCK - 1) / KREM_BLOCK;
    const dim3 grid((unsigned)(bx < 65535 ? bx : 65535), (unsigned)(m->n_rows < KREM_GRID_Y ? m->n_rows : KREM_GRID_Y));
    krem_kernel<<<grid, KREM_BLOCK, 0, cx->stream>>>(w, m->n_rows, m->row, m->ptr, m->hrow, m->val, x_halo, y);
    PL_CUDA_LAUNCH();
    return PL_OK;
}

/* The RIGHT split's kernel for R vectors. */
static int krem_right_launch(pl_backend *be, const pl_cuda_krem *m, int64_t R, const double *x_halo, double *y)
{
    if (m->n_rows == 0) return PL_OK;
    pl_cuda_ctx *cx = pl_cuda_ctx_of(be);
    const int64_t bx = (m->n_left * R + KREM_BLOCK - 1) / KREM_BLOCK;
    const dim3 grid((unsigned)(bx < 65535 ? bx : 65535), (unsigned)(m->n_rows < KREM_GRID_Y ? m->n_rows : KREM_GRID_Y));
    krem_right_kernel<<<grid, KREM_BLOCK, 0, cx->stream>>>(m->n_left, m->n_right, R, m->nterms, m->n_rows, m->row,
                                                           m->ptr, m->hrow, m->term, m->val, m->c, x_halo, y);
    PL_CUDA_LAUNCH();
    return PL_OK;
}

extern "C" int pl_cuda_kron_rem_apply(pl_backend *be, const void *mat, const double *x_halo, double *y)
{
    const pl_cuda_krem *m = (const pl_cuda_krem *)mat;
    PL_CHECK(m && x_halo && y, PL_ERR_ARG, "kron_rem_apply: NULL argument");
    if (m->split == PL_KRON_SPLIT_RIGHT) PL_CALL(krem_right_launch(be, m, 1, x_halo, y));
    else PL_CALL(krem_launch(be, m, m->n_right, x_halo, y));
    return PL_OK;
}

extern "C" int pl_cuda_kron_rem_spmm(pl_backend *be, const void *mat, int R, const double *X_halo, double *Y)
{
    const pl_cuda_krem *m = (const pl_cuda_krem *)mat;
    PL_CHECK(m && X_halo && Y, PL_ERR_ARG, "kron_rem_spmm: NULL argument");
    PL_CHECK(R >= 1 && R <= PL_SPMM_RMAX, PL_ERR_ARG, "kron_rem_spmm: R = %d outside 1..%d", R, PL_SPMM_RMAX);
    if (m->split == PL_KRON_SPLIT_RIGHT) PL_CALL(krem_right_launch(be, m, R, X_halo, Y));
    else PL_CALL(krem_launch(be, m, m->n_right * R, X_halo, Y));
    return PL_OK;
}
