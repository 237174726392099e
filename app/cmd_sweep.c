/* cmd_sweep.c — `pjds-lanczos solve CONFIG` with a [sweep] section: every
 * point of the sweep in one run (docs/operations.md, "Sweeps").
 *
 * Permute once: points that differ from the operator's point only in
 * matrix values (the Hamiltonian's hopping, hubbard_u, phonon_frequency,
 * coupling) keep the basis, the partition, the pJDS permutation and layout
 * and the halo plan; the generator builds the matrix once with its value
 * terms (hh_rows_csr_terms: the pattern is that of every term, so the
 * zeros of coupling = 0 are stored), the terms whose coefficient changes
 * along the sweep stay in backend memory beside one fixed part, and each
 * point is a refill A = F + sum_s c_s A_s on the device (pl_op_refill).
 * Where the operator runs from Kronecker tables (format = matrix_free, or
 * auto on one rank for a generated Holstein-Hubbard model, as for a single
 * solve: app_free.c) nothing is stored and a point gets its own tables
 * instead (app_free_refill: milliseconds, no rows).  A structural key (any
 * other, or any key of another model type) rebuilds, and a rebuild decides
 * the operator again for the point's structure (auto: rows beyond 32-bit
 * indices are stored, with the value terms).
 * Warm start ([sweep] warm_start): a point solved on the same operator as
 * the previous one starts from the sum of its eigenvectors plus a small
 * random part (the convergence test and verify are unchanged, so the result
 * only moves within the tolerance).
 * Output and durability: io/pl_sweepfile.h.  Checkpoints inside a point,
 * signals between points (exit status 3) and --resume: checkpoint.c.
 * Signal phases: a point's build and checkpoint load are exit phases
 * (exit 3 at once: the sweep file holds every finished point); its solve,
 * its write and every write of the sweep file are flag phases (checkpoint,
 * or finish the write and stop before the next point). */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hh.h"
#include "pl_error.h"
#include "pl_spectrum.h"
#include "pl_sweepfile.h"
#include "solve_impl.h"
#include "sweep_impl.h"

/* The run's state across points. */
typedef struct sweep_run {
    app_ctx *ctx;
    pl_config base;        /* the configuration with [sweep] (ctx->cfg swaps per point) */
    sweep_def d;
    int lo, hi;            /* --points */
    pl_sweep_summary s;    /* rank 0 */
    pl_point_src *src;     /* rank 0: where each point's group lives */
    char path[1024];       /* the sweep file */
    char dir[1100];        /* its per-point files */
    pl_backend *be;
    pl_op *op;
    solve_facts built;     /* facts of the operator's build */
    int op_point;          /* the point the operator was built for, -1 none */
    unsigned swept;        /* bit k: Hamiltonian term k changes along the sweep */
    st_session *sts;       /* a target sweep: the transformation's rows and factorisation (solve_st.c) */
    double *warm;          /* backend: the previous point's eigenvectors */
    int nwarm;
    int ckpt_point;        /* the point of the checkpoint to resume, -1 none */
    int done, failed;      /* points solved in this run, and failed */
    int replace;           /* the sweep file may be replaced: --overwrite, a resumed file, or placed by this run */
    double t0;
} sweep_run;

/* Point p's per-point file name relative to the sweep file (the link) and on disk. */
static void point_files(const sweep_run *r, int p, char *rel, size_t nrel, char *disk, size_t ndisk)
{
    char nm[16];
    const char *base = strrchr(r->path, '/');
    base = base ? base + 1 : r->path;
    snprintf(rel, nrel, "%s.points/%s.h5", base, pl_point_name(p, nm));
    snprintf(disk, ndisk, "%s/%s.h5", r->dir, nm);
}

