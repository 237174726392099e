/* solve_st.c — `solve` with a spectral transformation (docs/config.md,
 * "Spectral transformations"): [solver] target = sigma (real or complex)
 * with transform = auto | shift_invert, or [matrix] b_file (A x = lambda B
 * x; without a target a B-only factorisation, x -> B^{-1} A x).  The rows
 * of A (and B on the same row blocks) stay on the host, st/ factors A -
 * sigma B (factor/: MUMPS or cuDSS) and wraps the product in a shell
 * operator, solve_run runs Lanczos or Krylov-Schur on it through
 * pl_st_solve, and the result file records the transformation, sigma, B
 * and the factorisation's figures.  No checkpoints (a signal stops the run
 * with nothing saved; `solve --resume` starts afresh). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pl_error.h"
#include "pl_h5matrix.h"
#include "pl_spectrum.h"
#include "solve_impl.h"
#include "st.h"

int app_st_wanted(const pl_config *cfg)
{
    const pl_solver_cfg *s = &cfg->solver;
    if (s->method == PL_METHOD_CHEBFD) return 0;
    if (cfg->matrix.b_file[0] && cfg->model.type == PL_MODEL_HDF5) return 1;
    return !isnan(s->target) && s->transform != PL_TRANSFORM_NONE;
}

struct st_session {
    pl_csr rows, B;
    pl_backend *be;
    solve_facts f0;          /* the facts of the build (every solve starts from them) */
    int have_b, b_sym;       /* B read; B symmetric (1), not (0), unknown (-1) */
    char b_name[1300];
    pl_st_opts so;
    pl_st *st;
    int which, definite;     /* definite: symmetric pair with B SPD (real result) */
    int b_lanczos;           /* Lanczos in the B-inner product (a definite pair, a real or no target) */
    int64_t b_products;      /* this solve's products with B of that inner product */
    int inertia_done;        /* B's inertia checked (once per session) */
    pl_fact_info fi;         /* this solve's figures (solves and seconds since base) */
    pl_fact_info base;       /* the factorisation's counters before this solve's factorisation */
    int analyses, factorizations; /* of this session: symbolic analyses, numeric factorisations */
    double analyse_total;    /* seconds of all analyses */
    double create_s;         /* seconds of the last pl_st_create or refactorisation */
    solve_attr_fn extra;     /* a caller's attributes (a sweep point's) */
    void *extra_arg;
};
typedef struct st_session st_run;

/* B's rows on A's row blocks; its size and symmetry.  Collective. */
static int read_b(app_ctx *ctx, const pl_csr *A, st_run *r)
{
    const pl_matrix_cfg *m = &ctx->cfg.matrix;
    const pl_h5m_opts opts = {m->layout, m->index_base - 1};
    char where[1200];
    pl_config_where(&ctx->cfg, "matrix", "b_file", where, sizeof where);
    pl_h5m_info info;
    int rc = pl_h5m_open_info_ex(m->b_file, m->b_group, &opts, &info);
    if (rc) {
        char msg[1024];
        snprintf(msg, sizeof msg, "%s", pl_error_message());
        pl_error_clear();
        return app_error_alike(ctx, PL_ERROR(rc, "%s: %s", where, msg));
    }
    ctx->error_collective = info.rows != A->nrows_global;
    PL_CHECK(info.rows == A->nrows_global, PL_ERR_INPUT,
             "%s = %s (group %s): B has %lld rows, A has %lld: A and B must have the same size", where, m->b_file,
             m->b_group, (long long)info.rows, (long long)A->nrows_global);
    rc = pl_h5m_read_rows_ex(m->b_file, m->b_group, &opts, A->row0, A->row0 + A->nrows, ctx->comm, &r->B);
    if (rc) return app_error_alike(ctx, rc);
    r->have_b = 1;
    snprintf(r->b_name, sizeof r->b_name, "%s", info.name[0] ? info.name : m->b_file);
    r->b_sym = info.symmetric ? 1 : -1;
    if (!info.symmetric && m->check_symmetry) {
        double rel = 0;
        int64_t i = -1, j = -1;
        PL_CALL(pl_h5m_asymmetry(&r->B, ctx->comm, &rel, &i, &j));
        r->b_sym = rel <= m->symmetry_tolerance;
    }
    return PL_OK;
}

