/* krylov_schur.c — Krylov-Schur for a few wanted eigenpairs of a general
 * (nonsymmetric) real operator, in real arithmetic.
 *
 * Method: G. W. Stewart, "A Krylov-Schur algorithm for large eigenproblems",
 * SIAM J. Matrix Anal. Appl. 23 (2002) 601-614; the restart as in SLEPc's
 * EPSKRYLOVSCHUR (Hernandez, Roman, Tomas, "Krylov-Schur methods in SLEPc",
 * SLEPc technical report STR-7, 2007).
 *
 * Relation kept throughout: A V_k = V_k S_k + v_k b^T with V orthonormal
 * (ncv + 1 backend columns, shared core krylov.c), stored as the
 * (ncv + 1) x ncv matrix Sb = [S; b^T] (row j of column i = the coefficient
 * of v_j in A v_i).
 * Algorithm (one cycle):
 *   expansion j = k .. m-1: w = A v_j into column j+1, classical
 *     Gram-Schmidt against v_0..v_j with a second pass only when the first
 *     cancelled more than half of ||w||^2 (DGKS, as SLEPc; the same fused
 *     kernels as the Lanczos),
 *     Sb[0:j+1, j] = coefficients, Sb[j+1, j] = ||w||, v_{j+1} = w / ||w||.
 *   projected problem (host LAPACKE on rank 0, broadcast so that every rank
 *     decides alike): real Schur form S = Q T Q^T (dgees, no sort), then the
 *     diagonal blocks are ordered most wanted first by dtrexc (a 2 x 2 block,
 *     a complex-conjugate pair, moves as one), eigenvectors of T by dtrevc,
 *     back-transformed y = Q x.  Residual estimate of Ritz pair i:
 *     |b^T y_i| / ||y_i|| (complex y: the modulus), because
 *     A V y - lambda V y = v_m (b^T y).
 *   convergence: ||A x - lambda x|| <= tol * max(|lambda|, normest) for the
 *     leading wanted values; nev is raised by one when the nev-th wanted
 *     value is the first of a conjugate pair, so pairs stay complete.
 *   restart: keep the kk leading Schur vectors, kk = nret + (m - nret) / 2
 *     moved by one when it would split a 2 x 2 block: V[:, 0:kk] = V Q[:, 0:kk],
 *     S = T[0:kk, 0:kk], b^T = b^T Q[:, 0:kk], v_kk = v_m.
 *   verify (as in lanczos.c, option verify): when the nret wanted pairs
 *     converge, their Schur vectors are locked (an approximate invariant
 *     subspace: A V_l = V_l T_l) and the iteration goes on in the complement
 *     from a fresh random vector; the projected problem there is the trailing
 *     block of S, whose eigenvalues are those of A outside the locked set.
 *     If its most wanted value converges and beats the least wanted locked
 *     one, a wanted eigenvalue (e.g. a copy of a multiple one) was missed:
 *     unlock and iterate on the whole basis.  (An unconverged value beyond
 *     the edge proves nothing: nonsymmetric Ritz values can lie far outside
 *     the spectrum, e.g. on lns_3937.)  If it converges without passing the
 *     edge (to tol, or to the verify tolerance max(tol, verify_tol),
 *     sqrt(tol) by default, with its estimate to spare before the edge),
 *     the locked set is the answer; if the search exceeds twice the
 *     restarts that found the set (+ 20), the set is accepted and the
 *     result says the verification was inconclusive.
 * Final Ritz vectors: x = V y, y normalised to ||Re y||^2 + ||Im y||^2 = 1;
 * residuals recomputed explicitly, for a pair x = xr + i xi, lambda = a + ib:
 * ||A xr - a xr + b xi||^2 + ||A xi - a xi - b xr||^2.
 * Residual check: the estimates hold only while the relation is exact, and
 * an unlock after verify breaks it (locking dropped the Schur vectors'
 * coupling).  When a returned pair's explicit residual exceeds 10 x the
 * test, the iteration starts over from the sum of the returned vectors with
 * a fresh relation (at most KS_RECHECKS times, within max_restarts), else
 * the result says LZ_INACCURATE.
 * Budget: max_restarts, or with max_restarts = auto a budget that scales
 * with N (about ARPACK's default in products) and a stop as LZ_STAGNATED
 * once the residuals stop falling after 1000 restarts (krylov_impl.h,
 * kr_progress; shared with lanczos.c).
 *
 * The cycle is kr_run (kr_cycle.c), shared with the Lanczos; this file
 * holds the Krylov-Schur hooks of its phases (ks_method).
 *
 * Written against spmv.h only: no backend headers, no conditional code. */
#include <float.h>
#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "krylov_impl.h"
#include "lanczos.h"
#include "pl_error.h"

