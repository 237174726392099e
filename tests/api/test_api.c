/* test_api.c — the public API of libpjds (include/pjds/pjds.h), linked as a
 * user links it (the shared library), on any number of ranks:
 *   sym     a sparse symmetric matrix: smallest and largest eigenvalues
 *           against LAPACKE_dsyev, eigenvectors by their dense residuals,
 *           the symmetry check, the method auto = Lanczos
 *   nonsym  a sparse nonsymmetric matrix with complex eigenvalues: largest
 *           magnitude against LAPACKE_dgeev, complex eigenvectors, auto =
 *           Krylov-Schur
 *   bad     bad input returns the right code with a message, on every rank
 *   hh      the Holstein-Hubbard constructor bit for bit against the
 *           internal path of the app (hh rows, pl_op_create with default
 *           options, lz_solve with lz_options_defaults) */
#include <lapacke.h>
#include <math.h>
#include <pjds/pjds.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hh.h"
#include "lanczos.h"
#include "testutil.h"

static int g_rank, g_size;
static pjds_backend g_backend = PJDS_BACKEND_CPU; /* argv[2]: cpu (default) or auto */

/* A reproducible sparse test matrix (dense, row-major): a tridiagonal
 * chain with a spread diagonal plus a few long-range couplings;
 * symmetric, or with a rotation part that gives complex pairs. */
static double *test_matrix(int N, int symmetric)
{
    double *A = calloc((size_t)N * N, sizeof *A);
    uint64_t s = 12345;
    for (int i = 0; i < N; i++) {
        A[(size_t)i * N + i] = 1.0 + 3.0 * i / N;
        if (i + 1 < N) A[(size_t)i * N + i + 1] = A[(size_t)(i + 1) * N + i] = -0.7;
    }
    for (int k = 0; k < 2 * N; k++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        int i = (int)((s >> 33) % (uint64_t)N), j = (int)((s >> 13) % (uint64_t)N);
        double v = (double)((s >> 40) % 1000) / 1000.0 - 0.5;
        A[(size_t)i * N + j] += v;
        A[(size_t)j * N + i] += symmetric ? v : -v; /* antisymmetric part: complex eigenvalues */
    }
    return A;
}

/* This rank's block of rows of the dense A as CSR (non-zeros only, columns
 * in reverse order: the API sorts them). */
static void block_csr(const double *A, int N, int64_t *row0, int64_t *n, int64_t **ptr, int64_t **col, double **val)
{
    *row0 = (int64_t)N * g_rank / g_size;
    *n = (int64_t)N * (g_rank + 1) / g_size - *row0;
    *ptr = calloc((size_t)*n + 1, sizeof **ptr);
    *col = malloc((size_t)N * (size_t)(*n + 1) * sizeof **col);
    *val = malloc((size_t)N * (size_t)(*n + 1) * sizeof **val);
    int64_t k = 0;
    for (int64_t r = 0; r < *n; r++) {
        for (int c = N - 1; c >= 0; c--)
            if (A[(size_t)(*row0 + r) * N + c] != 0.0) (*col)[k] = c, (*val)[k++] = A[(size_t)(*row0 + r) * N + c];
        (*ptr)[r + 1] = k;
    }
}

/* The whole vector from the ranks' blocks. */
static void gather(const double *mine, int64_t n, int N, double *all)
{
    int *cnt = malloc(sizeof(int) * g_size), *dsp = malloc(sizeof(int) * g_size);
    for (int r = 0; r < g_size; r++) {
        dsp[r] = (int)((int64_t)N * r / g_size);
        cnt[r] = (int)((int64_t)N * (r + 1) / g_size) - dsp[r];
    }
    MPI_Allgatherv(mine, (int)n, MPI_DOUBLE, all, cnt, dsp, MPI_DOUBLE, MPI_COMM_WORLD);
    free(cnt);
    free(dsp);
}

/* max_i |(A x - lambda x)_i| for x = xr + i xi, lambda = lr + i li */
static double dense_residual(const double *A, int N, const double *xr, const double *xi, double lr, double li)
{
    double worst = 0;
    for (int i = 0; i < N; i++) {
        double ar = 0, ai = 0;
        for (int j = 0; j < N; j++) ar += A[(size_t)i * N + j] * xr[j], ai += A[(size_t)i * N + j] * xi[j];
        worst = fmax(worst, hypot(ar - (lr * xr[i] - li * xi[i]), ai - (li * xr[i] + lr * xi[i])));
    }
    return worst;
}

