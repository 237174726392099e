/* solve_chebfd.c — `solve` with [solver] method = chebfd (lanczos.h cf_*;
 * docs/config.md "[solver] method = chebfd"): the options from the
 * configuration, the plan (bounds, window, degree, KPM estimate, search
 * block), the memory check of the search block, the iteration, and the
 * result file of `solve` (solve_core.c) with the window's attributes.
 * No checkpoints: a signal during the solve ends the run (exit status 3,
 * nothing saved). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pl_error.h"
#include "pl_spectrum.h"
#include "solve_impl.h"

typedef struct cf_out {
    cf_plan plan;
    cf_info info;
    const cf_options *opt;
} cf_out;

static void cf_options_from(const pl_config *cfg, int want_vectors, int quiet, cf_options *o)
{
    const pl_solver_cfg *s = &cfg->solver;
    cf_options_defaults(o);
    if (!isnan(s->interval[0])) {
        o->mode = CF_INTERVAL;
        o->a = s->interval[0];
        o->b = s->interval[1];
    } else if (!isnan(s->target)) {
        o->mode = CF_TARGET;
        o->target = s->target;
    } else {
        o->mode = s->which == PL_WHICH_LARGEST ? CF_LARGEST : CF_SMALLEST;
    }
    o->nev = s->nev;
    o->tol = s->tolerance;
    o->degree = s->filter_degree > 0 ? s->filter_degree : 0;
    o->search_size = s->search_size > 0 ? s->search_size : 0;
    o->max_iter = s->max_restarts > 0 ? s->max_restarts : 0;
    o->seed = s->seed;
    o->want_vectors = want_vectors;
    o->quiet = quiet;
}

static int write_cf_attributes(void *arg, pl_spectrum *sp)
{
    const cf_out *c = arg;
    const cf_plan *p = &c->plan;
    const cf_info *in = &c->info;
    static const char *modes[] = {"interval", "target", "smallest", "largest"};
    PL_CALL(pl_spectrum_attr_string(sp, "chebfd_mode", modes[c->opt->mode]));
    PL_CALL(pl_spectrum_attr_double(sp, "window_lower", p->a));
    PL_CALL(pl_spectrum_attr_double(sp, "window_upper", p->b));
    if (c->opt->mode == CF_TARGET) PL_CALL(pl_spectrum_attr_double(sp, "target", c->opt->target));
    PL_CALL(pl_spectrum_attr_double(sp, "spectrum_lower_bound", p->emin));
    PL_CALL(pl_spectrum_attr_double(sp, "spectrum_upper_bound", p->emax));
    PL_CALL(pl_spectrum_attr_double(sp, "estimated_count", p->est));
    PL_CALL(pl_spectrum_attr_double(sp, "estimated_count_error", p->est_err));
    PL_CALL(pl_spectrum_attr_int(sp, "found_count", in->found));
    PL_CALL(pl_spectrum_attr_int(sp, "filter_degree", p->degree));
    PL_CALL(pl_spectrum_attr_int(sp, "filter_degree_auto", p->degree_auto));
    PL_CALL(pl_spectrum_attr_int(sp, "search_size", p->nb));
    PL_CALL(pl_spectrum_attr_int(sp, "block_columns", p->R));
    PL_CALL(pl_spectrum_attr_int(sp, "chebfd_iterations", in->iterations));
    PL_CALL(pl_spectrum_attr_int(sp, "spmmv_count", in->spmmv));
    PL_CALL(pl_spectrum_attr_int(sp, "kpm_products", p->kpm_products));
    PL_CALL(pl_spectrum_attr_int(sp, "kpm_moments", p->kpm_moments));
    PL_CALL(pl_spectrum_attr_int(sp, "kpm_vectors", p->kpm_vectors));
    PL_CALL(pl_spectrum_attr_double(sp, "chebfd_orthogonality", in->orth));
    PL_CALL(pl_spectrum_attr_int(sp, "chebfd_svqb_fallbacks", in->svqb));
    PL_CALL(pl_spectrum_attr_string(sp, "chebfd_stop", in->why[0] ? in->why : "converged"));
    return PL_OK;
}

/* A history of one row (the result), so that the file has the schema of
 * `solve`. */
