/* hh_timing.c — build the rows of a Holstein-Hubbard matrix (default: the
 * seed paper's HMEp, L = 6, 3 up 3 down, M = 15, normal phonon basis,
 * periodic, t = 1, U = 4, w0 = 1, g = 1) with hh_rows_csr and print rows,
 * non-zeros, build seconds, and the pJDS storage statistics (C = 32) from
 * the row lengths.  Not a test; a measurement tool.
 * Usage: hh_timing [L n_up n_down t U w0 g M site|normal periodic|open] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <omp.h>

#include "hh.h"
#include "pl_error.h"
#include "spmv.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    pl_log_init(0, PL_LOG_INFO);
    hh_params p = {.sites = 6, .n_up = 3, .n_down = 3, .hopping = 1.0,
                      .hubbard_u = 4.0, .phonon_frequency = 1.0, .coupling = 1.0, .max_phonons = 15,
                      .phonon_basis = PL_PHONON_NORMAL, .boundary = PL_BOUNDARY_PERIODIC};
    if (argc == 11) {
        p.sites = atoi(argv[1]);
        p.n_up = atoi(argv[2]);
        p.n_down = atoi(argv[3]);
        p.hopping = atof(argv[4]);
        p.hubbard_u = atof(argv[5]);
        p.phonon_frequency = atof(argv[6]);
        p.coupling = atof(argv[7]);
        p.max_phonons = atoi(argv[8]);
        p.phonon_basis = strcmp(argv[9], "site") ? PL_PHONON_NORMAL : PL_PHONON_SITE;
        p.boundary = strcmp(argv[10], "open") ? PL_BOUNDARY_PERIODIC : PL_BOUNDARY_OPEN;
    } else if (argc != 1) {
        fprintf(stderr, "usage: %s [L n_up n_down t U w0 g M site|normal periodic|open]\n", argv[0]);
        return 2;
    }
    hh_model *m = NULL;
    pl_csr a = {0};
    int rc = 0;
    double t0 = pl_wtime();
    int e = hh_model_create(&p, &m);
    double t1 = pl_wtime();
    if (!e) e = hh_rows_csr(m, 0, hh_model_rows(m), &a);
    double t2 = pl_wtime();
    if (e) {
        pl_error_report();
        rc = 1;
        goto done;
    }
    int64_t n = a.nrows;
    int32_t *len = malloc((size_t)n * sizeof *len);
    double t3 = pl_wtime();
    e = hh_row_lengths(m, 0, n, len);
    double t4 = pl_wtime();
    for (int64_t i = 0; !e && i < n; i++)
        if (len[i] != (int32_t)(a.row_ptr[i + 1] - a.row_ptr[i])) e = PL_ERROR(PL_ERR_INTERNAL, "row %lld", (long long)i);
    pjds_stats st;
    e = pjds_stats_from_lengths(n, len, 32, MPI_COMM_SELF, &st);
    free(len);
    if (e) {
        pl_error_report();
        rc = 1;
        goto done;
    }
    int64_t ndiag = 0;
    for (int64_t i = 0; i < n; i++)
        for (int64_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; k++) ndiag += a.col[k] == i;
    printf("threads        %d\n", omp_get_max_threads());
    printf("rows           %lld\n", (long long)n);
    printf("nnz            %lld\n", (long long)pl_csr_nnz(&a));
    printf("nnz/row        %.4f\n", (double)pl_csr_nnz(&a) / (double)n);
    printf("diag entries   %lld (zero diagonals %lld)\n", (long long)ndiag, (long long)(n - ndiag));
    printf("row len        %lld .. %lld\n", (long long)st.row_len_min, (long long)st.row_len_max);
    printf("model seconds  %.3f\n", t1 - t0);
    printf("build seconds  %.3f (hh_rows_csr, both passes)\n", t2 - t1);
    printf("lengths only   %.3f (hh_row_lengths)\n", t4 - t3);
    printf("ellpack        %lld entries\n", (long long)st.ellpack_entries);
    printf("pjds (C=32)    %lld entries\n", (long long)st.pjds_entries);
    printf("pjds reduction vs ellpack  %.2f %%\n", 100.0 * st.pjds_reduction_vs_ellpack);
done:
    pl_csr_destroy(&a);
    hh_model_destroy(&m);
    MPI_Finalize();
    return rc;
}
