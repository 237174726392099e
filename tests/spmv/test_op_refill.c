/* test_op_refill.c — value refill of the distributed operator (pl_op_refill)
 * equals an operator built fresh from the combined values.
 *
 * Every rank builds the same random matrix from a seed (random pattern with
 * empty rows, a band so that neighbours share halos) and K = 3 value terms
 * on its pattern (about 30 % of each term's entries exactly 0, every 7th
 * entry 0 in all terms).  The operator is created from the CSR block with
 * the terms and val = sum coef0_k T_k, refilled with coef1, and compared
 * with an operator created from val = sum coef1_k T_k without terms: the
 * products agree to 1e-14 relative to |A||x| (and with the serial CSR
 * product), device_bytes grow by 8 K (stored entries); the norm estimate
 * equals the fresh one for non-negative terms and coefficients and bounds
 * it from above for signed ones.  A second refill back to coef0 gives the
 * first product again (refill overwrites, never accumulates).  For exchange
 * modes vector, overlap, task and sort windows all (0) and 64.
 * Errors: refill of an operator without terms and with the wrong K is
 * PL_ERR_ARG on every rank, also when only rank 0 passes the wrong K (no
 * hang); a later correct refill works.  Run with 1, 2 and 3 ranks.
 */
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

#define K 3

static int lengths_of(void *arg, int64_t r0, int64_t r1, int32_t *len)
{
    const tm_csr *a = arg;
    for (int64_t r = r0; r < r1; r++) len[r - r0] = (int32_t)(a->ptr[r + 1] - a->ptr[r]);
    return PL_OK;
}

static double xg_of(int64_t g) { return sin(0.7 * (double)g + 0.3) + 0.01 * (double)(g % 5); }

/* Terms on the pattern of a: K arrays of a->nnz values. */
static double *make_terms(const tm_csr *a, int signed_terms, uint64_t seed)
{
    uint64_t s = seed;
    double *t = malloc((size_t)K * (size_t)(a->nnz ? a->nnz : 1) * sizeof *t);
    for (int k = 0; k < K; k++)
        for (int64_t e = 0; e < a->nnz; e++) {
            double u = tm_unif(&s), v = signed_terms ? 2.0 * tm_unif(&s) - 1.0 : tm_unif(&s);
            t[(size_t)k * (size_t)a->nnz + e] = (e % 7 == 0 || u < 0.3) ? 0.0 : v;
        }
    return t;
}

/* val[e] = sum_k coef[k] T_k[e] for the entries [e0, e0 + m) */
static void combine(const double *T, int64_t nnz, const double *coef, int64_t e0, int64_t m, double *val)
{
    for (int64_t e = 0; e < m; e++) {
        double v = coef[0] * T[e0 + e];
        for (int k = 1; k < K; k++) v += coef[k] * T[(size_t)k * (size_t)nnz + e0 + e];
        val[e] = v;
    }
}

/* The CSR block of rows [r0, r1) with val = sum coef T_k, and the terms
 * when with_terms. */
static void block_of(const tm_csr *a, const double *T, const double *coef, int with_terms, int64_t r0, int64_t r1,
                     pl_csr *b)
{
    int64_t nnz = a->ptr[r1] - a->ptr[r0], e0 = a->ptr[r0];
    TU_OK(pl_csr_alloc(b, a->n, r0, r1 - r0, nnz));
    b->ncols_global = a->n;
    for (int64_t r = r0; r <= r1; r++) b->row_ptr[r - r0] = a->ptr[r] - e0;
    memcpy(b->col, a->col + e0, (size_t)nnz * sizeof *b->col);
    combine(T, a->nnz, coef, e0, nnz, b->val);
    if (!with_terms) return;
    b->nterms = K;
    b->terms = malloc((size_t)K * (size_t)(nnz ? nnz : 1) * sizeof *b->terms);
    for (int k = 0; k < K; k++)
        memcpy(b->terms + (size_t)k * (size_t)nnz, T + (size_t)k * (size_t)a->nnz + e0, (size_t)nnz * sizeof *T);
}

/* max over i of |y[i] - ref[i]| / |A||x|_i, in the permuted basis of gi */
static double rel_err(int64_t n, const double *y, const double *ref, const double *scale, const int64_t *gi)
{
    double err = 0.0;
    for (int64_t i = 0; i < n; i++) {
        double d = fabs(y[i] - ref[i]) / fmax(scale[gi[i]], 1e-300);
        if (!(d <= err)) err = d;
    }
    return err;
}