static int one_history_row(lz_result *res)
{
    const size_t m = res->nev > 0 ? (size_t)res->nev : 1;
    res->nhist = 1;
    res->hist_nev = res->nev;
    res->hist_iterations = malloc(sizeof *res->hist_iterations);
    res->hist_ritz = calloc(m, sizeof *res->hist_ritz);
    res->hist_resid = calloc(m, sizeof *res->hist_resid);
    PL_CHECK(res->hist_iterations && res->hist_ritz && res->hist_resid, PL_ERR_MEM, "out of host memory");
    res->hist_iterations[0] = res->iterations;
    for (int i = 0; i < res->nev; i++) res->hist_ritz[i] = res->eigenvalues[i], res->hist_resid[i] = res->residuals[i];
    return PL_OK;
}

static void report(app_ctx *ctx, const lz_result *res, const cf_out *c, const solve_facts *f, const char *path)
{
    if (ctx->rank != 0) return;
    for (int i = 0; i < res->nev; i++)
        printf("eigenvalue[%d]: %.17g  residual: %.3e\n", i, res->eigenvalues[i], res->residuals[i]);
    fflush(stdout);
    const cf_plan *p = &c->plan;
    pl_info("solve: chebfd, %s after %d iteration(s): %d eigenvalue(s) in [%.9g, %.9g] (KPM estimate %.1f +- %.1f), "
            "%d returned, filter degree %d%s, search block %d, %lld SpMMVs (+ %lld for the bounds and the estimate), "
            "orthogonality %.1e, %.2f s",
            lz_reason_name(res->reason), c->info.iterations, c->info.found, p->a, p->b, p->est, p->est_err, res->nev,
            p->degree, p->degree_auto ? " (auto)" : "", p->nb, (long long)c->info.spmmv, (long long)p->kpm_products,
            c->info.orth, f->solve_seconds);
    pl_info("solve: wrote %s", path);
    if (res->reason != LZ_CONVERGED) pl_warn("chebfd did not converge: %s; results written anyway", c->info.why);
}

int solve_chebfd(app_ctx *ctx, pl_op *op, solve_facts *f, int replace)
{
    const pl_config *cfg = &ctx->cfg;
    cf_options o;
    cf_out c;
    memset(&c, 0, sizeof c);
    lz_result res;
    memset(&res, 0, sizeof res);
    cf_options_from(cfg, cfg->output.eigenvectors, ctx->quiet, &o);
    c.opt = &o;
    pl_op_reset_counters(op);
    const double t0 = pl_wtime();
    int rc = app_param_error(cfg, "solver", NULL, cf_plan_make(op, &o, &c.plan));
    if (rc == PL_ERR_INPUT) app_error_alike(ctx, rc);
    PL_CALL(rc);
    if (ctx->rank == 0 && !ctx->quiet)
        pl_info("chebfd: bounds [%.9g, %.9g], window [%.9g, %.9g], KPM estimate %.1f +- %.1f eigenvalues (%d moments, "
                "%s), filter degree %d%s, search block %d in block products of %d, %.2f s",
                c.plan.emin, c.plan.emax, c.plan.a, c.plan.b, c.plan.est, c.plan.est_err, c.plan.kpm_moments,
                c.plan.kpm_vectors ? "random vectors" : "all unit vectors", c.plan.degree,
                c.plan.degree_auto ? " (auto)" : "", c.plan.nb, c.plan.R, pl_wtime() - t0);
    PL_CALL(app_mem_check_search(ctx, pl_op_backend(op), cf_plan_bytes(op, &c.plan), c.plan.nb));
    PL_CALL_GOTO(cf_solve(op, &o, &c.plan, &res, &c.info), out, rc);
    f->solve_seconds = app_max_over_ranks(ctx, pl_wtime() - t0);
    f->device_used = app_max_over_ranks(ctx, c.info.device_used);
    pl_op_timings ot;
    pl_op_timings_get(op, &ot);
    f->spmv_count = res.iterations;
    f->spmv_run = ot.n_apply;
    f->spmv_seconds = app_max_over_ranks(ctx, ot.t_total);
    f->spmv_gflops = f->spmv_seconds > 0 ? 2.0 * (double)f->mi.nnz * (double)ot.n_apply / f->spmv_seconds * 1e-9 : 0.0;
    PL_CALL_GOTO(one_history_row(&res), out, rc);
    PL_CALL_GOTO(solve_write(ctx, cfg->output.file, replace, op, &res, f, write_cf_attributes, &c), out, rc);
    report(ctx, &res, &c, f, cfg->output.file);
out:
    lz_result_destroy(&res);
    return rc;
}
