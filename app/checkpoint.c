/* checkpoint.c — checkpoint and restart of one solve (README, "Checkpoint
 * and restart"): the SIGUSR1/SIGTERM flag, the collective decision at the
 * end of each solver cycle, and the checkpoint file.
 *
 * Decision: at each end of a cycle (lz_checkpoint_fn) every rank adds its
 * signal flag, rank 0 its "interval elapsed" flag, into one MPI_Allreduce;
 * a signal means save and stop (exit status 3), the interval means save and
 * go on.  Under srun every task gets the signal; under mpirun one rank
 * getting it is enough.
 * File: one HDF5 file "<[output] file>.ckpt", written by rank 0 under a
 * temporary name and renamed into place when complete, so a kill while
 * writing leaves the previous checkpoint intact.  The basis is stored in the
 * original row order (each rank's slice a hyperslab of the nvec x N dataset
 * /basis), so a resumed run may use a different number of ranks or another
 * permutation; the solver's scalars and projected matrix are /state/ints
 * and /state/dbl (their meaning is the method's: lanczos.c, krylov_schur.c);
 * /history/... the convergence history so far.  The root attribute `config`
 * holds the configuration that decides the result (pl_config_result_text):
 * a resume with another one is bad input naming the first difference. */
#define _POSIX_C_SOURCE 200809L
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pl_error.h"
#include "pl_build.h"
#include "pl_h5util.h"
#include "solve_impl.h"

#define CKPT_FORMAT "pjds-lanczos checkpoint"
#define CKPT_VERSION 1

static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
    (void)sig;
    stop_flag = 1;
}

