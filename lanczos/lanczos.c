/* lanczos.c — thick-restart Lanczos (TRLan) with full reorthogonalisation.
 *
 * Method: Wu & Simon, "Thick-restart Lanczos method for large symmetric
 * eigenvalue problems", SIAM J. Matrix Anal. Appl. 22 (2000) 602-616.
 *
 * Algorithm (one cycle; basis V = [v_0 .. v_m], one backend allocation of
 * ncv + 1 columns of n_local doubles, column j at V + j * ld):
 *   for j = k .. m-1:
 *       w = A v_j                                   (into column j+1)
 *       full step (j = k, reorth = full, or forced below):
 *         h = V_{0:j}^T w, w -= V h, twice          (classical Gram-Schmidt,
 *                                                    two passes)
 *         T[j][j] = h_j; at j = k also T[i][k] = h_i for i < k (the arrow of
 *         the thick restart: h_i = s_i = beta_m y_{m,i} in exact arithmetic)
 *       local step (reorth = partial, j > k): h = [v_{j-1} v_j]^T w and
 *         ||w||^2 in one reduction, w -= [v_{j-1} v_j] h (the three-term
 *         recurrence with computed coefficients); T[j][j] = h_1.  Simon's
 *         omega recurrence (lz_pro.c) then estimates |v_{j+1}^T v_i| for
 *         every i from T alone; if the largest passes sqrt(eps), w gets a
 *         full two-pass Gram-Schmidt now and the next step is full too
 *         (Simon 1984; PROPACK does the same), so the basis stays
 *         semi-orthogonal, which keeps the Ritz values accurate to working
 *         precision.  The SpMV of a local step is only queued: one host
 *         synchronisation per step (the reduction).
 *       beta_j = ||w||; v_{j+1} = w / beta_j, T[j][j+1] = beta_j
 *   The projected matrix T (arrow-head + tridiagonal) is solved densely on
 *   the host (LAPACKE_dsyev, rank 0, broadcast so that every rank takes the
 *   same decisions).  Residual estimate of Ritz pair i: |beta_m Y[m-1][i]|;
 *   converged when <= tol * max(|theta_i|, normest), normest = max(operator
 *   norm estimate, max |theta|).  nconv = the converged prefix of the nev
 *   wanted pairs.  Restart: keep k Ritz vectors V Y[:, 0:k] (updated in
 *   place, row block by row block through a small workspace), T = diag(theta),
 *   v_k = v_m.
 * Breakdown guard (relative): after the second Gram-Schmidt pass, w is
 *   numerically in span(V) when ||w|| <= ||w_after_pass_1|| / sqrt(2) (the
 *   second pass still cancelled: Kahan/Parlett "twice is enough") or
 *   ||w|| <= 64 eps ||A v_j||.  Then beta_j = 0 (an invariant subspace) and
 *   the expansion continues with a fresh random vector orthogonalised against
 *   the basis; if even that vector vanishes the basis spans the whole space.
 * Degenerate eigenvalues: a Krylov space of one start vector holds one
 *   vector per distinct eigenvalue, so copies of a multiple eigenvalue only
 *   grow from random injections and rounding, and a converged set can miss
 *   one (SciPy's eigsh does on HMEp).  With `verify`, when all nev converge
 *   the nev Ritz vectors are locked (their residuals, below the tolerance,
 *   are dropped) and thick-restart Lanczos runs on their complement from a
 *   fresh random vector, for the most wanted eigenvalue there.  If its Ritz
 *   value passes the least wanted locked one (by more than tol * scale), a
 *   wanted eigenvalue was missed: unlock and iterate on with everything.  If
 *   it converges (to tol) first, the locked set is accepted.  This costs
 *   about one more solve for a single eigenvalue.  (Tried and rejected:
 *   stopping at sqrt(tol), or starting from the next Ritz vector plus noise:
 *   both accept HMEp's set with one copy of the doubly degenerate third
 *   level missing.)
 * Final residuals ||A x_i - theta_i x_i|| are recomputed explicitly (one
 *   operator application each).
 *
 * Start vector: element of original global row g = hash(seed, g) in (-1, 1)
 * (splitmix64), generated on the host and uploaded, so the run does not
 * depend on the number of ranks or the permutation.
 *
 * Written against spmv.h only: no backend headers, no conditional code. */