/* The factorisation's options from [solver] factorization and the run. */
static void fact_opts(app_ctx *ctx, const pl_backend *be, pl_fact_opts *fo)
{
    pl_fact_opts_init(fo);
    const int k = ctx->cfg.solver.factorization;
    /* auto: cuDSS only for a run on the GPU backend (fact.c: where built in, one rank) */
    fo->kind = k == 1 ? PL_FACT_MUMPS : k == 2 ? PL_FACT_CUDSS : be->host_memory ? PL_FACT_MUMPS : PL_FACT_AUTO;
    const char *lim = getenv("PJDS_HOST_MEMORY_LIMIT"); /* tests: the memory of the refusal */
    if (lim && lim[0] && app_parse_bytes(lim) > 0) fo->mem_limit = app_parse_bytes(lim);
    fo->verbose = !ctx->quiet;
}

/* Rewrite a failed factorisation's message for the user: singular A -
 * sigma B (sigma is an eigenvalue: a nearby target), a refused estimate
 * (a generated model: chebfd).  Returns rc. */
static int fact_error(app_ctx *ctx, int rc, int singular, const st_run *r)
{
    const pl_config *cfg = &ctx->cfg;
    if (rc != PL_ERR_INPUT) return rc;
    char msg[1400], where[1200];
    snprintf(msg, sizeof msg, "%s", pl_error_message());
    pl_error_clear();
    ctx->error_collective = 1; /* every rank has the same MUMPS result */
    if (singular && r->so.kind == PL_ST_SHIFT_INVERT) {
        const double sr = r->so.sigma_re, si = r->so.sigma_im;
        const double d = 1e-6 * fmax(fabs(sr) + fabs(si), 1.0);
        return PL_ERROR(PL_ERR_INPUT,
                        "%s = %.17g%+.17gi is an eigenvalue of the problem to working precision: A - sigma B is "
                        "singular (%s); choose a nearby target, e.g. %.10g%+.10gi",
                        pl_config_where(cfg, "solver", "target", where, sizeof where), sr, si, msg, sr + d, si);
    }
    if (singular)
        return PL_ERROR(PL_ERR_INPUT, "%s: B is singular (%s); give a target (shift-and-invert) instead",
                        pl_config_where(cfg, "matrix", "b_file", where, sizeof where), msg);
    if (cfg->model.type == PL_MODEL_HOLSTEIN_HUBBARD)
        return PL_ERROR(PL_ERR_INPUT, "%s: %s; for a generated Holstein-Hubbard model use [solver] method = chebfd "
                        "with this target (no factorisation)",
                        pl_config_where(cfg, "solver", "target", where, sizeof where), msg);
    return PL_ERROR(PL_ERR_INPUT, "%s: %s", pl_config_where(cfg, "solver", "factorization", where, sizeof where), msg);
}

/* The transformation, method and order of the run; B's definiteness where
 * the symmetric method needs it.  Collective. */
