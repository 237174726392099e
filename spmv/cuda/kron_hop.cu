/* kron_hop.cu — kernel variant 5 of the CUDA matrix-free operator,
 * "hop-smem": the hopping A (x) 1 from shared memory (issue 26).
 *
 * The question it answers: variants 1-4 read the hopping's operands
 * x[l', r] (one per entry of A's row l; HMEp ~7 per row) from L2 or
 * memory, because x (49.6 MB at HMEp's size) is as large as L2.  Is that
 * what keeps variant 2 at 3.6x its floor?
 *
 * How: a block owns a tile of `rt` consecutive right rows (rt = 32, or 16
 * or 8 by PJDS_KRON_CHUNK) over ALL left rows.  It stages x[:, tile]
 * (n_left x rt doubles, coalesced rows of rt * 8 bytes) into dynamic
 * shared memory once, so every hopping operand and the diagonal's x[l, r]
 * come from shared memory and x is read from memory about once.  Thread t
 * owns right row r = r0 + t % rt (its coupling indices, NT terms, in
 * registers as in variant 2; their values in shared memory beside the
 * tile) and left rows t / rt, t / rt + 512 / rt, ...
 * The couplings' operands x[l, lo/hi] are read through the read-only cache
 * (L1/L2); c[l, m] and A's row l are uniform across a row's rt lanes.
 *
 * Measured (2026-11-25, tests/gpu/kron_timing, HMEp, medians of 50, with
 * variant 2 in the same run): one H100 rt 32 with 512 threads 0.171 ms
 * against 0.170 (with 256 threads 0.286 ms: two blocks of 102 KB per SM
 * leave too few warps; rt 16 0.192 ms; the couplings' operands from the
 * staged tile where the column falls in it, through a generic pointer,
 * 0.194 ms); another H100 0.156 against 0.168 ms; an H200 0.155 against
 * 0.165 ms.  So the hopping's L2 traffic is a small part of variant 2's
 * time: the ~2 nterms gathers x[l, lo/hi] per row are the rest.  The
 * default where rt 32 fits (kron.cu).
 *
 * Fits where n_left * rt * 8 bytes fit a block's shared memory (HMEp: 400
 * x 32 x 8 = 102 KB, two blocks per SM on an H100); else rt is halved, and
 * below 8 the operator falls back to variant 2 (kron.cu).  Each row's
 * terms are summed in pl_kron.h's order with __dmul_rn / __dadd_rn: the
 * CPU kernel's result bit for bit (gpu_kron_op checks every variant).
 *
 * Three modes of one kernel: the product; the KPM step (aug: alpha s +
 * gamma x + beta y with the sums x.x, y.x); the Lanczos step (lz,
 * be->kron_lz: y = s - beta z with x.x, y.x, y.y, z.y, z.x, so that
 * lanczos needs no Gram pass after the product).  Measured (2026-11-26,
 * one H100, tests/gpu/kron_timing, HMEp, medians of 50, events around the
 * call and its download of the sums): product 0.157-0.159 ms, aug 0.199-
 * 0.206 ms, lz 0.236-0.244 ms, with the coupling tables in registers; the
 * lz mode spilled 56 bytes a thread at HMEp's 5 terms (ncu: 214 us against
 * the product's 152 us, L1 hit rate 32 % against 49 %).  With the coupling
 * values in shared memory (kr_hs_rows, 2026-11-26): product 0.151-0.152
 * ms, aug 0.188-0.190 ms, lz 0.191-0.194 ms (ncu 168 us, no spills), and
 * HMEp's Lanczos step 0.417-0.420 ms against 0.459-0.470 ms composed (5
 * pairs).  Tried: z loaded at the top of each row (0.244 ms),
 * one block per multiprocessor with 128 registers (0.301), z past L1
 * (__ldcs, __ldcg: the same 0.241 ms).
 *
 * A fourth mode, lzin, measures the next lever and is not used by the
 * solver (kron_timing only, pl_cuda_kron_lz_in): the local step in one
 * kernel, the update of its input x = (w - alpha z) / b made on the fly
 * from the last product's output w (staged once, written to the basis,
 * and at every coupling operand: two loads instead of one), so that no
 * update pass runs between two products.  Measured (2026-11-29, one H200,
 * HMEp, medians of 50, 3 runs): 0.218-0.219 ms of kernels, 0.228-0.230 ms
 * with the sums' download, against 0.229-0.230 ms for kron_lz + lz_step
 * with its round trip; the same bits.  The doubled operand loads cost
 * what the 3-column pass saved (the product is bound by the operands'
 * latency), so the solver keeps the two-kernel step. */
