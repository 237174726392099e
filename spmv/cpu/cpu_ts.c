/* cpu_ts.c — tall-skinny kernels of the CPU backend (Gram-Schmidt and basis
 * updates of the Krylov methods): V is n x k column-major, k small.
 *
 * OpenMP loops over row tiles of PL_TS_ROWS rows: a tile of V stays in cache
 * while its k columns are combined, so V is read once from memory per call
 * (cgs_step: correction and projection in one pass).  The work inside a tile
 * is done by tile kernels compiled for AVX-512, AVX2 and baseline x86-64
 * (target attributes, chosen once by cpu_ts_select), four columns at a time.
 * OpenBLAS is not used here: its own thread pool competes with the OpenMP
 * threads that spin after each parallel region, which made the restart V*Y
 * 100x slower than its memory traffic on a 16-core host (H100 machine,
 * HMEp).  Sums over rows are per thread and added in thread order: results
 * are reproducible for a fixed number of threads and ISA. */
#include "cpu_ts.h"

#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "lz_coef.h"
#include "pl_error.h"

#define PL_TS_ROWS 256
#define PL_OMP_MIN 8192 /* loops are OpenMP-parallel only when long enough to pay for a fork */

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define TS_HAVE_CLONES 1
#define TS_TGT_avx512 __attribute__((target("avx512f,avx512vl,avx512dq,avx2,fma,tune=icelake-server")))
#define TS_TGT_avx2 __attribute__((target("avx2,fma,tune=haswell")))
#else
#define TS_HAVE_CLONES 0
#endif
#define TS_TGT_default

/* hp[c] += sum_i V[i, c] t[i] for c < k, i < len. */
typedef void (*ts_proj_fn)(size_t len, int k, const double *V, size_t ld, const double *t, double *hp);
/* t[i] -= sum_c V[i, c] h[c]. */
typedef void (*ts_sub_fn)(size_t len, int k, const double *V, size_t ld, const double *h, double *t);
/* out[i, j] = sum_c V[i, c] Y[c, j] for j < m (out ld ldo). */
typedef void (*ts_comb_fn)(size_t len, int k, int m, const double *V, size_t ld, const double *Y, int ldy, double *out,
                           size_t ldo);

