/* test_fact_cudss.c — the cuDSS back-end of the factorisation
 * (factor/fact_cudss.c) through its create/factor/solve table, against dense
 * LAPACK (LAPACKE dgesv / zgesv) on the same matrices.
 *
 * Cases (n = 200, about 8 entries a row, diagonally weighted but indefinite):
 * real nonsymmetric (LU), real symmetric (LDL^T on the lower triangle),
 * complex nonsymmetric, complex symmetric (A - sigma I with a complex sigma).
 * Each: analysis figures (backend, memory estimate, factor entries), factor,
 * solve of two right-hand sides with ||M x - b|| / ||b|| <= 1e-12 and
 * ||x - x_lapack|| / ||x_lapack|| <= 1e-10, then a refactorisation with new
 * values on the same pattern (a new shift) checked the same way — with the
 * default (CUDSS_PHASE_REFACTORIZATION) and with PJDS_CUDSS_REFACTOR=0 (full
 * factorisation), both printed so that a failure shows which one is wrong.
 * Last, a matrix with two equal rows: PL_ERR_INPUT whose message says
 * "singular".  Exit 77 without a GPU.  One line per case on stdout. */
#define _POSIX_C_SOURCE 200809L /* setenv, unsetenv */
#include <complex.h>
#include <lapacke.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fact_impl.h"
#include "pl_error.h"
#include "testutil.h"

#if PJDS_HAVE_CUDSS
#include <cuda_runtime.h>

#define N 200
#define TOL_RES 1e-12
#define TOL_REF 1e-10

