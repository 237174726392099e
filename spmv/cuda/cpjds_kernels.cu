/* cpjds_kernels.cu — the compressed pJDS on the GPU (spmv.h "compressed
 * pJDS"): upload (be->cmat_create), SpMV and SpMMV kernels.
 *
 * SpMV: one thread per row (rows in their original order), chunk c = r / C,
 * lane r % C; the row's U next entry words are loaded first (U independent
 * loads in flight), then their value and offset from the tables, then the U
 * gathers of x; one accumulator, j ascending (the CPU kernel's rounding
 * order).  The loop bound is the row's true length: padding is never read.
 * The tables (HMEp: 13 kB of values, 26 kB of offsets) are read through the
 * read-only data cache (__ldg) and stay in L1/L2; the entry words are read
 * once per product with a streaming (ld.global.cs) or L2 evict_first hint,
 * so that they do not push x out of L2.  Variants: U in {2, 4, 8} and the
 * hint, chosen by `bench` (PJDS_CPJDS_VARIANT picks one by name).
 * Narrow layout (chosen at upload, any variant): where every word fits 24
 * bits (HMEp: 11 + 13) the words live as two planes, the low 16 bits and
 * the high 8 bits (3 B per entry instead of 4, both planes coalesced), and
 * where every row has at most 255 entries the lengths are bytes (1 B per
 * row instead of 4).  ncu on HMEp (H100, 2026-11-25): the 32-bit kernel
 * moves ~595 MB from DRAM at 73 % of its peak (the x gathers hit L2 40 % of
 * the time), so the time follows the bytes; the planes remove 83 MB and the
 * byte lengths 19 MB.  Tried and rejected in the same run: the tables in
 * shared memory (persistent grid; values only 0.261 ms, offsets 0.331 ms,
 * both 0.294 ms against 0.251 ms through __ldg) and x in the persisting
 * part of L2 (an access policy window: 0.269-0.299 ms, the L2 hit rate
 * unchanged at 41 %).
 * SpMMV: one thread per (row, group of up to 8 vectors), the entry decoded
 * once per group.
 */
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_impl.h"

enum { CH_NC = 0, CH_CS = 1, CH_EF = 2 };

/* One entry word (or plane element) with the load hint, zero-extended to
 * 32 bits: T = uint32_t, uint16_t or uint8_t. */
