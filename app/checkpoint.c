/* checkpoint.c — checkpoint and restart of one solve (docs/operations.md,
 * "Checkpoint and restart"): the SIGUSR1/SIGTERM flag, the collective decision at the
 * end of each solver cycle, and the checkpoint file.
 *
 * Signals (docs/operations.md, "Signals and exit status 3"): what SIGUSR1 or SIGTERM
 * does depends on the phase the command has set (app_signal_exit_phase,
 * app_signal_flag_phase).  In an exit phase (start-up, build, import,
 * permutation and upload, loading a checkpoint, all of dos and spectral
 * but their write) there is nothing to save: the handler writes one
 * prebuilt line (rank 0; write(2)) and calls _exit(3), both
 * async-signal-safe.  No file is written in an exit phase (every write runs
 * in a flag phase), so none is left behind.  In a flag phase (a solve with
 * checkpoints, writing a result or the sweep file) it only sets the flag.
 * Decision: at each end of a cycle (lz_checkpoint_fn) every rank adds its
 * signal flag, rank 0 its "interval elapsed" flag, into one MPI_Allreduce;
 * a signal means save and stop (exit status 3), the interval means save and
 * go on.  Inside a cycle the solver calls app_ckpt_poll before each step;
 * every poll_every-th call (about every APP_POLL_SECONDS of steps, agreed at
 * the end of each cycle) is one MPI_Allreduce of the flag, and a signal
 * saves the state of the last end of a cycle, which the expansion leaves
 * untouched, and stops.  In the first cycle (no state yet) every call
 * looks, and a signal waits for the cycle's end (a checkpoint) only when
 * that is near, else stops with nothing saved.  Under srun every task gets
 * the signal; under mpirun one rank getting it is enough in a flag phase.
 * File: "<[output] file>.ckpt" (format: io/pl_ckptfile.h), written by rank
 * 0; each rank un-permutes its slice of every basis vector, which rank 0
 * writes as a hyperslab in the original row order, so a resumed run may
 * use a different number of ranks or another permutation (rank 0 reads
 * each rank's rows and sends them, the rank permutes them).  The root
 * attribute `config` holds the configuration that decides the result
 * (pl_config_result_text): a resume with another one is bad input naming
 * the first difference. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pl_ckptfile.h"
#include "pl_error.h"
#include "solve_impl.h"

/* a look inside a cycle about this often (seconds of expansion steps) */
#define APP_POLL_SECONDS 0.25
/* a signal in the first cycle (no state to save yet) waits for its end when
 * that is expected within this many seconds */
#define APP_FIRST_CYCLE_WAIT 1.0

static volatile sig_atomic_t stop_flag, stop_sig = SIGTERM, exit_phase, line_cur;
static volatile sig_atomic_t quiet_status = -1; /* >= 0: the run is ending with this status (app_signal_ending) */
static int sig_rank;                  /* rank 0 writes the line of an exit phase */
static char sig_line[2][1200];        /* " during <phase>; <note>\n", double buffered */

/* async-signal-safe string append */
static size_t put(char *b, size_t n, size_t cap, const char *s)
{
    while (*s && n + 1 < cap) b[n++] = *s++;
    return n;
}

/* The end of an exit phase: one line, status 3 (async-signal-safe). */
static void exit_now(int sig)
{
    if (quiet_status >= 0) _exit(quiet_status); /* its own line is out already: the launcher's stop of the rest */
    if (sig_rank == 0) {
        char b[1300];
        size_t n = put(b, 0, sizeof b, "pjds-lanczos: stopped by ");
        n = put(b, n, sizeof b, sig == SIGUSR1 ? "SIGUSR1" : "SIGTERM");
        n = put(b, n, sizeof b, sig_line[line_cur]);
        ssize_t w = write(STDERR_FILENO, b, n);
        (void)w;
    }
    _exit(3);
}

static void on_signal(int sig)
{
    if (exit_phase) exit_now(sig);
    stop_sig = sig;
    stop_flag = 1;
}

