/* pjds_kernels.cu — the pJDS SpMV kernel family and small vector kernels.
 *
 * Method (Kreutzer et al. 2012, pJDS; SELL-C-sigma): one thread per
 * (permuted) row r; chunk c = r / C, lane = r % C; entry j of the row sits at
 * chunk_start[c] + j * C + lane, so the C threads of a chunk read C
 * consecutive values and column indices per j (coalesced for C = 32 = a
 * warp; any C >= 1 works, e.g. ELLPACK-R is one chunk of C = padded rows).
 *
 * The variants (table below; `bench` sweeps them, PJDS_CUDA_VARIANT picks
 * one for be->spmv) differ in
 *   - loop bound: row_len[r] (only true entries, 4 B/row extra traffic) or
 *     chunk_width[c] (no divergence, reads the padding: 0 * x[valid col]);
 *   - unrolling U of the entry loop: U column indices and values loaded
 *     before the U gathers of x, so U independent loads are in flight per
 *     thread (memory-level parallelism); one accumulator, j ascending, so
 *     the sum is rounded in the same order as the CPU kernel's;
 *   - cache hints: matrix data is read once per SpMV and should not evict
 *     x from L2: ld.global.nc (__ldg), ld.global.cs (__ldcs, streaming), or
 *     an L2 evict_first access policy (PTX createpolicy + L2::cache_hint,
 *     sm_80+); x optionally with evict_last;
 *   - block size.
 * Nothing is precomputed per call.
 *
 * Padding entries must hold a valid column and value 0; x must be finite
 * for the chunk_width-bound variants (0 * inf = nan).  row_map (remote part
 * of a split matrix) must be injective: y[row_map[r]] += (A x)[r] without
 * atomics.
 */
#include <cuda_runtime.h>
#include <stdint.h>

#include "cuda_impl.h"

typedef struct pl_kargs {
    int64_t nrows;
    int32_t C;
    const int64_t *__restrict__ chunk_start;
    const int32_t *__restrict__ chunk_width;
    const int32_t *__restrict__ row_len;
    const int32_t *__restrict__ col;
    const double *__restrict__ val;
    const int32_t *__restrict__ row_map;
    const double *__restrict__ x;
    double *__restrict__ y;
} pl_kargs;

enum { HINT_PLAIN = 0, HINT_NC = 1, HINT_CS = 2, HINT_EF = 3, HINT_EF_XL = 4 };

static __device__ __forceinline__ uint64_t policy_evict_first(void)
{
    uint64_t p = 0;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(p));
#endif
    return p;
}

static __device__ __forceinline__ uint64_t policy_evict_last(void)
{
    uint64_t p = 0;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(p));
#endif
    return p;
}

static __device__ __forceinline__ double ld_hint_f64(const double *p, uint64_t pol)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    double r;
    asm("ld.global.nc.L2::cache_hint.f64 %0, [%1], %2;" : "=d"(r) : "l"(p), "l"(pol));
    return r;
#else
    (void)pol;
    return __ldg(p);
#endif
}

static __device__ __forceinline__ int32_t ld_hint_s32(const int32_t *p, uint64_t pol)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    int32_t r;
    asm("ld.global.nc.L2::cache_hint.s32 %0, [%1], %2;" : "=r"(r) : "l"(p), "l"(pol));
    return r;
#else
    (void)pol;
    return __ldg(p);
#endif
}

/* matrix loads */
static __device__ __forceinline__ double ld_val(const double *p, int hint, uint64_t pol)
{
    if (hint == HINT_PLAIN) return *p;
    if (hint == HINT_NC) return __ldg(p);
    if (hint == HINT_CS) return __ldcs(p);
    return ld_hint_f64(p, pol);
}

static __device__ __forceinline__ int32_t ld_col(const int32_t *p, int hint, uint64_t pol)
{
    if (hint == HINT_PLAIN) return *p;
    if (hint == HINT_NC) return __ldg(p);
    if (hint == HINT_CS) return __ldcs(p);
    return ld_hint_s32(p, pol);
}

/* x loads */
static __device__ __forceinline__ double ld_x(const double *p, int hint, uint64_t polx)
{
    if (hint == HINT_PLAIN) return *p;
    if (hint == HINT_EF_XL) return ld_hint_f64(p, polx);
    return __ldg(p);
}

