/* solve_impl.h — the steps of `solve` that a single solve (cmd_solve.c) and
 * a sweep (cmd_sweep.c) share: build the operator, run the eigensolver,
 * write one result file, print the summary.  Private to app/. */
#ifndef PL_SOLVE_IMPL_H
#define PL_SOLVE_IMPL_H

#include "app.h"
#include "lanczos.h"
#include "spmv.h"

/* What one solve learned, for the attributes and the summary. */
typedef struct solve_facts {
    app_matrix_info mi;
    char method_note[480]; /* "solve: matrix ... is symmetric (...): method ..." (choose_method) */
    int point_file;        /* a sweep's point file (cmd_sweep.c): written without dimension scales */
    pjds_stats st;
    int64_t stored_entries; /* sum over ranks of the operator's stored entries */
    double permute_seconds, solve_seconds, t_write0;
    double backend_seconds; /* making the backend (CUDA context, libraries), in its thread */
    double backend_wait_seconds; /* the build's wait for it (app_backend_finish) */
    int64_t sort_window;    /* the operator's, auto resolved */
    int format;             /* the operator's local format (PL_FORMAT_PJDS or _COMPRESSED) */
    int kron_split;         /* matrix_free on several ranks: PL_KRON_SPLIT_LEFT or _RIGHT; -1: none */
    int64_t cmp_nval, cmp_noff; /* table sizes (max over ranks; -1: not counted) */
    int cmp_vbits, cmp_obits;
    double matrix_bytes;    /* sum over ranks of the operator's matrix bytes */
    char format_note[160];
    int64_t spmv_count;     /* the solve's products (before a checkpoint too) */
    int64_t spmv_run;       /* those of this run: the time and rate below      */
    double spmv_seconds, spmv_gflops, spmv_median, spmv_first, spmv_max;
    const char *backend;
    int exchange, transport;
    int method;             /* PL_METHOD_LANCZOS or PL_METHOD_KRYLOV_SCHUR       */
    int cplx;               /* nonsymmetric problem: complex output              */
    double device_used;     /* GPU memory in use after the solve (total - free,  */
                            /* the context included; max over ranks), 0: cpu    */
} solve_facts;

/* The basis size a solve will use (lanczos.h: ncv, or auto max(2 nev + 10,
 * the method's floor)), capped at N, for the memory plans: method the
 * chosen one (solve_facts.method) or, before the matrix is checked, the
 * configuration's; auto takes Krylov-Schur's larger floor unless the model
 * is a generated Holstein-Hubbard one (symmetric: Lanczos). */
static inline int64_t solve_ncv(const pl_config *cfg, int method, int64_t N)
{
    const int lz = method == PL_METHOD_LANCZOS ||
                   (method == PL_METHOD_AUTO && cfg->model.type == PL_MODEL_HOLSTEIN_HUBBARD);
    const int64_t ncv = cfg->solver.ncv ? cfg->solver.ncv : lz_ncv_auto(cfg->solver.nev, lz ? LZ_NCV_FLOOR : KS_NCV_FLOOR);
    return ncv > N ? N : ncv;
}

/* Build this rank's rows of ctx->cfg's matrix (with value terms when
 * ctx->build_terms), check nev < N, the storage statistics and the method,
 * and create the backend when *be is NULL.  Collective. */
int solve_build(app_ctx *ctx, pl_csr *rows, pl_backend **be, solve_facts *f);
/* Check the device memory and create the operator of rows on be; rows are
 * freed; the permute time goes into f.  Collective. */
int solve_make_op(app_ctx *ctx, pl_csr *rows, pl_backend *be, pl_op **op, solve_facts *f);

/* What a solve does besides the plain run. */
typedef struct solve_extra {
    lz_checkpoint_fn checkpoint;  /* NULL = none */
    void *checkpoint_arg;
    const lz_state *resume;       /* NULL = start afresh */
    const double *start;          /* warm start columns (backend), NULL = none */
    int nstart;
    size_t start_ld;
    int want_vectors;             /* keep res->vectors even without [output] eigenvectors */
    lz_poll_fn poll;              /* NULL = none; called with checkpoint_arg */
    struct pl_st *st;             /* a spectral transformation (solve_st.c): op is its */
    int st_which;                 /* operator, pl_st_solve runs with this order        */
    int st_b_inner;               /* Lanczos in the B-inner product (a definite pair): */
                                  /* full reorthogonalisation unless configured        */
} solve_extra;

