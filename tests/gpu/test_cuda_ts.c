/* test_cuda_ts.c — the CUDA backend's tall-skinny products (gemv_t, gemv_n,
 * gemm; spmv/cuda/ts_kernels.cu, cuBLAS above k or m = 64) against
 * independent references.
 *
 * Reference: the same products summed in long double on the host; error
 * measured against the entry's scale sum |terms| (the quantity any
 * summation order's rounding error is bounded by), tolerance 1e-13.  The
 * CPU backend (OpenBLAS) is checked against the same reference and the GPU
 * against the CPU backend directly (1e-13 of the scale).
 * Coverage: k = 1..64 (all for small n, a spread for larger n) and 65, 80
 * (cuBLAS fallback); n odd and even, n < 2 (scalar tail only), ld = n, n+1,
 * n+3 (odd ld: no 16-byte path); V and w shifted by one double (misaligned:
 * scalar path) or aligned (double2 path with the odd-row tail); beta = 0
 * (w holds NaN on entry and must not be read), 1 and 0.5; gemm with m = 1..64
 * and 65; our kernels and the cuBLAS mode (pl_cuda_set_ts_cublas) alike;
 * repeated gemv_t calls with changing grids (the last-block ticket must be
 * reset by each call).  The optional fused slots (lanczos-perf): cgs_step
 * (w -= V h; h_out = V^T w; h_out[k] = w.w) and the in-place basis_update
 * against the same long double references and against the generic path
 * of the CPU backend (gemv_n + gemv_t + dot; gemm), 1e-13 of the scale,
 * k = 1..63 plus 64 and 80 (fallbacks), both modes.  PJDS_TEST_QUICK=1 (compute-sanitizer) runs a
 * smaller set.  Exit 77 without a CUDA device or without a CUDA build.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pl_build.h"
#include "pl_error.h"
#include "spmv.h"
#include "testutil.h"
#if PJDS_HAVE_CUDA
#include "cuda/pl_cuda_bench.h"
#endif

#if PJDS_HAVE_CUDA
#define KMAX 80
#define TOL 1e-13

static uint64_t rng_state = 777;
static double unif(void)
{
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return (double)(z >> 11) * 0x1.0p-53 * 2.0 - 1.0;
}

static int quick(void)
{
    const char *q = getenv("PJDS_TEST_QUICK");
    return q && *q && strcmp(q, "0") != 0;
}

/* worst |got - ref| / scale over entries; counts entries above TOL */
static double worst(const double *got, const long double *ref, const long double *scale, size_t n, int *nbad)
{
    double m = 0.0;
    for (size_t i = 0; i < n; i++) {
        double s = (double)scale[i] > 0 ? (double)scale[i] : 1e-300;
        double e = fabs(got[i] - (double)ref[i]) / s;
        if (!(e <= TOL)) (*nbad)++;
        if (e > m || e != e) m = e;
    }
    return m;
}

typedef struct cfg {
    size_t n, ld;
    int shift; /* doubles by which V and w are offset from the allocation */
} cfg;

/* One (n, ld, shift): every op for the list of k, on `g` (GPU, in its
 * current ts mode) and the CPU backend. */
