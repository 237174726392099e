/* app_import.c — `[model] type = hdf5`: rows of an HDF5 matrix file in any
 * layout io/pl_h5matrix.h reads ([matrix] layout, index_base), row blocks
 * balanced by non-zeros; the symmetry check that `solve` needs; and the
 * `export` command (HDF5 with PETSc's names, or PETSc's binary format). */
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
    const pl_h5m_opts opts = {m->layout, m->index_base - 1}; /* index_base words auto|0|1 */
    pl_h5m_info info;
    /* every rank validates the metadata alike, so a bad file fails everywhere
     * with the same message: then rank 0 alone reports it (app_error_alike) */
    int orc = pl_h5m_open_info_ex(m->file, m->group, &opts, &info), any = orc != PL_OK, anyg = 0;
    PL_CHECK(MPI_Allreduce(&any, &anyg, 1, MPI_INT, MPI_MAX, ctx->comm) == MPI_SUCCESS, PL_ERR_MPI,
             "MPI_Allreduce failed");
    if (anyg) return app_error_alike(ctx, orc ? orc : PL_ERROR(PL_ERR_INPUT, "another rank could not open %s", m->file));
    PL_CALL(app_matrix_sum_start(ctx, m->file)); /* provenance: the file's CRC-32, beside the run */
    if (info.layout != PL_H5M_LAYOUT_PJDS)
        pl_info("matrix %s: layout %s%s (%lld x %lld, %lld stored entries%s)", m->file, pl_h5m_layout_name(info.layout),
                m->layout == PL_H5M_LAYOUT_AUTO ? " (detected)" : "", (long long)info.rows, (long long)info.cols,
                (long long)info.nnz_stored, info.layout == PL_H5M_LAYOUT_COO ? (info.index_base ? ", 1-based" : ", 0-based") : "");
    { /* the memory plan from the file's attributes, before any row is read
       * (lower storage: the full matrix has up to twice the stored entries) */
        const double nnz = info.lower ? 2.0 * (double)info.nnz_stored : (double)info.nnz_stored;
        const int64_t share = (info.rows + ctx->size - 1) / ctx->size;
        const int gpu = app_backend_gpu_planned(ctx);
        app_mem_plan_compute(&ctx->cfg, info.rows, share, info.rows > 0 ? nnz * (double)share / (double)info.rows : 0.0,
                             gpu, info.symmetric, &ctx->plan);
        ctx->have_plan = 1;
        PL_CALL(app_mem_plan_check(ctx, &ctx->plan, ctx->plan_be));
    }
    int64_t *bounds = NULL;
    PL_MALLOC(bounds, ctx->size + 1);
    int rc = PL_OK;
    double t0 = pl_wtime();
    if (ctx->size > 1) {
        pl_h5m_source src = {.file = m->file, .group = m->group, .comm = ctx->comm, .opts = &opts};
        rc = pl_partition_by_nnz(info.rows, pl_h5m_row_lengths_fn, &src, ctx->comm, bounds);
        if (rc) { /* agreed on every rank (pl_h5m_row_lengths) */
            app_error_alike(ctx, rc);
            goto out;
        }
    } else {
        bounds[0] = 0;
        bounds[1] = info.rows;
    }
    mi->partition_seconds = pl_wtime() - t0;
    t0 = pl_wtime();
    rc = pl_h5m_read_rows_ex(m->file, m->group, &opts, bounds[ctx->rank], bounds[ctx->rank + 1], ctx->comm, rows);
    if (rc) { /* agreed on every rank */
        app_error_alike(ctx, rc);
        goto out;
    }
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

/* The PETSc view of an HDF5 export: links when A == A^T exactly (known from
 * the source, or checked here), else a compressed-column copy. */
static int export_view(app_ctx *ctx, const pl_csr *rows, const app_matrix_info *mi, int *view)
{
    double rel = 0;
    int64_t i = -1, j = -1;
    if (!mi->symmetric_known) PL_CALL(pl_h5m_asymmetry(rows, ctx->comm, &rel, &i, &j));
    *view = mi->symmetric_known || rel == 0.0 ? PL_H5M_VIEW_LINKS : PL_H5M_VIEW_CSC;
    return PL_OK;
}

int cmd_export(app_ctx *ctx)
{
    const char *file = ctx->args[0];
    const char *fmt = ctx->export_format ? ctx->export_format : "hdf5";
    const int petsc = !strcmp(fmt, "petsc");
    const char *group = ctx->export_group ? ctx->export_group : "/";
    ctx->error_collective = 1; /* the options are checked alike on every rank: rank 0 reports */
    PL_CHECK(petsc || !strcmp(fmt, "hdf5"), PL_ERR_INPUT, "export: --format %s is not a format (hdf5 or petsc)", fmt);
    PL_CHECK(!petsc || !ctx->export_group, PL_ERR_INPUT, "export: --group applies to --format hdf5 only");
    PL_CHECK(group[0] == '/', PL_ERR_INPUT, "export: --group %s must be an absolute path (start with /)", group);
    ctx->error_collective = 0;
    PL_CALL(app_check_output_path(ctx, file));
    pl_csr rows;
    app_matrix_info mi;
    PL_CALL(app_build_rows(ctx, &rows, &mi));
    int rc = PL_OK, view = PL_H5M_VIEW_NONE;
    char source[1400];
    snprintf(source, sizeof source, "pjds-lanczos export %s", ctx->cfg_path);
    double t0 = pl_wtime();
    if (petsc) {
        rc = pl_petsc_write(file, &rows, ctx->comm, ctx->overwrite);
    } else {
        rc = export_view(ctx, &rows, &mi, &view);
        if (!rc)
            rc = pl_h5m_write_ex(file, group, &rows, mi.symmetric_known, mi.name, source, ctx->comm, ctx->overwrite,
                                 view);
    }
    /* agreed on every rank (the same message): bad input, e.g. a file that
     * appeared during the export, prints once */
    if (rc == PL_ERR_INPUT) ctx->error_collective = 1;
    PL_CALL_GOTO(rc, out, rc);
    pl_info("export: %lld rows, %lld non-zeros written to %s%s%s (%s%s) in %.2f s", (long long)mi.rows,
            (long long)mi.nnz, file, petsc ? "" : " group ", petsc ? "" : group,
            petsc ? "PETSc binary" : "HDF5 with PETSc's jc/ir/data ",
            petsc ? "" : view == PL_H5M_VIEW_LINKS ? "as links" : "as a compressed-column copy", pl_wtime() - t0);
out:
    pl_csr_destroy(&rows);
    return rc;
}
