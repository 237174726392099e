/* bench_util.c — helpers of `bench` (bench_run.c): the input vector, table
 * rows, timing of launches (CUDA events or wall clock, median after
 * warm-up), error against the host CSR reference, the launchers, kernel
 * variant selection and the host copy bandwidth.
 */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE /* sysconf(_SC_AVPHYS_PAGES) */
#include "bench_impl.h"

/* ---- small helpers --------------------------------------------------------- */

double bench_xval(int64_t g)
{
    uint64_t z = (uint64_t)g + 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    return (double)(z >> 11) * (2.0 / 9007199254740992.0) - 1.0;
}

bench_row *bench_add_row(bench *b, const char *format, const char *variant, int64_t sigma)
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
void bench_row_fail(bench_row *r, int rc)
{
    const char *m = pl_error_message();
    if (r) snprintf(r->note, sizeof r->note, "failed (%s): %s", pl_error_name(rc), m && *m ? m : "?");
    pl_warn("bench: %s: %s", r ? r->format : "?", m && *m ? m : pl_error_name(rc));
    pl_error_clear();
}

int bench_is_gpu(const pl_backend *be) { return be && !strcmp(be->name, "cuda"); }

static int timer_start(pl_backend *be, double *t0)
{
#if PJDS_HAVE_CUDA
    if (bench_is_gpu(be)) return pl_cuda_timer_start(be);
#endif
    PL_CALL(be->sync(be));
    *t0 = pl_wtime();
    return PL_OK;
}

static int timer_stop(pl_backend *be, double t0, double *ms)
{
#if PJDS_HAVE_CUDA
    if (bench_is_gpu(be)) return pl_cuda_timer_stop(be, ms);
#endif
    PL_CALL(be->sync(be));
    *ms = (pl_wtime() - t0) * 1e3;
    return PL_OK;
}

/* Median ms of `repeats` timed launches after BENCH_WARMUP untimed ones. */
int bench_time_launch(pl_backend *be, launch_fn fn, void *arg, int repeats, double *ms)
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
double bench_rel_error(const bench *b, const double *y, const int32_t *perm)
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
int bench_check_y(bench *b, pl_backend *be, const double *d_y, const int32_t *perm, double *err)
{
    double *h = NULL;
    PL_MALLOC(h, b->n ? b->n : 1);
    int rc = be->download(be, h, d_y, (size_t)b->n);
    if (rc == PL_OK) *err = bench_rel_error(b, h, perm);
    free(h);
    PL_CALL(rc);
    return PL_OK;
}

/* ---- launchers ------------------------------------------------------------- */

int bench_launch_be_spmv(void *p)
{
    spmv_arg *a = p;
    return a->be->spmv(a->be, a->mat, a->x, a->y);
}

#if PJDS_HAVE_CUDA
int bench_launch_cusparse(void *p)
{
    cusparse_arg *a = p;
    return pl_cusparse_spmv(a->be, a->m, a->x, a->y);
}
#endif

int bench_launch_op(void *p)
{
    op_arg *a = p;
    return pl_op_apply(a->op, a->x, a->y);
}

int bench_launch_host_csr(void *p)
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

const char *bench_variant_name(const bench *b, int v) { return b->nvar > 1 ? b->varname[v] : "omp"; }

int bench_set_variant(bench *b, int v)
{
#if PJDS_HAVE_CUDA
    if (bench_is_gpu(b->be)) return pl_cuda_set_variant(b->be, v);
#endif
    (void)b;
    (void)v;
    return PL_OK;
}

/* Host copy bandwidth: parallel memcpy of 256 MiB, bytes read + written. */
double bench_host_copy_gbs(void)
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