/* The second Gram-Schmidt pass leaves the coefficients of at most KS_KEEP2
 * tol ||x|| in the new column (krylov.c, kr_ws.keep2) and out of the Schur
 * matrix, so the relation A V = V S + v b^T stays exact and the basis keeps
 * overlaps below KS_KEEP2 tol: Ritz values and residual estimates move by
 * about that times ||A||, far below the test's tol max(|lambda|, normest).
 * Where nothing passes, the correction sweep over the basis becomes the
 * normalisation alone (at tol 1e-8: uhbr_like, docs/performance.md). */
#define KS_KEEP2 1e-3

/* ---- wanted order ------------------------------------------------------ */
/* The key that "most wanted" maximises. */
static double want_key(int which, double re, double im)
{
    switch (which) {
    case PL_WHICH_LARGEST_MAGNITUDE: return hypot(re, im);
    case PL_WHICH_SMALLEST:
    case PL_WHICH_SMALLEST_REAL: return -re;
    case PL_WHICH_LARGEST_IMAGINARY: return fabs(im);
    default: return re; /* largest, largest_real */
    }
}

/* Eigenvalues of the 1 x 1 or 2 x 2 diagonal block of T (ld) at i; returns
 * the block size.  A 2 x 2 block (T[i+1][i] != 0) holds a pair re +- i im. */
static int block_eig(const double *T, int n, int ld, int i, double *re, double *im)
{
    if (i + 1 < n && T[(size_t)i * ld + i + 1] != 0.0) {
        double a = T[(size_t)i * ld + i], b = T[(size_t)(i + 1) * ld + i], c = T[(size_t)i * ld + i + 1],
               d = T[(size_t)(i + 1) * ld + i + 1];
        double p = 0.5 * (a - d), disc = p * p + b * c;
        *re = 0.5 * (a + d);
        *im = disc < 0 ? sqrt(-disc) : 0.0;
        return 2;
    }
    *re = T[(size_t)i * ld + i];
    *im = 0.0;
    return 1;
}

/* ---- solver state ------------------------------------------------------ */
typedef struct ks_ws {
    kr_ws *w;
    int m, ldb;      /* ncv; leading dimension of Sb (m + 1)               */
    double *Sb;      /* (m + 1) x m: the Krylov-Schur relation              */
    double *T, *Q;   /* s x s Schur form and vectors of the projected block */
    double *X;       /* s x s eigenvectors Q x (dtrevc columns)             */
    double *wr, *wi; /* s eigenvalues in wanted order (diagonal of T)       */
    double *est;     /* s residual estimates                                */
    double *bc;      /* broadcast buffer                                    */
    double *scr;     /* scratch m x m                                       */
    double *work;    /* LAPACK workspace, lwork doubles                     */
    lapack_int lwork;
    lapack_logical *sel;
    double *lock_re, *lock_im, *lock_est; /* nev + 1: the locked values, estimates */
    int verify_start, verify_end; /* restarts when the locked set's search      */
                                  /* started / must end                         */
} ks_ws;

/* Rank 0: the real Schur form T = Q^T S Q of the block Sb[off:off+s,
 * off:off+s] (dgees, no sort), then its leading diagonal blocks, up to
 * about nvec + half the rest, most wanted first (selection sort by dtrexc; a
 * 2 x 2 block, a complex-conjugate pair, moves as one); wr, wi = the
 * eigenvalues of the diagonal blocks in their new order.  Returns LAPACK's
 * info. */
static int ks_schur_sorted(ks_ws *k, int off, int s, int which, int nvec)
{
    for (int c = 0; c < s; c++)
        for (int r = 0; r < s; r++) k->T[(size_t)c * s + r] = k->Sb[(size_t)(off + c) * k->ldb + off + r];
    lapack_int sdim = 0;
    int info = LAPACKE_dgees_work(LAPACK_COL_MAJOR, 'V', 'N', NULL, s, k->T, s, &sdim, k->wr, k->wi, k->Q, s, k->work,
                                  k->lwork, k->sel);
    int lim = nvec + 3 + (s - nvec) / 2;
    if (lim > s) lim = s;
    for (int p = 0; info == 0 && p < lim;) {
        int best = -1;
        double bkey = 0.0, re, im;
        for (int i = p; i < s;) {
            int bs = block_eig(k->T, s, s, i, &re, &im);
            double key = want_key(which, re, im);
            if (best < 0 || key > bkey) {
                best = i;
                bkey = key;
            }
            i += bs;
        }
        if (best != p) {
            lapack_int ifst = best + 1, ilst = p + 1;
            lapack_int e = LAPACKE_dtrexc_work(LAPACK_COL_MAJOR, 'V', s, k->T, s, k->Q, s, &ifst, &ilst, k->work);
            if (e != 0) break; /* a swap too ill-conditioned to do: keep this order */
        }
        p += block_eig(k->T, s, s, p, &re, &im);
    }
    for (int i = 0; i < s;) {
        double re, im;
        int bs = block_eig(k->T, s, s, i, &re, &im);
        k->wr[i] = re;
        k->wi[i] = im;
        if (bs == 2) {
            k->wr[i + 1] = re;
            k->wi[i + 1] = -im;
        }
        i += bs;
    }
    return info;
}

