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
 *     edge, the locked set is the answer; if the search exceeds twice the
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
 * Written against spmv.h only: no backend headers, no conditional code. */
#include <float.h>
#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "krylov_impl.h"
#include "lanczos.h"
#include "pl_error.h"

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
} ks_ws;

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
    const size_t s2 = (size_t)s * (size_t)s;
    const size_t nb = 3 * s2 + 3 * (size_t)s + 1;
    if (w->rank == 0) {
        int info = 0;
        for (int c = 0; c < s; c++)
            for (int r = 0; r < s; r++) k->T[(size_t)c * s + r] = k->Sb[(size_t)(off + c) * k->ldb + off + r];
        lapack_int sdim = 0;
        info = LAPACKE_dgees_work(LAPACK_COL_MAJOR, 'V', 'N', NULL, s, k->T, s, &sdim, k->wr, k->wi, k->Q, s, k->work,
                                  k->lwork, k->sel);
        /* selection sort of the leading diagonal blocks, most wanted first */
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
        int nv = nvec < s ? nvec : s;
        if (nv >= 1 && nv < s && k->wi[nv - 1] > 0) nv++;
        if (info == 0 && nv > 0) {
            /* eigenvectors x of T for the first nv values, then y = Q x */
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
        /* residual estimates |b^T y| / ||y|| */
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
        double *p = k->bc;
        memcpy(p, k->T, s2 * sizeof(double));
        memcpy(p + s2, k->Q, s2 * sizeof(double));
        memcpy(p + 2 * s2, k->X, s2 * sizeof(double));
        memcpy(p + 3 * s2, k->wr, (size_t)s * sizeof(double));
        memcpy(p + 3 * s2 + s, k->wi, (size_t)s * sizeof(double));
        memcpy(p + 3 * s2 + 2 * s, k->est, (size_t)s * sizeof(double));
        p[nb - 1] = (double)info;
    }
    if (w->size > 1) KR_MPI(MPI_Bcast(k->bc, (int)nb, MPI_DOUBLE, 0, w->comm));
    int info = (int)k->bc[nb - 1];
    PL_CHECK(info == 0, PL_ERR_LAPACK, "LAPACKE dgees/dtrexc/dtrevc on the %d x %d projected matrix failed (info %d)", s,
             s, info);
    if (w->rank != 0) {
        const double *p = k->bc;
        memcpy(k->T, p, s2 * sizeof(double));
        memcpy(k->Q, p + s2, s2 * sizeof(double));
        memcpy(k->X, p + 2 * s2, s2 * sizeof(double));
        memcpy(k->wr, p + 3 * s2, (size_t)s * sizeof(double));
        memcpy(k->wi, p + 3 * s2 + s, (size_t)s * sizeof(double));
        memcpy(k->est, p + 3 * s2 + 2 * s, (size_t)s * sizeof(double));
    }
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

/* Column 0 = the normalised sum of the nret Ritz vectors in columns
 * 0..nret-1 (Re and Im of a pair): the start of a fresh relation after a
 * failed residual check.  Not a restart that keeps them: that needs
 * A V_k = V_k S_k + v b^T with a rank-one remainder, which nret inexact
 * Ritz vectors do not satisfy; their sum has them all in its Krylov space
 * after about nret steps.  *exhausted: no start vector at all. */
static int ks_reseed(kr_ws *w, int nret, int *exhausted)
{
    double *v0 = kr_col(w, 0), nrm = 0.0;
    int in_span = 0;
    *exhausted = 0;
    for (int i = 1; i < nret; i++) PL_CALL(w->be->axpy(w->be, w->n, 1.0, kr_col(w, i), v0));
    PL_CALL(kr_orthogonalize(w, 0, 0, w->cf, &nrm, &in_span)); /* normalises column 0 */
    if (in_span) return kr_random_direction(w, 0, 0, exhausted);
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
}

static int ks_run(kr_ws *w, ks_ws *k, const lz_options *opt, lz_result *res);

int ks_solve(pl_op *op, const lz_options *opt, lz_result *res)
{
    double t_start = pl_wtime();
    int err = PL_OK;
    memset(res, 0, sizeof *res);
    res->reorth = LZ_REORTH_FULL; /* every step, a second pass where needed */
    res->orth_loss = -1.0;
    int64_t m = 0;
    PL_CALL(kr_check_options(op, opt, PL_WHICH_LARGEST_IMAGINARY, 2, &m));

    kr_ws w;
    ks_ws k;
    memset(&k, 0, sizeof k);
    PL_CALL(kr_ws_init(&w, op, (int)m, opt->seed));
    w.refine_if_needed = 1; /* as SLEPc's Krylov-Schur: CGS, refined if needed */
    k.w = &w;
    k.m = (int)m;
    k.ldb = (int)m + 1;
    KR_HOST_ALLOC(k.Sb, (m + 1) * m, fail);
    KR_HOST_ALLOC(k.T, m * m, fail);
    KR_HOST_ALLOC(k.Q, m * m, fail);
    KR_HOST_ALLOC(k.X, m * m, fail);
    KR_HOST_ALLOC(k.wr, m, fail);
    KR_HOST_ALLOC(k.wi, m, fail);
    KR_HOST_ALLOC(k.est, m, fail);
    KR_HOST_ALLOC(k.bc, 3 * m * m + 3 * m + 1, fail);
    KR_HOST_ALLOC(k.scr, (m + 1) * (m + 1), fail);
    KR_HOST_ALLOC(k.sel, m, fail);
    { /* LAPACK workspace: dgees' optimum for ncv (enough for smaller blocks), >= 3 ncv for dtrevc */
        double q = 0.0;
        lapack_int sd = 0;
        if (LAPACKE_dgees_work(LAPACK_COL_MAJOR, 'V', 'N', NULL, (lapack_int)m, k.T, (lapack_int)m, &sd, k.wr, k.wi,
                               k.Q, (lapack_int)m, &q, -1, k.sel) != 0)
            q = 0.0;
        k.lwork = (lapack_int)q > 3 * (lapack_int)m ? (lapack_int)q : 3 * (lapack_int)m;
        k.lwork += 64;
        KR_HOST_ALLOC(k.work, k.lwork, fail);
    }
    KR_HOST_ALLOC(res->eigenvalues, opt->nev + 1, fail);
    KR_HOST_ALLOC(res->eigenvalues_imag, opt->nev + 1, fail);
    KR_HOST_ALLOC(res->residuals, opt->nev + 1, fail);

    PL_CALL_GOTO(ks_run(&w, &k, opt, res), fail, err);
    if (opt->want_vectors) {
        res->vectors = w.V; /* the first nev columns hold the eigenvectors */
        res->ld = w.ld;
        res->be = w.be;
        w.V = NULL;
    }
    w.t.total = pl_wtime() - t_start;
    res->time = w.t;
    ks_free(&k);
    kr_ws_free(&w);
    return PL_OK;
fail:
    ks_free(&k);
    kr_ws_free(&w);
    lz_result_destroy(res);
    return err;
}

/* Scale of the convergence test of a value. */
static double ks_scale(double re, double im, double normest) { return fmax(hypot(re, im), normest); }

/* The final check of the returned pairs: explicit residual <= KS_RES_FACTOR *
 * tol * scale.  The estimates and the explicit residuals of an exact
 * relation differ by rounding, about eps sqrt(ncv) normest = 1.6e-15 normest
 * at ncv 256: a factor 10 leaves room for it even at the smallest tolerance
 * (1e-15) and is the factor tests/nonsym/nonsym.py allows.  A failed check
 * starts over from the returned vectors (ks_reseed) at most KS_RECHECKS
 * times; then the result says LZ_INACCURATE. */
#define KS_RES_FACTOR 10.0
#define KS_RECHECKS 3

static int ks_run(kr_ws *w, ks_ws *k, const lz_options *opt, lz_result *res)
{
    const int nev = opt->nev, m = k->m, ldb = k->ldb, which = opt->which;
    const double tol = opt->tol;
    double t_begin = pl_wtime();
    pl_op_info info;
    pl_op_get_info(w->op, &info);
    res->ncv = m;
    res->hist_nev = nev;
    kr_restart_budget(w, opt, res);

    double *ritz = NULL, *ritz_im = NULL, *rest = NULL, *lock_re = NULL, *lock_im = NULL, *lock_est = NULL;
    double *ckbuf = NULL;
    int err = PL_OK, hcap = 0;
    ritz = calloc((size_t)nev + 1, sizeof *ritz);
    ritz_im = calloc((size_t)nev + 1, sizeof *ritz_im);
    rest = calloc((size_t)nev + 1, sizeof *rest);
    lock_re = calloc((size_t)nev + 1, sizeof *lock_re);
    lock_im = calloc((size_t)nev + 1, sizeof *lock_im);
    lock_est = calloc((size_t)nev + 1, sizeof *lock_est);
    PL_CHECK_GOTO(ritz && ritz_im && rest && lock_re && lock_im && lock_est, PL_ERR_MEM, out, err,
                  "out of host memory");

    memset(k->Sb, 0, (size_t)ldb * m * sizeof(double));
    int kcol = 0;  /* columns kept at the start of the cycle */
    int nlock = 0; /* verification phase: nret locked Schur vectors in columns 0..nlock-1 */
    int restarts = 0, reason = LZ_ITERATING, nconv = 0, mm = m, final_locked = 0, nret = nev, cycled = 0;
    int verify_start = 0, verify_end = 0; /* restarts when the current set started / its search must end */
    double normest = info.norm_estimate;
    /* checkpoint state: ints (krylov_impl.h) + nret, verify_start,
     * verify_end, rechecks; dbl = normest, Sb ((m + 1) x m), lock_re, lock_im,
     * lock_est (nev + 1 each) */
    enum { ST_NRET = KR_ST_COMMON, ST_VSTART, ST_VEND, ST_RECHECKS, ST_N };
    int64_t ints[ST_N];
    const int nd = 1 + ldb * m + 3 * (nev + 1);
    ckbuf = malloc((size_t)nd * sizeof *ckbuf);
    PL_CHECK_GOTO(ckbuf, PL_ERR_MEM, out, err, "out of host memory");
    double *lock_all[3] = {lock_re, lock_im, lock_est};
    if (opt->resume) {
        kr_cycle cy;
        PL_CALL_GOTO(kr_resume(w, opt, 2, res, &hcap, &cy, ints, ST_N, ckbuf, nd), out, err);
        restarts = cy.restarts;
        kcol = cy.k;
        nlock = cy.nlock;
        nconv = cy.nconv;
        normest = cy.normest;
        nret = (int)ints[ST_NRET];
        verify_start = (int)ints[ST_VSTART];
        verify_end = (int)ints[ST_VEND];
        res->rechecks = (int)ints[ST_RECHECKS];
        memcpy(k->Sb, ckbuf + 1, (size_t)ldb * m * sizeof(double));
        for (int a = 0; a < 3; a++)
            memcpy(lock_all[a], ckbuf + 1 + ldb * m + a * (nev + 1), (size_t)(nev + 1) * sizeof(double));
    } else {
        int exhausted = 0;
        PL_CALL_GOTO(kr_start_vector(w, opt, &exhausted), out, err);
        PL_CHECK_GOTO(!exhausted, PL_ERR_INTERNAL, out, err, "the start vector is zero");
    }

    for (;;) {
        while (reason == LZ_ITERATING) {
            /* ---- end of a cycle (after its restart): checkpoint ---- */
            if (cycled && opt->checkpoint) {
                int stop = 0;
                kr_cycle cy = {restarts, kcol, nlock, nconv, normest};
                ints[ST_NRET] = nret;
                ints[ST_VSTART] = verify_start;
                ints[ST_VEND] = verify_end;
                ints[ST_RECHECKS] = res->rechecks;
                memcpy(ckbuf + 1, k->Sb, (size_t)ldb * m * sizeof(double));
                for (int a = 0; a < 3; a++)
                    memcpy(ckbuf + 1 + ldb * m + a * (nev + 1), lock_all[a], (size_t)(nev + 1) * sizeof(double));
                PL_CALL_GOTO(kr_checkpoint(w, opt, 2, res, &cy, ints, ST_N, ckbuf, nd, &stop), out, err);
                if (stop) {
                    reason = LZ_CHECKPOINTED;
                    break;
                }
            }
            cycled = 1;
            /* ---- expansion: columns kcol .. m ---- */
            mm = m;
            int vm_valid = 1;
            for (int j = kcol; j < m; j++) {
                if (j > kcol) { /* a stop inside the cycle (lz_poll_fn) */
                    int stop = 0;
                    PL_CALL_GOTO(kr_poll(opt, m - j, &stop), out, err);
                    if (stop) {
                        reason = LZ_CHECKPOINTED;
                        break;
                    }
                }
                double nrm;
                int in_span;
                double ts = pl_wtime();
                PL_CALL_GOTO(kr_apply(w, j, j + 1), out, err);
                PL_CALL_GOTO(kr_orthogonalize(w, j + 1, j + 1, w->cf, &nrm, &in_span), out, err);
                w->t.steps++;
                w->t.steps_time += pl_wtime() - ts;
                double *col = k->Sb + (size_t)j * ldb;
                memcpy(col, w->cf, (size_t)(j + 1) * sizeof(double));
                for (int i = j + 1; i < ldb; i++) col[i] = 0.0;
                double beta = nrm;
                if (in_span) {
                    res->breakdowns++;
                    beta = 0.0;
                    if (j + 1 < m) {
                        int ex;
                        PL_CALL_GOTO(kr_random_direction(w, j + 1, 0, &ex), out, err);
                        if (ex) { /* span(V) is the whole space: S is exact */
                            mm = j + 1;
                            vm_valid = 0;
                            break;
                        }
                    } else {
                        vm_valid = 0; /* the tiny coupling still bounds the residuals */
                        beta = nrm;
                    }
                }
                col[j + 1] = beta;
            }
            if (reason == LZ_CHECKPOINTED) break; /* stopped inside the cycle */
            int whole_space = (int64_t)mm >= w->N || (mm < m && !vm_valid);
            if (mm < m) /* exact: no coupling row */
                for (int c = 0; c < mm; c++) k->Sb[(size_t)c * ldb + mm] = 0.0;

            /* ---- verification phase ---- */
            if (nlock > 0) {
                int s = mm - nlock;
                PL_CALL_GOTO(ks_projected(k, nlock, mm, which, 1), out, err);
                double thr = k->wr[0], thi = k->wi[0], estc = k->est[0];
                for (int i = 0; i < s; i++) normest = fmax(normest, hypot(k->wr[i], k->wi[i]));
                double scale = ks_scale(thr, thi, normest);
                /* unlike a symmetric Ritz value, a nonsymmetric one may lie
                 * outside the spectrum (in the field of values): only a
                 * converged value beyond the edge proves a missed eigenvalue */
                int beyond = want_key(which, thr, thi) > want_key(which, lock_re[nret - 1], lock_im[nret - 1]) + tol * scale;
                int conv_c = estc <= tol * scale;
                int missed = beyond && conv_c;
                double worst = 0.0;
                for (int i = 0; i < nret; i++)
                    worst = fmax(worst, lock_est[i] / ks_scale(lock_re[i], lock_im[i], normest));
                if (!missed) {
                    PL_CALL_GOTO(kr_push_history(res, &hcap, nev, w->napply, lock_re, lock_im, lock_est), out, err);
                    lz_monitor_info mi = {.restart = restarts, .nconv = nev, .nev = nev, .iterations = w->napply,
                                          .ritz = lock_re, .resid = lock_est, .worst_resid = worst,
                                          .elapsed = pl_wtime() - t_begin, .verifying = 1,
                                          .full_reorths = w->t.steps, .orth_estimate = 0.0};
                    PL_CALL_GOTO(kr_monitor(w, opt, res, &mi), out, err);
                }
                if (missed) {
                    nlock = 0; /* unlock: the whole relation A V = V S + v b^T holds */
                    verify_start = restarts;
                    res->missed++;
                } else if (conv_c || whole_space || restarts >= w->pg.budget || restarts >= verify_end) {
                    /* accepted: the complement's most wanted value converged
                     * without passing the edge, or the budget of the search
                     * (twice the restarts that found the set, + 20) is spent */
                    if (!conv_c && !whole_space) res->verify_inconclusive = 1;
                    reason = LZ_CONVERGED;
                    final_locked = 1;
                    nconv = nret;
                    break;
                } else {
                    int kk = ks_keep(k, 1, s), ok = 0;
                    PL_CALL_GOTO(ks_restart(k, nlock, mm, kk, vm_valid, &ok), out, err);
                    PL_CHECK_GOTO(ok, PL_ERR_INTERNAL, out, err, "no restart vector in the verification phase");
                    kcol = nlock + kk;
                    restarts++;
                    continue;
                }
            }

            /* ---- projected problem, convergence ---- */
            PL_CALL_GOTO(ks_projected(k, 0, mm, which, nev + 1), out, err);
            for (int i = 0; i < mm; i++) normest = fmax(normest, hypot(k->wr[i], k->wi[i]));
            nret = ks_nret(k, nev, mm);
            double worst = 0.0;
            int nc = 0, prefix = 1;
            for (int i = 0; i < nret; i++) {
                double scale = ks_scale(k->wr[i], k->wi[i], normest);
                worst = fmax(worst, k->est[i] / scale);
                if (prefix && k->est[i] <= tol * scale) nc++;
                else prefix = 0;
            }
            nconv = nc;
            for (int i = 0; i < nev; i++) {
                ritz[i] = i < mm ? k->wr[i] : NAN;
                ritz_im[i] = i < mm ? k->wi[i] : NAN;
                rest[i] = i < mm ? k->est[i] : INFINITY;
            }
            PL_CALL_GOTO(kr_push_history(res, &hcap, nev, w->napply, ritz, ritz_im, rest), out, err);
            lz_monitor_info mi = {.restart = restarts, .nconv = nconv < nev ? nconv : nev, .nev = nev,
                                  .iterations = w->napply, .ritz = ritz, .resid = rest, .worst_resid = worst,
                                  .elapsed = pl_wtime() - t_begin, .verifying = 0, .full_reorths = w->t.steps,
                                  .orth_estimate = 0.0};
            PL_CALL_GOTO(kr_monitor(w, opt, res, &mi), out, err);

            if (nconv >= nret) {
                if (!opt->verify || whole_space || restarts >= w->pg.budget || m - nret < 3) {
                    reason = LZ_CONVERGED;
                    break;
                }
                /* lock the nret Schur vectors (their coupling to v_m, below the
                 * tolerance, is dropped) and search their complement */
                int ok = 0;
                for (int i = 0; i < nret; i++) {
                    lock_re[i] = k->wr[i];
                    lock_im[i] = k->wi[i];
                    lock_est[i] = k->est[i];
                }
                PL_CALL_GOTO(ks_restart(k, 0, mm, nret, 0, &ok), out, err); /* random column nret */
                PL_CHECK_GOTO(ok, PL_ERR_INTERNAL, out, err, "verification vector vanished (nev = %d, N = %lld)", nev,
                              (long long)w->N);
                nlock = nret;
                kcol = nret;
                verify_end = restarts + 2 * (restarts - verify_start) + 20;
                restarts++;
                res->verifications++;
                continue;
            }
            if (whole_space) {
                reason = LZ_BREAKDOWN;
                break;
            }
            /* the budget, or (auto) residuals that stopped falling: kr_give_up */
            PL_CALL_GOTO(kr_give_up(w, res, restarts, &reason), out, err);
            if (reason != LZ_ITERATING) break;

            /* ---- restart ---- */
            int kk = ks_keep(k, nret, mm), ok = 0;
            PL_CALL_GOTO(ks_restart(k, 0, mm, kk, vm_valid, &ok), out, err);
            if (!ok) {
                reason = LZ_BREAKDOWN;
                break;
            }
            kcol = kk;
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
            /* the locked block Sb[0:nret, 0:nret] is quasi-triangular (sorted):
             * its eigenvectors, with Q = I */
            PL_CALL_GOTO(ks_projected(k, 0, nret, which, nret), out, err);
            PL_CALL_GOTO(ks_vectors(k, 0, nret, nret), out, err);
        } else {
            PL_CALL_GOTO(ks_vectors(k, 0, mm, nret), out, err);
        }
        res->nev = nret;
        for (int i = 0; i < nret; i++) {
            res->eigenvalues[i] = k->wr[i];
            res->eigenvalues_imag[i] = k->wi[i];
        }
        PL_CALL_GOTO(ks_residuals(w, k, nret, res->residuals), out, err);
        /* The test above trusted the estimates |b^T y|, exact only while A V = V S + v b^T holds.
         * It does not after verify unlocked a set (res->missed): locking dropped the Schur
         * vectors' coupling b^T Q, which is small for the eigenvectors but not for the Schur vectors
         * of close, ill-conditioned values (lns_3937: explicit residuals up to 180 x the estimates).
         * A returned value whose explicit residual fails the test by more than KS_RES_FACTOR is not
         * converged: start a fresh, exact relation from the returned vectors and iterate on. */
        int bad = 0, lead = 0;
        for (int i = 0; i < nret; i++) {
            int ok = res->residuals[i] <= KS_RES_FACTOR * tol * ks_scale(k->wr[i], k->wi[i], normest);
            bad |= !ok;
            if (ok && lead == i) lead++;
        }
        if (reason != LZ_CONVERGED || !bad) break;
        res->rechecks++;
        if (res->rechecks > KS_RECHECKS || restarts >= w->pg.budget) {
            reason = LZ_INACCURATE;
            nconv = lead;
            break;
        }
        int exhausted = 0;
        PL_CALL_GOTO(ks_reseed(w, nret, &exhausted), out, err);
        PL_CHECK_GOTO(!exhausted, PL_ERR_INTERNAL, out, err, "no start vector for the residual recheck");
        memset(k->Sb, 0, (size_t)ldb * m * sizeof(double));
        kcol = 0;
        nlock = 0;
        final_locked = 0;
        verify_start = restarts;
        restarts++;
        reason = LZ_ITERATING;
    }
    res->normest = normest;
    res->nconv = nconv;
    res->restarts = restarts;
    res->iterations = w->napply;
    res->reason = reason;
out:
    free(ritz);
    free(ritz_im);
    free(rest);
    free(lock_re);
    free(lock_im);
    free(lock_est);
    free(ckbuf);
    return err;
}
