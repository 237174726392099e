/* app_backend.c — the backend of [spmv] backend, made in a background
 * thread while the process starts MPI and generates the rows (issue 25,
 * "Start-up"; docs/operations.md, "Start-up").
 *
 * A job in two stages: (1) the device count (cudaGetDeviceCount: the CUDA
 * driver's initialisation) and this rank's "more ranks on the node than
 * GPUs" verdict, (2) pl_backend_create (the CUDA context, cuBLAS).
 * app_backend_start starts it as soon as the configuration is known (main.c:
 * solve, spectral, dos); app_backend_check (collective, before the build)
 * waits for stage 1 only, makes the MPI check and reports a backend that
 * cannot be made at all (no CUDA build, no device) exactly as before;
 * app_backend_finish (after the build) joins the thread and hands the
 * backend over.  The error record (core/pl_error.c) is thread-local: the
 * thread copies its message and the main thread records it again, so it
 * prints as the same one line.  The cpu kind needs no thread (its creation
 * takes microseconds): it is made at app_backend_finish.
 *
 * The environment: Open MPI's start calls setenv, and glibc before 2.40
 * frees the array a getenv in another thread may be reading, so there the
 * thread waits for MPI first (app_mpi_wait_env) and overlaps only the
 * generation of the rows; with glibc 2.40 or later it overlaps both.
 *
 * cudaSetDevice is per thread: the thread that made the context leaves the
 * main thread on device 0, so app_backend_finish calls the backend's
 * mem_info (cudaSetDevice + cudaMemGetInfo) in the calling thread. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "pl_build.h"
#include "pl_error.h"
#include "spmv.h"

typedef struct app_backend_job {
    pthread_t tid;
    int threaded;        /* tid is a thread to join                       */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    app_ctx *ctx;        /* only for app_mpi_wait_env                     */
    int kind, local_rank, local_size;         /* copied at the start      */
    int counted, nd, bad;                     /* stage 1                  */
    int done, rc;                             /* stage 2                  */
    char msg[1024];      /* the thread's error message (rc != PL_OK)      */
    pl_backend *be;
    double seconds;      /* device count + creation                       */
} app_backend_job;

int app_backend_kind(const pl_config *cfg)
{
    /* [solver] reproducible: exact reductions exist on the cpu backend only, so auto means cpu */
    return cfg->solver.reproducible && cfg->spmv.backend == PL_BACKEND_AUTO ? PL_BACKEND_CPU : cfg->spmv.backend;
}

static int uses_gpu(int kind, int nd) { return kind == PL_BACKEND_CUDA || (kind == PL_BACKEND_AUTO && nd > 0); }

static void job_lock(app_backend_job *j, int lock)
{
    /* a mutex that cannot be locked is a broken process: say so and stop */
    int e = lock ? pthread_mutex_lock(&j->mu) : pthread_mutex_unlock(&j->mu);
    if (e != 0) {
        fprintf(stderr, "pjds-lanczos: error: pthread_mutex_%s of the backend job failed (%s)\n",
                lock ? "lock" : "unlock", strerror(e));
        abort();
    }
}

static void job_publish(app_backend_job *j)
{
    int e = pthread_cond_broadcast(&j->cv);
    if (e != 0) {
        fprintf(stderr, "pjds-lanczos: error: pthread_cond_broadcast of the backend job failed (%s)\n", strerror(e));
        abort();
    }
}