static pjds_matrix *create(const double *A, int N)
{
    int64_t row0, n, *ptr, *col;
    double *val;
    block_csr(A, N, &row0, &n, &ptr, &col, &val);
    pjds_matrix *M = NULL;
    pjds_matrix_options mo;
    pjds_matrix_options_init(&mo);
    mo.backend = g_backend;
    int st = pjds_matrix_create_csr(MPI_COMM_WORLD, N, N, row0, n, ptr, col, val, &mo, &M);
    TU_CHECK_MSG(st == PJDS_OK, "create: %s", pjds_last_error());
    free(ptr), free(col), free(val);
    return M;
}

/* Solve and check values against ref (sorted as wanted) and vectors by their dense residuals. */
static void solve_check(pjds_matrix *M, const double *A, int N, pjds_which which, const double *ref_re,
                        const double *ref_im, int cplx)
{
    pjds_solve_options o;
    pjds_solve_options_init(&o);
    o.nev = 4;
    o.which = which;
    o.want_vectors = 1;
    pjds_result *r = NULL;
    TU_CHECK_MSG(pjds_solve(M, &o, &r) == PJDS_OK, "solve: %s", pjds_last_error());
    if (!r) return;
    pjds_result_info ri;
    TU_CHECK(pjds_result_get_info(r, &ri) == PJDS_OK);
    TU_CHECK(ri.reason == PJDS_STOP_CONVERGED && ri.nconv >= 4 && ri.has_vectors);
    TU_CHECK(ri.method == (cplx ? PJDS_METHOD_KRYLOV_SCHUR : PJDS_METHOD_LANCZOS) && ri.is_complex == cplx);
    /* verify (0.2.0's info fields): one search at least; Lanczos's certificate
     * at the default level where nothing was missed, else -1; Krylov-Schur -1 */
    TU_CHECK_MSG(o.verify_probability == 1e-3, "verify_probability default %g", o.verify_probability);
    TU_CHECK_MSG(ri.verify_searches >= 1 && ri.verify_missed >= 0, "verify: %d searches, %d missed", ri.verify_searches,
                 ri.verify_missed);
    if (cplx || ri.verify_missed > 0)
        TU_CHECK_MSG(ri.verify_bound == -1.0 || (cplx == 0 && ri.verify_bound > 0.0 && ri.verify_bound <= 1e-3),
                     "verify_bound %g", ri.verify_bound);
    else
        TU_CHECK_MSG(ri.verify_bound > 0.0 && ri.verify_bound <= 1e-3, "verify_bound %g", ri.verify_bound);
    if (!cplx) { /* a stricter level: reached, with more products */
        pjds_solve_options o2 = o;
        o2.verify_probability = 1e-9;
        pjds_result *r2 = NULL;
        pjds_result_info r2i;
        TU_CHECK_MSG(pjds_solve(M, &o2, &r2) == PJDS_OK, "solve at 1e-9: %s", pjds_last_error());
        if (r2 && pjds_result_get_info(r2, &r2i) == PJDS_OK && g_rank == 0)
            printf("verify: level 1e-3 bound %.2e after %lld products, level 1e-9 bound %.2e after %lld (missed %d, %d)\n",
                   ri.verify_bound, (long long)ri.iterations, r2i.verify_bound, (long long)r2i.iterations,
                   ri.verify_missed, r2i.verify_missed);
        if (r2 && ri.verify_missed == 0 && r2i.verify_missed == 0)
            TU_CHECK_MSG(r2i.verify_bound > 0.0 && r2i.verify_bound <= 1e-9 && r2i.iterations > ri.iterations,
                         "verify_probability 1e-9: bound %g after %lld products (%lld at 1e-3)", r2i.verify_bound,
                         (long long)r2i.iterations, (long long)ri.iterations);
        pjds_result_free(&r2);
    }
    double re[8], im[8], res[8];
    TU_CHECK(pjds_result_eigenvalues(r, re, im) == PJDS_OK && pjds_result_residuals(r, res) == PJDS_OK);
    double *xr = malloc(sizeof(double) * (size_t)(ri.n_local + 1)), *xi = malloc(sizeof(double) * (size_t)(ri.n_local + 1));
    double *ar = malloc(sizeof(double) * (size_t)N), *ai = malloc(sizeof(double) * (size_t)N);
    for (int i = 0; i < 4; i++) {
        TU_CLOSE(re[i], ref_re[i], 1e-9);
        TU_CLOSE(im[i], ref_im[i], 1e-9);
        TU_CHECK(res[i] < 1e-8);
        TU_CHECK(pjds_result_eigenvector(r, i, xr, xi) == PJDS_OK);
        gather(xr, ri.n_local, N, ar);
        gather(xi, ri.n_local, N, ai);
        double d = dense_residual(A, N, ar, ai, re[i], im[i]);
        TU_CHECK_MSG(d < 1e-8, "eigenvector %d: dense residual %.3e", i, d);
    }
    free(xr), free(xi), free(ar), free(ai);
    pjds_result_free(&r);
    TU_CHECK(r == NULL);
}

