/* cpu_kron.c — the CPU backend's matrix-free operator: a Kronecker sum
 * (pl_kron.h) applied from its tables with OpenMP (be->kron_create,
 * kron_apply, kron_destroy; moved here from hamiltonian/hh_mf.c's
 * hh_mf_apply, issue 26).
 *
 * x and y are viewed as n_left x n_right arrays (row l r = l n_right + r).
 * Every row is summed in exactly pl_kron.h's order:
 *   y[l,r] = ((dl[l] + dr[r]) + shift) x[l,r]
 *          + sum_{m: c[l,m] != 0} (c[l,m] lo_val[r,m]) x[l, lo[r,m]]  (lo >= 0)
 *                                + (c[l,m] hi_val[r,m]) x[l, hi[r,m]]  (hi >= 0)
 *          + sum_j a_val[j] x[a_col[j], r]   (A's row l in CSR order),
 * one rounding per product and per addition: the project compiles with
 * -std=c17, where GCC does not contract a*b+c into an FMA (ISO C mode
 * means -ffp-contract=off), and the vector code below uses plain
 * element-wise * and +.  So y is the same bits on any thread count, equals
 * the CUDA kernels' (kron.cu, kron_kernels.cu) and the loop this file had
 * before 2026-11-25 (tests/spmv/test_kron_op.c keeps that loop as its
 * bitwise reference).
 *
 * Work items: (chunk of KRON_LC = 8 consecutive left rows, block of KRON_RB
 * right rows), chunk-major, static among the threads (a thread's rows stay
 * contiguous, as the vectors' first touch).  Per item:
 *  1. diagonal + couplings, "r-stationary" (the GPU's variant 2): for each
 *     right row r, row r's tables lo/hi/lo_val/hi_val are read ONCE and
 *     applied to the 8 left rows at once, two per SSE2 register (lanes =
 *     left rows; x[l, lo] gathered from the 8 slices).  The test lo >= 0
 *     is one branch per (r, m) for 8 rows.  A lane whose c[l, m] is 0 gets
 *     its term replaced by -0.0 with a bit mask (s + -0.0 == s for every
 *     s, -0.0 and NaN included, and the masked product may be anything),
 *     which is the "skip" of the formula; a mode with no non-zero c in the
 *     chunk is skipped, one whose c are all non-zero needs no mask.  The 8
 *     partial sums per r go to a buffer of KRON_LC x KRON_RB.
 *  2. the hopping A (x) 1 per left row as whole blocks: y[l, r..r+8) =
 *     buf + sum_j a_val[j] x[a_col[j], r..r+8) with the 8 sums in four
 *     registers (no reload of y per entry of A), j in CSR order.
 * The chunk's slices x[l, :] (8 x n_right doubles: 1 MB at HMEp) stay in
 * L2 while the chunk's blocks run, so the gathers hit it.
 *
 * SIMD levels (2026-11-26): the functions above are the SSE2 level (any
 * x86-64, and every other CPU through GCC's vector extension); AVX2 and
 * AVX-512F kernels of both steps (cpu_kron_simd.c: target attributes, no
 * "fma") read step 1's x from the chunk's slices transposed per thread,
 * one 64-byte load per term.  kron_create picks the widest level the CPU
 * has (__builtin_cpu_supports); PJDS_CPU_SIMD=sse2|avx2|avx512 forces one
 * (PL_ERR_INPUT where unknown or missing).  Every level gives the same
 * bits: tests/spmv/test_kron_op.c checks each one this CPU has against
 * the reference loop on its models and random tables.  Where a thread's
 * transposition buffer (8 n_right doubles) would exceed KRON_XT_MAX or
 * cannot be allocated, that thread runs the SSE2 step 1 (the same bits).
 *
 * Measured 2026-11-26, 2 shared cores of the development VM (AMD EPYC,
 * AVX-512; load average 5-7 from other work, so the ranges are wide),
 * HMEp (6 3 3 1 4 1 1 15 normal periodic):
 *   hh_mf_timing, PJDS_CPU_SIMD=sse2 (the old kernel) against the default
 *   (avx512), alternating processes, 3 runs each, medians of 50:
 *     1 thread  55.0 / 57.4 / 56.3 ms  ->  26.8 / 24.4 / 19.9 ms (2.3x)
 *     2 threads 71.2 / 64.9 / 69.5 ms  ->  36.0 / 40.1 / 32.0 ms (1.9x)
 *   kron_simd_timing (the levels interleaved in one process, medians of
 *   20), 3 runs: 1 thread sse2 52.8-66.0, avx2 30.9-32.0, avx512
 *   23.9-25.1 ms; 2 threads sse2 67.7-73.3, avx2 36.5-42.0, avx512
 *   35.1-42.2 ms (earlier, quieter: 1 thread sse2 35.6, avx512 21.0 ms).
 *   Later, 3 runs of 30 rounds: 1 thread sse2 34.0 / 56.7 / 50.0, avx2
 *   19.2 / 27.2 / 26.8, avx512 16.0 / 24.9 / 22.1 ms (avx512 2.1-2.3x,
 *   avx2 1.8-2.1x); 2 threads (the VM oversubscribed: slower than one)
 *   sse2 59.0 / 92.9 / 72.2, avx2 32.0 / 58.0 / 44.0, avx512 32.0 / 48.0 /
 *   36.3 ms (avx512 1.85-2.0x, avx2 1.6-1.85x).
 *   hh_184800 (in cache), 1 thread: sse2 0.574-0.589, avx2 0.354-0.381,
 *   avx512 0.285-0.300 ms.
 * A quickstart solve (format = matrix_free, CPU) writes the same datasets
 * at all three levels (h5diff).
 *
 * Measured 2026-11-25, 2 cores of the development VM (shared, noisy;
 * interleaved against the old loop, medians of 20-50 products): HMEp (400 x
 * 15,504 rows, 5 modes, M = 15) 1.13-1.31x on one thread, 1.05-1.15x on
 * two; hh L=6 3+3 M=6 periodic (184,800 rows, in cache) 1.33-1.42x;
 * hh_mf_timing (a CSR product between the products, load average ~7 on
 * the VM) one thread, medians of 3 runs: 38.5 -> 37.2 ms; two threads
 * too noisy to tell (19-44 ms both).  Issue 26's 3x over the compressed
 * operator on 16 cores is not reached by this alone.  What
 * did not help there: blocks outer over all left rows (the hopping reads
 * from L2, but the far gathers, lo = r -+ 3876 at HMEp, miss: 0.87-1.05x),
 * chunks of 4 or 16 rows, blocks of 128-512 rows, no mask where all c of
 * a chunk are non-zero (within noise; kept, it is cheap). */