/* Both stages; in the thread, or in the caller for the cpu kind. */
static void job_run(app_backend_job *j)
{
    app_mpi_wait_env(j->ctx); /* no getenv while Open MPI's start calls setenv */
    const double t0 = pl_wtime();
    /* one GPU per rank, chosen by the node-local rank; never share, except
     * for tests of the multi-rank code on a one-GPU machine
     * (PJDS_SHARE_GPUS=1: ranks take GPU local_rank % count; timings then
     * mean nothing) */
    const char *share = getenv("PJDS_SHARE_GPUS");
    const int shared = share && !strcmp(share, "1");
    const int nd = j->kind == PL_BACKEND_CPU ? 0 : pl_cuda_device_count();
    const int bad = uses_gpu(j->kind, nd) && nd > 0 && j->local_size > nd && !shared;
    job_lock(j, 1);
    j->counted = 1;
    j->nd = nd;
    j->bad = bad;
    job_publish(j);
    job_lock(j, 0);
    pl_backend *be = NULL;
    int rc = bad ? PL_OK : pl_backend_create(j->kind, j->local_rank, &be); /* bad: reported by app_backend_check */
    job_lock(j, 1);
    if (rc != PL_OK) snprintf(j->msg, sizeof j->msg, "%s", pl_error_message());
    pl_error_clear();
    j->rc = rc;
    j->be = be;
    j->seconds = pl_wtime() - t0;
    j->done = 1;
    job_publish(j);
    job_lock(j, 0);
}

static void *job_main(void *arg)
{
    job_run(arg);
    return NULL;
}

/* Wait for stage 1 or 2; a job without a thread runs here. */
static void job_wait(app_backend_job *j, int stage)
{
    if (!j->threaded) {
        if (!j->done) job_run(j);
        return;
    }
    job_lock(j, 1);
    while (stage == 1 ? !j->counted : !j->done) {
        int e = pthread_cond_wait(&j->cv, &j->mu);
        if (e != 0) {
            fprintf(stderr, "pjds-lanczos: error: pthread_cond_wait of the backend job failed (%s)\n", strerror(e));
            abort();
        }
    }
    job_lock(j, 0);
}

/* Join the thread (after stage 2) and free the job; its backend goes to
 * *be (NULL: destroyed). */
static int job_end(app_ctx *ctx, pl_backend **be)
{
    app_backend_job *j = ctx->be_job;
    ctx->be_job = NULL;
    int e = 0;
    if (j->threaded) e = pthread_join(j->tid, NULL);
    if (be) *be = j->be;
    else pl_backend_destroy(&j->be);
    (void)pthread_mutex_destroy(&j->mu);
    (void)pthread_cond_destroy(&j->cv);
    free(j);
    PL_CHECK(e == 0, PL_ERR_INTERNAL, "pthread_join of the backend thread failed (%s)", strerror(e));
    return PL_OK;
}

int app_backend_start(app_ctx *ctx)
{
    if (ctx->be_job) return PL_OK;
    app_backend_job *j = calloc(1, sizeof *j);
    PL_CHECK(j, PL_ERR_MEM, "out of host memory");
    int e = pthread_mutex_init(&j->mu, NULL);
    if (e == 0 && (e = pthread_cond_init(&j->cv, NULL)) != 0) (void)pthread_mutex_destroy(&j->mu);
    if (e != 0) {
        free(j);
        return PL_ERROR(PL_ERR_INTERNAL, "pthread_mutex_init/pthread_cond_init of the backend job failed (%s)",
                        strerror(e));
    }
    j->ctx = ctx;
    j->kind = app_backend_kind(&ctx->cfg);
    j->local_rank = ctx->local_rank;
    j->local_size = ctx->local_size;
    ctx->be_job = j;
    if (j->kind == PL_BACKEND_CPU) return PL_OK; /* made by app_backend_finish */
    /* SIGUSR1/SIGTERM go to the main thread (checkpoint.c), not to this one */
    sigset_t block, old;
    sigemptyset(&block);
    sigaddset(&block, SIGUSR1);
    sigaddset(&block, SIGTERM);
    int se = pthread_sigmask(SIG_BLOCK, &block, &old);
    e = pthread_create(&j->tid, NULL, job_main, j);
    if (se == 0) (void)pthread_sigmask(SIG_SETMASK, &old, NULL);
    j->threaded = e == 0; /* else made synchronously at app_backend_check */
    if (e != 0) pl_debug("backend: pthread_create failed (%s); the backend is made without a thread", strerror(e));
    return PL_OK;
}

/* The thread's error, recorded again in this thread, with the config place
 * of [spmv] backend (as app_backend_create always did). */
