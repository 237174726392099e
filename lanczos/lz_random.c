/* lz_random.c — reproducible random vectors and blocks in backend memory
 * (lz_random.h): the values of lz_random_element (krylov.c, pl_random.h),
 * drawn by the backend where it has rand_block (CUDA: a kernel, the CPU:
 * in place), so that a GPU run neither generates them on the host nor
 * uploads them.  Rows whose global indices are consecutive (a matrix-free
 * operator's on one rank, or an electron split's) pass their first index;
 * others (a permuted pJDS operator's) pass their indices, copied to the
 * backend once as 32-bit integers; above 2^31 - 1 global rows, or without
 * rand_block, the host draws and uploads as before.  The values are the
 * same bits on every path (tests/spmv/test_rand_block.c).
 *
 * Measured before (one H200, 2026-11-29, dos with 8 random vectors of
 * hh7's 22.7 M rows, 256 moments): 0.474 s of the 1.564 s of moments went
 * to drawing and uploading the start blocks on the host. */
#include <stdlib.h>
#include <string.h>

#include "lz_random.h"
#include "pl_error.h"
#include "pl_random.h"

int lz_rand_rows_init(lz_rand_rows *r, pl_backend *be, int64_t n, const int64_t *gi)
{
    memset(r, 0, sizeof *r);
    r->be = be;
    r->n = n;
    r->gi = gi;
    PL_CHECK(n == 0 || gi, PL_ERR_ARG, "lz_rand_rows_init: no global indices");
    int consec = 1, fits = 1;
    for (int64_t i = 0; i < n; i++) {
        consec &= gi[i] == gi[0] + i;
        fits &= gi[i] >= 0 && gi[i] <= INT32_MAX;
    }
    r->consec = consec;
    if (!be->rand_block || consec || !fits || n == 0) return PL_OK;
    int32_t *h = malloc((size_t)n * sizeof *h);
    PL_CHECK(h, PL_ERR_MEM, "out of host memory for %lld row indices", (long long)n);
    for (int64_t i = 0; i < n; i++) h[i] = (int32_t)gi[i];
    const int rc = be->idx_create(be, h, (size_t)n, &r->idx);
    free(h);
    return rc;
}

int lz_rand_block(lz_rand_rows *r, int R, const uint64_t *seeds, double *V)
{
    PL_CHECK(R >= 1 && R <= PL_SPMM_RMAX, PL_ERR_ARG, "lz_rand_block: R = %d outside 1..%d", R, PL_SPMM_RMAX);
    pl_backend *be = r->be;
    if (r->n == 0) return PL_OK;
    if (be->rand_block && (r->consec || r->idx))
        return be->rand_block(be, (size_t)r->n, R, seeds, r->consec ? r->gi[0] : 0, r->consec ? NULL : r->idx, V);
    const size_t ne = (size_t)r->n * (size_t)R;
    if (r->hcap < ne) {
        free(r->h);
        r->h = malloc(ne * sizeof *r->h);
        r->hcap = r->h ? ne : 0;
        PL_CHECK(r->h, PL_ERR_MEM, "out of host memory for %d random vectors of %lld rows", R, (long long)r->n);
    }
    double *h = r->h;
    const int64_t *gi = r->gi;
    uint64_t hs[PL_SPMM_RMAX]; /* the seeds' first round, once per column (pl_random.h) */
    for (int c = 0; c < R; c++) hs[c] = pl_splitmix64(seeds[c]);
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < r->n; i++)
        for (int c = 0; c < R; c++) h[i * R + c] = pl_random_from(hs[c], gi[i]);
    return be->upload(be, V, h, ne);
}

void lz_rand_rows_free(lz_rand_rows *r)
{
    if (r->idx) r->be->idx_destroy(r->be, r->idx);
    free(r->h);
    memset(r, 0, sizeof *r);
}
