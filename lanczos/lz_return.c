/* lz_return.c — the returned block of thick-restart Lanczos (lanczos.c,
 * lz_finish), when its measured loss of orthogonality passes the promise
 * LZ_RETURN_LOSS: orthonormalised (two Gram-Schmidt passes a column) and
 * rotated by a Rayleigh-Ritz step on its own span, so that the values are
 * the Rayleigh quotients of orthonormal vectors.  A converged run never
 * gets here (its loss stays below the promise: the tests); an unconverged
 * one can (mhd4800b smallest at nev 8 after 2000 restarts: loss 2.8e-8).
 * Costs nev products and 2 nev passes over the block.
 * Written against spmv.h only: no backend headers, no conditional code. */
#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "krylov_impl.h"
#include "lanczos.h"
#include "lz_impl.h"
#include "pl_error.h"

/* Columns 0..nev-1 orthonormal: a column that vanishes against the earlier
 * ones (two copies of one vector) is replaced by a fresh random direction. */
static int orthonormal_block(kr_ws *w, int nev)
{
    for (int i = 0; i < nev; i++) {
        double nrm = 0.0;
        int in_span = 0, exhausted = 0;
        PL_CALL(kr_orthogonalize(w, i, i, w->cf, &nrm, &in_span)); /* normalises */
        if (in_span) PL_CALL(kr_random_direction(w, i, 0, &exhausted));
        PL_CHECK(!exhausted, PL_ERR_INTERNAL, "returned block: no direction for column %d of %d", i, nev);
    }
    return PL_OK;
}

/* H = X^T A X of the orthonormal block X = V[:, 0:nev] (w->Ysel, ld nev),
 * symmetrised; column w->m is the scratch for A x_i. */
static int block_projection(kr_ws *w, int nev, double *H)
{
    const int jw = w->m;
    for (int i = 0; i < nev; i++) {
        PL_CALL(kr_apply(w, i, jw));
        PL_CALL(pl_vec_gemv_t(w->op, nev, w->V, w->ld, kr_col(w, jw), H + (size_t)i * nev));
    }
    for (int i = 0; i < nev; i++)
        for (int l = 0; l < i; l++) {
            const double a = 0.5 * (H[(size_t)i * nev + l] + H[(size_t)l * nev + i]);
            H[(size_t)i * nev + l] = H[(size_t)l * nev + i] = a;
        }
    return PL_OK;
}

int lz_return_block(kr_solver *s, int *done)
{
    kr_ws *w = s->w;
    lz_ctx *c = s->ctx;
    lz_result *res = s->res;
    const int nev = s->opt->nev;
    *done = 0;
    if (w->bop || !(res->orth_loss > LZ_RETURN_LOSS)) return PL_OK;
    const double t0 = pl_wtime(), tsp = w->t.spmv;
    PL_CALL(orthonormal_block(w, nev));
    double *H = w->Ysel, *lam = w->theta;
    PL_CALL(block_projection(w, nev, H));
    PL_CHECK(LAPACKE_dsyev(LAPACK_COL_MAJOR, 'V', 'U', nev, H, nev, lam) == 0, PL_ERR_LAPACK,
             "returned block: LAPACKE_dsyev (Rayleigh-Ritz, %d x %d) failed", nev, nev);
    /* the wanted order: columns of H permuted into Q (the block's rotation) */
    lz_wanted_order(lam, nev, c->which, w->ord);
    double *Q = malloc((size_t)nev * nev * sizeof *Q);
    PL_CHECK(Q, PL_ERR_MEM, "out of host memory (returned block, %d x %d)", nev, nev);
    for (int i = 0; i < nev; i++) memcpy(Q + (size_t)i * nev, H + (size_t)w->ord[i] * nev, (size_t)nev * sizeof *Q);
    for (int i = 0; i < nev; i++) res->eigenvalues[i] = lam[w->ord[i]];
    memcpy(H, Q, (size_t)nev * nev * sizeof *H);
    free(Q);
    PL_CALL(kr_update_basis(w, 0, nev, nev));
    res->returned_rr = 1;
    w->t.other += pl_wtime() - t0 - (w->t.spmv - tsp);
    *done = 1;
    return PL_OK;
}
