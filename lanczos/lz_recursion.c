/* lz_recursion.c — the Lanczos recursion of a continued fraction
 * (lanczos.h lz_recursion; README "Spectral functions").
 *
 * From v_0 = phi / |phi|: w = A v_j - beta_j v_{j-1}, alpha_j = v_j.w,
 * w -= alpha_j v_j, beta_{j+1} = |w|, v_{j+1} = w / beta_{j+1}.  No
 * reorthogonalisation: the continued fraction needs the moments
 * <phi|A^k|phi>, and those are determined by the tridiagonal, which the
 * plain recursion keeps accurate to working precision (Paige) even after
 * the vectors lose orthogonality; the loss shows up as repeated (ghost)
 * Ritz values, i.e. a pole counted more than once with its weight split,
 * which does not change the spectral function.
 *
 * One step = one SpMV, one reduction of the three vectors [v_{j-1}, v_j, w]
 * (pl_vec_gram: one host synchronisation, the dots and |w|^2 together;
 * beta_{j+1}^2 = |w - alpha v_j - beta_j v_{j-1}|^2 from the Gram matrix)
 * and one fused update w = (w - alpha v_j - beta_j v_{j-1}) / beta_{j+1}
 * (gemv_n over two adjacent columns of a ring of three; every third step the
 * ring wraps and takes an axpy more).  Reducing only [v_j, w] and taking
 * v_{j-1}.w = beta_j from the three-term relation saves a third of the
 * reduction's reads, but spoils the spectra measurably (1e-4 of the
 * peak against the Lehmann sum, tests/hamiltonian/check_observables.py):
 * the exact Gram matrix removes the local loss of orthogonality each step. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lanczos.h"
#include "pl_error.h"

int lz_recursion_fusable(pl_op *op)
{
    pl_backend *be = pl_op_backend(op);
    pl_op_info info;
    pl_op_get_info(op, &info);
    if (info.n_local != info.n_global || !be->cgs_step) return 0; /* one rank: the fused block product */
    if (pl_op_reproducible(op)) return 0; /* the steps of several ranks on one too */
    /* PJDS_LZ_FUSED=0 composes the step (for comparisons).  The crash of
     * reference.akw.hh/normal once blamed on this step (H100, 2026-11-26)
     * was a stack overrun in the lowest reached value's dstevr call
     * (app/cmd_spectral_el.c), which the fused step's coefficients exposed */
    const char *e = getenv("PJDS_LZ_FUSED");
    if (e && e[0] == '0') return 0;
    /* matrix-free only: with pJDS the fused step was slower than the
     * composed one (HMEp's N - 1 sector on one H100, 2026-11-26: 0.554
     * against 0.442 ms a step; matrix-free 0.205-0.208 against 0.221 ms) */
    return info.format == PL_FORMAT_MATRIX_FREE && be->kron_spmm_aug;
}

/* The fused step (lanczos.h lz_recursion_fast).  The ring holds two
 * unnormalised vectors, X = u_j = s_j v_j and Y = u_{j-1} (s_{j-1}); one step:
 *   Y = (1/s_j) H X - (beta_j / s_{j-1}) Y = w      (SpMV, update, dots X.X, w.X)
 *   alpha_j = w.X / s_j
 *   Y = w - (alpha_j / s_j) X = u_{j+1}, |u_{j+1}|^2  (cgs_step: one pass)
 *   beta_{j+1} = s_{j+1} = |u_{j+1}|, swap X and Y
 * (Paige's variant alpha_j = v_j.(H v_j - beta_j v_{j-1}), beta the exact
 * norm of the new vector): two passes over the vectors after the SpMV's
 * instead of seven, two synchronisations instead of one. */
static int rec_fused(pl_op *op, const double *phi, int steps, double *alpha, double *beta, int *nsteps, double *B,
                     size_t ld, double normest)
{
    pl_backend *be = pl_op_backend(op);
    const size_t n = ld; /* one rank: n_local >= 1 rows, ld = n */
    double *X = B, *Y = B + ld, *W = B + 2 * ld, sx = beta[0], sy = 1.0, bj = 0.0;
    PL_CALL(be->copy(be, n, phi, X));
    for (int j = 0; j < steps; j++) {
        double d[2];
        PL_CALL(pl_op_apply_block_aug(op, 1, 1.0 / sx, 0.0, -bj / sy, X, Y, W, d));
        const double a = d[1] / sx;
        alpha[j] = a;
        *nsteps = j + 1;
        if (j + 1 == steps) break;
        double h[2], c = a / sx;
        PL_CALL(pl_vec_cgs_step(op, 1, X, ld, Y, &c, h));
        const double r = sqrt(h[1]);
        if (!(r > 1e-13 * normest)) break; /* invariant subspace: the fraction ends */
        beta[j + 1] = bj = r;
        double *t = X;
        X = Y;
        Y = t;
        sy = sx;
        sx = r;
    }
    return PL_OK;
}

