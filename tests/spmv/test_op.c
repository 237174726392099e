/* test_op.c — the distributed operator equals the serial CSR product.
 *
 * Every rank builds the same random symmetric matrix from a seed (random
 * rows incl. empty ones, plus a band so that neighbours share halos), takes
 * its row block from pl_partition_by_nnz, and builds the operator for each
 * exchange mode (vector, overlap, task), chunk height C in {1, 4, 32} and
 * sort window in {all, 7, auto}.  y = A x for x defined by global original index
 * must equal the serial product mapped through pl_op_global_index to 1e-14
 * relative to |A||x|, on two successive applies.  Also: the global index is
 * a permutation of the block, norm_estimate = max abs row sum, pl_vec_dot,
 * pl_vec_nrm2 and pl_vec_gemv_t equal serial sums.  Run under mpirun with 1,
 * 2, 3, 4 ranks (one case has more ranks than some blocks have rows). */
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

static double xg_of(int64_t g) { return sin(0.7 * (double)g + 0.3) + 0.01 * (double)(g % 5); }

static void block_of(const tm_csr *a, int64_t r0, int64_t r1, pl_csr *b)
{
    TU_OK(pl_csr_alloc(b, a->n, r0, r1 - r0, a->ptr[r1] - a->ptr[r0]));
    b->ncols_global = a->n;
    tm_block_copy(a, r0, r1, b->row_ptr, b->col, b->val);
}

