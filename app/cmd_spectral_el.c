/* cmd_spectral_el.c — `spectral` with operator = electron_removal or
 * electron_addition: the single-particle spectral function A(k, w)
 * (docs/models.md "Single-particle spectral function A(k, w)").
 *
 * The ground state psi0 of the N sector comes from cmd_spectral.c.  Here the
 * Hamiltonian H' of the N -/+ 1 sector (one electron of [spectral] spin
 * less or more) is built once, in the active format (matrix_free, pjds or
 * compressed, as H), beside H; every momentum (or site) then costs
 * phi = c_k psi0 (or c+_k psi0), applied on the host from psi0's rows
 * (hamiltonian/hh_elop.c: whole phonon slices, the rows fetched from the
 * ranks that hold them), uploaded in H's permuted basis, and a Lanczos
 * recursion on H' from it.  c_k = C - i S: two real recursions whose spectra
 * add; A(-k) = A(k) for a real H and psi0, so momentum = all runs each pair
 * k, -k once.
 *   removal:  A-(k, w) = sum_m |<m|c_k|psi0>|^2 delta(w - (E0 - E'_m)),
 *   addition: A+(k, w) = sum_m |<m|c+_k|psi0>|^2 delta(w - (E'_m - E0)),
 * w measured from the N sector's ground state energy E0, so the two sides
 * share one axis and add to A(k, w) (free fermions: one pole at the band
 * energy e_k).  In the normal phonon basis the removed uniform mode is a
 * displaced oscillator whose displacement changes with N: its sidebands,
 * Poisson weights of lambda = g^2 / (L w0^2) at n w0 below (removal) or above
 * (addition), are folded in exactly. */
#include <lapacke.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "app_obs.h"
#include "pl_error.h"
#include "pl_spectrum.h"

typedef struct el_out {
    app_obs_out *ao;
    const pl_spectral_cfg *sc;
    int nk, nrec, nmax, kind, spin, L;
    int *klist, *rep, *nsteps;
    double *rec_k, *alpha, *beta;  /* nrec; nrec x nmax          */
    double *omega, *akw, *intensity, *weights, *tmpw, *tmpi;
    double e0, sector_e0, mu, lambda, w0;
    int64_t sector_rows;
    int sector_up, sector_down;
    double build_seconds, apply_seconds, recursion_seconds, step_seconds, spmv_median, total_seconds;
    /* phases (max over ranks): psi0 to where phi is made (download and
     * fetch, or the backend's reorder), phi (its build), its upload (host
     * path), the recursions, the continued fractions; the file's write is
     * logged after it */
    double t_fetch, t_phi, t_upload, t_fraction;
    int on_backend; /* 1: phi made on the backend (el_dev), 0: on the host */
    el_dev *dev;
} el_out;