/* One thread per row.  BOUND, U, HINT are compile-time constants at every
 * call site (the kernels below), so the branches fold away. */
static __device__ __forceinline__ void pjds_row(const pl_kargs a, const int BOUND, const int U, const int HINT)
{
    const int64_t r = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= a.nrows) return;
    const int64_t c = r / a.C;
    const int64_t lane = r - c * a.C;
    const int len = BOUND ? a.chunk_width[c] : a.row_len[r];
    const int64_t off = a.chunk_start[c] + lane;
    const double *vp = a.val + off;
    const int32_t *cp = a.col + off;
    const int64_t C = a.C;
    uint64_t pol = 0, polx = 0;
    if (HINT >= HINT_EF) pol = policy_evict_first();
    if (HINT == HINT_EF_XL) polx = policy_evict_last();
    double s = 0.0;
    int j = 0;
    if (U >= 2) {
        for (; j + U <= len; j += U) {
            int32_t ci[8];
            double vi[8];
#pragma unroll
            for (int u = 0; u < 8; u++)
                if (u < U) {
                    ci[u] = ld_col(cp + u * C, HINT, pol);
                    vi[u] = ld_val(vp + u * C, HINT, pol);
                }
#pragma unroll
            for (int u = 0; u < 8; u++)
                if (u < U) s += vi[u] * ld_x(a.x + ci[u], HINT, polx);
            cp += U * C;
            vp += U * C;
        }
    }
    for (; j < len; j++) {
        s += ld_val(vp, HINT, pol) * ld_x(a.x + ld_col(cp, HINT, pol), HINT, polx);
        cp += C;
        vp += C;
    }
    if (a.row_map) a.y[a.row_map[r]] += s;
    else a.y[r] = s;
}

/* Kernel names: k_<bound>_u<U>_<hint>; one thread per row. */
#define PL_PJDS_KERNEL(NAME, BOUND, U, HINT) \
    __global__ void __launch_bounds__(1024) NAME(const pl_kargs a) { pjds_row(a, BOUND, U, HINT); }

PL_PJDS_KERNEL(k_rl_u1_plain, 0, 1, HINT_PLAIN)
PL_PJDS_KERNEL(k_cw_u1_plain, 1, 1, HINT_PLAIN)
PL_PJDS_KERNEL(k_rl_u2_nc, 0, 2, HINT_NC)
PL_PJDS_KERNEL(k_rl_u4_nc, 0, 4, HINT_NC)
PL_PJDS_KERNEL(k_cw_u4_nc, 1, 4, HINT_NC)
PL_PJDS_KERNEL(k_rl_u4_cs, 0, 4, HINT_CS)
PL_PJDS_KERNEL(k_rl_u4_ef, 0, 4, HINT_EF)
PL_PJDS_KERNEL(k_rl_u4_efxl, 0, 4, HINT_EF_XL)
PL_PJDS_KERNEL(k_cw_u4_ef, 1, 4, HINT_EF)
PL_PJDS_KERNEL(k_rl_u8_ef, 0, 8, HINT_EF)
PL_PJDS_KERNEL(k_rl_u2_ef, 0, 2, HINT_EF)

typedef void (*pl_pjds_kernel)(const pl_kargs);

typedef struct variant_entry {
    pl_cuda_variant v;
    pl_pjds_kernel k;
} variant_entry;

