/* test_api_mpi.c — the MPI helpers of the public API for bindings
 * (pjds_mpi_init, pjds_mpi_finalize, pjds_mpi_comm, pjds_mpi_comm_bytes,
 * pjds_mpi_comm_rank_size) and pjds_result_eigenvector_all, on any number
 * of ranks.  The program never calls MPI_Init itself: the library starts
 * MPI, as it does for the Python package.  The gathered eigenvectors are
 * checked by their dense residual ||A x - lambda x|| against the matrix
 * the test built (a wrong gather leaves a residual of order 1), and
 * against each rank's own block from pjds_result_eigenvector. */
#include <math.h>
#include <pjds/pjds.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

enum { N = 60 };

/* A(i, i) = 1 + i / N, A(i, i + 1) = 1.2, A(i + 1, i) = -0.8, A(i, i + 7) = 0.3:
 * nonsymmetric with complex pairs. */
static double entry(int i, int j)
{
    if (i == j) return 1.0 + (double)i / N;
    if (j == i + 1) return 1.2;
    if (j == i - 1) return -0.8;
    if (j == i + 7) return 0.3;
    return 0.0;
}

static pjds_matrix *create(MPI_Comm comm, int rank, int size)
{
    const int64_t row0 = (int64_t)N * rank / size, n = (int64_t)N * (rank + 1) / size - row0;
    int64_t *ptr = calloc((size_t)n + 1, sizeof *ptr), *col = malloc(sizeof *col * 4 * (size_t)(n + 1));
    double *val = malloc(sizeof *val * 4 * (size_t)(n + 1));
    int64_t k = 0;
    for (int64_t r = 0; r < n; r++) {
        for (int j = 0; j < N; j++)
            if (entry((int)(row0 + r), j) != 0.0) col[k] = j, val[k++] = entry((int)(row0 + r), j);
        ptr[r + 1] = k;
    }
    pjds_matrix_options mo;
    pjds_matrix_options_init(&mo);
    mo.backend = PJDS_BACKEND_CPU;
    pjds_matrix *A = NULL;
    TU_CHECK_MSG(pjds_matrix_create_csr(comm, N, N, row0, n, ptr, col, val, &mo, &A) == PJDS_OK, "create: %s",
                 pjds_last_error());
    free(ptr), free(col), free(val);
    return A;
}

/* max_i |(A x - lambda x)_i| of the whole vector x = xr + i xi */
static double residual(const double *xr, const double *xi, double lr, double li)
{
    double worst = 0;
    for (int i = 0; i < N; i++) {
        double yr = -(lr * xr[i] - li * xi[i]), yi = -(lr * xi[i] + li * xr[i]);
        for (int j = 0; j < N; j++) yr += entry(i, j) * xr[j], yi += entry(i, j) * xi[j];
        worst = fmax(worst, hypot(yr, yi));
    }
    return worst;
}

static void check_vectors(MPI_Comm comm, const pjds_result *r)
{
    pjds_result_info ri;
    TU_CHECK(pjds_result_get_info(r, &ri) == PJDS_OK && ri.is_complex == 1 && ri.nev >= 4);
    double re[8], im[8], xr[N], xi[N], br[N + 1], bi[N + 1];
    TU_CHECK(pjds_result_eigenvalues(r, re, im) == PJDS_OK);
    int pairs = 0;
    for (int i = 0; i < ri.nev && i < 8; i++) {
        pairs += im[i] != 0.0;
        TU_CHECK_MSG(pjds_result_eigenvector_all(r, comm, i, xr, xi) == PJDS_OK, "all: %s", pjds_last_error());
        double d = residual(xr, xi, re[i], im[i]), nrm = 0;
        for (int p = 0; p < N; p++) nrm += xr[p] * xr[p] + xi[p] * xi[p];
        TU_CHECK_MSG(d < 1e-8, "vector %d: dense residual %.3e", i, d);
        TU_CLOSE(nrm, 1.0, 1e-12);
        TU_CHECK(pjds_result_eigenvector(r, i, br, bi) == PJDS_OK);
        for (int64_t p = 0; p < ri.n_local; p++) TU_CHECK(br[p] == xr[ri.row0 + p] && bi[p] == xi[ri.row0 + p]);
        /* the real part alone */
        TU_CHECK(pjds_result_eigenvector_all(r, comm, i, br, NULL) == PJDS_OK && memcmp(br, xr, sizeof xr) == 0);
    }
    TU_CHECK_MSG(pairs > 0, "no complex eigenvalue among the %d returned: the test matrix lost its point", ri.nev);
    /* bad index: an error on every rank, with a message */
    TU_CHECK(pjds_result_eigenvector_all(r, comm, 99, xr, xi) == PJDS_ERR_ARG);
    TU_CHECK(strstr(pjds_last_error(), "index 99") != NULL);
    TU_CHECK(pjds_result_eigenvector_all(r, comm, 0, NULL, xi) == PJDS_ERR_ARG);
}

