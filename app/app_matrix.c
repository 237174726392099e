/* app_matrix.c — from the configuration to this rank's CSR row block:
 * the Holstein-Hubbard or block-stencil generator or an HDF5 matrix file, contiguous row
 * blocks balanced by non-zeros (spmv/partition.c); plus the output-path
 * check shared by the commands that write files. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <libgen.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "app.h"
#include "bs.h"
#include "hh.h"
#include "pl_error.h"
#include "spmv.h"

/* A generated model: its row lengths and CSR rows of a range. */
typedef struct gen_model {
    void *model;
    pl_row_lengths_fn lengths;
    int (*rows)(void *model, int64_t r0, int64_t r1, pl_csr *out);
} gen_model;

/* This rank's rows of a generated model of N rows: contiguous blocks
 * balanced by non-zeros (one rank: all), timings into mi.  Collective. */
/* The memory plan before any row is generated: the mean length of up to
 * 4096 evenly spaced rows (the same sample on every rank) times this
 * rank's share of rows.  Collective. */
static int plan_generated(app_ctx *ctx, const gen_model *g, int64_t N)
{
    const int64_t ns = N < 4096 ? N : 4096;
    double sum = 0.0;
    /* one thread: the generators open an OpenMP region per call, and 4096
     * regions of one row each cost 4096 fork-joins (40 ms with 16 threads;
     * seconds to a minute on a loaded machine, each join waiting for a
     * descheduled thread) */
    const int nt = omp_get_max_threads();
    const double t0 = pl_wtime();
    omp_set_num_threads(1);
    int rc = PL_OK;
    for (int64_t i = 0; i < ns && rc == PL_OK; i++) {
        const int64_t r = (int64_t)((double)i * (double)N / (double)ns);
        int32_t len = 0;
        rc = g->lengths(g->model, r, r + 1, &len);
        sum += len;
    }
    omp_set_num_threads(nt);
    PL_CALL(rc);
    pl_debug("memory plan: the lengths of %lld sample rows in %.3f s", (long long)ns, pl_wtime() - t0);
    const double mean = ns > 0 ? sum / (double)ns : 0.0;
    const int64_t share = (N + ctx->size - 1) / ctx->size;
    const int gpu = app_backend_gpu_planned(ctx);
    app_mem_plan_compute(&ctx->cfg, N, share, mean * (double)share, gpu,
                         ctx->cfg.model.type == PL_MODEL_HOLSTEIN_HUBBARD, &ctx->plan);
    ctx->have_plan = 1;
    PL_CALL(app_mem_plan_check(ctx, &ctx->plan, ctx->plan_be));
    return PL_OK;
}

static int build_generated(app_ctx *ctx, const gen_model *g, int64_t N, pl_csr *rows, app_matrix_info *mi)
{
    int rc = PL_OK;
    int64_t *bounds = NULL;
    PL_CALL(plan_generated(ctx, g, N));
    PL_MALLOC(bounds, ctx->size + 1);
    double t0 = pl_wtime();
    if (ctx->size > 1) {
        PL_CALL_GOTO(pl_partition_by_nnz(N, g->lengths, g->model, ctx->comm, bounds), out, rc);
    } else {
        bounds[0] = 0;
        bounds[1] = N;
    }
    mi->partition_seconds = pl_wtime() - t0;
    t0 = pl_wtime();
    PL_CALL_GOTO(g->rows(g->model, bounds[ctx->rank], bounds[ctx->rank + 1], rows), out, rc);
    double t = pl_wtime() - t0;
    mi->rows = N;
    PL_CHECK_GOTO(MPI_Allreduce(&t, &mi->build_seconds, 1, MPI_DOUBLE, MPI_MAX, ctx->comm) == MPI_SUCCESS, PL_ERR_MPI,
                  out, rc, "MPI_Allreduce failed");
out:
    free(bounds);
    return rc;
}

/* A generator's PL_ERR_INPUT names the parameter; add where the model was
 * configured (the key `key` of [model]), keeping the code `code`. */
static int model_error(app_ctx *ctx, int code, const char *key)
{
    char msg[1024], where[1200];
    snprintf(msg, sizeof msg, "%s", pl_error_message());
    pl_error_clear();
    return PL_ERROR(code, "%s: %s", pl_config_where(&ctx->cfg, "model", key, where, sizeof where), msg);
}

static int hh_lengths_cb(void *arg, int64_t r0, int64_t r1, int32_t *len)
{
    return hh_row_lengths((const hh_model *)arg, r0, r1, len);
}

static int hh_rows_cb(void *arg, int64_t r0, int64_t r1, pl_csr *out)
{
    return hh_rows_csr((const hh_model *)arg, r0, r1, out);
}

