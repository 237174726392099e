/* spmm_kernels.cu — SpMMV of the cuda backend (be->spmm, gather_block,
 * bdot; spmv.h): Y = A X for R vectors in row-major blocks.
 *
 * T = min(32, R rounded up to a power of two) threads share a pJDS row;
 * thread t of the row owns the columns t, t + T (R <= 64 = PL_SPMM_RMAX, so
 * at most two accumulators).  Each step j loads the row's value and column
 * index once per thread (the threads of one row read the same address; the
 * 32 / T rows of a warp read consecutive addresses of the chunk) and the T
 * threads gather R consecutive doubles of X's row: one or two full 32-byte
 * sectors per 4 columns, coalesced.  Matrix data is streamed (__ldcs: read
 * once, do not keep it in L2); X is read through the read-only path.  The
 * entry loop is unrolled by 4 (four loads in flight), with j ascending and
 * one accumulator per column, so every column is rounded as the single SpMV
 * rounds it.  A remote part (row_map) adds into its rows.  The KPM step
 * (k_spmm_aug) and the Chebyshev filter step (k_spmm_cheb) put their vector
 * updates into the same pass. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_impl.h"
#include "pl_error.h"

namespace {

struct spmm_args {
    int32_t nrows, C;
    const int64_t *__restrict__ chunk_start;
    const int32_t *__restrict__ row_len;
    const int32_t *__restrict__ col;
    const double *__restrict__ val;
    const int32_t *__restrict__ row_map;
    int R;
    const double *__restrict__ X;
    double *__restrict__ Y;
};

template <int T, int NC>
__global__ void __launch_bounds__(256) k_spmm(const spmm_args a)
{
    const int64_t gt = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    const int32_t row = (int32_t)(gt / T);
    const int lane = (int)(gt % T);
    if (row >= a.nrows) return;
    const int32_t c = row / a.C, rr = row - c * a.C;
    const int64_t base = a.chunk_start[c] + rr, C = a.C;
    const int32_t len = a.row_len[row];
    const int R = a.R;
    double acc[NC];
#pragma unroll
    for (int k = 0; k < NC; k++) acc[k] = 0.0;
    int32_t j = 0;
    for (; j + 4 <= len; j += 4) {
        double v[4];
        int32_t cc[4];
#pragma unroll
        for (int u = 0; u < 4; u++) {
            v[u] = __ldcs(a.val + base + (int64_t)(j + u) * C);
            cc[u] = __ldcs(a.col + base + (int64_t)(j + u) * C);
        }
#pragma unroll
        for (int u = 0; u < 4; u++) {
            const double *xr = a.X + (int64_t)cc[u] * R;
#pragma unroll
            for (int k = 0; k < NC; k++) {
                const int r = lane + k * T;
                if (r < R) acc[k] += v[u] * __ldg(xr + r);
            }
        }
    }
    for (; j < len; j++) {
        const double v = __ldcs(a.val + base + (int64_t)j * C);
        const double *xr = a.X + (int64_t)__ldcs(a.col + base + (int64_t)j * C) * R;
#pragma unroll
        for (int k = 0; k < NC; k++) {
            const int r = lane + k * T;
            if (r < R) acc[k] += v * __ldg(xr + r);
        }
    }
    if (a.row_map) {
        double *yr = a.Y + (int64_t)a.row_map[row] * R;
#pragma unroll
        for (int k = 0; k < NC; k++) {
            const int r = lane + k * T;
            if (r < R) yr[r] += acc[k];
        }
    } else {
        double *yr = a.Y + (int64_t)row * R;
#pragma unroll
        for (int k = 0; k < NC; k++) {
            const int r = lane + k * T;
            if (r < R) yr[r] = acc[k];
        }
    }
}

/* T threads per row, thread t owning the NC contiguous columns
 * [t NC, t NC + NC) (R = T NC): one load of the entry per thread serves NC
 * columns, and X is read with 16-byte vector loads (NC = 2 or 4). */
