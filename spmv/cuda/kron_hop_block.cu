/* kron_hop_block.cu — variant 5 ("hop-smem", kron_hop.cu) for blocks of
 * vectors: be->kron_spmm and kron_spmm_aug (the KPM step with its column
 * dots) of an operator whose kernel is variant 5, for an even R up to 8 (issue 25's
 * SpMMV that reads the operator once for several vectors; kron_block.cu
 * calls it and keeps its own kernels for odd R, the other variants and
 * more than 8 terms).
 *
 * Why: the matrix-free product is bound by the latency of its coupling
 * operands x[l, lo/hi] (2 nterms gathers a row, 8 useful bytes of each
 * 32-byte sector).  kron_block.cu's kernels read them for R columns at once
 * but do not stage x's tile.  Per vector (kron_timing, HMEp, one H200,
 * 2026-11-29, medians of 50; Y = H X / the aug step): theirs 0.198 / 0.222
 * ms at R = 4, 0.200 / 0.224 at R = 8, 0.202 / 0.226 at R = 16; this
 * kernel 0.124 / 0.146 at R = 2, 0.128 / 0.153 at R = 4 and 0.152 / 0.187
 * at R = 8 (RB = 4), but 0.235 / 0.316 at R = 16 (and 0.325 / 0.422 with
 * the column groups in blockIdx.y instead of beside each other): a group's
 * 32-byte pieces of 128-byte rows cost more than they save.  RB = 8 (rt 4)
 * spilled 396 bytes in the aug step and took 0.165 / 0.262 at R = 8.  The
 * single product takes 0.145-0.148 ms.
 *
 * How: as kr_hs_kernel, a block owns a tile of rt = 32 / RB right rows over
 * all left rows and stages x[:, tile] for RB columns of the R (n_left rt RB
 * doubles: HMEp's 102 KB at any RB), the tile's coupling values after it;
 * the R / RB column groups of a tile run in consecutive blocks (c0 = RB
 * (blockIdx.x mod R / RB)).  A coupling operand brings the RB adjacent
 * values of its row in 16-byte loads (X, Y 16-byte aligned, R even).  Each
 * value's terms are summed in pl_kron.h's order with __dmul_rn /
 * __dadd_rn, so column v of Y is kron_apply's y of column v of X bit for
 * bit; the aug step forms ((alpha s) + (gamma x)) + (beta y) as the CPU
 * does, with the tile's sums x.x, y.x per column into part[tile 2R + c]
 * and part[tile 2R + R + c] (kron_block.cu adds the tiles).
 *
 * Where: R even and at most 8 (RB 4 where 4 divides R, else 2); above 8
 * kron_block.cu's kernels.  PJDS_KRON_BLOCK (read at kron_create, kron.cu)
 * = 2 or 4 uses that width for every R it divides, 0 never (for A/B and the
 * tests).  Terms 0..8 (the tile's coupling values in shared memory). */
#include <cuda_runtime.h>
#include <stdint.h>

#include "kron_impl.h"

#define KR_HB_THREADS 512
#define KR_HB_WARPS (KR_HB_THREADS / 32)
#define KR_HB_RBMAX 4
#define KR_HB_RMAX 8 /* the width by R: up to 8 vectors */

