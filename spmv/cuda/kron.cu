/* kron.cu — the CUDA backend's matrix-free operator: a Kronecker sum
 * (pl_kron.h) applied from its tables in device memory (be->kron_create,
 * kron_apply, kron_destroy; issue 26).
 *
 * Upload: each table by cudaMalloc + cudaMemcpyAsync on the backend stream
 * (pl_cuda_upload_array), the couplings as per-left-row lists of the
 * non-zero c[l, m] (pl_kron_active, as the CPU kernel); one stream
 * synchronisation at the end, so the host tables may go once kron_create
 * returns.
 *
 * Kernels: PJDS_KRON_KERNEL (read at kron_create; kron_variant.h) picks one
 * of six; unset: pl_cuda_kron_variant_default(), 5 where its 32-wide tile
 * of every left row fits a block's shared memory (n_left <= 887 on an
 * H100), else 6 where a left row fits (split 2), else 2.  HMEp, tests/gpu/kron_timing, medians of 50, 2026-11-25:
 * variant 1 0.204 ms, 2 0.157 ms with chunk 8 and 0.166 ms with 16, 3
 * 0.229 ms, 4 0.218 ms (one H100); 2 against 5 in the same runs: 0.170 /
 * 0.171, 0.168 / 0.156 ms (two H100s), 0.165 / 0.155 ms (an H200); all bit
 * for bit the CPU's.  Variants 2-4 and the reasoning behind them are in
 * kron_kernels.cu, variant 5 in kron_hop.cu, variant 6 (x[l, :] in shared
 * memory with packed tables, persistent blocks; the default where 5 does
 * not fit: hh9 8.17 against variant 2's 13.18 ms) in kron_row.cu.
 *
 * Variant 1 ("tile", the first version): one thread per row (l, r).  The
 * grid is tiled over r: a block of KR_BLOCK threads takes KR_BLOCK
 * consecutive right rows of one left row l (a tile), so x[l, tile] and
 * y[l, tile] are coalesced and the per-l data are uniform in the block:
 * dl[l] in a register, the coupling list and A's row l staged in shared
 * memory (up to KR_SMEM entries each; a longer list is read from global
 * memory, still uniform).  Tiles go left-major, grid-stride, so any size
 * fits one launch.  Each thread sums its row's terms in pl_kron.h's order
 * with explicitly rounded products and sums (__dmul_rn, __dadd_rn: no
 * contraction into FMA), so the result is the CPU kernel's (cpu_kron.c)
 * bit for bit; so do variants 2-4.  Launched on the backend's stream,
 * asynchronous like be->spmv: pl_op_apply's final be->sync waits for it;
 * pl_op_apply_queued leaves it queued.  Measured on one H100 (HMEp, 6.2 M
 * rows): 0.21 ms per product. */
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kron_impl.h"

#define KR_BLOCK 256 /* threads (right rows) per tile                     */
#define KR_SMEM 64   /* couplings / entries of A staged in shared memory */

/* Row (l, r) of y = H x; the coupling list and A's row l from shared
 * memory (sm, sc, scol, sval) where they fit, else from global memory. */
static __device__ double kr_row(const kr_args &a, int64_t l, int64_t r, int na, const int32_t *__restrict__ am,
                                const double *__restrict__ ac, int nh, const int32_t *__restrict__ hc,
                                const double *__restrict__ hv)
{
    const int64_t nr = a.n_right, nt = a.nterms;
    const double *xl = a.x + l * nr;
    double s = __dmul_rn(__dadd_rn(__dadd_rn(__ldg(a.dl + l), __ldg(a.dr + r)), a.shift), __ldg(xl + r));
    for (int i = 0; i < na; i++) {
        const int64_t j = r * nt + am[i];
        const double c = ac[i];
        const int32_t lo = __ldg(a.lo + j), hi = __ldg(a.hi + j);
        if (lo >= 0) s = __dadd_rn(s, __dmul_rn(__dmul_rn(c, __ldg(a.lo_val + j)), __ldg(xl + lo)));
        if (hi >= 0) s = __dadd_rn(s, __dmul_rn(__dmul_rn(c, __ldg(a.hi_val + j)), __ldg(xl + hi)));
    }
    for (int i = 0; i < nh; i++) s = __dadd_rn(s, __dmul_rn(hv[i], __ldg(a.x + (int64_t)hc[i] * nr + r)));
    return s;
}

