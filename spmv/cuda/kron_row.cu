/* kron_row.cu — kernel variant 6 of the CUDA matrix-free operator,
 * "phonon-row": the right factors' gathers from shared memory (issue 26).
 *
 * The question it answers: variant 5 took the hopping A (x) 1 out of L2
 * and gained 0-8 % on HMEp; what is left are the couplings' ~2 nterms
 * gathers x[l, lo/hi] per row, scattered inside the slice x[l, :] (124 KB
 * at HMEp's size), through L1/L2.  What if those come from shared memory
 * and the hopping goes back to L2, where its operands are coalesced?
 *
 * How (the opposite tiling of variant 5): a block stages one left row
 * x[l, 0:n_right] into dynamic shared memory (HMEp 15,504 x 8 = 124 KB,
 * hh9 12,870 x 8 = 103 KB; 16-byte loads), so the diagonal's x[l, r] and
 * every coupling operand x[l, lo(r, m)], x[l, hi(r, m)] are shared-memory
 * reads.  A's row l (HMEp ~7 entries) is uniform across the block, staged
 * in shared memory; its operands x[l', r] are read coalesced from global
 * memory (L2), the first KR_PR_HB of them issued before the couplings are
 * summed so that their latency overlaps.  c[l, m] is uniform too: staged
 * in shared memory and read as broadcasts, the loop over m unrolled and a
 * row's NT table words loaded together into registers (NT = nterms <=
 * KR_PR_NTMAX, a template as in variants 2 and 5; above, the coupling
 * lists, not unrolled).  The right factors' tables are packed at
 * kron_create (pl_kron_pack16, spmv_impl.h): per (m, r) a 32-bit word of
 * two 16-bit columns and a 16-bit word of two 8-bit indices into a
 * dictionary of the distinct values (in shared memory beside the row),
 * m-major so a warp reads 128 + 64 contiguous bytes per m: 6 B per (r, m)
 * instead of 24 (variant 3) or 8 (variant 4), read by every block from L2
 * (HMEp: 465 KB in all).  y is written with evict-first stores (__stcs) so
 * that it does not push x, which the hopping re-reads, out of L2.
 *
 * Work: persistent blocks, G = the multiprocessors x the blocks that fit
 * one (PJDS_KRON_SPLIT overrides the latter, 1..64), each a contiguous
 * range of 32-row units of the rows (spmv/kron_rowpart.h): a block stages
 * each left row of its range once and the ranges differ by one unit, so
 * HMEp's 400 left rows on 132 multiprocessors leave no last wave of 4 rows
 * (variants 3 and 4, a block per left row or part of one, run 7 waves of
 * 132 parts of half a row at HMEp's size).  Where the left rows are many
 * (n_left >= 4 G: hh7, hh9, where this variant is the default), block b
 * takes the whole left rows b, b + G, b + 2G, ... instead: the rows in
 * flight are then G consecutive electron configurations, whose hopping
 * operands (mostly rows of the same up-spin configuration: l = u n_dn + d,
 * and a down-spin hop keeps u) are the same few MB of x, so they come from
 * L2 instead of memory.  One H200, 2026-11-29, kron_timing, medians of 50,
 * bit for bit the same y: hh9's size 7.29 / 7.28 ms contiguous against
 * 6.12 / 6.10 ms strided; hh7's size (variant 6 forced) 0.621 against
 * 0.515-0.518 ms; the hh9 solve (nev 1, 209 products) 2.86 against 2.67 s.
 * PJDS_KRON_ROWS = 1 or 2 forces contiguous ranges or strided rows.  KR_PR_THREADS threads, one
 * block of 124 KB per SM at HMEp's size (two at most where the row is at
 * most ~56 KB, registers permitting).
 *
 * Traffic per row (HMEp, nterms 5, ~7 entries of A): x staged 8 B, y 8 B,
 * dr 8 B, tables 30 B, hopping operands ~56 B (x is 49.6 MB, about L2's
 * size: mostly L2 hits); ~110 B/row from L2 at ~5.5-7 TB/s: 0.10-0.12 ms
 * if L2-bound, against variant 5's 0.156-0.171 ms; the floor 0.033 ms.
 *
 * Fits where x[l, :] and the dictionary fit a block's shared memory
 * (n_right <= ~28,000 on an H100) and the values pack (at most 256
 * distinct); else the operator falls back to variant 5 (then 2; kron.cu).
 * kron_spmm_aug of an operator on variant 6 runs the block kernel
 * (kron_block.cu): this variant has no aug form.  Each row's terms are
 * summed in pl_kron.h's order with __dmul_rn / __dadd_rn: the diagonal,
 * the couplings m ascending over c[l, m] != 0, lo before hi, then A's row
 * l in CSR order, so y is the CPU kernel's (cpu_kron.c) bit for bit
 * (gpu_kron_op checks it on every model and on random tables).
 *
 * Measurement plan: tests/gpu/kron_timing (every variant, one process,
 * medians of 50, bitwise against the CPU) on HMEp (no arguments) and at
 * hh9's size (9 5 4 1 4 1 1 8 normal periodic), with PJDS_KRON_SPLIT unset
 * and 2; compare variant 6 against 5 (HMEp) and 2 (hh9, where 5 does not
 * fit) of the same run.
 * Measured (one H100 80GB HBM3, 2026-11-26, commit fdb97a9, medians of 50,
 * every variant bit for bit the CPU's): HMEp variant 6 0.1561 ms (split
 * unset) and 0.1456 ms (split 2) against variant 5 0.1603 / 0.1567 ms in
 * the same processes; hh9's size (204 M rows, nterms 8) 8.446 / 8.174 ms
 * against variant 2's 13.18 ms (-38 %).  So the default (kron.cu) takes
 * variant 6 with split 2 where variant 5's tile does not fit (hh9: 15,876
 * left rows), and keeps 5 on HMEp (7 % slower there than 6, but its aug
 * form serves the spectral recursion's fused step). */
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdlib.h>

