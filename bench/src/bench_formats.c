/* bench_formats.c — the storage formats that `bench` (bench_run.c) times on
 * one rank: pJDS per sort window and kernel variant (with the cuSPARSE SELL
 * oracle and the CPU backend on the configured window), ELLPACK-R, cuSPARSE
 * CSR and sliced ELLPACK, and the operator of `solve`.  Each adds its rows
 * to the bench table; failures become notes, bench goes on.
 */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE /* sysconf(_SC_AVPHYS_PAGES) */
#include "bench_impl.h"

/* ---- pJDS on a backend for one sort window -------------------------------- */

/* perm[new] = old for window sigma; lcolp = columns in the permuted basis. */
static int build_pjds(bench *b, int64_t sigma, int C, int32_t *perm, int32_t *iperm, int32_t *lcolp, pjds *p)
{
    const int32_t n = (int32_t)b->n;
    pjds_sort_perm(n, b->len, sigma, perm);
#pragma omp parallel for schedule(static)
    for (int32_t i = 0; i < n; i++) iperm[perm[i]] = i;
#pragma omp parallel for schedule(static)
    for (int64_t k = 0; k < b->nnz; k++) lcolp[k] = iperm[b->lcol[k]];
    PL_CALL(pjds_create(n, n, b->A->row_ptr, lcolp, b->A->val, perm, C, sigma, p));
    return PL_OK;
}

/* One sort window: every variant timed into b->sweep[w][], results checked.
 * On the configured window also the cuSPARSE SELL oracle on the same
 * arrays and the CPU backend's pJDS. */
int bench_run_window(bench *b, int w, int is_cfg, double *d_x, double *d_y, int32_t *perm, int32_t *iperm,
                      int32_t *lcolp, double *hx)
{
    const int C = b->ctx->cfg.spmv.chunk_height;
    const int64_t sigma = b->windows[w];
    pjds p;
    void *mat = NULL;
    int rc = PL_OK;
    for (int v = 0; v < b->nvar; v++) b->sweep[w][v] = -1.0;
    b->sweep_err[w] = -1.0;
    PL_CALL(build_pjds(b, sigma, C, perm, iperm, lcolp, &p));
    PL_CALL_GOTO(b->be->mat_create(b->be, &p, &mat), out, rc);
    for (int32_t i = 0; i < (int32_t)b->n; i++) hx[i] = b->x[perm[i]];
    PL_CALL_GOTO(b->be->upload(b->be, d_x, hx, (size_t)b->n), out, rc);
    double maxerr = 0.0;
    for (int v = 0; v < b->nvar; v++) {
        PL_CALL_GOTO(bench_set_variant(b, v), out, rc);
        spmv_arg a = {b->be, mat, d_x, d_y};
        PL_CALL_GOTO(b->be->set(b->be, (size_t)b->n, NAN, d_y), out, rc);
        PL_CALL_GOTO(bench_time_launch(b->be, bench_launch_be_spmv, &a, b->repeats, &b->sweep[w][v]), out, rc);
        double err = 0.0;
        PL_CALL_GOTO(bench_check_y(b, b->be, d_y, perm, &err), out, rc);
        if (!(err <= BENCH_TOL)) {
            pl_warn("bench: pJDS kernel %s, sigma %lld: relative error %.3e against the CSR reference",
                    bench_variant_name(b, v), (long long)sigma, err);
            b->sweep[w][v] = -2.0; /* wrong result: never "best" */
        }
        if (err > maxerr || err != err) maxerr = err;
    }
    b->sweep_err[w] = maxerr;
    PL_CALL_GOTO(bench_set_variant(b, 0), out, rc);
    if (is_cfg) {
        bench_row *r = bench_add_row(b, "pJDS footprint", "-", p.sort_window);
        if (r) {
            /* arrays of the format: values, columns, offsets, widths, row lengths */
            r->bytes_dev = 12.0 * (double)p.nent + 8.0 * (double)(p.nchunks + 1) + 4.0 * (double)p.nchunks +
                           4.0 * (double)p.nchunks * (double)p.C;
#if PJDS_HAVE_CUDA
            if (bench_is_gpu(b->be)) r->bytes_dev = (double)pl_cuda_mat_bytes(mat);
#endif
            snprintf(r->note, sizeof r->note, "C %d, %lld stored entries (%.2f%% padding)", C, (long long)p.nent,
                     p.nnz ? 100.0 * (double)(p.nent - p.nnz) / (double)p.nnz : 0.0);
            r->ms = -3.0; /* info line */
        }
#if PJDS_HAVE_CUDA
        if (bench_is_gpu(b->be)) {
            /* cuSPARSE sliced ELLPACK on the very same pJDS arrays */
            bench_row *s = bench_add_row(b, "cuSPARSE SELL on pJDS arrays", "SELL_ALG1", p.sort_window);
            pl_cusparse_mat *cm = NULL;
            int e = pl_cusparse_sell_create(b->be, &p, &cm);
            if (e == PL_OK) {
                cusparse_arg ca = {b->be, cm, d_x, d_y};
                e = bench_time_launch(b->be, bench_launch_cusparse, &ca, b->repeats, &s->ms);
                if (e == PL_OK) e = bench_check_y(b, b->be, d_y, perm, &s->relerr);
                s->bytes_dev = (double)pl_cusparse_bytes(cm);
            }
            if (e != PL_OK) bench_row_fail(s, e);
            pl_cusparse_destroy(b->be, &cm);
        }
#endif
        if (b->cpu) {
            /* the CPU backend on the same pJDS: cross-check and CPU speed */
            bench_row *s = bench_add_row(b, "pJDS CPU backend (OpenMP)", "omp", p.sort_window);
            void *cmat = NULL;
            double *cy = NULL;
            int e = b->cpu->mat_create(b->cpu, &p, &cmat);
            if (e == PL_OK) e = b->cpu->vec_alloc(b->cpu, (size_t)b->n, &cy);
            if (e == PL_OK) {
                spmv_arg a = {b->cpu, cmat, hx, cy};
                int reps = b->repeats < 10 ? b->repeats : 10;
                e = bench_time_launch(b->cpu, bench_launch_be_spmv, &a, reps, &s->ms);
                if (e == PL_OK) s->relerr = bench_rel_error(b, cy, perm);
                snprintf(s->note, sizeof s->note, "%d threads, median of %d", omp_get_max_threads(), reps);
            }
            if (e != PL_OK) bench_row_fail(s, e);
            if (cy) b->cpu->vec_free(b->cpu, cy);
            if (cmat) b->cpu->mat_destroy(b->cpu, cmat);
        }
    }
out:
    if (mat) b->be->mat_destroy(b->be, mat);
    pjds_destroy(&p);
    return rc;
}

