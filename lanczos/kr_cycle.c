/* kr_cycle.c — the thick-restart cycle shared by Lanczos (lanczos.c) and
 * Krylov-Schur (krylov_schur.c): one driver, kr_run, in named phases
 * (checkpoint, expand, verify, extract, converged, report, lock, restart,
 * finish; see krylov_impl.h), the relative convergence test, and the
 * checkpoint state both methods share.  The method supplies the hooks of a
 * kr_method; every decision that both make alike is made here, once.
 * Written against spmv.h only: no backend headers, no conditional code. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "krylov_impl.h"
#include "pl_error.h"

double kr_scale(double mag, double normest) { return fmax(mag, normest); }

double kr_conv_norm(const kr_solver *s)
{
    if (!s->opt->value_relative) return s->normest;
    /* each value against itself, down to the rounding floor of the operator's products (about eps
     * normest in a residual estimate): below 10 eps / tol of normest a test relative to |theta|
     * could not be met */
    return s->normest * fmin(1.0, 10.0 * DBL_EPSILON / s->opt->tol);
}

int kr_converged_relative(double est, double mag, double normest, double tol, double *rel)
{
    double scale = kr_scale(mag, normest);
    if (rel) *rel = est / scale;
    return est <= tol * scale;
}

int kr_report(kr_solver *s, const double *ritz, const double *ritz_im, const double *est, int nconv, double worst,
              int verifying)
{
    kr_ws *w = s->w;
    const int nev = s->opt->nev;
    PL_CALL(kr_push_history(s->res, &s->hcap, nev, w->napply, ritz, ritz_im, est));
    lz_monitor_info mi = {.restart = s->restarts, .nconv = nconv, .nev = nev, .iterations = w->napply,
                          .ritz = ritz, .resid = est, .worst_resid = worst, .elapsed = pl_wtime() - s->t_begin,
                          .verifying = verifying,
                          .full_reorths = s->mt->every_step_full ? w->t.steps : w->t.full_reorths,
                          .orth_estimate = s->res->orth_estimate};
    return kr_monitor(w, s->opt, s->res, &mi);
}

void kr_hand_over(kr_ws *w, const lz_options *opt, lz_result *res, double t_start)
{
    if (opt->want_vectors) {
        res->vectors = w->V; /* the first nev columns hold the eigenvectors */
        res->ld = w->ld;
        res->be = w->be;
        w->V = NULL;
    }
    w->t.total = pl_wtime() - t_start;
    res->time = w->t;
    const lz_timing *t = &w->t;
    pl_debug("krylov: %.3f s in all: steps %.3f s; outside them projected %.3f s, restart %.3f s, residuals %.3f s, "
             "start vectors and the rest %.3f s, polls, checkpoint hook, history and monitor %.3f s, unaccounted %.3f s",
             t->total, t->steps_time, t->projected, t->restart, t->residual, t->other, w->t_books,
             t->total - t->steps_time - t->projected - t->restart - t->residual - t->other - w->t_books);
}

/* ---- checkpoint and resume ------------------------------------------ */

/* The checkpoint phase: the method's part of the state (pack), the shared
 * part here, then opt->checkpoint decides; a stop ends the solve as
 * LZ_CHECKPOINTED. */
static int kr_save(kr_solver *s)
{
    const lz_options *opt = s->opt;
    const lz_result *res = s->res;
    kr_ws *w = s->w;
    if (!opt->checkpoint) return PL_OK;
    s->mt->pack(s);
    int64_t *ints = s->ints;
    ints[KR_ST_NAPPLY] = w->napply - w->napply_ahead; /* the resumed cycle does them again */
    ints[KR_ST_NRANDOM] = (int64_t)w->n_random;
    ints[KR_ST_BREAKDOWNS] = res->breakdowns;
    ints[KR_ST_VERIFICATIONS] = res->verifications;
    ints[KR_ST_MISSED] = res->missed;
    ints[KR_ST_INCONCLUSIVE] = res->verify_inconclusive;
    ints[KR_ST_RESTARTS] = s->restarts;
    ints[KR_ST_K] = s->k;
    ints[KR_ST_NLOCK] = s->nlock;
    ints[KR_ST_NCONV] = s->nconv;
    s->dbl[0] = s->normest;
    lz_state st;
    memset(&st, 0, sizeof st);
    st.method = s->mt->id;
    st.nev = opt->nev;
    st.ncv = w->m;
    st.which = opt->which;
    st.nvec = s->k + 1;
    st.nint = s->nint;
    memcpy(st.ints, ints, (size_t)s->nint * sizeof *ints);
    st.ndbl = s->ndbl;
    st.dbl = s->dbl;
    st.nhist = res->nhist;
    st.hist_nev = res->hist_nev;
    st.hist_iterations = res->hist_iterations;
    st.hist_ritz = res->hist_ritz;
    st.hist_resid = res->hist_resid;
    st.hist_ritz_imag = res->hist_ritz_imag;
    st.V = w->V;
    st.ld = w->ld;
    int stop = 0;
    double t0 = pl_wtime();
    int rc = opt->checkpoint(opt->checkpoint_arg, &st, &stop);
    w->t.other += pl_wtime() - t0;
    if (rc == PL_OK && stop) s->reason = LZ_CHECKPOINTED;
    return rc;
}