static int el_write(void *arg, pl_spectrum *sp)
{
    el_out *s = arg;
    PL_CALL(app_obs_write(s->ao, sp));
    const char *g = "spectral";
    const int64_t dp[1] = {s->sc->points}, dk[1] = {s->nk}, dkw[2] = {s->nk, s->sc->points},
                  dab[2] = {s->nrec, s->nmax}, dr[1] = {s->nrec};
    double *km = malloc(((size_t)s->nk + (size_t)s->nrec + 1) * sizeof *km), *ns = km + s->nk;
    PL_CHECK(km, PL_ERR_MEM, "out of host memory");
    for (int i = 0; i < s->nk; i++) km[i] = s->klist[i];
    for (int r = 0; r < s->nrec; r++) ns[r] = s->nsteps[r];
    int rc = PL_OK;
    PL_CALL_GOTO(pl_spectrum_write_array(sp, g, "omega", 1, dp, s->omega), out, rc);
    PL_CALL_GOTO(pl_spectrum_write_array(sp, g, "intensity", 1, dp, s->intensity), out, rc);
    PL_CALL_GOTO(pl_spectrum_write_array(sp, g, "akw", 2, dkw, s->akw), out, rc);
    PL_CALL_GOTO(pl_spectrum_write_array(sp, g, "momenta", 1, dk, km), out, rc);
    PL_CALL_GOTO(pl_spectrum_write_array(sp, g, "weights", 1, dk, s->weights), out, rc);
    PL_CALL_GOTO(pl_spectrum_write_array(sp, g, "alpha", 2, dab, s->alpha), out, rc);
    PL_CALL_GOTO(pl_spectrum_write_array(sp, g, "beta", 2, dab, s->beta), out, rc);
    PL_CALL_GOTO(pl_spectrum_write_array(sp, g, "steps_done", 1, dr, ns), out, rc);
    PL_CALL_GOTO(pl_spectrum_write_array(sp, g, "part_momentum", 1, dr, s->rec_k), out, rc);
out:
    free(km);
    PL_CALL(rc);
    const pl_spectral_cfg *sc = s->sc;
    PL_CALL(pl_spectrum_group_attr_string(sp, g, "operator", pl_config_enum_name("spectral", "operator", sc->op)));
    PL_CALL(pl_spectrum_group_attr_string(sp, g, "spin", sc->spin ? "down" : "up"));
    PL_CALL(pl_spectrum_group_attr_string(sp, g, "resolved_by", sc->local ? "site" : "momentum"));
    PL_CALL(pl_spectrum_group_attr_double(sp, g, "momentum", s->nk > 1 ? -1.0 : (double)s->klist[0]));
    PL_CALL(pl_spectrum_group_attr_double(sp, g, "norm", s->weights[0]));
    PL_CALL(pl_spectrum_group_attr_double(sp, g, "ground_state_energy", s->e0));
    PL_CALL(pl_spectrum_group_attr_double(sp, g, "sector_ground_energy", s->sector_e0));
    PL_CALL(pl_spectrum_group_attr_double(sp, g, "chemical_potential", s->mu));
    PL_CALL(pl_spectrum_group_attr_double(sp, g, "sector_rows", (double)s->sector_rows));
    PL_CALL(pl_spectrum_group_attr_double(sp, g, "sector_n_up", (double)s->sector_up));
    PL_CALL(pl_spectrum_group_attr_double(sp, g, "sector_n_down", (double)s->sector_down));
    PL_CALL(pl_spectrum_group_attr_double(sp, g, "uniform_mode_lambda", s->lambda));
    PL_CALL(pl_spectrum_group_attr_double(sp, g, "broadening", sc->broadening));
    PL_CALL(pl_spectrum_group_attr_double(sp, g, "sector_build_seconds", s->build_seconds));
    PL_CALL(pl_spectrum_group_attr_double(sp, g, "operator_seconds", s->apply_seconds));
    PL_CALL(pl_spectrum_group_attr_double(sp, g, "recursion_seconds", s->recursion_seconds));
    PL_CALL(pl_spectrum_group_attr_double(sp, g, "step_seconds", s->step_seconds));
    PL_CALL(pl_spectrum_group_attr_double(sp, g, "spmv_median_seconds", s->spmv_median));
    PL_CALL(pl_spectrum_group_attr_double(sp, g, "akw_seconds", s->total_seconds));
    PL_CALL(pl_spectrum_group_attr_double(sp, g, "psi0_fetch_seconds", s->t_fetch));
    PL_CALL(pl_spectrum_group_attr_double(sp, g, "phi_build_seconds", s->t_phi));
    PL_CALL(pl_spectrum_group_attr_double(sp, g, "phi_upload_seconds", s->t_upload));
    PL_CALL(pl_spectrum_group_attr_double(sp, g, "fraction_seconds", s->t_fraction));
    PL_CALL(pl_spectrum_group_attr_string(sp, g, "phi_made_on", s->on_backend ? "backend" : "host"));
    PL_CALL(pl_spectrum_group_attr_string(
        sp, g, "convention",
        "removal: A(k,w) = sum_m |<m|c_k psi0>|^2 delta(w - (E0 - E'_m)); addition: A(k,w) = sum_m "
        "|<m|c+_k psi0>|^2 delta(w - (E'_m - E0)); c_k = L^-1/2 sum_j e^{-iq.r_j} c_j; Lorentzians of half-width "
        "broadening; w from the N-sector ground state E0, so removal + addition = A(k,w); chemical_potential: "
        "removal E0(N) - E0(N-1), addition E0(N+1) - E0(N) (E0(N-/+1) = sector_ground_energy, the lowest state "
        "reached); mu = the mean of the two sides; weights = <n_ks> (removal) or 1 - <n_ks> (addition); "
        "parts x steps alpha, beta (beta[p][0] = |phi_p|)"));
    return PL_OK;
}