/* ---- reference formats ------------------------------------------------------ */

/* ELLPACK-R: one chunk of all rows (C = rows rounded up to 32), every row
 * padded to the longest, column-major with stride C, row lengths as loop
 * bounds (Vazquez et al. 2011).  Built unsorted through pjds_create. */
void bench_run_ellpack_r(bench *b, double *d_x, double *d_y, int best_rl_variant)
{
    bench_row *r = bench_add_row(b, "ELLPACK-R", NULL, 1);
    if (!r) return;
    int64_t cpad = (b->n + 31) / 32 * 32;
    double bytes = (double)cpad * (double)b->st.row_len_max * 12.0 + (double)cpad * 4.0;
    int rc = PL_OK;
    pjds p;
    memset(&p, 0, sizeof p);
    void *mat = NULL;
    r->bytes_dev = bytes;
    if (cpad > INT32_MAX) {
        snprintf(r->note, sizeof r->note, "skipped: %lld rows padded exceed int32", (long long)cpad);
        return;
    }
    rc = pl_backend_mem_check(b->be, bytes + 64.0 * 1048576.0);
    if (rc == PL_OK) rc = pjds_create((int32_t)b->n, (int32_t)b->n, b->A->row_ptr, b->lcol, b->A->val, NULL,
                                      (int)(cpad ? cpad : 32), 1, &p);
    if (rc == PL_OK) rc = b->be->mat_create(b->be, &p, &mat);
    if (rc == PL_OK) {
        if (b->nvar > 1) {
            /* the naive kernel (ELLPACK-R as published) and the best row-length-bound variant */
            int cand[2] = {0, best_rl_variant};
            double best = -1.0;
            for (int i = 0; i < 2 && rc == PL_OK; i++) {
                double ms = 0.0;
                spmv_arg a = {b->be, mat, d_x, d_y};
                rc = bench_set_variant(b, cand[i]);
                if (rc == PL_OK) rc = b->be->upload(b->be, d_x, b->x, (size_t)b->n);
                if (rc == PL_OK) rc = bench_time_launch(b->be, bench_launch_be_spmv, &a, b->repeats, &ms);
                if (rc == PL_OK && (best < 0 || ms < best)) {
                    best = ms;
                    snprintf(r->variant, sizeof r->variant, "%s", bench_variant_name(b, cand[i]));
                    rc = bench_check_y(b, b->be, d_y, NULL, &r->relerr);
                }
            }
            r->ms = best;
            (void)bench_set_variant(b, 0);
        } else {
            spmv_arg a = {b->be, mat, d_x, d_y};
            rc = b->be->upload(b->be, d_x, b->x, (size_t)b->n);
            if (rc == PL_OK) rc = bench_time_launch(b->be, bench_launch_be_spmv, &a, b->repeats, &r->ms);
            if (rc == PL_OK) rc = bench_check_y(b, b->be, d_y, NULL, &r->relerr);
        }
        snprintf(r->note, sizeof r->note, "width %lld for all %lld rows", (long long)b->st.row_len_max,
                 (long long)b->n);
    }
    if (rc != PL_OK) bench_row_fail(r, rc);
    if (mat) b->be->mat_destroy(b->be, mat);
    pjds_destroy(&p);
}

