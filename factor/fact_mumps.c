/* fact_mumps.c — the MUMPS back-end of fact.h (Debian's libmumps-dev:
 * dmumps for real, zmumps for complex values; MPI-distributed).
 *
 * Input: distributed assembled entries (ICNTL(18) = 3), each rank giving
 * its own rows (for symmetric M only the lower triangle, i >= j, as MUMPS
 * wants half of a symmetric matrix); 1-based 32-bit indices.  Analysis
 * (JOB = 1) gives the memory estimate INFOG(16) (MB, the largest rank, in
 * core) and the factor entries INFOG(20); factorisation (JOB = 2) with
 * null-pivot detection (ICNTL(24) = 1, CNTL(3) = PL_MUMPS_NULL_PIVOT
 * relative to the matrix' norm): a null pivot or INFOG(1) = -10 is a
 * singular matrix; the inertia (INFOG(12), negative pivots) is kept for a
 * symmetric one.  Solve (JOB = 3) with a centralized right-hand side: rank
 * 0 gathers b, MUMPS solves, rank 0 scatters x.  Every MUMPS call is
 * collective and INFOG is the same on every rank, so errors agree. */
#include <dmumps_c.h>
#include <zmumps_c.h>
#include <stdlib.h>
#include <string.h>

#include "fact_impl.h"
#include "pl_error.h"

/* CNTL(3): a pivot below this times the norm of the (scaled) matrix is null */
#define PL_MUMPS_NULL_PIVOT 1e-12

typedef struct mumps_st {
    int cplx, sym, rank, size;
    MPI_Comm comm;
    int64_t n, row0, nloc, nz;   /* nz: entries given to MUMPS on this rank */
    int64_t *src;                /* nz: index into the caller's value arrays */
    MUMPS_INT *irn, *jcn;
    double *a;                   /* nz (real) or 2 nz (complex: re, im pairs) */
    double *rhs;                 /* rank 0: n (real) or 2 n (complex) */
    int *counts, *displs;        /* rank 0: rows of each rank */
    pl_fact_info *info;
    DMUMPS_STRUC_C d;
    ZMUMPS_STRUC_C z;
    int inited;
} mumps_st;

#define ICNTL(s, i) (*((s)->cplx ? &(s)->z.icntl[(i) - 1] : &(s)->d.icntl[(i) - 1]))
#define INFOG(s, i) ((s)->cplx ? (s)->z.infog[(i) - 1] : (s)->d.infog[(i) - 1])

static void run(mumps_st *s, int job)
{
    if (s->cplx) {
        s->z.job = job;
        zmumps_c(&s->z);
    } else {
        s->d.job = job;
        dmumps_c(&s->d);
    }
}

static const char *meaning(int e)
{
    switch (e) {
    case -5: case -7: case -13: return "MUMPS could not allocate memory";
    case -6: return "the matrix is structurally singular";
    case -8: case -9: case -14: case -15: case -17: case -20: return "MUMPS' work space was too small";
    case -10: return "the matrix is numerically singular";
    case -16: return "N is out of range";
    default: return "see the MUMPS user guide, INFOG(1)";
    }
}

static int check(mumps_st *s, const char *phase)
{
    const int e = INFOG(s, 1);
    if (e >= 0) return PL_OK;
    const int code = e == -6 || e == -10 ? PL_ERR_INPUT : e == -5 || e == -7 || e == -13 ? PL_ERR_MEM : PL_ERR_INTERNAL;
    return PL_ERROR(code, "MUMPS %s failed: INFOG(1) = %d, INFOG(2) = %d (%s)", phase, e, INFOG(s, 2), meaning(e));
}

/* this rank's entries (lower triangle for a symmetric matrix), 1-based */
static int entries(mumps_st *s, const int64_t *rowptr, const int64_t *col)
{
    int64_t nz = 0;
    for (int64_t i = 0; i < s->nloc; i++)
        for (int64_t k = rowptr[i]; k < rowptr[i + 1]; k++)
            nz += !s->sym || col[k] <= s->row0 + i;
    s->nz = nz;
    PL_MALLOC(s->src, nz + 1);
    PL_MALLOC(s->irn, nz + 1);
    PL_MALLOC(s->jcn, nz + 1);
    PL_MALLOC(s->a, (s->cplx ? 2 : 1) * nz + 1);
    nz = 0;
    for (int64_t i = 0; i < s->nloc; i++)
        for (int64_t k = rowptr[i]; k < rowptr[i + 1]; k++) {
            PL_CHECK(col[k] >= 0 && col[k] < s->n, PL_ERR_ARG, "column %lld of row %lld outside [0, %lld)",
                     (long long)col[k], (long long)(s->row0 + i), (long long)s->n);
            if (s->sym && col[k] > s->row0 + i) continue;
            s->src[nz] = k - rowptr[0];
            s->irn[nz] = (MUMPS_INT)(s->row0 + i + 1);
            s->jcn[nz] = (MUMPS_INT)(col[k] + 1);
            nz++;
        }
    return PL_OK;
}

