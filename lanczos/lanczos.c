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
 *         the thick restart: h_i = s_i = beta_m y_{m,i} in exact arithmetic).
 *         With partial reorthogonalisation the first pass at j = k
 *         subtracts those expected s_i and the measured alpha, in the same
 *         sweep over V as the measuring second pass (kr_orthogonalize_known),
 *         whose measured overlaps below a hundredth of the omega threshold
 *         stay in w as the recurrence's starting row (LZ_KEEP_FIRST): then
 *         the correction pass reads no column at all.
 *       local step (reorth = partial, j > k): h = [v_{j-1} v_j]^T w and
 *         ||w||^2 in one reduction, w -= [v_{j-1} v_j] h (the three-term
 *         recurrence with computed coefficients); T[j][j] = h_1.  The
 *         selected kept columns (selective orthogonalisation, lz_pro.c)
 *         join that reduction and that update where the backend fuses them
 *         (sel_gram, sel_update).  Where the operator fuses the step into
 *         its product (one rank, matrix-free: kr_local.c kr_local_fused),
 *         the product itself returns A v_j - beta v_{j-1} with the sums,
 *         and the update measures the selected columns' overlaps with
 *         v_{j+1}.  Simon's
 *         omega recurrence (lz_pro.c) then estimates |v_{j+1}^T v_i| for
 *         every i from T alone; if the largest passes the threshold
 *         (min(sqrt(eps), 100 tol), lz_pro.c), the overlaps of v_j and w
 *         with the basis are measured (one pass for both); where all are
 *         below the selective keep level (LZ_KEEP_SEL) they stay and the
 *         recurrence restarts from them, else w gets a
 *         full Gram-Schmidt now and the next vector too, after its own
 *         local step, so that both full passes are single ones by the DGKS
 *         test (Simon 1984; PROPACK does the same), so the basis stays
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
 *   wanted eigenvalue was missed: it is converged (to tol) and locked beside
 *   the others, or with no room left everything is unlocked and the
 *   iteration goes on.  Where its level lies beyond the new edge, a further
 *   copy there would be wanted and the old start has no component along
 *   it: a new search starts from another fresh random vector
 *   (lz_lock_missed).  If instead the search's residual interval lies
 *   clear of the locked set and its certificate (lz_cert.c) shows that a
 *   wanted eigenvector it did not find would have needed a start component
 *   of probability verify_prob (1e-3) or less, the set is accepted: the
 *   search only has to show that nothing hides beyond the edge, not to
 *   resolve the complement's spectrum to tol.  Where the certificate is
 *   not tracked (after a missed value on the new edge was locked, a
 *   breakdown, an earlier version's checkpoint, a B-inner product) the
 *   search's value is accepted once it has converged to the verify
 *   tolerance (default sqrt(tol)) clear of the set, at once where it
 *   already has (lz_accepts).
 *   Measured: HMEp's missed copy passes the edge 10 products into the search,
 *   at a relative residual of 2e-3, long before either tolerance, and takes
 *   120 more to converge to tol; on hh_184800 (nothing missed) the search
 *   takes 80 products with the certificate (2026-11-29; 120 at sqrt(tol),
 *   220 at tol).  Until 2026-11-30 the search went on from the same start
 *   after every lock and missed the third copy of a triple level inside the
 *   wanted set (the 3-D Laplacian's, lanczos.multiplicity).
 *   (Tried and rejected: starting the search from the next Ritz vector plus
 *   noise, which accepts HMEp's set with one copy of the doubly degenerate
 *   third level missing.)
 * Final residuals ||A x_i - theta_i x_i|| are recomputed explicitly (one
 *   operator application each).  Where one fails the tolerance after a run
 *   with the relaxed omega threshold, the solve starts again from the sum of
 *   the returned vectors with the strict one (lz_recheck; result rechecks).
 *
 * Start vector: element of original global row g = hash(seed, g) in (-1, 1)
 * (splitmix64), generated on the host and uploaded, so the run does not
 * depend on the number of ranks or the permutation.
 *
 * The cycle itself (checkpoint, expand, verify, extract, convergence test,
 * lock, restart, finish) is kr_run (kr_cycle.c), shared with Krylov-Schur;
 * this file holds the Lanczos hooks of its phases (lz_method) but the
 * expansion step, which is lz_step.c (the state they share: lz_impl.h).
 *
 * Written against spmv.h only: no backend headers, no conditional code. */
#include "lanczos.h"

#include <float.h>
#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "krylov_impl.h"
#include "lz_impl.h"
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
        PL_CALL(kr_copy_col(w, mm, j));
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


/* Keep kk Ritz vectors (the first kk wanted, w->ord) of the block [off, mm)
 * behind off locked columns: V, T (locked and kept values on the diagonal),
 * the omega rows and the expected arrow of the next cycle; column off + kk
 * becomes the restart vector, s->k = off + kk.  *ok = 0: there is none. */
static int lz_thick_restart(kr_solver *s, int off, int kk, int fuse_ok, int *ok)
{
    lz_ctx *c = s->ctx;
    kr_ws *w = s->w;
    const int sz = s->mm - off, vm = s->vm_valid;
    /* the next cycle's first product and measuring pass ride on the
     * update (lz_first_*, lz_step.c) where they can */
    const int fuse = fuse_ok && vm && lz_first_fits(s, off, sz, kk);
    if (fuse) PL_CALL(lz_first_product(s));
    select_columns(w, sz, kk);
    if (off > 0) lz_cert_restart(&c->cert, w->Ysel, off, sz, kk, s->mm, vm, c->cert.tmp); /* verify's search */
    if (!fuse) PL_CALL(kr_update_basis(w, off, sz, kk));
    reset_T(w, off, c->lock_theta, kk);
    if (vm) kr_pro_restart(&c->pro, off, sz, kk, w->Ysel, off + kk);
    else kr_pro_full(&c->pro, off + kk);
    for (int i = 0; i < off; i++) c->pro.expect[i] = 0.0;
    for (int q = 0; q < kk; q++) c->pro.expect[off + q] = vm ? c->beta_m * w->Ysel[(size_t)q * sz + (sz - 1)] : 0.0;
    s->k = off + kk;
    if (fuse) {
        *ok = 1;
        return lz_first_pass(s, off, sz, kk);
    }
    return restart_vector(w, s->mm, off + kk, vm, ok);
}

/* restart (main phase): keep about half of the unwanted values. */
static int lz_restart(kr_solver *s, int *ok)
{
    const int nev = s->opt->nev, mm = s->mm;
    int kk = nev + (mm - nev) / 2;
    if (kk < nev + 1) kk = nev + 1;
    if (kk > mm - 1) kk = mm - 1;
    return lz_thick_restart(s, 0, kk, 1, ok);
}

/* The kept columns of a restart inside the complement of sz columns. */
static int lz_keep_half(int sz)
{
    int kk = 1 + (sz - 1) / 2;
    return kk > sz - 1 ? sz - 1 : kk;
}

/* verify: the edge, the least wanted of the nev most wanted of the nlock
 * locked values (their wanted order in c->lord; c->lsort holds the nev
 * values, then their estimates). */
static double lz_edge(kr_solver *s, int nlock)
{
    lz_ctx *c = s->ctx;
    const int nev = s->opt->nev;
    locked_order(c->lock_theta, nlock, c->which, c->lord);
    double *ls_theta = c->lsort, *ls_est = c->lsort + c->lcap;
    for (int i = 0; i < nev; i++) {
        ls_theta[i] = c->lock_theta[c->lord[i]];
        ls_est[i] = c->lock_est[c->lord[i]];
    }
    return ls_theta[nev - 1];
}

/* verify: a search of the complement of the nl locked columns (values in
 * lock_theta) starts: T reset, a fresh random vector in column nl, a fresh
 * certificate at the edge (its probability is that of a Euclidean random
 * start, so not in a B-inner product), full reorthogonalisation for its
 * first step.  From lz_lock (the first search) and lz_lock_missed. */
static int lz_search_begin(kr_solver *s, int nl)
{
    lz_ctx *c = s->ctx;
    kr_ws *w = s->w;
    reset_T(w, nl, c->lock_theta, 0);
    int ex;
    PL_CALL(kr_random_direction(w, nl, 0, &ex));
    PL_CHECK(!ex, PL_ERR_INTERNAL, "verification vector vanished (%d locked, N = %lld)", nl, (long long)w->N);
    lz_cert_begin(&c->cert, c->which, lz_edge(s, nl), nl, w->m);
    if (w->bop) c->cert.on = 0;
    kr_pro_full(&c->pro, nl);
    for (int i = 0; i < nl; i++) c->pro.expect[i] = 0.0;
    return PL_OK;
}

/* A missed copy's Ritz vector, column j, made orthogonal to the locked
 * columns [0, j): the search's basis is only semi-orthogonal to them
 * (partial reorthogonalisation), and so is the vector (3-D Laplacian 12^3:
 * 2e-10 against the level's first copy, past the returned block's promise
 * of 1e-10, which then cost lz_return_project's nev products).  One pass;
 * its residual moves by the removed overlaps times the value gaps. */
static int lz_orth_locked(kr_ws *w, int j)
{
    double nrm;
    int in_span;
    PL_CALL(kr_orthogonalize(w, j, j, w->cf, &nrm, &in_span));
    PL_CHECK(!in_span, PL_ERR_INTERNAL, "a missed copy's Ritz vector lies in the span of the locked ones");
    return PL_OK;
}

/* verify, a missed wanted eigenvalue (value thc, estimate estc) converged
 * in the complement: lock it beside the others (the least wanted locked
 * one stays locked too, so no search finds it again) and search on from
 * the same start (the old search: its kept Ritz vectors; *fresh = 0) or
 * from a fresh random vector with a fresh certificate (*fresh = 1).
 * The old search's start has its component in the eigenspace of thc along
 * the vector just locked, so a further copy there (the third of a triple
 * level) is orthogonal to everything it builds.  Such a copy is wanted
 * when thc lies beyond the new edge (the least wanted of the nev most
 * wanted locked values) by more than the margin: then the search starts
 * again from a fresh random vector, which has a component along it (the
 * 3-D Laplacian's triple levels, lanczos.multiplicity).  When thc is the
 * new edge, a further copy is one beyond nev (as a copy of the least
 * wanted value is elsewhere) and the old search goes on without its
 * certificate (the complement's vectors vanish at thc, on the edge) until
 * its next value has converged to the verify tolerance clear of the set
 * (HMEp's doubly degenerate third level: accepted at the lock itself). */
static int lz_lock_missed(kr_solver *s, double thc, double estc, int *fresh)
{
    lz_ctx *c = s->ctx;
    kr_ws *w = s->w;
    const int nlock = s->nlock, sz = s->mm - nlock, nl = nlock + 1;
    c->lock_theta[nlock] = thc;
    c->lock_est[nlock] = estc;
    const double edge = lz_edge(s, nl), mg = s->opt->tol * kr_scale(fabs(thc), kr_conv_norm(s));
    *fresh = c->which == PL_WHICH_SMALLEST  ? thc < edge - mg
             : c->which == PL_WHICH_LARGEST ? thc > edge + mg
                                            : fabs(thc) > fabs(edge) + mg;
    s->res->missed++;
    if (!*fresh) {
        int ok;
        /* column nlock becomes a locked one, its arrow dropped below: not fused */
        PL_CALL(lz_thick_restart(s, nlock, lz_keep_half(sz), 0, &ok));
        PL_CHECK(ok, PL_ERR_INTERNAL, "no restart vector in the verification phase");
        PL_CALL(lz_orth_locked(w, nlock));
        c->pro.expect[nlock] = 0.0; /* locked: no arrow */
        s->nlock = nl;
        c->cert.on = 0;
        return PL_OK;
    }
    select_columns(w, sz, 1); /* thc is the most wanted value, w->ord[0] */
    PL_CALL(kr_update_basis(w, nlock, sz, 1));
    PL_CALL(lz_orth_locked(w, nlock));
    s->nlock = nl;
    s->k = nl;
    s->res->verifications++;
    return lz_search_begin(s, nl);
}

/* verify: the test of a Ritz value th (estimate est) of the search against
 * the edge.  *missed: it is more wanted than the edge by more than the
 * margin tol scale.  Returns 1 (accepted) when it is not missed and either
 * its interval [th - est, th + est], which holds an eigenvalue, lies beyond
 * the edge (no locked value is displaced by it) and the search has shown
 * enough: the certificate's level (lz_cert.c: a missed wanted eigenvector
 * would have needed a start component of probability <= verify_prob),
 * or, where the certificate is not tracked (after a missed value was
 * locked, a breakdown, an earlier version's checkpoint, verify_prob < 0),
 * th converged to the verify tolerance; or th has converged to tol without
 * a clear interval (a value equal to the edge: a copy of the least wanted
 * one beyond nev); or the search cannot go on. */
static int lz_accepts(kr_solver *s, double th, double est, double edge, int *missed)
{
    const lz_options *opt = s->opt;
    const int which = ((lz_ctx *)s->ctx)->which;
    const double tol = opt->tol, mg = tol * kr_scale(fabs(th), kr_conv_norm(s));
    *missed = which == PL_WHICH_SMALLEST  ? th < edge - mg
              : which == PL_WHICH_LARGEST ? th > edge + mg
                                          : fabs(th) > fabs(edge) + mg;
    const double vtol = fmax(tol, opt->verify_tol > 0.0 ? opt->verify_tol : sqrt(tol));
    const int clear = which == PL_WHICH_SMALLEST  ? th - est > edge + mg
                      : which == PL_WHICH_LARGEST ? th + est < edge - mg
                                                  : fabs(th) + est < fabs(edge) - mg;
    const int conv_v = kr_converged_relative(est, fabs(th), kr_conv_norm(s), vtol, NULL);
    const int conv_t = kr_converged_relative(est, fabs(th), kr_conv_norm(s), tol, NULL);
    /* what the search has shown: the certificate where it is tracked (at
     * every tolerance the same level), else the convergence to vtol */
    const lz_cert *ct = &((lz_ctx *)s->ctx)->cert;
    const double prob = opt->verify_prob > 0.0 ? opt->verify_prob : LZ_VERIFY_PROB;
    const int cert = opt->verify_prob >= 0.0 && ct->on;
    const int shown = cert ? lz_cert_bound(ct, (double)s->w->N) <= prob : conv_v;
    /* converged to tol: a copy of the edge value beyond nev (not clear), or
     * (no certificate) the old rule's stop; a clear value waits for the
     * certificate */
    return !*missed &&
           ((clear && shown) || (conv_t && !(clear && cert)) || s->whole_space || s->restarts >= s->w->pg.budget);
}

/* verify: is a wanted eigenvalue outside the locked set?  The most wanted
 * value of the complement against the least wanted of the nev most wanted
 * locked ones. */
static int lz_verify(kr_solver *s, int *verdict)
{
    lz_ctx *c = s->ctx;
    kr_ws *w = s->w;
    const int nev = s->opt->nev, nlock = s->nlock, sz = s->mm - nlock;
    PL_CALL(projected(w, nlock, s->mm, c->which));
    const int cc = w->ord[0];
    const double thc = w->theta[cc], estc = fabs(c->beta_m * w->Y[(size_t)cc * sz + (sz - 1)]);
    for (int i = 0; i < sz; i++) s->normest = fmax(s->normest, fabs(w->theta[i]));
    const double edge = lz_edge(s, nlock);
    /* the certificate: the cycle's columns, then S where every Ritz value
     * of the search lies short of the points (thc is the most wanted) */
    lz_cert *ct = &c->cert;
    lz_cert_extend(ct, w->T, w->m, nlock, s->k, s->mm, c->beta_m);
    lz_cert_note(ct, nlock, s->mm,
                 c->which == PL_WHICH_SMALLEST  ? thc > ct->mu[0]
                 : c->which == PL_WHICH_LARGEST ? thc < ct->mu[0]
                                                : fabs(thc) < ct->mu[0]);
    int missed;
    const int accepted = lz_accepts(s, thc, estc, edge, &missed);
    double worst = 0.0;
    for (int i = 0; i < nev; i++)
        worst = fmax(worst, c->lsort[c->lcap + i] / kr_scale(fabs(c->lsort[i]), kr_conv_norm(s)));
    if (!missed || nlock < c->lcap) /* (else the history row comes from the full problem) */
        PL_CALL(kr_report(s, c->lsort, NULL, c->lsort + c->lcap, nev, worst, 1));
    *verdict = KR_RESTARTED;
    if (missed && nlock >= c->lcap) {
        /* a wanted eigenvalue (e.g. another copy of a degenerate one) was
         * missed and there is no room to lock it: unlock, continue the
         * normal iteration on the whole basis */
        s->nlock = 0;
        s->res->missed++;
        ct->on = 0;
        *verdict = KR_UNLOCKED;
        return PL_OK;
    }
    if (missed && kr_converged_relative(estc, fabs(thc), kr_conv_norm(s), s->opt->tol, NULL) && sz >= 3) {
        /* the missed value converged: lock it.  Where the old search goes
         * on, its next Ritz value is the most wanted one of the new
         * complement in the same Krylov space (the locked Ritz vector is an
         * exact one of the projected matrix); where it passes the test
         * already, the set is accepted without another cycle */
        const int c2 = w->ord[1];
        const double th2 = w->theta[c2], est2 = fabs(c->beta_m * w->Y[(size_t)c2 * sz + (sz - 1)]);
        int fresh, missed2;
        PL_CALL(lz_lock_missed(s, thc, estc, &fresh));
        if (!fresh && lz_accepts(s, th2, est2, lz_edge(s, s->nlock), &missed2)) *verdict = KR_ACCEPTED;
        s->res->verify_bound = -1.0;
        return PL_OK;
    }
    s->res->verify_bound = ct->on ? lz_cert_bound(ct, (double)w->N) : -1.0;
    if (accepted) {
        *verdict = KR_ACCEPTED;
        return PL_OK;
    }
    int ok; /* thick restart inside the complement of the locked vectors */
    PL_CALL(lz_thick_restart(s, nlock, lz_keep_half(sz), 1, &ok));
    PL_CHECK(ok, PL_ERR_INTERNAL, "no restart vector in the verification phase");
    return PL_OK;
}

/* extract: the nev wanted Ritz values and their estimates |beta_m y_m,i|. */
static int lz_extract(kr_solver *s)
{
    lz_ctx *c = s->ctx;
    kr_ws *w = s->w;
    const int mm = s->mm;
    PL_CALL(projected(w, 0, mm, c->which));
    for (int i = 0; i < mm; i++) s->normest = fmax(s->normest, fabs(w->theta[i]));
    for (int i = 0; i < s->opt->nev; i++) {
        if (i >= mm) { /* cannot happen: mm > nev */
            s->ritz[i] = NAN;
            s->est[i] = INFINITY;
            continue;
        }
        int cc = w->ord[i];
        s->ritz[i] = w->theta[cc];
        s->est[i] = fabs(c->beta_m * w->Y[(size_t)cc * mm + (mm - 1)]);
    }
    return PL_OK;
}

/* lock: the nev pairs (their residuals are below the tolerance and
 * dropped); the search of their complement starts from a fresh random
 * vector (not from the next Ritz vector: its Ritz value would converge
 * first and hide a missed copy beyond it). */
static int lz_lock(kr_solver *s)
{
    lz_ctx *c = s->ctx;
    kr_ws *w = s->w;
    const int nev = s->opt->nev;
    select_columns(w, s->mm, nev);
    PL_CALL(kr_update_basis(w, 0, s->mm, nev));
    memcpy(c->lock_theta, s->ritz, (size_t)nev * sizeof(double));
    memcpy(c->lock_est, s->est, (size_t)nev * sizeof(double));
    return lz_search_begin(s, nev); /* from column nev */
}

/* finish, after verify: the nev most wanted locked columns, in wanted
 * order, to V[:, 0:nev], their values to the result. */
static int lz_locked_result(kr_solver *s)
{
    lz_ctx *c = s->ctx;
    kr_ws *w = s->w;
    const int nev = s->opt->nev, nlock = s->nlock;
    locked_order(c->lock_theta, nlock, c->which, c->lord);
    int ident = nlock == nev;
    for (int i = 0; i < nev; i++) ident = ident && c->lord[i] == i;
    if (!ident) {
        memset(w->Ysel, 0, (size_t)nlock * nev * sizeof(double));
        for (int i = 0; i < nev; i++) w->Ysel[(size_t)i * nlock + c->lord[i]] = 1.0;
        PL_CALL(kr_update_basis(w, 0, nlock, nev));
    }
    for (int i = 0; i < nev; i++) s->res->eigenvalues[i] = c->lock_theta[c->lord[i]];
    return PL_OK;
}

/* finish, the residual check of the relaxed threshold (lz_pro.c): where
 * an explicit residual of a converged result fails tol * scale (plus
 * 1e3 eps normest of rounding) while the omega threshold was above the
 * strict min(sqrt(eps), tol), the run starts again from the sum of the
 * returned vectors (kr_reseed) with the strict threshold, once; the second
 * result stands as the code before the relaxed threshold returned it. */
static int lz_recheck(kr_solver *s, int *again)
{
    lz_ctx *c = s->ctx;
    kr_ws *w = s->w;
    lz_result *res = s->res;
    const int nev = s->opt->nev;
    if (s->reason != LZ_CONVERGED || c->reorth != LZ_REORTH_PARTIAL || !(c->pro.thresh > c->pro.strict)) return PL_OK;
    int bad = 0;
    for (int i = 0; i < nev; i++) {
        const double bound = s->opt->tol * kr_scale(fabs(res->eigenvalues[i]), kr_conv_norm(s)) +
                             1e3 * DBL_EPSILON * s->normest;
        bad |= !(res->residuals[i] <= bound);
    }
    if (!bad || s->restarts >= w->pg.budget) return PL_OK;
    c->pro.thresh = c->pro.strict;
    res->rechecks++;
    int exhausted = 0;
    PL_CALL(kr_reseed(w, nev, &exhausted));
    PL_CHECK(!exhausted, PL_ERR_INTERNAL, "no start vector for the residual recheck");
    reset_T(w, 0, NULL, 0);
    kr_pro_full(&c->pro, 0);
    memset(c->pro.seed, 0, ((size_t)w->m + 2) * sizeof(double));
    memset(c->pro.expect, 0, ((size_t)w->m + 2) * sizeof(double));
    c->force_full = 0;
    c->nsel = 0;
    c->so_col[0] = c->so_col[1] = c->so_col[2] = -1;
    c->beta_m = 0.0;
    s->k = 0;
    s->nlock = 0;
    s->nconv = 0;
    s->final_locked = 0;
    s->restarts++;
    s->reason = LZ_ITERATING;
    *again = 1;
    return PL_OK;
}

/* The wanted Ritz vectors of the projected problem of size mm (projected:
 * theta, Y, ord) to V[:, 0:nev], their values to the result. */
static int ritz_to_front(kr_ws *w, int mm, int nev, double *eigenvalues)
{
    select_columns(w, mm, nev);
    PL_CALL(kr_update_basis(w, 0, mm, nev));
    for (int i = 0; i < nev; i++) eigenvalues[i] = w->theta[w->ord[i]];
    return PL_OK;
}

/* The returned block's explicit residuals and measured loss of
 * orthogonality. */
static int measure_returned(kr_solver *s)
{
    kr_ws *w = s->w;
    lz_result *res = s->res;
    const double t0 = pl_wtime(), tsp = w->t.spmv;
    for (int i = 0; i < s->opt->nev; i++)
        PL_CALL(kr_residual_real(w, i, res->eigenvalues[i], w->m, &res->residuals[i]));
    w->t.residual += pl_wtime() - t0 - (w->t.spmv - tsp);
    return kr_orth_loss(w, s->opt->nev, &res->orth_loss);
}

/* finish: Ritz vectors to V[:, 0:nev], explicit residuals, the measured
 * loss of orthogonality; past the promise (runs that stopped unconverged),
 * the Ritz vectors of the returned block's own span (lz_return.c); the
 * residual check (lz_recheck). */
static int lz_finish(kr_solver *s, int *again)
{
    kr_ws *w = s->w;
    lz_ctx *c = s->ctx;
    lz_result *res = s->res;
    const int nev = s->opt->nev;
    *again = 0;
    if (s->final_locked) PL_CALL(lz_locked_result(s));
    else PL_CALL(ritz_to_front(w, s->mm, nev, res->eigenvalues));
    PL_CALL(measure_returned(s));
    if (!w->bop && res->orth_loss > LZ_RETURN_LOSS) {
        PL_CALL(lz_return_project(s));
        PL_CALL(projected(w, 0, nev, c->which));
        PL_CALL(ritz_to_front(w, nev, nev, res->eigenvalues));
        res->returned_rr = 1;
        PL_CALL(measure_returned(s));
    }
    return lz_recheck(s, again);
}

/* The checkpoint state: ints (krylov_impl.h), then reorth and
 * full_reorths; dbl = normest, T (m x m), lock_theta and lock_est (lcap
 * each), the omega row of the restart vector, the seed noise and the
 * expected arrow of the recurrence (pro.cur, seed, expect: m + 1 each; the
 * next cycle reads all three), the largest omega so far. */
#define LZ_NINT (KR_ST_COMMON + 2)
static int lz_ndbl_old(int m, int lcap) { return 1 + m * m + 2 * lcap + 3 * (m + 1) + 1; }
/* then verify's certificate (since 2026-11-29): on, npts, mu[2], lsc[2],
 * best, q[0] and q[1] (m + 1 each); a checkpoint without it resumes with
 * the certificate off (the search stops by its convergence test) */
#define LZ_CERT_SCALARS 7
static int lz_ndbl(int m, int lcap) { return lz_ndbl_old(m, lcap) + LZ_CERT_SCALARS + 2 * (m + 1); }

static void lz_pack_cert(const lz_cert *ct, int m, double *d)
{
    d[0] = ct->on;
    d[1] = ct->npts;
    d[2] = ct->mu[0];
    d[3] = ct->mu[1];
    d[4] = ct->lsc[0];
    d[5] = ct->lsc[1];
    d[6] = ct->best > -DBL_MAX ? ct->best : -DBL_MAX;
    memcpy(d + LZ_CERT_SCALARS, ct->q[0], (size_t)(m + 1) * sizeof(double));
    memcpy(d + LZ_CERT_SCALARS + m + 1, ct->q[1], (size_t)(m + 1) * sizeof(double));
}

static void lz_unpack_cert(lz_cert *ct, int m, const double *d)
{
    ct->on = d[0] != 0.0;
    ct->npts = d[1] == 2.0 ? 2 : 1;
    ct->mu[0] = d[2];
    ct->mu[1] = d[3];
    ct->lsc[0] = d[4];
    ct->lsc[1] = d[5];
    ct->best = d[6] > -DBL_MAX ? d[6] : -INFINITY;
    memcpy(ct->q[0], d + LZ_CERT_SCALARS, (size_t)(m + 1) * sizeof(double));
    memcpy(ct->q[1], d + LZ_CERT_SCALARS + m + 1, (size_t)(m + 1) * sizeof(double));
}

static void lz_pack(kr_solver *s)
{
    lz_ctx *c = s->ctx;
    kr_ws *w = s->w;
    const int m = w->m, lcap = c->lcap;
    double *d = s->dbl + 1, *om = d + m * m + 2 * lcap;
    memcpy(d, w->T, (size_t)m * m * sizeof(double));
    memcpy(d + m * m, c->lock_theta, (size_t)lcap * sizeof(double));
    memcpy(d + m * m + lcap, c->lock_est, (size_t)lcap * sizeof(double));
    memcpy(om, c->pro.cur, (size_t)(m + 1) * sizeof(double));
    memcpy(om + (m + 1), c->pro.seed, (size_t)(m + 1) * sizeof(double));
    memcpy(om + 2 * (m + 1), c->pro.expect, (size_t)(m + 1) * sizeof(double));
    om[3 * (m + 1)] = s->res->orth_estimate;
    lz_pack_cert(&c->cert, m, s->dbl + lz_ndbl_old(m, lcap));
    s->ints[KR_ST_COMMON] = c->reorth;
    s->ints[KR_ST_COMMON + 1] = w->t.full_reorths;
}

static const char *lz_reorth_name(int64_t r)
{
    return r == LZ_REORTH_PARTIAL ? "partial" : r == LZ_REORTH_FULL ? "full" : r == LZ_REORTH_LOCAL ? "local" : "?";
}

static int lz_unpack(kr_solver *s)
{
    lz_ctx *c = s->ctx;
    kr_ws *w = s->w;
    const int m = w->m, lcap = c->lcap;
    PL_CHECK(s->ints[KR_ST_COMMON] == c->reorth, PL_ERR_INPUT,
             "reorthogonalization = %s: the checkpoint was written with %s", lz_reorth_name(c->reorth),
             lz_reorth_name(s->ints[KR_ST_COMMON]));
    w->t.full_reorths = s->ints[KR_ST_COMMON + 1];
    const double *d = s->dbl + 1, *om = d + m * m + 2 * lcap;
    memcpy(w->T, d, (size_t)m * m * sizeof(double));
    memcpy(c->lock_theta, d + m * m, (size_t)lcap * sizeof(double));
    memcpy(c->lock_est, d + m * m + lcap, (size_t)lcap * sizeof(double));
    kr_pro_set_row(&c->pro, m + 1, om); /* the whole row: cur[m + 1] is never read */
    memcpy(c->pro.seed, om + (m + 1), (size_t)(m + 1) * sizeof(double));
    memcpy(c->pro.expect, om + 2 * (m + 1), (size_t)(m + 1) * sizeof(double));
    s->res->orth_estimate = om[3 * (m + 1)];
    if (s->ndbl_in == lz_ndbl(m, lcap)) lz_unpack_cert(&c->cert, m, s->dbl + lz_ndbl_old(m, lcap));
    else c->cert.on = 0; /* an earlier version's checkpoint */
    return PL_OK;
}

static const kr_method lz_method = {
    .id = 1, .complex_values = 0, .every_step_full = 0, .lock_room = 2,
    .step = lz_step, .injected = lz_injected, .couple = lz_couple, .expanded = NULL,
    .verify = lz_verify, .extract = lz_extract, .lock = lz_lock, .restart = lz_restart,
    .pack = lz_pack, .unpack = lz_unpack, .finish = lz_finish,
};

static void lz_ctx_free(lz_ctx *c)
{
    free(c->lock_theta);
    free(c->lock_est);
    free(c->lord);
    free(c->lsort);
    free(c->orow);
    free(c->trow);
    free(c->so[0]);
    free(c->first_c3);
    free(c->first_h);
    free(c->cert.q[0]);
    kr_pro_free(&c->pro);
}

static int lz_ctx_init(lz_ctx *c, kr_ws *w, const lz_options *opt)
{
    const int nev = opt->nev, m = w->m;
    c->which = opt->which == PL_WHICH_SMALLEST_REAL  ? PL_WHICH_SMALLEST
               : opt->which == PL_WHICH_LARGEST_REAL ? PL_WHICH_LARGEST
                                                     : opt->which;
    c->reorth = opt->reorth;
    c->so_col[0] = c->so_col[1] = c->so_col[2] = -1;
    /* verification locks the nev converged pairs and, as they turn up, missed
     * copies beyond them: up to lcap columns, leaving room to search */
    const int lcap = nev + (m - nev - 4 > 0 ? (m - nev - 4 < nev ? m - nev - 4 : nev) : 0);
    c->lcap = lcap;
    PL_CALL(kr_pro_init(&c->pro, m, w->N, opt->tol));
    c->lock_theta = malloc((size_t)lcap * sizeof *c->lock_theta);
    c->lock_est = malloc((size_t)lcap * sizeof *c->lock_est);
    c->lord = malloc((size_t)lcap * sizeof *c->lord);
    c->lsort = malloc((size_t)2 * lcap * sizeof *c->lsort);
    c->orow = calloc((size_t)m + 2, sizeof *c->orow);
    c->trow = calloc(2 * ((size_t)m + 2), sizeof *c->trow);
    c->so[0] = calloc((size_t)3 * ((size_t)m + 2), sizeof *c->so[0]);
    PL_CHECK(c->lock_theta && c->lock_est && c->lord && c->lsort && c->orow && c->trow && c->so[0], PL_ERR_MEM,
             "out of host memory");
    c->so[1] = c->so[0] + m + 2;
    c->so[2] = c->so[1] + m + 2;
    c->first_c3 = calloc((size_t)m + 2, sizeof *c->first_c3);
    c->first_h = calloc((size_t)m + 3, sizeof *c->first_h);
    c->cert.q[0] = calloc(3 * ((size_t)m + 1), sizeof(double));
    PL_CHECK(c->first_c3 && c->first_h && c->cert.q[0], PL_ERR_MEM, "out of host memory");
    c->cert.q[1] = c->cert.q[0] + m + 1;
    c->cert.tmp = c->cert.q[1] + m + 1;
    reset_T(w, 0, NULL, 0);
    return PL_OK;
}

int lz_solve(pl_op *op, const lz_options *opt, lz_result *res)
{
    double t_start = pl_wtime();
    int err = PL_OK;
    memset(res, 0, sizeof *res);
    int64_t m = 0;
    PL_CALL(kr_check_options(op, opt, PL_WHICH_LARGEST_REAL, 1, LZ_NCV_FLOOR, &m));

    kr_ws w;
    lz_ctx c;
    memset(&c, 0, sizeof c);
    /* column m + 1 for the fused restart (lz_first_*, lz_step.c):
     * PJDS_RESTART_FUSED=0 keeps the composed one (for comparisons) */
    const char *fr = getenv("PJDS_RESTART_FUSED");
    const int xcol = pl_op_backend(op)->restart_step != NULL && opt->reorth == LZ_REORTH_PARTIAL && !opt->inner_b &&
                     !(fr && fr[0] == '0');
    PL_CALL(kr_ws_init(&w, op, (int)m, xcol, opt->seed));
    if (opt->inner_b) PL_CALL_GOTO(kr_ws_set_inner(&w, opt->inner_b), out, err); /* the B-inner product */
    /* partial: a full step's second Gram-Schmidt pass only where the first
     * cancelled (DGKS, as SLEPc): the vectors it sees are already nearly
     * orthogonal to the basis (local step, selective projection) */
    w.refine_if_needed = opt->reorth == LZ_REORTH_PARTIAL;
    KR_HOST_ALLOC(res->eigenvalues, opt->nev, out);
    KR_HOST_ALLOC(res->residuals, opt->nev, out);
    PL_CALL_GOTO(lz_ctx_init(&c, &w, opt), out, err);
    res->nev = opt->nev;
    res->reorth = opt->reorth;
    res->orth_loss = -1.0;
    res->verify_bound = -1.0;
    kr_solver s = {.w = &w, .opt = opt, .res = res, .mt = &lz_method, .ctx = &c, .nint = LZ_NINT,
                   .ndbl = lz_ndbl(w.m, c.lcap), .ndbl_old = lz_ndbl_old(w.m, c.lcap)};
    PL_CALL_GOTO(kr_run(&s), out, err);
    kr_hand_over(&w, opt, res, t_start);
out:
    lz_ctx_free(&c);
    kr_ws_free(&w);
    if (err != PL_OK) lz_result_destroy(res);
    return err;
}