/* ---- terms: which Hamiltonian terms change along the sweep ---- */
static int find_swept_terms(sweep_run *r)
{
    double c0[HH_NTERMS], c[HH_NTERMS];
    pl_config pc;
    r->swept = 0;
    for (int p = 0; p < r->d.npoints; p++) { /* every point passed sweep_def_build's checks */
        PL_CALL(sweep_point_config(&r->base, &r->d, p, &pc));
        hh_params hp;
        app_hh_params(&pc.model, &hp);
        hh_term_coefs(&hp, p == 0 ? c0 : c);
        pl_config_destroy(&pc);
        for (int k = 0; p > 0 && k < HH_NTERMS; k++)
            if (c[k] != c0[k]) r->swept |= 1u << k;
    }
    return PL_OK;
}

/* ---- the operator of point p: rebuilt or refilled ---- */
static int needs_rebuild(const sweep_run *r, int p)
{
    if (!r->op) return 1;
    for (int k = 0; k < r->d.nkeys; k++)
        if (r->d.structural[k] && strcmp(r->d.text[(size_t)p * r->d.nkeys + k],
                                         r->d.text[(size_t)r->op_point * r->d.nkeys + k]))
            return 1;
    return 0;
}

static int operator_for(sweep_run *r, int p, solve_facts *f, int *rebuilt, double *refill_seconds)
{
    app_ctx *ctx = r->ctx;
    *refill_seconds = 0.0;
    *rebuilt = needs_rebuild(r, p);
    if (!*rebuilt) { /* the same structure: refill the values (none kept: they did not change) */
        double c[HH_NTERMS], coef[1 + HH_NTERMS];
        int K = 1;
        hh_params hp;
        app_hh_params(&ctx->cfg.model, &hp);
        hh_term_coefs(&hp, c);
        coef[0] = 1.0;
        for (int k = 0; k < HH_NTERMS; k++)
            if (r->swept >> k & 1u) coef[K++] = c[k];
        double t0 = pl_wtime();
        pl_op_info oi;
        pl_op_get_info(r->op, &oi);
        if (oi.format == PL_FORMAT_MATRIX_FREE) PL_CALL(app_free_refill(ctx, r->op)); /* new tables: app_free.c */
        else if (pl_op_nterms(r->op) > 0) PL_CALL(pl_op_refill(r->op, K, coef));
        *refill_seconds = app_max_over_ranks(ctx, pl_wtime() - t0);
        *f = r->built;
        f->permute_seconds = 0.0;
        f->mi.build_seconds = f->mi.partition_seconds = 0.0;
        return PL_OK;
    }
    pl_op_destroy(&r->op);
    if (r->warm) {
        r->be->vec_free(r->be, r->warm);
        r->warm = NULL;
        r->nwarm = 0;
    }
    /* the generator gives [fixed part, swept terms] (hh_rows_csr_terms) */
    ctx->build_terms = ctx->cfg.model.type == PL_MODEL_HOLSTEIN_HUBBARD ? (int)r->swept : 0;
    pl_csr rows;
    memset(&rows, 0, sizeof rows);
    memset(f, 0, sizeof *f);
    /* the tables where a single solve of this point would run them
     * (format = matrix_free, or auto on one rank: app_free.c); else rows */
    ctx->free_ok = 1;
    int rc = solve_build(ctx, &rows, &r->be, f);
    ctx->build_terms = 0;
    if (rc == PL_OK) rc = solve_make_op(ctx, &rows, r->be, &r->op, f);
    pl_csr_destroy(&rows);
    PL_CALL(rc);
    r->op_point = p;
    r->built = *f;
    return PL_OK;
}

/* ---- per-point attributes ---- */
typedef struct point_attrs {
    const sweep_run *r;
    int p, rebuilt, warm;
    double refill_seconds;
} point_attrs;

static int write_point_attrs(void *arg, pl_spectrum *sp)
{
    const point_attrs *a = arg;
    const sweep_def *d = &a->r->d;
    PL_CALL(pl_spectrum_attr_int(sp, "sweep_point", a->p));
    PL_CALL(pl_spectrum_attr_string(sp, "sweep_hash", d->hash));
    PL_CALL(pl_spectrum_attr_int(sp, "rebuilt", a->rebuilt));
    PL_CALL(pl_spectrum_attr_int(sp, "warm_start", a->warm));
    PL_CALL(pl_spectrum_attr_double(sp, "refill_seconds", a->refill_seconds));
    for (int k = 0; k < d->nkeys; k++) {
        char name[64];
        snprintf(name, sizeof name, "sweep_%s", d->key[k]);
        PL_CALL(pl_spectrum_attr_string(sp, name, d->text[(size_t)a->p * d->nkeys + k]));
    }
    return PL_OK;
}

