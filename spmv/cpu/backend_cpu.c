/* backend_cpu.c — the CPU backend: vector operations and the pJDS SpMV with
 * OpenMP, dense kernels (V^T w, V h, V Y) through OpenBLAS's CBLAS.
 *
 * SpMV kernel: one thread owns a contiguous range of chunks, the ranges are
 * balanced by stored entries at mat_create time (sorted rows make the first
 * chunks the heaviest, so a plain static schedule would be unbalanced).
 * Inside a chunk, C row accumulators live in registers/L1; the loop over the
 * chunk's columns j streams C values and C indices, and the inner loop over
 * the C rows is a gather-FMA that the compiler vectorises (AVX2/AVX-512
 * gathers).  Specialised for C = 32, 16, 8, 4 (compile-time trip counts);
 * other C use a generic loop.  Threads write disjoint rows of y (row_map
 * rows are distinct too), so no atomics.
 * Performance (dev box: 2 vCPUs of a shared Xeon with AVX-512, other jobs
 * running, so +-30 % run to run; `pjds-lanczos bench configs/hmep.ini` and
 * tests/spmv/bench_spmv_cpu): memory-bound, on par with a plain OpenMP CSR
 * loop.  HMEp (6.2 M rows, 83 M nnz, C = 32), 2 threads, two runs:
 *   pJDS full sort 158 / 220 ms (1.05 / 0.75 GF/s), sort window 65536
 *   122 / 241 ms, CSR (OpenMP) 146 / 216 ms, ELLPACK-R 179 / 236 ms;
 *   i.e. 42-55 % of the 12 B/nnz + 20 B/row floor at memcpy bandwidth.
 * The AVX2/AVX-512 gathers beat the scalar (SSE2 default) build by about
 * 1.3-1.5x on HMEp here (PJDS_CPU_ISA=default to compare).
 *
 * Vector operations: OpenMP loops with a static schedule (the same
 * first-touch pattern for every vector).  dot: OpenMP reduction (partial
 * sum of this rank only; the MPI_Allreduce is in op.c).
 *
 * Memory: vectors are 64-byte aligned host memory; "upload"/"download" are
 * memcpy and their bytes are counted like device copies.  mat_create keeps a
 * reference to the host pJDS (no copy).
 */
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "pl_build.h"
#include "pl_error.h"
#include "pl_random.h"
#include "spmv.h"
#include "spmv_impl.h"
#include "cpu_isa.h"
#include "cpu_kron_block.h"
#include "cpu_ts.h"

/* Matrix handle: the host pJDS and a balanced chunk partition. */
typedef struct cpu_mat {
    const pjds *p;         /* pJDS, or NULL when cp is set          */
    const pl_cpjds *cp;    /* compressed pJDS (cmat_create), or NULL */
    int nparts;
    int32_t *part; /* nparts + 1 chunk boundaries */
} cpu_mat;

static int cpu_vec_alloc(pl_backend *be, size_t n, double **v)
{
    (void)be;
    size_t bytes = 0;
    PL_CHECK(!pl_mul_size(n ? n : 1, sizeof(double), &bytes), PL_ERR_OVERFLOW, "vector of %zu doubles overflows", n);
    bytes = (bytes + 63) / 64 * 64;
    void *p = aligned_alloc(64, bytes);
    PL_CHECK(p, PL_ERR_MEM, "out of host memory for a vector of %zu doubles", n);
    *v = p;
    return PL_OK;
}

static void cpu_vec_free(pl_backend *be, double *v)
{
    (void)be;
    free(v);
}

static int cpu_upload(pl_backend *be, double *dst, const double *src, size_t n)
{
    if (n && dst != src) memcpy(dst, src, n * sizeof(double));
    be->bytes_h2d += (double)n * sizeof(double);
    return PL_OK;
}

static int cpu_download(pl_backend *be, double *dst, const double *src, size_t n)
{
    if (n && dst != src) memcpy(dst, src, n * sizeof(double));
    be->bytes_d2h += (double)n * sizeof(double);
    return PL_OK;
}

