/* kron_hop_block.cu — variant 5 ("hop-smem", kron_hop.cu) for R vectors at
 * once: the measurement of the block product a block Lanczos would run on a
 * matrix-free operator (tests/gpu/kron_timing only, pl_cuda_kron_spmm_hop;
 * the solver does not use it).
 *
 * The question: the matrix-free product is bound by the latency of its
 * coupling operands x[l, lo/hi] (2 nterms gathers a row, 8 useful bytes of
 * each 32-byte sector).  With R row-major vectors (the R values of row i at
 * X + i R, kron_spmm's layout) one gather brings R values: does the time
 * per vector fall?  The block kernels of kron_block.cu do not stage x's
 * tile in shared memory, and cost 0.198-0.204 ms per vector at R = 2-8
 * against 0.148 ms for variant 5's single product (one H200, 2026-11-29).
 *
 * How: as kr_hs_kernel, a block owns a tile of rt = 32 / R right rows over
 * all left rows and stages x[:, tile] for its R vectors (n_left rt R
 * doubles: HMEp's 102 KB at any R), the coupling values after it.  Each
 * row's terms are summed in pl_kron.h's order with __dmul_rn / __dadd_rn,
 * so column v of Y is kron_apply's y of column v of X bit for bit
 * (kron_timing checks it with X's columns 2^v x).  R = 2 or 4, nterms
 * 0..8 (else PL_ERR_NOTSUP). */
#include <cuda_runtime.h>
#include <stdint.h>

#include "kron_impl.h"

#define KR_HB_THREADS 512

/* R consecutive doubles at p (16-byte aligned: R even) */
template <int R>
static __device__ __forceinline__ void kr_hb_ld(const double *p, double *v)
{
#pragma unroll
    for (int u = 0; u < R; u += 2) {
        const double2 t = __ldg(reinterpret_cast<const double2 *>(p + u));
        v[u] = t.x;
        v[u + 1] = t.y;
    }
}

template <int NT, int R>
static __global__ void __launch_bounds__(KR_HB_THREADS, 2) kr_hb_kernel(kr_args a, const double *__restrict__ c,
                                                                         int rt)
{
    extern __shared__ double sx[]; /* [(l rt + rr) R + v] */
    const int64_t nl = a.n_left, nr = a.n_right, r0 = (int64_t)blockIdx.x * rt;
    const int n = (int)nl * rt;
    for (int i = threadIdx.x; i < n * R; i += blockDim.x) {
        const int e = i / R, v = i % R;
        const int64_t l = e / rt, col = r0 + e % rt;
        sx[i] = col < nr ? __ldg(a.x + (l * nr + col) * R + v) : 0.0;
    }
    double *stab = sx + (size_t)n * R;
    for (int i = threadIdx.x; i < NT * rt; i += blockDim.x) {
        const int64_t r = r0 + i % rt, j = r * NT + i / rt;
        stab[i] = r < nr ? __ldg(a.lo_val + j) : 0.0;
        stab[NT * rt + i] = r < nr ? __ldg(a.hi_val + j) : 0.0;
    }
    __syncthreads();
    const int rr = threadIdx.x % rt;
    const int64_t r = r0 + rr;
    if (r >= nr) return;
    int32_t tlo[NT > 0 ? NT : 1], thi[NT > 0 ? NT : 1];
#pragma unroll
    for (int m = 0; m < NT; m++) {
        tlo[m] = __ldg(a.lo + r * NT + m);
        thi[m] = __ldg(a.hi + r * NT + m);
    }
    const double dr = __ldg(a.dr + r);
    for (int64_t l = threadIdx.x / rt; l < nl; l += blockDim.x / rt) {
        const double *srow = sx + (l * rt + rr) * R;
        const double d = __dadd_rn(__dadd_rn(__ldg(a.dl + l), dr), a.shift);
        double s[R];
#pragma unroll
        for (int v = 0; v < R; v++) s[v] = __dmul_rn(d, srow[v]);
#pragma unroll
        for (int m = 0; m < NT; m++) {
            const double cm = __ldg(c + l * NT + m);
            if (cm != 0.0) {
                double xlo[R], xhi[R];
                kr_hb_ld<R>(a.x + (l * nr + (tlo[m] >= 0 ? (int64_t)tlo[m] : r)) * R, xlo);
                kr_hb_ld<R>(a.x + (l * nr + (thi[m] >= 0 ? (int64_t)thi[m] : r)) * R, xhi);
                const double cl = __dmul_rn(cm, stab[m * rt + rr]), ch = __dmul_rn(cm, stab[(NT + m) * rt + rr]);
#pragma unroll
                for (int v = 0; v < R; v++) {
                    if (tlo[m] >= 0) s[v] = __dadd_rn(s[v], __dmul_rn(cl, xlo[v]));
                    if (thi[m] >= 0) s[v] = __dadd_rn(s[v], __dmul_rn(ch, xhi[v]));
                }
            }
        }
        const int64_t j1 = __ldg(a.a_ptr + l + 1);
        for (int64_t j = __ldg(a.a_ptr + l); j < j1; j++) {
            const double av = __ldg(a.a_val + j);
            const double *sc = sx + ((int64_t)__ldg(a.a_col + j) * rt + rr) * R;
#pragma unroll
            for (int v = 0; v < R; v++) s[v] = __dadd_rn(s[v], __dmul_rn(av, sc[v]));
        }
#pragma unroll
        for (int v = 0; v < R; v++) a.y[(l * nr + r) * R + v] = s[v];
    }
}

