/* kron_kernels.cu — kernel variants 2-4 of the CUDA matrix-free operator
 * (kron.cu has the tables, the choice of variant and variant 1; issue 26).
 *
 * Where the time goes (HMEp: n_left = 400 electron configurations, n_right
 * = 15,504 phonon states, nterms = 5, ~7 entries of A per left row): per
 * row y[l, r] variant 1 reads ~120 B of phonon tables (lo, hi, lo_val,
 * hi_val of row r for every m; 1.9 MB in all, from L2), gathers ~2 nterms
 * x[l, lo/hi] (inside the 124 KB slice x[l, :], scattered, mostly L2) and
 * reads x[l', r] for every entry of A's row l (coalesced, L2 or DRAM: x is
 * 49.6 MB, about the size of L2).  Its floor (x read once, y written once)
 * is ~6x below its time, so the variants cut L2 traffic:
 *
 * 2 "r-stationary": a thread owns one right row r (a block: KR_RS_BLOCK
 *   consecutive r, coalesced) and a chunk of `chunk` left rows (default 8,
 *   PJDS_KRON_CHUNK).  It loads row r's tables for all m ONCE into
 *   registers (template on nterms <= 8; above, a generic loop over the
 *   coupling lists with the tables from global memory) and loops over the
 *   chunk: the table traffic drops by the chunk length.  The chunk's dl,
 *   dense couplings c[l, m] and A's rows are staged in shared memory (A's
 *   rows from global memory where they exceed KR_RS_HMAX entries).  Blocks
 *   run r-tile fastest, so the blocks in flight share few left rows (their
 *   gathers stay in few slices x[l, :]).  The gathers of x[l, lo] are
 *   issued before the branch on lo >= 0 (index clamped to r), so they can
 *   all be in flight together.
 * 3 "row-smem": a block per (left row l, part of the right rows): x[l, :]
 *   is staged into dynamic shared memory (n_right doubles: up to ~28,000
 *   on an H100, 227 KB; else variant 1), so the ~2 nterms gathers per row
 *   come from shared memory; the tables still from global memory (L2), A's
 *   x[l', r] coalesced from global memory.  One block per SM at HMEp's
 *   size: each left row is split over `split` blocks (default: the count
 *   that best fills the last wave, PJDS_KRON_SPLIT), at the cost of staging
 *   the row once per part.
 * 4 "row-smem-packed": 3 with the tables packed at kron_create: per (r, m)
 *   one 32-bit word for lo and one for hi, the column in the low 24 bits
 *   and an index into a dictionary of at most 256 distinct values (in
 *   shared memory) in the high 8 bits: 8 B per (r, m) instead of 24 (HH:
 *   the values are sqrt(n), 17 distinct at M = 15).  Stored as [m n_right
 *   + r] so a warp reads 128 B per word.  Falls back to 3 where the values
 *   or n_right do not fit.
 * Every variant sums each row's terms in pl_kron.h's order with __dmul_rn /
 * __dadd_rn (no FMA): the diagonal, the couplings m ascending over the
 * non-zero c[l, m] (c != 0 tests the same as pl_kron_active), lo before
 * hi, then A's row l in CSR order; y is the CPU kernel's bit for bit. */
#include <cuda_runtime.h>
#include <stdint.h>
#include <string.h>

#include "kron_impl.h"

#define KR_RS_BLOCK 128  /* variant 2: right rows per block            */
#define KR_RS_LMAX 64    /* variant 2: largest chunk of left rows      */
#define KR_RS_HMAX 512   /* variant 2: entries of A staged per chunk   */
#define KR_RS_NTMAX 8    /* variant 2: tables in registers up to this  */
#define KR_ROW_BLOCK 1024 /* variants 3, 4: threads per block          */
#define KR_SMEM 64       /* variants 3, 4: list entries staged per row */

/* ---- variant 2: r-stationary ---------------------------------------- */

/* The chunk [l0, l0 + nl): dl, dense couplings (nt of them per row), A's
 * row pointers and (nh > 0) its nh entries from h0, into shared memory. */
