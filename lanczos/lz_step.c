/* lz_step.c — the expansion step of thick-restart Lanczos (lanczos.c):
 * column j + 1 = A v_j, orthogonalised by the local three-term step with
 * Simon's omega estimate (partial reorthogonalisation, lz_pro.c) and the
 * selected columns kept out of it (kr_local.c), or against the whole basis
 * (the cycle's first step with its expected arrow, a triggered step, or
 * reorthogonalization = full).
 * Written against spmv.h only: no backend headers, no conditional code. */
#include <math.h>

#include "krylov_impl.h"
#include "lanczos.h"
#include "lz_impl.h"
#include "pl_error.h"

/* The selected columns' measured overlaps with basis column col, or NULL
 * (none kept: the column was orthogonalised against them). */
static const double *lz_sel_row(const lz_ctx *c, int col)
{
    for (int r = 0; r < 3; r++)
        if (c->so_col[r] == col) return c->so[r];
    return NULL;
}

/* A local step at j > k: the three-term recurrence (the SpMV only queued),
 * then the omega estimate; when it passes the threshold, semi-orthogonality
 * is about to be lost: v_{j+1} is orthogonalised against the whole basis
 * now and v_{j+2} next.  *local = 0: the local orthogonalisation declined
 * (the caller orthogonalises in full). */
static int lz_step_local(kr_solver *s, int j, double *alpha, double *nrm, int *in_span, int *local)
{
    lz_ctx *c = s->ctx;
    kr_ws *w = s->w;
    const double beta_prev = w->T[(size_t)j * w->m + (j - 1)];
    double growth = 1.0, ovl[2] = {0.0, 0.0};
    const int slot = (j + 1) % 3;
    kr_sel sel = {.n = c->nsel, .keep = LZ_KEEP_SEL * c->pro.thresh, .prev = lz_sel_row(c, j - 1),
                  .cur = lz_sel_row(c, j), .next = c->so[slot], .measured = 0, .exact = 0};
    c->so_col[slot] = -1;
    /* the product and the step's sums in one pass where the operator
     * fuses them (kr_local_fused) */
    int fused = 0;
    PL_CALL(kr_local_fused(w, j, c->nsel > 0 ? &sel : NULL, beta_prev, alpha, nrm, &growth, ovl, local, &fused));
    if (!fused) {
        PL_CALL(kr_apply_queued(w, j, j + 1));
        /* the leading nsel kept columns are projected out of the new vector
         * in the same reduction and update as the local step where the
         * backend fuses them (sel_gram, sel_update), else before it
         * (kr_project_out) */
        PL_CALL(kr_orthogonalize_local(w, j, c->nsel > 0 ? &sel : NULL, beta_prev, alpha, nrm, &growth, ovl, local));
    }
    if (!*local || c->reorth != LZ_REORTH_PARTIAL) return PL_OK;
    double om = kr_pro_estimate(&c->pro, w->T, j, *alpha, beta_prev, *nrm, ovl, s->normest);
    if (c->nsel > 0)
        om = kr_pro_selected(&c->pro, c->nsel, j, *alpha, beta_prev, *nrm, sel.measured ? sel.next : NULL, sel.exact);
    const int second = c->force_full; /* the second vector of a reorthogonalised pair */
    c->force_full = 0;
    if (om > c->pro.thresh && !second && !w->bop) {
        /* the estimate bounds the loss, often loosely: measure the
         * overlaps of v_j and v_{j+1} with the basis first (one pass over
         * it for both).  Where all are at most the selective keep level
         * (LZ_KEEP_SEL thresh) they stay, as a selected column's do, the
         * two omega rows restart from the measured values, and the pair of
         * full passes (two sweeps each) does not run.  Measured at tol
         * 1e-10 (threshold 1e-8), every trigger of the default solves of
         * HMEp and hh_184800 found at most 1e-11 (2026-11-29) */
        PL_CALL(kr_overlaps_last2(w, j, c->trow));
        double worst;
        if (kr_pro_accept_measured(&c->pro, j, c->trow, LZ_KEEP_SEL * c->pro.thresh, &worst)) {
            if (sel.measured) c->so_col[slot] = j + 1;
            s->res->orth_estimate = fmax(s->res->orth_estimate, worst);
            w->t.measured_triggers++;
            return PL_OK;
        }
    }
    if (om > c->pro.thresh || second) {
        double n2;
        PL_CALL(kr_orthogonalize(w, j + 1, j + 1, w->cf, &n2, in_span));
        *alpha += *nrm * w->cf[j];
        *nrm *= n2;
        kr_pro_full(&c->pro, j + 1);
        w->t.full_reorths++;
        c->force_full = !second;
    } else {
        if (sel.measured) c->so_col[slot] = j + 1;
        kr_pro_accept(&c->pro, j);
        s->res->orth_estimate = fmax(s->res->orth_estimate, om);
    }
    return PL_OK;
}

