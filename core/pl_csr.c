/* pl_csr.c — allocation of CSR row blocks. */
#include "pl_csr.h"

#include <stdlib.h>
#include <string.h>

#include "pl_error.h"

int pl_csr_alloc(pl_csr *a, int64_t nrows_global, int64_t row0, int64_t nrows, int64_t nnz)
{
    PL_CHECK(nrows >= 0 && nnz >= 0 && row0 >= 0, PL_ERR_ARG, "negative CSR size");
    memset(a, 0, sizeof *a);
    a->nrows_global = nrows_global;
    a->ncols_global = nrows_global;
    a->row0 = row0;
    a->nrows = nrows;
    a->row_ptr = calloc((size_t)nrows + 1, sizeof *a->row_ptr);
    PL_MALLOC(a->col, nnz);
    PL_MALLOC(a->val, nnz);
    PL_CHECK(a->row_ptr, PL_ERR_MEM, "out of host memory for %lld CSR rows", (long long)nrows);
    return PL_OK;
}

void pl_csr_destroy(pl_csr *a)
{
    if (!a) return;
    free(a->row_ptr);
    free(a->col);
    free(a->val);
    free(a->terms);
    memset(a, 0, sizeof *a);
}