static __device__ void kr_rs_stage(const kr_args &a, const double *__restrict__ c, int nt, int64_t l0, int nl,
                                   int64_t h0, int nh, double *s_c, double *s_dl, int64_t *s_hp, int32_t *s_col,
                                   double *s_val)
{
    for (int i = threadIdx.x; i < nl * nt; i += blockDim.x) s_c[i] = __ldg(c + l0 * nt + i);
    for (int i = threadIdx.x; i < nl; i += blockDim.x) s_dl[i] = __ldg(a.dl + l0 + i);
    for (int i = threadIdx.x; i <= nl; i += blockDim.x) s_hp[i] = __ldg(a.a_ptr + l0 + i);
    for (int i = threadIdx.x; i < nh; i += blockDim.x) {
        s_col[i] = __ldg(a.a_col + h0 + i);
        s_val[i] = __ldg(a.a_val + h0 + i);
    }
}

/* y[l, r] += A's row l (entries [s_hp[i], s_hp[i+1]) of hc, hv from h0). */
static __device__ __forceinline__ double kr_hop(const kr_args &a, double s, int64_t r, int64_t j0, int64_t j1,
                                                const int32_t *__restrict__ hc, const double *__restrict__ hv)
{
    const int64_t nr = a.n_right;
    for (int64_t j = j0; j < j1; j++) s = __dadd_rn(s, __dmul_rn(hv[j], __ldg(a.x + (int64_t)hc[j] * nr + r)));
    return s;
}

/* Rows (l0 .. l0 + nl - 1, r), row r's tables in registers (NT terms). */
template <int NT>
static __device__ void kr_rs_rows(const kr_args &a, int64_t r, int64_t l0, int nl, const double *s_c,
                                  const double *s_dl, const int64_t *s_hp, int64_t h0, const int32_t *hc,
                                  const double *hv)
{
    const int64_t nr = a.n_right;
    int32_t tlo[NT > 0 ? NT : 1], thi[NT > 0 ? NT : 1];
    double tlv[NT > 0 ? NT : 1], thv[NT > 0 ? NT : 1];
#pragma unroll
    for (int m = 0; m < NT; m++) {
        const int64_t j = r * NT + m;
        tlo[m] = __ldg(a.lo + j);
        thi[m] = __ldg(a.hi + j);
        tlv[m] = __ldg(a.lo_val + j);
        thv[m] = __ldg(a.hi_val + j);
    }
    const double dr = __ldg(a.dr + r);
    for (int i = 0; i < nl; i++) {
        const double *xl = a.x + (l0 + i) * nr;
        double s = __dmul_rn(__dadd_rn(__dadd_rn(s_dl[i], dr), a.shift), __ldg(xl + r));
#pragma unroll
        for (int m = 0; m < NT; m++) {
            const double c = s_c[i * NT + m];
            if (c != 0.0) {
                const double xlo = __ldg(xl + (tlo[m] >= 0 ? (int64_t)tlo[m] : r));
                const double xhi = __ldg(xl + (thi[m] >= 0 ? (int64_t)thi[m] : r));
                if (tlo[m] >= 0) s = __dadd_rn(s, __dmul_rn(__dmul_rn(c, tlv[m]), xlo));
                if (thi[m] >= 0) s = __dadd_rn(s, __dmul_rn(__dmul_rn(c, thv[m]), xhi));
            }
        }
        a.y[(l0 + i) * nr + r] = kr_hop(a, s, r, s_hp[i] - h0, s_hp[i + 1] - h0, hc, hv);
    }
}