namespace {

/* RB consecutive doubles at p (16-byte aligned) */
template <int RB>
__device__ __forceinline__ void hb_ld(const double *p, double *v)
{
#pragma unroll
    for (int u = 0; u < RB; u += 2) {
        const double2 t = __ldg(reinterpret_cast<const double2 *>(p + u));
        v[u] = t.x;
        v[u + 1] = t.y;
    }
}

/* The tile's sums d1 (x.x), d2 (y.x) of its RB columns into part: every
 * thread of the block holds the same columns; shuffles, then the warps. */
template <int RB>
__device__ __forceinline__ void hb_dots(double *d1, double *d2, int R, int c0, double *__restrict__ part)
{
    __shared__ double red[KR_HB_WARPS][2 * RB];
#pragma unroll
    for (int v = 0; v < RB; v++)
        for (int o = 16; o > 0; o /= 2) {
            d1[v] += __shfl_down_sync(0xffffffffu, d1[v], o);
            d2[v] += __shfl_down_sync(0xffffffffu, d2[v], o);
        }
    const int w = threadIdx.x / 32;
    if (threadIdx.x % 32 == 0)
#pragma unroll
        for (int v = 0; v < RB; v++) {
            red[w][v] = d1[v];
            red[w][RB + v] = d2[v];
        }
    __syncthreads();
    if (threadIdx.x < 2 * RB) {
        double t = 0.0;
        for (int i = 0; i < KR_HB_WARPS; i++) t += red[i][threadIdx.x];
        const int k = threadIdx.x, c = k < RB ? c0 + k : R + c0 + k - RB;
        part[(int64_t)(blockIdx.x / (R / RB)) * 2 * R + c] = t;
    }
}

template <int NT, int RB, bool AUG>
__global__ void __launch_bounds__(KR_HB_THREADS, 2) hb_kernel(kr_args a, const double *__restrict__ c, int R)
{
    constexpr int rt = 32 / RB;
    extern __shared__ double sx[]; /* [(l rt + rr) RB + v] */
    const int ng = R / RB, tile = (int)(blockIdx.x / ng); /* the column groups of a tile in consecutive blocks */
    const int64_t nl = a.n_left, nr = a.n_right, r0 = (int64_t)tile * rt;
    const int c0 = RB * (int)(blockIdx.x % ng), n = (int)nl * rt;
    for (int i = threadIdx.x; i < n * RB; i += blockDim.x) {
        const int e = i / RB, v = i % RB;
        const int64_t l = e / rt, col = r0 + e % rt;
        sx[i] = col < nr ? __ldg(a.x + (l * nr + col) * R + c0 + v) : 0.0;
    }
    double *stab = sx + (size_t)n * RB;
    for (int i = threadIdx.x; i < NT * rt; i += blockDim.x) {
        const int64_t r = r0 + i % rt, j = r * NT + i / rt;
        stab[i] = r < nr ? __ldg(a.lo_val + j) : 0.0;
        stab[NT * rt + i] = r < nr ? __ldg(a.hi_val + j) : 0.0;
    }
    __syncthreads();
    const int rr = threadIdx.x % rt;
    const int64_t r = r0 + rr;
    double d1[RB], d2[RB];
#pragma unroll
    for (int v = 0; v < RB; v++) d1[v] = d2[v] = 0.0;
    if (r < nr) {
        int32_t tlo[NT > 0 ? NT : 1], thi[NT > 0 ? NT : 1];
#pragma unroll
        for (int m = 0; m < NT; m++) {
            tlo[m] = __ldg(a.lo + r * NT + m);
            thi[m] = __ldg(a.hi + r * NT + m);
        }
        const double dr = __ldg(a.dr + r);
        for (int64_t l = threadIdx.x / rt; l < nl; l += blockDim.x / rt) {
            const double *srow = sx + (l * rt + rr) * RB;
            const double d = __dadd_rn(__dadd_rn(__ldg(a.dl + l), dr), a.shift);
            const double *xl = a.x + l * nr * R + c0;
            double s[RB];
#pragma unroll
            for (int v = 0; v < RB; v++) s[v] = __dmul_rn(d, srow[v]);
#pragma unroll
            for (int m = 0; m < NT; m++) {
                const double cm = __ldg(c + l * NT + m);
                if (cm != 0.0) {
                    double xlo[RB], xhi[RB];
                    hb_ld<RB>(xl + (tlo[m] >= 0 ? (int64_t)tlo[m] : r) * R, xlo);
                    hb_ld<RB>(xl + (thi[m] >= 0 ? (int64_t)thi[m] : r) * R, xhi);
                    const double cl = __dmul_rn(cm, stab[m * rt + rr]), ch = __dmul_rn(cm, stab[(NT + m) * rt + rr]);
#pragma unroll
                    for (int v = 0; v < RB; v++) {
                        if (tlo[m] >= 0) s[v] = __dadd_rn(s[v], __dmul_rn(cl, xlo[v]));
                        if (thi[m] >= 0) s[v] = __dadd_rn(s[v], __dmul_rn(ch, xhi[v]));
                    }
                }
            }
            const int64_t j1 = __ldg(a.a_ptr + l + 1);
            for (int64_t j = __ldg(a.a_ptr + l); j < j1; j++) {
                const double av = __ldg(a.a_val + j);
                const double *sc = sx + ((int64_t)__ldg(a.a_col + j) * rt + rr) * RB;
#pragma unroll
                for (int v = 0; v < RB; v++) s[v] = __dadd_rn(s[v], __dmul_rn(av, sc[v]));
            }
            double *yo = a.y + (l * nr + r) * R + c0;
#pragma unroll
            for (int v = 0; v < RB; v++) {
                if (!AUG) {
                    yo[v] = s[v];
                    continue;
                }
                const double xv = srow[v];
                const double yn =
                    __dadd_rn(__dadd_rn(__dmul_rn(a.alpha, s[v]), __dmul_rn(a.gamma, xv)), __dmul_rn(a.beta, yo[v]));
                yo[v] = yn;
                d1[v] = __dadd_rn(d1[v], __dmul_rn(xv, xv));
                d2[v] = __dadd_rn(d2[v], __dmul_rn(yn, xv));
            }
        }
    }
    if (AUG) hb_dots<RB>(d1, d2, R, c0, a.part);
}

/* One launch; the kernel's shared memory limit set just before it (a host
 * call), so that the kernel loads at the first block product that needs it
 * instead of at every kron_create (a solve runs none). */
template <int NT, int RB, bool AUG>
int hb_launch(pl_cuda_ctx *cx, const pl_cuda_kron *m, const kr_args *a, int R)
{
    constexpr int rt = 32 / RB;
    const unsigned grid = (unsigned)(pl_kr_hb_tiles(m, RB) * (R / RB));
    const size_t smem = (size_t)m->n_left * 32 * 8 + (size_t)(2 * NT * rt) * 8;
    PL_CUDA(cudaFuncSetAttribute(hb_kernel<NT, RB, AUG>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    hb_kernel<NT, RB, AUG><<<grid, KR_HB_THREADS, smem, cx->stream>>>(*a, m->c, R);
    PL_CUDA_LAUNCH();
    return PL_OK;
}

struct hb_go_f {
    pl_cuda_ctx *cx;
    const pl_cuda_kron *m;
    const kr_args *a;
    int R, rb;
    bool aug;
    template <int NT>
    int go() const
    {
        if constexpr (NT < 0) return PL_ERR_NOTSUP; /* above 8 terms: pl_kr_hb_setup declined */
        else if (rb == 2) return aug ? hb_launch<NT, 2, true>(cx, m, a, R) : hb_launch<NT, 2, false>(cx, m, a, R);
        else return aug ? hb_launch<NT, 4, true>(cx, m, a, R) : hb_launch<NT, 4, false>(cx, m, a, R);
    }
};

} // namespace

/* Does the staged tile fit a block of a device with optin bytes of shared
 * memory: x's tile (rt RB = 32 values a left row), the coupling values of
 * rt = 16 right rows at most, the dots. */
static int hb_fits(int optin, int64_t n_left, int nterms)
{
    if (nterms > 8 || n_left <= 0 || n_left * 32 > (int64_t)INT32_MAX) return 0;
    const size_t smem = (size_t)n_left * 32 * 8 + (size_t)(2 * nterms * 16) * 8;
    return smem + (size_t)KR_HB_WARPS * 2 * KR_HB_RBMAX * 8 <= (size_t)optin;
}

int pl_kr_hb_setup(const pl_cuda_ctx *cx, pl_cuda_kron *m, int want)
{
    m->hb = 0;
    if (want == 0 || m->variant != 5 || m->n_left * m->n_right == 0) return PL_OK;
    int optin = 0;
    PL_CUDA(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, cx->device));
    if (!hb_fits(optin, m->n_left, m->nterms)) return PL_OK;
    m->hb = want < 0 ? -1 : want;
    return PL_OK;
}

/* spmv.h: the GPU of node-local rank local_rank (local_rank mod the device
 * count, as pl_backend_create picks it) */
extern "C" int pl_cuda_kron_block_fits(int local_rank, int64_t n_left, int nterms)
{
    const int nd = pl_cuda_device_count();
    int optin = 0;
    if (nd <= 0) return 0;
    if (cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, local_rank % nd) != cudaSuccess) {
        (void)cudaGetLastError(); /* no answer: no tile, and no error left for a later check */
        return 0;
    }
    return hb_fits(optin, n_left, nterms);
}

int pl_kr_hb_width(const pl_cuda_kron *m, int R, const double *X, const double *Y)
{
    if (m->hb == 0 || R < 2 || R % 2 || ((uintptr_t)X | (uintptr_t)Y) % 16) return 0;
    if (m->hb > 0) return R % m->hb == 0 ? m->hb : 0;
    return R > KR_HB_RMAX ? 0 : R % 4 == 0 ? 4 : 2;
}

int64_t pl_kr_hb_tiles(const pl_cuda_kron *m, int rb) { return (m->n_right + 32 / rb - 1) / (32 / rb); }

int pl_kr_launch_hb(pl_cuda_ctx *cx, const pl_cuda_kron *m, int R, int rb, const kr_args *a, int aug)
{
    PL_CHECK(pl_kr_hb_tiles(m, rb) * (R / rb) <= (int64_t)INT32_MAX, PL_ERR_NOTSUP, "kron block: too many tiles for one launch");
    return pl_kr_nt_dispatch(m->nterms, hb_go_f{cx, m, a, R, rb, aug != 0});
}
