/* st_impl.h — the state of a spectral transformation, shared by st_op.c
 * (pattern, factorisation, product) and st_solve.c (the eigensolver and
 * the way back to the original problem).  Private to st/. */
#ifndef PL_ST_IMPL_H
#define PL_ST_IMPL_H

#include "st.h"

struct pl_st {
    MPI_Comm comm;
    pl_backend *be;
    const pl_csr *A, *B;     /* B points to eye when B = I                   */
    pl_csr eye;
    int b_identity;
    int kind, sym, cplx;     /* cplx: complex sigma, complex factorisation    */
    double sre, sim;         /* sigma                                         */
    int64_t n, row0, nloc;
    double anorm, bnorm;     /* max row sums                                  */
    /* M = A - sigma B (or B): CSR of the local rows, values re/im          */
    int64_t *mptr, *mcol, mnnz;
    double *mre, *mim;
    int64_t *pos_a, *pos_b;  /* M position of each entry of A and of B        */
    pl_fact *f;
    int singular;
    pl_op *op;
    pl_op *op_out;           /* a complex sigma: the N-row basis of the vectors */
    pl_op *bop;              /* x -> B x (a B given): the B-inner product of   */
                             /* Lanczos on a symmetric-definite pair            */
    int *counts, *displs;    /* rows of each rank (the gathers)               */
    double *xfull;           /* N                                             */
    double *t, *ti, *zi, *hx, *hy; /* nloc work vectors                       */
};

/* y = M x on M's local rows (x_full: all N entries); st_gather: x_full from
 * every rank's x_local.  Collective (st_gather). */
void st_csr_mul(const pl_csr *M, const double *x_full, double *y);
int st_gather(pl_st *s, const double *x_local, double *x_full);

#endif