static void run_case(const tm_csr *a, const char *name, MPI_Comm comm)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    int64_t *bounds = malloc((size_t)(size + 1) * sizeof *bounds);
    TU_OK(pl_partition_by_nnz(a->n, tm_lengths_cb, (void *)a, comm, bounds));
    pl_csr blk;
    block_of(a, bounds[rank], bounds[rank + 1], &blk);
    int64_t n = blk.nrows;

    /* serial reference on every rank */
    double *xg = malloc((size_t)(a->n + 1) * sizeof *xg), *yg = malloc((size_t)(a->n + 1) * sizeof *yg),
           *ayg = malloc((size_t)(a->n + 1) * sizeof *ayg);
    for (int64_t g = 0; g < a->n; g++) xg[g] = xg_of(g);
    tm_spmv(a, xg, yg, ayg);
    double rowmax = 0.0, dot_xy = 0.0, dot_xx = 0.0;
    for (int64_t i = 0; i < a->n; i++) {
        double s = 0.0;
        for (int64_t e = a->ptr[i]; e < a->ptr[i + 1]; e++) s += fabs(a->val[e]);
        rowmax = fmax(rowmax, s);
        dot_xy += xg[i] * yg[i];
        dot_xx += xg[i] * xg[i];
    }

    pl_backend *be = NULL;
    TU_OK(pl_backend_create(PL_BACKEND_CPU, 0, &be));
    const int modes[] = {PL_EXCHANGE_VECTOR, PL_EXCHANGE_OVERLAP, PL_EXCHANGE_TASK};
    const int Cs[] = {1, 4, 32};
    const int64_t sigmas[] = {0, 7, PL_SORT_WINDOW_AUTO};
    for (int mi = 0; mi < 3; mi++)
        for (int ci = 0; ci < 3; ci++)
            for (int si = 0; si < 3; si++) {
                pl_op_options cfg = {0};
                cfg.format = PL_FORMAT_PJDS; /* the pJDS sort windows under test */
                cfg.chunk_height = Cs[ci];
                cfg.sort_window = sigmas[si];
                cfg.exchange = modes[mi];
                pl_op *op = NULL;
                int rc = pl_op_create(&blk, &cfg, be, comm, &op);
                TU_OK(rc);
                if (rc) continue;
                pl_op_info info;
                pl_op_get_info(op, &info);
                TU_CHECK(info.n_global == a->n && info.row0 == bounds[rank] && info.n_local == n);
                TU_CHECK(info.nnz_local == a->ptr[bounds[rank + 1]] - a->ptr[bounds[rank]]);
                TU_CLOSE(info.norm_estimate, rowmax, 1e-14);
                TU_CHECK(info.exchange == modes[mi] || size == 1);
                /* the window in use: auto resolved for the cpu backend, an explicit one as given */
                TU_CHECK(info.sort_window == (sigmas[si] == PL_SORT_WINDOW_AUTO ? PL_SORT_WINDOW_AUTO_CPU : sigmas[si]));
                const int64_t *gi = pl_op_global_index(op);
                char *seen = calloc((size_t)n + 1, 1);
                int okp = 1;
                for (int64_t i = 0; i < n; i++) {
                    int64_t l = gi[i] - bounds[rank];
                    if (l < 0 || l >= n || seen[l]) okp = 0;
                    else seen[l] = 1;
                }
                free(seen);
                TU_CHECK_MSG(okp, "%s: global index is not a permutation of the block", name);
                double *x = NULL, *y = NULL, *V = NULL;
                TU_OK(be->vec_alloc(be, (size_t)n, &x));
                TU_OK(be->vec_alloc(be, (size_t)n, &y));
                TU_OK(be->vec_alloc(be, (size_t)n * 3, &V));
                for (int64_t i = 0; i < n; i++) x[i] = xg[gi[i]];
                for (int rep = 0; rep < 2; rep++) {
                    for (int64_t i = 0; i < n; i++) y[i] = NAN;
                    TU_OK(pl_op_apply(op, x, y));
                    double err = 0.0;
                    for (int64_t i = 0; i < n; i++) {
                        double d = fabs(y[i] - yg[gi[i]]) / fmax(ayg[gi[i]], 1e-300);
                        if (!(d <= err)) err = d;
                    }
                    TU_CHECK_MSG(err <= 1e-14, "%s np=%d mode=%d C=%d sigma=%lld rank %d: rel err %g", name, size,
                                 modes[mi], Cs[ci], (long long)sigmas[si], rank, err);
                }
                int64_t na = 0;
                double sec = 0.0;
                pl_op_counters(op, &na, &sec);
                TU_CHECK(na == 2 && sec >= 0.0);
                pl_op_timings tm;
                pl_op_timings_get(op, &tm);
                TU_CHECK(tm.n_apply == 2 && tm.t_local >= 0.0 && tm.t_local <= tm.t_total + 1e-9);
                TU_CHECK((size == 1) == (tm.bytes_sent == 0.0) || info.n_send == 0);
                double r = 0.0;
                TU_OK(pl_vec_dot(op, x, y, &r));
                TU_CLOSE(r, dot_xy, 1e-12);
                TU_OK(pl_vec_nrm2(op, x, &r));
                TU_CLOSE(r, sqrt(dot_xx), 1e-13);
                /* V = [x, y, 1], h = V^T y */
                for (int64_t i = 0; i < n; i++) V[i] = x[i], V[n + i] = y[i], V[2 * n + i] = 1.0;
                double h[3] = {0, 0, 0}, ys = 0.0, yy = 0.0;
                for (int64_t g = 0; g < a->n; g++) ys += yg[g], yy += yg[g] * yg[g];
                TU_OK(pl_vec_gemv_t(op, 3, V, (size_t)n, y, h));
                TU_CLOSE(h[0], dot_xy, 1e-12);
                TU_CLOSE(h[1], yy, 1e-12);
                TU_CLOSE(h[2], ys, 1e-12);
                be->vec_free(be, x);
                be->vec_free(be, y);
                be->vec_free(be, V);
                pl_op_destroy(&op);
                TU_CHECK(op == NULL);
            }
    pl_backend_destroy(&be);
    pl_csr_destroy(&blk);
    free(bounds);
    free(xg);
    free(yg);
    free(ayg);
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    pl_log_init(rank, PL_LOG_INFO);
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    /* CI has 2 cores: beyond 2 ranks, one thread per rank keeps the
     * oversubscribed run fast (OpenMP barriers spin) */
    if (size > 2) omp_set_num_threads(1);
    tm_csr a;
    tm_random(1500, 12, 2, 1, 42, &a); /* random sym + band */
    run_case(&a, "random+band n=1500", MPI_COMM_WORLD);
    tm_free(&a);
    tm_random(300, 30, -1, 1, 7, &a); /* random only: halos to every rank */
    run_case(&a, "random n=300", MPI_COMM_WORLD);
    tm_free(&a);
    tm_random(3, 2, 1, 1, 5, &a); /* fewer rows than ranks at np = 4 */
    run_case(&a, "tiny n=3", MPI_COMM_WORLD);
    tm_free(&a);
    /* [spmv] transport = nccl on the cpu backend: PL_ERR_INPUT on every rank
     * (collective failure, no hang), the message names the key and the fix */
    {
        tm_random(200, 8, 2, 1, 9, &a);
        int64_t r0 = a.n * rank / size, r1 = a.n * (rank + 1) / size;
        pl_csr blk;
        block_of(&a, r0, r1, &blk);
        pl_backend *be = NULL;
        TU_OK(pl_backend_cpu_create(&be));
        pl_op_options cfg = {0};
        cfg.format = PL_FORMAT_PJDS; /* the pJDS sort windows under test */
        cfg.chunk_height = 4;
        cfg.exchange = PL_EXCHANGE_OVERLAP;
        cfg.transport = PL_TRANSPORT_NCCL;
        pl_op *op = NULL;
        int rc = pl_op_create(&blk, &cfg, be, MPI_COMM_WORLD, &op);
        TU_CHECK_MSG(rc == PL_ERR_INPUT && op == NULL, "transport = nccl on cpu: rc %d", rc);
        TU_CHECK_MSG(strstr(pl_error_message(), "transport = nccl needs backend = cuda") != NULL, "message: %s",
                     pl_error_message());
        pl_error_clear();
        cfg.transport = PL_TRANSPORT_MPI; /* the same block builds with mpi */
        TU_OK(pl_op_create(&blk, &cfg, be, MPI_COMM_WORLD, &op));
        pl_op_destroy(&op);
        pl_backend_destroy(&be);
        pl_csr_destroy(&blk);
        tm_free(&a);
    }
    int f = tu_failures, g = 0;
    MPI_Allreduce(&f, &g, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    tu_failures = g;
    MPI_Finalize();
    return rank == 0 ? tu_result("test_op") : (g ? 1 : 0);
}
