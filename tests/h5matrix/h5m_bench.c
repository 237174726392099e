/* h5m_bench.c — import throughput of pl_h5matrix (not a ctest).
 * Generates a symmetric 7-point Laplacian-like matrix on an n^3 grid
 * (values depend on the unordered pair, so A == A^T exactly), exports it
 * with pl_h5m_write (full storage), and a lower-storage copy (the lower
 * triangle written by pl_h5m_write, its storage attribute then switched to
 * "lower" through HDF5), then times the import as the app runs it:
 * row lengths on equal shares (partition pattern), nnz-balanced bounds,
 * pl_h5m_read_rows.  Reports rows/s and MB/s (bytes of row_ptr, col_idx
 * and values in the file per second; the file is in the page cache).
 * Usage: mpirun -np P h5m_bench DIR [n=128] */
#include <hdf5.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pl_error.h"
#include "pl_h5matrix.h"
#include "testutil.h"

static int rank, size;

static double pairval(int64_t i, int64_t j)
{
    if (i == j) return 6.0 + 1e-3 * (double)(i % 97);
    int64_t a = i < j ? i : j, b = i < j ? j : i;
    return -1.0 - 1e-6 * (double)((a * 31 + b) % 1000);
}

static void gen(int64_t n, int64_t r0, int64_t r1, int lower, pl_csr *A)
{
    int64_t N = n * n * n, nnz = 0, off[7] = {-n * n, -n, -1, 0, 1, n, n * n};
    for (int pass = 0; pass < 2; pass++) {
        int64_t p = 0;
        for (int64_t i = r0; i < r1; i++) {
            int64_t x = i % n, y = (i / n) % n, z = i / (n * n);
            for (int k = 0; k < 7; k++) {
                int64_t j = i + off[k];
                if ((k == 0 && z == 0) || (k == 6 && z == n - 1) || (k == 1 && y == 0) || (k == 5 && y == n - 1) ||
                    (k == 2 && x == 0) || (k == 4 && x == n - 1))
                    continue;
                if (lower && j > i) continue;
                if (pass) {
                    A->col[p] = j;
                    A->val[p] = pairval(i, j);
                }
                p++;
            }
            if (pass) A->row_ptr[i - r0 + 1] = p;
        }
        if (!pass) {
            nnz = p;
            pl_csr_alloc(A, N, r0, r1 - r0, nnz);
        }
    }
}

static int set_lower(const char *file)
{
    hid_t f = H5Fopen(file, H5F_ACC_RDWR, H5P_DEFAULT);
    if (f < 0) return 1;
    H5Adelete(f, "storage");
    hid_t s = H5Screate(H5S_SCALAR), t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, 6);
    hid_t a = H5Acreate2(f, "storage", t, s, H5P_DEFAULT, H5P_DEFAULT);
    herr_t e = H5Awrite(a, t, "lower");
    H5Aclose(a);
    H5Tclose(t);
    H5Sclose(s);
    H5Fclose(f);
    return e < 0;
}

static void bench_read(const char *file, const char *tag)
{
    pl_h5m_info info;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    TU_OK(pl_h5m_open_info(file, "/", &info));
    int64_t N = info.rows, a = N * rank / size, b = N * (rank + 1) / size;
    int32_t *len = malloc(sizeof(int32_t) * (size_t)(b - a + 1));
    TU_OK(pl_h5m_row_lengths(file, "/", a, b, len, MPI_COMM_WORLD));
    /* nnz-balanced bounds from the shares' sums (as pl_partition_by_nnz) */
    int64_t s = 0, off = 0, tot = 0;
    for (int64_t r = 0; r < b - a; r++) s += len[r];
    MPI_Exscan(&s, &off, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&s, &tot, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) off = 0;
    int64_t *cand = malloc(sizeof(int64_t) * (size_t)(size + 1)), *bounds = malloc(sizeof(int64_t) * (size_t)(size + 1));
    for (int k = 0; k <= size; k++) cand[k] = N;
    int64_t p = off, r = a;
    for (int k = 1; k < size; k++) {
        int64_t t = tot * k / size;
        while (r < b && p < t) p += len[r++ - a];
        if (p >= t) cand[k] = r;
    }
    cand[0] = 0;
    MPI_Allreduce(cand, bounds, size + 1, MPI_INT64_T, MPI_MIN, MPI_COMM_WORLD);
    free(len);
    double t1 = MPI_Wtime();
    pl_csr blk;
    TU_OK(pl_h5m_read_rows(file, "/", bounds[rank], bounds[rank + 1], MPI_COMM_WORLD, &blk));
    double t2 = MPI_Wtime(), tl = t1 - t0, tr = t2 - t1, tlm, trm;
    MPI_Reduce(&tl, &tlm, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&tr, &trm, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    double mb = ((double)(N + 1) * 8 + (double)info.nnz_stored * (info.col_bytes + 8)) / 1e6;
    if (rank == 0)
        printf("%-6s ranks %d: N %lld, stored nnz %lld, expanded nnz %lld, file data %.1f MB | lengths %.3f s, "
               "read %.3f s, total %.3f s = %.2f Mrows/s, %.0f MB/s (read alone %.0f MB/s)\n",
               tag, size, (long long)N, (long long)info.nnz_stored, (long long)tot, mb, tlm, trm, tlm + trm,
               (double)N / (tlm + trm) / 1e6, mb / (tlm + trm), mb / trm);
    pl_csr_destroy(&blk);
    free(cand);
    free(bounds);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 2) TU_SKIP("usage: h5m_bench DIR [n]");
    int64_t n = argc > 2 ? atoll(argv[2]) : 128, N = n * n * n;
    char full[2048], low[2048];
    snprintf(full, sizeof full, "%s/bench_full.h5", argv[1]);
    snprintf(low, sizeof low, "%s/bench_lower.h5", argv[1]);
    int64_t r0 = N * rank / size, r1 = N * (rank + 1) / size;
    for (int lower = 0; lower < 2; lower++) {
        pl_csr A;
        gen(n, r0, r1, lower, &A);
        double t0 = MPI_Wtime();
        TU_OK(pl_h5m_write(lower ? low : full, "/", &A, 1, "bench 7-point", "h5m_bench", MPI_COMM_WORLD, 1));
        double t = MPI_Wtime() - t0;
        if (rank == 0 && lower) TU_CHECK(set_lower(low) == 0);
        if (rank == 0) printf("write %s: %.3f s\n", lower ? "lower" : "full", t);
        pl_csr_destroy(&A);
    }
    for (int rep = 0; rep < 2; rep++) {
        bench_read(full, "full");
        bench_read(low, "lower");
    }
    int rc = tu_result("h5m_bench");
    MPI_Finalize();
    return rc;
}