/* Rank 0, after ks_schur_sorted: the eigenvectors y = Q x of the first nv values (dtrevc) into X, and the
 * residual estimates |b^T y| / ||y|| (b = the coupling row Sb[mm, off:mm];
 * complex y: the modulus), INFINITY beyond nv.  Returns LAPACK's info
 * (info on entry: that of the Schur form). */
static int ks_ritz_estimates(ks_ws *k, int off, int mm, int nv, int info)
{
    const int s = mm - off;
    if (info == 0 && nv > 0) {
        lapack_int mout = 0;
        for (int i = 0; i < s; i++) k->sel[i] = i < nv;
        info = LAPACKE_dtrevc_work(LAPACK_COL_MAJOR, 'R', 'S', k->sel, s, k->T, s, NULL, 1, k->scr, s, nv, &mout,
                                   k->work);
        for (int c = 0; info == 0 && c < nv; c++)
            for (int r = 0; r < s; r++) {
                double a = 0.0;
                for (int i = 0; i < s; i++) a += k->Q[(size_t)i * s + r] * k->scr[(size_t)c * s + i];
                k->X[(size_t)c * s + r] = a;
            }
    }
    const double *b = k->Sb + (size_t)off * k->ldb + mm; /* row mm, stride ldb */
    for (int i = nv; i < s; i++) k->est[i] = INFINITY;
    for (int i = 0; info == 0 && i < nv;) {
        int pair = k->wi[i] > 0 && i + 1 < nv;
        const double *yr = k->X + (size_t)i * s, *yi = pair ? yr + s : NULL;
        double br = 0.0, bi = 0.0, nr = 0.0;
        for (int r = 0; r < s; r++) {
            br += b[(size_t)r * k->ldb] * yr[r];
            nr += yr[r] * yr[r];
            if (pair) {
                bi += b[(size_t)r * k->ldb] * yi[r];
                nr += yi[r] * yi[r];
            }
        }
        k->est[i] = nr > 0 ? hypot(br, bi) / sqrt(nr) : INFINITY;
        if (pair) k->est[i + 1] = k->est[i];
        i += pair ? 2 : 1;
    }
    return info;
}

/* The projected problem's arrays for a block of s values to the broadcast
 * buffer (to_bc) or back. */
static void ks_bc_copy(ks_ws *k, int s, int to_bc)
{
    const size_t s2 = (size_t)s * (size_t)s;
    double *part[6] = {k->T, k->Q, k->X, k->wr, k->wi, k->est};
    const size_t len[6] = {s2, s2, s2, (size_t)s, (size_t)s, (size_t)s};
    double *p = k->bc;
    for (int i = 0; i < 6; p += len[i], i++) {
        if (to_bc) memcpy(p, part[i], len[i] * sizeof(double));
        else memcpy(part[i], p, len[i] * sizeof(double));
    }
}

/* Projected problem of the block Sb[off:mm, off:mm] (s = mm - off) with the
 * coupling row Sb[mm, off:mm]: real Schur form with its leading blocks in
 * wanted order (the first nvec + about half the rest: what a restart keeps),
 * all eigenvalues, the eigenvectors y = Q x and residual estimates of the
 * first nvec values (one more when the nvec-th opens a conjugate pair).
 * On rank 0 (LAPACK's _work variants: no NaN scans, no allocation),
 * broadcast so that every rank decides alike. */
static int ks_projected(ks_ws *k, int off, int mm, int which, int nvec)
{
    kr_ws *w = k->w;
    double t0 = pl_wtime();
    const int s = mm - off;
    const size_t nb = 3 * (size_t)s * (size_t)s + 3 * (size_t)s + 1;
    if (w->rank == 0) {
        int info = ks_schur_sorted(k, off, s, which, nvec);
        int nv = nvec < s ? nvec : s;
        if (nv >= 1 && nv < s && k->wi[nv - 1] > 0) nv++;
        info = ks_ritz_estimates(k, off, mm, nv, info);
        ks_bc_copy(k, s, 1);
        k->bc[nb - 1] = (double)info;
    }
    if (w->size > 1) KR_MPI(MPI_Bcast(k->bc, (int)nb, MPI_DOUBLE, 0, w->comm));
    int info = (int)k->bc[nb - 1];
    PL_CHECK(info == 0, PL_ERR_LAPACK, "LAPACKE dgees/dtrexc/dtrevc on the %d x %d projected matrix failed (info %d)", s,
             s, info);
    if (w->rank != 0) ks_bc_copy(k, s, 0);
    w->t.projected += pl_wtime() - t0;
    return PL_OK;
}

