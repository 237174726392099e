/* kpm.c — the kernel polynomial method (lanczos.h kpm_*; README "Density of
 * states"; Weisse, Wellein, Alvermann, Fehske, Rev. Mod. Phys. 78, 275).
 *
 * Chebyshev recursion on H~ = (H - b) / a for a block of B start vectors at
 * once: V_1 = H~ V_0, V_{n+1} = 2 H~ V_n - V_{n-1}, each step one
 * pl_op_apply_block_aug (Y = alpha A X + gamma X + beta Y with the column
 * dots <X, X> and <Y, X> of the same pass), and two moments per step:
 *   mu_2n   = 2 <v_n|v_n>     - mu_0,
 *   mu_2n+1 = 2 <v_n+1|v_n>   - mu_1.
 * Each vector's moments are divided by its <r|r> (so mu_0 = 1 and the
 * density integrates to 1) and averaged over the vectors.  The start
 * vectors depend on (seed, vector index, global row) only: the same
 * moments on any number of ranks up to rounding. */
#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lanczos.h"
#include "lz_random.h"
#include "pl_error.h"

int kpm_bounds(pl_op *op, uint64_t seed, int steps, double *emin, double *emax)
{
    pl_op_info info;
    pl_op_get_info(op, &info);
    pl_backend *be = pl_op_backend(op);
    const int64_t n = info.n_local, *gi = pl_op_global_index(op);
    if (steps > info.n_global) steps = (int)info.n_global;
    if (steps < 1) steps = 1;
    double *phi = NULL, *al = NULL, *bt = NULL, *z = NULL;
    int rc = PL_OK, m = 0;
    lz_rand_rows rr;
    memset(&rr, 0, sizeof rr);
    al = malloc(((size_t)steps + 2) * sizeof *al);
    bt = malloc(((size_t)steps + 2) * sizeof *bt);
    z = malloc(((size_t)(steps + 1) * (size_t)(steps + 1) + 1) * sizeof *z);
    PL_CHECK_GOTO(al && bt && z, PL_ERR_MEM, out, rc, "out of host memory for the spectral bounds");
    PL_CALL_GOTO(be->vec_alloc(be, (size_t)n + 1, &phi), out, rc);
    PL_CALL_GOTO(lz_rand_rows_init(&rr, be, n, gi), out, rc);
    const uint64_t sb = seed ^ UINT64_C(0x6b706d626f756e64);
    PL_CALL_GOTO(lz_rand_block(&rr, 1, &sb, phi), out, rc);
    /* steps + 1: the last beta is the residual coupling of the first steps */
    PL_CALL_GOTO(lz_recursion(op, phi, steps + 1, al, bt, &m, NULL), out, rc);
    PL_CHECK_GOTO(m >= 1, PL_ERR_INPUT, out, rc, "spectral bounds: the start vector is zero");
    const int k = m > steps ? steps : m;            /* Ritz values of T_k */
    const double bres = m > steps ? fabs(bt[k]) : 0.0; /* ended early: invariant subspace */
    double *d = al, *e = bt + 1;                        /* diagonal, off-diagonal */
    PL_CHECK_GOTO(LAPACKE_dstev(LAPACK_COL_MAJOR, 'V', k, d, e, z, k) == 0, PL_ERR_INTERNAL, out, rc,
                  "spectral bounds: LAPACKE_dstev failed");
    const double lo = d[0] - bres * fabs(z[(size_t)(k - 1)]), hi = d[k - 1] + bres * fabs(z[(size_t)(k - 1) * k + (k - 1)]);
    const double w = hi - lo > 0 ? hi - lo : fmax(1.0, fabs(hi));
    *emin = lo - 0.01 * w;
    *emax = hi + 0.01 * w;
out:
    lz_rand_rows_free(&rr);
    if (phi) be->vec_free(be, phi);
    free(al);
    free(bt);
    free(z);
    return rc;
}

void kpm_damping(int kind, double lambda, int N, double *g)
{
    const double pi = acos(-1.0);
    for (int n = 0; n < N; n++) {
        if (kind == 1) {
            g[n] = sinh(lambda * (1.0 - (double)n / N)) / sinh(lambda);
        } else {
            const double q = pi / (N + 1);
            g[n] = ((N - n + 1) * cos(q * n) + sin(q * n) / tan(q)) / (N + 1);
        }
    }
}

void kpm_density(int N, const double *mu, const double *g, double a, double b, int P, double *energy, double *rho,
                 double *integral)
{
    const double pi = acos(-1.0);
    double sum = 0.0;
    for (int k = 0; k < P; k++) {
        const double x = cos(pi * (k + 0.5) / P);
        double t0 = 1.0, t1 = x, f = g[0] * mu[0] + (N > 1 ? 2.0 * g[1] * mu[1] * x : 0.0);
        for (int n = 2; n < N; n++) {
            const double t2 = 2.0 * x * t1 - t0;
            f += 2.0 * g[n] * mu[n] * t2;
            t0 = t1;
            t1 = t2;
        }
        sum += f;
        /* ascending energies: node k is the (P - 1 - k)-th from below */
        energy[P - 1 - k] = a * x + b;
        rho[P - 1 - k] = f / (pi * a * sqrt(1.0 - x * x));
    }
    *integral = sum / P;
}

/* The seed of random vector v (per vectors a group). */
static uint64_t seed_of(const kpm_options *o, int64_t per, int64_t v)
{
    const uint64_t g = (uint64_t)(v / per), i = (uint64_t)(v % per);
    return o->seed + g * (o->stride ? o->stride : (uint64_t)per) + i;
}

