/* test_kron_right.c — the matrix-free operator split by phonon
 * configurations (spmv.h PL_KRON_SPLIT_RIGHT, op_kron_right.c) against the
 * one-rank CSR product of the same Holstein-Hubbard matrix.
 *
 *  1. models: site and normal phonon bases x periodic and open boundaries,
 *     n_up != n_down, n_down = 0, M = 1, t = 0, g = 0; every exchange mode
 *     (vector, overlap, task):
 *     a. y = H x of pl_op_apply (through pl_op_global_index) equals the
 *        whole CSR's product (each rank computes it alone, in double) to
 *        1e-15 of max |y|, and the long-double CSR product to 1e-15;
 *     b. the block product (pl_op_apply_block, R = 1, 3, 8) equals the CSR
 *        product of every column to 1e-15 of the column's max |y|, and
 *        the composed KPM step (pl_op_apply_block_aug) alpha y + gamma x +
 *        beta y0 to 1e-15;
 *     c. info: the rows (w n_left, w = R_q+1 - R_q), the global index
 *        l n_right + R_q + (i mod w) of local row i = l w + (i mod w), the
 *        non-zeros summed over the ranks = the CSR's, n_halo, n_send and
 *        the neighbours = pl_kron_halo(RIGHT) of this rank, and what the
 *        exchange actually moved: the bytes this rank sent per product
 *        (pl_op_timings) = 8 send_values, and the sum over the ranks of
 *        the values received (n_halo) = the sum of the values sent;
 *     d. pl_op_to_original gives the contiguous LEFT block of x
 *        (pl_op_orig_block), pl_op_from_original the local x back, bitwise;
 *     e. pl_op_kron_update with the tables of the same model with other
 *        values (g, U, w0 changed) equals the new CSR product to 1e-15.
 *     On one rank the RIGHT split is the one-rank operator (no halo).
 *  2. pl_kron_split_choose: the split of the smaller largest-rank halo of
 *     pl_kron_halo (LEFT on ties), and PL_KRON_SPLIT_AUTO builds that one.
 *  3. fewer phonon configurations than ranks (M = 0): PL_ERR_INPUT on every
 *     rank, one line naming the phonon split. */
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

#define TOL 1e-15

static int rank, size;
static double worst = 0.0;
static int n_cases = 0;

static double xg_of(int64_t g, int c) { return cos(0.37 * (double)g + 0.1 + 0.21 * c) + 0.02 * (double)(g % 7); }

/* y = A x (CSR, double): the one-rank product. */
static void csr_apply(const pl_csr *a, const double *x, double *y)
{
    for (int64_t i = 0; i < a->nrows; i++) {
        double s = 0.0;
        for (int64_t k = a->row_ptr[i]; k < a->row_ptr[i + 1]; k++) s += a->val[k] * x[a->col[k]];
        y[i] = s;
    }
}

static double rel_diff(const double *y, const double *r, int64_t N)
{
    double d = 0.0, m = 0.0;
    for (int64_t i = 0; i < N; i++) {
        if (!isfinite(y[i])) return INFINITY;
        d = fmax(d, fabs(y[i] - r[i]));
        m = fmax(m, fabs(r[i]));
    }
    return m > 0.0 ? d / m : d;
}

/* Y = H X (R vectors, or the KPM step when aug) of op in the original
 * basis: Xg[g R + c] global; every rank's rows summed into Yg. */
