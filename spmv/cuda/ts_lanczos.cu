/* ts_lanczos.cu — the tall-skinny kernels of Lanczos' local step with
 * selected columns (selective orthogonalisation) on the CUDA backend:
 *     sel_gram:   the ka sums A^T x and the Gram matrix of the step's three
 *                 columns, in one pass (the composed step's reduction);
 *     sel_update: x = s (x - A ca - b0 cb0 - b1 cb1);
 *     lz_step:    alpha and the norm from the fused product's sums, the
 *                 update y = (y - alpha x) / b and the ka sums A^T y of
 *                 the new vector, in one pass (the fused step).
 * ka <= 16 selected columns, in tiers KT = 4, 8, 16.  The sums are reduced
 * as ts_kernels.cu's gemv_t (block partials, then the last block in block
 * order): deterministic for a given grid. */
#include <cuda_runtime.h>
#include <stdint.h>

#include "lz_coef.h"
#include "ts_common.cuh"

/* sel_gram: the ka sums A^T x and the 6 of the upper triangle of
 * [b0 b1 x]^T [b0 b1 x] ((0,0) (0,1) (1,1) (0,2) (1,2) (2,2)) in one pass,
 * reduced as gemv_t (d_ts_h: ka + 6 doubles). */
template <int KT>
__global__ void __launch_bounds__(TS_BS) k_sel_gram(int64_t n, int ka, const double *__restrict__ A,
                                                    const double *__restrict__ B, int64_t ld,
                                                    double *__restrict__ part, unsigned int *__restrict__ ticket,
                                                    double *__restrict__ h)
{
    constexpr int NC = KT + 6;
    __shared__ double red[TS_WARPS][NC];
    const int64_t tid = (int64_t)blockIdx.x * TS_BS + threadIdx.x;
    const int64_t nth = (int64_t)gridDim.x * TS_BS;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int nc = ka + 6;
    double acc[NC];
#pragma unroll
    for (int q = 0; q < NC; q++) acc[q] = 0.0;
    for (int64_t i = tid; i < n; i += nth) {
        const double p = __ldcs(B + i), q = __ldcs(B + ld + i), r = __ldcs(B + 2 * ld + i);
#pragma unroll
        for (int c = 0; c < KT; c++)
            if (c < ka) acc[c] = fma(__ldcs(A + (int64_t)c * ld + i), r, acc[c]);
        acc[KT + 0] = fma(p, p, acc[KT + 0]);
        acc[KT + 1] = fma(p, q, acc[KT + 1]);
        acc[KT + 2] = fma(q, q, acc[KT + 2]);
        acc[KT + 3] = fma(p, r, acc[KT + 3]);
        acc[KT + 4] = fma(q, r, acc[KT + 4]);
        acc[KT + 5] = fma(r, r, acc[KT + 5]);
    }
#pragma unroll
    for (int q = 0; q < NC; q++) {
        double s = warp_sum(acc[q]);
        if (lane == 0) red[warp][q] = s;
    }
    __syncthreads();
    for (int c = threadIdx.x; c < nc; c += TS_BS) { /* packed: A^T x, then the 6 */
        const int src = c < ka ? c : KT + (c - ka);
        double s = 0.0;
#pragma unroll
        for (int w = 0; w < TS_WARPS; w++) s += red[w][src];
        part[(int64_t)blockIdx.x * nc + c] = s;
    }
    last_block_sum(part, nc, ticket, h);
}

/* sel_update: x = s (x - A ca - b0 cb0 - b1 cb1); the coefficients in the
 * launch parameters (ca in h[0:ka], cb0, cb1 in h[ka], h[ka + 1]). */
template <int KT>
__global__ void __launch_bounds__(TS_BS) k_sel_update(int64_t n, int ka, const double *__restrict__ A,
                                                      const double *__restrict__ B, int64_t ld, ts_hvec hv, double s,
                                                      double *__restrict__ x)
{
    const int64_t tid = (int64_t)blockIdx.x * TS_BS + threadIdx.x;
    const int64_t nth = (int64_t)gridDim.x * TS_BS;
    const double c0 = hv.h[ka], c1 = hv.h[ka + 1];
    for (int64_t i = tid; i < n; i += nth) {
        double t = 0.0;
#pragma unroll
        for (int c = 0; c < KT; c++)
            if (c < ka) t = fma(__ldcs(A + (int64_t)c * ld + i), hv.h[c], t);
        t = fma(__ldcs(B + i), c0, t);
        t = fma(__ldcs(B + ld + i), c1, t);
        x[i] = s * (x[i] - t);
    }
}

