/* st_op.c — the operator of a spectral transformation (st.h): the pattern
 * of M = A - sigma B (or M = B), its factorisation (factor/fact.h), and
 * the shell operator's product x -> Re[M^{-1} B x] (or M^{-1} A x).  The
 * products with A and B (none for B = I) gather the whole vector on every rank
 * (MPI_Allgatherv, O(N) per product beside a factorised solve that costs
 * far more) and multiply the local CSR rows. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pl_error.h"
#include "st_impl.h"

/* the singularity of the last failed pl_st_create (pl_st_singular(NULL)) */
static int last_singular;

void pl_st_opts_init(pl_st_opts *o)
{
    memset(o, 0, sizeof *o);
    o->kind = PL_ST_SHIFT_INVERT;
    pl_fact_opts_init(&o->fact);
}

/* y = M x on the local rows, x_full the whole vector */
void st_csr_mul(const pl_csr *M, const double *x_full, double *y)
{
    for (int64_t i = 0; i < M->nrows; i++) {
        double s = 0.0;
        for (int64_t k = M->row_ptr[i]; k < M->row_ptr[i + 1]; k++) s += M->val[k] * x_full[M->col[k]];
        y[i] = s;
    }
}

int st_gather(pl_st *s, const double *x_local, double *x_full)
{
    PL_CHECK(MPI_Allgatherv(x_local, (int)s->nloc, MPI_DOUBLE, x_full, s->counts, s->displs, MPI_DOUBLE, s->comm) ==
                 MPI_SUCCESS,
             PL_ERR_MPI, "MPI_Allgatherv of a vector failed");
    return PL_OK;
}

/* The pattern of M: the union of A's and B's patterns per row (B_INVERT:
 * B's), with the position in M of every entry of A and of B. */
static int merge_pattern(pl_st *s)
{
    const pl_csr *A = s->A, *B = s->B;
    const int withA = s->kind == PL_ST_SHIFT_INVERT;
    const int64_t na = pl_csr_nnz(A), nb = pl_csr_nnz(B), nl = s->nloc;
    PL_MALLOC(s->mptr, nl + 1);
    PL_MALLOC(s->mcol, (withA ? na : 0) + nb + 1);
    PL_MALLOC(s->pos_a, na + 1);
    PL_MALLOC(s->pos_b, nb + 1);
    int64_t *tmp = NULL; /* (column, source) keys of one row, sorted */
    int64_t maxlen = 1;
    for (int64_t i = 0; i < nl; i++) {
        int64_t l = (A->row_ptr[i + 1] - A->row_ptr[i]) * withA + B->row_ptr[i + 1] - B->row_ptr[i];
        if (l > maxlen) maxlen = l;
    }
    PL_MALLOC(tmp, 2 * maxlen);
    int64_t m = 0;
    s->mptr[0] = 0;
    for (int64_t i = 0; i < nl; i++) {
        int64_t l = 0;
        if (withA)
            for (int64_t k = A->row_ptr[i]; k < A->row_ptr[i + 1]; k++) tmp[2 * l] = A->col[k], tmp[2 * l++ + 1] = k;
        for (int64_t k = B->row_ptr[i]; k < B->row_ptr[i + 1]; k++) tmp[2 * l] = B->col[k], tmp[2 * l++ + 1] = -1 - k;
        /* insertion sort by column (rows are short) */
        for (int64_t a = 1; a < l; a++) {
            int64_t c = tmp[2 * a], src = tmp[2 * a + 1], b = a - 1;
            for (; b >= 0 && tmp[2 * b] > c; b--) tmp[2 * (b + 1)] = tmp[2 * b], tmp[2 * (b + 1) + 1] = tmp[2 * b + 1];
            tmp[2 * (b + 1)] = c;
            tmp[2 * (b + 1) + 1] = src;
        }
        for (int64_t a = 0; a < l; a++) {
            if (a == 0 || tmp[2 * a] != tmp[2 * (a - 1)]) s->mcol[m++] = tmp[2 * a];
            const int64_t src = tmp[2 * a + 1];
            if (src >= 0) s->pos_a[src] = m - 1;
            else s->pos_b[-1 - src] = m - 1;
        }
        s->mptr[i + 1] = m;
    }
    free(tmp);
    s->mnnz = m;
    PL_MALLOC(s->mre, m + 1);
    PL_MALLOC(s->mim, m + 1);
    return PL_OK;
}

