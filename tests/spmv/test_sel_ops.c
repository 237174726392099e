/* test_sel_ops.c — the backend slots of the Lanczos local step with
 * selective orthogonalisation (spmv.h sel_gram, sel_update, lz_step)
 * against plain long double loops on the host: h[0:ka] = A^T x,
 * h[ka:ka+9] = B^T B for B = [b0 b1 x], x = s (x - A ca - b0 cb0 - b1 cb1),
 * and lz_step's y = s (y - a x) (bit for bit s * (y - (a * x)), every
 * backend alike, a and s = 1 / b from the sums it is given) with
 * h[0:ka] = A^T y of the new y (ka = 0 too), x^T y = 0 and ||y|| = 1, and
 * its declined step.
 * Error measured against the entry's scale sum |terms| (any summation
 * order's rounding is bounded by eps times it), tolerance 1e-13.
 * Coverage: ka = 1..16 (the kernel tiers 4, 8 and 16 and their edges),
 * n = 1, 7, 1000 and 20001 (the CPU backend's OpenMP threshold), ld = n and
 * n + 1 (odd: unaligned columns).  Backends: cpu always; cuda as well when
 * PJDS_TEST_BACKEND=cuda (exit 77 without a device). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lz_coef.h"
#include "pl_error.h"
#include "spmv.h"
#include "spmv_testmat.h"
#include "testutil.h"
#include "backend_each.h"

#define TOL 1e-13

static double g_worst = 0.0;

static void expect_close(const char *what, double got, long double ref, long double scale)
{
    tu_close_scaled(what, got, ref, scale, TOL, &g_worst);
}

/* got against the long double sum of a[i] v[i], i < n (scale: the sum of
 * |terms|). */
static void expect_dot(const char *what, double got, const double *a, const double *v, size_t n)
{
    long double r = 0, sc = 0;
    for (size_t i = 0; i < n; i++) {
        long double t = (long double)a[i] * v[i];
        r += t;
        sc += fabsl(t);
    }
    expect_close(what, got, r, sc);
}

/* lz_step with the sums of y = column ka + 2 (host hy0), x = column ka + 1
 * and z = column ka (host hV): alpha and b as lz_coef.h's pl_lz_coef
 * gives them (to 1e-14: the device may contract), y' = s * (y - (alpha *
 * x)) bit for bit with s = 1 / b, y' orthogonal to x and of unit norm to
 * TOL, h = A^T y' to TOL; and a declined step (sums of a vanishing
 * remainder) that leaves y alone with out[PL_LZ_OUT_DECLINED] = 1. */