#include "kron_impl.h"
#include "kron_rowpart.h"

#define KR_PR_THREADS 1024 /* threads per block                            */
#define KR_PR_NTMAX 8      /* couplings unrolled, tables in registers      */
#define KR_PR_HMAX 64      /* entries of A's row / couplings staged        */
#define KR_PR_HB 8         /* hopping operands loaded ahead (4 where nterms */
                           /* > 6: 64 registers, spills of 16 B at 8)      */
#define KR_PR_HB_OF(NT) ((NT) > 6 ? KR_PR_HB / 2 : KR_PR_HB)

/* The packed tables (pl_kron_pack16's layout) in device memory. */
typedef struct kr_pr_tabs {
    const uint32_t *__restrict__ col;
    const uint16_t *__restrict__ val;
    const double *__restrict__ dict;
    int ndict;
} kr_pr_tabs;

/* x[l, :] (n doubles at xl) into sx (16-byte aligned), 16-byte loads where
 * xl is aligned, several in flight per thread. */
static __device__ void kr_pr_stage(const double *__restrict__ xl, int64_t n, double *sx)
{
    int64_t i0 = 0;
    if (((uintptr_t)xl & 15) == 0) {
        const double2 *x2 = (const double2 *)xl;
        double2 *s2 = (double2 *)sx;
        const int64_t n2 = n / 2;
#pragma unroll 4
        for (int64_t i = threadIdx.x; i < n2; i += blockDim.x) s2[i] = __ldg(x2 + i);
        i0 = n2 * 2;
    }
    for (int64_t i = i0 + threadIdx.x; i < n; i += blockDim.x) sx[i] = __ldg(xl + i);
}

/* s + (c sd[di]) x[l, col] for one half of a packed entry (col NONE: s). */
static __device__ __forceinline__ double kr_pr_term(double s, double c, uint32_t col, uint32_t di, const double *sd,
                                                    const double *sx)
{
    return col != PL_KRON_P16_NONE ? __dadd_rn(s, __dmul_rn(__dmul_rn(c, sd[di]), sx[col])) : s;
}

/* s + A's row (nh entries hc, hv) times x[:, r]: operands in batches of
 * HB, the first batch hx already loaded by the caller. */
template <int HB>
static __device__ __forceinline__ double kr_pr_hop(const kr_args &a, double s, int64_t r, int nh,
                                                   const int32_t *hc, const double *hv, double (&hx)[HB])
{
    for (int j0 = 0;; j0 += HB) {
#pragma unroll
        for (int k = 0; k < HB; k++)
            if (j0 + k < nh) s = __dadd_rn(s, __dmul_rn(hv[j0 + k], hx[k]));
        if (j0 + HB >= nh) return s;
#pragma unroll
        for (int k = 0; k < HB; k++)
            hx[k] = j0 + HB + k < nh ? __ldg(a.x + (int64_t)hc[j0 + HB + k] * a.n_right + r) : 0.0;
    }
}

/* The first batch of hopping operands of row (., r). */
template <int HB>
static __device__ __forceinline__ void kr_pr_hop_first(const kr_args &a, int64_t r, int nh, const int32_t *hc,
                                                       double (&hx)[HB])
{
#pragma unroll
    for (int k = 0; k < HB; k++) hx[k] = k < nh ? __ldg(a.x + (int64_t)hc[k] * a.n_right + r) : 0.0;
}