/* The lowest Ritz value of a recursion with a weight above 1e-10 of its
 * norm (the tridiagonal of its first 400 steps at most); +inf if none.
 * The Ritz values one at a time from the lowest (dstevr, range I, with
 * the vector's first component): O(k^2) each, where all vectors (dstev)
 * cost O(k^3). */
static double lowest_reached(int n, const double *alpha, const double *beta)
{
    if (n <= 0) return INFINITY;
    const int k = n < 400 ? n : 400;
    /* W of length k, not 1: dstevr's bisection (dstebz) writes every
     * eigenvalue it separates into W before it keeps the requested one, and
     * a recursion that lost orthogonality has tied (ghost) Ritz values; a
     * single double here overran the caller's stack (the fused step's
     * slightly different coefficients made it show, H100, 2026-11-26) */
    double *d = malloc((size_t)k * sizeof *d), *e = malloc((size_t)k * sizeof *e), *z = malloc((size_t)k * sizeof *z),
           *w = malloc((size_t)k * sizeof *w);
    lapack_int *sup = malloc(2 * (size_t)k * sizeof *sup), m = 0;
    double low = INFINITY;
    for (int i = 1; d && e && z && w && sup && i <= k && low == INFINITY; i++) {
        for (int j = 0; j < k; j++) d[j] = alpha[j];
        for (int j = 0; j + 1 < k; j++) e[j] = beta[j + 1];
        e[k - 1] = 0.0;
        if (LAPACKE_dstevr(LAPACK_COL_MAJOR, 'V', 'I', k, d, e, 0.0, 0.0, i, i, 0.0, &m, w, z, k, sup) != 0 || m != 1)
            break;
        if (z[0] * z[0] > 1e-10) low = w[0];
    }
    free(d);
    free(e);
    free(z);
    free(w);
    free(sup);
    return low;
}

/* One recursion's continued fraction added to acc (the uniform mode's
 * Poisson sidebands folded in): one parallel region, blocks of points over
 * the threads, each block all sidebands in order (each point's value is
 * the serial one's: the same operations in the same order). */
static void el_fraction(el_out *s, int n, const double *alpha, const double *beta, double *acc)
{
    const pl_spectral_cfg *sc = s->sc;
    const int P = sc->points, blk = 64, nb = (P + blk - 1) / blk;
#pragma omp parallel for schedule(static)
    for (int b = 0; b < nb; b++) {
        const int i0 = b * blk, i1 = i0 + blk < P ? i0 + blk : P;
        double pn = exp(-s->lambda);
        for (int t = 0; t <= 1000; t++) {
            if (t > 0) pn *= s->lambda / t;
            if (t > 0 && (pn < 1e-17 || s->lambda == 0.0)) break;
            for (int i = i0; i < i1; i++)
                s->tmpw[i] = s->kind == HH_EL_REMOVE ? -(s->omega[i] + t * s->w0) : s->omega[i] - t * s->w0;
            lz_continued_fraction(n, alpha, beta, s->e0, sc->broadening, i1 - i0, s->tmpw + i0, s->tmpi + i0);
            for (int i = i0; i < i1; i++) acc[i] += pn * s->tmpi[i];
        }
    }
}

/* One recursion's continued fraction and lowest reached value, in a thread
 * of its own while the GPU runs the next recursion (el_recursions: a GPU
 * backend only; on the CPU backend the threads are the recursion's). */
