/* mpi.c — MPI for callers that cannot reach MPI themselves (a Python
 * binding through ctypes, another language's FFI): initialise and
 * finalise MPI only where nobody else did, the world and self
 * communicators as opaque bytes, and an eigenvector gathered whole on
 * every rank of a distributed solve. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "api_impl.h"

static int g_inited_here = 0; /* pjds_mpi_init called MPI_Init_thread */

pjds_status pjds_mpi_init(int *initialized_here)
{
    if (initialized_here) *initialized_here = 0;
    int inited = 0, finalized = 0;
    if (MPI_Initialized(&inited) != MPI_SUCCESS || MPI_Finalized(&finalized) != MPI_SUCCESS)
        return api_fail(PJDS_ERR_MPI, "pjds_mpi_init: MPI_Initialized failed");
    if (finalized) return api_fail(PJDS_ERR_MPI, "pjds_mpi_init: MPI was finalized already; it cannot start again");
    if (inited) return PJDS_OK;
    int provided = 0;
    /* the level the app asks for (app/app_start.c) */
    if (MPI_Init_thread(NULL, NULL, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS)
        return api_fail(PJDS_ERR_MPI, "pjds_mpi_init: MPI_Init_thread failed");
    g_inited_here = 1;
    if (initialized_here) *initialized_here = 1;
    return PJDS_OK;
}

pjds_status pjds_mpi_finalize(void)
{
    int finalized = 0;
    if (!g_inited_here || MPI_Finalized(&finalized) != MPI_SUCCESS || finalized) return PJDS_OK;
    g_inited_here = 0;
    if (MPI_Finalize() != MPI_SUCCESS) return api_fail(PJDS_ERR_MPI, "pjds_mpi_finalize: MPI_Finalize failed");
    return PJDS_OK;
}

int pjds_mpi_comm_bytes(void) { return (int)sizeof(MPI_Comm); }

pjds_status pjds_mpi_comm(pjds_comm_kind kind, MPI_Comm *comm)
{
    if (!comm) return api_fail(PJDS_ERR_ARG, "pjds_mpi_comm: comm is NULL");
    if (kind != PJDS_COMM_WORLD && kind != PJDS_COMM_SELF)
        return api_fail(PJDS_ERR_ARG, "pjds_mpi_comm: kind %d is none of world (0), self (1)", (int)kind);
    *comm = kind == PJDS_COMM_WORLD ? MPI_COMM_WORLD : MPI_COMM_SELF;
    return PJDS_OK;
}

pjds_status pjds_mpi_comm_rank_size(MPI_Comm comm, int *rank, int *size)
{
    if (!rank || !size) return api_fail(PJDS_ERR_ARG, "pjds_mpi_comm_rank_size: %s is NULL", rank ? "size" : "rank");
    int inited = 0;
    if (MPI_Initialized(&inited) != MPI_SUCCESS || !inited)
        return api_fail(PJDS_ERR_MPI, "pjds_mpi_comm_rank_size: MPI is not initialised (pjds_mpi_init)");
    if (MPI_Comm_rank(comm, rank) != MPI_SUCCESS || MPI_Comm_size(comm, size) != MPI_SUCCESS)
        return api_fail(PJDS_ERR_MPI, "pjds_mpi_comm_rank_size: MPI_Comm_rank failed");
    return PJDS_OK;
}

/* counts[r], displs[r] of every rank's rows [row0, row0 + n_local), as int.  Collective. */
static int row_layout(MPI_Comm comm, const pjds_result *res, int64_t N, int *counts, int *displs, int size)
{
    int64_t mine[2] = {res->row0, res->n_local};
    int64_t *all = malloc(2 * sizeof *all * (size_t)size);
    PL_CHECK(all, PL_ERR_MEM, "out of host memory");
    if (MPI_Allgather(mine, 2, MPI_INT64_T, all, 2, MPI_INT64_T, comm) != MPI_SUCCESS) {
        free(all);
        return PL_ERROR(PL_ERR_MPI, "MPI_Allgather failed");
    }
    int rc = PL_OK;
    for (int r = 0; r < size && rc == PL_OK; r++) {
        if (all[2 * r] < 0 || all[2 * r + 1] < 0 || all[2 * r] + all[2 * r + 1] > N || N > INT_MAX)
            rc = PL_ERROR(PL_ERR_OVERFLOW, "the rows of rank %d (%lld + %lld of %lld) do not fit an int count", r,
                          (long long)all[2 * r], (long long)all[2 * r + 1], (long long)N);
        else {
            displs[r] = (int)all[2 * r];
            counts[r] = (int)all[2 * r + 1];
        }
    }
    free(all);
    return rc;
}

/* The whole vector of every rank's block loc into all.  Collective. */
static int gather(MPI_Comm comm, const int *counts, const int *displs, const double *loc, int n, double *all)
{
    PL_CHECK(MPI_Allgatherv(loc, n, MPI_DOUBLE, all, counts, displs, MPI_DOUBLE, comm) == MPI_SUCCESS, PL_ERR_MPI,
             "MPI_Allgatherv failed");
    return PL_OK;
}

/* This rank's block of vector i and the whole vector on every rank.  Collective. */
static int gather_vector(MPI_Comm comm, const pjds_result *res, int i, int64_t N, double *re, double *im)
{
    int size = 1, rc = PL_OK;
    PL_CHECK(MPI_Comm_size(comm, &size) == MPI_SUCCESS, PL_ERR_MPI, "MPI_Comm_size failed");
    const size_t n = (size_t)res->n_local + 1;
    int *counts = malloc(sizeof *counts * (size_t)size), *displs = malloc(sizeof *displs * (size_t)size);
    double *loc = malloc(sizeof *loc * 2 * n);
    rc = api_agree(comm, counts && displs && loc ? PL_OK : PL_ERROR(PL_ERR_MEM, "out of host memory"));
    if (rc == PL_OK) rc = api_agree(comm, row_layout(comm, res, N, counts, displs, size));
    if (rc == PL_OK) {
        pjds_result_eigenvector(res, i, loc, loc + n); /* i and res checked by the caller: can't fail */
        rc = gather(comm, counts, displs, loc, (int)res->n_local, re);
        if (rc == PL_OK && im) rc = gather(comm, counts, displs, loc + n, (int)res->n_local, im);
    }
    free(counts);
    free(displs);
    free(loc);
    return rc;
}

pjds_status pjds_result_eigenvector_all(const pjds_result *res, MPI_Comm comm, int i, double *re, double *im)
{
    int bad = PL_OK;
    if (!res || !re) bad = PL_ERROR(PL_ERR_ARG, "pjds_result_eigenvector_all: %s is NULL", res ? "re" : "res");
    else if (i < 0 || i >= res->nev)
        bad = PL_ERROR(PL_ERR_ARG, "pjds_result_eigenvector_all: index %d outside [0, %d)", i, res->nev);
    else if (!res->vec)
        bad = PL_ERROR(PL_ERR_ARG, "pjds_result_eigenvector_all: the solve kept no eigenvectors (want_vectors = 0)");
    int rc = api_agree(comm, bad);
    if (rc != PL_OK) return api_status(rc);
    int64_t N = res->n_local;
    if (MPI_Allreduce(MPI_IN_PLACE, &N, 1, MPI_INT64_T, MPI_SUM, comm) != MPI_SUCCESS)
        return api_fail(PJDS_ERR_MPI, "pjds_result_eigenvector_all: MPI_Allreduce failed");
    return api_status(gather_vector(comm, res, i, N, re, im));
}
