/* cmd_dos.c — `pjds-lanczos dos CONFIG`: the density of states by the
 * kernel polynomial method (docs/models.md, "Density of states"; lanczos/kpm.c).
 *
 * Build the operator as `solve` does (format = matrix_free, and auto on
 * the CPU backend: from the Holstein-Hubbard model's Kronecker tables,
 * app_free.c, on any number of ranks; auto on a GPU keeps a stored matrix
 * here), refuse a nonsymmetric matrix (KPM
 * needs a real spectrum), estimate the spectral bounds with a short Lanczos
 * run, compute the Chebyshev moments of [kpm] random_vectors start vectors
 * in blocks of [kpm] block vectors (one SpMMV per two moments), damp them
 * with the Jackson or Lorentz kernel and write /dos/energy, /dos/density
 * and /dos/moments (raw, before the kernel) with the attributes to
 * [output] file (rank 0, atomically).  SIGUSR1/SIGTERM before the write:
 * exit status 3 at once (no checkpoints); during it: finished, status 0. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pl_build.h"
#include "pl_error.h"
#include "pl_spectrum.h"
#include "solve_impl.h"

#define DOS_BOUND_STEPS 60
#define DOS_UNIT_MAX 20000 /* vectors = unit: N block products of N / 2 steps */
#define DOS_EPS 0.01       /* H~ = (H - b) / a keeps the bounds at +-(1 - DOS_EPS / 2) */

typedef struct dos_out {
    int N, R, P, block;
    double *mu, *energy, *rho;
    double emin, emax, a, b, integral, seconds, bound_seconds, spmv_median;
    kpm_stats st;
} dos_out;

