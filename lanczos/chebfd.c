/* chebfd.c — Chebyshev filter diagonalization (lanczos.h cf_solve; Pieper
 * et al., J. Comput. Phys. 325 (2016) 226): all eigenpairs of a symmetric
 * operator in a window, using only block products.
 *
 * One iteration on the active columns [nl, nb) of the search block V (the
 * columns [0, nl) hold the locked pairs):
 *   1. filter: V_f = p(H~) V_f (V_f: the active columns chosen in step
 *      5), p the damped Chebyshev series of the window's indicator
 *      (chebfd_filter.c), R columns at a time in row-major blocks: where
 *      the backend fuses the whole step (pl_op_apply_block_cheb, the CUDA
 *      backend on one rank), T_k+1 = 2 H~ T_k - T_k-1 in place of T_k-1
 *      and, in the pass that makes T_k for odd k, Acc += c_k-1 T_k-1 +
 *      c_k T_k; else pl_op_apply_block_aug (the fused KPM step Y = alpha
 *      A X + gamma X + beta Y) and, every second degree, one gemv_n that
 *      adds both terms into the accumulator;
 *   2. orthonormalise against the locked columns and among themselves
 *      (chebfd_orth.c: CholQR2, SVQB fallback; the loss is measured; the
 *      Gram matrices as whole-block products, pl_vec_gemm_t);
 *   3. Rayleigh-Ritz (A V by block products, V^T A V by gemm_t, dsyev) and
 *      explicit residuals ||A v - theta v||;
 *   4. lock the Ritz pairs inside the window whose residual is at most
 *      0.99 tol ||H|| (||H|| = max |E| of the bounds without their 1 %
 *      margins: the extreme Ritz values of kpm_bounds' Lanczos run widened
 *      by their residual bounds, which at most slightly exceed ||H||);
 *   5. choose the columns to filter next: all active ones, or (a partial
 *      iteration, when the window's Ritz values agree in number with the
 *      estimate) only the unconverged ones whose residual interval reaches
 *      into the window; the Ritz vectors outside it stay in the block as
 *      they are (frozen) and take part in steps 2-4, so that the near-edge
 *      components of the refined columns are still resolved.  After a
 *      partial iteration that locks nothing the next one is full.  On the
 *      8,400-row HMEp-like window of docs/performance.md (96 pairs, tol
 *      1e-9, 2026-11-26) this took the run from 138,767 to 76,656 SpMMVs,
 *      the same 3 iterations and eigenvalues.
 * Stop (converged) when no active Ritz value is left unconverged whose
 * residual interval lies inside the window (lock() says why those that
 * reach beyond it may be spurious), the number locked agrees with the KPM
 * estimate within its
 * uncertainty (|found - est| <= err + 0.5) and, for target / smallest /
 * largest, at least nev were found.  Else iterate; after CF_STABLE
 * iterations without such a Ritz value and without a new pair, or after
 * max_iter, stop with info->why. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chebfd_impl.h"
#include "pl_error.h"

#define CF_STABLE 3
#define CF_GUARD 0 /* guard_default */

static void ws_free(cf_ws *w)
{
    pl_backend *be = w->be;
    if (be) {
        if (w->V) be->vec_free(be, w->V);
        if (w->X0) be->vec_free(be, w->X0);
        if (w->Acc) be->vec_free(be, w->Acc);
        if (w->W) be->vec_free(be, w->W);
        if (w->idx_f) be->idx_destroy(be, w->idx_f);
        if (w->idx_b) be->idx_destroy(be, w->idx_b);
        lz_rand_rows_free(&w->rr);
    }
    free(w->G);
    free(w->Y);
    free(w->theta);
    free(w->res);
    free(w->tmp);
    memset(w, 0, sizeof *w);
}

