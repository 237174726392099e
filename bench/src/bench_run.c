/* bench_run.c — `pjds-bench CONFIG` (also `pjds-lanczos bench CONFIG`): time y = A x on the configured
 * matrix for several storage formats in one process and report, per format,
 * the median time, GF/s, effective GB/s, % of the memory floor, device
 * bytes and the relative error against a host CSR reference.
 *
 * Method.  Minimal traffic of one SpMV (DESIGN.md, the seed paper's Eq. 1-2):
 *     B_min = 12 nnz + 20 n  bytes   (8 value + 4 index per entry; x read
 *                                     once, y written once, 4 B row length)
 * floor = B_min / copy bandwidth, where the copy bandwidth (bytes read +
 * written per second) is measured in the same run: cudaMemcpy device to
 * device of a 1 GiB buffer on a GPU, a parallel memcpy of 256 MiB on the
 * host.  Times are medians of [spmv] repeats runs after a warm-up, each run
 * timed with CUDA events (GPU) or the wall clock (CPU).
 *
 * Formats on a GPU (one rank): pJDS with our kernel family (every variant x
 * the sort windows 1, 1024, 8192, 65536, 262144, all and the configured
 * one), ELLPACK-R (one chunk of all rows, padded to the longest row, our
 * kernel with row-length bounds), cuSPARSE CSR (original order), cuSPARSE
 * sliced ELLPACK (slice C, unsorted; and on the pJDS arrays as an
 * independent oracle), the operator of `solve` (pl_op_apply), and the CPU
 * backend's pJDS.  Without a GPU (or backend = cpu): the CPU backend's pJDS
 * per sort window and an OpenMP CSR loop.  With several MPI ranks: the
 * distributed operator per exchange mode, with the time split into local
 * SpMV, remote SpMV and exposed communication (pl_op_timings, measured in a
 * second pass with detailed timing, which synchronises between phases), and
 * the parallel efficiency against the whole matrix timed as one rank on
 * rank 0 in the same run (bench_reference).
 *
 * x is a deterministic function of the global row index, so every format
 * (and every rank) sees the same vector; results are un-permuted and
 * compared with the reference computed from the CSR rows on the host.
 * Vector ops (GPU, one rank): median GPU (event) and wall times of the
 * dense backend ops of Lanczos at the matrix's n: gemv_t, gemv_n (k = 8,
 * 16, 24) and gemm (k = 8, 16, 24, m = k / 2) with our tall-skinny kernels
 * and with cuBLAS (pl_cuda_set_ts_cublas), dot and axpy (cuBLAS), each with
 * GB/s of its minimal traffic and % of the copy bandwidth; gemv_t results
 * of the two are compared.
 * Output: a table on stdout (rank 0); JSON to the file named by the
 * environment variable PJDS_BENCH_JSON (or the --json option, which
 * bench_main.c turns into that variable).
 *
 * Files: bench_main.c (the program: arguments, MPI, configuration),
 * bench_run.c (this: the flow of one rank and the entry),
 * bench_impl.h (shared structs and helpers), bench_util.c (timing, errors,
 * launchers), bench_formats.c (the formats), bench_blocked.c (blocked
 * pJDS), bench_vecops.c (vector ops), bench_spmm.c (SpMMV), bench_report.c
 * (table and JSON), bench_mpi.c (several ranks), cusparse_ref.cu (the
 * cuSPARSE peer).
 */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE /* sysconf(_SC_AVPHYS_PAGES) */
#include "bench_impl.h"

/* ---- one rank ----------------------------------------------------------------- */

static int add_window(bench *b, int64_t s)
{
    int64_t canon = (s <= 0 || s >= b->n) ? 0 : s;
    for (int w = 0; w < b->nwin; w++)
        if (b->windows[w] == canon) return w;
    if (b->nwin >= BENCH_MAX_WINDOWS) return -1;
    b->windows[b->nwin] = canon;
    return b->nwin++;
}

/* The rows of the main table from the sweep: the best and the naive kernel at
 * the configured window wcfg, and the best window and kernel where that is
 * another window.  Returns the best kernel variant that bounds its loop by the
 * row length (for ELLPACK-R). */
