/* test_cuda_pjds_block.c — the CUDA pJDS-b kernels against the host pJDS-b
 * SpMV and a serial CSR SpMV: every kernel variant, b = 1..8, on random
 * block-structured matrices (block sizes 2..8 and none, partial runs,
 * unsorted rows, duplicates) of 0, 1, 7, 33, 1000 and 5003 rows, sort
 * windows 1 and all, chunk heights 32 and 7; relative 2-norm error <= 1e-14.
 * Exit 77 (skipped) without a CUDA device or in a build without CUDA.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blockmat_test.h"
#include "pjds_block.h"
#include "pl_build.h"
#include "cuda/pl_cuda_bench.h"
#include "pl_error.h"
#include "spmv.h"
#include "testutil.h"

#if PJDS_HAVE_CUDA
static double relerr(int32_t n, const double *y, const double *yref, const int32_t *perm)
{
    double num = 0.0, den = 0.0;
    for (int32_t i = 0; i < n; i++) {
        int32_t o = perm ? perm[i] : i;
        double d = y[i] - yref[o];
        num += d * d;
        den += yref[o] * yref[o];
    }
    return den > 0 ? sqrt(num / den) : sqrt(num);
}

static void gpu_case(pl_backend *be, const bm_csr *a, int b, int C, int64_t sigma)
{
    const int32_t n = a->n;
    pjds_block p;
    pl_cuda_pjds_block *d = NULL;
    double *d_x = NULL, *d_y = NULL;
    TU_OK(pjds_block_create(n, a->ptr, a->col, a->val, b, C, sigma, &p));
    double *x = malloc((size_t)(n + 1) * sizeof *x), *xp = malloc((size_t)(n + 1) * sizeof *xp);
    double *y = malloc((size_t)(n + 1) * sizeof *y), *yc = malloc((size_t)(n + 1) * sizeof *yc);
    double *yg = malloc((size_t)(n + 1) * sizeof *yg);
    for (int32_t i = 0; i < n; i++) x[i] = 2.0 * bm_unif() - 1.0;
    for (int32_t i = 0; i < n; i++) xp[i] = x[p.perm[i]];
    bm_spmv(a, x, y);
    pjds_block_spmv(&p, xp, yc);
    TU_OK(pl_cuda_pjds_block_upload(be, &p, &d));
    TU_OK(be->vec_alloc(be, (size_t)n, &d_x));
    TU_OK(be->vec_alloc(be, (size_t)n, &d_y));
    TU_OK(be->upload(be, d_x, xp, (size_t)n));
    for (int v = 0; v < pl_cuda_pjds_block_nvariants() && d; v++) {
        TU_OK(be->set(be, (size_t)n, NAN, d_y));
        TU_OK(pl_cuda_pjds_block_spmv(be, d, v, d_x, d_y));
        TU_OK(be->sync(be));
        TU_OK(be->download(be, yg, d_y, (size_t)n));
        double e1 = relerr(n, yg, yc, NULL), e2 = relerr(n, yg, y, p.perm);
        TU_CHECK_MSG(e1 <= 1e-14 && e2 <= 1e-14, "n %d b %d C %d sigma %lld kernel %s: error %.3e vs CPU pJDS-b, %.3e vs CSR",
                     n, b, C, (long long)sigma, pl_cuda_pjds_block_variant_name(v), e1, e2);
    }
    if (d_x) be->vec_free(be, d_x);
    if (d_y) be->vec_free(be, d_y);
    pl_cuda_pjds_block_free(be, &d);
    pjds_block_destroy(&p);
    free(x);
    free(xp);
    free(y);
    free(yc);
    free(yg);
}

/* Block mode of the backend (solve's path): a pJDS of the matrix, permuted as
 * the operator does (stable sort by length), through be->mat_create and
 * be->spmv: equals the CSR product; block mode is used (more device bytes:
 * the run columns) exactly when every row stores runs of bb columns. */
