/* cmd_spectral.c — `pjds-lanczos spectral CONFIG`: a dynamical correlation
 * function by a Lanczos continued fraction (docs/models.md, "Spectral functions").
 *
 * Solve for the ground state psi0 (the [solver] settings; the lowest
 * returned pair), apply the operator O of [spectral] (hamiltonian/hh_ops.c)
 * once, and run the recursion of lanczos/lz_recursion.c on H from
 * phi = O psi0.  phonon_displacement and density keep the electrons in
 * place: they are applied on the host to psi0 in the original order with
 * the rest of the boundary slices from the neighbours.  The current moves
 * electrons anywhere: it becomes its own distributed pJDS operator over the
 * same row blocks (O's permuted basis differs from H's: the vectors move
 * between the two through the original order of the rank's block).
 * A q-resolved operator has a cos and a sin part: two recursions, whose
 * spectra add.  The result file is solve's, plus /spectral and
 * /observables.  operator = electron_removal | electron_addition: A(k, w)
 * between the N and N -/+ 1 sectors, cmd_spectral_el.c.  SIGUSR1/SIGTERM before the write: exit status 3 at once
 * (no checkpoints); during it: finished, status 0. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "app_obs.h"
#include "pl_error.h"
#include "pl_spectrum.h"

#define SPEC_MAX_PARTS 2

typedef struct spec_out {
    app_obs_out *ao;
    const pl_spectral_cfg *sc;
    int parts, nmax, nsteps[SPEC_MAX_PARTS];
    double *alpha, *beta;   /* parts x nmax, 0 past nsteps */
    double *omega, *intensity;
    double norm, e0, step_seconds, spmv_median, recursion_seconds, operator_seconds;
} spec_out;

static int spec_write(void *arg, pl_spectrum *sp)
{
    spec_out *s = arg;
    PL_CALL(app_obs_write(s->ao, sp));
    const char *g = "spectral";
    const int64_t dp[1] = {s->sc->points}, dab[2] = {s->parts, s->nmax}, dn[1] = {s->parts};
    PL_CALL(pl_spectrum_write_array(sp, g, "omega", 1, dp, s->omega));
    PL_CALL(pl_spectrum_write_array(sp, g, "intensity", 1, dp, s->intensity));
    PL_CALL(pl_spectrum_write_array(sp, g, "alpha", 2, dab, s->alpha));
    PL_CALL(pl_spectrum_write_array(sp, g, "beta", 2, dab, s->beta));
    double ns[SPEC_MAX_PARTS];
    for (int p = 0; p < s->parts; p++) ns[p] = (double)s->nsteps[p];
    PL_CALL(pl_spectrum_write_array(sp, g, "steps_done", 1, dn, ns));
    PL_CALL(pl_spectrum_group_attr_string(sp, g, "operator", pl_config_enum_name("spectral", "operator", s->sc->op)));
    PL_CALL(pl_spectrum_group_attr_double(sp, g, "momentum", (double)s->sc->momentum));
    PL_CALL(pl_spectrum_group_attr_double(sp, g, "norm", s->norm));
    PL_CALL(pl_spectrum_group_attr_double(sp, g, "ground_state_energy", s->e0));
    PL_CALL(pl_spectrum_group_attr_double(sp, g, "broadening", s->sc->broadening));
    PL_CALL(pl_spectrum_group_attr_double(sp, g, "step_seconds", s->step_seconds));
    PL_CALL(pl_spectrum_group_attr_double(sp, g, "spmv_median_seconds", s->spmv_median));
    PL_CALL(pl_spectrum_group_attr_double(sp, g, "recursion_seconds", s->recursion_seconds));
    PL_CALL(pl_spectrum_group_attr_double(sp, g, "operator_seconds", s->operator_seconds));
    PL_CALL(pl_spectrum_group_attr_string(sp, g, "convention",
                                          "A(w) = -(1/pi) Im <phi|(w + i eta + E0 - H)^-1|phi>, phi = O psi0; "
                                          "q-resolved O = C + i S: A = A_C + A_S; parts x steps alpha, beta "
                                          "(beta[p][0] = |phi_p|)"));
    return PL_OK;
}

/* The [spectral] operator as its own distributed pJDS operator over the
 * same row blocks as op (both parts as value terms when there are two).
 * Collective; failure is collective. */
