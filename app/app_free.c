/* app_free.c — [spmv] format = matrix_free (issue 26): a generated
 * Holstein-Hubbard model as its Kronecker tables (hamiltonian/hh_mf.h)
 * instead of CSR rows, and the operator made from them
 * (pl_op_create_kron).  No row is generated and nothing is permuted: the
 * "build" is the tables (milliseconds), the "upload" their copy to the
 * backend.  `solve` runs it, with or without a [sweep] (a sweep on several
 * ranks is refused before its first point: app_free_sweep_check), and so
 * do `spectral` for H (its operator O stays stored) and `dos` (its block
 * products: be->kron_spmm_aug) where format = matrix_free is given (auto
 * keeps a stored matrix for both: cmd_spectral.c, cmd_dos.c); every other
 * command that builds an operator (pjds-bench) refuses it with one line
 * (app_build_rows); `info` adds the tables' sizes to the statistics of the
 * matrix they stand for. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "hh.h"
#include "hh_mf.h"
#include "pl_error.h"
#include "pl_kron.h"
#include "spmv.h"

/* format = matrix_free, or auto where the tables can serve: `solve`
 * (ctx->free_ok), with or without a [sweep], of a generated
 * Holstein-Hubbard model on one rank.  There the operator needs no rows, no
 * permutation and no upload, and its product was the faster one on both
 * backends (HMEp on the H100: 0.208 against the compressed 0.243 ms;
 * hh_184800 on one core of the development VM: 0.80 against pJDS's 0.98 ms;
 * 2026-11-25).  In a sweep ctx->cfg is the point's configuration, and every
 * point has the base's model type ([sweep] cannot change `type`), so under
 * auto every point of such a sweep runs the tables: a value point gets new
 * ones (app_free_refill), a structural one new ones of its size.  What keeps
 * the stored matrix under auto: several ranks (pl_op_create_kron runs on
 * one; the rows are split over the ranks instead), an imported or
 * block-stencil model (no tables), PJDS_SPMV_FORMAT (the tests' switch that
 * forces a stored format under auto), and a point whose states or rows
 * exceed 32-bit indices (app_build_free: that operator is built from rows,
 * with the value terms of the sweep, and its value points refill it). */
static int free_chosen(const app_ctx *ctx, int solve)
{
    const pl_config *cfg = &ctx->cfg;
    if (cfg->spmv.format == PL_FORMAT_MATRIX_FREE) return 1;
    if (cfg->spmv.format != PL_FORMAT_AUTO || !solve || ctx->size != 1) return 0;
    if (cfg->model.type != PL_MODEL_HOLSTEIN_HUBBARD) return 0;
    const char *e = getenv("PJDS_SPMV_FORMAT");
    return !(e && *e);
}

int app_free_wanted(const app_ctx *ctx)
{
    return free_chosen(ctx, ctx->free_ok);
}

int app_free_in_solve(const app_ctx *ctx)
{
    return free_chosen(ctx, 1);
}

/* The tables of the configured model (ctx->cfg's, the current point's in a
 * sweep) into *mf. */
static int make_tables(const app_ctx *ctx, hh_mf **mf)
{
    hh_params hp;
    app_hh_params(&ctx->cfg.model, &hp);
    hh_model *model = NULL;
    PL_CALL(hh_model_create(&hp, &model));
    const int rc = hh_mf_create(model, mf);
    hh_model_destroy(&model);
    PL_CALL(rc);
    return PL_OK;
}

int app_free_refuse(const app_ctx *ctx)
{
    char where[1200];
    return PL_ERROR(PL_ERR_INPUT, "%s: matrix_free runs `solve` (and its sweeps), `spectral` and `dos` so far; `%s` "
                    "needs a stored matrix (use auto, pjds or compressed)",
                    pl_config_where(&ctx->cfg, "spmv", "format", where, sizeof where),
                    ctx->cmd_name ? ctx->cmd_name : "this command");
}

/* A sweep with format = matrix_free given on several ranks: one line and
 * exit status 2 before any point (the tables run on one rank:
 * pl_op_create_kron), instead of every point recorded as failed.  auto
 * keeps the stored matrix there (free_chosen).  Every rank alike. */
int app_free_sweep_check(const app_ctx *ctx)
{
    char where[1200];
    if (ctx->cfg.spmv.format != PL_FORMAT_MATRIX_FREE || ctx->size == 1) return PL_OK;
    return PL_ERROR(PL_ERR_INPUT, "%s: matrix_free runs on one rank so far (%d ranks); a sweep on several ranks "
                    "needs a stored matrix (use auto, pjds or compressed)",
                    pl_config_where(&ctx->cfg, "spmv", "format", where, sizeof where), ctx->size);
}

