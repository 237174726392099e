/* test_hh_mf.c — the matrix-free Holstein-Hubbard operator (the tables of
 * hh_mf.h as a pl_kron, applied by the CPU backend's kron_apply,
 * spmv/cpu/cpu_kron.c) against the CSR matrix of the row generator
 * (hh_rows_csr).
 *
 *  1. for a few hundred small models -- site and normal phonon bases x
 *     periodic and open boundaries, L = 2..6, fillings with n_up != n_down,
 *     n_down = 0, a full band and no electrons, M = 0, 1, 3 (5 for L <= 4),
 *     parameter sets with t < 0, t = 0, g = 0, U < 0 -- and the 184,800-row
 *     model of configs/hh_184800.ini: y = H x for a random x equals the CSR
 *     product summed in long double, normwise to 1e-15 (below), every entry
 *     written, the same bits on a second apply and with one thread, the
 *     backend's copy of the tables independent of hh_mf (destroyed before
 *     the products);
 *  2. a model without the generator's phonon tables gives the same result;
 *  3. bad arguments return PL_ERR_ARG; destroy accepts NULL.
 * Prints the number of models and the worst errors. */
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hh.h"
#include "hh_args.h"
#include "hh_impl.h"
#include "hh_mf.h"
#include "pl_error.h"
#include "pl_kron.h"
#include "spmv.h"
#include "testutil.h"

/* Tolerance.  Every product that kron_apply adds is bitwise the product
 * h_ij x_j of the CSR matrix (the diagonal, the hop amplitudes and
 * C_m[e] sqrt(n) are computed as hh.c computes its entries), so the only
 * difference from the exact y_i is the rounding of a sum of k <= 4 L +
 * 2 modes + 1 <= 37 terms in another order: at most (k - 1) u sum_j
 * |h_ij x_j| <= 36 u ||H||_inf ||x||_inf, in practice a few u of it
 * (random rounding errors).  The reference sums in long double (64-bit
 * mantissa: its own error is 2^11 times smaller).  The scale is max_i
 * |y_i| of the reference: with a random x in [-1, 1) it is within a small
 * factor of max_i sum_j |h_ij x_j| (the ratio is printed), and it is the
 * number the "1e-15 relative" names.  A wrong sign, amplitude or
 * index changes some y_i by O(|h_ij|), 1e-1 .. 1e0 of the scale. */
#define TOL 1e-15

static double worst_rel = 0.0, worst_abs_scale = 0.0, worst_ratio = 1.0;
static int n_models = 0;
static pl_backend *be; /* the CPU backend: its kron_* slots */