static int build_operator(app_ctx *ctx, pl_op *op, const hh_model *m, pl_op **oop)
{
    pl_op_info info;
    pl_op_get_info(op, &info);
    pl_csr rows;
    memset(&rows, 0, sizeof rows);
    int rc = PL_OK;
    const double t0 = pl_wtime();
    const int e = hh_op_rows_csr(m, ctx->cfg.spectral.op, ctx->cfg.spectral.momentum, info.row0,
                                 info.row0 + info.n_local, &rows);
    int bad = e != PL_OK;
    PL_CHECK_GOTO(MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, ctx->comm) == MPI_SUCCESS, PL_ERR_MPI, out, rc,
                  "MPI_Allreduce of the operator status failed");
    if (e != PL_OK) {
        rc = e;
        goto out;
    }
    PL_CHECK_GOTO(!bad, PL_ERR_MPI, out, rc, "another rank failed to build the [spectral] operator");
    pl_op_options scfg;
    app_op_options(&ctx->cfg.spmv, &scfg);
    scfg.reproducible = ctx->cfg.solver.reproducible; /* (several ranks: refused, O is stored) */
    /* O is stored: the tables stand for H only (format = matrix_free, or
     * auto that chose them for H) */
    if (scfg.format == PL_FORMAT_MATRIX_FREE) scfg.format = PL_FORMAT_AUTO;
    const double t1 = pl_wtime();
    PL_CALL_GOTO(pl_op_create(&rows, &scfg, pl_op_backend(op), ctx->comm, oop), out, rc);
    pl_debug("spectral: operator rows %.3f s, pJDS operator %.3f s", t1 - t0, pl_wtime() - t1);
out:
    pl_csr_destroy(&rows);
    return rc;
}

/* phi = O_part psi0 in H's basis: psi0 (backend, H's basis) -> host, O's
 * basis (through the original order of the block) -> apply -> back.
 * Collective. */
static int apply_part(pl_op *op, pl_op *oop, int part, const double *psi0, double *phi)
{
    pl_op_info info;
    pl_op_get_info(op, &info);
    pl_backend *be = pl_op_backend(op);
    const int64_t n = info.n_local, row0 = info.row0;
    double *orig = NULL, *h = NULL, *dx = NULL, *dy = NULL;
    int rc = PL_OK;
    const double t0 = pl_wtime();
    if (pl_op_nterms(oop) > 0) {
        const double coef[2] = {part == 0 ? 1.0 : 0.0, part == 0 ? 0.0 : 1.0};
        PL_CALL_GOTO(pl_op_refill(oop, 2, coef), out, rc);
    }
    orig = app_host_big((size_t)n + 1);
    h = app_host_big((size_t)n + 1);
    PL_CHECK_GOTO(orig && h, PL_ERR_MEM, out, rc, "out of host memory");
    const double t1 = pl_wtime();
    PL_CALL_GOTO(app_vectors_original(op, 1, psi0, (size_t)n, orig), out, rc);
    const double t2 = pl_wtime();
    const int64_t *go = pl_op_global_index(oop), *gh = pl_op_global_index(op);
#pragma omp parallel for schedule(static)
    for (int64_t p = 0; p < n; p++) h[p] = orig[go[p] - row0];
    PL_CALL_GOTO(be->vec_alloc(be, (size_t)n + 1, &dx), out, rc);
    PL_CALL_GOTO(be->vec_alloc(be, (size_t)n + 1, &dy), out, rc);
    PL_CALL_GOTO(be->upload(be, dx, h, (size_t)n), out, rc);
    PL_CALL_GOTO(pl_op_apply(oop, dx, dy), out, rc);
    PL_CALL_GOTO(be->download(be, h, dy, (size_t)n), out, rc);
#pragma omp parallel for schedule(static)
    for (int64_t p = 0; p < n; p++) orig[go[p] - row0] = h[p];
#pragma omp parallel for schedule(static)
    for (int64_t p = 0; p < n; p++) h[p] = orig[gh[p] - row0];
    PL_CALL_GOTO(be->upload(be, phi, h, (size_t)n), out, rc);
    pl_debug("spectral: part %d: refill %.3f s, psi0 to the host %.3f s, O psi0 and back %.3f s", part, t1 - t0, t2 - t1,
             pl_wtime() - t2);
out:
    if (dx) be->vec_free(be, dx);
    if (dy) be->vec_free(be, dy);
    free(orig);
    free(h);
    return rc;
}