/* Row (l, r), NT = nterms couplings cm[] (shared memory). */
template <int NT>
static __device__ __forceinline__ double kr_pr_row(const kr_args &a, const kr_pr_tabs &tb, int64_t r, const double *sx,
                                                   const double *sd, double dl, const double *cm, int nh,
                                                   const int32_t *hc, const double *hv)
{
    const int64_t nr = a.n_right;
    uint32_t w[NT > 0 ? NT : 1], v[NT > 0 ? NT : 1];
#pragma unroll
    for (int m = 0; m < NT; m++) {
        w[m] = 0xFFFFFFFFu;
        v[m] = 0;
        if (cm[m] != 0.0) {
            w[m] = __ldg(tb.col + m * nr + r);
            v[m] = __ldg(tb.val + m * nr + r);
        }
    }
    double hx[KR_PR_HB_OF(NT)];
    kr_pr_hop_first(a, r, nh, hc, hx);
    double s = __dmul_rn(__dadd_rn(__dadd_rn(dl, __ldg(a.dr + r)), a.shift), sx[r]);
#pragma unroll
    for (int m = 0; m < NT; m++)
        if (cm[m] != 0.0) {
            s = kr_pr_term(s, cm[m], w[m] & 0xFFFFu, v[m] & 0xFFu, sd, sx);
            s = kr_pr_term(s, cm[m], w[m] >> 16, v[m] >> 8, sd, sx);
        }
    return kr_pr_hop(a, s, r, nh, hc, hv, hx);
}

/* The same for any nterms: the coupling list (na entries am, ac). */
static __device__ __forceinline__ double kr_pr_row_any(const kr_args &a, const kr_pr_tabs &tb, int64_t r,
                                                       const double *sx, const double *sd, double dl, int na,
                                                       const int32_t *am, const double *ac, int nh,
                                                       const int32_t *hc, const double *hv)
{
    const int64_t nr = a.n_right;
    double hx[KR_PR_HB_OF(KR_PR_NTMAX)];
    kr_pr_hop_first(a, r, nh, hc, hx);
    double s = __dmul_rn(__dadd_rn(__dadd_rn(dl, __ldg(a.dr + r)), a.shift), sx[r]);
    for (int i = 0; i < na; i++) {
        const int64_t j = (int64_t)am[i] * nr + r;
        const uint32_t w = __ldg(tb.col + j), v = __ldg(tb.val + j);
        s = kr_pr_term(s, ac[i], w & 0xFFFFu, v & 0xFFu, sd, sx);
        s = kr_pr_term(s, ac[i], w >> 16, v >> 8, sd, sx);
    }
    return kr_pr_hop(a, s, r, nh, hc, hv, hx);
}

/* Shared memory of the block (static part). */
typedef struct kr_pr_smem {
    int32_t hc[KR_PR_HMAX], am[KR_PR_HMAX];
    double hv[KR_PR_HMAX], ac[KR_PR_HMAX];
    double c[KR_PR_NTMAX]; /* c[l, m], m < NT (read as broadcasts: registers stay free) */
} kr_pr_smem;

/* Right rows [ra, rb) of left row l (uniform in the block: every thread
 * reaches the barriers). */
template <int NT>
static __device__ __forceinline__ void kr_pr_left(const kr_args &a, const double *__restrict__ c, const kr_pr_tabs &tb,
                                                  kr_pr_smem &ss, double *sx, const double *sd, int64_t l, int64_t ra,
                                                  int64_t rb)
{
    const int64_t nr = a.n_right;
    const int64_t h0 = __ldg(a.a_ptr + l), c0 = __ldg(a.act_ptr + l);
    const int nh = (int)(__ldg(a.a_ptr + l + 1) - h0), na = (int)(__ldg(a.act_ptr + l + 1) - c0);
    const bool hs = nh <= KR_PR_HMAX, cs = NT < 0 && na <= KR_PR_HMAX;
    __syncthreads(); /* the previous left row is done with shared memory */
    kr_pr_stage(a.x + l * nr, nr, sx);
    for (int i = threadIdx.x; hs && i < nh; i += blockDim.x) {
        ss.hc[i] = __ldg(a.a_col + h0 + i);
        ss.hv[i] = __ldg(a.a_val + h0 + i);
    }
    for (int i = threadIdx.x; cs && i < na; i += blockDim.x) {
        ss.am[i] = __ldg(a.act_m + c0 + i);
        ss.ac[i] = __ldg(a.act_c + c0 + i);
    }
    if (NT > 0 && threadIdx.x < (NT > 0 ? NT : 0)) ss.c[threadIdx.x] = __ldg(c + l * NT + threadIdx.x);
    __syncthreads();
    const int32_t *hc = hs ? ss.hc : a.a_col + h0, *am = cs ? ss.am : a.act_m + c0;
    const double *hv = hs ? ss.hv : a.a_val + h0, *ac = cs ? ss.ac : a.act_c + c0;
    const double dl = __ldg(a.dl + l);
    for (int64_t r = ra + threadIdx.x; r < rb; r += blockDim.x) {
        const double s = NT < 0 ? kr_pr_row_any(a, tb, r, sx, sd, dl, na, am, ac, nh, hc, hv)
                                : kr_pr_row<(NT < 0 ? 0 : NT)>(a, tb, r, sx, sd, dl, ss.c, nh, hc, hv);
        __stcs(a.y + l * nr + r, s); /* evict-first: keep x in L2 */
    }
}

