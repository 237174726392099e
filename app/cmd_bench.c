/* cmd_bench.c — `pjds-lanczos bench CONFIG`: time y = A x on the configured
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
 * environment variable PJDS_BENCH_JSON (or the app's --json option where
 * main.c provides it by setting that variable).
 */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE /* sysconf(_SC_AVPHYS_PAGES) */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "app.h"
#include "pl_build.h"
#include "pl_error.h"
#include "spmv.h"
#if PJDS_HAVE_CUDA
#include "cuda/pl_cuda_bench.h"
#endif

#define BENCH_MAX_ROWS 64
#define BENCH_MAX_WINDOWS 8
#define BENCH_MAX_VARIANTS 32
#define BENCH_WARMUP 5
#define BENCH_TOL 1e-12 /* relative 2-norm error that counts as agreement */

typedef struct bench_row {
    char format[48];
    char variant[32];
    int64_t sigma;     /* -1: not applicable */
    double ms;         /* median, < 0: failed / not run */
    double bytes_dev;  /* device (or host) bytes of the matrix */
    double relerr;     /* vs the host CSR reference, < 0: not checked */
    char note[200];
} bench_row;

/* One row of the vector-ops table: a dense backend op at the matrix's n. */
#define BENCH_MAX_VOPS 16
#define BENCH_VOP_REPEATS 20
typedef struct bench_vop {
    char op[16];       /* gemv_t, gemv_n, gemm, dot, axpy */
    int k, m;          /* columns of V (and of W for gemm); 0: n/a */
    double bytes;      /* minimal bytes moved per call */
    double ms[2];      /* median GPU (event) time: ours, cuBLAS; < 0: n/a */
    double wall_ms[2]; /* median host wall time per call incl. sync */
    double diff;       /* gemv_t: max |ours - cuBLAS| / max |h|; < 0: n/a */
} bench_vop;

typedef struct bench {
    app_ctx *ctx;
    const pl_csr *A;
    int64_t n, nnz;
    int32_t *len;      /* row lengths */
    int32_t *lcol;     /* int32 columns, original order (one rank) */
    double *x, *yref;  /* original order */
    double copy_gbs;   /* measured floor bandwidth */
    double bmin;       /* minimal bytes of one SpMV */
    int repeats;
    int on_gpu;
    char device[128];
    pjds_stats st;
    bench_row rows[BENCH_MAX_ROWS];
    int nrows;
    /* sort-window sweep: ms[w][v] */
    int64_t windows[BENCH_MAX_WINDOWS];
    int nwin, nvar;
    char varname[BENCH_MAX_VARIANTS][32];
    double sweep[BENCH_MAX_WINDOWS][BENCH_MAX_VARIANTS];
    double sweep_err[BENCH_MAX_WINDOWS];
    pl_backend *be;
    pl_backend *cpu;   /* CPU backend for the cross-check on GPU runs */
    /* vector-ops table (GPU, one rank): [op][impl] with impl 0 = ours, 1 = cuBLAS */
    bench_vop vops[BENCH_MAX_VOPS];
    int nvops;
} bench;

/* ---- small helpers --------------------------------------------------------- */

static double xval(int64_t g)
{
    uint64_t z = (uint64_t)g + 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    return (double)(z >> 11) * (2.0 / 9007199254740992.0) - 1.0;
}


static bench_row *add_row(bench *b, const char *format, const char *variant, int64_t sigma)
{
    if (b->nrows >= BENCH_MAX_ROWS) return NULL;
    bench_row *r = &b->rows[b->nrows++];
    memset(r, 0, sizeof *r);
    snprintf(r->format, sizeof r->format, "%s", format);
    snprintf(r->variant, sizeof r->variant, "%s", variant ? variant : "-");
    r->sigma = sigma;
    r->ms = -1.0;
    r->relerr = -1.0;
    return r;
}

/* Record a failure in the row's note and clear the error: bench goes on. */
static void row_fail(bench_row *r, int rc)
{
    const char *m = pl_error_message();
    if (r) snprintf(r->note, sizeof r->note, "failed (%s): %s", pl_error_name(rc), m && *m ? m : "?");
    pl_warn("bench: %s: %s", r ? r->format : "?", m && *m ? m : pl_error_name(rc));
    pl_error_clear();
}

static int is_gpu(const pl_backend *be) { return be && !strcmp(be->name, "cuda"); }

static int timer_start(pl_backend *be, double *t0)
{
#if PJDS_HAVE_CUDA
    if (is_gpu(be)) return pl_cuda_timer_start(be);
#endif
    PL_CALL(be->sync(be));
    *t0 = pl_wtime();
    return PL_OK;
}

static int timer_stop(pl_backend *be, double t0, double *ms)
{
#if PJDS_HAVE_CUDA
    if (is_gpu(be)) return pl_cuda_timer_stop(be, ms);
#endif
    PL_CALL(be->sync(be));
    *ms = (pl_wtime() - t0) * 1e3;
    return PL_OK;
}