static __global__ void __launch_bounds__(KR_BLOCK) kr_kernel(kr_args a)
{
    __shared__ int32_t sm[KR_SMEM], scol[KR_SMEM];
    __shared__ double sc[KR_SMEM], sval[KR_SMEM];
    for (int64_t t = blockIdx.x; t < a.ntiles; t += gridDim.x) {
        const int64_t l = t / a.tiles_per_l, r = (t % a.tiles_per_l) * KR_BLOCK + threadIdx.x;
        const int64_t c0 = __ldg(a.act_ptr + l), h0 = __ldg(a.a_ptr + l);
        const int na = (int)(__ldg(a.act_ptr + l + 1) - c0), nh = (int)(__ldg(a.a_ptr + l + 1) - h0);
        const bool cs = na <= KR_SMEM, hs = nh <= KR_SMEM;
        __syncthreads(); /* the previous tile is done with the shared lists */
        if (cs)
            for (int i = threadIdx.x; i < na; i += blockDim.x) {
                sm[i] = __ldg(a.act_m + c0 + i);
                sc[i] = __ldg(a.act_c + c0 + i);
            }
        if (hs)
            for (int i = threadIdx.x; i < nh; i += blockDim.x) {
                scol[i] = __ldg(a.a_col + h0 + i);
                sval[i] = __ldg(a.a_val + h0 + i);
            }
        __syncthreads();
        if (r < a.n_right)
            a.y[l * a.n_right + r] = kr_row(a, l, r, na, cs ? sm : a.act_m + c0, cs ? sc : a.act_c + c0, nh,
                                            hs ? scol : a.a_col + h0, hs ? sval : a.a_val + h0);
    }
}

extern "C" void pl_cuda_kron_destroy(pl_backend *be, void *mat)
{
    (void)be;
    pl_cuda_kron *m = (pl_cuda_kron *)mat;
    if (!m) return;
    void *p[] = {m->a_ptr, m->a_col, m->a_val, m->dl, m->dr, m->lo, m->hi, m->lo_val, m->hi_val,
                 m->act_ptr, m->act_m, m->act_c, m->c, m->pk_lo, m->pk_hi, m->pk_dict, m->rp_col, m->rp_val};
    for (size_t i = 0; i < sizeof p / sizeof p[0]; i++)
        if (p[i]) (void)cudaFree(p[i]); /* cudaFree waits for the device */
    free(m);
}

/* The uploads of kron_create (host coupling lists in ptr, am, ac). */
static int kr_upload(pl_cuda_ctx *cx, const pl_kron *k, pl_cuda_kron *m, const int64_t *ptr, const int32_t *am,
                     const double *ac, int64_t nact)
{
    const size_t nl = (size_t)k->n_left, nr = (size_t)k->n_right, nt = (size_t)k->nterms;
    const size_t nnz = (size_t)k->a_ptr[k->n_left], na = (size_t)nact;
    size_t *tot = &m->bytes;
    PL_CALL(pl_cuda_upload_array(cx, (void **)&m->a_ptr, k->a_ptr, (nl + 1) * sizeof(int64_t), tot));
    PL_CALL(pl_cuda_upload_array(cx, (void **)&m->a_col, k->a_col, nnz * sizeof(int32_t), tot));
    PL_CALL(pl_cuda_upload_array(cx, (void **)&m->a_val, k->a_val, nnz * sizeof(double), tot));
    PL_CALL(pl_cuda_upload_array(cx, (void **)&m->dl, k->dl, nl * sizeof(double), tot));
    PL_CALL(pl_cuda_upload_array(cx, (void **)&m->dr, k->dr, nr * sizeof(double), tot));
    PL_CALL(pl_cuda_upload_array(cx, (void **)&m->lo, k->lo, nr * nt * sizeof(int32_t), tot));
    PL_CALL(pl_cuda_upload_array(cx, (void **)&m->hi, k->hi, nr * nt * sizeof(int32_t), tot));
    PL_CALL(pl_cuda_upload_array(cx, (void **)&m->lo_val, k->lo_val, nr * nt * sizeof(double), tot));
    PL_CALL(pl_cuda_upload_array(cx, (void **)&m->hi_val, k->hi_val, nr * nt * sizeof(double), tot));
    PL_CALL(pl_cuda_upload_array(cx, (void **)&m->act_ptr, ptr, (nl + 1) * sizeof(int64_t), tot));
    PL_CALL(pl_cuda_upload_array(cx, (void **)&m->act_m, am, na * sizeof(int32_t), tot));
    PL_CALL(pl_cuda_upload_array(cx, (void **)&m->act_c, ac, na * sizeof(double), tot));
    if (m->variant == 2 || m->variant == 5 || m->variant == 6) /* the dense couplings */
        PL_CALL(pl_cuda_upload_array(cx, (void **)&m->c, k->c, nl * nt * sizeof(double), tot));
    PL_CUDA(cudaStreamSynchronize(cx->stream)); /* the host tables may go now */
    return PL_OK;
}