static void set_values(mumps_st *s, const double *re, const double *im)
{
    for (int64_t k = 0; k < s->nz; k++) {
        if (s->cplx) {
            s->a[2 * k] = re[s->src[k]];
            s->a[2 * k + 1] = im ? im[s->src[k]] : 0.0;
        } else {
            s->a[k] = re[s->src[k]];
        }
    }
}

static int mumps_factor(void *st, const double *re, const double *im)
{
    mumps_st *s = st;
    set_values(s, re, im);
    for (int attempt = 0;; attempt++) {
        run(s, 2);
        const int e = INFOG(s, 1);
        /* too little work space: twice the relaxation, twice */
        if ((e == -8 || e == -9 || e == -14) && attempt < 2) {
            ICNTL(s, 14) = 2 * ICNTL(s, 14) + 20;
            continue;
        }
        break;
    }
    if (INFOG(s, 1) == -10 || INFOG(s, 28) > 0)
        return PL_ERROR(PL_ERR_INPUT, "the matrix is singular to working precision (MUMPS: %d null pivot(s), "
                        "INFOG(1) = %d)", INFOG(s, 28), INFOG(s, 1));
    PL_CALL(check(s, "factorisation"));
    if (s->sym) s->info->negative_pivots = INFOG(s, 12);
    return PL_OK;
}

static int mumps_solve(void *st, const double *b_re, const double *b_im, double *x_re, double *x_im)
{
    mumps_st *s = st;
    const int nl = (int)s->nloc;
    double *buf = s->rhs; /* rank 0: gather the parts in place: re into rhs[0, n), im into rhs[n, 2n) */
    int e = MPI_Gatherv(b_re, nl, MPI_DOUBLE, buf, s->counts, s->displs, MPI_DOUBLE, 0, s->comm);
    if (e == MPI_SUCCESS && s->cplx)
        e = MPI_Gatherv(b_im, nl, MPI_DOUBLE, buf ? buf + s->n : NULL, s->counts, s->displs, MPI_DOUBLE, 0, s->comm);
    PL_CHECK(e == MPI_SUCCESS, PL_ERR_MPI, "MPI_Gatherv of the right-hand side failed");
    if (s->rank == 0 && s->cplx) { /* planes -> interleaved (re, im) pairs */
        double *t = malloc(2 * (size_t)s->n * sizeof *t);
        PL_CHECK(t, PL_ERR_MEM, "out of host memory");
        for (int64_t i = 0; i < s->n; i++) {
            t[2 * i] = buf[i];
            t[2 * i + 1] = buf[s->n + i];
        }
        memcpy(buf, t, 2 * (size_t)s->n * sizeof *t);
        free(t);
    }
    if (s->cplx) {
        s->z.rhs = (ZMUMPS_COMPLEX *)buf;
        s->z.nrhs = 1;
        s->z.lrhs = (MUMPS_INT)s->n;
    } else {
        s->d.rhs = buf;
        s->d.nrhs = 1;
        s->d.lrhs = (MUMPS_INT)s->n;
    }
    run(s, 3);
    PL_CALL(check(s, "solve"));
    if (s->rank == 0 && s->cplx) {
        double *t = malloc(2 * (size_t)s->n * sizeof *t);
        PL_CHECK(t, PL_ERR_MEM, "out of host memory");
        for (int64_t i = 0; i < s->n; i++) {
            t[i] = buf[2 * i];
            t[s->n + i] = buf[2 * i + 1];
        }
        memcpy(buf, t, 2 * (size_t)s->n * sizeof *t);
        free(t);
    }
    e = MPI_Scatterv(buf, s->counts, s->displs, MPI_DOUBLE, x_re, nl, MPI_DOUBLE, 0, s->comm);
    if (e == MPI_SUCCESS && s->cplx)
        e = MPI_Scatterv(buf ? buf + s->n : NULL, s->counts, s->displs, MPI_DOUBLE, x_im, nl, MPI_DOUBLE, 0, s->comm);
    PL_CHECK(e == MPI_SUCCESS, PL_ERR_MPI, "MPI_Scatterv of the solution failed");
    return PL_OK;
}

static void mumps_destroy(void *st)
{
    mumps_st *s = st;
    if (!s) return;
    if (s->inited) run(s, -2);
    free(s->src);
    free(s->irn);
    free(s->jcn);
    free(s->a);
    free(s->rhs);
    free(s->counts);
    free(s->displs);
    free(s);
}