typedef int (*launch_fn)(void *arg);

/* Median ms of `repeats` timed launches after BENCH_WARMUP untimed ones. */
static int time_launch(pl_backend *be, launch_fn fn, void *arg, int repeats, double *ms)
{
    double *t = NULL;
    PL_MALLOC(t, repeats);
    int rc = PL_OK;
    for (int i = 0; i < BENCH_WARMUP; i++) PL_CALL_GOTO(fn(arg), out, rc);
    PL_CALL_GOTO(be->sync(be), out, rc);
    for (int i = 0; i < repeats; i++) {
        double t0 = 0.0;
        PL_CALL_GOTO(timer_start(be, &t0), out, rc);
        PL_CALL_GOTO(fn(arg), out, rc);
        PL_CALL_GOTO(timer_stop(be, t0, &t[i]), out, rc);
    }
    *ms = pl_median(t, repeats);
out:
    free(t);
    return rc;
}

/* Relative 2-norm error of y (in the basis given by perm: y[i] is row
 * perm[i]; perm NULL: original order) against yref. */
static double rel_error(const bench *b, const double *y, const int32_t *perm)
{
    double num = 0.0, den = 0.0;
#pragma omp parallel for reduction(+ : num, den)
    for (int64_t i = 0; i < b->n; i++) {
        int64_t o = perm ? perm[i] : i;
        double d = y[i] - b->yref[o];
        num += d * d;
        den += b->yref[o] * b->yref[o];
    }
    return den > 0.0 ? sqrt(num / den) : sqrt(num);
}

/* Download a backend vector (or use it in place on the cpu) and compare. */
static int check_backend_y(bench *b, pl_backend *be, const double *d_y, const int32_t *perm, double *err)
{
    double *h = NULL;
    PL_MALLOC(h, b->n ? b->n : 1);
    int rc = be->download(be, h, d_y, (size_t)b->n);
    if (rc == PL_OK) *err = rel_error(b, h, perm);
    free(h);
    PL_CALL(rc);
    return PL_OK;
}

/* ---- launchers ------------------------------------------------------------- */

typedef struct spmv_arg {
    pl_backend *be;
    const void *mat;
    const double *x;
    double *y;
} spmv_arg;

static int launch_be_spmv(void *p)
{
    spmv_arg *a = p;
    return a->be->spmv(a->be, a->mat, a->x, a->y);
}

#if PJDS_HAVE_CUDA
typedef struct cusparse_arg {
    pl_backend *be;
    pl_cusparse_mat *m;
    const double *x;
    double *y;
} cusparse_arg;

static int launch_cusparse(void *p)
{
    cusparse_arg *a = p;
    return pl_cusparse_spmv(a->be, a->m, a->x, a->y);
}
#endif

typedef struct op_arg {
    pl_op *op;
    const double *x;
    double *y;
} op_arg;

static int launch_op(void *p)
{
    op_arg *a = p;
    return pl_op_apply(a->op, a->x, a->y);
}

/* Host CSR y = A x (OpenMP), int32 columns. */
typedef struct csr_arg {
    const bench *b;
    const double *x;
    double *y;
} csr_arg;

static int launch_host_csr(void *p)
{
    csr_arg *a = p;
    const int64_t *rp = a->b->A->row_ptr;
    const int32_t *c = a->b->lcol;
    const double *v = a->b->A->val;
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < a->b->n; i++) {
        double s = 0.0;
        for (int64_t k = rp[i]; k < rp[i + 1]; k++) s += v[k] * a->x[c[k]];
        a->y[i] = s;
    }
    return PL_OK;
}

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

static const char *variant_name(const bench *b, int v) { return b->nvar > 1 ? b->varname[v] : "omp"; }

static int set_variant(bench *b, int v)
{
#if PJDS_HAVE_CUDA
    if (is_gpu(b->be)) return pl_cuda_set_variant(b->be, v);
#endif
    (void)b;
    (void)v;
    return PL_OK;
}

/* One sort window: every variant timed into b->sweep[w][], results checked.
 * On the configured window also the cuSPARSE SELL oracle on the same
 * arrays and the CPU backend's pJDS. */