/* phonon_displacement and density: applied on the host to psi0 in the
 * original order, with the rest of the first and last electron slice
 * fetched from the neighbouring ranks (hh_op_apply_local): no second pJDS
 * operator.  *xfull (rows [*xa, xb)) is kept for both parts.  Collective. */
static int local_prepare(app_ctx *ctx, pl_op *op, const hh_model *m, const double *psi0, double **xfull, int64_t *xa)
{
    pl_op_info info;
    pl_op_get_info(op, &info);
    const int64_t n = info.n_local, row0 = info.row0, r1 = row0 + n;
    int64_t xb = 0;
    hh_op_local_range(m, row0, r1, xa, &xb);
    double *x = app_host_big((size_t)(xb - *xa) + 1);
    PL_CHECK(x, PL_ERR_MEM, "out of host memory for the ground state");
    int rc = PL_OK;
    PL_CALL_GOTO(app_vectors_original(op, 1, psi0, (size_t)n, x + (row0 - *xa)), out, rc);
    PL_CALL_GOTO(app_fetch_rows(ctx->comm, row0, n, 1, x + (row0 - *xa), (size_t)n, *xa, row0, x, (size_t)(row0 - *xa)),
                 out, rc);
    PL_CALL_GOTO(app_fetch_rows(ctx->comm, row0, n, 1, x + (row0 - *xa), (size_t)n, r1, xb, x + (r1 - *xa),
                                (size_t)(xb - r1)),
                 out, rc);
    *xfull = x;
    return PL_OK;
out:
    free(x);
    return rc;
}

static int local_apply(pl_op *op, const hh_model *m, const pl_spectral_cfg *sc, int part, const double *xfull, int64_t xa,
                       double *phi)
{
    pl_op_info info;
    pl_op_get_info(op, &info);
    pl_backend *be = pl_op_backend(op);
    const int64_t n = info.n_local, row0 = info.row0, *gh = pl_op_global_index(op);
    double *y = app_host_big((size_t)n + 1), *h = app_host_big((size_t)n + 1);
    int rc = PL_OK;
    PL_CHECK_GOTO(y && h, PL_ERR_MEM, out, rc, "out of host memory");
    PL_CALL_GOTO(hh_op_apply_local(m, sc->op, sc->momentum, part, row0, row0 + n, xfull, xa, y), out, rc);
#pragma omp parallel for schedule(static)
    for (int64_t p = 0; p < n; p++) h[p] = y[gh[p] - row0];
    PL_CALL_GOTO(be->upload(be, phi, h, (size_t)n), out, rc);
out:
    free(y);
    free(h);
    return rc;
}

/* The checks of the config that every rank makes alike, and the model. */
static int spectral_model(app_ctx *ctx, hh_model **m)
{
    const pl_config *cfg = &ctx->cfg;
    const pl_spectral_cfg *sc = &cfg->spectral;
    PL_CHECK(cfg->model.type == PL_MODEL_HOLSTEIN_HUBBARD, PL_ERR_INPUT,
             "%s: spectral needs a generated holstein-hubbard model ([model] type), the operators act on its basis",
             cfg->path);
    PL_CHECK(cfg->sweep.nkeys == 0, PL_ERR_INPUT, "%s: spectral takes no [sweep] section", cfg->path);
    PL_CHECK(cfg->solver.which == PL_WHICH_SMALLEST, PL_ERR_INPUT,
             "%s: [solver] which: spectral needs the ground state (which = smallest)", cfg->path);
    PL_CHECK(!(sc->op == PL_SPEC_PHONON_DISPLACEMENT && sc->momentum == 0 &&
               cfg->model.phonon_basis == PL_PHONON_NORMAL),
             PL_ERR_INPUT,
             "%s: [spectral] momentum: 0 with operator = phonon_displacement needs phonon_basis = site (the normal "
             "basis removes the uniform mode, whose spectrum is analytic: 4 beta0^2 delta(w) + delta(w - w0))",
             cfg->path);
    hh_params hp;
    app_hh_params(&cfg->model, &hp);
    PL_CALL(hh_model_create(&hp, m));
    /* the electron operators: checked by pl_config_check (cmd_spectral_el.c) */
    int rc = sc->op >= PL_SPEC_ELECTRON_REMOVAL ? PL_OK : hh_op_check(*m, sc->op, sc->momentum);
    if (rc == PL_OK) rc = app_check_output_path(ctx, cfg->output.file);
    if (rc != PL_OK) hh_model_destroy(m);
    return rc;
}

