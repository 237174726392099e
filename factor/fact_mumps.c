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
 * symmetric one.  Every MUMPS call is collective and INFOG is the same on
 * every rank, so errors agree.
 *
 * Ordering (ICNTL(7)): AMF up to PL_MUMPS_AMF_ROWS rows, MUMPS' own choice
 * above (PORD in Debian's build, which has neither METIS nor SCOTCH).  On
 * cryg10000 the analysis took 0.005 s with AMF against PORD's 0.036 s for
 * 7 % fewer factor entries; on 2-D and 3-D Laplacians of 160,000 and
 * 64,000 rows AMF's analysis was 7x faster for 10-13 % more entries
 * (docs/performance.md, 2026-11-27).
 *
 * Solve (JOB = 3), several ranks: distributed right-hand side (ICNTL(20) =
 * 10: each rank gives its own rows) and distributed solution (ICNTL(21) =
 * 1: MUMPS leaves x on the rank that holds the front of each variable,
 * listed in ISOL_loc), instead of a gather to rank 0 and a scatter from it
 * (cryg10000 on 2 ranks: 38 solves 0.097 s against 0.132 s).  The way from
 * MUMPS' ranks to the caller's row blocks is planned once per
 * factorisation (the first solve after it) and costs one MPI_Alltoallv per
 * solve.  One rank: the centralized right-hand side, solved in place (the
 * distributed form was 3 % slower there).  No buffer is allocated per
 * solve.
 *
 * Measurement aid: PJDS_MUMPS_ICNTL="i=v,..." overrides ICNTL values after
 * these defaults, before the analysis (e.g. "24=0" as PETSc, "20=0,21=0"
 * centralized right-hand side and solution through rank 0, "3=6,4=2"
 * MUMPS' own statistics, with per-solve fwd/bwd times, on stdout). */
#include <dmumps_c.h>
#include <zmumps_c.h>
#include <stdlib.h>
#include <string.h>

#include "fact_impl.h"
#include "pl_error.h"

/* CNTL(3): a pivot below this times the norm of the (scaled) matrix is null */
#define PL_MUMPS_NULL_PIVOT 1e-12
/* ICNTL(7) = 2 (AMF) up to this many rows, 7 (MUMPS' choice) above */
#define PL_MUMPS_AMF_ROWS 200000

typedef struct mumps_st {
    int cplx, sym, rank, size;
    MPI_Comm comm;
    int64_t n, row0, nloc, nz;   /* nz: entries given to MUMPS on this rank */
    int64_t *src;                /* nz: index into the caller's value arrays */
    MUMPS_INT *irn, *jcn;
    double *a;                   /* nz (real) or 2 nz (complex: re, im pairs) */
    int64_t *starts;             /* size + 1: first row of each rank */
    MUMPS_INT *irhs;             /* nloc: 1-based global rows of the right-hand side */
    double *rhs;                 /* nloc (real) or 2 nloc (complex: re, im pairs) */
    MUMPS_INT lsol, *isol;       /* INFO(23) solution entries on this rank, their rows */
    double *sol;                 /* lsol (real) or 2 lsol (complex pairs) */
    int crhs, csol;              /* ICNTL(20) = 0, ICNTL(21) = 0: centralized on rank 0 (PJDS_MUMPS_ICNTL) */
    int central;                 /* the solve goes through solve_centralized (all ranks agree) */
    double *grhs;                /* rank 0, crhs or csol on several ranks: the centralized vector (w n) */
    int *gcnt, *gdsp;            /* size: doubles of each rank's rows in grhs */
    int planned;                 /* the plan below is that of the current factors */
    int *scnt, *sdsp, *rcnt, *rdsp; /* size: doubles sent / received per rank */
    int *sidx;                   /* lsol: the slot in sbuf of each solution entry */
    int64_t *ridx;               /* received entries: their local row */
    double *sbuf, *rbuf;
    int64_t nrecv;
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

/* the solution's buffers for INFO(23) entries on this rank (after a factorisation) */
static int sol_buffers(mumps_st *s)
{
    const MUMPS_INT need = s->cplx ? s->z.info[22] : s->d.info[22];
    if (need > s->lsol || !s->sol) {
        free(s->sol);
        free(s->isol);
        free(s->sidx);
        free(s->sbuf);
        s->sol = s->sbuf = NULL;
        s->isol = NULL;
        s->sidx = NULL;
        s->lsol = need;
        PL_MALLOC(s->sol, (s->cplx ? 2 : 1) * (size_t)need + 2);
        PL_MALLOC(s->isol, (size_t)need + 1);
        PL_MALLOC(s->sidx, (size_t)need + 1);
        PL_MALLOC(s->sbuf, (s->cplx ? 2 : 1) * (size_t)need + 2);
    }
    if (s->cplx) {
        s->z.sol_loc = (ZMUMPS_COMPLEX *)s->sol;
        s->z.lsol_loc = need > 0 ? need : 1;
        s->z.isol_loc = s->isol;
    } else {
        s->d.sol_loc = s->sol;
        s->d.lsol_loc = need > 0 ? need : 1;
        s->d.isol_loc = s->isol;
    }
    s->planned = 0;
    return PL_OK;
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
    return sol_buffers(s);
}

/* the rank holding global row g (starts: the row blocks in rank order) */
static int owner(const mumps_st *s, int64_t g)
{
    int lo = 0, hi = s->size - 1;
    while (lo < hi) {
        const int mid = (lo + hi + 1) / 2;
        if (s->starts[mid] <= g) lo = mid;
        else hi = mid - 1;
    }
    return lo;
}

/* The way of MUMPS' solution entries (ISOL_loc, known after the first
 * solve of a factorisation) to the ranks owning their rows: counts, the
 * slot of each entry in the send buffer, the local row of each received
 * entry.  Collective (several ranks). */
static int plan_solution(mumps_st *s)
{
    const int w = s->cplx ? 2 : 1, p = s->size;
    int rc = PL_OK, *fill = NULL;
    int64_t *gsend = NULL, *grecv = NULL;
    int *ic = NULL, *id = NULL, *jc = NULL, *jd = NULL;
    PL_MALLOC(fill, p + 1);
    for (int r = 0; r < p; r++) s->scnt[r] = 0;
    for (MUMPS_INT i = 0; i < s->lsol; i++) s->scnt[owner(s, (int64_t)s->isol[i] - 1)]++;
    PL_CHECK_GOTO(MPI_Alltoall(s->scnt, 1, MPI_INT, s->rcnt, 1, MPI_INT, s->comm) == MPI_SUCCESS, PL_ERR_MPI, out, rc,
                  "MPI_Alltoall of the solution counts failed");
    int64_t ns = 0, nr = 0;
    for (int r = 0; r < p; r++) {
        fill[r] = (int)ns;
        ns += s->scnt[r];
        nr += s->rcnt[r];
    }
    PL_CHECK_GOTO(nr == s->nloc, PL_ERR_INTERNAL, out, rc, "MUMPS returned %lld solution entries for %lld rows",
                  (long long)nr, (long long)s->nloc);
    gsend = malloc(((size_t)ns + 1) * sizeof *gsend);
    grecv = malloc(((size_t)nr + 1) * sizeof *grecv);
    ic = malloc((size_t)p * 4 * sizeof *ic);
    PL_CHECK_GOTO(gsend && grecv && ic, PL_ERR_MEM, out, rc, "out of host memory");
    id = ic + p, jc = ic + 2 * p, jd = ic + 3 * p;
    for (MUMPS_INT i = 0; i < s->lsol; i++) {
        const int64_t g = (int64_t)s->isol[i] - 1;
        const int slot = fill[owner(s, g)]++;
        s->sidx[i] = slot;
        gsend[slot] = g;
    }
    for (int r = 0, os = 0, orr = 0; r < p; r++) {
        ic[r] = s->scnt[r], id[r] = os, jc[r] = s->rcnt[r], jd[r] = orr;
        os += s->scnt[r], orr += s->rcnt[r];
        s->sdsp[r] = w * id[r], s->rdsp[r] = w * jd[r];
    }
    PL_CHECK_GOTO(MPI_Alltoallv(gsend, ic, id, MPI_INT64_T, grecv, jc, jd, MPI_INT64_T, s->comm) == MPI_SUCCESS,
                  PL_ERR_MPI, out, rc, "MPI_Alltoallv of the solution rows failed");
    for (int64_t k = 0; k < nr; k++) s->ridx[k] = grecv[k] - s->row0;
    for (int r = 0; r < p; r++) s->scnt[r] *= w, s->rcnt[r] *= w;
    s->nrecv = nr;
    s->planned = 1;
out:
    free(fill);
    free(gsend);
    free(grecv);
    free(ic);
    return rc;
}

/* MUMPS' distributed solution (ISOL_loc, SOL_loc) back to this rank's rows:
 * one MPI_Alltoallv on the plan made at the first solve. */
static int solution_to_rows(mumps_st *s, double *x_re, double *x_im)
{
    if (!s->planned) PL_CALL(plan_solution(s));
    const int w = s->cplx ? 2 : 1;
    for (MUMPS_INT i = 0; i < s->lsol; i++)
        for (int c = 0; c < w; c++) s->sbuf[w * (size_t)s->sidx[i] + c] = s->sol[w * (size_t)i + c];
    PL_CHECK(MPI_Alltoallv(s->sbuf, s->scnt, s->sdsp, MPI_DOUBLE, s->rbuf, s->rcnt, s->rdsp, MPI_DOUBLE, s->comm) ==
                 MPI_SUCCESS,
             PL_ERR_MPI, "MPI_Alltoallv of the solution failed");
    for (int64_t k = 0; k < s->nrecv; k++) {
        x_re[s->ridx[k]] = s->rbuf[w * k];
        if (s->cplx) x_im[s->ridx[k]] = s->rbuf[w * k + 1];
    }
    return PL_OK;
}

/* The solve with a centralized right-hand side (ICNTL(20) = 0: the row
 * blocks gathered into rank 0's grhs) and/or a centralized solution
 * (ICNTL(21) = 0: MUMPS leaves x in rank 0's grhs, scattered back to the
 * row blocks); only under a PJDS_MUMPS_ICNTL override.  s->rhs holds this
 * rank's rows of b. */
static int solve_centralized(mumps_st *s, double *x_re, double *x_im)
{
    const int w = s->cplx ? 2 : 1;
    const int64_t nl = s->nloc;
    if (s->crhs)
        PL_CHECK(MPI_Gatherv(s->rhs, (int)(w * nl), MPI_DOUBLE, s->grhs, s->gcnt, s->gdsp, MPI_DOUBLE, 0, s->comm) ==
                     MPI_SUCCESS,
                 PL_ERR_MPI, "MPI_Gatherv of the right-hand side failed");
    run(s, 3);
    PL_CALL(check(s, "solve"));
    if (s->csol) {
        PL_CHECK(MPI_Scatterv(s->grhs, s->gcnt, s->gdsp, MPI_DOUBLE, s->rbuf, (int)(w * nl), MPI_DOUBLE, 0, s->comm) ==
                     MPI_SUCCESS,
                 PL_ERR_MPI, "MPI_Scatterv of the solution failed");
        for (int64_t i = 0; i < nl; i++) {
            x_re[i] = s->rbuf[w * i];
            if (s->cplx) x_im[i] = s->rbuf[w * i + 1];
        }
        return PL_OK;
    }
    return solution_to_rows(s, x_re, x_im);
}

static int mumps_solve(void *st, const double *b_re, const double *b_im, double *x_re, double *x_im)
{
    mumps_st *s = st;
    const int64_t nl = s->nloc;
    if (s->cplx)
        for (int64_t i = 0; i < nl; i++) s->rhs[2 * i] = b_re[i], s->rhs[2 * i + 1] = b_im ? b_im[i] : 0.0;
    else
        memcpy(s->rhs, b_re, (size_t)nl * sizeof *s->rhs);
    if (s->central) /* an ICNTL(20)/(21) override: through rank 0's grhs */
        return solve_centralized(s, x_re, x_im);
    run(s, 3);
    PL_CALL(check(s, "solve"));
    if (s->size == 1) { /* centralized: the solution replaced rhs */
        if (s->cplx)
            for (int64_t i = 0; i < nl; i++) x_re[i] = s->rhs[2 * i], x_im[i] = s->rhs[2 * i + 1];
        else
            memcpy(x_re, s->rhs, (size_t)nl * sizeof *x_re);
        return PL_OK;
    }
    return solution_to_rows(s, x_re, x_im);
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
    free(s->starts);
    free(s->irhs);
    free(s->rhs);
    free(s->isol);
    free(s->sol);
    free(s->scnt);
    free(s->sidx);
    free(s->ridx);
    free(s->sbuf);
    free(s->rbuf);
    free(s->grhs);
    free(s->gcnt);
    free(s);
}

static const pl_fact_ops mumps_ops = {mumps_factor, mumps_solve, mumps_destroy};

/* the row blocks of all ranks, the distributed right-hand side's rows and buffers */
static int plan_rhs(mumps_st *s)
{
    const int p = s->size, w = s->cplx ? 2 : 1;
    PL_MALLOC(s->starts, p + 1);
    PL_MALLOC(s->scnt, 4 * (size_t)p);
    s->sdsp = s->scnt + p, s->rcnt = s->scnt + 2 * p, s->rdsp = s->scnt + 3 * p;
    int64_t nl = s->nloc;
    PL_CHECK(MPI_Allgather(&nl, 1, MPI_INT64_T, s->starts, 1, MPI_INT64_T, s->comm) == MPI_SUCCESS, PL_ERR_MPI,
             "MPI_Allgather of the row counts failed");
    int64_t off = 0;
    for (int r = 0; r < p; r++) {
        const int64_t c = s->starts[r];
        s->starts[r] = off;
        off += c;
    }
    s->starts[p] = off;
    PL_CHECK(off == s->n && s->starts[s->rank] == s->row0, PL_ERR_ARG,
             "pl_fact_create: the row blocks do not tile [0, %lld) in rank order", (long long)s->n);
    PL_MALLOC(s->irhs, nl + 1);
    PL_MALLOC(s->rhs, w * nl + 2);
    PL_MALLOC(s->ridx, nl + 1);
    PL_MALLOC(s->rbuf, w * nl + 2);
    for (int64_t i = 0; i < nl; i++) s->irhs[i] = (MUMPS_INT)(s->row0 + i + 1);
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
    ICNTL(s, 7) = s->n <= PL_MUMPS_AMF_ROWS ? 2 : 7; /* ordering: AMF, or MUMPS' choice */
    ICNTL(s, 20) = s->size > 1 ? 10 : 0; /* several ranks: distributed right-hand side (MUMPS >= 5.3) */
    ICNTL(s, 21) = s->size > 1 ? 1 : 0;  /* and solution; one rank: in place in rhs */
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
        s->z.nrhs = 1;
        s->z.nloc_rhs = (MUMPS_INT)s->nloc;
        s->z.lrhs_loc = (MUMPS_INT)(s->nloc > 0 ? s->nloc : 1);
        s->z.irhs_loc = s->irhs;
        s->z.rhs_loc = (ZMUMPS_COMPLEX *)s->rhs;
        s->z.rhs = (ZMUMPS_COMPLEX *)s->rhs; /* one rank: centralized, in place */
        s->z.lrhs = (MUMPS_INT)s->n;
    } else {
        s->d.n = (MUMPS_INT)s->n;
        s->d.nnz_loc = s->nz;
        s->d.irn_loc = s->irn;
        s->d.jcn_loc = s->jcn;
        s->d.a_loc = s->a;
        s->d.nrhs = 1;
        s->d.nloc_rhs = (MUMPS_INT)s->nloc;
        s->d.lrhs_loc = (MUMPS_INT)(s->nloc > 0 ? s->nloc : 1);
        s->d.irhs_loc = s->irhs;
        s->d.rhs_loc = s->rhs;
        s->d.rhs = s->rhs; /* one rank: centralized, in place */
        s->d.lrhs = (MUMPS_INT)s->n;
    }
}

/* PJDS_MUMPS_ICNTL="i=v,i=v,..." (a measurement aid): ICNTL values set
 * after our defaults, before the analysis.  ICNTL(5) and (18) (the input
 * format) are ours; ICNTL(20) takes 0 or 10, ICNTL(21) 0 or 1.  The same
 * environment on every rank is assumed (mpiexec passes it). */
static int apply_overrides(mumps_st *s)
{
    const char *v = getenv("PJDS_MUMPS_ICNTL");
    if (!v || !*v) return PL_OK;
    const char *p = v;
    while (*p) {
        char *end;
        const long i = strtol(p, &end, 10);
        PL_CHECK(end != p && *end == '=', PL_ERR_INPUT, "PJDS_MUMPS_ICNTL='%s': expected i=v[,i=v...]", v);
        p = end + 1;
        const long val = strtol(p, &end, 10);
        PL_CHECK(end != p && (*end == ',' || *end == '\0'), PL_ERR_INPUT,
                 "PJDS_MUMPS_ICNTL='%s': expected i=v[,i=v...]", v);
        PL_CHECK(i >= 1 && i <= 60 && i != 5 && i != 18, PL_ERR_INPUT,
                 "PJDS_MUMPS_ICNTL: ICNTL(%ld) cannot be overridden (1..60, not 5 or 18)", i);
        PL_CHECK(i != 20 || val == 0 || val == 10, PL_ERR_INPUT, "PJDS_MUMPS_ICNTL: ICNTL(20) must be 0 or 10");
        PL_CHECK(i != 21 || val == 0 || val == 1, PL_ERR_INPUT, "PJDS_MUMPS_ICNTL: ICNTL(21) must be 0 or 1");
        PL_CHECK(val >= INT32_MIN && val <= INT32_MAX, PL_ERR_INPUT, "PJDS_MUMPS_ICNTL: value %ld out of range", val);
        ICNTL(s, (int)i) = (MUMPS_INT)val;
        p = *end == ',' ? end + 1 : end;
    }
    return PL_OK;
}

/* After the overrides: a centralized right-hand side or solution on
 * several ranks (or a mixed one on one rank) goes through rank 0's grhs. */
static int central_setup(mumps_st *s)
{
    s->crhs = ICNTL(s, 20) == 0;
    s->csol = ICNTL(s, 21) == 0;
    s->central = (s->crhs || s->csol) && !(s->size == 1 && s->crhs && s->csol);
    if (!s->central) return PL_OK;
    const int w = s->cplx ? 2 : 1;
    PL_CHECK((int64_t)w * s->n < INT32_MAX, PL_ERR_INPUT, "a centralized MUMPS right-hand side needs w n < 2^31");
    PL_MALLOC(s->gcnt, 2 * (size_t)s->size);
    s->gdsp = s->gcnt + s->size;
    for (int r = 0; r < s->size; r++) {
        s->gcnt[r] = (int)(w * (s->starts[r + 1] - s->starts[r]));
        s->gdsp[r] = (int)(w * s->starts[r]);
    }
    if (s->rank == 0) PL_MALLOC(s->grhs, (size_t)w * s->n + 2);
    if (s->cplx) {
        s->z.rhs = (ZMUMPS_COMPLEX *)s->grhs;
        s->z.lrhs = (MUMPS_INT)s->n;
    } else {
        s->d.rhs = s->grhs;
        s->d.lrhs = (MUMPS_INT)s->n;
    }
    return PL_OK;
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
    PL_CALL_GOTO(plan_rhs(s), fail, rc);
    set_values(s, re, im);
    init_struct(s);
    PL_CALL_GOTO(check(s, "initialisation"), fail, rc);
    PL_CALL_GOTO(apply_overrides(s), fail, rc);
    set_entries(s);
    PL_CALL_GOTO(central_setup(s), fail, rc);
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