static int apply_global(pl_op *op, int R, int aug, const double *Xg, const double *Y0g, double *Yg, int64_t N)
{
    pl_backend *be = pl_op_backend(op);
    const int64_t *gi = pl_op_global_index(op);
    pl_op_info in;
    pl_op_get_info(op, &in);
    const size_t n = (size_t)in.n_local, nR = n * (size_t)R + 1;
    double *hx = malloc(nR * sizeof *hx), *hy = malloc(nR * sizeof *hy);
    double *dx = NULL, *dy = NULL, *dw = NULL;
    int rc = PL_OK;
    PL_CHECK_GOTO(hx && hy, PL_ERR_MEM, done, rc, "out of memory");
    for (size_t i = 0; i < n; i++)
        for (int c = 0; c < R; c++) {
            hx[i * R + c] = Xg[gi[i] * R + c];
            hy[i * R + c] = Y0g ? Y0g[gi[i] * R + c] : NAN;
        }
    PL_CALL_GOTO(be->vec_alloc(be, nR, &dx), done, rc);
    PL_CALL_GOTO(be->vec_alloc(be, nR, &dy), done, rc);
    PL_CALL_GOTO(be->vec_alloc(be, nR, &dw), done, rc);
    PL_CALL_GOTO(be->upload(be, dx, hx, nR - 1), done, rc);
    PL_CALL_GOTO(be->upload(be, dy, hy, nR - 1), done, rc);
    if (aug) PL_CALL_GOTO(pl_op_apply_block_aug(op, R, 0.71, -0.33, -1.0, dx, dy, dw, NULL), done, rc);
    else if (R == 1) PL_CALL_GOTO(pl_op_apply(op, dx, dy), done, rc);
    else PL_CALL_GOTO(pl_op_apply_block(op, R, dx, dy), done, rc);
    PL_CALL_GOTO(be->download(be, hy, dy, nR - 1), done, rc);
    for (int64_t i = 0; i < N * R; i++) Yg[i] = 0.0;
    for (size_t i = 0; i < n; i++)
        for (int c = 0; c < R; c++) Yg[gi[i] * R + c] = hy[i * R + c];
    if (MPI_Allreduce(MPI_IN_PLACE, Yg, (int)(N * R), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD) != MPI_SUCCESS)
        rc = PL_ERROR(PL_ERR_MPI, "MPI_Allreduce of y failed");
done:
    if (dx) be->vec_free(be, dx);
    if (dy) be->vec_free(be, dy);
    if (dw) be->vec_free(be, dw);
    free(hx);
    free(hy);
    return rc;
}

/* 1a, 1b: every product of op against the CSR a. */
static void check_products(pl_op *op, const pl_csr *a, const char *d)
{
    const int64_t N = a->nrows;
    const int Rs[3] = {1, 3, 8};
    double *X = malloc((size_t)N * 8 * sizeof *X), *Y = malloc((size_t)N * 8 * sizeof *Y);
    double *Y0 = malloc((size_t)N * 8 * sizeof *Y0), *x = malloc((size_t)N * sizeof *x);
    double *y = malloc((size_t)N * sizeof *y), *r = malloc((size_t)N * sizeof *r);
    TU_CHECK(X && Y && Y0 && x && y && r);
    if (!X || !Y || !Y0 || !x || !y || !r) goto done;
    for (int ri = 0; ri < 3; ri++)
        for (int aug = 0; aug < 2; aug++) {
            const int R = Rs[ri];
            for (int64_t g = 0; g < N; g++)
                for (int c = 0; c < R; c++) {
                    X[g * R + c] = xg_of(g, c);
                    Y0[g * R + c] = xg_of(g + 11, c + 1);
                }
            TU_OK(apply_global(op, R, aug, X, aug ? Y0 : NULL, Y, N));
            for (int c = 0; c < R; c++) {
                for (int64_t g = 0; g < N; g++) x[g] = X[g * R + c];
                csr_apply(a, x, r);
                if (aug)
                    for (int64_t g = 0; g < N; g++) r[g] = 0.71 * r[g] - 0.33 * x[g] - Y0[g * R + c];
                for (int64_t g = 0; g < N; g++) y[g] = Y[g * R + c];
                const double e = rel_diff(y, r, N);
                worst = fmax(worst, e);
                TU_CHECK_MSG(e <= TOL, "%s: R = %d%s column %d: %.3g of max |y| from the CSR product", d, R,
                             aug ? " (KPM step)" : "", c, e);
            }
        }
    /* long double, single vector */
    {
        long double em = 0.0L, ym = 0.0L;
        for (int64_t g = 0; g < N; g++) x[g] = xg_of(g, 0);
        TU_OK(apply_global(op, 1, 0, x, NULL, y, N));
        for (int64_t i = 0; i < N; i++) {
            long double s = 0.0L;
            for (int64_t k = a->row_ptr[i]; k < a->row_ptr[i + 1]; k++) s += (long double)a->val[k] * x[a->col[k]];
            em = fmaxl(em, fabsl((long double)y[i] - s));
            ym = fmaxl(ym, fabsl(s));
        }
        const double e = ym > 0.0L ? (double)(em / ym) : (double)em;
        TU_CHECK_MSG(e <= TOL, "%s: %.3g of max |y| from the long-double CSR product", d, e);
    }
done:
    free(X);
    free(Y);
    free(Y0);
    free(x);
    free(y);
    free(r);
}