typedef struct frac_job {
    el_out *s;
    int n;
    const double *alpha, *beta;
    double *acc, low, seconds;
    pthread_t th;
    int started;
} frac_job;

static void *frac_run(void *arg)
{
    frac_job *j = arg;
    const double t0 = pl_wtime();
    el_fraction(j->s, j->n, j->alpha, j->beta, j->acc);
    /* a part that reaches nothing (|phi|^2 at rounding level) says nothing about the sector */
    j->low = j->beta[0] * j->beta[0] > 1e-12 ? lowest_reached(j->n, j->alpha, j->beta) : INFINITY;
    j->seconds = pl_wtime() - t0;
    return NULL;
}

/* Wait for the job (if one runs) and take its results into s. */
static void frac_join(frac_job *j)
{
    if (!j->started) return;
    pthread_join(j->th, NULL);
    j->started = 0;
    if (j->low < j->s->sector_e0) j->s->sector_e0 = j->low;
    j->s->t_fraction += j->seconds;
}

/* Start the job, or run it here when no thread can be made (or wanted). */
static void frac_start(frac_job *j, int background)
{
    if (background && pthread_create(&j->th, NULL, frac_run, j) == 0) {
        j->started = 1;
        return;
    }
    frac_run(j);
    j->started = 0;
    if (j->low < j->s->sector_e0) j->s->sector_e0 = j->low;
    j->s->t_fraction += j->seconds;
}

/* The momenta (or sites) of the output and, for each, the entry whose
 * recursions give it (itself, or its -k partner). */
static int el_plan(el_out *s, const hh_model *m)
{
    const pl_spectral_cfg *sc = s->sc;
    const int L = s->L, one = sc->local ? sc->site : sc->momentum;
    s->nk = one == PL_SPECTRAL_ALL ? L : 1;
    s->nmax = sc->steps;
    s->klist = calloc((size_t)s->nk, sizeof *s->klist);
    s->rep = calloc((size_t)s->nk, sizeof *s->rep);
    s->nsteps = calloc(2 * (size_t)s->nk, sizeof *s->nsteps);
    s->rec_k = calloc(2 * (size_t)s->nk, sizeof *s->rec_k);
    s->alpha = calloc(2 * (size_t)s->nk * (size_t)s->nmax, sizeof *s->alpha);
    s->beta = calloc(2 * (size_t)s->nk * (size_t)s->nmax, sizeof *s->beta);
    s->omega = malloc((size_t)sc->points * sizeof *s->omega);
    s->akw = calloc((size_t)s->nk * (size_t)sc->points, sizeof *s->akw);
    s->intensity = calloc((size_t)sc->points, sizeof *s->intensity);
    s->weights = calloc((size_t)s->nk, sizeof *s->weights);
    s->tmpw = malloc((size_t)sc->points * sizeof *s->tmpw);
    s->tmpi = malloc((size_t)sc->points * sizeof *s->tmpi);
    PL_CHECK(s->klist && s->rep && s->nsteps && s->rec_k && s->alpha && s->beta && s->omega && s->akw &&
                 s->intensity && s->weights && s->tmpw && s->tmpi,
             PL_ERR_MEM, "out of host memory for the spectrum");
    for (int i = 0; i < s->nk; i++) {
        s->klist[i] = s->nk > 1 ? i : one;
        const int p = sc->local || s->nk == 1 ? i : hh_el_partner(m, i);
        s->rep[i] = p < i ? p : i;
    }
    for (int i = 0; i < sc->points; i++)
        s->omega[i] = sc->points == 1 ? sc->omega_min
                                      : sc->omega_min + (sc->omega_max - sc->omega_min) * (double)i / (sc->points - 1);
    return PL_OK;
}

static void el_free(el_out *s)
{
    free(s->klist);
    free(s->rep);
    free(s->nsteps);
    free(s->rec_k);
    free(s->alpha);
    free(s->beta);
    free(s->omega);
    free(s->akw);
    free(s->intensity);
    free(s->weights);
    free(s->tmpw);
    free(s->tmpi);
}