/* Variant 0 is the naive kernel (the baseline of DESIGN.md). */
static const variant_entry variants[] = {
    {{"naive-rl-u1-b256", 0, 1, HINT_PLAIN, 256}, k_rl_u1_plain},
    {{"cw-u1-b256", 1, 1, HINT_PLAIN, 256}, k_cw_u1_plain},
    {{"rl-u2-nc-b256", 0, 2, HINT_NC, 256}, k_rl_u2_nc},
    {{"rl-u4-nc-b256", 0, 4, HINT_NC, 256}, k_rl_u4_nc},
    {{"cw-u4-nc-b256", 1, 4, HINT_NC, 256}, k_cw_u4_nc},
    {{"rl-u4-cs-b256", 0, 4, HINT_CS, 256}, k_rl_u4_cs},
    {{"rl-u2-ef-b256", 0, 2, HINT_EF, 256}, k_rl_u2_ef},
    {{"rl-u4-ef-b256", 0, 4, HINT_EF, 256}, k_rl_u4_ef},
    {{"rl-u4-ef-b128", 0, 4, HINT_EF, 128}, k_rl_u4_ef},
    {{"rl-u4-ef-b512", 0, 4, HINT_EF, 512}, k_rl_u4_ef},
    {{"rl-u4-efxl-b256", 0, 4, HINT_EF_XL, 256}, k_rl_u4_efxl},
    {{"cw-u4-ef-b256", 1, 4, HINT_EF, 256}, k_cw_u4_ef},
    {{"rl-u8-ef-b256", 0, 8, HINT_EF, 256}, k_rl_u8_ef},
};
#define NVARIANTS (int)(sizeof variants / sizeof variants[0])

extern "C" int pl_cuda_nvariants_impl(void) { return NVARIANTS; }

extern "C" const pl_cuda_variant *pl_cuda_variant_get(int v)
{
    if (v < 0 || v >= NVARIANTS) return NULL;
    return &variants[v].v;
}

extern "C" int pl_cuda_spmv_launch(pl_cuda_ctx *cx, const pl_cuda_mat *m, int variant, const double *d_x, double *d_y)
{
    PL_CHECK(variant >= 0 && variant < NVARIANTS, PL_ERR_ARG, "SpMV kernel variant %d out of range [0, %d)", variant,
             NVARIANTS);
    if (m->nrows == 0) return PL_OK;
    pl_kargs a;
    a.nrows = m->nrows;
    a.C = m->C;
    a.chunk_start = m->d_chunk_start;
    a.chunk_width = m->d_chunk_width;
    a.row_len = m->d_row_len;
    a.col = m->d_col;
    a.val = m->d_val;
    a.row_map = m->d_row_map;
    a.x = d_x;
    a.y = d_y;
    const int bs = variants[variant].v.block;
    const int64_t nb = ((int64_t)m->nrows + bs - 1) / bs;
    variants[variant].k<<<(unsigned)nb, bs, 0, cx->stream>>>(a);
    PL_CUDA_LAUNCH();
    return PL_OK;
}

/* one thread per element, grid-stride */
__global__ void k_fill(size_t n, double a, double *x)
{
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) x[i] = a;
}

/* one thread per element, grid-stride: buf[i] = x[idx[i]] */
__global__ void k_gather(size_t n, const int32_t *__restrict__ idx, const double *__restrict__ x,
                         double *__restrict__ buf)
{
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        buf[i] = x[idx[i]];
}

static unsigned grid_for(size_t n, int bs)
{
    size_t nb = (n + (size_t)bs - 1) / (size_t)bs;
    if (nb > 65535u * 16u) nb = 65535u * 16u; /* grid-stride covers the rest */
    return (unsigned)(nb ? nb : 1);
}

/* (cuda_impl.h) k_fill, k_gather and SpMV variant v loaded before their
 * first launch */
extern "C" int pl_cuda_pjds_preload(int v)
{
    PL_CALL(pl_cuda_load(k_fill, k_gather));
    return v >= 0 && v < NVARIANTS ? pl_cuda_load(variants[v].k) : PL_OK;
}

extern "C" int pl_cuda_fill(pl_cuda_ctx *cx, size_t n, double a, double *d_x)
{
    if (n == 0) return PL_OK;
    k_fill<<<grid_for(n, 256), 256, 0, cx->stream>>>(n, a, d_x);
    PL_CUDA_LAUNCH();
    return PL_OK;
}

extern "C" int pl_cuda_gather_on(cudaStream_t s, size_t n, const int32_t *d_idx, const double *d_x, double *d_buf)
{
    if (n == 0) return PL_OK;
    k_gather<<<grid_for(n, 256), 256, 0, s>>>(n, d_idx, d_x, d_buf);
    PL_CUDA_LAUNCH();
    return PL_OK;
}

extern "C" int pl_cuda_gather(pl_cuda_ctx *cx, size_t n, const int32_t *d_idx, const double *d_x, double *d_buf)
{
    return pl_cuda_gather_on(cx->stream, n, d_idx, d_x, d_buf);
}