/* Loops below are OpenMP-parallel only when long enough to pay for a fork. */
#define PL_OMP_MIN 8192

static int cpu_copy(pl_backend *be, size_t n, const double *x, double *y)
{
    (void)be;
    if (x == y) return PL_OK;
#pragma omp parallel for schedule(static) if (n > PL_OMP_MIN)
    for (size_t i = 0; i < n; i++) y[i] = x[i];
    return PL_OK;
}

static int cpu_set(pl_backend *be, size_t n, double a, double *x)
{
    (void)be;
#pragma omp parallel for schedule(static) if (n > PL_OMP_MIN)
    for (size_t i = 0; i < n; i++) x[i] = a;
    return PL_OK;
}

static int cpu_scal(pl_backend *be, size_t n, double a, double *x)
{
    (void)be;
#pragma omp parallel for schedule(static) if (n > PL_OMP_MIN)
    for (size_t i = 0; i < n; i++) x[i] *= a;
    return PL_OK;
}

static int cpu_axpy(pl_backend *be, size_t n, double a, const double *x, double *y)
{
    (void)be;
#pragma omp parallel for schedule(static) if (n > PL_OMP_MIN)
    for (size_t i = 0; i < n; i++) y[i] += a * x[i];
    return PL_OK;
}

static int cpu_dot(pl_backend *be, size_t n, const double *x, const double *y, double *r)
{
    (void)be;
    double s = 0.0;
#pragma omp parallel for schedule(static) reduction(+ : s) if (n > PL_OMP_MIN)
    for (size_t i = 0; i < n; i++) s += x[i] * y[i];
    *r = s;
    return PL_OK;
}

/* A matrix handle over nc chunks of C rows starting at chunk_start (nent
 * entries in all), its chunks cut into one balanced range per thread. */
static int mat_parts(int32_t nc, const int64_t *chunk_start, int C, int64_t nent, cpu_mat **out)
{
    cpu_mat *m = calloc(1, sizeof *m);
    PL_CHECK(m, PL_ERR_MEM, "out of host memory");
    int nt = omp_get_max_threads();
    if (nt < 1) nt = 1;
    /* a few parts per thread would allow dynamic balancing; one per thread
     * keeps each thread on the same rows (and pages) every time */
    m->nparts = nt;
    m->part = malloc((size_t)(nt + 1) * sizeof *m->part);
    if (!m->part) {
        free(m);
        return PL_ERROR(PL_ERR_MEM, "out of host memory");
    }
    /* boundary k: first chunk whose start reaches k/nt of the entries (plus
     * C per chunk for the per-row work, so empty chunks still spread) */
    int32_t c = 0;
    m->part[0] = 0;
    double total = (double)nent + (double)nc * C;
    for (int k = 1; k < nt; k++) {
        double target = total * k / nt;
        while (c < nc && (double)chunk_start[c] + (double)c * C < target) c++;
        m->part[k] = c;
    }
    m->part[nt] = nc;
    *out = m;
    return PL_OK;
}

static int cpu_mat_create(pl_backend *be, const pjds *h, void **mat)
{
    (void)be;
    cpu_mat *m = NULL;
    PL_CALL(mat_parts(h->nchunks, h->chunk_start, h->C, h->nent, &m));
    m->p = h;
    *mat = m;
    return PL_OK;
}

/* The compressed matrix: kernels in cpu_cpjds.c. */
static int cpu_cmat_create(pl_backend *be, const pl_cpjds *h, void **mat)
{
    (void)be;
    PL_CHECK(h->ent || h->nent == 0, PL_ERR_ARG, "cmat_create: the compressed matrix has no entries");
    cpu_mat *m = NULL;
    PL_CALL(mat_parts(h->nchunks, h->chunk_start, h->C, h->nent, &m));
    m->cp = h;
    *mat = m;
    return PL_OK;
}

