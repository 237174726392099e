/* app_free.c — [spmv] format = matrix_free (issue 26): a generated
 * Holstein-Hubbard model as its Kronecker tables (hamiltonian/hh_mf.h)
 * instead of CSR rows, and the operator made from them
 * (pl_op_create_kron).  No row is generated and nothing is permuted: the
 * "build" is the tables (milliseconds), the "upload" their copy to the
 * backend.  `solve` runs it, with or without a [sweep], on any number of
 * ranks (several: each rank a block of electron configurations with all
 * their phonon rows and a halo of whole phonon rows: spmv/op_kron_dist.c,
 * or a block of phonon configurations of every electron configuration and
 * a halo of whole electron columns: spmv/op_kron_right.c; [spmv] kron_split
 * chooses, auto by the smaller largest-rank halo: choose_split below),
 * and so do `spectral` for H (its operator O stays stored) and `dos` (its block
 * products: be->kron_spmm_aug on one rank, kron_spmm and kron_rem_spmm after
 * the block halo exchange on several) where format = matrix_free is given (auto:
 * cmd_spectral.c's and cmd_dos.c's ctx->free_ok); every other
 * command that builds an operator (pjds-bench) refuses it with one line
 * (app_build_rows); `info` adds the tables' sizes, the split and the halo
 * of every rank (both splits: pl_kron_halo) to the statistics of the
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
 * Holstein-Hubbard model, on any number of ranks.  There the operator needs
 * no rows, no permutation and no upload, and its product was the faster
 * one on both backends (HMEp on the H100: 0.208 against the compressed
 * 0.243 ms; hh_184800 on one core of the development VM: 0.80 against
 * pJDS's 0.98 ms; 2026-11-25); on several ranks its halo is the stored
 * matrix's (the same x entries: whole phonon rows of the remote electron
 * configurations) and its product still the faster one (hh_184800 on 2
 * ranks of the development VM: SpMV 0.55-0.81 s against pJDS's 0.94-2.84 s
 * in the solve; performance.md).  In a sweep ctx->cfg is the point's configuration, and
 * every point has the base's model type ([sweep] cannot change `type`), so
 * under auto every point of such a sweep runs the tables: a value point
 * gets new ones (app_free_refill), a structural one new ones of its size.
 * What keeps the stored matrix under auto: an imported or block-stencil
 * model (no tables), PJDS_SPMV_FORMAT (the tests' switch that forces a
 * stored format under auto), and a point whose states or a rank's rows
 * exceed 32-bit indices, or with fewer electron configurations than ranks
 * (app_build_free: that operator is built from rows, with the value terms
 * of the sweep, and its value points refill it). */