/* M's values for the shift (re, im) */
static void m_values(pl_st *s, double sre, double sim)
{
    const int64_t na = pl_csr_nnz(s->A), nb = pl_csr_nnz(s->B);
    memset(s->mre, 0, (size_t)s->mnnz * sizeof *s->mre);
    memset(s->mim, 0, (size_t)s->mnnz * sizeof *s->mim);
    if (s->kind == PL_ST_B_INVERT) {
        for (int64_t k = 0; k < nb; k++) s->mre[s->pos_b[k]] += s->B->val[k];
        return;
    }
    for (int64_t k = 0; k < na; k++) s->mre[s->pos_a[k]] += s->A->val[k];
    for (int64_t k = 0; k < nb; k++) {
        s->mre[s->pos_b[k]] -= sre * s->B->val[k];
        s->mim[s->pos_b[k]] -= sim * s->B->val[k];
    }
}

/* The shell product on host vectors: y = M^{-1} B x or M^{-1} A x; a
 * complex sigma: x = [u; v] (the rank's rows of u, then of v), y the same
 * split of M^{-1} B (u + i v) */
static int apply_host(pl_st *s, const double *x, double *y)
{
    if (s->b_identity && s->kind == PL_ST_SHIFT_INVERT) /* B = I: no product, no gather */
        return pl_fact_solve(s->f, x, s->cplx ? x + s->nloc : NULL, y, s->cplx ? y + s->nloc : NULL);
    PL_CALL(st_gather(s, x, s->xfull));
    st_csr_mul(s->kind == PL_ST_B_INVERT ? s->A : s->B, s->xfull, s->t);
    if (s->cplx) {
        PL_CALL(st_gather(s, x + s->nloc, s->xfull));
        st_csr_mul(s->B, s->xfull, s->ti);
        return pl_fact_solve(s->f, s->t, s->ti, y, y + s->nloc);
    }
    return pl_fact_solve(s->f, s->t, NULL, y, NULL);
}

static int st_apply(void *arg, const double *x, double *y)
{
    pl_st *s = arg;
    if (s->be->host_memory) return apply_host(s, x, y);
    const size_t nl = (size_t)s->nloc * (s->cplx ? 2 : 1);
    PL_CALL(s->be->download(s->be, s->hx, x, nl));
    PL_CALL(apply_host(s, s->hx, s->hy));
    return s->be->upload(s->be, y, s->hy, nl);
}

/* x -> B x on the local rows: the inner product <x, y>_B of Lanczos on a
 * symmetric-definite pair (lz_options inner_b); one gather of x */
static int st_b_apply(void *arg, const double *x, double *y)
{
    pl_st *s = arg;
    const size_t nl = (size_t)s->nloc;
    if (s->be->host_memory) {
        PL_CALL(st_gather(s, x, s->xfull));
        st_csr_mul(s->B, s->xfull, y);
        return PL_OK;
    }
    PL_CALL(s->be->download(s->be, s->hx, x, nl));
    PL_CALL(st_gather(s, s->hx, s->xfull));
    st_csr_mul(s->B, s->xfull, s->hy);
    return s->be->upload(s->be, y, s->hy, nl);
}

static double max_row_sum(const pl_csr *M, MPI_Comm comm)
{
    double r = 0.0;
    for (int64_t i = 0; i < M->nrows; i++) {
        double t = 0.0;
        for (int64_t k = M->row_ptr[i]; k < M->row_ptr[i + 1]; k++) t += fabs(M->val[k]);
        if (t > r) r = t;
    }
    MPI_Allreduce(MPI_IN_PLACE, &r, 1, MPI_DOUBLE, MPI_MAX, comm);
    return r;
}

