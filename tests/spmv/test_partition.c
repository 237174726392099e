/* test_partition.c — pl_partition_by_nnz against a serial brute force of
 * its definition (boundary k = smallest r with prefix(r) >= floor(k nnz /
 * size)) and the balance bound |nnz(block) - nnz/size| <= max row length + 1,
 * on random row lengths (incl. long runs of empty rows and one huge row),
 * N = 0, 1, 5, 1000, 100000.  Runs on any number of ranks. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "pl_error.h"
#include "spmv.h"
#include "spmv_testmat.h"
#include "testutil.h"

typedef struct {
    int64_t n;
    int32_t *len;
    int calls;
} lens;

static int lengths_of(void *arg, int64_t r0, int64_t r1, int32_t *len)
{
    lens *l = arg;
    l->calls++;
    if (r0 < 0 || r1 > l->n || r0 > r1) return PL_ERROR(PL_ERR_ARG, "bad range");
    for (int64_t r = r0; r < r1; r++) len[r - r0] = l->len[r];
    return PL_OK;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const int64_t ns[] = {0, 1, 5, 1000, 100000};
    for (size_t t = 0; t < sizeof ns / sizeof ns[0]; t++) {
        int64_t n = ns[t];
        lens L = {n, malloc((size_t)(n + 1) * sizeof(int32_t)), 0};
        uint64_t s = 1000 + t;
        int64_t total = 0, lmax = 0;
        for (int64_t i = 0; i < n; i++) {
            L.len[i] = (i / 50) % 7 == 3 ? 0 : (int32_t)(tm_next(&s) % 40);
            if (i == n / 3 && n > 100) L.len[i] = 5000; /* one huge row */
            total += L.len[i];
            if (L.len[i] > lmax) lmax = L.len[i];
        }
        int64_t *b = malloc((size_t)(size + 1) * sizeof *b);
        TU_OK(pl_partition_by_nnz(n, lengths_of, &L, MPI_COMM_WORLD, b));
        TU_CHECK(L.calls == 1);
        /* brute force of the definition */
        int64_t *ref = malloc((size_t)(size + 1) * sizeof *ref);
        ref[0] = 0;
        ref[size] = n;
        for (int k = 1; k < size; k++) {
            int64_t tk = (int64_t)((__int128)total * k / size), p = 0, r = 0;
            while (r < n && p < tk) p += L.len[r++];
            ref[k] = r;
        }
        for (int k = 0; k <= size; k++) TU_CHECK_MSG(b[k] == ref[k], "N=%lld k=%d: %lld vs %lld", (long long)n, k,
                                                      (long long)b[k], (long long)ref[k]);
        for (int k = 0; k < size; k++) {
            int64_t blk = 0;
            TU_CHECK(b[k] <= b[k + 1]);
            for (int64_t r = b[k]; r < b[k + 1]; r++) blk += L.len[r];
            double ideal = (double)total / size;
            TU_CHECK_MSG(blk - ideal <= lmax + 1 && ideal - blk <= lmax + 1, "N=%lld block %d has %lld, ideal %.1f",
                         (long long)n, k, (long long)blk, ideal);
        }
        free(ref);
        free(b);
        free(L.len);
    }
    int f = tu_failures, g = 0;
    MPI_Allreduce(&f, &g, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    tu_failures = g;
    MPI_Finalize();
    return rank == 0 ? tu_result("test_partition") : (g ? 1 : 0);
}