/* Keep kk leading Schur vectors of the block [off, mm): V, Sb and the
 * coupling row are transformed; column off + kk receives v_mm (or a random
 * vector when v_mm is not valid).  *ok = 0 when no new direction exists. */
static int ks_restart(ks_ws *k, int off, int mm, int kk, int vm_valid, int *ok)
{
    kr_ws *w = k->w;
    const int s = mm - off, ldb = k->ldb;
    memcpy(w->Ysel, k->Q, (size_t)s * kk * sizeof(double));
    PL_CALL(kr_update_basis(w, off, s, kk));
    /* rows above the block (locked coupling): Sb[0:off, off:off+kk] = Sb[0:off, off:mm] Q[:, 0:kk] */
    for (int c = 0; c < kk; c++) {
        for (int r = 0; r < off; r++) {
            double a = 0.0;
            for (int i = 0; i < s; i++) a += k->Sb[(size_t)(off + i) * ldb + r] * k->Q[(size_t)c * s + i];
            k->scr[(size_t)c * (off + 1) + r] = a;
        }
        double bq = 0.0; /* new coupling row b^T Q */
        for (int i = 0; i < s; i++) bq += k->Sb[(size_t)(off + i) * ldb + mm] * k->Q[(size_t)c * s + i];
        k->scr[(size_t)c * (off + 1) + off] = bq;
    }
    for (int c = off; c < k->m; c++) memset(k->Sb + (size_t)c * ldb, 0, (size_t)ldb * sizeof(double));
    for (int c = 0; c < kk; c++) {
        double *col = k->Sb + (size_t)(off + c) * ldb;
        memcpy(col, k->scr + (size_t)c * (off + 1), (size_t)off * sizeof(double));
        for (int r = 0; r < kk; r++) col[off + r] = k->T[(size_t)c * s + r];
        col[off + kk] = vm_valid ? k->scr[(size_t)c * (off + 1) + off] : 0.0;
    }
    *ok = 1;
    if (vm_valid) {
        double t0 = pl_wtime();
        PL_CALL(w->be->copy(w->be, w->n, kr_col(w, mm), kr_col(w, off + kk)));
        w->t.restart += pl_wtime() - t0;
    } else {
        int ex;
        PL_CALL(kr_random_direction(w, off + kk, 0, &ex));
        *ok = !ex;
    }
    return PL_OK;
}

/* Number of values to return for nev wanted ones among s sorted values:
 * nev, or nev + 1 when value nev - 1 is the first of a conjugate pair. */
static int ks_nret(const ks_ws *k, int nev, int s)
{
    int n = nev < s ? nev : s;
    if (n >= 1 && n < s && k->wi[n - 1] > 0) n++;
    return n;
}

/* kk to keep at a restart of a block of s values with nret wanted: about
 * half the rest, never splitting a 2 x 2 block, 1 <= kk <= s - 1. */
static int ks_keep(const ks_ws *k, int nret, int s)
{
    int kk = nret + (s - nret) / 2;
    if (kk < nret + 1) kk = nret + 1;
    if (kk > s - 1) kk = s - 1;
    if (kk >= 1 && kk < s && k->wi[kk - 1] > 0) kk = kk + 1 <= s - 1 ? kk + 1 : kk - 1;
    if (kk < 1) kk = 1;
    return kk;
}

/* Eigenvectors of the nret leading values of the sorted projected block
 * [off, off + s) into w->Ysel (s x nret), normalised; then
 * V[:, off:off+nret] = V[:, off:off+s] Ysel. */
static int ks_vectors(ks_ws *k, int off, int s, int nret)
{
    kr_ws *w = k->w;
    for (int i = 0; i < nret;) {
        int pair = k->wi[i] > 0 && i + 1 < s;
        int cols = pair ? 2 : 1;
        double nr = 0.0;
        for (int c = 0; c < cols; c++)
            for (int r = 0; r < s; r++) nr += k->X[(size_t)(i + c) * s + r] * k->X[(size_t)(i + c) * s + r];
        double f = nr > 0 ? 1.0 / sqrt(nr) : 0.0;
        for (int c = 0; c < cols && i + c < nret; c++)
            for (int r = 0; r < s; r++) w->Ysel[(size_t)(i + c) * s + r] = f * k->X[(size_t)(i + c) * s + r];
        i += cols;
    }
    PL_CALL(kr_update_basis(w, off, s, nret));
    return PL_OK;
}

/* Explicit residuals of the nret Ritz vectors in columns 0..nret-1 into
 * resid, through the work columns m and m - 1; for a pair x = xr + i xi,
 * lambda = a + ib: ||A xr - a xr + b xi||^2 + ||A xi - a xi - b xr||^2. */