int kpm_moments(pl_op *op, const kpm_options *o, double *mu, kpm_stats *st)
{
    const int G = o && o->groups > 1 && !o->unit ? o->groups : 1;
    PL_CHECK(op && o && mu && o->moments >= 2 && o->block >= 1 && o->block <= PL_SPMM_RMAX && o->a > 0 &&
                 (G == 1 || o->nvec % G == 0),
             PL_ERR_ARG, "kpm_moments: bad arguments");
    const double t0 = pl_wtime();
    memset(st, 0, sizeof *st);
    pl_op_info info;
    pl_op_get_info(op, &info);
    pl_backend *be = pl_op_backend(op);
    const int64_t n = info.n_local, *gi = pl_op_global_index(op);
    const int N = o->moments;
    const int64_t total = o->unit ? info.n_global : o->nvec;
    const int B = (int)(o->block < total ? o->block : total);
    const size_t nb = (size_t)n * (size_t)B + 1;
    double *h = NULL, *V0 = NULL, *V1 = NULL, *W = NULL, *acc = NULL;
    int rc = PL_OK;
    int rank = 0;
    MPI_Comm_rank(pl_op_comm(op), &rank);
    lz_rand_rows rr;
    memset(&rr, 0, sizeof rr);
    if (o->unit) h = malloc(nb * sizeof *h); /* random blocks: lz_rand_block (the backend draws them) */
    acc = calloc((size_t)N * G, sizeof *acc);
    const int64_t per = total / G; /* vectors per group */
    PL_CHECK_GOTO((h || !o->unit) && acc, PL_ERR_MEM, out, rc, "out of host memory for the KPM vectors");
    if (!o->unit) PL_CALL_GOTO(lz_rand_rows_init(&rr, be, n, gi), out, rc);
    PL_CALL_GOTO(be->vec_alloc(be, nb, &V0), out, rc);
    PL_CALL_GOTO(be->vec_alloc(be, nb, &V1), out, rc);
    PL_CALL_GOTO(be->vec_alloc(be, nb, &W), out, rc);
    const double ia = 1.0 / o->a, ba = o->b / o->a;
    double last = t0;
    for (int64_t v0 = 0; v0 < total; v0 += B) {
        const int Bv = (int)(total - v0 < B ? total - v0 : B);
        const double ts = pl_wtime();
        /* the start block, row-major: column c is vector v0 + c */
        if (o->unit) {
#pragma omp parallel for schedule(static)
            for (int64_t i = 0; i < n; i++)
                for (int c = 0; c < Bv; c++) h[i * Bv + c] = gi[i] == v0 + c ? 1.0 : 0.0;
            PL_CALL_GOTO(be->upload(be, V0, h, (size_t)n * Bv), out, rc);
        } else {
            uint64_t seeds[PL_SPMM_RMAX];
            for (int c = 0; c < Bv; c++) seeds[c] = seed_of(o, per, v0 + c);
            PL_CALL_GOTO(lz_rand_block(&rr, Bv, seeds, V0), out, rc);
            PL_CALL_GOTO(be->sync(be), out, rc); /* (asynchronous on a GPU: its time in start_seconds) */
        }
        PL_CALL_GOTO(be->set(be, (size_t)n * Bv, 0.0, V1), out, rc);
        st->start_seconds += pl_wtime() - ts;
        double d[2 * PL_SPMM_RMAX], m0[PL_SPMM_RMAX], m1[PL_SPMM_RMAX];
        /* V1 = H~ V0; mu_0 = <V0, V0>, mu_1 = <V1, V0> */
        PL_CALL_GOTO(pl_op_apply_block_aug(op, Bv, ia, -ba, 0.0, V0, V1, W, d), out, rc);
        st->block_products++;
        st->vector_products += Bv;
        for (int c = 0; c < Bv; c++) {
            double *ag = acc + (size_t)((v0 + c) / per) * N;
            m0[c] = d[c];
            m1[c] = d[Bv + c];
            PL_CHECK_GOTO(m0[c] > 0, PL_ERR_INPUT, out, rc, "KPM start vector %lld is zero", (long long)(v0 + c));
            ag[0] += 1.0;
            ag[1] += m1[c] / m0[c];
        }
        double *prev = V0, *cur = V1;
        for (int k = 1; 2 * k < N; k++) {
            /* prev <- 2 H~ cur - prev = (2/a) A cur - (2b/a) cur - prev */
            PL_CALL_GOTO(pl_op_apply_block_aug(op, Bv, 2.0 * ia, -2.0 * ba, -1.0, cur, prev, W, d), out, rc);
            st->block_products++;
            st->vector_products += Bv;
            for (int c = 0; c < Bv; c++) {
                double *ag = acc + (size_t)((v0 + c) / per) * N;
                ag[2 * k] += (2.0 * d[c] - m0[c]) / m0[c];
                if (2 * k + 1 < N) ag[2 * k + 1] += (2.0 * d[Bv + c] - m1[c]) / m0[c];
            }
            double *t = prev;
            prev = cur;
            cur = t;
            const double now = pl_wtime();
            if (!o->quiet && rank == 0 && now - last > 1.0) {
                last = now;
                pl_info("dos: vectors %lld..%lld of %lld, moment %d of %d, %.1f s", (long long)v0,
                        (long long)(v0 + Bv - 1), (long long)total, 2 * k + 1, N, now - t0);
            }
        }
    }
    for (size_t m = 0; m < (size_t)N * G; m++) mu[m] = acc[m] / (double)per;
    st->fused = be->spmm_aug != NULL && info.n_neighbors == 0;
out:
    lz_rand_rows_free(&rr);
    if (V0) be->vec_free(be, V0);
    if (V1) be->vec_free(be, V1);
    if (W) be->vec_free(be, W);
    free(h);
    free(acc);
    st->seconds = pl_wtime() - t0;
    return rc;
}