/* ---- the sweep file ---- */
static int write_file(sweep_run *r, int finalised)
{
    int rc = PL_OK;
    if (r->ctx->rank == 0) {
        /* the first write never replaces a file that appeared since open_summary */
        rc = pl_sweepfile_write(r->path, &r->s, r->src, finalised, r->replace);
        if (rc) pl_error_trace(rc, __FILE__, __LINE__, __func__, "pl_sweepfile_write");
        else r->replace = 1;
    }
    int g = rc;
    PL_CHECK(MPI_Bcast(&g, 1, MPI_INT, 0, r->ctx->comm) == MPI_SUCCESS, PL_ERR_MPI, "MPI_Bcast failed");
    if (g == PL_ERR_INPUT) r->ctx->error_collective = 1; /* refused: rank 0's one line, every rank exits 2 */
    if (r->ctx->rank == 0) return rc;
    PL_CHECK(g == PL_OK, g, "writing the sweep file failed on rank 0");
    return PL_OK;
}

/* Rank 0: the summary of a fresh run, or of the file to resume (checked
 * against this sweep's hash).  Collective through the broadcast of the
 * statuses. */
static int open_summary(sweep_run *r)
{
    app_ctx *ctx = r->ctx;
    int rc = PL_OK, exists = 0;
    char msg[1600] = "";
    int ncols = r->base.solver.nev;
    if (ctx->rank == 0) exists = access(r->path, F_OK) == 0;
    PL_CHECK(MPI_Bcast(&exists, 1, MPI_INT, 0, ctx->comm) == MPI_SUCCESS, PL_ERR_MPI, "MPI_Bcast failed");
    if (exists && !ctx->resume) PL_CALL(app_check_output_path(ctx, r->path)); /* --overwrite, or exit 2 */
    r->replace = ctx->overwrite || (exists && ctx->resume);
    if (ctx->rank == 0) {
        r->src = calloc((size_t)r->d.npoints + 1, sizeof *r->src);
        int fin = 0;
        if (!r->src) rc = PL_ERROR(PL_ERR_MEM, "out of host memory");
        else if (exists && ctx->resume) {
            rc = pl_sweepfile_read(r->path, &r->s, &fin);
            if (rc == PL_OK && (strcmp(r->s.hash, r->d.hash) || r->s.npoints != r->d.npoints)) {
                char diff[1200];
                app_text_difference(r->s.definition, r->d.definition, "the file", diff, sizeof diff);
                rc = PL_ERROR(PL_ERR_INPUT, "%s: --resume: the file holds another sweep (sweep_hash %s, this run %s): %s",
                              r->path, r->s.hash, r->d.hash, diff);
            }
            for (int p = 0; rc == PL_OK && p < r->d.npoints; p++) {
                if (r->s.status[p] == PL_POINT_NOT_RUN || r->s.status[p] == PL_POINT_FAILED) continue;
                char rel[1200], disk[1200], nm[16];
                point_files(r, p, rel, sizeof rel, disk, sizeof disk);
                /* keep the link to the point's own file; a point in the file itself (finalised, or
                 * copied there by a run that resumed a finalised file and stopped) is copied again */
                if (!fin && access(disk, F_OK) == 0) {
                    r->src[p].kind = 1;
                    snprintf(r->src[p].file, sizeof r->src[p].file, "%s", rel);
                } else {
                    r->src[p].kind = 2;
                    snprintf(r->src[p].file, sizeof r->src[p].file, "%s", r->path);
                    snprintf(r->src[p].obj, sizeof r->src[p].obj, "/points/%s", pl_point_name(p, nm));
                }
                if (!pl_sweepfile_has_point(r->path, p)) { /* its per-point file is gone: solve it again */
                    r->s.status[p] = PL_POINT_NOT_RUN;
                    r->src[p].kind = 0;
                }
            }
        } else {
            rc = pl_sweep_summary_alloc(&r->s, r->d.npoints, r->d.nkeys, ncols, 0);
            if (rc == PL_OK) {
                r->s.hash = strdup(r->d.hash);
                r->s.definition = strdup(r->d.definition);
                r->s.config = pl_config_dump_string(&r->base);
                if (!r->s.hash || !r->s.definition || !r->s.config) rc = PL_ERROR(PL_ERR_MEM, "out of host memory");
                for (int k = 0; rc == PL_OK && k < r->d.nkeys; k++) {
                    snprintf(r->s.keys[k], 32, "%s", r->d.key[k]);
                    if (r->d.words[k] && !(r->s.words[k] = strdup(r->d.words[k])))
                        rc = PL_ERROR(PL_ERR_MEM, "out of host memory");
                }
                for (size_t i = 0; i < (size_t)r->d.npoints * r->d.nkeys; i++) r->s.values[i] = r->d.num[i];
            }
        }
        /* the configuration file of this run (a resumed file keeps its own when it has one) */
        if (rc == PL_OK && (!r->s.config_path || !r->s.config_path[0]) && ctx->cfg_path) {
            free(r->s.config_path);
            if (!(r->s.config_path = strdup(ctx->cfg_path))) rc = PL_ERROR(PL_ERR_MEM, "out of host memory");
        }
        if (rc == PL_OK && mkdir(r->dir, 0777) != 0 && errno != EEXIST)
            rc = PL_ERROR(PL_ERR_INPUT, "%s: cannot create the directory of the per-point files: %s", r->dir,
                          strerror(errno));
        if (rc != PL_OK) {
            snprintf(msg, sizeof msg, "%s", pl_error_message());
            pl_error_clear();
        }
    }
    PL_CHECK(MPI_Bcast(msg, sizeof msg, MPI_CHAR, 0, ctx->comm) == MPI_SUCCESS, PL_ERR_MPI, "MPI_Bcast failed");
    PL_CHECK(!msg[0], rc ? rc : PL_ERR_INPUT, "%s", msg);
    return PL_OK;
}