/* A full step at j: two-pass Gram-Schmidt against the whole basis; at the
 * cycle's first step its coefficients are the arrow of the thick restart. */
static int lz_step_full(kr_solver *s, int j, double *alpha, double *nrm, int *in_span)
{
    lz_ctx *c = s->ctx;
    kr_ws *w = s->w;
    const int m = w->m, k = s->k;
    /* partial, a cycle's first step: the arrow is expected (lz_thick_restart
     * sets pro.expect), so its Gram-Schmidt pass is one sweep shorter */
    if (j == k && k > 0 && c->reorth == LZ_REORTH_PARTIAL && c->first_ready) {
        c->first_ready = 0; /* the restart measured it (lz_first_pass) */
        w->napply_ahead = 0;
        w->t.steps_time += c->first_t;
        w->t.full_steps_time += c->first_t;
        PL_CALL(kr_orthogonalize_measured(w, j + 1, c->first_c3, c->first_h, c->first_G, LZ_KEEP_FIRST * c->pro.thresh,
                                          c->orow, w->cf, nrm, in_span));
    } else if (j == k && k > 0 && c->reorth == LZ_REORTH_PARTIAL)
        PL_CALL(kr_orthogonalize_known(w, j + 1, c->pro.expect, LZ_KEEP_FIRST * c->pro.thresh, c->orow, w->cf, nrm,
                                       in_span));
    else
        PL_CALL(kr_orthogonalize(w, j + 1, j + 1, w->cf, nrm, in_span)); /* normalises */
    const double *coef = w->cf;
    *alpha = coef[j];
    if (j == k) { /* locked columns stay decoupled */
        for (int i = s->nlock; i < k; i++) w->T[(size_t)k * m + i] = w->T[(size_t)i * m + k] = coef[i];
        kr_pro_seed(&c->pro, k, coef);
    }
    if (j == k && k > 0 && c->reorth == LZ_REORTH_PARTIAL) kr_pro_measured(&c->pro, j + 1, c->orow);
    else kr_pro_full(&c->pro, j + 1);
    w->t.full_reorths++;
    return PL_OK;
}

/* ---- the cycle's first step, done by the restart -------------------------- */

/* Whether the restart of kk kept columns in the block [off, off + sz) can
 * do the next cycle's first product and measuring pass: the partial
 * recurrence (whose first step expects the arrow), the Euclidean inner
 * product, column m + 1 allocated, the residual vector v_m in column m. */
int lz_first_fits(const kr_solver *s, int off, int sz, int kk)
{
    const lz_ctx *c = s->ctx;
    const kr_ws *w = s->w;
    return w->xcol && !w->bop && c->reorth == LZ_REORTH_PARTIAL && off + sz == w->m && kk >= 1 && sz > kk + 1;
}

/* Before the restart: column m + 1 = A v_m (v_m, the residual vector, is
 * the next cycle's v_k and is not touched by the update), and the Gram
 * matrix of v_m and A v_m, which the first step measures alpha from. */
