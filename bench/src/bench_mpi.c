/* bench_mpi.c — `bench` (bench_run.c) with several MPI ranks: the
 * distributed operator per exchange mode, its time split, and the parallel
 * efficiency against the whole matrix timed as one rank on rank 0.
 */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE /* sysconf(_SC_AVPHYS_PAGES) */
#include "bench_impl.h"

/* ---- several ranks: the distributed operator per exchange mode ---------------- */

/* Median ms of `repeats` applies of op after BENCH_WARMUP untimed ones;
 * the ranks of comm start each apply together (MPI_Barrier), so a
 * collective operator is timed as its slowest rank sees it.  Uses (and
 * resets) the operator's own per-apply samples. */
static int time_op(pl_op *op, const double *x, double *y, int repeats, MPI_Comm comm, double *ms)
{
    for (int i = 0; i < BENCH_WARMUP; i++) PL_CALL(pl_op_apply(op, x, y));
    pl_op_reset_counters(op);
    for (int i = 0; i < repeats; i++) {
        PL_CHECK(MPI_Barrier(comm) == MPI_SUCCESS, PL_ERR_MPI, "MPI_Barrier failed");
        PL_CALL(pl_op_apply(op, x, y));
    }
    pl_op_timings tm;
    pl_op_timings_get(op, &tm);
    *ms = tm.t_median * 1e3;
    return PL_OK;
}

/* Strong-scaling reference of the efficiency column: the whole matrix
 * built again as one rank (MPI_COMM_SELF) on rank 0 and its operator
 * timed like the distributed one (median of repeats, pl_op_apply, wall
 * clock).  Skipped, with the reason in why, when it would not fit rank 0's
 * device memory or half of the free host memory.  Collective: the result
 * is broadcast.  efficiency = t1 / (ranks x t_P). */
static int bench_reference(bench *b, double *t1_ms, char *why, size_t nwhy)
{
    app_ctx *ctx = b->ctx;
    double t1 = -1.0;
    char msg[512] = "";
    if (ctx->rank == 0) {
        /* CSR on the host (16 B/nnz + 8 B/row) and the pJDS where the backend keeps it */
        double nnz = (double)b->nnz, n = (double)b->n;
        double host = 16.0 * nnz + 8.0 * n + (b->on_gpu ? 0.0 : 12.2 * nnz + 40.0 * n);
        double dev = b->on_gpu ? 12.2 * nnz + 48.0 * n : 0.0;
        double avail = (double)sysconf(_SC_AVPHYS_PAGES) * (double)sysconf(_SC_PAGESIZE);
        int rc = PL_OK;
        if (avail > 0 && host > 0.5 * avail) {
            snprintf(msg, sizeof msg, "the whole matrix needs %.1f GB of host memory on one rank, %.1f GB are free",
                     host * 1e-9, avail * 1e-9);
        } else if ((rc = pl_backend_mem_check(b->be, dev)) != PL_OK) {
            snprintf(msg, sizeof msg, "%s", pl_error_message());
            pl_error_clear();
        } else {
            app_ctx one = *ctx;
            one.comm = MPI_COMM_SELF;
            one.rank = 0;
            one.size = 1;
            one.quiet = 1;
            pl_csr A1;
            app_matrix_info mi;
            memset(&A1, 0, sizeof A1);
            pl_op *op = NULL;
            double *d_x = NULL, *d_y = NULL;
            pl_op_options cfg;
            app_op_options(&ctx->cfg.spmv, &cfg);
            cfg.exchange = PL_EXCHANGE_VECTOR;
            rc = app_build_rows(&one, &A1, &mi);
            if (rc == PL_OK) rc = pl_op_create(&A1, &cfg, b->be, MPI_COMM_SELF, &op);
            pl_csr_destroy(&A1);
            if (rc == PL_OK) rc = b->be->vec_alloc(b->be, (size_t)b->n, &d_x);
            if (rc == PL_OK) rc = b->be->vec_alloc(b->be, (size_t)b->n, &d_y);
            if (rc == PL_OK) rc = b->be->set(b->be, (size_t)b->n, 1.0, d_x);
            if (rc == PL_OK) rc = time_op(op, d_x, d_y, b->repeats, MPI_COMM_SELF, &t1);
            if (rc != PL_OK) {
                t1 = -1.0;
                snprintf(msg, sizeof msg, "the one-rank run failed: %s", pl_error_message());
                pl_error_clear();
            }
            if (d_x) b->be->vec_free(b->be, d_x);
            if (d_y) b->be->vec_free(b->be, d_y);
            pl_op_destroy(&op);
        }
    }
    PL_CHECK(MPI_Bcast(&t1, 1, MPI_DOUBLE, 0, ctx->comm) == MPI_SUCCESS &&
                 MPI_Bcast(msg, (int)sizeof msg, MPI_CHAR, 0, ctx->comm) == MPI_SUCCESS,
             PL_ERR_MPI, "MPI_Bcast of the one-rank reference failed");
    *t1_ms = t1;
    snprintf(why, nwhy, "%s", msg);
    return PL_OK;
}

