/* spmv_impl.h — internals of spmv/ shared by its own files (pjds.c, op.c,
 * cpu/, cuda/).  Never included from another folder.
 *
 * Contents: an MPI return-code macro, a host reference pJDS SpMV (the oracle
 * the CUDA tests compare against), byte size of a pJDS, and the pJDS
 * layout helpers.
 */
#ifndef PL_SPMV_IMPL_H
#define PL_SPMV_IMPL_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include "pl_error.h"
#include "spmv.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Check an MPI return code: on failure record "<what> failed: <MPI string>"
 * and return PL_ERR_MPI. */
#define PL_MPI(e, what)                                                         \
    do {                                                                        \
        int pl_mpi_e_ = (e);                                                    \
        if (pl_mpi_e_ != MPI_SUCCESS) {                                         \
            char pl_mpi_s_[MPI_MAX_ERROR_STRING];                               \
            int pl_mpi_l_ = 0;                                                  \
            pl_mpi_s_[0] = 0;                                                   \
            MPI_Error_string(pl_mpi_e_, pl_mpi_s_, &pl_mpi_l_);                 \
            return pl_error_set(PL_ERR_MPI, __FILE__, __LINE__, __func__,       \
                                "%s failed: %s", (what), pl_mpi_s_);            \
        }                                                                       \
    } while (0)

/* Index of entry j of pJDS row r (0 <= j < chunk_width[r / C]). */
static inline int64_t pjds_entry(const pjds *p, int32_t r, int32_t j)
{
    return p->chunk_start[r / p->C] + (int64_t)j * p->C + r % p->C;
}

/* Host reference SpMV, serial, one row at a time (the oracle for backend
 * tests; slow).  row_map == NULL: y = A x, else y[row_map[i]] += (A x)[i].
 * Can't fail. */
void pjds_spmv_ref(const pjds *p, const double *x, double *y);

/* Bytes of the arrays of p (what a backend copy of it holds).  Can't fail. */
size_t pjds_bytes(const pjds *p);

#ifdef __cplusplus
}
#endif

#endif