#define TS_KERNELS(ISA)                                                                                         \
    TS_TGT_##ISA static void ts_proj_##ISA(size_t len, int k, const double *restrict V, size_t ld,               \
                                           const double *restrict t, double *restrict hp)                       \
    {                                                                                                           \
        int c = 0;                                                                                              \
        for (; c + 4 <= k; c += 4) {                                                                            \
            const double *restrict v0 = V + (size_t)c * ld, *restrict v1 = v0 + ld, *restrict v2 = v1 + ld,     \
                                   *restrict v3 = v2 + ld;                                                      \
            double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;                                                      \
            _Pragma("omp simd reduction(+ : s0, s1, s2, s3)") for (size_t i = 0; i < len; i++)                  \
            {                                                                                                   \
                const double ti = t[i];                                                                         \
                s0 += v0[i] * ti;                                                                               \
                s1 += v1[i] * ti;                                                                               \
                s2 += v2[i] * ti;                                                                               \
                s3 += v3[i] * ti;                                                                               \
            }                                                                                                   \
            hp[c] += s0;                                                                                        \
            hp[c + 1] += s1;                                                                                    \
            hp[c + 2] += s2;                                                                                    \
            hp[c + 3] += s3;                                                                                    \
        }                                                                                                       \
        for (; c < k; c++) {                                                                                    \
            const double *restrict v = V + (size_t)c * ld;                                                      \
            double s = 0.0;                                                                                     \
            _Pragma("omp simd reduction(+ : s)") for (size_t i = 0; i < len; i++) s += v[i] * t[i];             \
            hp[c] += s;                                                                                         \
        }                                                                                                       \
    }                                                                                                           \
    TS_TGT_##ISA static void ts_sub_##ISA(size_t len, int k, const double *restrict V, size_t ld,                \
                                          const double *restrict h, double *restrict t)                         \
    {                                                                                                           \
        int c = 0;                                                                                              \
        for (; c + 4 <= k; c += 4) {                                                                            \
            const double *restrict v0 = V + (size_t)c * ld, *restrict v1 = v0 + ld, *restrict v2 = v1 + ld,     \
                                   *restrict v3 = v2 + ld;                                                      \
            const double h0 = h[c], h1 = h[c + 1], h2 = h[c + 2], h3 = h[c + 3];                                \
            _Pragma("omp simd") for (size_t i = 0; i < len; i++) t[i] -=                                        \
                v0[i] * h0 + v1[i] * h1 + v2[i] * h2 + v3[i] * h3;                                              \
        }                                                                                                       \
        for (; c < k; c++) {                                                                                    \
            const double *restrict v = V + (size_t)c * ld;                                                      \
            const double hc = h[c];                                                                             \
            _Pragma("omp simd") for (size_t i = 0; i < len; i++) t[i] -= v[i] * hc;                             \
        }                                                                                                       \
    }                                                                                                           \
    TS_TGT_##ISA static void ts_comb_##ISA(size_t len, int k, int m, const double *restrict V, size_t ld,        \
                                           const double *restrict Y, int ldy, double *restrict out, size_t ldo) \
    {                                                                                                           \
        /* register blocks of 8 rows x 4 outputs: each V value is loaded once per 4 outputs */                \
        size_t i0 = 0;                                                                                          \
        for (; i0 + 8 <= len; i0 += 8) {                                                                        \
            int j = 0;                                                                                          \
            for (; j + 4 <= m; j += 4) {                                                                        \
                const double *restrict y = Y + (size_t)j * (size_t)ldy;                                         \
                double a0[8] = {0}, a1[8] = {0}, a2[8] = {0}, a3[8] = {0};                                      \
                for (int c = 0; c < k; c++) {                                                                   \
                    const double *restrict v = V + (size_t)c * ld + i0;                                         \
                    const double y0 = y[c], y1 = y[(size_t)ldy + c], y2 = y[2 * (size_t)ldy + c],               \
                                 y3 = y[3 * (size_t)ldy + c];                                                   \
                    _Pragma("omp simd") for (int r = 0; r < 8; r++)                                             \
                    {                                                                                           \
                        a0[r] += v[r] * y0;                                                                     \
                        a1[r] += v[r] * y1;                                                                     \
                        a2[r] += v[r] * y2;                                                                     \
                        a3[r] += v[r] * y3;                                                                     \
                    }                                                                                           \
                }                                                                                               \
                for (int r = 0; r < 8; r++) {                                                                   \
                    out[(size_t)j * ldo + i0 + r] = a0[r];                                                      \
                    out[(size_t)(j + 1) * ldo + i0 + r] = a1[r];                                                \
                    out[(size_t)(j + 2) * ldo + i0 + r] = a2[r];                                                \
                    out[(size_t)(j + 3) * ldo + i0 + r] = a3[r];                                                \
                }                                                                                               \
            }                                                                                                   \
            for (; j < m; j++) {                                                                                \
                const double *restrict y = Y + (size_t)j * (size_t)ldy;                                         \
                double a0[8] = {0};                                                                             \
                for (int c = 0; c < k; c++) {                                                                   \
                    const double *restrict v = V + (size_t)c * ld + i0;                                         \
                    const double y0 = y[c];                                                                     \
                    _Pragma("omp simd") for (int r = 0; r < 8; r++) a0[r] += v[r] * y0;                         \
                }                                                                                               \
                for (int r = 0; r < 8; r++) out[(size_t)j * ldo + i0 + r] = a0[r];                              \
            }                                                                                                   \
        }                                                                                                       \
        for (; i0 < len; i0++) /* the last rows, one at a time */                                               \
            for (int j = 0; j < m; j++) {                                                                       \
                double a = 0.0;                                                                                 \
                for (int c = 0; c < k; c++) a += V[(size_t)c * ld + i0] * Y[(size_t)j * (size_t)ldy + c];       \
                out[(size_t)j * ldo + i0] = a;                                                                  \
            }                                                                                                   \
    }

TS_KERNELS(default)
#if TS_HAVE_CLONES
TS_KERNELS(avx2)
TS_KERNELS(avx512)
#endif

static ts_proj_fn g_proj = ts_proj_default;
static ts_sub_fn g_sub = ts_sub_default;
static ts_comb_fn g_comb = ts_comb_default;

void cpu_ts_select(int isa)
{
#if TS_HAVE_CLONES
    if (isa >= 2) {
        g_proj = ts_proj_avx512;
        g_sub = ts_sub_avx512;
        g_comb = ts_comb_avx512;
        return;
    }
    if (isa == 1) {
        g_proj = ts_proj_avx2;
        g_sub = ts_sub_avx2;
        g_comb = ts_comb_avx2;
        return;
    }
#endif
    (void)isa;
    g_proj = ts_proj_default;
    g_sub = ts_sub_default;
    g_comb = ts_comb_default;
}

