/* test_restart_step.c — the backend slot restart_step (spmv.h: a thick
 * restart's basis update, the restart vector, and the next cycle's first
 * Gram-Schmidt pass in one pass over V) against plain long double loops on
 * the host, and against the slots it replaces on the same backend.
 * Reference: V_new[:, off+q] = sum_p V[:, off+p] Y[p, q] (q < kk), then
 * x' = x - V_new[:, 0:k+1] h (k = off + kk; V_new[:, k] = v), and the k + 2
 * sums V_new^T x', x'^T x', all in long double; the error of each entry is
 * measured against its scale sum |terms| (any order's rounding is bounded
 * by eps times it), tolerance 1e-13.  Columns beyond k + 1 are left alone
 * by neither path's contract and are not compared.
 * Composed (the slots it replaces, same backend): basis_update, two copies,
 * cgs_step(k + 1): the kept columns must be the same bits as basis_update's
 * (each row's products summed in the same order), and the corrected
 * product and the sums, on the cpu backend, the same bits as cgs_step's
 * (same tiles, same per-thread order).
 * Coverage: off = 0, 1, 4, 5, 9, 16, 17 (locked columns), kk = 1..17 with
 * sz = 2 kk + 2 and the edges sz = kk + 2 and sz = 48, 50; n = 1, 7, 1000,
 * 20001 (the cpu backend's OpenMP threshold), ld = n and n + 1 (one or two
 * rows a thread in the cuda kernel); off 17 and sz 50 are beyond the cuda
 * kernel's sizes, where its slot composes the slots it replaces.  On the
 * cuda backend the corrected product and the sums are checked against the
 * reference only (another grid than cgs_step's).  Backends: cpu always;
 * cuda as well when PJDS_TEST_BACKEND=cuda (exit 77 without a device).
 * PJDS_TEST_QUICK=1 runs a subset (under compute-sanitizer). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pl_error.h"
#include "spmv.h"
#include "spmv_testmat.h"
#include "testutil.h"
#include "backend_each.h"

#define TOL 1e-13

static double g_worst = 0.0;
static int g_cases = 0;

static void expect_close(const char *what, double got, long double ref, long double scale)
{
    tu_close_scaled(what, got, ref, scale, TOL, &g_worst);
}

/* One case: V has off + sz + 2 columns (ld), random; Y sz x kk; h k + 1. */
static void check_one(pl_backend *be, size_t n, size_t ld, int off, int sz, int kk, uint64_t seed)
{
    const int k = off + kk, nc = off + sz + 2;
    const size_t tot = ld * (size_t)nc;
    uint64_t s = seed * 0x9E3779B97F4A7C15ull + 12345;
    double *hV = malloc(tot * sizeof *hV), *got = malloc(tot * sizeof *got), *cmp = malloc(tot * sizeof *cmp);
    double *Y = malloc((size_t)sz * kk * sizeof *Y), h[64], out[66], outc[66];
    long double *nv = malloc((size_t)(k + 1) * n * sizeof *nv), *sv = malloc((size_t)(k + 1) * n * sizeof *sv);
    long double *x = malloc(n * sizeof *x), *xs = malloc(n * sizeof *xs);
    double *V = NULL;
    if (!hV || !got || !cmp || !Y || !nv || !sv || !x || !xs) {
        TU_CHECK(0);
        goto out;
    }
    for (size_t i = 0; i < tot; i++) hV[i] = tm_unif(&s) - 0.5;
    for (int i = 0; i < sz * kk; i++) Y[i] = tm_unif(&s) - 0.5;
    for (int i = 0; i <= k; i++) h[i] = 0.5 * (tm_unif(&s) - 0.5);
    /* the reference: new columns 0..k (value, scale), then x' */
    for (size_t i = 0; i < n; i++) {
        for (int j = 0; j < off; j++) nv[(size_t)j * n + i] = hV[(size_t)j * ld + i], sv[(size_t)j * n + i] = fabs(hV[(size_t)j * ld + i]);
        for (int q = 0; q < kk; q++) {
            long double a = 0, sc = 0;
            for (int p = 0; p < sz; p++) {
                long double t = (long double)hV[(size_t)(off + p) * ld + i] * Y[(size_t)q * sz + p];
                a += t;
                sc += fabsl(t);
            }
            nv[(size_t)(off + q) * n + i] = a;
            sv[(size_t)(off + q) * n + i] = sc;
        }
        nv[(size_t)k * n + i] = hV[(size_t)(off + sz) * ld + i];
        sv[(size_t)k * n + i] = fabs(hV[(size_t)(off + sz) * ld + i]);
        long double t = 0, sc = fabsl((long double)hV[(size_t)(off + sz + 1) * ld + i]);
        for (int j = 0; j <= k; j++) {
            t += nv[(size_t)j * n + i] * h[j];
            sc += sv[(size_t)j * n + i] * fabs(h[j]);
        }
        x[i] = hV[(size_t)(off + sz + 1) * ld + i] - t;
        xs[i] = sc;
    }
    TU_OK(be->vec_alloc(be, tot, &V));
    if (!V) goto out;
    TU_OK(be->upload(be, V, hV, tot));
    for (int i = 0; i < 66; i++) out[i] = outc[i] = -7.0;
    TU_OK(be->restart_step(be, n, off, sz, kk, V, ld, Y, sz, h, out));
    TU_OK(be->download(be, got, V, tot));
    g_cases++;
    char tag[200];
    snprintf(tag, sizeof tag, "[%s] n=%zu ld=%zu off=%d sz=%d kk=%d", be->name, n, ld, off, sz, kk);
    for (int j = 0; j <= k; j++)
        for (size_t i = 0; i < n; i++) {
            char w[240];
            snprintf(w, sizeof w, "%s column %d row %zu", tag, j, i);
            expect_close(w, got[(size_t)j * ld + i], nv[(size_t)j * n + i], sv[(size_t)j * n + i]);
        }
    for (size_t i = 0; i < n; i++) {
        char w[240];
        snprintf(w, sizeof w, "%s x' row %zu", tag, i);
        expect_close(w, got[(size_t)(k + 1) * ld + i], x[i], xs[i]);
    }
    for (int j = 0; j <= k + 1; j++) { /* the sums, against the reference columns */
        long double a = 0, sc = 0;
        for (size_t i = 0; i < n; i++) {
            long double c = j <= k ? nv[(size_t)j * n + i] : x[i];
            a += c * x[i];
            sc += (j <= k ? sv[(size_t)j * n + i] : xs[i]) * xs[i];
        }
        char w[240];
        snprintf(w, sizeof w, "%s sum %d", tag, j);
        expect_close(w, out[j], a, sc);
    }
    TU_CHECK_MSG(out[k + 2] == -7.0, "%s: wrote beyond its k + 2 sums", tag);
    /* the composed slots on the same backend */
    TU_OK(be->upload(be, V, hV, tot));
    TU_OK(be->basis_update(be, n, sz, kk, V + (size_t)off * ld, ld, Y, sz));
    TU_OK(be->copy(be, n, V + (size_t)(off + sz) * ld, V + (size_t)k * ld));
    TU_OK(be->copy(be, n, V + (size_t)(off + sz + 1) * ld, V + (size_t)(k + 1) * ld));
    TU_OK(be->cgs_step(be, n, k + 1, V, ld, V + (size_t)(k + 1) * ld, h, outc));
    TU_OK(be->download(be, cmp, V, tot));
    for (int j = 0; j < k; j++)
        TU_CHECK_MSG(!memcmp(got + (size_t)j * ld, cmp + (size_t)j * ld, n * sizeof *got),
                     "%s: column %d differs from basis_update's bits", tag, j);
    if (!strcmp(be->name, "cpu")) {
        TU_CHECK_MSG(!memcmp(got + (size_t)(k + 1) * ld, cmp + (size_t)(k + 1) * ld, n * sizeof *got),
                     "%s: x' differs from cgs_step's bits", tag);
        TU_CHECK_MSG(!memcmp(out, outc, (size_t)(k + 2) * sizeof *out), "%s: sums differ from cgs_step's bits", tag);
    }
out:
    if (V) be->vec_free(be, V);
    free(hV);
    free(got);
    free(cmp);
    free(Y);
    free(nv);
    free(sv);
    free(x);
    free(xs);
}