/* H' of the sector n_up, n_down: built as H was (the active format), with
 * the host vectors of the electron operator (the source rows, up to the
 * whole N-sector vector, and two target vectors) in the memory plan; the
 * N sector's operator stays alive (its memory is what the plan finds in
 * use).  Collective. */
static int build_sector(app_ctx *ctx, pl_backend *be, const hh_params *sp, int64_t n_src, pl_op **op2)
{
    pl_config *save = malloc(sizeof *save);
    PL_CHECK(save, PL_ERR_MEM, "out of host memory");
    *save = ctx->cfg;
    ctx->cfg.model.n_up = sp->n_up;
    ctx->cfg.model.n_down = sp->n_down;
    ctx->cfg.solver.nev = 0; /* no eigenpairs of this sector: nev < N holds for any N >= 1 */
    ctx->cfg.solver.ncv = 4; /* the plan's basis: the recursion's vectors */
    ctx->plan_extra_host = 8.0 * (double)n_src;
    solve_facts f2;
    memset(&f2, 0, sizeof f2);
    pl_csr rows;
    memset(&rows, 0, sizeof rows);
    int rc = solve_build(ctx, &rows, &be, &f2);
    if (rc == PL_OK) rc = solve_make_op(ctx, &rows, be, op2, &f2);
    pl_csr_destroy(&rows);
    ctx->plan_extra_host = 0.0;
    ctx->cfg = *save;
    free(save);
    return rc;
}

/* phi = the part's coefficients applied to psi0, in op2's permuted basis
 * on the backend: on the backend (s->dev), or on the host from psi0's
 * source rows (xs: rows [xa, xb)) and uploaded.  Local. */
static int el_phi(pl_op *op2, const hh_model *m, const hh_model *m2, el_out *s, const double *coef, const double *xs,
                  int64_t xa, int64_t xb, double *y, double *h, double *phi)
{
    const double t0 = pl_wtime();
    if (s->dev) {
        PL_CALL(el_dev_phi(s->dev, coef, phi));
        s->t_phi += pl_wtime() - t0;
        return PL_OK;
    }
    pl_op_info info;
    pl_op_get_info(op2, &info);
    const int64_t n = info.n_local, r0 = info.row0, *gi = pl_op_global_index(op2);
    PL_CALL(hh_el_apply(m, m2, s->kind, s->spin, coef, r0, r0 + n, xs, xa, xb, y));
#pragma omp parallel for schedule(static)
    for (int64_t p = 0; p < n; p++) h[p] = y[gi[p] - r0];
    const double t1 = pl_wtime();
    s->t_phi += t1 - t0;
    pl_backend *be = pl_op_backend(op2);
    PL_CALL(be->upload(be, phi, h, (size_t)n));
    PL_CALL(be->sync(be));
    s->t_upload += pl_wtime() - t1;
    return PL_OK;
}