/* The same for any nterms: the coupling lists and tables from global memory. */
static __device__ void kr_rs_rows_any(const kr_args &a, int64_t r, int64_t l0, int nl, const double *s_dl,
                                      const int64_t *s_hp, int64_t h0, const int32_t *hc, const double *hv)
{
    const int64_t nr = a.n_right, nt = a.nterms;
    const double dr = __ldg(a.dr + r);
    for (int i = 0; i < nl; i++) {
        const int64_t l = l0 + i;
        const double *xl = a.x + l * nr;
        double s = __dmul_rn(__dadd_rn(__dadd_rn(s_dl[i], dr), a.shift), __ldg(xl + r));
        for (int64_t q = __ldg(a.act_ptr + l); q < __ldg(a.act_ptr + l + 1); q++) {
            const int64_t j = r * nt + __ldg(a.act_m + q);
            const double c = __ldg(a.act_c + q);
            const int32_t lo = __ldg(a.lo + j), hi = __ldg(a.hi + j);
            if (lo >= 0) s = __dadd_rn(s, __dmul_rn(__dmul_rn(c, __ldg(a.lo_val + j)), __ldg(xl + lo)));
            if (hi >= 0) s = __dadd_rn(s, __dmul_rn(__dmul_rn(c, __ldg(a.hi_val + j)), __ldg(xl + hi)));
        }
        a.y[l * nr + r] = kr_hop(a, s, r, s_hp[i] - h0, s_hp[i + 1] - h0, hc, hv);
    }
}

/* NT >= 0: nterms = NT, tables in registers; NT < 0: any nterms. */
template <int NT>
static __global__ void __launch_bounds__(KR_RS_BLOCK)
    kr_rs_kernel(kr_args a, const double *__restrict__ c, int chunk, int64_t rtiles, int64_t nblk, int rmajor)
{
    __shared__ double s_c[KR_RS_LMAX * (NT > 0 ? NT : 1)], s_dl[KR_RS_LMAX], s_val[KR_RS_HMAX];
    __shared__ int64_t s_hp[KR_RS_LMAX + 1];
    __shared__ int32_t s_col[KR_RS_HMAX];
    for (int64_t t = blockIdx.x; t < nblk; t += gridDim.x) {
        /* l-chunk-major: consecutive blocks share a chunk of left rows;
         * r-tile-major: they share a tile of right rows (the hopping's
         * x[l', tile] of all l' stay in L2) */
        const int64_t lch = nblk / rtiles;
        const int64_t l0 = (rmajor ? t % lch : t / rtiles) * chunk;
        const int64_t r = (rmajor ? t / lch : t % rtiles) * KR_RS_BLOCK + threadIdx.x;
        const int nl = (int)(a.n_left - l0 < chunk ? a.n_left - l0 : chunk);
        const int64_t h0 = __ldg(a.a_ptr + l0), nh = __ldg(a.a_ptr + l0 + nl) - h0;
        const bool hs = nh <= KR_RS_HMAX;
        __syncthreads(); /* the previous chunk is done with the shared data */
        kr_rs_stage(a, c, NT > 0 ? NT : 0, l0, nl, h0, hs ? (int)nh : 0, s_c, s_dl, s_hp, s_col, s_val);
        __syncthreads();
        if (r >= a.n_right) continue;
        const int32_t *hc = hs ? s_col : a.a_col + h0;
        const double *hv = hs ? s_val : a.a_val + h0;
        if (NT < 0) kr_rs_rows_any(a, r, l0, nl, s_dl, s_hp, h0, hc, hv);
        else kr_rs_rows<(NT < 0 ? 0 : NT)>(a, r, l0, nl, s_c, s_dl, s_hp, h0, hc, hv);
    }
}

template <int NT>
static int kr_rs_go(pl_cuda_ctx *cx, const pl_cuda_kron *m, const kr_args *a)
{
    const int64_t rtiles = (m->n_right + KR_RS_BLOCK - 1) / KR_RS_BLOCK;
    const int64_t nblk = rtiles * ((m->n_left + m->chunk - 1) / m->chunk);
    const unsigned grid = (unsigned)(nblk < (int64_t)INT32_MAX ? nblk : (int64_t)INT32_MAX);
    kr_rs_kernel<NT><<<grid, KR_RS_BLOCK, 0, cx->stream>>>(*a, m->c, m->chunk, rtiles, nblk, m->rmajor);
    PL_CUDA_LAUNCH();
    return PL_OK;
}

