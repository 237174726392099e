/* bench_spmv_cpu.c — CPU SpMV throughput: pJDS (CPU backend kernel) vs a
 * plain OpenMP CSR SpMV (int32 columns, one row per iteration, static
 * schedule) on the same matrix, as a sanity check of the backend kernel.
 *
 * Usage: bench_spmv_cpu [n_rows = 1000000] [repeats = 20]
 * Matrices: "banded": row i has 4..27 entries at random offsets within
 * +-2000 of i (x traffic mostly cached, like the hopping structure of HMEp);
 * "random": the same lengths, columns uniform in [0, n) (x gathers miss).
 * GF/s = 2 nnz / time per SpMV (best of `repeats`).  Also checks that both
 * results agree (exit 1 if not), so the ctest smoke run can fail.
 * pJDS runs as the real operator does: pl_op on one rank, rows and
 * columns permuted (P A P^T), x and y in the permuted basis; "create" is
 * the time of pl_op_create (sort, split, pJDS build). */
#include <math.h>
#include <mpi.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#include "pl_error.h"
#include "spmv.h"
#include "spmv_testmat.h"

typedef struct {
    int32_t n;
    int64_t *ptr;
    int32_t *col;
    double *val;
} csr32;

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

static void gen(int32_t n, int banded, csr32 *a)
{
    a->n = n;
    a->ptr = malloc(((size_t)n + 1) * sizeof *a->ptr);
    a->ptr[0] = 0;
    for (int32_t i = 0; i < n; i++) {
        uint64_t s = (uint64_t)i * 7 + 1;
        a->ptr[i + 1] = a->ptr[i] + 4 + (int64_t)(tm_next(&s) % 24);
    }
    int64_t nnz = a->ptr[n];
    a->col = malloc((size_t)nnz * sizeof *a->col);
    a->val = malloc((size_t)nnz * sizeof *a->val);
#pragma omp parallel for schedule(dynamic, 4096)
    for (int32_t i = 0; i < n; i++) {
        uint64_t s = (uint64_t)i * 131 + 7;
        int64_t p = a->ptr[i], l = a->ptr[i + 1] - p;
        for (int64_t k = 0; k < l; k++) {
            int64_t c = banded ? i + (int64_t)(tm_next(&s) % 4001) - 2000 : (int64_t)(tm_next(&s) % (uint64_t)n);
            if (c < 0) c += n;
            if (c >= n) c -= n;
            a->col[p + k] = (int32_t)c;
            a->val[p + k] = tm_unif(&s) - 0.5;
        }
        qsort(a->col + p, (size_t)l, sizeof(int32_t), cmp_i32);
    }
}

static void csr_spmv(const csr32 *a, const double *restrict x, double *restrict y)
{
#pragma omp parallel for schedule(static)
    for (int32_t i = 0; i < a->n; i++) {
        double s = 0.0;
        for (int64_t e = a->ptr[i]; e < a->ptr[i + 1]; e++) s += a->val[e] * x[a->col[e]];
        y[i] = s;
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int32_t n = argc > 1 ? atoi(argv[1]) : 1000000;
    int reps = argc > 2 ? atoi(argv[2]) : 20;
    if (n < 1 || reps < 1) {
        fprintf(stderr, "usage: bench_spmv_cpu [n_rows] [repeats]\n");
        return 2;
    }
    pl_backend *be = NULL;
    if (pl_backend_cpu_create(&be)) {
        pl_error_report();
        return 1;
    }
    int fail = 0;
    printf("threads %d, n = %d rows\n", omp_get_max_threads(), n);
    for (int banded = 1; banded >= 0; banded--) {
        csr32 a;
        gen(n, banded, &a);
        int64_t nnz = a.ptr[n];
        double *x = malloc((size_t)n * sizeof *x), *y0 = malloc((size_t)n * sizeof *y0),
               *y1 = malloc((size_t)n * sizeof *y1);
        for (int32_t i = 0; i < n; i++) x[i] = sin(0.001 * i);
        double best = 1e30;
        for (int r = 0; r < reps; r++) {
            double t = pl_wtime();
            csr_spmv(&a, x, y0);
            t = pl_wtime() - t;
            if (t < best) best = t;
        }
        printf("%-7s nnz %lld  csr-omp           %7.3f GF/s  %7.2f GB/s (12 B/nnz + 16 B/row)\n",
               banded ? "banded" : "random", (long long)nnz, 2e-9 * nnz / best,
               1e-9 * (12.0 * nnz + 16.0 * n) / best);
        /* the operator on one rank: P A P^T in pJDS, x and y permuted */
        pl_csr blk;
        if (pl_csr_alloc(&blk, n, 0, n, nnz)) {
            pl_error_report();
            return 1;
        }
        blk.ncols_global = n;
        for (int32_t i = 0; i <= n; i++) blk.row_ptr[i] = a.ptr[i];
        for (int64_t e = 0; e < nnz; e++) blk.col[e] = a.col[e], blk.val[e] = a.val[e];
        const struct {
            int C;
            int64_t sigma;
        } fmts[] = {{32, 0}, {32, 1}, {32, 65536}, {8, 0}, {4, 0}};
        double *xp = malloc((size_t)n * sizeof *xp);
        for (size_t f = 0; f < sizeof fmts / sizeof fmts[0]; f++) {
            pl_op_options cfg = {.chunk_height = fmts[f].C, .sort_window = fmts[f].sigma,
                               .exchange = PL_EXCHANGE_VECTOR};
            pl_op *op = NULL;
            double tc = pl_wtime();
            if (pl_op_create(&blk, &cfg, be, MPI_COMM_SELF, &op)) {
                pl_error_report();
                return 1;
            }
            tc = pl_wtime() - tc;
            const int64_t *gi = pl_op_global_index(op);
            for (int32_t i = 0; i < n; i++) xp[i] = x[gi[i]];
            best = 1e30;
            for (int r = 0; r < reps; r++) {
                double t = pl_wtime();
                if (pl_op_apply(op, xp, y1)) {
                    pl_error_report();
                    return 1;
                }
                t = pl_wtime() - t;
                if (t < best) best = t;
            }
            double err = 0.0;
            for (int32_t i = 0; i < n; i++) err = fmax(err, fabs(y1[i] - y0[gi[i]]));
            if (!(err <= 1e-12)) fail = 1;
            pl_op_info info;
            pl_op_get_info(op, &info);
            printf("%-7s C=%-2d sigma=%-8lld pjds %7.3f GF/s  %7.2f GB/s  padding %5.2f %%  create %.2f s  max|diff| %.1e\n",
                   banded ? "banded" : "random", fmts[f].C, (long long)(fmts[f].sigma ? fmts[f].sigma : n),
                   2e-9 * nnz / best, 1e-9 * (12.0 * info.nent_local + 16.0 * n) / best,
                   100.0 * (double)(info.nent_local - nnz) / (double)nnz, tc, err);
            pl_op_destroy(&op);
        }
        free(xp);
        pl_csr_destroy(&blk);
        free(x), free(y0), free(y1);
        free(a.ptr), free(a.col), free(a.val);
    }
    pl_backend_destroy(&be);
    MPI_Finalize();
    return fail;
}