/* value terms (sweeps): the pattern of all terms, hh_rows_csr_terms */
typedef struct hh_terms_arg {
    const hh_model *model;
    unsigned swept; /* the terms a sweep changes (hh_rows_csr_terms) */
} hh_terms_arg;

static int hh_lengths_terms_cb(void *arg, int64_t r0, int64_t r1, int32_t *len)
{
    return hh_row_lengths_terms(((const hh_terms_arg *)arg)->model, r0, r1, len);
}

static int hh_rows_terms_cb(void *arg, int64_t r0, int64_t r1, pl_csr *out)
{
    const hh_terms_arg *a = arg;
    return hh_rows_csr_terms(a->model, r0, r1, a->swept, out);
}

static int build_hh(app_ctx *ctx, pl_csr *rows, app_matrix_info *mi)
{
    hh_model *model = NULL;
    hh_params hp;
    app_hh_params(&ctx->cfg.model, &hp);
    int rc = hh_model_create(&hp, &model);
    if (rc == PL_ERR_INPUT) return app_param_error(&ctx->cfg, "model", "max_phonons", rc);
    PL_CALL(rc);
    gen_model g = {model, hh_lengths_cb, hh_rows_cb};
    hh_terms_arg targ = {model, (unsigned)ctx->build_terms};
    if (ctx->build_terms) g = (gen_model){&targ, hh_lengths_terms_cb, hh_rows_terms_cb};
    rc = build_generated(ctx, &g, hh_model_rows(model), rows, mi);
    mi->symmetric_known = 1;
    app_hh_name(&ctx->cfg.model, mi->name, sizeof mi->name);
    hh_model_destroy(&model);
    return rc;
}

void app_hh_name(const pl_model_cfg *m, char *name, size_t n)
{
    char bc[128];
    const hh_lattice *l = &m->lat;
    if (m->lattice == HH_LATTICE_CHAIN) snprintf(bc, sizeof bc, "%s", pl_config_enum_name("model", "boundary", m->boundary));
    else if (m->lattice == HH_LATTICE_BONDS) snprintf(bc, sizeof bc, "bonds(%d)", l->nbonds);
    else
        snprintf(bc, sizeof bc, "%s %dx%d %s,%s", hh_lattice_kind_name(m->lattice), l->lx, l->ly,
                 pl_config_enum_name("model", "boundary", l->boundary_x),
                 pl_config_enum_name("model", "boundary", l->boundary_y));
    snprintf(name, n, "holstein-hubbard L=%d up=%d down=%d M=%d %s %s t=%g U=%g w0=%g g=%g", m->sites, m->n_up,
             m->n_down, m->max_phonons, pl_config_enum_name("model", "phonon_basis", m->phonon_basis), bc, m->hopping,
             m->hubbard_u, m->phonon_frequency, m->coupling);
}

static int bs_lengths_cb(void *arg, int64_t r0, int64_t r1, int32_t *len)
{
    return bs_row_lengths((const bs_model *)arg, r0, r1, len);
}

static int bs_rows_cb(void *arg, int64_t r0, int64_t r1, pl_csr *out)
{
    return bs_rows_csr((const bs_model *)arg, r0, r1, out);
}

/* The block-stencil operator (hamiltonian/bs.h): nonsymmetric, so
 * symmetric_known stays 0. */
static int build_bs(app_ctx *ctx, pl_csr *rows, app_matrix_info *mi)
{
    bs_model *model = NULL;
    bs_params bp;
    app_bs_params(&ctx->cfg.model, &bp);
    int rc = bs_model_create(&bp, &model);
    if (rc == PL_ERR_INPUT || rc == PL_ERR_OVERFLOW) return app_param_error(&ctx->cfg, "model", "block_size", PL_ERR_INPUT);
    if (rc == PL_ERR_INTERNAL) return model_error(ctx, PL_ERR_INTERNAL, "seed");
    PL_CALL(rc);
    gen_model g = {model, bs_lengths_cb, bs_rows_cb};
    rc = build_generated(ctx, &g, bs_model_rows(model), rows, mi);
    mi->symmetric_known = 0;
    const pl_model_cfg *m = &ctx->cfg.model;
    char corner[64] = "";
    if (m->stencil == PL_STENCIL_27) snprintf(corner, sizeof corner, " corner=%g", m->corner);
    snprintf(mi->name, sizeof mi->name, "block-stencil %dx%dx%d b=%d %s-point c=%g shift=%g%s rotation=%g seed=%llu",
             m->nx, m->ny, m->nz, m->block_size, pl_config_enum_name("model", "stencil", m->stencil), m->convection,
             m->shift, corner, m->rotation, (unsigned long long)m->seed);
    bs_model_destroy(&model);
    return rc;
}

