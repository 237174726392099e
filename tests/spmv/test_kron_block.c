/* test_kron_block.c — the block products of the matrix-free operator
 * (pl_op_apply_block, pl_op_apply_block_aug on pl_op_create_kron; the
 * backend slots kron_spmm, kron_spmm_aug of spmv.h) against independent
 * products of the same Holstein-Hubbard matrix.
 *
 *  1. models: site and normal phonon bases x periodic and open boundaries,
 *     n_up != n_down, n_down = 0, M = 1, L = 2 periodic; R = 1, 2, 3, 8, 32
 *     and PL_SPMM_RMAX vectors (row-major, entries +-0.0 among them):
 *     a. Y = H X equals R single products (pl_op_apply, i.e. kron_apply) of
 *        its columns bit for bit, every value of Y written (Y starts NaN);
 *     b. Y equals the stored pJDS operator's block product (pl_op_apply_block
 *        on pl_op_create of the CSR rows, compared through
 *        pl_op_global_index) to 1e-15 of each column's max |y|;
 *     c. the KPM step Y = alpha H X + gamma X + beta Y0 equals, value by
 *        value and bit for bit, ((alpha h) + (gamma x)) + (beta y0) with h
 *        from the single products (so the composition alpha H X + gamma X
 *        + beta Y of the single products holds to rounding), and its dots
 *        <x, x>, <y, x> the sums of those values in long double to 1e-13
 *        of the sums of |terms| (measured: below 1e-14);
 *     d. the counters count R applies per block product;
 *     e. cuda (PJDS_TEST_BACKEND=cuda, ctest gpu_kron_block; exit 77
 *        without a device): Y of both products is the CPU backend's bit
 *        for bit, the dots within 1e-13.
 *  2. random tables on the backend's slots directly (be->kron_spmm,
 *     kron_spmm_aug against be->kron_apply, bitwise): n_left not a
 *     multiple of 8, nterms 0 and 11, rows of A longer than 64 entries,
 *     c = +-0.0, n_right not a multiple of the kernels' blocks.
 *  3. refusals: R = 0 and PL_SPMM_RMAX + 1 give PL_ERR_ARG; a backend
 *     whose kron_spmm / kron_spmm_aug are NULL gives PL_ERR_NOTSUP naming
 *     the missing block product. */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hh.h"
#include "hh_args.h"
#include "hh_mf.h"
#include "pl_error.h"
#include "pl_kron.h"
#include "spmv.h"
#include "testutil.h"

#define TOL_STORED 1e-15
#define TOL_DOTS 1e-13 /* sums of up to 10^4 terms, any order */
#define TOL_GPU_DOTS 1e-13

static int backend_kind = PL_BACKEND_CPU;
static double worst_stored = 0.0, worst_dots = 0.0;
static int n_cases = 0;

static const double ALPHA = 0.71, GAMMA = -0.33, BETA = -1.0;

/* X[g R + c]: smooth values, every 13th +0.0 and every 17th -0.0. */
static double xval(int64_t g, int c)
{
    const int64_t q = g * 7 + c * 3;
    if (q % 13 == 5) return 0.0;
    if (q % 17 == 3) return -0.0;
    return cos(0.37 * (double)g + 0.11 * c + 0.1) + 0.02 * (double)((g + c) % 7);
}

/* Device block of n x R from host h (dev: out). */
static int upload_new(pl_backend *be, const double *h, size_t n, double **dev)
{
    PL_CALL(be->vec_alloc(be, n ? n : 1, dev));
    if (n) PL_CALL(be->upload(be, *dev, h, n));
    return PL_OK;
}

/* Y = the block product (aug: the KPM step from Y0, dots) of op on the
 * host rows of op's basis (X, Y0 host, n x R; Y host out). */
static int block_host(pl_op *op, int R, int aug, const double *X, const double *Y0, double *Y, double *dots)
{
    pl_backend *be = pl_op_backend(op);
    pl_op_info in;
    pl_op_get_info(op, &in);
    const size_t nv = (size_t)in.n_local * (size_t)R;
    double *dX = NULL, *dY = NULL, *dW = NULL;
    int rc = PL_OK;
    PL_CALL_GOTO(upload_new(be, X, nv, &dX), done, rc);
    PL_CALL_GOTO(be->vec_alloc(be, nv ? nv : 1, &dY), done, rc);
    PL_CALL_GOTO(be->vec_alloc(be, nv ? nv : 1, &dW), done, rc);
    if (aug) PL_CALL_GOTO(be->upload(be, dY, Y0, nv), done, rc);
    else PL_CALL_GOTO(be->set(be, nv, NAN, dY), done, rc); /* every value must be written */
    if (aug) PL_CALL_GOTO(pl_op_apply_block_aug(op, R, ALPHA, GAMMA, BETA, dX, dY, dW, dots), done, rc);
    else PL_CALL_GOTO(pl_op_apply_block(op, R, dX, dY), done, rc);
    PL_CALL_GOTO(be->download(be, Y, dY, nv), done, rc);
done:
    if (dX) be->vec_free(be, dX);
    if (dY) be->vec_free(be, dY);
    if (dW) be->vec_free(be, dW);
    return rc;
}