/* Every recursion on op2; the spectra into s.  Collective. */
static int el_recursions(app_ctx *ctx, pl_op *op2, const hh_model *m, const hh_model *m2, el_out *s,
                         const double *xs, int64_t xa, int64_t xb)
{
    pl_op_info info;
    pl_op_get_info(op2, &info);
    pl_backend *be = pl_op_backend(op2);
    const size_t n = (size_t)info.n_local;
    double *y = NULL, *h = NULL, *phi = NULL;
    int rc = PL_OK, steps_sum = 0;
    double t_step_sum = 0.0;
    frac_job job = {0};
    if (!s->dev) {
        y = app_host_big(n + 1);
        h = app_host_big(n + 1);
        PL_CHECK_GOTO(y && h, PL_ERR_MEM, out, rc, "out of host memory");
    }
    PL_CALL_GOTO(be->vec_alloc(be, n + 1, &phi), out, rc);
    s->sector_e0 = INFINITY;
    for (int i = 0; i < s->nk; i++) {
        if (s->rep[i] != i) continue;
        double coef[2][HH_LATTICE_MAX_SITES];
        const int np = hh_el_coefs(m, s->sc->local ? -1 : s->klist[i], s->sc->local ? s->klist[i] : -1, coef);
        for (int p = 0; p < np; p++) {
            const int r = s->nrec++;
            double *ap = s->alpha + (size_t)r * s->nmax, *bp = s->beta + (size_t)r * s->nmax, ts = 0.0;
            const double ta = pl_wtime();
            PL_CALL_GOTO(el_phi(op2, m, m2, s, coef[p], xs, xa, xb, y, h, phi), out, rc);
            const double tr = pl_wtime();
            s->apply_seconds += tr - ta;
            PL_CALL_GOTO(lz_recursion_fast(op2, phi, s->sc->steps, ap, bp, &s->nsteps[r], &ts), out, rc);
            const double tf = pl_wtime();
            s->recursion_seconds += tf - tr;
            t_step_sum += ts * s->nsteps[r];
            steps_sum += s->nsteps[r];
            s->rec_k[r] = s->klist[i];
            s->weights[i] += bp[0] * bp[0];
            /* the fraction of this recursion beside the next one on the GPU (the previous one's first:
             * it may add into the same momentum's row); s->t_fraction: the fractions' own seconds */
            frac_join(&job);
            job = (frac_job){.s = s, .n = s->nsteps[r], .alpha = ap, .beta = bp,
                             .acc = s->akw + (size_t)i * s->sc->points};
            frac_start(&job, !be->host_memory);
            (void)tf;
        }
    }
    frac_join(&job);
    s->step_seconds = steps_sum > 0 ? app_max_over_ranks(ctx, t_step_sum / steps_sum) : 0.0;
out:
    frac_join(&job);
    if (phi) be->vec_free(be, phi);
    free(y);
    free(h);
    return rc;
}

/* The SpMV time of H' for the ratio (the recursion's applies are queued:
 * no samples): the median of 21 products, after the A(k, w) time.
 * Collective. */
static int el_spmv_median(app_ctx *ctx, pl_op *op2, el_out *s)
{
    pl_op_info info;
    pl_op_get_info(op2, &info);
    pl_backend *be = pl_op_backend(op2);
    const size_t n = (size_t)info.n_local;
    double *x = NULL, *q = NULL;
    int rc = PL_OK;
    PL_CALL_GOTO(be->vec_alloc(be, n + 1, &x), out, rc);
    PL_CALL_GOTO(be->vec_alloc(be, n + 1, &q), out, rc);
    PL_CALL_GOTO(be->set(be, n, 1.0, x), out, rc);
    pl_op_reset_counters(op2);
    for (int i = 0; i < 21; i++) PL_CALL_GOTO(pl_op_apply(op2, x, q), out, rc);
    pl_op_timings ot;
    pl_op_timings_get(op2, &ot);
    s->spmv_median = app_max_over_ranks(ctx, ot.t_median);
out:
    if (x) be->vec_free(be, x);
    if (q) be->vec_free(be, q);
    return rc;
}

/* psi0's source rows [*xa, *xb) for the sector's rows of op2: fetched from
 * the ranks that hold them (one rank: psi0 itself, *own = 1).  Collective. */
static int el_sources(app_ctx *ctx, pl_op *op, pl_op *op2, const hh_model *m, const hh_model *m2, const el_out *s,
                      const double *psi0, size_t ld, double **xblk, double **xs, int64_t *xa, int64_t *xb)
{
    int64_t row0 = 0, n = 0;
    pl_op_orig_block(op, &row0, &n);
    *xblk = app_host_big((size_t)n + 1);
    PL_CHECK(*xblk, PL_ERR_MEM, "out of host memory for the ground state");
    PL_CALL(app_vectors_original(op, 1, psi0, ld, *xblk));
    pl_op_info i2;
    pl_op_get_info(op2, &i2);
    hh_el_source_range(m, m2, s->kind, s->spin, i2.row0, i2.row0 + i2.n_local, xa, xb);
    if (ctx->size == 1) {
        *xs = *xblk;
        *xa = 0;
        *xb = n;
        return PL_OK;
    }
    *xs = app_host_big((size_t)(*xb - *xa) + 1);
    PL_CHECK(*xs, PL_ERR_MEM, "out of host memory for the ground state's rows");
    return app_fetch_rows(ctx->comm, row0, n, 1, *xblk, (size_t)n, *xa, *xb, *xs, (size_t)(*xb - *xa));
}

