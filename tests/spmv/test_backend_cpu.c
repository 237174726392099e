/* test_backend_cpu.c — the CPU backend's vector and dense operations against
 * plain loops (n crosses the OpenMP threshold and the lengths are odd), the
 * copy counters, and backend selection (cpu, auto, cuda without a GPU). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pl_build.h"
#include "pl_error.h"
#include "spmv.h"
#include "spmv_testmat.h"
#include "testutil.h"

static double maxdiff(size_t n, const double *a, const double *b)
{
    double m = 0.0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs(a[i] - b[i]);
        if (!(d <= m)) m = d;
    }
    return m;
}

static void check_ops(pl_backend *be, size_t n)
{
    uint64_t s = 17 + n;
    const int k = 5, m = 3;
    double *hx = malloc((n + 1) * sizeof *hx), *hy = malloc((n + 1) * sizeof *hy), *r = malloc((n + 1) * sizeof *r);
    double *hV = malloc((n * k + 1) * sizeof *hV), *hW = malloc((n * m + 1) * sizeof *hW);
    for (size_t i = 0; i < n; i++) hx[i] = tm_unif(&s) - 0.5, hy[i] = tm_unif(&s) - 0.5;
    for (size_t i = 0; i < n * k; i++) hV[i] = tm_unif(&s) - 0.5;
    double *x, *y, *V, *W;
    TU_OK(be->vec_alloc(be, n, &x));
    TU_OK(be->vec_alloc(be, n, &y));
    TU_OK(be->vec_alloc(be, n * k, &V));
    TU_OK(be->vec_alloc(be, n * m, &W));
    TU_CHECK(((uintptr_t)x & 63) == 0 && ((uintptr_t)V & 63) == 0);
    double h2d = be->bytes_h2d, d2h = be->bytes_d2h;
    TU_OK(be->upload(be, x, hx, n));
    TU_OK(be->upload(be, y, hy, n));
    TU_OK(be->upload(be, V, hV, n * k));
    TU_CHECK(be->bytes_h2d - h2d == (double)(n * (2 + k) * sizeof(double)));
    TU_OK(be->download(be, r, x, n));
    TU_CHECK(be->bytes_d2h - d2h == (double)(n * sizeof(double)));
    TU_CHECK(maxdiff(n, r, hx) == 0.0);

    /* dot */
    double d = 0.0, dr = 0.0;
    for (size_t i = 0; i < n; i++) dr += hx[i] * hy[i];
    TU_OK(be->dot(be, n, x, y, &d));
    TU_CLOSE(d, dr, 1e-12);
    /* axpy, scal, copy, set */
    TU_OK(be->axpy(be, n, 0.75, x, y));
    for (size_t i = 0; i < n; i++) hy[i] += 0.75 * hx[i];
    TU_CHECK(maxdiff(n, y, hy) <= 1e-15);
    TU_OK(be->scal(be, n, -2.0, y));
    for (size_t i = 0; i < n; i++) hy[i] *= -2.0;
    TU_CHECK(maxdiff(n, y, hy) == 0.0);
    TU_OK(be->copy(be, n, y, x));
    TU_CHECK(maxdiff(n, x, hy) == 0.0);
    TU_OK(be->set(be, n, 3.5, x));
    for (size_t i = 0; i < n; i++) hx[i] = 3.5;
    TU_CHECK(maxdiff(n, x, hx) == 0.0);

    /* gemv_t: h = V^T y ; gemv_n: y = 0.5 y - 2 V h2 */
    double h[5], hr[5] = {0};
    for (int j = 0; j < k; j++)
        for (size_t i = 0; i < n; i++) hr[j] += hV[j * n + i] * hy[i];
    TU_OK(be->gemv_t(be, n, k, V, n, y, h));
    for (int j = 0; j < k; j++) TU_CLOSE(h[j], hr[j], 1e-12);
    double h2[5] = {1.0, -0.5, 0.25, 2.0, 0.0};
    TU_OK(be->gemv_n(be, n, k, -2.0, V, n, h2, 0.5, y));
    for (size_t i = 0; i < n; i++) {
        double t = 0.0;
        for (int j = 0; j < k; j++) t += hV[j * n + i] * h2[j];
        hy[i] = 0.5 * hy[i] - 2.0 * t;
    }
    TU_CHECK(maxdiff(n, y, hy) <= 1e-13);
    /* gemm: W = V Y, Y 5 x 3 with ldy = 6 */
    double Y[18];
    for (int i = 0; i < 18; i++) Y[i] = 0.1 * i - 0.7;
    TU_OK(be->gemm(be, n, k, m, V, n, Y, 6, W, n));
    for (int c = 0; c < m; c++)
        for (size_t i = 0; i < n; i++) {
            double t = 0.0;
            for (int j = 0; j < k; j++) t += hV[j * n + i] * Y[c * 6 + j];
            hW[c * n + i] = t;
        }
    TU_CHECK(maxdiff(n * m, W, hW) <= 1e-13);
    /* gemm_t: C = V^T W (5 x 3) and the Gram matrix V^T V, against sums here */
    {
        double C[25], Cr[25];
        TU_OK(be->gemm_t(be, n, k, m, V, n, W, n, C));
        for (int c = 0; c < m; c++)
            for (int j = 0; j < k; j++) {
                double t = 0.0;
                for (size_t i = 0; i < n; i++) t += hV[j * n + i] * hW[c * n + i];
                Cr[c * k + j] = t;
            }
        for (int q = 0; q < k * m; q++) TU_CLOSE(C[q], Cr[q], 1e-12 * (1.0 + fabs(Cr[q])));
        TU_OK(be->gemm_t(be, n, k, k, V, n, V, n, C));
        for (int c = 0; c < k; c++)
            for (int j = 0; j < k; j++) {
                double t = 0.0;
                for (size_t i = 0; i < n; i++) t += hV[j * n + i] * hV[c * n + i];
                TU_CLOSE(C[c * k + j], t, 1e-12 * (1.0 + fabs(t)));
            }
        TU_OK(be->gemm_t(be, 0, k, m, V, 1, W, 1, C)); /* no rows: zeros */
        for (int q = 0; q < k * m; q++) TU_CHECK(C[q] == 0.0);
    }
    /* gather */
    int32_t *hidx = malloc((n + 1) * sizeof *hidx), *idx = NULL;
    for (size_t i = 0; i < n; i++) hidx[i] = (int32_t)((i * 7919) % n);
    TU_OK(be->idx_create(be, hidx, n, &idx));
    TU_OK(be->gather(be, n, idx, y, x));
    int okg = 1;
    for (size_t i = 0; i < n; i++) okg &= x[i] == hy[hidx[i]];
    TU_CHECK(okg);
    TU_OK(be->sync(be));
    be->idx_destroy(be, idx);
    free(hidx);
    be->vec_free(be, x);
    be->vec_free(be, y);
    be->vec_free(be, V);
    be->vec_free(be, W);
    free(hx);
    free(hy);
    free(r);
    free(hV);
    free(hW);
}

