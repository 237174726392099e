/* solve_core.c — the steps of `solve` shared by a single solve and a sweep
 * (solve_impl.h): build the matrix and the pJDS operator, run thick-restart
 * Lanczos or Krylov-Schur, write one HDF5 result file (docs/formats.md,
 * "HDF5 result schema"), print the eigenvalues and the summary.
 *
 * Eigenvectors: downloaded, un-permuted (pl_op_to_original: each rank then
 * holds the contiguous original rows of pl_op_orig_block) and sent piece by
 * piece to rank 0, which writes them as hyperslabs; the file is renamed into
 * place only when complete.  stdout: one `eigenvalue[i]: value  residual: r`
 * line per eigenpair (rank 0); stderr: progress at most once a second and a
 * summary unless --quiet; a warning if not converged. */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pl_build.h"
#include "pl_error.h"
#include "pl_spectrum.h"
#include "solve_impl.h"
#include "st.h"

#define SOLVE_MPI(call)                                                                                  \
    do {                                                                                                 \
        if ((call) != MPI_SUCCESS) return PL_ERROR(PL_ERR_MPI, "%s failed", #call);                      \
    } while (0)

typedef struct progress {
    int rank, quiet;
    double last;     /* time of the last line */
    pl_backend *be;  /* GPU memory in use, sampled after the first cycle and */
    double dev_max;  /* then at most every 0.5 s (the basis is allocated at   */
    double last_mem; /* the start; cudaMemGetInfo is not free)                */
} progress;

static void monitor(void *arg, const lz_monitor_info *mi)
{
    progress *p = arg;
    double now = pl_wtime();
    if (p->be && p->be->mem_info && (p->last_mem == 0.0 || now - p->last_mem >= 0.5)) {
        /* the basis is allocated now: the device peak */
        p->last_mem = now;
        int dev = 0;
        size_t fr = 0, tot = 0;
        if (p->be->mem_info(p->be, &dev, &fr, &tot) == PL_OK && (double)(tot - fr) > p->dev_max)
            p->dev_max = (double)(tot - fr);
    }
    if (p->quiet || p->rank != 0 || now - p->last < 1.0) return;
    p->last = now;
    /* how far (restarts of the budget, decades above the tolerance) and whether the residuals still
     * fall: the progress score's lower quartile over the last half of the run against the quarter
     * before (lanczos/krylov_impl.h, kr_progress; docs/config.md, [solver] max_restarts) */
    char trend[96];
    if (mi->trend < 0) snprintf(trend, sizeof trend, "no trend yet");
    else
        snprintf(trend, sizeof trend, "residuals %s (score %.1f, %.1f before)", mi->trend ? "falling" : "flat",
                 mi->score_recent, mi->score_before);
    pl_info("solve: restart %d/%d%s, converged %d/%d, worst relative residual %.2e, %.1f decades above tol, %s, "
            "%lld SpMVs, %lld full reorthogonalisations, orthogonality %.1e, %.1f s",
            mi->restart, mi->max_restarts, mi->restarts_auto ? " (auto)" : "", mi->nconv, mi->nev, mi->worst_resid,
            mi->decades, trend, (long long)mi->iterations, (long long)mi->full_reorths, mi->orth_estimate,
            mi->elapsed);
}

/* Gather the eigenvectors in the original basis to rank 0 and write them.
 * Every rank downloads and un-permutes its block; rank 0 receives the others'
 * blocks one vector at a time (O(max n_local) memory).  Rank 0 keeps
 * receiving after a write error so no rank hangs; the error is returned on
 * rank 0 only (the app then aborts the others).  cplx: the vectors are
 * complex (Krylov-Schur layout of lz_result: a conjugate pair shares the
 * columns Re x, Im x) and are written interleaved (re, im). */
static int write_vectors(app_ctx *ctx, pl_op *op, const lz_result *res, pl_spectrum *sp, int cplx)
{
    pl_op_info info;
    pl_op_get_info(op, &info);
    /* the original rows [row0, row0 + no) this rank writes (pl_op_orig_block:
     * its own block, or for the phonon split of a matrix-free operator the
     * electron split's, moved by pl_op_to_original) */
    int64_t n = info.n_local, row0 = 0, no = 0;
    pl_op_orig_block(op, &row0, &no);
    int size = ctx->size, rank = ctx->rank, rc = PL_OK, wd = cplx ? 2 : 1;
    int64_t mine[2] = {row0, no}, *blocks = NULL;
    double *perm = NULL, *permi = NULL, *orig = NULL, *ore = NULL, *oim = NULL;
    int64_t nmax = no;
    SOLVE_MPI(MPI_Allreduce(MPI_IN_PLACE, &nmax, 1, MPI_INT64_T, MPI_MAX, ctx->comm));
    PL_MALLOC(blocks, 2 * (size_t)size);
    PL_CHECK_GOTO(MPI_Gather(mine, 2, MPI_INT64_T, blocks, 2, MPI_INT64_T, 0, ctx->comm) == MPI_SUCCESS, PL_ERR_MPI,
                  out, rc, "MPI_Gather of the row blocks failed");
    perm = malloc(((size_t)n + 1) * sizeof *perm);
    permi = malloc(((size_t)n + 1) * sizeof *permi);
    orig = malloc(((size_t)wd * (size_t)nmax + 1) * sizeof *orig);
    ore = malloc(((size_t)no + 1) * sizeof *ore);
    oim = malloc(((size_t)no + 1) * sizeof *oim);
    PL_CHECK_GOTO(perm && permi && orig && ore && oim, PL_ERR_MEM, out, rc, "out of host memory for the eigenvectors");
    if (rank == 0) PL_CALL_GOTO(pl_spectrum_vectors_create2(sp, res->nev, info.n_global, cplx), out, rc);
    for (int i = 0; i < res->nev; i++) {
        /* column of Re x and of Im x (-1: real) and the sign of Im x */
        double im = res->eigenvalues_imag ? res->eigenvalues_imag[i] : 0.0, sgn = 1.0;
        int cr = i, ci = -1;
        if (cplx && im > 0 && i + 1 < res->nev) ci = i + 1;
        if (cplx && im < 0 && i > 0) {
            cr = i - 1;
            ci = i;
            sgn = -1.0;
        }
        PL_CALL_GOTO(res->be->download(res->be, perm, res->vectors + (size_t)cr * res->ld, (size_t)n), out, rc);
        if (ci >= 0) PL_CALL_GOTO(res->be->download(res->be, permi, res->vectors + (size_t)ci * res->ld, (size_t)n), out, rc);
        PL_CALL_GOTO(pl_op_to_original(op, 1, perm, (size_t)n, ore, (size_t)no), out, rc);
        if (ci >= 0) PL_CALL_GOTO(pl_op_to_original(op, 1, permi, (size_t)n, oim, (size_t)no), out, rc);
        for (int64_t l = 0; l < no; l++) {
            orig[wd * l] = ore[l];
            if (cplx) orig[wd * l + 1] = ci >= 0 ? sgn * oim[l] : 0.0;
        }
        if (rank != 0) {
            PL_CHECK_GOTO(MPI_Send(orig, (int)(wd * no), MPI_DOUBLE, 0, 100 + i, ctx->comm) == MPI_SUCCESS, PL_ERR_MPI, out,
                          rc, "MPI_Send of an eigenvector block failed");
            continue;
        }
        for (int r = 0; r < size; r++) {
            if (r > 0)
                PL_CHECK_GOTO(MPI_Recv(orig, (int)(wd * blocks[2 * r + 1]), MPI_DOUBLE, r, 100 + i, ctx->comm,
                                       MPI_STATUS_IGNORE) == MPI_SUCCESS,
                              PL_ERR_MPI, out, rc, "MPI_Recv of an eigenvector block failed");
            if (rc == PL_OK) {
                int e = cplx ? pl_spectrum_vectors_write_complex(sp, i, blocks[2 * r], blocks[2 * r + 1], orig, 1)
                             : pl_spectrum_vectors_write(sp, i, blocks[2 * r], blocks[2 * r + 1], orig, 1);
                if (e) rc = pl_error_trace(e, __FILE__, __LINE__, __func__, "pl_spectrum_vectors_write");
            }
        }
    }
out:
    free(blocks);
    free(perm);
    free(permi);
    free(orig);
    free(ore);
    free(oim);
    return rc;
}

/* Host synchronisations per expansion step: each reduction is one, and each
 * step whose SpMV was not queued (full steps, several ranks) one more. */
static double solve_syncs_per_step(const lz_result *res)
{
    if (res->time.steps <= 0) return 0.0;
    double st = (double)res->time.steps;
    return ((double)res->time.reductions + st - (double)res->time.local_steps) / st;
}

static int write_attributes(app_ctx *ctx, pl_spectrum *sp, const lz_result *res, const solve_facts *f)
{
    const pl_config *cfg = &ctx->cfg;
    char *resolved = pl_config_dump_string(cfg);
    PL_CHECK(resolved, PL_ERR_MEM, "out of host memory");
    int rc = PL_OK;
    PL_CALL_GOTO(pl_spectrum_attr_string(sp, "program", "pjds-lanczos"), out, rc);
    PL_CALL_GOTO(pl_spectrum_attr_string(sp, "version", PL_VERSION), out, rc);
    PL_CALL_GOTO(pl_spectrum_attr_string(sp, "config_file", ctx->cfg_path ? ctx->cfg_path : ""), out, rc);
    PL_CALL_GOTO(pl_spectrum_attr_string(sp, "config_text", cfg->text ? cfg->text : ""), out, rc);
    PL_CALL_GOTO(pl_spectrum_attr_string(sp, "config_resolved", resolved), out, rc);
    PL_CALL_GOTO(pl_spectrum_attr_string(sp, "matrix_name", f->mi.name), out, rc);
    PL_CALL_GOTO(pl_spectrum_attr_int(sp, "rows", f->mi.rows), out, rc);
    PL_CALL_GOTO(pl_spectrum_attr_int(sp, "nnz", f->mi.nnz), out, rc);
    PL_CALL_GOTO(pl_spectrum_attr_double(sp, "nnz_per_row", f->mi.rows ? (double)f->mi.nnz / (double)f->mi.rows : 0.0),
                 out, rc);
    PL_CALL_GOTO(pl_spectrum_attr_int(sp, "row_length_min", f->st.row_len_min), out, rc);
    PL_CALL_GOTO(pl_spectrum_attr_int(sp, "row_length_max", f->st.row_len_max), out, rc);
    PL_CALL_GOTO(pl_spectrum_attr_int(sp, "chunk_height", cfg->spmv.chunk_height), out, rc);
    PL_CALL_GOTO(pl_spectrum_attr_int(sp, "sort_window", f->sort_window), out, rc);
    PL_CALL_GOTO(pl_spectrum_attr_string(sp, "spmv_format", pl_config_enum_name("spmv", "format", f->format)),
                 out, rc);
    PL_CALL_GOTO(pl_spectrum_attr_string(sp, "spmv_format_note", f->format_note), out, rc);
    PL_CALL_GOTO(pl_spectrum_attr_string(sp, "spmv_kron_split", app_kron_split_name(f->kron_split)), out, rc);
    PL_CALL_GOTO(pl_spectrum_attr_int(sp, "compressed_values", f->cmp_nval), out, rc);
    PL_CALL_GOTO(pl_spectrum_attr_int(sp, "compressed_offsets", f->cmp_noff), out, rc);
    PL_CALL_GOTO(pl_spectrum_attr_double(sp, "matrix_bytes", f->matrix_bytes), out, rc);
    PL_CALL_GOTO(pl_spectrum_attr_int(sp, "storage_pjds_entries", f->st.pjds_entries), out, rc);
    PL_CALL_GOTO(pl_spectrum_attr_int(sp, "storage_ellpack_entries", f->st.ellpack_entries), out, rc);
    PL_CALL_GOTO(pl_spectrum_attr_int(sp, "storage_operator_entries", f->stored_entries), out, rc);
    PL_CALL_GOTO(pl_spectrum_attr_string(sp, "backend", f->backend), out, rc);
    PL_CALL_GOTO(pl_spectrum_attr_string(sp, "exchange", pl_config_enum_name("spmv", "exchange", f->exchange)), out, rc);
    PL_CALL_GOTO(pl_spectrum_attr_string(sp, "transport", pl_config_enum_name("spmv", "transport", f->transport)), out,
                 rc);
    PL_CALL_GOTO(pl_spectrum_attr_int(sp, "ranks", ctx->size), out, rc);
    PL_CALL_GOTO(pl_spectrum_attr_int(sp, "threads_per_rank", omp_get_max_threads()), out, rc);
    PL_CALL_GOTO(pl_spectrum_attr_string(sp, "which", pl_config_enum_name("solver", "which", cfg->solver.which)), out, rc);
    PL_CALL_GOTO(pl_spectrum_attr_string(sp, "problem", f->cplx ? "nonsymmetric" : "symmetric"), out, rc);
    PL_CALL_GOTO(pl_spectrum_attr_string(sp, "method", pl_config_enum_name("solver", "method", f->method)), out, rc);
    PL_CALL_GOTO(pl_spectrum_attr_int(sp, "nev", res->nev), out, rc);
    PL_CALL_GOTO(pl_spectrum_attr_int(sp, "ncv", res->ncv), out, rc);
    PL_CALL_GOTO(pl_spectrum_attr_double(sp, "tolerance", cfg->solver.tolerance), out, rc);
    PL_CALL_GOTO(pl_spectrum_attr_double(sp, "norm_estimate", res->normest), out, rc);
    PL_CALL_GOTO(pl_spectrum_attr_string(sp, "converged_reason", lz_reason_name(res->reason)), out, rc);
    PL_CALL_GOTO(pl_spectrum_attr_int(sp, "nconv", res->nconv), out, rc);
    PL_CALL_GOTO(pl_spectrum_attr_int(sp, "restarts", res->restarts), out, rc);
    PL_CALL_GOTO(pl_spectrum_attr_int(sp, "max_restarts", res->max_restarts), out, rc); /* auto resolved */
    PL_CALL_GOTO(pl_spectrum_attr_int(sp, "max_restarts_auto", res->restarts_auto), out, rc);
    PL_CALL_GOTO(pl_spectrum_attr_int(sp, "iterations", res->iterations), out, rc);
    PL_CALL_GOTO(pl_spectrum_attr_int(sp, "breakdowns", res->breakdowns), out, rc);
    PL_CALL_GOTO(pl_spectrum_attr_int(sp, "verifications", res->verifications), out, rc);
    PL_CALL_GOTO(pl_spectrum_attr_int(sp, "verify_missed", res->missed), out, rc);
    PL_CALL_GOTO(pl_spectrum_attr_int(sp, "verify_inconclusive", res->verify_inconclusive), out, rc);
    PL_CALL_GOTO(pl_spectrum_attr_double(sp, "verify_bound", res->verify_bound), out, rc);
    PL_CALL_GOTO(pl_spectrum_attr_int(sp, "residual_rechecks", res->rechecks), out, rc);
    PL_CALL_GOTO(pl_spectrum_attr_string(sp, "reorthogonalization", res->reorth == LZ_REORTH_PARTIAL ? "partial" : "full"),
                 out, rc);
    PL_CALL_GOTO(pl_spectrum_attr_int(sp, "steps", res->time.steps), out, rc);
    PL_CALL_GOTO(pl_spectrum_attr_int(sp, "full_reorthogonalizations", res->time.full_reorths), out, rc);
    PL_CALL_GOTO(pl_spectrum_attr_int(sp, "local_steps", res->time.local_steps), out, rc);
    PL_CALL_GOTO(pl_spectrum_attr_int(sp, "measured_triggers", res->time.measured_triggers), out, rc);
    PL_CALL_GOTO(pl_spectrum_attr_double(sp, "orthogonality_estimate", res->orth_estimate), out, rc);
    PL_CALL_GOTO(pl_spectrum_attr_double(sp, "orthogonality_loss", res->orth_loss), out, rc);
    PL_CALL_GOTO(pl_spectrum_attr_int(sp, "returned_rayleigh_ritz", res->returned_rr), out, rc);
    PL_CALL_GOTO(pl_spectrum_attr_double(sp, "host_syncs_per_step", solve_syncs_per_step(res)), out, rc);
    PL_CALL_GOTO(pl_spectrum_attr_double(sp, "step_seconds",
                                         res->time.steps ? res->time.steps_time / (double)res->time.steps : 0.0),
                 out, rc);
    PL_CALL_GOTO(pl_spectrum_attr_string(sp, "eigenvector_basis", "original"), out, rc);
    PL_CALL_GOTO(pl_spectrum_attr_double(sp, "mpi_init_seconds", ctx->t_mpi_init), out, rc);
    PL_CALL_GOTO(pl_spectrum_attr_double(sp, "mpi_wait_seconds", ctx->t_mpi_wait), out, rc);
    PL_CALL_GOTO(pl_spectrum_attr_double(sp, "backend_wait_seconds", f->backend_wait_seconds), out, rc);
    if (ctx->have_plan) { /* the memory plan and what the device used (docs/operations.md) */
        PL_CALL_GOTO(pl_spectrum_attr_double(sp, "memory_plan_host_bytes", ctx->plan.host_bytes), out, rc);
        PL_CALL_GOTO(pl_spectrum_attr_double(sp, "memory_plan_device_bytes",
                                             ctx->plan.device_bytes + ctx->plan.device_resident),
                     out, rc);
    }
    PL_CALL_GOTO(pl_spectrum_attr_double(sp, "device_memory_used_bytes", f->device_used), out, rc);
    PL_CALL_GOTO(pl_spectrum_attr_double(sp, "backend_seconds", f->backend_seconds), out, rc);
    PL_CALL_GOTO(pl_spectrum_attr_double(sp, "residual_seconds", res->time.residual), out, rc);
    PL_CALL_GOTO(pl_spectrum_attr_double(sp, "build_seconds", f->mi.build_seconds + f->mi.partition_seconds), out, rc);
    PL_CALL_GOTO(pl_spectrum_attr_double(sp, "permute_seconds", f->permute_seconds), out, rc);
    PL_CALL_GOTO(pl_spectrum_attr_double(sp, "solve_seconds", f->solve_seconds), out, rc);
    PL_CALL_GOTO(pl_spectrum_attr_double(sp, "orth_seconds", res->time.orth), out, rc);
    PL_CALL_GOTO(pl_spectrum_attr_double(sp, "restart_seconds", res->time.restart), out, rc);
    PL_CALL_GOTO(pl_spectrum_attr_double(sp, "projected_seconds", res->time.projected), out, rc);
    PL_CALL_GOTO(pl_spectrum_attr_int(sp, "spmv_count", f->spmv_count), out, rc);
    PL_CALL_GOTO(pl_spectrum_attr_double(sp, "spmv_seconds", f->spmv_seconds), out, rc);
    PL_CALL_GOTO(pl_spectrum_attr_double(sp, "spmv_gflops", f->spmv_gflops), out, rc);
    PL_CALL_GOTO(pl_spectrum_attr_double(sp, "spmv_median_seconds", f->spmv_median), out, rc);
    /* last: the times of writing and of the whole run so far */
    PL_CALL_GOTO(pl_spectrum_attr_double(sp, "write_seconds", pl_wtime() - f->t_write0), out, rc);
    PL_CALL_GOTO(pl_spectrum_attr_double(sp, "total_seconds", pl_wtime() - ctx->t_start), out, rc);
    PL_CALL_GOTO(pl_spectrum_attr_double(sp, "wall_seconds", app_wall_seconds(ctx)), out, rc);
out:
    free(resolved);
    return rc;
}

/* Rank 0 writes the file; vectors need every rank.  Returns the status on
 * every rank: rank 0's error on rank 0, PL_OK elsewhere. */
int solve_write(app_ctx *ctx, const char *path, int replace, pl_op *op, const lz_result *res, solve_facts *f,
                solve_attr_fn extra, void *extra_arg)
{
    pl_spectrum *sp = NULL;
    int rc = PL_OK, ok = 1;
    f->t_write0 = pl_wtime();
    if (ctx->rank == 0) {
        rc = pl_spectrum_create(path, &sp);
        if (rc == PL_OK) rc = app_describe_output(ctx, sp, !f->point_file);
        if (rc == PL_OK && f->cplx)
            rc = pl_spectrum_write_results_complex(sp, res->nev, res->eigenvalues, res->eigenvalues_imag, res->residuals);
        else if (rc == PL_OK)
            rc = pl_spectrum_write_results(sp, res->nev, res->eigenvalues, res->residuals);
        if (rc == PL_OK) /* complex ritz values for a nonsymmetric problem */
            rc = pl_spectrum_write_history_complex(sp, res->nhist, res->hist_nev, res->hist_iterations, res->hist_ritz,
                                                   f->cplx ? res->hist_ritz_imag : NULL, res->hist_resid);
        if (rc) pl_error_trace(rc, __FILE__, __LINE__, __func__, "writing the results");
        ok = rc == PL_OK;
    }
    SOLVE_MPI(MPI_Bcast(&ok, 1, MPI_INT, 0, ctx->comm));
    if (ok && ctx->cfg.output.eigenvectors) {
        int e = write_vectors(ctx, op, res, sp, f->cplx);
        if (e) rc = pl_error_trace(e, __FILE__, __LINE__, __func__, "write_vectors(ctx, op, res, sp)");
    }
    if (ctx->rank == 0) {
        if (rc == PL_OK) rc = write_attributes(ctx, sp, res, f);
        if (rc == PL_OK && extra) rc = extra(extra_arg, sp);
        if (rc == PL_OK) {
            rc = pl_spectrum_commit(&sp, replace);
            if (rc) pl_error_trace(rc, __FILE__, __LINE__, __func__, "pl_spectrum_commit(&sp, replace)");
        }
        pl_spectrum_abort(&sp); /* no-op after a commit */
    }
    /* the file appeared during the run: every rank's error, one line */
    return app_agree_placement(ctx, rc);
}

double app_max_over_ranks(app_ctx *ctx, double t)
{
    double m = t;
    if (MPI_Allreduce(&t, &m, 1, MPI_DOUBLE, MPI_MAX, ctx->comm) != MPI_SUCCESS) return t;
    return m;
}

/* [solver] method and which against the matrix: auto is lanczos for a
 * symmetric matrix, krylov-schur otherwise; lanczos on a nonsymmetric one
 * and largest_imaginary on a symmetric one are bad input.  Collective. */
static int choose_method(app_ctx *ctx, const pl_csr *rows, solve_facts *f)
{
    const pl_config *cfg = &ctx->cfg;
    char where[1200];
    int sym = 1;
    f->method = cfg->solver.method;
    PL_CALL(app_check_symmetric(ctx, rows, &f->mi, f->method == PL_METHOD_LANCZOS, &sym));
    PL_CHECK(!(sym == 0 && f->method == PL_METHOD_LANCZOS), PL_ERR_INPUT,
             "%s = lanczos: matrix %s is not symmetric; use krylov-schur or auto",
             pl_config_where(cfg, "solver", "method", where, sizeof where), f->mi.name);
    PL_CHECK(!(sym == 0 && f->method == PL_METHOD_CHEBFD), PL_ERR_INPUT,
             "%s = chebfd: matrix %s is not symmetric; chebfd needs a symmetric matrix (use krylov-schur or auto)",
             pl_config_where(cfg, "solver", "method", where, sizeof where), f->mi.name);
    if (f->method == PL_METHOD_CHEBFD && cfg->solver.reproducible && ctx->size > 1) { /* every rank alike */
        ctx->error_collective = 1;
        return PL_ERROR(PL_ERR_INPUT,
                        "%s = true: chebfd's block products on %d ranks have no reproducible sums yet (one rank, "
                        "lanczos or krylov-schur, or reproducible = false)",
                        pl_config_where(cfg, "solver", "reproducible", where, sizeof where), ctx->size);
    }
    if (f->method == PL_METHOD_AUTO) f->method = sym == 1 ? PL_METHOD_LANCZOS : PL_METHOD_KRYLOV_SCHUR;
    /* symmetric problem: known symmetric, or lanczos forced on an unchecked matrix */
    int symmetric = sym == 1 || f->method == PL_METHOD_LANCZOS || f->method == PL_METHOD_CHEBFD;
    PL_CHECK(!(symmetric && cfg->solver.which == PL_WHICH_LARGEST_IMAGINARY), PL_ERR_INPUT,
             "%s = largest_imaginary: matrix %s is symmetric, so its eigenvalues are real; use largest_magnitude, "
             "largest or smallest",
             pl_config_where(cfg, "solver", "which", where, sizeof where), f->mi.name);
    f->cplx = !symmetric;
    /* say what the choice rests on (a user cannot see it otherwise) */
    const char *why = f->mi.symmetric_known ? (cfg->model.type == PL_MODEL_HDF5 ? "the file's symmetric attribute"
                                                                                 : "the generator")
                      : sym == -1 ? "not checked: [matrix] check_symmetry = false"
                      : cfg->model.type == PL_MODEL_HDF5 ? "the numerical check, [matrix] check_symmetry"
                                                         : "the generator";
    /* printed by cmd_solve.c once the operator stands (bad input stays one line) */
    snprintf(f->method_note, sizeof f->method_note, "solve: matrix %.200s is %s (%s): method %s%s", f->mi.name,
            sym == 1 ? "symmetric" : sym == 0 ? "nonsymmetric" : "of unknown symmetry", why,
            pl_config_enum_name("solver", "method", f->method), cfg->solver.method == PL_METHOD_AUTO ? " (auto)" : "");
    return PL_OK;
}

int solve_build(app_ctx *ctx, pl_csr *rows, pl_backend **be, solve_facts *f)
{
    const pl_config *cfg = &ctx->cfg;
    char where[1200];
    memset(rows, 0, sizeof *rows);
    /* a new backend is made while the rows are generated (app_backend.c,
     * started by main.c): the device count and the ranks per GPU are
     * checked before the build, the memory plan's GPU part after it, when
     * the context exists and the GPU's free memory can be read */
    const int made = !*be;
    if (made) PL_CALL(app_backend_check(ctx));
    ctx->plan_be = *be;
    const int e = app_build_rows(ctx, rows, &f->mi);
    ctx->plan_be = NULL;
    PL_CALL(e);
    if (made) {
        double t = 0.0, w = 0.0;
        PL_CALL(app_backend_finish(ctx, be, &t, &w));
        f->backend_seconds = app_max_over_ranks(ctx, t);
        f->backend_wait_seconds = app_max_over_ranks(ctx, w);
        if (ctx->have_plan) PL_CALL(app_mem_plan_check_device(ctx, &ctx->plan, *be));
    }
    PL_CHECK(cfg->solver.nev < f->mi.rows, PL_ERR_INPUT, "%s: %d must be < N = %lld (the number of rows)",
             pl_config_where(cfg, "solver", "nev", where, sizeof where), cfg->solver.nev, (long long)f->mi.rows);
    /* matrix statistics from the row lengths, before the CSR block is freed
     * (matrix_free: no rows, the row-length attributes stay 0) */
    if (!ctx->mf) PL_CALL(app_row_stats(ctx, rows, NULL, &f->st));
    PL_CALL(choose_method(ctx, rows, f));
    return PL_OK;
}

int solve_make_op(app_ctx *ctx, pl_csr *rows, pl_backend *be, pl_op **op, solve_facts *f)
{
    const pl_config *cfg = &ctx->cfg;
    /* device memory plan: matrix (entries + per-row arrays + halo, 5 %
     * margin for padding and windows; the value terms of a sweep) + ncv + 1
     * basis vectors + work */
    const int64_t n = rows->nrows, ncv = solve_ncv(cfg, f->method, f->mi.rows);
    /* 12 B per entry, + up to 2 B for the run columns of the CUDA backend's pJDS-b view (b >= 2) */
    double nnz = (double)pl_csr_nnz(rows);
    double need = 1.05 * ((14.0 + 8.0 * rows->nterms) * nnz + 32.0 * (double)n) + 8.0 * (double)n * (double)(ncv + 6);
    if (ctx->mf) /* matrix_free: tables of a few MB; the rank's basis and halo (app_build_free's plan) */
        need = ctx->have_plan && ctx->plan.device_bytes > 0 ? ctx->plan.device_bytes
                                                             : 8.0 * (double)f->mi.rows * (double)(ncv + 6);
    PL_CALL(pl_backend_mem_check(be, need));
    double t0 = pl_wtime();
    pl_op_options oo;
    app_op_options(&cfg->spmv, &oo);
    oo.reproducible = cfg->solver.reproducible;
    int orc;
    if (ctx->mf) { /* app_free.c: the operator from the tables */
        orc = app_param_error(cfg, "spmv", "format", app_free_op(ctx, &oo, be, op, &f->mi.nnz));
        if (orc == PL_OK)
            PL_CHECK(MPI_Allreduce(MPI_IN_PLACE, &f->mi.nnz, 1, MPI_INT64_T, MPI_SUM, ctx->comm) == MPI_SUCCESS,
                     PL_ERR_MPI, "MPI_Allreduce failed");
    } else {
        orc = app_param_error(cfg, "spmv", NULL, pl_op_create(rows, &oo, be, ctx->comm, op));
    }
    /* a check that every rank made alike ([spmv] transport = nccl on a
     * shared GPU, ...) prints once, exit status 2 without MPI_Abort */
    if (orc != PL_OK) app_error_alike(ctx, orc);
    PL_CALL(orc);
    f->permute_seconds = app_max_over_ranks(ctx, pl_wtime() - t0);
    pl_csr_destroy(rows);
    pl_op_info info;
    pl_op_get_info(*op, &info);
    f->stored_entries = info.nent_local;
    PL_CHECK(MPI_Allreduce(MPI_IN_PLACE, &f->stored_entries, 1, MPI_INT64_T, MPI_SUM, ctx->comm) == MPI_SUCCESS,
             PL_ERR_MPI, "MPI_Allreduce failed");
    f->backend = be->name;
    f->exchange = info.exchange;
    f->sort_window = info.sort_window;
    f->transport = info.transport;
    f->format = info.format;
    f->kron_split = pl_op_kron_split(*op);
    f->cmp_nval = info.cmp_nval;
    f->cmp_noff = info.cmp_noff;
    f->cmp_vbits = info.cmp_vbits;
    f->cmp_obits = info.cmp_obits;
    snprintf(f->format_note, sizeof f->format_note, "%s", info.format_note);
    f->matrix_bytes = (double)info.device_bytes;
    PL_CHECK(MPI_Allreduce(MPI_IN_PLACE, &f->matrix_bytes, 1, MPI_DOUBLE, MPI_SUM, ctx->comm) == MPI_SUCCESS, PL_ERR_MPI,
             "MPI_Allreduce failed");
    if (ctx->rank == 0) {
        if (f->format == PL_FORMAT_MATRIX_FREE)
            pl_info("format: matrix_free (%s), no matrix stored", f->format_note);
        else if (f->format == PL_FORMAT_COMPRESSED)
            pl_info("format: compressed (%lld values, %lld offsets: %d + %d bits per entry), matrix %.1f MB",
                    (long long)f->cmp_nval, (long long)f->cmp_noff, f->cmp_vbits, f->cmp_obits, f->matrix_bytes / 1e6);
        else
            pl_info("format: pjds%s%s%s, matrix %.1f MB", f->format_note[0] ? " (" : "", f->format_note,
                    f->format_note[0] ? ")" : "", f->matrix_bytes / 1e6);
    }
    return PL_OK;
}

int solve_run(app_ctx *ctx, pl_op *op, solve_facts *f, const solve_extra *x, lz_result *res)
{
    const pl_config *cfg = &ctx->cfg;
    lz_options o;
    lz_options_defaults(&o);
    o.nev = cfg->solver.nev;
    o.which = cfg->solver.which;
    o.tol = cfg->solver.tolerance;
    o.ncv = cfg->solver.ncv;
    o.max_restarts = cfg->solver.max_restarts == PL_MAX_RESTARTS_AUTO ? LZ_RESTARTS_AUTO : cfg->solver.max_restarts;
    o.seed = cfg->solver.seed;
    o.want_vectors = cfg->output.eigenvectors || (x && x->want_vectors);
    o.verify = cfg->solver.verify;
    o.verify_prob = cfg->solver.verify_probability;
    /* a spectral transformation: no search of the complement unless asked for (the wanted values are the
     * operator's dominant ones; the search cost 27 of 65 solves on cryg10000, docs/config.md) */
    if (x && x->st && !pl_config_is_set(cfg, "solver", "verify")) o.verify = 0;
    o.reorth = cfg->solver.reorthogonalization == PL_REORTH_FULL ? LZ_REORTH_FULL : LZ_REORTH_PARTIAL;
    /* Lanczos in the B-inner product: full unless asked for (every product is a factorised solve; partial's
     * relaxed threshold left residuals of 4e-12 for estimates of 1e-13 and a restart from the residual check:
     * 69 solves against 39 on the FEM pair of st.pairs, docs/config.md) */
    if (x && x->st_b_inner && !pl_config_is_set(cfg, "solver", "reorthogonalization")) o.reorth = LZ_REORTH_FULL;
    const char *vt = getenv("PJDS_VERIFY_TOL"); /* measurements only */
    if (vt && vt[0]) o.verify_tol = atof(vt);
    const char *vp = getenv("PJDS_VERIFY_PROB"); /* measurements only (< 0: the rule before the certificate) */
    if (vp && vp[0]) o.verify_prob = atof(vp);
    progress prog = {ctx->rank, ctx->quiet, pl_wtime(), pl_op_backend(op), 0.0, 0.0};
    o.monitor = monitor;
    o.monitor_arg = &prog;
    if (x) {
        o.checkpoint = x->checkpoint;
        o.checkpoint_arg = x->checkpoint_arg;
        o.poll = x->poll;
        o.resume = x->resume;
        o.start = x->start;
        o.nstart = x->nstart;
        o.start_ld = x->start_ld;
        o.start_noise = APP_WARM_START_NOISE;
        const char *wn = getenv("PJDS_WARM_NOISE"); /* measurements only (docs/operations.md, "Sweeps") */
        if (wn && wn[0]) o.start_noise = atof(wn);
    }
    PL_CHECK(f->method != PL_METHOD_CHEBFD, PL_ERR_INPUT,
             "%s: [solver] method = chebfd runs in a single solve, not in a sweep", cfg->path);
    pl_op_reset_counters(op); /* the counters and per-product samples start here */
    double t0 = pl_wtime();
    int rc = x && x->st                       ? pl_st_solve(x->st, &o, x->st_which, f->method, res)
             : f->method == PL_METHOD_LANCZOS ? lz_solve(op, &o, res)
                                              : ks_solve(op, &o, res);
    PL_CALL(app_param_error(cfg, "solver", NULL, rc));
    f->solve_seconds = app_max_over_ranks(ctx, pl_wtime() - t0);
    pl_op_timings ot;
    pl_op_timings_get(op, &ot);
    /* the solve's products, those before a checkpoint included (res->iterations: the solver's count,
     * restored on --resume); their time and rate: the products of this run (ot) */
    f->spmv_count = res->iterations;
    f->spmv_run = ot.n_apply;
    f->spmv_seconds = app_max_over_ranks(ctx, ot.t_total);
    f->spmv_median = app_max_over_ranks(ctx, ot.t_median);
    /* from the median product: a queued product (a local Lanczos step) is
     * timed only by its launch, so the sum of the times understates the
     * products' time (hh9 on one H100: 8338 "GF/s" from the sum) */
    f->spmv_gflops = f->spmv_median > 0 ? 2.0 * (double)f->mi.nnz / f->spmv_median * 1e-9 : 0.0;
    f->device_used = app_max_over_ranks(ctx, prog.dev_max); /* the GPU peak seen at the restarts */
    f->spmv_first = app_max_over_ranks(ctx, ot.t_first);
    f->spmv_max = app_max_over_ranks(ctx, ot.t_max);
    return PL_OK;
}

void solve_report(app_ctx *ctx, const lz_result *res, const solve_facts *f, const char *path)
{
    const pl_config *cfg = &ctx->cfg;
    if (ctx->rank != 0) return;
    for (int i = 0; i < res->nev; i++) {
        if (f->cplx)
            printf("eigenvalue[%d]: %.17g %+.17gi  residual: %.3e\n", i, res->eigenvalues[i], res->eigenvalues_imag[i],
                   res->residuals[i]);
        else
            printf("eigenvalue[%d]: %.17g  residual: %.3e\n", i, res->eigenvalues[i], res->residuals[i]);
    }
    fflush(stdout);
    pl_info("solve: %s, %s after %d restart(s), %lld SpMVs (ncv %d, %d/%d converged, max_restarts %d%s)",
            pl_config_enum_name("solver", "method", f->method), lz_reason_name(res->reason), res->restarts,
            (long long)res->iterations, res->ncv, res->nconv, res->nev, res->max_restarts,
            res->restarts_auto ? " auto" : "");
    if (res->verifications > 0 && res->verify_bound >= 0.0)
        pl_info("solve: verify: %d search(es), %d missed value(s) found; a wanted eigenvector beyond the returned "
                "ones would have needed a random start component of probability %.1e or less",
                res->verifications, res->missed, res->verify_bound);
    else if (res->verifications > 0)
        pl_info("solve: verify: %d search(es), %d missed value(s) found and returned; the last search stopped once "
                "its value had converged clear of the returned ones (no certificate: %s)",
                res->verifications, res->missed,
                f->method == PL_METHOD_KRYLOV_SCHUR ? "Krylov-Schur"
                : res->missed > 0                    ? "a missed value on the edge was locked in it"
                                                     : "a breakdown, a B-inner product or an earlier checkpoint");
    /* the products' time: a queued product (local Lanczos step) is timed
     * only by its launch, so the sum understates it on a GPU; the median
     * product times their number where that is larger */
    const double spmv_shown = fmax(f->spmv_seconds, f->spmv_median * (double)f->spmv_run);
    pl_info("solve: times: build %.2f s, permute %.2f s, solve %.2f s (SpMV %.2f s, orth %.2f s, restart %.2f s), "
            "total %.2f s",
            f->mi.build_seconds + f->mi.partition_seconds, f->permute_seconds, f->solve_seconds, spmv_shown,
            res->time.orth, res->time.restart, pl_wtime() - ctx->t_start);
    pl_info("solve: phases: MPI init %.3f s, backend (CUDA context, libraries) %.3f s, build %.3f s, permute and "
            "upload %.3f s, solve %.3f s (of it final residuals %.3f s), before write %.3f s since the start; "
            "wall %.3f s since the process start, waited for MPI %.3f s, for the backend %.3f s",
            ctx->t_mpi_init, f->backend_seconds, f->mi.build_seconds + f->mi.partition_seconds, f->permute_seconds,
            f->solve_seconds, res->time.residual, pl_wtime() - ctx->t_start, app_wall_seconds(ctx), ctx->t_mpi_wait,
            f->backend_wait_seconds);
    pl_info("solve: SpMV %.2f GF/s (the median product, 2 nnz flops each; %lld products)", f->spmv_gflops,
            (long long)f->spmv_run);
    pl_info("solve: SpMV per product (max over ranks): median %.3f ms, mean %.3f ms, first %.3f ms, max %.3f ms",
            1e3 * f->spmv_median, f->spmv_run > 0 ? 1e3 * f->spmv_seconds / (double)f->spmv_run : 0.0,
            1e3 * f->spmv_first, 1e3 * f->spmv_max);
    if (res->time.steps > 0) { /* lanczos-perf: the expansion steps alone (SpMV + Gram-Schmidt) */
        /* no SpMV / orthogonalisation split: a local step's product is queued or
         * fused into its orthogonalisation call, and orth also counts passes
         * outside the steps (random directions, the loss check), so their
         * difference read as "SpMV" was 0.01 ms on HMEp's GPU solve and negative
         * at nev 16 on the CPU; the product's own time is the line above */
        double st = (double)res->time.steps;
        pl_info("solve: %s step %.3f ms (%lld steps; %.1f MB, "
                "%.1f host syncs per step, %lld local, %lld full, %.0f %% one pass); outside the steps %.3f s "
                "(restart %.3f s)",
                f->method == PL_METHOD_LANCZOS ? "Lanczos" : "Krylov-Schur", 1e3 * res->time.steps_time / st,
                (long long)res->time.steps, 1e-6 * res->time.vec_bytes / st,
                solve_syncs_per_step(res), (long long)res->time.local_steps, (long long)res->time.full_reorths,
                100.0 * (double)res->time.single_pass / st, f->solve_seconds - res->time.steps_time,
                res->time.restart);
        if (res->reorth == LZ_REORTH_PARTIAL)
            pl_info("solve: partial reorthogonalisation: %lld of %lld steps full (the first of each cycle included; "
                    "%.3f s of the steps' %.3f s), %lld more estimates passed the threshold but measured clean, "
                    "largest estimated loss %.1e, measured on the eigenvectors %.1e",
                    (long long)res->time.full_reorths, (long long)res->time.steps, res->time.full_steps_time,
                    res->time.steps_time, (long long)res->time.measured_triggers, res->orth_estimate, res->orth_loss);
        if (res->returned_rr)
            pl_info("solve: the returned vectors had lost orthogonality past 1e-10 (the basis is kept orthogonal to "
                    "min(sqrt(eps), 100 tol) only): orthonormalised, with a Rayleigh-Ritz step on their span; now %.1e",
                    res->orth_loss);
        if (f->spmv_median > 0 && res->time.steps > 0)
            pl_info("solve: step / SpMV median = %.2f", res->time.steps_time / st / f->spmv_median);
    }
    pl_info("solve: wrote %s", path);
    if (res->verify_inconclusive)
        pl_warn("verify: the search for a missed copy of a wanted eigenvalue stopped at its budget without a "
                "converged answer; the returned set converged but may miss a copy of a multiple eigenvalue");
    if (res->reason != LZ_CONVERGED)
        pl_warn("not converged (reason %s): %d of %d eigenpairs met tolerance %g; results written anyway",
                lz_reason_name(res->reason), res->nconv, res->nev, cfg->solver.tolerance);
    if (res->reason == LZ_STAGNATED)
        pl_warn("stagnated: max_restarts = auto stopped after %d of %d restarts because the residuals stopped "
                "falling (docs/config.md, [solver] max_restarts); a number for [solver] max_restarts runs exactly that many",
                res->restarts, res->max_restarts);
}
