/* cmd_solve.c — `pjds-lanczos solve CONFIG`: one eigensolve (a config with a
 * [sweep] section goes to cmd_sweep.c).
 *
 * Flow: output path checked first (no work is wasted on a file that may not
 * be written) -> build the rows -> backend -> pl_op_create ("permute") ->
 * lz_solve or ks_solve, with checkpoints (checkpoint.c) on SIGUSR1/SIGTERM
 * or every [output] checkpoint_interval seconds -> result file written
 * atomically (solve_core.c).  Exit status 3 when the solve stopped at a
 * checkpoint; `solve --resume` continues it (and, when the result file is
 * already there and no checkpoint is, has nothing to do).  Signal phases:
 * before the solve a signal exits 3 at once (nothing to save); during it,
 * it checkpoints (or, in a long first cycle, stops with nothing saved);
 * once the solve is done the result is finished and the exit status is 0. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pl_error.h"
#include "pl_spectrum.h"
#include "app_obs.h"
#include "cutoff.h"
#include "solve_impl.h"

/* --resume: 1 = continue from the checkpoint, 0 = start afresh, -1 = the
 * result file is complete (nothing to do).  Collective. */
static int resume_mode(app_ctx *ctx, const char *ckpt, int *mode)
{
    int exists = 0, point = -1;
    *mode = 0;
    PL_CALL(app_ckpt_exists(ctx, ckpt, &exists, &point));
    if (exists) {
        PL_CHECK(point < 0, PL_ERR_INPUT,
                 "%s: this checkpoint belongs to point %d of a sweep, but the configuration has no [sweep] section",
                 ckpt, point);
        *mode = 1;
        return PL_OK;
    }
    int done = ctx->rank == 0 && access(ctx->cfg.output.file, F_OK) == 0;
    PL_CHECK(MPI_Bcast(&done, 1, MPI_INT, 0, ctx->comm) == MPI_SUCCESS, PL_ERR_MPI, "MPI_Bcast failed");
    if (done) *mode = -1;
    return PL_OK;
}

/* The result's extras: the observables and the phonon cut-off (cutoff.c). */
typedef struct solve_out {
    app_obs_out *ao;
    const app_cutoff *cut;
    int obs;
} solve_out;

static int write_extras(void *arg, pl_spectrum *sp)
{
    const solve_out *o = arg;
    if (o->obs) PL_CALL(app_obs_write(o->ao, sp));
    PL_CALL(app_cutoff_write(o->cut, sp));
    return PL_OK;
}