static int dos_write(app_ctx *ctx, const solve_facts *f, const dos_out *d)
{
    const pl_config *cfg = &ctx->cfg;
    const pl_kpm_cfg *k = &cfg->kpm;
    pl_spectrum *sp = NULL;
    char *resolved = pl_config_dump_string(cfg);
    PL_CHECK(resolved, PL_ERR_MEM, "out of host memory");
    int rc = PL_OK;
    PL_CALL_GOTO(pl_spectrum_create(cfg->output.file, &sp), out, rc);
    PL_CALL_GOTO(app_describe_output(ctx, sp, 1), out, rc);
    PL_CALL_GOTO(pl_spectrum_attr_string(sp, "program", "pjds-lanczos"), out, rc);
    PL_CALL_GOTO(pl_spectrum_attr_string(sp, "version", PL_VERSION), out, rc);
    PL_CALL_GOTO(pl_spectrum_attr_string(sp, "command", "dos"), out, rc);
    PL_CALL_GOTO(pl_spectrum_attr_string(sp, "config_file", ctx->cfg_path ? ctx->cfg_path : ""), out, rc);
    PL_CALL_GOTO(pl_spectrum_attr_string(sp, "config_text", cfg->text ? cfg->text : ""), out, rc);
    PL_CALL_GOTO(pl_spectrum_attr_string(sp, "config_resolved", resolved), out, rc);
    PL_CALL_GOTO(pl_spectrum_attr_string(sp, "matrix_name", f->mi.name), out, rc);
    PL_CALL_GOTO(pl_spectrum_attr_int(sp, "rows", f->mi.rows), out, rc);
    PL_CALL_GOTO(pl_spectrum_attr_int(sp, "nnz", f->mi.nnz), out, rc);
    PL_CALL_GOTO(pl_spectrum_attr_string(sp, "backend", f->backend), out, rc);
    PL_CALL_GOTO(pl_spectrum_attr_string(sp, "spmv_format", pl_config_enum_name("spmv", "format", f->format)), out, rc);
    PL_CALL_GOTO(pl_spectrum_attr_string(sp, "spmv_kron_split", app_kron_split_name(f->kron_split)), out, rc);
    PL_CALL_GOTO(pl_spectrum_attr_int(sp, "ranks", ctx->size), out, rc);
    const int64_t dN[1] = {d->N}, dP[1] = {d->P};
    PL_CALL_GOTO(pl_spectrum_write_array(sp, "dos", "moments", 1, dN, d->mu), out, rc);
    PL_CALL_GOTO(pl_spectrum_write_array(sp, "dos", "energy", 1, dP, d->energy), out, rc);
    PL_CALL_GOTO(pl_spectrum_write_array(sp, "dos", "density", 1, dP, d->rho), out, rc);
    const char *g = "dos";
    PL_CALL_GOTO(pl_spectrum_group_attr_double(sp, g, "N", (double)d->N), out, rc);
    PL_CALL_GOTO(pl_spectrum_group_attr_double(sp, g, "R", (double)d->R), out, rc);
    PL_CALL_GOTO(pl_spectrum_group_attr_double(sp, g, "block", (double)d->block), out, rc);
    PL_CALL_GOTO(pl_spectrum_group_attr_string(sp, g, "vectors", k->vectors == PL_KPM_UNIT ? "unit" : "random"), out, rc);
    PL_CALL_GOTO(pl_spectrum_group_attr_string(sp, g, "kernel", k->kernel == PL_KPM_LORENTZ ? "lorentz" : "jackson"),
                 out, rc);
    PL_CALL_GOTO(pl_spectrum_group_attr_double(sp, g, "lorentz_lambda", k->lorentz_lambda), out, rc);
    PL_CALL_GOTO(pl_spectrum_group_attr_double(sp, g, "seed", (double)k->seed), out, rc);
    PL_CALL_GOTO(pl_spectrum_group_attr_double(sp, g, "emin", d->emin), out, rc);
    PL_CALL_GOTO(pl_spectrum_group_attr_double(sp, g, "emax", d->emax), out, rc);
    PL_CALL_GOTO(pl_spectrum_group_attr_double(sp, g, "a", d->a), out, rc);
    PL_CALL_GOTO(pl_spectrum_group_attr_double(sp, g, "b", d->b), out, rc);
    PL_CALL_GOTO(pl_spectrum_group_attr_double(sp, g, "integral", d->integral), out, rc);
    PL_CALL_GOTO(pl_spectrum_group_attr_double(sp, g, "moments_seconds", d->seconds), out, rc);
    PL_CALL_GOTO(pl_spectrum_group_attr_double(sp, g, "bounds_seconds", d->bound_seconds), out, rc);
    PL_CALL_GOTO(pl_spectrum_group_attr_double(sp, g, "start_vector_seconds", d->st.start_seconds), out, rc);
    PL_CALL_GOTO(pl_spectrum_group_attr_double(sp, g, "block_products", (double)d->st.block_products), out, rc);
    PL_CALL_GOTO(pl_spectrum_group_attr_double(sp, g, "spmv_median_seconds", d->spmv_median), out, rc);
    PL_CALL_GOTO(pl_spectrum_group_attr_string(sp, g, "convention",
                                               "H~ = (H - b) / a; mu_m = (1/R) sum_r <r|T_m(H~)|r> / <r|r>; "
                                               "rho(E) = [g0 mu0 + 2 sum_m g_m mu_m T_m(x)] / (pi a sqrt(1 - x^2)), "
                                               "x = (E - b) / a, at the Chebyshev nodes; integral = Gauss-Chebyshev sum"),
                 out, rc);
    PL_CALL_GOTO(pl_spectrum_commit(&sp, ctx->overwrite), out, rc);
out:
    if (sp) pl_spectrum_abort(&sp);
    free(resolved);
    return rc;
}

/* [kpm] block = 0: the vectors per block product.  min(R, 32) for a
 * stored matrix; for the tables (format = matrix_free) min(R, 2) on a GPU
 * backend, where variant 5's staged tile serves a block
 * (spmv/cuda/kron_hop_block.cu) and wider blocks run kernels that cost more
 * per vector (dos configs/kpm_hmep.ini on one H200, 2026-11-29: moments
 * 1.37-1.39 s in blocks of 2, 1.42 s of 4, 1.72-1.75 s of 8, 2.04-2.09 s
 * of 16), and 1 on the CPU, where one vector runs the SIMD product with
 * the step fused (cpu_kron_aug; hh_184800, 512 moments of 16 vectors, the
 * development VM's 2 cores: 0.72 s one by one, 1.06 s in blocks of 4, 1.57
 * s of 2, 2.03-2.22 s of 8 and 16; one core 1.36 against 2.11 s of 4). */