#include <cuda_runtime.h>
#include <stdint.h>

#include "kron_impl.h"
#include "lz_coef.h"

#define KR_HS_THREADS 512 /* threads per block                          */
#define KR_HS_NTMAX 8     /* coupling tables held per tile up to this  */
#define KR_HS_MINB 2      /* blocks per SM (registers <= 64 a thread)  */

/* The kernel's modes: the product alone, the KPM step (aug), the Lanczos
 * step (lz). */
#define KR_HS_PLAIN 0
#define KR_HS_AUG 1
#define KR_HS_LZ 2
#define KR_HS_LZIN 3 /* lz with its input's update fused (kron_timing only) */
#define KR_HS_ND(MODE) ((MODE) >= KR_HS_LZ ? 5 : 2) /* dots per tile */

/* The input update of the lzin mode: x = s (w_in - a z), s = 1 / b. */
struct kr_in {
    double a, s, b;
};

/* x[i]: the input vector, or in the lzin mode made from w_in and z with
 * k_lz_step's roundings (the same bits as the composed step). */
template <int MODE>
static __device__ __forceinline__ double kr_hs_x(const kr_args &a, const kr_in &q, int64_t i)
{
    if (MODE == KR_HS_LZIN) return __dmul_rn(q.s, __dsub_rn(__ldg(a.w_in + i), __dmul_rn(q.a, __ldg(a.z + i))));
    return __ldg(a.x + i);
}

/* y[l, r] = s; aug (pl_kr_launch_hop_aug): ((alpha s) + (gamma x)) +
 * (beta y), rounded as the CPU's aug step, with the dots x.x, y.x; lz
 * (pl_kr_launch_hop_lz): s - (beta z) with x.x, y.x, y.y, z.y, z.x. */
template <int MODE>
static __device__ __forceinline__ void kr_hs_store(const kr_args &a, const kr_in &q, int64_t i, double s, double xv,
                                                   double *dd)
{
    if (MODE == KR_HS_PLAIN) {
        a.y[i] = s;
        return;
    }
    if (MODE == KR_HS_LZ || MODE == KR_HS_LZIN) {
        const double zv = __ldg(a.z + i), yn = __dsub_rn(s, __dmul_rn(MODE == KR_HS_LZIN ? q.b : a.beta, zv));
        a.y[i] = yn;
        dd[0] += xv * xv;
        dd[1] += yn * xv;
        dd[2] += yn * yn;
        dd[3] += zv * yn;
        dd[4] += zv * xv;
        return;
    }
    const double yn = __dadd_rn(__dadd_rn(__dmul_rn(a.alpha, s), __dmul_rn(a.gamma, xv)), __dmul_rn(a.beta, a.y[i]));
    a.y[i] = yn;
    dd[0] += xv * xv;
    dd[1] += yn * xv;
}

/* The lz and aug modes read z[i] (y[i]) after the row's sums: asked into
 * L2 at the row's start, so that the load overlaps the gathers instead of
 * adding its latency to each row.  One H200, HMEp (2026-11-29, 2 runs of
 * kron_timing and 3 solves each way, alternating): kron_lz 0.198-0.200 ms
 * against 0.203, the aug step 0.185-0.191 against 0.191-0.194, the solve's
 * step 0.309-0.311 against 0.314-0.316 ms, the same bits; loading z into a
 * register there instead (64 registers already) gained nothing. */
