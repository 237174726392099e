/* hh_mf_timing.c — the matrix-free Holstein-Hubbard operator (hh_mf.h's
 * tables as a pl_kron, applied by the CPU backend's kron_apply) against a
 * plain CSR SpMV of the same matrix (hh_rows_csr; OpenMP over rows,
 * static), on the CPU with OMP_NUM_THREADS threads.  Default model:
 * configs/hh_184800.ini (L = 6, 3 up 3 down, M = 6, normal, open, t = 1,
 * U = 2, w0 = 0.5, g = 0.8).  Prints the median of 50 products of each
 * (interleaved, after 5 warm-up products), the table and CSR bytes, and
 * the largest difference of the two results relative to max |y|.  Not a
 * test; a measurement tool.
 * Usage: hh_mf_timing [L n_up n_down t U w0 g M site|normal periodic|open] */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hh.h"
#include "hh_args.h"
#include "hh_mf.h"
#include "pl_error.h"
#include "spmv.h"

#define REPS 50
#define WARM 5

static void csr_spmv(const pl_csr *a, const double *x, double *y)
{
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < a->nrows; i++) {
        double s = 0.0;
        for (int64_t k = a->row_ptr[i]; k < a->row_ptr[i + 1]; k++) s += a->val[k] * x[a->col[k]];
        y[i] = s;
    }
}

/* median seconds of mf and CSR, interleaved; *diff = max |y_mf - y_csr| / max |y_csr| */
static int measure(pl_backend *be, const void *op, const pl_csr *a, const double *x, double *y1, double *y2,
                   double *t_mf, double *t_csr, double *diff)
{
    double tm[REPS], tc[REPS];
    for (int r = -WARM; r < REPS; r++) {
        double t0 = pl_wtime();
        PL_CALL(be->kron_apply(be, op, x, y1));
        double t1 = pl_wtime();
        csr_spmv(a, x, y2);
        double t2 = pl_wtime();
        if (r >= 0) {
            tm[r] = t1 - t0;
            tc[r] = t2 - t1;
        }
    }
    *t_mf = pl_median(tm, REPS);
    *t_csr = pl_median(tc, REPS);
    double d = 0.0, ymax = 0.0;
    for (int64_t i = 0; i < a->nrows; i++) {
        d = fmax(d, fabs(y1[i] - y2[i]));
        ymax = fmax(ymax, fabs(y2[i]));
    }
    *diff = ymax > 0.0 ? d / ymax : d;
    return PL_OK;
}

static int run(const hh_params *p)
{
    hh_model *m = NULL;
    hh_mf *mf = NULL;
    pl_backend *be = NULL;
    void *op = NULL;
    pl_csr a = {0};
    double *x = NULL, *y1 = NULL, *y2 = NULL, t_mf = 0.0, t_csr = 0.0, diff = 0.0;
    int r = PL_OK;
    PL_CALL_GOTO(hh_model_create(p, &m), done, r);
    const int64_t N = hh_model_rows(m);
    PL_CALL_GOTO(hh_rows_csr(m, 0, N, &a), done, r);
    const double t0 = pl_wtime();
    PL_CALL_GOTO(hh_mf_create(m, &mf), done, r);
    const double t_create = pl_wtime() - t0;
    PL_CALL_GOTO(pl_backend_cpu_create(&be), done, r);
    pl_kron k;
    hh_mf_kron(mf, &k);
    PL_CALL_GOTO(be->kron_create(be, &k, &op), done, r);
    x = malloc((size_t)N * sizeof *x);
    y1 = malloc((size_t)N * sizeof *y1);
    y2 = malloc((size_t)N * sizeof *y2);
    PL_CHECK_GOTO(x && y1 && y2, PL_ERR_MEM, done, r, "out of host memory for 3 vectors of %lld", (long long)N);
    for (int64_t i = 0; i < N; i++) x[i] = sin(0.1 * (double)i + 0.3);
    PL_CALL_GOTO(measure(be, op, &a, x, y1, y2, &t_mf, &t_csr, &diff), done, r);
    const int64_t nnz = pl_csr_nnz(&a);
    printf("threads          %d\n", omp_get_max_threads());
    printf("rows             %lld (%lld electron x %lld phonon)\n", (long long)N, (long long)mf->n_el,
           (long long)mf->n_ph);
    printf("nnz              %lld\n", (long long)nnz);
    printf("mf tables        %zu bytes (create %.3f ms)\n", hh_mf_bytes(mf), 1e3 * t_create);
    printf("csr bytes        %lld\n", (long long)(nnz * 16 + (N + 1) * 8));
    printf("mf apply         %.4f ms (median of %d)\n", 1e3 * t_mf, REPS);
    printf("csr spmv         %.4f ms (median of %d)\n", 1e3 * t_csr, REPS);
    printf("csr / mf         %.2f\n", t_csr / t_mf);
    printf("max diff         %.3g of max |y|\n", diff);
done:
    free(x);
    free(y1);
    free(y2);
    if (be) be->kron_destroy(be, op);
    pl_backend_destroy(&be);
    hh_mf_destroy(&mf);
    pl_csr_destroy(&a);
    hh_model_destroy(&m);
    return r;
}

int main(int argc, char **argv)
{
    hh_params p = {.sites = 6, .n_up = 3, .n_down = 3, .hopping = 1.0, .hubbard_u = 2.0, .phonon_frequency = 0.5,
                   .coupling = 0.8, .max_phonons = 6, .phonon_basis = PL_PHONON_NORMAL,
                   .boundary = PL_BOUNDARY_OPEN};
    if (hh_args_parse(argc, argv, &p)) {
        fprintf(stderr, "usage: %s [L n_up n_down t U w0 g M site|normal periodic|open]\n", argv[0]);
        return 2;
    }
    if (run(&p) != PL_OK) {
        pl_error_report();
        return 1;
    }
    return 0;
}