template <typename T>
static __device__ __forceinline__ uint32_t ld_hint(const T *p, int hint)
{
    if (hint == CH_CS) return __ldcs(p);
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    if (hint == CH_EF) {
        uint64_t pol;
        uint32_t r;
        asm("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(pol));
        if (sizeof(T) == 4) asm("ld.global.nc.L2::cache_hint.u32 %0, [%1], %2;" : "=r"(r) : "l"(p), "l"(pol));
        else if (sizeof(T) == 2) asm("ld.global.nc.L2::cache_hint.u16 %0, [%1], %2;" : "=r"(r) : "l"(p), "l"(pol));
        else asm("ld.global.nc.L2::cache_hint.u8 %0, [%1], %2;" : "=r"(r) : "l"(p), "l"(pol));
        return r;
    }
#endif
    return __ldg(p);
}

typedef struct pl_ckargs {
    int32_t nrows, C, obits;
    uint32_t omask;
    const int64_t *__restrict__ chunk_start;
    const int32_t *__restrict__ row_len;
    const uint8_t *__restrict__ len8;
    const uint32_t *__restrict__ ent;
    const uint16_t *__restrict__ ent16;
    const uint8_t *__restrict__ ent8;
    const double *__restrict__ vtab;
    const int32_t *__restrict__ otab;
    const double *__restrict__ x;
    double *__restrict__ y;
} pl_ckargs;

/* entry word i (element offset from the chunk start + lane) in the layout NW
 * (0: 32-bit words, 1: 16 + 8-bit planes) */
template <int NW, int HINT>
static __device__ __forceinline__ uint32_t ent_at(const pl_ckargs &a, int64_t i)
{
    if (NW) return ld_hint(a.ent16 + i, HINT) | (ld_hint(a.ent8 + i, HINT) << 16);
    return ld_hint(a.ent + i, HINT);
}

/* CC: compile-time chunk height (0: a.C at run time); NW: narrow words;
 * NL: byte lengths */
template <int CC, int U, int HINT, int NW, int NL>
__global__ void __launch_bounds__(256) k_cspmv(const pl_ckargs a)
{
    const int32_t r = (int32_t)(blockIdx.x * blockDim.x + threadIdx.x);
    if (r >= a.nrows) return;
    const int32_t C = CC ? CC : a.C;
    const int64_t e = a.chunk_start[r / C] + r % C;
    const int32_t l = NL ? (int32_t)__ldg(a.len8 + r) : a.row_len[r];
    const double *xr = a.x + r;
    double s = 0.0;
    int32_t j = 0;
    for (; j + U <= l; j += U) {
        uint32_t u[U];
#pragma unroll
        for (int k = 0; k < U; k++) u[k] = ent_at<NW, HINT>(a, e + (int64_t)(j + k) * C);
        double v[U];
        int32_t o[U];
#pragma unroll
        for (int k = 0; k < U; k++) {
            v[k] = __ldg(a.vtab + (u[k] >> a.obits));
            o[k] = __ldg(a.otab + (u[k] & a.omask));
        }
#pragma unroll
        for (int k = 0; k < U; k++) s += v[k] * __ldg(xr + o[k]);
    }
    for (; j < l; j++) {
        const uint32_t u = ent_at<NW, HINT>(a, e + (int64_t)j * C);
        s += __ldg(a.vtab + (u >> a.obits)) * __ldg(xr + __ldg(a.otab + (u & a.omask)));
    }
    a.y[r] = s;
}

typedef void (*ckern)(const pl_ckargs);
typedef struct cvariant {
    const char *name;
    ckern k32[4], kany[4]; /* C = 32, any C; [2 NW + NL] */
} cvariant;
#define CV(NAME, U, H)                                                                                              \
    {NAME,                                                                                                          \
     {k_cspmv<32, U, H, 0, 0>, k_cspmv<32, U, H, 0, 1>, k_cspmv<32, U, H, 1, 0>, k_cspmv<32, U, H, 1, 1>},           \
     {k_cspmv<0, U, H, 0, 0>, k_cspmv<0, U, H, 0, 1>, k_cspmv<0, U, H, 1, 0>, k_cspmv<0, U, H, 1, 1>}}
static const cvariant cvariants[] = {
    CV("c-u2-nc", 2, CH_NC), CV("c-u4-nc", 4, CH_NC), CV("c-u4-cs", 4, CH_CS),
    CV("c-u4-ef", 4, CH_EF), CV("c-u8-cs", 8, CH_CS), CV("c-u8-ef", 8, CH_EF),
};
#undef CV
#define NCVARIANTS ((int)(sizeof cvariants / sizeof cvariants[0]))
/* The default depends on the layout (chosen when the matrix is uploaded,
 * unless PJDS_CPJDS_VARIANT names one).  The H100 sweep of `bench` on HMEp
 * (2026-11-25, ms per operator apply), 32-bit words: c-u2-nc 0.2535,
 * c-u8-cs 0.2540, c-u8-ef 0.2555, c-u4-nc 0.2622, c-u4-ef 0.2670, c-u4-cs
 * 0.2751; narrow planes: c-u4-nc 0.2383, c-u4-ef 0.2384, c-u8-ef 0.2424,
 * c-u4-cs 0.2495, c-u8-cs 0.2588, c-u2-nc 0.2802 (two loads per entry want
 * more entries in flight). */
#define PL_CPJDS_VARIANT_WIDE 0   /* c-u2-nc */
#define PL_CPJDS_VARIANT_NARROW 1 /* c-u4-nc */

static pl_ckargs ckargs(const pl_cuda_mat *m, const double *x, double *y)
{
    pl_ckargs a;
    a.nrows = m->nrows;
    a.C = m->C;
    a.obits = m->c_obits;
    a.omask = (uint32_t)(((uint64_t)1 << m->c_obits) - 1);
    a.chunk_start = m->d_chunk_start;
    a.row_len = m->d_row_len;
    a.len8 = m->d_len8;
    a.ent = m->d_ent;
    a.ent16 = m->d_ent16;
    a.ent8 = m->d_ent8;
    a.vtab = m->d_vtab;
    a.otab = m->d_otab;
    a.x = x;
    a.y = y;
    return a;
}

extern "C" int pl_cuda_cpjds_nvariants(void) { return NCVARIANTS; }
extern "C" const char *pl_cuda_cpjds_variant_name(int v) { return v >= 0 && v < NCVARIANTS ? cvariants[v].name : NULL; }
extern "C" int pl_cuda_cpjds_variant_by_name(const char *name)
{
    for (int v = 0; name && v < NCVARIANTS; v++)
        if (!strcmp(name, cvariants[v].name)) return v;
    return -1;
}

extern "C" int pl_cuda_cpjds_variant_default(void)
{
    pl_spmv_tuning t;
    pl_spmv_tuning_from_env(&t);
    return pl_cuda_cpjds_variant_by_name(t.cpjds_variant); /* -1: by the layout, at upload */
}

/* The kernel of variant v for m's chunk height and layout. */
static ckern ckernel(const pl_cuda_mat *m, int v)
{
    const int lay = (m->d_ent16 ? 2 : 0) + (m->d_len8 ? 1 : 0);
    return (m->C == 32 ? cvariants[v].k32 : cvariants[v].kany)[lay];
}

extern "C" int pl_cuda_cpjds_spmv(pl_cuda_ctx *cx, const pl_cuda_mat *m, int variant, const double *x, double *y)
{
    PL_CHECK(variant >= 0 && variant < NCVARIANTS, PL_ERR_ARG, "compressed SpMV variant %d out of range", variant);
    if (m->nrows == 0) return PL_OK;
    const pl_ckargs a = ckargs(m, x, y);
    const int bs = 256;
    const unsigned nb = (unsigned)(((int64_t)m->nrows + bs - 1) / bs);
    ckernel(m, variant)<<<nb, bs, 0, cx->stream>>>(a);
    PL_CUDA_LAUNCH();
    return PL_OK;
}

/* Y = A X, R row-major vectors; blockIdx.y: the group of up to 8 vectors */
__global__ void __launch_bounds__(256) k_cspmm(const pl_ckargs a, int R, const double *__restrict__ X,
                                               double *__restrict__ Y)
{
    const int32_t r = (int32_t)(blockIdx.x * blockDim.x + threadIdx.x);
    if (r >= a.nrows) return;
    const int q0 = (int)blockIdx.y * 8, nq = R - q0 < 8 ? R - q0 : 8;
    const int64_t e = a.chunk_start[r / a.C] + r % a.C;
    const int32_t l = a.len8 ? (int32_t)__ldg(a.len8 + r) : a.row_len[r];
    double acc[8];
#pragma unroll
    for (int k = 0; k < 8; k++) acc[k] = 0.0;
    for (int32_t j = 0; j < l; j++) {
        const int64_t i = e + (int64_t)j * a.C;
        const uint32_t u = a.ent16 ? ent_at<1, CH_NC>(a, i) : ent_at<0, CH_NC>(a, i);
        const double v = __ldg(a.vtab + (u >> a.obits));
        const double *xr = X + ((int64_t)r + __ldg(a.otab + (u & a.omask))) * R + q0;
#pragma unroll
        for (int k = 0; k < 8; k++)
            if (k < nq) acc[k] += v * __ldg(xr + k);
    }
    double *yr = Y + (int64_t)r * R + q0;
#pragma unroll
    for (int k = 0; k < 8; k++)
        if (k < nq) yr[k] = acc[k];
}

extern "C" int pl_cuda_cpjds_spmm(pl_cuda_ctx *cx, const pl_cuda_mat *m, int R, const double *X, double *Y)
{
    PL_CHECK(R >= 1 && R <= PL_SPMM_RMAX, PL_ERR_ARG, "spmm: R = %d outside 1..%d", R, PL_SPMM_RMAX);
    if (m->nrows == 0) return PL_OK;
    const pl_ckargs a = ckargs(m, NULL, NULL);
    const int bs = 256;
    const dim3 grid((unsigned)(((int64_t)m->nrows + bs - 1) / bs), (unsigned)((R + 7) / 8));
    k_cspmm<<<grid, bs, 0, cx->stream>>>(a, R, X, Y);
    PL_CUDA_LAUNCH();
    return PL_OK;
}

/* Staging of the entry words (staging.cu): two page-locked sets of this
 * many words (3 B narrow, 4 B wide: 12-16 MiB per set). */
#define PL_CMAT_STAGE_ENTRIES (INT64_C(4) << 20)

typedef struct cmat_src {
    const pl_cpjds *p;
    pl_cpjds_fill_fn fill; /* NULL: from the host words p->ent */
    void *arg;
    int narrow;            /* planes: 16-bit low, 8-bit high; else 32-bit words */
} cmat_src;

static int cmat_stage_fill(void *arg, int64_t c0, int64_t c1, void *const *pl)
{
    const cmat_src *s = (const cmat_src *)arg;
    uint32_t *w = s->narrow ? NULL : (uint32_t *)pl[0];
    uint16_t *lo = s->narrow ? (uint16_t *)pl[0] : NULL;
    uint8_t *hi = s->narrow ? (uint8_t *)pl[1] : NULL;
    if (s->fill) return s->fill(s->arg, c0, c1, w, lo, hi);
    pl_cpjds_copy_words(s->p, c0, c1, w, lo, hi);
    return PL_OK;
}

/* Layout, tables and device arrays of m, the byte lengths through hl (set
 * when every row has at most 255 entries). */
static int cmat_arrays(pl_cuda_ctx *cx, const pl_cpjds *p, int narrow_words, int byte_len, uint8_t *hl,
                       pl_cuda_mat *m, size_t *tot)
{
    const size_t nlen = (size_t)p->nchunks * (size_t)p->C, nent = (size_t)p->nent;
    PL_CALL(pl_cuda_upload_array(cx, (void **)&m->d_chunk_start, p->chunk_start,
                                 (size_t)(p->nchunks + 1) * sizeof(int64_t), tot));
    PL_CALL(pl_cuda_upload_array(cx, (void **)&m->d_chunk_width, p->chunk_width, (size_t)p->nchunks * sizeof(int32_t),
                                 tot));
    if (byte_len) PL_CALL(pl_cuda_upload_array(cx, (void **)&m->d_len8, hl, nlen, tot));
    else PL_CALL(pl_cuda_upload_array(cx, (void **)&m->d_row_len, p->row_len, nlen * sizeof(int32_t), tot));
    PL_CALL(pl_cuda_upload_array(cx, (void **)&m->d_vtab, p->vtab, (size_t)p->nval * sizeof(double), tot));
    PL_CALL(pl_cuda_upload_array(cx, (void **)&m->d_otab, p->otab, (size_t)p->noff * sizeof(int32_t), tot));
    if (narrow_words) { /* allocation only: the words come through the staging */
        PL_CALL(pl_cuda_upload_array(cx, (void **)&m->d_ent16, NULL, nent * sizeof(uint16_t), tot));
        PL_CALL(pl_cuda_upload_array(cx, (void **)&m->d_ent8, NULL, nent, tot));
    } else {
        PL_CALL(pl_cuda_upload_array(cx, (void **)&m->d_ent, NULL, nent * sizeof(uint32_t), tot));
    }
    return PL_OK;
}

/* The layout, the tables and the entry words in device memory (a
 * pl_cuda_mat with compressed = 1; d_col and d_val stay NULL); the words
 * written by fill (cmat_create_fill) or taken from p->ent (cmat_create),
 * through page-locked staging.  Narrow planes where the words fit 24 bits
 * and byte lengths where the rows have at most 255 entries (header). */
static int cmat_make(pl_backend *be, const pl_cpjds *p, pl_cpjds_fill_fn fill, void *arg, void **mat)
{
    pl_cuda_ctx *cx = pl_cuda_ctx_of(be);
    *mat = NULL;
    PL_CHECK(fill || p->ent || p->nent == 0, PL_ERR_ARG, "cmat_create: the compressed matrix has no entries");
    pl_cuda_mat *m = (pl_cuda_mat *)calloc(1, sizeof *m);
    PL_CHECK(m, PL_ERR_MEM, "out of host memory");
    m->compressed = 1;
    m->nrows = p->nrows;
    m->ncols = p->nrows;
    m->C = p->C;
    m->nchunks = p->nchunks;
    m->nnz = p->nnz;
    m->nent = p->nent;
    m->c_obits = p->obits;
    const size_t nlen = (size_t)p->nchunks * (size_t)p->C, nent = (size_t)p->nent;
    const int narrow = !be->tune.cpjds_wide; /* wide: 32-bit words and lengths (A/B timing) */
    const int narrow_words = narrow && nent > 0 && p->obits <= 24 &&
                             ((uint64_t)(p->nval > 0 ? p->nval : 1) << p->obits) <= ((uint64_t)1 << 24);
    int byte_len = narrow && nlen > 0;
    for (size_t i = 0; i < nlen && byte_len; i++) byte_len = p->row_len[i] >= 0 && p->row_len[i] <= 255;
    uint8_t *hl = NULL;
    size_t tot = 0;
    int rc = PL_OK;
    if (byte_len) {
        hl = (uint8_t *)malloc(nlen);
        if (!hl) rc = PL_ERROR(PL_ERR_MEM, "out of host memory (%zu bytes of row lengths)", nlen);
        else
            for (size_t i = 0; i < nlen; i++) hl[i] = (uint8_t)p->row_len[i];
    }
    if (rc == PL_OK) rc = cmat_arrays(cx, p, narrow_words, byte_len, hl, m, &tot);
    if (rc == PL_OK) { /* the words; returns after every copy, those above included */
        int64_t stage = be->tune.fill_stage_entries > 0 ? be->tune.fill_stage_entries : PL_CMAT_STAGE_ENTRIES;
        cmat_src src = {p, fill, arg, narrow_words};
        const size_t es_n[2] = {sizeof(uint16_t), sizeof(uint8_t)}, es_w[1] = {sizeof(uint32_t)};
        void *const dn[2] = {m->d_ent16, m->d_ent8}, *const dw[1] = {m->d_ent};
        rc = pl_cuda_staged_upload(cx, p->chunk_start, p->nchunks, stage, narrow_words ? 2 : 1,
                                   narrow_words ? es_n : es_w, narrow_words ? dn : dw, cmat_stage_fill, &src);
    }
    m->bytes = tot;
    if (rc != PL_OK) (void)cudaStreamSynchronize(cx->stream); /* no copy from hl in flight */
    free(hl);
    /* the matrix's kernel: the configured one, else its layout's best */
    m->cvariant = cx->cvariant_upload >= 0 ? cx->cvariant_upload
                : narrow_words             ? PL_CPJDS_VARIANT_NARROW
                                           : PL_CPJDS_VARIANT_WIDE;
    if (rc == PL_OK) cx->cvariant_last = m->cvariant;
    if (rc == PL_OK && !be->tune.cuda_no_preload) /* loaded now, not in the solve's first product */
        rc = pl_cuda_load(ckernel(m, m->cvariant));
    if (rc != PL_OK) {
        be->mat_destroy(be, m);
        return rc;
    }
    *mat = m;
    return PL_OK;
}

/* be->cmat_create: from the host words p->ent. */
extern "C" int pl_cuda_cmat_create(pl_backend *be, const pl_cpjds *p, void **mat)
{
    return cmat_make(be, p, NULL, NULL, mat);
}

/* be->cmat_create_fill: the words written by fill into the staging buffers. */
extern "C" int pl_cuda_cmat_create_fill(pl_backend *be, const pl_cpjds *p, pl_cpjds_fill_fn fill, void *arg,
                                        void **mat)
{
    PL_CHECK(fill, PL_ERR_ARG, "cmat_create_fill: no fill function");
    return cmat_make(be, p, fill, arg, mat);
}
