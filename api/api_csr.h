/* api_csr.h — the caller's CSR row block into a pl_csr (csr.c). */
#ifndef PJDS_API_CSR_H
#define PJDS_API_CSR_H

#include <mpi.h>
#include <stdint.h>

#include "pl_csr.h"

/* Check the block (pjds_matrix_create_csr's rules) and copy it into *out,
 * columns of each row sorted and repeats summed.  The status is agreed over
 * comm (api_agree).  On failure *out is empty.  Collective. */
int api_csr_copy(MPI_Comm comm, int64_t N, int64_t ncols, int64_t row0, int64_t n, const int64_t *row_ptr,
                 const int64_t *col, const double *val, pl_csr *out);

#endif
