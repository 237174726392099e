/* bench_op_create.c — time pl_op_create (sort, pJDS build, renumbering,
 * halo plan, upload) on a Holstein-Hubbard matrix from a config file, and
 * check the operator against the CSR product.
 *
 * Usage: [mpirun -n P] bench_op_create CONFIG [repeats] [backend]
 * (backend: cpu (default) or cuda).  Prints per repeat the create time (max
 * over ranks), then a fingerprint of the result: an FNV hash of the global
 * index (the permutation) and of y = A x (bitwise), so two builds of the
 * library can be compared for identical results, and the relative error of
 * y against the row-by-row CSR product (must be <= 1e-14).  Exit 1 on a
 * wrong product.  Run pl_op_create with --verbose-like phase timings by
 * setting PJDS_OP_TIMING=1. */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "hh.h"
#include "pl_config.h"
#include "pl_error.h"
#include "spmv.h"
#include "testutil.h"

static double xg_of(int64_t g) { return sin(0.37 * (double)g + 0.1) + 0.02 * (double)(g % 7); }

static int lengths_cb(void *arg, int64_t r0, int64_t r1, int32_t *len) { return hh_row_lengths(arg, r0, r1, len); }

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *c = p;
    for (size_t i = 0; i < n; i++) h = (h ^ c[i]) * 1099511628211ull;
    return h;
}

int main(int argc, char **argv)
{
    int provided = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    pl_log_init(rank, getenv("PJDS_OP_TIMING") ? PL_LOG_DEBUG : PL_LOG_INFO);
    if (argc < 2) {
        if (rank == 0) fprintf(stderr, "usage: bench_op_create CONFIG [repeats] [cpu|cuda]\n");
        MPI_Finalize();
        return 2;
    }
    int reps = argc > 2 ? atoi(argv[2]) : 3;
    int kind = (argc > 3 && !strcmp(argv[3], "cuda")) ? PL_BACKEND_CUDA : PL_BACKEND_CPU;
    pl_config cfg;
    pl_config_defaults(&cfg);
    TU_OK(pl_config_read(&cfg, argv[1]));
    hh_model *m = NULL;
    hh_params hp;
    app_hh_params(&cfg.model, &hp);
    TU_OK(hh_model_create(&hp, &m));
    if (tu_failures) MPI_Abort(MPI_COMM_WORLD, 1);
    int64_t N = hh_model_rows(m);
    int64_t *bounds = calloc((size_t)size + 1, sizeof *bounds);
    TU_OK(pl_partition_by_nnz(N, lengths_cb, m, MPI_COMM_WORLD, bounds));
    pl_csr A;
    memset(&A, 0, sizeof A);
    double t0 = pl_wtime();
    TU_OK(hh_rows_csr(m, bounds[rank], bounds[rank + 1], &A));
    double tb = pl_wtime() - t0;
    if (rank == 0) printf("N = %lld, %d rank(s), generator %.3f s\n", (long long)N, size, tb);
    pl_backend *be = NULL;
    TU_OK(pl_backend_create(kind, rank, &be));
    if (tu_failures) MPI_Abort(MPI_COMM_WORLD, 1);
    pl_op *op = NULL;
    pl_op_options oo;
    app_op_options(&cfg.spmv, &oo);
    for (int r = 0; r < reps; r++) {
        if (op) pl_op_destroy(&op);
        MPI_Barrier(MPI_COMM_WORLD);
        t0 = pl_wtime();
        TU_OK(pl_op_create(&A, &oo, be, MPI_COMM_WORLD, &op));
        double t = pl_wtime() - t0, tm = 0;
        MPI_Allreduce(&t, &tm, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        if (rank == 0) printf("pl_op_create: %.3f s\n", tm);
        if (tu_failures) MPI_Abort(MPI_COMM_WORLD, 1);
    }
    pl_op_info info;
    pl_op_get_info(op, &info);
    const int64_t *g = pl_op_global_index(op);
    size_t n = (size_t)info.n_local;
    double *hx = malloc((n ? n : 1) * sizeof *hx), *hy = malloc((n ? n : 1) * sizeof *hy), *dx = NULL, *dy = NULL;
    for (size_t i = 0; i < n; i++) hx[i] = xg_of(g[i]);
    TU_OK(be->vec_alloc(be, n, &dx));
    TU_OK(be->vec_alloc(be, n, &dy));
    TU_OK(be->upload(be, dx, hx, n));
    TU_OK(pl_op_apply(op, dx, dy));
    TU_OK(be->download(be, hy, dy, n));
    double loc[2] = {0, 0}, glob[2];
    for (size_t i = 0; i < n; i++) {
        int64_t r = g[i] - A.row0;
        double s = 0, a = 0;
        for (int64_t k = A.row_ptr[r]; k < A.row_ptr[r + 1]; k++) {
            s += A.val[k] * xg_of(A.col[k]);
            a += fabs(A.val[k] * xg_of(A.col[k]));
        }
        double d = fabs(hy[i] - s) / (a > 0 ? a : 1);
        if (d > loc[0]) loc[0] = d;
    }
    uint64_t h[2] = {fnv(1469598103934665603ull, g, n * sizeof *g), fnv(1469598103934665603ull, hy, n * sizeof *hy)};
    MPI_Allreduce(loc, glob, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    uint64_t hx_[2] = {0, 0};
    MPI_Allreduce(h, hx_, 2, MPI_UINT64_T, MPI_BXOR, MPI_COMM_WORLD);
    if (rank == 0)
        printf("fingerprint: perm %016llx y %016llx; n_halo(rank 0) %d; max rel. row error %.2e\n",
               (unsigned long long)hx_[0], (unsigned long long)hx_[1], info.n_halo, glob[0]);
    TU_CHECK(glob[0] <= 1e-14);
    be->vec_free(be, dx);
    be->vec_free(be, dy);
    free(hx);
    free(hy);
    pl_op_destroy(&op);
    pl_backend_destroy(&be);
    pl_csr_destroy(&A);
    hh_model_destroy(&m);
    free(bounds);
    pl_config_destroy(&cfg);
    int rc = tu_result("bench_op_create");
    MPI_Finalize();
    return rc;
}