static int sweep_rows(bench *b, int wcfg)
{
    /* best variant at the configured window, and the best row-length-bound one */
    int best = -1, best_rl = 0;
    for (int v = 0; v < b->nvar; v++) {
        double ms = b->sweep[wcfg][v];
        if (ms > 0 && (best < 0 || ms < b->sweep[wcfg][best])) best = v;
#if PJDS_HAVE_CUDA
        if (b->on_gpu && ms > 0 && (b->sweep[wcfg][best_rl] <= 0 || ms < b->sweep[wcfg][best_rl]) &&
            strncmp(bench_variant_name(b, v), "cw", 2) != 0)
            best_rl = v;
#endif
    }
    bench_row *r = bench_add_row(b, "pJDS (best kernel)", best >= 0 ? bench_variant_name(b, best) : "-", b->windows[wcfg]);
    if (r && best >= 0) {
        r->ms = b->sweep[wcfg][best];
        r->relerr = b->sweep_err[wcfg];
        for (int i = 0; i < b->nrows; i++)
            if (!strcmp(b->rows[i].format, "pJDS footprint")) r->bytes_dev = b->rows[i].bytes_dev;
    }
    if (b->nvar > 1) {
        bench_row *q = bench_add_row(b, "pJDS (naive kernel)", bench_variant_name(b, 0), b->windows[wcfg]);
        if (q) {
            q->ms = b->sweep[wcfg][0];
            q->relerr = b->sweep_err[wcfg];
            q->bytes_dev = r ? r->bytes_dev : 0;
        }
    }
    /* best over all windows */
    int bw = -1, bv = -1;
    for (int w = 0; w < b->nwin; w++)
        for (int v = 0; v < b->nvar; v++)
            if (b->sweep[w][v] > 0 && (bw < 0 || b->sweep[w][v] < b->sweep[bw][bv])) bw = w, bv = v;
    if (bw >= 0 && bw != wcfg) {
        bench_row *q = bench_add_row(b, "pJDS (best window+kernel)", bench_variant_name(b, bv), b->windows[bw]);
        if (q) {
            q->ms = b->sweep[bw][bv];
            q->relerr = b->sweep_err[bw];
            snprintf(q->note, sizeof q->note, "set [spmv] sort_window = %lld for this", (long long)b->windows[bw]);
        }
    }
    return best_rl;
}