/* Per-thread partial sums of nt x kk doubles: on the stack when small. */
#define TS_STACK 512

int cpu_gemv_t(pl_backend *be, size_t n, int k, const double *V, size_t ld, const double *w, double *h)
{
    (void)be;
    PL_CHECK(k >= 0 && ld >= n, PL_ERR_ARG, "gemv_t: bad k = %d or ld = %zu (n = %zu)", k, ld, n);
    for (int i = 0; i < k; i++) h[i] = 0.0;
    if (k == 0 || n == 0) return PL_OK;
    int nt = n > PL_OMP_MIN ? omp_get_max_threads() : 1;
    const size_t np = (size_t)nt * (size_t)k;
    double stackbuf[TS_STACK], *part = np <= TS_STACK ? stackbuf : malloc(np * sizeof *part);
    PL_CHECK(part, PL_ERR_MEM, "out of host memory");
    memset(part, 0, np * sizeof *part);
    const size_t nb = (n + PL_TS_ROWS - 1) / PL_TS_ROWS;
    const ts_proj_fn proj = g_proj;
#pragma omp parallel num_threads(nt) if (nt > 1)
    {
        double *hp = part + (size_t)omp_get_thread_num() * (size_t)k;
#pragma omp for schedule(static)
        for (size_t b = 0; b < nb; b++) {
            size_t r0 = b * PL_TS_ROWS, len = r0 + PL_TS_ROWS < n ? PL_TS_ROWS : n - r0;
            proj(len, k, V + r0, ld, w + r0, hp);
        }
    }
    for (int t = 0; t < nt; t++)
        for (int c = 0; c < k; c++) h[c] += part[(size_t)t * (size_t)k + c];
    if (part != stackbuf) free(part);
    return PL_OK;
}

/* C = V^T W: per row tile, the m columns of W projected on V's tile while
 * it is in cache (V and W read once); per-thread sums added in thread
 * order. */
int cpu_gemm_t(pl_backend *be, size_t n, int k, int m, const double *V, size_t ld, const double *W, size_t ldw,
               double *C)
{
    (void)be;
    PL_CHECK(k >= 0 && m >= 0 && ld >= n && ldw >= n, PL_ERR_ARG, "gemm_t: bad k = %d, m = %d, ld = %zu, ldw = %zu "
             "(n = %zu)", k, m, ld, ldw, n);
    const size_t km = (size_t)k * (size_t)m;
    for (size_t i = 0; i < km; i++) C[i] = 0.0;
    if (km == 0 || n == 0) return PL_OK;
    const int nt = n > PL_OMP_MIN ? omp_get_max_threads() : 1;
    double *part = nt > 1 ? calloc((size_t)nt * km, sizeof *part) : C;
    PL_CHECK(part, PL_ERR_MEM, "out of host memory for gemm_t (%d x %d, %d threads)", k, m, nt);
    const size_t nb = (n + PL_TS_ROWS - 1) / PL_TS_ROWS;
    const ts_proj_fn proj = g_proj;
#pragma omp parallel num_threads(nt) if (nt > 1)
    {
        double *hp = part + (size_t)omp_get_thread_num() * km;
#pragma omp for schedule(static)
        for (size_t b = 0; b < nb; b++) {
            const size_t r0 = b * PL_TS_ROWS, len = r0 + PL_TS_ROWS < n ? PL_TS_ROWS : n - r0;
            for (int j = 0; j < m; j++) proj(len, k, V + r0, ld, W + (size_t)j * ldw + r0, hp + (size_t)j * k);
        }
    }
    if (part != C) {
        for (int t = 0; t < nt; t++)
            for (size_t i = 0; i < km; i++) C[i] += part[(size_t)t * km + i];
        free(part);
    }
    return PL_OK;
}