/* Warm start of sweep points: the random part added to the sum of the
 * previous point's eigenvectors (lz_options start_noise). */
#define APP_WARM_START_NOISE 1e-2

/* Run the configured method on op; the counters of f are filled.  Not
 * converging is not an error; res->reason == LZ_CHECKPOINTED means it
 * stopped at a checkpoint.  Collective. */
int solve_run(app_ctx *ctx, pl_op *op, solve_facts *f, const solve_extra *x, lz_result *res);

/* Extra root attributes of a result file (sweep points), written by rank 0. */
struct pl_spectrum;
typedef int (*solve_attr_fn)(void *arg, struct pl_spectrum *sp);

/* Write the result file `path` (atomically: temporary name, moved into
 * place when complete; replace = 0: never over a file that appeared during
 * the run, io/pl_place.h) with [output] eigenvectors of ctx->cfg.  Rank 0
 * writes; the eigenvector pieces come from every rank.  Returns the status
 * on every rank: rank 0's error on rank 0, PL_OK elsewhere, except a
 * refused placement: PL_ERR_INPUT on every rank (app_agree_placement).
 * Collective. */
int solve_write(app_ctx *ctx, const char *path, int replace, pl_op *op, const lz_result *res, solve_facts *f,
                solve_attr_fn extra, void *extra_arg);

/* [solver] method = chebfd (solve_chebfd.c): plan, memory check, solve,
 * result file and report.  Collective. */
int solve_chebfd(app_ctx *ctx, pl_op *op, solve_facts *f, int replace);
/* PL_ERR_INPUT (one line naming [solver] search_size) when `bytes` (the
 * chebfd search block of nb vectors, this rank) exceed 90 % of what is
 * free: the GPU's free memory (PJDS_DEVICE_MEMORY_LIMIT caps it), else
 * MemAvailable over the node's ranks (PJDS_HOST_MEMORY_LIMIT caps it, for
 * tests).  mem_plan.c.  Collective. */
int app_mem_check_search(app_ctx *ctx, pl_backend *be, double bytes, int nb);

/* stdout eigenvalue lines and the stderr summary (rank 0). */
void solve_report(app_ctx *ctx, const lz_result *res, const solve_facts *f, const char *path);

/* max of t over the ranks (t itself if MPI fails). */
double app_max_over_ranks(app_ctx *ctx, double t);

/* ---- checkpoints (checkpoint.c; docs/operations.md "Checkpoint and restart") ---- */
/* Install the SIGUSR1/SIGTERM handlers (main.c, for solve, spectral and
 * dos), in an exit phase "the start-up".  Can't fail. */
void app_signals_install(int rank);
/* An exit phase: nothing to save, no file is being written; a signal ends
 * the run at once with status 3 and, on rank 0, the one line
 * "pjds-lanczos: stopped by SIGTERM during <phase>; <note>".  A signal
 * noted before (in a flag phase) does that now.  Not async-signal-safe. */
void app_signal_exit_phase(const char *phase, const char *note);
/* A flag phase: a signal is only noted (a solve with a state to save, or a
 * result being written).  Can't fail. */
void app_signal_flag_phase(void);
/* The run ends with this status, its message printed: a signal from now on
 * (the launcher stopping the other ranks once one has exited non-zero)
 * exits with it, silently.  Can't fail. */
void app_signal_ending(int status);
/* "SIGTERM" or "SIGUSR1" when one was noted in a flag phase, else NULL. */
const char *app_signal_noted(void);
/* Rank 0: the line of an exit phase for a stop noted in a flag phase
 * (a solve stopped in its first cycle with nothing to save). */
void app_signal_say(const char *phase, const char *note);
/* Whether a stop was requested on any rank (collective, one Allreduce). */
int app_stop_requested(app_ctx *ctx, int *stop);