/* Which points this run solves: in [lo, hi], not run or failed. */
static int todo_points(sweep_run *r, int8_t *todo)
{
    for (int p = 0; p < r->d.npoints; p++)
        todo[p] = r->ctx->rank == 0 ? (p >= r->lo && p <= r->hi &&
                                       (r->s.status[p] == PL_POINT_NOT_RUN || r->s.status[p] == PL_POINT_FAILED))
                                    : 0;
    PL_CHECK(MPI_Bcast(todo, r->d.npoints, MPI_INT8_T, 0, r->ctx->comm) == MPI_SUCCESS, PL_ERR_MPI, "MPI_Bcast failed");
    return PL_OK;
}

/* Record point p in the summary (rank 0) and rewrite the file. */
static int record(sweep_run *r, int p, int status, const lz_result *res, const solve_facts *f, int rebuilt)
{
    if (r->ctx->rank == 0) {
        pl_sweep_summary *s = &r->s;
        if (status != PL_POINT_FAILED) {
            int cols = res->nev > s->ncols ? res->nev : s->ncols;
            if (f->cplx && cols < r->base.solver.nev + 1) cols = r->base.solver.nev + 1;
            PL_CALL(pl_sweep_summary_widen(s, cols, f->cplx));
            for (int i = 0; i < s->ncols; i++) {
                size_t e = (size_t)p * s->ncols + i;
                s->eig_re[e] = i < res->nev ? res->eigenvalues[i] : NAN;
                s->eig_im[e] = i < res->nev && res->eigenvalues_imag ? res->eigenvalues_imag[i] : (i < res->nev ? 0.0 : NAN);
                s->resid[e] = i < res->nev ? res->residuals[i] : NAN;
            }
            char rel[1200], disk[1200];
            point_files(r, p, rel, sizeof rel, disk, sizeof disk);
            r->src[p].kind = 1;
            snprintf(r->src[p].file, sizeof r->src[p].file, "%s", rel);
            s->spmvs[p] = res->iterations;
            s->seconds[p] = f->solve_seconds;
        } else {
            r->src[p].kind = 0;
            for (int i = 0; i < s->ncols; i++) s->eig_re[(size_t)p * s->ncols + i] = NAN;
        }
        s->status[p] = (int8_t)status;
        s->rebuilt[p] = (int8_t)rebuilt;
    }
    return write_file(r, 0);
}