static int ks_residuals(kr_ws *w, const ks_ws *k, int nret, double *resid)
{
    const int m = k->m;
    double t0 = pl_wtime(), tsp = w->t.spmv;
    double *r1 = kr_col(w, m), *r2 = kr_col(w, m - 1);
    for (int i = 0; i < nret;) {
        double a = k->wr[i], b = k->wi[i], n1, n2 = 0.0;
        if (b > 0 && i + 1 < nret) { /* pair: columns i (Re x), i + 1 (Im x) */
            const double *xr = kr_col(w, i), *xi = kr_col(w, i + 1);
            PL_CALL(kr_apply(w, i, m));
            PL_CALL(w->be->axpy(w->be, w->n, -a, xr, r1));
            PL_CALL(w->be->axpy(w->be, w->n, b, xi, r1));
            PL_CALL(pl_vec_nrm2(w->op, r1, &n1));
            PL_CALL(kr_apply(w, i + 1, m - 1));
            PL_CALL(w->be->axpy(w->be, w->n, -a, xi, r2));
            PL_CALL(w->be->axpy(w->be, w->n, -b, xr, r2));
            PL_CALL(pl_vec_nrm2(w->op, r2, &n2));
            resid[i] = resid[i + 1] = hypot(n1, n2);
            i += 2;
            continue;
        }
        PL_CALL(kr_residual_real(w, i, a, m, &resid[i]));
        i++;
    }
    w->t.residual += pl_wtime() - t0 - (w->t.spmv - tsp);
    return PL_OK;
}

static void ks_free(ks_ws *k)
{
    free(k->Sb);
    free(k->T);
    free(k->Q);
    free(k->X);
    free(k->wr);
    free(k->wi);
    free(k->est);
    free(k->bc);
    free(k->scr);
    free(k->sel);
    free(k->work);
    free(k->lock_re);
    free(k->lock_im);
    free(k->lock_est);
}

/* The final check of the returned pairs: explicit residual <= KS_RES_FACTOR *
 * tol * scale.  The estimates and the explicit residuals of an exact
 * relation differ by rounding, about eps sqrt(ncv) normest = 1.6e-15 normest
 * at ncv 256: a factor 10 leaves room for it even at the smallest tolerance
 * (1e-15) and is the factor tests/nonsym/nonsym.py allows.  A failed check
 * starts over from the returned vectors (kr_reseed, krylov.c) at most KS_RECHECKS
 * times; then the result says LZ_INACCURATE. */
#define KS_RES_FACTOR 10.0
#define KS_RECHECKS 3

/* ---- the method's hooks (kr_method; the cycle: kr_cycle.c) ------------- */

/* expand: column j + 1 = A v_j orthogonalised against v_0..v_j; the
 * coefficients are column j of Sb. */
static int ks_step(kr_solver *s, int j, double *nrm, int *in_span)
{
    ks_ws *k = s->ctx;
    kr_ws *w = s->w;
    PL_CALL(kr_apply(w, j, j + 1));
    PL_CALL(kr_orthogonalize(w, j + 1, j + 1, w->cf, nrm, in_span));
    double *col = k->Sb + (size_t)j * k->ldb;
    memcpy(col, w->cf, (size_t)(j + 1) * sizeof(double));
    for (int i = j + 1; i < k->ldb; i++) col[i] = 0.0;
    return PL_OK;
}

static void ks_couple(kr_solver *s, int j, double beta)
{
    ks_ws *k = s->ctx;
    k->Sb[(size_t)j * k->ldb + j + 1] = beta;
}

/* expand ended early (span(V) is the whole space): S is exact, no coupling
 * row. */
static void ks_expanded(kr_solver *s)
{
    ks_ws *k = s->ctx;
    const int mm = s->mm;
    if (mm >= k->m) return;
    if (!s->vm_valid) s->whole_space = 1;
    for (int c = 0; c < mm; c++) k->Sb[(size_t)c * k->ldb + mm] = 0.0;
}

/* verify: the most wanted value of the complement of the locked Schur
 * vectors (the trailing block of S) against the least wanted locked one. */