static int decide(app_ctx *ctx, const pl_backend *be, solve_facts *f, st_run *r)
{
    const pl_config *cfg = &ctx->cfg;
    const pl_solver_cfg *s = &cfg->solver;
    char where[1200];
    pl_st_opts_init(&r->so);
    const int target = !isnan(s->target);
    r->so.kind = target ? PL_ST_SHIFT_INVERT : PL_ST_B_INVERT;
    r->so.sigma_re = target ? s->target : 0.0;
    r->so.sigma_im = target ? s->target_imag : 0.0;
    const int a_sym = !f->cplx; /* choose_method: A symmetric (or lanczos forced) */
    r->so.symmetric = a_sym && (!r->have_b || r->b_sym == 1);
    fact_opts(ctx, be, &r->so.fact);
    r->which = pl_config_is_set(cfg, "solver", "which") || !target ? s->which : PL_WHICH_NEAREST;
    if (r->so.symmetric && r->have_b && s->method != PL_METHOD_KRYLOV_SCHUR && !r->inertia_done) {
        /* a symmetric-definite pair: real eigenvalues if B is positive definite (its inertia) */
        int64_t neg = -1;
        int sing = 0;
        int rc = pl_st_inertia(ctx->comm, &r->B, &r->so.fact, &neg, &sing);
        if (rc) return fact_error(ctx, rc, 0, r);
        if (neg < 0 && !sing) { /* a back-end without inertia (cuDSS alone): solve it as a general pair */
            if (ctx->rank == 0)
                pl_warn("solve: B's definiteness cannot be checked without MUMPS (no inertia from %s): the pair is "
                        "solved as a general one", r->so.fact.kind == PL_FACT_CUDSS ? "cuDSS" : "the factorisation");
            r->so.symmetric = 0;
            goto general;
        }
        ctx->error_collective = sing || neg != 0;
        PL_CHECK(!sing && neg == 0, PL_ERR_INPUT,
                 "%s = %s: A and B are symmetric but B is not positive definite (%s); a symmetric-definite pair "
                 "needs an SPD B: set [solver] method = krylov-schur to solve it as a general pair",
                 pl_config_where(cfg, "matrix", "b_file", where, sizeof where), cfg->matrix.b_file,
                 sing ? "it is singular" : "its LDL^T factorisation has negative pivots");
        r->definite = 1;
        r->inertia_done = 1;
        if (ctx->rank == 0) pl_info("solve: B is positive definite (LDL^T inertia): a symmetric-definite pair");
    }
general:;
    const int lanczos_ok = target && r->so.symmetric && !r->have_b && r->so.sigma_im == 0.0;
    /* a symmetric-definite pair (method auto or lanczos) with a real or no target: Lanczos in the B-inner
     * product, where (A - sigma B)^{-1} B and B^{-1} A are self-adjoint (st.h pl_st_solve) */
    r->b_lanczos = r->definite && r->so.sigma_im == 0.0;
    /* B = I: Lanczos only when asked for: on the symmetric shift-inverted operator Krylov-Schur converged in
     * fewer solves (47-48 against 74-80 on four symmetric cases, docs/config.md) */
    f->method = (lanczos_ok && s->method == PL_METHOD_LANCZOS) || r->b_lanczos ? PL_METHOD_LANCZOS
                                                                             : PL_METHOD_KRYLOV_SCHUR;
    f->cplx = !(lanczos_ok || r->definite || (r->so.symmetric && !r->have_b));
    return PL_OK;
}

static int st_attrs(void *arg, pl_spectrum *sp)
{
    const st_run *r = arg;
    const int si = r->so.kind == PL_ST_SHIFT_INVERT;
    PL_CALL(pl_spectrum_attr_string(sp, "transform", si ? "shift_invert" : "b_inverse"));
    PL_CALL(pl_spectrum_attr_double(sp, "sigma_real", si ? r->so.sigma_re : NAN));
    PL_CALL(pl_spectrum_attr_double(sp, "sigma_imag", si ? r->so.sigma_im : NAN));
    PL_CALL(pl_spectrum_attr_string(sp, "b_matrix", r->have_b ? r->b_name : "identity"));
    PL_CALL(pl_spectrum_attr_string(sp, "factorization", r->fi.backend ? r->fi.backend : "?"));
    PL_CALL(pl_spectrum_attr_double(sp, "factorization_memory_estimate", r->fi.mem_estimate));
    PL_CALL(pl_spectrum_attr_int(sp, "factorization_nnz", r->fi.nnz_factors));
    PL_CALL(pl_spectrum_attr_int(sp, "factorized_solves", r->fi.nsolves));
    PL_CALL(pl_spectrum_attr_double(sp, "factorization_analyse_seconds", r->fi.analyse_s));
    PL_CALL(pl_spectrum_attr_double(sp, "factorization_factor_seconds", r->fi.factor_s));
    PL_CALL(pl_spectrum_attr_double(sp, "factorization_solve_seconds", r->fi.solve_s));
    PL_CALL(pl_spectrum_attr_int(sp, "symmetric_definite", r->definite));
    PL_CALL(pl_spectrum_attr_string(sp, "inner_product", r->b_lanczos ? "B" : "euclidean"));
    PL_CALL(pl_spectrum_attr_int(sp, "inner_product_b_products", r->b_products));
    PL_CALL(pl_spectrum_attr_int(sp, "factorization_analyses", r->analyses));
    PL_CALL(pl_spectrum_attr_int(sp, "factorization_count", r->factorizations));
    PL_CALL(pl_spectrum_attr_double(sp, "factorization_analyse_seconds_total", r->analyse_total));
    if (r->extra) PL_CALL(r->extra(r->extra_arg, sp));
    return PL_OK;
}