int pl_kr_launch_rs(pl_cuda_ctx *cx, const pl_cuda_kron *m, const kr_args *a)
{
    switch (m->nterms) {
    case 0: return kr_rs_go<0>(cx, m, a);
    case 1: return kr_rs_go<1>(cx, m, a);
    case 2: return kr_rs_go<2>(cx, m, a);
    case 3: return kr_rs_go<3>(cx, m, a);
    case 4: return kr_rs_go<4>(cx, m, a);
    case 5: return kr_rs_go<5>(cx, m, a);
    case 6: return kr_rs_go<6>(cx, m, a);
    case 7: return kr_rs_go<7>(cx, m, a);
    case 8: return kr_rs_go<8>(cx, m, a);
    default: return kr_rs_go<-1>(cx, m, a);
    }
}

int pl_kr_rs_chunk(const pl_cuda_kron *m, int nsm, int c)
{
    int64_t L = c > 0 ? c : 8;
    if (L > KR_RS_LMAX) L = KR_RS_LMAX;
    if (L > m->n_left) L = m->n_left;
    const int64_t rtiles = (m->n_right + KR_RS_BLOCK - 1) / KR_RS_BLOCK;
    if (c <= 0) /* default: at least ~8 blocks per SM where the size allows */
        while (L > 1 && rtiles * ((m->n_left + L - 1) / L) < 8 * (int64_t)nsm) L /= 2;
    return (int)(L > 0 ? L : 1);
}

/* ---- variants 3 and 4: the left row in shared memory ------------------ */

/* Row (l, r), x[l, :] in sx; the tables from global memory (variant 3). */
static __device__ __forceinline__ double kr_row_sx(const kr_args &a, int64_t r, const double *sx, double dl, int na,
                                                   const int32_t *am, const double *ac)
{
    const int64_t nt = a.nterms;
    double s = __dmul_rn(__dadd_rn(__dadd_rn(dl, __ldg(a.dr + r)), a.shift), sx[r]);
    for (int i = 0; i < na; i++) {
        const int64_t j = r * nt + am[i];
        const double c = ac[i];
        const int32_t lo = __ldg(a.lo + j), hi = __ldg(a.hi + j);
        if (lo >= 0) s = __dadd_rn(s, __dmul_rn(__dmul_rn(c, __ldg(a.lo_val + j)), sx[lo]));
        if (hi >= 0) s = __dadd_rn(s, __dmul_rn(__dmul_rn(c, __ldg(a.hi_val + j)), sx[hi]));
    }
    return s;
}

/* The same from the packed tables and the dictionary sd (variant 4). */
static __device__ __forceinline__ double kr_row_pk(const kr_args &a, int64_t r, const double *sx, const double *sd,
                                                   const uint32_t *__restrict__ pk_lo,
                                                   const uint32_t *__restrict__ pk_hi, double dl, int na,
                                                   const int32_t *am, const double *ac)
{
    const int64_t nr = a.n_right;
    double s = __dmul_rn(__dadd_rn(__dadd_rn(dl, __ldg(a.dr + r)), a.shift), sx[r]);
    for (int i = 0; i < na; i++) {
        const int64_t j = (int64_t)am[i] * nr + r;
        const double c = ac[i];
        const uint32_t wl = __ldg(pk_lo + j), wh = __ldg(pk_hi + j);
        if ((wl & KR_PK_NONE) != KR_PK_NONE)
            s = __dadd_rn(s, __dmul_rn(__dmul_rn(c, sd[wl >> 24]), sx[wl & KR_PK_NONE]));
        if ((wh & KR_PK_NONE) != KR_PK_NONE)
            s = __dadd_rn(s, __dmul_rn(__dmul_rn(c, sd[wh >> 24]), sx[wh & KR_PK_NONE]));
    }
    return s;
}