template <int MODE>
static __device__ __forceinline__ void kr_hs_prefetch(const kr_args &a, int64_t i)
{
    if (MODE == KR_HS_LZ) asm volatile("prefetch.global.L2 [%0];" ::"l"(a.z + i));
    if (MODE == KR_HS_AUG) asm volatile("prefetch.global.L2 [%0];" ::"l"(a.y + i));
}

/* Every mode keeps the tile's coupling values (2 NT rt doubles) in shared
 * memory after x's tile instead of in registers (the indices stay there).
 * With the sums of the aug and lz modes the tables in registers passed the
 * 64-register cap (NT = 5: 56 bytes spilled in the lz mode, and the
 * spills' L1 traffic evicted the gathers' lines: L1 hit rate 49 % -> 32 %,
 * ncu, HMEp); the product spilled from NT = 7, and at HMEp's NT = 5 it
 * takes 0.151-0.152 ms instead of 0.157 (kron_timing, 3 pairs). */
static size_t kr_hs_tab_bytes(int nt, int rt) { return nt > 0 && nt <= KR_HS_NTMAX ? (size_t)(2 * nt * rt) * 8 : 0; }

/* Left rows l = l0, l0 + ls, ... of right row r (lane rr of the tile);
 * stab: the tile's coupling values, value m of lane rr at stab[m rt + rr]
 * (lo) and stab[(NT + m) rt + rr] (hi). */
template <int NT, int MODE>
static __device__ void kr_hs_rows(const kr_args &a, const kr_in &q, const double *__restrict__ c, const double *sx,
                                  const double *stab, int rt, int64_t r0, int rr, int l0, int ls, double *dd)
{
    const int64_t nr = a.n_right, r = r0 + rr;
    int32_t tlo[NT > 0 ? NT : 1], thi[NT > 0 ? NT : 1];
#pragma unroll
    for (int m = 0; m < NT; m++) {
        tlo[m] = __ldg(a.lo + r * NT + m);
        thi[m] = __ldg(a.hi + r * NT + m);
    }
    const double dr = __ldg(a.dr + r);
    for (int64_t l = l0; l < a.n_left; l += ls) {
        const int64_t xl = l * nr;
        const double *srow = sx + l * rt;
        kr_hs_prefetch<MODE>(a, xl + r);
        double s = __dmul_rn(__dadd_rn(__dadd_rn(__ldg(a.dl + l), dr), a.shift), srow[rr]);
#pragma unroll
        for (int m = 0; m < NT; m++) {
            const double cm = __ldg(c + l * NT + m);
            if (cm != 0.0) {
                const double xlo = kr_hs_x<MODE>(a, q, xl + (tlo[m] >= 0 ? (int64_t)tlo[m] : r));
                const double xhi = kr_hs_x<MODE>(a, q, xl + (thi[m] >= 0 ? (int64_t)thi[m] : r));
                const double lv = stab[m * rt + rr], hv = stab[(NT + m) * rt + rr];
                if (tlo[m] >= 0) s = __dadd_rn(s, __dmul_rn(__dmul_rn(cm, lv), xlo));
                if (thi[m] >= 0) s = __dadd_rn(s, __dmul_rn(__dmul_rn(cm, hv), xhi));
            }
        }
        const int64_t j1 = __ldg(a.a_ptr + l + 1);
        for (int64_t j = __ldg(a.a_ptr + l); j < j1; j++)
            s = __dadd_rn(s, __dmul_rn(__ldg(a.a_val + j), sx[(int64_t)__ldg(a.a_col + j) * rt + rr]));
        kr_hs_store<MODE>(a, q, l * nr + r, s, srow[rr], dd);
    }
}