static int run_window(bench *b, int w, int is_cfg, double *d_x, double *d_y, int32_t *perm, int32_t *iperm,
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
        PL_CALL_GOTO(set_variant(b, v), out, rc);
        spmv_arg a = {b->be, mat, d_x, d_y};
        PL_CALL_GOTO(b->be->set(b->be, (size_t)b->n, NAN, d_y), out, rc);
        PL_CALL_GOTO(time_launch(b->be, launch_be_spmv, &a, b->repeats, &b->sweep[w][v]), out, rc);
        double err = 0.0;
        PL_CALL_GOTO(check_backend_y(b, b->be, d_y, perm, &err), out, rc);
        if (!(err <= BENCH_TOL)) {
            pl_warn("bench: pJDS kernel %s, sigma %lld: relative error %.3e against the CSR reference",
                    variant_name(b, v), (long long)sigma, err);
            b->sweep[w][v] = -2.0; /* wrong result: never "best" */
        }
        if (err > maxerr || err != err) maxerr = err;
    }
    b->sweep_err[w] = maxerr;
    PL_CALL_GOTO(set_variant(b, 0), out, rc);
    if (is_cfg) {
        bench_row *r = add_row(b, "pJDS footprint", "-", p.sort_window);
        if (r) {
            /* arrays of the format: values, columns, offsets, widths, row lengths */
            r->bytes_dev = 12.0 * (double)p.nent + 8.0 * (double)(p.nchunks + 1) + 4.0 * (double)p.nchunks +
                           4.0 * (double)p.nchunks * (double)p.C;
#if PJDS_HAVE_CUDA
            if (is_gpu(b->be)) r->bytes_dev = (double)pl_cuda_mat_bytes(mat);
#endif
            snprintf(r->note, sizeof r->note, "C %d, %lld stored entries (%.2f%% padding)", C, (long long)p.nent,
                     p.nnz ? 100.0 * (double)(p.nent - p.nnz) / (double)p.nnz : 0.0);
            r->ms = -3.0; /* info line */
        }
#if PJDS_HAVE_CUDA
        if (is_gpu(b->be)) {
            /* cuSPARSE sliced ELLPACK on the very same pJDS arrays */
            bench_row *s = add_row(b, "cuSPARSE SELL on pJDS arrays", "SELL_ALG1", p.sort_window);
            pl_cusparse_mat *cm = NULL;
            int e = pl_cusparse_sell_create(b->be, &p, &cm);
            if (e == PL_OK) {
                cusparse_arg ca = {b->be, cm, d_x, d_y};
                e = time_launch(b->be, launch_cusparse, &ca, b->repeats, &s->ms);
                if (e == PL_OK) e = check_backend_y(b, b->be, d_y, perm, &s->relerr);
                s->bytes_dev = (double)pl_cusparse_bytes(cm);
            }
            if (e != PL_OK) row_fail(s, e);
            pl_cusparse_destroy(b->be, &cm);
        }
#endif
        if (b->cpu) {
            /* the CPU backend on the same pJDS: cross-check and CPU speed */
            bench_row *s = add_row(b, "pJDS CPU backend (OpenMP)", "omp", p.sort_window);
            void *cmat = NULL;
            double *cy = NULL;
            int e = b->cpu->mat_create(b->cpu, &p, &cmat);
            if (e == PL_OK) e = b->cpu->vec_alloc(b->cpu, (size_t)b->n, &cy);
            if (e == PL_OK) {
                spmv_arg a = {b->cpu, cmat, hx, cy};
                int reps = b->repeats < 10 ? b->repeats : 10;
                e = time_launch(b->cpu, launch_be_spmv, &a, reps, &s->ms);
                if (e == PL_OK) s->relerr = rel_error(b, cy, perm);
                snprintf(s->note, sizeof s->note, "%d threads, median of %d", omp_get_max_threads(), reps);
            }
            if (e != PL_OK) row_fail(s, e);
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
static void run_ellpack_r(bench *b, double *d_x, double *d_y, int best_rl_variant)
{
    bench_row *r = add_row(b, "ELLPACK-R", NULL, 1);
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
                rc = set_variant(b, cand[i]);
                if (rc == PL_OK) rc = b->be->upload(b->be, d_x, b->x, (size_t)b->n);
                if (rc == PL_OK) rc = time_launch(b->be, launch_be_spmv, &a, b->repeats, &ms);
                if (rc == PL_OK && (best < 0 || ms < best)) {
                    best = ms;
                    snprintf(r->variant, sizeof r->variant, "%s", variant_name(b, cand[i]));
                    rc = check_backend_y(b, b->be, d_y, NULL, &r->relerr);
                }
            }
            r->ms = best;
            (void)set_variant(b, 0);
        } else {
            spmv_arg a = {b->be, mat, d_x, d_y};
            rc = b->be->upload(b->be, d_x, b->x, (size_t)b->n);
            if (rc == PL_OK) rc = time_launch(b->be, launch_be_spmv, &a, b->repeats, &r->ms);
            if (rc == PL_OK) rc = check_backend_y(b, b->be, d_y, NULL, &r->relerr);
        }
        snprintf(r->note, sizeof r->note, "width %lld for all %lld rows", (long long)b->st.row_len_max,
                 (long long)b->n);
    }
    if (rc != PL_OK) row_fail(r, rc);
    if (mat) b->be->mat_destroy(b->be, mat);
    pjds_destroy(&p);
}