int main(void)
{
    int here = -1, again = -1;
    TU_CHECK_MSG(pjds_mpi_init(&here) == PJDS_OK && here == 1, "pjds_mpi_init: %s", pjds_last_error());
    TU_CHECK(pjds_mpi_init(&again) == PJDS_OK && again == 0); /* started already: nothing */
    TU_CHECK(pjds_mpi_comm_bytes() == (int)sizeof(MPI_Comm));
    MPI_Comm world = MPI_COMM_NULL, self = MPI_COMM_NULL;
    TU_CHECK(pjds_mpi_comm(PJDS_COMM_WORLD, &world) == PJDS_OK && world == MPI_COMM_WORLD);
    TU_CHECK(pjds_mpi_comm(PJDS_COMM_SELF, &self) == PJDS_OK && self == MPI_COMM_SELF);
    TU_CHECK(pjds_mpi_comm((pjds_comm_kind)7, &self) == PJDS_ERR_ARG && strstr(pjds_last_error(), "kind 7"));
    TU_CHECK(pjds_mpi_comm(PJDS_COMM_WORLD, NULL) == PJDS_ERR_ARG);
    int rank = -1, size = -1, r2 = -1, s2 = -1;
    TU_CHECK(pjds_mpi_comm_rank_size(world, &rank, &size) == PJDS_OK);
    MPI_Comm_rank(MPI_COMM_WORLD, &r2);
    MPI_Comm_size(MPI_COMM_WORLD, &s2);
    TU_CHECK(rank == r2 && size == s2);
    TU_CHECK(pjds_mpi_comm_rank_size(self, &r2, &s2) == PJDS_OK && r2 == 0 && s2 == 1);
    TU_CHECK(pjds_mpi_comm_rank_size(world, NULL, &s2) == PJDS_ERR_ARG);

    pjds_matrix *A = create(world, rank, size);
    pjds_solve_options o;
    pjds_solve_options_init(&o);
    o.nev = 4;
    o.which = PJDS_WHICH_LARGEST_MAGNITUDE;
    o.want_vectors = 1;
    pjds_result *r = NULL;
    TU_CHECK_MSG(A && pjds_solve(A, &o, &r) == PJDS_OK, "solve: %s", pjds_last_error());
    if (r) check_vectors(world, r);
    pjds_result_free(&r);
    o.want_vectors = 0;
    double x[N];
    TU_CHECK(A && pjds_solve(A, &o, &r) == PJDS_OK);
    TU_CHECK(pjds_result_eigenvector_all(r, world, 0, x, NULL) == PJDS_ERR_ARG &&
             strstr(pjds_last_error(), "want_vectors"));
    pjds_result_free(&r);
    pjds_matrix_free(&A);

    int fail = tu_failures, any = 0;
    MPI_Allreduce(&fail, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    int done = 0;
    TU_CHECK(pjds_mpi_finalize() == PJDS_OK && MPI_Finalized(&done) == MPI_SUCCESS && done == 1);
    TU_CHECK(pjds_mpi_finalize() == PJDS_OK); /* a second time: nothing */
    TU_CHECK(pjds_mpi_init(&here) == PJDS_ERR_MPI && strstr(pjds_last_error(), "finalized"));
    return tu_result("api_mpi") || any;
}
