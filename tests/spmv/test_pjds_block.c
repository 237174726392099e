/* test_pjds_block.c — blocked pJDS (pJDS-b) on the host:
 * - detection finds b = 2..8 on random block-structured matrices (and the
 *   exact fill ratio when entries are dropped: partial runs), b = 1 on a
 *   matrix without blocks, on an empty one and when the fill is too large;
 * - the layout: perm is a permutation moving whole block rows, run starts
 *   valid (start + b <= n), padding values zero, run counts sorted inside
 *   windows;
 * - the host SpMV equals a serial CSR SpMV to 1e-14 (relative 2-norm) for
 *   every b in 1..8 on matrices of several block sizes and sizes (0, 1, 7,
 *   33, 1000, 5003 rows), sort windows 1, 16 and all, chunk heights 32, 4
 *   and 1, with unsorted rows and duplicate entries.
 */
#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blockmat_test.h"
#include "pjds_block.h"
#include "pl_error.h"
#include "testutil.h"

static double relerr_perm(int32_t n, const double *yp, const int32_t *perm, const double *yref)
{
    double num = 0.0, den = 0.0;
    for (int32_t i = 0; i < n; i++) {
        double d = yp[i] - yref[perm[i]];
        num += d * d;
        den += yref[perm[i]] * yref[perm[i]];
    }
    return den > 0 ? sqrt(num / den) : sqrt(num);
}

static void check_layout(const bm_csr *a, const pjds_block *p)
{
    const int32_t n = a->n, b = p->b;
    char *seen = calloc((size_t)n + 1, 1);
    int ok = 1;
    for (int32_t i = 0; i < n; i++) {
        int32_t o = p->perm[i];
        ok &= o >= 0 && o < n && !seen[o];
        if (o >= 0 && o < n) seen[o] = 1;
    }
    TU_CHECK_MSG(ok, "perm is not a permutation (n %d, b %d)", n, b);
    /* whole block rows move: the rows of block row q stay consecutive, in order */
    ok = 1;
    for (int32_t i = 0; i + 1 < n; i++)
        if (p->perm[i] % b != b - 1 && p->perm[i] + 1 < n) ok &= p->perm[i + 1] == p->perm[i] + 1;
    TU_CHECK_MSG(ok, "perm splits a block row (b %d)", b);
    int64_t runs = 0;
    int64_t nnz = 0;
    for (int32_t c = 0; c < p->nchunks; c++)
        for (int32_t r = 0; r < p->C; r++) {
            int64_t s = (int64_t)c * p->C + r;
            int32_t l = p->row_runs[s];
            runs += l;
            TU_CHECK(l <= p->chunk_width[c]);
            for (int32_t j = 0; j < p->chunk_width[c]; j++) {
                int32_t st = p->rcol[p->run_off[c] + (int64_t)j * p->C + r];
                if (!(st >= 0 && st + b <= n)) {
                    TU_CHECK_MSG(0, "run start %d invalid (n %d, b %d)", st, n, b);
                    goto next;
                }
                for (int k = 0; k < b; k++) {
                    double v = p->val[p->chunk_start[c] + ((int64_t)j * b + k) * p->C + r];
                    if (j >= l && v != 0.0) TU_CHECK_MSG(0, "padding run holds %g", v);
                    nnz += v != 0.0;
                }
            }
        next:;
        }
    TU_CHECK(runs == p->nruns_true);
    TU_CHECK(p->nruns == p->run_off[p->nchunks]);
    TU_CHECK(nnz <= p->nnz);
    free(seen);
}

static void spmv_case(const bm_csr *a, int b, int C, int64_t sigma)
{
    pjds_block p;
    int rc = pjds_block_create(a->n, a->ptr, a->col, a->val, b, C, sigma, &p);
    TU_OK(rc);
    if (rc) return;
    check_layout(a, &p);
    if (C == 32 && sigma == 1) TU_CHECK(p.nruns_true == bm_runs(a, b));
    const int32_t n = a->n;
    double *x = malloc((size_t)(n + 1) * sizeof *x), *xp = malloc((size_t)(n + 1) * sizeof *xp);
    double *y = malloc((size_t)(n + 1) * sizeof *y), *yp = malloc((size_t)(n + 1) * sizeof *yp);
    for (int32_t i = 0; i < n; i++) x[i] = 2.0 * bm_unif() - 1.0;
    for (int32_t i = 0; i < n; i++) xp[i] = x[p.perm[i]];
    bm_spmv(a, x, y);
    for (int32_t i = 0; i < n; i++) yp[i] = NAN;
    pjds_block_spmv(&p, xp, yp);
    double err = relerr_perm(n, yp, p.perm, y);
    TU_CHECK_MSG(err <= 1e-14, "n %d b %d C %d sigma %lld: relative error %.3e", n, b, C, (long long)sigma, err);
    free(x);
    free(xp);
    free(y);
    free(yp);
    pjds_block_destroy(&p);
}