/* Import from HDF5: app_import.c. */
int app_build_rows_hdf5(app_ctx *ctx, pl_csr *rows, app_matrix_info *mi);

int app_build_rows(app_ctx *ctx, pl_csr *rows, app_matrix_info *mi)
{
    memset(mi, 0, sizeof *mi);
    memset(rows, 0, sizeof *rows);
    if (app_free_wanted(ctx) && ctx->free_ok) { /* no rows: app_free.c */
        int stored = 0;
        PL_CALL(app_build_free(ctx, mi, &stored));
        if (!stored) return PL_OK;
        memset(mi, 0, sizeof *mi); /* auto, a model beyond the tables' indices: the rows */
    }
    /* export writes the matrix the tables stand for and info describes it
     * (and the tables); the other commands need one stored */
    const char *cn = ctx->cmd_name ? ctx->cmd_name : "";
    if (ctx->cfg.spmv.format == PL_FORMAT_MATRIX_FREE && strcmp(cn, "export") && strcmp(cn, "info"))
        return app_free_refuse(ctx);
    if (ctx->cfg.model.type == PL_MODEL_HDF5) PL_CALL(app_build_rows_hdf5(ctx, rows, mi));
    else if (ctx->cfg.model.type == PL_MODEL_BLOCK_STENCIL) PL_CALL(build_bs(ctx, rows, mi));
    else PL_CALL(build_hh(ctx, rows, mi));
    int64_t nnz = pl_csr_nnz(rows);
    PL_CHECK(MPI_Allreduce(&nnz, &mi->nnz, 1, MPI_INT64_T, MPI_SUM, ctx->comm) == MPI_SUCCESS, PL_ERR_MPI,
             "MPI_Allreduce failed");
    return PL_OK;
}

int app_check_output_path(app_ctx *ctx, const char *path)
{
    char msg[1400] = "";
    if (ctx->rank == 0) {
        char *dup = strdup(path);
        const char *dir = dup ? dirname(dup) : ".";
        if (!path[0]) snprintf(msg, sizeof msg, "output path is empty");
        else if (access(path, F_OK) == 0 && !ctx->overwrite)
            snprintf(msg, sizeof msg, "%s: output file exists; use --overwrite to replace it", path);
        else if (access(dir, F_OK) != 0)
            snprintf(msg, sizeof msg, "%s: directory %s does not exist", path, dir);
        else if (access(dir, W_OK | X_OK) != 0)
            snprintf(msg, sizeof msg, "%s: directory %s is not writable", path, dir);
        free(dup);
    }
    PL_CHECK(MPI_Bcast(msg, sizeof msg, MPI_CHAR, 0, ctx->comm) == MPI_SUCCESS, PL_ERR_MPI, "MPI_Bcast failed");
    PL_CHECK(!msg[0], PL_ERR_INPUT, "%s", msg);
    return PL_OK;
}

int app_agree_placement(app_ctx *ctx, int rc)
{
    int refused = ctx->rank == 0 && rc == PL_ERR_INPUT;
    if (MPI_Bcast(&refused, 1, MPI_INT, 0, ctx->comm) != MPI_SUCCESS)
        return ctx->rank == 0 && rc ? rc : PL_ERROR(PL_ERR_MPI, "MPI_Bcast failed");
    if (refused) ctx->error_collective = 1;
    if (ctx->rank == 0) return rc;
    return refused ? PL_ERROR(PL_ERR_INPUT, "rank 0 could not place the output file") : PL_OK;
}

int app_error_alike(app_ctx *ctx, int rc)
{
    /* FNV-1a of the code and the message: equal everywhere iff max == min */
    uint64_t h = 1469598103934665603ull;
    char code[16];
    snprintf(code, sizeof code, "%d:", rc);
    for (const char *s = code; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
    for (const char *s = pl_error_message(); *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
    uint64_t v[2] = {h, ~h}, m[2] = {0, 0};
    if (MPI_Allreduce(v, m, 2, MPI_UINT64_T, MPI_MAX, ctx->comm) == MPI_SUCCESS && m[0] == ~m[1])
        ctx->error_collective = 1;
    return rc;
}

int app_row_stats(app_ctx *ctx, const pl_csr *rows, int32_t **len_out, pjds_stats *st)
{
    int32_t *len = NULL;
    PL_MALLOC(len, rows->nrows + 1);
    for (int64_t i = 0; i < rows->nrows; i++) len[i] = (int32_t)(rows->row_ptr[i + 1] - rows->row_ptr[i]);
    int rc = pjds_stats_from_lengths(rows->nrows, len, ctx->cfg.spmv.chunk_height, ctx->comm, st);
    if (rc != PL_OK || !len_out) free(len);
    else *len_out = len;
    PL_CALL(rc);
    return PL_OK;
}