static const pl_fact_ops mumps_ops = {mumps_factor, mumps_solve, mumps_destroy};

/* rank 0's gather plan: rows of each rank */
static int plan_gather(mumps_st *s)
{
    int nl = (int)s->nloc;
    if (s->rank == 0) {
        PL_MALLOC(s->counts, s->size);
        PL_MALLOC(s->displs, s->size);
        PL_MALLOC(s->rhs, 2 * s->n);
    }
    PL_CHECK(MPI_Gather(&nl, 1, MPI_INT, s->counts, 1, MPI_INT, 0, s->comm) == MPI_SUCCESS, PL_ERR_MPI,
             "MPI_Gather of the row counts failed");
    if (s->rank == 0)
        for (int r = 0, off = 0; r < s->size; r++) {
            s->displs[r] = off;
            off += s->counts[r];
        }
    return PL_OK;
}

static void init_struct(mumps_st *s)
{
    const MUMPS_INT fcomm = (MUMPS_INT)MPI_Comm_c2f(s->comm);
    if (s->cplx) {
        s->z.comm_fortran = fcomm;
        s->z.par = 1;
        s->z.sym = s->sym ? 2 : 0;
    } else {
        s->d.comm_fortran = fcomm;
        s->d.par = 1;
        s->d.sym = s->sym ? 2 : 0;
    }
    run(s, -1);
    s->inited = 1;
    ICNTL(s, 1) = -1; /* no error, diagnostic, global or other output */
    ICNTL(s, 2) = -1;
    ICNTL(s, 3) = -1;
    ICNTL(s, 4) = 0;
    ICNTL(s, 5) = 0;  /* assembled */
    ICNTL(s, 18) = 3; /* distributed entries */
    ICNTL(s, 24) = 1; /* null pivot detection */
    if (s->cplx) s->z.cntl[2] = PL_MUMPS_NULL_PIVOT;
    else s->d.cntl[2] = PL_MUMPS_NULL_PIVOT;
}

static void set_entries(mumps_st *s)
{
    if (s->cplx) {
        s->z.n = (MUMPS_INT)s->n;
        s->z.nnz_loc = s->nz;
        s->z.irn_loc = s->irn;
        s->z.jcn_loc = s->jcn;
        s->z.a_loc = (ZMUMPS_COMPLEX *)s->a;
    } else {
        s->d.n = (MUMPS_INT)s->n;
        s->d.nnz_loc = s->nz;
        s->d.irn_loc = s->irn;
        s->d.jcn_loc = s->jcn;
        s->d.a_loc = s->a;
    }
}

int pl_fact_mumps_create(MPI_Comm comm, int64_t n, int64_t row0, int64_t nloc, const int64_t *rowptr,
                         const int64_t *col, const double *re, const double *im, const pl_fact_opts *o,
                         pl_fact_info *info, const pl_fact_ops **ops, void **st)
{
    PL_CHECK(n < INT32_MAX, PL_ERR_INPUT, "MUMPS takes at most 2^31 - 1 rows (the matrix has %lld)", (long long)n);
    mumps_st *s = calloc(1, sizeof *s);
    PL_CHECK(s, PL_ERR_MEM, "out of host memory");
    s->cplx = o->is_complex != 0;
    s->sym = o->symmetric != 0;
    s->comm = comm;
    s->n = n;
    s->row0 = row0;
    s->nloc = nloc;
    s->info = info;
    int rc = PL_OK;
    PL_CHECK_GOTO(MPI_Comm_rank(comm, &s->rank) == MPI_SUCCESS && MPI_Comm_size(comm, &s->size) == MPI_SUCCESS,
                  PL_ERR_MPI, fail, rc, "MPI_Comm_rank/size failed");
    PL_CALL_GOTO(entries(s, rowptr, col), fail, rc);
    PL_CALL_GOTO(plan_gather(s), fail, rc);
    set_values(s, re, im);
    init_struct(s);
    PL_CALL_GOTO(check(s, "initialisation"), fail, rc);
    set_entries(s);
    double t0 = pl_wtime();
    run(s, 1);
    PL_CALL_GOTO(check(s, "analysis"), fail, rc);
    info->analyse_s = pl_wtime() - t0;
    info->backend = "mumps";
    info->mem_estimate = 1e6 * (double)INFOG(s, 16);
    const int nf = INFOG(s, 20);
    info->nnz_factors = nf >= 0 ? (int64_t)nf : -(int64_t)nf * 1000000;
    *ops = &mumps_ops;
    *st = s;
    return PL_OK;
fail:
    mumps_destroy(s);
    return rc;
}
