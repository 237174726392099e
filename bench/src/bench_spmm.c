/* bench_spmm.c — the SpMMV table of `bench` (README "SpMMV"):
 * Y = A X for R = 1, 2, 4, 8, 16, 32 vectors with pl_op_apply_block (the
 * operator of the solve path, so every matrix entry is loaded once per
 * block), against the operator's single SpMV and, on the GPU, cuSPARSE's
 * SpMM of the CSR reference with row-major dense blocks on the same matrix.
 * Column r of X is (1 + r / 8) x, so every column of Y is checked against
 * the host CSR reference.  The block floor: 12 B/nnz + 16 R B/row (matrix
 * once, X read once, Y written once; the gathers of X rows counted once).
 * kpm_step_ms: the fused step of the kernel polynomial method
 * (pl_op_apply_block_aug: Y = 2 A X - Y and the column dots). */
#include "bench_impl.h"

#define SPMM_NR 6
static const int spmm_Rs[SPMM_NR] = {1, 2, 4, 8, 16, 32};

typedef struct blk_arg {
    pl_op *op;
    int R;
    const double *X;
    double *Y;
} blk_arg;

static int launch_block(void *p)
{
    blk_arg *a = p;
    return pl_op_apply_block(a->op, a->R, a->X, a->Y);
}

typedef struct aug_arg {
    pl_op *op;
    int R;
    const double *X;
    double *Y, *W;
} aug_arg;

/* the KPM step: Y = 2 A X - Y with the column dots */
static int launch_aug(void *p)
{
    aug_arg *a = p;
    double d[2 * PL_SPMM_RMAX];
    return pl_op_apply_block_aug(a->op, a->R, 2.0, 0.0, -1.0, a->X, a->Y, a->W, d);
}

#if PJDS_HAVE_CUDA
typedef struct cus_arg {
    pl_backend *be;
    pl_cusparse_mat *m;
    pl_cusparse_spmm *p;
} cus_arg;

static int launch_cus(void *p)
{
    cus_arg *a = p;
    return pl_cusparse_spmm_run(a->be, a->m, a->p);
}
#endif

static double factor(int r) { return 1.0 + 0.125 * r; }

void bench_run_spmm(bench *b)
{
    if (b->ctx->size > 1) return;
    pl_backend *be = b->be;
    const int64_t n = b->n;
    const size_t nn = (size_t)(n ? n : 1) * 32;
    pl_op *op = NULL;
    double *hX = NULL, *hY = NULL, *X = NULL, *Y = NULL, *W = NULL;
    pl_op_options sc;
    app_op_options(&b->ctx->cfg.spmv, &sc);
    sc.blocks = 1; /* the operator dos builds: format = auto keeps pJDS for block products */
    int rc = pl_op_create(b->A, &sc, be, b->ctx->comm, &op);
    if (rc == PL_OK) {
        hX = malloc(nn * sizeof *hX);
        hY = malloc(nn * sizeof *hY);
        if (!hX || !hY) rc = PL_ERROR(PL_ERR_MEM, "out of host memory for the SpMMV blocks");
    }
    if (rc == PL_OK) rc = be->vec_alloc(be, nn, &X);
    if (rc == PL_OK) rc = be->vec_alloc(be, nn, &Y);
    if (rc == PL_OK) rc = be->vec_alloc(be, nn, &W);
    if (rc == PL_OK) { /* the single SpMV of the same operator */
        for (int64_t i = 0; i < n; i++) hX[i] = b->x[pl_op_global_index(op)[i]];
        rc = be->upload(be, X, hX, (size_t)n);
        op_arg a = {op, X, Y};
        if (rc == PL_OK) rc = bench_time_launch(be, bench_launch_op, &a, b->repeats, &b->spmm_single_ms);
    }
#if PJDS_HAVE_CUDA
    pl_cusparse_mat *cm = NULL;
    double *oX = NULL, *oY = NULL;
    if (rc == PL_OK && b->on_gpu) {
        int e = pl_cusparse_csr_create(be, n, n, b->A->row_ptr, b->lcol, b->A->val, &cm);
        if (e == PL_OK) e = be->vec_alloc(be, nn, &oX);
        if (e == PL_OK) e = be->vec_alloc(be, nn, &oY);
        if (e != PL_OK) pl_info("bench: cuSPARSE SpMM reference unavailable (%s)", pl_error_message());
    }
#endif
    const int64_t *g = op ? pl_op_global_index(op) : NULL;
    for (int k = 0; k < SPMM_NR && rc == PL_OK && b->nspmm < BENCH_SPMM_MAX; k++) {
        const int R = spmm_Rs[k];
        const int i_row = b->nspmm++;
        b->spmm_R[i_row] = R;
        b->spmm_ms[i_row] = b->spmm_cus_ms[i_row] = b->spmm_err[i_row] = b->spmm_aug_ms[i_row] = -1.0;
        for (int64_t i = 0; i < n; i++)
            for (int r = 0; r < R; r++) hX[i * R + r] = factor(r) * b->x[g[i]];
        rc = be->upload(be, X, hX, (size_t)n * R);
        blk_arg a = {op, R, X, Y};
        if (rc == PL_OK) rc = bench_time_launch(be, launch_block, &a, b->repeats, &b->spmm_ms[i_row]);
        if (rc == PL_OK) rc = be->download(be, hY, Y, (size_t)n * R);
        if (rc == PL_OK) {
            double err = 0.0, ymax = 0.0;
            for (int64_t i = 0; i < n; i++) ymax = fmax(ymax, fabs(b->yref[i]));
            for (int64_t i = 0; i < n; i++)
                for (int r = 0; r < R; r++) err = fmax(err, fabs(hY[i * R + r] - factor(r) * b->yref[g[i]]));
            b->spmm_err[i_row] = ymax > 0 ? err / (ymax * factor(R - 1)) : err;
        }
        if (rc == PL_OK) { /* the KPM step on a copy of Y (Y alternates sign; no overflow) */
            aug_arg ag = {op, R, X, W, Y};
            int e = be->copy(be, (size_t)n * R, Y, W);
            if (e == PL_OK) e = bench_time_launch(be, launch_aug, &ag, b->repeats, &b->spmm_aug_ms[i_row]);
            if (e != PL_OK) pl_info("bench: KPM step at R = %d failed (%s)", R, pl_error_message());
        }
#if PJDS_HAVE_CUDA
        if (rc == PL_OK && cm && oX && oY) {
            for (int64_t i = 0; i < n; i++)
                for (int r = 0; r < R; r++) hX[i * R + r] = factor(r) * b->x[i];
            pl_cusparse_spmm *cp = NULL;
            int e = be->upload(be, oX, hX, (size_t)n * R);
            if (e == PL_OK) e = pl_cusparse_spmm_create(be, cm, R, oX, oY, &cp);
            cus_arg ca = {be, cm, cp};
            if (e == PL_OK) e = bench_time_launch(be, launch_cus, &ca, b->repeats, &b->spmm_cus_ms[i_row]);
            if (e == PL_OK) snprintf(b->spmm_alg, sizeof b->spmm_alg, "%s", pl_cusparse_spmm_alg(cp));
            else pl_info("bench: cuSPARSE SpMM at R = %d failed (%s)", R, pl_error_message());
            pl_cusparse_spmm_destroy(&cp);
        }
#endif
    }
    if (rc != PL_OK) pl_info("bench: SpMMV table stopped: %s", pl_error_message());
#if PJDS_HAVE_CUDA
    if (oX) be->vec_free(be, oX);
    if (oY) be->vec_free(be, oY);
    pl_cusparse_destroy(be, &cm);
#endif
    if (X) be->vec_free(be, X);
    if (Y) be->vec_free(be, Y);
    if (W) be->vec_free(be, W);
    free(hX);
    free(hY);
    pl_op_destroy(&op);
}

