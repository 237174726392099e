/* cmd_merge.c — `pjds-lanczos merge [--overwrite] OUT.h5 IN.h5...`: combine
 * sweep files of one sweep (the same root attribute sweep_hash), e.g. the
 * shares of a Slurm job array run with --points, into one finalised sweep
 * file (docs/operations.md, "Cluster runs").  A point finished (status 1 or 2) in
 * several inputs must agree: every eigenvalue to 1e-7 relative
 * (max(|lambda|, 1)); independent solves of one point agree far closer.
 * Failed or missing points stay as they are (status 3 or 0), so `solve
 * --resume` on the merged file completes them.  Inputs that are not sweep
 * files, or of another sweep, are bad input (exit 2, one line).  Rank 0
 * does the work. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pl_error.h"
#include "pl_sweepfile.h"

#include "app.h"

static int agree_values(const pl_sweep_summary *a, const pl_sweep_summary *b, int p)
{
    int nc = a->ncols < b->ncols ? a->ncols : b->ncols;
    for (int i = 0; i < nc; i++) {
        size_t ea = (size_t)p * a->ncols + i, eb = (size_t)p * b->ncols + i;
        double x = a->eig_re[ea], y = b->eig_re[eb];
        double xi = a->cplx ? a->eig_im[ea] : 0.0, yi = b->cplx ? b->eig_im[eb] : 0.0;
        if (isnan(x) && isnan(y)) continue;
        double scale = fmax(1.0, fmax(hypot(x, xi), hypot(y, yi)));
        if (!(hypot(x - y, xi - yi) <= 1e-7 * scale)) return 0;
    }
    return 1;
}

static int merge(app_ctx *ctx)
{
    const char *out = ctx->cfg_path;
    int nin = ctx->nargs, rc = PL_OK;
    pl_sweep_summary *in = calloc((size_t)nin, sizeof *in), m;
    memset(&m, 0, sizeof m);
    pl_point_src *src = NULL;
    int *from = NULL;
    PL_CHECK(in, PL_ERR_MEM, "out of host memory");
    int ncols = 0, cplx = 0, fin = 0;
    for (int i = 0; i < nin; i++) {
        PL_CALL_GOTO(pl_sweepfile_read(ctx->args[i], &in[i], &fin), done, rc);
        PL_CHECK_GOTO(!strcmp(in[i].hash, in[0].hash) && in[i].npoints == in[0].npoints, PL_ERR_INPUT, done, rc,
                      "%s: another sweep than %s (sweep_hash %s, not %s): files of one sweep only", ctx->args[i],
                      ctx->args[0], in[i].hash, in[0].hash);
        if (in[i].ncols > ncols) ncols = in[i].ncols;
        cplx |= in[i].cplx;
    }
    int P = in[0].npoints;
    PL_CALL_GOTO(pl_sweep_summary_alloc(&m, P, in[0].nkeys, ncols, cplx), done, rc);
    m.hash = strdup(in[0].hash);
    m.definition = strdup(in[0].definition);
    m.config = strdup(in[0].config);
    m.config_path = in[0].config_path ? strdup(in[0].config_path) : NULL; /* (optional: NULL writes "") */
    src = calloc((size_t)P + 1, sizeof *src);
    from = malloc(((size_t)P + 1) * sizeof *from);
    PL_CHECK_GOTO(m.hash && m.definition && m.config && src && from, PL_ERR_MEM, done, rc, "out of host memory");
    for (int k = 0; k < m.nkeys; k++) {
        memcpy(m.keys[k], in[0].keys[k], 32);
        if (in[0].words[k]) PL_CHECK_GOTO((m.words[k] = strdup(in[0].words[k])), PL_ERR_MEM, done, rc, "out of memory");
    }
    memcpy(m.values, in[0].values, (size_t)P * (size_t)m.nkeys * sizeof *m.values);
    for (int p = 0; p < P; p++) {
        from[p] = -1;
        for (int i = 0; i < nin; i++) {
            int st = in[i].status[p];
            if (st == PL_POINT_FAILED && from[p] < 0 && m.status[p] == PL_POINT_NOT_RUN) m.status[p] = PL_POINT_FAILED;
            if (st != PL_POINT_CONVERGED && st != PL_POINT_NOT_CONVERGED) continue;
            PL_CHECK_GOTO(pl_sweepfile_has_point(ctx->args[i], p), PL_ERR_INPUT, done, rc,
                          "%s: point %d is marked finished but its group /points/%04d cannot be opened", ctx->args[i], p, p);
            if (from[p] >= 0) {
                PL_CHECK_GOTO(agree_values(&in[from[p]], &in[i], p), PL_ERR_INPUT, done, rc,
                              "%s and %s disagree on point %d (eigenvalues differ by more than 1e-7 relative)",
                              ctx->args[from[p]], ctx->args[i], p);
                continue;
            }
            from[p] = i;
        }
        int i = from[p];
        if (i < 0) continue;
        for (int c = 0; c < ncols; c++) {
            size_t e = (size_t)p * ncols + c, ei = (size_t)p * in[i].ncols + c;
            m.eig_re[e] = c < in[i].ncols ? in[i].eig_re[ei] : NAN;
            m.eig_im[e] = c < in[i].ncols && in[i].cplx ? in[i].eig_im[ei] : (c < in[i].ncols ? 0.0 : NAN);
            m.resid[e] = c < in[i].ncols ? in[i].resid[ei] : NAN;
        }
        m.status[p] = in[i].status[p];
        m.rebuilt[p] = in[i].rebuilt[p];
        m.spmvs[p] = in[i].spmvs[p];
        m.seconds[p] = in[i].seconds[p];
        src[p].kind = 2;
        snprintf(src[p].file, sizeof src[p].file, "%s", ctx->args[i]);
        snprintf(src[p].obj, sizeof src[p].obj, "/points/%04d", p);
    }
    PL_CALL_GOTO(pl_sweepfile_write(out, &m, src, 1, ctx->overwrite), done, rc);
    int nf = 0;
    for (int p = 0; p < P; p++) nf += m.status[p] == PL_POINT_CONVERGED || m.status[p] == PL_POINT_NOT_CONVERGED;
    pl_info("merge: wrote %s: %d of %d points finished, from %d file(s)", out, nf, P, nin);
done:
    for (int i = 0; i < nin; i++) pl_sweep_summary_free(&in[i]);
    free(in);
    pl_sweep_summary_free(&m);
    free(src);
    free(from);
    return rc;
}

int cmd_merge(app_ctx *ctx)
{
    PL_CALL(app_check_output_path(ctx, ctx->cfg_path));
    char msg[1600] = "";
    int rc = PL_OK;
    if (ctx->rank == 0) {
        rc = merge(ctx);
        if (rc != PL_OK) {
            snprintf(msg, sizeof msg, "%s", pl_error_message());
            pl_error_clear();
        }
    }
    PL_CHECK(MPI_Bcast(&rc, 1, MPI_INT, 0, ctx->comm) == MPI_SUCCESS &&
                 MPI_Bcast(msg, sizeof msg, MPI_CHAR, 0, ctx->comm) == MPI_SUCCESS,
             PL_ERR_MPI, "MPI_Bcast failed");
    if (rc == PL_ERR_INPUT) ctx->error_collective = 1; /* the same line on every rank: rank 0 says it */
    PL_CHECK(rc == PL_OK, rc, "%s", msg);
    return PL_OK;
}