int cpu_gram(pl_backend *be, size_t n, int k, const double *V, size_t ld, double *G)
{
    (void)be;
    PL_CHECK(k >= 1 && k <= PL_GRAM_KMAX && ld >= n, PL_ERR_ARG, "gram: bad k = %d or ld = %zu (n = %zu)", k, ld, n);
    double s[PL_GRAM_KMAX * PL_GRAM_KMAX] = {0};
    const double *c0 = V, *c1 = V + (k > 1 ? ld : 0), *c2 = V + (k > 2 ? 2 * ld : 0), *c3 = V + (k > 3 ? 3 * ld : 0);
    double s00 = 0, s01 = 0, s02 = 0, s03 = 0, s11 = 0, s12 = 0, s13 = 0, s22 = 0, s23 = 0, s33 = 0;
#pragma omp parallel for schedule(static) if (n > PL_OMP_MIN) \
    reduction(+ : s00, s01, s02, s03, s11, s12, s13, s22, s23, s33)
    for (size_t i = 0; i < n; i++) {
        double a = c0[i], b = c1[i], c = c2[i], d = c3[i];
        s00 += a * a;
        s01 += a * b;
        s02 += a * c;
        s03 += a * d;
        s11 += b * b;
        s12 += b * c;
        s13 += b * d;
        s22 += c * c;
        s23 += c * d;
        s33 += d * d;
    }
    const double u[PL_GRAM_KMAX][PL_GRAM_KMAX] = {{s00, s01, s02, s03}, {s01, s11, s12, s13}, {s02, s12, s22, s23},
                                                  {s03, s13, s23, s33}};
    for (int c = 0; c < k; c++)
        for (int r = 0; r < k; r++) s[(size_t)c * k + r] = u[r][c];
    memcpy(G, s, (size_t)k * k * sizeof(double));
    return PL_OK;
}

int cpu_gemv_n(pl_backend *be, size_t n, int k, double alpha, const double *V, size_t ld, const double *h, double beta,
               double *w)
{
    (void)be;
    PL_CHECK(k >= 0 && ld >= n, PL_ERR_ARG, "gemv_n: bad k = %d or ld = %zu (n = %zu)", k, ld, n);
    if (n == 0) return PL_OK;
    const size_t nb = (n + PL_TS_ROWS - 1) / PL_TS_ROWS;
    const ts_comb_fn comb = g_comb;
#pragma omp parallel for schedule(static) if (n > PL_OMP_MIN)
    for (size_t b = 0; b < nb; b++) {
        size_t r0 = b * PL_TS_ROWS, len = r0 + PL_TS_ROWS < n ? PL_TS_ROWS : n - r0;
        double t[PL_TS_ROWS];
        comb(len, k, 1, V + r0, ld, h, k > 0 ? k : 1, t, PL_TS_ROWS);
        double *y = w + r0;
        if (beta == 0.0) /* BLAS convention: w is not read */
            for (size_t i = 0; i < len; i++) y[i] = alpha * t[i];
        else
            for (size_t i = 0; i < len; i++) y[i] = beta * y[i] + alpha * t[i];
    }
    return PL_OK;
}

int cpu_gemm(pl_backend *be, size_t n, int k, int m, const double *V, size_t ld, const double *Y, int ldy, double *W,
             size_t ldw)
{
    (void)be;
    PL_CHECK(k >= 0 && m >= 0 && ldy >= k && ld >= n && ldw >= n, PL_ERR_ARG,
             "gemm: bad sizes (n = %zu, k = %d, m = %d, ld = %zu, ldy = %d, ldw = %zu)", n, k, m, ld, ldy, ldw);
    if (n == 0 || m == 0) return PL_OK;
    const size_t nb = (n + PL_TS_ROWS - 1) / PL_TS_ROWS;
    const ts_comb_fn comb = g_comb;
#pragma omp parallel for schedule(static) if (n > PL_OMP_MIN)
    for (size_t b = 0; b < nb; b++) {
        size_t r0 = b * PL_TS_ROWS, len = r0 + PL_TS_ROWS < n ? PL_TS_ROWS : n - r0;
        comb(len, k, m, V + r0, ld, Y, ldy, W + r0, ldw);
    }
    return PL_OK;
}

/* One tile of cgs_step (len rows from V, w): w -= V h_in, then hp[0:k] +=
 * V^T w and hp[k] += w.w while the tile is in cache. */
static void cgs_tile(size_t len, int k, const double *V, size_t ld, const double *h_in, double *w, double *hp)
{
    g_sub(len, k, V, ld, h_in, w);
    g_proj(len, k, V, ld, w, hp);
    g_proj(len, 1, w, 0, w, hp + k);
}

/* One tile of basis_update (len rows from V): V[:, 0:m] = V[:, 0:k] Y
 * through the buffer t (PL_TS_ROWS x m). */