typedef struct app_ckpt {
    app_ctx *ctx;
    pl_op *op;
    char path[1200];        /* the checkpoint file                            */
    char *config_text;      /* result-deciding configuration (owned)          */
    int point;              /* sweep point, -1 for a single solve             */
    char sweep_hash[17];    /* "" for a single solve                          */
    double interval, last;  /* [output] checkpoint_interval; time of the last */
    int written;            /* checkpoints written                            */
    int stopped;            /* the callback asked the solver to stop          */
    lz_state state;         /* the state of the last end of a cycle (valid    */
    int have_state;         /* during the next expansion), and whether it is  */
    int state_saved;        /* in the checkpoint file already                 */
    int steps, polls, poll_every; /* app_ckpt_poll: calls in this cycle; looks */
    int calls, signal_step; /* calls in all; PJDS_TEST_SIGNAL_STEP (tests)   */
    double t_cycle, t_first, t_prev; /* when the cycle began; its first and  */
                            /* last look                                      */
    int cycles, signal_at;  /* cycle ends seen; PJDS_TEST_SIGNAL_AT (tests)   */
} app_ckpt;

/* Set up the checkpointing of one solve on op (the file: [output] file +
 * ".ckpt").  Can't fail except for memory. */
int app_ckpt_init(app_ckpt *c, app_ctx *ctx, pl_op *op, int point, const char *sweep_hash);
void app_ckpt_free(app_ckpt *c);
/* lz_checkpoint_fn: collective decision, writes the file, stops on a signal
 * (and makes sure of a flag phase: from here on there is a state to save). */
int app_ckpt_callback(void *arg, const lz_state *st, int *stop);
/* lz_poll_fn (checkpoint_arg = the app_ckpt): inside a cycle, about every
 * 0.25 s of steps a collective look at the flag; on a signal it saves the
 * state of the last end of a cycle (unless saved already) and stops.  In
 * the first cycle of a run it stops without saving (c->written unchanged)
 * unless the cycle's end, which saves, is expected within a second. */
int app_ckpt_poll(void *arg, int steps_left, int *stop);
/* Whether the checkpoint file exists (rank 0 looks, broadcast), and its
 * point (-1: a single solve).  Collective. */
int app_ckpt_exists(app_ctx *ctx, const char *path, int *exists, int *point);
/* Before any work: the checkpoint's configuration (ctx->cfg's result
 * text), point and sweep hash match this run; PL_ERR_INPUT naming the
 * first difference otherwise.  Collective. */
int app_ckpt_precheck(app_ctx *ctx, const char *path, int point, const char *sweep_hash);
/* Read the checkpoint for a resumed solve on op: the configuration must
 * match c->config_text (else PL_ERR_INPUT naming the first difference), the
 * basis is redistributed to this run's ranks and permutation.  st->V is
 * backend memory to free with app_ckpt_state_free.  Collective. */
int app_ckpt_load(app_ckpt *c, lz_state *st);
void app_ckpt_state_free(app_ckpt *c, lz_state *st);
/* Remove the checkpoint file (rank 0) after the solve it belongs to finished. */
void app_ckpt_remove(app_ctx *ctx, const char *path);

/* The first line where two configuration texts differ, with its section,
 * into out: "<a_name> has [solver] 'tolerance = 1e-10', this run
 * 'tolerance = 1e-12'".  Can't fail. */
void app_text_difference(const char *a, const char *b, const char *a_name, char *out, size_t len);

/* Exit status 3: checkpointed (or stopped between sweep points), not finished. */
#define APP_CHECKPOINTED 1000

int cmd_sweep(app_ctx *ctx);

/* solve_st.c: whether the configuration asks for a spectral transformation
 * ([solver] target with transform auto | shift_invert and a method other
 * than chebfd, or [matrix] b_file), and the single solve that runs it
 * (cmd_solve.c, after the output path check).  Collective. */
int app_st_wanted(const pl_config *cfg);
int solve_st(app_ctx *ctx, int replace);
/* A session of solves with one transformation, as a target sweep runs them
 * (cmd_sweep.c): open builds A's rows (and reads B) once; each solve takes
 * ctx->cfg's target, factors for it (the first analyses and factors; a new
 * target of the same kind, real or complex, refactors on the same
 * analysis) and writes file with the transformation's attributes and
 * extra's (may be NULL); counts: analyses and numeric factorisations so
 * far.  Collective. */
typedef struct st_session st_session;
int st_session_open(app_ctx *ctx, st_session **out);
int st_session_solve(app_ctx *ctx, st_session *s, const char *file, int replace, solve_attr_fn extra,
                     void *extra_arg, lz_result *res, solve_facts *f);
void st_session_counts(const st_session *s, int *analyses, int *factorizations);
void st_session_close(st_session **s);

#endif