/* The values live in the host pJDS the matrix references (the operator's). */
static int cpu_mat_values(pl_backend *be, void *mat, double **val, size_t *n)
{
    (void)be;
    cpu_mat *m = mat;
    if (m->cp) return PL_ERR_NOTSUP; /* values live in a table, shared by entries */
    *val = m->p->val;
    *n = (size_t)m->p->nent;
    PL_CHECK(m->p->val || m->p->nent == 0, PL_ERR_ARG, "the matrix has no host values");
    return PL_OK;
}

static void cpu_mat_destroy(pl_backend *be, void *mat)
{
    (void)be;
    cpu_mat *m = mat;
    if (!m) return;
    free(m->part);
    free(m);
}

typedef void (*chunk_fn)(const pjds *, int32_t, int32_t, const double *, double *);

/* Chunks [c0, c1), compile-time C: acc[r] += val * x[col] over the chunk's
 * columns, C rows at a time (one vector gather-FMA per column and SIMD
 * width). */
#define PL_CHUNK_KERNEL(CC, ISA)                                                                 \
    PL_TGT_##ISA static void chunk_range_##CC##_##ISA(const pjds *p, int32_t c0, int32_t c1,     \
                                                      const double *restrict x, double *restrict y) \
    {                                                                                            \
        const int32_t n = p->nrows;                                                              \
        const int32_t *restrict map = p->row_map;                                                \
        for (int32_t c = c0; c < c1; c++) {                                                      \
            double acc[CC];                                                                      \
            for (int r = 0; r < CC; r++) acc[r] = 0.0;                                           \
            const int32_t *restrict col = p->col + p->chunk_start[c];                            \
            const double *restrict val = p->val + p->chunk_start[c];                             \
            const int32_t w = p->chunk_width[c];                                                 \
            for (int32_t j = 0; j < w; j++) {                                                    \
                _Pragma("omp simd") for (int r = 0; r < CC; r++) acc[r] += val[r] * x[col[r]];   \
                col += CC;                                                                       \
                val += CC;                                                                       \
            }                                                                                    \
            int32_t r0 = c * CC, rn = n - r0 < CC ? n - r0 : CC;                                 \
            if (map)                                                                             \
                for (int r = 0; r < rn; r++) y[map[r0 + r]] += acc[r];                           \
            else if (rn == CC)                                                                   \
                for (int r = 0; r < CC; r++) y[r0 + r] = acc[r];                                 \
            else                                                                                 \
                for (int r = 0; r < rn; r++) y[r0 + r] = acc[r];                                 \
        }                                                                                        \
    }
#define PL_CHUNK_KERNELS(ISA)                                                                    \
    PL_CHUNK_KERNEL(32, ISA)                                                                     \
    PL_CHUNK_KERNEL(16, ISA)                                                                     \
    PL_CHUNK_KERNEL(8, ISA)                                                                      \
    PL_CHUNK_KERNEL(4, ISA)                                                                      \
    PL_CHUNK_KERNEL(1, ISA)
PL_CHUNK_KERNELS(default)
#if PL_HAVE_ISA_CLONES
PL_CHUNK_KERNELS(avx2)
PL_CHUNK_KERNELS(avx512)
#endif

static chunk_fn chunk_kernel(int isa, int C)
{
#define PL_PICK(ISA)                                                                             \
    switch (C) {                                                                                 \
    case 32: return chunk_range_32_##ISA;                                                        \
    case 16: return chunk_range_16_##ISA;                                                        \
    case 8: return chunk_range_8_##ISA;                                                          \
    case 4: return chunk_range_4_##ISA;                                                          \
    case 1: return chunk_range_1_##ISA;                                                          \
    default: return NULL;                                                                        \
    }
    PL_ISA_DISPATCH(isa, PL_PICK);
#undef PL_PICK
}

/* The best instruction set of this CPU, capped at cap (>= 0; -1: none). */
static int detect_isa(int cap)
{
    int isa = PL_ISA_DEFAULT;
#if PL_HAVE_ISA_CLONES
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) isa = PL_ISA_AVX2;
    if (isa == PL_ISA_AVX2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
        __builtin_cpu_supports("avx512dq"))
        isa = PL_ISA_AVX512;
    if (cap >= 0 && cap < isa) isa = cap;
#else
    (void)cap;