/* H[:, c] = the single products of op (kron_apply) of X's columns. */
static int singles(pl_op *op, int R, const double *X, double *H)
{
    pl_backend *be = pl_op_backend(op);
    pl_op_info in;
    pl_op_get_info(op, &in);
    const size_t n = (size_t)in.n_local;
    double *h = malloc((n ? n : 1) * sizeof *h), *dx = NULL, *dy = NULL;
    int rc = PL_OK;
    PL_CHECK_GOTO(h, PL_ERR_MEM, done, rc, "out of memory");
    PL_CALL_GOTO(be->vec_alloc(be, n ? n : 1, &dx), done, rc);
    PL_CALL_GOTO(be->vec_alloc(be, n ? n : 1, &dy), done, rc);
    for (int c = 0; c < R; c++) {
        for (size_t i = 0; i < n; i++) h[i] = X[i * R + c];
        PL_CALL_GOTO(be->upload(be, dx, h, n), done, rc);
        PL_CALL_GOTO(pl_op_apply(op, dx, dy), done, rc);
        PL_CALL_GOTO(be->download(be, h, dy, n), done, rc);
        for (size_t i = 0; i < n; i++) H[i * R + c] = h[i];
    }
done:
    if (dx) be->vec_free(be, dx);
    if (dy) be->vec_free(be, dy);
    free(h);
    return rc;
}

/* Values of a and b (n) that differ bitwise. */
static int64_t nbits(const double *a, const double *b, size_t n)
{
    int64_t bad = 0;
    for (size_t i = 0; i < n; i++) bad += memcmp(a + i, b + i, sizeof *a) != 0;
    return bad;
}

/* 1c: Y == ((alpha h) + (gamma x)) + (beta y0) bitwise; dots to TOL_DOTS. */
static void check_aug(const double *X, const double *Y0, const double *H, const double *Y, const double *dots,
                      size_t n, int R, const char *d)
{
    int64_t bad = 0;
    double worst = 0.0;
    for (int c = 0; c < R; c++) {
        long double sxx = 0.0L, syx = 0.0L, axx = 0.0L, ayx = 0.0L;
        for (size_t i = 0; i < n; i++) {
            const size_t q = i * R + c;
            const double y = ALPHA * H[q] + GAMMA * X[q] + BETA * Y0[q];
            bad += memcmp(&y, Y + q, sizeof y) != 0;
            sxx += (long double)X[q] * X[q];
            syx += (long double)y * X[q];
            axx += fabsl((long double)X[q] * X[q]);
            ayx += fabsl((long double)y * X[q]);
        }
        const double e1 = (double)(fabsl((long double)dots[c] - sxx) / (axx > 0 ? axx : 1.0L));
        const double e2 = (double)(fabsl((long double)dots[R + c] - syx) / (ayx > 0 ? ayx : 1.0L));
        worst = fmax(worst, fmax(e1, e2));
    }
    TU_CHECK_MSG(bad == 0, "%s: aug step: %lld values differ from alpha h + gamma x + beta y0", d, (long long)bad);
    TU_CHECK_MSG(worst <= TOL_DOTS, "%s: aug dots off by %.3g (relative to the sums of |terms|)", d, worst);
    worst_dots = fmax(worst_dots, worst);
}

/* 1b: max over the columns of max|Y - P| / max|P| (P: pJDS, global rows). */
static double stored_error(const double *Y, const double *P, size_t n, int R)
{
    double worst = 0.0;
    for (int c = 0; c < R; c++) {
        double dm = 0.0, pm = 0.0;
        for (size_t i = 0; i < n; i++) {
            const double y = Y[i * R + c], p = P[i * R + c];
            dm = isfinite(y) ? fmax(dm, fabs(y - p)) : INFINITY;
            pm = fmax(pm, fabs(p));
        }
        worst = fmax(worst, pm > 0.0 ? dm / pm : dm);
    }
    return worst;
}

