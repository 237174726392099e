/* pjds_stats.c — storage statistics of CSR, ELLPACK and pJDS from row
 * lengths alone (the seed paper's Table I).
 *
 * pJDS sorts all rows globally by length, so its padded size depends only on
 * the length histogram: with rows sorted descending, chunk c of C rows has
 * width = length of its first row.  Each rank builds the histogram of its
 * rows (O(max length) memory), one MPI_Allreduce sums it, and every rank
 * walks it.  ELLPACK pads every row to the global maximum, with the row
 * count padded to a multiple of C as in the paper. */
#include <stdlib.h>

#include "pl_error.h"
#include "spmv.h"

int pjds_stats_from_lengths(int64_t n_local, const int32_t *len, int C, MPI_Comm comm, pjds_stats *st)
{
    PL_CHECK(C >= 1, PL_ERR_ARG, "chunk height must be >= 1");
    int32_t lmax = 0;
    for (int64_t i = 0; i < n_local; i++)
        if (len[i] > lmax) lmax = len[i];
    int32_t gmax = 0;
    PL_CHECK(MPI_Allreduce(&lmax, &gmax, 1, MPI_INT32_T, MPI_MAX, comm) == MPI_SUCCESS, PL_ERR_MPI, "MPI_Allreduce failed");
    int64_t *hist = NULL, *ghist = NULL;
    PL_MALLOC(hist, (size_t)gmax + 1);
    PL_MALLOC(ghist, (size_t)gmax + 1);
    for (int32_t l = 0; l <= gmax; l++) hist[l] = 0;
    for (int64_t i = 0; i < n_local; i++) hist[len[i]]++;
    int e = MPI_Allreduce(hist, ghist, gmax + 1, MPI_INT64_T, MPI_SUM, comm);
    free(hist);
    if (e != MPI_SUCCESS) {
        free(ghist);
        return PL_ERROR(PL_ERR_MPI, "MPI_Allreduce of the row-length histogram failed");
    }
    int64_t rows = 0, nnz = 0, lmin = -1;
    for (int32_t l = 0; l <= gmax; l++) {
        rows += ghist[l];
        nnz += ghist[l] * l;
        if (lmin < 0 && ghist[l]) lmin = l;
    }
    /* walk rows in descending length; every C-th row opens a chunk */
    int64_t pjds = 0, seen = 0;
    for (int32_t l = gmax; l >= 0; l--) {
        int64_t cnt = ghist[l];
        if (!cnt) continue;
        /* chunks opened by rows seen .. seen+cnt-1: indices multiple of C */
        int64_t first = (seen + C - 1) / C, last = (seen + cnt - 1) / C; /* chunk ids whose first row is here */
        if (last >= first) pjds += (last - first + 1) * (int64_t)C * l;
        seen += cnt;
    }
    free(ghist);
    int64_t rows_padded = (rows + C - 1) / C * C;
    st->rows = rows;
    st->nnz = nnz;
    st->row_len_min = lmin < 0 ? 0 : lmin;
    st->row_len_max = gmax;
    st->csr_bytes = 12 * nnz + 8 * (rows + 1);
    st->ellpack_entries = rows_padded * (int64_t)gmax;
    st->pjds_entries = pjds;
    st->pjds_reduction_vs_ellpack = st->ellpack_entries ? 1.0 - (double)pjds / (double)st->ellpack_entries : 0.0;
    return PL_OK;
}