/* Where phi is made: on the backend (one rank, s->dev; PJDS_EL_HOST=1, for
 * measurements, forces the host), else from psi0's rows on the host
 * (el_sources).  Collective. */
static int el_prepare(app_ctx *ctx, pl_op *op, pl_op *op2, const hh_model *m, const hh_model *m2, el_out *s,
                      const lz_result *res, double **xblk, double **xs, int64_t *xa, int64_t *xb)
{
    const char *force = getenv("PJDS_EL_HOST");
    if (ctx->size == 1 && !(force && force[0] == '1') && el_dev_usable(op, op2)) {
        const int e = el_dev_create(op, op2, m, m2, s->kind, s->spin, res->vectors, &s->dev);
        if (e == PL_OK) {
            s->on_backend = 1;
            return PL_OK;
        }
        if (e != PL_ERR_INPUT && e != PL_ERR_MEM) return e;
        pl_debug("spectral: phi on the host (%s)", pl_error_message()); /* the backend's memory is short */
        pl_error_clear();
    }
    return el_sources(ctx, op, op2, m, m2, s, res->vectors, res->ld, xblk, xs, xa, xb);
}

/* The spectra of the entries that copy their -k partner, the sum over k,
 * the chemical potential of this side. */
static void el_finish(el_out *s)
{
    const int P = s->sc->points;
    for (int i = 0; i < s->nk; i++) {
        if (s->rep[i] != i) {
            memcpy(s->akw + (size_t)i * P, s->akw + (size_t)s->rep[i] * P, (size_t)P * sizeof *s->akw);
            s->weights[i] = s->weights[s->rep[i]];
        }
        for (int j = 0; j < P; j++) s->intensity[j] += s->akw[(size_t)i * P + j] / s->nk;
    }
    if (!isfinite(s->sector_e0)) s->sector_e0 = NAN; /* nothing reached: c_k psi0 = 0 everywhere */
    s->mu = s->kind == HH_EL_REMOVE ? s->e0 - s->sector_e0 : s->sector_e0 - s->e0;
}

