/* cutoff.c — the phonon cut-off of `solve` (cutoff.h; docs/models.md
 * "Phonon cut-off").
 *
 * The generator keeps the phonon states whose total number (over the
 * basis' modes: the L sites, or the L - 1 non-uniform normal modes) is at
 * most M = [model] max_phonons.  Each M's space holds the one before, so the
 * lowest eigenvalue E0(M) cannot rise with M (variational).
 *
 * Check: the ground state's weight on the states with exactly M phonons
 * (the last entry of its phonon distribution, observables) says how much of
 * it presses against the cut-off; above [model] cutoff_warn the run warns
 * once and records it (M = 0: no warning, the weight is the whole state).
 *
 * Search (max_phonons = auto): the solve path of `solve` and of a sweep's
 * rebuilt point (solve_build, solve_make_op, solve_run) at M = start,
 * start + 1, ... with nev = 1 and nothing written, until |E0(M) - E0(M-1)|
 * < max_phonons_tol, M = max_phonons_limit, or the memory plan of the next
 * M refuses it; the backend is kept for the final solve, which cmd_solve.c
 * runs as usual at the last M. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cutoff.h"
#include "pl_error.h"
#include "pl_spectrum.h"
#include "solve_impl.h"

int app_cutoff_command(const app_ctx *ctx, const char *cmd)
{
    const pl_config *cfg = &ctx->cfg;
    if (cfg->model.type != PL_MODEL_HOLSTEIN_HUBBARD || !cfg->model.max_phonons_auto || !strcmp(cmd, "solve"))
        return PL_OK;
    char where[1200];
    return PL_ERROR(PL_ERR_INPUT, "%s: auto: only `solve` searches the cut-off; `%s` needs a number (the M that "
                    "`solve` chose is in its result file: /max_phonons_search)",
                    pl_config_where(cfg, "model", "max_phonons", where, sizeof where), cmd);
}

static int push(app_cutoff *c, int M, double e0, double rows)
{
    if (c->n == c->cap) {
        const int cap = c->cap ? 2 * c->cap : 16;
        int *m = realloc(c->M, (size_t)cap * sizeof *m);
        if (m) c->M = m;
        double *e = realloc(c->E0, (size_t)cap * sizeof *e);
        if (e) c->E0 = e;
        double *r = realloc(c->rows, (size_t)cap * sizeof *r);
        if (r) c->rows = r;
        PL_CHECK(m && e && r, PL_ERR_MEM, "out of host memory");
        c->cap = cap;
    }
    c->M[c->n] = M;
    c->E0[c->n] = e0;
    c->rows[c->n] = rows;
    c->n++;
    return PL_OK;
}

/* The lowest eigenvalue of ctx->cfg's model (nev = 1).  Not the first
 * trial: a model the build refuses for its size (the memory plan, 64-bit
 * indices; PL_ERR_INPUT alike on every rank) gives *fits = 0 and its line in
 * why, no error.  Collective. */
static int trial_solve(app_ctx *ctx, pl_backend **be, int first, int *fits, double *e0, double *rows, char *why,
                       size_t nwhy)
{
    pl_csr csr;
    memset(&csr, 0, sizeof csr);
    solve_facts f;
    memset(&f, 0, sizeof f);
    lz_result res;
    memset(&res, 0, sizeof res);
    pl_op *op = NULL;
    *fits = 1;
    ctx->free_ok = 1; /* the tables where a single solve would run them (app_free.c) */
    int rc = solve_build(ctx, &csr, be, &f);
    if (rc == PL_ERR_INPUT && !first) {
        snprintf(why, nwhy, "%s", pl_error_message());
        pl_error_clear();
        *fits = 0;
        rc = PL_OK;
        goto out;
    }
    PL_CALL_GOTO(rc, out, rc);
    PL_CALL_GOTO(solve_make_op(ctx, &csr, *be, &op, &f), out, rc);
    PL_CALL_GOTO(solve_run(ctx, op, &f, NULL, &res), out, rc);
    char where[1200];
    PL_CHECK_GOTO(res.nconv >= 1 && res.nev >= 1, PL_ERR_INPUT, out, rc,
                  "%s = auto: the ground state at M = %d did not converge (%s after %d restarts); raise [solver] "
                  "max_restarts or tolerance",
                  pl_config_where(&ctx->cfg, "model", "max_phonons", where, sizeof where), ctx->cfg.model.max_phonons,
                  lz_reason_name(res.reason), res.restarts);
    *e0 = res.eigenvalues[0];
    *rows = (double)f.mi.rows;
out:
    lz_result_destroy(&res);
    pl_op_destroy(&op);
    pl_csr_destroy(&csr);
    app_free_release(ctx);
    return rc;
}