int bench_mpi(bench *b)
{
    app_ctx *ctx = b->ctx;
    const pl_csr *A = b->A;
    static const char *mode_name[3] = {"vector", "overlap", "task"};
    /* local reference rows: x is a function of the global index */
    double *yref = NULL;
    PL_MALLOC(yref, A->nrows ? A->nrows : 1);
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < A->nrows; i++) {
        double s = 0.0;
        for (int64_t k = A->row_ptr[i]; k < A->row_ptr[i + 1]; k++) s += A->val[k] * bench_xval(A->col[k]);
        yref[i] = s;
    }
    double t1 = -1.0;
    char why[512] = "";
    PL_CALL(bench_reference(b, &t1, why, sizeof why));
    if (ctx->rank == 0) {
        printf("\n== pjds-lanczos bench: distributed operator, %d ranks, backend %s ==\n"
               "matrix: %lld rows, %lld nnz; times: median of %d applies (max over ranks); split: per apply,\n"
               "max over ranks, from a second pass with detailed timing (synchronised phases)\n",
               ctx->size, b->be->name, (long long)b->n, (long long)b->nnz, b->repeats);
        if (t1 > 0)
            printf("one rank (the whole matrix on rank 0's %s, vector mode): %.4f ms; efficiency = %.4f / (%d x "
                   "time_ms)\n",
                   b->on_gpu ? "GPU" : "cores", t1, t1, ctx->size);
        else
            printf("one rank: not measured (%s); efficiency n/a\n", why);
        printf("\n%-8s %9s %7s %9s %9s %9s %9s %10s %9s %6s\n", "exchange", "time_ms", "GF/s", "local_ms", "remote_ms",
               "comm_ms", "halo/rank", "MB sent", "rel_err", "eff");
    }
    for (int mode = 0; mode < 3; mode++) {
        pl_op_options cfg;
        app_op_options(&ctx->cfg.spmv, &cfg);
        cfg.exchange = mode;
        pl_op *op = NULL;
        double *d_x = NULL, *d_y = NULL, *hx = NULL;
        double ms = -1, err = -1, tl = 0, tr = 0, tc = 0, mb = 0;
        int halo = 0;
        int rc = pl_op_create(A, &cfg, b->be, ctx->comm, &op);
        if (rc == PL_OK) {
            pl_op_info info;
            pl_op_get_info(op, &info);
            halo = info.n_halo;
            const int64_t *g = pl_op_global_index(op);
            size_t nl = (size_t)info.n_local;
            hx = malloc((nl ? nl : 1) * sizeof *hx);
            if (!hx) rc = PL_ERROR(PL_ERR_MEM, "out of host memory");
            if (rc == PL_OK) rc = b->be->vec_alloc(b->be, nl, &d_x);
            if (rc == PL_OK) rc = b->be->vec_alloc(b->be, nl, &d_y);
            if (rc == PL_OK) {
                for (size_t i = 0; i < nl; i++) hx[i] = bench_xval(g[i]);
                rc = b->be->upload(b->be, d_x, hx, nl);
            }
            double m = 0.0;
            if (rc == PL_OK) rc = time_op(op, d_x, d_y, b->repeats, ctx->comm, &m);
            if (rc == PL_OK) {
                MPI_Allreduce(&m, &ms, 1, MPI_DOUBLE, MPI_MAX, ctx->comm);
                /* check */
                rc = b->be->download(b->be, hx, d_y, nl);
                double loc[2] = {0, 0}, glob[2] = {0, 0};
                for (size_t i = 0; rc == PL_OK && i < nl; i++) {
                    double ref = yref[g[i] - A->row0];
                    loc[0] += (hx[i] - ref) * (hx[i] - ref);
                    loc[1] += ref * ref;
                }
                MPI_Allreduce(loc, glob, 2, MPI_DOUBLE, MPI_SUM, ctx->comm);
                err = glob[1] > 0 ? sqrt(glob[0] / glob[1]) : sqrt(glob[0]);
            }
            if (rc == PL_OK) {
                /* detailed pass for the split */
                pl_op_reset_counters(op);
                pl_op_set_detailed_timing(op, 1);
                int reps = b->repeats < 20 ? b->repeats : 20;
                for (int i = 0; rc == PL_OK && i < reps; i++) rc = pl_op_apply(op, d_x, d_y);
                pl_op_timings tm;
                pl_op_timings_get(op, &tm);
                double loc[4] = {0, 0, 0, 0}, mx[4] = {0, 0, 0, 0};
                if (tm.n_apply > 0) {
                    loc[0] = tm.t_local / (double)tm.n_apply * 1e3;
                    loc[1] = tm.t_remote / (double)tm.n_apply * 1e3;
                    loc[2] = tm.t_comm / (double)tm.n_apply * 1e3;
                    loc[3] = tm.bytes_sent / (double)tm.n_apply / 1e6;
                }
                MPI_Allreduce(loc, mx, 4, MPI_DOUBLE, MPI_MAX, ctx->comm);
                tl = mx[0], tr = mx[1], tc = mx[2], mb = mx[3];
                pl_op_set_detailed_timing(op, 0);
            }
        }
        if (rc != PL_OK) {
            if (ctx->rank == 0) printf("%-8s failed: %s\n", mode_name[mode], pl_error_message());
            pl_error_clear();
        } else if (ctx->rank == 0) {
            char eff[16] = "n/a";
            if (t1 > 0 && ms > 0) snprintf(eff, sizeof eff, "%.3f", t1 / ((double)ctx->size * ms));
            printf("%-8s %9.4f %7.1f %9.4f %9.4f %9.4f %9d %10.2f %9.1e%s %6s\n", mode_name[mode], ms,
                   2.0 * (double)b->nnz / (ms * 1e-3) / 1e9, tl, tr, tc, halo, mb, err, err <= BENCH_TOL ? " " : "!",
                   eff);
        }
        if (d_x) b->be->vec_free(b->be, d_x);
        if (d_y) b->be->vec_free(b->be, d_y);
        free(hx);
        pl_op_destroy(&op);
    }
    if (ctx->rank == 0) fflush(stdout);
    free(yref);
    return PL_OK;
}