/* Keep the eigenvectors of the point just solved for the next one. */
static int keep_warm(sweep_run *r, const lz_result *res)
{
    if (!r->base.sweep.warm_start || !res->vectors) return PL_OK;
    pl_op_info info;
    pl_op_get_info(r->op, &info);
    size_t n = (size_t)info.n_local, ld = n ? n : 1;
    if (!r->warm) PL_CALL(r->be->vec_alloc(r->be, ld * (size_t)(r->base.solver.nev + 1), &r->warm));
    r->nwarm = res->nev;
    for (int i = 0; i < res->nev; i++)
        PL_CALL(r->be->copy(r->be, n, res->vectors + (size_t)i * res->ld, r->warm + (size_t)i * ld));
    return PL_OK;
}

/* Solve point p.  *status: converged / not converged / failed (an error of
 * the point's build or solve, reported as a warning; the sweep goes on).
 * Returns APP_CHECKPOINTED when the solve stopped at a checkpoint. */
static int solve_point(sweep_run *r, int p, int *status)
{
    app_ctx *ctx = r->ctx;
    pl_config pc;
    PL_CALL(sweep_point_config(&r->base, &r->d, p, &pc));
    pl_config saved = ctx->cfg;
    ctx->cfg = pc;
    lz_result res;
    memset(&res, 0, sizeof res);
    lz_state st;
    memset(&st, 0, sizeof st);
    app_ckpt ck;
    memset(&ck, 0, sizeof ck);
    solve_facts f;
    memset(&f, 0, sizeof f);
    int rebuilt = 1, warm = 0, rc = PL_OK;
    double refill = 0.0, t0 = pl_wtime();
    char rel[1200], disk[1200], lab[600];
    point_files(r, p, rel, sizeof rel, disk, sizeof disk);
    *status = PL_POINT_FAILED;

    /* signals: nothing new to save until the point's first end of a cycle */
    char note[2600], ph[80];
    snprintf(note, sizeof note, "nothing new to save; %s holds every finished point%s%s%s: `solve --resume` continues",
             r->path, r->ckpt_point >= p ? " and the checkpoint " : "", r->ckpt_point >= p ? r->path : "",
             r->ckpt_point >= p ? ".ckpt is kept" : "");
    snprintf(ph, sizeof ph, "the build of point %d", p);
    app_signal_exit_phase(ph, note);
    if (r->sts) { /* a target: refactor on the analysis (no checkpoints: the whole point is an exit phase) */
        snprintf(ph, sizeof ph, "point %d (a spectral transformation)", p);
        app_signal_exit_phase(ph, note);
        point_attrs pa = {r, p, 0, 0, 0.0};
        f.point_file = 1;
        rebuilt = 0;
        PL_CALL_GOTO(st_session_solve(ctx, r->sts, disk, 1, write_point_attrs, &pa, &res, &f), out, rc);
        *status = res.reason == LZ_CONVERGED ? PL_POINT_CONVERGED : PL_POINT_NOT_CONVERGED;
        goto print;
    }
    PL_CALL_GOTO(operator_for(r, p, &f, &rebuilt, &refill), out, rc);
    PL_CALL_GOTO(app_ckpt_init(&ck, ctx, r->op, p, r->d.hash), out, rc);
    /* the checkpoint file follows the sweep file's name */
    snprintf(ck.path, sizeof ck.path, "%s.ckpt", r->path);
    if (p == r->ckpt_point) {
        snprintf(ph, sizeof ph, "the loading of the checkpoint of point %d", p);
        app_signal_exit_phase(ph, note);
        PL_CALL_GOTO(app_ckpt_load(&ck, &st), out, rc);
        pl_info("sweep: point %d resumes from %s", p, ck.path);
    }
    warm = !rebuilt && r->warm && r->nwarm > 0 && p != r->ckpt_point;
    solve_extra x = {app_ckpt_callback, &ck, p == r->ckpt_point ? &st : NULL, warm ? r->warm : NULL,
                     warm ? r->nwarm : 0, 0, r->base.sweep.warm_start, app_ckpt_poll, NULL, 0, 0};
    if (warm) {
        pl_op_info info;
        pl_op_get_info(r->op, &info);
        x.start_ld = info.n_local ? (size_t)info.n_local : 1;
    }
    app_signal_flag_phase(); /* the solver looks at the flag (app_ckpt_poll) */
    PL_CALL_GOTO(solve_run(ctx, r->op, &f, &x, &res), out, rc);
    if (res.reason == LZ_CHECKPOINTED) {
        if (ck.written) {
            pl_info("sweep: stopped at a checkpoint in point %d: %s; continue with `solve --resume`", p, ck.path);
        } else { /* stopped in its first cycle: nothing new saved */
            snprintf(ph, sizeof ph, "the first cycle of point %d", p);
            app_signal_say(ph, note);
        }
        rc = APP_CHECKPOINTED;
        goto out;
    }
    point_attrs pa = {r, p, rebuilt, warm, refill};
    f.point_file = 1; /* reached through an external link of the sweep file: no dimension scales */
    PL_CALL_GOTO(solve_write(ctx, disk, 1, r->op, &res, &f, write_point_attrs, &pa), out, rc);
    if (ck.written || p == r->ckpt_point) app_ckpt_remove(ctx, ck.path);
    *status = res.reason == LZ_CONVERGED ? PL_POINT_CONVERGED : PL_POINT_NOT_CONVERGED;
    PL_CALL_GOTO(keep_warm(r, &res), out, rc);
print:
    if (ctx->rank == 0) {
        for (int i = 0; i < res.nev; i++) {
            if (f.cplx)
                printf("point[%d] eigenvalue[%d]: %.17g %+.17gi  residual: %.3e\n", p, i, res.eigenvalues[i],
                       res.eigenvalues_imag[i], res.residuals[i]);
            else
                printf("point[%d] eigenvalue[%d]: %.17g  residual: %.3e\n", p, i, res.eigenvalues[i], res.residuals[i]);
        }
        fflush(stdout);
    }
out:
    app_signal_flag_phase(); /* the point's file and the sweep file are written */
    if (rc != APP_CHECKPOINTED) {
        int e = record(r, p, rc == PL_OK ? *status : PL_POINT_FAILED, &res, &f, rc == PL_OK ? rebuilt : -1);
        if (rc != PL_OK) { /* the point failed: say why, and go on */
            pl_warn("sweep: point %d (%s) failed: %s", p, sweep_point_label(&r->d, p, lab, sizeof lab),
                    pl_error_message());
            pl_error_clear();
            r->failed++;
            rc = PL_OK;
        }
        if (e != PL_OK) rc = e;
    }
    if (rc == PL_OK) {
        r->done++;
        double el = pl_wtime() - r->t0, per = el / r->done;
        int left = 0;
        for (int q = p + 1; q <= r->hi; q++) left++;
        pl_info("sweep: point %d/%d (%s): E0 = %.12g, %lld SpMVs, %.2f s%s, ETA %.1f s", p, r->d.npoints,
                sweep_point_label(&r->d, p, lab, sizeof lab), res.nev > 0 && res.eigenvalues ? res.eigenvalues[0] : NAN,
                (long long)res.iterations, pl_wtime() - t0,
                rebuilt == 1 ? ", operator built" : warm ? ", refilled, warm start" : ", refilled", per * left);
    }
    app_ckpt_state_free(&ck, &st);
    app_ckpt_free(&ck);
    lz_result_destroy(&res);
    ctx->cfg = saved;
    pl_config_destroy(&pc);
    return rc;
}