#include <omp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pl_error.h"
#include "spmv.h"
#include "spmv_impl.h"
#include "cpu_ts.h"
#include "cpu_kron_impl.h"

#define KRON_NP (KRON_LC / 2)
#define KRON_XT_MAX ((size_t)64 << 20) /* bytes of a thread's transposed chunk, at most (n_right <= 1 M) */

typedef double v2d __attribute__((vector_size(16)));
typedef uint64_t v2u __attribute__((vector_size(16)));

static inline v2d ld2(const double *p)
{
    v2d v;
    memcpy(&v, p, sizeof v);
    return v;
}
static inline v2u ldu2(const uint64_t *p)
{
    v2u v;
    memcpy(&v, p, sizeof v);
    return v;
}
static inline void st2(double *p, v2d v) { memcpy(p, &v, sizeof v); }

/* Carve n bytes (64-byte aligned) at *off of base (NULL base: count only). */
static void *carve(char *base, size_t *off, size_t n)
{
    void *p = base ? base + *off : NULL;
    *off += (n + 63) / 64 * 64;
    return p;
}

/* Lay the tables out in base (NULL: sizes only); returns the bytes. */
static size_t layout(cpu_kron *m, const pl_kron *k, char *base)
{
    const size_t nl = (size_t)k->n_left, nr = (size_t)k->n_right, nt = (size_t)k->nterms;
    const size_t nnz = (size_t)k->a_ptr[k->n_left], nch = (nl + KRON_LC - 1) / KRON_LC, nc = nch * nt * KRON_LC;
    size_t off = 0;
    m->a_ptr = carve(base, &off, (nl + 1) * sizeof(int64_t));
    m->a_col = carve(base, &off, nnz * sizeof(int32_t));
    m->a_val = carve(base, &off, nnz * sizeof(double));
    m->dr = carve(base, &off, nr * sizeof(double));
    m->lo = carve(base, &off, nr * nt * sizeof(int32_t));
    m->hi = carve(base, &off, nr * nt * sizeof(int32_t));
    m->lo_val = carve(base, &off, nr * nt * sizeof(double));
    m->hi_val = carve(base, &off, nr * nt * sizeof(double));
    m->ch_c = carve(base, &off, nc * sizeof(double));
    m->ch_mk = carve(base, &off, nc * sizeof(uint64_t));
    m->ch_zk = carve(base, &off, nc * sizeof(uint64_t));
    m->ch_off = carve(base, &off, nch * KRON_LC * sizeof(int64_t));
    m->ch_kb = carve(base, &off, nch * nt);
    m->ch_use = carve(base, &off, nch * nt);
    m->ch_dl = carve(base, &off, nch * KRON_LC * sizeof(double));
    return off;
}