/* The search's loop on ctx->cfg (the trial configuration). */
static int search_loop(app_ctx *ctx, pl_backend **be, app_cutoff *c, int start, int limit, double tol)
{
    for (int M = start;; M++) {
        ctx->cfg.model.max_phonons = M;
        int fits = 1;
        double e0 = NAN, rows = 0.0, t0 = pl_wtime();
        char why[512] = "";
        PL_CALL(trial_solve(ctx, be, c->n == 0, &fits, &e0, &rows, why, sizeof why));
        if (!fits) {
            snprintf(c->stopped, sizeof c->stopped, "M = %d does not fit: %s", M, why);
            return PL_OK;
        }
        PL_CALL(push(c, M, e0, rows));
        const double d = c->n > 1 ? e0 - c->E0[c->n - 2] : NAN;
        char ch[64] = "";
        if (c->n > 1) snprintf(ch, sizeof ch, ", change %.3g", d);
        pl_info("max_phonons = auto: M = %d, N = %.0f, E0 = %.15g%s (%.2f s)", M, rows, e0, ch, pl_wtime() - t0);
        if (c->n > 1 && fabs(d) < tol) {
            c->converged = 1;
            snprintf(c->stopped, sizeof c->stopped, "tolerance");
            return PL_OK;
        }
        if (M >= limit) {
            snprintf(c->stopped, sizeof c->stopped, "limit");
            return PL_OK;
        }
    }
}

/* The summary line, and the warning when the tolerance was not met. */
static void search_report(const app_cutoff *c, double tol, int limit)
{
    char seq[400] = "";
    size_t k = 0;
    for (int i = 0; i < c->n && k + 16 < sizeof seq; i++)
        k += (size_t)snprintf(seq + k, sizeof seq - k, "%s%d", i ? ", " : "", c->M[i]);
    const int last = c->n - 1, M = c->M[last];
    const double d = c->n > 1 ? c->E0[last] - c->E0[last - 1] : NAN;
    pl_info("max_phonons = auto: M = %d (E0 = %.15g; M = %s); solving it", M, c->E0[last], seq);
    if (c->converged) return;
    char how[700];
    if (!strcmp(c->stopped, "limit")) snprintf(how, sizeof how, "max_phonons_limit = %d reached", limit);
    else snprintf(how, sizeof how, "%s", c->stopped);
    if (c->n > 1)
        pl_warn("[model] max_phonons = auto: not converged (%s): E0 changed by %.3g from M = %d to %d, not below "
                "max_phonons_tol = %g; the result is for M = %d",
                how, d, c->M[last - 1], M, tol, M);
    else
        pl_warn("[model] max_phonons = auto: not converged (%s): only M = %d was solved; the result is for M = %d", how,
                M, M);
}