/* The operators of one model: kron (be), pJDS (be), kron on the CPU (cuda run). */
typedef struct ops {
    pl_op *kop, *pop, *cop;
    pl_backend *cb;
    int64_t N;
} ops;

/* 1a-e for R vectors. */
static void check_R(const ops *o, int R, const char *d)
{
    const size_t N = (size_t)o->N, nv = N * (size_t)R;
    double *X = malloc(nv * sizeof *X), *Y0 = malloc(nv * sizeof *Y0), *Y = malloc(nv * sizeof *Y);
    double *H = malloc(nv * sizeof *H), *P = malloc(nv * sizeof *P), *T = malloc(nv * sizeof *T);
    double dots[2 * PL_SPMM_RMAX], cdots[2 * PL_SPMM_RMAX];
    char dd[300];
    snprintf(dd, sizeof dd, "%s, R = %d", d, R);
    if (!X || !Y0 || !Y || !H || !P || !T) {
        TU_CHECK_MSG(0, "%s: out of memory", dd);
        goto done;
    }
    for (size_t i = 0; i < N; i++)
        for (int c = 0; c < R; c++) {
            X[i * R + c] = xval((int64_t)i, c);
            Y0[i * R + c] = sin(0.23 * (double)i - 0.7 * c);
        }
    int64_t n0 = 0, n1 = 0;
    double s0 = 0.0;
    pl_op_counters(o->kop, &n0, &s0);
    TU_OK(block_host(o->kop, R, 0, X, NULL, Y, NULL));
    pl_op_counters(o->kop, &n1, &s0);
    TU_CHECK_MSG(n1 - n0 == R, "%s: the block product counted %lld applies", dd, (long long)(n1 - n0));
    TU_OK(singles(o->kop, R, X, H));
    const int64_t bad = nbits(Y, H, nv);
    TU_CHECK_MSG(bad == 0, "%s: %lld values of H X differ from the single products bitwise", dd, (long long)bad);
    /* b: the pJDS operator's block product in its permuted rows */
    const int64_t *gi = pl_op_global_index(o->pop);
    for (size_t i = 0; i < N; i++) memcpy(T + i * R, X + (size_t)gi[i] * R, (size_t)R * sizeof *T);
    TU_OK(block_host(o->pop, R, 0, T, NULL, P, NULL));
    for (size_t i = 0; i < N; i++) memcpy(T + (size_t)gi[i] * R, P + i * R, (size_t)R * sizeof *T);
    const double es = stored_error(Y, T, N, R);
    TU_CHECK_MSG(es <= TOL_STORED, "%s: matrix-free vs pJDS block product %.3g of max|y|", dd, es);
    worst_stored = fmax(worst_stored, es);
    /* c: the KPM step */
    TU_OK(block_host(o->kop, R, 1, X, Y0, P, dots));
    check_aug(X, Y0, H, P, dots, N, R, dd);
    /* e: the CPU backend's block products */
    if (o->cop) {
        TU_OK(block_host(o->cop, R, 0, X, NULL, T, NULL));
        TU_CHECK_MSG(nbits(Y, T, nv) == 0, "%s: H X differs from the cpu backend's", dd);
        TU_OK(block_host(o->cop, R, 1, X, Y0, T, cdots));
        TU_CHECK_MSG(nbits(P, T, nv) == 0, "%s: the aug step's Y differs from the cpu backend's", dd);
        double e = 0.0;
        for (int c = 0; c < 2 * R; c++) e = fmax(e, fabs(dots[c] - cdots[c]) / fmax(fabs(cdots[c]), 1e-300));
        TU_CHECK_MSG(e <= TOL_GPU_DOTS, "%s: dots differ from the cpu backend's by %.3g", dd, e);
    }
    n_cases++;
done:
    free(X);
    free(Y0);
    free(Y);
    free(H);
    free(P);
    free(T);
}