static int job_error(app_ctx *ctx, int rc, const char *msg)
{
    pl_error_set(rc, __FILE__, __LINE__, __func__, "%s", msg);
    return app_param_error(&ctx->cfg, "spmv", "backend", rc);
}

int app_backend_check(app_ctx *ctx)
{
    PL_CALL(app_backend_start(ctx));
    app_backend_job *j = ctx->be_job;
    job_wait(j, 1); /* cpu, or no thread could be started: made here */
    const int kind = j->kind, nd = j->nd;
    if (uses_gpu(kind, nd)) {
        int bad = j->bad, any = 0;
        PL_CHECK(MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, ctx->comm) == MPI_SUCCESS, PL_ERR_MPI,
                 "MPI_Allreduce failed");
        char host[MPI_MAX_PROCESSOR_NAME] = "";
        int hl = 0;
        PL_CHECK(MPI_Get_processor_name(host, &hl) == MPI_SUCCESS, PL_ERR_MPI, "MPI_Get_processor_name failed");
        PL_CHECK(!bad, PL_ERR_INPUT,
                 "%d ranks run on node %s but it has %d GPU(s): start one rank per GPU, or set [spmv] backend = cpu",
                 ctx->local_size, host, nd);
        PL_CHECK(!any, PL_ERR_INPUT, "some node has more ranks than GPUs: start one rank per GPU, or set [spmv] backend = cpu");
    }
    /* a backend that cannot be made at all fails at once (pl_backend_create's
     * first checks): reported here, before the build, as it always was */
    if (kind == PL_BACKEND_CUDA && (!PJDS_HAVE_CUDA || nd == 0)) {
        job_wait(j, 2);
        if (j->rc != PL_OK) {
            char msg[1024];
            int rc = j->rc;
            snprintf(msg, sizeof msg, "%s", j->msg);
            PL_CALL(job_end(ctx, NULL));
            return job_error(ctx, rc, msg);
        }
    }
    return PL_OK;
}

int app_backend_finish(app_ctx *ctx, pl_backend **be, double *seconds, double *wait_seconds)
{
    *be = NULL;
    if (!ctx->be_job) PL_CALL(app_backend_check(ctx));
    app_backend_job *j = ctx->be_job;
    const double t0 = pl_wtime();
    job_wait(j, 2);
    const double waited = pl_wtime() - t0;
    const int rc = j->rc;
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", j->msg);
    if (seconds) *seconds = j->seconds;
    if (wait_seconds) *wait_seconds = waited;
    pl_backend *b = NULL;
    PL_CALL(job_end(ctx, &b));
    if (rc != PL_OK) return job_error(ctx, rc, msg);
    PL_CHECK(b, PL_ERR_INTERNAL, "the backend job ended without a backend");
    if (b->mem_info) { /* cudaSetDevice in this thread (the context was made in another) */
        int dev = 0;
        size_t fr = 0, tot = 0;
        int e = b->mem_info(b, &dev, &fr, &tot);
        if (e != PL_OK) {
            pl_backend_destroy(&b);
            PL_CALL(e);
        }
    }
    *be = b;
    return PL_OK;
}

void app_backend_discard(app_ctx *ctx)
{
    if (!ctx->be_job) return;
    if (job_end(ctx, NULL) != PL_OK) pl_error_report();
}

int app_backend_gpu_planned(app_ctx *ctx)
{
    if (ctx->plan_be) return strcmp(ctx->plan_be->name, "cpu") != 0;
    const int kind = app_backend_kind(&ctx->cfg);
    if (ctx->be_job) { /* the count of the job (app_backend_check waited for it) */
        job_wait(ctx->be_job, 1);
        return uses_gpu(ctx->be_job->kind, ctx->be_job->nd);
    }
    return kind == PL_BACKEND_CUDA || (kind == PL_BACKEND_AUTO && pl_cuda_device_count() > 0);
}

int app_backend_create(app_ctx *ctx, pl_backend **be)
{
    PL_CALL(app_backend_check(ctx));
    PL_CALL(app_backend_finish(ctx, be, NULL, NULL));
    return PL_OK;
}
