/* fact.h — sparse direct factorisation of a distributed square matrix
 * M (real or complex values), for spectral transformations: analyse once,
 * factor (and refactor with new values on the same pattern), solve.
 *
 * M is given as the calling rank's rows [row0, row0 + nloc) in CSR form
 * with 0-based global column indices, the row blocks of all ranks of comm
 * tiling [0, n) in rank order.  Right-hand sides and solutions are the
 * same local rows.  Every function is collective over comm.
 *
 * Back-ends (one file each): MUMPS (fact_mumps.c; CPU, MPI-distributed)
 * and cuDSS (fact_cudss.c; one GPU, optional at build time).  They are
 * reached through the table of fact_impl.h. */
#ifndef PL_FACT_H
#define PL_FACT_H

#include <mpi.h>
#include <stdint.h>

typedef enum pl_fact_kind {
    PL_FACT_AUTO = 0,  /* cuDSS for a one-rank CUDA run where built in, else MUMPS */
    PL_FACT_MUMPS = 1,
    PL_FACT_CUDSS = 2
} pl_fact_kind;

typedef struct pl_fact_opts {
    pl_fact_kind kind;
    int symmetric;     /* 1: M = M^T (an LDL^T factorisation may be used), 0: general LU */
    int is_complex;    /* 1: values have imaginary parts (im arrays are read) */
    double mem_limit;  /* bytes the factorisation may use per rank; 0 = what the machine has */
    int verbose;       /* 0 quiet, 1 one line per phase on rank 0 */
} pl_fact_opts;

void pl_fact_opts_init(pl_fact_opts *o);
/* Whether the back-end is built in (AUTO: any).  Not collective. */
int pl_fact_available(pl_fact_kind kind);

typedef struct pl_fact_info {
    const char *backend;   /* "mumps" or "cudss" */
    double mem_estimate;   /* bytes per rank (largest rank) from the analysis */
    int64_t nnz_factors;   /* entries of the factors, all ranks, from the analysis */
    double analyse_s, factor_s, solve_s; /* cumulative seconds */
    int64_t nsolves;       /* right-hand sides solved so far */
    int64_t negative_pivots; /* symmetric: negative pivots of the last factorisation
                              * (the inertia; 0 and no null pivot: M is positive
                              * definite); -1 where the back-end does not say */
} pl_fact_info;

typedef struct pl_fact pl_fact;

/* Analysis (ordering, symbolic factorisation, memory estimate).  Refuses
 * with PL_ERR_INPUT and the estimate when it exceeds o->mem_limit, before
 * any numeric work.  re/im give the values (im NULL when real). */
int pl_fact_create(MPI_Comm comm, int64_t n, int64_t row0, int64_t nloc, const int64_t *rowptr,
                   const int64_t *col, const double *re, const double *im, const pl_fact_opts *o,
                   pl_fact **out);
/* Numeric factorisation with values re/im on the analysed pattern (the
 * first call and every refactorisation, e.g. a new shift).  A singular M
 * returns PL_ERR_INPUT with a message saying so. */
int pl_fact_factor(pl_fact *f, const double *re, const double *im);
/* x = M^{-1} b on the local rows; b_im / x_im NULL for real data. */
int pl_fact_solve(pl_fact *f, const double *b_re, const double *b_im, double *x_re, double *x_im);
void pl_fact_get_info(const pl_fact *f, pl_fact_info *info);
void pl_fact_free(pl_fact **f);

#endif