static int dos_block(int R, const pl_backend *be, int format)
{
    int b = 32;
    if (format == PL_FORMAT_MATRIX_FREE) b = be && strcmp(be->name, "cpu") != 0 ? 2 : 1;
    return R < b ? R : b;
}

int cmd_dos(app_ctx *ctx)
{
    const pl_config *cfg = &ctx->cfg;
    const pl_kpm_cfg *k = &cfg->kpm;
    ctx->error_collective = 1; /* the same config on every rank */
    PL_CHECK(cfg->sweep.nkeys == 0, PL_ERR_INPUT, "%s: dos takes no [sweep] section", cfg->path);
    PL_CALL(app_check_output_path(ctx, cfg->output.file));
    ctx->error_collective = 0;
    pl_csr rows;
    memset(&rows, 0, sizeof rows);
    pl_backend *be = NULL;
    pl_op *op = NULL;
    solve_facts f;
    memset(&f, 0, sizeof f);
    dos_out d;
    memset(&d, 0, sizeof d);
    int rc = PL_OK;
    /* signals: nothing to save until the write (no checkpoints): exit 3 at once (checkpoint.c) */
    const char *note = "nothing to save (dos has no checkpoints); rerun to start again";
    app_signal_exit_phase(cfg->model.type == PL_MODEL_HDF5 ? "the import of the matrix" : "the generation of the matrix",
                          note);
    /* H from its Kronecker tables where format = matrix_free is given, or
     * under auto on the CPU backend, on any number of ranks (app_free.c;
     * the block products: be->kron_spmm_aug on one rank, kron_spmm with the
     * halo exchange and kron_rem_spmm on several, op_block.c).  On the CPU
     * the tables were 2.5-3.2x faster than pJDS (docs/performance.md, ninth
     * look); auto on one GPU takes them where variant 5's block tile fits
     * (app_free_auto_dos, decided with the tables' sizes in app_build_free),
     * else, and on several GPUs, a stored matrix */
    ctx->free_ok = cfg->spmv.format == PL_FORMAT_MATRIX_FREE || app_free_auto_dos(ctx);
    if (cfg->solver.reproducible && ctx->size > 1) { /* before the matrix is built: every rank alike */
        char where[1200];
        ctx->error_collective = 1;
        rc = PL_ERROR(PL_ERR_INPUT,
                      "%s = true: dos's block products on %d ranks have no reproducible sums yet (one rank, or "
                      "reproducible = false)",
                      pl_config_where(cfg, "solver", "reproducible", where, sizeof where), ctx->size);
        goto out;
    }
    PL_CALL_GOTO(solve_build(ctx, &rows, &be, &f), out, rc);
    if (f.cplx) {
        ctx->error_collective = 1;
        rc = PL_ERROR(PL_ERR_INPUT,
                      "%s: dos: %s is nonsymmetric; the kernel polynomial method needs a real spectrum (a symmetric "
                      "matrix)",
                      cfg->path, f.mi.name);
        goto out;
    }
    if (k->vectors == PL_KPM_UNIT && f.mi.rows > DOS_UNIT_MAX) {
        ctx->error_collective = 1;
        rc = PL_ERROR(PL_ERR_INPUT, "%s: [kpm] vectors = unit needs N <= %d rows (the matrix has %lld); use random",
                      cfg->path, DOS_UNIT_MAX, (long long)f.mi.rows);
        goto out;
    }
    ctx->cfg.spmv.blocks = 1; /* block products: format = auto keeps pJDS (spmv/op_format.c) */
    app_signal_exit_phase("the permutation and upload of the matrix", note);
    PL_CALL_GOTO(solve_make_op(ctx, &rows, be, &op, &f), out, rc);
    app_signal_exit_phase("the Chebyshev moments", note);
    d.N = k->moments;
    d.R = k->vectors == PL_KPM_UNIT ? (int)f.mi.rows : k->random_vectors;
    d.block = k->block > 0 ? k->block : dos_block(d.R, be, f.format);
    if (d.block > d.R) d.block = d.R;
    d.P = k->points > 0 ? k->points : 4 * k->moments;
    d.mu = malloc((size_t)d.N * sizeof *d.mu);
    d.energy = malloc((size_t)d.P * sizeof *d.energy);
    d.rho = malloc((size_t)d.P * sizeof *d.rho);
    double *gk = malloc((size_t)d.N * sizeof *gk), *mug = malloc((size_t)d.N * sizeof *mug);
    PL_CHECK_GOTO(d.mu && d.energy && d.rho && gk && mug, PL_ERR_MEM, out2, rc, "out of host memory for the DOS");
    const double tb = pl_wtime();
    PL_CALL_GOTO(kpm_bounds(op, k->seed, DOS_BOUND_STEPS, &d.emin, &d.emax), out2, rc);
    d.bound_seconds = app_max_over_ranks(ctx, pl_wtime() - tb);
    d.a = (d.emax - d.emin) / (2.0 - DOS_EPS);
    d.b = 0.5 * (d.emax + d.emin);
    if (ctx->rank == 0 && !ctx->quiet)
        pl_info("dos: spectral bounds [%.8g, %.8g] (%d Lanczos steps, %.3f s); %d moments of %d %s vector(s), %d per "
                "SpMMV",
                d.emin, d.emax, DOS_BOUND_STEPS, d.bound_seconds, d.N, d.R,
                k->vectors == PL_KPM_UNIT ? "unit" : "random", d.block);
    kpm_options o = {d.N, d.R, d.block, k->vectors == PL_KPM_UNIT, k->seed, d.a, d.b, ctx->quiet, 1, 0};
    PL_CALL_GOTO(kpm_moments(op, &o, d.mu, &d.st), out2, rc);
    d.seconds = app_max_over_ranks(ctx, d.st.seconds);
    /* the single SpMV of this operator, for the comparison */
    {
        double *x = NULL, *y = NULL;
        pl_op_info info;
        pl_op_get_info(op, &info);
        int e = be->vec_alloc(be, (size_t)info.n_local + 1, &x);
        if (e == PL_OK) e = be->vec_alloc(be, (size_t)info.n_local + 1, &y);
        if (e == PL_OK) e = be->set(be, (size_t)info.n_local, 1.0, x);
        pl_op_reset_counters(op);
        for (int i = 0; i < 21 && e == PL_OK; i++) e = pl_op_apply(op, x, y);
        pl_op_timings ot;
        pl_op_timings_get(op, &ot);
        d.spmv_median = app_max_over_ranks(ctx, ot.t_median);
        if (x) be->vec_free(be, x);
        if (y) be->vec_free(be, y);
        PL_CALL_GOTO(e, out2, rc);
    }
    kpm_damping(k->kernel == PL_KPM_LORENTZ ? 1 : 0, k->lorentz_lambda, d.N, gk);
    kpm_density(d.N, d.mu, gk, d.a, d.b, d.P, d.energy, d.rho, &d.integral);
    app_signal_flag_phase(); /* the result is complete: it is written, then exit 0 */
    if (ctx->rank == 0) {
        /* the reference of docs/performance.md (KPM on HMEp): the same products as single SpMVs (R x N/2) */
        const double equiv = d.spmv_median * (double)d.st.vector_products;
        pl_info("dos: %lld block products (%lld vector products for %d moments of %d vectors) in %.3f s (start vectors "
                "%.3f s)%s; as %lld single SpMVs at the median %.3f ms: %.3f s, ratio %.3f; integral %.12f",
                (long long)d.st.block_products, (long long)d.st.vector_products, d.N, d.R, d.seconds,
                d.st.start_seconds, d.st.fused ? " (fused SpMMV step)" : "", (long long)d.st.vector_products,
                1e3 * d.spmv_median, equiv, equiv > 0 ? d.seconds / equiv : 0.0, d.integral);
        int e = dos_write(ctx, &f, &d);
        if (e == PL_OK && !ctx->quiet) pl_info("dos: wrote %s", cfg->output.file);
        rc = e;
    }
    rc = app_agree_placement(ctx, rc); /* a file that appeared during the run: exit 2 on every rank */
    if (rc == PL_OK && app_signal_noted())
        pl_warn("%s arrived while the result was written; %s is complete (exit status 0)", app_signal_noted(),
                cfg->output.file);
out2:
    free(gk);
    free(mug);
out:
    free(d.mu);
    free(d.energy);
    free(d.rho);
    pl_op_destroy(&op);
    app_free_release(ctx); /* matrix_free tables left by a failure before the operator */
    pl_backend_destroy(&be);
    pl_csr_destroy(&rows);
    return rc;
}