void app_signals_install(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    sigaction(SIGUSR1, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

int app_stop_requested(app_ctx *ctx, int *stop)
{
    int mine = stop_flag != 0;
    PL_CHECK(MPI_Allreduce(&mine, stop, 1, MPI_INT, MPI_MAX, ctx->comm) == MPI_SUCCESS, PL_ERR_MPI,
             "MPI_Allreduce of the stop flag failed");
    return PL_OK;
}

int app_ckpt_init(app_ckpt *c, app_ctx *ctx, pl_op *op, int point, const char *sweep_hash)
{
    memset(c, 0, sizeof *c);
    c->ctx = ctx;
    c->op = op;
    c->point = point;
    snprintf(c->path, sizeof c->path, "%s.ckpt", ctx->cfg.output.file);
    snprintf(c->sweep_hash, sizeof c->sweep_hash, "%s", sweep_hash ? sweep_hash : "");
    c->interval = ctx->cfg.output.checkpoint_interval;
    c->last = pl_wtime();
    c->config_text = pl_config_result_text(&ctx->cfg, 0);
    PL_CHECK(c->config_text, PL_ERR_MEM, "out of host memory");
    return PL_OK;
}

void app_ckpt_free(app_ckpt *c)
{
    free(c->config_text);
    c->config_text = NULL;
}

/* The row blocks (row0, n) of all ranks on rank 0 (blocks[2 r], blocks[2 r
 * + 1]), this rank's info, and host buffers for one vector: perm (this
 * rank's rows, permuted) and orig (the longest block, original order).
 * Collective. */
static int slices(app_ckpt *c, int64_t **blocks, pl_op_info *info, double **perm, double **orig)
{
    app_ctx *ctx = c->ctx;
    pl_op_get_info(c->op, info);
    int64_t mine[2] = {info->row0, info->n_local}, n = info->n_local, nmax = n;
    PL_MALLOC(*blocks, 2 * (size_t)ctx->size);
    PL_CHECK(MPI_Gather(mine, 2, MPI_INT64_T, *blocks, 2, MPI_INT64_T, 0, ctx->comm) == MPI_SUCCESS, PL_ERR_MPI,
             "MPI_Gather of the row blocks failed");
    PL_CHECK(MPI_Allreduce(MPI_IN_PLACE, &nmax, 1, MPI_INT64_T, MPI_MAX, ctx->comm) == MPI_SUCCESS, PL_ERR_MPI,
             "MPI_Allreduce failed");
    *perm = malloc(((size_t)n + 1) * sizeof **perm);
    *orig = malloc(((size_t)nmax + 1) * sizeof **orig);
    PL_CHECK(*perm && *orig, PL_ERR_MEM, "out of host memory for the checkpoint");
    return PL_OK;
}

/* Rank 0: the file's header, state and history (everything but /basis). */
static int write_header(app_ckpt *c, hid_t f, const char *tmp, const lz_state *st, int64_t N)
{
    PL_CALL(pl_h5_attr_string(f, "format", CKPT_FORMAT, tmp));
    PL_CALL(pl_h5_attr_int(f, "format_version", CKPT_VERSION, tmp));
    PL_CALL(pl_h5_attr_string(f, "program_version", PL_VERSION, tmp));
    char hash[17];
    pl_hash_text(c->config_text, hash);
    PL_CALL(pl_h5_attr_string(f, "config_hash", hash, tmp));
    PL_CALL(pl_h5_attr_string(f, "config", c->config_text, tmp));
    PL_CALL(pl_h5_attr_string(f, "sweep_hash", c->sweep_hash, tmp));
    PL_CALL(pl_h5_attr_int(f, "point", c->point, tmp));
    PL_CALL(pl_h5_attr_int(f, "ranks", c->ctx->size, tmp));
    PL_CALL(pl_h5_attr_int(f, "rows", N, tmp));
    int64_t meta[] = {st->method, st->nev, st->ncv, st->which, st->nvec, st->hist_nev};
    const char *names[] = {"method", "nev", "ncv", "which", "nvec", "hist_nev"};
    for (int i = 0; i < 6; i++) PL_CALL(pl_h5_attr_int(f, names[i], meta[i], tmp));
    hsize_t d[2] = {(hsize_t)st->nint, 0};
    PL_CALL(pl_h5_write(f, "/state/ints", H5T_NATIVE_INT64, 1, d, st->ints, tmp));
    d[0] = (hsize_t)st->ndbl;
    PL_CALL(pl_h5_write(f, "/state/dbl", H5T_NATIVE_DOUBLE, 1, d, st->dbl, tmp));
    d[0] = (hsize_t)st->nhist;
    PL_CALL(pl_h5_write(f, "/history/iterations", H5T_NATIVE_INT64, 1, d, st->hist_iterations, tmp));
    d[1] = (hsize_t)st->hist_nev;
    PL_CALL(pl_h5_write(f, "/history/ritz", H5T_NATIVE_DOUBLE, 2, d, st->hist_ritz, tmp));
    PL_CALL(pl_h5_write(f, "/history/resid", H5T_NATIVE_DOUBLE, 2, d, st->hist_resid, tmp));
    if (st->hist_ritz_imag) PL_CALL(pl_h5_write(f, "/history/ritz_imag", H5T_NATIVE_DOUBLE, 2, d, st->hist_ritz_imag, tmp));
    PL_CALL(pl_h5_create_2d(f, "/basis", (hsize_t)st->nvec, (hsize_t)N, tmp));
    return PL_OK;
}

/* Write the checkpoint of st (collective).  Rank 0 keeps receiving after an
 * error of its own so no rank hangs; the status is agreed at the end. */
static int write_ckpt(app_ckpt *c, const lz_state *st)
{
    app_ctx *ctx = c->ctx;
    pl_backend *be = pl_op_backend(c->op);
    const int64_t *gidx = pl_op_global_index(c->op);
    pl_op_info info;
    int64_t *blocks = NULL;
    double *perm = NULL, *orig = NULL;
    int rc = PL_OK, rc0 = PL_OK;
    hid_t f = -1;
    char tmp[1300];
    double t0 = pl_wtime();
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", c->path, (long)getpid());
    PL_CALL_GOTO(slices(c, &blocks, &info, &perm, &orig), out, rc);
    int64_t n = info.n_local;
    if (ctx->rank == 0) {
        pl_h5_quiet();
        f = H5Fcreate(tmp, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
        if (f < 0) rc0 = PL_ERROR(PL_ERR_IO, "%s: cannot create the checkpoint file", tmp);
        if (rc0 == PL_OK) rc0 = write_header(c, f, tmp, st, info.n_global);
    }
    for (int j = 0; j < st->nvec; j++) {
        PL_CALL_GOTO(be->download(be, perm, st->V + (size_t)j * st->ld, (size_t)n), out, rc);
        for (int64_t p = 0; p < n; p++) orig[gidx[p] - info.row0] = perm[p];
        if (ctx->rank != 0) {
            PL_CHECK_GOTO(MPI_Send(orig, (int)n, MPI_DOUBLE, 0, 300 + j, ctx->comm) == MPI_SUCCESS, PL_ERR_MPI, out, rc,
                          "MPI_Send of a basis block failed");
            continue;
        }
        for (int r = 0; r < ctx->size; r++) {
            if (r > 0)
                PL_CHECK_GOTO(MPI_Recv(orig, (int)blocks[2 * r + 1], MPI_DOUBLE, r, 300 + j, ctx->comm,
                                       MPI_STATUS_IGNORE) == MPI_SUCCESS,
                              PL_ERR_MPI, out, rc, "MPI_Recv of a basis block failed");
            if (rc0 == PL_OK)
                rc0 = pl_h5_row_write(f, "/basis", (hsize_t)j, (hsize_t)blocks[2 * r], (hsize_t)blocks[2 * r + 1], orig,
                                      tmp);
        }
    }
    if (ctx->rank == 0) {
        if (H5Fclose(f) < 0 && rc0 == PL_OK) rc0 = PL_ERROR(PL_ERR_HDF5, "%s: HDF5 failed to close the file", tmp);
        f = -1;
        if (rc0 == PL_OK && rename(tmp, c->path) != 0)
            rc0 = PL_ERROR(PL_ERR_IO, "%s: cannot rename the checkpoint into place", c->path);
        if (rc0 != PL_OK) unlink(tmp);
    }
    {
        int g = rc0;
        PL_CHECK_GOTO(MPI_Bcast(&g, 1, MPI_INT, 0, ctx->comm) == MPI_SUCCESS, PL_ERR_MPI, out, rc, "MPI_Bcast failed");
        if (ctx->rank == 0) rc = rc0;
        else if (g != PL_OK) rc = PL_ERROR(g, "writing the checkpoint failed on rank 0");
    }
    if (rc == PL_OK)
        pl_info("checkpoint: wrote %s (%d basis vectors, %d cycles) in %.2f s", c->path, st->nvec, st->nhist,
                pl_wtime() - t0);
out:
    if (f >= 0) {
        H5Fclose(f);
        unlink(tmp);
    }
    free(blocks);
    free(perm);
    free(orig);
    return rc;
}

int app_ckpt_callback(void *arg, const lz_state *st, int *stop)
{
    app_ckpt *c = arg;
    app_ctx *ctx = c->ctx;
    int v[2] = {stop_flag != 0, 0};
    if (ctx->rank == 0 && c->interval > 0 && pl_wtime() - c->last >= c->interval) v[1] = 1;
    PL_CHECK(MPI_Allreduce(MPI_IN_PLACE, v, 2, MPI_INT, MPI_MAX, ctx->comm) == MPI_SUCCESS, PL_ERR_MPI,
             "MPI_Allreduce of the checkpoint flags failed");
    *stop = 0;
    if (!v[0] && !v[1]) return PL_OK;
    PL_CALL(write_ckpt(c, st));
    c->written++;
    c->last = pl_wtime();
    if (v[0]) {
        *stop = 1;
        c->stopped = 1;
    }
    return PL_OK;
}

int app_ckpt_exists(app_ctx *ctx, const char *path, int *exists, int *point)
{
    int64_t v[2] = {0, -1};
    char msg[1400] = "";
    if (ctx->rank == 0 && access(path, F_OK) == 0) {
        v[0] = 1;
        pl_h5_quiet();
        hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
        if (f < 0 || pl_h5_attr_get_int(f, "point", &v[1], path) != PL_OK) {
            snprintf(msg, sizeof msg, "%s: not a readable pjds-lanczos checkpoint (remove it, or resume from another)",
                     path);
            pl_error_clear();
        }
        if (f >= 0) H5Fclose(f);
    }
    PL_CHECK(MPI_Bcast(v, 2, MPI_INT64_T, 0, ctx->comm) == MPI_SUCCESS &&
                 MPI_Bcast(msg, sizeof msg, MPI_CHAR, 0, ctx->comm) == MPI_SUCCESS,
             PL_ERR_MPI, "MPI_Bcast failed");
    PL_CHECK(!msg[0], PL_ERR_INPUT, "%s", msg);
    *exists = (int)v[0];
    *point = (int)v[1];
    return PL_OK;
}

void app_text_difference(const char *a, const char *b, const char *a_name, char *out, size_t len)
{
    char sec[64] = "";
    while (*a || *b) {
        size_t na = strcspn(a, "\n"), nb = strcspn(b, "\n");
        if (na != nb || strncmp(a, b, na)) {
            snprintf(out, len, "%s has %s%s'%.*s', this run '%.*s'", a_name, sec, sec[0] ? " " : "", (int)na, a,
                     (int)nb, b);
            return;
        }
        if (a[0] == '[') snprintf(sec, sizeof sec, "%.*s", (int)(na < 60 ? na : 60), a);
        a += na + (a[na] == '\n');
        b += nb + (b[nb] == '\n');
    }
    snprintf(out, len, "the texts differ");
}

int app_ckpt_precheck(app_ctx *ctx, const char *path, int point, const char *sweep_hash)
{
    char msg[1500] = "";
    if (ctx->rank == 0) {
        char *want = pl_config_result_text(&ctx->cfg, 0), *cfg = NULL, *sh = NULL;
        int64_t pt = -2;
        pl_h5_quiet();
        hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
        if (!want) snprintf(msg, sizeof msg, "out of host memory");
        else if (f < 0 || pl_h5_attr_get_string(f, "config", &cfg, path) || pl_h5_attr_get_string(f, "sweep_hash", &sh, path) ||
                 pl_h5_attr_get_int(f, "point", &pt, path)) {
            pl_error_clear();
            snprintf(msg, sizeof msg, "%s: not a readable pjds-lanczos checkpoint (remove it to start afresh)", path);
        } else if (strcmp(cfg, want)) {
            char d[1000];
            app_text_difference(cfg, want, "the checkpoint", d, sizeof d);
            snprintf(msg, sizeof msg, "%s: made with a different configuration: %s", path, d);
        } else if (pt != point || strcmp(sh, sweep_hash ? sweep_hash : "")) {
            snprintf(msg, sizeof msg, "%s: belongs to point %lld of sweep '%s', not to point %d of sweep '%s'", path,
                     (long long)pt, sh, point, sweep_hash ? sweep_hash : "");
        }
        if (f >= 0) H5Fclose(f);
        free(want);
        free(cfg);
        free(sh);
    }
    PL_CHECK(MPI_Bcast(msg, sizeof msg, MPI_CHAR, 0, ctx->comm) == MPI_SUCCESS, PL_ERR_MPI, "MPI_Bcast failed");
    PL_CHECK(!msg[0], PL_ERR_INPUT, "%s", msg);
    return PL_OK;
}

/* Rank 0: open and check the checkpoint; meta = method nev ncv which nvec
 * hist_nev nint ndbl nhist has_imag.  PL_ERR_INPUT with the reason. */
static int open_check(app_ckpt *c, hid_t *fp, int64_t meta[10])
{
    const char *p = c->path;
    pl_h5_quiet();
    hid_t f = H5Fopen(p, H5F_ACC_RDONLY, H5P_DEFAULT);
    PL_CHECK(f >= 0, PL_ERR_INPUT, "%s: cannot open the checkpoint (not an HDF5 file?)", p);
    *fp = f;
    char *fmt = NULL, *cfg = NULL, *sh = NULL;
    int rc = PL_OK;
    int64_t point = -2, rows = -1, ver = 0;
    PL_CALL_GOTO(pl_h5_attr_get_string(f, "format", &fmt, p), out, rc);
    PL_CHECK_GOTO(!strcmp(fmt, CKPT_FORMAT), PL_ERR_INPUT, out, rc, "%s: not a pjds-lanczos checkpoint (format '%s')", p,
                  fmt);
    PL_CALL_GOTO(pl_h5_attr_get_int(f, "format_version", &ver, p), out, rc);
    PL_CHECK_GOTO(ver == CKPT_VERSION, PL_ERR_INPUT, out, rc, "%s: checkpoint format version %lld, this program reads %d",
                  p, (long long)ver, CKPT_VERSION);
    PL_CALL_GOTO(pl_h5_attr_get_string(f, "config", &cfg, p), out, rc);
    if (strcmp(cfg, c->config_text)) {
        char d[1000];
        app_text_difference(cfg, c->config_text, "the checkpoint", d, sizeof d);
        rc = PL_ERROR(PL_ERR_INPUT, "%s: made with a different configuration: %s", p, d);
        goto out;
    }
    PL_CALL_GOTO(pl_h5_attr_get_string(f, "sweep_hash", &sh, p), out, rc);
    PL_CALL_GOTO(pl_h5_attr_get_int(f, "point", &point, p), out, rc);
    PL_CHECK_GOTO(point == c->point && !strcmp(sh, c->sweep_hash), PL_ERR_INPUT, out, rc,
                  "%s: belongs to point %lld of sweep '%s', not to point %d of sweep '%s'", p, (long long)point, sh,
                  c->point, c->sweep_hash);
    PL_CALL_GOTO(pl_h5_attr_get_int(f, "rows", &rows, p), out, rc);
    pl_op_info info;
    pl_op_get_info(c->op, &info);
    PL_CHECK_GOTO(rows == info.n_global, PL_ERR_INPUT, out, rc, "%s: made for N = %lld rows, this matrix has %lld", p,
                  (long long)rows, (long long)info.n_global);
    const char *names[] = {"method", "nev", "ncv", "which", "nvec", "hist_nev"};
    for (int i = 0; i < 6; i++) PL_CALL_GOTO(pl_h5_attr_get_int(f, names[i], &meta[i], p), out, rc);
    int rk;
    hsize_t d[2];
    PL_CALL_GOTO(pl_h5_shape(f, "/state/ints", &rk, d, p), out, rc);
    meta[6] = (int64_t)d[0];
    PL_CALL_GOTO(pl_h5_shape(f, "/state/dbl", &rk, d, p), out, rc);
    meta[7] = (int64_t)d[0];
    PL_CALL_GOTO(pl_h5_shape(f, "/history/iterations", &rk, d, p), out, rc);
    meta[8] = (int64_t)d[0];
    meta[9] = pl_h5_exists(f, "/history/ritz_imag");
    PL_CHECK_GOTO(meta[4] >= 1 && meta[4] <= meta[2] + 1 && meta[6] <= LZ_STATE_INTS && meta[5] >= 0 && meta[5] < 100000,
                  PL_ERR_INPUT, out, rc, "%s: inconsistent sizes (nvec %lld, ncv %lld, %lld ints)", p,
                  (long long)meta[4], (long long)meta[2], (long long)meta[6]);
    PL_CALL_GOTO(pl_h5_shape(f, "/basis", &rk, d, p), out, rc);
    PL_CHECK_GOTO(rk == 2 && d[0] == (hsize_t)meta[4] && d[1] == (hsize_t)rows, PL_ERR_INPUT, out, rc,
                  "%s: dataset /basis is not %lld x %lld", p, (long long)meta[4], (long long)rows);
out:
    free(fmt);
    free(cfg);
    free(sh);
    return rc;
}

int app_ckpt_load(app_ckpt *c, lz_state *st)
{
    app_ctx *ctx = c->ctx;
    pl_backend *be = pl_op_backend(c->op);
    const int64_t *gidx = pl_op_global_index(c->op);
    memset(st, 0, sizeof *st);
    int64_t meta[10] = {0}, *blocks = NULL;
    double *orig = NULL, *perm = NULL;
    hid_t f = -1;
    int rc = PL_OK, rc0 = PL_OK;
    char msg[1500] = "";
    if (ctx->rank == 0) {
        rc0 = open_check(c, &f, meta);
        if (rc0 != PL_OK) {
            snprintf(msg, sizeof msg, "%s", pl_error_message());
            pl_error_clear();
        }
    }
    PL_CHECK(MPI_Bcast(msg, sizeof msg, MPI_CHAR, 0, ctx->comm) == MPI_SUCCESS &&
                 MPI_Bcast(meta, 10, MPI_INT64_T, 0, ctx->comm) == MPI_SUCCESS,
             PL_ERR_MPI, "MPI_Bcast failed");
    if (msg[0]) {
        if (f >= 0) H5Fclose(f);
        return PL_ERROR(rc0 ? rc0 : PL_ERR_INPUT, "%s", msg);
    }
    st->method = (int)meta[0];
    st->nev = (int)meta[1];
    st->ncv = (int)meta[2];
    st->which = (int)meta[3];
    st->nvec = (int)meta[4];
    st->hist_nev = (int)meta[5];
    st->nint = (int)meta[6];
    st->ndbl = (int)meta[7];
    st->nhist = (int)meta[8];
    size_t nh = (size_t)st->nhist * (size_t)st->hist_nev;
    st->dbl = malloc(((size_t)st->ndbl + 1) * sizeof *st->dbl);
    st->hist_iterations = malloc(((size_t)st->nhist + 1) * sizeof *st->hist_iterations);
    st->hist_ritz = malloc((nh + 1) * sizeof(double));
    st->hist_resid = malloc((nh + 1) * sizeof(double));
    if (meta[9]) st->hist_ritz_imag = malloc((nh + 1) * sizeof(double));
    int ok = st->dbl && st->hist_iterations && st->hist_ritz && st->hist_resid && (!meta[9] || st->hist_ritz_imag);
    PL_CHECK_GOTO(ok, PL_ERR_MEM, out, rc, "out of host memory for the checkpoint");
    if (ctx->rank == 0) { /* sizes were checked; a read failure is a damaged file */
        const char *p = c->path;
        rc0 = pl_h5_read(f, "/state/ints", H5T_NATIVE_INT64, (size_t)st->nint, st->ints, p);
        if (!rc0) rc0 = pl_h5_read(f, "/state/dbl", H5T_NATIVE_DOUBLE, (size_t)st->ndbl, st->dbl, p);
        if (!rc0) rc0 = pl_h5_read(f, "/history/iterations", H5T_NATIVE_INT64, (size_t)st->nhist, st->hist_iterations, p);
        if (!rc0) rc0 = pl_h5_read(f, "/history/ritz", H5T_NATIVE_DOUBLE, nh, st->hist_ritz, p);
        if (!rc0) rc0 = pl_h5_read(f, "/history/resid", H5T_NATIVE_DOUBLE, nh, st->hist_resid, p);
        if (!rc0 && meta[9]) rc0 = pl_h5_read(f, "/history/ritz_imag", H5T_NATIVE_DOUBLE, nh, st->hist_ritz_imag, p);
    }
    {
        int g = rc0;
        PL_CHECK_GOTO(MPI_Bcast(&g, 1, MPI_INT, 0, ctx->comm) == MPI_SUCCESS, PL_ERR_MPI, out, rc, "MPI_Bcast failed");
        if (g != PL_OK) {
            rc = ctx->rank == 0 ? rc0 : PL_ERROR(g, "reading the checkpoint failed on rank 0");
            goto out;
        }
    }
    PL_CHECK_GOTO(MPI_Bcast(st->ints, st->nint, MPI_INT64_T, 0, ctx->comm) == MPI_SUCCESS &&
                      MPI_Bcast(st->dbl, st->ndbl, MPI_DOUBLE, 0, ctx->comm) == MPI_SUCCESS &&
                      MPI_Bcast(st->hist_iterations, st->nhist, MPI_INT64_T, 0, ctx->comm) == MPI_SUCCESS &&
                      MPI_Bcast(st->hist_ritz, (int)nh, MPI_DOUBLE, 0, ctx->comm) == MPI_SUCCESS &&
                      MPI_Bcast(st->hist_resid, (int)nh, MPI_DOUBLE, 0, ctx->comm) == MPI_SUCCESS &&
                      (!meta[9] || MPI_Bcast(st->hist_ritz_imag, (int)nh, MPI_DOUBLE, 0, ctx->comm) == MPI_SUCCESS),
                  PL_ERR_MPI, out, rc, "MPI_Bcast of the checkpoint state failed");
    /* the basis: rank 0 reads each rank's rows of each vector and sends them */
    pl_op_info info;
    PL_CALL_GOTO(slices(c, &blocks, &info, &perm, &orig), out, rc);
    int64_t n = info.n_local;
    st->ld = n > 0 ? (size_t)n : 1;
    double *V = NULL;
    PL_CALL_GOTO(be->vec_alloc(be, st->ld * (size_t)st->nvec, &V), out, rc);
    st->V = V;
    for (int j = 0; j < st->nvec; j++) {
        if (ctx->rank == 0) {
            for (int r = ctx->size - 1; r >= 0; r--) { /* rank 0's own rows last: they stay in orig */
                int e = pl_h5_row_read(f, "/basis", (hsize_t)j, (hsize_t)blocks[2 * r], (hsize_t)blocks[2 * r + 1],
                                       orig, c->path);
                if (e && rc0 == PL_OK) rc0 = e;
                if (r > 0)
                    PL_CHECK_GOTO(MPI_Send(orig, (int)blocks[2 * r + 1], MPI_DOUBLE, r, 400 + j, ctx->comm) == MPI_SUCCESS,
                                  PL_ERR_MPI, out, rc, "MPI_Send of a basis block failed");
            }
        } else {
            PL_CHECK_GOTO(MPI_Recv(orig, (int)n, MPI_DOUBLE, 0, 400 + j, ctx->comm, MPI_STATUS_IGNORE) == MPI_SUCCESS,
                          PL_ERR_MPI, out, rc, "MPI_Recv of a basis block failed");
        }
        for (int64_t p = 0; p < n; p++) perm[p] = orig[gidx[p] - info.row0];
        PL_CALL_GOTO(be->upload(be, V + (size_t)j * st->ld, perm, (size_t)n), out, rc);
    }
    {
        int g = rc0;
        PL_CHECK_GOTO(MPI_Bcast(&g, 1, MPI_INT, 0, ctx->comm) == MPI_SUCCESS, PL_ERR_MPI, out, rc, "MPI_Bcast failed");
        if (g != PL_OK) rc = ctx->rank == 0 ? rc0 : PL_ERROR(g, "reading the checkpoint failed on rank 0");
    }
out:
    if (f >= 0) H5Fclose(f);
    free(blocks);
    free(orig);
    free(perm);
    if (rc != PL_OK) app_ckpt_state_free(c, st);
    return rc;
}

void app_ckpt_state_free(app_ckpt *c, lz_state *st)
{
    if (st->V && c->op) {
        pl_backend *be = pl_op_backend(c->op);
        be->vec_free(be, (double *)st->V);
    }
    free(st->dbl);
    free(st->hist_iterations);
    free(st->hist_ritz);
    free(st->hist_resid);
    free(st->hist_ritz_imag);
    memset(st, 0, sizeof *st);
}

void app_ckpt_remove(app_ctx *ctx, const char *path)
{
    if (ctx->rank == 0 && unlink(path) == 0) pl_debug("checkpoint: removed %s", path);
}