void app_signals_install(int rank)
{
    sig_rank = rank;
    app_signal_exit_phase("the start-up", "nothing to save (no solve had started); rerun to start again");
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    sigaction(SIGUSR1, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

void app_signal_exit_phase(const char *phase, const char *note)
{
    int n = !line_cur; /* the handler may be reading the other buffer */
    snprintf(sig_line[n], sizeof sig_line[n], " during %s; %s\n", phase, note);
    line_cur = n;
    exit_phase = 1;
    if (stop_flag) exit_now((int)stop_sig); /* noted in the flag phase before */
}

void app_signal_flag_phase(void) { exit_phase = 0; }

void app_signal_ending(int status)
{
    quiet_status = status;
    exit_phase = 1;
}

void app_signal_say(const char *phase, const char *note)
{
    if (sig_rank == 0)
        fprintf(stderr, "pjds-lanczos: stopped by %s during %s; %s\n", stop_sig == SIGUSR1 ? "SIGUSR1" : "SIGTERM",
                phase, note);
}

const char *app_signal_noted(void)
{
    if (!stop_flag) return NULL;
    return stop_sig == SIGUSR1 ? "SIGUSR1" : "SIGTERM";
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
    c->last = c->t_cycle = pl_wtime();
    c->poll_every = 1;
    const char *ts = getenv("PJDS_TEST_SIGNAL_STEP"); /* tests: SIGTERM before the K-th step, a look at every step */
    c->signal_step = ts && ts[0] ? atoi(ts) : 0;
    const char *at = getenv("PJDS_TEST_SIGNAL_AT"); /* tests: SIGUSR1 at the K-th end of a cycle */
    c->signal_at = at && at[0] ? atoi(at) : 0;
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
 * + 1]: the contiguous original blocks of pl_op_orig_block, which
 * pl_op_to_original / from_original fill), this rank's info, and host
 * buffers for one vector: perm (this rank's rows, permuted) and orig (the
 * longest block, original order).  Collective. */
static int slices(app_ckpt *c, int64_t **blocks, pl_op_info *info, double **perm, double **orig)
{
    app_ctx *ctx = c->ctx;
    pl_op_get_info(c->op, info);
    int64_t o0 = 0, on = 0;
    pl_op_orig_block(c->op, &o0, &on);
    int64_t mine[2] = {o0, on}, n = info->n_local, nmax = on;
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

/* Write the checkpoint of st (collective).  Rank 0 keeps receiving after an
 * error of its own so no rank hangs; the status is agreed at the end. */
static int write_ckpt(app_ckpt *c, const lz_state *st)
{
    app_ctx *ctx = c->ctx;
    pl_backend *be = pl_op_backend(c->op);
    pl_op_info info;
    int64_t *blocks = NULL;
    double *perm = NULL, *orig = NULL;
    int rc = PL_OK, rc0 = PL_OK;
    hid_t f = -1;
    double t0 = pl_wtime();
    PL_CALL_GOTO(slices(c, &blocks, &info, &perm, &orig), out, rc);
    int64_t n = info.n_local, o0 = 0, on = 0;
    pl_op_orig_block(c->op, &o0, &on);
    if (ctx->rank == 0) {
        pl_ckpt_header h = {c->config_text, c->sweep_hash, c->point, ctx->size, info.n_global, st->method, st->nev,
                            st->ncv, st->which, st->nvec, st->hist_nev, st->nint, st->ndbl, st->nhist,
                            st->hist_ritz_imag != NULL};
        pl_ckpt_arrays a = {(int64_t *)st->ints, st->dbl, st->hist_iterations, st->hist_ritz, st->hist_resid,
                            st->hist_ritz_imag};
        rc0 = pl_ckptfile_create(c->path, &h, &a, &f);
    }
    for (int j = 0; j < st->nvec; j++) {
        PL_CALL_GOTO(be->download(be, perm, st->V + (size_t)j * st->ld, (size_t)n), out, rc);
        PL_CALL_GOTO(pl_op_to_original(c->op, 1, perm, (size_t)n, orig, (size_t)on), out, rc);
        if (ctx->rank != 0) {
            PL_CHECK_GOTO(MPI_Send(orig, (int)on, MPI_DOUBLE, 0, 300 + j, ctx->comm) == MPI_SUCCESS, PL_ERR_MPI, out, rc,
                          "MPI_Send of a basis block failed");
            continue;
        }
        for (int r = 0; r < ctx->size; r++) {
            if (r > 0)
                PL_CHECK_GOTO(MPI_Recv(orig, (int)blocks[2 * r + 1], MPI_DOUBLE, r, 300 + j, ctx->comm,
                                       MPI_STATUS_IGNORE) == MPI_SUCCESS,
                              PL_ERR_MPI, out, rc, "MPI_Recv of a basis block failed");
            if (rc0 == PL_OK) rc0 = pl_ckptfile_write_rows(f, c->path, j, blocks[2 * r], blocks[2 * r + 1], orig);
        }
    }
    if (ctx->rank == 0) {
        int e = pl_ckptfile_commit(f, c->path, rc0 == PL_OK);
        f = -1;
        if (rc0 == PL_OK) rc0 = e;
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
    if (f >= 0) pl_ckptfile_commit(f, c->path, 0);
    free(blocks);
    free(perm);
    free(orig);
    return rc;
}

int app_ckpt_callback(void *arg, const lz_state *st, int *stop)
{
    app_ckpt *c = arg;
    app_ctx *ctx = c->ctx;
    app_signal_flag_phase(); /* from the first end of a cycle on there is a state to save */
    /* the steps of the cycle that ended: how many between two looks */
    const double dt = pl_wtime() - c->t_cycle, per = dt / (double)(c->steps + 1);
    int every = c->steps > 0 && per > 0.0 ? (int)fmin(fmax(APP_POLL_SECONDS / per, 1.0), 1e6) : 1;
    if (++c->cycles == c->signal_at) raise(SIGUSR1); /* as if it came now (PJDS_TEST_SIGNAL_AT) */
    int v[3] = {stop_flag != 0, 0, -every}; /* every: the least over the ranks */
    if (ctx->rank == 0 && c->interval > 0 && pl_wtime() - c->last >= c->interval) v[1] = 1;
    PL_CHECK(MPI_Allreduce(MPI_IN_PLACE, v, 3, MPI_INT, MPI_MAX, ctx->comm) == MPI_SUCCESS, PL_ERR_MPI,
             "MPI_Allreduce of the checkpoint flags failed");
    *stop = 0;
    c->poll_every = -v[2];
    c->polls = c->steps = 0;
    c->state = *st; /* what st points to stays valid during the next expansion (lz_poll_fn) */
    c->have_state = 1;
    c->state_saved = 0;
    if (!v[0] && !v[1]) {
        c->t_cycle = pl_wtime();
        return PL_OK;
    }
    PL_CALL(write_ckpt(c, st));
    c->written++;
    c->state_saved = 1;
    c->last = c->t_cycle = pl_wtime();
    if (v[0]) {
        *stop = 1;
        c->stopped = 1;
    }
    return PL_OK;
}

int app_ckpt_poll(void *arg, int steps_left, int *stop)
{
    app_ckpt *c = arg;
    *stop = 0;
    c->steps++;
    if (c->signal_step > 0 && ++c->calls == c->signal_step) raise(SIGTERM); /* PJDS_TEST_SIGNAL_STEP */
    if (c->signal_step > 0) c->poll_every = 1;
    if (!c->have_state) {
        /* the first cycle of this run: nothing to save before its end.  A
         * look at every step; with a signal, wait for the end (which saves
         * and stops) when the slowest rank expects it within
         * APP_FIRST_CYCLE_WAIT, else stop now with nothing saved.  The
         * estimate, from the second look on (no set-up in it), errs long:
         * the slower of the last step and the mean step since the first
         * look, and step costs growing with the basis (full
         * orthogonalisation: step i costs ~i, so the L steps left after s
         * cost about L (1 + L / 2s) of the last) */
        const double now = pl_wtime(), last = now - c->t_prev;
        if (c->steps == 1) c->t_first = now;
        c->t_prev = now;
        double v[2] = {stop_flag != 0, 0.0};
        if (v[0] && c->steps > 1) {
            const double mean = (now - c->t_first) / (c->steps - 1), left = steps_left;
            v[1] = fmax(last, mean) * left * (1.0 + left / (2.0 * c->steps));
        }
        PL_CHECK(MPI_Allreduce(MPI_IN_PLACE, v, 2, MPI_DOUBLE, MPI_MAX, c->ctx->comm) == MPI_SUCCESS, PL_ERR_MPI,
                 "MPI_Allreduce of the stop flag failed");
        if (v[0] > 0.0 && v[1] > APP_FIRST_CYCLE_WAIT) *stop = c->stopped = 1;
        return PL_OK;
    }
    if (++c->polls % c->poll_every) return PL_OK;
    int v = stop_flag != 0;
    PL_CHECK(MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_INT, MPI_MAX, c->ctx->comm) == MPI_SUCCESS, PL_ERR_MPI,
             "MPI_Allreduce of the stop flag failed");
    if (!v) return PL_OK;
    if (!c->state_saved) { /* the state of the last end of a cycle: the expansion left it untouched */
        PL_CALL(write_ckpt(c, &c->state));
        c->written++;
        c->state_saved = 1;
    }
    *stop = 1;
    c->stopped = 1;
    return PL_OK;
}

int app_ckpt_exists(app_ctx *ctx, const char *path, int *exists, int *point)
{
    int64_t v[2] = {0, -1};
    char msg[1400] = "";
    if (ctx->rank == 0 && access(path, F_OK) == 0) {
        pl_ckpt_header h;
        hid_t f = -1;
        v[0] = 1;
        if (pl_ckptfile_open(path, &h, &f) != PL_OK) {
            snprintf(msg, sizeof msg, "%s (remove it to start afresh)", pl_error_message());
            pl_error_clear();
        } else {
            v[1] = h.point;
            H5Fclose(f);
            pl_ckpt_header_free(&h);
        }
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

/* Rank 0: open the checkpoint and check that it belongs to this run (the
 * configuration, point, sweep and N; rows < 0: N not checked). */
static int open_check(const char *path, const char *config, int point, const char *sweep_hash, int64_t rows,
                      pl_ckpt_header *h, hid_t *f)
{
    PL_CALL(pl_ckptfile_open(path, h, f));
    int rc = PL_OK;
    if (strcmp(h->config, config)) {
        char d[1000];
        app_text_difference(h->config, config, "the checkpoint", d, sizeof d);
        rc = PL_ERROR(PL_ERR_INPUT, "%s: made with a different configuration: %s", path, d);
    } else if (h->point != point || strcmp(h->sweep_hash, sweep_hash)) {
        rc = PL_ERROR(PL_ERR_INPUT, "%s: belongs to point %lld of sweep '%s', not to point %d of sweep '%s'", path,
                      (long long)h->point, h->sweep_hash, point, sweep_hash);
    } else if (rows >= 0 && h->rows != rows) {
        rc = PL_ERROR(PL_ERR_INPUT, "%s: made for N = %lld rows, this matrix has %lld", path, (long long)h->rows,
                      (long long)rows);
    }
    if (rc != PL_OK) {
        H5Fclose(*f);
        *f = -1;
        pl_ckpt_header_free(h);
    }
    return rc;
}

int app_ckpt_precheck(app_ctx *ctx, const char *path, int point, const char *sweep_hash)
{
    char msg[1500] = "";
    if (ctx->rank == 0) {
        char *want = pl_config_result_text(&ctx->cfg, 0);
        pl_ckpt_header h;
        hid_t f = -1;
        if (!want) snprintf(msg, sizeof msg, "out of host memory");
        else if (open_check(path, want, point, sweep_hash ? sweep_hash : "", -1, &h, &f) != PL_OK) {
            snprintf(msg, sizeof msg, "%s", pl_error_message());
            pl_error_clear();
        } else {
            H5Fclose(f);
            pl_ckpt_header_free(&h);
        }
        free(want);
    }
    PL_CHECK(MPI_Bcast(msg, sizeof msg, MPI_CHAR, 0, ctx->comm) == MPI_SUCCESS, PL_ERR_MPI, "MPI_Bcast failed");
    PL_CHECK(!msg[0], PL_ERR_INPUT, "%s", msg);
    return PL_OK;
}

int app_ckpt_load(app_ckpt *c, lz_state *st)
{
    app_ctx *ctx = c->ctx;
    pl_backend *be = pl_op_backend(c->op);
    memset(st, 0, sizeof *st);
    int64_t meta[10] = {0}, *blocks = NULL;
    double *orig = NULL, *perm = NULL;
    pl_ckpt_header h;
    memset(&h, 0, sizeof h);
    hid_t f = -1;
    int rc = PL_OK, rc0 = PL_OK;
    char msg[1500] = "";
    pl_op_info info;
    pl_op_get_info(c->op, &info);
    if (ctx->rank == 0) {
        rc0 = open_check(c->path, c->config_text, c->point, c->sweep_hash, info.n_global, &h, &f);
        if (rc0 != PL_OK) {
            snprintf(msg, sizeof msg, "%s", pl_error_message());
            pl_error_clear();
        } else {
            int64_t m[10] = {h.method, h.nev, h.ncv, h.which, h.nvec, h.hist_nev, h.nint, h.ndbl, h.nhist, h.has_imag};
            memcpy(meta, m, sizeof meta);
            rc0 = h.nint <= LZ_STATE_INTS ? PL_OK : PL_ERROR(PL_ERR_INPUT, "%s: %lld state integers, at most %d", c->path,
                                                              (long long)h.nint, LZ_STATE_INTS);
        }
    }
    PL_CHECK_GOTO(MPI_Bcast(msg, sizeof msg, MPI_CHAR, 0, ctx->comm) == MPI_SUCCESS &&
                      MPI_Bcast(meta, 10, MPI_INT64_T, 0, ctx->comm) == MPI_SUCCESS,
                  PL_ERR_MPI, out, rc, "MPI_Bcast failed");
    PL_CHECK_GOTO(!msg[0], rc0 ? rc0 : PL_ERR_INPUT, out, rc, "%s", msg);
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
    if (ctx->rank == 0 && rc0 == PL_OK) { /* sizes were checked; a read failure is a damaged file */
        pl_ckpt_arrays a = {st->ints, st->dbl, st->hist_iterations, st->hist_ritz, st->hist_resid, st->hist_ritz_imag};
        rc0 = pl_ckptfile_read_arrays(f, c->path, &h, &a);
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
    PL_CALL_GOTO(slices(c, &blocks, &info, &perm, &orig), out, rc);
    int64_t n = info.n_local, o0 = 0, on = 0;
    pl_op_orig_block(c->op, &o0, &on);
    st->ld = n > 0 ? (size_t)n : 1;
    double *V = NULL;
    PL_CALL_GOTO(be->vec_alloc(be, st->ld * (size_t)st->nvec, &V), out, rc);
    st->V = V;
    for (int j = 0; j < st->nvec; j++) {
        if (ctx->rank == 0) {
            for (int r = ctx->size - 1; r >= 0; r--) { /* rank 0's own rows last: they stay in orig */
                int e = pl_ckptfile_read_rows(f, c->path, j, blocks[2 * r], blocks[2 * r + 1], orig);
                if (e && rc0 == PL_OK) rc0 = e;
                if (r > 0)
                    PL_CHECK_GOTO(MPI_Send(orig, (int)blocks[2 * r + 1], MPI_DOUBLE, r, 400 + j, ctx->comm) == MPI_SUCCESS,
                                  PL_ERR_MPI, out, rc, "MPI_Send of a basis block failed");
            }
        } else {
            PL_CHECK_GOTO(MPI_Recv(orig, (int)on, MPI_DOUBLE, 0, 400 + j, ctx->comm, MPI_STATUS_IGNORE) == MPI_SUCCESS,
                          PL_ERR_MPI, out, rc, "MPI_Recv of a basis block failed");
        }
        PL_CALL_GOTO(pl_op_from_original(c->op, 1, orig, (size_t)on, perm, (size_t)n), out, rc);
        PL_CALL_GOTO(be->upload(be, V + (size_t)j * st->ld, perm, (size_t)n), out, rc);
    }
    {
        int g = rc0;
        PL_CHECK_GOTO(MPI_Bcast(&g, 1, MPI_INT, 0, ctx->comm) == MPI_SUCCESS, PL_ERR_MPI, out, rc, "MPI_Bcast failed");
        if (g != PL_OK) rc = ctx->rank == 0 ? rc0 : PL_ERROR(g, "reading the checkpoint failed on rank 0");
    }
out:
    if (f >= 0) H5Fclose(f);
    pl_ckpt_header_free(&h);
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