#if PJDS_HAVE_CUDA
static void run_cusparse_csr(bench *b, double *d_x, double *d_y)
{
    bench_row *r = add_row(b, "cuSPARSE CSR", "CSR_ALG1", -1);
    if (!r) return;
    pl_cusparse_mat *m = NULL;
    int rc = pl_cusparse_csr_create(b->be, b->n, b->n, b->A->row_ptr, b->lcol, b->A->val, &m);
    if (rc == PL_OK) rc = b->be->upload(b->be, d_x, b->x, (size_t)b->n);
    if (rc == PL_OK) {
        cusparse_arg a = {b->be, m, d_x, d_y};
        rc = time_launch(b->be, launch_cusparse, &a, b->repeats, &r->ms);
    }
    if (rc == PL_OK) rc = check_backend_y(b, b->be, d_y, NULL, &r->relerr);
    if (m) r->bytes_dev = (double)pl_cusparse_bytes(m);
    if (rc != PL_OK) row_fail(r, rc);
    pl_cusparse_destroy(b->be, &m);
}

/* Sliced ELLPACK, slice C, rows in the original order (sigma = 1). */
static void run_cusparse_sell(bench *b, double *d_x, double *d_y)
{
    const int C = b->ctx->cfg.spmv.chunk_height;
    bench_row *r = add_row(b, "cuSPARSE sliced ELLPACK", "SELL_ALG1", 1);
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
        rc = time_launch(b->be, launch_cusparse, &a, b->repeats, &r->ms);
    }
    if (rc == PL_OK) rc = check_backend_y(b, b->be, d_y, NULL, &r->relerr);
    if (m) r->bytes_dev = (double)pl_cusparse_bytes(m);
    snprintf(r->note, sizeof r->note, "slice %d", C);
    if (rc != PL_OK) row_fail(r, rc);
    pl_cusparse_destroy(b->be, &m);
}
#endif

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

static void run_vecops(bench *b)
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
        for (size_t i = 0; i < n; i++) hv[i] = xval((int64_t)(i + (size_t)c * n)) / sqrt((double)n);
        PL_CALL_GOTO(be->upload(be, V + (size_t)c * n, hv, n), out, rc);
    }
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; i++) hv[i] = xval((int64_t)i + 7777);
    PL_CALL_GOTO(be->upload(be, w, hv, n), out, rc);
    PL_CALL_GOTO(be->upload(be, x, hv, n), out, rc);
    for (int i = 0; i < 24 * 12; i++) Y[i] = xval(i + 99) * 0.1;
    for (int i = 0; i < 64; i++) h[i] = 1e-3 * xval(i + 5);
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
            for (int j = 0; j < 64; j++) h[j] = 1e-3 * xval(j + 5);
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

/* The operator of `solve` (configured sort window and kernel), one rank. */
static void run_op(bench *b)
{
    bench_row *r = add_row(b, "pJDS operator (solve path)", NULL, b->ctx->cfg.spmv.sort_window);
    if (!r) return;
    pl_op *op = NULL;
    double *d_x = NULL, *d_y = NULL, *hx = NULL, *hy = NULL;
    int rc = pl_op_create(b->A, &b->ctx->cfg.spmv, b->be, b->ctx->comm, &op);
    if (rc == PL_OK) {
        pl_op_info info;
        pl_op_get_info(op, &info);
        r->bytes_dev = (double)info.device_bytes;
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
        if (rc == PL_OK) {
            op_arg a = {op, d_x, d_y};
            rc = time_launch(b->be, launch_op, &a, b->repeats, &r->ms);
        }
        if (rc == PL_OK) rc = b->be->download(b->be, hy, d_y, (size_t)b->n);
        if (rc == PL_OK) {
            double num = 0.0, den = 0.0;
            for (int64_t i = 0; i < b->n; i++) {
                double d = hy[i] - b->yref[g[i]];
                num += d * d;
                den += b->yref[g[i]] * b->yref[g[i]];
            }
            r->relerr = den > 0 ? sqrt(num / den) : sqrt(num);
        }
#if PJDS_HAVE_CUDA
        int v = 0;
        if (is_gpu(b->be) && pl_cuda_get_variant(b->be, &v) == PL_OK)
            snprintf(r->variant, sizeof r->variant, "%s", pl_cuda_spmv_variant_name(v));
#endif
        snprintf(r->note, sizeof r->note, "includes the apply overhead (sync, counters)");
    }
    if (rc != PL_OK) row_fail(r, rc);
    if (d_x) b->be->vec_free(b->be, d_x);
    if (d_y) b->be->vec_free(b->be, d_y);
    free(hx);
    free(hy);
    pl_op_destroy(&op);
}