static void test_sym(void)
{
    const int N = 80;
    double *A = test_matrix(N, 1), *D = malloc(sizeof(double) * N * N), w[80], zero[4] = {0};
    memcpy(D, A, sizeof(double) * N * N);
    TU_CHECK(LAPACKE_dsyev(LAPACK_ROW_MAJOR, 'N', 'U', N, D, N, w) == 0);
    pjds_matrix *M = create(A, N);
    pjds_matrix_info mi;
    TU_CHECK(pjds_matrix_get_info(M, &mi) == PJDS_OK && mi.symmetric == 1 && mi.n_rows == N);
    solve_check(M, A, N, PJDS_WHICH_SMALLEST, w, zero, 0);
    double big[4] = {w[N - 1], w[N - 2], w[N - 3], w[N - 4]};
    solve_check(M, A, N, PJDS_WHICH_LARGEST, big, zero, 0);
    pjds_matrix_free(&M);
    TU_CHECK(M == NULL);
    free(A), free(D);
}

/* dgeev's eigenvalues in the order of largest magnitude, a conjugate pair + first */
static void nonsym_ref(const double *A, int N, double *re, double *im)
{
    double *D = malloc(sizeof(double) * N * N), *wr = malloc(sizeof(double) * N), *wi = malloc(sizeof(double) * N);
    memcpy(D, A, sizeof(double) * N * N);
    TU_CHECK(LAPACKE_dgeev(LAPACK_ROW_MAJOR, 'N', 'N', N, D, N, wr, wi, NULL, N, NULL, N) == 0);
    for (int k = 0; k < 4; k++) { /* selection of the largest remaining |lambda|, + imaginary part first */
        int b = -1;
        for (int i = 0; i < N; i++) {
            if (isnan(wr[i])) continue;
            double m = hypot(wr[i], wi[i]), mb = b < 0 ? -1 : hypot(wr[b], wi[b]);
            if (b < 0 || m > mb * (1 + 1e-12) || (fabs(m - mb) <= 1e-12 * mb && wi[i] > wi[b])) b = i;
        }
        re[k] = wr[b], im[k] = wi[b], wr[b] = NAN;
    }
    free(D), free(wr), free(wi);
}

static void test_nonsym(void)
{
    const int N = 80;
    double *A = test_matrix(N, 0), re[4], im[4];
    nonsym_ref(A, N, re, im);
    TU_CHECK_MSG(im[0] != 0.0 || im[2] != 0.0, "the test matrix should have complex wanted eigenvalues");
    pjds_matrix *M = create(A, N);
    pjds_matrix_info mi;
    TU_CHECK(pjds_matrix_get_info(M, &mi) == PJDS_OK && mi.symmetric == 0);
    solve_check(M, A, N, PJDS_WHICH_LARGEST_MAGNITUDE, re, im, 1);
    pjds_matrix_free(&M);
    free(A);
}