static void check_backend(pl_backend *be)
{
    TU_CHECK_MSG(be->restart_step != NULL, "backend %s has no restart_step", be->name);
    if (!be->restart_step) return;
    const size_t ns[] = {1, 7, 1000, 20001};
    const int offs[] = {0, 1, 4, 5, 9, 16};
    /* PJDS_TEST_QUICK=1 (compute-sanitizer): n = 7 and 1000, every tier of
     * locked columns, kk = 1, 2, 8, 9, 16 */
    const char *q = getenv("PJDS_TEST_QUICK");
    const int quick = q && *q && strcmp(q, "0") != 0;
    for (size_t a = 0; a < sizeof ns / sizeof ns[0]; a++)
        for (size_t pad = 0; pad < 2; pad++)
            for (size_t o = 0; o < sizeof offs / sizeof offs[0]; o++)
                for (int kk = 1; kk <= 16; kk++) {
                    if (ns[a] > 1000 && kk % 5 != 1 && kk != 16) continue; /* the large n: a spread */
                    if (quick && (ns[a] == 1 || ns[a] > 1000 || (kk > 2 && kk != 8 && kk != 9 && kk != 16))) continue;
                    const uint64_t sd = 100000 * a + 10000 * pad + 100 * o + kk;
                    check_one(be, ns[a], ns[a] + pad, offs[o], 2 * kk + 2, kk, sd);
                    if (kk == 1 || kk == 8 || kk == 16) {
                        check_one(be, ns[a], ns[a] + pad, offs[o], kk + 2, kk, sd + 7);
                        check_one(be, ns[a], ns[a] + pad, offs[o], 48, kk, sd + 9);
                    }
                }
    check_one(be, 1000, 1000, 17, 20, 8, 4242);
    check_one(be, 1000, 1000, 0, 50, 17, 4243);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    if (tb_each_backend("test_restart_step", check_backend) == 77) {
        MPI_Finalize();
        return 77;
    }
    printf("test_restart_step: %d cases, worst error %.2e of the scale (tolerance %.0e)\n", g_cases, g_worst, TOL);
    MPI_Finalize();
    return tu_result("test_restart_step");
}