/* Block b: the units [unit0(b), unit0(b + 1)) of kron_rowpart.h, or
 * (strided) the whole left rows b, b + G, ...  NT >= 0: nterms = NT (dense
 * couplings c); NT < 0: any nterms (coupling lists). */
template <int NT>
static __global__ void __launch_bounds__(KR_PR_THREADS, 1)
    kr_pr_kernel(kr_args a, const double *__restrict__ c, kr_pr_tabs tb, int64_t units, int strided)
{
    extern __shared__ double2 sh2[]; /* x[l, :] (n_right rounded up to even), then the dictionary */
    __shared__ kr_pr_smem ss;
    double *sx = (double *)sh2;
    const int64_t nr = a.n_right, cpr = pl_kp_cpr(nr);
    double *sd = sx + (nr + 1) / 2 * 2;
    for (int i = threadIdx.x; i < tb.ndict; i += blockDim.x) sd[i] = __ldg(tb.dict + i);
    if (strided) {
        for (int64_t l = blockIdx.x; l < a.n_left; l += gridDim.x) kr_pr_left<NT>(a, c, tb, ss, sx, sd, l, 0, nr);
        return;
    }
    const int64_t u0 = pl_kp_unit0(units, gridDim.x, blockIdx.x), u1 = pl_kp_unit0(units, gridDim.x, blockIdx.x + 1);
    if (u0 >= u1) return; /* uniform: no barrier skipped by part of the block */
    for (int64_t l = u0 / cpr; l <= (u1 - 1) / cpr; l++) {
        int64_t ra, rb;
        pl_kp_rows(nr, cpr, u0, u1, l, &ra, &rb);
        kr_pr_left<NT>(a, c, tb, ss, sx, sd, l, ra, rb);
    }
}

/* ---- host ---------------------------------------------------------------- */

/* f(kernel of nterms nt): the template instance the operator launches. */
#define KR_PR_DISPATCH(nt, F, ...)                                                                                     \
    switch (nt) {                                                                                                    \
    case 0: return F<0>(__VA_ARGS__);                                                                                \
    case 1: return F<1>(__VA_ARGS__);                                                                                \
    case 2: return F<2>(__VA_ARGS__);                                                                                \
    case 3: return F<3>(__VA_ARGS__);                                                                                \
    case 4: return F<4>(__VA_ARGS__);                                                                                \
    case 5: return F<5>(__VA_ARGS__);                                                                                \
    case 6: return F<6>(__VA_ARGS__);                                                                                \
    case 7: return F<7>(__VA_ARGS__);                                                                                \
    case 8: return F<8>(__VA_ARGS__);                                                                                \
    default: return F<-1>(__VA_ARGS__);                                                                              \
    }

/* The kernel's limits for smem bytes of dynamic shared memory: *fits = 0
 * where they exceed the device's; else the attribute set and *nb the
 * blocks per multiprocessor. */
template <int NT>
static int kr_pr_limits(const pl_cuda_ctx *cx, size_t smem, int *fits, int *nb)
{
    int optin = 0;
    cudaFuncAttributes fa;
    PL_CUDA(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, cx->device));
    PL_CUDA(cudaFuncGetAttributes(&fa, kr_pr_kernel<NT>));
    *fits = 0;
    *nb = 0;
    if ((int64_t)smem + (int64_t)fa.sharedSizeBytes > (int64_t)optin) return PL_OK;
    PL_CUDA(cudaFuncSetAttribute(kr_pr_kernel<NT>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    PL_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(nb, kr_pr_kernel<NT>, KR_PR_THREADS, smem));
    *fits = *nb > 0;
    return PL_OK;
}