/* The per-chunk couplings and dl from k (layout done). */
static void fill_chunks(cpu_kron *m, const pl_kron *k)
{
    const int64_t nl = k->n_left, nt = k->nterms;
    for (int64_t ch = 0; ch < m->nchunk; ch++) {
        for (int64_t i = 0; i < KRON_LC; i++) {
            const int64_t l = ch * KRON_LC + i;
            m->ch_dl[ch * KRON_LC + i] = l < nl ? k->dl[l] : 0.0;
            m->ch_off[ch * KRON_LC + i] = ((l < nl ? l : nl - 1) - ch * KRON_LC) * k->n_right;
        }
        for (int64_t j = 0; j < nt; j++) {
            int some = 0, all = 1;
            unsigned kb = 0;
            for (int64_t i = 0; i < KRON_LC; i++) {
                const int64_t l = ch * KRON_LC + i, q = (ch * nt + j) * KRON_LC + i;
                const double c = l < nl ? k->c[l * nt + j] : 0.0;
                m->ch_c[q] = c;
                m->ch_mk[q] = c != 0.0 ? ~(uint64_t)0 : 0;
                m->ch_zk[q] = c != 0.0 ? 0 : (uint64_t)1 << 63;
                some |= c != 0.0;
                kb |= (unsigned)(c != 0.0) << i;
                if (l < nl) all &= c != 0.0; /* lanes past n_left are never stored */
            }
            m->ch_kb[ch * nt + j] = (uint8_t)kb;
            m->ch_use[ch * nt + j] = (int8_t)(some ? (all ? 2 : 1) : 0);
        }
    }
}

/* The kernels of m: PJDS_CPU_SIMD = sse2, avx2 or avx512 forces that level
 * (PL_ERR_INPUT where the value is unknown or this CPU or build lacks it:
 * a measurement never runs another path than it names), else the widest
 * level this CPU has. */
static void chunk_diag_couple_sse2(const cpu_kron *m, int64_t ch, int64_t r0, int64_t r1, const double *x,
                                   const double *xt, double *buf);
static void hop_rows_sse2(const double *b, double *yl, int64_t n, const double *const *xs, const double *v,
                          int64_t nj);
static int pick_simd(cpu_kron *m)
{
    static const char *const names[KRON_SIMD_N] = {"sse2", "avx2", "avx512"};
    const char *e = getenv("PJDS_CPU_SIMD");
    m->simd = KRON_SIMD_SSE2;
    m->couple = chunk_diag_couple_sse2;
    m->hop = hop_rows_sse2;
    m->transpose = NULL;
    if (e && *e) {
        int want = -1;
        for (int i = 0; i < KRON_SIMD_N; i++)
            if (!strcmp(e, names[i])) want = i;
        PL_CHECK(want >= 0, PL_ERR_INPUT, "PJDS_CPU_SIMD=%s: not sse2, avx2 or avx512", e);
        PL_CHECK(want == KRON_SIMD_SSE2 || cpu_kron_simd_kernels(want, &m->couple, &m->hop, &m->transpose), PL_ERR_INPUT,
                 "PJDS_CPU_SIMD=%s: this CPU or build has no such kernels", e);
        m->simd = want;
        return PL_OK;
    }
    for (int i = KRON_SIMD_N - 1; i > KRON_SIMD_SSE2; i--)
        if (cpu_kron_simd_kernels(i, &m->couple, &m->hop, &m->transpose)) {
            m->simd = i;
            break;
        }
    return PL_OK;
}