#include "lanczos.h"

#include <float.h>
#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "krylov_impl.h"
#include "pl_error.h"



const char *lz_reason_name(int reason)
{
    switch (reason) {
    case LZ_ITERATING: return "iterating";
    case LZ_CONVERGED: return "converged";
    case LZ_MAX_RESTARTS: return "max_restarts";
    case LZ_BREAKDOWN: return "breakdown";
    case LZ_CHECKPOINTED: return "checkpointed";
    case LZ_INACCURATE: return "inaccurate";
    case LZ_STAGNATED: return "stagnated";
    default: return "unknown";
    }
}

void lz_options_defaults(lz_options *o)
{
    memset(o, 0, sizeof *o);
    o->nev = 4;
    o->which = PL_WHICH_SMALLEST;
    o->tol = 1e-10;
    o->ncv = 0;
    o->max_restarts = LZ_RESTARTS_AUTO;
    o->seed = 1;
    o->want_vectors = 0;
    o->verify = 1;
    o->reorth = LZ_REORTH_PARTIAL;
}



/* Eigen-decomposition of the block T[off:mm, off:mm] (size s = mm - off) on
 * rank 0, broadcast so that every rank decides alike; fills theta (s), Y
 * (s x s, ld s) and ord (wanted order into theta). */
static int projected(kr_ws *w, int off, int mm, int which)
{
    double t0 = pl_wtime();
    int s = mm - off;
    size_t s2 = (size_t)s * (size_t)s;
    if (w->rank == 0) {
        for (int c = 0; c < s; c++)
            for (int r = 0; r < s; r++) w->Y[(size_t)c * s + r] = w->T[(size_t)(off + c) * w->m + off + r];
        lapack_int info = LAPACKE_dsyev(LAPACK_COL_MAJOR, 'V', 'U', s, w->Y, s, w->theta);
        w->bcast[s2 + s] = (double)info;
        memcpy(w->bcast, w->Y, s2 * sizeof(double));
        memcpy(w->bcast + s2, w->theta, (size_t)s * sizeof(double));
    }
    KR_MPI(MPI_Bcast(w->bcast, (int)(s2 + s + 1), MPI_DOUBLE, 0, w->comm));
    int info = (int)w->bcast[s2 + s];
    PL_CHECK(info == 0, PL_ERR_LAPACK, "LAPACKE_dsyev on the %d x %d projected matrix failed (info %d)", s, s, info);
    if (w->rank != 0) {
        memcpy(w->Y, w->bcast, s2 * sizeof(double));
        memcpy(w->theta, w->bcast + s2, (size_t)s * sizeof(double));
    }
    /* dsyev returns ascending eigenvalues; largest magnitude merges both ends */
    if (which == PL_WHICH_LARGEST_MAGNITUDE) {
        for (int i = 0, lo = 0, hi = s - 1; i < s; i++)
            w->ord[i] = fabs(w->theta[hi]) >= fabs(w->theta[lo]) ? hi-- : lo++;
    } else {
        for (int i = 0; i < s; i++) w->ord[i] = which == PL_WHICH_LARGEST ? s - 1 - i : i;
    }
    w->t.projected += pl_wtime() - t0;
    return PL_OK;
}

/* Ysel = the first kk wanted columns of Y (s x s). */
static void select_columns(kr_ws *w, int s, int kk)
{
    for (int c = 0; c < kk; c++)
        memcpy(w->Ysel + (size_t)c * s, w->Y + (size_t)w->ord[c] * s, (size_t)s * sizeof(double));
}

/* The locked columns in wanted order: idx[0:nlock] (insertion sort: nlock is
 * a few). */
static void locked_order(const double *th, int nlock, int which, int *idx)
{
    for (int i = 0; i < nlock; i++) {
        int j = i;
        idx[i] = i;
        while (j > 0) {
            double a = th[idx[j - 1]], b = th[idx[j]];
            int swap = which == PL_WHICH_SMALLEST ? b < a : which == PL_WHICH_LARGEST ? b > a : fabs(b) > fabs(a);
            if (!swap) break;
            int t = idx[j - 1];
            idx[j - 1] = idx[j];
            idx[j] = t;
            j--;
        }
    }
}