static void update_tile(size_t len, int k, int m, double *V, size_t ld, const double *Y, int ldy, double *t)
{
    g_comb(len, k, m, V, ld, Y, ldy, t, PL_TS_ROWS);
    for (int j = 0; j < m; j++) memcpy(V + (size_t)j * ld, t + (size_t)j * PL_TS_ROWS, len * sizeof(double));
}

/* w -= V[:, 0:k] h_in; h_out[0:k] = V^T w; h_out[k] = w.w: each tile is
 * corrected, then projected while its V rows are still in cache. */
int cpu_cgs_step(pl_backend *be, size_t n, int k, const double *V, size_t ld, double *w, const double *h_in,
                 double *h_out)
{
    (void)be;
    PL_CHECK(k >= 0 && ld >= n, PL_ERR_ARG, "cgs_step: bad k = %d or ld = %zu (n = %zu)", k, ld, n);
    for (int i = 0; i <= k; i++) h_out[i] = 0.0;
    if (n == 0) return PL_OK;
    int nt = n > PL_OMP_MIN ? omp_get_max_threads() : 1;
    const size_t kk = (size_t)k + 1, np = (size_t)nt * kk;
    double stackbuf[TS_STACK], *part = np <= TS_STACK ? stackbuf : malloc(np * sizeof *part);
    PL_CHECK(part, PL_ERR_MEM, "out of host memory");
    memset(part, 0, np * sizeof *part);
    const size_t nb = (n + PL_TS_ROWS - 1) / PL_TS_ROWS;
#pragma omp parallel num_threads(nt) if (nt > 1)
    {
        double *hp = part + (size_t)omp_get_thread_num() * kk;
#pragma omp for schedule(static)
        for (size_t b = 0; b < nb; b++) {
            size_t r0 = b * PL_TS_ROWS, len = r0 + PL_TS_ROWS < n ? PL_TS_ROWS : n - r0;
            cgs_tile(len, k, V + r0, ld, h_in, w + r0, hp);
        }
    }
    for (int th = 0; th < nt; th++)
        for (size_t c = 0; c < kk; c++) h_out[c] += part[(size_t)th * kk + c];
    if (part != stackbuf) free(part);
    return PL_OK;
}

/* h[0:ka] = A^T x, h[ka:ka+9] = [b0 b1 x]^T [b0 b1 x]: each tile of x is
 * projected on A and its 3 x 3 Gram summed while it is in cache; per-thread
 * sums added in thread order. */
int cpu_sel_gram(pl_backend *be, size_t n, int ka, const double *A, const double *B, size_t ld, double *h)
{
    (void)be;
    PL_CHECK(ka >= 1 && ka <= PL_SEL_KMAX && ld >= n, PL_ERR_ARG, "sel_gram: bad ka = %d or ld = %zu (n = %zu)", ka,
             ld, n);
    enum { NG = 6 };
    const size_t nc = (size_t)ka + NG;
    double part[64 * (PL_SEL_KMAX + NG)];
    int nt = n > PL_OMP_MIN ? omp_get_max_threads() : 1;
    if (nt > 64) nt = 64;
    memset(part, 0, (size_t)nt * nc * sizeof(double));
    const double *b0 = B, *b1 = B + ld, *x = B + 2 * ld;
    const size_t nb = (n + PL_TS_ROWS - 1) / PL_TS_ROWS;
    const ts_proj_fn proj = g_proj;
#pragma omp parallel num_threads(nt) if (nt > 1)
    {
        double *hp = part + (size_t)omp_get_thread_num() * nc;
#pragma omp for schedule(static)
        for (size_t b = 0; b < nb; b++) {
            size_t r0 = b * PL_TS_ROWS, len = r0 + PL_TS_ROWS < n ? PL_TS_ROWS : n - r0;
            proj(len, ka, A + r0, ld, x + r0, hp);
            double g[NG] = {0};
            for (size_t i = r0; i < r0 + len; i++) {
                const double p = b0[i], q = b1[i], r = x[i];
                g[0] += p * p;
                g[1] += p * q;
                g[2] += q * q;
                g[3] += p * r;
                g[4] += q * r;
                g[5] += r * r;
            }
            for (int c = 0; c < NG; c++) hp[ka + c] += g[c];
        }
    }
    double s[PL_SEL_KMAX + NG] = {0};
    for (int t = 0; t < nt; t++)
        for (size_t c = 0; c < nc; c++) s[c] += part[(size_t)t * nc + c];
    memcpy(h, s, (size_t)ka * sizeof(double));
    const double *g = s + ka; /* (0,0) (0,1) (1,1) (0,2) (1,2) (2,2) */
    const double G[9] = {g[0], g[1], g[3], g[1], g[2], g[4], g[3], g[4], g[5]};
    memcpy(h + ka, G, sizeof G);
    return PL_OK;
}

