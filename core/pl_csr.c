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

static int pair_cmp(const void *a, const void *b)
{
    int64_t x = ((const pl_csr_pair *)a)->c, y = ((const pl_csr_pair *)b)->c;
    return (x > y) - (x < y);
}

void pl_csr_sort_row(int64_t *c, double *v, int64_t n, pl_csr_pair *tmp)
{
    int64_t k = 1;
    while (k < n && c[k - 1] <= c[k]) k++;
    if (k >= n) return;
    if (n <= 32) {
        for (int64_t a = 1; a < n; a++) {
            int64_t cc = c[a];
            double vv = v[a];
            int64_t b = a;
            while (b > 0 && c[b - 1] > cc) {
                c[b] = c[b - 1];
                v[b] = v[b - 1];
                b--;
            }
            c[b] = cc;
            v[b] = vv;
        }
        return;
    }
    for (int64_t a = 0; a < n; a++) tmp[a] = (pl_csr_pair){c[a], v[a]};
    qsort(tmp, (size_t)n, sizeof *tmp, pair_cmp);
    for (int64_t a = 0; a < n; a++) {
        c[a] = tmp[a].c;
        v[a] = tmp[a].v;
    }
}