static int free_chosen(const app_ctx *ctx, int solve)
{
    const pl_config *cfg = &ctx->cfg;
    if (cfg->spmv.format == PL_FORMAT_MATRIX_FREE) return 1;
    if (cfg->spmv.format != PL_FORMAT_AUTO || !solve) return 0;
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

/* The commands whose work is block products (dos, solve with chebfd) take
 * the tables under auto where the backend is the CPU's: there they were
 * 1.7-5x faster than pJDS (docs/performance.md, ninth look); on a GPU the
 * stored matrix stays. */
int app_free_auto_blocks(app_ctx *ctx)
{
    return ctx->cfg.spmv.format == PL_FORMAT_AUTO && !app_backend_gpu_planned(ctx);
}

/* dos on one GPU (2026-11-29, one H200, moments of 16 or 8 random vectors,
 * pJDS against the tables in blocks of 2, start blocks drawn on the GPU):
 * where variant 5's block tile fits, HMEp (400 electron configurations,
 * 1024 moments) 1.29-1.30 against 1.23-1.24 s of moments, 1.97-2.09
 * against 1.72 s of process wall; HMEp with 18 phonons (256 moments)
 * 0.46 against 0.39 s, 1.54-1.56 against 0.93 s; where it does not (hh7,
 * 1,225 configurations, 256 moments) the tables' products are slower,
 * 0.83 against 1.10 s of moments (their wall still 1.68 against 2.5 s at
 * that size), so pJDS stays there.  Several ranks keep pJDS (the tables'
 * block halo on GPUs is not measured). */
int app_free_auto_dos(app_ctx *ctx)
{
    if (ctx->cfg.spmv.format != PL_FORMAT_AUTO) return 0;
    if (!app_backend_gpu_planned(ctx)) return 1;
    ctx->free_tile = 1;
    return ctx->size == 1;
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

/* A sweep with format = matrix_free: every point runs on any number of
 * ranks now (a value point's new tables go to every rank's operator:
 * pl_op_kron_update is collective), so nothing is refused before the
 * points; a point with fewer electron configurations than ranks fails
 * alone with its one line (pl_op_create_kron).  Kept as the sweep's hook. */
int app_free_sweep_check(const app_ctx *ctx)
{
    (void)ctx;
    return PL_OK;
}

/* [spmv] kron_split (auto | electron | phonon): the split of the operator
 * on ctx->size ranks into *split (spmv.h PL_KRON_SPLIT_LEFT or _RIGHT),
 * *how a word for the log ("auto", "given", "one rank").  auto: the split
 * with the smaller largest-rank halo (pl_kron_split_choose: from the
 * tables, the same answer on every rank), except for `spectral`, which
 * maps its vectors by contiguous row blocks (cmd_spectral.c) and keeps the
 * electron split; phonon there is exit status 2. */
static int choose_split(const app_ctx *ctx, const pl_kron *k, int *split, const char **how)
{
    const int cfg = ctx->cfg.spmv.kron_split, spectral = ctx->cmd_name && !strcmp(ctx->cmd_name, "spectral");
    *split = PL_KRON_SPLIT_LEFT;
    *how = cfg == 0 ? "auto" : "given";
    if (ctx->size == 1) {
        *how = "one rank";
        return PL_OK;
    }
    if (cfg == 1) return PL_OK;
    if (cfg == 2) {
        PL_CHECK(!spectral, PL_ERR_INPUT, "phonon runs `solve` and `dos` so far; `spectral` needs electron or auto");
        PL_CHECK(!ctx->cfg.solver.reproducible, PL_ERR_INPUT,
                 "phonon sums a row's terms in another order than one rank does; [solver] reproducible = true needs "
                 "electron or auto");
        *split = PL_KRON_SPLIT_RIGHT;
        return PL_OK;
    }
    if (spectral) {
        *how = "auto, spectral";
        return PL_OK;
    }
    if (ctx->cfg.solver.reproducible) { /* the split whose rows keep the one-rank sums (op_kron_dist.c) */
        *how = "auto, reproducible";
        return PL_OK;
    }
    PL_CALL(pl_kron_split_choose(k, ctx->size, split, NULL, NULL));
    return PL_OK;
}

/* The halo of this rank's block (pl_kron_halo, the split choose_split
 * gives) into *h; PL_ERR_MEM. */
static int rank_halo(const app_ctx *ctx, const hh_mf *mf, pl_kron_halo_info *h)
{
    pl_kron k;
    hh_mf_kron(mf, &k);
    int split = PL_KRON_SPLIT_LEFT;
    const char *how = NULL;
    PL_CALL(choose_split(ctx, &k, &split, &how));
    pl_kron_halo_info *all = calloc((size_t)ctx->size, sizeof *all);
    PL_CHECK(all, PL_ERR_MEM, "out of host memory");
    const int rc = pl_kron_halo(&k, ctx->size, split, all);
    if (rc == PL_OK) *h = all[ctx->rank];
    free(all);
    PL_CALL(rc);
    return PL_OK;
}

/* The tables of the configured model into ctx->mf, and what app_build_rows
 * reports: N, the model name, the time.  The memory plan (no matrix: the
 * rank's rows and its halo buffers, whether format = matrix_free was given
 * or auto chose it; in a sweep that of the point being built, so each
 * structure is planned for the operator it gets) before the operator.
 * Under auto, a model whose electron or phonon states or a rank's rows
 * exceed 32-bit indices, or with fewer electron configurations than ranks,
 * sets *stored (the caller builds the rows and plans them). */
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
    const int64_t P = ctx->size, ne = nu * nd, wide = (ne + P - 1) / P; /* the widest rank's configurations */
    if (ctx->cfg.spmv.format == PL_FORMAT_AUTO && (ne > INT32_MAX || np > INT32_MAX || ne < P || wide * np > INT32_MAX)) {
        hh_model_destroy(&model);
        *stored = 1;
        return PL_OK;
    }
    hh_mf *mf = NULL;
    rc = hh_mf_create(model, &mf);
    hh_model_destroy(&model);
    if (rc == PL_ERR_INPUT) return app_param_error(&ctx->cfg, "model", "max_phonons", rc);
    PL_CALL(rc);
    if (ctx->free_tile && ctx->cfg.spmv.format == PL_FORMAT_AUTO &&
        !pl_cuda_kron_block_fits(ctx->local_rank, mf->n_el, mf->nmodes)) { /* app_free_auto_dos: pJDS */
        pl_debug("matrix_free: %lld electron configurations x %d modes: no staged block tile on this GPU, rows stored",
                 (long long)mf->n_el, mf->nmodes);
        hh_mf_destroy(&mf);
        *stored = 1;
        return PL_OK;
    }
    pl_kron_halo_info h = {0};
    rc = rank_halo(ctx, mf, &h);
    if (rc == PL_ERR_INPUT) { /* (kron_split = phonon refused: alike on every rank, one line) */
        hh_mf_destroy(&mf);
        rc = app_param_error(&ctx->cfg, "spmv", "kron_split", rc);
        app_error_alike(ctx, rc);
        return rc;
    }
    const int gpu = app_backend_gpu_planned(ctx);
    /* the tables' plan, also under auto */
    app_mem_plan_compute_free(&ctx->cfg, N, h.rows, (double)h.halo_values, (double)h.send_values, gpu, &ctx->plan);
    ctx->have_plan = 1;
    if (rc == PL_OK) rc = app_mem_plan_check(ctx, &ctx->plan, ctx->plan_be);
    if (rc != PL_OK) hh_mf_destroy(&mf);
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

/* The operator from ctx->mf (then freed).  Collective (pl_op_create_kron
 * agrees on failure); *nnz: the non-zeros of this rank's rows (the caller
 * sums them). */
/* The solve log (rank 0): the split in use, how it was chosen, the largest
 * halo of both splits and the halo of every rank (pl_kron_halo). */
static int log_split(const app_ctx *ctx, const pl_kron *k, int split, const char *how)
{
    const int P = ctx->size;
    if (P == 1 || ctx->rank != 0) return PL_OK;
    pl_kron_halo_info *h = calloc((size_t)P, sizeof *h);
    int64_t lm = 0, rm = 0;
    int s = 0;
    PL_CHECK(h, PL_ERR_MEM, "out of host memory");
    int rc = pl_kron_split_choose(k, P, &s, &lm, &rm);
    if (rc == PL_OK) rc = pl_kron_halo(k, P, split, h);
    if (rc == PL_OK) {
        char list[1024] = "";
        size_t o = 0;
        for (int q = 0; q < P && o + 32 < sizeof list; q++)
            o += (size_t)snprintf(list + o, sizeof list - o, "%s%.3g", q ? " " : "", 8e-6 * (double)h[q].halo_values);
        pl_info("matrix_free split: %s configurations (%s; largest halo %.3g MB by electron, %.3g MB by phonon "
                "configurations), halo per rank: %s MB",
                split == PL_KRON_SPLIT_RIGHT ? "phonon" : "electron", how, 8e-6 * (double)lm, 8e-6 * (double)rm,
                list);
    }
    free(h);
    PL_CALL(rc);
    return PL_OK;
}

int app_free_op(app_ctx *ctx, const pl_op_options *oo, pl_backend *be, pl_op **op, int64_t *nnz)
{
    hh_mf *mf = ctx->mf;
    PL_CHECK(mf, PL_ERR_INTERNAL, "matrix_free: no tables were built");
    pl_kron k;
    hh_mf_kron(mf, &k);
    pl_op_options o = *oo;
    const char *how = NULL;
    int rc = choose_split(ctx, &k, &o.kron_split, &how);
    if (rc == PL_OK) rc = pl_op_create_kron(&k, &o, be, ctx->comm, op);
    if (rc == PL_OK) rc = log_split(ctx, &k, o.kron_split, how);
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

/* info: the halo of every rank of this run under both splits (rank 0
 * prints; pl_kron_halo, from the tables): lists with one value per rank. */
static void print_list(const char *key, const pl_kron_halo_info *h, int P, int what)
{
    printf("%s:", key);
    for (int q = 0; q < P; q++) {
        const int64_t v = what == 0 ? h[q].rows : what == 1 ? h[q].halo_lines : what == 2 ? 8 * h[q].halo_values
                        : what == 3 ? 8 * h[q].send_values : h[q].neighbors;
        printf(" %lld", (long long)v);
    }
    printf("\n");
}

static int print_halo(const app_ctx *ctx, const pl_kron *k)
{
    const int P = ctx->size;
    pl_kron_halo_info *h = calloc((size_t)P, sizeof *h), *r = calloc((size_t)P, sizeof *r);
    int rc = PL_OK;
    PL_CHECK_GOTO(h && r, PL_ERR_MEM, out, rc, "out of host memory");
    int split = PL_KRON_SPLIT_LEFT;
    const char *how = NULL;
    PL_CALL_GOTO(choose_split(ctx, k, &split, &how), out, rc);
    PL_CALL_GOTO(pl_kron_halo(k, P, PL_KRON_SPLIT_LEFT, h), out, rc);
    PL_CALL_GOTO(pl_kron_halo(k, P, PL_KRON_SPLIT_RIGHT, r), out, rc);
    const pl_kron_halo_info *c = split == PL_KRON_SPLIT_RIGHT ? r : h;
    printf("matrix_free_split: %s configurations (%s, %d ranks)\n", split == PL_KRON_SPLIT_RIGHT ? "phonon" : "electron",
           how, P);
    print_list("matrix_free_rows_per_rank", c, P, 0);
    print_list("matrix_free_halo_rows_per_rank", c, P, 1);
    print_list("matrix_free_halo_bytes_per_rank", c, P, 2);
    print_list("matrix_free_send_bytes_per_rank", c, P, 3);
    print_list("matrix_free_neighbors_per_rank", c, P, 4);
    /* both splits' halo, for the choice */
    print_list("matrix_free_halo_bytes_per_rank_electron_split", h, P, 2);
    print_list("matrix_free_halo_bytes_per_rank_phonon_split", r, P, 2);
out:
    free(h);
    free(r);
    return rc;
}

int app_free_info(app_ctx *ctx)
{
    hh_mf *mf = NULL;
    PL_CALL(make_tables(ctx, &mf));
    const int64_t P = ctx->size, wide = (mf->n_el + P - 1) / P;
    const int stored = ctx->cfg.spmv.format == PL_FORMAT_AUTO && (mf->n_el < P || wide * mf->n_ph > INT32_MAX);
    int rc = PL_OK;
    if (ctx->rank == 0 && !stored) { /* (auto stores what the tables cannot run: app_build_free) */
        pl_kron k;
        hh_mf_kron(mf, &k);
        char how[64] = "";
        if (ctx->cfg.spmv.format == PL_FORMAT_AUTO) {
            if (P == 1) snprintf(how, sizeof how, " (format = auto, one rank)");
            else snprintf(how, sizeof how, " (format = auto, %d ranks)", ctx->size);
        }
        printf("solve_format: matrix_free%s\n", how);
        printf("matrix_free_electron_states: %lld\n", (long long)mf->n_el);
        printf("matrix_free_phonon_states: %lld\n", (long long)mf->n_ph);
        printf("matrix_free_modes: %d\n", mf->nmodes);
        printf("matrix_free_table_bytes: %zu\n", pl_kron_bytes(&k));
        printf("matrix_free_norm_bound: %.17g\n", pl_kron_norm_bound(&k));
        rc = print_halo(ctx, &k);
        fflush(stdout);
    }
    hh_mf_destroy(&mf);
    PL_CALL(rc);
    return PL_OK;
}

const char *app_kron_split_name(int split)
{
    return split == PL_KRON_SPLIT_LEFT ? "electron" : split == PL_KRON_SPLIT_RIGHT ? "phonon" : "none";
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