int cpu_sel_update(pl_backend *be, size_t n, int ka, const double *A, const double *ca, const double *B,
                   const double *cb, size_t ld, double s, double *x)
{
    (void)be;
    PL_CHECK(ka >= 0 && ka <= PL_SEL_KMAX && ld >= n, PL_ERR_ARG, "sel_update: bad ka = %d or ld = %zu (n = %zu)",
             ka, ld, n);
    if (n == 0) return PL_OK;
    const size_t nb = (n + PL_TS_ROWS - 1) / PL_TS_ROWS;
    const ts_sub_fn sub = g_sub;
    const double c0 = cb[0], c1 = cb[1];
    const double *b0 = B, *b1 = B + ld;
#pragma omp parallel for schedule(static) if (n > PL_OMP_MIN)
    for (size_t b = 0; b < nb; b++) {
        size_t r0 = b * PL_TS_ROWS, len = r0 + PL_TS_ROWS < n ? PL_TS_ROWS : n - r0;
        double *t = x + r0;
        if (ka > 0) sub(len, ka, A + r0, ld, ca, t);
        for (size_t i = 0; i < len; i++) t[i] = s * (t[i] - c0 * b0[r0 + i] - c1 * b1[r0 + i]);
    }
    return PL_OK;
}

/* be->lz_step (spmv.h): the coefficients from kron_lz's sums (host memory
 * here), then the update and the selected columns' sums over the row tiles
 * as in cgs_step. */
int cpu_lz_step(pl_backend *be, size_t n, int ka, const double *A, const double *x, size_t ld, double beta,
                const double *d_dots, double *y, double *out)
{
    (void)be;
    PL_CHECK(ka >= 0 && ka <= PL_SEL_KMAX && ld >= n && d_dots && out, PL_ERR_ARG,
             "lz_step: bad ka = %d or ld = %zu (n = %zu)", ka, ld, n);
    double a, b;
    const int ok = pl_lz_coef(d_dots, beta, &a, &b);
    memcpy(out, d_dots, PL_KRON_LZ_DOTS * sizeof *out);
    out[PL_LZ_OUT_ALPHA] = a;
    out[PL_LZ_OUT_NORM] = b;
    out[PL_LZ_OUT_DECLINED] = ok ? 0.0 : 1.0;
    double *h = out + PL_LZ_OUT;
    memset(h, 0, (size_t)ka * sizeof *h);
    if (!ok) return PL_OK;
    const double s = 1.0 / b;
    double part[64 * PL_SEL_KMAX];
    int nt = n > PL_OMP_MIN ? omp_get_max_threads() : 1;
    if (nt > 64) nt = 64;
    memset(part, 0, (size_t)nt * (size_t)ka * sizeof(double));
    const size_t nb = (n + PL_TS_ROWS - 1) / PL_TS_ROWS;
    const ts_proj_fn proj = g_proj;
#pragma omp parallel num_threads(nt) if (nt > 1)
    {
        double *hp = part + (size_t)omp_get_thread_num() * (size_t)ka;
#pragma omp for schedule(static)
        for (size_t bk = 0; bk < nb; bk++) {
            size_t r0 = bk * PL_TS_ROWS, len = r0 + PL_TS_ROWS < n ? PL_TS_ROWS : n - r0;
            double *t = y + r0;
            for (size_t i = 0; i < len; i++) t[i] = s * (t[i] - a * x[r0 + i]);
            if (ka > 0) proj(len, ka, A + r0, ld, t, hp); /* the tile of y is in cache */
        }
    }
    for (int c = 0; c < ka; c++) { /* the threads' sums in thread order */
        double t = 0.0;
        for (int q = 0; q < nt; q++) t += part[(size_t)q * (size_t)ka + c];
        h[c] = t;
    }
    return PL_OK;
}

/* V[:, 0:m] = V[:, 0:k] Y in place, tile by tile through a per-thread
 * buffer of PL_TS_ROWS x m. */
