/* cpu_kron_block.c — block products of the CPU backend's matrix-free
 * operator (be->kron_spmm, kron_spmm_aug; spmv.h; issue 26): Y = H X and
 * the fused KPM step Y = alpha H X + gamma X + beta Y with the column dots,
 * for R <= PL_SPMM_RMAX vectors in row-major blocks (the R values of row i
 * at X + i R), H a Kronecker sum (pl_kron.h).
 *
 * Method: one pass over the rows (l, r) = l n_right + r; per row every
 * table entry (dl[l], dr[r], each active coupling (m, c[l, m]) with
 * lo/hi/lo_val/hi_val[r, m], each entry of A's row l) is loaded once and
 * multiplies the R contiguous values of its column's row of X into R sums,
 * as the stored SpMMV does with a matrix entry (cpu_spmm.c).  Each column's
 * sum runs in pl_kron.h's order with one rounding per product and per
 * addition:
 *   s = ((dl[l] + dr[r]) + shift) x[l,r]
 *     + (c lo_val) x[l, lo] + (c hi_val) x[l, hi]   for m with c[l, m] != 0
 *     + a_val[j] x[a_col[j], r]                     A's row l in CSR order,
 * the couplings from the per-left-row list of the non-zero c (kron_active.c:
 * the same skip as the formula's), so every column equals kron_apply's y
 * bit for bit (cpu_kron.c; -std=c17 contracts no a*b+c into an FMA).  The
 * aug step writes y = ((alpha s) + (gamma x)) + (beta y) per value, as
 * cpu_spmm.c's spmm_aug, and sums the dots per thread, then over the
 * threads (the dots' rounding depends on the thread count; Y does not).
 *
 * Tables: cpu_kron.c keeps its own layout for the one-vector kernel
 * (per-chunk couplings with lane masks, private to that file), so the
 * operator made here (cpu_kronb_create, the backend's kron_create) holds
 * cpu_kron.c's operator for kron_apply and a plain copy of the tables
 * with the coupling lists for the block products: O(n_left nterms +
 * n_right nterms + nnz(A)) more bytes (HMEp: ~2 MB beside 50 MB a vector).
 *
 * Work items: (left row l, block of KB_RB right rows), static among the
 * threads; a row's R sums live in a stack array of PL_SPMM_RMAX.  R = 1,
 * 2, 4, 8, 16, 32 and 64 are compiled with R fixed (the loops over the
 * columns unroll and vectorise), other R through the general loop. */
#include <omp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_kron_block.h"
#include "cpu_kron_impl.h"
#include "cpu_ts.h"
#include "pl_error.h"
#include "spmv_impl.h"

#define KB_RB 256 /* right rows per work item */

typedef struct cpu_kronb {
    void *single; /* cpu_kron.c's operator (kron_apply) */
    int64_t n_left, n_right;
    int nterms;
    double shift;
    int64_t *a_ptr, *act_ptr;
    int32_t *a_col, *lo, *hi, *act_m;
    double *a_val, *dl, *dr, *lo_val, *hi_val, *act_c;
} cpu_kronb;

/* The aug step's scalars (NULL: plain Y = H X). */
typedef struct kb_aug {
    double alpha, gamma, beta;
} kb_aug;

void cpu_kronb_destroy(pl_backend *be, void *mat)
{
    cpu_kronb *m = mat;
    if (!m) return;
    cpu_kron_destroy(be, m->single);
    void *p[] = {m->a_ptr, m->act_ptr, m->a_col, m->lo, m->hi, m->act_m, m->a_val, m->dl, m->dr,
                 m->lo_val, m->hi_val, m->act_c};
    for (size_t i = 0; i < sizeof p / sizeof p[0]; i++) free(p[i]);
    free(m);
}

/* *dst = a copy of n elements of size sz at src (at least one byte). */
static int dup(void **dst, const void *src, size_t n, size_t sz)
{
    size_t b = 0;
    PL_CHECK(!pl_mul_size(n, sz, &b), PL_ERR_OVERFLOW, "matrix-free tables: %zu x %zu bytes overflow", n, sz);
    *dst = malloc(b ? b : 1);
    PL_CHECK(*dst, PL_ERR_MEM, "out of host memory for %zu bytes of matrix-free tables", b);
    if (b) memcpy(*dst, src, b);
    return PL_OK;
}