/* Host copy bandwidth: parallel memcpy of 256 MiB, bytes read + written. */
static double host_copy_gbs(void)
{
    size_t n = (size_t)32 << 20; /* doubles */
    double *a = malloc(n * sizeof *a), *c = malloc(n * sizeof *c);
    if (!a || !c) {
        free(a);
        free(c);
        return 0.0;
    }
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; i++) a[i] = c[i] = 1.0;
    double t[11];
    for (int k = 0; k < 11; k++) {
        double t0 = pl_wtime();
#pragma omp parallel
        {
            int nt = omp_get_num_threads(), id = omp_get_thread_num();
            size_t lo = n * (size_t)id / (size_t)nt, hi = n * (size_t)(id + 1) / (size_t)nt;
            memcpy(c + lo, a + lo, (hi - lo) * sizeof *a);
        }
        t[k] = pl_wtime() - t0;
    }
    double m = pl_median(t, 11);
    free(a);
    free(c);
    return 2.0 * (double)n * sizeof(double) / m / 1e9;
}

/* ---- output ------------------------------------------------------------------ */

static void fmt_bytes(double b, char *s, size_t len)
{
    if (b <= 0) snprintf(s, len, "-");
    else snprintf(s, len, "%.1f MB", b / 1e6);
}

static void print_report(bench *b, FILE *f)
{
    const double floor_ms = b->copy_gbs > 0 ? b->bmin / (b->copy_gbs * 1e9) * 1e3 : 0.0;
    fprintf(f, "\n== pjds-lanczos bench: %s ==\n", b->on_gpu ? b->device : "CPU backend (no GPU used)");
    fprintf(f, "matrix: %lld rows, %lld nnz (%.2f per row, max %lld), C = %d\n", (long long)b->n,
            (long long)b->nnz, b->n ? (double)b->nnz / (double)b->n : 0.0, (long long)b->st.row_len_max,
            b->ctx->cfg.spmv.chunk_height);
    fprintf(f, "copy bandwidth: %.0f GB/s (%s); minimal traffic 12 B/nnz + 20 B/row = %.1f MB; floor %.4f ms\n",
            b->copy_gbs, b->on_gpu ? "cudaMemcpy D2D, 1 GiB" : "host memcpy, 256 MiB", b->bmin / 1e6, floor_ms);
    fprintf(f, "pJDS data reduction vs ELLPACK (C = %d): %.1f%% (%lld vs %lld stored entries)\n",
            b->ctx->cfg.spmv.chunk_height, 100.0 * b->st.pjds_reduction_vs_ellpack, (long long)b->st.pjds_entries,
            (long long)b->st.ellpack_entries);
    fprintf(f, "times: median of %d runs after %d warm-up runs\n\n", b->repeats, BENCH_WARMUP);

    if (b->nwin > 0) {
        fprintf(f, "sort-window sweep: pJDS time in ms per kernel variant (x = wrong result, - = not run)\n");
        fprintf(f, "%-20s", "variant \\ sigma");
        for (int w = 0; w < b->nwin; w++) {
            char s[24];
            if (b->windows[w] <= 0 || b->windows[w] >= b->n) snprintf(s, sizeof s, "all");
            else snprintf(s, sizeof s, "%lld", (long long)b->windows[w]);
            fprintf(f, " %9s", s);
        }
        fprintf(f, "\n");
        for (int v = 0; v < b->nvar; v++) {
            fprintf(f, "%-20s", variant_name(b, v));
            for (int w = 0; w < b->nwin; w++) {
                double ms = b->sweep[w][v];
                if (ms == -2.0) fprintf(f, " %9s", "x");
                else if (ms < 0) fprintf(f, " %9s", "-");
                else fprintf(f, " %9.4f", ms);
            }
            fprintf(f, "\n");
        }
        fprintf(f, "%-20s", "% of floor (best)");
        for (int w = 0; w < b->nwin; w++) {
            double best = -1;
            for (int v = 0; v < b->nvar; v++)
                if (b->sweep[w][v] > 0 && (best < 0 || b->sweep[w][v] < best)) best = b->sweep[w][v];
            if (best > 0 && floor_ms > 0) fprintf(f, " %8.1f%%", 100.0 * floor_ms / best);
            else fprintf(f, " %9s", "-");
        }
        fprintf(f, "\n%-20s", "max rel. error");
        for (int w = 0; w < b->nwin; w++) fprintf(f, " %9.1e", b->sweep_err[w]);
        fprintf(f, "\n\n");
    }

    fprintf(f, "%-30s %-18s %8s %9s %7s %7s %7s %10s %9s  %s\n", "format", "kernel", "sigma", "time_ms", "GF/s",
            "GB/s", "%floor", "bytes", "rel_err", "note");
    for (int i = 0; i < b->nrows; i++) {
        bench_row *r = &b->rows[i];
        char sg[24], by[24], er[24];
        if (r->sigma < 0) snprintf(sg, sizeof sg, "-");
        else if (r->sigma == 0 || r->sigma >= b->n) snprintf(sg, sizeof sg, "all");
        else snprintf(sg, sizeof sg, "%lld", (long long)r->sigma);
        fmt_bytes(r->bytes_dev, by, sizeof by);
        if (r->relerr < 0) snprintf(er, sizeof er, "-");
        else snprintf(er, sizeof er, "%.1e%s", r->relerr, r->relerr <= BENCH_TOL ? "" : "!");
        if (r->ms > 0) {
            double gf = 2.0 * (double)b->nnz / (r->ms * 1e-3) / 1e9;
            double gbs = b->bmin / (r->ms * 1e-3) / 1e9;
            double pct = floor_ms > 0 ? 100.0 * floor_ms / r->ms : 0.0;
            fprintf(f, "%-30s %-18s %8s %9.4f %7.1f %7.0f %6.1f%% %10s %9s  %s\n", r->format, r->variant, sg, r->ms,
                    gf, gbs, pct, by, er, r->note);
        } else {
            fprintf(f, "%-30s %-18s %8s %9s %7s %7s %7s %10s %9s  %s\n", r->format, r->variant, sg, "-", "-", "-",
                    "-", by, er, r->note);
        }
    }
    if (b->nvops > 0) {
        fprintf(f, "\nvector ops at n = %lld (V column-major, ld = n; %d calls, median; GB/s = minimal bytes / GPU time;"
                   " wall = host time per call incl. sync)\n", (long long)b->n, BENCH_VOP_REPEATS);
        fprintf(f, "%-7s %3s %3s %9s | %9s %9s %7s %6s | %9s %9s %7s %6s | %7s %9s\n", "op", "k", "m", "bytes",
                "ours_ms", "wall_ms", "GB/s", "%copy", "cublas_ms", "wall_ms", "GB/s", "%copy", "speedup", "diff");
        for (int i = 0; i < b->nvops; i++) {
            const bench_vop *r = &b->vops[i];
            char by[24], c[2][64], sp[16] = "-", df[16] = "-";
            fmt_bytes(r->bytes, by, sizeof by);
            for (int m = 0; m < 2; m++) {
                if (r->ms[m] > 0) {
                    double gbs = r->bytes / (r->ms[m] * 1e-3) / 1e9;
                    snprintf(c[m], sizeof c[m], "%9.4f %9.4f %7.0f %5.1f%%", r->ms[m], r->wall_ms[m], gbs,
                             b->copy_gbs > 0 ? 100.0 * gbs / b->copy_gbs : 0.0);
                } else {
                    snprintf(c[m], sizeof c[m], "%9s %9s %7s %6s", "-", "-", "-", "-");
                }
            }
            if (r->ms[0] > 0 && r->ms[1] > 0) snprintf(sp, sizeof sp, "%.2fx", r->ms[1] / r->ms[0]);
            if (r->diff >= 0) snprintf(df, sizeof df, "%.1e", r->diff);
            char kk[8] = "-", mm[8] = "-";
            if (r->k) snprintf(kk, sizeof kk, "%d", r->k);
            if (r->m) snprintf(mm, sizeof mm, "%d", r->m);
            fprintf(f, "%-7s %3s %3s %9s | %s | %s | %7s %9s\n", r->op, kk, mm, by, c[0], c[1], sp, df);
        }
    }
    fflush(f);
}