static const char *const kr_names[PL_CUDA_KRON_NVARIANTS] = {"tile",     "r-stationary", "row-smem",
                                                             "row-smem-packed", "hop-smem", "phonon-row"};

extern "C" int pl_cuda_kron_nvariants(void) { return PL_CUDA_KRON_NVARIANTS; }
extern "C" int pl_cuda_kron_variant_default(void) { return 5; }
extern "C" const char *pl_cuda_kron_variant_name(int v)
{
    return v >= 1 && v <= PL_CUDA_KRON_NVARIANTS ? kr_names[v - 1] : NULL;
}
extern "C" int pl_cuda_kron_variant_of(const void *mat, int *param)
{
    const pl_cuda_kron *m = (const pl_cuda_kron *)mat;
    if (param) *param = !m ? 0 : m->variant == 2 || m->variant == 5 ? m->chunk : m->variant >= 3 ? m->split : 0;
    return m ? m->variant : 0;
}

/* Environment variable name: an integer in [lo, hi] (or, names != NULL, a
 * variant's name) into *v; unset or empty leaves *v.  PL_ERR_INPUT else. */
static int kr_env(const char *name, int lo, int hi, const char *const *names, int *v)
{
    const char *s = getenv(name);
    if (!s || !*s) return PL_OK;
    for (int i = 0; names && i < hi; i++)
        if (!strcmp(s, names[i])) {
            *v = i + 1;
            return PL_OK;
        }
    char *end = NULL;
    const long x = strtol(s, &end, 10);
    PL_CHECK(end && !*end && x >= lo && x <= hi, PL_ERR_INPUT, "%s = '%s': not an integer in [%d, %d]%s", name, s,
             lo, hi, names ? " or a kernel name" : "");
    *v = (int)x;
    return PL_OK;
}

/* Variant 4's packed tables (host, then device); *ok = 0: they do not fit. */
static int kr_pack_upload(pl_cuda_ctx *cx, const pl_kron *k, pl_cuda_kron *m, int *ok)
{
    const size_t n = (size_t)k->n_right * (size_t)k->nterms;
    uint32_t *lo = (uint32_t *)malloc((n ? n : 1) * sizeof *lo), *hi = (uint32_t *)malloc((n ? n : 1) * sizeof *hi);
    double dict[KR_PK_DICT];
    int rc = PL_OK;
    *ok = 0;
    if (!lo || !hi) rc = PL_ERROR(PL_ERR_MEM, "out of host memory for the packed tables");
    if (rc == PL_OK) pl_kr_pack(k, lo, hi, dict, &m->pk_ndict, ok);
    if (rc == PL_OK && *ok) {
        rc = pl_cuda_upload_array(cx, (void **)&m->pk_lo, lo, n * sizeof *lo, &m->bytes);
        if (rc == PL_OK) rc = pl_cuda_upload_array(cx, (void **)&m->pk_hi, hi, n * sizeof *hi, &m->bytes);
        if (rc == PL_OK)
            rc = pl_cuda_upload_array(cx, (void **)&m->pk_dict, dict, KR_PK_DICT * sizeof(double), &m->bytes);
        const cudaError_t e = cudaStreamSynchronize(cx->stream); /* before lo, hi, dict go */
        if (rc == PL_OK && e != cudaSuccess)
            rc = PL_ERROR(PL_ERR_CUDA, "cudaStreamSynchronize: %s", cudaGetErrorString(e));
    }
    free(lo);
    free(hi);
    return rc;
}