/* The plain tables and the coupling lists of k into m. */
static int kb_tables(cpu_kronb *m, const pl_kron *k)
{
    const size_t nl = (size_t)k->n_left, nr = (size_t)k->n_right, nt = (size_t)k->nterms;
    const size_t nnz = (size_t)k->a_ptr[k->n_left];
    m->n_left = k->n_left;
    m->n_right = k->n_right;
    m->nterms = k->nterms;
    m->shift = k->shift;
    PL_CALL(dup((void **)&m->a_ptr, k->a_ptr, nl + 1, sizeof(int64_t)));
    PL_CALL(dup((void **)&m->a_col, k->a_col, nnz, sizeof(int32_t)));
    PL_CALL(dup((void **)&m->a_val, k->a_val, nnz, sizeof(double)));
    PL_CALL(dup((void **)&m->dl, k->dl, nl, sizeof(double)));
    PL_CALL(dup((void **)&m->dr, k->dr, nr, sizeof(double)));
    PL_CALL(dup((void **)&m->lo, k->lo, nr * nt, sizeof(int32_t)));
    PL_CALL(dup((void **)&m->hi, k->hi, nr * nt, sizeof(int32_t)));
    PL_CALL(dup((void **)&m->lo_val, k->lo_val, nr * nt, sizeof(double)));
    PL_CALL(dup((void **)&m->hi_val, k->hi_val, nr * nt, sizeof(double)));
    const int64_t na = nt ? pl_kron_nactive(k) : 0;
    m->act_ptr = calloc(nl + 1, sizeof *m->act_ptr);
    m->act_m = malloc((size_t)(na ? na : 1) * sizeof *m->act_m);
    m->act_c = malloc((size_t)(na ? na : 1) * sizeof *m->act_c);
    PL_CHECK(m->act_ptr && m->act_m && m->act_c, PL_ERR_MEM, "out of host memory for the coupling lists");
    if (nt) pl_kron_active(k, m->act_ptr, m->act_m, m->act_c);
    return PL_OK;
}

int cpu_kronb_create(pl_backend *be, const pl_kron *k, void **mat)
{
    PL_CHECK(k && mat, PL_ERR_ARG, "kron_create: NULL argument");
    *mat = NULL;
    cpu_kronb *m = calloc(1, sizeof *m);
    PL_CHECK(m, PL_ERR_MEM, "out of host memory for the matrix-free operator");
    int rc = cpu_kron_create(be, k, &m->single);
    if (rc == PL_OK) rc = kb_tables(m, k);
    if (rc != PL_OK) {
        cpu_kronb_destroy(be, m);
        return pl_error_trace(rc, __FILE__, __LINE__, __func__, "cpu_kron_create / kb_tables");
    }
    *mat = m;
    return PL_OK;
}

int cpu_kronb_apply(pl_backend *be, const void *mat, const double *x, double *y)
{
    const cpu_kronb *m = mat;
    PL_CHECK(m, PL_ERR_ARG, "kron_apply: NULL operator");
    return cpu_kron_apply(be, m->single, x, y);
}

int cpu_kronb_lz(pl_backend *be, const void *mat, const double *x, const double *z, double beta, double *y,
                 double *d_dots)
{
    const cpu_kronb *m = mat;
    PL_CHECK(m, PL_ERR_ARG, "kron_lz: NULL operator");
    return cpu_kron_lz(be, m->single, x, z, beta, y, d_dots);
}

/* s[0:R) = row (l, r) of H X, R = Rv (a constant where inlined). */
static inline __attribute__((always_inline)) void kb_row(const cpu_kronb *m, int64_t l, int64_t r, const int Rv,
                                                         const double *restrict X, double *restrict s)
{
    const int64_t nr = m->n_right, nt = m->nterms;
    const double *restrict xl = X + l * nr * Rv; /* row (l, 0) */
    const double d = (m->dl[l] + m->dr[r]) + m->shift, *restrict xo = xl + r * Rv;
    for (int k = 0; k < Rv; k++) s[k] = d * xo[k];
    for (int64_t i = m->act_ptr[l]; i < m->act_ptr[l + 1]; i++) {
        const int64_t j = r * nt + m->act_m[i];
        const double c = m->act_c[i];
        const int32_t lo = m->lo[j], hi = m->hi[j];
        if (lo >= 0) {
            const double f = c * m->lo_val[j], *restrict xp = xl + (int64_t)lo * Rv;
            for (int k = 0; k < Rv; k++) s[k] += f * xp[k];
        }
        if (hi >= 0) {
            const double f = c * m->hi_val[j], *restrict xp = xl + (int64_t)hi * Rv;
            for (int k = 0; k < Rv; k++) s[k] += f * xp[k];
        }
    }
    for (int64_t j = m->a_ptr[l]; j < m->a_ptr[l + 1]; j++) {
        const double v = m->a_val[j], *restrict xp = X + ((int64_t)m->a_col[j] * nr + r) * Rv;
        for (int k = 0; k < Rv; k++) s[k] += v * xp[k];
    }
}