int cpu_kron_create(pl_backend *be, const pl_kron *k, void **mat)
{
    (void)be;
    PL_CHECK(k && mat, PL_ERR_ARG, "kron_create: NULL argument");
    *mat = NULL;
    cpu_kron *m = calloc(1, sizeof *m);
    PL_CHECK(m, PL_ERR_MEM, "out of host memory for the matrix-free operator");
    const size_t bytes = layout(m, k, NULL);
    m->mem = aligned_alloc(64, bytes ? bytes : 64);
    if (!m->mem) {
        free(m);
        return PL_ERROR(PL_ERR_MEM, "out of host memory for %zu bytes of matrix-free tables", bytes);
    }
    layout(m, k, m->mem);
    const size_t nl = (size_t)k->n_left, nr = (size_t)k->n_right, nt = (size_t)k->nterms;
    const size_t nnz = (size_t)k->a_ptr[k->n_left];
    m->n_left = k->n_left;
    m->n_right = k->n_right;
    m->nchunk = (k->n_left + KRON_LC - 1) / KRON_LC;
    m->nterms = k->nterms;
    m->shift = k->shift;
    memcpy(m->a_ptr, k->a_ptr, (nl + 1) * sizeof(int64_t));
    if (nnz) memcpy(m->a_col, k->a_col, nnz * sizeof(int32_t));
    if (nnz) memcpy(m->a_val, k->a_val, nnz * sizeof(double));
    memcpy(m->dr, k->dr, nr * sizeof(double));
    if (nt) {
        memcpy(m->lo, k->lo, nr * nt * sizeof(int32_t));
        memcpy(m->hi, k->hi, nr * nt * sizeof(int32_t));
        memcpy(m->lo_val, k->lo_val, nr * nt * sizeof(double));
        memcpy(m->hi_val, k->hi_val, nr * nt * sizeof(double));
    }
    fill_chunks(m, k);
    const int rc = pick_simd(m);
    if (rc != PL_OK) {
        cpu_kron_destroy(be, m);
        return rc;
    }
    *mat = m;
    return PL_OK;
}

void cpu_kron_destroy(pl_backend *be, void *mat)
{
    (void)be;
    cpu_kron *m = mat;
    if (!m) return;
    free(m->mem);
    free(m);
}

/* s[p] += the term of table entry (column q, value v) of mode j for the
 * chunk's lanes (xp: the lanes' slices x[l, :]); use 2: every lane's c is
 * non-zero, else masked lanes add -0.0. */
static inline void couple(v2d *s, const double *const *xp, int64_t q, double v, const double *cj,
                          const uint64_t *mj, const uint64_t *zj, int use)
{
    const v2d f = {v, v};
    if (use == 2) {
        for (int p = 0; p < KRON_NP; p++) s[p] += (ld2(cj + 2 * p) * f) * (v2d){xp[2 * p][q], xp[2 * p + 1][q]};
        return;
    }
    for (int p = 0; p < KRON_NP; p++) {
        const v2d t = (ld2(cj + 2 * p) * f) * (v2d){xp[2 * p][q], xp[2 * p + 1][q]};
        s[p] += (v2d)(((v2u)t & ldu2(mj + 2 * p)) | ldu2(zj + 2 * p));
    }
}

/* Step 1: diagonal + couplings of rows (chunk ch, [r0, r1)) into
 * buf[lane * KRON_RB + r - r0]. */