/* acc[k] = sum_j A(row, j) X(col_j, lane NC + k), k < NC: the entry loop of
 * the vector kernels (R = T NC), unrolled by 4, X through 16-byte loads */
template <int T, int NC>
__device__ __forceinline__ void row_acc_v(const spmm_args &a, int32_t row, int lane, double (&acc)[NC])
{
    const int32_t c = row / a.C, rr = row - c * a.C;
    const int64_t base = a.chunk_start[c] + rr, C = a.C;
    const int32_t len = a.row_len[row];
    const int R = T * NC;
#pragma unroll
    for (int k = 0; k < NC; k++) acc[k] = 0.0;
    int32_t j = 0;
    for (; j + 4 <= len; j += 4) {
        double v[4];
        int32_t cc[4];
#pragma unroll
        for (int u = 0; u < 4; u++) {
            v[u] = __ldcs(a.val + base + (int64_t)(j + u) * C);
            cc[u] = __ldcs(a.col + base + (int64_t)(j + u) * C);
        }
#pragma unroll
        for (int u = 0; u < 4; u++) {
            const double2 *xr = reinterpret_cast<const double2 *>(a.X + (int64_t)cc[u] * R + lane * NC);
#pragma unroll
            for (int k = 0; k < NC / 2; k++) {
                const double2 x2 = __ldg(xr + k);
                acc[2 * k] += v[u] * x2.x;
                acc[2 * k + 1] += v[u] * x2.y;
            }
        }
    }
    for (; j < len; j++) {
        const double v = __ldcs(a.val + base + (int64_t)j * C);
        const double2 *xr =
            reinterpret_cast<const double2 *>(a.X + (int64_t)__ldcs(a.col + base + (int64_t)j * C) * R + lane * NC);
#pragma unroll
        for (int k = 0; k < NC / 2; k++) {
            const double2 x2 = __ldg(xr + k);
            acc[2 * k] += v * x2.x;
            acc[2 * k + 1] += v * x2.y;
        }
    }
}

template <int T, int NC>
__global__ void __launch_bounds__(256) k_spmm_v(const spmm_args a)
{
    const int64_t gt = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    const int32_t row = (int32_t)(gt / T);
    const int lane = (int)(gt % T);
    if (row >= a.nrows) return;
    const int R = T * NC;
    double acc[NC];
    row_acc_v<T, NC>(a, row, lane, acc);
    double *yr = a.Y + (int64_t)(a.row_map ? a.row_map[row] : row) * R + lane * NC;
#pragma unroll
    for (int k = 0; k < NC; k++) {
        if (a.row_map) yr[k] += acc[k];
        else yr[k] = acc[k];
    }
}

template <int T, int NC>
static int launch_v(const spmm_args &a, cudaStream_t s)
{
    const int64_t threads = (int64_t)a.nrows * T;
    const unsigned nb = (unsigned)((threads + 255) / 256);
    k_spmm_v<T, NC><<<nb, 256, 0, s>>>(a);
    PL_CUDA_LAUNCH();
    return PL_OK;
}

template <int T, int NC>
static int launch(const spmm_args &a, cudaStream_t s)
{
    const int64_t threads = (int64_t)a.nrows * T;
    const unsigned nb = (unsigned)((threads + 255) / 256);
    k_spmm<T, NC><<<nb, 256, 0, s>>>(a);
    PL_CUDA_LAUNCH();
    return PL_OK;
}

/* one thread per element: buf[i R + r] = X[idx[i] R + r] */
__global__ void k_gather_block(int64_t n, int R, const int32_t *__restrict__ idx, const double *__restrict__ X,
                               double *__restrict__ buf)
{
    const int64_t tot = n * R;
    for (int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; e < tot; e += (int64_t)gridDim.x * blockDim.x) {
        const int64_t i = e / R;
        const int r = (int)(e - i * R);
        buf[e] = X[(int64_t)idx[i] * R + r];
    }
}

/* h[r] += sum_i X[i R + r] Y[i R + r]: each block walks elements in a
 * grid-stride loop whose stride is a multiple of R (so a thread keeps one
 * column), reduces per column in shared memory, one atomicAdd per column
 * and block */