/* Rows (l, [r0, r1)) of Y = H X (g NULL) or of the aug step, its dots
 * added to loc[0:2 R). */
static inline __attribute__((always_inline)) void kb_rows(const cpu_kronb *m, int64_t l, int64_t r0, int64_t r1,
                                                          const int Rv, const double *restrict X, double *restrict Y,
                                                          const kb_aug *g, double *restrict loc)
{
    double s[PL_SPMM_RMAX];
    for (int64_t r = r0; r < r1; r++) {
        kb_row(m, l, r, Rv, X, s);
        const int64_t i = (l * m->n_right + r) * Rv;
        double *restrict yr = Y + i;
        if (!g) {
            for (int k = 0; k < Rv; k++) yr[k] = s[k];
            continue;
        }
        const double *restrict xo = X + i;
        for (int k = 0; k < Rv; k++) {
            const double y = g->alpha * s[k] + g->gamma * xo[k] + g->beta * yr[k];
            yr[k] = y;
            loc[k] += xo[k] * xo[k];
            loc[Rv + k] += y * xo[k];
        }
    }
}

typedef void (*kb_fn)(const cpu_kronb *, int64_t, int64_t, int64_t, int, const double *restrict, double *restrict,
                      const kb_aug *, double *restrict);
/* Each fixed R in three instruction-set levels (the same level as the
 * one-vector kernel of the operator: PJDS_CPU_SIMD, cpu_kron.c): the loops
 * over the R columns vectorise 2, 4 or 8 wide; no FMA (the targets name
 * none and -std=c17 contracts nothing), so every level gives the same
 * bits. */
#define KB_TGT_sse2
#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
#define KB_X86 1
#define KB_TGT_avx2 __attribute__((target("avx2")))
#define KB_TGT_avx512 __attribute__((target("avx512f")))
#else
#define KB_X86 0
#endif
#define KB_FIXED(RR, ISA)                                                                                         \
    KB_TGT_##ISA static void kb_rows_##RR##_##ISA(const cpu_kronb *m, int64_t l, int64_t r0, int64_t r1, int R,   \
                                                  const double *restrict X, double *restrict Y, const kb_aug *g,  \
                                                  double *restrict loc)                                           \
    {                                                                                                             \
        (void)R;                                                                                                  \
        kb_rows(m, l, r0, r1, RR, X, Y, g, loc);                                                                  \
    }
#define KB_LEVEL(ISA)                                                                                             \
    KB_FIXED(2, ISA)                                                                                              \
    KB_FIXED(4, ISA)                                                                                              \
    KB_FIXED(8, ISA)                                                                                              \
    KB_FIXED(16, ISA)                                                                                             \
    KB_FIXED(32, ISA)                                                                                             \
    KB_FIXED(64, ISA)
KB_FIXED(1, sse2)
KB_LEVEL(sse2)
#if KB_X86
KB_LEVEL(avx2)
KB_LEVEL(avx512)
#endif
static void kb_rows_any(const cpu_kronb *m, int64_t l, int64_t r0, int64_t r1, int R, const double *restrict X,
                        double *restrict Y, const kb_aug *g, double *restrict loc)
{
    kb_rows(m, l, r0, r1, R, X, Y, g, loc);
}

/* simd: KRON_SIMD_* of the operator's one-vector kernel, the widest level
 * used.  Per R the level that was fastest (hh_184800, dos with the
 * tables, 128 moments of 16 vectors, one core of the development VM's
 * AVX-512 CPU, 3 runs each, 2026-11-29; sse2 / avx2 / avx512): R = 2
 * 0.78 / 0.93 / 0.93 s, R = 4 0.51-0.55 / 0.43 / 0.67-0.68, R = 8
 * 0.52-0.53 / 0.39-0.43 / 0.39-0.42, R = 16 0.63-0.64 / 0.57-0.58 /
 * 0.50-0.52, R = 32 0.64-0.66 / 0.58-0.59 / 0.51 (the one-vector SIMD
 * kernel: 0.35-0.36 s).  So R = 2 keeps SSE2, R = 4 and 8 take AVX2 at
 * most, wider blocks AVX-512. */