void bench_print_spmm(const bench *b, FILE *f)
{
    if (b->nspmm == 0) return;
    const double gbs_floor = b->copy_gbs;
    fprintf(f, "\nSpMMV: Y = A X for R vectors, row-major blocks (the operator of dos: format = auto keeps pJDS for blocks; median of %d)\n", b->repeats);
    fprintf(f, "single SpMV of the same operator: %.4f ms; block floor 12 B/nnz + 16 R B/row at %.0f GB/s\n",
            b->spmm_single_ms, gbs_floor);
    fprintf(f, "%3s %10s %12s %8s %7s %7s | %12s %12s %8s | %9s | %11s\n", "R", "ours_ms", "per_vec_ms", "vs_SpMV", "GB/s",
            "%floor", "cusparse_ms", "per_vec_ms", "speedup", "max_err", "kpm_step_ms");
    for (int i = 0; i < b->nspmm; i++) {
        const int R = b->spmm_R[i];
        const double bytes = 12.0 * (double)b->nnz + 16.0 * R * (double)b->n;
        char ours[80] = "-", cus[64] = "-", sp[16] = "-";
        if (b->spmm_ms[i] > 0) {
            const double gbs = bytes / (b->spmm_ms[i] * 1e-3) / 1e9;
            snprintf(ours, sizeof ours, "%10.4f %12.4f %7.3fx %7.0f %6.1f%%", b->spmm_ms[i], b->spmm_ms[i] / R,
                     b->spmm_single_ms > 0 ? b->spmm_ms[i] / R / b->spmm_single_ms : 0.0, gbs,
                     gbs_floor > 0 ? 100.0 * gbs / gbs_floor : 0.0);
        }
        if (b->spmm_cus_ms[i] > 0) {
            snprintf(cus, sizeof cus, "%12.4f %12.4f", b->spmm_cus_ms[i], b->spmm_cus_ms[i] / R);
            if (b->spmm_ms[i] > 0) snprintf(sp, sizeof sp, "%.2fx", b->spmm_cus_ms[i] / b->spmm_ms[i]);
        } else {
            snprintf(cus, sizeof cus, "%12s %12s", "-", "-");
        }
        char aug[24] = "-";
        if (b->spmm_aug_ms[i] > 0) snprintf(aug, sizeof aug, "%.4f", b->spmm_aug_ms[i]);
        fprintf(f, "%3d %s | %s %8s | %9.1e | %11s\n", R, ours, cus, sp, b->spmm_err[i], aug);
    }
    if (b->spmm_alg[0]) fprintf(f, "cuSPARSE: cusparseSpMM, CSR (int32), %s, row-major X and Y\n", b->spmm_alg);
}