static void chunk_diag_couple_sse2(const cpu_kron *m, int64_t ch, int64_t r0, int64_t r1, const double *x,
                                   const double *xt, double *buf)
{
    (void)xt;
    const int64_t nr = m->n_right, nt = m->nterms, nl = m->n_left, l0 = ch * KRON_LC;
    const double *xp[KRON_LC];
    for (int64_t i = 0; i < KRON_LC; i++) xp[i] = x + (l0 + i < nl ? l0 + i : nl - 1) * nr;
    v2d dlv[KRON_NP];
    for (int p = 0; p < KRON_NP; p++) dlv[p] = ld2(m->ch_dl + l0 + 2 * p);
    const v2d shv = {m->shift, m->shift};
    const double *cc = m->ch_c + ch * nt * KRON_LC;
    const uint64_t *mk = m->ch_mk + ch * nt * KRON_LC, *zk = m->ch_zk + ch * nt * KRON_LC;
    const int8_t *use = m->ch_use + ch * nt;
    for (int64_t r = r0; r < r1; r++) {
        const v2d drv = {m->dr[r], m->dr[r]};
        v2d s[KRON_NP];
        for (int p = 0; p < KRON_NP; p++) s[p] = ((dlv[p] + drv) + shv) * (v2d){xp[2 * p][r], xp[2 * p + 1][r]};
        const int32_t *lo = m->lo + r * nt, *hi = m->hi + r * nt;
        const double *lv = m->lo_val + r * nt, *hv = m->hi_val + r * nt;
        for (int64_t j = 0; j < nt; j++) {
            if (!use[j]) continue;
            const int64_t o = j * KRON_LC;
            if (lo[j] >= 0) couple(s, xp, lo[j], lv[j], cc + o, mk + o, zk + o, use[j]);
            if (hi[j] >= 0) couple(s, xp, hi[j], hv[j], cc + o, mk + o, zk + o, use[j]);
        }
        for (int p = 0; p < KRON_NP; p++) {
            buf[(2 * p) * KRON_RB + r - r0] = s[p][0];
            buf[(2 * p + 1) * KRON_RB + r - r0] = s[p][1];
        }
    }
}

/* Step 2: y[0, n) = b[0, n) + sum_j v[j] xs[j][0, n), j in order (nj <=
 * KRON_HMAX), 8 sums at a time in registers. */
static void hop_rows_sse2(const double *b, double *yl, int64_t n, const double *const *xs, const double *v, int64_t nj)
{
    int64_t r = 0;
    for (; r + 8 <= n; r += 8) {
        v2d a0 = ld2(b + r), a1 = ld2(b + r + 2), a2 = ld2(b + r + 4), a3 = ld2(b + r + 6);
        for (int64_t j = 0; j < nj; j++) {
            const double *xj = xs[j] + r;
            const v2d vj = {v[j], v[j]};
            a0 += vj * ld2(xj);
            a1 += vj * ld2(xj + 2);
            a2 += vj * ld2(xj + 4);
            a3 += vj * ld2(xj + 6);
        }
        st2(yl + r, a0);
        st2(yl + r + 2, a1);
        st2(yl + r + 4, a2);
        st2(yl + r + 6, a3);
    }
    for (; r < n; r++) {
        double s = b[r];
        for (int64_t j = 0; j < nj; j++) s += v[j] * xs[j][r];
        yl[r] = s;
    }
}

/* Step 2 for left row l over [r0, r1): a row of A longer than KRON_HMAX
 * goes entry by entry through y (the same order and roundings). */
static void hop(const cpu_kron *m, int64_t l, int64_t r0, int64_t r1, const double *x, const double *b, double *yl)
{
    const int64_t nr = m->n_right, j0 = m->a_ptr[l], j1 = m->a_ptr[l + 1], n = r1 - r0;
    if (j1 - j0 <= KRON_HMAX) {
        const double *xs[KRON_HMAX];
        for (int64_t j = j0; j < j1; j++) xs[j - j0] = x + (int64_t)m->a_col[j] * nr + r0;
        m->hop(b, yl, n, xs, m->a_val + j0, j1 - j0);
        return;
    }
    memcpy(yl, b, (size_t)n * sizeof *yl);
    for (int64_t j = j0; j < j1; j++) {
        const double v = m->a_val[j], *xj = x + (int64_t)m->a_col[j] * nr + r0;
        for (int64_t r = 0; r < n; r++) yl[r] += v * xj[r];
    }
}