static int ws_init(cf_ws *w, pl_op *op, const cf_options *o, const cf_plan *p)
{
    memset(w, 0, sizeof *w);
    pl_op_info info;
    pl_op_get_info(op, &info);
    w->op = op;
    w->be = pl_op_backend(op);
    w->comm = pl_op_comm(op);
    MPI_Comm_rank(w->comm, &w->rank);
    w->N = info.n_global;
    w->n = (size_t)info.n_local;
    w->ld = w->n ? w->n : 1;
    w->gidx = pl_op_global_index(op);
    w->nb = p->nb;
    w->R = p->R;
    w->seed = o->seed;
    const char *fz = getenv("PJDS_CHEBFD_FUSE"); /* tuning switch: 0 composes the filter step */
    w->nofuse = fz && *fz && atoi(fz) == 0;
    w->slab = w->n < CF_SLAB ? (w->n ? w->n : 1) : CF_SLAB;
    PL_CHECK((double)w->ld * w->R < 2147483647.0, PL_ERR_NOTSUP,
             "chebfd: %zu rows per rank times %d columns exceed the 32-bit gather tables; use more ranks", w->n, w->R);
    const size_t nb = (size_t)w->nb, blk = (size_t)w->R * w->ld + 1;
    w->xs = (blk + 1) & ~(size_t)1; /* X1 = X0 + xs: even, so the pair is a 16-byte aligned 2-column matrix */
    int rc = PL_OK;
    PL_CALL_GOTO(w->be->vec_alloc(w->be, nb * w->ld, &w->V), err, rc);
    PL_CALL_GOTO(w->be->vec_alloc(w->be, 2 * w->xs, &w->X0), err, rc);
    w->X1 = w->X0 + w->xs;
    PL_CALL_GOTO(w->be->vec_alloc(w->be, blk, &w->Acc), err, rc);
    PL_CALL_GOTO(w->be->vec_alloc(w->be, blk, &w->W), err, rc);
    PL_CALL_GOTO(lz_rand_rows_init(&w->rr, w->be, (int64_t)w->n, w->gidx), err, rc);
    w->G = malloc(nb * nb * sizeof *w->G);
    w->Y = malloc(nb * nb * sizeof *w->Y);
    w->theta = malloc(nb * sizeof *w->theta);
    w->res = malloc(nb * sizeof *w->res);
    w->tmp = malloc(nb * sizeof *w->tmp);
    PL_CHECK_GOTO(w->G && w->Y && w->theta && w->res && w->tmp, PL_ERR_MEM, err, rc,
                  "out of host memory for the chebfd projected problems (%d columns)", w->nb);
    return PL_OK;
err:
    ws_free(w);
    return rc;
}

/* One block of Rc columns through the fused step of the backend
 * (pl_op_apply_block_cheb): Acc += c_d-1 T_d-1 + c_d T_d in the step that
 * makes T_d (d odd, and the last d), so that each step reads X, Y and,
 * every second step, Acc once.  PL_ERR_NOTSUP (nothing done beyond the
 * first step's check) where the backend does not fuse it. */
static int filter_fused(cf_ws *w, const cf_plan *p, const double *coef, int Rc, double cen, double h)
{
    const size_t nr = w->n * (size_t)Rc;
    PL_CALL(w->be->set(w->be, nr, 0.0, w->X1));
    PL_CALL(w->be->set(w->be, nr, 0.0, w->Acc));
    const int e = pl_op_apply_block_cheb(w->op, Rc, 1.0 / h, -cen / h, 0.0, w->X0, w->X1, coef[0], coef[1], w->Acc);
    if (e == PL_ERR_NOTSUP) return e;
    PL_CALL(e);
    for (int d = 2; d <= p->degree; d++) {
        /* T_d in X1 for odd d, X0 for even d, in place of T_d-2 */
        double *cur = d & 1 ? w->X0 : w->X1, *prev = d & 1 ? w->X1 : w->X0;
        const int add = (d & 1) || d == p->degree;
        PL_CALL(pl_op_apply_block_cheb(w->op, Rc, 2.0 / h, -2.0 * cen / h, -1.0, cur, prev, d & 1 ? coef[d - 1] : 0.0,
                                       coef[d], add ? w->Acc : NULL));
    }
    return PL_OK;
}