#endif
    return isa;
}

/* Any C: row-by-row inside the chunk (each row's entries are C apart). */
static void chunk_range_generic(const pjds *p, int32_t c0, int32_t c1, const double *restrict x, double *restrict y)
{
    const int32_t C = p->C, n = p->nrows;
    for (int32_t c = c0; c < c1; c++) {
        int32_t r0 = c * C, rn = n - r0 < C ? n - r0 : C;
        const int32_t *restrict col = p->col + p->chunk_start[c];
        const double *restrict val = p->val + p->chunk_start[c];
        for (int32_t r = 0; r < rn; r++) {
            double s = 0.0;
            int32_t l = p->row_len[r0 + r];
            for (int32_t j = 0; j < l; j++) s += val[(int64_t)j * C + r] * x[col[(int64_t)j * C + r]];
            if (p->row_map)
                y[p->row_map[r0 + r]] += s;
            else
                y[r0 + r] = s;
        }
    }
}

static int cpu_spmv(pl_backend *be, const void *mat, const double *x, double *y)
{
    const cpu_mat *m = mat;
    const int *isa = be->ctx;
    if (m->cp) return cpu_cpjds_spmv(*isa, be->tune.cpu_cpjds_rows, m->cp, m->nparts, m->part, x, y);
    const pjds *p = m->p;
    if (p->nrows == 0) return PL_OK;
    chunk_fn kern = chunk_kernel(*isa, p->C);
    if (!kern) kern = chunk_range_generic;
    int np = m->nparts;
    if (np == 1 || p->nent < 4096) {
        kern(p, 0, p->nchunks, x, y);
        return PL_OK;
    }
#pragma omp parallel num_threads(np)
    {
        int t = omp_get_thread_num(), nt = omp_get_num_threads();
        for (int k = t; k < np; k += nt) kern(p, m->part[k], m->part[k + 1], x, y);
    }
    return PL_OK;
}

static int cpu_spmm(pl_backend *be, const void *mat, int R, const double *X, double *Y)
{
    if (R == 1) return cpu_spmv(be, mat, X, Y); /* one vector: the SpMV kernel (row-major = plain) */
    const cpu_mat *m = mat;
    if (m->cp) return cpu_cpjds_spmm(m->cp, m->nparts, m->part, R, X, Y);
    return cpu_spmm_mat(be, m->p, m->nparts, m->part, R, X, Y);
}

static int cpu_spmm_aug(pl_backend *be, const void *mat, int R, double alpha, double gamma, double beta,
                        const double *X, double *Y, double *h_dots)
{
    const cpu_mat *m = mat;
    if (m->cp) return PL_ERR_NOTSUP; /* pl_op_apply_block_aug composes the step */
    return cpu_spmm_aug_mat(be, m->p, R, alpha, gamma, beta, X, Y, h_dots);
}

static int cpu_idx_create(pl_backend *be, const int32_t *h_idx, size_t n, int32_t **idx)
{
    (void)be;
    int32_t *p = NULL;
    PL_MALLOC(p, n ? n : 1);
    if (n) memcpy(p, h_idx, n * sizeof *p);
    *idx = p;
    return PL_OK;
}

/* spmv.h rand_block: V[i R + c] = lz_random_element(seeds[c], g_i) in
 * place (no host staging and no copy), rows over the threads. */
static int cpu_rand_block(pl_backend *be, size_t n, int R, const uint64_t *seeds, int64_t g0, const int32_t *idx,
                          double *V)
{
    (void)be;
    PL_CHECK(R >= 1 && R <= PL_SPMM_RMAX && seeds && V, PL_ERR_ARG, "rand_block: R = %d outside 1..%d or NULL argument",
             R, PL_SPMM_RMAX);
    uint64_t hs[PL_SPMM_RMAX];
    for (int c = 0; c < R; c++) hs[c] = pl_splitmix64(seeds[c]);
    const int64_t nn = (int64_t)n;
#pragma omp parallel for schedule(static) if ((size_t)nn * (size_t)R > PL_OMP_MIN)
    for (int64_t i = 0; i < nn; i++) {
        const int64_t g = idx ? (int64_t)idx[i] : g0 + i;
        for (int c = 0; c < R; c++) V[i * R + c] = pl_random_from(hs[c], g);
    }
    return PL_OK;
}