/* The spectrum's arrays (so) and the omega grid. */
static int spectral_alloc(const pl_spectral_cfg *sc, int parts, spec_out *so, double **part_int)
{
    so->parts = parts;
    so->nmax = sc->steps;
    so->alpha = calloc((size_t)so->parts * (size_t)so->nmax, sizeof *so->alpha);
    so->beta = calloc((size_t)so->parts * (size_t)so->nmax, sizeof *so->beta);
    so->omega = malloc((size_t)sc->points * sizeof *so->omega);
    so->intensity = calloc((size_t)sc->points, sizeof *so->intensity);
    *part_int = malloc((size_t)sc->points * sizeof **part_int);
    PL_CHECK(so->alpha && so->beta && so->omega && so->intensity && *part_int, PL_ERR_MEM,
             "out of host memory for the spectrum");
    for (int i = 0; i < sc->points; i++)
        so->omega[i] = sc->points == 1 ? sc->omega_min
                                       : sc->omega_min + (sc->omega_max - sc->omega_min) * (double)i / (sc->points - 1);
    return PL_OK;
}

/* phi = O_p |psi0> for each part p of the operator, a Lanczos recursion from
 * each, and the continued fractions summed into so->intensity. */
static int spectral_recursions(app_ctx *ctx, pl_op *op, const hh_model *m, const lz_result *res, double *phi,
                               spec_out *so, double *part_int)
{
    const pl_spectral_cfg *sc = so->sc;
    double *xfull = NULL;
    int64_t xa = 0;
    pl_op *oop = NULL;
    double t_rec = 0.0, t_step_sum = 0.0;
    int steps_sum = 0, rc = PL_OK;
    const double t_op = pl_wtime();
    const int local = sc->op != PL_SPEC_CURRENT;
    if (local) PL_CALL_GOTO(local_prepare(ctx, op, m, res->vectors, &xfull, &xa), out, rc);
    else PL_CALL_GOTO(build_operator(ctx, op, m, &oop), out, rc);
    for (int p = 0; p < so->parts; p++) {
        double ts = 0.0;
        const double ta = pl_wtime();
        if (local) PL_CALL_GOTO(local_apply(op, m, sc, p, xfull, xa, phi), out, rc);
        else PL_CALL_GOTO(apply_part(op, oop, p, res->vectors, phi), out, rc);
        so->operator_seconds += pl_wtime() - (p == 0 ? t_op : ta);
        const double tr = pl_wtime();
        double *ap = so->alpha + (size_t)p * so->nmax, *bp = so->beta + (size_t)p * so->nmax;
        PL_CALL_GOTO(lz_recursion(op, phi, sc->steps, ap, bp, &so->nsteps[p], &ts), out, rc);
        t_rec += pl_wtime() - tr;
        t_step_sum += ts * so->nsteps[p];
        steps_sum += so->nsteps[p];
        so->norm += bp[0] * bp[0];
        lz_continued_fraction(so->nsteps[p], ap, bp, so->e0, sc->broadening, sc->points, so->omega, part_int);
        for (int i = 0; i < sc->points; i++) so->intensity[i] += part_int[i];
    }
    so->recursion_seconds = app_max_over_ranks(ctx, t_rec);
    so->operator_seconds = app_max_over_ranks(ctx, so->operator_seconds);
    so->step_seconds = steps_sum > 0 ? app_max_over_ranks(ctx, t_step_sum / steps_sum) : 0.0;
    /* the SpMV time of this operator, for the step / SpMV ratio: the
     * recursion's applies are queued (no timing sample) */
    pl_op_reset_counters(op);
    for (int i = 0; i < 21; i++) PL_CALL_GOTO(pl_op_apply(op, res->vectors, phi), out, rc);
    pl_op_timings ot;
    pl_op_timings_get(op, &ot);
    so->spmv_median = app_max_over_ranks(ctx, ot.t_median);
out:
    free(xfull);
    pl_op_destroy(&oop);
    return rc;
}