/* x[l, :] (n doubles at xl) into sx, 16-byte loads where aligned. */
static __device__ void kr_stage_row(const double *__restrict__ xl, int64_t n, double *sx)
{
    int64_t i0 = 0;
    if (((uintptr_t)xl & 15) == 0) {
        const double2 *x2 = (const double2 *)xl;
        double2 *s2 = (double2 *)sx;
        for (int64_t i = threadIdx.x; i < n / 2; i += blockDim.x) s2[i] = __ldg(x2 + i);
        i0 = n / 2 * 2;
    }
    for (int64_t i = i0 + threadIdx.x; i < n; i += blockDim.x) sx[i] = __ldg(xl + i);
}

/* Items t = l split + part: rows (l, [part pw, (part + 1) pw)).  PK: packed. */
template <bool PK>
static __global__ void __launch_bounds__(KR_ROW_BLOCK)
    kr_row_kernel(kr_args a, const uint32_t *__restrict__ pk_lo, const uint32_t *__restrict__ pk_hi,
                  const double *__restrict__ dict, int ndict, int split, int64_t pw, int64_t items)
{
    extern __shared__ double2 sx2[]; /* 16-byte aligned: x[l, :], then (PK) the dictionary */
    double *sx = (double *)sx2;
    __shared__ int32_t sm[KR_SMEM], scol[KR_SMEM];
    __shared__ double sc[KR_SMEM], sval[KR_SMEM];
    const int64_t nr = a.n_right;
    double *sd = sx + nr;
    if (PK)
        for (int i = threadIdx.x; i < ndict; i += blockDim.x) sd[i] = __ldg(dict + i);
    for (int64_t t = blockIdx.x; t < items; t += gridDim.x) {
        const int64_t l = t / split, r0 = t % split * pw, r1 = r0 + pw < nr ? r0 + pw : nr;
        const int64_t c0 = __ldg(a.act_ptr + l), h0 = __ldg(a.a_ptr + l);
        const int na = (int)(__ldg(a.act_ptr + l + 1) - c0), nh = (int)(__ldg(a.a_ptr + l + 1) - h0);
        const bool cs = na <= KR_SMEM, hs = nh <= KR_SMEM;
        __syncthreads(); /* the previous item is done with shared memory */
        kr_stage_row(a.x + l * nr, nr, sx);
        for (int i = threadIdx.x; cs && i < na; i += blockDim.x) {
            sm[i] = __ldg(a.act_m + c0 + i);
            sc[i] = __ldg(a.act_c + c0 + i);
        }
        for (int i = threadIdx.x; hs && i < nh; i += blockDim.x) {
            scol[i] = __ldg(a.a_col + h0 + i);
            sval[i] = __ldg(a.a_val + h0 + i);
        }
        __syncthreads();
        const int32_t *am = cs ? sm : a.act_m + c0, *hc = hs ? scol : a.a_col + h0;
        const double *ac = cs ? sc : a.act_c + c0, *hv = hs ? sval : a.a_val + h0;
        const double dl = __ldg(a.dl + l);
        for (int64_t r = r0 + threadIdx.x; r < r1; r += blockDim.x) {
            const double s = PK ? kr_row_pk(a, r, sx, sd, pk_lo, pk_hi, dl, na, am, ac)
                                : kr_row_sx(a, r, sx, dl, na, am, ac);
            a.y[l * nr + r] = kr_hop(a, s, r, 0, nh, hc, hv);
        }
    }
}

int pl_kr_row_setup(const pl_cuda_ctx *cx, pl_cuda_kron *m, int packed, int *fits)
{
    *fits = 0;
    int optin = 0;
    PL_CUDA(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, cx->device));
    cudaFuncAttributes fa;
    if (packed) PL_CUDA(cudaFuncGetAttributes(&fa, kr_row_kernel<true>));
    else PL_CUDA(cudaFuncGetAttributes(&fa, kr_row_kernel<false>));
    const int64_t room = (int64_t)optin - (int64_t)fa.sharedSizeBytes - (packed ? KR_PK_DICT * 8 : 0);
    if (room <= 0 || m->n_right > room / 8) return PL_OK;
    const int lim = optin - (int)fa.sharedSizeBytes;
    if (packed) PL_CUDA(cudaFuncSetAttribute(kr_row_kernel<true>, cudaFuncAttributeMaxDynamicSharedMemorySize, lim));
    else PL_CUDA(cudaFuncSetAttribute(kr_row_kernel<false>, cudaFuncAttributeMaxDynamicSharedMemorySize, lim));
    m->smem = (size_t)m->n_right * 8 + (packed ? KR_PK_DICT * 8 : 0);
    *fits = 1;
    return PL_OK;
}

