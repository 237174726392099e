/* solve.c — pjds_solve: the options mapped onto lz_options exactly as the
 * app maps its [solver] section (app/solve_core.c), the method chosen as
 * the app chooses it, lz_solve or ks_solve, and the result copied out of the
 * solver's backend memory (result.c). */
#include <string.h>

#include "api_impl.h"

void pjds_solve_options_init(pjds_solve_options *opt)
{
    if (!opt) return;
    lz_options o;
    lz_options_defaults(&o);
    memset(opt, 0, sizeof *opt);
    opt->method = PJDS_METHOD_AUTO;
    opt->which = (pjds_which)o.which;
    opt->nev = o.nev;
    opt->tol = o.tol;
    opt->ncv = o.ncv;
    opt->max_restarts = PJDS_RESTARTS_AUTO;
    opt->seed = o.seed;
    opt->want_vectors = o.want_vectors;
    opt->verify = o.verify;
    opt->reorth = o.reorth == LZ_REORTH_FULL ? PJDS_REORTH_FULL : PJDS_REORTH_PARTIAL;
    opt->verify_probability = LZ_VERIFY_PROB;
}

/* The method that runs: auto is Lanczos for a symmetric matrix, else
 * Krylov-Schur; Lanczos on a nonsymmetric matrix and largest_imaginary on
 * a symmetric problem are bad input (as in the app).  Same on every rank. */
static int choose_method(const pjds_matrix *A, const pjds_solve_options *o, pjds_method *method)
{
    PL_CHECK(o->method >= PJDS_METHOD_AUTO && o->method <= PJDS_METHOD_KRYLOV_SCHUR, PL_ERR_INPUT,
             "method %d is none of auto (0), lanczos (1), krylov-schur (2)", (int)o->method);
    PL_CHECK(!(A->symmetric == 0 && o->method == PJDS_METHOD_LANCZOS), PL_ERR_INPUT,
             "method lanczos: the matrix is not symmetric; use krylov-schur or auto");
    *method = o->method;
    if (*method == PJDS_METHOD_AUTO) *method = A->symmetric ? PJDS_METHOD_LANCZOS : PJDS_METHOD_KRYLOV_SCHUR;
    PL_CHECK(!(A->symmetric && o->which == PJDS_WHICH_LARGEST_IMAGINARY), PL_ERR_INPUT,
             "which largest_imaginary: the matrix is symmetric, so its eigenvalues are real; use "
             "largest_magnitude, largest or smallest");
    PL_CHECK(o->verify_probability > 0.0 && o->verify_probability < 1.0, PL_ERR_INPUT,
             "verify_probability must be in (0, 1) (got %g)", o->verify_probability);
    return PL_OK; /* nev, tol, ncv, max_restarts: the solvers' own check (kr_check_options) */
}

static void lz_options_of(const pjds_solve_options *o, lz_options *lo)
{
    lz_options_defaults(lo);
    lo->nev = o->nev;
    lo->which = (int)o->which;
    lo->tol = o->tol;
    lo->ncv = o->ncv;
    lo->max_restarts = o->max_restarts == PJDS_RESTARTS_AUTO ? LZ_RESTARTS_AUTO : o->max_restarts;
    lo->seed = o->seed;
    lo->want_vectors = o->want_vectors != 0;
    lo->verify = o->verify != 0;
    lo->reorth = o->reorth == PJDS_REORTH_FULL ? LZ_REORTH_FULL : LZ_REORTH_PARTIAL;
    lo->verify_prob = o->verify_probability;
}

pjds_status pjds_solve(pjds_matrix *A, const pjds_solve_options *opt, pjds_result **res)
{
    if (res) *res = NULL;
    if (!A || !res) return api_fail(PJDS_ERR_ARG, "pjds_solve: %s is NULL", A ? "res" : "A");
    pjds_solve_options def;
    if (!opt) {
        pjds_solve_options_init(&def);
        opt = &def;
    }
    pjds_method method = PJDS_METHOD_AUTO;
    int rc = choose_method(A, opt, &method);
    if (rc != PL_OK) return api_status(rc); /* the same decision on every rank */
    lz_options lo;
    lz_options_of(opt, &lo);
    lz_result lr;
    memset(&lr, 0, sizeof lr);
    pl_op_reset_counters(A->op);
    rc = method == PJDS_METHOD_LANCZOS ? lz_solve(A->op, &lo, &lr) : ks_solve(A->op, &lo, &lr);
    rc = api_agree(A->comm, rc);
    if (rc == PL_OK) rc = api_agree(A->comm, api_result_make(A, &lr, method, !A->symmetric, res));
    lz_result_destroy(&lr);
    return api_status(rc);
}