int cmd_spectral(app_ctx *ctx)
{
    const pl_config *cfg = &ctx->cfg;
    const pl_spectral_cfg *sc = &cfg->spectral;
    ctx->error_collective = 1; /* the checks below see the same config on every rank */
    hh_model *m = NULL;
    PL_CALL(spectral_model(ctx, &m));
    ctx->error_collective = 0;

    pl_csr rows;
    memset(&rows, 0, sizeof rows);
    pl_backend *be = NULL;
    pl_op *op = NULL;
    lz_result res;
    memset(&res, 0, sizeof res);
    solve_facts f;
    memset(&f, 0, sizeof f);
    app_obs_out ao;
    memset(&ao, 0, sizeof ao);
    spec_out so;
    memset(&so, 0, sizeof so);
    double *phi = NULL, *part_int = NULL;
    so.ao = &ao;
    so.sc = sc;
    int rc = PL_OK;

    /* signals: nothing to save until the write (no checkpoints): exit 3 at once (checkpoint.c) */
    const char *note = "nothing to save (spectral has no checkpoints); rerun to start again";
    app_signal_exit_phase("the generation of the matrix", note);
    /* H from its Kronecker tables where format = matrix_free is given, and
     * under auto on one rank (app_free.c decides as for solve): HMEp's
     * phonon spectrum (nev 1, 200 steps) on one H100 took 0.80 s from start
     * to file against 0.96 s with the stored matrix (2026-11-25) */
    ctx->free_ok = ctx->cfg.spmv.format == PL_FORMAT_MATRIX_FREE || ctx->size == 1 || cfg->solver.reproducible;
    PL_CALL_GOTO(solve_build(ctx, &rows, &be, &f), out, rc);
    app_signal_exit_phase("the permutation and upload of the matrix", note);
    PL_CALL_GOTO(solve_make_op(ctx, &rows, be, &op, &f), out, rc);
    solve_extra x = {NULL, NULL, NULL, NULL, 0, 0, 1, NULL, NULL, 0, 0};
    app_signal_exit_phase("the ground-state solve", note);
    PL_CALL_GOTO(solve_run(ctx, op, &f, &x, &res), out, rc);
    app_signal_exit_phase("the recursion", note);
    PL_CHECK_GOTO(res.nconv >= 1 && res.vectors, PL_ERR_INPUT, out, rc,
                  "%s: the ground state did not converge (%s after %d restarts); raise [solver] max_restarts or tolerance",
                  cfg->path, lz_reason_name(res.reason), res.restarts);
    if (app_obs_wanted(cfg)) PL_CALL_GOTO(app_observables(ctx, op, res.nev, res.vectors, res.ld, &ao.obs, &ao.seconds), out, rc);
    if (sc->op >= PL_SPEC_ELECTRON_REMOVAL) { /* A(k, w): cmd_spectral_el.c */
        rc = spectral_electron(ctx, op, m, &res, &f, &ao);
        goto out;
    }
    pl_op_info info;
    pl_op_get_info(op, &info);
    so.e0 = res.eigenvalues[0];
    PL_CALL_GOTO(spectral_alloc(sc, hh_op_parts(m, sc->op, sc->momentum), &so, &part_int), out, rc);
    PL_CALL_GOTO(be->vec_alloc(be, (size_t)info.n_local + 1, &phi), out, rc);
    pl_op_reset_counters(op);
    PL_CALL_GOTO(spectral_recursions(ctx, op, m, &res, phi, &so, part_int), out, rc);
    if (ctx->rank == 0)
        pl_info("spectral: %s, q index %d, %d part(s), %d + %d steps, norm <phi|phi> = %.10g, step %.3f ms (SpMV median "
                "%.3f ms: %.2fx), operator %.3f s",
                pl_config_enum_name("spectral", "operator", sc->op), sc->momentum, so.parts, so.nsteps[0],
                so.parts > 1 ? so.nsteps[1] : 0, so.norm, 1e3 * so.step_seconds, 1e3 * so.spmv_median,
                so.spmv_median > 0 ? so.step_seconds / so.spmv_median : 0.0, so.operator_seconds);
    app_signal_flag_phase(); /* the result is complete: it is written, then exit 0 */
    PL_CALL_GOTO(solve_write(ctx, cfg->output.file, ctx->overwrite, op, &res, &f, spec_write, &so), out, rc);
    solve_report(ctx, &res, &f, cfg->output.file);
    if (app_signal_noted())
        pl_warn("%s arrived while the result was written; %s is complete (exit status 0)", app_signal_noted(),
                cfg->output.file);
out:
    free(part_int);
    if (phi && be) be->vec_free(be, phi);
    free(so.alpha);
    free(so.beta);
    free(so.omega);
    free(so.intensity);
    hh_obs_free(&ao.obs);
    lz_result_destroy(&res);
    pl_op_destroy(&op);
    pl_backend_destroy(&be);
    pl_csr_destroy(&rows);
    hh_model_destroy(&m);
    return rc;
}
