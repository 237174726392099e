/* test_pjds.c — pJDS format against a plain CSR reference.
 *
 * For random matrices (random row lengths incl. empty rows; n = 0, 1, 33,
 * 1000) and every chunk height C in {1, 4, 7, 32} and sort window sigma in
 * {1, 7, 64, all}: the sort permutation is a permutation, sorted descending
 * and stable inside each window; the layout invariants hold exactly (entry j
 * of row r at chunk_start[r/C] + j*C + r%C equals the CSR entry, padding has
 * value 0 and a valid column, widths are chunk maxima); for a full sort the
 * stored entries equal pjds_stats' count (computed from the length
 * histogram alone) and padding <= C * max row length; the reference and the
 * CPU backend SpMV (plain and row_map variants) equal the CSR product. */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "pl_error.h"
#include "spmv.h"
#include "spmv_impl.h"
#include "spmv_testmat.h"
#include "testutil.h"

static void check_one(const tm_csr *a, int C, int64_t sigma, pl_backend *be, uint64_t seed)
{
    int32_t n = (int32_t)a->n;
    int32_t *len = malloc((size_t)(n + 1) * sizeof *len), *perm = malloc((size_t)(n + 1) * sizeof *perm);
    int32_t *lcol = malloc((size_t)(a->nnz + 1) * sizeof *lcol);
    int32_t lmax = 0;
    for (int32_t i = 0; i < n; i++) {
        len[i] = (int32_t)(a->ptr[i + 1] - a->ptr[i]);
        if (len[i] > lmax) lmax = len[i];
    }
    for (int64_t e = 0; e < a->nnz; e++) lcol[e] = (int32_t)a->col[e];
    pjds_sort_perm(n, len, sigma, perm);

    /* permutation, windows sorted descending, stable */
    int64_t w = (sigma <= 0 || sigma >= n) ? n : sigma;
    char *seen = calloc((size_t)n + 1, 1);
    int okperm = 1;
    for (int32_t i = 0; i < n; i++) {
        if (perm[i] < 0 || perm[i] >= n || seen[perm[i]]) okperm = 0;
        else seen[perm[i]] = 1;
        if (okperm && perm[i] / w != i / w) okperm = 0; /* stays in its window */
        if (okperm && i % w != 0) {
            int32_t p = perm[i - 1], q = perm[i];
            if (len[p] < len[q] || (len[p] == len[q] && p > q)) okperm = 0;
        }
    }
    TU_CHECK_MSG(okperm, "sort perm n=%d sigma=%lld", n, (long long)sigma);
    free(seen);
    if (!okperm) goto out;

    pjds p;
    int rc = pjds_create(n, n, a->ptr, lcol, a->val, perm, C, sigma, &p);
    TU_OK(rc);
    if (rc) goto out;
    TU_CHECK(p.nrows == n && p.ncols == n && p.C == C && p.nchunks == (n + C - 1) / C && p.row_map == NULL);
    TU_CHECK(p.sort_window == (w > 0 ? w : 1));
    TU_CHECK(p.nnz == a->nnz && p.chunk_start[0] == 0 && p.chunk_start[p.nchunks] == p.nent);
    int lay = 1;
    for (int32_t c = 0; c < p.nchunks; c++) {
        int32_t cw = 0;
        for (int r = 0; r < C; r++) {
            int32_t s = c * C + r;
            int32_t l = s < n ? len[perm[s]] : 0;
            if (p.row_len[s] != l) lay = 0;
            if (l > cw) cw = l;
        }
        if (p.chunk_width[c] != cw || p.chunk_start[c + 1] - p.chunk_start[c] != (int64_t)C * cw) lay = 0;
        for (int r = 0; r < C; r++) {
            int32_t s = c * C + r;
            for (int32_t j = 0; j < cw; j++) {
                int64_t e = p.chunk_start[c] + (int64_t)j * C + r;
                if (e != pjds_entry(&p, s, j)) lay = 0;
                if (j < p.row_len[s]) {
                    int64_t ce = a->ptr[perm[s]] + j;
                    if (p.col[e] != lcol[ce] || p.val[e] != a->val[ce]) lay = 0;
                } else if (p.val[e] != 0.0 || p.col[e] < 0 || p.col[e] >= n) {
                    lay = 0;
                }
            }
        }
    }
    TU_CHECK_MSG(lay, "layout n=%d C=%d sigma=%lld", n, C, (long long)sigma);
    if (sigma <= 0 || sigma >= n) {
        pjds_stats st;
        TU_OK(pjds_stats_from_lengths(n, len, C, MPI_COMM_SELF, &st));
        TU_CHECK_MSG(st.pjds_entries == p.nent, "stats %lld vs nent %lld", (long long)st.pjds_entries,
                     (long long)p.nent);
        TU_CHECK(p.nent - p.nnz <= (int64_t)C * lmax);
    }
    if (sigma == 1) { /* no sort: sliced ELLPACK in original order */
        for (int32_t i = 0; i < n; i++) okperm &= perm[i] == i;
        TU_CHECK(okperm);
    }

    /* SpMV: reference and CPU backend vs CSR */
    double *x = malloc((size_t)(n + 1) * sizeof *x), *yr = malloc((size_t)(n + 1) * sizeof *yr),
           *ay = malloc((size_t)(n + 1) * sizeof *ay), *y1 = malloc((size_t)(n + 1) * sizeof *y1), *y2 = NULL;
    uint64_t s = seed;
    for (int32_t i = 0; i < n; i++) x[i] = 2.0 * tm_unif(&s) - 1.0;
    tm_spmv(a, x, yr, ay);
    pjds_spmv_ref(&p, x, y1);
    double err = 0.0;
    for (int32_t i = 0; i < n; i++) err = fmax(err, fabs(y1[i] - yr[perm[i]]) / fmax(ay[perm[i]], 1e-300));
    TU_CHECK_MSG(err <= 1e-14, "ref spmv rel err %g (n=%d C=%d sigma=%lld)", err, n, C, (long long)sigma);
    void *m = NULL;
    TU_OK(be->mat_create(be, &p, &m));
    TU_OK(be->vec_alloc(be, (size_t)n, &y2));
    for (int32_t i = 0; i < n; i++) y2[i] = NAN;
    TU_OK(be->spmv(be, m, x, y2));
    err = 0.0;
    for (int32_t i = 0; i < n; i++) {
        double d = fabs(y2[i] - yr[perm[i]]) / fmax(ay[perm[i]], 1e-300);
        err = d > err || isnan(d) ? d : err;
    }
    TU_CHECK_MSG(err <= 1e-14, "cpu spmv rel err %g (n=%d C=%d sigma=%lld)", err, n, C, (long long)sigma);
    /* row_map variant: row i adds into y[2 i + 1] of a vector of 2n + 1 */
    be->mat_destroy(be, m);
    double *y3 = malloc((size_t)(2 * n + 1) * sizeof *y3);
    for (int32_t i = 0; i < 2 * n + 1; i++) y3[i] = 1.0;
    p.row_map = malloc((size_t)(n + 1) * sizeof *p.row_map);
    for (int32_t i = 0; i < n; i++) p.row_map[i] = 2 * i + 1;
    TU_OK(be->mat_create(be, &p, &m));
    TU_OK(be->spmv(be, m, x, y3));
    int okmap = 1;
    for (int32_t i = 0; i < n; i++) {
        if (fabs(y3[2 * i + 1] - 1.0 - yr[perm[i]]) > 1e-14 * fmax(1.0, ay[perm[i]] + 1.0)) okmap = 0;
        if (y3[2 * i] != 1.0) okmap = 0;
    }
    TU_CHECK_MSG(okmap, "row_map spmv n=%d C=%d sigma=%lld", n, C, (long long)sigma);
    be->mat_destroy(be, m);
    be->vec_free(be, y2);
    free(y3);
    free(x);
    free(yr);
    free(ay);
    free(y1);
    pjds_destroy(&p);
out:
    free(len);
    free(perm);
    free(lcol);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    pl_backend *be = NULL;
    TU_OK(pl_backend_cpu_create(&be));
    const int64_t ns[] = {0, 1, 33, 1000, 20000};
    const int Cs[] = {1, 4, 7, 32};
    const int64_t sigmas[] = {1, 7, 64, 0};
    for (size_t a = 0; a < sizeof ns / sizeof ns[0]; a++) {
        tm_csr m;
        tm_random(ns[a], 40, ns[a] > 100 ? 3 : -1, 0, 1234 + (uint64_t)a, &m);
        for (size_t b = 0; b < sizeof Cs / sizeof Cs[0]; b++)
            for (size_t c = 0; c < sizeof sigmas / sizeof sigmas[0]; c++)
                check_one(&m, Cs[b], sigmas[c], be, 99 + a);
        tm_free(&m);
    }
    /* large windows: the parallel counting sort (>= 65536 rows, threads > 1)
     * and its fallback for a wide length range; perm must equal a stable
     * sort by (length desc, index asc) done here with qsort */
    {
        tm_csr m;
        tm_random(200000, 40, 3, 0, 777, &m);
        check_one(&m, 32, 0, be, 5);
        check_one(&m, 32, 70000, be, 6);
        tm_free(&m);
        const int32_t n = 300000;
        int32_t *len = malloc((size_t)n * sizeof *len), *perm = malloc((size_t)n * sizeof *perm);
        int64_t *key = malloc((size_t)n * sizeof *key);
        uint64_t st = 4242;
        const int32_t ranges[] = {1, 31, 5000, 1000000};
        const int64_t sig[] = {0, 65536, 100000, 1000};
        for (int ri = 0; ri < 4; ri++)
            for (int si = 0; si < 4; si++) {
                for (int32_t i = 0; i < n; i++) len[i] = (int32_t)(tm_next(&st) % (uint64_t)ranges[ri]);
                pjds_sort_perm(n, len, sig[si], perm);
                int64_t w = sig[si] ? sig[si] : n;
                int ok = 1;
                for (int64_t a = 0; a < n; a += w) {
                    int64_t b = a + w < n ? a + w : n;
                    /* key: -len in the high bits, index in the low 32: sorting keys = stable order */
                    for (int64_t i = a; i < b; i++) key[i] = ((int64_t)(2000000 - len[i]) << 32) | i;
                    qsort(key + a, (size_t)(b - a), sizeof *key, tm_cmp_i64);
                    for (int64_t i = a; i < b; i++) ok &= perm[i] == (int32_t)(key[i] & 0xffffffff);
                }
                TU_CHECK_MSG(ok, "pjds_sort_perm n=%d range=%d sigma=%lld", n, ranges[ri], (long long)sig[si]);
            }
        free(len);
        free(perm);
        free(key);
    }
    /* errors: bad column, bad C */
    {
        int64_t ptr[3] = {0, 1, 2};
        int32_t col[2] = {0, 5};
        double val[2] = {1, 2};
        pjds p;
        TU_CHECK(pjds_create(2, 2, ptr, col, val, NULL, 4, 0, &p) == PL_ERR_ARG);
        col[1] = 1;
        TU_CHECK(pjds_create(2, 2, ptr, col, val, NULL, 0, 0, &p) == PL_ERR_ARG);
        pl_error_clear();
        TU_OK(pjds_create(2, 2, ptr, col, val, NULL, 4, 0, &p));
        TU_CHECK(p.nent == 4 && p.nnz == 2);
        pjds_destroy(&p);
        pjds_destroy(&p); /* twice is fine */
    }
    pl_backend_destroy(&be);
    TU_CHECK(be == NULL);
    MPI_Finalize();
    return tu_result("test_pjds");
}