static void check_lz_step(pl_backend *be, size_t n, size_t ld, int ka, int kc, double *V, const double *hV,
                          uint64_t *s)
{
    const double *hA = hV, *hz = hV + (size_t)ka * ld, *hxv = hz + ld;
    double *y = V + (size_t)(ka + 2) * ld, *hy = malloc((n + 1) * sizeof *hy), *hy0 = malloc((n + 1) * sizeof *hy0);
    double *dd = NULL, d[PL_KRON_LZ_DOTS], out[PL_LZ_OUT + PL_SEL_KMAX], beta = 0.3 + tm_unif(s);
    char tag[112];
    TU_CHECK(hy && hy0);
    TU_OK(be->download(be, hy0, y, n));
    TU_OK(be->vec_alloc(be, PL_KRON_LZ_DOTS, &dd));
    long double q[PL_KRON_LZ_DOTS] = {0};
    for (size_t i = 0; i < n; i++) {
        const long double x = hxv[i], yv = hy0[i], z = hz[i];
        q[0] += x * x;
        q[1] += yv * x;
        q[2] += yv * yv;
        q[3] += z * yv;
        q[4] += z * x;
    }
    for (int k = 0; k < PL_KRON_LZ_DOTS; k++) d[k] = (double)q[k];
    const int exact = d[0] > 0.5; /* short x (small n): x.x = 1 pretended, only the arithmetic checked */
    if (!exact) d[0] = 1.0;
    TU_OK(be->upload(be, dd, d, PL_KRON_LZ_DOTS));
    double a = 0.0, b = 1.0;
    const int ok = pl_lz_coef(d, beta, &a, &b);
    TU_OK(be->lz_step(be, n, kc, V, V + (size_t)(ka + 1) * ld, ld, beta, dd, y, out));
    TU_OK(be->download(be, hy, y, n));
    snprintf(tag, sizeof tag, "lz_step [%s] n=%zu ld=%zu ka=%d", be->name, n, ld, kc);
    for (int k = 0; k < PL_KRON_LZ_DOTS; k++) TU_CHECK_MSG(out[k] == d[k], "%s: sum %d not passed through", tag, k);
    TU_CHECK_MSG((out[PL_LZ_OUT_DECLINED] == 0.0) == ok, "%s: declined %g, lz_coef says %d", tag,
                 out[PL_LZ_OUT_DECLINED], ok);
    if (ok) {
        const double al = out[PL_LZ_OUT_ALPHA], nb = out[PL_LZ_OUT_NORM], sf = 1.0 / nb;
        TU_CHECK_MSG(fabs(al - a) <= 1e-14 * fabs(a) && fabs(nb - b) <= 1e-14 * b, "%s: alpha %.17g b %.17g, want "
                     "%.17g %.17g", tag, al, nb, a, b);
        size_t bad = 0;
        long double xy = 0, yy = 0;
        for (size_t i = 0; i < n; i++) {
            const double ax = al * hxv[i], df = hy0[i] - ax, want = sf * df;
            bad += memcmp(&want, &hy[i], sizeof want) != 0;
            xy += (long double)hxv[i] * hy[i];
            yy += (long double)hy[i] * hy[i];
        }
        TU_CHECK_MSG(bad == 0, "%s: %zu values differ from s * (y - (alpha * x))", tag, bad);
        /* what the coefficients are for: x^T y' = 0 and ||y'|| = 1 */
        if (exact) {
            const double ortho = (double)(fabsl(xy) / sqrtl(q[0])), unit = (double)fabsl(yy - 1.0L);
            TU_CHECK_MSG(ortho <= 1e-12 && unit <= 1e-12, "%s: |x^T y'| / ||x|| = %.2e, | ||y'||^2 - 1 | = %.2e",
                         tag, ortho, unit);
        }
        for (int c = 0; c < kc; c++) {
            snprintf(tag, sizeof tag, "lz_step A^T y [%s] n=%zu ld=%zu ka=%d c=%d", be->name, n, ld, kc, c);
            expect_dot(tag, out[PL_LZ_OUT + c], hA + (size_t)c * ld, hy, n);
        }
    }
    /* declined: y.x = x.x = y.y (y = x, nothing left): y untouched, h = 0 */
    const double dz[PL_KRON_LZ_DOTS] = {1.0, 1.0, 1.0, 0.0, 0.0};
    TU_OK(be->upload(be, dd, dz, PL_KRON_LZ_DOTS));
    TU_OK(be->lz_step(be, n, kc, V, V + (size_t)(ka + 1) * ld, ld, beta, dd, y, out));
    double *hy2 = malloc((n + 1) * sizeof *hy2);
    TU_CHECK(hy2 != NULL);
    TU_OK(be->download(be, hy2, y, n));
    TU_CHECK_MSG(out[PL_LZ_OUT_DECLINED] == 1.0 && memcmp(hy, hy2, n * sizeof *hy) == 0, "%s: a declined step "
                 "changed y or was not reported", tag);
    for (int c = 0; c < kc; c++) TU_CHECK_MSG(out[PL_LZ_OUT + c] == 0.0, "%s: declined, h[%d] = %g", tag, c,
                                              out[PL_LZ_OUT + c]);
    free(hy2);
    be->vec_free(be, dd);
    free(hy);
    free(hy0);
}