template <int NT, int R>
static int kr_hb_go(pl_cuda_ctx *cx, const pl_cuda_kron *m, const kr_args *a)
{
    const int rt = 32 / R;
    const size_t smem = (size_t)m->n_left * rt * R * 8 + (size_t)(2 * NT * rt) * 8;
    int optin = 0;
    PL_CUDA(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, cx->device));
    PL_CHECK(smem <= (size_t)optin, PL_ERR_NOTSUP, "kron hop block: %zu bytes of shared memory > %d", smem, optin);
    PL_CUDA(cudaFuncSetAttribute(kr_hb_kernel<NT, R>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    const int64_t tiles = (m->n_right + rt - 1) / rt;
    kr_hb_kernel<NT, R><<<(unsigned)tiles, KR_HB_THREADS, smem, cx->stream>>>(*a, m->c, rt);
    PL_CUDA_LAUNCH();
    return PL_OK;
}

template <int R>
struct kr_hb_go_f {
    pl_cuda_ctx *cx;
    const pl_cuda_kron *m;
    const kr_args *a;
    template <int NT>
    int go() const
    {
        if constexpr (NT < 0) return PL_ERR_NOTSUP; /* above 8 terms: not written */
        else return kr_hb_go<NT, R>(cx, m, a);
    }
};

/* pl_cuda_bench.h */
extern "C" int pl_cuda_kron_spmm_hop(pl_backend *be, const void *mat, int R, const double *X, double *Y)
{
    PL_CHECK_CUDA_BE(be);
    PL_CHECK(X && Y && (R == 2 || R == 4), PL_ERR_ARG, "kron_spmm_hop: R = %d (2 or 4) or NULL vectors", R);
    const pl_cuda_kron *m = (const pl_cuda_kron *)mat;
    if (m->variant != 5 || m->n_left * m->n_right == 0 || !m->c) return PL_ERR_NOTSUP;
    pl_cuda_ctx *cx = pl_cuda_ctx_of(be);
    kr_args k;
    pl_kr_args_of(m, X, Y, &k);
    return R == 2 ? pl_kr_nt_dispatch(m->nterms, kr_hb_go_f<2>{cx, m, &k})
                  : pl_kr_nt_dispatch(m->nterms, kr_hb_go_f<4>{cx, m, &k});
}
