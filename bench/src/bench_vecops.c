/* bench_vecops.c — `bench` (bench_run.c) on a GPU, one rank: the dense
 * backend operations of Lanczos at the matrix's n (gemv_t, gemv_n, gemm with
 * our tall-skinny kernels and with cuBLAS; dot, axpy), GPU and wall times.
 */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE /* sysconf(_SC_AVPHYS_PAGES) */
#include "bench_impl.h"

#if PJDS_HAVE_CUDA
/* ---- vector ops (GPU): the dense products of Lanczos at the matrix's n ---- */

typedef struct vop_arg {
    pl_backend *be;
    int op; /* 0 gemv_t, 1 gemv_n, 2 gemm, 3 dot, 4 axpy */
    size_t n;
    int k, m;
    double *V, *w, *x, *W;
    double *h, *Y; /* host */
} vop_arg;

static int launch_vop(vop_arg *a)
{
    pl_backend *be = a->be;
    switch (a->op) {
    case 0: return be->gemv_t(be, a->n, a->k, a->V, a->n, a->w, a->h);
    case 1: return be->gemv_n(be, a->n, a->k, -1.0, a->V, a->n, a->h, 1.0, a->w);
    case 2: return be->gemm(be, a->n, a->k, a->m, a->V, a->n, a->Y, a->k, a->W, a->n);
    case 3: return be->dot(be, a->n, a->w, a->x, a->h);
    default: return be->axpy(be, a->n, 1e-6, a->x, a->w);
    }
}

/* Medians over BENCH_VOP_REPEATS calls after 3 warm-up calls: GPU time
 * between events around the call, and host wall time of call + sync. */
static int time_vop(vop_arg *a, double *ms, double *wall)
{
    double t[BENCH_VOP_REPEATS], tw[BENCH_VOP_REPEATS];
    for (int i = 0; i < 3; i++) PL_CALL(launch_vop(a));
    PL_CALL(a->be->sync(a->be));
    for (int i = 0; i < BENCH_VOP_REPEATS; i++) {
        double t0 = pl_wtime();
        PL_CALL(pl_cuda_timer_start(a->be));
        PL_CALL(launch_vop(a));
        PL_CALL(pl_cuda_timer_stop(a->be, &t[i]));
        tw[i] = (pl_wtime() - t0) * 1e3;
    }
    *ms = pl_median(t, BENCH_VOP_REPEATS);
    *wall = pl_median(tw, BENCH_VOP_REPEATS);
    return PL_OK;
}

void bench_run_vecops(bench *b)
{
    const size_t n = (size_t)b->n;
    const int ks[] = {8, 16, 24}, KM = 24, MM = 12;
    pl_backend *be = b->be;
    double *V = NULL, *w = NULL, *x = NULL, *W = NULL, *hv = NULL;
    double h[64], h2[64], Y[24 * 12];
    int rc = PL_OK;
    if (n == 0) return;
    PL_CALL_GOTO(pl_backend_mem_check(be, (double)n * 8.0 * (KM + MM + 2) + 1e9), out, rc);
    PL_CALL_GOTO(be->vec_alloc(be, n * KM, &V), out, rc);
    PL_CALL_GOTO(be->vec_alloc(be, n, &w), out, rc);
    PL_CALL_GOTO(be->vec_alloc(be, n, &x), out, rc);
    PL_CALL_GOTO(be->vec_alloc(be, n * MM, &W), out, rc);
    hv = malloc(n * sizeof *hv);
    PL_CHECK_GOTO(hv, PL_ERR_MEM, out, rc, "out of host memory");
    for (int c = 0; c < KM; c++) {
#pragma omp parallel for schedule(static)
        for (size_t i = 0; i < n; i++) hv[i] = bench_xval((int64_t)(i + (size_t)c * n)) / sqrt((double)n);
        PL_CALL_GOTO(be->upload(be, V + (size_t)c * n, hv, n), out, rc);
    }
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; i++) hv[i] = bench_xval((int64_t)i + 7777);
    PL_CALL_GOTO(be->upload(be, w, hv, n), out, rc);
    PL_CALL_GOTO(be->upload(be, x, hv, n), out, rc);
    for (int i = 0; i < 24 * 12; i++) Y[i] = bench_xval(i + 99) * 0.1;
    for (int i = 0; i < 64; i++) h[i] = 1e-3 * bench_xval(i + 5);
    for (int q = 0; q < 5; q++) {
        int nk = q < 3 ? 3 : 1;
        for (int ki = 0; ki < nk && b->nvops < BENCH_MAX_VOPS; ki++) {
            bench_vop *r = &b->vops[b->nvops++];
            memset(r, 0, sizeof *r);
            static const char *names[] = {"gemv_t", "gemv_n", "gemm", "dot", "axpy"};
            snprintf(r->op, sizeof r->op, "%s", names[q]);
            r->k = q < 3 ? ks[ki] : 0;
            r->m = q == 2 ? r->k / 2 : 0;
            r->diff = -1.0;
            const double nd = (double)n * 8.0;
            r->bytes = q == 0 ? nd * (r->k + 1) : q == 1 ? nd * (r->k + 2) : q == 2 ? nd * (r->k + r->m)
                     : q == 3 ? 2.0 * nd : 3.0 * nd;
            for (int impl = 0; impl < 2; impl++) {
                r->ms[impl] = r->wall_ms[impl] = -1.0;
                if (q >= 3 && impl == 0) continue; /* dot, axpy: cuBLAS only (the backend's) */
                PL_CALL_GOTO(pl_cuda_set_ts_cublas(be, impl), out, rc);
                /* h: gemv_t's result (ours in h, cuBLAS in h2, compared below), gemv_n's input,
                 * dot's result (h2[0]) */
                vop_arg a = {be, q, n, r->k, r->m, V, w, x, W, (q == 0 && impl) || q == 3 ? h2 : h, Y};
                int e = time_vop(&a, &r->ms[impl], &r->wall_ms[impl]);
                if (e != PL_OK) {
                    pl_warn("bench: vector op %s k=%d (%s): %s", r->op, r->k, impl ? "cuBLAS" : "ours",
                            pl_error_message());
                    pl_error_clear();
                    r->ms[impl] = -1.0;
                }
            }
            if (q == 0 && r->ms[0] > 0 && r->ms[1] > 0) {
                double d = 0, mx = 0;
                for (int j = 0; j < r->k; j++) {
                    d = fmax(d, fabs(h[j] - h2[j]));
                    mx = fmax(mx, fabs(h2[j]));
                }
                r->diff = mx > 0 ? d / mx : d;
            }
            /* gemv_n uses h as its input: keep it small so w stays O(1) over the calls */
            for (int j = 0; j < 64; j++) h[j] = 1e-3 * bench_xval(j + 5);
        }
    }
out:
    if (rc != PL_OK) {
        pl_warn("bench: vector ops table skipped: %s", pl_error_message());
        pl_error_clear();
    }
    (void)pl_cuda_set_ts_cublas(be, 0);
    if (V) be->vec_free(be, V);
    if (w) be->vec_free(be, w);
    if (x) be->vec_free(be, x);
    if (W) be->vec_free(be, W);
    free(hv);
}
#endif