static void cpu_idx_destroy(pl_backend *be, int32_t *idx)
{
    (void)be;
    free(idx);
}

static int cpu_gather(pl_backend *be, size_t n, const int32_t *idx, const double *x, double *buf)
{
    (void)be;
#pragma omp parallel for schedule(static) if (n > PL_OMP_MIN)
    for (size_t i = 0; i < n; i++) buf[i] = x[idx[i]];
    return PL_OK;
}

static int cpu_sync(pl_backend *be)
{
    (void)be;
    return PL_OK;
}

static void cpu_destroy(pl_backend **be)
{
    if (!be || !*be) return;
    free((*be)->ctx);
    free(*be);
    *be = NULL;
}

int pl_backend_cpu_create(pl_backend **out)
{
    pl_backend *be = calloc(1, sizeof *be);
    PL_CHECK(be, PL_ERR_MEM, "out of host memory");
    be->name = "cpu";
    be->host_memory = 1;
    be->sort_window_auto = PL_SORT_WINDOW_AUTO_CPU;
    be->compressed_auto = 0; /* op_format.c: slower than pJDS on every CPU measured */
    pl_spmv_tuning_from_env(&be->tune);
    int *isa = malloc(sizeof *isa);
    if (!isa) {
        free(be);
        return PL_ERROR(PL_ERR_MEM, "out of host memory");
    }
    *isa = detect_isa(be->tune.cpu_isa_cap);
    cpu_ts_select(*isa);
    be->ctx = isa;
    be->vec_alloc = cpu_vec_alloc;
    be->vec_free = cpu_vec_free;
    be->upload = cpu_upload;
    be->download = cpu_download;
    be->copy = cpu_copy;
    be->set = cpu_set;
    be->scal = cpu_scal;
    be->axpy = cpu_axpy;
    be->dot = cpu_dot;
    be->gemv_t = cpu_gemv_t;
    be->gemv_n = cpu_gemv_n;
    be->gemm = cpu_gemm;
    be->gemm_t = cpu_gemm_t;
    be->cgs_step = cpu_cgs_step;
    be->gram = cpu_gram;
    be->sel_gram = cpu_sel_gram;
    be->sel_update = cpu_sel_update;
    be->lz_step = cpu_lz_step;
    be->basis_update = cpu_basis_update;
    be->restart_step = cpu_restart_step;
    be->mat_create = cpu_mat_create;
    be->cmat_create = cpu_cmat_create;
    be->mat_values = cpu_mat_values;
    be->mat_destroy = cpu_mat_destroy;
    be->spmv = cpu_spmv;
    be->spmm = cpu_spmm;
    be->gather_block = cpu_gather_block;
    be->bdot = cpu_bdot;
    be->spmm_aug = cpu_spmm_aug;
    be->idx_create = cpu_idx_create;
    be->idx_destroy = cpu_idx_destroy;
    be->rand_block = cpu_rand_block;
    be->gather = cpu_gather;
    be->sync = cpu_sync;
    be->kron_create = cpu_kronb_create; /* cpu_kron_block.c: cpu_kron.c's operator + block products */
    be->kron_apply = cpu_kronb_apply;
    be->kron_lz = cpu_kronb_lz;
    be->kron_destroy = cpu_kronb_destroy;
    be->kron_spmm = cpu_kron_spmm;
    be->kron_spmm_aug = cpu_kron_spmm_aug;
    be->kron_block_width = 1;
    be->kron_rem_create = cpu_kron_rem_create; /* cpu_kron_remote.c: several ranks */
    be->kron_rem_apply = cpu_kron_rem_apply;
    be->kron_rem_spmm = cpu_kron_rem_spmm;
    be->kron_rem_destroy = cpu_kron_rem_destroy;
    be->destroy = cpu_destroy;
    *out = be;
    return PL_OK;
}