static void st_say(app_ctx *ctx, const st_run *r, const solve_facts *f)
{
    if (ctx->rank != 0) return;
    const pl_fact_info *fi = &r->fi;
    if (r->so.kind == PL_ST_SHIFT_INVERT)
        pl_info("solve: shift-and-invert, sigma = %.10g%+.10gi, B = %s, %s on the transformed operator%s, which = %s",
                r->so.sigma_re, r->so.sigma_im, r->have_b ? r->b_name : "I",
                pl_config_enum_name("solver", "method", f->method),
                r->b_lanczos ? " in the B-inner product" : "", pl_config_enum_name("solver", "which", r->which));
    else
        pl_info("solve: B-inverse (no target), B = %s, %s on B^-1 A%s", r->b_name,
                pl_config_enum_name("solver", "method", f->method), r->b_lanczos ? " in the B-inner product" : "");
    pl_info("solve: factorisation %s: analysis %.3f s, factor %.3f s, %lld solves %.3f s, estimate %.1f MB per rank, "
            "%lld entries in the factors",
            fi->backend, fi->analyse_s, fi->factor_s, (long long)fi->nsolves, fi->solve_s, fi->mem_estimate / 1e6,
            (long long)fi->nnz_factors);
}

/* The factorisation for the configuration's target: the first one
 * analyses and factors (pl_st_create); a new target of the same kind
 * (real or complex) refactors on the same analysis (pl_st_set_shift); a
 * change of kind analyses again (dmumps and zmumps are two
 * factorisations).  Collective. */
static int st_factor(app_ctx *ctx, st_run *r)
{
    const pl_solver_cfg *sv = &ctx->cfg.solver;
    const double sre = isnan(sv->target) ? 0.0 : sv->target, sim = isnan(sv->target) ? 0.0 : sv->target_imag;
    double t0 = pl_wtime();
    int rc = PL_OK;
    if (r->st && r->so.kind == PL_ST_SHIFT_INVERT && (sim != 0.0) == (r->so.sigma_im != 0.0)) {
        pl_st_fact_info(r->st, &r->base);
        if (sre == r->so.sigma_re && sim == r->so.sigma_im) return PL_OK; /* factored for it */
        r->so.sigma_re = sre;
        r->so.sigma_im = sim;
        rc = pl_st_set_shift(r->st, sre, sim);
        r->factorizations += 1;
        if (rc) return fact_error(ctx, rc, pl_st_singular(r->st), r);
    } else {
        pl_st_free(&r->st);
        memset(&r->base, 0, sizeof r->base);
        r->so.sigma_re = sre;
        r->so.sigma_im = sim;
        rc = pl_st_create(ctx->comm, r->be, &r->rows, r->have_b ? &r->B : NULL, &r->so, &r->st);
        r->analyses += rc == PL_OK || pl_st_singular(NULL);
        r->factorizations += rc == PL_OK || pl_st_singular(NULL);
        if (rc) return fact_error(ctx, rc, pl_st_singular(NULL), r);
        pl_fact_info fi;
        pl_st_fact_info(r->st, &fi);
        r->analyse_total += fi.analyse_s;
    }
    r->create_s = app_max_over_ranks(ctx, pl_wtime() - t0);
    return PL_OK;
}