int spectral_electron(app_ctx *ctx, pl_op *op, const hh_model *m, const lz_result *res, solve_facts *f,
                      app_obs_out *ao)
{
    const pl_config *cfg = &ctx->cfg;
    const pl_spectral_cfg *sc = &cfg->spectral;
    el_out s;
    memset(&s, 0, sizeof s);
    s.ao = ao;
    s.sc = sc;
    s.kind = sc->op == PL_SPEC_ELECTRON_REMOVAL ? HH_EL_REMOVE : HH_EL_ADD;
    s.spin = sc->spin;
    s.e0 = res->eigenvalues[0];
    hh_params hp, sp;
    app_hh_params(&cfg->model, &hp);
    s.L = cfg->model.sites;
    if (hp.phonon_basis == PL_PHONON_NORMAL) { /* the uniform mode's displacement g N_e / (sqrt(L) w0) */
        s.w0 = hp.phonon_frequency;
        s.lambda = hp.coupling * hp.coupling / ((double)s.L * hp.phonon_frequency * hp.phonon_frequency);
    }
    hh_model *m2 = NULL;
    pl_op *op2 = NULL;
    double *xblk = NULL, *xs = NULL;
    int64_t xa = 0, xb = 0;
    int rc = PL_OK;
    PL_CALL_GOTO(el_plan(&s, m), out, rc);
    PL_CALL_GOTO(app_param_error(cfg, "spectral", "operator", hh_el_sector(&hp, s.kind, s.spin, &sp)), out, rc);
    s.sector_up = sp.n_up;
    s.sector_down = sp.n_down;
    PL_CALL_GOTO(hh_model_create(&sp, &m2), out, rc);
    s.sector_rows = hh_model_rows(m2);
    const double t0 = pl_wtime();
    app_signal_exit_phase("the build of the N -/+ 1 sector", "nothing to save (spectral has no checkpoints)");
    PL_CALL_GOTO(build_sector(ctx, pl_op_backend(op), &sp, hh_model_rows(m), &op2), out, rc);
    s.build_seconds = app_max_over_ranks(ctx, pl_wtime() - t0);
    app_signal_exit_phase("the recursion", "nothing to save (spectral has no checkpoints)");
    const double tf = pl_wtime();
    PL_CALL_GOTO(el_prepare(ctx, op, op2, m, m2, &s, res, &xblk, &xs, &xa, &xb), out, rc);
    s.t_fetch = pl_wtime() - tf;
    PL_CALL_GOTO(el_recursions(ctx, op2, m, m2, &s, xs, xa, xb), out, rc);
    s.total_seconds = app_max_over_ranks(ctx, pl_wtime() - t0);
    PL_CALL_GOTO(el_spmv_median(ctx, op2, &s), out, rc);
    double *ph[] = {&s.apply_seconds, &s.recursion_seconds, &s.t_fetch, &s.t_phi, &s.t_upload, &s.t_fraction};
    for (size_t i = 0; i < sizeof ph / sizeof *ph; i++) *ph[i] = app_max_over_ranks(ctx, *ph[i]);
    el_finish(&s);
    if (ctx->rank == 0) {
        const double spmvs = (double)s.nk * sc->steps * s.spmv_median;
        pl_info("spectral: %s %s, %d %s, %d recursions (%lld rows, n_up %d, n_down %d), sector build %.3f s, "
                "A(k,w) %.3f s = %.2fx the time of %d x %d SpMVs of H' (median %.3f ms), step %.3f ms, "
                "chemical potential of this side %.10g",
                pl_config_enum_name("spectral", "operator", sc->op), sc->spin ? "down" : "up", s.nk,
                sc->local ? (s.nk > 1 ? "sites" : "site") : (s.nk > 1 ? "momenta" : "momentum"), s.nrec, (long long)s.sector_rows, s.sector_up,
                s.sector_down, s.build_seconds, s.total_seconds, spmvs > 0 ? s.total_seconds / spmvs : 0.0, s.nk,
                sc->steps, 1e3 * s.spmv_median, 1e3 * s.step_seconds, s.mu);
        pl_info("spectral: A(k,w) phases: build %.3f s, psi0 %s %.3f s, phi %.3f s (on the %s), upload %.3f s, "
                "recursions %.3f s, continued fractions %.3f s, rest %.3f s",
                s.build_seconds, s.on_backend ? "reordered on the backend" : "to the host", s.t_fetch, s.t_phi,
                s.on_backend ? "backend" : "host", s.t_upload, s.recursion_seconds, s.t_fraction,
                s.total_seconds - s.build_seconds - s.t_fetch - s.t_phi - s.t_upload - s.recursion_seconds -
                    s.t_fraction);
    }
    app_signal_flag_phase(); /* the result is complete: it is written, then exit 0 */
    const double tw = pl_wtime();
    PL_CALL_GOTO(solve_write(ctx, cfg->output.file, ctx->overwrite, op, res, f, el_write, &s), out, rc);
    if (ctx->rank == 0) pl_info("spectral: the file written in %.3f s", pl_wtime() - tw);
    solve_report(ctx, res, f, cfg->output.file);
out:
    el_dev_destroy(&s.dev);
    if (xs != xblk) free(xs);
    free(xblk);
    pl_op_destroy(&op2);
    hh_model_destroy(&m2);
    el_free(&s);
    return rc;
}