/* V[:, c0:c0+k] = p(H~) V[:, c0:c0+k], coef[0..deg] (deg >= 1). */
static int filter(cf_ws *w, const cf_plan *p, const double *coef, int c0, int k)
{
    const double cen = 0.5 * (p->emax + p->emin), h = 0.5 * (p->emax - p->emin);
    for (int j0 = 0; j0 < k; j0 += w->R) {
        const int Rc = k - j0 < w->R ? k - j0 : w->R;
        const size_t nr = w->n * (size_t)Rc;
        PL_CALL(cf_to_row(w, c0 + j0, Rc, w->X0));
        const int e = w->nofuse ? PL_ERR_NOTSUP : filter_fused(w, p, coef, Rc, cen, h);
        if (e != PL_ERR_NOTSUP) PL_CALL(e);
        if (e == PL_ERR_NOTSUP) {
            /* composed: T_d in X0 for even d, X1 for odd d (T_d+1 = 2 H~ T_d -
             * T_d-1 in place of T_d-1); Acc += c_d-1 T_d-1 + c_d T_d after
             * each odd d: one gemv_n over the pair (X0, X1 a 2-column matrix,
             * ld xs), 16 bytes a value per step instead of an axpy's 24 */
            w->nofuse = 1;
            PL_CALL(w->be->set(w->be, nr, 0.0, w->X1));
            PL_CALL(pl_op_apply_block_aug(w->op, Rc, 1.0 / h, -cen / h, 0.0, w->X0, w->X1, w->W, NULL));
            PL_CALL(w->be->gemv_n(w->be, nr, 2, 1.0, w->X0, w->xs, coef, 0.0, w->Acc));
            for (int d = 2; d <= p->degree; d++) {
                double *cur = d & 1 ? w->X0 : w->X1, *prev = d & 1 ? w->X1 : w->X0;
                PL_CALL(pl_op_apply_block_aug(w->op, Rc, 2.0 / h, -2.0 * cen / h, -1.0, cur, prev, w->W, NULL));
                if (d & 1) PL_CALL(w->be->gemv_n(w->be, nr, 2, 1.0, w->X0, w->xs, coef + d - 1, 1.0, w->Acc));
                else if (d == p->degree) PL_CALL(w->be->axpy(w->be, nr, coef[d], w->X0, w->Acc));
            }
        }
        PL_CALL(cf_to_col(w, w->Acc, Rc, w->V + (size_t)(c0 + j0) * w->ld));
        w->spmmv += (int64_t)p->degree * Rc;
    }
    return w->be->sync(w->be);
}

/* Column classes after an iteration: locked (converged, inside [a, b]),
 * frozen (kept for the Rayleigh-Ritz but not filtered again), filtered. */
enum { CF_LOCK = 0, CF_FREEZE = 1, CF_FILTER = 2 };

/* Guard columns filtered with the unconverged ones in a partial iteration:
 * the nearest Ritz values beyond each edge (PJDS_CHEBFD_GUARD, a tuning
 * switch; negative: every iteration filters every active column). */
static int guard_default(void)
{
    const char *e = getenv("PJDS_CHEBFD_GUARD");
    return e && *e ? atoi(e) : CF_GUARD;
}

/* Classify the active Ritz pairs [0, k) (ascending theta): cls[j].  A
 * partial iteration (partial = 1) filters only the pairs that are not
 * converged and whose residual interval reaches into the window, plus
 * the `guard` nearest Ritz values beyond each edge; the other pairs
 * outside the window stay as they are (frozen). */