static void run_cfg(pl_backend *g, pl_backend *c, const cfg *cf, const int *ks, int nk, const char *mode)
{
    const size_t n = cf->n, ld = cf->ld, sh = (size_t)cf->shift;
    const size_t nv = ld * KMAX + sh + 2, nw = n + sh + 2;
    double *hV = malloc(nv * sizeof *hV), *hw = malloc(nw * sizeof *hw), *out = malloc(nv * sizeof *out);
    double *hh = malloc(KMAX * sizeof *hh), *hY = malloc((size_t)(KMAX + 1) * KMAX * sizeof *hY);
    double hres[KMAX], cres[KMAX];
    long double *ref = malloc((ld * KMAX + 1) * sizeof *ref), *scl = malloc((ld * KMAX + 1) * sizeof *scl);
    for (size_t i = 0; i < nv; i++) hV[i] = unif();
    for (size_t i = 0; i < nw; i++) hw[i] = unif();
    for (int j = 0; j < KMAX; j++) hh[j] = unif();
    for (size_t i = 0; i < (size_t)(KMAX + 1) * KMAX; i++) hY[i] = unif();
    const double *V0 = hV + sh, *w0 = hw + sh; /* logical V (ld) and w (n) */
    double *gV = NULL, *gw = NULL, *gW = NULL, *cw = NULL, *cW = NULL, *cV = NULL;
    TU_OK(g->vec_alloc(g, nv, &gV));
    TU_OK(g->vec_alloc(g, nw, &gw));
    TU_OK(g->vec_alloc(g, ld * KMAX + sh + 2, &gW));
    TU_OK(c->vec_alloc(c, nv, &cV));
    TU_OK(c->vec_alloc(c, nw, &cw));
    TU_OK(c->vec_alloc(c, ld * KMAX + sh + 2, &cW));
    if (!gV || !gw || !gW || !cV || !cw || !cW) goto out;
    TU_OK(g->upload(g, gV, hV, nv));
    memcpy(cV, hV, nv * sizeof *cV);
    char tag[160];

    /* gemv_t: reference h_j = sum_i V_ij w_i for all KMAX columns at once */
    for (int j = 0; j < KMAX; j++) {
        long double s = 0, a = 0;
        for (size_t i = 0; i < n; i++) {
            long double t = (long double)V0[i + (size_t)j * ld] * w0[i];
            s += t;
            a += fabsl(t);
        }
        ref[j] = s;
        scl[j] = a;
    }
    TU_OK(g->upload(g, gw, hw, nw));
    memcpy(cw, hw, nw * sizeof *cw);
    for (int q = 0; q < nk; q++) {
        const int k = ks[q];
        snprintf(tag, sizeof tag, "gemv_t [%s] n=%zu ld=%zu shift=%d k=%d", mode, n, ld, cf->shift, k);
        for (int j = 0; j < KMAX; j++) hres[j] = cres[j] = -7.0;
        TU_OK(g->gemv_t(g, n, k, gV + sh, ld, gw + sh, hres));
        TU_OK(c->gemv_t(c, n, k, cV + sh, ld, cw + sh, cres));
        int bad = 0, badc = 0;
        double e = worst(hres, ref, scl, (size_t)k, &bad), ec = worst(cres, ref, scl, (size_t)k, &badc);
        TU_CHECK_MSG(bad == 0, "%s: GPU vs long double: %d entries, worst %.3g of the scale", tag, bad, e);
        TU_CHECK_MSG(badc == 0, "%s: CPU vs long double: %d entries, worst %.3g", tag, badc, ec);
        double d = 0;
        for (int j = 0; j < k; j++) d = fmax(d, fabs(hres[j] - cres[j]) / fmax((double)scl[j], 1e-300));
        TU_CHECK_MSG(d <= TOL, "%s: GPU vs CPU backend %.3g of the scale", tag, d);
        if (k < KMAX) TU_CHECK_MSG(hres[k] == -7.0, "%s: wrote past h[k-1]", tag);
    }

    /* gemv_n: w = beta w + alpha V h, beta in {0 (w = NaN on entry), 1, 0.5} */
    const double betas[3] = {0.0, 1.0, 0.5}, alpha = -1.25;
    for (int bi = 0; bi < 3; bi++) {
        const double beta = betas[bi];
        for (int q = 0; q < nk; q++) {
            const int k = ks[q];
            snprintf(tag, sizeof tag, "gemv_n [%s] n=%zu ld=%zu shift=%d k=%d beta=%g", mode, n, ld, cf->shift, k,
                     beta);
            for (size_t i = 0; i < n; i++) {
                long double s = 0, a = 0;
                for (int j = 0; j < k; j++) {
                    long double t = (long double)V0[i + (size_t)j * ld] * hh[j];
                    s += t;
                    a += fabsl(t);
                }
                ref[i] = (long double)beta * w0[i] + (long double)alpha * s;
                scl[i] = fabsl((long double)beta * w0[i]) + fabsl((long double)alpha) * a;
            }
            /* w: the original values, or NaN for beta = 0 (must not be read); guards around it */
            for (size_t i = 0; i < nw; i++) out[i] = hw[i];
            if (beta == 0.0)
                for (size_t i = 0; i < n; i++) out[sh + i] = NAN;
            TU_OK(g->upload(g, gw, out, nw));
            TU_OK(g->gemv_n(g, n, k, alpha, gV + sh, ld, hh, beta, gw + sh));
            TU_OK(g->download(g, out, gw, nw));
            int bad = 0;
            double e = worst(out + sh, ref, scl, n, &bad);
            TU_CHECK_MSG(bad == 0, "%s: GPU vs long double: %d rows, worst %.3g of the scale", tag, bad, e);
            int guard = 1;
            for (size_t i = 0; i < sh; i++) guard &= out[i] == hw[i];
            for (size_t i = sh + n; i < nw; i++) guard &= out[i] == hw[i];
            TU_CHECK_MSG(guard, "%s: wrote outside w", tag);
            if (beta != 0.0) { /* the CPU backend (OpenBLAS) on the same data */
                memcpy(cw, hw, nw * sizeof *cw);
                TU_OK(c->gemv_n(c, n, k, alpha, cV + sh, ld, hh, beta, cw + sh));
                int badc = 0;
                double ec = worst(cw + sh, ref, scl, n, &badc);
                TU_CHECK_MSG(badc == 0, "%s: CPU vs long double: %d rows, worst %.3g", tag, badc, ec);
                double d = 0;
                for (size_t i = 0; i < n; i++)
                    d = fmax(d, fabs(out[sh + i] - cw[sh + i]) / fmax((double)scl[i], 1e-300));
                TU_CHECK_MSG(d <= TOL, "%s: GPU vs CPU backend %.3g of the scale", tag, d);
            }
        }
    }

    /* gemm: W = V Y, Y k x m with ldy = k + 1; W with the same ld and shift as V */
    const int ms[] = {1, 3, 16, 17, 40, 64, 65};
    for (int q = 0; q < nk; q++) {
        const int k = ks[q];
        /* a spread of k and m is enough for gemm (the long double reference costs n k m) */
        if (q % 3 != 0 && k != 64 && k != 65) continue;
        if (n > 5000 && k != 1 && k != 17 && k != 64 && k != 65) continue;
        for (size_t mi = 0; mi < sizeof ms / sizeof *ms; mi++) {
            const int m = ms[mi], ldy = k + 1;
            if (n > 5000 && m != 1 && m != 17 && m != 64) continue;
            if (n > 100000 && m != 17) continue;
            snprintf(tag, sizeof tag, "gemm [%s] n=%zu ld=%zu shift=%d k=%d m=%d", mode, n, ld, cf->shift, k, m);
            for (int cc = 0; cc < m; cc++)
                for (size_t i = 0; i < n; i++) {
                    long double s = 0, a = 0;
                    for (int j = 0; j < k; j++) {
                        long double t = (long double)V0[i + (size_t)j * ld] * hY[j + (size_t)cc * ldy];
                        s += t;
                        a += fabsl(t);
                    }
                    ref[i + (size_t)cc * n] = s;
                    scl[i + (size_t)cc * n] = a;
                }
            for (size_t i = 0; i < ld * KMAX + sh + 2; i++) out[i] = 99.0;
            TU_OK(g->upload(g, gW, out, ld * KMAX + sh + 2));
            TU_OK(g->gemm(g, n, k, m, gV + sh, ld, hY, ldy, gW + sh, ld));
            TU_OK(g->download(g, out, gW, ld * KMAX + sh + 2));
            int bad = 0, guard = 1;
            double e = 0;
            for (int cc = 0; cc < m; cc++) {
                double t = worst(out + sh + (size_t)cc * ld, ref + (size_t)cc * n, scl + (size_t)cc * n, n, &bad);
                if (t > e) e = t;
                for (size_t i = n; i < ld && cc + 1 < m; i++) guard &= out[sh + (size_t)cc * ld + i] == 99.0;
            }
            for (size_t i = 0; i < sh; i++) guard &= out[i] == 99.0;
            guard &= out[sh + (size_t)(m - 1) * ld + n] == 99.0;
            TU_CHECK_MSG(bad == 0, "%s: GPU vs long double: %d entries, worst %.3g of the scale", tag, bad, e);
            TU_CHECK_MSG(guard, "%s: wrote outside W[:, 0:m] rows 0..n-1", tag);
            if (m == 17 || m == 65) { /* and the CPU backend */
                TU_OK(c->gemm(c, n, k, m, cV + sh, ld, hY, ldy, cW + sh, ld));
                double d = 0;
                for (int cc = 0; cc < m; cc++)
                    for (size_t i = 0; i < n; i++)
                        d = fmax(d, fabs(out[sh + i + (size_t)cc * ld] - cW[sh + i + (size_t)cc * ld]) /
                                        fmax((double)scl[i + (size_t)cc * n], 1e-300));
                TU_CHECK_MSG(d <= TOL, "%s: GPU vs CPU backend %.3g of the scale", tag, d);
            }
        }
    }
out:
    if (gV) g->vec_free(g, gV);
    if (gw) g->vec_free(g, gw);
    if (gW) g->vec_free(g, gW);
    if (cV) c->vec_free(c, cV);
    if (cw) c->vec_free(c, cw);
    if (cW) c->vec_free(c, cW);
    free(hV);
    free(hw);
    free(out);
    free(hh);
    free(hY);
    free(ref);
    free(scl);
}