static void run_case(tm_csr *a, int signed_terms, const char *name, MPI_Comm comm)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    const double coef0[K] = {1.0, -0.5, 2.0};
    const double coef1[K] = {0.3, 2.5, 0.75};
    double *T = make_terms(a, signed_terms, 1234 + (uint64_t)a->n);
    int64_t *bounds = malloc((size_t)(size + 1) * sizeof *bounds);
    TU_OK(pl_partition_by_nnz(a->n, lengths_of, (void *)a, comm, bounds));
    pl_csr bt, bf; /* with terms at coef0; fresh at coef1 */
    block_of(a, T, coef0, 1, bounds[rank], bounds[rank + 1], &bt);
    block_of(a, T, coef1, 0, bounds[rank], bounds[rank + 1], &bf);
    const int64_t n = bt.nrows;

    /* serial reference at coef1 and at coef0 */
    tm_csr a1 = *a;
    a1.val = malloc((size_t)(a->nnz ? a->nnz : 1) * sizeof *a1.val);
    double *xg = malloc((size_t)(a->n + 1) * sizeof *xg), *y1 = malloc((size_t)(a->n + 1) * sizeof *y1),
           *s1 = malloc((size_t)(a->n + 1) * sizeof *s1), *y0 = malloc((size_t)(a->n + 1) * sizeof *y0),
           *s0 = malloc((size_t)(a->n + 1) * sizeof *s0);
    for (int64_t g = 0; g < a->n; g++) xg[g] = xg_of(g);
    combine(T, a->nnz, coef1, 0, a->nnz, a1.val);
    tm_spmv(&a1, xg, y1, s1);
    combine(T, a->nnz, coef0, 0, a->nnz, a1.val);
    tm_spmv(&a1, xg, y0, s0);

    pl_backend *be = NULL;
    TU_OK(pl_backend_cpu_create(&be));
    const int modes[] = {PL_EXCHANGE_VECTOR, PL_EXCHANGE_OVERLAP, PL_EXCHANGE_TASK};
    const int64_t sigmas[] = {0, 64};
    for (int mi = 0; mi < 3; mi++)
        for (int si = 0; si < 2; si++) {
            pl_op_options cfg = {0};
            cfg.chunk_height = si ? 4 : 32;
            cfg.sort_window = sigmas[si];
            cfg.exchange = modes[mi];
            pl_op *op = NULL, *fr = NULL;
            TU_OK(pl_op_create(&bt, &cfg, be, comm, &op));
            TU_OK(pl_op_create(&bf, &cfg, be, comm, &fr));
            if (!op || !fr) {
                pl_op_destroy(&op);
                pl_op_destroy(&fr);
                continue;
            }
            TU_CHECK(pl_op_nterms(op) == K && pl_op_nterms(fr) == 0);
            pl_op_info io, ifr;
            pl_op_get_info(op, &io);
            pl_op_get_info(fr, &ifr);
            TU_CHECK_MSG(io.device_bytes == ifr.device_bytes + (size_t)(8 * K * io.nent_local),
                         "%s: device_bytes %zu, fresh %zu, %d terms of %lld entries", name, io.device_bytes,
                         ifr.device_bytes, K, (long long)io.nent_local);
            const int64_t *gi = pl_op_global_index(op), *gf = pl_op_global_index(fr);
            int same = 1;
            for (int64_t i = 0; i < n; i++) same &= gi[i] == gf[i];
            TU_CHECK_MSG(same, "%s: the two operators permute differently", name);
            double *x = NULL, *y = NULL, *yf = NULL, *ref = malloc((size_t)(n + 1) * sizeof *ref);
            TU_OK(be->vec_alloc(be, (size_t)n, &x));
            TU_OK(be->vec_alloc(be, (size_t)n, &y));
            TU_OK(be->vec_alloc(be, (size_t)n, &yf));
            for (int64_t i = 0; i < n; i++) x[i] = xg[gi[i]];

            /* as created: coef0 */
            TU_OK(pl_op_apply(op, x, y));
            for (int64_t i = 0; i < n; i++) ref[i] = y0[gi[i]];
            double e = rel_err(n, y, ref, s0, gi);
            TU_CHECK_MSG(e <= 1e-14, "%s np=%d mode=%d sigma=%lld: created, rel err %g", name, size, modes[mi],
                         (long long)sigmas[si], e);
            /* refilled to coef1 == fresh == serial */
            TU_OK(pl_op_refill(op, K, coef1));
            TU_OK(pl_op_apply(op, x, y));
            TU_OK(pl_op_apply(fr, x, yf));
            e = rel_err(n, y, yf, s1, gi);
            TU_CHECK_MSG(e <= 1e-14, "%s np=%d mode=%d sigma=%lld: refill vs fresh, rel err %g", name, size,
                         modes[mi], (long long)sigmas[si], e);
            for (int64_t i = 0; i < n; i++) ref[i] = y1[gi[i]];
            e = rel_err(n, y, ref, s1, gi);
            TU_CHECK_MSG(e <= 1e-14, "%s np=%d mode=%d sigma=%lld: refill vs serial, rel err %g", name, size,
                         modes[mi], (long long)sigmas[si], e);
            pl_op_get_info(op, &io);
            if (signed_terms)
                TU_CHECK_MSG(io.norm_estimate >= ifr.norm_estimate * (1.0 - 1e-14), "%s: norm estimate %.17g < %.17g",
                             name, io.norm_estimate, ifr.norm_estimate);
            else
                TU_CLOSE(io.norm_estimate, ifr.norm_estimate, 1e-14);
            /* twice, and back: overwrites */
            TU_OK(pl_op_refill(op, K, coef1));
            TU_OK(pl_op_refill(op, K, coef0));
            TU_OK(pl_op_apply(op, x, y));
            for (int64_t i = 0; i < n; i++) ref[i] = y0[gi[i]];
            e = rel_err(n, y, ref, s0, gi);
            TU_CHECK_MSG(e <= 1e-14, "%s np=%d mode=%d sigma=%lld: refilled back, rel err %g", name, size,
                         modes[mi], (long long)sigmas[si], e);

            /* errors: no terms, wrong K, wrong K on rank 0 only */
            int rc = pl_op_refill(fr, K, coef1);
            TU_CHECK_MSG(rc == PL_ERR_ARG, "refill without terms: rc %d", rc);
            pl_error_clear();
            rc = pl_op_refill(op, K - 1, coef1);
            TU_CHECK_MSG(rc == PL_ERR_ARG, "refill with K - 1: rc %d", rc);
            pl_error_clear();
            rc = pl_op_refill(op, rank == 0 ? K + 1 : K, coef1);
            TU_CHECK_MSG(rc == PL_ERR_ARG, "refill with K + 1 on rank 0: rc %d on rank %d", rc, rank);
            pl_error_clear();
            TU_OK(pl_op_refill(op, K, coef1));
            TU_OK(pl_op_apply(op, x, y));
            e = rel_err(n, y, yf, s1, gi);
            TU_CHECK_MSG(e <= 1e-14, "%s: refill after a failed one, rel err %g", name, e);

            be->vec_free(be, x);
            be->vec_free(be, y);
            be->vec_free(be, yf);
            free(ref);
            pl_op_destroy(&op);
            pl_op_destroy(&fr);
        }
    pl_backend_destroy(&be);
    pl_csr_destroy(&bt);
    pl_csr_destroy(&bf);
    free(a1.val);
    free(bounds);
    free(T);
    free(xg);
    free(y1);
    free(s1);
    free(y0);
    free(s0);
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    pl_log_init(rank, PL_LOG_INFO);
    /* CI has 2 cores: one thread per rank keeps oversubscribed runs fast */
    if (size > 1) omp_set_num_threads(1);
    tm_csr a;
    tm_random(1200, 12, 2, 0, 42, &a); /* random + band, not symmetric */
    run_case(&a, 0, "non-negative n=1200", MPI_COMM_WORLD);
    run_case(&a, 1, "signed n=1200", MPI_COMM_WORLD);
    tm_free(&a);
    tm_random(300, 30, -1, 1, 7, &a); /* random only: halos to every rank */
    run_case(&a, 1, "signed n=300", MPI_COMM_WORLD);
    tm_free(&a);
    tm_random(3, 2, 1, 1, 5, &a); /* one row per rank at np = 3 */
    run_case(&a, 0, "tiny n=3", MPI_COMM_WORLD);
    tm_free(&a);
    int f = tu_failures, g = 0;
    MPI_Allreduce(&f, &g, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    tu_failures = g;
    MPI_Finalize();
    return rank == 0 ? tu_result("test_op_refill") : (g ? 1 : 0);
}