static void classify(const cf_ws *w, const cf_plan *p, double thr, int k, int partial, int guard, int *cls)
{
    int below = -1, above = k; /* the last Ritz value below a, the first above b */
    for (int j = 0; j < k; j++) {
        const double t = w->theta[j], r = w->res[j];
        if (t < p->a) below = j;
        if (t > p->b && above == k) above = j;
        if (t >= p->a && t <= p->b && r <= thr) cls[j] = CF_LOCK;
        else if (!partial || (t + r >= p->a && t - r <= p->b)) cls[j] = CF_FILTER;
        else cls[j] = CF_FREEZE;
    }
    for (int g = 0; g < guard && below - g >= 0; g++) cls[below - g] = CF_FILTER;
    for (int g = 0; g < guard && above + g < k; g++) cls[above + g] = CF_FILTER;
}

/* Move the converged Ritz pairs of the active columns [nl, nl + k) inside
 * [a, b] to the locked set and order the others frozen first, filtered
 * last (columns reordered in place); *nf = the columns to filter next.
 * *unconv = Ritz values inside the window not converged yet, *definite =
 * those of them whose residual interval [theta - r, theta + r] lies inside
 * the window (it holds an eigenvalue of A on the complement of the locked
 * vectors: one not found yet).  The others may be spurious: a mixture of
 * eigenvectors below and above the window has its Ritz value inside it
 * and never converges; the count decides for them.  The next iteration
 * is partial (classify) when the window's Ritz values, the converged and
 * the others, agree in number with the estimate and partial_ok is 2 (this
 * iteration filtered every active column) or 1 and a pair is locked now
 * (a partial iteration that made progress); 0: never. */
static int lock(cf_ws *w, const cf_plan *p, double thr, int *nl, int k, int partial_ok, int guard, double *lth,
                double *lres, int *nf, int *unconv, int *definite)
{
    int *ord = malloc(((size_t)k + 1) * 2 * sizeof *ord), *cls = ord + k + 1, nlock = 0, m = 0;
    PL_CHECK(ord, PL_ERR_MEM, "out of host memory");
    *unconv = *definite = 0;
    for (int j = 0; j < k; j++) {
        const double t = w->theta[j], r = w->res[j];
        const int in = t >= p->a && t <= p->b, conv = r <= thr;
        nlock += in && conv;
        if (in && !conv) (*unconv)++;
        if (in && !conv && t - r >= p->a && t + r <= p->b) (*definite)++;
    }
    const int partial = (partial_ok == 2 || (partial_ok == 1 && nlock > 0)) && fabs(*nl + nlock + *unconv - p->est) <= p->est_err + 0.5;
    classify(w, p, thr, k, partial, guard, cls);
    int nfil = 0;
    for (int j = 0; j < k; j++) nfil += cls[j] == CF_FILTER;
    if (partial && nfil == 0) classify(w, p, thr, k, 0, 0, cls); /* nothing left to refine: all again */
    *nf = 0;
    for (int c = CF_LOCK; c <= CF_FILTER; c++)
        for (int j = 0; j < k; j++)
            if (cls[j] == c) ord[m++] = j, *nf += c == CF_FILTER;
    int rc = PL_OK, moved = 0;
    for (int c = 0; c < k; c++) moved |= ord[c] != c;
    if (moved) {
        double *Y = w->Y;
        memset(Y, 0, (size_t)k * k * sizeof *Y);
        for (int c = 0; c < k; c++) Y[(size_t)c * k + ord[c]] = 1.0;
        rc = w->be->basis_update(w->be, w->n, k, k, w->V + (size_t)*nl * w->ld, w->ld, Y, k);
    }
    for (int c = 0; c < nlock; c++) {
        lth[*nl + c] = w->theta[ord[c]];
        lres[*nl + c] = w->res[ord[c]];
    }
    *nl += nlock;
    free(ord);
    return rc;
}

static int cmp_val(const void *x, const void *y)
{
    const double *a = x, *b = y;
    return (a[0] > b[0]) - (a[0] < b[0]);
}