/* res's history from a resumed state (*hcap its capacity). */
static int kr_resume_history(const lz_state *st, lz_result *res, int *hcap)
{
    int nh = st->nhist, ne = st->hist_nev;
    size_t cells = (size_t)(nh ? nh : 1) * (size_t)ne;
    res->hist_iterations = malloc((size_t)(nh ? nh : 1) * sizeof *res->hist_iterations);
    res->hist_ritz = malloc(cells * sizeof(double));
    res->hist_resid = malloc(cells * sizeof(double));
    if (st->hist_ritz_imag) res->hist_ritz_imag = malloc(cells * sizeof(double));
    PL_CHECK(res->hist_iterations && res->hist_ritz && res->hist_resid && (!st->hist_ritz_imag || res->hist_ritz_imag),
             PL_ERR_MEM, "out of host memory (history)");
    if (nh > 0) {
        memcpy(res->hist_iterations, st->hist_iterations, (size_t)nh * sizeof *res->hist_iterations);
        memcpy(res->hist_ritz, st->hist_ritz, (size_t)nh * ne * sizeof(double));
        memcpy(res->hist_resid, st->hist_resid, (size_t)nh * ne * sizeof(double));
        if (st->hist_ritz_imag) memcpy(res->hist_ritz_imag, st->hist_ritz_imag, (size_t)nh * ne * sizeof(double));
    }
    res->nhist = nh;
    *hcap = nh ? nh : 1;
    return PL_OK;
}

/* Start from opt->resume: check that it belongs to this method and these
 * options (PL_ERR_INPUT otherwise), copy its basis into V, restore the
 * counters, the cycle's scalars and the history; the method restores the
 * rest (unpack). */
static int kr_resume(kr_solver *s)
{
    const lz_options *opt = s->opt;
    const lz_state *st = opt->resume;
    kr_ws *w = s->w;
    lz_result *res = s->res;
    const int method = s->mt->id, nint = s->nint, ndbl = s->ndbl;
    PL_CHECK(st->method == method && st->nev == opt->nev && st->ncv == w->m && st->which == opt->which, PL_ERR_INPUT,
             "the checkpoint was made by %s with nev %d, ncv %d, which %d; this solve is %s with nev %d, ncv %d, "
             "which %d",
             st->method == 1 ? "lanczos" : "krylov-schur", st->nev, st->ncv, st->which,
             method == 1 ? "lanczos" : "krylov-schur", opt->nev, w->m, opt->which);
    PL_CHECK(st->nint == nint && (st->ndbl == ndbl || (s->ndbl_old > 0 && st->ndbl == s->ndbl_old)) && st->nvec >= 1 && st->nvec <= w->m + 1 &&
                 st->ints[KR_ST_K] + 1 == st->nvec && st->hist_nev == opt->nev,
             PL_ERR_INPUT, "the checkpoint's state has %d ints, %d reals and %d vectors; expected %d, %d and <= %d",
             st->nint, st->ndbl, st->nvec, nint, ndbl, w->m + 1);
    for (int j = 0; j < st->nvec; j++)
        PL_CALL(w->be->copy(w->be, w->n, st->V + (size_t)j * st->ld, kr_col(w, j)));
    for (int j = 0; j < st->nvec && w->bop; j++) PL_CALL(kr_b_image(w, j)); /* BV of the resumed basis */
    memcpy(s->ints, st->ints, (size_t)nint * sizeof *s->ints);
    memcpy(s->dbl, st->dbl, (size_t)st->ndbl * sizeof *s->dbl);
    s->ndbl_in = st->ndbl;
    const int64_t *ints = s->ints;
    w->napply = ints[KR_ST_NAPPLY];
    w->n_random = (uint64_t)ints[KR_ST_NRANDOM];
    res->breakdowns = (int)ints[KR_ST_BREAKDOWNS];
    res->verifications = (int)ints[KR_ST_VERIFICATIONS];
    res->missed = (int)ints[KR_ST_MISSED];
    res->verify_inconclusive = (int)ints[KR_ST_INCONCLUSIVE];
    s->restarts = (int)ints[KR_ST_RESTARTS];
    s->k = (int)ints[KR_ST_K];
    s->nlock = (int)ints[KR_ST_NLOCK];
    s->nconv = (int)ints[KR_ST_NCONV];
    s->normest = s->dbl[0];
    PL_CALL(kr_resume_history(st, res, &s->hcap));
    return s->mt->unpack(s);
}