/* B = I on the local rows (B NULL) */
static int identity(pl_st *s)
{
    PL_CALL(pl_csr_alloc(&s->eye, s->A->nrows_global, s->row0, s->nloc, s->nloc));
    for (int64_t i = 0; i < s->nloc; i++) {
        s->eye.row_ptr[i] = i;
        s->eye.col[i] = s->row0 + i;
        s->eye.val[i] = 1.0;
    }
    s->eye.row_ptr[s->nloc] = s->nloc;
    s->B = &s->eye;
    s->b_identity = 1;
    return PL_OK;
}

static int plan(pl_st *s)
{
    int size = 1, nl = (int)s->nloc;
    PL_CHECK(MPI_Comm_size(s->comm, &size) == MPI_SUCCESS, PL_ERR_MPI, "MPI_Comm_size failed");
    PL_MALLOC(s->counts, size);
    PL_MALLOC(s->displs, size);
    PL_CHECK(MPI_Allgather(&nl, 1, MPI_INT, s->counts, 1, MPI_INT, s->comm) == MPI_SUCCESS, PL_ERR_MPI,
             "MPI_Allgather of the row counts failed");
    for (int r = 0, off = 0; r < size; r++) s->displs[r] = off, off += s->counts[r];
    const size_t nl1 = (size_t)s->nloc + 1;
    PL_MALLOC(s->xfull, s->n + 1);
    PL_MALLOC(s->t, nl1);
    PL_MALLOC(s->ti, nl1);
    PL_MALLOC(s->zi, nl1);
    PL_MALLOC(s->hx, 2 * nl1);
    PL_MALLOC(s->hy, 2 * nl1);
    return PL_OK;
}

int pl_st_create(MPI_Comm comm, pl_backend *be, const pl_csr *A, const pl_csr *B, const pl_st_opts *o, pl_st **out)
{
    *out = NULL;
    int bad = B && (B->nrows_global != A->nrows_global || B->row0 != A->row0 || B->nrows != A->nrows), any = 0;
    PL_CHECK(MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, comm) == MPI_SUCCESS, PL_ERR_MPI, "MPI_Allreduce failed");
    PL_CHECK(!any, PL_ERR_INPUT, "B has %lld rows, A has %lld: A and B must have the same size",
             (long long)(B ? B->nrows_global : 0), (long long)A->nrows_global);
    PL_CHECK(o->kind == PL_ST_SHIFT_INVERT || (o->kind == PL_ST_B_INVERT && B), PL_ERR_ARG,
             "pl_st_create: B-inverse needs a B");
    pl_st *s = calloc(1, sizeof *s);
    PL_CHECK(s, PL_ERR_MEM, "out of host memory");
    s->comm = comm;
    s->be = be;
    s->A = A;
    s->B = B;
    s->kind = o->kind;
    s->sym = o->symmetric;
    s->n = A->nrows_global;
    s->row0 = A->row0;
    s->nloc = A->nrows;
    s->sre = o->kind == PL_ST_SHIFT_INVERT ? o->sigma_re : 0.0;
    s->sim = o->kind == PL_ST_SHIFT_INVERT ? o->sigma_im : 0.0;
    s->cplx = s->sim != 0.0;
    int rc = PL_OK;
    if (!B) PL_CALL_GOTO(identity(s), fail, rc);
    PL_CALL_GOTO(plan(s), fail, rc);
    PL_CALL_GOTO(merge_pattern(s), fail, rc);
    s->anorm = max_row_sum(A, comm);
    s->bnorm = max_row_sum(s->B, comm);
    m_values(s, s->sre, s->sim);
    pl_fact_opts fo = o->fact;
    fo.symmetric = o->symmetric;
    fo.is_complex = s->cplx;
    PL_CALL_GOTO(pl_fact_create(comm, s->n, s->row0, s->nloc, s->mptr, s->mcol, s->mre, s->cplx ? s->mim : NULL, &fo,
                                &s->f),
                 fail, rc);
    rc = pl_fact_factor(s->f, s->mre, s->cplx ? s->mim : NULL);
    s->singular = rc == PL_ERR_INPUT;
    PL_CALL_GOTO(rc, fail, rc);
    /* a complex sigma: the real form of M^{-1} B on 2 N rows (each rank: its rows of u, then of v) */
    const int w = s->cplx ? 2 : 1;
    PL_CALL_GOTO(pl_op_create_shell(comm, be, w * s->n, w * s->row0, w * s->nloc, st_apply, s, 0.0, &s->op), fail, rc);
    if (s->cplx) /* the eigenvectors' basis (N rows; never applied) */
        PL_CALL_GOTO(pl_op_create_shell(comm, be, s->n, s->row0, s->nloc, st_apply, s, 0.0, &s->op_out), fail, rc);
    if (!s->b_identity && !s->cplx) /* B x: the B-inner product (pl_st_solve, Lanczos) */
        PL_CALL_GOTO(pl_op_create_shell(comm, be, s->n, s->row0, s->nloc, st_b_apply, s, s->bnorm, &s->bop), fail,
                     rc);
    *out = s;
    return PL_OK;