__global__ void __launch_bounds__(256) k_bdot(int64_t n, int R, const double *__restrict__ X,
                                              const double *__restrict__ Y, double *h)
{
    __shared__ double sh[256];
    const int per = 256 / R * R; /* threads in use: a multiple of R */
    const int t = threadIdx.x;
    double s = 0.0;
    if (t < per) {
        const int64_t tot = n * R, stride = (int64_t)gridDim.x * per;
        for (int64_t e = (int64_t)blockIdx.x * per + t; e < tot; e += stride) s += X[e] * Y[e];
    }
    sh[t] = s;
    __syncthreads();
    if (t < R) {
        double c = 0.0;
        for (int i = t; i < per; i += R) c += sh[i];
        atomicAdd(h + t, c);
    }
}

/* The KPM step fused into the vector kernel (R = T NC, square local
 * matrix): Y = alpha A X + gamma X + beta Y row by row, and per block the
 * column sums of X.X and Y_new.X into part[block][2 R] (a second kernel
 * adds the blocks). */
template <int T, int NC>
__global__ void __launch_bounds__(256) k_spmm_aug(const spmm_args a, double alpha, double gamma, double beta,
                                                  double *__restrict__ part)
{
    const int64_t gt = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    const int32_t row = (int32_t)(gt / T);
    const int lane = (int)(gt % T);
    const int R = T * NC;
    double d1[NC], d2[NC];
#pragma unroll
    for (int k = 0; k < NC; k++) d1[k] = d2[k] = 0.0;
    if (row < a.nrows) {
        double acc[NC];
        row_acc_v<T, NC>(a, row, lane, acc);
        const double2 *xo = reinterpret_cast<const double2 *>(a.X + (int64_t)row * R + lane * NC);
        double2 *yo = reinterpret_cast<double2 *>(a.Y + (int64_t)row * R + lane * NC);
#pragma unroll
        for (int k = 0; k < NC / 2; k++) {
            const double2 x2 = xo[k], y2 = yo[k];
            double2 n2;
            n2.x = alpha * acc[2 * k] + gamma * x2.x + beta * y2.x;
            n2.y = alpha * acc[2 * k + 1] + gamma * x2.y + beta * y2.y;
            yo[k] = n2;
            d1[2 * k] = x2.x * x2.x;
            d1[2 * k + 1] = x2.y * x2.y;
            d2[2 * k] = n2.x * x2.x;
            d2[2 * k + 1] = n2.y * x2.y;
        }
    }
    /* reduction per column: first inside the warp (the lanes with the same
     * lane % T hold the same columns), then over the 8 warps of the block */
#pragma unroll
    for (int k = 0; k < NC; k++) {
#pragma unroll
        for (int off = 16; off >= T; off >>= 1) {
            d1[k] += __shfl_xor_sync(0xffffffffu, d1[k], off);
            d2[k] += __shfl_xor_sync(0xffffffffu, d2[k], off);
        }
    }
    __shared__ double sh[8][128];
    const int wl = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (wl < T) {
#pragma unroll
        for (int k = 0; k < NC; k++) {
            sh[warp][wl * NC + k] = d1[k];
            sh[warp][R + wl * NC + k] = d2[k];
        }
    }
    __syncthreads();
    if (threadIdx.x < 2 * R) {
        double sum = 0.0;
#pragma unroll
        for (int w = 0; w < 8; w++) sum += sh[w][threadIdx.x];
        part[(int64_t)blockIdx.x * 2 * R + threadIdx.x] = sum;
    }
}

/* out[c] = sum_b part[b][c], c < m (one block per column) */
__global__ void __launch_bounds__(256) k_sum_cols(int64_t nb, int m, const double *__restrict__ part, double *out)
{
    __shared__ double sh[256];
    const int c = blockIdx.x;
    double s = 0.0;
    for (int64_t b = threadIdx.x; b < nb; b += 256) s += part[b * m + c];
    sh[threadIdx.x] = s;
    __syncthreads();
    for (int st = 128; st > 0; st >>= 1) {
        if (threadIdx.x < st) sh[threadIdx.x] += sh[threadIdx.x + st];
        __syncthreads();
    }
    if (threadIdx.x == 0) out[c] = sh[0];
}