#if PJDS_HAVE_CUDA
void bench_run_cusparse_csr(bench *b, double *d_x, double *d_y)
{
    bench_row *r = bench_add_row(b, "cuSPARSE CSR", "CSR_ALG1", -1);
    if (!r) return;
    pl_cusparse_mat *m = NULL;
    int rc = pl_cusparse_csr_create(b->be, b->n, b->n, b->A->row_ptr, b->lcol, b->A->val, &m);
    if (rc == PL_OK) rc = b->be->upload(b->be, d_x, b->x, (size_t)b->n);
    if (rc == PL_OK) {
        cusparse_arg a = {b->be, m, d_x, d_y};
        rc = bench_time_launch(b->be, bench_launch_cusparse, &a, b->repeats, &r->ms);
    }
    if (rc == PL_OK) rc = bench_check_y(b, b->be, d_y, NULL, &r->relerr);
    if (m) r->bytes_dev = (double)pl_cusparse_bytes(m);
    if (rc != PL_OK) bench_row_fail(r, rc);
    pl_cusparse_destroy(b->be, &m);
}

/* Sliced ELLPACK, slice C, rows in the original order (sigma = 1). */
void bench_run_cusparse_sell(bench *b, double *d_x, double *d_y)
{
    const int C = b->ctx->cfg.spmv.chunk_height;
    bench_row *r = bench_add_row(b, "cuSPARSE sliced ELLPACK", "SELL_ALG1", 1);
    if (!r) return;
    pjds p;
    pl_cusparse_mat *m = NULL;
    int rc = pjds_create((int32_t)b->n, (int32_t)b->n, b->A->row_ptr, b->lcol, b->A->val, NULL, C, 1, &p);
    if (rc == PL_OK) {
        rc = pl_cusparse_sell_create(b->be, &p, &m);
        pjds_destroy(&p);
    }
    if (rc == PL_OK) rc = b->be->upload(b->be, d_x, b->x, (size_t)b->n);
    if (rc == PL_OK) {
        cusparse_arg a = {b->be, m, d_x, d_y};
        rc = bench_time_launch(b->be, bench_launch_cusparse, &a, b->repeats, &r->ms);
    }
    if (rc == PL_OK) rc = bench_check_y(b, b->be, d_y, NULL, &r->relerr);
    if (m) r->bytes_dev = (double)pl_cusparse_bytes(m);
    snprintf(r->note, sizeof r->note, "slice %d", C);
    if (rc != PL_OK) bench_row_fail(r, rc);
    pl_cusparse_destroy(b->be, &m);
}
#endif

/* The operator of `solve` built with [spmv] format = fmt (configured sort
 * window and kernel), one rank: one row, or on the GPU with the compressed
 * format one row per compressed kernel variant (the same operator, the
 * variant switched between timings).  The compressed rows carry their own
 * floor: 4 B per non-zero + 20 B per row (the tables stay in cache). */