static kb_fn kb_pick(int R, int simd)
{
    const int best = R <= 2 ? KRON_SIMD_SSE2 : R <= 8 ? KRON_SIMD_AVX2 : KRON_SIMD_AVX512;
    if (simd > best) simd = best;
#define KB_PICK(ISA)                                                                                              \
    switch (R) {                                                                                                  \
    case 2: return kb_rows_2_##ISA;                                                                               \
    case 4: return kb_rows_4_##ISA;                                                                               \
    case 8: return kb_rows_8_##ISA;                                                                               \
    case 16: return kb_rows_16_##ISA;                                                                             \
    case 32: return kb_rows_32_##ISA;                                                                             \
    case 64: return kb_rows_64_##ISA;                                                                             \
    default: break;                                                                                               \
    }
    if (R == 1) return kb_rows_1_sse2;
#if KB_X86
    if (simd == KRON_SIMD_AVX512) KB_PICK(avx512)
    if (simd == KRON_SIMD_AVX2) KB_PICK(avx2)
#else
    (void)simd;
#endif
    KB_PICK(sse2)
#undef KB_PICK
    return kb_rows_any;
}

/* Both products: the work items over the threads; g != NULL: the dots
 * into h_dots[0:2 R). */
static int kb_run(const void *mat, int R, const double *X, double *Y, const kb_aug *g, double *h_dots,
                  const char *what)
{
    const cpu_kronb *m = mat;
    PL_CHECK(m && X && Y && (!g || h_dots), PL_ERR_ARG, "%s: NULL argument", what);
    PL_CHECK(R >= 1 && R <= PL_SPMM_RMAX, PL_ERR_ARG, "%s: R = %d outside 1..%d", what, R, PL_SPMM_RMAX);
    const int64_t nl = m->n_left, nr = m->n_right, nblk = (nr + KB_RB - 1) / KB_RB, ntask = nl * nblk;
    const uintptr_t xa = (uintptr_t)X, ya = (uintptr_t)Y, nb = (uintptr_t)(nl * nr * R) * sizeof *X;
    PL_CHECK(xa + nb <= ya || ya + nb <= xa, PL_ERR_ARG, "%s: X and Y overlap", what);
    const kb_fn f = kb_pick(R, ((const cpu_kron *)m->single)->simd);
    double acc[2 * PL_SPMM_RMAX] = {0};
#pragma omp parallel if (nl * nr * R > 4096)
    {
        double loc[2 * PL_SPMM_RMAX] = {0};
#pragma omp for schedule(static)
        for (int64_t t = 0; t < ntask; t++) {
            const int64_t l = t / nblk, r0 = (t % nblk) * KB_RB, r1 = r0 + KB_RB < nr ? r0 + KB_RB : nr;
            f(m, l, r0, r1, R, X, Y, g, loc);
        }
        if (g) {
#pragma omp critical
            for (int k = 0; k < 2 * R; k++) acc[k] += loc[k];
        }
    }
    if (g) memcpy(h_dots, acc, 2 * (size_t)R * sizeof *h_dots);
    return PL_OK;
}

/* One vector: the one-vector kernel (cpu_kron.c, SIMD), its product and
 * its aug step (cpu_kron_aug); the same values, the dots in its order. */
int cpu_kron_spmm(pl_backend *be, const void *mat, int R, const double *X, double *Y)
{
    const cpu_kronb *m = mat;
    if (m && R == 1) return cpu_kron_apply(be, m->single, X, Y);
    return kb_run(mat, R, X, Y, NULL, NULL, "kron_spmm");
}

int cpu_kron_spmm_aug(pl_backend *be, const void *mat, int R, double alpha, double gamma, double beta,
                      const double *X, double *Y, double *h_dots)
{
    const cpu_kronb *m = mat;
    if (m && R == 1) return cpu_kron_aug(be, m->single, alpha, gamma, beta, X, Y, h_dots);
    const kb_aug g = {alpha, gamma, beta};
    return kb_run(mat, R, X, Y, &g, h_dots, "kron_spmm_aug");
}