/* The kernel of m (PJDS_KRON_KERNEL, fall-backs) and its parameters. */
static int kr_choose(pl_cuda_ctx *cx, const pl_kron *k, pl_cuda_kron *m)
{
    int v = 0, chunk = 0, split = 0, fits = 0, ok = 0;
    PL_CALL(kr_env("PJDS_KRON_KERNEL", 1, PL_CUDA_KRON_NVARIANTS, kr_names, &v));
    const int asked = v != 0;
    if (!asked) v = pl_cuda_kron_variant_default();
    PL_CALL(kr_env("PJDS_KRON_CHUNK", 1, 64, NULL, &chunk));
    PL_CALL(kr_env("PJDS_KRON_SPLIT", 1, 64, NULL, &split));
    int order = KR_RS_ORDER_DEFAULT;
    PL_CALL(kr_env("PJDS_KRON_ORDER", 1, 2, NULL, &order));
    m->rmajor = order == 2;
    int rows = 0; /* variant 6's rows over its blocks: 1 contiguous ranges, 2 strided, 0 by the size (kron_row.cu) */
    PL_CALL(kr_env("PJDS_KRON_ROWS", 1, 2, NULL, &rows));
    m->pr_strided = rows - 1;
    m->requested = v;
    if (v == 6) { /* variant 6: x[l, :] and the dictionary in shared memory, packed tables */
        PL_CALL(pl_kr_prow_setup(cx, k, m, split, &fits));
        if (fits) {
            m->variant = 6;
            return PL_OK;
        }
        m->smem = 0;
        v = 5; /* the row or the values do not fit: the default's kernel */
    }
    if (v == 5) { /* variant 5: the tile width rt (asked: PJDS_KRON_CHUNK 8, 16, 32; default: 32 only) */
        PL_CALL(pl_kr_hop_setup(cx, m, asked ? chunk : 32, &fits));
        if (fits && (asked || m->chunk == 32)) {
            m->variant = 5;
            int hb = -1; /* the block product's column groups (kron_hop_block.cu): by R */
            PL_CALL(kr_env("PJDS_KRON_BLOCK", 0, 4, NULL, &hb));
            PL_CHECK(hb == -1 || hb == 0 || hb == 2 || hb == 4, PL_ERR_INPUT, "PJDS_KRON_BLOCK = %d: not 0, 2 or 4", hb);
            return pl_kr_hb_setup(cx, m, hb);
        }
        m->smem = 0;
        m->chunk = 0;
        if (!asked) { /* the default where the tile does not fit: variant 6, two blocks per multiprocessor */
            PL_CALL(pl_kr_prow_setup(cx, k, m, split ? split : 2, &fits));
            if (fits) {
                m->variant = 6;
                return PL_OK;
            }
            m->smem = 0;
        }
        v = 2; /* x[:, tile] of every left row does not fit shared memory (narrower tiles were slower than 2) */
    }
    if (v == 3 || v == 4) {
        PL_CALL(pl_kr_row_setup(cx, m, v == 4, &fits));
        if (fits && v == 4) PL_CALL(kr_pack_upload(cx, k, m, &ok));
        if (v == 4 && (!fits || !ok)) v = 3; /* the dictionary's room or the values */
        if (v == 3) PL_CALL(pl_kr_row_setup(cx, m, 0, &fits));
        if (!fits) v = 1;
    }
    m->variant = v;
    if (v == 2) m->chunk = pl_kr_rs_chunk(m, cx->nsm, chunk);
    if (v == 3 || v == 4) m->split = pl_kr_row_split(m, cx->nsm, split);
    return PL_OK;
}