int cmd_solve(app_ctx *ctx)
{
    if (ctx->cfg.sweep.nkeys > 0) return cmd_sweep(ctx);
    const pl_config *cfg = &ctx->cfg;
    ctx->error_collective = ctx->points != NULL;
    PL_CHECK(!ctx->points, PL_ERR_INPUT, "--points selects points of a sweep, but %s has no [sweep] section", cfg->path);
    pl_csr rows;
    memset(&rows, 0, sizeof rows);
    pl_backend *be = NULL;
    pl_op *op = NULL;
    lz_result res;
    memset(&res, 0, sizeof res);
    lz_state st;
    memset(&st, 0, sizeof st);
    solve_facts f;
    memset(&f, 0, sizeof f);
    app_ckpt ck;
    memset(&ck, 0, sizeof ck);
    app_obs_out ao;
    memset(&ao, 0, sizeof ao);
    app_cutoff cut;
    memset(&cut, 0, sizeof cut);
    int rc = PL_OK, mode = 0;

    char ckpt[1200];
    snprintf(ckpt, sizeof ckpt, "%s.ckpt", cfg->output.file);
    if (ctx->resume) {
        PL_CALL(resume_mode(ctx, ckpt, &mode));
        if (mode < 0) {
            pl_info("solve --resume: %s is complete and there is no checkpoint %s; nothing to do", cfg->output.file,
                    ckpt);
            return PL_OK;
        }
        if (mode == 0) pl_info("solve --resume: no checkpoint %s; starting afresh", ckpt);
    }
    if (mode == 0) PL_CALL(app_check_output_path(ctx, cfg->output.file));
    /* [model] max_phonons = auto: the cut-off first (cutoff.c), then the solve as usual */
    PL_CALL_GOTO(app_cutoff_search(ctx, &be, &cut), out, rc);
    if (mode == 1) {
        int e = app_ckpt_precheck(ctx, ckpt, -1, "");
        ctx->error_collective = e != PL_OK;
        PL_CALL_GOTO(e, out, rc);
    }
    /* the result may replace a file that is there now only with --overwrite
     * or when resuming (the result of this solve, written before a kill
     * that left the checkpoint); never one that appears during the run */
    const int replace = ctx->overwrite || (mode == 1 && ctx->rank == 0 && access(cfg->output.file, F_OK) == 0);
    if (app_st_wanted(cfg)) return solve_st(ctx, replace); /* solve_st.c: a spectral transformation */

    /* signals: nothing to save before the solve, exit 3 at once (checkpoint.c) */
    char note[1400];
    if (mode == 1)
        snprintf(note, sizeof note, "nothing new to save; the checkpoint %s is kept: `solve --resume` continues from it",
                 ckpt);
    else
        snprintf(note, sizeof note, "nothing to save (no solve had started); rerun to start again");
    app_signal_exit_phase(cfg->model.type == PL_MODEL_HDF5 ? "the import of the matrix" : "the generation of the matrix",
                          note);
    /* [spmv] format = matrix_free: tables instead of rows (app_free.c); auto takes them for every
     * method, and for chebfd on the CPU backend only: on a GPU its block products were faster from the
     * stored pJDS matrix, as for dos (HMEp window of 109 pairs on an H200, 2026-11-26: 77.7 s pJDS
     * against 95.0 s tables), on the CPU the tables were (hh_184800, a window of 4 pairs: 7.8-7.9 s
     * against 12.9-13.4 s on 2 cores, 13.8 against 23.4 s on one; 2026-11-29) */
    ctx->free_ok = ctx->cfg.solver.method != PL_METHOD_CHEBFD || ctx->cfg.spmv.format == PL_FORMAT_MATRIX_FREE ||
                   app_free_auto_blocks(ctx);
    PL_CALL_GOTO(solve_build(ctx, &rows, &be, &f), out, rc);
    if (f.method == PL_METHOD_CHEBFD) ctx->cfg.spmv.blocks = 1; /* block products: format = auto keeps pJDS */
    app_signal_exit_phase("the permutation and upload of the matrix", note);
    PL_CALL_GOTO(solve_make_op(ctx, &rows, be, &op, &f), out, rc);
    pl_info("solve: N = %lld, nnz = %lld, %d rank(s), backend %s, build %.2f s, permute/upload %.2f s",
            (long long)f.mi.rows, (long long)f.mi.nnz, ctx->size, be->name, f.mi.build_seconds, f.permute_seconds);
    if (f.method_note[0]) pl_info("%s", f.method_note);

    if (f.method == PL_METHOD_CHEBFD) { /* solve_chebfd.c: no checkpoints, a signal ends the run */
        PL_CHECK_GOTO(mode != 1, PL_ERR_INPUT, out, rc, "%s: a checkpoint of method = chebfd cannot exist", ckpt);
        app_signal_exit_phase("the chebfd solve", note);
        rc = solve_chebfd(ctx, op, &f, replace);
        goto out;
    }
    PL_CALL_GOTO(app_ckpt_init(&ck, ctx, op, -1, ""), out, rc);
    if (mode == 1) {
        app_signal_exit_phase("the loading of the checkpoint", note);
        PL_CALL_GOTO(app_ckpt_load(&ck, &st), out, rc);
        pl_info("solve --resume: continuing from %s (%d cycles, %lld SpMVs done)", ckpt, st.nhist,
                (long long)(st.nhist > 0 ? st.hist_iterations[st.nhist - 1] : 0));
    }
    const int want_obs = app_obs_wanted(cfg);
    solve_extra x = {app_ckpt_callback, &ck, mode == 1 ? &st : NULL, NULL, 0, 0, want_obs, app_ckpt_poll, NULL, 0, 0};
    app_signal_flag_phase(); /* the solver looks at the flag (app_ckpt_poll); then the write, exit 0 */
    PL_CALL_GOTO(solve_run(ctx, op, &f, &x, &res), out, rc);
    if (res.reason == LZ_CHECKPOINTED && !ck.written) { /* stopped in the first cycle: nothing new saved */
        if (mode != 1)
            snprintf(note, sizeof note, "nothing to save (no cycle of the solve had ended); rerun to start again");
        app_signal_say("the first cycle of the solve", note);
        rc = APP_CHECKPOINTED;
        goto out;
    }
    if (res.reason == LZ_CHECKPOINTED) {
        pl_info("solve: stopped at a checkpoint after %lld SpMVs: %s; continue with `solve --resume`",
                (long long)res.iterations, ckpt);
        rc = APP_CHECKPOINTED;
        goto out;
    }
    if (want_obs && res.nev > 0 && res.vectors) {
        PL_CALL_GOTO(app_observables(ctx, op, res.nev, res.vectors, res.ld, &ao.obs, &ao.seconds), out, rc);
        pl_info("solve: observables of %d eigenvector(s) in %.3f s (docs/models.md \"Observables\")", res.nev, ao.seconds);
        app_cutoff_check(ctx, &ao.obs, &cut); /* the weight at n = M against [model] cutoff_warn */
    }
    solve_out so = {&ao, &cut, want_obs};
    PL_CALL_GOTO(solve_write(ctx, cfg->output.file, replace, op, &res, &f, write_extras, &so), out, rc);
    if (ck.written || mode == 1) app_ckpt_remove(ctx, ckpt);
    solve_report(ctx, &res, &f, cfg->output.file);
    pl_debug("solve: reported, %.3f s since the process start", app_wall_seconds(ctx));
    if (app_signal_noted())
        pl_warn("%s arrived after the solve had finished; the result %s is complete (exit status 0)",
                app_signal_noted(), cfg->output.file);
out:
    hh_obs_free(&ao.obs);
    app_cutoff_free(&cut);
    app_ckpt_state_free(&ck, &st);
    app_ckpt_free(&ck);
    lz_result_destroy(&res);
    pl_op_destroy(&op);
    pl_backend_destroy(&be);
    pl_csr_destroy(&rows);
    app_free_release(ctx); /* tables left by a failure before the operator */
    return rc;
}