/* The Lanczos step's epilogue on rows (l, [r0, r1)) of one task, while
 * they are in cache: y -= beta z, the sums into loc[0:PL_KRON_LZ_DOTS). */
typedef struct kron_lz_epi {
    const double *z;
    double beta;
} kron_lz_epi;

static void lz_epilogue(const kron_lz_epi *e, int64_t i0, int64_t n, const double *x, double *y, double *loc)
{
    const double *restrict xs = x + i0, *restrict zs = e->z + i0;
    double *restrict ys = y + i0;
    double d0 = 0.0, d1 = 0.0, d2 = 0.0, d3 = 0.0, d4 = 0.0;
    /* simd: the sums in vector lanes (the same order run to run); scalar
     * they cost about as much as the passes the fused step saves */
#pragma omp simd reduction(+ : d0, d1, d2, d3, d4)
    for (int64_t r = 0; r < n; r++) {
        const double xv = xs[r], zv = zs[r], yv = ys[r] - e->beta * zv;
        ys[r] = yv;
        d0 += xv * xv;
        d1 += yv * xv;
        d2 += yv * yv;
        d3 += zv * yv;
        d4 += zv * xv;
    }
    loc[0] += d0;
    loc[1] += d1;
    loc[2] += d2;
    loc[3] += d3;
    loc[4] += d4;
}

/* The KPM step's epilogue (kron_spmm_aug of one vector, cpu_kron_aug) on
 * rows (l, [r0, r1)): y = ((alpha s) + (gamma x)) + (beta y) of each value
 * with s the rows of H x, as the block kernel forms it (cpu_kron_block.c),
 * and the sums x.x, y.x into loc[0:2). */
typedef struct kron_aug_epi {
    double alpha, gamma, beta;
} kron_aug_epi;

static void aug_epilogue(const kron_aug_epi *g, int64_t i0, int64_t n, const double *x, const double *s, double *y,
                         double *loc)
{
    const double *restrict xs = x + i0, *restrict ss = s;
    double *restrict ys = y + i0;
    double d0 = 0.0, d1 = 0.0;
#pragma omp simd reduction(+ : d0, d1)
    for (int64_t r = 0; r < n; r++) {
        const double xv = xs[r], yv = g->alpha * ss[r] + g->gamma * xv + g->beta * ys[r];
        ys[r] = yv;
        d0 += xv * xv;
        d1 += yv * xv;
    }
    loc[0] += d0;
    loc[1] += d1;
}

/* y = H x; with e, the Lanczos step's epilogue, with g the KPM step's
 * (not both), their sums per thread in part (nthreads x PL_KRON_LZ_DOTS),
 * added in thread order by the caller. */
static void kron_run(const cpu_kron *m, const double *x, double *y, const kron_lz_epi *e, const kron_aug_epi *g,
                     double *part)
{
    const int64_t nr = m->n_right, nl = m->n_left, nblk = (nr + KRON_RB - 1) / KRON_RB, ntask = m->nchunk * nblk;
#pragma omp parallel
    {
        double buf[KRON_LC * KRON_RB]; /* 128 KB of the thread's stack */
        double srow[KRON_RB];          /* the aug step: a row's H x before it meets y */
        double loc[PL_KRON_LZ_DOTS] = {0};
        /* the wide levels' transposed chunk (none: too large or no memory: the SSE2 step 1, the same bits) */
        const size_t xtb = ((size_t)nr * KRON_LC * sizeof(double) + 63) / 64 * 64;
        double *xt = m->transpose && xtb <= KRON_XT_MAX ? aligned_alloc(64, xtb) : NULL;
        int64_t xt_ch = -1;
#pragma omp for schedule(static)
        for (int64_t t = 0; t < ntask; t++) {
            const int64_t ch = t / nblk, r0 = (t % nblk) * KRON_RB, r1 = r0 + KRON_RB < nr ? r0 + KRON_RB : nr;
            if (xt && ch != xt_ch) m->transpose(m, ch, x, xt);
            xt_ch = ch;
            if (m->transpose && !xt) chunk_diag_couple_sse2(m, ch, r0, r1, x, NULL, buf);
            else m->couple(m, ch, r0, r1, x, xt, buf);
            for (int64_t l = ch * KRON_LC; l < ch * KRON_LC + KRON_LC && l < nl; l++) {
                const double *b = buf + (l - ch * KRON_LC) * KRON_RB;
                if (g) {
                    hop(m, l, r0, r1, x, b, srow);
                    aug_epilogue(g, l * nr + r0, r1 - r0, x, srow, y, loc);
                    continue;
                }
                hop(m, l, r0, r1, x, b, y + l * nr + r0);
                if (e) lz_epilogue(e, l * nr + r0, r1 - r0, x, y, loc);
            }
        }
        free(xt);
        if (e || g) memcpy(part + (size_t)omp_get_thread_num() * PL_KRON_LZ_DOTS, loc, sizeof loc);
    }
}