extern "C" int pl_cuda_kron_create(pl_backend *be, const pl_kron *k, void **mat)
{
    PL_CHECK_CUDA_BE(be);
    PL_CHECK(k && mat, PL_ERR_ARG, "kron_create: NULL argument");
    *mat = NULL;
    pl_cuda_ctx *cx = pl_cuda_ctx_of(be);
    pl_cuda_kron *m = (pl_cuda_kron *)calloc(1, sizeof *m);
    PL_CHECK(m, PL_ERR_MEM, "out of host memory for the matrix-free operator");
    m->n_left = k->n_left;
    m->n_right = k->n_right;
    m->nterms = k->nterms;
    m->shift = k->shift;
    const int64_t nact = k->nterms > 0 ? pl_kron_nactive(k) : 0;
    int64_t *ptr = (int64_t *)calloc((size_t)k->n_left + 1, sizeof *ptr);
    int32_t *am = (int32_t *)malloc((size_t)(nact ? nact : 1) * sizeof *am);
    double *ac = (double *)malloc((size_t)(nact ? nact : 1) * sizeof *ac);
    int rc = PL_OK;
    if (!ptr || !am || !ac) rc = PL_ERROR(PL_ERR_MEM, "out of host memory for the coupling lists");
    if (rc == PL_OK && k->nterms > 0) pl_kron_active(k, ptr, am, ac);
    if (rc == PL_OK) rc = kr_choose(cx, k, m);
    if (rc == PL_OK) rc = kr_upload(cx, k, m, ptr, am, ac, nact);
    free(ptr);
    free(am);
    free(ac);
    if (rc != PL_OK) {
        pl_cuda_kron_destroy(be, m);
        return pl_error_trace(rc, __FILE__, __LINE__, __func__, "kr_choose / kr_upload");
    }
    be->bytes_h2d += (double)m->bytes;
    *mat = m;
    return PL_OK;
}

extern "C" int pl_cuda_kron_apply(pl_backend *be, const void *mat, const double *x, double *y)
{
    const pl_cuda_kron *m = (const pl_cuda_kron *)mat;
    PL_CHECK(m && x && y, PL_ERR_ARG, "kron_apply: NULL argument");
    pl_cuda_ctx *cx = pl_cuda_ctx_of(be);
    kr_args a;
    pl_kr_args_of(m, x, y, &a);
    if (a.ntiles == 0) return PL_OK;
    if (m->variant == 2) PL_CALL(pl_kr_launch_rs(cx, m, &a));
    if (m->variant == 3 || m->variant == 4) PL_CALL(pl_kr_launch_row(cx, m, &a));
    if (m->variant == 5) PL_CALL(pl_kr_launch_hop(cx, m, &a));
    if (m->variant == 6) PL_CALL(pl_kr_launch_prow(cx, m, &a));
    if (m->variant != 1) return PL_OK;
    const unsigned grid = (unsigned)(a.ntiles < (int64_t)INT32_MAX ? a.ntiles : (int64_t)INT32_MAX);
    kr_kernel<<<grid, KR_BLOCK, 0, cx->stream>>>(a);
    PL_CUDA_LAUNCH();
    return PL_OK;
}

void pl_kr_args_of(const pl_cuda_kron *m, const double *x, double *y, kr_args *ap)
{
    kr_args &a = *ap;
    memset(ap, 0, sizeof *ap);
    a.n_left = m->n_left;
    a.n_right = m->n_right;
    a.tiles_per_l = (m->n_right + KR_BLOCK - 1) / KR_BLOCK;
    a.ntiles = m->n_left * a.tiles_per_l;
    a.nterms = m->nterms;
    a.shift = m->shift;
    a.a_ptr = m->a_ptr;
    a.a_col = m->a_col;
    a.a_val = m->a_val;
    a.dl = m->dl;
    a.dr = m->dr;
    a.lo = m->lo;
    a.hi = m->hi;
    a.lo_val = m->lo_val;
    a.hi_val = m->hi_val;
    a.act_ptr = m->act_ptr;
    a.act_m = m->act_m;
    a.act_c = m->act_c;
    a.x = x;
    a.y = y;
}