/* 1c: info, global index, halo. */
static void check_info(pl_op *op, const pl_kron *k, const pl_csr *a, const char *d)
{
    pl_op_info in;
    pl_op_get_info(op, &in);
    const int64_t nl = k->n_left, nr = k->n_right, r0 = nr * rank / size, r1 = nr * (rank + 1) / size, w = r1 - r0;
    TU_CHECK_MSG(in.format == PL_FORMAT_MATRIX_FREE && in.n_local == w * nl && in.n_global == nl * nr,
                 "%s: sizes %d of %lld", d, in.n_local, (long long)in.n_global);
    TU_CHECK_MSG(pl_op_kron_split(op) == (size > 1 ? PL_KRON_SPLIT_RIGHT : -1), "%s: split %d", d,
                 pl_op_kron_split(op));
    const int64_t *g = pl_op_global_index(op);
    int64_t bad = 0;
    for (int64_t i = 0; i < in.n_local && size > 1; i++) bad += g[i] != (i / w) * nr + r0 + i % w;
    TU_CHECK_MSG(bad == 0, "%s: %lld global indices wrong", d, (long long)bad);
    int64_t nnz = in.nnz_local, gnnz = 0;
    MPI_Allreduce(&nnz, &gnnz, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    TU_CHECK_MSG(gnnz == pl_csr_nnz(a), "%s: nnz %lld over the ranks, the CSR has %lld", d, (long long)gnnz,
                 (long long)pl_csr_nnz(a));
    pl_kron_halo_info *hi = calloc((size_t)size, sizeof *hi);
    TU_CHECK(hi != NULL);
    if (hi && size > 1) {
        TU_OK(pl_kron_halo(k, size, PL_KRON_SPLIT_RIGHT, hi));
        TU_CHECK_MSG(hi[rank].rows == in.n_local && hi[rank].halo_values == in.n_halo &&
                         hi[rank].send_values == in.n_send && hi[rank].halo_lines * nl == in.n_halo &&
                         hi[rank].neighbors == in.n_neighbors,
                     "%s: rank %d: halo %d, sends %lld, %d neighbours; pl_kron_halo %lld, %lld, %d", d, rank,
                     in.n_halo, (long long)in.n_send, in.n_neighbors, (long long)hi[rank].halo_values,
                     (long long)hi[rank].send_values, hi[rank].neighbors);
        /* what the exchange moved in one product */
        pl_backend *be = pl_op_backend(op);
        double *dx = NULL, *dy = NULL;
        TU_OK(be->vec_alloc(be, (size_t)in.n_local + 1, &dx));
        TU_OK(be->vec_alloc(be, (size_t)in.n_local + 1, &dy));
        if (dx && dy) {
            TU_OK(be->set(be, (size_t)in.n_local, 1.0, dx));
            pl_op_reset_counters(op);
            TU_OK(pl_op_apply(op, dx, dy));
            pl_op_timings t;
            pl_op_timings_get(op, &t);
            int64_t mv[2] = {in.n_halo, (int64_t)(t.bytes_sent / 8.0)}, sum[2] = {0, 0};
            MPI_Allreduce(mv, sum, 2, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
            TU_CHECK_MSG(t.bytes_sent == 8.0 * (double)hi[rank].send_values && sum[0] == sum[1],
                         "%s: rank %d sent %.0f B (pl_kron_halo: %lld values); received %lld, sent %lld over the "
                         "ranks",
                         d, rank, t.bytes_sent, (long long)hi[rank].send_values, (long long)sum[0],
                         (long long)sum[1]);
        }
        if (dx) be->vec_free(be, dx);
        if (dy) be->vec_free(be, dy);
    }
    free(hi);
}

/* 1d: the layouts. */
static void check_layout(pl_op *op, const char *d)
{
    pl_op_info in;
    pl_op_get_info(op, &in);
    const int64_t n = in.n_local, *g = pl_op_global_index(op);
    int64_t o0 = 0, on = 0, tot = 0;
    pl_op_orig_block(op, &o0, &on);
    MPI_Allreduce(&on, &tot, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    TU_CHECK_MSG(tot == in.n_global, "%s: original blocks of %lld rows in all", d, (long long)tot);
    double *xl = malloc((size_t)(2 * n + 1) * sizeof *xl), *xo = malloc((size_t)(2 * on + 1) * sizeof *xo);
    double *back = malloc((size_t)(2 * n + 1) * sizeof *back);
    TU_CHECK(xl && xo && back);
    if (xl && xo && back) {
        for (int64_t i = 0; i < n; i++)
            for (int v = 0; v < 2; v++) xl[v * n + i] = xg_of(g[i], v);
        TU_OK(pl_op_to_original(op, 2, xl, (size_t)n, xo, (size_t)on));
        int64_t bad = 0;
        for (int64_t i = 0; i < on; i++)
            for (int v = 0; v < 2; v++) bad += xo[v * on + i] != xg_of(o0 + i, v);
        TU_OK(pl_op_from_original(op, 2, xo, (size_t)on, back, (size_t)n));
        bad += memcmp(back, xl, (size_t)(2 * n) * sizeof *xl) != 0;
        TU_CHECK_MSG(bad == 0, "%s: pl_op_to_original / from_original: %lld wrong", d, (long long)bad);
    }
    free(xl);
    free(xo);
    free(back);
}

static void check_model(pl_backend *be, const hh_params *p)
{
    const char *d = hh_args_describe(p);
    hh_model *m = NULL, *m2 = NULL;
    hh_mf *mf = NULL, *mf2 = NULL;
    pl_csr a = {0}, a2 = {0};
    TU_OK(hh_model_create(p, &m));
    hh_params p2 = *p; /* the same structure, other values (a value sweep point) */
    p2.coupling *= 1.3;
    p2.hubbard_u += 0.7;
    p2.phonon_frequency *= 0.9;
    TU_OK(hh_model_create(&p2, &m2));
    if (!m || !m2) goto done;
    const int64_t N = hh_model_rows(m);
    TU_OK(hh_rows_csr(m, 0, N, &a));
    TU_OK(hh_rows_csr(m2, 0, N, &a2));
    TU_OK(hh_mf_create(m, &mf));
    TU_OK(hh_mf_create(m2, &mf2));
    if (!mf || !mf2 || !a.row_ptr || !a2.row_ptr) goto done;
    pl_kron k, k2;
    hh_mf_kron(mf, &k);
    hh_mf_kron(mf2, &k2);
    const int ex[3] = {PL_EXCHANGE_VECTOR, PL_EXCHANGE_OVERLAP, PL_EXCHANGE_TASK};
    for (int e = 0; e < 3; e++) {
        pl_op_options oo;
        pl_op_options_defaults(&oo);
        oo.format = PL_FORMAT_MATRIX_FREE;
        oo.kron_split = PL_KRON_SPLIT_RIGHT;
        oo.exchange = ex[e];
        pl_op *op = NULL;
        TU_OK(pl_op_create_kron(&k, &oo, be, MPI_COMM_WORLD, &op));
        if (!op) continue;
        char de[300];
        snprintf(de, sizeof de, "%s, exchange %d", d, ex[e]);
        check_info(op, &k, &a, de);
        check_products(op, &a, de);
        if (e == 0) {
            check_layout(op, de);
            TU_OK(pl_op_kron_update(op, &k2));
            snprintf(de, sizeof de, "%s, updated values", d);
            check_products(op, &a2, de);
        }
        pl_op_destroy(&op);
        n_cases++;
    }
    if (size > 1) { /* 2: the choice */
        int sp = -1;
        int64_t lm = 0, rm = 0;
        TU_OK(pl_kron_split_choose(&k, size, &sp, &lm, &rm));
        TU_CHECK_MSG(sp == (rm < lm ? PL_KRON_SPLIT_RIGHT : PL_KRON_SPLIT_LEFT), "%s: choice %d for halos %lld, %lld",
                     d, sp, (long long)lm, (long long)rm);
        pl_op_options oo;
        pl_op_options_defaults(&oo);
        oo.kron_split = PL_KRON_SPLIT_AUTO;
        pl_op *op = NULL;
        TU_OK(pl_op_create_kron(&k, &oo, be, MPI_COMM_WORLD, &op));
        TU_CHECK_MSG(op && pl_op_kron_split(op) == sp, "%s: auto built split %d, chose %d", d,
                     op ? pl_op_kron_split(op) : -2, sp);
        pl_op_destroy(&op);
    }
done:
    hh_mf_destroy(&mf);
    hh_mf_destroy(&mf2);
    pl_csr_destroy(&a);
    pl_csr_destroy(&a2);
    hh_model_destroy(&m);
    hh_model_destroy(&m2);
}

/* 3: one phonon configuration on several ranks. */
static void too_few(pl_backend *be)
{
    const hh_params p = hh_args_model(4, 2, 2, 1.0, 2.0, 0.5, 0.8, 0, PL_PHONON_SITE, PL_BOUNDARY_PERIODIC);
    hh_model *m = NULL;
    hh_mf *mf = NULL;
    TU_OK(hh_model_create(&p, &m));
    if (m) TU_OK(hh_mf_create(m, &mf));
    if (mf) {
        pl_kron k;
        hh_mf_kron(mf, &k);
        pl_op_options oo;
        pl_op_options_defaults(&oo);
        oo.kron_split = PL_KRON_SPLIT_RIGHT;
        pl_op *op = (pl_op *)&oo;
        TU_CHECK(pl_op_create_kron(&k, &oo, be, MPI_COMM_WORLD, &op) == PL_ERR_INPUT && op == NULL);
        TU_CHECK_MSG(strstr(pl_error_message(), "kron_split = phonon") != NULL &&
                         strchr(pl_error_message(), '\n') == NULL,
                     "message '%s'", pl_error_message());
        pl_error_clear();
    }
    hh_mf_destroy(&mf);
    hh_model_destroy(&m);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    pl_log_init(rank, 0);
    int kind = PL_BACKEND_CPU;
    const char *tb = getenv("PJDS_TEST_BACKEND");
    if (tb && !strcmp(tb, "cuda")) {
        if (pl_cuda_device_count() < 1) {
            if (rank == 0) fprintf(stderr, "skipped: no CUDA device\n");
            MPI_Finalize();
            return 77;
        }
        kind = PL_BACKEND_CUDA;
    }
    pl_backend *be = NULL;
    TU_OK(pl_backend_create(kind, rank, &be));
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
            hh_args_model(6, 3, 2, 1.0, 2.0, 0.5, 0.8, 1, S, O),    /* M = 1 */
            hh_args_model(4, 2, 2, 0.0, 2.0, 0.8, 0.6, 3, S, O),    /* t = 0: no A */
            hh_args_model(4, 2, 1, 1.0, 2.0, 0.8, 0.0, 3, Nm, P),   /* g = 0: no couplings, no halo */
        };
        for (size_t i = 0; i < sizeof ms / sizeof *ms; i++) check_model(be, &ms[i]);
        if (size > 1) too_few(be);
        if (rank == 0)
            printf("kron_right (%s, %d ranks): %d operators, worst against the CSR product %.3g\n", be->name, size,
                   n_cases, worst);
    }
    pl_backend_destroy(&be);
    int fails = tu_failures, gf = 0;
    MPI_Allreduce(&fails, &gf, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    tu_failures = gf;
    const int r = tu_result("test_kron_right");
    MPI_Finalize();
    return r;
}
