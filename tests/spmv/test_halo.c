/* test_halo.c — partition and halo plan on matrices with known halos, on 3
 * ranks (the test refuses another rank count).
 *  1. tridiagonal n = 12: row lengths 2,3,...,3,2 (34 entries) give blocks
 *     [0,4), [4,8), [8,12); the interior rank receives exactly 2 halo
 *     entries and sends 2, the outer ranks receive and send 1.
 *  2. arrow matrix (diagonal + dense row 0 + dense column 0), n = 30:
 *     rank 0 receives every column it does not own and sends x[0] to both
 *     other ranks; ranks 1 and 2 receive only x[0] and send their whole
 *     block to rank 0.
 * Each case also checks y = A x against the serial product in all modes.
 * With the argument "single", MPI is initialised without thread support and
 * the task mode must fall back to overlap (and still be right). */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pl_error.h"
#include "spmv.h"
#include "spmv_testmat.h"
#include "testutil.h"

static int lengths_of(void *arg, int64_t r0, int64_t r1, int32_t *len)
{
    const tm_csr *a = arg;
    for (int64_t r = r0; r < r1; r++) len[r - r0] = (int32_t)(a->ptr[r + 1] - a->ptr[r]);
    return PL_OK;
}

/* Build the operator of rank's block and check y = A x; returns info. */
static void build_and_check(const tm_csr *a, int mode, int64_t *bounds, pl_op_info *info)
{
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    TU_OK(pl_partition_by_nnz(a->n, lengths_of, (void *)a, MPI_COMM_WORLD, bounds));
    int64_t r0 = bounds[rank], r1 = bounds[rank + 1], nnz = a->ptr[r1] - a->ptr[r0];
    pl_csr b;
    TU_OK(pl_csr_alloc(&b, a->n, r0, r1 - r0, nnz));
    b.ncols_global = a->n;
    for (int64_t r = r0; r <= r1; r++) b.row_ptr[r - r0] = a->ptr[r] - a->ptr[r0];
    memcpy(b.col, a->col + a->ptr[r0], (size_t)nnz * sizeof *b.col);
    memcpy(b.val, a->val + a->ptr[r0], (size_t)nnz * sizeof *b.val);
    pl_backend *be = NULL;
    TU_OK(pl_backend_cpu_create(&be));
    pl_op_options cfg = {.chunk_height = 4, .sort_window = 0, .exchange = mode};
    pl_op *op = NULL;
    TU_OK(pl_op_create(&b, &cfg, be, MPI_COMM_WORLD, &op));
    pl_csr_destroy(&b);
    if (!op) return;
    pl_op_get_info(op, info);
    double *xg = malloc((size_t)a->n * sizeof *xg), *yg = malloc((size_t)a->n * sizeof *yg);
    for (int64_t g = 0; g < a->n; g++) xg[g] = 1.0 + 0.1 * (double)g;
    tm_spmv(a, xg, yg, NULL);
    int64_t n = r1 - r0;
    double *x, *y;
    TU_OK(be->vec_alloc(be, (size_t)n, &x));
    TU_OK(be->vec_alloc(be, (size_t)n, &y));
    const int64_t *gi = pl_op_global_index(op);
    for (int64_t i = 0; i < n; i++) x[i] = xg[gi[i]];
    TU_OK(pl_op_apply(op, x, y));
    for (int64_t i = 0; i < n; i++) TU_CLOSE(y[i], yg[gi[i]], 1e-14);
    be->vec_free(be, x);
    be->vec_free(be, y);
    free(xg);
    free(yg);
    pl_op_destroy(&op);
    pl_backend_destroy(&be);
}

int main(int argc, char **argv)
{
    int provided, rank, size;
    int single = argc > 1 && strcmp(argv[1], "single") == 0;
    MPI_Init_thread(&argc, &argv, single ? MPI_THREAD_SINGLE : MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 3) {
        if (rank == 0) fprintf(stderr, "test_halo needs 3 ranks\n");
        MPI_Finalize();
        return 1;
    }
    int64_t bounds[4];
    pl_op_info info;
    for (int mode = PL_EXCHANGE_VECTOR; mode <= PL_EXCHANGE_TASK; mode++) {
        /* 1. tridiagonal */
        int64_t n = 12, m = 0, I[40], J[40];
        double V[40];
        for (int64_t i = 0; i < n; i++)
            for (int64_t j = i - 1; j <= i + 1; j++)
                if (j >= 0 && j < n) I[m] = i, J[m] = j, V[m++] = (i == j) ? 2.0 : -1.0;
        tm_csr a;
        tm_from_coo(n, m, I, J, V, &a);
        memset(&info, 0, sizeof info);
        build_and_check(&a, mode, bounds, &info);
        TU_CHECK(bounds[0] == 0 && bounds[1] == 4 && bounds[2] == 8 && bounds[3] == 12);
        TU_CHECK(info.n_local == 4);
        TU_CHECK_MSG(info.n_halo == (rank == 1 ? 2 : 1), "rank %d: n_halo = %d", rank, info.n_halo);
        TU_CHECK_MSG(info.n_send == (rank == 1 ? 2 : 1), "rank %d: n_send = %lld", rank, (long long)info.n_send);
        TU_CHECK(info.n_neighbors == (rank == 1 ? 2 : 1));
        if (mode == PL_EXCHANGE_TASK && provided < MPI_THREAD_SERIALIZED)
            TU_CHECK(info.exchange == PL_EXCHANGE_OVERLAP);
        else
            TU_CHECK(info.exchange == mode);
        if (single) TU_CHECK(provided < MPI_THREAD_SERIALIZED);
        TU_CLOSE(info.norm_estimate, 4.0, 1e-15);
        tm_free(&a);

        /* 2. arrow */
        n = 30;
        int64_t *I2 = malloc(100 * sizeof *I2), *J2 = malloc(100 * sizeof *J2);
        double *V2 = malloc(100 * sizeof *V2);
        m = 0;
        for (int64_t i = 0; i < n; i++) {
            I2[m] = i, J2[m] = i, V2[m++] = 4.0;
            if (i > 0) {
                I2[m] = i, J2[m] = 0, V2[m++] = 1.0;
                I2[m] = 0, J2[m] = i, V2[m++] = 1.0;
            }
        }
        tm_from_coo(n, m, I2, J2, V2, &a);
        free(I2), free(J2), free(V2);
        memset(&info, 0, sizeof info);
        build_and_check(&a, mode, bounds, &info);
        int64_t n0 = bounds[1] - bounds[0], nr = info.n_local;
        TU_CHECK(bounds[3] == 30 && n0 >= 1 && bounds[2] > bounds[1]); /* row 0 holds 30 of 88 entries */
        if (rank == 0) {
            TU_CHECK(info.n_halo == 30 - n0);
            TU_CHECK(info.n_send == 2);
        } else {
            TU_CHECK(info.n_halo == 1);
            TU_CHECK(info.n_send == nr);
        }
        tm_free(&a);
    }
    int f = tu_failures, g = 0;
    MPI_Allreduce(&f, &g, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    tu_failures = g;
    MPI_Finalize();
    return rank == 0 ? tu_result("test_halo") : (g ? 1 : 0);
}
