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
 *        for bit, the dots within 1e-13; even R on variant 5 run
 *        kron_hop_block.cu's kernel in column groups of 4 or 2
 *        (gpu_kron_block_rb2: of 2 only; _rb0: kron_block.cu's kernels).
 *     On P = 2, 3, 4 ranks (ctest spmv_kron_block_np2, _np3, _np4) the
 *     same models split by electron configurations, every exchange mode
 *     (vector, overlap, task): the halo exchange of op_block.c and
 *     be->kron_rem_spmm.  Each operator's rows are gathered into global
 *     blocks; a holds bitwise against the single products (kron_apply +
 *     kron_rem_apply); b against the pJDS operator of the same row blocks;
 *     c (composed on several ranks: another rounding order) to 1e-15 of
 *     each column's max |y| against alpha h + gamma x + beta y0 and against
 *     the pJDS operator's KPM step, the dots to 1e-13; the split must have a
 *     halo somewhere.
 *  2. random tables on the backend's slots directly (be->kron_spmm,
 *     kron_spmm_aug against be->kron_apply, bitwise; for one vector also
 *     the Lanczos step be->kron_lz: y = h - (beta z) bitwise, its 5 sums to
 *     1e-13, where the kernel has it (cpu; cuda variant 5)): n_left not a
 *     multiple of 8, nterms 0, 1, 4, 5, 7, 8 and 11, rows of A longer than
 *     64 entries, c = +-0.0, n_right not a multiple of the kernels' blocks;
 *     R = 1, 2, 3, 6, 8, 16, 33.
 *     2b. be->kron_rem_spmm on random remote lists against the formula of
 *     spmv.h and against kron_rem_apply of each column, bitwise (n_right 1,
 *     513, 1000; R = 1 ... PL_SPMM_RMAX).
 *  3. refusals: R = 0 and PL_SPMM_RMAX + 1 give PL_ERR_ARG; a backend
 *     whose kron_spmm / kron_spmm_aug are NULL gives PL_ERR_NOTSUP naming
 *     the missing block product; one without kron_rem_spmm PL_ERR_NOTSUP
 *     on every rank of several ("across ranks"), PL_OK on one rank. */
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
static int rank = 0, size = 1;
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
                      size_t n, int R, int bitwise, const char *d)
{
    int64_t bad = 0;
    double worst = 0.0;
    for (int c = 0; c < R; c++) {
        long double sxx = 0.0L, syx = 0.0L, axx = 0.0L, ayx = 0.0L;
        double dm = 0.0, ym = 0.0;
        for (size_t i = 0; i < n; i++) {
            const size_t q = i * R + c;
            const double y = ALPHA * H[q] + GAMMA * X[q] + BETA * Y0[q];
            bad += bitwise && memcmp(&y, Y + q, sizeof y) != 0;
            dm = isfinite(Y[q]) ? fmax(dm, fabs(Y[q] - y)) : INFINITY;
            ym = fmax(ym, fabs(y));
            sxx += (long double)X[q] * X[q];
            syx += (long double)y * X[q];
            axx += fabsl((long double)X[q] * X[q]);
            ayx += fabsl((long double)y * X[q]);
        }
        /* several ranks: the composed step, another rounding order */
        if (!bitwise && dm > TOL_STORED * (ym > 0.0 ? ym : 1.0)) bad++;
        const double e1 = (double)(fabsl((long double)dots[c] - sxx) / (axx > 0 ? axx : 1.0L));
        const double e2 = (double)(fabsl((long double)dots[R + c] - syx) / (ayx > 0 ? ayx : 1.0L));
        worst = fmax(worst, fmax(e1, e2));
    }
    TU_CHECK_MSG(bad == 0, "%s: aug step: %lld %s differ from alpha h + gamma x + beta y0%s", d, (long long)bad,
                 bitwise ? "values" : "columns", bitwise ? "" : " by more than 1e-15 of the column's max");
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

/* The operators of one model: kron (be), pJDS (be), kron on the CPU (cuda
 * run), each on its rows of the split (several ranks: the same row blocks). */
typedef struct ops {
    pl_op *kop, *pop, *cop;
    pl_backend *cb;
    int64_t N;
} ops;

/* Xl = the rows of op of the global block Xg (N x R). */
static void to_local(pl_op *op, int R, const double *Xg, double *Xl)
{
    pl_op_info in;
    pl_op_get_info(op, &in);
    const int64_t *gi = pl_op_global_index(op);
    for (int64_t i = 0; i < in.n_local; i++) memcpy(Xl + i * R, Xg + gi[i] * R, (size_t)R * sizeof *Xl);
}

/* Yg (N x R, every rank) = the rows Yl of op, each from its owner. */
static int to_global(pl_op *op, int R, int64_t N, const double *Yl, double *Yg)
{
    pl_op_info in;
    pl_op_get_info(op, &in);
    const int64_t *gi = pl_op_global_index(op);
    if (size > 1) memset(Yg, 0, (size_t)(N * R) * sizeof *Yg);
    for (int64_t i = 0; i < in.n_local; i++) memcpy(Yg + gi[i] * R, Yl + i * R, (size_t)R * sizeof *Yg);
    if (size > 1 && MPI_Allreduce(MPI_IN_PLACE, Yg, (int)(N * R), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD) != MPI_SUCCESS)
        return PL_ERROR(PL_ERR_MPI, "MPI_Allreduce of Y failed");
    return PL_OK;
}

/* Yg = the block product (aug: the KPM step from Y0g, dots) of op, global
 * blocks in and out; L: n_local x R scratch (3 of them). */
static int block_global(pl_op *op, int R, int64_t N, int aug, const double *Xg, const double *Y0g, double *Yg,
                        double *dots, double *L)
{
    pl_op_info in;
    pl_op_get_info(op, &in);
    const size_t nv = (size_t)in.n_local * (size_t)R;
    to_local(op, R, Xg, L);
    if (aug) to_local(op, R, Y0g, L + nv);
    PL_CALL(block_host(op, R, aug, L, L + nv, L + 2 * nv, dots));
    PL_CALL(to_global(op, R, N, L + 2 * nv, Yg));
    return PL_OK;
}

/* 1a-e for R vectors, on global blocks (several ranks: each rank's rows of
 * every operator, gathered). */
static void check_R(const ops *o, int R, const char *d)
{
    const size_t N = (size_t)o->N, nv = N * (size_t)R;
    double *X = malloc(nv * sizeof *X), *Y0 = malloc(nv * sizeof *Y0), *Y = malloc(nv * sizeof *Y);
    double *H = malloc(nv * sizeof *H), *P = malloc(nv * sizeof *P), *T = malloc(nv * sizeof *T);
    double *L = malloc(3 * nv * sizeof *L); /* local scratch: n_local <= N */
    double dots[2 * PL_SPMM_RMAX], cdots[2 * PL_SPMM_RMAX];
    char dd[300];
    snprintf(dd, sizeof dd, "%s, R = %d, %d rank%s", d, R, size, size > 1 ? "s" : "");
    if (!X || !Y0 || !Y || !H || !P || !T || !L) {
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
    TU_OK(block_global(o->kop, R, o->N, 0, X, NULL, Y, NULL, L));
    pl_op_counters(o->kop, &n1, &s0);
    TU_CHECK_MSG(n1 - n0 == R, "%s: the block product counted %lld applies", dd, (long long)(n1 - n0));
    /* a: the single products (on several ranks kron_apply + kron_rem_apply) */
    to_local(o->kop, R, X, L);
    TU_OK(singles(o->kop, R, L, L + nv));
    TU_OK(to_global(o->kop, R, o->N, L + nv, H));
    const int64_t bad = nbits(Y, H, nv);
    TU_CHECK_MSG(bad == 0, "%s: %lld values of H X differ from the single products bitwise", dd, (long long)bad);
    /* b: the pJDS operator's block product (its permuted rows, the same row blocks) */
    TU_OK(block_global(o->pop, R, o->N, 0, X, NULL, P, NULL, L));
    const double es = stored_error(Y, P, N, R);
    TU_CHECK_MSG(es <= TOL_STORED, "%s: matrix-free vs pJDS block product %.3g of max|y|", dd, es);
    worst_stored = fmax(worst_stored, es);
    /* c: the KPM step (bitwise on one rank: fused; composed on several) */
    TU_OK(block_global(o->kop, R, o->N, 1, X, Y0, P, dots, L));
    check_aug(X, Y0, H, P, dots, N, R, size == 1, dd);
    if (size > 1) { /* and against the pJDS operator's KPM step */
        TU_OK(block_global(o->pop, R, o->N, 1, X, Y0, T, cdots, L));
        const double ea = stored_error(P, T, N, R);
        double e = 0.0;
        for (int c = 0; c < 2 * R; c++) e = fmax(e, fabs(dots[c] - cdots[c]) / fmax(fabs(cdots[c]), 1e-300));
        TU_CHECK_MSG(ea <= TOL_STORED && e <= TOL_DOTS, "%s: KPM step vs pJDS's: Y %.3g of max|y|, dots %.3g", dd,
                     ea, e);
        worst_stored = fmax(worst_stored, ea);
    }
    /* e: the CPU backend's block products */
    if (o->cop) {
        TU_OK(block_global(o->cop, R, o->N, 0, X, NULL, T, NULL, L));
        TU_CHECK_MSG(nbits(Y, T, nv) == 0, "%s: H X differs from the cpu backend's", dd);
        TU_OK(block_global(o->cop, R, o->N, 1, X, Y0, T, cdots, L));
        const double ea = size == 1 ? (double)nbits(P, T, nv) : stored_error(P, T, N, R) > TOL_STORED;
        TU_CHECK_MSG(ea == 0.0, "%s: the aug step's Y differs from the cpu backend's", dd);
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
    free(L);
}

/* (several ranks: exchange mode ex of pl_op_options, enum pl_exchange) */
static void check_model(pl_backend *be, const hh_params *p, int ex)
{
    static const int Rs[] = {1, 2, 3, 8, 32, PL_SPMM_RMAX};
    static const char *const exname[] = {"vector", "overlap", "task"};
    char d[300];
    snprintf(d, sizeof d, "%s, exchange %s", hh_args_describe(p), exname[ex]);
    hh_model *m = NULL;
    hh_mf *mf = NULL;
    pl_csr a = {0};
    ops o = {0};
    TU_OK(hh_model_create(p, &m));
    if (!m) return;
    o.N = hh_model_rows(m);
    TU_OK(hh_mf_create(m, &mf));
    pl_op_options oo;
    pl_op_options_defaults(&oo);
    oo.exchange = ex;
    if (mf) {
        pl_kron k;
        hh_mf_kron(mf, &k);
        /* the pJDS operator of the rows the matrix-free split gives this rank */
        const int64_t l0 = k.n_left * rank / size, l1 = k.n_left * (rank + 1) / size;
        TU_OK(hh_rows_csr(m, l0 * k.n_right, l1 * k.n_right, &a));
        oo.format = PL_FORMAT_PJDS;
        TU_OK(pl_op_create(&a, &oo, be, MPI_COMM_WORLD, &o.pop));
        oo.format = PL_FORMAT_MATRIX_FREE;
        TU_OK(pl_op_create_kron(&k, &oo, be, MPI_COMM_WORLD, &o.kop));
        if (backend_kind == PL_BACKEND_CUDA) {
            TU_OK(pl_backend_cpu_create(&o.cb));
            if (o.cb) TU_OK(pl_op_create_kron(&k, &oo, o.cb, MPI_COMM_WORLD, &o.cop));
        }
    }
    hh_mf_destroy(&mf); /* the backends hold their copies */
    if (o.kop && o.pop && (backend_kind == PL_BACKEND_CPU || o.cop)) {
        pl_op_info in;
        pl_op_get_info(o.kop, &in);
        long long halo = in.n_halo; /* several ranks: the remote path must run somewhere */
        MPI_Allreduce(MPI_IN_PLACE, &halo, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
        TU_CHECK_MSG(size == 1 || halo > 0, "%s: %d ranks and no halo: the remote part is not tested", d, size);
        for (size_t i = 0; i < sizeof Rs / sizeof *Rs; i++) check_R(&o, Rs[i], d);
    } else {
        TU_CHECK_MSG(0, "%s: set-up failed", d);
    }
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

/* be->kron_lz on x (host X, device dx) against the single product H x
 * (host H): y = h - (beta z) bit for bit, the sums to TOL_DOTS of the sums
 * of |terms| (2c; a kernel it does not cover returns PL_ERR_NOTSUP). */
static void check_lz(pl_backend *be, void *op, const double *X, const double *H, double *dx, double *dy, double *dz,
                     size_t N, const char *d)
{
    const double beta = 0.77;
    double *Z = malloc(N * sizeof *Z), *Y = malloc(N * sizeof *Y), got[PL_KRON_LZ_DOTS], *dd = NULL;
    if (!Z || !Y || be->vec_alloc(be, PL_KRON_LZ_DOTS, &dd) != PL_OK) {
        TU_CHECK_MSG(0, "%s: set-up failed", d);
        goto done;
    }
    for (size_t i = 0; i < N; i++) Z[i] = rnd01() - 0.5;
    TU_OK(be->upload(be, dz, Z, N));
    TU_OK(be->set(be, N, NAN, dy));
    const int e = be->kron_lz(be, op, dx, dz, beta, dy, dd); /* the sums stay in backend memory */
    if (e == PL_ERR_NOTSUP) goto done; /* this kernel has no fused step: the callers compose it */
    TU_OK(e);
    TU_OK(be->download(be, got, dd, PL_KRON_LZ_DOTS));
    TU_OK(be->download(be, Y, dy, N));
    long double ref[PL_KRON_LZ_DOTS] = {0}, sc[PL_KRON_LZ_DOTS] = {0};
    size_t bad = 0;
    for (size_t i = 0; i < N; i++) {
        const double bz = beta * Z[i], want = H[i] - bz;
        bad += memcmp(&want, &Y[i], sizeof want) != 0;
        const long double x = X[i], y = want, z = Z[i], t[PL_KRON_LZ_DOTS] = {x * x, y * x, y * y, z * y, z * x};
        for (int k = 0; k < PL_KRON_LZ_DOTS; k++) {
            ref[k] += t[k];
            sc[k] += fabsl(t[k]);
        }
    }
    TU_CHECK_MSG(bad == 0, "%s: kron_lz: %zu values differ from h - (beta z)", d, bad);
    for (int k = 0; k < PL_KRON_LZ_DOTS; k++) {
        const double err = (double)(fabsl((long double)got[k] - ref[k]) / (sc[k] > 0 ? sc[k] : 1.0L));
        if (err > worst_dots) worst_dots = err;
        TU_CHECK_MSG(err <= TOL_DOTS, "%s: kron_lz sum %d off by %.3g (relative to the sums of |terms|)", d, k, err);
    }
done:
    if (dd) be->vec_free(be, dd);
    free(Z);
    free(Y);
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
    check_aug(X, Y0, H, Y, dots, N, R, 1, dd);
    if (R == 1 && be->kron_lz) check_lz(be, op, X, H, dX, dx, dy, N, d); /* dX: X (one vector); dy as z */
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
        const int Rs[] = {1, 2, 3, 6, 8, 16, 33};
        for (size_t i = 0; i < sizeof Rs / sizeof Rs[0]; i++) slots_vs_apply(be, &k, Rs[i], d);
    } else {
        TU_CHECK_MSG(0, "%s: out of memory", d);
    }
    void *p[] = {ap, ac, lo, hi, av, dl, dr, c, lv, hv};
    for (size_t i = 0; i < sizeof p / sizeof p[0]; i++) free(p[i]);
}

/* 2b: be->kron_rem_spmm on random remote lists (n_rows of nl local left
 * rows, nh halo rows, up to 6 entries per row, repeated halo rows, +-0.0
 * values) against the formula of spmv.h in a plain loop and against
 * kron_rem_apply of each column, bitwise, Y starting from random values. */
static void rem_slot(pl_backend *be, int64_t nr, int R, const char *d)
{
    enum { NL = 9, NH = 5, NROWS = 4 };
    const int32_t row[NROWS] = {0, 2, 3, 8};
    int64_t ptr[NROWS + 1] = {0};
    int32_t hrow[6 * NROWS];
    double val[6 * NROWS];
    for (int i = 0; i < NROWS; i++) {
        const int ne = i == 1 ? 6 : 1 + (int)(rnd01() * 4.0);
        ptr[i + 1] = ptr[i] + ne;
        for (int64_t j = ptr[i]; j < ptr[i + 1]; j++) {
            hrow[j] = j == ptr[i] + 1 ? hrow[j - 1] : (int32_t)(rnd01() * NH);
            const double u = rnd01();
            val[j] = u < 0.1 ? 0.0 : u < 0.2 ? -0.0 : rnd01() - 0.5;
        }
    }
    const pl_kron_remote r = {.n_right = nr, .n_rows = NROWS, .row = row, .ptr = ptr, .hrow = hrow, .val = val};
    const size_t ny = (size_t)(NL * nr * R), nx = (size_t)(NH * nr * R);
    double *Xh = malloc(nx * sizeof *Xh), *Y0 = malloc(ny * sizeof *Y0), *Y = malloc(ny * sizeof *Y);
    double *E = malloc(ny * sizeof *E), *C = malloc(ny * sizeof *C), *h = malloc((size_t)(NH * nr) * sizeof *h);
    double *dX = NULL, *dY = NULL, *dx = NULL, *dy = NULL;
    void *m = NULL;
    TU_OK(be->kron_rem_create(be, &r, &m));
    TU_OK(be->vec_alloc(be, nx, &dX));
    TU_OK(be->vec_alloc(be, ny, &dY));
    TU_OK(be->vec_alloc(be, (size_t)(NH * nr), &dx));
    TU_OK(be->vec_alloc(be, (size_t)(NL * nr), &dy));
    if (!Xh || !Y0 || !Y || !E || !C || !h || !m || !dX || !dY || !dx || !dy) {
        TU_CHECK_MSG(0, "%s: set-up failed", d);
        goto done;
    }
    for (size_t q = 0; q < nx; q++) Xh[q] = rnd01() < 0.1 ? -0.0 : rnd01() - 0.5;
    for (size_t q = 0; q < ny; q++) Y0[q] = rnd01() - 0.5;
    memcpy(E, Y0, ny * sizeof *E); /* the formula, value by value in j order */
    for (int i = 0; i < NROWS; i++)
        for (int64_t v = 0; v < nr * R; v++) {
            double y = E[row[i] * nr * R + v];
            for (int64_t j = ptr[i]; j < ptr[i + 1]; j++) y = y + val[j] * Xh[hrow[j] * nr * R + v];
            E[row[i] * nr * R + v] = y;
        }
    TU_OK(be->upload(be, dX, Xh, nx));
    TU_OK(be->upload(be, dY, Y0, ny));
    TU_OK(be->kron_rem_spmm(be, m, R, dX, dY));
    TU_OK(be->download(be, Y, dY, ny));
    for (int c = 0; c < R; c++) { /* kron_rem_apply of column c */
        for (int64_t q = 0; q < NH * nr; q++) h[q] = Xh[q * R + c];
        TU_OK(be->upload(be, dx, h, (size_t)(NH * nr)));
        double *col = malloc((size_t)(NL * nr) * sizeof *col);
        if (!col) {
            TU_CHECK_MSG(0, "%s: out of memory", d);
            break;
        }
        for (int64_t q = 0; q < NL * nr; q++) col[q] = Y0[q * R + c];
        TU_OK(be->upload(be, dy, col, (size_t)(NL * nr)));
        TU_OK(be->kron_rem_apply(be, m, dx, dy));
        TU_OK(be->download(be, col, dy, (size_t)(NL * nr)));
        for (int64_t q = 0; q < NL * nr; q++) C[q * R + c] = col[q];
        free(col);
    }
    TU_CHECK_MSG(nbits(Y, E, ny) == 0, "%s, R = %d: kron_rem_spmm differs from the formula", d, R);
    TU_CHECK_MSG(nbits(Y, C, ny) == 0, "%s, R = %d: kron_rem_spmm differs from kron_rem_apply", d, R);
    TU_CHECK_MSG(nbits(Y, Y0, ny) > 0, "%s, R = %d: kron_rem_spmm changed nothing", d, R);
done:
    if (m) be->kron_rem_destroy(be, m);
    double *dv[] = {dX, dY, dx, dy};
    for (int i = 0; i < 4; i++)
        if (dv[i]) be->vec_free(be, dv[i]);
    free(Xh);
    free(Y0);
    free(Y);
    free(E);
    free(C);
    free(h);
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
    const pl_backend saved = *nb;
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
    dv = NULL;
    pl_op_destroy(&nop);
    /* no kron_rem_spmm: several ranks refuse on every rank alike (no rank
     * enters the exchange: a rank going on would hang the test); one rank
     * needs no remote part */
    nb->kron_spmm = saved.kron_spmm;
    nb->kron_spmm_aug = saved.kron_spmm_aug;
    nb->kron_rem_spmm = NULL;
    TU_OK(pl_op_create_kron(&k, &oo, nb, MPI_COMM_WORLD, &nop));
    TU_OK(nb->vec_alloc(nb, 3 * N, &dv));
    if (nop && dv) {
        TU_OK(nb->set(nb, 3 * N, 0.5, dv));
        const int e1 = pl_op_apply_block(nop, 1, dv, dv + N);
        const int e2 = pl_op_apply_block_aug(nop, 1, 1.0, 0.0, 0.0, dv, dv + N, dv + 2 * N, dots);
        if (size > 1) {
            TU_CHECK(e1 == PL_ERR_NOTSUP && e2 == PL_ERR_NOTSUP);
            TU_CHECK_MSG(strstr(pl_error_message(), "(KPM step) across ranks") != NULL, "message '%s'",
                         pl_error_message());
        } else {
            TU_CHECK(e1 == PL_OK && e2 == PL_OK);
        }
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
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
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
        /* several ranks: every exchange mode (one rank has no exchange) */
        for (int ex = PL_EXCHANGE_VECTOR; ex <= (size > 1 ? PL_EXCHANGE_TASK : PL_EXCHANGE_VECTOR); ex++)
            for (size_t i = 0; i < sizeof ms / sizeof *ms; i++) check_model(be, &ms[i], ex);
        random_tables(be, 13, 2100, 5, 4, "random: n_left 13, n_right 2100");
        random_tables(be, 7, 1000, 0, 3, "random: nterms 0");
        random_tables(be, 20, 300, 11, 70, "random: nterms 11, 70 entries per row of A");
        random_tables(be, 1, 5003, 4, 1, "random: n_left 1");
        /* every count of coupling tables that variant 5 holds per thread
         * (in registers for the product, in shared memory for aug and lz) */
        random_tables(be, 11, 640, 1, 5, "random: nterms 1");
        random_tables(be, 9, 777, 7, 3, "random: nterms 7");
        random_tables(be, 5, 1031, 8, 2, "random: nterms 8");
        for (int R = 1; R <= PL_SPMM_RMAX; R = R < 8 ? R + 2 : 4 * R + 1) {
            rem_slot(be, 1000, R, "remote slot: n_right 1000");
            rem_slot(be, 1, R, "remote slot: n_right 1");
        }
        rem_slot(be, 513, PL_SPMM_RMAX, "remote slot: n_right 513");
        refusals(be);
        printf("kron_block (%s): %d (model, R) cases, worst vs pJDS %.3g of max|y|, aug dots %.3g\n", be->name,
               n_cases, worst_stored, worst_dots);
    }
    pl_backend_destroy(&be);
    const int r = tu_result("test_kron_block");
    MPI_Finalize();
    return r;
}