/* cgs_step and basis_update for one (n, ld, shift) and the list of k. */
static void run_slots(pl_backend *g, pl_backend *c, const cfg *cf, const int *ks, int nk, const char *mode)
{
    const size_t n = cf->n, ld = cf->ld, sh = (size_t)cf->shift;
    const size_t nv = ld * (KMAX + 1) + sh + 2;
    double *hV = malloc(nv * sizeof *hV), *out = malloc(nv * sizeof *out), *cV = NULL, *gV = NULL;
    double *hh = malloc(KMAX * sizeof *hh), *hY = malloc((size_t)(KMAX + 1) * KMAX * sizeof *hY);
    double gres[KMAX + 1], cres[KMAX + 1];
    long double *wr = malloc((n + 1) * sizeof *wr), *ws = malloc((n + 1) * sizeof *ws);
    long double *ref = malloc((ld * KMAX + 1) * sizeof *ref), *scl = malloc((ld * KMAX + 1) * sizeof *scl);
    for (size_t i = 0; i < nv; i++) hV[i] = unif();
    for (int j = 0; j < KMAX; j++) hh[j] = 0.25 * unif();
    for (size_t i = 0; i < (size_t)(KMAX + 1) * KMAX; i++) hY[i] = unif();
    TU_OK(g->vec_alloc(g, nv, &gV));
    TU_OK(c->vec_alloc(c, nv, &cV));
    if (!gV || !cV) goto out;
    char tag[160];
    for (int q = 0; q < nk; q++) {
        const int k = ks[q];
        if (k > KMAX - 1) continue;
        /* w is column k of V (as in Lanczos) */
        const double *V0 = hV + sh, *w0 = V0 + (size_t)k * ld;
        snprintf(tag, sizeof tag, "cgs_step [%s] n=%zu ld=%zu shift=%d k=%d", mode, n, ld, cf->shift, k);
        for (size_t i = 0; i < n; i++) {
            long double t = 0, a = 0;
            for (int j = 0; j < k; j++) {
                long double p = (long double)V0[i + (size_t)j * ld] * hh[j];
                t += p;
                a += fabsl(p);
            }
            wr[i] = w0[i] - t;
            ws[i] = fabsl((long double)w0[i]) + a;
        }
        for (int j = 0; j <= k; j++) {
            long double s2 = 0, a = 0;
            for (size_t i = 0; i < n; i++) {
                long double v = j < k ? (long double)V0[i + (size_t)j * ld] : wr[i];
                s2 += v * wr[i];
                a += fabsl(v) * ws[i];
            }
            ref[j] = s2;
            scl[j] = a;
        }
        TU_OK(g->upload(g, gV, hV, nv));
        memcpy(cV, hV, nv * sizeof *cV);
        for (int j = 0; j <= KMAX; j++) gres[j] = cres[j] = -7.0;
        TU_OK(g->cgs_step(g, n, k, gV + sh, ld, gV + sh + (size_t)k * ld, hh, gres));
        /* the generic path on the CPU backend */
        TU_OK(c->gemv_n(c, n, k, -1.0, cV + sh, ld, hh, 1.0, cV + sh + (size_t)k * ld));
        TU_OK(c->gemv_t(c, n, k + 1, cV + sh, ld, cV + sh + (size_t)k * ld, cres));
        int bad = 0, badc = 0;
        double e = worst(gres, ref, scl, (size_t)k + 1, &bad), ec = worst(cres, ref, scl, (size_t)k + 1, &badc);
        TU_CHECK_MSG(bad == 0, "%s: h_out GPU vs long double: %d entries, worst %.3g of the scale", tag, bad, e);
        TU_CHECK_MSG(badc == 0, "%s: h_out CPU vs long double: %d entries, worst %.3g", tag, badc, ec);
        double d = 0;
        for (int j = 0; j <= k; j++) d = fmax(d, fabs(gres[j] - cres[j]) / fmax((double)scl[j], 1e-300));
        TU_CHECK_MSG(d <= TOL, "%s: h_out GPU vs CPU generic path %.3g of the scale", tag, d);
        if (k + 1 < KMAX) TU_CHECK_MSG(gres[k + 1] == -7.0, "%s: wrote past h_out[k]", tag);
        TU_OK(g->download(g, out, gV, nv));
        bad = 0;
        e = worst(out + sh + (size_t)k * ld, wr, ws, n, &bad);
        TU_CHECK_MSG(bad == 0, "%s: w GPU vs long double: %d rows, worst %.3g of the scale", tag, bad, e);
        int same = 1;
        for (size_t i = 0; i < nv; i++)
            if (i < sh + (size_t)k * ld || i >= sh + (size_t)k * ld + n) same &= out[i] == hV[i];
        TU_CHECK_MSG(same, "%s: wrote outside w", tag);
        d = 0;
        for (size_t i = 0; i < n; i++)
            d = fmax(d, fabs(out[sh + (size_t)k * ld + i] - cV[sh + (size_t)k * ld + i]) / fmax((double)ws[i], 1e-300));
        TU_CHECK_MSG(d <= TOL, "%s: w GPU vs CPU generic path %.3g of the scale", tag, d);
    }
    /* basis_update: V[:, 0:m] = V[:, 0:k] Y in place, Y k x m with ldy = k + 1 */
    const int ms[] = {1, 3, 8, 9, 16, 17, 32, 33, 64};
    for (int q = 0; q < nk; q++) {
        const int k = ks[q];
        if (n > 5000 && k != 1 && k != 17 && k != 24 && k != 64 && k != 65) continue;
        const double *V0 = hV + sh;
        for (size_t mi = 0; mi < sizeof ms / sizeof *ms; mi++) {
            const int m = ms[mi], ldy = k + 1;
            if (m > k) continue;
            if (n > 5000 && m != 1 && m != 14 && m != 17 && m != k) continue;
            snprintf(tag, sizeof tag, "basis_update [%s] n=%zu ld=%zu shift=%d k=%d m=%d", mode, n, ld, cf->shift, k, m);
            for (int cc = 0; cc < m; cc++)
                for (size_t i = 0; i < n; i++) {
                    long double s2 = 0, a = 0;
                    for (int j = 0; j < k; j++) {
                        long double t = (long double)V0[i + (size_t)j * ld] * hY[j + (size_t)cc * ldy];
                        s2 += t;
                        a += fabsl(t);
                    }
                    ref[i + (size_t)cc * n] = s2;
                    scl[i + (size_t)cc * n] = a;
                }
            TU_OK(g->upload(g, gV, hV, nv));
            TU_OK(g->basis_update(g, n, k, m, gV + sh, ld, hY, ldy));
            TU_OK(g->download(g, out, gV, nv));
            int bad = 0, guard = 1;
            double e = 0;
            for (int cc = 0; cc < m; cc++) {
                double t = worst(out + sh + (size_t)cc * ld, ref + (size_t)cc * n, scl + (size_t)cc * n, n, &bad);
                if (t > e) e = t;
                for (size_t i = n; i < ld; i++) guard &= out[sh + (size_t)cc * ld + i] == hV[sh + (size_t)cc * ld + i];
            }
            for (size_t i = 0; i < sh; i++) guard &= out[i] == hV[i];
            for (size_t i = sh + (size_t)k * ld; i < nv; i++) guard &= out[i] == hV[i];
            TU_CHECK_MSG(bad == 0, "%s: GPU vs long double: %d entries, worst %.3g of the scale", tag, bad, e);
            TU_CHECK_MSG(guard, "%s: wrote outside V[0:n, 0:k]", tag);
            if (m == 17 || m == k) { /* the CPU backend's gemm (generic path) */
                TU_OK(c->gemm(c, n, k, m, hV + sh, ld, hY, ldy, cV + sh, ld));
                double d = 0;
                for (int cc = 0; cc < m; cc++)
                    for (size_t i = 0; i < n; i++)
                        d = fmax(d, fabs(out[sh + i + (size_t)cc * ld] - cV[sh + i + (size_t)cc * ld]) /
                                        fmax((double)scl[i + (size_t)cc * n], 1e-300));
                TU_CHECK_MSG(d <= TOL, "%s: GPU vs CPU gemm %.3g of the scale", tag, d);
            }
        }
    }
out:
    if (gV) g->vec_free(g, gV);
    if (cV) c->vec_free(c, cV);
    free(hV);
    free(out);
    free(hh);
    free(hY);
    free(wr);
    free(ws);
    free(ref);
    free(scl);
}