static int rec_run(pl_op *op, const double *phi, int steps, double *alpha, double *beta, int *nsteps,
                   double *step_seconds, int fused)
{
    PL_CHECK(op && phi && steps >= 1 && alpha && beta && nsteps, PL_ERR_ARG, "lz_recursion: bad arguments");
    *nsteps = 0;
    pl_backend *be = pl_op_backend(op);
    pl_op_info info;
    pl_op_get_info(op, &info);
    const size_t n = (size_t)info.n_local, ld = n ? n : 1;
    double *B = NULL;
    int rc = PL_OK;
    PL_CALL(be->vec_alloc(be, 3 * ld, &B));
    PL_CALL_GOTO(be->set(be, 3 * ld, 0.0, B), out, rc);
    double nrm = 0.0;
    PL_CALL_GOTO(pl_vec_nrm2(op, phi, &nrm), out, rc);
    beta[0] = nrm;
    if (!(nrm > 0.0)) {
        *nsteps = 0; /* O psi = 0: no spectral weight */
        goto out;
    }
    const double normest = info.norm_estimate > 0 ? info.norm_estimate : 1.0, t0 = pl_wtime();
    if (fused) {
        PL_CALL_GOTO(rec_fused(op, phi, steps, alpha, beta, nsteps, B, ld, normest), out, rc);
        goto done;
    }
    /* ring: prev = P, cur = C, new w = W (column indices of B) */
    int P = 0, C = 1, W = 2;
    PL_CALL_GOTO(be->copy(be, n, phi, B + C * ld), out, rc);
    PL_CALL_GOTO(be->scal(be, n, 1.0 / nrm, B + C * ld), out, rc);
    double bj = 0.0;
    for (int j = 0; j < steps; j++) {
        PL_CALL_GOTO(pl_op_apply_queued(op, B + C * ld, B + W * ld), out, rc);
        double G[9];
        PL_CALL_GOTO(pl_vec_gram(op, 3, B, ld, G), out, rc);
#define GG(a, b) G[(a) * 3 + (b)]
        const double a = GG(C, W);
        double b2 = GG(W, W) - 2.0 * a * GG(C, W) - 2.0 * bj * GG(P, W) + a * a * GG(C, C) + bj * bj * GG(P, P) +
                    2.0 * a * bj * GG(C, P);
#undef GG
        alpha[j] = a;
        *nsteps = j + 1;
        if (j + 1 == steps) break;
        /* |w|^2 - (alpha^2 + beta^2) cancels when w nearly lies in the span:
         * take the exact norm then (a second reduction, rare) */
        if (!(b2 > 1e-8 * (a * a + bj * bj))) {
            PL_CALL_GOTO(be->axpy(be, n, -a, B + C * ld, B + W * ld), out, rc);
            PL_CALL_GOTO(be->axpy(be, n, -bj, B + P * ld, B + W * ld), out, rc);
            double r;
            PL_CALL_GOTO(pl_vec_nrm2(op, B + W * ld, &r), out, rc);
            if (!(r > 1e-13 * normest)) break; /* invariant subspace: the fraction ends */
            PL_CALL_GOTO(be->scal(be, n, 1.0 / r, B + W * ld), out, rc);
            beta[j + 1] = bj = r;
        } else {
            const double b = sqrt(b2);
            if (!(b > 1e-13 * normest)) break;
            if (C == P + 1) { /* [prev, cur] adjacent: one fused pass */
                const double h[2] = {bj, a};
                PL_CALL_GOTO(be->gemv_n(be, n, 2, -1.0 / b, B + P * ld, ld, h, 1.0 / b, B + W * ld), out, rc);
            } else {
                PL_CALL_GOTO(be->axpy(be, n, -a, B + C * ld, B + W * ld), out, rc);
                const double h[1] = {bj};
                PL_CALL_GOTO(be->gemv_n(be, n, 1, -1.0 / b, B + P * ld, ld, h, 1.0 / b, B + W * ld), out, rc);
            }
            beta[j + 1] = bj = b;
        }
        const int t = P;
        P = C;
        C = W;
        W = t;
    }
done:
    PL_CALL_GOTO(be->sync(be), out, rc);
    if (step_seconds) *step_seconds = *nsteps > 0 ? (pl_wtime() - t0) / (double)*nsteps : 0.0;
out:
    be->vec_free(be, B);
    return rc;
}

int lz_recursion(pl_op *op, const double *phi, int steps, double *alpha, double *beta, int *nsteps,
                 double *step_seconds)
{
    return rec_run(op, phi, steps, alpha, beta, nsteps, step_seconds, 0);
}

int lz_recursion_fast(pl_op *op, const double *phi, int steps, double *alpha, double *beta, int *nsteps,
                      double *step_seconds)
{
    PL_CHECK(op, PL_ERR_ARG, "lz_recursion_fast: bad arguments");
    return rec_run(op, phi, steps, alpha, beta, nsteps, step_seconds, lz_recursion_fusable(op));
}

void lz_continued_fraction(int n, const double *alpha, const double *beta, double e0, double eta, int points,
                           const double *omega, double *intensity)
{
    const double norm = beta[0] * beta[0], pi = acos(-1.0);
    for (int i = 0; i < points; i++) {
        /* G(z) = norm / (z - a0 - b1^2 / (z - a1 - ...)), z = w + i eta + E0,
         * evaluated from the last level up (complex arithmetic by hand) */
        const double zr = omega[i] + e0, zi = eta;
        double gr = 0.0, gi = 0.0; /* 1 / (z - a_{n-1}) ... built upwards */
        for (int j = n - 1; j >= 0; j--) {
            double dr = zr - alpha[j], di = zi;
            if (j + 1 < n) {
                const double b2 = beta[j + 1] * beta[j + 1];
                dr -= b2 * gr;
                di -= b2 * gi;
            }
            const double d2 = dr * dr + di * di;
            gr = dr / d2;
            gi = -di / d2;
        }
        intensity[i] = n > 0 ? -norm * gi / pi : 0.0;
    }
}
