/* pl_kron.h — a Kronecker-sum operator, described by small tables and
 * applied without a stored matrix ([spmv] format = matrix_free; issue 26).
 *
 * Rows: N = n_left * n_right, row = l * n_right + r (x and y viewed as
 * n_left x n_right arrays, row-major).  The operator:
 *   y[l,r] = ((dl[l] + dr[r]) + shift) x[l,r]
 *          + sum_{m < nterms, c[l nterms + m] != 0}
 *                (c[l nterms + m] * lo_val[r nterms + m]) x[l, lo[r nterms + m]]   (lo >= 0)
 *              + (c[l nterms + m] * hi_val[r nterms + m]) x[l, hi[r nterms + m]]   (hi >= 0)
 *          + sum_{j in [a_ptr[l], a_ptr[l+1])} a_val[j] x[a_col[j], r]
 * that is  A (x) 1 + diag(dl (+) dr + shift) + sum_m diag(c_m) (x) B_m,
 * where each right factor B_m has at most two entries per row (columns lo
 * and hi, -1: none).  The Holstein-Hubbard Hamiltonian has this form
 * (hamiltonian/hh_mf.h: A the electron hopping, B_m = b_m + b_m^+); the
 * products are evaluated in the order written above, so that every term
 * equals the stored matrix's entry bit for bit.
 *
 * The struct only points at tables owned by its maker; a backend copies
 * what it needs (kron_create).  Knows no GPU, MPI or files. */
#ifndef PL_KRON_H
#define PL_KRON_H

#include <stddef.h>
#include <stdint.h>

typedef struct pl_kron {
    int64_t n_left, n_right; /* N = n_left * n_right rows                       */
    int nterms;              /* right factors B_m (>= 0)                        */
    /* A, n_left x n_left CSR: columns in [0, n_left), no order required     */
    const int64_t *a_ptr;    /* n_left + 1                                      */
    const int32_t *a_col;    /* a_ptr[n_left]                                   */
    const double *a_val;     /* a_ptr[n_left]                                   */
    const double *dl;        /* n_left                                          */
    const double *dr;        /* n_right                                         */
    double shift;
    const double *c;         /* n_left x nterms, [l * nterms + m]               */
    const int32_t *lo, *hi;  /* n_right x nterms, [r * nterms + m]: a column of */
                             /* B_m's row r in [0, n_right), or -1              */
    const double *lo_val, *hi_val; /* n_right x nterms                          */
} pl_kron;

/* Every index in range and every size consistent (n_left, n_right >= 1,
 * n_left * n_right and the table sizes within int64_t, columns of A and
 * of the B_m in range, a_ptr non-decreasing from 0).  PL_ERR_ARG with the
 * first violation named.  O(n_left + nnz(A) + n_right nterms). */
int pl_kron_check(const pl_kron *k);
/* max_row sum_j |h_ij| bounded from the tables (>= ||H||_2 for a symmetric
 * H): max_l (|dl| + sum |a_val|) + max_r |dr| + |shift| + max_l sum_m
 * |c_m| * max_r (|lo_val| + |hi_val|).  Can't fail (0 for NULL). */
double pl_kron_norm_bound(const pl_kron *k);
/* Bytes of the tables k points at.  Can't fail (0 for NULL). */
size_t pl_kron_bytes(const pl_kron *k);

#endif