int pl_kr_row_split(const pl_cuda_kron *m, int nsm, int s)
{
    if (s > 0) return s < 64 ? s : 64;
    /* time of an SM ~ waves x (staging + its part): staging the row costs
     * about a tenth of computing all of it */
    int best = 1;
    double tbest = 1e300;
    for (int S = 1; S <= 8; S++) {
        if (S > 1 && m->n_right / S < KR_ROW_BLOCK) break;
        const double waves = (double)((m->n_left * S + nsm - 1) / nsm);
        const double t = waves * (0.1 + 1.0 / S);
        if (t < tbest * 0.999) {
            tbest = t;
            best = S;
        }
    }
    return best;
}

int pl_kr_launch_row(pl_cuda_ctx *cx, const pl_cuda_kron *m, const kr_args *a)
{
    const int64_t nr = m->n_right, S = m->split;
    const int64_t pw = ((nr + S - 1) / S + 31) / 32 * 32, items = m->n_left * S;
    const unsigned grid = (unsigned)(items < (int64_t)INT32_MAX ? items : (int64_t)INT32_MAX);
    if (m->variant == 4)
        kr_row_kernel<true><<<grid, KR_ROW_BLOCK, m->smem, cx->stream>>>(*a, m->pk_lo, m->pk_hi, m->pk_dict,
                                                                         m->pk_ndict, m->split, pw, items);
    else
        kr_row_kernel<false><<<grid, KR_ROW_BLOCK, m->smem, cx->stream>>>(*a, NULL, NULL, NULL, 0, m->split, pw,
                                                                          items);
    PL_CUDA_LAUNCH();
    return PL_OK;
}

/* ---- variant 4's tables (host) ---------------------------------------- */

/* Index of value v in dict (bitwise), added if new; -1 when full. */
static int kr_dict_index(double v, uint64_t *bits, double *dict, int *n, int *last)
{
    uint64_t b;
    memcpy(&b, &v, sizeof b);
    if (*last >= 0 && bits[*last] == b) return *last;
    for (int i = 0; i < *n; i++)
        if (bits[i] == b) return *last = i;
    if (*n == KR_PK_DICT) return -1;
    bits[*n] = b;
    dict[*n] = v;
    return *last = (*n)++;
}

void pl_kr_pack(const pl_kron *k, uint32_t *pk_lo, uint32_t *pk_hi, double *dict, int *ndict, int *ok)
{
    uint64_t bits[KR_PK_DICT];
    const int64_t nr = k->n_right, nt = k->nterms;
    int last = -1;
    *ndict = 0;
    *ok = 0;
    if (nr >= (int64_t)KR_PK_NONE) return;
    for (int64_t m = 0; m < nt; m++)
        for (int64_t r = 0; r < nr; r++) {
            const int64_t j = r * nt + m;
            uint32_t w[2] = {KR_PK_NONE, KR_PK_NONE};
            const int32_t col[2] = {k->lo[j], k->hi[j]};
            const double val[2] = {k->lo_val[j], k->hi_val[j]};
            for (int h = 0; h < 2; h++) {
                if (col[h] < 0) continue;
                const int d = kr_dict_index(val[h], bits, dict, ndict, &last);
                if (d < 0) return;
                w[h] = (uint32_t)col[h] | (uint32_t)d << 24;
            }
            pk_lo[m * nr + r] = w[0];
            pk_hi[m * nr + r] = w[1];
        }
    *ok = 1;
}