/* Copy every finished point into the file and remove the per-point files. */
/* A transformation in a sweep: only over [sweep] target (every other key
 * is refused, and so is a transformation with a sweep of other keys).
 * Collective (every rank decides alike). */
static int st_sweep_check(app_ctx *ctx)
{
    const pl_config *cfg = &ctx->cfg;
    const pl_sweep_cfg *sw = &cfg->sweep;
    char where[1200];
    int has_target = 0;
    for (int k = 0; k < sw->nkeys; k++) has_target |= !strcmp(sw->key[k], "target");
    ctx->error_collective = 1;
    for (int k = 0; has_target && k < sw->nkeys; k++)
        PL_CHECK(!strcmp(sw->key[k], "target"), PL_ERR_INPUT,
                 "%s: a sweep over targets sweeps target alone (one factorisation per target on one analysis of "
                 "the matrix); run a sweep per value of %s",
                 pl_config_where(cfg, "sweep", sw->key[k], where, sizeof where), sw->key[k]);
    PL_CHECK(has_target || !app_st_wanted(cfg), PL_ERR_INPUT,
             "%s: a spectral transformation (target, b_file) sweeps [sweep] target only, not [model] keys",
             pl_config_where(cfg, "solver", isnan(cfg->solver.target) ? "transform" : "target", where, sizeof where));
    ctx->error_collective = 0;
    return PL_OK;
}