static void check_model(pl_backend *be, const hh_params *p)
{
    static const int Rs[] = {1, 2, 3, 8, 32, PL_SPMM_RMAX};
    const char *d = hh_args_describe(p);
    hh_model *m = NULL;
    hh_mf *mf = NULL;
    pl_csr a = {0};
    ops o = {0};
    TU_OK(hh_model_create(p, &m));
    if (!m) return;
    o.N = hh_model_rows(m);
    TU_OK(hh_rows_csr(m, 0, o.N, &a));
    TU_OK(hh_mf_create(m, &mf));
    pl_op_options oo;
    pl_op_options_defaults(&oo);
    oo.format = PL_FORMAT_PJDS;
    TU_OK(pl_op_create(&a, &oo, be, MPI_COMM_WORLD, &o.pop));
    if (mf) {
        pl_kron k;
        hh_mf_kron(mf, &k);
        oo.format = PL_FORMAT_MATRIX_FREE;
        TU_OK(pl_op_create_kron(&k, &oo, be, MPI_COMM_WORLD, &o.kop));
        if (backend_kind == PL_BACKEND_CUDA) {
            TU_OK(pl_backend_cpu_create(&o.cb));
            if (o.cb) TU_OK(pl_op_create_kron(&k, &oo, o.cb, MPI_COMM_WORLD, &o.cop));
        }
    }
    hh_mf_destroy(&mf); /* the backends hold their copies */
    if (o.kop && o.pop && (backend_kind == PL_BACKEND_CPU || o.cop))
        for (size_t i = 0; i < sizeof Rs / sizeof *Rs; i++) check_R(&o, Rs[i], d);
    else
        TU_CHECK_MSG(0, "%s: set-up failed", d);
    pl_op_destroy(&o.kop);
    pl_op_destroy(&o.pop);
    pl_op_destroy(&o.cop);
    pl_backend_destroy(&o.cb);
    pl_csr_destroy(&a);
    hh_model_destroy(&m);
}

static uint64_t lcg_state = 4711;
static double rnd01(void)
{
    lcg_state = lcg_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(lcg_state >> 11) * 0x1.0p-53;
}

/* The block slots against kron_apply on the tables k, bitwise (2). */
static void slots_vs_apply(pl_backend *be, const pl_kron *k, int R, const char *d)
{
    const size_t N = (size_t)(k->n_left * k->n_right), nv = N * (size_t)R;
    double *X = malloc(nv * sizeof *X), *Y = malloc(nv * sizeof *Y), *Y0 = malloc(nv * sizeof *Y0);
    double *H = malloc(nv * sizeof *H), *h = malloc(N * sizeof *h), *dX = NULL, *dY = NULL, *dx = NULL, *dy = NULL;
    double dots[2 * PL_SPMM_RMAX];
    void *op = NULL;
    TU_OK(be->kron_create(be, k, &op));
    TU_OK(be->vec_alloc(be, nv, &dX));
    TU_OK(be->vec_alloc(be, nv, &dY));
    TU_OK(be->vec_alloc(be, N, &dx));
    TU_OK(be->vec_alloc(be, N, &dy));
    if (!X || !Y || !Y0 || !H || !h || !op || !dX || !dY || !dx || !dy) {
        TU_CHECK_MSG(0, "%s: set-up failed", d);
        goto done;
    }
    for (size_t i = 0; i < nv; i++) {
        const double u = rnd01();
        X[i] = u < 0.1 ? 0.0 : u < 0.2 ? -0.0 : rnd01() - 0.5;
        Y0[i] = rnd01() - 0.5;
    }
    for (int c = 0; c < R; c++) {
        for (size_t i = 0; i < N; i++) h[i] = X[i * R + c];
        TU_OK(be->upload(be, dx, h, N));
        TU_OK(be->kron_apply(be, op, dx, dy));
        TU_OK(be->download(be, h, dy, N));
        for (size_t i = 0; i < N; i++) H[i * R + c] = h[i];
    }
    TU_OK(be->upload(be, dX, X, nv));
    TU_OK(be->set(be, nv, NAN, dY));
    TU_OK(be->kron_spmm(be, op, R, dX, dY));
    TU_OK(be->download(be, Y, dY, nv));
    TU_CHECK_MSG(nbits(Y, H, nv) == 0, "%s, R = %d: kron_spmm differs from kron_apply", d, R);
    TU_OK(be->upload(be, dY, Y0, nv));
    TU_OK(be->kron_spmm_aug(be, op, R, ALPHA, GAMMA, BETA, dX, dY, dots));
    TU_OK(be->download(be, Y, dY, nv));
    char dd[200];
    snprintf(dd, sizeof dd, "%s, R = %d (slots)", d, R);
    check_aug(X, Y0, H, Y, dots, N, R, dd);
done:
    if (op) be->kron_destroy(be, op);
    double *dv[] = {dX, dY, dx, dy};
    for (int i = 0; i < 4; i++)
        if (dv[i]) be->vec_free(be, dv[i]);
    free(X);
    free(Y);
    free(Y0);
    free(H);
    free(h);
}