/* The same for any nterms: the coupling lists and tables from memory. */
template <int MODE>
static __device__ void kr_hs_rows_any(const kr_args &a, const kr_in &q, const double *sx, int rt, int64_t r0, int rr,
                                      int l0, int ls, double *dd)
{
    const int64_t nr = a.n_right, nt = a.nterms, r = r0 + rr;
    const double dr = __ldg(a.dr + r);
    for (int64_t l = l0; l < a.n_left; l += ls) {
        const int64_t xl = l * nr;
        const double *srow = sx + l * rt;
        kr_hs_prefetch<MODE>(a, xl + r);
        double s = __dmul_rn(__dadd_rn(__dadd_rn(__ldg(a.dl + l), dr), a.shift), srow[rr]);
        for (int64_t p = __ldg(a.act_ptr + l); p < __ldg(a.act_ptr + l + 1); p++) {
            const int64_t j = r * nt + __ldg(a.act_m + p);
            const double cm = __ldg(a.act_c + p);
            const int32_t lo = __ldg(a.lo + j), hi = __ldg(a.hi + j);
            if (lo >= 0) s = __dadd_rn(s, __dmul_rn(__dmul_rn(cm, __ldg(a.lo_val + j)), kr_hs_x<MODE>(a, q, xl + lo)));
            if (hi >= 0) s = __dadd_rn(s, __dmul_rn(__dmul_rn(cm, __ldg(a.hi_val + j)), kr_hs_x<MODE>(a, q, xl + hi)));
        }
        const int64_t j1 = __ldg(a.a_ptr + l + 1);
        for (int64_t j = __ldg(a.a_ptr + l); j < j1; j++)
            s = __dadd_rn(s, __dmul_rn(__ldg(a.a_val + j), sx[(int64_t)__ldg(a.a_col + j) * rt + rr]));
        kr_hs_store<MODE>(a, q, l * nr + r, s, srow[rr], dd);
    }
}

/* The block's ND dots (aug, lz): over the warps by shuffles, then over
 * the KR_HS_THREADS / 32 warps in shared memory, into part[ND tile + k]. */
template <int ND>
static __device__ void kr_hs_dots(const kr_args &a, double *dd)
{
    __shared__ double red[ND * (KR_HS_THREADS / 32)];
    for (int k = 0; k < ND; k++)
        for (int o = 16; o > 0; o /= 2) dd[k] += __shfl_down_sync(0xffffffffu, dd[k], o);
    const int w = threadIdx.x / 32, lane = threadIdx.x % 32;
    if (lane == 0)
        for (int k = 0; k < ND; k++) red[ND * w + k] = dd[k];
    __syncthreads();
    if (threadIdx.x < ND) {
        double t = 0.0;
        for (int i = 0; i < KR_HS_THREADS / 32; i++) t += red[ND * i + threadIdx.x];
        a.part[ND * (int64_t)blockIdx.x + threadIdx.x] = t;
    }
}