int cpu_basis_update(pl_backend *be, size_t n, int k, int m, double *V, size_t ld, const double *Y, int ldy)
{
    (void)be;
    PL_CHECK(k >= 0 && m >= 0 && m <= k && ldy >= k && ld >= n, PL_ERR_ARG,
             "basis_update: bad sizes (n = %zu, k = %d, m = %d, ld = %zu, ldy = %d)", n, k, m, ld, ldy);
    if (n == 0 || m == 0) return PL_OK;
    int nt = n > PL_OMP_MIN ? omp_get_max_threads() : 1, fail = 0;
    const size_t nb = (n + PL_TS_ROWS - 1) / PL_TS_ROWS;
#pragma omp parallel num_threads(nt) if (nt > 1) reduction(| : fail)
    {
        double *t = malloc((size_t)PL_TS_ROWS * (size_t)m * sizeof *t);
        if (!t) fail = 1;
#pragma omp for schedule(static)
        for (size_t b = 0; b < nb; b++) {
            if (!t) continue;
            size_t r0 = b * PL_TS_ROWS, len = r0 + PL_TS_ROWS < n ? PL_TS_ROWS : n - r0;
            update_tile(len, k, m, V + r0, ld, Y, ldy, t);
        }
        free(t);
    }
    PL_CHECK(!fail, PL_ERR_MEM, "out of host memory (basis_update)");
    return PL_OK;
}

/* be->restart_step (spmv.h): per tile of rows, basis_update's tile, the
 * restart vector and its product copied in, then cgs_step's tile on it
 * while it is in cache (the same helpers, tiles and per-thread order: the
 * same bits as the composed slots); per-thread sums added in thread order. */
int cpu_restart_step(pl_backend *be, size_t n, int off, int sz, int kk, double *V, size_t ld, const double *Y,
                     int ldy, const double *h_in, double *h_out)
{
    (void)be;
    PL_CHECK(off >= 0 && kk >= 1 && sz > kk + 1 && ldy >= sz && ld >= n, PL_ERR_ARG,
             "restart_step: bad sizes (n = %zu, off = %d, sz = %d, kk = %d, ld = %zu, ldy = %d)", n, off, sz, kk, ld,
             ldy);
    const int k = off + kk, kc = k + 1; /* columns 0..k measured, then the norm */
    for (int i = 0; i <= kc; i++) h_out[i] = 0.0;
    if (n == 0) return PL_OK;
    int nt = n > PL_OMP_MIN ? omp_get_max_threads() : 1, fail = 0;
    const size_t np = (size_t)nt * (size_t)(kc + 1);
    double *part = calloc(np, sizeof *part);
    PL_CHECK(part, PL_ERR_MEM, "out of host memory (restart_step)");
    const size_t nb = (n + PL_TS_ROWS - 1) / PL_TS_ROWS;
    double *Vo = V + (size_t)off * ld, *vr = V + (size_t)(off + sz) * ld, *xa = vr + ld;
    double *vk = V + (size_t)k * ld, *x = vk + ld;
#pragma omp parallel num_threads(nt) if (nt > 1) reduction(| : fail)
    {
        double *hp = part + (size_t)omp_get_thread_num() * (size_t)(kc + 1);
        double *t = malloc((size_t)PL_TS_ROWS * (size_t)kk * sizeof *t);
        if (!t) fail = 1;
#pragma omp for schedule(static)
        for (size_t b = 0; b < nb; b++) {
            if (!t) continue;
            size_t r0 = b * PL_TS_ROWS, len = r0 + PL_TS_ROWS < n ? PL_TS_ROWS : n - r0;
            /* columns k and k + 1 are read (as old columns) by the update,
             * and vr, xa lie beyond it: safe in this order */
            update_tile(len, sz, kk, Vo + r0, ld, Y, ldy, t);
            memcpy(vk + r0, vr + r0, len * sizeof(double));
            memcpy(x + r0, xa + r0, len * sizeof(double));
            cgs_tile(len, kc, V + r0, ld, h_in, x + r0, hp);
        }
        free(t);
    }
    for (int th = 0; th < nt && !fail; th++)
        for (int c = 0; c <= kc; c++) h_out[c] += part[(size_t)th * (size_t)(kc + 1) + c];
    free(part);
    PL_CHECK(!fail, PL_ERR_MEM, "out of host memory (restart_step)");
    return PL_OK;
}
