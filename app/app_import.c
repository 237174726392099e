/* app_import.c — `[model] type = hdf5`: rows of an HDF5 matrix file
 * (io/pl_h5matrix.h), row blocks balanced by non-zeros; the symmetry check
 * that `solve` needs; and the `export` command. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "pl_error.h"
#include "pl_h5matrix.h"
#include "spmv.h"

int app_build_rows_hdf5(app_ctx *ctx, pl_csr *rows, app_matrix_info *mi)
{
    const pl_matrix_cfg *m = &ctx->cfg.matrix;
    pl_h5m_info info;
    /* every rank validates the metadata alike, so a bad file fails everywhere */
    PL_CALL(pl_h5m_open_info(m->file, m->group, &info));
    { /* the memory plan from the file's attributes, before any row is read
       * (lower storage: the full matrix has up to twice the stored entries) */
        const double nnz = info.lower ? 2.0 * (double)info.nnz_stored : (double)info.nnz_stored;
        const int64_t share = (info.rows + ctx->size - 1) / ctx->size;
        const int gpu = app_backend_gpu_planned(ctx);
        app_mem_plan_compute(&ctx->cfg, info.rows, share, info.rows > 0 ? nnz * (double)share / (double)info.rows : 0.0,
                             gpu, &ctx->plan);
        ctx->have_plan = 1;
        PL_CALL(app_mem_plan_check(ctx, &ctx->plan, ctx->plan_be));
    }
    int64_t *bounds = NULL;
    PL_MALLOC(bounds, ctx->size + 1);
    int rc = PL_OK;
    double t0 = pl_wtime();
    if (ctx->size > 1) {
        pl_h5m_source src = {.file = m->file, .group = m->group, .comm = ctx->comm};
        PL_CALL_GOTO(pl_partition_by_nnz(info.rows, pl_h5m_row_lengths_fn, &src, ctx->comm, bounds), out, rc);
    } else {
        bounds[0] = 0;
        bounds[1] = info.rows;
    }
    mi->partition_seconds = pl_wtime() - t0;
    t0 = pl_wtime();
    PL_CALL_GOTO(pl_h5m_read_rows(m->file, m->group, bounds[ctx->rank], bounds[ctx->rank + 1], ctx->comm, rows), out, rc);
    double t = pl_wtime() - t0;
    PL_CHECK_GOTO(MPI_Allreduce(&t, &mi->build_seconds, 1, MPI_DOUBLE, MPI_MAX, ctx->comm) == MPI_SUCCESS, PL_ERR_MPI,
                  out, rc, "MPI_Allreduce failed");
    mi->rows = info.rows;
    mi->symmetric_known = info.symmetric;
    snprintf(mi->name, sizeof mi->name, "%.200s", info.name[0] ? info.name : m->file);
out:
    free(bounds);
    return rc;
}

int app_check_symmetric(app_ctx *ctx, const pl_csr *rows, const app_matrix_info *mi, int require, int *symmetric)
{
    *symmetric = 1;
    if (mi->symmetric_known) return PL_OK;
    if (!ctx->cfg.matrix.check_symmetry || ctx->cfg.model.type != PL_MODEL_HDF5) {
        /* no check asked for (hdf5), or a generator that is not symmetric */
        *symmetric = ctx->cfg.model.type == PL_MODEL_HDF5 ? -1 : 0;
        return PL_OK;
    }
    double rel = 0;
    int64_t i = -1, j = -1;
    PL_CALL(pl_h5m_asymmetry(rows, ctx->comm, &rel, &i, &j));
    *symmetric = rel <= ctx->cfg.matrix.symmetry_tolerance;
    char where[1200], mwhere[1200];
    PL_CHECK(*symmetric || !require, PL_ERR_INPUT,
             "matrix %s is not symmetric: largest |a_ij - a_ji| / max|a| = %.3e at (%lld, %lld) > %s = %g; "
             "%s = lanczos needs a symmetric matrix (use krylov-schur or auto)",
             mi->name, rel, (long long)i, (long long)j,
             pl_config_where(&ctx->cfg, "matrix", "symmetry_tolerance", where, sizeof where),
             ctx->cfg.matrix.symmetry_tolerance, pl_config_where(&ctx->cfg, "solver", "method", mwhere, sizeof mwhere));
    return PL_OK;
}

int cmd_export(app_ctx *ctx)
{
    const char *file = ctx->args[0];
    PL_CALL(app_check_output_path(ctx, file));
    pl_csr rows;
    app_matrix_info mi;
    PL_CALL(app_build_rows(ctx, &rows, &mi));
    int rc = PL_OK;
    char source[1400];
    snprintf(source, sizeof source, "pjds-lanczos export %s", ctx->cfg_path);
    double t0 = pl_wtime();
    rc = pl_h5m_write(file, "/", &rows, mi.symmetric_known, mi.name, source, ctx->comm, ctx->overwrite);
    /* agreed on every rank (the same message): bad input, e.g. a file that
     * appeared during the export, prints once */
    if (rc == PL_ERR_INPUT) ctx->error_collective = 1;
    PL_CALL_GOTO(rc, out, rc);
    pl_info("export: %lld rows, %lld non-zeros written to %s in %.2f s", (long long)mi.rows, (long long)mi.nnz, file,
            pl_wtime() - t0);
out:
    pl_csr_destroy(&rows);
    return rc;
}