static void check_one(pl_backend *be, size_t n, size_t ld, int ka, uint64_t seed)
{
    const int nc = ka + 3;
    const size_t tot = ld * (size_t)nc;
    double *hV = malloc(tot * sizeof *hV), *hx = malloc((n + 1) * sizeof *hx), h[PL_SEL_KMAX + 9];
    TU_CHECK(hV && hx);
    uint64_t s = seed;
    for (size_t i = 0; i < tot; i++) hV[i] = tm_unif(&s) - 0.5;
    double *V;
    TU_OK(be->vec_alloc(be, tot, &V));
    TU_OK(be->upload(be, V, hV, tot));
    const double *A = V, *B = V + (size_t)ka * ld;
    const double *hA = hV, *hB = hV + (size_t)ka * ld, *hxv = hB + 2 * ld;
    char tag[96];
    TU_OK(be->sel_gram(be, n, ka, A, B, ld, h));
    for (int c = 0; c < ka; c++) {
        snprintf(tag, sizeof tag, "sel_gram A^T x [%s] n=%zu ld=%zu ka=%d c=%d", be->name, n, ld, ka, c);
        expect_dot(tag, h[c], hA + (size_t)c * ld, hxv, n);
    }
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++) {
            snprintf(tag, sizeof tag, "sel_gram B^T B [%s] n=%zu ld=%zu ka=%d (%d,%d)", be->name, n, ld, ka, a, b);
            expect_dot(tag, h[ka + a + 3 * b], hB + (size_t)a * ld, hB + (size_t)b * ld, n);
        }
    /* the update of x = column ka + 2 */
    double ca[PL_SEL_KMAX], cb[2] = {tm_unif(&s) - 0.5, tm_unif(&s) - 0.5}, sf = 0.7;
    for (int c = 0; c < ka; c++) ca[c] = tm_unif(&s) - 0.5;
    TU_OK(be->sel_update(be, n, ka, A, ca, B, cb, ld, sf, V + (size_t)(ka + 2) * ld));
    TU_OK(be->download(be, hx, V + (size_t)(ka + 2) * ld, n));
    for (size_t i = 0; i < n; i++) {
        long double t = hxv[i], sc = fabsl(t);
        for (int c = 0; c < ka; c++) {
            t -= (long double)hA[(size_t)c * ld + i] * ca[c];
            sc += fabsl((long double)hA[(size_t)c * ld + i] * ca[c]);
        }
        t -= (long double)hB[i] * cb[0] + (long double)hB[ld + i] * cb[1];
        sc += fabsl((long double)hB[i] * cb[0]) + fabsl((long double)hB[ld + i] * cb[1]);
        snprintf(tag, sizeof tag, "sel_update [%s] n=%zu ld=%zu ka=%d i=%zu", be->name, n, ld, ka, i);
        expect_close(tag, hx[i], sf * t, sf * sc);
    }
    /* lz_step on column ka + 2 (now the updated x) as y, b1 = column ka + 1
     * as x, b0 as z: the sums as kron_lz leaves them in backend memory */
    if (be->lz_step) {
        if (ka == 1) check_lz_step(be, n, ld, ka, 0, V, hV, &s); /* no selected column */
        check_lz_step(be, n, ld, ka, ka, V, hV, &s);
    }
    be->vec_free(be, V);
    free(hV);
    free(hx);
}

static void check_backend(pl_backend *be)
{
    TU_CHECK(be->sel_gram && be->sel_update && be->lz_step);
    if (!be->sel_gram || !be->sel_update) return;
    const size_t ns[] = {1, 7, 1000, 20001};
    for (size_t a = 0; a < sizeof ns / sizeof ns[0]; a++)
        for (size_t pad = 0; pad < 2; pad++)
            for (int ka = 1; ka <= PL_SEL_KMAX; ka++) check_one(be, ns[a], ns[a] + pad, ka, 1000 * a + 10 * pad + ka);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    if (tb_each_backend("test_sel_ops", check_backend) == 77) {
        MPI_Finalize();
        return 77;
    }
    printf("test_sel_ops: worst error %.2e of the scale (tolerance %.0e)\n", g_worst, TOL);
    MPI_Finalize();
    return tu_result("test_sel_ops");
}