/* lz_step: alpha and the new norm b from kron_lz's sums dd (lz_coef.h,
 * every thread alike), then, unless the step is declined, y = s (y -
 * alpha x) with s = 1 / b and the ka sums A^T y of the new y, in one pass,
 * reduced as gemv_t into out[PL_LZ_OUT:]; out[0:PL_LZ_OUT] = the sums,
 * alpha, b, declined (block 0).  0 <= ka <= KT. */
template <int KT>
__global__ void __launch_bounds__(TS_BS) k_lz_step(int64_t n, int ka, const double *__restrict__ A,
                                                   const double *__restrict__ x, int64_t ld, double beta,
                                                   const double *__restrict__ dd, double *__restrict__ y,
                                                   double *__restrict__ part, unsigned int *__restrict__ ticket,
                                                   double *__restrict__ out)
{
    __shared__ double red[TS_WARPS][KT];
    const int64_t tid = (int64_t)blockIdx.x * TS_BS + threadIdx.x;
    const int64_t nth = (int64_t)gridDim.x * TS_BS;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    double d[PL_KRON_LZ_DOTS], a, b;
#pragma unroll
    for (int k = 0; k < PL_KRON_LZ_DOTS; k++) d[k] = __ldcg(dd + k);
    const int ok = pl_lz_coef(d, beta, &a, &b);
    const double s = 1.0 / b;
    if (tid == 0) {
#pragma unroll
        for (int k = 0; k < PL_KRON_LZ_DOTS; k++) out[k] = d[k];
        out[PL_LZ_OUT_ALPHA] = a;
        out[PL_LZ_OUT_NORM] = b;
        out[PL_LZ_OUT_DECLINED] = ok ? 0.0 : 1.0;
    }
    double acc[KT];
#pragma unroll
    for (int c = 0; c < KT; c++) acc[c] = 0.0;
    for (int64_t i = ok ? tid : n; i < n; i += nth) {
        const double yn = __dmul_rn(s, __dsub_rn(y[i], __dmul_rn(a, __ldcs(x + i)))); /* the CPU's roundings */
        y[i] = yn;
#pragma unroll
        for (int c = 0; c < KT; c++)
            if (c < ka) acc[c] = fma(__ldcs(A + (int64_t)c * ld + i), yn, acc[c]);
    }
#pragma unroll
    for (int c = 0; c < KT; c++) {
        double t = warp_sum(acc[c]);
        if (lane == 0) red[warp][c] = t;
    }
    __syncthreads();
    for (int c = threadIdx.x; c < ka; c += TS_BS) {
        double t = 0.0;
#pragma unroll
        for (int w = 0; w < TS_WARPS; w++) t += red[w][c];
        part[(int64_t)blockIdx.x * ka + c] = t;
    }
    last_block_sum(part, ka, ticket, out + PL_LZ_OUT);
}

/* ---- host side ----------------------------------------------------------------- */

/* (cuda_impl.h) every instantiation loaded before its first launch (lazy
 * loading: the verify phase's first wider update would load it in the
 * solve) */
extern "C" int pl_cuda_ts_lanczos_preload(void)
{
    return pl_cuda_load(k_sel_gram<4>, k_sel_gram<8>, k_sel_gram<16>, k_sel_update<4>, k_sel_update<8>,
                        k_sel_update<16>, k_lz_step<4>, k_lz_step<8>, k_lz_step<16>);
}

template <int KT>
static int launch_sel_gram(pl_cuda_ctx *cx, int slot, int64_t n, int ka, const double *A, const double *B, int64_t ld)
{
    const int occ = occupancy(cx, slot, (const void *)k_sel_gram<KT>);
    const unsigned nb = grid_rows(cx, n, (int64_t)cx->nsm * occ);
    k_sel_gram<KT><<<nb, TS_BS, 0, cx->stream>>>(n, ka, A, B, ld, cx->d_ts_part, cx->d_ts_ticket, cx->d_ts_h);
    PL_CUDA_LAUNCH();
    return PL_OK;
}