static void json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') fprintf(f, "\\%c", *s);
        else if ((unsigned char)*s < 0x20) fprintf(f, "\\u%04x", *s);
        else fputc(*s, f);
    }
    fputc('"', f);
}

static void json_num(FILE *f, double v)
{
    if (isfinite(v)) fprintf(f, "%.9g", v);
    else fprintf(f, "null");
}

static int write_json(bench *b, const char *path)
{
    FILE *f = fopen(path, "w");
    PL_CHECK(f, PL_ERR_INPUT, "bench: cannot write JSON file %s", path);
    const double floor_ms = b->copy_gbs > 0 ? b->bmin / (b->copy_gbs * 1e9) * 1e3 : 0.0;
    fprintf(f, "{\n  \"device\": ");
    json_str(f, b->on_gpu ? b->device : "cpu");
    fprintf(f, ",\n  \"rows\": %lld, \"nnz\": %lld, \"row_len_max\": %lld, \"chunk_height\": %d,\n",
            (long long)b->n, (long long)b->nnz, (long long)b->st.row_len_max, b->ctx->cfg.spmv.chunk_height);
    fprintf(f, "  \"copy_gbs\": ");
    json_num(f, b->copy_gbs);
    fprintf(f, ", \"min_bytes\": %.0f, \"floor_ms\": ", b->bmin);
    json_num(f, floor_ms);
    fprintf(f, ", \"pjds_reduction_vs_ellpack\": ");
    json_num(f, b->st.pjds_reduction_vs_ellpack);
    fprintf(f, ", \"repeats\": %d,\n  \"formats\": [\n", b->repeats);
    for (int i = 0; i < b->nrows; i++) {
        bench_row *r = &b->rows[i];
        fprintf(f, "    {\"format\": ");
        json_str(f, r->format);
        fprintf(f, ", \"kernel\": ");
        json_str(f, r->variant);
        fprintf(f, ", \"sigma\": %lld, \"ms\": ", (long long)r->sigma);
        if (r->ms > 0) json_num(f, r->ms);
        else fprintf(f, "null");
        fprintf(f, ", \"gflops\": ");
        if (r->ms > 0) json_num(f, 2.0 * (double)b->nnz / (r->ms * 1e-3) / 1e9);
        else fprintf(f, "null");
        fprintf(f, ", \"gbs\": ");
        if (r->ms > 0) json_num(f, b->bmin / (r->ms * 1e-3) / 1e9);
        else fprintf(f, "null");
        fprintf(f, ", \"pct_floor\": ");
        if (r->ms > 0 && floor_ms > 0) json_num(f, 100.0 * floor_ms / r->ms);
        else fprintf(f, "null");
        fprintf(f, ", \"bytes\": %.0f, \"rel_err\": ", r->bytes_dev);
        if (r->relerr >= 0) json_num(f, r->relerr);
        else fprintf(f, "null");
        fprintf(f, ", \"note\": ");
        json_str(f, r->note);
        fprintf(f, "}%s\n", i + 1 < b->nrows ? "," : "");
    }
    fprintf(f, "  ],\n  \"sweep\": {\"sigma\": [");
    for (int w = 0; w < b->nwin; w++) fprintf(f, "%s%lld", w ? ", " : "", (long long)b->windows[w]);
    fprintf(f, "], \"variants\": [");
    for (int v = 0; v < b->nvar; v++) {
        if (v) fprintf(f, ", ");
        json_str(f, variant_name(b, v));
    }
    fprintf(f, "],\n    \"ms\": [");
    for (int w = 0; w < b->nwin; w++) {
        fprintf(f, "%s[", w ? ", " : "");
        for (int v = 0; v < b->nvar; v++) {
            if (v) fprintf(f, ", ");
            if (b->sweep[w][v] > 0) json_num(f, b->sweep[w][v]);
            else fprintf(f, "null");
        }
        fprintf(f, "]");
    }
    fprintf(f, "]},\n  \"vecops\": [");
    for (int i = 0; i < b->nvops; i++) {
        const bench_vop *r = &b->vops[i];
        fprintf(f, "%s\n    {\"op\": ", i ? "," : "");
        json_str(f, r->op);
        fprintf(f, ", \"k\": %d, \"m\": %d, \"bytes\": %.0f", r->k, r->m, r->bytes);
        const char *nm[2] = {"ours", "cublas"};
        for (int m = 0; m < 2; m++) {
            fprintf(f, ", \"%s_ms\": ", nm[m]);
            if (r->ms[m] > 0) json_num(f, r->ms[m]);
            else fprintf(f, "null");
            fprintf(f, ", \"%s_wall_ms\": ", nm[m]);
            if (r->ms[m] > 0) json_num(f, r->wall_ms[m]);
            else fprintf(f, "null");
            fprintf(f, ", \"%s_gbs\": ", nm[m]);
            if (r->ms[m] > 0) json_num(f, r->bytes / (r->ms[m] * 1e-3) / 1e9);
            else fprintf(f, "null");
        }
        fprintf(f, ", \"diff\": ");
        if (r->diff >= 0) json_num(f, r->diff);
        else fprintf(f, "null");
        fprintf(f, "}");
    }
    fprintf(f, "\n  ]\n}\n");
    int bad = ferror(f);
    bad |= fclose(f);
    PL_CHECK(!bad, PL_ERR_IO, "bench: writing %s failed", path);
    return PL_OK;
}

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
        int e = run_window(b, w, w == wcfg, d_x, d_y, perm, iperm, lcolp, hx);
        if (e != PL_OK) {
            bench_row *r = add_row(b, "pJDS sweep window", "-", b->windows[w]);
            row_fail(r, e);
        }
    }
    /* best variant at the configured window, and the best row-length-bound one */
    int best = -1, best_rl = 0;
    for (int v = 0; v < b->nvar; v++) {
        double ms = b->sweep[wcfg][v];
        if (ms > 0 && (best < 0 || ms < b->sweep[wcfg][best])) best = v;
#if PJDS_HAVE_CUDA
        if (b->on_gpu && ms > 0 && (b->sweep[wcfg][best_rl] <= 0 || ms < b->sweep[wcfg][best_rl]) &&
            strncmp(variant_name(b, v), "cw", 2) != 0)
            best_rl = v;
#endif
    }
    /* rows of the main table from the sweep */
    {
        bench_row *r = add_row(b, "pJDS (best kernel)", best >= 0 ? variant_name(b, best) : "-", b->windows[wcfg]);
        if (r && best >= 0) {
            r->ms = b->sweep[wcfg][best];
            r->relerr = b->sweep_err[wcfg];
            for (int i = 0; i < b->nrows; i++)
                if (!strcmp(b->rows[i].format, "pJDS footprint")) r->bytes_dev = b->rows[i].bytes_dev;
        }
        if (b->nvar > 1) {
            bench_row *q = add_row(b, "pJDS (naive kernel)", variant_name(b, 0), b->windows[wcfg]);
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
            bench_row *q = add_row(b, "pJDS (best window+kernel)", variant_name(b, bv), b->windows[bw]);
            if (q) {
                q->ms = b->sweep[bw][bv];
                q->relerr = b->sweep_err[bw];
                snprintf(q->note, sizeof q->note, "set [spmv] sort_window = %lld for this", (long long)b->windows[bw]);
            }
        }
    }
    pl_info("bench: ELLPACK-R");
    run_ellpack_r(b, d_x, d_y, best_rl);
