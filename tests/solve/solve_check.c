/* solve_check.c — independent check of a `pjds-lanczos solve` result file.
 *
 * Usage: solve_check CONFIG RESULT.h5 [--compare OTHER.h5] [--dense]
 *                    [--vectors] [--expect-nev K]
 * Rebuilds the matrix of CONFIG with hh_rows_csr (the unpermuted, original
 * basis) and checks, reading RESULT.h5 with the HDF5 C API:
 *   --dense     eigenvalues equal the dense LAPACKE_dsyev spectrum (1e-10
 *               relative), for the configured `which`
 *   --vectors   /eigenvectors (nev x N) have unit norm and satisfy
 *               ||A v - lambda v|| <= tol * max(|lambda|, normest) (+ rounding)
 *               and the residual matches /residual_norms; they are mutually
 *               orthogonal (|x_i . x_j| <= 1e-8: no ghost copies)
 *   --compare   eigenvalues equal those of OTHER.h5 (1e-10 relative)
 * Exit status 0 when every check passes. */
#include <float.h>
#include <hdf5.h>
#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "hh.h"
#include "pl_config.h"
#include "pl_error.h"
#include "testutil.h"

static double *read_1d(hid_t f, const char *name, hsize_t *n)
{
    hid_t d = H5Dopen2(f, name, H5P_DEFAULT);
    if (d < 0) return NULL;
    hid_t s = H5Dget_space(d);
    hsize_t dims[2] = {0, 0};
    int rank = H5Sget_simple_extent_dims(s, dims, NULL);
    hsize_t total = rank == 2 ? dims[0] * dims[1] : dims[0];
    double *x = malloc((total + 1) * sizeof *x);
    if (H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, x) < 0) {
        free(x);
        x = NULL;
    }
    *n = total;
    if (rank == 2) n[1] = dims[1], n[0] = dims[0];
    H5Sclose(s);
    H5Dclose(d);
    return x;
}

static double attr_double(hid_t f, const char *name)
{
    double v = NAN;
    hid_t a = H5Aopen(f, name, H5P_DEFAULT);
    if (a < 0) return NAN;
    if (H5Aread(a, H5T_NATIVE_DOUBLE, &v) < 0) v = NAN;
    H5Aclose(a);
    return v;
}