int main(void)
{
    pl_backend *be = NULL;
    TU_OK(pl_backend_create(PL_BACKEND_CPU, 3, &be));
    TU_CHECK(be && strcmp(be->name, "cpu") == 0);
    const size_t ns[] = {0, 1, 37, 100003};
    for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++) check_ops(be, ns[i]);
    pl_backend_destroy(&be);
    TU_CHECK(be == NULL);
    pl_backend_destroy(&be); /* NULL is fine */

    int nd = pl_cuda_device_count();
    TU_CHECK(nd >= 0);
    if (!PJDS_HAVE_CUDA) TU_CHECK(nd == 0);
    TU_OK(pl_backend_create(PL_BACKEND_AUTO, 0, &be));
    TU_CHECK(be && strcmp(be->name, nd > 0 ? "cuda" : "cpu") == 0);
    pl_backend_destroy(&be);
    if (nd == 0) {
        TU_CHECK(pl_backend_create(PL_BACKEND_CUDA, 0, &be) == PL_ERR_INPUT && be == NULL);
        TU_CHECK(strstr(pl_error_message(), "cuda") != NULL);
        pl_error_clear();
        if (!PJDS_HAVE_CUDA) {
            TU_CHECK(pl_backend_cuda_create(0, &be) == PL_ERR_NOTSUP);
            TU_CHECK(strstr(pl_error_message(), "built without CUDA") != NULL);
            pl_error_clear();
        }
    }
    TU_CHECK(pl_backend_create(99, 0, &be) == PL_ERR_ARG);
    pl_error_clear();
    return tu_result("test_backend_cpu");
}