/* gemv_t repeatedly with grids of different sizes: each call must reset the
 * last-block ticket, or the next call would finish in the wrong block. */
static void test_ticket(pl_backend *g)
{
    const size_t sizes[] = {3000001, 5, 100003, 1, 3000001, 64, 777777};
    const size_t nmax = 3000001;
    const int k = 7;
    double *hV = malloc(nmax * k * sizeof *hV), *hw = malloc(nmax * sizeof *hw), *gV = NULL, *gw = NULL;
    for (size_t i = 0; i < nmax * k; i++) hV[i] = unif();
    for (size_t i = 0; i < nmax; i++) hw[i] = unif();
    TU_OK(g->vec_alloc(g, nmax * k, &gV));
    TU_OK(g->vec_alloc(g, nmax, &gw));
    if (gV && gw) {
        TU_OK(g->upload(g, gV, hV, nmax * k));
        TU_OK(g->upload(g, gw, hw, nmax));
        for (int rep = 0; rep < 3; rep++)
            for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
                const size_t n = sizes[s];
                double h[8];
                TU_OK(g->gemv_t(g, n, k, gV, nmax, gw, h));
                for (int j = 0; j < k; j++) {
                    long double r = 0, a = 0;
                    for (size_t i = 0; i < n; i++) {
                        long double t = (long double)hV[i + (size_t)j * nmax] * hw[i];
                        r += t;
                        a += fabsl(t);
                    }
                    TU_CHECK_MSG(fabs(h[j] - (double)r) <= TOL * (double)a, "ticket test n=%zu rep %d col %d: %.17g vs %.17g",
                                 n, rep, j, h[j], (double)r);
                }
            }
    }
    if (gV) g->vec_free(g, gV);
    if (gw) g->vec_free(g, gw);
    free(hV);
    free(hw);
}
#endif