/* The tables of the configured model into ctx->mf, and what app_build_rows
 * reports: N, the model name, the time.  The memory plan (no matrix,
 * whether format = matrix_free was given or auto chose it; in a sweep that
 * of the point being built, so each structure is planned for the operator
 * it gets) first.  Under auto, a model whose electron or phonon states or
 * rows exceed 32-bit indices sets *stored (the caller builds the rows and
 * plans them). */
int app_build_free(app_ctx *ctx, app_matrix_info *mi, int *stored)
{
    *stored = 0;
    hh_params hp;
    app_hh_params(&ctx->cfg.model, &hp);
    hh_model *model = NULL;
    const double t0 = pl_wtime();
    int rc = hh_model_create(&hp, &model);
    if (rc == PL_ERR_INPUT) return app_param_error(&ctx->cfg, "model", "max_phonons", rc);
    PL_CALL(rc);
    const int64_t N = hh_model_rows(model);
    int64_t nu = 0, nd = 0, np = 0;
    hh_model_dims(model, &nu, &nd, &np);
    if (ctx->cfg.spmv.format == PL_FORMAT_AUTO && (nu * nd > INT32_MAX || np > INT32_MAX || N > INT32_MAX)) {
        hh_model_destroy(&model);
        *stored = 1;
        return PL_OK;
    }
    const int gpu = app_backend_gpu_planned(ctx);
    app_mem_plan_compute_free(&ctx->cfg, N, gpu, &ctx->plan); /* the tables' plan, also under auto */
    ctx->have_plan = 1;
    rc = app_mem_plan_check(ctx, &ctx->plan, ctx->plan_be);
    if (rc != PL_OK) hh_model_destroy(&model);
    PL_CALL(rc);
    hh_mf *mf = NULL;
    rc = hh_mf_create(model, &mf);
    hh_model_destroy(&model);
    if (rc == PL_ERR_INPUT) return app_param_error(&ctx->cfg, "model", "max_phonons", rc);
    PL_CALL(rc);
    ctx->mf = mf;
    const double t = pl_wtime() - t0;
    PL_CHECK(MPI_Allreduce(&t, &mi->build_seconds, 1, MPI_DOUBLE, MPI_MAX, ctx->comm) == MPI_SUCCESS, PL_ERR_MPI,
             "MPI_Allreduce failed");
    mi->rows = N;
    mi->nnz = 0; /* set from the operator (app_free_op) */
    mi->symmetric_known = 1;
    app_hh_name(&ctx->cfg.model, mi->name, sizeof mi->name);
    pl_debug("matrix_free: tables of %lld rows (%lld electron x %lld phonon states, %d modes): %zu bytes in %.3f s",
             (long long)N, (long long)mf->n_el, (long long)mf->n_ph, mf->nmodes, hh_mf_bytes(mf), t);
    return PL_OK;
}

/* The operator from ctx->mf (then freed).  Collective: more than one rank
 * is refused by pl_op_create_kron alike on every rank. */
int app_free_op(app_ctx *ctx, const pl_op_options *oo, pl_backend *be, pl_op **op, int64_t *nnz)
{
    hh_mf *mf = ctx->mf;
    PL_CHECK(mf, PL_ERR_INTERNAL, "matrix_free: no tables were built");
    pl_kron k;
    hh_mf_kron(mf, &k);
    const int rc = pl_op_create_kron(&k, oo, be, ctx->comm, op);
    app_free_release(ctx);
    PL_CALL(rc);
    pl_op_info info;
    pl_op_get_info(*op, &info);
    *nnz = info.nnz_local;
    return PL_OK;
}

void app_free_release(app_ctx *ctx)
{
    hh_mf *mf = ctx->mf;
    hh_mf_destroy(&mf);
    ctx->mf = NULL;
}

int app_free_info(app_ctx *ctx)
{
    hh_mf *mf = NULL;
    PL_CALL(make_tables(ctx, &mf));
    if (ctx->rank == 0) {
        pl_kron k;
        hh_mf_kron(mf, &k);
        printf("solve_format: matrix_free%s\n", ctx->cfg.spmv.format == PL_FORMAT_AUTO ? " (format = auto, one rank)" : "");
        printf("matrix_free_electron_states: %lld\n", (long long)mf->n_el);
        printf("matrix_free_phonon_states: %lld\n", (long long)mf->n_ph);
        printf("matrix_free_modes: %d\n", mf->nmodes);
        printf("matrix_free_table_bytes: %zu\n", pl_kron_bytes(&k));
        printf("matrix_free_norm_bound: %.17g\n", pl_kron_norm_bound(&k));
        fflush(stdout);
    }
    hh_mf_destroy(&mf);
    return PL_OK;
}

int app_free_refill(app_ctx *ctx, pl_op *op)
{
    hh_mf *mf = NULL;
    PL_CALL(make_tables(ctx, &mf));
    pl_kron k;
    hh_mf_kron(mf, &k);
    const int rc = pl_op_kron_update(op, &k);
    hh_mf_destroy(&mf);
    PL_CALL(rc);
    return PL_OK;
}