/* One block per tile of rt right rows; x[:, tile] staged in sx. */
template <int NT, int MODE>
static __global__ void __launch_bounds__(KR_HS_THREADS, KR_HS_MINB) kr_hs_kernel(kr_args a, const double *__restrict__ c, int rt)
{
    extern __shared__ double sx[];
    const int64_t nl = a.n_left, nr = a.n_right, r0 = (int64_t)blockIdx.x * rt;
    const int n = (int)nl * rt;
    kr_in q = {0.0, 1.0, 1.0};
    if (MODE == KR_HS_LZIN) { /* alpha and b from the last product's sums, as k_lz_step (declined: the caller's) */
        double d[PL_KRON_LZ_DOTS];
        for (int k = 0; k < PL_KRON_LZ_DOTS; k++) d[k] = __ldg(a.dd_in + k);
        (void)pl_lz_coef(d, a.beta_in, &q.a, &q.b);
        q.s = 1.0 / q.b;
    }
    for (int i = threadIdx.x; i < n; i += blockDim.x) {
        const int64_t l = i / rt, col = r0 + i % rt;
        sx[i] = col < nr ? kr_hs_x<MODE>(a, q, l * nr + col) : 0.0;
        if (MODE == KR_HS_LZIN && col < nr) a.x_out[l * nr + col] = sx[i]; /* the basis column v_{j+1} */
    }
    double *stab = sx + n; /* the coupling values (kr_hs_rows) */
    for (int i = threadIdx.x; i < (NT > 0 ? NT : 0) * rt; i += blockDim.x) {
        const int64_t r = r0 + i % rt, j = r * NT + i / rt;
        stab[i] = r < nr ? __ldg(a.lo_val + j) : 0.0;
        stab[NT * rt + i] = r < nr ? __ldg(a.hi_val + j) : 0.0;
    }
    __syncthreads();
    const int rr = threadIdx.x % rt;
    double dd[KR_HS_ND(MODE)];
    for (int k = 0; k < KR_HS_ND(MODE); k++) dd[k] = 0.0;
    if (r0 + rr < nr) {
        const int l0 = threadIdx.x / rt, ls = blockDim.x / rt;
        if (NT < 0) kr_hs_rows_any<MODE>(a, q, sx, rt, r0, rr, l0, ls, dd);
        else kr_hs_rows<(NT < 0 ? 0 : NT), MODE>(a, q, c, sx, stab, rt, r0, rr, l0, ls, dd);
    }
    if (MODE != KR_HS_PLAIN) kr_hs_dots<KR_HS_ND(MODE)>(a, dd);
}

/* d_out[k] = sum of part[nd t + k] over the tiles, k < nd (one block each) */
static __global__ void __launch_bounds__(256) kr_hs_sum(int64_t ntiles, int nd, const double *__restrict__ part,
                                                        double *__restrict__ d_out)
{
    __shared__ double sh[256];
    double t = 0.0;
    for (int64_t b = threadIdx.x; b < ntiles; b += 256) t += part[nd * b + blockIdx.x];
    sh[threadIdx.x] = t;
    __syncthreads();
    for (int h = 128; h > 0; h /= 2) {
        if (threadIdx.x < h) sh[threadIdx.x] += sh[threadIdx.x + h];
        __syncthreads();
    }
    if (threadIdx.x == 0) d_out[blockIdx.x] = sh[0];
}

/* smem: x's tile; tab: the coupling values after it */
template <int NT>
static int kr_hs_attr(size_t smem, size_t tab)
{
    PL_CUDA(cudaFuncSetAttribute(kr_hs_kernel<NT, KR_HS_PLAIN>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                 (int)(smem + tab)));
    PL_CUDA(cudaFuncSetAttribute(kr_hs_kernel<NT, KR_HS_AUG>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                 (int)(smem + tab)));
    PL_CUDA(cudaFuncSetAttribute(kr_hs_kernel<NT, KR_HS_LZ>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                 (int)(smem + tab)));
    PL_CUDA(cudaFuncSetAttribute(kr_hs_kernel<NT, KR_HS_LZIN>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                 (int)(smem + tab)));
    return PL_OK;
}

struct kr_hs_attr_f {
    size_t smem, tab;
    template <int NT>
    int go() const { return kr_hs_attr<NT>(smem, tab); }
};

static int kr_hs_set(int nt, size_t smem, size_t tab) { return pl_kr_nt_dispatch(nt, kr_hs_attr_f{smem, tab}); }

