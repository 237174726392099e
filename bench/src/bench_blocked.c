/* bench_blocked.c — `bench` (bench_run.c): blocked pJDS (pJDS-b,
 * spmv/pjds_block.h) on one rank.
 *
 * Method.  pjds_block_detect finds the run length b (2..8, fill <= 5 %) of a
 * matrix made of dense blocks; if there is one, pJDS-b is built for the
 * configured sort window and for sigma = 1 (natural order), and every CUDA
 * kernel variant (or, without a GPU, the host OpenMP SpMV) is timed like the
 * other formats (median after warm-up).  The row "pJDS blocked (b = B)"
 * reports the best variant; GB/s and %floor are against the format's own
 * floor, (8 + 4/b) B/nnz + 20 B/row (one index per run of b entries), and
 * `speedup` against the CSR reference of the same run (cuSPARSE CSR on a
 * GPU, the OpenMP CSR loop on the CPU).  Results are un-permuted and checked
 * against the host CSR reference like every format.
 */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE
#include "bench_impl.h"

#define BENCH_BLOCK_MAX_FILL 0.05

typedef struct blk_arg {
    pl_backend *be;
    const pjds_block *h;
#if PJDS_HAVE_CUDA
    const pl_cuda_pjds_block *d;
#endif
    int variant;
    const double *x;
    double *y;
} blk_arg;

static int launch_blocked(void *p)
{
    blk_arg *a = p;
#if PJDS_HAVE_CUDA
    if (a->d) return pl_cuda_pjds_block_spmv(a->be, a->d, a->variant, a->x, a->y);
#endif
    pjds_block_spmv(a->h, a->x, a->y);
    return PL_OK;
}

/* ms of the CSR reference row of this run (cuSPARSE CSR or the OpenMP loop), < 0 if none. */
static double csr_ms(const bench *b, const char **name)
{
    const char *want = b->on_gpu ? "cuSPARSE CSR" : "CSR (OpenMP loop)";
    *name = want;
    for (int i = 0; i < b->nrows; i++)
        if (!strcmp(b->rows[i].format, want) && b->rows[i].ms > 0) return b->rows[i].ms;
    return -1.0;
}

/* One sort window: build, time every variant, fill the row. */
static int run_one(bench *b, int bs, double fill, int64_t sigma, bench_row *r, double *d_x, double *d_y)
{
    const int C = b->ctx->cfg.spmv.chunk_height;
    pjds_block p;
    double *hx = NULL;
    int rc = PL_OK;
#if PJDS_HAVE_CUDA
    pl_cuda_pjds_block *d = NULL;
#else
    (void)d_x, (void)d_y; /* device vectors: GPU only */
#endif
    PL_CALL(pjds_block_create((int32_t)b->n, b->A->row_ptr, b->lcol, b->A->val, bs, C, sigma, &p));
    r->sigma = p.sort_window;
    r->bytes_dev = (double)pjds_block_bytes(&p);
    hx = malloc((size_t)(b->n ? b->n : 1) * sizeof *hx);
    PL_CHECK_GOTO(hx, PL_ERR_MEM, out, rc, "out of host memory");
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < b->n; i++) hx[i] = b->x[p.perm[i]];
    char others[120] = "";
    if (b->on_gpu) {
#if PJDS_HAVE_CUDA
        size_t used = 0;
        PL_CALL_GOTO(pl_cuda_pjds_block_upload(b->be, &p, &d), out, rc);
        r->bytes_dev = (double)pl_cuda_pjds_block_bytes(d);
        PL_CALL_GOTO(b->be->upload(b->be, d_x, hx, (size_t)b->n), out, rc);
        int best = -1;
        double best_ms = -1.0, err = -1.0;
        for (int v = 0; v < pl_cuda_pjds_block_nvariants(); v++) {
            blk_arg a = {b->be, &p, d, v, d_x, d_y};
            double ms = -1.0, e = -1.0;
            PL_CALL_GOTO(b->be->set(b->be, (size_t)b->n, NAN, d_y), out, rc);
            PL_CALL_GOTO(bench_time_launch(b->be, launch_blocked, &a, b->repeats, &ms), out, rc);
            PL_CALL_GOTO(bench_check_y(b, b->be, d_y, p.perm, &e), out, rc);
            if (!(e <= BENCH_TOL))
                pl_warn("bench: pJDS blocked kernel %s: relative error %.3e against the CSR reference",
                        pl_cuda_pjds_block_variant_name(v), e);
            if (e > err || e != e) err = e;
            if (used < sizeof others)
                used += (size_t)snprintf(others + used, sizeof others - used, "%s%s %.4f", v ? ", " : "",
                                         pl_cuda_pjds_block_variant_name(v), ms);
            if (e <= BENCH_TOL && (best < 0 || ms < best_ms)) best = v, best_ms = ms;
        }
        r->ms = best_ms;
        r->relerr = err;
        if (best >= 0) snprintf(r->variant, sizeof r->variant, "b%d-%s", bs, pl_cuda_pjds_block_variant_name(best));
#endif
    } else {
        double *y = NULL;
        y = malloc((size_t)(b->n ? b->n : 1) * sizeof *y);
        PL_CHECK_GOTO(y, PL_ERR_MEM, out, rc, "out of host memory");
        blk_arg a = {b->be, &p,
#if PJDS_HAVE_CUDA
                     NULL,
#endif
                     0, hx, y};
        rc = bench_time_launch(b->be, launch_blocked, &a, b->repeats, &r->ms);
        if (rc == PL_OK) r->relerr = bench_rel_error(b, y, p.perm);
        free(y);
        PL_CALL_GOTO(rc, out, rc);
        snprintf(r->variant, sizeof r->variant, "b%d-omp", bs);
        snprintf(others, sizeof others, "%d threads", omp_get_max_threads());
    }
    {
        const char *cname = NULL;
        double cms = csr_ms(b, &cname);
        char sp[64] = "";
        if (cms > 0 && r->ms > 0) {
            r->speedup = cms / r->ms;
            snprintf(sp, sizeof sp, "%.2fx vs %s; ", r->speedup, cname);
        }
        snprintf(r->note, sizeof r->note, "%sfloor (8+4/%d) B/nnz+20 B/row; fill %.2f%%; %s", sp, bs, 100.0 * fill,
                 others);
    }