extern "C" int pl_cuda_ts_sel_gram(pl_cuda_ctx *cx, size_t n, int ka, const double *A, const double *B, size_t ld)
{
    PL_CHECK(ka >= 1 && ka <= 16 && ka + 6 <= PL_TS_KMAX && n >= 1 && ld >= n, PL_ERR_ARG,
             "ts_sel_gram: n = %zu, ka = %d, ld = %zu", n, ka, ld);
    const int64_t nn = (int64_t)n, l = (int64_t)ld;
    /* slots of ts_occ: 24 (KT = 4), 25 (8), 26 (16) */
    if (ka <= 4) return launch_sel_gram<4>(cx, 24, nn, ka, A, B, l);
    if (ka <= 8) return launch_sel_gram<8>(cx, 25, nn, ka, A, B, l);
    return launch_sel_gram<16>(cx, 26, nn, ka, A, B, l);
}

extern "C" int pl_cuda_ts_sel_update(pl_cuda_ctx *cx, size_t n, int ka, const double *A, const double *h_ca,
                                     const double *B, const double *h_cb, size_t ld, double s, double *x)
{
    PL_CHECK(ka >= 0 && ka <= 16 && n >= 1 && ld >= n, PL_ERR_ARG, "ts_sel_update: n = %zu, ka = %d, ld = %zu", n,
             ka, ld);
    ts_hvec hp;
    for (int j = 0; j < PL_TS_KMAX; j++) hp.h[j] = 0.0;
    for (int j = 0; j < ka; j++) hp.h[j] = h_ca[j];
    hp.h[ka] = h_cb[0];
    hp.h[ka + 1] = h_cb[1];
    const int64_t nn = (int64_t)n, l = (int64_t)ld;
    const unsigned nb = grid_rows(cx, nn, (int64_t)cx->nsm * 16);
    if (ka <= 4) k_sel_update<4><<<nb, TS_BS, 0, cx->stream>>>(nn, ka, A, B, l, hp, s, x);
    else if (ka <= 8) k_sel_update<8><<<nb, TS_BS, 0, cx->stream>>>(nn, ka, A, B, l, hp, s, x);
    else k_sel_update<16><<<nb, TS_BS, 0, cx->stream>>>(nn, ka, A, B, l, hp, s, x);
    PL_CUDA_LAUNCH();
    return PL_OK;
}

template <int KT>
static int launch_lz_step(pl_cuda_ctx *cx, int slot, int64_t n, int ka, const double *A, const double *x, int64_t ld,
                          double beta, const double *d_dots, double *y)
{
    const int occ = occupancy(cx, slot, (const void *)k_lz_step<KT>);
    const unsigned nb = grid_rows(cx, n, (int64_t)cx->nsm * occ);
    k_lz_step<KT><<<nb, TS_BS, 0, cx->stream>>>(n, ka, A, x, ld, beta, d_dots, y, cx->d_ts_part, cx->d_ts_ticket,
                                                cx->d_ts_h);
    PL_CUDA_LAUNCH();
    return PL_OK;
}

extern "C" int pl_cuda_ts_lz_step(pl_cuda_ctx *cx, size_t n, int ka, const double *A, const double *x, size_t ld,
                                  double beta, const double *d_dots, double *y)
{
    PL_CHECK(ka >= 0 && ka <= 16 && PL_LZ_OUT + ka <= PL_TS_KMAX && n >= 1 && ld >= n, PL_ERR_ARG,
             "ts_lz_step: n = %zu, ka = %d, ld = %zu", n, ka, ld);
    const int64_t nn = (int64_t)n, l = (int64_t)ld;
    /* slots of ts_occ: 27 (KT = 4), 28 (8), 29 (16) */
    if (ka <= 4) return launch_lz_step<4>(cx, 27, nn, ka, A, x, l, beta, d_dots, y);
    if (ka <= 8) return launch_lz_step<8>(cx, 28, nn, ka, A, x, l, beta, d_dots, y);
    return launch_lz_step<16>(cx, 29, nn, ka, A, x, l, beta, d_dots, y);
}