static int finalise(sweep_run *r)
{
    if (r->ctx->rank == 0) {
        for (int p = 0; p < r->d.npoints; p++) {
            if (r->src[p].kind != 1) continue;
            char rel[1200], disk[1200];
            point_files(r, p, rel, sizeof rel, disk, sizeof disk);
            r->src[p].kind = 2;
            snprintf(r->src[p].file, sizeof r->src[p].file, "%s", disk);
            snprintf(r->src[p].obj, sizeof r->src[p].obj, "/");
        }
    }
    PL_CALL(write_file(r, 1));
    if (r->ctx->rank == 0) {
        for (int p = 0; p < r->d.npoints; p++) { /* from now on the groups live in the file */
            if (r->src[p].kind != 2) continue;
            if (strcmp(r->src[p].file, r->path)) unlink(r->src[p].file);
            char nm[16];
            snprintf(r->src[p].file, sizeof r->src[p].file, "%s", r->path);
            snprintf(r->src[p].obj, sizeof r->src[p].obj, "/points/%s", pl_point_name(p, nm));
        }
        rmdir(r->dir); /* fails harmlessly when something else is in it */
    }
    return PL_OK;
}

int cmd_sweep(app_ctx *ctx)
{
    sweep_run r;
    memset(&r, 0, sizeof r);
    r.ctx = ctx;
    r.op_point = -1;
    r.ckpt_point = -1;
    r.t0 = pl_wtime();
    int rc = PL_OK;
    int8_t *todo = NULL;
    PL_CALL(st_sweep_check(ctx));
    app_signal_exit_phase("the start of the sweep",
                          ctx->resume ? "nothing new to save; `solve --resume` continues"
                                      : "nothing to save (no point had started); rerun to start again");
    PL_CALL(pl_config_copy(&r.base, &ctx->cfg));
    ctx->error_collective = 1; /* the checks up to the first point fail on every rank alike */
    PL_CALL_GOTO(sweep_def_build(&r.base, &r.d), out, rc);
    PL_CALL_GOTO(app_free_sweep_check(ctx), out, rc); /* matrix_free on several ranks: exit 2 */
    PL_CALL_GOTO(sweep_select(ctx->points, r.d.npoints, &r.lo, &r.hi), out, rc);
    snprintf(r.path, sizeof r.path, "%s", r.base.output.file);
    snprintf(r.dir, sizeof r.dir, "%s.points", r.path);
    if (r.base.model.type == PL_MODEL_HOLSTEIN_HUBBARD) PL_CALL_GOTO(find_swept_terms(&r), out, rc);
    app_signal_flag_phase(); /* the points' directory and the sweep file are written from here */
    PL_CALL_GOTO(open_summary(&r), out, rc);
    if (ctx->resume) {
        char ck[1200];
        int exists = 0, point = -1;
        snprintf(ck, sizeof ck, "%s.ckpt", r.path);
        PL_CALL_GOTO(app_ckpt_exists(ctx, ck, &exists, &point), out, rc);
        if (exists) {
            PL_CHECK_GOTO(point >= 0 && point < r.d.npoints, PL_ERR_INPUT, out, rc,
                          "%s: this checkpoint is of a single solve (point %d), not of a point of this sweep", ck, point);
            r.ckpt_point = point;
            pl_config pc, saved = ctx->cfg; /* before any work: does it belong to this point's configuration? */
            PL_CALL_GOTO(sweep_point_config(&r.base, &r.d, point, &pc), out, rc);
            ctx->cfg = pc;
            rc = app_ckpt_precheck(ctx, ck, point, r.d.hash);
            ctx->cfg = saved;
            pl_config_destroy(&pc);
            PL_CALL_GOTO(rc, out, rc);
        }
    }
    ctx->error_collective = 0;
    todo = calloc((size_t)r.d.npoints + 1, 1);
    PL_CHECK_GOTO(todo, PL_ERR_MEM, out, rc, "out of host memory");
    PL_CALL_GOTO(todo_points(&r, todo), out, rc);
    int ntodo = 0;
    for (int p = 0; p < r.d.npoints; p++) ntodo += todo[p];
    pl_info("sweep: %d points (%s, %d key(s)), this run solves %d of points %d..%d; sweep_hash %s", r.d.npoints,
            r.d.combine == PL_COMBINE_ZIP ? "zip" : "grid", r.d.nkeys, ntodo, r.lo, r.hi, r.d.hash);
    PL_CALL_GOTO(write_file(&r, 0), out, rc);
    for (int k = 0; k < r.d.nkeys && ntodo > 0; k++) /* a target sweep: A's rows (and B) once */
        if (!strcmp(r.d.key[k], "target")) {
            app_signal_exit_phase("the build of the transformation's matrix", "nothing new to save; rerun or "
                                                                                "`solve --resume` continues");
            PL_CALL_GOTO(st_session_open(ctx, &r.sts), out, rc);
        }
    for (int p = 0; p < r.d.npoints; p++) {
        if (!todo[p]) continue;
        int stop = 0, status = 0;
        PL_CALL_GOTO(app_stop_requested(ctx, &stop), out, rc);
        if (stop) {
            pl_info("sweep: stopped by a signal before point %d; %s holds every finished point; continue with "
                    "`solve --resume`",
                    p, r.path);
            rc = APP_CHECKPOINTED;
            goto out;
        }
        rc = solve_point(&r, p, &status);
        if (rc == APP_CHECKPOINTED) goto out; /* solve_point said how */
        PL_CALL_GOTO(rc, out, rc);
    }
    if (r.sts) {
        int na = 0, nf = 0;
        st_session_counts(r.sts, &na, &nf);
        pl_info("sweep: %d target(s) solved on %d analysis(es) of the matrix and %d numeric factorisation(s)", r.done,
                na, nf);
    }
    double t_fin = pl_wtime();
    PL_CALL_GOTO(finalise(&r), out, rc);
    pl_info("sweep: wrote %s (%d points solved in %.2f s%s; start-up %.2f s, finalising %.2f s)", r.path, r.done,
            t_fin - r.t0, r.failed ? ", some failed" : "", r.t0 - ctx->t_start, pl_wtime() - t_fin);
    if (r.failed)
        pl_warn("sweep: %d point(s) failed (status 3 in /sweep/status); `solve --resume` retries them", r.failed);
    if (app_signal_noted())
        pl_warn("%s arrived after the last point had finished; %s is complete (exit status 0)", app_signal_noted(),
                r.path);
out:
    free(todo);
    st_session_close(&r.sts);
    if (r.warm) r.be->vec_free(r.be, r.warm);
    pl_op_destroy(&r.op);
    pl_backend_destroy(&r.be);
    app_free_release(ctx); /* matrix_free tables left by a failure before the operator */
    if (ctx->rank == 0) pl_sweep_summary_free(&r.s);
    free(r.src);
    sweep_def_free(&r.d);
    pl_config_destroy(&r.base);
    return rc;
}