int app_cutoff_search(app_ctx *ctx, pl_backend **be, app_cutoff *c)
{
    memset(c, 0, sizeof *c);
    const pl_model_cfg *m = &ctx->cfg.model;
    if (m->type != PL_MODEL_HOLSTEIN_HUBBARD || !m->max_phonons_auto) return PL_OK;
    const int start = m->max_phonons_start, limit = m->max_phonons_limit;
    const double tol = m->max_phonons_tol;
    c->searched = 1;
    c->start = start;
    c->limit = limit;
    c->tol = tol;
    app_signal_exit_phase("the search of [model] max_phonons = auto",
                          "nothing to save (the search's solves write nothing); rerun to start again");
    pl_config saved = ctx->cfg, trial;
    PL_CALL(pl_config_copy(&trial, &saved));
    trial.solver.nev = 1;
    trial.output.eigenvectors = 0;
    const int ec = ctx->error_collective;
    ctx->cfg = trial;
    int rc = search_loop(ctx, be, c, start, limit, tol);
    ctx->cfg = saved;
    ctx->error_collective = ec;
    pl_config_destroy(&trial);
    PL_CALL(rc);
    ctx->cfg.model.max_phonons = c->M[c->n - 1];
    search_report(c, tol, limit);
    return PL_OK;
}

void app_cutoff_check(const app_ctx *ctx, const hh_obs *o, app_cutoff *c)
{
    /* the ground state: which = smallest returns it first (other ends of the
     * spectrum have none to check) */
    if (!o->buf || o->nvec < 1 || !o->phonon_distribution || ctx->cfg.solver.which != PL_WHICH_SMALLEST) return;
    const int M = o->M;
    c->checked = 1;
    c->max_phonons = M;
    c->threshold = ctx->cfg.model.cutoff_warn;
    c->vector = 0;
    c->weight = o->phonon_distribution[(size_t)c->vector * (size_t)(M + 1) + (size_t)M];
    c->exceeded = M > 0 && c->weight > c->threshold;
    if (c->exceeded)
        pl_warn("[model] max_phonons = %d may be too small: the ground state (eigenvector %d) has weight %.3g on the "
                "states with M phonons, above cutoff_warn = %g (docs/models.md \"Phonon cut-off\"); raise max_phonons, "
                "or set max_phonons = auto",
                M, c->vector, c->weight, c->threshold);
}

int app_cutoff_write(const app_cutoff *c, pl_spectrum *sp)
{
    if (c->checked) {
        PL_CALL(pl_spectrum_attr_double(sp, "cutoff_weight", c->weight));
        PL_CALL(pl_spectrum_attr_int(sp, "cutoff_weight_eigenpair", c->vector));
        PL_CALL(pl_spectrum_attr_double(sp, "cutoff_warn", c->threshold));
        PL_CALL(pl_spectrum_attr_int(sp, "cutoff_exceeded", c->exceeded));
    }
    if (!c->searched || c->n < 1) return PL_OK;
    const char *g = "max_phonons_search";
    const int64_t d[1] = {c->n};
    double *mv = malloc((size_t)c->n * sizeof *mv);
    PL_CHECK(mv, PL_ERR_MEM, "out of host memory");
    for (int i = 0; i < c->n; i++) mv[i] = (double)c->M[i];
    int rc = pl_spectrum_write_array(sp, g, "max_phonons", 1, d, mv);
    free(mv);
    PL_CALL(rc);
    PL_CALL(pl_spectrum_write_array(sp, g, "energy", 1, d, c->E0));
    PL_CALL(pl_spectrum_write_array(sp, g, "rows", 1, d, c->rows));
    PL_CALL(pl_spectrum_group_attr_double(sp, g, "converged", (double)c->converged));
    PL_CALL(pl_spectrum_group_attr_double(sp, g, "tolerance", c->tol));
    PL_CALL(pl_spectrum_group_attr_double(sp, g, "start", (double)c->start));
    PL_CALL(pl_spectrum_group_attr_double(sp, g, "limit", (double)c->limit));
    PL_CALL(pl_spectrum_group_attr_string(sp, g, "stopped", c->stopped));
    return PL_OK;
}

void app_cutoff_free(app_cutoff *c)
{
    free(c->M);
    free(c->E0);
    free(c->rows);
    memset(c, 0, sizeof *c);
}