/* ---- the phases of a cycle ------------------------------------------- */

/* Column j + 1 vanished in span(V) (*beta = its norm on entry): beta = 0
 * and a fresh random direction in column j + 1; *exhausted when even that
 * vanishes (span(V) is the whole space: the projected matrix is exact, mm =
 * j + 1).  At the last column there is no v_m to restart from; the dropped
 * coupling (tiny, not 0) still bounds the residuals, so that a tolerance
 * below rounding does not count as met. */
static int kr_breakdown(kr_solver *s, int j, double *beta, int *exhausted)
{
    s->res->breakdowns++;
    if (j + 1 >= s->w->m) {
        s->vm_valid = 0;
        return PL_OK;
    }
    *beta = 0.0;
    PL_CALL(kr_random_direction(s->w, j + 1, 0, exhausted));
    if (s->mt->injected) s->mt->injected(s, j + 1);
    if (*exhausted) {
        s->mm = j + 1;
        s->vm_valid = 0;
    }
    return PL_OK;
}

/* The expand phase: columns k + 1 .. m (fewer when span(V) is the whole
 * space); a poll before every step but the first may stop the solve. */
static int kr_expand(kr_solver *s)
{
    kr_ws *w = s->w;
    const int m = w->m;
    s->mm = m;
    s->vm_valid = 1;
    for (int j = s->k; j < m; j++) {
        if (j > s->k) { /* a stop inside the cycle (lz_poll_fn) */
            int stop = 0;
            const double tb = pl_wtime();
            PL_CALL(kr_poll(s->opt, m - j, &stop));
            w->t_books += pl_wtime() - tb;
            if (stop) {
                s->reason = LZ_CHECKPOINTED;
                return PL_OK;
            }
        }
        double nrm = 0.0, ts = pl_wtime();
        int in_span = 0, exhausted = 0;
        const int64_t full0 = w->t.full_reorths;
        PL_CALL(s->mt->step(s, j, &nrm, &in_span));
        w->t.steps++;
        const double dt = pl_wtime() - ts;
        w->t.steps_time += dt;
        if (w->t.full_reorths > full0) w->t.full_steps_time += dt;
        double beta = nrm;
        if (in_span) PL_CALL(kr_breakdown(s, j, &beta, &exhausted));
        s->mt->couple(s, j, beta);
        if (exhausted) break;
    }
    s->whole_space = (int64_t)s->mm >= w->N;
    if (s->mt->expanded) s->mt->expanded(s);
    return PL_OK;
}

/* The extract, converged and report phases of the main phase: s->nconv =
 * the converged prefix of the nwant values. */
static int kr_converge(kr_solver *s)
{
    PL_CALL(s->mt->extract(s));
    const int nev = s->opt->nev;
    double worst = 0.0;
    int nc = 0, prefix = 1;
    for (int i = 0; i < s->nwant; i++) {
        double mag = s->ritz_im ? hypot(s->ritz[i], s->ritz_im[i]) : fabs(s->ritz[i]), rel;
        int ok = kr_converged_relative(s->est[i], mag, kr_conv_norm(s), s->opt->tol, &rel);
        worst = fmax(worst, rel);
        if (prefix && ok) nc++;
        else prefix = 0;
    }
    s->nconv = nc;
    const double tb = pl_wtime();
    const int rc = kr_report(s, s->ritz, s->ritz_im, s->est, nc < nev ? nc : nev, worst, 0);
    s->w->t_books += pl_wtime() - tb;
    return rc;
}

/* Every wanted value converged: the end, or (verify) the lock phase. */
static int kr_lock_or_stop(kr_solver *s)
{
    if (!s->opt->verify || s->whole_space || s->restarts >= s->w->pg.budget || s->w->m - s->nwant < s->mt->lock_room) {
        s->reason = LZ_CONVERGED;
        return PL_OK;
    }
    PL_CALL(s->mt->lock(s));
    s->nlock = s->nwant;
    s->k = s->nwant;
    s->restarts++;
    s->res->verifications++;
    return PL_OK;
}