/* The returned pairs: order and selection by mode, V[:, 0:nret] = them. */
static int hand_over(cf_ws *w, const cf_options *o, int nl, const double *lth, const double *lres, lz_result *res)
{
    double *key = malloc(((size_t)nl + 1) * 2 * sizeof *key);
    PL_CHECK(key, PL_ERR_MEM, "out of host memory");
    for (int i = 0; i < nl; i++) {
        const double t = lth[i];
        key[2 * i] = o->mode == CF_TARGET ? fabs(t - o->target) : (o->mode == CF_LARGEST ? -t : t);
        key[2 * i + 1] = (double)i;
    }
    qsort(key, (size_t)nl, 2 * sizeof *key, cmp_val);
    int nret = o->mode == CF_INTERVAL || nl < o->nev ? nl : o->nev, rc = PL_OK;
    res->nev = nret;
    res->eigenvalues = malloc(((size_t)nret + 1) * sizeof(double));
    res->residuals = malloc(((size_t)nret + 1) * sizeof(double));
    PL_CHECK_GOTO(res->eigenvalues && res->residuals, PL_ERR_MEM, out, rc, "out of host memory");
    memset(w->Y, 0, (size_t)(nl ? nl : 1) * (size_t)(nret ? nret : 1) * sizeof(double));
    for (int c = 0; c < nret; c++) {
        const int i = (int)key[2 * c + 1];
        res->eigenvalues[c] = lth[i];
        res->residuals[c] = lres[i];
        w->Y[(size_t)c * nl + i] = 1.0;
    }
    if (o->want_vectors && nret > 0) {
        PL_CALL_GOTO(w->be->basis_update(w->be, w->n, nl, nret, w->V, w->ld, w->Y, nl), out, rc);
        res->vectors = w->V;
        res->ld = w->ld;
        res->be = w->be;
        w->V = NULL; /* the result owns it */
    }
out:
    free(key);
    return rc;
}

/* Per-iteration progress line and the stop decision; returns 1 to stop. */
static int decide(const cf_options *o, const cf_plan *p, const cf_info *in, int nf, int unconv, int definite,
                  int *stable, int *prev_found, int it, double t0, double loss, int rank)
{
    const int found = in->found;
    const int agree = fabs(found - p->est) <= p->est_err + 0.5;
    const int enough = o->mode == CF_INTERVAL || found >= o->nev;
    if (rank == 0 && !o->quiet)
        pl_info("chebfd: iteration %d: degree %d, %d column(s) filtered, %d converged in [%.6g, %.6g] (estimate %.1f +- %.1f), %d Ritz "
                "values in it converging (%d surely inside), %lld SpMMVs, orthogonality %.1e, %.1f s",
                it, p->degree, nf, found, p->a, p->b, p->est, p->est_err, unconv, definite, (long long)in->spmmv, loss,
                pl_wtime() - t0);
    if (definite == 0 && agree && enough) return 1;
    if (definite == 0 && found == *prev_found) (*stable)++;
    else *stable = 0;
    *prev_found = found;
    return *stable >= CF_STABLE;
}

static void why_not(const cf_options *o, const cf_plan *p, const cf_info *in, int definite, int max_iter, char *why,
                    size_t len)
{
    if (definite > 0)
        snprintf(why, len, "%d Ritz value(s) inside the window had not met the tolerance after %d iterations "
                 "(max_restarts = %d)", definite, in->iterations, max_iter);
    else if (o->mode != CF_INTERVAL && in->found < o->nev)
        snprintf(why, len, "only %d eigenvalue(s) found in the window [%.6g, %.6g] chosen for nev = %d", in->found,
                 p->a, p->b, o->nev);
    else
        snprintf(why, len, "found %d eigenvalue(s) in the window, but the KPM estimate is %.1f +- %.1f "
                 "(unchanged over %d iterations; the search block of %d may be too small, see search_size)",
                 in->found, p->est, p->est_err, CF_STABLE, p->nb);
}