/* Reset T after a restart: locked (nlock) and kept Ritz values on the
 * diagonal, nothing else. */
static void reset_T(kr_ws *w, int nlock, const double *lock_theta, int kk)
{
    memset(w->T, 0, (size_t)w->m * w->m * sizeof(double));
    for (int i = 0; i < nlock; i++) w->T[(size_t)i * w->m + i] = lock_theta[i];
    for (int i = 0; i < kk; i++) w->T[(size_t)(nlock + i) * w->m + nlock + i] = w->theta[w->ord[i]];
}

/* The vector to expand from after a restart into column j: the residual
 * direction v_mm if it exists, else a fresh random one. */
static int restart_vector(kr_ws *w, int mm, int j, int vm_valid, int *ok)
{
    *ok = 1;
    if (vm_valid) {
        double t0 = pl_wtime();
        PL_CALL(w->be->copy(w->be, w->n, kr_col(w, mm), kr_col(w, j)));
        w->t.restart += pl_wtime() - t0;
        return PL_OK;
    }
    int ex;
    PL_CALL(kr_random_direction(w, j, 0, &ex));
    *ok = !ex;
    return PL_OK;
}

void lz_result_destroy(lz_result *res)
{
    if (!res) return;
    if (res->vectors && res->be) res->be->vec_free(res->be, res->vectors);
    free(res->eigenvalues);
    free(res->residuals);
    free(res->hist_iterations);
    free(res->hist_ritz);
    free(res->hist_resid);
    free(res->hist_ritz_imag);
    free(res->eigenvalues_imag);
    memset(res, 0, sizeof *res);
}


static int solve(kr_ws *w, const lz_options *opt, lz_result *res);

int lz_solve(pl_op *op, const lz_options *opt, lz_result *res)
{
    double t_start = pl_wtime();
    int err = PL_OK;
    memset(res, 0, sizeof *res);
    int64_t m = 0;
    PL_CALL(kr_check_options(op, opt, PL_WHICH_LARGEST_REAL, 1, &m));

    kr_ws w;
    PL_CALL(kr_ws_init(&w, op, (int)m, opt->seed));
    /* partial: a full step's second Gram-Schmidt pass only where the first
     * cancelled (DGKS, as SLEPc): the vectors it sees are already nearly
     * orthogonal to the basis (local step, selective projection) */
    w.refine_if_needed = opt->reorth == LZ_REORTH_PARTIAL;
    KR_HOST_ALLOC(res->eigenvalues, opt->nev, fail);
    KR_HOST_ALLOC(res->residuals, opt->nev, fail);

    PL_CALL_GOTO(solve(&w, opt, res), fail, err);
    if (opt->want_vectors) {
        res->vectors = w.V; /* the first nev columns hold the eigenvectors */
        res->ld = w.ld;
        res->be = w.be;
        w.V = NULL;
    }
    w.t.total = pl_wtime() - t_start;
    res->time = w.t;
    kr_ws_free(&w);
    return PL_OK;
fail:
    kr_ws_free(&w);
    lz_result_destroy(res);
    return err;
}