/* One cycle: checkpoint (after the previous cycle's restart), expand, then
 * the verification phase or the main phase's convergence test, and the
 * lock or restart that starts the next cycle. */
static int kr_cycle(kr_solver *s)
{
    const kr_method *mt = s->mt;
    double tb = pl_wtime();
    if (s->cycled) PL_CALL(kr_save(s));
    s->w->t_books += pl_wtime() - tb;
    if (s->reason != LZ_ITERATING) return PL_OK;
    s->cycled = 1;
    PL_CALL(kr_expand(s));
    if (s->reason != LZ_ITERATING) return PL_OK; /* stopped inside the cycle */
    if (s->nlock > 0) {
        int verdict = KR_UNLOCKED;
        PL_CALL(mt->verify(s, &verdict));
        if (verdict == KR_ACCEPTED) {
            s->reason = LZ_CONVERGED;
            s->final_locked = 1;
            s->nconv = s->nwant;
            return PL_OK;
        }
        if (verdict == KR_RESTARTED) {
            s->restarts++;
            return PL_OK;
        }
    }
    PL_CALL(kr_converge(s));
    if (s->nconv >= s->nwant) return kr_lock_or_stop(s);
    if (s->whole_space) { /* every Ritz value is exact; cannot happen with nconv < nwant */
        s->reason = LZ_BREAKDOWN;
        return PL_OK;
    }
    tb = pl_wtime();
    PL_CALL(kr_give_up(s->w, s->res, s->restarts, &s->reason)); /* budget or stagnation */
    s->w->t_books += pl_wtime() - tb;
    if (s->reason != LZ_ITERATING) return PL_OK;
    int ok = 0;
    PL_CALL(mt->restart(s, &ok));
    if (!ok) {
        s->reason = LZ_BREAKDOWN;
        return PL_OK;
    }
    s->restarts++;
    return PL_OK;
}

/* The shared set-up: the budget, the value and checkpoint buffers, then the
 * resumed state or the start vector. */
static int kr_begin(kr_solver *s)
{
    kr_ws *w = s->w;
    const lz_options *opt = s->opt;
    const int nev = opt->nev;
    pl_op_info info;
    pl_op_get_info(w->op, &info);
    s->t_begin = pl_wtime();
    s->res->ncv = w->m;
    s->res->hist_nev = nev;
    kr_restart_budget(w, opt, s->res); /* max_restarts = auto resolved; progress */
    s->ritz = calloc((size_t)nev + 1, sizeof *s->ritz);
    s->est = calloc((size_t)nev + 1, sizeof *s->est);
    if (s->mt->complex_values) s->ritz_im = calloc((size_t)nev + 1, sizeof *s->ritz_im);
    s->dbl = malloc((size_t)s->ndbl * sizeof *s->dbl);
    PL_CHECK(s->ritz && s->est && (s->ritz_im || !s->mt->complex_values) && s->dbl, PL_ERR_MEM, "out of host memory");
    s->reason = LZ_ITERATING;
    s->mm = w->m;
    s->nwant = nev;
    s->normest = info.norm_estimate;
    if (opt->resume) return kr_resume(s);
    int exhausted = 0;
    PL_CALL(kr_start_vector(w, opt, &exhausted));
    PL_CHECK(!exhausted, PL_ERR_INTERNAL, "the start vector is zero");
    return PL_OK;
}

int kr_run(kr_solver *s)
{
    int err = PL_OK;
    PL_CALL_GOTO(kr_begin(s), out, err);
    for (;;) {
        while (s->reason == LZ_ITERATING) PL_CALL_GOTO(kr_cycle(s), out, err);
        if (s->reason == LZ_CHECKPOINTED) break; /* not finished: no vectors, no residuals */
        int again = 0;
        PL_CALL_GOTO(s->mt->finish(s, &again), out, err);
        if (!again) break;
    }
    lz_result *res = s->res;
    res->normest = s->normest;
    res->nconv = s->nconv;
    res->restarts = s->restarts;
    res->iterations = s->w->napply;
    res->b_products = s->w->nbapply;
    res->reason = s->reason;
out:
    free(s->ritz);
    free(s->ritz_im);
    free(s->est);
    free(s->dbl);
    s->ritz = s->ritz_im = s->est = s->dbl = NULL;
    return err;
}