/* cuda_impl.h: the buffers of the fused products' sums (spmm_aug,
 * kron_spmm_aug, kron_lz): cx->d_aug of at least need doubles (grown when
 * needed) and the page-locked cx->h_aug_pin of 2 PL_SPMM_RMAX doubles for
 * their download. */
extern "C" int pl_cuda_aug_buffers(pl_cuda_ctx *cx, size_t need)
{
    if (cx->aug_n < need) {
        if (cx->d_aug) PL_CUDA(cudaFree(cx->d_aug));
        cx->d_aug = NULL;
        cx->aug_n = 0;
        PL_CUDA(cudaMalloc((void **)&cx->d_aug, need * sizeof(double)));
        cx->aug_n = need;
    }
    if (!cx->h_aug_pin) PL_CUDA(cudaMallocHost((void **)&cx->h_aug_pin, 2 * PL_SPMM_RMAX * sizeof(double)));
    return PL_OK;
}

template <int T, int NC>
static int launch_aug(pl_cuda_ctx *cx, const spmm_args &a, double alpha, double gamma, double beta, double *h_dots)
{
    cudaStream_t s = cx->stream;
    const int64_t threads = (int64_t)a.nrows * T;
    const int64_t nb = (threads + 255) / 256;
    const int R = T * NC;
    /* the per-block sums live in a buffer of the context, grown when needed
     * (a stream-ordered allocation per call went back to the driver at every
     * synchronisation: ~1 ms a call) */
    const size_t need = (size_t)(nb > 0 ? nb : 1) * 2 * R + 2 * (size_t)R;
    PL_CALL(pl_cuda_aug_buffers(cx, need));
    double *part = cx->d_aug, *d_out = cx->d_aug + (size_t)(nb > 0 ? nb : 1) * 2 * R;
    if (nb > 0) {
        k_spmm_aug<T, NC><<<(unsigned)nb, 256, 0, s>>>(a, alpha, gamma, beta, part);
        PL_CUDA_LAUNCH();
        k_sum_cols<<<2 * R, 256, 0, s>>>(nb, 2 * R, part, d_out);
        PL_CUDA_LAUNCH();
    } else {
        PL_CUDA(cudaMemsetAsync(d_out, 0, 2 * (size_t)R * sizeof(double), s));
    }
    PL_CUDA(cudaMemcpyAsync(cx->h_aug_pin, d_out, 2 * (size_t)R * sizeof(double), cudaMemcpyDeviceToHost, s));
    PL_CUDA(cudaStreamSynchronize(s));
    memcpy(h_dots, cx->h_aug_pin, 2 * (size_t)R * sizeof(double));
    return PL_OK;
}

/* The Chebyshev filter step (be->spmm_cheb): Y = alpha A X + gamma X +
 * beta Y row by row and, with ACC, Acc += cx X + cy Y_new in the same
 * pass (the filter's accumulation: each of X, Y, Acc read once, no column
 * sums, no host synchronisation). */
template <int T, int NC, bool ACC>
__global__ void __launch_bounds__(256) k_spmm_cheb(const spmm_args a, double alpha, double gamma, double beta,
                                                   double cx, double cy, double *__restrict__ acc_out)
{
    const int64_t gt = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    const int32_t row = (int32_t)(gt / T);
    const int lane = (int)(gt % T);
    if (row >= a.nrows) return;
    const int R = T * NC;
    double acc[NC];
    row_acc_v<T, NC>(a, row, lane, acc);
    const int64_t off = (int64_t)row * R + lane * NC;
    const double2 *xo = reinterpret_cast<const double2 *>(a.X + off);
    double2 *yo = reinterpret_cast<double2 *>(a.Y + off);
    double2 *ao = reinterpret_cast<double2 *>(acc_out + off);
#pragma unroll
    for (int k = 0; k < NC / 2; k++) {
        const double2 x2 = xo[k], y2 = yo[k];
        double2 n2;
        n2.x = alpha * acc[2 * k] + gamma * x2.x + beta * y2.x;
        n2.y = alpha * acc[2 * k + 1] + gamma * x2.y + beta * y2.y;
        yo[k] = n2;
        if (ACC) {
            double2 s2 = ao[k];
            s2.x += cx * x2.x + cy * n2.x;
            s2.y += cx * x2.y + cy * n2.y;
            ao[k] = s2;
        }
    }
}