#if PJDS_HAVE_CUDA
    if (b->on_gpu) {
        pl_info("bench: cuSPARSE CSR and sliced ELLPACK");
        run_cusparse_csr(b, d_x, d_y);
        run_cusparse_sell(b, d_x, d_y);
    }
#endif
    if (!b->on_gpu) {
        bench_row *r = add_row(b, "CSR (OpenMP loop)", "omp", -1);
        double *y = malloc((size_t)(n ? n : 1) * sizeof *y);
        if (r && y) {
            csr_arg a = {b, b->x, y};
            int e = time_launch(b->be, launch_host_csr, &a, b->repeats, &r->ms);
            if (e == PL_OK) r->relerr = rel_error(b, y, NULL);
            else row_fail(r, e);
            r->bytes_dev = 12.0 * (double)b->nnz + 8.0 * (double)(n + 1);
            snprintf(r->note, sizeof r->note, "%d threads", omp_get_max_threads());
        }
        free(y);
    }
    /* the solve path: default kernel */
#if PJDS_HAVE_CUDA
    if (b->on_gpu) {
        int dv = pl_cuda_spmv_variant_default();
        const char *env = getenv("PJDS_CUDA_VARIANT");
        if (!env || !*env) (void)pl_cuda_set_variant(b->be, dv);
    }