static int bench_local(bench *b)
{
    app_ctx *ctx = b->ctx;
    const int64_t n = b->n;
    int rc = PL_OK;
    double *d_x = NULL, *d_y = NULL, *hx = NULL;
    int32_t *perm = NULL, *iperm = NULL, *lcolp = NULL;

    /* the sweep */
    const int64_t sweep[] = {1, 1024, 8192, 65536, 262144, 0};
    for (size_t i = 0; i < sizeof sweep / sizeof *sweep; i++) add_window(b, sweep[i]);
    int wcfg = add_window(b, ctx->cfg.spmv.sort_window);
    b->nvar = 1;
#if PJDS_HAVE_CUDA
    if (b->on_gpu) {
        b->nvar = pl_cuda_spmv_nvariants();
        if (b->nvar > BENCH_MAX_VARIANTS) b->nvar = BENCH_MAX_VARIANTS;
        for (int v = 0; v < b->nvar; v++) snprintf(b->varname[v], sizeof b->varname[v], "%s", pl_cuda_spmv_variant_name(v));
    }
#endif
    PL_MALLOC(perm, n ? n : 1);
    PL_MALLOC(iperm, n ? n : 1);
    PL_MALLOC(lcolp, b->nnz ? b->nnz : 1);
    PL_MALLOC(hx, n ? n : 1);
    PL_CALL_GOTO(b->be->vec_alloc(b->be, (size_t)n, &d_x), out, rc);
    PL_CALL_GOTO(b->be->vec_alloc(b->be, (size_t)n, &d_y), out, rc);

    for (int w = 0; w < b->nwin; w++) {
        pl_info("bench: sort window %lld (%d/%d)", (long long)b->windows[w], w + 1, b->nwin);
        int e = bench_run_window(b, w, w == wcfg, d_x, d_y, perm, iperm, lcolp, hx);
        if (e != PL_OK) {
            bench_row *r = bench_add_row(b, "pJDS sweep window", "-", b->windows[w]);
            bench_row_fail(r, e);
        }
    }
    int best_rl = sweep_rows(b, wcfg);
    pl_info("bench: ELLPACK-R");
    bench_run_ellpack_r(b, d_x, d_y, best_rl);
#if PJDS_HAVE_CUDA
    if (b->on_gpu) {
        pl_info("bench: cuSPARSE CSR and sliced ELLPACK");
        bench_run_cusparse_csr(b, d_x, d_y);
        bench_run_cusparse_sell(b, d_x, d_y);
    }
#endif
    if (!b->on_gpu) {
        bench_row *r = bench_add_row(b, "CSR (OpenMP loop)", "omp", -1);
        double *y = malloc((size_t)(n ? n : 1) * sizeof *y);
        if (r && y) {
            csr_arg a = {b, b->x, y};
            int e = bench_time_launch(b->be, bench_launch_host_csr, &a, b->repeats, &r->ms);
            if (e == PL_OK) r->relerr = bench_rel_error(b, y, NULL);
            else bench_row_fail(r, e);
            r->bytes_dev = 12.0 * (double)b->nnz + 8.0 * (double)(n + 1);
            snprintf(r->note, sizeof r->note, "%d threads", omp_get_max_threads());
        }
        free(y);
    }
    bench_run_blocked(b, d_x, d_y); /* pJDS-b, when the matrix has dense blocks */
    /* the solve path: default kernel */
#if PJDS_HAVE_CUDA
    if (b->on_gpu) {
        int dv = pl_cuda_spmv_variant_default();
        const char *env = getenv("PJDS_CUDA_VARIANT");
        if (!env || !*env) (void)pl_cuda_set_variant(b->be, dv);
        (void)pl_cuda_set_block_mode(b->be, 1); /* as solve: pJDS-b when the rows store runs */
    }
#endif
    pl_info("bench: operator");
    bench_run_op(b);
    pl_info("bench: SpMMV");
    bench_run_spmm(b);
#if PJDS_HAVE_CUDA
    if (b->on_gpu) {
        pl_info("bench: vector ops");
        bench_run_vecops(b);
    }
#endif
out:
    if (d_x) b->be->vec_free(b->be, d_x);
    if (d_y) b->be->vec_free(b->be, d_y);
    free(perm);
    free(iperm);
    free(lcolp);
    free(hx);
    return rc;
}

/* ---- entry ------------------------------------------------------------------- */

