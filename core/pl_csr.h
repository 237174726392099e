/* pl_csr.h — a block of consecutive CSR rows [row0, row0 + nrows) of a
 * global matrix with 0-based int64 global column indices.  This is the
 * hand-over format between the matrix sources (hamiltonian/, io/ import) and
 * spmv/.  Columns inside a row are sorted ascending and unique.
 * The block owns its arrays; pl_csr_destroy frees them. */
#ifndef PL_CSR_H
#define PL_CSR_H

#include <stdint.h>

typedef struct pl_csr {
    int64_t nrows_global; /* N: rows of the whole matrix               */
    int64_t ncols_global; /* columns of the whole matrix (== N here)   */
    int64_t row0;         /* first global row of this block            */
    int64_t nrows;        /* rows in this block                        */
    int64_t *row_ptr;     /* nrows+1, row_ptr[0] == 0                  */
    int64_t *col;         /* row_ptr[nrows] global column indices      */
    double *val;          /* row_ptr[nrows] values                     */
    /* Optional value terms (sweeps: docs/operations.md "Sweeps"): the matrix is
     * sum_k c_k A_k over one common pattern; terms holds nterms arrays of
     * row_ptr[nrows] values, term k at terms + k * nnz.  What the c_k are
     * is the source's convention (hh_term_coefs); val holds the values of
     * the configured point.  0 / NULL: no terms.  Freed by pl_csr_destroy. */
    int nterms;
    double *terms;
} pl_csr;

/* Allocate a block for nrows rows and nnz entries (row_ptr zeroed). */
int pl_csr_alloc(pl_csr *a, int64_t nrows_global, int64_t row0, int64_t nrows, int64_t nnz);
/* Free the arrays and zero the struct.  Accepts a zeroed struct.  Can't fail. */
void pl_csr_destroy(pl_csr *a);
/* Scratch of pl_csr_sort_row. */
typedef struct pl_csr_pair {
    int64_t c;
    double v;
} pl_csr_pair;
/* Sort one row (col, val, n entries) by column, values along: an already
 * sorted row is left at once, a short one (n <= 32) is sorted in place, a
 * longer one through tmp (room for n pairs) with qsort: O(n log n).  Equal
 * columns stay (the caller sums or refuses them).  Can't fail. */
void pl_csr_sort_row(int64_t *col, double *val, int64_t n, pl_csr_pair *tmp);
static inline int64_t pl_csr_nnz(const pl_csr *a) { return a->row_ptr ? a->row_ptr[a->nrows] : 0; }

#endif
