/* cpu_spmm.c — SpMMV of the CPU backend (be->spmm, gather_block, bdot;
 * spmv.h): Y = A X for R vectors in row-major blocks.
 *
 * Each row of a pJDS chunk walks its entries once; every entry (value and
 * column) is loaded once and multiplies the R contiguous values of its
 * column's row of X (one cache line holds 8 of them), accumulating into R
 * sums of the row.  Chunks are split over the OpenMP threads by the
 * matrix's partition (the one of spmv).  A remote part (row_map) adds. */
#include <omp.h>
#include <string.h>

#include "cpu_ts.h"
#include "pl_error.h"

static void spmm_chunks(const pjds *p, int32_t c0, int32_t c1, int R, const double *restrict X, double *restrict Y)
{
    const int32_t C = p->C, n = p->nrows;
    double s[PL_SPMM_RMAX];
    for (int32_t c = c0; c < c1; c++) {
        const int32_t r0 = c * C, rn = n - r0 < C ? n - r0 : C;
        const int32_t *restrict col = p->col + p->chunk_start[c];
        const double *restrict val = p->val + p->chunk_start[c];
        for (int32_t r = 0; r < rn; r++) {
            for (int k = 0; k < R; k++) s[k] = 0.0;
            const int32_t l = p->row_len[r0 + r];
            for (int32_t j = 0; j < l; j++) {
                const double v = val[(int64_t)j * C + r];
                const double *restrict xr = X + (int64_t)col[(int64_t)j * C + r] * R;
#pragma omp simd
                for (int k = 0; k < R; k++) s[k] += v * xr[k];
            }
            if (p->row_map) {
                double *restrict yr = Y + (int64_t)p->row_map[r0 + r] * R;
                for (int k = 0; k < R; k++) yr[k] += s[k];
            } else {
                double *restrict yr = Y + (int64_t)(r0 + r) * R;
                for (int k = 0; k < R; k++) yr[k] = s[k];
            }
        }
    }
}

int cpu_spmm_mat(pl_backend *be, const pjds *p, int nparts, const int32_t *part, int R, const double *X, double *Y)
{
    (void)be;
    PL_CHECK(R >= 1 && R <= PL_SPMM_RMAX, PL_ERR_ARG, "spmm: R = %d outside 1..%d", R, PL_SPMM_RMAX);
    if (p->nrows == 0) return PL_OK;
    if (nparts == 1 || p->nent < 4096) {
        spmm_chunks(p, 0, p->nchunks, R, X, Y);
        return PL_OK;
    }
#pragma omp parallel num_threads(nparts)
    {
        const int t = omp_get_thread_num(), nt = omp_get_num_threads();
        for (int k = t; k < nparts; k += nt) spmm_chunks(p, part[k], part[k + 1], R, X, Y);
    }
    return PL_OK;
}

int cpu_gather_block(pl_backend *be, size_t n, int R, const int32_t *idx, const double *X, double *buf)
{
    (void)be;
#pragma omp parallel for schedule(static) if (n * (size_t)R > 65536)
    for (size_t i = 0; i < n; i++) memcpy(buf + i * (size_t)R, X + (size_t)idx[i] * (size_t)R, (size_t)R * sizeof *buf);
    return PL_OK;
}

int cpu_bdot(pl_backend *be, size_t n, int R, const double *X, const double *Y, double *h)
{
    (void)be;
    PL_CHECK(R >= 1 && R <= PL_SPMM_RMAX, PL_ERR_ARG, "bdot: R = %d outside 1..%d", R, PL_SPMM_RMAX);
    double acc[PL_SPMM_RMAX] = {0};
#pragma omp parallel if (n * (size_t)R > 65536)
    {
        double loc[PL_SPMM_RMAX] = {0};
#pragma omp for schedule(static)
        for (size_t i = 0; i < n; i++) {
            const double *x = X + i * (size_t)R, *y = Y + i * (size_t)R;
            for (int k = 0; k < R; k++) loc[k] += x[k] * y[k];
        }
#pragma omp critical
        for (int k = 0; k < R; k++) acc[k] += loc[k];
    }
    memcpy(h, acc, (size_t)R * sizeof *h);
    return PL_OK;
}
