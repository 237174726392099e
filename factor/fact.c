/* fact.c — the factorisation front end (fact.h): back-end dispatch, the
 * memory check of the analysis' estimate against opts->mem_limit (0: the
 * node's MemAvailable shared by its ranks), the timing of factor and
 * solve.  The back-ends are fact_mumps.c and (built with cuDSS)
 * fact_cudss.c, reached through the table of fact_impl.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fact.h"
#include "fact_impl.h"
#include "pl_error.h"

struct pl_fact {
    MPI_Comm comm;
    const pl_fact_ops *ops;
    void *st;
    pl_fact_info info;
};

void pl_fact_opts_init(pl_fact_opts *o)
{
    memset(o, 0, sizeof *o);
    o->kind = PL_FACT_AUTO;
}

/* MemAvailable of /proc/meminfo over the ranks of this node (< 0: unknown). */
static double host_available(MPI_Comm comm)
{
    double avail = -1.0;
    FILE *f = fopen("/proc/meminfo", "r");
    if (f) {
        char line[256];
        long long kb = 0;
        while (fgets(line, sizeof line, f))
            if (sscanf(line, "MemAvailable: %lld kB", &kb) == 1) {
                avail = 1024.0 * (double)kb;
                break;
            }
        fclose(f);
    }
    MPI_Comm node;
    int nranks = 1;
    if (MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) == MPI_SUCCESS) {
        MPI_Comm_size(node, &nranks);
        MPI_Comm_free(&node);
    }
    return avail < 0 ? avail : avail / (nranks > 0 ? nranks : 1);
}

int pl_fact_available(pl_fact_kind kind)
{
    int mumps = 0, cudss = 0;
#ifdef PJDS_HAVE_MUMPS
    mumps = 1;
#endif
#ifdef PJDS_HAVE_CUDSS
    cudss = 1;
#endif
    return kind == PL_FACT_MUMPS ? mumps : kind == PL_FACT_CUDSS ? cudss : mumps || cudss;
}

static int choose_backend(MPI_Comm comm, const pl_fact_opts *o, pl_fact_create_fn *fn)
{
    int size = 1;
    PL_CHECK(MPI_Comm_size(comm, &size) == MPI_SUCCESS, PL_ERR_MPI, "MPI_Comm_size failed");
#ifdef PJDS_HAVE_CUDSS
    if (o->kind == PL_FACT_CUDSS) {
        PL_CHECK(size == 1, PL_ERR_INPUT,
                 "factorization = cudss runs on one rank (this run has %d); use mumps on several ranks", size);
        *fn = pl_fact_cudss_create;
        return PL_OK;
    }
    if (o->kind == PL_FACT_AUTO && size == 1) {
        *fn = pl_fact_cudss_create;
        return PL_OK;
    }
#else
    PL_CHECK(o->kind != PL_FACT_CUDSS, PL_ERR_INPUT,
             "factorization = cudss: cuDSS is not built in (it was not found when this program was built); "
             "use mumps");
#endif
    (void)size;
#ifdef PJDS_HAVE_MUMPS
    *fn = pl_fact_mumps_create;
    return PL_OK;
#else
    (void)fn;
    return PL_ERROR(PL_ERR_INPUT, "factorization = %s: MUMPS is not built in (it was not found when this program "
                    "was built: bash tools/setup-deps.sh installs libmumps-dev, then reconfigure)%s",
                    o->kind == PL_FACT_MUMPS ? "mumps" : "auto",
#ifdef PJDS_HAVE_CUDSS
                    "; factorization = cudss works on one rank with a GPU"
#else
                    ""
#endif
    );
#endif
}

int pl_fact_create(MPI_Comm comm, int64_t n, int64_t row0, int64_t nloc, const int64_t *rowptr,
                   const int64_t *col, const double *re, const double *im, const pl_fact_opts *o,
                   pl_fact **out)
{
    *out = NULL;
    PL_CHECK(n >= 1 && nloc >= 0 && row0 >= 0 && row0 + nloc <= n, PL_ERR_ARG,
             "pl_fact_create: rows [%lld, %lld) outside [0, %lld)", (long long)row0, (long long)(row0 + nloc),
             (long long)n);
    pl_fact_create_fn fn = NULL;
    PL_CALL(choose_backend(comm, o, &fn));
    pl_fact *f = calloc(1, sizeof *f);
    PL_CHECK(f, PL_ERR_MEM, "out of host memory");
    f->comm = comm;
    f->info.negative_pivots = -1;
    double t0 = pl_wtime();
    int rc = fn(comm, n, row0, nloc, rowptr, col, re, im, o, &f->info, &f->ops, &f->st);
    if (rc) {
        free(f);
        return rc;
    }
    if (f->info.analyse_s == 0.0) f->info.analyse_s = pl_wtime() - t0;
    /* the analysis' estimate (largest rank) against the limit, before any numeric work */
    double limit = o->mem_limit > 0 ? o->mem_limit : host_available(comm), lmin = limit;
    int e = MPI_Allreduce(&limit, &lmin, 1, MPI_DOUBLE, MPI_MIN, comm);
    if (e != MPI_SUCCESS) {
        pl_fact_free(&f);
        return PL_ERROR(PL_ERR_MPI, "MPI_Allreduce of the memory limit failed");
    }
    if (lmin > 0 && f->info.mem_estimate > lmin) {
        const double est = f->info.mem_estimate;
        const char *be = f->info.backend;
        pl_fact_free(&f);
        return PL_ERROR(PL_ERR_INPUT,
                        "the %s factorisation of the %lld-row matrix needs %.1f MB per rank by its analysis, more "
                        "than the %.1f MB %s; refused before it starts",
                        be, (long long)n, est / 1e6, lmin / 1e6,
                        o->mem_limit > 0 ? "allowed" : "available per rank (MemAvailable over the node's ranks)");
    }
    if (o->verbose) pl_info("factor: %s analysis %.3f s, estimate %.1f MB per rank, %lld entries in the factors",
                            f->info.backend, f->info.analyse_s, f->info.mem_estimate / 1e6,
                            (long long)f->info.nnz_factors);
    *out = f;
    return PL_OK;
}

int pl_fact_factor(pl_fact *f, const double *re, const double *im)
{
    PL_CHECK(f && f->ops, PL_ERR_ARG, "pl_fact_factor: no factorisation");
    double t0 = pl_wtime();
    int rc = f->ops->factor(f->st, re, im);
    f->info.factor_s += pl_wtime() - t0;
    return rc;
}

int pl_fact_solve(pl_fact *f, const double *b_re, const double *b_im, double *x_re, double *x_im)
{
    PL_CHECK(f && f->ops, PL_ERR_ARG, "pl_fact_solve: no factorisation");
    double t0 = pl_wtime();
    int rc = f->ops->solve(f->st, b_re, b_im, x_re, x_im);
    f->info.solve_s += pl_wtime() - t0;
    f->info.nsolves++;
    return rc;
}

void pl_fact_get_info(const pl_fact *f, pl_fact_info *info)
{
    if (f) *info = f->info;
    else memset(info, 0, sizeof *info);
}

void pl_fact_free(pl_fact **pf)
{
    if (!pf || !*pf) return;
    pl_fact *f = *pf;
    if (f->ops && f->ops->destroy) f->ops->destroy(f->st);
    free(f);
    *pf = NULL;
}
