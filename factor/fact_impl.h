/* fact_impl.h — the back-end table behind fact.h.  A back-end's create
 * function analyses the matrix, fills *info (backend, mem_estimate,
 * nnz_factors, analyse_s) and returns its state and operations; fact.c
 * does the dispatch, the memory check against opts->mem_limit and the
 * timing of factor and solve.  *info lives as long as the back-end state:
 * a back-end may keep the pointer and update negative_pivots at each
 * factor (fact.c sets it to -1 before create). */
#ifndef PL_FACT_IMPL_H
#define PL_FACT_IMPL_H

#include "fact.h"

typedef struct pl_fact_ops {
    int (*factor)(void *st, const double *re, const double *im);
    int (*solve)(void *st, const double *b_re, const double *b_im, double *x_re, double *x_im);
    void (*destroy)(void *st);
} pl_fact_ops;

typedef int (*pl_fact_create_fn)(MPI_Comm comm, int64_t n, int64_t row0, int64_t nloc,
                                 const int64_t *rowptr, const int64_t *col, const double *re,
                                 const double *im, const pl_fact_opts *o, pl_fact_info *info,
                                 const pl_fact_ops **ops, void **st);

/* MUMPS (fact_mumps.c): always built. */
int pl_fact_mumps_create(MPI_Comm comm, int64_t n, int64_t row0, int64_t nloc, const int64_t *rowptr,
                         const int64_t *col, const double *re, const double *im,
                         const pl_fact_opts *o, pl_fact_info *info, const pl_fact_ops **ops,
                         void **st);
/* cuDSS (fact_cudss.c): only where PJDS_HAVE_CUDSS is defined; one rank. */
int pl_fact_cudss_create(MPI_Comm comm, int64_t n, int64_t row0, int64_t nloc, const int64_t *rowptr,
                         const int64_t *col, const double *re, const double *im,
                         const pl_fact_opts *o, pl_fact_info *info, const pl_fact_ops **ops,
                         void **st);

#endif