static uint64_t rng = 12345;
static double unif(void) /* [-1, 1) */
{
    uint64_t z = (rng += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return (double)(z >> 11) * 0x1.0p-53 * 2.0 - 1.0;
}

/* A sparse test matrix held densely (N x N, complex; im = 0 when real) and as CSR. */
typedef struct tmat {
    double complex a[N * N];
    int64_t rowptr[N + 1], col[N * N];
    double re[N * N], im[N * N];
    int64_t nnz;
} tmat;

/* pattern: diagonal, both neighbours and a few random ones (symmetrised when sym) */
static void make_pattern(int pat[N][N], int sym)
{
    memset(pat, 0, sizeof(int) * N * N);
    for (int i = 0; i < N; i++) {
        pat[i][i] = 1;
        if (i > 0) pat[i][i - 1] = pat[i - 1][i] = 1;
        for (int k = 0; k < 5; k++) {
            int j = (int)((unif() + 1.0) * 0.5 * N) % N;
            pat[i][j] = 1;
            if (sym) pat[j][i] = 1;
        }
    }
}

/* values on the pattern: random, diagonal 2 + random (indefinite mix after the shift) */
static void fill(tmat *m, int pat[N][N], int sym, int cplx, double complex shift)
{
    memset(m->a, 0, sizeof m->a);
    for (int i = 0; i < N; i++)
        for (int j = sym ? i : 0; j < N; j++) {
            if (!pat[i][j]) continue;
            double complex v = unif() + (cplx ? I * unif() : 0.0);
            if (i == j) v += (i % 2 ? 3.0 : -3.0) - shift;
            m->a[i * N + j] = v;
            if (sym) m->a[j * N + i] = v;
        }
    m->nnz = 0;
    m->rowptr[0] = 0;
    for (int i = 0; i < N; i++) {
        for (int j = 0; j < N; j++)
            if (pat[i][j]) {
                m->col[m->nnz] = j;
                m->re[m->nnz] = creal(m->a[i * N + j]);
                m->im[m->nnz] = cimag(m->a[i * N + j]);
                m->nnz++;
            }
        m->rowptr[i + 1] = m->nnz;
    }
}

/* ||M x - b|| / ||b|| with the dense copy, and ||x - ref|| / ||ref|| */
static void errors(const tmat *m, const double complex *b, const double complex *x, const double complex *ref,
                   double *res, double *dref)
{
    double rn = 0, bn = 0, dn = 0, xn = 0;
    for (int i = 0; i < N; i++) {
        double complex s = 0;
        for (int j = 0; j < N; j++) s += m->a[i * N + j] * x[j];
        rn += pow(cabs(s - b[i]), 2);
        bn += pow(cabs(b[i]), 2);
        dn += pow(cabs(x[i] - ref[i]), 2);
        xn += pow(cabs(ref[i]), 2);
    }
    *res = sqrt(rn / bn);
    *dref = sqrt(dn / xn);
}

/* x = M^{-1} b by LAPACK (dgesv for real data, zgesv for complex) */
static int lapack_solve(const tmat *m, int cplx, const double complex *b, double complex *x)
{
    lapack_int ipiv[N];
    int info;
    if (cplx) {
        static lapack_complex_double a[N * N], xb[N];
        for (int k = 0; k < N * N; k++) a[k] = m->a[k];
        for (int i = 0; i < N; i++) xb[i] = b[i];
        info = LAPACKE_zgesv(LAPACK_ROW_MAJOR, N, 1, a, N, ipiv, xb, 1);
        for (int i = 0; i < N; i++) x[i] = xb[i];
    } else {
        static double a[N * N], xb[N];
        for (int k = 0; k < N * N; k++) a[k] = creal(m->a[k]);
        for (int i = 0; i < N; i++) xb[i] = creal(b[i]);
        info = LAPACKE_dgesv(LAPACK_ROW_MAJOR, N, 1, a, N, ipiv, xb, 1);
        for (int i = 0; i < N; i++) x[i] = xb[i];
    }
    return info;
}

/* two right-hand sides through ops->solve, each checked; returns the worst residual */
static double check_solves(const char *what, const tmat *m, int cplx, const pl_fact_ops *ops, void *st)
{
    double worst = 0;
    for (int r = 0; r < 2; r++) {
        double complex b[N], x[N], ref[N];
        double br[N], bi[N], xr[N], xi[N];
        for (int i = 0; i < N; i++) {
            b[i] = unif() + (cplx ? I * unif() : 0.0);
            br[i] = creal(b[i]);
            bi[i] = cimag(b[i]);
        }
        TU_CHECK(lapack_solve(m, cplx, b, ref) == 0);
        int e = ops->solve(st, br, cplx ? bi : NULL, xr, cplx ? xi : NULL);
        TU_OK(e);
        if (e) return INFINITY;
        for (int i = 0; i < N; i++) x[i] = xr[i] + (cplx ? I * xi[i] : 0.0);
        double res, dref;
        errors(m, b, x, ref, &res, &dref);
        printf("  %-34s rhs %d: residual %.2e, vs LAPACK %.2e\n", what, r, res, dref);
        TU_CHECK_MSG(res <= TOL_RES, "%s: residual %.3g > %g", what, res, TOL_RES);
        TU_CHECK_MSG(dref <= TOL_REF, "%s: difference from LAPACK %.3g > %g", what, dref, TOL_REF);
        worst = fmax(worst, res);
    }
    return worst;
}

static void one_case(const char *name, int sym, int cplx)
{
    static int pat[N][N];
    static tmat m;
    make_pattern(pat, sym);
    fill(&m, pat, sym, cplx, cplx ? 0.5 + 0.25 * I : 0.5);
    pl_fact_opts o = {.kind = PL_FACT_CUDSS, .symmetric = sym, .is_complex = cplx, .mem_limit = 0, .verbose = 1};
    pl_fact_info info;
    memset(&info, 0, sizeof info);
    const pl_fact_ops *ops = NULL;
    void *st = NULL;
    int e = pl_fact_cudss_create(MPI_COMM_SELF, N, 0, N, m.rowptr, m.col, m.re, cplx ? m.im : NULL, &o, &info, &ops,
                                 &st);
    TU_OK(e);
    if (e) return;
    printf("%s: n %d, %lld entries, backend %s, estimate %.3g MB, factor entries %lld, analysis %.3f s\n", name, N,
           (long long)m.nnz, info.backend, info.mem_estimate / 1e6, (long long)info.nnz_factors, info.analyse_s);
    TU_CHECK(info.backend && strcmp(info.backend, "cudss") == 0);
    TU_CHECK(info.mem_estimate > 0 && info.nnz_factors >= N);
    TU_OK(ops->factor(st, m.re, cplx ? m.im : NULL));
    check_solves("factor", &m, cplx, ops, st);
    /* refactorisations on the same pattern, new values: the default phase, then full factorisation */
    const char *mode[2] = {"refactor (REFACTORIZATION)", "refactor (PJDS_CUDSS_REFACTOR=0)"};
    for (int k = 0; k < 2; k++) {
        if (k == 1) setenv("PJDS_CUDSS_REFACTOR", "0", 1);
        fill(&m, pat, sym, cplx, cplx ? -1.25 + 0.5 * I * (k + 1) : -1.25 - 0.5 * k);
        e = ops->factor(st, m.re, cplx ? m.im : NULL);
        TU_OK(e);
        if (!e) check_solves(mode[k], &m, cplx, ops, st);
    }
    unsetenv("PJDS_CUDSS_REFACTOR");
    ops->destroy(st);
}

/* rows 0 and 1 equal (and a pattern that is structurally nonsingular) */
static void singular_case(void)
{
    static int pat[N][N];
    static tmat m;
    make_pattern(pat, 0);
    for (int j = 0; j < N; j++) pat[1][j] = pat[0][j] = pat[0][j] | pat[1][j];
    fill(&m, pat, 0, 0, 0.0);
    for (int j = 0; j < N; j++) m.a[1 * N + j] = m.a[0 * N + j];
    for (int64_t p = m.rowptr[1], q = m.rowptr[0]; p < m.rowptr[2]; p++, q++) m.re[p] = m.re[q];
    pl_fact_opts o = {.kind = PL_FACT_CUDSS, .symmetric = 0, .is_complex = 0, .mem_limit = 0, .verbose = 0};
    pl_fact_info info;
    const pl_fact_ops *ops = NULL;
    void *st = NULL;
    int e = pl_fact_cudss_create(MPI_COMM_SELF, N, 0, N, m.rowptr, m.col, m.re, NULL, &o, &info, &ops, &st);
    TU_OK(e);
    if (e) return;
    e = ops->factor(st, m.re, NULL);
    const char *msg = pl_error_message();
    printf("singular: factor returned %s: %s\n", pl_error_name(e), msg);
    TU_CHECK_MSG(e == PL_ERR_INPUT, "a singular matrix gave %s, not PL_ERR_INPUT", pl_error_name(e));
    TU_CHECK_MSG(strstr(msg, "singular") != NULL, "message lacks 'singular': %s", msg);
    pl_error_clear();
    ops->destroy(st);
}

int main(int argc, char **argv)
{
    int ndev = 0;
    if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) TU_SKIP("no CUDA device");
    MPI_Init(&argc, &argv);
    one_case("real nonsymmetric", 0, 0);
    one_case("real symmetric", 1, 0);
    one_case("complex nonsymmetric", 0, 1);
    one_case("complex symmetric", 1, 1);
    singular_case();
    MPI_Finalize();
    return tu_result("test_fact_cudss");
}
#else
int main(void)
{
    fprintf(stderr, "skipped: cuDSS not built in\n");
    return 77;
}
#endif
