/* model.c — a matrix from the Holstein-Hubbard generator
 * (hamiltonian/hh.h): each rank generates its own rows, in contiguous
 * blocks balanced by non-zeros (spmv/partition.c), as the app does. */
#include <stdlib.h>
#include <string.h>

#include "api_impl.h"
#include "hh.h"

void pjds_hh_params_init(pjds_hh_params *p)
{
    if (!p) return;
    memset(p, 0, sizeof *p);
    p->hopping = 1.0;
    p->phonon_frequency = 1.0;
    p->phonon_basis = PJDS_PHONON_SITE;
    p->boundary = PJDS_BOUNDARY_PERIODIC;
}

static int hh_lengths(void *arg, int64_t r0, int64_t r1, int32_t *len)
{
    return hh_row_lengths((const hh_model *)arg, r0, r1, len);
}

/* This rank's rows of the model.  Collective. */
static int hh_build_rows(MPI_Comm comm, const hh_model *model, pl_csr *rows)
{
    int rank = 0, size = 1, rc = PL_OK;
    PL_CHECK(MPI_Comm_rank(comm, &rank) == MPI_SUCCESS && MPI_Comm_size(comm, &size) == MPI_SUCCESS, PL_ERR_MPI,
             "MPI_Comm_rank failed");
    const int64_t N = hh_model_rows(model);
    int64_t *bounds = NULL;
    PL_MALLOC(bounds, (size_t)size + 1);
    if (size > 1) {
        PL_CALL_GOTO(pl_partition_by_nnz(N, hh_lengths, (void *)model, comm, bounds), out, rc);
    } else {
        bounds[0] = 0;
        bounds[1] = N;
    }
    PL_CALL_GOTO(hh_rows_csr(model, bounds[rank], bounds[rank + 1], rows), out, rc);
out:
    free(bounds);
    return rc;
}

pjds_status pjds_matrix_create_hh(MPI_Comm comm, const pjds_hh_params *p, const pjds_matrix_options *opt,
                                  pjds_matrix **A)
{
    if (A) *A = NULL;
    api_log_init(comm);
    int rc = api_agree(comm, A && p ? PL_OK : PL_ERROR(PL_ERR_ARG, "pjds_matrix_create_hh: %s is NULL", A ? "p" : "A"));
    if (rc != PL_OK) return api_status(rc);
    const int bad_basis = p->phonon_basis != PJDS_PHONON_SITE && p->phonon_basis != PJDS_PHONON_NORMAL;
    const int bad_boundary = p->boundary != PJDS_BOUNDARY_PERIODIC && p->boundary != PJDS_BOUNDARY_OPEN;
    if (bad_basis || bad_boundary) /* the same parameters on every rank: no agreement needed */
        return api_fail(PJDS_ERR_INPUT, "pjds_hh_params: %s = %d is not a valid value",
                        bad_basis ? "phonon_basis" : "boundary", bad_basis ? (int)p->phonon_basis : (int)p->boundary);
    const hh_params hp = {.sites = p->sites,
                          .n_up = p->n_up,
                          .n_down = p->n_down,
                          .hopping = p->hopping,
                          .hubbard_u = p->hubbard_u,
                          .phonon_frequency = p->phonon_frequency,
                          .coupling = p->coupling,
                          .max_phonons = p->max_phonons,
                          .phonon_basis = p->phonon_basis == PJDS_PHONON_NORMAL ? PL_PHONON_NORMAL : PL_PHONON_SITE,
                          .boundary = p->boundary == PJDS_BOUNDARY_OPEN ? PL_BOUNDARY_OPEN : PL_BOUNDARY_PERIODIC};
    hh_model *model = NULL;
    rc = api_agree(comm, hh_model_create(&hp, &model));
    if (rc != PL_OK) return api_status(rc);
    pl_csr rows;
    memset(&rows, 0, sizeof rows);
    rc = api_agree(comm, hh_build_rows(comm, model, &rows));
    hh_model_destroy(&model);
    if (rc != PL_OK) {
        pl_csr_destroy(&rows);
        return api_status(rc);
    }
    return api_status(api_matrix_from_rows(comm, &rows, opt, 1, A));
}
