/* lz_return.c — the returned block of thick-restart Lanczos when its
 * measured loss of orthogonality passes the promise LZ_RETURN_LOSS
 * (lanczos.c, lz_finish): orthonormalised (two Gram-Schmidt passes a
 * column) and projected, so that lz_finish's Rayleigh-Ritz step on its own
 * span returns orthonormal vectors whose values are their Rayleigh
 * quotients.  The basis is kept orthogonal to the omega threshold
 * min(sqrt(eps), 100 tol) only (lz_pro.c), so the returned block can lose
 * more than 1e-10: an unconverged run (mhd4800b smallest at nev 8 after
 * 2000 restarts: loss 2.8e-8), and converged runs with many converged
 * values (the 3-D Laplacian 12^3 smallest at nev 5 to 24 and largest at
 * nev 15 to 23, tol 1e-10: 26 of 48 runs of bench/degenerate_sweep.py,
 * losses 1e-10 to 1e-9, 2026-11-30); HMEp and hh_184800 never have.
 * Costs nev products and 2 nev passes over the block.
 * Written against spmv.h only: no backend headers, no conditional code. */
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

int lz_return_project(kr_solver *s)
{
    kr_ws *w = s->w;
    const int nev = s->opt->nev, m = w->m, jw = m; /* column m: the scratch for A x_i */
    const double t0 = pl_wtime(), tsp = w->t.spmv;
    PL_CALL(orthonormal_block(w, nev));
    for (int i = 0; i < nev; i++) { /* column i of T = X^T A x_i */
        PL_CALL(kr_apply(w, i, jw));
        PL_CALL(pl_vec_gemv_t(w->op, nev, w->V, w->ld, kr_col(w, jw), w->c1));
        for (int l = 0; l < nev; l++) w->T[(size_t)i * m + l] = w->c1[l];
    }
    for (int i = 0; i < nev; i++)
        for (int l = 0; l < i; l++) {
            const double a = 0.5 * (w->T[(size_t)i * m + l] + w->T[(size_t)l * m + i]);
            w->T[(size_t)i * m + l] = w->T[(size_t)l * m + i] = a;
        }
    w->t.other += pl_wtime() - t0 - (w->t.spmv - tsp);
    return PL_OK;
}