static void detect_case(int32_t n, int bb, double drop, int expect_b)
{
    bm_csr a;
    bm_make(n, bb, 6, drop, 1, 0, 77 + (uint64_t)bb * 1000 + (uint64_t)n, &a);
    int b = -1;
    double fill = -1, fb[PJDS_BLOCK_MAX_B + 1];
    TU_OK(pjds_block_detect(n, n, a.ptr, a.col, 0.05, &b, &fill, fb));
    TU_CHECK_MSG(b == expect_b, "n %d, blocks %d, drop %g: detected b = %d, expected %d", n, bb, drop, b, expect_b);
    int64_t nnz = a.ptr[n];
    for (int k = 2; k <= PJDS_BLOCK_MAX_B && nnz > 0; k++) {
        double f = ((double)bm_runs(&a, k) * k - (double)nnz) / (double)nnz;
        TU_CLOSE(fb[k], f, 1e-12);
        if (k == b) TU_CLOSE(fill, f, 1e-12);
    }
    int64_t runs = 0;
    if (bb > 0) {
        TU_OK(pjds_block_count_runs(n, a.ptr, a.col, bb, &runs));
        TU_CHECK(runs == bm_runs(&a, bb));
    }
    bm_free(&a);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    /* detection: exact blocks (n a multiple of b and not) */
    for (int bb = 2; bb <= 8; bb++) {
        detect_case(bb * 500, bb, 0.0, bb);
        detect_case(bb * 500 + 1, bb, 0.0, bb);
        detect_case(bb * 400, bb, 0.02, bb); /* partial runs: fill about 2 % */
        detect_case(bb * 400, bb, 0.3, 1);   /* too much fill for 5 % */
    }
    detect_case(3000, 0, 0.0, 1); /* no blocks */
    {
        int b = -1;
        double f = -1;
        int64_t ptr[2] = {0, 0};
        int32_t c[1] = {0};
        TU_OK(pjds_block_detect(0, 0, ptr, c, 0.05, &b, &f, NULL));
        TU_CHECK(b == 1 && f == 0.0);
        TU_OK(pjds_block_detect(1, 1, ptr, c, 0.05, &b, &f, NULL)); /* one empty row */
        TU_CHECK(b == 1);
    }
    /* bad arguments */
    {
        pjds_block p;
        int64_t ptr[3] = {0, 1, 2};
        int32_t c[2] = {0, 5};
        double v[2] = {1, 1};
        TU_CHECK(pjds_block_create(2, ptr, c, v, 2, 32, 0, &p) == PL_ERR_ARG); /* column 5 >= n */
        pl_error_clear();
        c[1] = 1;
        TU_CHECK(pjds_block_create(2, ptr, c, v, 3, 32, 0, &p) == PL_ERR_ARG); /* b > n */
        pl_error_clear();
        TU_CHECK(pjds_block_create(2, ptr, c, v, 9, 32, 0, &p) == PL_ERR_ARG); /* b > 8 */
        pl_error_clear();
        pjds_block_destroy(NULL);
        pjds_block_destroy(&(pjds_block){0});
    }
    /* SpMV against CSR */
    const int32_t ns[] = {0, 1, 7, 33, 1000, 5003};
    const int bbs[] = {0, 2, 3, 5, 6, 8};
    const int Cs[] = {32, 4, 1};
    const int64_t sigmas[] = {1, 16, 0};
    for (size_t in = 0; in < sizeof ns / sizeof *ns; in++)
        for (size_t ib = 0; ib < sizeof bbs / sizeof *bbs; ib++) {
            bm_csr a;
            bm_make(ns[in], bbs[ib], 5, ib % 2 ? 0.05 : 0.0, 1, 1, 4242 + in * 31 + ib, &a);
            for (int b = 1; b <= PJDS_BLOCK_MAX_B; b++) {
                if (ns[in] > 0 && b > ns[in]) continue;
                for (size_t ic = 0; ic < sizeof Cs / sizeof *Cs; ic++)
                    for (size_t is = 0; is < sizeof sigmas / sizeof *sigmas; is++)
                        if (ic == 0 || b == bbs[ib] || b == 1) spmv_case(&a, b, Cs[ic], sigmas[is]);
            }
            bm_free(&a);
        }
    int r = tu_result("test_pjds_block");
    MPI_Finalize();
    return r;
}