/* uniform in [-1, 1) (splitmix64) */
static double rnd(uint64_t *s)
{
    uint64_t z = (*s += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    z ^= z >> 31;
    return (double)(z >> 11) * 0x1.0p-52 - 1.0;
}

/* max_i |y_i - (A x)_i| over max_i |(A x)_i|, the product in long double;
 * *ratio = max_i |(A x)_i| / max_i sum_j |a_ij x_j|; *nonfinite = entries
 * of y that are not finite (not written). */
static double csr_error(const pl_csr *a, const double *x, const double *y, double *ratio, int64_t *nonfinite)
{
    long double emax = 0.0L, ymax = 0.0L, amax = 0.0L;
    *nonfinite = 0;
    for (int64_t i = 0; i < a->nrows; i++) {
        long double r = 0.0L, s = 0.0L;
        for (int64_t k = a->row_ptr[i]; k < a->row_ptr[i + 1]; k++) {
            long double h = (long double)a->val[k] * (long double)x[a->col[k]];
            r += h;
            s += fabsl(h);
        }
        if (!isfinite(y[i])) (*nonfinite)++;
        else if (fabsl((long double)y[i] - r) > emax) emax = fabsl((long double)y[i] - r);
        if (fabsl(r) > ymax) ymax = fabsl(r);
        if (s > amax) amax = s;
    }
    *ratio = amax > 0.0L ? (double)(ymax / amax) : 1.0;
    if (ymax == 0.0L) return emax == 0.0L ? 0.0 : INFINITY;
    return (double)(emax / ymax);
}

/* 1 + 2: one model; use_tables = 0: the generator's per-row phonon path. */
static void check_model(const hh_params *p, int use_tables, uint64_t seed)
{
    hh_model *m = NULL;
    hh_mf *mf = NULL;
    void *op = NULL;
    pl_csr a = {0};
    TU_OK(hh_model_create_opts(p, use_tables, &m));
    if (!m) return;
    const int64_t N = hh_model_rows(m);
    TU_OK(hh_rows_csr(m, 0, N, &a));
    TU_OK(hh_mf_create(m, &mf));
    double *x = malloc((size_t)N * sizeof *x), *y = malloc((size_t)N * sizeof *y);
    double *y2 = malloc((size_t)N * sizeof *y2);
    TU_CHECK(x && y && y2);
    if (!a.row_ptr || !mf || !x || !y || !y2) goto done;
    int64_t nu, nd, nph;
    hh_model_dims(m, &nu, &nd, &nph);
    TU_CHECK_MSG(mf->N == N && mf->n_el == nu * nd && mf->n_ph == nph, "%s: dimensions", hh_args_describe(p));
    TU_CHECK_MSG(hh_mf_bytes(mf) > sizeof *mf, "%s: bytes %zu", hh_args_describe(p), hh_mf_bytes(mf));
    pl_kron k;
    hh_mf_kron(mf, &k);
    TU_CHECK_MSG(k.n_left * k.n_right == N && k.nterms == mf->nmodes, "%s: pl_kron dimensions", hh_args_describe(p));
    TU_CHECK_MSG(pl_kron_bytes(&k) + sizeof *mf == hh_mf_bytes(mf), "%s: pl_kron_bytes %zu", hh_args_describe(p),
                 pl_kron_bytes(&k));
    TU_OK(pl_kron_check(&k));
    TU_OK(be->kron_create(be, &k, &op));
    hh_mf_destroy(&mf); /* the backend holds its own copy */
    if (!op) goto done;
    for (int64_t i = 0; i < N; i++) {
        x[i] = rnd(&seed);
        y[i] = NAN; /* every entry must be written */
    }
    TU_OK(be->kron_apply(be, op, x, y));
    double ratio;
    int64_t bad;
    const double err = csr_error(&a, x, y, &ratio, &bad);
    TU_CHECK_MSG(bad == 0, "%s: %lld entries not written", hh_args_describe(p), (long long)bad);
    TU_CHECK_MSG(err <= TOL, "%s: matrix-free vs CSR: relative error %.3g > %g", hh_args_describe(p), err, TOL);
    if (err > worst_rel) worst_rel = err;
    if (err * ratio > worst_abs_scale) worst_abs_scale = err * ratio;
    if (ratio < worst_ratio) worst_ratio = ratio;
    /* deterministic: the same bits again and with one thread */
    const int nt = omp_get_max_threads();
    for (int run = 0; run < 2; run++) {
        if (run == 1) omp_set_num_threads(1);
        TU_OK(be->kron_apply(be, op, x, y2));
        TU_CHECK_MSG(memcmp(y, y2, (size_t)N * sizeof *y) == 0, "%s: apply %d differs from the first", hh_args_describe(p),
                     run + 2);
    }
    omp_set_num_threads(nt);
    n_models++;
done:
    free(x);
    free(y);
    free(y2);
    be->kron_destroy(be, op);
    hh_mf_destroy(&mf);
    TU_CHECK(mf == NULL);
    pl_csr_destroy(&a);
    hh_model_destroy(&m);
}

static void all_small_models(void)
{
    /* parameter sets: the first on every structure, one of the others in turn */
    static const double par[5][4] = {/* t, U, w0, g */
                                     {1.0, 3.7, 0.7, 0.9},
                                     {-0.8, 0.0, 1.3, 1.6},
                                     {1.1, -2.0, 0.45, 0.0},
                                     {0.0, 2.0, 0.8, 0.6},
                                     {0.37, 5.0, 2.5, 0.31}};
    int turn = 0;
    uint64_t seed = 12345;
    for (int L = 2; L <= 6; L++)
        for (int basis = 0; basis < 2; basis++)
            for (int bc = 0; bc < 2; bc++) {
                const int fill[5][2] = {{1, 1}, {L / 2, (L - 1) / 2}, {(L + 1) / 2, 0}, {L, L - 1}, {0, 0}};
                for (int f = 0; f < 5; f++)
                    for (int M = 0; M <= (L <= 4 ? 5 : 3); M++) {
                        if (M == 2 || M == 4) continue;
                        for (int s = 0; s < 2; s++) {
                            const double *q = par[s == 0 ? 0 : 1 + turn++ % 4];
                            hh_params p = hh_args_model(L, fill[f][0], fill[f][1], q[0], q[1], q[2], q[3], M, basis, bc);
                            check_model(&p, 1, seed++);
                        }
                    }
            }
}

/* 3: bad arguments */
static void bad_arguments(void)
{
    hh_params p = hh_args_model(3, 1, 1, 1.0, 2.0, 0.5, 0.8, 2, PL_PHONON_NORMAL, PL_BOUNDARY_OPEN);
    hh_model *m = NULL;
    hh_mf *mf = (hh_mf *)&p; /* must be reset to NULL on failure */
    TU_OK(hh_model_create(&p, &m));
    if (!m) return;
    TU_CHECK(hh_mf_create(NULL, &mf) == PL_ERR_ARG && mf == NULL);
    pl_error_clear();
    TU_CHECK(hh_mf_create(m, NULL) == PL_ERR_ARG);
    pl_error_clear();
    TU_OK(hh_mf_create(m, &mf));
    if (!mf) {
        hh_model_destroy(&m);
        return;
    }
    const int64_t N = hh_model_rows(m);
    pl_kron k;
    hh_mf_kron(mf, &k);
    void *op = NULL;
    TU_CHECK(pl_kron_check(NULL) == PL_ERR_ARG);
    TU_CHECK(be->kron_create(be, NULL, &op) == PL_ERR_ARG && op == NULL);
    pl_error_clear();
    TU_OK(be->kron_create(be, &k, &op));
    double *v = calloc((size_t)(2 * N), sizeof *v);
    TU_CHECK(v != NULL);
    if (v && op) {
        TU_CHECK(be->kron_apply(be, NULL, v, v + N) == PL_ERR_ARG);
        TU_CHECK(be->kron_apply(be, op, NULL, v + N) == PL_ERR_ARG);
        TU_CHECK(be->kron_apply(be, op, v, NULL) == PL_ERR_ARG);
        TU_CHECK(be->kron_apply(be, op, v, v) == PL_ERR_ARG);
        TU_CHECK(be->kron_apply(be, op, v, v + N - 1) == PL_ERR_ARG);
        TU_CHECK(be->kron_apply(be, op, v + 1, v) == PL_ERR_ARG);
        pl_error_clear();
        TU_OK(be->kron_apply(be, op, v, v + N)); /* adjacent is fine */
        TU_OK(be->kron_apply(be, op, v + N, v));
    }
    free(v);
    be->kron_destroy(be, op);
    be->kron_destroy(be, NULL);
    TU_CHECK(hh_mf_bytes(NULL) == 0);
    hh_mf_destroy(&mf);
    TU_CHECK(mf == NULL);
    hh_mf_destroy(&mf);
    hh_mf_destroy(NULL);
    hh_model_destroy(&m);
}

int main(void)
{
    TU_OK(pl_backend_cpu_create(&be));
    if (!be) return tu_result("hh_mf");
    all_small_models();
    /* configs/hh_184800.ini, and a model built without phonon tables */
    hh_params big = hh_args_model(6, 3, 3, 1.0, 2.0, 0.5, 0.8, 6, PL_PHONON_NORMAL, PL_BOUNDARY_OPEN);
    check_model(&big, 1, 777);
    hh_params per = hh_args_model(5, 2, 1, 1.0, 4.0, 1.0, 1.0, 4, PL_PHONON_SITE, PL_BOUNDARY_PERIODIC);
    check_model(&per, 0, 778);
    bad_arguments();
    printf("hh_mf: %d models, worst error %.3g of max|y|, %.3g of max sum|h x|; min max|y| / max sum|h x| %.3f\n",
           n_models, worst_rel, worst_abs_scale, worst_ratio);
    pl_backend_destroy(&be);
    return tu_result("hh_mf");
}
