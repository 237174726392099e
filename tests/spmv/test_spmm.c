/* test_spmm.c — Y = A X for R vectors (pl_op_apply_block) against R single
 * SpMVs (pl_op_apply) of the same operator, and pl_vec_bdot against
 * pl_vec_dot per column.
 *
 * A random symmetric matrix with a band (neighbouring ranks share halos) is
 * split by pl_partition_by_nnz over the ranks of MPI_COMM_WORLD; for each
 * exchange mode (vector, overlap, task), chunk height C in {32, 4} and every
 * R in 1..32 and 64 (in an order that grows and shrinks the block buffers) every entry of Y must equal the single-vector result to
 * 1e-14 relative to (|A| |x|) of its row.  Bad R is PL_ERR_ARG.
 * usage: test_spmm [cpu|cuda]   (cuda without a GPU: exit 77, skipped) */
#include <math.h>
#include <mpi.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pl_error.h"
#include "spmv.h"
#include "spmv_testmat.h"
#include "testutil.h"

static double x_of(int64_t g, int r) { return sin(0.37 * (double)g + 1.1 * r + 0.3) + 0.01 * (double)((g + r) % 7); }

static void block_of(const tm_csr *a, int64_t r0, int64_t r1, pl_csr *b)
{
    TU_OK(pl_csr_alloc(b, a->n, r0, r1 - r0, a->ptr[r1] - a->ptr[r0]));
    b->ncols_global = a->n;
    tm_block_copy(a, r0, r1, b->row_ptr, b->col, b->val);
}