static void run_op_rows(bench *b, int fmt, const char *label)
{
    pl_op_options sc;
    app_op_options(&b->ctx->cfg.spmv, &sc);
    sc.format = fmt;
    pl_op *op = NULL;
    double *d_x = NULL, *d_y = NULL, *hx = NULL, *hy = NULL;
    int rc = pl_op_create(b->A, &sc, b->be, b->ctx->comm, &op);
    pl_op_info info;
    memset(&info, 0, sizeof info);
    if (rc == PL_OK) {
        pl_op_get_info(op, &info);
        const int64_t *g = pl_op_global_index(op);
        hx = malloc((size_t)(b->n ? b->n : 1) * sizeof *hx);
        hy = malloc((size_t)(b->n ? b->n : 1) * sizeof *hy);
        if (!hx || !hy) rc = PL_ERROR(PL_ERR_MEM, "out of host memory");
        if (rc == PL_OK) rc = b->be->vec_alloc(b->be, (size_t)b->n, &d_x);
        if (rc == PL_OK) rc = b->be->vec_alloc(b->be, (size_t)b->n, &d_y);
        if (rc == PL_OK) {
            for (int64_t i = 0; i < b->n; i++) hx[i] = b->x[g[i]];
            rc = b->be->upload(b->be, d_x, hx, (size_t)b->n);
        }
    }
    const int cmp = rc == PL_OK && info.format == PL_FORMAT_COMPRESSED;
    int nvar = 1, v0 = 0;
#if PJDS_HAVE_CUDA
    if (cmp && bench_is_gpu(b->be)) {
        nvar = pl_cuda_cpjds_nvariants();
        (void)pl_cuda_get_cpjds_variant(b->be, &v0);
    }
#endif
    for (int v = 0; v < nvar; v++) {
        bench_row *r = bench_add_row(b, label, NULL, info.sort_window);
        if (!r) break;
        if (rc != PL_OK) {
            bench_row_fail(r, rc);
            break;
        }
        r->bytes_dev = (double)info.device_bytes;
        if (cmp) r->bmin = 4.0 * (double)b->nnz + 20.0 * (double)b->n;
#if PJDS_HAVE_CUDA
        int cv = 0;
        if (bench_is_gpu(b->be)) {
            if (cmp) {
                (void)pl_cuda_set_cpjds_variant(b->be, v);
                snprintf(r->variant, sizeof r->variant, "%s", pl_cuda_cpjds_variant_name(v));
            } else if (pl_cuda_get_variant(b->be, &cv) == PL_OK) {
                snprintf(r->variant, sizeof r->variant, "%s", pl_cuda_spmv_variant_name(cv));
            }
        }
#endif
        op_arg a = {op, d_x, d_y};
        int e = bench_time_launch(b->be, bench_launch_op, &a, b->repeats, &r->ms);
        if (e == PL_OK) e = b->be->download(b->be, hy, d_y, (size_t)b->n);
        if (e == PL_OK) {
            const int64_t *g = pl_op_global_index(op);
            double num = 0.0, den = 0.0;
            for (int64_t i = 0; i < b->n; i++) {
                double d = hy[i] - b->yref[g[i]];
                num += d * d;
                den += b->yref[g[i]] * b->yref[g[i]];
            }
            r->relerr = den > 0 ? sqrt(num / den) : sqrt(num);
        }
        if (cmp)
            snprintf(r->note, sizeof r->note, "%lld values, %lld offsets (%d + %d bits); floor 4 B/nnz%s",
                     (long long)info.cmp_nval, (long long)info.cmp_noff, info.cmp_vbits, info.cmp_obits,
                     v == v0 ? "; the solve's kernel" : "");
        else
            snprintf(r->note, sizeof r->note, "includes the apply overhead%s%s", info.format_note[0] ? "; " : "",
                     info.format_note);
        if (e != PL_OK) bench_row_fail(r, e);
    }
#if PJDS_HAVE_CUDA
    if (cmp && bench_is_gpu(b->be)) (void)pl_cuda_set_cpjds_variant(b->be, v0);
#endif
    if (rc != PL_OK) pl_error_clear();
    if (d_x) b->be->vec_free(b->be, d_x);
    if (d_y) b->be->vec_free(b->be, d_y);
    free(hx);
    free(hy);
    pl_op_destroy(&op);
}

/* The operator of `solve` in both formats. */
void bench_run_op(bench *b)
{
    run_op_rows(b, PL_FORMAT_PJDS, "pJDS operator (format pjds)");
    run_op_rows(b, PL_FORMAT_COMPRESSED, "compressed operator");
}