int st_session_open(app_ctx *ctx, st_session **out)
{
    *out = NULL;
    const pl_config *cfg = &ctx->cfg;
    st_run *r = calloc(1, sizeof *r);
    PL_CHECK(r, PL_ERR_MEM, "out of host memory");
    int rc = PL_OK;
    ctx->free_ok = 0; /* the factorisation needs the stored rows */
    PL_CALL_GOTO(solve_build(ctx, &r->rows, &r->be, &r->f0), fail, rc);
    if (cfg->matrix.b_file[0]) PL_CALL_GOTO(read_b(ctx, &r->rows, r), fail, rc);
    *out = r;
    return PL_OK;
fail:
    st_session_close(&r);
    return rc;
}

void st_session_close(st_session **ps)
{
    if (!ps || !*ps) return;
    st_run *r = *ps;
    pl_st_free(&r->st);
    pl_csr_destroy(&r->B);
    pl_backend_destroy(&r->be);
    pl_csr_destroy(&r->rows);
    free(r);
    *ps = NULL;
}

void st_session_counts(const st_session *r, int *analyses, int *factorizations)
{
    *analyses = r->analyses;
    *factorizations = r->factorizations;
}

int st_session_solve(app_ctx *ctx, st_session *r, const char *file, int replace, solve_attr_fn extra,
                     void *extra_arg, lz_result *res, solve_facts *fo)
{
    const pl_config *cfg = &ctx->cfg;
    solve_facts f = r->f0;
    memset(res, 0, sizeof *res);
    const double sre = r->so.sigma_re, sim = r->so.sigma_im;
    const int had = r->st != NULL;
    PL_CALL(decide(ctx, r->be, &f, r));
    if (had) { /* decide reset the options: keep the factored shift (st_factor compares with it) */
        r->so.sigma_re = sre;
        r->so.sigma_im = sim;
    }
    pl_info("solve: N = %lld, nnz = %lld, %d rank(s), backend %s, build %.2f s", (long long)f.mi.rows,
            (long long)f.mi.nnz, ctx->size, r->be->name, f.mi.build_seconds);
    PL_CALL(st_factor(ctx, r));
    f.permute_seconds = r->create_s;
    f.backend = r->be->name;
    f.format = PL_FORMAT_PJDS;
    f.kron_split = -1;
    f.cmp_nval = f.cmp_noff = -1;
    f.point_file = fo->point_file;
    snprintf(f.format_note, sizeof f.format_note, "CSR rows and a %s factorisation (spectral transformation)",
             cfg->solver.factorization == 2 ? "cudss" : "mumps");
    solve_extra x = {0};
    x.want_vectors = 1;
    x.st = r->st;
    x.st_which = r->which;
    x.st_b_inner = r->b_lanczos;
    PL_CALL(solve_run(ctx, pl_st_op(r->st), &f, &x, res));
    r->b_products = res->b_products;
    pl_st_fact_info(r->st, &r->fi); /* this solve's share of the counters (a sweep's factorisation lives on) */
    r->fi.nsolves -= r->base.nsolves;
    r->fi.solve_s -= r->base.solve_s;
    r->fi.factor_s -= r->base.factor_s;
    if (!f.cplx) /* a symmetric(-definite) problem: real eigenvalues (rounding-level imaginary parts dropped) */
        for (int i = 0; i < res->nev; i++) res->eigenvalues_imag[i] = 0.0;
    r->extra = extra;
    r->extra_arg = extra_arg;
    int rc = solve_write(ctx, file, replace, pl_st_vectors_op(r->st), res, &f, st_attrs, r);
    r->extra = NULL;
    PL_CALL(rc);
    st_say(ctx, r, &f);
    *fo = f;
    return PL_OK;
}

int solve_st(app_ctx *ctx, int replace)
{
    lz_result res;
    memset(&res, 0, sizeof res);
    solve_facts f;
    memset(&f, 0, sizeof f);
    st_session *r = NULL;
    app_signal_exit_phase("the spectral transformation", "nothing to save (no checkpoints with a transformation)");
    int rc = st_session_open(ctx, &r);
    if (rc == PL_OK) rc = st_session_solve(ctx, r, ctx->cfg.output.file, replace, NULL, NULL, &res, &f);
    if (rc == PL_OK) solve_report(ctx, &res, &f, ctx->cfg.output.file);
    lz_result_destroy(&res);
    st_session_close(&r);
    return rc;
}
