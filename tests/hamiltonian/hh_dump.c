/* hh_dump.c — print a whole small Holstein-Hubbard matrix as text for the
 * independent numpy reference (check_dense.py).
 * Usage: hh_dump L n_up n_down t U w0 g M site|normal periodic|open
 * Output: "N nnz n_up_states n_down_states n_phonon_states", then one
 * "row col value" line per stored entry (value with 17 digits). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hh.h"
#include "pl_error.h"

int main(int argc, char **argv)
{
    if (argc != 11) {
        fprintf(stderr, "usage: %s L n_up n_down t U w0 g M site|normal periodic|open\n", argv[0]);
        return 2;
    }
    hh_params p = {};
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
    hh_model *m = NULL;
    pl_csr a = {0};
    int e = hh_model_create(&p, &m);
    if (!e) e = hh_rows_csr(m, 0, hh_model_rows(m), &a);
    if (e) {
        pl_error_report();
        hh_model_destroy(&m);
        return pl_error_exit_status(e);
    }
    int64_t nu, nd, nph;
    hh_model_dims(m, &nu, &nd, &nph);
    printf("%lld %lld %lld %lld %lld\n", (long long)a.nrows, (long long)pl_csr_nnz(&a), (long long)nu, (long long)nd,
           (long long)nph);
    for (int64_t i = 0; i < a.nrows; i++)
        for (int64_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; k++)
            printf("%lld %lld %.17g\n", (long long)i, (long long)a.col[k], a.val[k]);
    pl_csr_destroy(&a);
    hh_model_destroy(&m);
    return 0;
}