static void run(const tm_csr *a, int kind, pl_backend *be)
{
    (void)kind; /* the backend is be's */
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int64_t *bounds = malloc((size_t)(size + 1) * sizeof *bounds);
    TU_OK(pl_partition_by_nnz(a->n, tm_lengths_cb, (void *)a, MPI_COMM_WORLD, bounds));
    pl_csr blk;
    block_of(a, bounds[rank], bounds[rank + 1], &blk);
    const int64_t n = blk.nrows;
    /* |A| |x| per global row for the error scale (|x| <= 1.07) */
    double *scale = malloc((size_t)a->n * sizeof *scale);
    for (int64_t g = 0; g < a->n; g++) {
        double s = 0.0;
        for (int64_t e = a->ptr[g]; e < a->ptr[g + 1]; e++) s += fabs(a->val[e]) * 1.07;
        scale[g] = s > 0 ? s : 1.0;
    }
    const int modes[] = {PL_EXCHANGE_VECTOR, PL_EXCHANGE_OVERLAP, PL_EXCHANGE_TASK};
    const int Cs[] = {32, 4};
    /* every R of 1..32 and 64, in an order that grows and shrinks the block buffers */
    int Rs[40], nR = 0;
    Rs[nR++] = 1, Rs[nR++] = 8, Rs[nR++] = 2, Rs[nR++] = 32;
    for (int r = 3; r < 32; r++)
        if (r != 8) Rs[nR++] = r;
    Rs[nR++] = 64;
    for (int mi = 0; mi < 3; mi++)
        for (int ci = 0; ci < 2; ci++) {
            pl_op_options cfg = {0};
            cfg.chunk_height = Cs[ci];
            cfg.sort_window = 0;
            cfg.exchange = modes[mi];
            cfg.transport = PL_TRANSPORT_MPI;
            pl_op *op = NULL;
            TU_OK(pl_op_create(&blk, &cfg, be, MPI_COMM_WORLD, &op));
            if (!op) continue;
            const int64_t *gi = pl_op_global_index(op);
            const size_t nn = (size_t)n * PL_SPMM_RMAX + 1;
            double *hX = malloc(nn * sizeof *hX), *hY = malloc(nn * sizeof *hY), *hx = malloc(((size_t)n + 1) * sizeof *hx),
                   *hy = malloc(((size_t)n + 1) * sizeof *hy);
            double *X = NULL, *Y = NULL, *x = NULL, *y = NULL;
            TU_OK(be->vec_alloc(be, nn, &X));
            TU_OK(be->vec_alloc(be, nn, &Y));
            TU_OK(be->vec_alloc(be, (size_t)n + 1, &x));
            TU_OK(be->vec_alloc(be, (size_t)n + 1, &y));
            for (int ri = 0; ri < nR; ri++) {
                const int R = Rs[ri];
                for (int64_t i = 0; i < n; i++)
                    for (int r = 0; r < R; r++) hX[i * R + r] = x_of(gi[i], r);
                TU_OK(be->upload(be, X, hX, (size_t)n * R));
                TU_OK(be->set(be, (size_t)n * R, NAN, Y));
                TU_OK(pl_op_apply_block(op, R, X, Y));
                TU_OK(be->download(be, hY, Y, (size_t)n * R));
                double err = 0.0;
                for (int r = 0; r < R; r++) {
                    for (int64_t i = 0; i < n; i++) hx[i] = hX[i * R + r];
                    TU_OK(be->upload(be, x, hx, (size_t)n));
                    TU_OK(pl_op_apply(op, x, y));
                    TU_OK(be->download(be, hy, y, (size_t)n));
                    for (int64_t i = 0; i < n; i++) {
                        const double d = fabs(hY[i * R + r] - hy[i]) / scale[gi[i]];
                        if (!(d <= err)) err = d;
                    }
                }
                TU_CHECK_MSG(err <= 1e-14, "np=%d mode=%d C=%d R=%d rank %d: max relative deviation %.2e", size,
                             modes[mi], Cs[ci], R, rank, err);
                /* block dot products against single ones */
                double bd[PL_SPMM_RMAX];
                TU_OK(pl_vec_bdot(op, R, X, Y, bd));
                for (int r = 0; r < R; r += R > 4 ? R / 4 : 1) {
                    for (int64_t i = 0; i < n; i++) hx[i] = hX[i * R + r], hy[i] = hY[i * R + r];
                    TU_OK(be->upload(be, x, hx, (size_t)n));
                    TU_OK(be->upload(be, y, hy, (size_t)n));
                    double d1 = 0.0;
                    TU_OK(pl_vec_dot(op, x, y, &d1));
                    TU_CLOSE(bd[r], d1, 1e-12);
                }
                /* the fused KPM step: Y = alpha A X + gamma X + beta Y0, dots of X.X and Y.X */
                {
                    const double al = 0.7, ga = -0.3, bt = -1.0;
                    double *W = NULL, *Z = NULL, dots[2 * PL_SPMM_RMAX];
                    TU_OK(be->vec_alloc(be, (size_t)n * R + 1, &W));
                    TU_OK(be->vec_alloc(be, (size_t)n * R + 1, &Z));
                    double *hZ0 = malloc(((size_t)n * R + 1) * sizeof *hZ0), *hZ = malloc(((size_t)n * R + 1) * sizeof *hZ);
                    for (int64_t i = 0; i < n * R; i++) hZ0[i] = cos(0.01 * (double)(gi[i / R] * R + i % R));
                    TU_OK(be->upload(be, Z, hZ0, (size_t)n * R));
                    TU_OK(pl_op_apply_block_aug(op, R, al, ga, bt, X, Z, W, dots));
                    TU_OK(be->download(be, hZ, Z, (size_t)n * R));
                    double e2 = 0.0, xx[PL_SPMM_RMAX] = {0}, yx[PL_SPMM_RMAX] = {0};
                    for (int64_t i = 0; i < n; i++)
                        for (int r = 0; r < R; r++) {
                            const double ref = al * hY[i * R + r] + ga * hX[i * R + r] + bt * hZ0[i * R + r];
                            const double d = fabs(hZ[i * R + r] - ref) / (scale[gi[i]] + 2.0);
                            if (!(d <= e2)) e2 = d;
                            xx[r] += hX[i * R + r] * hX[i * R + r];
                            yx[r] += hZ[i * R + r] * hX[i * R + r];
                        }
                    MPI_Allreduce(MPI_IN_PLACE, xx, R, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
                    MPI_Allreduce(MPI_IN_PLACE, yx, R, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
                    TU_CHECK_MSG(e2 <= 1e-14, "aug np=%d mode=%d C=%d R=%d: deviation %.2e", size, modes[mi], Cs[ci], R, e2);
                    for (int r = 0; r < R; r++) {
                        TU_CLOSE(dots[r], xx[r], 1e-12);
                        TU_CLOSE(dots[R + r], yx[r], 1e-12);
                    }
                    /* the fused Chebyshev filter step (CUDA on one rank; elsewhere
                     * PL_ERR_NOTSUP): Z = al A X + ga X + bt Z0, W = W0 + c1 X + c2 Z */
                    const double c1 = 0.25, c2 = -1.5;
                    double *hW0 = malloc(((size_t)n * R + 1) * sizeof *hW0);
                    for (int64_t i = 0; i < n * R; i++) hW0[i] = sin(0.003 * (double)(gi[i / R] * R + i % R));
                    TU_OK(be->upload(be, Z, hZ0, (size_t)n * R));
                    TU_OK(be->upload(be, W, hW0, (size_t)n * R));
                    const int ec = pl_op_apply_block_cheb(op, R, al, ga, bt, X, Z, c1, c2, W);
                    TU_CHECK(ec == PL_OK || ec == PL_ERR_NOTSUP);
                    if (ec == PL_OK) {
                        TU_OK(be->sync(be));
                        double *hA = malloc(((size_t)n * R + 1) * sizeof *hA);
                        TU_OK(be->download(be, hZ, Z, (size_t)n * R));
                        TU_OK(be->download(be, hA, W, (size_t)n * R));
                        double e3 = 0.0, e4 = 0.0;
                        for (int64_t i = 0; i < n * R; i++) {
                            const double ref = al * hY[i] + ga * hX[i] + bt * hZ0[i];
                            const double sc = scale[gi[i / R]] + 2.0;
                            e3 = fmax(e3, fabs(hZ[i] - ref) / sc);
                            e4 = fmax(e4, fabs(hA[i] - (hW0[i] + c1 * hX[i] + c2 * ref)) / sc);
                        }
                        TU_CHECK_MSG(e3 <= 1e-14 && e4 <= 1e-14, "cheb np=%d C=%d R=%d: deviation %.2e, acc %.2e", size,
                                     Cs[ci], R, e3, e4);
                        if (rank == 0 && mi == 0 && ci == 0) printf("test_spmm: fused Chebyshev step R = %d checked\n", R);
                        free(hA);
                    }
                    free(hW0);
                    be->vec_free(be, W);
                    be->vec_free(be, Z);
                    free(hZ0);
                    free(hZ);
                }
            }
            pl_log_init(0, PL_LOG_QUIET);
            TU_CHECK(pl_op_apply_block(op, 0, X, Y) == PL_ERR_ARG);
            TU_CHECK(pl_op_apply_block(op, PL_SPMM_RMAX + 1, X, Y) == PL_ERR_ARG);
            be->vec_free(be, X);
            be->vec_free(be, Y);
            be->vec_free(be, x);
            be->vec_free(be, y);
            free(hX);
            free(hY);
            free(hx);
            free(hy);
            pl_op_destroy(&op);
        }
    pl_csr_destroy(&blk);
    free(bounds);
    free(scale);
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    pl_log_init(0, PL_LOG_QUIET);
    const int cuda = argc > 1 && !strcmp(argv[1], "cuda");
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size > 1) omp_set_num_threads(1); /* 2 cores in CI: ranks x threads must not oversubscribe (OpenMP barriers spin) */
    pl_backend *be = NULL;
    if (cuda) {
        if (pl_backend_create(PL_BACKEND_CUDA, 0, &be) != PL_OK) {
            printf("test_spmm: no CUDA device, skipped\n");
            MPI_Finalize();
            return 77;
        }
    } else {
        TU_OK(pl_backend_create(PL_BACKEND_CPU, 0, &be));
    }
    tm_csr a;
    tm_random(2000, 14, 3, 1, 7, &a);
    run(&a, cuda ? PL_BACKEND_CUDA : PL_BACKEND_CPU, be);
    tm_free(&a);
    pl_backend_destroy(&be);
    int rc = tu_result("test_spmm");
    MPI_Finalize();
    return rc;
}
