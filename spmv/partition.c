/* partition.c — contiguous row blocks balanced by non-zeros.
 *
 * Method: each rank computes the lengths of an equal share of rows, the
 * exclusive scan of the shares' sums gives each share's global offset, and
 * boundary k is the smallest row r with prefix(r) >= k * nnz / size, found by
 * the rank whose share holds it; one MPI_Allreduce(MIN) combines them.
 * Memory: O(N / size) per rank, never N. */
#include <stdlib.h>

#include "pl_error.h"
#include "spmv.h"

int pl_partition_by_nnz(int64_t N, pl_row_lengths_fn fn, void *arg, MPI_Comm comm, int64_t *bounds)
{
    int rank, size;
    PL_CHECK(MPI_Comm_rank(comm, &rank) == MPI_SUCCESS, PL_ERR_MPI, "MPI_Comm_rank failed");
    PL_CHECK(MPI_Comm_size(comm, &size) == MPI_SUCCESS, PL_ERR_MPI, "MPI_Comm_size failed");
    int64_t a = (int64_t)((__int128)N * rank / size), b = (int64_t)((__int128)N * (rank + 1) / size);
    int32_t *len = NULL;
    PL_MALLOC(len, b - a);
    int rc = fn(arg, a, b, len);
    if (rc) {
        free(len);
        PL_CALL(rc);
    }
    int64_t local = 0, offset = 0, total = 0;
    for (int64_t i = 0; i < b - a; i++) local += len[i];
    int e1 = MPI_Exscan(&local, &offset, 1, MPI_INT64_T, MPI_SUM, comm);
    int e2 = MPI_Allreduce(&local, &total, 1, MPI_INT64_T, MPI_SUM, comm);
    if (rank == 0) offset = 0; /* MPI_Exscan leaves rank 0's result undefined */
    if (e1 != MPI_SUCCESS || e2 != MPI_SUCCESS) {
        free(len);
        return PL_ERROR(PL_ERR_MPI, "MPI scan of row lengths failed");
    }
    int64_t *cand = NULL;
    PL_MALLOC(cand, size + 1);
    for (int k = 0; k <= size; k++) cand[k] = N;
    /* prefix(r) for r in [a, b]: walk once, all targets in increasing order */
    int64_t p = offset, r = a;
    for (int k = 1; k < size; k++) {
        int64_t t = (int64_t)((__int128)total * k / size);
        while (r < b && p < t) p += len[r++ - a];
        if (p >= t) cand[k] = r; /* smallest r in [a, b] with prefix >= t */
    }
    cand[0] = 0;
    free(len);
    int e3 = MPI_Allreduce(cand, bounds, size + 1, MPI_INT64_T, MPI_MIN, comm);
    free(cand);
    PL_CHECK(e3 == MPI_SUCCESS, PL_ERR_MPI, "MPI_Allreduce of partition bounds failed");
    bounds[0] = 0;
    bounds[size] = N;
    for (int k = 1; k <= size; k++)
        if (bounds[k] < bounds[k - 1]) bounds[k] = bounds[k - 1];
    return PL_OK;
}