/* st is code with a message, and (several ranks) the same on every rank */
static void expect(pjds_status st, pjds_status code, const char *what)
{
    TU_CHECK_MSG(st == code, "%s: status %s, expected %s (%s)", what, pjds_status_name(st), pjds_status_name(code),
                 pjds_last_error());
    TU_CHECK_MSG(st == PJDS_OK || pjds_last_error()[0], "%s: no message", what);
    int mine = (int)st, lo = 0, hi = 0;
    MPI_Allreduce(&mine, &lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&mine, &hi, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    TU_CHECK_MSG(lo == hi, "%s: the ranks disagree", what);
    if (g_rank == 0 && st != PJDS_OK) printf("%s: %s: %s\n", what, pjds_status_name(st), pjds_last_error());
}

static void test_bad(void)
{
    const int N = 40;
    double *A = test_matrix(N, 1);
    int64_t row0, n, *ptr, *col;
    double *val;
    block_csr(A, N, &row0, &n, &ptr, &col, &val);
    pjds_matrix *M = (pjds_matrix *)&M; /* set to NULL on failure */
    expect(pjds_matrix_create_csr(MPI_COMM_WORLD, N, N + 1, row0, n, ptr, col, val, NULL, &M), PJDS_ERR_INPUT,
           "non-square");
    TU_CHECK(M == NULL);
    expect(pjds_matrix_create_csr(MPI_COMM_WORLD, N, N, row0, n, ptr, col, val, NULL, NULL), PJDS_ERR_ARG, "A = NULL");
    /* a bad column on the last rank only: every rank reports it */
    int64_t keep = col[ptr[n] - 1];
    if (g_rank == g_size - 1) col[ptr[n] - 1] = N + 3;
    expect(pjds_matrix_create_csr(MPI_COMM_WORLD, N, N, row0, n, ptr, col, val, NULL, &M), PJDS_ERR_INPUT,
           "column index");
    TU_CHECK(strstr(pjds_last_error(), "column index") != NULL);
    col[ptr[n] - 1] = keep;
    if (g_size > 1) /* blocks that do not tile [0, N) */
        expect(pjds_matrix_create_csr(MPI_COMM_WORLD, N, N, g_rank == 1 ? row0 + 1 : row0, g_rank == 1 ? n - 1 : n,
                                      g_rank == 1 ? ptr + 1 : ptr, col, val, NULL, &M),
               PJDS_ERR_INPUT, "row blocks");
    pjds_matrix_options mo;
    pjds_matrix_options_init(&mo);
    mo.backend = PJDS_BACKEND_CPU;
    expect(pjds_matrix_create_csr(MPI_COMM_WORLD, N, N, row0, n, ptr, col, val, &mo, &M), PJDS_OK, "good matrix");
    pjds_solve_options o;
    pjds_solve_options_init(&o);
    pjds_result *r = (pjds_result *)&r;
    o.nev = N;
    expect(pjds_solve(M, &o, &r), PJDS_ERR_INPUT, "nev >= N");
    TU_CHECK(r == NULL);
    o.nev = 2;
    o.tol = -1;
    expect(pjds_solve(M, &o, &r), PJDS_ERR_INPUT, "tol < 0");
    o.tol = 1e-10;
    o.verify_probability = 1.0;
    expect(pjds_solve(M, &o, &r), PJDS_ERR_INPUT, "verify_probability = 1");
    o.verify_probability = 0.0;
    expect(pjds_solve(M, &o, &r), PJDS_ERR_INPUT, "verify_probability = 0");
    TU_CHECK(r == NULL && strstr(pjds_last_error(), "verify_probability"));
    o.verify_probability = 1e-3;
    o.which = PJDS_WHICH_LARGEST_IMAGINARY;
    expect(pjds_solve(M, &o, &r), PJDS_ERR_INPUT, "largest_imaginary on a symmetric matrix");
    o.which = PJDS_WHICH_SMALLEST;
    expect(pjds_solve(M, &o, &r), PJDS_OK, "solve");
    double x[64];
    expect(pjds_result_eigenvector(r, 0, x, NULL), PJDS_ERR_ARG, "no vectors kept");
    expect(pjds_result_eigenvector(r, 7, x, NULL), PJDS_ERR_ARG, "index out of range");
    pjds_result_free(&r);
    pjds_matrix_free(&M);
    /* Lanczos on a matrix known to be nonsymmetric */
    mo.symmetry = PJDS_NONSYMMETRIC;
    expect(pjds_matrix_create_csr(MPI_COMM_WORLD, N, N, row0, n, ptr, col, val, &mo, &M), PJDS_OK, "nonsymmetric");
    o.method = PJDS_METHOD_LANCZOS;
    expect(pjds_solve(M, &o, &r), PJDS_ERR_INPUT, "lanczos on a nonsymmetric matrix");
    pjds_matrix_free(&M);
    pjds_hh_params hp;
    pjds_hh_params_init(&hp);
    hp.sites = 1;
    expect(pjds_matrix_create_hh(MPI_COMM_WORLD, &hp, NULL, &M), PJDS_ERR_INPUT, "hh sites = 1");
    free(A), free(ptr), free(col), free(val);
}

/* The API's Holstein-Hubbard solve against the internal path the app takes. */
static void test_hh(void)
{
    pjds_hh_params hp;
    pjds_hh_params_init(&hp);
    hp.sites = 4, hp.n_up = 2, hp.n_down = 2, hp.max_phonons = 2, hp.hubbard_u = 2.0, hp.coupling = 0.8;
    pjds_matrix_options mo;
    pjds_matrix_options_init(&mo);
    mo.backend = g_backend;
    pjds_matrix *M = NULL;
    TU_CHECK_MSG(pjds_matrix_create_hh(MPI_COMM_WORLD, &hp, &mo, &M) == PJDS_OK, "%s", pjds_last_error());
    pjds_matrix_info mi;
    TU_CHECK(pjds_matrix_get_info(M, &mi) == PJDS_OK && mi.symmetric == 1);
    pjds_result *r = NULL;
    TU_CHECK_MSG(pjds_solve(M, NULL, &r) == PJDS_OK, "%s", pjds_last_error());
    if (!M || !r) return;
    double api[16];
    pjds_result_eigenvalues(r, api, NULL);
    /* internal: the same rows, operator options and solver options */
    const hh_params p = {.sites = 4, .n_up = 2, .n_down = 2, .hopping = 1.0, .hubbard_u = 2.0, .phonon_frequency = 1.0,
                         .coupling = 0.8, .max_phonons = 2, .phonon_basis = PL_PHONON_SITE,
                         .boundary = PL_BOUNDARY_PERIODIC};
    hh_model *model = NULL;
    pl_csr rows;
    pl_backend *be = NULL;
    pl_op *op = NULL;
    pl_op_options oo;
    pl_op_options_defaults(&oo);
    lz_options lo;
    lz_options_defaults(&lo);
    lz_result lr;
    TU_OK(hh_model_create(&p, &model));
    TU_CHECK(hh_model_rows(model) == mi.n_rows);
    TU_OK(hh_rows_csr(model, mi.row0, mi.row0 + mi.n_local, &rows));
    TU_OK(pl_backend_create(mi.backend == PJDS_BACKEND_CUDA ? PL_BACKEND_CUDA : PL_BACKEND_CPU, 0, &be));
    TU_OK(pl_op_create(&rows, &oo, be, MPI_COMM_WORLD, &op));
    TU_OK(lz_solve(op, &lo, &lr));
    for (int i = 0; i < lr.nev; i++)
        TU_CHECK_MSG(memcmp(&api[i], &lr.eigenvalues[i], sizeof(double)) == 0, "eigenvalue %d: API %.17g, internal %.17g",
                     i, api[i], lr.eigenvalues[i]);
    if (g_rank == 0) printf("hh: ground state %.17g (API and internal agree bit for bit)\n", api[0]);
    lz_result_destroy(&lr);
    pl_op_destroy(&op);
    pl_backend_destroy(&be);
    pl_csr_destroy(&rows);
    hh_model_destroy(&model);
    pjds_result_free(&r);
    pjds_matrix_free(&M);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    const char *mode = argc > 1 ? argv[1] : "sym";
    if (argc > 2 && !strcmp(argv[2], "auto")) g_backend = PJDS_BACKEND_AUTO;
    if (!strcmp(mode, "sym")) test_sym();
    else if (!strcmp(mode, "nonsym")) test_nonsym();
    else if (!strcmp(mode, "bad")) test_bad();
    else if (!strcmp(mode, "hh")) test_hh();
    else TU_CHECK_MSG(0, "unknown mode %s", mode);
    int fail = tu_failures, any = 0;
    MPI_Allreduce(&fail, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPI_Finalize();
    return tu_result(mode) || any;
}