#endif
    pl_info("bench: operator");
    run_op(b);
#if PJDS_HAVE_CUDA
    if (b->on_gpu) {
        pl_info("bench: vector ops");
        run_vecops(b);
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
            pl_spmv_cfg cfg = ctx->cfg.spmv;
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

static int bench_mpi(bench *b)
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
        for (int64_t k = A->row_ptr[i]; k < A->row_ptr[i + 1]; k++) s += A->val[k] * xval(A->col[k]);
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
        pl_spmv_cfg cfg = ctx->cfg.spmv;
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
                for (size_t i = 0; i < nl; i++) hx[i] = xval(g[i]);
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

/* ---- entry ------------------------------------------------------------------- */

int cmd_bench(app_ctx *ctx)
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
    b->on_gpu = is_gpu(b->be);

    if (ctx->size > 1) {
        if (ctx->rank == 0)
            printf("bench: %d ranks: timing the distributed operator per exchange mode (the format and\n"
                   "kernel comparison runs with one rank)\n", ctx->size);
        PL_CALL_GOTO(bench_mpi(b), out, rc);
        goto out;
    }

    /* one rank: original-order inputs and the host reference */
    b->lcol = malloc((size_t)(b->nnz ? b->nnz : 1) * sizeof *b->lcol);
    b->x = malloc((size_t)(b->n ? b->n : 1) * sizeof *b->x);
    b->yref = malloc((size_t)(b->n ? b->n : 1) * sizeof *b->yref);
    PL_CHECK_GOTO(b->lcol && b->x && b->yref, PL_ERR_MEM, out, rc, "out of host memory");
#pragma omp parallel for schedule(static)
    for (int64_t k = 0; k < b->nnz; k++) b->lcol[k] = (int32_t)A.col[k];
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < b->n; i++) b->x[i] = xval(i);
    {
        csr_arg a = {b, b->x, b->yref};
        (void)launch_host_csr(&a);
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
        b->copy_gbs = host_copy_gbs();
    }
    rc = bench_local(b);
    if (ctx->rank == 0) {
        print_report(b, stdout);
        const char *jp = getenv("PJDS_BENCH_JSON");
        if (jp && *jp) {
            int e = write_json(b, jp);
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