static int ks_verify(kr_solver *s, int *verdict)
{
    ks_ws *k = s->ctx;
    const lz_options *opt = s->opt;
    const int nret = s->nwant, nlock = s->nlock, sz = s->mm - nlock, which = opt->which;
    const double tol = opt->tol;
    PL_CALL(ks_projected(k, nlock, s->mm, which, 1));
    const double thr = k->wr[0], thi = k->wi[0], estc = k->est[0];
    for (int i = 0; i < sz; i++) s->normest = fmax(s->normest, hypot(k->wr[i], k->wi[i]));
    double scale = kr_scale(hypot(thr, thi), kr_conv_norm(s));
    /* unlike a symmetric Ritz value, a nonsymmetric one may lie outside the
     * spectrum (in the field of values): only a converged value beyond the
     * edge proves a missed eigenvalue */
    int beyond = want_key(which, thr, thi) > want_key(which, k->lock_re[nret - 1], k->lock_im[nret - 1]) + tol * scale;
    int conv_c = kr_converged_relative(estc, hypot(thr, thi), kr_conv_norm(s), tol, NULL);
    double worst = 0.0;
    for (int i = 0; i < nret; i++)
        worst = fmax(worst, k->lock_est[i] / kr_scale(hypot(k->lock_re[i], k->lock_im[i]), kr_conv_norm(s)));
    if (beyond && conv_c) {
        s->nlock = 0; /* unlock: the whole relation A V = V S + v b^T holds */
        k->verify_start = s->restarts;
        s->res->missed++;
        *verdict = KR_UNLOCKED;
        return PL_OK;
    }
    PL_CALL(kr_report(s, k->lock_re, k->lock_im, k->lock_est, opt->nev, worst, 1));
    /* the verify tolerance, as in lanczos.c: the search has shown where
     * the complement's most wanted value lies once it has converged to
     * max(tol, verify_tol) (sqrt(tol) by default) with est to spare before
     * the edge; it need not be resolved to tol (dlr1_like: 480 products
     * instead of 648, the same values) */
    const double vtol = fmax(tol, opt->verify_tol > 0.0 ? opt->verify_tol : sqrt(tol));
    const int conv_v = kr_converged_relative(estc, hypot(thr, thi), kr_conv_norm(s), vtol, NULL);
    const int clear = want_key(which, thr, thi) + estc <
                      want_key(which, k->lock_re[nret - 1], k->lock_im[nret - 1]) - tol * scale;
    const int shown = conv_c || (conv_v && clear);
    if (shown || s->whole_space || s->restarts >= s->w->pg.budget || s->restarts >= k->verify_end) {
        /* accepted: the complement's most wanted value converged without
         * passing the edge, or the budget of the search (twice the restarts
         * that found the set, + 20) is spent */
        if (!shown && !s->whole_space) s->res->verify_inconclusive = 1;
        *verdict = KR_ACCEPTED;
        return PL_OK;
    }
    int kk = ks_keep(k, 1, sz), ok = 0;
    PL_CALL(ks_restart(k, nlock, s->mm, kk, s->vm_valid, &ok));
    PL_CHECK(ok, PL_ERR_INTERNAL, "no restart vector in the verification phase");
    s->k = nlock + kk;
    *verdict = KR_RESTARTED;
    return PL_OK;
}

/* extract: the sorted Schur form, nret = nev (+ 1 to complete a pair)
 * wanted values and their estimates. */
static int ks_extract(kr_solver *s)
{
    ks_ws *k = s->ctx;
    const int nev = s->opt->nev, mm = s->mm;
    PL_CALL(ks_projected(k, 0, mm, s->opt->which, nev + 1));
    for (int i = 0; i < mm; i++) s->normest = fmax(s->normest, hypot(k->wr[i], k->wi[i]));
    s->nwant = ks_nret(k, nev, mm);
    for (int i = 0; i < nev || i < s->nwant; i++) {
        s->ritz[i] = i < mm ? k->wr[i] : NAN;
        s->ritz_im[i] = i < mm ? k->wi[i] : NAN;
        s->est[i] = i < mm ? k->est[i] : INFINITY;
    }
    return PL_OK;
}

/* lock: the nret Schur vectors (their coupling to v_m, below the
 * tolerance, is dropped); their complement is searched from a random
 * column nret. */
static int ks_lock(kr_solver *s)
{
    ks_ws *k = s->ctx;
    const int nret = s->nwant;
    int ok = 0;
    for (int i = 0; i < nret; i++) {
        k->lock_re[i] = k->wr[i];
        k->lock_im[i] = k->wi[i];
        k->lock_est[i] = k->est[i];
    }
    PL_CALL(ks_restart(k, 0, s->mm, nret, 0, &ok));
    PL_CHECK(ok, PL_ERR_INTERNAL, "verification vector vanished (nev = %d, N = %lld)", s->opt->nev,
             (long long)s->w->N);
    k->verify_end = s->restarts + 2 * (s->restarts - k->verify_start) + 20;
    return PL_OK;
}

/* restart (main phase): keep about half of the unwanted Schur vectors. */
static int ks_restart_main(kr_solver *s, int *ok)
{
    ks_ws *k = s->ctx;
    int kk = ks_keep(k, s->nwant, s->mm);
    PL_CALL(ks_restart(k, 0, s->mm, kk, s->vm_valid, ok));
    s->k = kk;
    return PL_OK;
}