template <int T, int NC>
static int launch_cheb(pl_cuda_ctx *cx, const spmm_args &a, double alpha, double gamma, double beta, double c1,
                       double c2, double *acc)
{
    const int64_t threads = (int64_t)a.nrows * T;
    const int64_t nb = (threads + 255) / 256;
    if (nb == 0) return PL_OK;
    if (acc) k_spmm_cheb<T, NC, true><<<(unsigned)nb, 256, 0, cx->stream>>>(a, alpha, gamma, beta, c1, c2, acc);
    else k_spmm_cheb<T, NC, false><<<(unsigned)nb, 256, 0, cx->stream>>>(a, alpha, gamma, beta, c1, c2, acc);
    PL_CUDA_LAUNCH();
    return PL_OK;
}

/* The kernels' arguments for the block product of m with X into Y. */
spmm_args args_of(const pl_cuda_mat *m, int R, const double *X, double *Y)
{
    spmm_args a;
    a.nrows = m->nrows;
    a.C = m->C;
    a.chunk_start = m->d_chunk_start;
    a.row_len = m->d_row_len;
    a.col = m->d_col;
    a.val = m->d_val;
    a.row_map = m->d_row_map;
    a.R = R;
    a.X = X;
    a.Y = Y;
    return a;
}

} // namespace

extern "C" int pl_cuda_spmm(pl_cuda_ctx *cx, const pl_cuda_mat *m, int R, const double *X, double *Y)
{
    PL_CHECK(R >= 1 && R <= 64, PL_ERR_ARG, "spmm: R = %d outside 1..64", R);
    if (m->nrows == 0) return PL_OK;
    const spmm_args a = args_of(m, R, X, Y);
    cudaStream_t s = cx->stream;
    /* 16-byte aligned blocks of R = 2^k: the vector kernel, 8 columns per
     * thread (at most R); else one column per thread */
    const bool aligned = ((uintptr_t)X % 16 == 0) && ((uintptr_t)Y % 16 == 0);
    if (aligned) {
        switch (R) {
        case 2: return launch_v<1, 2>(a, s);
        case 4: return launch_v<1, 4>(a, s);
        case 8: return launch_v<1, 8>(a, s);
        case 16: return launch_v<2, 8>(a, s);
        case 32: return launch_v<4, 8>(a, s);
        case 64: return launch_v<8, 8>(a, s);
        default: break;
        }
    }
    if (R == 1) return launch<1, 1>(a, s);
    if (R == 2) return launch<2, 1>(a, s);
    if (R <= 4) return launch<4, 1>(a, s);
    if (R <= 8) return launch<8, 1>(a, s);
    if (R <= 16) return launch<16, 1>(a, s);
    if (R <= 32) return launch<32, 1>(a, s);
    return launch<32, 2>(a, s);
}

extern "C" int pl_cuda_gather_block(pl_cuda_ctx *cx, size_t n, int R, const int32_t *idx, const double *X, double *buf)
{
    if (n == 0) return PL_OK;
    int64_t tot = (int64_t)n * R, nb = (tot + 255) / 256;
    if (nb > 65535 * 16) nb = 65535 * 16;
    k_gather_block<<<(unsigned)nb, 256, 0, cx->stream>>>((int64_t)n, R, idx, X, buf);
    PL_CUDA_LAUNCH();
    return PL_OK;
}