int bench_run(app_ctx *ctx)
{
    pl_csr A;
    app_matrix_info mi;
    memset(&A, 0, sizeof A);
    PL_CALL(app_build_rows(ctx, &A, &mi));
    int rc = PL_OK;
    bench *b = calloc(1, sizeof *b);
    PL_CHECK_GOTO(b, PL_ERR_MEM, out, rc, "out of host memory");
    b->ctx = ctx;
    b->A = &A;
    b->n = A.nrows;
    b->nnz = pl_csr_nnz(&A);
    b->repeats = ctx->cfg.spmv.repeats > 0 ? ctx->cfg.spmv.repeats : 100;
    PL_CHECK_GOTO(b->n <= INT32_MAX, PL_ERR_INPUT, out, rc,
                  "bench: %lld rows on one rank exceed int32 local indices: run with more MPI ranks", (long long)b->n);
    PL_CALL_GOTO(app_row_stats(ctx, &A, &b->len, &b->st), out, rc);
    {
        int64_t nglob = b->n, nnzg = b->nnz;
        MPI_Allreduce(&b->n, &nglob, 1, MPI_INT64_T, MPI_SUM, ctx->comm);
        MPI_Allreduce(&b->nnz, &nnzg, 1, MPI_INT64_T, MPI_SUM, ctx->comm);
        b->bmin = 12.0 * (double)nnzg + 20.0 * (double)nglob;
        if (ctx->size > 1) b->n = nglob, b->nnz = nnzg;
    }

    /* backend */
    int kind = ctx->cfg.spmv.backend;
    if (kind == PL_BACKEND_AUTO && pl_cuda_device_count() == 0) {
        if (ctx->rank == 0)
            printf("bench: no CUDA device%s: running the CPU backend formats\n",
                   PJDS_HAVE_CUDA ? " visible" : " (built without CUDA)");
        kind = PL_BACKEND_CPU;
    }
    ctx->cfg.spmv.backend = kind; /* one GPU per rank, as in solve (app_backend_create) */
    PL_CALL_GOTO(app_backend_create(ctx, &b->be), out, rc);
    b->on_gpu = bench_is_gpu(b->be);
    /* [spmv] sort_window = auto: the window pl_op_create uses on this backend,
     * so the sweep's configured column, the blocked rows (bench_blocked.c) and
     * the operator rows (bench_formats.c, bench_mpi.c) all time it */
    ctx->cfg.spmv.sort_window = pl_sort_window_resolve(ctx->cfg.spmv.sort_window, b->be);

    if (ctx->size > 1) {
        if (ctx->rank == 0)
            printf("bench: %d ranks: timing the distributed operator per exchange mode (the format and\n"
                   "kernel comparison runs with one rank)\n", ctx->size);
        PL_CALL_GOTO(bench_mpi(b), out, rc);
        goto out;
    }

    /* one rank: original-order inputs and the host reference */
#if PJDS_HAVE_CUDA
    if (b->on_gpu) (void)pl_cuda_set_block_mode(b->be, 0); /* plain pJDS in the format rows; on for the operator */
#endif
    b->lcol = malloc((size_t)(b->nnz ? b->nnz : 1) * sizeof *b->lcol);
    b->x = malloc((size_t)(b->n ? b->n : 1) * sizeof *b->x);
    b->yref = malloc((size_t)(b->n ? b->n : 1) * sizeof *b->yref);
    PL_CHECK_GOTO(b->lcol && b->x && b->yref, PL_ERR_MEM, out, rc, "out of host memory");
#pragma omp parallel for schedule(static)
    for (int64_t k = 0; k < b->nnz; k++) b->lcol[k] = (int32_t)A.col[k];
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < b->n; i++) b->x[i] = bench_xval(i);
    {
        csr_arg a = {b, b->x, b->yref};
        (void)bench_launch_host_csr(&a);
    }

    if (b->on_gpu) {
#if PJDS_HAVE_CUDA
        int dev = 0;
        char name[96] = "";
        (void)pl_cuda_device_name(b->be, name, sizeof name, &dev);
        snprintf(b->device, sizeof b->device, "GPU %d: %s", dev, name);
        size_t bytes = (size_t)1 << 30;
        if (pl_backend_mem_check(b->be, 2.5 * (double)bytes) != PL_OK) {
            pl_error_clear();
            bytes >>= 2;
        }
        if (pl_cuda_copy_bandwidth(b->be, bytes, 20, &b->copy_gbs) != PL_OK) {
            pl_warn("bench: copy bandwidth measurement failed: %s", pl_error_message());
            pl_error_clear();
        }
        if (pl_backend_cpu_create(&b->cpu) != PL_OK) {
            pl_warn("bench: no CPU backend for the cross-check: %s", pl_error_message());
            pl_error_clear();
            b->cpu = NULL;
        }
#endif
    } else {
        b->copy_gbs = bench_host_copy_gbs();
    }
    rc = bench_local(b);
    if (ctx->rank == 0) {
        bench_print_report(b, stdout);
        const char *jp = getenv("PJDS_BENCH_JSON");
        if (jp && *jp) {
            int e = bench_write_json(b, jp);
            if (e != PL_OK) {
                pl_error_report();
            } else {
                pl_info("bench: JSON written to %s", jp);
            }
        }
    }
out:
    if (b) {
        if (b->cpu) pl_backend_destroy(&b->cpu);
        if (b->be) pl_backend_destroy(&b->be);
        free(b->len);
        free(b->lcol);
        free(b->x);
        free(b->yref);
        free(b);
    }
    pl_csr_destroy(&A);
    return rc;
}