/* finish, the residual check: the test trusted the estimates |b^T y|,
 * exact only while A V = V S + v b^T holds.  It does not after verify
 * unlocked a set (res->missed): locking dropped the Schur vectors' coupling
 * b^T Q, which is small for the eigenvectors but not for the Schur vectors
 * of close, ill-conditioned values (lns_3937: explicit residuals up to
 * 180 x the estimates).  A returned value whose explicit residual fails the
 * test by more than KS_RES_FACTOR is not converged: start a fresh, exact
 * relation from the returned vectors and iterate on (*again). */
static int ks_recheck(kr_solver *s, int *again)
{
    ks_ws *k = s->ctx;
    lz_result *res = s->res;
    const int nret = s->nwant;
    int bad = 0, lead = 0;
    for (int i = 0; i < nret; i++) {
        int ok = kr_converged_relative(res->residuals[i], hypot(k->wr[i], k->wi[i]), kr_conv_norm(s),
                                       KS_RES_FACTOR * s->opt->tol, NULL);
        bad |= !ok;
        if (ok && lead == i) lead++;
    }
    if (s->reason != LZ_CONVERGED || !bad) return PL_OK;
    res->rechecks++;
    if (res->rechecks > KS_RECHECKS || s->restarts >= s->w->pg.budget) {
        s->reason = LZ_INACCURATE;
        s->nconv = lead;
        return PL_OK;
    }
    int exhausted = 0;
    PL_CALL(kr_reseed(s->w, nret, &exhausted));
    PL_CHECK(!exhausted, PL_ERR_INTERNAL, "no start vector for the residual recheck");
    memset(k->Sb, 0, (size_t)k->ldb * k->m * sizeof(double));
    s->k = 0;
    s->nlock = 0;
    s->final_locked = 0;
    k->verify_start = s->restarts;
    s->restarts++;
    s->reason = LZ_ITERATING;
    *again = 1;
    return PL_OK;
}

/* finish: Ritz vectors to V[:, 0:nret], explicit residuals, the check. */
static int ks_finish(kr_solver *s, int *again)
{
    ks_ws *k = s->ctx;
    lz_result *res = s->res;
    const int nret = s->nwant;
    *again = 0;
    if (s->final_locked) {
        /* the locked block Sb[0:nret, 0:nret] is quasi-triangular (sorted):
         * its eigenvectors, with Q = I */
        PL_CALL(ks_projected(k, 0, nret, s->opt->which, nret));
        PL_CALL(ks_vectors(k, 0, nret, nret));
    } else {
        PL_CALL(ks_vectors(k, 0, s->mm, nret));
    }
    res->nev = nret;
    for (int i = 0; i < nret; i++) {
        res->eigenvalues[i] = k->wr[i];
        res->eigenvalues_imag[i] = k->wi[i];
    }
    if (s->opt->estimate_residuals && s->reason == LZ_CONVERGED && !s->final_locked && !res->missed &&
        !res->rechecks) {
        /* the relation A V = V S + v b^T holds: |b^T y_i| (||y_i|| = 1) is the residual of x_i = V y_i up to
         * rounding; the caller checks the result on its own problem (lanczos.h estimate_residuals) */
        for (int i = 0; i < nret; i++) res->residuals[i] = k->est[i];
        return PL_OK;
    }
    PL_CALL(ks_residuals(s->w, k, nret, res->residuals));
    return ks_recheck(s, again);
}

/* The checkpoint state: ints (krylov_impl.h), then nret, verify_start,
 * verify_end, rechecks; dbl = normest, Sb ((m + 1) x m), lock_re, lock_im,
 * lock_est (nev + 1 each). */
enum { KS_ST_NRET = KR_ST_COMMON, KS_ST_VSTART, KS_ST_VEND, KS_ST_RECHECKS, KS_ST_N };

static void ks_pack(kr_solver *s)
{
    ks_ws *k = s->ctx;
    const int m = k->m, ldb = k->ldb, nl = s->opt->nev + 1;
    const double *lock[3] = {k->lock_re, k->lock_im, k->lock_est};
    s->ints[KS_ST_NRET] = s->nwant;
    s->ints[KS_ST_VSTART] = k->verify_start;
    s->ints[KS_ST_VEND] = k->verify_end;
    s->ints[KS_ST_RECHECKS] = s->res->rechecks;
    memcpy(s->dbl + 1, k->Sb, (size_t)ldb * m * sizeof(double));
    for (int a = 0; a < 3; a++) memcpy(s->dbl + 1 + ldb * m + a * nl, lock[a], (size_t)nl * sizeof(double));
}

static int ks_unpack(kr_solver *s)
{
    ks_ws *k = s->ctx;
    const int m = k->m, ldb = k->ldb, nl = s->opt->nev + 1;
    double *lock[3] = {k->lock_re, k->lock_im, k->lock_est};
    s->nwant = (int)s->ints[KS_ST_NRET];
    k->verify_start = (int)s->ints[KS_ST_VSTART];
    k->verify_end = (int)s->ints[KS_ST_VEND];
    s->res->rechecks = (int)s->ints[KS_ST_RECHECKS];
    memcpy(k->Sb, s->dbl + 1, (size_t)ldb * m * sizeof(double));
    for (int a = 0; a < 3; a++) memcpy(lock[a], s->dbl + 1 + ldb * m + a * nl, (size_t)nl * sizeof(double));
    return PL_OK;
}