extern "C" int pl_cuda_bdot(pl_cuda_ctx *cx, size_t n, int R, const double *X, const double *Y, double *h_out)
{
    PL_CHECK(R >= 1 && R <= 64, PL_ERR_ARG, "bdot: R = %d outside 1..64", R);
    PL_CHECK(cx->d_ts_h, PL_ERR_INTERNAL, "bdot: no workspace");
    double *d_h = cx->d_ts_h; /* PL_TS_KMAX >= 64 doubles of workspace */
    PL_CUDA(cudaMemsetAsync(d_h, 0, (size_t)R * sizeof(double), cx->stream));
    if (n > 0) {
        const int per = 256 / R * R;
        int64_t nb = ((int64_t)n * R + per - 1) / per;
        const int64_t cap = (int64_t)(cx->nsm > 0 ? cx->nsm : 132) * 8;
        if (nb > cap) nb = cap;
        k_bdot<<<(unsigned)nb, 256, 0, cx->stream>>>((int64_t)n, R, X, Y, d_h);
        PL_CUDA_LAUNCH();
    }
    PL_CUDA(cudaMemcpyAsync(h_out, d_h, (size_t)R * sizeof(double), cudaMemcpyDeviceToHost, cx->stream));
    PL_CUDA(cudaStreamSynchronize(cx->stream));
    return PL_OK;
}

extern "C" int pl_cuda_spmm_aug(pl_cuda_ctx *cx, const pl_cuda_mat *m, int R, double alpha, double gamma, double beta,
                                const double *X, double *Y, double *h_dots, int *done)
{
    *done = 0;
    const bool aligned = ((uintptr_t)X % 16 == 0) && ((uintptr_t)Y % 16 == 0);
    if (m->d_row_map || !aligned) return PL_OK; /* the caller composes the step */
    const spmm_args a = args_of(m, R, X, Y); /* (m->d_row_map is NULL here) */
    int rc = PL_OK;
    switch (R) {
    case 2: rc = launch_aug<1, 2>(cx, a, alpha, gamma, beta, h_dots); break;
    case 4: rc = launch_aug<1, 4>(cx, a, alpha, gamma, beta, h_dots); break;
    case 8: rc = launch_aug<1, 8>(cx, a, alpha, gamma, beta, h_dots); break;
    case 16: rc = launch_aug<2, 8>(cx, a, alpha, gamma, beta, h_dots); break;
    case 32: rc = launch_aug<4, 8>(cx, a, alpha, gamma, beta, h_dots); break;
    default: return PL_OK;
    }
    if (rc == PL_OK) *done = 1;
    return rc;
}

extern "C" int pl_cuda_spmm_cheb(pl_cuda_ctx *cx, const pl_cuda_mat *m, int R, double alpha, double gamma, double beta,
                                 const double *X, double *Y, double c1, double c2, double *Acc, int *done)
{
    *done = 0;
    const bool aligned = ((uintptr_t)X % 16 == 0) && ((uintptr_t)Y % 16 == 0) && ((uintptr_t)Acc % 16 == 0);
    if (m->d_row_map || !aligned) return PL_OK; /* the caller composes the step */
    const spmm_args a = args_of(m, R, X, Y); /* (m->d_row_map is NULL here) */
    int rc = PL_OK;
    switch (R) {
    case 2: rc = launch_cheb<1, 2>(cx, a, alpha, gamma, beta, c1, c2, Acc); break;
    case 4: rc = launch_cheb<1, 4>(cx, a, alpha, gamma, beta, c1, c2, Acc); break;
    case 8: rc = launch_cheb<1, 8>(cx, a, alpha, gamma, beta, c1, c2, Acc); break;
    case 16: rc = launch_cheb<2, 8>(cx, a, alpha, gamma, beta, c1, c2, Acc); break;
    case 32: rc = launch_cheb<4, 8>(cx, a, alpha, gamma, beta, c1, c2, Acc); break;
    default: return PL_OK;
    }
    if (rc == PL_OK) *done = 1;
    return rc;
}
