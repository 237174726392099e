/* csr.c — the caller's CSR row block checked and copied into a pl_csr
 * (core/pl_csr.h: columns ascending and unique within a row): square
 * matrix, row blocks that tile [0, N) in rank order, ascending row_ptr,
 * columns inside [0, N), finite values; columns sorted, repeats summed. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "api_impl.h"
#include "api_csr.h"

/* The blocks of the ranks: contiguous, in rank order, covering [0, N).  Collective. */
static int check_tiling(MPI_Comm comm, int64_t N, int64_t row0, int64_t n_local)
{
    int rank = 0, size = 1, rc = PL_OK;
    PL_CHECK(MPI_Comm_rank(comm, &rank) == MPI_SUCCESS && MPI_Comm_size(comm, &size) == MPI_SUCCESS, PL_ERR_MPI,
             "MPI_Comm_rank failed");
    int64_t mine[2] = {row0, n_local}, *all = NULL;
    PL_MALLOC(all, 2 * (size_t)size);
    PL_CHECK_GOTO(MPI_Allgather(mine, 2, MPI_INT64_T, all, 2, MPI_INT64_T, comm) == MPI_SUCCESS, PL_ERR_MPI, out, rc,
                  "MPI_Allgather of the row blocks failed");
    int64_t end = 0;
    for (int r = 0; r < size; r++) {
        PL_CHECK_GOTO(all[2 * r] == end, PL_ERR_INPUT, out, rc,
                      "the row blocks must be contiguous and in rank order: rank %d starts at row %lld, the rows "
                      "before it end at %lld",
                      r, (long long)all[2 * r], (long long)end);
        end += all[2 * r + 1];
    }
    PL_CHECK_GOTO(end == N, PL_ERR_INPUT, out, rc, "the row blocks cover %lld rows of N = %lld", (long long)end,
                  (long long)N);
out:
    free(all);
    return rc;
}

/* The arguments of this rank alone. */
static int check_local(int64_t N, int64_t ncols, int64_t row0, int64_t n, const int64_t *row_ptr, const int64_t *col,
                       const double *val)
{
    PL_CHECK(N == ncols, PL_ERR_INPUT, "the matrix must be square: %lld rows, %lld columns", (long long)N,
             (long long)ncols);
    PL_CHECK(N >= 1, PL_ERR_INPUT, "the matrix has %lld rows (at least 1 needed)", (long long)N);
    PL_CHECK(row0 >= 0 && n >= 0 && row0 <= N - n, PL_ERR_INPUT,
             "the row block [%lld, %lld + %lld) is not inside [0, N = %lld)", (long long)row0, (long long)row0,
             (long long)n, (long long)N);
    PL_CHECK(n < INT32_MAX, PL_ERR_OVERFLOW, "%lld rows on one rank (at most 2^31 - 2)", (long long)n);
    PL_CHECK(row_ptr, PL_ERR_ARG, "row_ptr is NULL");
    for (int64_t i = 0; i < n; i++)
        PL_CHECK(row_ptr[i + 1] >= row_ptr[i], PL_ERR_INPUT, "row_ptr decreases at local row %lld (%lld > %lld)",
                 (long long)i, (long long)row_ptr[i], (long long)row_ptr[i + 1]);
    const int64_t nnz = row_ptr[n] - row_ptr[0];
    PL_CHECK(nnz == 0 || (col && val), PL_ERR_ARG, "col or val is NULL for %lld entries", (long long)nnz);
    for (int64_t i = 0; i < n; i++)
        for (int64_t k = row_ptr[i]; k < row_ptr[i + 1]; k++) {
            PL_CHECK(col[k] >= 0 && col[k] < N, PL_ERR_INPUT, "row %lld: column index %lld outside [0, %lld)",
                     (long long)(row0 + i), (long long)col[k], (long long)N);
            PL_CHECK(isfinite(val[k]), PL_ERR_INPUT, "row %lld, column %lld: the value is not finite",
                     (long long)(row0 + i), (long long)col[k]);
        }
    return PL_OK;
}

/* One row into dst (room for len entries) sorted by column
 * (pl_csr_sort_row: O(len log len)), repeated columns summed; returns its
 * length. */
static int64_t copy_row(int64_t len, const int64_t *col, const double *val, int64_t *dcol, double *dval,
                        pl_csr_pair *tmp)
{
    if (len == 0) return 0;
    memcpy(dcol, col, (size_t)len * sizeof *dcol);
    memcpy(dval, val, (size_t)len * sizeof *dval);
    pl_csr_sort_row(dcol, dval, len, tmp);
    int64_t m = 1;
    for (int64_t k = 1; k < len; k++) {
        if (dcol[k] == dcol[m - 1]) {
            dval[m - 1] += dval[k];
            continue;
        }
        dcol[m] = dcol[k];
        dval[m] = dval[k];
        m++;
    }
    return m;
}

int api_csr_copy(MPI_Comm comm, int64_t N, int64_t ncols, int64_t row0, int64_t n, const int64_t *row_ptr,
                 const int64_t *col, const double *val, pl_csr *out)
{
    memset(out, 0, sizeof *out);
    int rc = check_local(N, ncols, row0, n, row_ptr, col, val);
    PL_CALL(api_agree(comm, rc));
    PL_CALL(api_agree(comm, check_tiling(comm, N, row0, n)));
    const int64_t base = row_ptr[0], nnz = row_ptr[n] - base;
    int64_t maxlen = 0;
    for (int64_t i = 0; i < n; i++)
        if (row_ptr[i + 1] - row_ptr[i] > maxlen) maxlen = row_ptr[i + 1] - row_ptr[i];
    pl_csr_pair *tmp = maxlen > 32 ? malloc((size_t)maxlen * sizeof *tmp) : NULL;
    rc = maxlen > 32 && !tmp ? PL_ERROR(PL_ERR_MEM, "out of host memory for a row of %lld entries", (long long)maxlen)
                             : pl_csr_alloc(out, N, row0, n, nnz);
    if (rc == PL_OK) {
        int64_t fill = 0;
        for (int64_t i = 0; i < n; i++) {
            const int64_t a = row_ptr[i] - base, len = row_ptr[i + 1] - row_ptr[i];
            fill += copy_row(len, col + base + a, val + base + a, out->col + fill, out->val + fill, tmp);
            out->row_ptr[i + 1] = fill;
        }
    }
    free(tmp);
    rc = api_agree(comm, rc);
    if (rc != PL_OK) pl_csr_destroy(out);
    return rc;
}