/* 2: random tables nl x nr, nt terms, na entries per row of A. */
static void random_tables(pl_backend *be, int64_t nl, int64_t nr, int nt, int na, const char *d)
{
    const int64_t nrt = nr * nt, nnz = nl * na;
    int64_t *ap = malloc((size_t)(nl + 1) * sizeof *ap);
    int32_t *ac = malloc((size_t)(nnz + 1) * sizeof *ac), *lo = malloc((size_t)(nrt + 1) * sizeof *lo);
    int32_t *hi = malloc((size_t)(nrt + 1) * sizeof *hi);
    double *av = malloc((size_t)(nnz + 1) * sizeof *av), *dl = malloc((size_t)nl * sizeof *dl);
    double *dr = malloc((size_t)nr * sizeof *dr), *c = malloc((size_t)(nl * nt + 1) * sizeof *c);
    double *lv = malloc((size_t)(nrt + 1) * sizeof *lv), *hv = malloc((size_t)(nrt + 1) * sizeof *hv);
    if (ap && ac && lo && hi && av && dl && dr && c && lv && hv) {
        for (int64_t l = 0; l <= nl; l++) ap[l] = l * na;
        for (int64_t j = 0; j < nnz; j++) {
            ac[j] = (int32_t)(rnd01() * (double)nl);
            av[j] = rnd01() - 0.5;
        }
        for (int64_t l = 0; l < nl; l++) dl[l] = 3.0 * rnd01() - 1.0;
        for (int64_t r = 0; r < nr; r++) dr[r] = rnd01() / 3.0 - 0.2;
        for (int64_t i = 0; i < nl * nt; i++) {
            const double u = rnd01();
            c[i] = u < 0.2 ? 0.0 : u < 0.3 ? -0.0 : rnd01() - 0.4;
        }
        for (int64_t j = 0; j < nrt; j++) {
            lo[j] = rnd01() < 0.25 ? -1 : (int32_t)(rnd01() * (double)nr);
            hi[j] = rnd01() < 0.25 ? -1 : (int32_t)(rnd01() * (double)nr);
            lv[j] = rnd01() + 0.1;
            hv[j] = rnd01() + 0.1;
        }
        const pl_kron k = {.n_left = nl, .n_right = nr, .nterms = nt, .a_ptr = ap, .a_col = ac, .a_val = av,
                           .dl = dl, .dr = dr, .shift = -0.3, .c = c, .lo = lo, .hi = hi, .lo_val = lv,
                           .hi_val = hv};
        TU_OK(pl_kron_check(&k));
        const int Rs[] = {1, 3, 8, 33};
        for (int i = 0; i < 4; i++) slots_vs_apply(be, &k, Rs[i], d);
    } else {
        TU_CHECK_MSG(0, "%s: out of memory", d);
    }
    void *p[] = {ap, ac, lo, hi, av, dl, dr, c, lv, hv};
    for (size_t i = 0; i < sizeof p / sizeof p[0]; i++) free(p[i]);
}