int lz_first_product(kr_solver *s)
{
    lz_ctx *c = s->ctx;
    kr_ws *w = s->w;
    const double t0 = pl_wtime();
    PL_CALL(kr_apply(w, w->m, w->m + 1));
    PL_CALL(pl_vec_gram(w->op, 2, kr_col(w, w->m), w->ld, c->first_G));
    w->t.reductions++;
    w->t.vec_bytes += 16.0 * (double)w->n;
    c->first_t = pl_wtime() - t0;
    w->napply_ahead = 1;
    return PL_OK;
}

/* The restart's update with the first step's measuring pass
 * (pl_vec_restart_step): columns off..k-1 kept, k = v_m, k + 1 = A v_m
 * less the expected arrow and alpha, its overlaps measured; lz_step then
 * takes only the correction (kr_orthogonalize_measured). */
int lz_first_pass(kr_solver *s, int off, int sz, int kk)
{
    lz_ctx *c = s->ctx;
    kr_ws *w = s->w;
    const int k = off + kk;
    const double t0 = pl_wtime();
    kr_known_coefficients(k + 1, c->pro.expect, c->first_G, c->first_c3);
    PL_CALL(pl_vec_restart_step(w->op, off, sz, kk, w->V, w->ld, w->Ysel, sz, c->first_c3, c->first_h));
    w->t.reductions++;
    w->t.vec_bytes += 8.0 * (double)w->n * (double)(sz + off + kk + 4);
    w->t.restart += pl_wtime() - t0;
    c->first_ready = 1;
    return PL_OK;
}

/* expand: column j + 1 = A v_j, orthogonalised locally or in full; T[j][j]. */
int lz_step(kr_solver *s, int j, double *nrm, int *in_span)
{
    lz_ctx *c = s->ctx;
    kr_ws *w = s->w;
    const int k = s->k;
    /* partial: the second vector of a pair that Simon's recurrence sends to
     * a full pass takes the local step first (the three-term recurrence
     * removes the large alpha and beta components exactly), so that its
     * full pass is a single one by the DGKS test */
    const int try_local = c->reorth != LZ_REORTH_FULL && j > k && (!c->force_full || c->reorth == LZ_REORTH_PARTIAL);
    double alpha = 0.0;
    int local = 0;
    /* selective orthogonalisation: the leading kept columns that are
     * converged enough to attract the new vectors (lz_pro.c) */
    if (j == k + 1) {
        c->nsel = c->reorth == LZ_REORTH_PARTIAL ? kr_pro_nselected(&c->pro, k, s->nlock, s->normest) : 0;
        c->so_col[0] = c->so_col[1] = c->so_col[2] = -1;
    }
    if (try_local) PL_CALL(lz_step_local(s, j, &alpha, nrm, in_span, &local));
    else if (!(j == k && c->first_ready)) PL_CALL(kr_apply(w, j, j + 1));
    c->force_full = c->force_full && local; /* (set again by a trigger of this step) */
    if (!local) PL_CALL(lz_step_full(s, j, &alpha, nrm, in_span));
    w->T[(size_t)j * w->m + j] = alpha;
    return PL_OK;
}

/* expand, after a breakdown: column j is a fresh random vector. */
void lz_injected(kr_solver *s, int j)
{
    lz_ctx *c = s->ctx;
    kr_pro_full(&c->pro, j);
    for (int r = 0; r < 3; r++)
        if (c->so_col[r] == j) c->so_col[r] = -1;
    c->force_full = 1;
    c->cert.on = 0; /* verify's certificate: the basis left the Krylov space of its start */
}

/* couple: beta_j into T and the last coupling. */
void lz_couple(kr_solver *s, int j, double beta)
{
    lz_ctx *c = s->ctx;
    const int m = s->w->m;
    if (j + 1 < m) s->w->T[(size_t)(j + 1) * m + j] = s->w->T[(size_t)j * m + (j + 1)] = beta;
    c->beta_m = beta;
}