static const kr_method ks_method = {
    .id = 2, .complex_values = 1, .every_step_full = 1, .lock_room = 3,
    .step = ks_step, .injected = NULL, .couple = ks_couple, .expanded = ks_expanded,
    .verify = ks_verify, .extract = ks_extract, .lock = ks_lock, .restart = ks_restart_main,
    .pack = ks_pack, .unpack = ks_unpack, .finish = ks_finish,
};

/* The projected problem's host arrays and LAPACK workspace: dgees' optimum
 * for ncv (enough for smaller blocks), >= 3 ncv for dtrevc. */
static int ks_init(ks_ws *k, kr_ws *w, int nev)
{
    const int m = w->m;
    int err = PL_OK;
    k->w = w;
    k->m = m;
    k->ldb = m + 1;
    KR_HOST_ALLOC(k->Sb, (size_t)(m + 1) * m, fail);
    KR_HOST_ALLOC(k->T, (size_t)m * m, fail);
    KR_HOST_ALLOC(k->Q, (size_t)m * m, fail);
    KR_HOST_ALLOC(k->X, (size_t)m * m, fail);
    KR_HOST_ALLOC(k->wr, m, fail);
    KR_HOST_ALLOC(k->wi, m, fail);
    KR_HOST_ALLOC(k->est, m, fail);
    KR_HOST_ALLOC(k->bc, 3 * (size_t)m * m + 3 * (size_t)m + 1, fail);
    KR_HOST_ALLOC(k->scr, (size_t)(m + 1) * (m + 1), fail);
    KR_HOST_ALLOC(k->sel, m, fail);
    KR_HOST_ALLOC(k->lock_re, nev + 1, fail);
    KR_HOST_ALLOC(k->lock_im, nev + 1, fail);
    KR_HOST_ALLOC(k->lock_est, nev + 1, fail);
    double q = 0.0;
    lapack_int sd = 0;
    if (LAPACKE_dgees_work(LAPACK_COL_MAJOR, 'V', 'N', NULL, (lapack_int)m, k->T, (lapack_int)m, &sd, k->wr, k->wi,
                           k->Q, (lapack_int)m, &q, -1, k->sel) != 0)
        q = 0.0;
    k->lwork = (lapack_int)q > 3 * (lapack_int)m ? (lapack_int)q : 3 * (lapack_int)m;
    k->lwork += 64;
    KR_HOST_ALLOC(k->work, k->lwork, fail);
fail:
    return err;
}

int ks_solve(pl_op *op, const lz_options *opt, lz_result *res)
{
    double t_start = pl_wtime();
    int err = PL_OK;
    memset(res, 0, sizeof *res);
    res->verify_bound = -1.0;     /* no certificate (lanczos.c's alone) */
    res->reorth = LZ_REORTH_FULL; /* every step, a second pass where needed */
    res->orth_loss = -1.0;
    int64_t m = 0;
    PL_CALL(kr_check_options(op, opt, PL_WHICH_LARGEST_IMAGINARY, 2, KS_NCV_FLOOR, &m));
    PL_CHECK(!opt->inner_b, PL_ERR_ARG, "ks_solve: no B-inner product (inner_b is lz_solve's)");

    kr_ws w;
    ks_ws k;
    memset(&k, 0, sizeof k);
    PL_CALL(kr_ws_init(&w, op, (int)m, 0, opt->seed));
    w.refine_if_needed = 1; /* as SLEPc's Krylov-Schur: CGS, refined if needed */
    w.keep2 = KS_KEEP2 * opt->tol; /* the second pass's last correction only where it matters */
    PL_CALL_GOTO(ks_init(&k, &w, opt->nev), out, err);
    KR_HOST_ALLOC(res->eigenvalues, opt->nev + 1, out);
    KR_HOST_ALLOC(res->eigenvalues_imag, opt->nev + 1, out);
    KR_HOST_ALLOC(res->residuals, opt->nev + 1, out);
    kr_solver s = {.w = &w, .opt = opt, .res = res, .mt = &ks_method, .ctx = &k, .nint = KS_ST_N,
                   .ndbl = 1 + k.ldb * k.m + 3 * (opt->nev + 1)};
    PL_CALL_GOTO(kr_run(&s), out, err);
    kr_hand_over(&w, opt, res, t_start);
out:
    ks_free(&k);
    kr_ws_free(&w);
    if (err != PL_OK) lz_result_destroy(res);
    return err;
}