out:
#if PJDS_HAVE_CUDA
    pl_cuda_pjds_block_free(b->be, &d);
#endif
    free(hx);
    pjds_block_destroy(&p);
    return rc;
}

void bench_run_blocked(bench *b, double *d_x, double *d_y)
{
    int bs = 1;
    double fill = 0.0, fob[PJDS_BLOCK_MAX_B + 1];
    int rc = pjds_block_detect((int32_t)b->n, (int32_t)b->n, b->A->row_ptr, b->lcol, BENCH_BLOCK_MAX_FILL, &bs, &fill,
                               fob);
    if (rc != PL_OK) {
        bench_row_fail(bench_add_row(b, "pJDS blocked", "-", -1), rc);
        return;
    }
    if (bs == 1) {
        bench_row *r = bench_add_row(b, "pJDS blocked (none)", "-", -1);
        if (!r) return;
        size_t used = (size_t)snprintf(r->note, sizeof r->note, "no run length with fill <= %.0f%%: fill",
                                       100.0 * BENCH_BLOCK_MAX_FILL);
        for (int k = 2; k <= PJDS_BLOCK_MAX_B && used < sizeof r->note; k++)
            if (fob[k] >= 0)
                used += (size_t)snprintf(r->note + used, sizeof r->note - used, " b%d %.0f%%", k, 100.0 * fob[k]);
        r->ms = -3.0;
        return;
    }
    const int64_t nnz = b->nnz;
    int64_t sig[2] = {b->ctx->cfg.spmv.sort_window, 1};
    if (sig[0] <= 0 || sig[0] >= b->n) sig[0] = 0;
    int nsig = (sig[0] == 1 || b->n <= 1) ? 1 : 2;
    for (int s = 0; s < nsig; s++) {
        char name[48];
        snprintf(name, sizeof name, "pJDS blocked (b = %d)", bs);
        pl_info("bench: %s, sort window %lld", name, (long long)sig[s]);
        bench_row *r = bench_add_row(b, name, "-", sig[s]);
        if (!r) return;
        r->bmin = (8.0 + 4.0 / bs) * (double)nnz + 20.0 * (double)b->n;
        int e = run_one(b, bs, fill, sig[s], r, d_x, d_y);
        if (e != PL_OK) bench_row_fail(r, e);
    }
}
