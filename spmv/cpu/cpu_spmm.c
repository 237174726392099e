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

/* rows of chunks [c0, c1); RR > 0: R fixed at compile time (the inner loop
 * unrolls and vectorises), RR = 0: any R */
#define SPMM_BODY(RR)                                                                                           \
    const int32_t C = p->C, n = p->nrows;                                                                       \
    const int Rv = (RR) > 0 ? (RR) : R;                                                                         \
    double s[PL_SPMM_RMAX];                                                                                     \
    for (int32_t c = c0; c < c1; c++) {                                                                         \
        const int32_t r0 = c * C, rn = n - r0 < C ? n - r0 : C;                                                 \
        const int32_t *restrict col = p->col + p->chunk_start[c];                                               \
        const double *restrict val = p->val + p->chunk_start[c];                                                \
        for (int32_t r = 0; r < rn; r++) {                                                                      \
            for (int k = 0; k < Rv; k++) s[k] = 0.0;                                                            \
            const int32_t l = p->row_len[r0 + r];                                                               \
            for (int32_t j = 0; j < l; j++) {                                                                   \
                const double v = val[(int64_t)j * C + r];                                                       \
                const double *restrict xr = X + (int64_t)col[(int64_t)j * C + r] * Rv;                          \
                for (int k = 0; k < Rv; k++) s[k] += v * xr[k];                                                 \
            }                                                                                                   \
            double *restrict yr = Y + (int64_t)(p->row_map ? p->row_map[r0 + r] : r0 + r) * Rv;                 \
            if (p->row_map)                                                                                     \
                for (int k = 0; k < Rv; k++) yr[k] += s[k];                                                     \
            else                                                                                                \
                for (int k = 0; k < Rv; k++) yr[k] = s[k];                                                      \
        }                                                                                                       \
    }

#define SPMM_FIXED(RR)                                                                                          \
    static void spmm_##RR(const pjds *p, int32_t c0, int32_t c1, int R, const double *restrict X,               \
                          double *restrict Y)                                                                   \
    {                                                                                                           \
        (void)R;                                                                                                \
        SPMM_BODY(RR)                                                                                           \
    }
SPMM_FIXED(2)
SPMM_FIXED(4)
SPMM_FIXED(8)
SPMM_FIXED(16)
SPMM_FIXED(32)
static void spmm_any(const pjds *p, int32_t c0, int32_t c1, int R, const double *restrict X, double *restrict Y)
{
    SPMM_BODY(0)
}

typedef void (*spmm_fn)(const pjds *, int32_t, int32_t, int, const double *restrict, double *restrict);

static spmm_fn spmm_pick(int R)
{
    switch (R) {
    case 2: return spmm_2;
    case 4: return spmm_4;
    case 8: return spmm_8;
    case 16: return spmm_16;
    case 32: return spmm_32;
    default: return spmm_any;
    }
}

int cpu_spmm_mat(pl_backend *be, const pjds *p, int nparts, const int32_t *part, int R, const double *X, double *Y)
{
    (void)be;
    PL_CHECK(R >= 1 && R <= PL_SPMM_RMAX, PL_ERR_ARG, "spmm: R = %d outside 1..%d", R, PL_SPMM_RMAX);
    if (p->nrows == 0) return PL_OK;
    const spmm_fn f = spmm_pick(R);
    if (nparts == 1 || p->nent < 4096) {
        f(p, 0, p->nchunks, R, X, Y);
        return PL_OK;
    }
#pragma omp parallel num_threads(nparts)
    {
        const int t = omp_get_thread_num(), nt = omp_get_num_threads();
        for (int k = t; k < nparts; k += nt) f(p, part[k], part[k + 1], R, X, Y);
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

int cpu_spmm_aug_mat(pl_backend *be, const pjds *p, int R, double alpha, double gamma, double beta, const double *X,
                     double *Y, double *h_dots)
{
    (void)be;
    PL_CHECK(R >= 1 && R <= PL_SPMM_RMAX && !p->row_map, PL_ERR_ARG, "spmm_aug: bad arguments");
    double acc[2 * PL_SPMM_RMAX] = {0};
    const int32_t C = p->C, n = p->nrows;
#pragma omp parallel if (p->nent > 4096)
    {
        double loc[2 * PL_SPMM_RMAX] = {0}, s[PL_SPMM_RMAX];
#pragma omp for schedule(static)
        for (int32_t c = 0; c < p->nchunks; c++) {
            const int32_t r0 = c * C, rn = n - r0 < C ? n - r0 : C;
            const int32_t *restrict col = p->col + p->chunk_start[c];
            const double *restrict val = p->val + p->chunk_start[c];
            for (int32_t r = 0; r < rn; r++) {
                for (int k = 0; k < R; k++) s[k] = 0.0;
                const int32_t l = p->row_len[r0 + r];
                for (int32_t j = 0; j < l; j++) {
                    const double v = val[(int64_t)j * C + r];
                    const double *restrict xr = X + (int64_t)col[(int64_t)j * C + r] * R;
                    for (int k = 0; k < R; k++) s[k] += v * xr[k];
                }
                const double *restrict xo = X + (int64_t)(r0 + r) * R;
                double *restrict yr = Y + (int64_t)(r0 + r) * R;
                for (int k = 0; k < R; k++) {
                    const double y = alpha * s[k] + gamma * xo[k] + beta * yr[k];
                    yr[k] = y;
                    loc[k] += xo[k] * xo[k];
                    loc[R + k] += y * xo[k];
                }
            }
        }
#pragma omp critical
        for (int k = 0; k < 2 * R; k++) acc[k] += loc[k];
    }
    memcpy(h_dots, acc, 2 * (size_t)R * sizeof *h_dots);
    return PL_OK;
}