fail:
    last_singular = s->singular;
    pl_st_free(&s);
    return rc;
}

int pl_st_set_shift(pl_st *s, double sre, double sim)
{
    PL_CHECK(s->kind == PL_ST_SHIFT_INVERT && (sim != 0.0) == s->cplx, PL_ERR_ARG,
             "pl_st_set_shift: a %s shift on a %s factorisation", sim != 0.0 ? "complex" : "real",
             s->cplx ? "complex" : "real");
    s->sre = sre;
    s->sim = sim;
    m_values(s, sre, sim);
    const int rc = pl_fact_factor(s->f, s->mre, s->cplx ? s->mim : NULL);
    s->singular = rc == PL_ERR_INPUT;
    return rc;
}

int pl_st_singular(const pl_st *s) { return s ? s->singular : last_singular; }
pl_op *pl_st_op(pl_st *s) { return s->op; }
pl_op *pl_st_vectors_op(pl_st *s) { return s->op_out ? s->op_out : s->op; }
void pl_st_fact_info(const pl_st *s, pl_fact_info *info) { pl_fact_get_info(s->f, info); }

void pl_st_norms(const pl_st *s, double *anorm, double *bnorm)
{
    *anorm = s->anorm;
    *bnorm = s->bnorm;
}

void pl_st_free(pl_st **ps)
{
    if (!ps || !*ps) return;
    pl_st *s = *ps;
    pl_op_destroy(&s->op);
    pl_op_destroy(&s->op_out);
    pl_op_destroy(&s->bop);
    pl_fact_free(&s->f);
    if (s->b_identity) pl_csr_destroy(&s->eye);
    free(s->mptr);
    free(s->mcol);
    free(s->mre);
    free(s->mim);
    free(s->pos_a);
    free(s->pos_b);
    free(s->counts);
    free(s->displs);
    free(s->xfull);
    free(s->t);
    free(s->ti);
    free(s->zi);
    free(s->hx);
    free(s->hy);
    free(s);
    *ps = NULL;
}

int pl_st_inertia(MPI_Comm comm, const pl_csr *B, const pl_fact_opts *fo, int64_t *neg, int *singular)
{
    pl_fact_opts o = *fo;
    if (pl_fact_available(PL_FACT_MUMPS)) o.kind = PL_FACT_MUMPS; /* the back-end that reports the inertia */
    o.symmetric = 1;
    o.is_complex = 0;
    pl_fact *f = NULL;
    *neg = -1;
    *singular = 0;
    PL_CALL(pl_fact_create(comm, B->nrows_global, B->row0, B->nrows, B->row_ptr, B->col, B->val, NULL, &o, &f));
    int rc = pl_fact_factor(f, B->val, NULL);
    if (rc == PL_ERR_INPUT) { /* singular: not an error of this call */
        pl_error_clear();
        *singular = 1;
        rc = PL_OK;
    } else if (rc == PL_OK) {
        pl_fact_info info;
        pl_fact_get_info(f, &info);
        *neg = info.negative_pivots;
    }
    pl_fact_free(&f);
    return rc;
}
