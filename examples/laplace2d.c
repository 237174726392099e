/* laplace2d.c — the smallest eigenvalues of the 2-D Laplacian (5-point
 * stencil, Dirichlet boundary, n x n grid) through libpjds, against the
 * closed form 4 - 2 cos(i pi / (n + 1)) - 2 cos(j pi / (n + 1)).
 * Usage: [mpirun -np P] laplace2d [n] [nev]; exit status 1 when a value
 * differs by more than 1e-8 relative. */
#include <math.h>
#include <pjds/pjds.h>
#include <stdio.h>
#include <stdlib.h>

static int cmp(const void *a, const void *b) { return (*(const double *)a > *(const double *)b) - (*(const double *)a < *(const double *)b); }

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, n = argc > 1 ? atoi(argv[1]) : 20, nev = argc > 2 ? atoi(argv[2]) : 6, bad = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const int64_t N = (int64_t)n * n, row0 = N * rank / size, nloc = N * (rank + 1) / size - row0;
    int64_t *ptr = malloc((nloc + 1) * sizeof *ptr), *col = malloc(5 * (nloc + 1) * sizeof *col), k = 0;
    double *val = malloc(5 * (nloc + 1) * sizeof *val), *ev = malloc(N * sizeof *ev), *mine = malloc(nev * sizeof *mine);
    ptr[0] = 0;
    for (int64_t r = row0; r < row0 + nloc; r++) { /* this rank's rows of the block */
        const int64_t i = r / n, j = r % n;
        const int64_t nb[5] = {i > 0 ? r - n : -1, j > 0 ? r - 1 : -1, r, j < n - 1 ? r + 1 : -1, i < n - 1 ? r + n : -1};
        for (int q = 0; q < 5; q++)
            if (nb[q] >= 0) col[k] = nb[q], val[k++] = nb[q] == r ? 4.0 : -1.0;
        ptr[r - row0 + 1] = k;
    }
    pjds_matrix *A = NULL;
    pjds_result *res = NULL;
    pjds_solve_options opt;
    pjds_solve_options_init(&opt);
    opt.nev = nev;
    opt.which = PJDS_WHICH_SMALLEST;
    if (pjds_matrix_create_csr(MPI_COMM_WORLD, N, N, row0, nloc, ptr, col, val, NULL, &A) != PJDS_OK ||
        pjds_solve(A, &opt, &res) != PJDS_OK) {
        if (rank == 0) fprintf(stderr, "laplace2d: %s\n", pjds_last_error());
        MPI_Finalize();
        return 1;
    }
    pjds_result_eigenvalues(res, mine, NULL);
    for (int i = 0; i < n; i++) /* the exact spectrum, sorted */
        for (int j = 0; j < n; j++) ev[i * n + j] = 4 - 2 * cos((i + 1) * acos(-1.0) / (n + 1)) - 2 * cos((j + 1) * acos(-1.0) / (n + 1));
    qsort(ev, N, sizeof *ev, cmp);
    for (int i = 0; i < nev; i++) {
        const double rel = fabs(mine[i] - ev[i]) / fabs(ev[i]);
        bad |= rel > 1e-8;
        if (rank == 0) printf("eigenvalue[%d]: %.15f  exact %.15f  rel. error %.1e\n", i, mine[i], ev[i], rel);
    }
    pjds_result_free(&res);
    pjds_matrix_free(&A);
    free(ptr), free(col), free(val), free(ev), free(mine);
    MPI_Finalize();
    return bad;
}