static double *load_eigs(const char *path, hsize_t *nev, hid_t *fout)
{
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0) {
        fprintf(stderr, "cannot open %s\n", path);
        exit(1);
    }
    double *e = read_1d(f, "/eigenvalues", nev);
    if (!e) {
        fprintf(stderr, "%s: no /eigenvalues\n", path);
        exit(1);
    }
    if (fout) *fout = f;
    else H5Fclose(f);
    return e;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: solve_check CONFIG RESULT.h5 [--compare OTHER.h5] [--dense] [--vectors] [--expect-nev K]\n");
        return 2;
    }
    const char *cfgpath = argv[1], *h5 = argv[2], *other = NULL;
    int dense = 0, vectors = 0, expect_nev = -1;
    for (int i = 3; i < argc; i++) {
        if (!strcmp(argv[i], "--compare") && i + 1 < argc) other = argv[++i];
        else if (!strcmp(argv[i], "--dense")) dense = 1;
        else if (!strcmp(argv[i], "--vectors")) vectors = 1;
        else if (!strcmp(argv[i], "--expect-nev") && i + 1 < argc) expect_nev = atoi(argv[++i]);
    }
    pl_config cfg;
    pl_config_defaults(&cfg);
    if (pl_config_read(&cfg, cfgpath) || pl_config_check(&cfg)) {
        pl_error_report();
        return 1;
    }
    hid_t f;
    hsize_t nev = 0;
    double *eig = load_eigs(h5, &nev, &f);
    if (expect_nev >= 0) TU_CHECK_MSG((int)nev == expect_nev, "nev %d, expected %d", (int)nev, expect_nev);
    if (other) {
        hsize_t nev2 = 0;
        double *e2 = load_eigs(other, &nev2, NULL);
        TU_CHECK(nev2 == nev);
        for (hsize_t i = 0; i < nev && i < nev2; i++)
            TU_CHECK_MSG(fabs(eig[i] - e2[i]) <= 1e-10 * fmax(1.0, fabs(e2[i])), "eigenvalue %d: %.17g vs %.17g (%s)",
                         (int)i, eig[i], e2[i], other);
        free(e2);
    }
    if (dense || vectors) {
        hh_model *model = NULL;
        pl_csr a = {0};
        hh_params hp;
        app_hh_params(&cfg.model, &hp);
        TU_OK(hh_model_create(&hp, &model));
        int64_t N = hh_model_rows(model);
        TU_OK(hh_rows_csr(model, 0, N, &a));
        hh_model_destroy(&model);
        if (dense) {
            if (N > 4000) TU_SKIP("N = %lld too large for the dense reference", (long long)N);
            double *d = calloc((size_t)(N * N), sizeof *d), *w = malloc((size_t)N * sizeof *w);
            for (int64_t r = 0; r < N; r++)
                for (int64_t p = a.row_ptr[r]; p < a.row_ptr[r + 1]; p++) d[r * N + a.col[p]] += a.val[p];
            TU_CHECK(LAPACKE_dsyev(LAPACK_ROW_MAJOR, 'N', 'U', (lapack_int)N, d, (lapack_int)N, w) == 0);
            for (hsize_t i = 0; i < nev; i++) {
                double r = cfg.solver.which == PL_WHICH_SMALLEST ? w[i] : w[N - 1 - (int64_t)i];
                TU_CHECK_MSG(fabs(eig[i] - r) <= 1e-10 * fmax(1.0, fabs(r)), "eigenvalue %d: %.17g vs dense %.17g",
                             (int)i, eig[i], r);
            }
            free(d);
            free(w);
        }
        if (vectors) {
            hsize_t dims[2] = {0, 0}, nr = 0;
            double *v = read_1d(f, "/eigenvectors", dims);
            double *res = read_1d(f, "/residual_norms", &nr);
            double tol = attr_double(f, "tolerance"), normest = attr_double(f, "norm_estimate");
            TU_CHECK_MSG(v != NULL, "no /eigenvectors in %s", h5);
            TU_CHECK(res && nr == nev);
            TU_CHECK(tol > 0 && normest > 0);
            if (v) {
                TU_CHECK_MSG(dims[0] == nev && (int64_t)dims[1] == N, "/eigenvectors is %llu x %llu, expected %llu x %lld",
                             (unsigned long long)dims[0], (unsigned long long)dims[1], (unsigned long long)nev, (long long)N);
                double *y = malloc((size_t)N * sizeof *y);
                for (hsize_t i = 0; i < nev && dims[1] == (hsize_t)N; i++) {
                    const double *x = v + i * (size_t)N;
                    double nx = 0, nr2 = 0;
                    for (int64_t r = 0; r < N; r++) {
                        double s = 0;
                        for (int64_t p = a.row_ptr[r]; p < a.row_ptr[r + 1]; p++) s += a.val[p] * x[a.col[p]];
                        y[r] = s - eig[i] * x[r];
                        nr2 += y[r] * y[r];
                        nx += x[r] * x[r];
                    }
                    double rn = sqrt(nr2), bound = tol * fmax(fabs(eig[i]), normest) + 1e3 * DBL_EPSILON * normest;
                    fprintf(stderr, "vector %d: ||x|| = %.15f, ||A x - lambda x|| = %.3e (file %.3e, bound %.3e)\n",
                            (int)i, sqrt(nx), rn, res ? res[i] : NAN, bound);
                    TU_CHECK_MSG(fabs(sqrt(nx) - 1.0) <= 1e-10, "vector %d: norm %.15f", (int)i, sqrt(nx));
                    TU_CHECK_MSG(rn <= bound, "vector %d: residual %.3e > %.3e", (int)i, rn, bound);
                    if (res) TU_CHECK_MSG(fabs(rn - res[i]) <= 1e-12 * normest, "vector %d: residual %.3e, file says %.3e",
                                          (int)i, rn, res[i]);
                }
                free(y);
                /* no ghosts: the vectors are mutually orthogonal (a duplicate
                 * eigenvalue must come with a second, independent vector) */
                for (hsize_t i = 0; i < nev && dims[1] == (hsize_t)N; i++)
                    for (hsize_t j = 0; j < i; j++) {
                        double d = 0;
                        for (int64_t r = 0; r < N; r++) d += v[i * (size_t)N + r] * v[j * (size_t)N + r];
                        fprintf(stderr, "x%d . x%d = %.3e\n", (int)i, (int)j, d);
                        TU_CHECK_MSG(fabs(d) <= 1e-8, "vectors %d and %d not orthogonal: %.3e", (int)i, (int)j, d);
                    }
            }
            free(v);
            free(res);
        }
        pl_csr_destroy(&a);
    }
    H5Fclose(f);
    free(eig);
    pl_config_destroy(&cfg);
    return tu_result("solve_check");
}