int main(void)
{
#if !PJDS_HAVE_CUDA
    TU_SKIP("built without CUDA");
#else
    if (pl_cuda_device_count() == 0) TU_SKIP("no CUDA device");
    pl_backend *g = NULL, *c = NULL;
    TU_OK(pl_backend_cuda_create(0, &g));
    TU_OK(pl_backend_cpu_create(&c));
    if (!g || !c) return tu_result("test_cuda_ts");
    int kall[KMAX], nall = 0;
    for (int k = 1; k <= 64; k++) kall[nall++] = k;
    kall[nall++] = 65;
    kall[nall++] = 80;
    const int kspread[] = {1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 24, 31, 32, 33, 47, 63, 64, 65, 80};
    const int nspread = (int)(sizeof kspread / sizeof *kspread);
    const int kq[] = {1, 3, 8, 17, 33, 64, 65};
    const int nq = (int)(sizeof kq / sizeof *kq);
    const cfg small[] = {{1, 1, 0}, {1, 2, 1}, {2, 2, 0}, {2, 3, 1}, {3, 3, 0}, {5, 8, 1}, {17, 17, 0}, {17, 18, 0},
                         {64, 64, 1}, {333, 333, 0}, {333, 334, 0}, {334, 334, 1}, {1001, 1004, 0}};
    const cfg large[] = {{4097, 4097, 0}, {4098, 4098, 0}, {4098, 4098, 1}, {65537, 65538, 0}, {65536, 65539, 1},
                         {200001, 200002, 0}};
    for (int mode = 0; mode < 2; mode++) {
        const char *mname = mode ? "cuBLAS" : "ours";
        TU_OK(pl_cuda_set_ts_cublas(g, mode));
        for (size_t i = 0; i < sizeof small / sizeof *small; i++) {
            if (quick() && i % 3) continue;
            run_cfg(g, c, &small[i], quick() ? kq : kall, quick() ? nq : nall, mname);
            run_slots(g, c, &small[i], quick() ? kq : kall, quick() ? nq : nall, mname);
        }
        for (size_t i = 0; i < sizeof large / sizeof *large; i++) {
            if (quick() && i != 2) continue;
            if (mode && i > 2) continue; /* cuBLAS mode: small and mid sizes suffice */
            run_cfg(g, c, &large[i], quick() ? kq : kspread, quick() ? nq : nspread, mname);
            run_slots(g, c, &large[i], quick() ? kq : kspread, quick() ? nq : nspread, mname);
        }
    }
    TU_OK(pl_cuda_set_ts_cublas(g, 0));
    if (!quick()) test_ticket(g);
    pl_backend_destroy(&g);
    pl_backend_destroy(&c);
#endif
    return tu_result("test_cuda_ts");
}