static int kr_pr_limits_of(const pl_cuda_ctx *cx, int nt, size_t smem, int *fits, int *nb)
{
    KR_PR_DISPATCH(nt, kr_pr_limits, cx, smem, fits, nb)
}

/* The packed tables of k into m (host, then device); *ok = 0 where they do not pack. */
static int kr_pr_upload(pl_cuda_ctx *cx, const pl_kron *k, pl_cuda_kron *m, int *ok)
{
    const size_t n = (size_t)k->n_right * (size_t)k->nterms;
    uint32_t *col = (uint32_t *)malloc((n ? n : 1) * sizeof *col);
    uint16_t *val = (uint16_t *)malloc((n ? n : 1) * sizeof *val);
    double dict[PL_KRON_P16_DICT];
    int rc = PL_OK;
    *ok = 0;
    if (!col || !val) rc = PL_ERROR(PL_ERR_MEM, "out of host memory for variant 6's tables");
    if (rc == PL_OK) *ok = pl_kron_pack16(k, col, val, dict, &m->pk_ndict);
    if (rc == PL_OK && *ok) {
        rc = pl_cuda_upload_array(cx, (void **)&m->rp_col, col, n * sizeof *col, &m->bytes);
        if (rc == PL_OK) rc = pl_cuda_upload_array(cx, (void **)&m->rp_val, val, n * sizeof *val, &m->bytes);
        if (rc == PL_OK)
            rc = pl_cuda_upload_array(cx, (void **)&m->pk_dict, dict, PL_KRON_P16_DICT * sizeof(double), &m->bytes);
        const cudaError_t e = cudaStreamSynchronize(cx->stream); /* before col, val, dict go */
        if (rc == PL_OK && e != cudaSuccess)
            rc = PL_ERROR(PL_ERR_CUDA, "cudaStreamSynchronize: %s", cudaGetErrorString(e));
    }
    free(col);
    free(val);
    return rc;
}

int pl_kr_prow_setup(pl_cuda_ctx *cx, const pl_kron *k, pl_cuda_kron *m, int split, int *fits)
{
    *fits = 0;
    const size_t room = ((size_t)k->n_right + 1) / 2 * 2 + PL_KRON_P16_DICT; /* doubles, at most */
    int nb = 0, ok = 0;
    if (k->n_right >= (int64_t)PL_KRON_P16_NONE) return PL_OK;
    PL_CALL(kr_pr_limits_of(cx, k->nterms, room * 8, fits, &nb));
    if (!*fits) return PL_OK;
    PL_CALL(kr_pr_upload(cx, k, m, &ok));
    if (!ok) { /* more distinct values than the dictionary holds */
        *fits = 0;
        return PL_OK;
    }
    m->smem = (((size_t)k->n_right + 1) / 2 * 2 + (size_t)(m->pk_ndict > 0 ? m->pk_ndict : 1)) * 8;
    PL_CALL(kr_pr_limits_of(cx, k->nterms, m->smem, fits, &nb));
    PL_CHECK(*fits, PL_ERR_CUDA, "kron variant 6: %zu bytes of shared memory fitted, %zu do not", room * 8, m->smem);
    m->split = split > 0 ? split : nb;
    return PL_OK;
}

template <int NT>
static int kr_pr_go(pl_cuda_ctx *cx, const pl_cuda_kron *m, const kr_args *a)
{
    const int64_t units = m->n_left * pl_kp_cpr(m->n_right);
    int64_t g = (int64_t)cx->nsm * m->split;
    if (g > units) g = units;
    const int strided = m->pr_strided >= 0 ? m->pr_strided : m->n_left >= 4 * g;
    if (strided && g > m->n_left) g = m->n_left;
    if (g > (int64_t)INT32_MAX) g = INT32_MAX;
    PL_CHECK(g >= 1 && units <= INT64_MAX / g, PL_ERR_NOTSUP, "kron variant 6: %lld units on %lld blocks",
             (long long)units, (long long)g);
    const kr_pr_tabs tb = {m->rp_col, m->rp_val, m->pk_dict, m->pk_ndict};
    kr_pr_kernel<NT><<<(unsigned)g, KR_PR_THREADS, m->smem, cx->stream>>>(*a, m->c, tb, units, strided);
    PL_CUDA_LAUNCH();
    return PL_OK;
}

int pl_kr_launch_prow(pl_cuda_ctx *cx, const pl_cuda_kron *m, const kr_args *a)
{
    KR_PR_DISPATCH(m->nterms, kr_pr_go, cx, m, a)
}