static int solve(kr_ws *w, const lz_options *opt, lz_result *res)
{
    const int nev = opt->nev, m = w->m;
    const double tol = opt->tol;
    /* smallest_real/largest_real are smallest/largest of a real spectrum */
    const int which = opt->which == PL_WHICH_SMALLEST_REAL  ? PL_WHICH_SMALLEST
                      : opt->which == PL_WHICH_LARGEST_REAL ? PL_WHICH_LARGEST
                                                            : opt->which;
    double t_begin = pl_wtime();
    pl_op_info info;
    pl_op_get_info(w->op, &info);
    res->nev = nev;
    res->hist_nev = nev;
    kr_restart_budget(w, opt, res); /* max_restarts = auto resolved; progress (krylov.c) */
    res->ncv = m;

    double *ritz = NULL, *est = NULL, *lock_theta = NULL, *lock_est = NULL, *ckbuf = NULL, *lsort = NULL;
    int *lord = NULL;
    int err = PL_OK, hcap = 0;
    kr_pro pro;
    memset(&pro, 0, sizeof pro);
    PL_CALL(kr_pro_init(&pro, m, w->N, opt->tol));
    const int reorth = opt->reorth;
    res->reorth = reorth;
    res->orth_loss = -1.0;
    int force_full = 0, nsel = 0;
    ritz = malloc((size_t)nev * sizeof *ritz);
    est = malloc((size_t)nev * sizeof *est);
    /* verification locks the nev converged pairs and, as they turn up, missed
     * copies beyond them: up to lcap columns, leaving room to search */
    const int lcap = nev + (m - nev - 4 > 0 ? (m - nev - 4 < nev ? m - nev - 4 : nev) : 0);
    lock_theta = malloc((size_t)lcap * sizeof *lock_theta);
    lock_est = malloc((size_t)lcap * sizeof *lock_est);
    lord = malloc((size_t)lcap * sizeof *lord);
    lsort = malloc((size_t)2 * lcap * sizeof *lsort);
    PL_CHECK_GOTO(ritz && est && lock_theta && lock_est && lord && lsort, PL_ERR_MEM, out, err, "out of host memory");

    int k = 0;         /* columns kept (locked + Ritz) at the start of the cycle */
    int nlock = 0;     /* verification phase: nev locked pairs in columns 0..nev-1 */
    int restarts = 0, reason = LZ_ITERATING, nconv = 0, mm = m, final_locked = 0, cycled = 0;
    double beta_m = 0.0, normest = info.norm_estimate;
    reset_T(w, 0, NULL, 0);
    /* checkpoint state: ints (krylov_impl.h; then reorth, full_reorths) and
     * dbl = normest, T (m x m), lock_theta (lcap), lock_est (lcap), the omega
     * row of the restart vector, the seed noise and the expected arrow of
     * the recurrence (pro.cur, seed, expect: m + 1 each; the next cycle reads
     * all three), the largest omega so far */
    int64_t ints[KR_ST_COMMON + 2];
    const int ni = KR_ST_COMMON + 2;
    const int nd = 1 + m * m + 2 * lcap + 3 * (m + 1) + 1;
    double *ck_om = NULL;
    ckbuf = malloc((size_t)nd * sizeof *ckbuf);
    PL_CHECK_GOTO(ckbuf, PL_ERR_MEM, out, err, "out of host memory");
    if (opt->resume) {
        kr_cycle cy;
        PL_CALL_GOTO(kr_resume(w, opt, 1, res, &hcap, &cy, ints, ni, ckbuf, nd), out, err);
        PL_CHECK_GOTO(ints[KR_ST_COMMON] == reorth, PL_ERR_INPUT, out, err,
                      "the checkpoint was written with another [solver] reorthogonalization");
        w->t.full_reorths = ints[KR_ST_COMMON + 1];
        restarts = cy.restarts;
        k = cy.k;
        nlock = cy.nlock;
        nconv = cy.nconv;
        normest = cy.normest;
        memcpy(w->T, ckbuf + 1, (size_t)m * m * sizeof(double));
        memcpy(lock_theta, ckbuf + 1 + m * m, (size_t)lcap * sizeof(double));
        memcpy(lock_est, ckbuf + 1 + m * m + lcap, (size_t)lcap * sizeof(double));
        ck_om = ckbuf + 1 + m * m + 2 * lcap;
        kr_pro_set_row(&pro, m + 1, ck_om); /* the whole row: cur[m + 1] is never read */
        memcpy(pro.seed, ck_om + (m + 1), (size_t)(m + 1) * sizeof(double));
        memcpy(pro.expect, ck_om + 2 * (m + 1), (size_t)(m + 1) * sizeof(double));
        res->orth_estimate = ck_om[3 * (m + 1)];
    } else {
        int exhausted = 0;
        PL_CALL_GOTO(kr_start_vector(w, opt, &exhausted), out, err);
        PL_CHECK_GOTO(!exhausted, PL_ERR_INTERNAL, out, err, "the start vector is zero");
    }

    while (reason == LZ_ITERATING) {
        /* ---- end of a cycle (after its restart): checkpoint ---- */
        if (cycled && opt->checkpoint) {
            int stop = 0;
            kr_cycle cy = {restarts, k, nlock, nconv, normest};
            memcpy(ckbuf + 1, w->T, (size_t)m * m * sizeof(double));
            memcpy(ckbuf + 1 + m * m, lock_theta, (size_t)lcap * sizeof(double));
            memcpy(ckbuf + 1 + m * m + lcap, lock_est, (size_t)lcap * sizeof(double));
            ck_om = ckbuf + 1 + m * m + 2 * lcap;
            memcpy(ck_om, pro.cur, (size_t)(m + 1) * sizeof(double));
            memcpy(ck_om + (m + 1), pro.seed, (size_t)(m + 1) * sizeof(double));
            memcpy(ck_om + 2 * (m + 1), pro.expect, (size_t)(m + 1) * sizeof(double));
            ck_om[3 * (m + 1)] = res->orth_estimate;
            ints[KR_ST_COMMON] = reorth;
            ints[KR_ST_COMMON + 1] = w->t.full_reorths;
            PL_CALL_GOTO(kr_checkpoint(w, opt, 1, res, &cy, ints, ni, ckbuf, nd, &stop), out, err);
            if (stop) {
                reason = LZ_CHECKPOINTED;
                break;
            }
        }
        cycled = 1;
        /* ---- expansion: columns k .. m ---- */
        mm = m;
        int vm_valid = 1;
        for (int j = k; j < m; j++) {
            if (j > k) { /* a stop inside the cycle (lz_poll_fn) */
                int stop = 0;
                PL_CALL_GOTO(kr_poll(opt, m - j, &stop), out, err);
                if (stop) {
                    reason = LZ_CHECKPOINTED;
                    break;
                }
            }
            double nrm = 0.0, alpha = 0.0, growth = 1.0, ovl[2] = {0.0, 0.0};
            int in_span = 0, local = 0;
            double ts = pl_wtime();
            const int try_local = reorth != LZ_REORTH_FULL && j > k && !force_full;
            /* selective orthogonalisation: the leading kept columns that are
             * converged enough to attract the new vectors (lz_pro.c) */
            if (j == k + 1) nsel = reorth == LZ_REORTH_PARTIAL ? kr_pro_nselected(&pro, k, nlock, normest) : 0;
            force_full = 0;
            if (try_local) {
                PL_CALL_GOTO(kr_apply_queued(w, j, j + 1), out, err);
                if (nsel > 0) PL_CALL_GOTO(kr_project_out(w, nsel, j + 1), out, err);
                PL_CALL_GOTO(kr_orthogonalize_local(w, j, w->T[(size_t)j * m + (j - 1)], &alpha, &nrm, &growth, ovl,
                                                    &local), out, err);
            } else {
                PL_CALL_GOTO(kr_apply(w, j, j + 1), out, err);
            }
            if (local && reorth == LZ_REORTH_PARTIAL) {
                double beta_prev = w->T[(size_t)j * m + (j - 1)];
                double om = kr_pro_estimate(&pro, w->T, j, alpha, beta_prev, nrm, ovl, normest);
                if (nsel > 0) om = kr_pro_selected(&pro, nsel, j, alpha, beta_prev, nrm);
                if (om > pro.thresh) {
                    /* semi-orthogonality is about to be lost: orthogonalise
                     * v_{j+1} against the whole basis now and v_{j+2} next */
                    double n2;
                    PL_CALL_GOTO(kr_orthogonalize(w, j + 1, j + 1, w->cf, &n2, &in_span), out, err);
                    alpha += nrm * w->cf[j];
                    nrm *= n2;
                    kr_pro_full(&pro, j + 1);
                    w->t.full_reorths++;
                    force_full = 1;
                } else {
                    kr_pro_accept(&pro, j);
                    res->orth_estimate = fmax(res->orth_estimate, om);
                }
            } else if (!local) { /* a full step */
                PL_CALL_GOTO(kr_orthogonalize(w, j + 1, j + 1, w->cf, &nrm, &in_span), out, err); /* normalises */
                const double *coef = w->cf;
                alpha = coef[j];
                if (j == k) { /* arrow of the thick restart; locked columns stay decoupled */
                    for (int i = nlock; i < k; i++) w->T[(size_t)k * m + i] = w->T[(size_t)i * m + k] = coef[i];
                    kr_pro_seed(&pro, k, coef);
                }
                kr_pro_full(&pro, j + 1);
                w->t.full_reorths++;
            }
            w->t.steps++;
            w->t.steps_time += pl_wtime() - ts;
            w->T[(size_t)j * m + j] = alpha;
            double beta = nrm;
            if (in_span) {
                res->breakdowns++;
                beta = 0.0;
                if (j + 1 < m) {
                    int ex;
                    PL_CALL_GOTO(kr_random_direction(w, j + 1, 0, &ex), out, err);
                    kr_pro_full(&pro, j + 1);
                    force_full = 1;
                    if (ex) { /* span(V) is the whole space: T is exact */
                        mm = j + 1;
                        vm_valid = 0;
                        beta_m = 0.0;
                        break;
                    }
                } else {
                    /* no v_m to restart from; the dropped coupling nrm (tiny,
                     * not 0) still bounds the residuals: a tolerance below
                     * rounding must not count as met */
                    vm_valid = 0;
                    beta = nrm;
                }
            }
            if (j + 1 < m) w->T[(size_t)(j + 1) * m + j] = w->T[(size_t)j * m + (j + 1)] = beta;
            beta_m = beta;
        }
        if (reason == LZ_CHECKPOINTED) break; /* stopped inside the cycle */
        int whole_space = (int64_t)mm >= w->N;

        /* ---- verification phase: is a wanted eigenvalue outside the locked set? ---- */
        if (nlock > 0) {
            int s = mm - nlock;
            PL_CALL_GOTO(projected(w, nlock, mm, which), out, err);
            int c = w->ord[0];
            double thc = w->theta[c], estc = fabs(beta_m * w->Y[(size_t)c * s + (s - 1)]);
            for (int i = 0; i < s; i++) normest = fmax(normest, fabs(w->theta[i]));
            locked_order(lock_theta, nlock, which, lord);
            double *ls_theta = lsort, *ls_est = lsort + lcap; /* the nev most wanted locked */
            for (int i = 0; i < nev; i++) {
                ls_theta[i] = lock_theta[lord[i]];
                ls_est[i] = lock_est[lord[i]];
            }
            double scale = fmax(fabs(thc), normest), edge = ls_theta[nev - 1];
            int missed = which == PL_WHICH_SMALLEST  ? thc < edge - tol * scale
                         : which == PL_WHICH_LARGEST ? thc > edge + tol * scale
                                                     : fabs(thc) > fabs(edge) + tol * scale;
            double worst = 0.0;
            for (int i = 0; i < nev; i++) worst = fmax(worst, ls_est[i] / fmax(fabs(ls_theta[i]), normest));
            if (!missed || nlock < lcap) { /* (else the history row comes from the full problem below) */
                PL_CALL_GOTO(kr_push_history(res, &hcap, nev, w->napply, ls_theta, NULL, ls_est), out, err);
                lz_monitor_info mi = {.restart = restarts, .nconv = nev, .nev = nev, .iterations = w->napply,
                                      .ritz = ls_theta, .resid = ls_est, .worst_resid = worst,
                                      .elapsed = pl_wtime() - t_begin, .verifying = 1,
                                      .full_reorths = w->t.full_reorths, .orth_estimate = res->orth_estimate};
                PL_CALL_GOTO(kr_monitor(w, opt, res, &mi), out, err);
            }
            if (missed && nlock >= lcap) {
                /* a wanted eigenvalue (e.g. another copy of a degenerate one) was
                 * missed and there is no room to lock it: unlock, continue the
                 * normal iteration on the whole basis */
                nlock = 0;
                res->missed++;
            } else if (missed && estc <= tol * scale && s >= 3) {
                /* a missed wanted eigenvalue has converged in the complement: lock
                 * it beside the others and search on (the least wanted locked one
                 * stays locked too, so the search does not find it again) */
                int kk = 1 + (s - 1) / 2;
                if (kk > s - 1) kk = s - 1;
                select_columns(w, s, kk); /* column 0: the new one (ord[0] = c) */
                PL_CALL_GOTO(kr_update_basis(w, nlock, s, kk), out, err);
                int ok;
                if (vm_valid) kr_pro_restart(&pro, nlock, s, kk, w->Ysel, nlock + kk);
                else kr_pro_full(&pro, nlock + kk);
                for (int i = 0; i <= nlock; i++) pro.expect[i] = 0.0;
                for (int q = 1; q < kk; q++)
                    pro.expect[nlock + q] = vm_valid ? beta_m * w->Ysel[(size_t)q * s + (s - 1)] : 0.0;
                lock_theta[nlock] = thc;
                lock_est[nlock] = estc;
                nlock++;
                for (int q = 0; q + 1 < s; q++) w->ord[q] = w->ord[q + 1];
                reset_T(w, nlock, lock_theta, kk - 1);
                PL_CALL_GOTO(restart_vector(w, mm, nlock + kk - 1, vm_valid, &ok), out, err);
                PL_CHECK_GOTO(ok, PL_ERR_INTERNAL, out, err, "no restart vector in the verification phase");
                k = nlock + kk - 1;
                restarts++;
                res->missed++;
                continue;
            } else if (!missed && (estc <= fmax(tol, opt->verify_tol) * scale || whole_space ||
                                   restarts >= w->pg.budget)) {
                reason = LZ_CONVERGED;
                final_locked = 1;
                nconv = nev;
                break;
            } else {
                /* thick restart inside the complement of the locked vectors */
                int kk = 1 + (s - 1) / 2;
                if (kk > s - 1) kk = s - 1;
                select_columns(w, s, kk);
                PL_CALL_GOTO(kr_update_basis(w, nlock, s, kk), out, err);
                reset_T(w, nlock, lock_theta, kk);
                int ok;
                if (vm_valid) kr_pro_restart(&pro, nlock, s, kk, w->Ysel, nlock + kk);
                else kr_pro_full(&pro, nlock + kk);
                for (int i = 0; i < nlock; i++) pro.expect[i] = 0.0;
                for (int c = 0; c < kk; c++)
                    pro.expect[nlock + c] = vm_valid ? beta_m * w->Ysel[(size_t)c * s + (s - 1)] : 0.0;
                PL_CALL_GOTO(restart_vector(w, mm, nlock + kk, vm_valid, &ok), out, err);
                PL_CHECK_GOTO(ok, PL_ERR_INTERNAL, out, err, "no restart vector in the verification phase");
                k = nlock + kk;
                restarts++;
                continue;
            }
        }

        /* ---- projected problem, convergence ---- */
        PL_CALL_GOTO(projected(w, 0, mm, which), out, err);
        for (int i = 0; i < mm; i++) normest = fmax(normest, fabs(w->theta[i]));
        double worst = 0.0;
        int nc = 0, prefix = 1;
        for (int i = 0; i < nev; i++) {
            if (i >= mm) { /* cannot happen: mm > nev */
                ritz[i] = NAN;
                est[i] = INFINITY;
                prefix = 0;
                continue;
            }
            int c = w->ord[i];
            ritz[i] = w->theta[c];
            est[i] = fabs(beta_m * w->Y[(size_t)c * mm + (mm - 1)]);
            double scale = fmax(fabs(ritz[i]), normest);
            worst = fmax(worst, est[i] / scale);
            if (prefix && est[i] <= tol * scale) nc++;
            else prefix = 0;
        }
        nconv = nc;
        PL_CALL_GOTO(kr_push_history(res, &hcap, nev, w->napply, ritz, NULL, est), out, err);
        lz_monitor_info mi = {.restart = restarts, .nconv = nconv, .nev = nev, .iterations = w->napply, .ritz = ritz,
                              .resid = est, .worst_resid = worst, .elapsed = pl_wtime() - t_begin, .verifying = 0,
                              .full_reorths = w->t.full_reorths, .orth_estimate = res->orth_estimate};
        PL_CALL_GOTO(kr_monitor(w, opt, res, &mi), out, err);

        if (nconv >= nev) {
            if (!opt->verify || whole_space || restarts >= w->pg.budget || m - nev < 2) {
                reason = LZ_CONVERGED;
                break;
            }
            /* verification phase: lock the nev pairs (their residuals are below
             * the tolerance and dropped), and look for the most wanted
             * eigenvalue of A restricted to their complement, from a fresh
             * random vector (not from the next Ritz vector: its Ritz value
             * would converge first and hide a missed copy beyond it) */
            select_columns(w, mm, nev);
            PL_CALL_GOTO(kr_update_basis(w, 0, mm, nev), out, err);
            memcpy(lock_theta, ritz, (size_t)nev * sizeof(double));
            memcpy(lock_est, est, (size_t)nev * sizeof(double));
            reset_T(w, nev, lock_theta, 0);
            int ex;
            PL_CALL_GOTO(kr_random_direction(w, nev, 0, &ex), out, err);
            kr_pro_full(&pro, nev);
            for (int i = 0; i < nev; i++) pro.expect[i] = 0.0;
            PL_CHECK_GOTO(!ex, PL_ERR_INTERNAL, out, err, "verification vector vanished (nev = %d, N = %lld)", nev,
                          (long long)w->N);
            nlock = nev;
            k = nev;
            restarts++;
            res->verifications++;
            continue;
        }
        if (whole_space) { /* every Ritz value is exact; cannot happen with nconv < nev */
            reason = LZ_BREAKDOWN;
            break;
        }
        PL_CALL_GOTO(kr_give_up(w, res, restarts, &reason), out, err); /* budget or stagnation */
        if (reason != LZ_ITERATING) break;

        /* ---- thick restart ---- */
        int kk = nev + (mm - nev) / 2;
        if (kk < nev + 1) kk = nev + 1;
        if (kk > mm - 1) kk = mm - 1;
        select_columns(w, mm, kk);
        PL_CALL_GOTO(kr_update_basis(w, 0, mm, kk), out, err);
        reset_T(w, 0, NULL, kk);
        int ok;
        if (vm_valid) kr_pro_restart(&pro, 0, mm, kk, w->Ysel, kk);
        else kr_pro_full(&pro, kk);
        for (int c = 0; c < kk; c++) pro.expect[c] = vm_valid ? beta_m * w->Ysel[(size_t)c * mm + (mm - 1)] : 0.0;
        PL_CALL_GOTO(restart_vector(w, mm, kk, vm_valid, &ok), out, err);
        if (!ok) {
            reason = LZ_BREAKDOWN;
            break;
        }
        k = kk;
        restarts++;
    }

    if (reason == LZ_CHECKPOINTED) { /* not finished: no vectors, no residuals */
        res->normest = normest;
        res->nconv = nconv;
        res->restarts = restarts;
        res->iterations = w->napply;
        res->reason = reason;
        goto out;
    }
    /* ---- Ritz vectors and explicit residuals ---- */
    if (final_locked) {
        /* the nev most wanted locked columns, in wanted order, to V[:, 0:nev] */
        locked_order(lock_theta, nlock, which, lord);
        int ident = nlock == nev;
        for (int i = 0; i < nev; i++) ident = ident && lord[i] == i;
        if (!ident) {
            memset(w->Ysel, 0, (size_t)nlock * nev * sizeof(double));
            for (int i = 0; i < nev; i++) w->Ysel[(size_t)i * nlock + lord[i]] = 1.0;
            PL_CALL_GOTO(kr_update_basis(w, 0, nlock, nev), out, err);
        }
        for (int i = 0; i < nev; i++) res->eigenvalues[i] = lock_theta[lord[i]]; /* V[:, 0:nev] holds the vectors */
    } else {
        select_columns(w, mm, nev);
        PL_CALL_GOTO(kr_update_basis(w, 0, mm, nev), out, err);
        for (int i = 0; i < nev; i++) res->eigenvalues[i] = w->theta[w->ord[i]];
    }
    {
        double t0 = pl_wtime(), tsp = w->t.spmv;
        for (int i = 0; i < nev; i++) {
            PL_CALL_GOTO(kr_residual_real(w, i, res->eigenvalues[i], m, &res->residuals[i]), out, err);
        }
        w->t.residual += pl_wtime() - t0 - (w->t.spmv - tsp);
    }
    PL_CALL_GOTO(kr_orth_loss(w, nev, &res->orth_loss), out, err);
    res->normest = normest;
    res->nconv = nconv;
    res->restarts = restarts;
    res->iterations = w->napply;
    res->reason = reason;
out:
    free(ritz);
    free(est);
    free(lock_theta);
    free(lock_est);
    free(lord);
    free(lsort);
    free(ckbuf);
    kr_pro_free(&pro);
    return err;
}