static void mode_case(pl_backend *be, int32_t n, int bb, double drop, int C, int64_t sigma, uint64_t seed)
{
    bm_csr a;
    bm_make(n, bb, 5, drop, 0, 0, seed, &a);
    int32_t *len = malloc((size_t)(n + 1) * sizeof *len), *perm = malloc((size_t)(n + 1) * sizeof *perm);
    int32_t *iperm = malloc((size_t)(n + 1) * sizeof *iperm), *lcol = malloc((size_t)(a.ptr[n] + 1) * sizeof *lcol);
    double *x = malloc((size_t)(n + 1) * sizeof *x), *xp = malloc((size_t)(n + 1) * sizeof *xp);
    double *y = malloc((size_t)(n + 1) * sizeof *y), *yg = malloc((size_t)(n + 1) * sizeof *yg);
    for (int32_t i = 0; i < n; i++) len[i] = (int32_t)(a.ptr[i + 1] - a.ptr[i]);
    pjds_sort_perm(n, len, sigma, perm);
    for (int32_t i = 0; i < n; i++) iperm[perm[i]] = i;
    for (int64_t e = 0; e < a.ptr[n]; e++) lcol[e] = iperm[a.col[e]];
    pjds p;
    TU_OK(pjds_create(n, n, a.ptr, lcol, a.val, perm, C, sigma, &p));
    for (int32_t i = 0; i < n; i++) x[i] = 2.0 * bm_unif() - 1.0;
    for (int32_t i = 0; i < n; i++) xp[i] = x[perm[i]];
    bm_spmv(&a, x, y);
    double *d_x = NULL, *d_y = NULL;
    TU_OK(be->vec_alloc(be, (size_t)n, &d_x));
    TU_OK(be->vec_alloc(be, (size_t)n, &d_y));
    TU_OK(be->upload(be, d_x, xp, (size_t)n));
    size_t bytes[2] = {0, 0};
    for (int on = 0; on <= 1; on++) {
        void *mat = NULL;
        TU_OK(pl_cuda_set_block_mode(be, on));
        TU_OK(be->mat_create(be, &p, &mat));
        bytes[on] = pl_cuda_mat_bytes(mat);
        TU_OK(be->set(be, (size_t)n, NAN, d_y));
        TU_OK(be->spmv(be, mat, d_x, d_y));
        TU_OK(be->sync(be));
        TU_OK(be->download(be, yg, d_y, (size_t)n));
        double e = relerr(n, yg, y, perm);
        TU_CHECK_MSG(e <= 1e-14, "block mode %d: n %d bb %d drop %g C %d sigma %lld: error %.3e vs CSR", on, n, bb, drop,
                     C, (long long)sigma, e);
        be->mat_destroy(be, mat);
    }
    /* host oracle: some b in 2..8 for which every row's stored entries are runs of b consecutive columns */
    int expect = 0;
    for (int b = 2; b <= PJDS_BLOCK_MAX_B && n > 0 && !expect; b++) {
        int ok = b <= n;
        for (int32_t r = 0; r < n && ok; r++) {
            const int32_t c = r / C, lane = r % C, l = p.row_len[r];
            const int32_t *col = p.col + p.chunk_start[c] + lane;
            if (l % b) ok = 0;
            for (int32_t j = 0; j < l && ok; j += b)
                for (int k = 1; k < b && ok; k++) ok = col[(int64_t)(j + k) * C] == col[(int64_t)j * C] + k;
        }
        for (int32_t c = 0; c < p.nchunks && ok; c++) ok = p.chunk_width[c] % b == 0;
        expect = ok;
    }
    /* dense blocks stay runs when the sort windows do not cut a block row */
    if (bb >= 2 && drop == 0.0 && n > 0 && n % bb == 0 && (sigma <= 0 || sigma >= n || sigma % bb == 0))
        TU_CHECK_MSG(expect, "n %d bb %d sigma %lld: a matrix of dense %d x %d blocks does not store runs", n, bb,
                     (long long)sigma, bb, bb);
    TU_CHECK_MSG((bytes[1] > bytes[0]) == expect, "n %d bb %d drop %g: block mode %s (bytes %zu vs %zu)", n, bb, drop,
                 bytes[1] > bytes[0] ? "used" : "not used", bytes[1], bytes[0]);
    TU_OK(pl_cuda_set_block_mode(be, 1));
    be->vec_free(be, d_x);
    be->vec_free(be, d_y);
    pjds_destroy(&p);
    free(len);
    free(perm);
    free(iperm);
    free(lcol);
    free(x);
    free(xp);
    free(y);
    free(yg);
    bm_free(&a);
}
#endif

int main(void)
{
#if !PJDS_HAVE_CUDA
    TU_SKIP("built without CUDA");
#else
    if (pl_cuda_device_count() == 0) TU_SKIP("no CUDA device");
    pl_backend *be = NULL;
    TU_OK(pl_backend_cuda_create(0, &be));
    if (!be) return tu_result("test_cuda_pjds_block");
    fprintf(stderr, "%d pJDS-b kernel variants\n", pl_cuda_pjds_block_nvariants());
    /* a non-cuda backend is refused */
    {
        pl_backend *cpu = NULL;
        pl_cuda_pjds_block *d = NULL;
        pjds_block p;
        memset(&p, 0, sizeof p);
        TU_OK(pl_backend_cpu_create(&cpu));
        if (cpu) {
            TU_CHECK(pl_cuda_pjds_block_upload(cpu, &p, &d) == PL_ERR_ARG);
            pl_error_clear();
            pl_backend_destroy(&cpu);
        }
    }
    const int32_t ns[] = {0, 1, 7, 33, 1000, 5003};
    const int bbs[] = {0, 2, 3, 4, 5, 6, 7, 8};
    const int Cs[] = {32, 7};
    const int64_t sigmas[] = {1, 0};
    for (size_t in = 0; in < sizeof ns / sizeof *ns; in++)
        for (size_t ib = 0; ib < sizeof bbs / sizeof *bbs; ib++) {
            bm_csr a;
            bm_make(ns[in], bbs[ib], 5, ib % 2 ? 0.05 : 0.0, 1, 1, 999 + in * 17 + ib, &a);
            for (int b = 1; b <= PJDS_BLOCK_MAX_B; b++) {
                if (ns[in] > 0 && b > ns[in]) continue;
                if (bbs[ib] != 0 && b != bbs[ib] && b != 1 && ns[in] < 1000) continue;
                for (size_t ic = 0; ic < sizeof Cs / sizeof *Cs; ic++)
                    for (size_t is = 0; is < sizeof sigmas / sizeof *sigmas; is++) gpu_case(be, &a, b, Cs[ic], sigmas[is]);
            }
            bm_free(&a);
        }
    /* block mode of be->mat_create / be->spmv */
    const int32_t mn[] = {0, 1, 40, 1000, 4998};
    for (size_t in = 0; in < sizeof mn / sizeof *mn; in++)
        for (int bb = 0; bb <= PJDS_BLOCK_MAX_B; bb++)
            for (int dr = 0; dr < 2; dr++) {
                if (bb == 1) continue;
                mode_case(be, mn[in], bb, dr ? 0.05 : 0.0, 32, 0, 77 + (uint64_t)(in * 31 + bb * 7 + dr));
                mode_case(be, mn[in], bb, dr ? 0.05 : 0.0, 32, 64, 78 + (uint64_t)(in * 31 + bb * 7 + dr));
            }
    pl_backend_destroy(&be);
    return tu_result("test_cuda_pjds_block");
#endif
}