int cf_solve(pl_op *op, const cf_options *o, const cf_plan *p, lz_result *res, cf_info *info)
{
    memset(res, 0, sizeof *res);
    res->verify_bound = -1.0; /* no verify search */
    memset(info, 0, sizeof *info);
    const double t0 = pl_wtime();
    cf_ws w;
    PL_CALL(ws_init(&w, op, o, p));
    if (w.be->mem_info) { /* every block is allocated now: the device's peak in use */
        int dev = 0;
        size_t fr = 0, tot = 0;
        if (w.be->mem_info(w.be, &dev, &fr, &tot) == PL_OK) info->device_used = (double)(tot - fr);
    }
    const int max_iter = o->max_iter > 0 ? o->max_iter : CF_ITER_AUTO, deg = p->degree < 1 ? 1 : p->degree;
    const double cen = 0.5 * (p->emax + p->emin), h = 0.5 * (p->emax - p->emin);
    /* ||H|| from the bounds without their 1 % margins (kpm_bounds), and the
     * test 1 % stricter than tol ||H|| for the residual bounds they hold */
    const double span = (p->emax - p->emin) / 102.0;
    const double nrm = fmax(fabs(p->emin + span), fabs(p->emax - span)), thr = 0.99 * o->tol * nrm;
    double *coef = malloc(((size_t)deg + 1) * sizeof *coef), *lth = malloc(((size_t)w.nb + 1) * sizeof *lth),
           *lres = malloc(((size_t)w.nb + 1) * sizeof *lres);
    int rc = PL_OK, nl = 0, nf = w.nb, unconv = 0, definite = 0, stable = 0, prev_found = -1, done = 0;
    const int guard = guard_default();
    PL_CHECK_GOTO(coef && lth && lres, PL_ERR_MEM, out, rc, "out of host memory");
    cf_filter_coef((p->a - cen) / h, (p->b - cen) / h, deg, p->kernel, coef);
    {
        cf_plan q = *p;
        q.degree = deg;
        for (int j = 0; j < w.nb; j++) PL_CALL_GOTO(cf_random_column(&w, j), out, rc);
        for (int it = 1; it <= max_iter && !done; it++) {
            const int k = w.nb - nl;
            double loss = 0.0;
            const int nfil = nf;
            PL_CALL_GOTO(filter(&w, &q, coef, w.nb - nf, nf), out, rc);
            PL_CALL_GOTO(cf_orthonormalize(&w, nl, k, &loss), out, rc);
            PL_CALL_GOTO(cf_rayleigh_ritz(&w, nl, k), out, rc);
            PL_CALL_GOTO(cf_residuals(&w, nl, k), out, rc);
            /* partial next: after a full iteration, or a partial one that locks a pair */
            const int partial_ok = guard < 0 ? 0 : (nf == k ? 2 : 1);
            PL_CALL_GOTO(lock(&w, p, thr, &nl, k, partial_ok, guard, lth, lres, &nf, &unconv, &definite), out, rc);
            info->iterations = it;
            info->found = nl;
            info->spmmv = w.spmmv;
            done = decide(o, p, info, nfil, unconv, definite, &stable, &prev_found, it, t0, loss, w.rank);
            if (nl == w.nb) done = 1;
        }
    }
    {
        const int agree = fabs(nl - p->est) <= p->est_err + 0.5;
        const int ok = definite == 0 && agree && (o->mode == CF_INTERVAL || nl >= o->nev);
        res->reason = ok ? LZ_CONVERGED : LZ_MAX_RESTARTS;
        if (!ok) why_not(o, p, info, definite, max_iter, info->why, sizeof info->why);
    }
    PL_CALL_GOTO(hand_over(&w, o, nl, lth, lres, res), out, rc);
    res->nconv = res->nev;
    res->ncv = w.nb;
    res->normest = nrm;
    res->restarts = info->iterations;
    res->max_restarts = max_iter;
    res->iterations = w.spmmv + p->kpm_products;
    res->orth_loss = w.orth;
    res->hist_nev = res->nev;
    info->orth = w.orth;
    info->svqb = w.svqb;
    res->time.total = pl_wtime() - t0;
out:
    if (rc != PL_OK) lz_result_destroy(res);
    free(coef);
    free(lth);
    free(lres);
    ws_free(&w);
    return rc;
}