int cpu_kron_apply(pl_backend *be, const void *mat, const double *x, double *y)
{
    (void)be;
    const cpu_kron *m = mat;
    PL_CHECK(m && x && y, PL_ERR_ARG, "kron_apply: NULL argument");
    const uintptr_t xa = (uintptr_t)x, ya = (uintptr_t)y, nb = (uintptr_t)(m->n_left * m->n_right) * sizeof *x;
    PL_CHECK(xa + nb <= ya || ya + nb <= xa, PL_ERR_ARG, "kron_apply: x and y overlap");
    kron_run(m, x, y, NULL, NULL, NULL);
    return PL_OK;
}

/* kron_run with an epilogue (e or g) on x, y checked not to overlap x (nor
 * z where given); d_out[0:nd) = its first nd sums, the threads' sums added
 * in thread order (the same bits run to run). */
static int kron_sums(const cpu_kron *m, const double *x, const double *z, double *y, const kron_lz_epi *e,
                     const kron_aug_epi *g, int nd, double *d_out, const char *what)
{
    const uintptr_t xa = (uintptr_t)x, ya = (uintptr_t)y, za = (uintptr_t)z,
                    nb = (uintptr_t)(m->n_left * m->n_right) * sizeof *x;
    PL_CHECK((xa + nb <= ya || ya + nb <= xa) && (!z || za + nb <= ya || ya + nb <= za), PL_ERR_ARG,
             "%s: y overlaps x%s", what, z ? " or z" : "");
    const int nt = omp_get_max_threads();
    double *part = calloc((size_t)nt * PL_KRON_LZ_DOTS, sizeof *part);
    PL_CHECK(part, PL_ERR_MEM, "out of host memory (%s sums)", what);
    kron_run(m, x, y, e, g, part);
    for (int k = 0; k < nd; k++) {
        double t = 0.0;
        for (int q = 0; q < nt; q++) t += part[(size_t)q * PL_KRON_LZ_DOTS + k];
        d_out[k] = t;
    }
    free(part);
    return PL_OK;
}

int cpu_kron_lz(pl_backend *be, const void *mat, const double *x, const double *z, double beta, double *y,
                double *d_dots)
{
    (void)be;
    const cpu_kron *m = mat;
    PL_CHECK(m && x && z && y && d_dots, PL_ERR_ARG, "kron_lz: NULL argument");
    const kron_lz_epi e = {z, beta};
    return kron_sums(m, x, z, y, &e, NULL, PL_KRON_LZ_DOTS, d_dots, "kron_lz");
}

int cpu_kron_aug(pl_backend *be, const void *mat, double alpha, double gamma, double beta, const double *x, double *y,
                 double *h_dots)
{
    (void)be;
    const cpu_kron *m = mat;
    PL_CHECK(m && x && y && h_dots, PL_ERR_ARG, "kron_spmm_aug: NULL argument");
    const kron_aug_epi g = {alpha, gamma, beta};
    return kron_sums(m, x, NULL, y, NULL, &g, 2, h_dots, "kron_spmm_aug");
}