/* 3: bad R; a backend without the block slots. */
static void refusals(pl_backend *be)
{
    hh_params p = hh_args_model(3, 2, 1, 1.0, 2.0, 0.5, 0.8, 2, PL_PHONON_SITE, PL_BOUNDARY_OPEN);
    hh_model *m = NULL;
    hh_mf *mf = NULL;
    pl_backend *nb = NULL;
    pl_op *op = NULL, *nop = NULL;
    double *dv = NULL, dots[2];
    TU_OK(hh_model_create(&p, &m));
    if (m) TU_OK(hh_mf_create(m, &mf));
    TU_OK(pl_backend_cpu_create(&nb));
    if (!mf || !nb) goto done;
    pl_kron k;
    hh_mf_kron(mf, &k);
    pl_op_options oo;
    pl_op_options_defaults(&oo);
    oo.format = PL_FORMAT_MATRIX_FREE;
    TU_OK(pl_op_create_kron(&k, &oo, be, MPI_COMM_WORLD, &op));
    const size_t N = (size_t)(k.n_left * k.n_right);
    TU_OK(be->vec_alloc(be, 2 * N * (PL_SPMM_RMAX + 1), &dv));
    if (op && dv) {
        TU_CHECK(pl_op_apply_block(op, 0, dv, dv + N) == PL_ERR_ARG);
        TU_CHECK(pl_op_apply_block(op, PL_SPMM_RMAX + 1, dv, dv + N * (PL_SPMM_RMAX + 1)) == PL_ERR_ARG);
        TU_CHECK(pl_op_apply_block_aug(op, 0, 1.0, 0.0, 0.0, dv, dv + N, NULL, NULL) == PL_ERR_ARG);
        pl_error_clear();
    }
    if (dv) be->vec_free(be, dv);
    dv = NULL;
    nb->kron_spmm = NULL;
    nb->kron_spmm_aug = NULL;
    TU_OK(pl_op_create_kron(&k, &oo, nb, MPI_COMM_WORLD, &nop));
    TU_OK(nb->vec_alloc(nb, 2 * N, &dv));
    if (nop && dv) {
        TU_CHECK(pl_op_apply_block(nop, 1, dv, dv + N) == PL_ERR_NOTSUP);
        TU_CHECK_MSG(strstr(pl_error_message(), "no matrix-free block product (SpMMV)") != NULL, "message '%s'",
                     pl_error_message());
        TU_CHECK(pl_op_apply_block_aug(nop, 1, 1.0, 0.0, 0.0, dv, dv + N, dv, dots) == PL_ERR_NOTSUP);
        TU_CHECK_MSG(strstr(pl_error_message(), "no matrix-free block product (KPM step)") != NULL,
                     "message '%s'", pl_error_message());
        pl_error_clear();
    }
    if (dv) nb->vec_free(nb, dv);
done:
    pl_op_destroy(&op);
    pl_op_destroy(&nop);
    pl_backend_destroy(&nb);
    hh_mf_destroy(&mf);
    hh_model_destroy(&m);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    pl_log_init(rank, 0);
    const char *tb = getenv("PJDS_TEST_BACKEND");
    if (tb && !strcmp(tb, "cuda")) {
        if (pl_cuda_device_count() < 1) {
            fprintf(stderr, "skipped: no CUDA device\n");
            MPI_Finalize();
            return 77;
        }
        backend_kind = PL_BACKEND_CUDA;
    }
    pl_backend *be = NULL;
    TU_OK(pl_backend_create(backend_kind, rank, &be));
    if (be) {
        const int S = PL_PHONON_SITE, Nm = PL_PHONON_NORMAL, P = PL_BOUNDARY_PERIODIC, O = PL_BOUNDARY_OPEN;
        const hh_params ms[] = {
            hh_args_model(4, 2, 2, 1.0, 3.0, 0.7, 0.9, 3, S, P),    /* site, periodic */
            hh_args_model(4, 2, 1, 1.0, 2.0, 0.5, 0.8, 3, Nm, O),   /* normal, open, n_up != n_down */
            hh_args_model(5, 3, 1, -0.8, 4.0, 1.3, 1.6, 2, S, O),   /* site, open */
            hh_args_model(5, 2, 2, 1.1, -2.0, 0.45, 0.6, 2, Nm, P), /* normal, periodic, U < 0 */
            hh_args_model(4, 3, 0, 1.0, 2.0, 0.5, 0.8, 3, S, P),    /* n_down = 0 */
            hh_args_model(4, 2, 0, 0.37, 5.0, 2.5, 0.31, 3, Nm, O), /* n_down = 0, normal */
            hh_args_model(5, 2, 3, 1.0, 2.0, 0.5, 0.8, 1, Nm, P),   /* M = 1 */
            hh_args_model(6, 3, 2, 1.0, 2.0, 0.5, 0.8, 1, S, O),    /* M = 1, site, open */
            hh_args_model(2, 1, 1, 1.0, 2.0, 0.5, 0.8, 4, S, P),    /* L = 2 periodic: summed hops */
        };
        for (size_t i = 0; i < sizeof ms / sizeof *ms; i++) check_model(be, &ms[i]);
        random_tables(be, 13, 2100, 5, 4, "random: n_left 13, n_right 2100");
        random_tables(be, 7, 1000, 0, 3, "random: nterms 0");
        random_tables(be, 20, 300, 11, 70, "random: nterms 11, 70 entries per row of A");
        random_tables(be, 1, 5003, 4, 1, "random: n_left 1");
        refusals(be);
        printf("kron_block (%s): %d (model, R) cases, worst vs pJDS %.3g of max|y|, aug dots %.3g\n", be->name,
               n_cases, worst_stored, worst_dots);
    }
    pl_backend_destroy(&be);
    const int r = tu_result("test_kron_block");
    MPI_Finalize();
    return r;
}