int pl_kr_hop_setup(const pl_cuda_ctx *cx, pl_cuda_kron *m, int want, int *fits)
{
    *fits = 0;
    int optin = 0;
    PL_CUDA(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, cx->device));
    int rt = want == 8 || want == 16 || want == 32 ? want : 32;
    /* the coupling values and the aug and lz kernels' static reduction
     * array beside the tile */
    const int64_t room = (int64_t)optin - KR_HS_ND(KR_HS_LZ) * (KR_HS_THREADS / 32) * 8;
    while (rt >= 8 && m->n_left * rt * 8 + (int64_t)kr_hs_tab_bytes(m->nterms, rt) > room) rt /= 2;
    if (rt < 8 || m->n_left * rt > (int64_t)INT32_MAX) return PL_OK;
    m->smem = (size_t)m->n_left * (size_t)rt * 8;
    PL_CALL(kr_hs_set(m->nterms, m->smem, kr_hs_tab_bytes(m->nterms, rt)));
    PL_CALL(pl_cuda_load(kr_hs_sum)); /* loaded now, not at the solve's first sums (lazy loading) */
    m->chunk = rt;
    *fits = 1;
    return PL_OK;
}

int64_t pl_kr_hop_tiles(const pl_cuda_kron *m) { return (m->n_right + m->chunk - 1) / m->chunk; }

template <int NT, int MODE>
static int kr_hs_go(pl_cuda_ctx *cx, const pl_cuda_kron *m, const kr_args *a)
{
    const int64_t tiles = pl_kr_hop_tiles(m);
    PL_CHECK(tiles <= (int64_t)INT32_MAX, PL_ERR_NOTSUP, "kron variant 5: %lld tiles exceed one launch",
             (long long)tiles);
    const size_t smem = m->smem + kr_hs_tab_bytes(NT, m->chunk);
    kr_hs_kernel<NT, MODE><<<(unsigned)tiles, KR_HS_THREADS, smem, cx->stream>>>(*a, m->c, m->chunk);
    PL_CUDA_LAUNCH();
    return PL_OK;
}

template <int MODE>
struct kr_hs_go_f {
    pl_cuda_ctx *cx;
    const pl_cuda_kron *m;
    const kr_args *a;
    template <int NT>
    int go() const { return kr_hs_go<NT, MODE>(cx, m, a); }
};

template <int MODE>
static int kr_hs_switch(pl_cuda_ctx *cx, const pl_cuda_kron *m, const kr_args *a)
{
    return pl_kr_nt_dispatch(m->nterms, kr_hs_go_f<MODE>{cx, m, a});
}

int pl_kr_launch_hop(pl_cuda_ctx *cx, const pl_cuda_kron *m, const kr_args *a)
{
    return kr_hs_switch<KR_HS_PLAIN>(cx, m, a);
}

int pl_kr_launch_hop_aug(pl_cuda_ctx *cx, const pl_cuda_kron *m, const kr_args *a, double *d_out)
{
    PL_CALL(kr_hs_switch<KR_HS_AUG>(cx, m, a));
    kr_hs_sum<<<2, 256, 0, cx->stream>>>(pl_kr_hop_tiles(m), 2, a->part, d_out);
    PL_CUDA_LAUNCH();
    return PL_OK;
}

int pl_kr_launch_hop_lz(pl_cuda_ctx *cx, const pl_cuda_kron *m, const kr_args *a, double *d_out)
{
    PL_CALL(kr_hs_switch<KR_HS_LZ>(cx, m, a));
    kr_hs_sum<<<KR_HS_ND(KR_HS_LZ), 256, 0, cx->stream>>>(pl_kr_hop_tiles(m), KR_HS_ND(KR_HS_LZ), a->part, d_out);
    PL_CUDA_LAUNCH();
    return PL_OK;
}

int pl_kr_launch_hop_lzin(pl_cuda_ctx *cx, const pl_cuda_kron *m, const kr_args *a, double *d_out)
{
    PL_CALL(kr_hs_switch<KR_HS_LZIN>(cx, m, a));
    kr_hs_sum<<<KR_HS_ND(KR_HS_LZIN), 256, 0, cx->stream>>>(pl_kr_hop_tiles(m), KR_HS_ND(KR_HS_LZIN), a->part, d_out);
    PL_CUDA_LAUNCH();
    return PL_OK;
}
