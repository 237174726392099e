/* app_start.c — the start and end of a process shared by pjds-lanczos
 * (main.c) and pjds-bench (bench/src/bench_main.c): MPI with the node-local
 * rank, the configuration file with its --set overrides, and the exit.
 * pjds-lanczos started without a launcher (a singleton) runs
 * MPI_Init_thread in a thread of its own, while the main thread parses the
 * arguments and the configuration and starts the backend (app_backend.c);
 * it waits for MPI before its first MPI call (app_mpi_ready; docs/operations.md,
 * "Start-up"). */
#define _GNU_SOURCE /* CLOCK_BOOTTIME */
#include <errno.h>
#include <ftw.h>
#ifdef __GLIBC__
#include <gnu/libc-version.h>
#endif
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "app.h"
#include "solve_impl.h"
#include "pl_error.h"
#include "pl_h5util.h"

/* no mpirun/srun/mpiexec environment: a singleton */
static int no_launcher(void)
{
    return !getenv("OMPI_COMM_WORLD_SIZE") && !getenv("PMIX_RANK") && !getenv("PMI_RANK") && !getenv("PMI_SIZE");
}

/* An isolated singleton's session directory, made for this process alone
 * (empty: none). Open MPI 4.1 names every isolated singleton [[0,1],0], so
 * without it all of them on a node share <tmp>/ompi.<host>.<uid>/jf.0/1/0,
 * and one that ends removes the directories another is creating (seen in CI:
 * "A call to mkdir was unable to create the desired directory"). */
static char singleton_dir[4096];

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    (void)remove(path);
    return 0;
}

/* removes the private session directory and what Open MPI left in it; safe
 * to call more than once (app_mpi_end, and atexit for the other exits) */
static void singleton_dir_remove(void)
{
    if (!singleton_dir[0]) return;
    (void)nftw(singleton_dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    singleton_dir[0] = '\0';
}

static int env_is(const char *name, const char *value)
{
    const char *v = getenv(name);
    return v && !strcmp(v, value);
}

/* hwloc's plugins that open GPU and accelerator libraries to list their
 * devices: Open MPI's topology discovery in MPI_Init needs none of them for
 * a process without peers, and on the H100 host they cost 0.22 s of the
 * singleton's 0.25 s MPI_Init_thread (0.027 s without; Open MPI 4.1.6 and
 * the hwloc of Ubuntu 24.04, 2026-11-25). */
#define SINGLETON_HWLOC "-cuda,-nvml,-opencl,-gl,-rsmi,-levelzero"

/* A singleton: isolated, so that Open MPI does not fork an orted first
 * (0.1 s here, more on a many-core node), the ob1 PML: a singleton has
 * no peers, and opening UCX cost 0.25 s on the H100 host (Open MPI 4.1.6),
 * and hwloc without its GPU plugins (SINGLETON_HWLOC).
 * An isolated singleton gets a session directory of its own under $TMPDIR
 * (or /tmp), pjds-mpi.XXXXXX, removed at the end. A user's setting wins. */
static void singleton_env(void)
{
    setenv("OMPI_MCA_ess_singleton_isolated", "1", 0);
    setenv("OMPI_MCA_pml", "ob1", 0);
    setenv("HWLOC_COMPONENTS", SINGLETON_HWLOC, 0);
    if (singleton_dir[0] || !env_is("OMPI_MCA_ess_singleton_isolated", "1") ||
        getenv("OMPI_MCA_orte_jobfam_session_dir") || getenv("OMPI_MCA_orte_top_session_dir"))
        return;
    const char *tmp = getenv("TMPDIR");
    if (!tmp || !*tmp) tmp = "/tmp";
    const int n = snprintf(singleton_dir, sizeof singleton_dir, "%s/pjds-mpi.XXXXXX", tmp);
    if (n <= 0 || (size_t)n >= sizeof singleton_dir || !mkdtemp(singleton_dir)) {
        singleton_dir[0] = '\0'; /* Open MPI's own directory, as before */
        return;
    }
    static int registered;
    if (!registered) registered = atexit(singleton_dir_remove) == 0;
    setenv("OMPI_MCA_orte_jobfam_session_dir", singleton_dir, 1);
}

int app_mpi_start(app_ctx *ctx, int *argc, char ***argv, int *provided)
{
    if (no_launcher()) singleton_env();
    if (MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, provided) != MPI_SUCCESS) {
        fprintf(stderr, "pjds-lanczos: error: MPI_Init_thread failed\n");
        return 1;
    }
    ctx->t_mpi_init = pl_wtime() - ctx->t_start;
    ctx->mpi_provided = *provided;
    ctx->comm = MPI_COMM_WORLD;
    MPI_Comm_rank(ctx->comm, &ctx->rank);
    MPI_Comm_size(ctx->comm, &ctx->size);
    MPI_Comm node;
    if (MPI_Comm_split_type(ctx->comm, MPI_COMM_TYPE_SHARED, ctx->rank, MPI_INFO_NULL, &node) == MPI_SUCCESS) {
        MPI_Comm_rank(node, &ctx->local_rank);
        MPI_Comm_size(node, &ctx->local_size);
        MPI_Comm_free(&node);
    } else {
        ctx->local_rank = 0;
        ctx->local_size = 1;
    }
    return 0;
}

/* A singleton's MPI thread: MPI_Init_thread, then it waits until
 * app_mpi_end asks it for MPI_Finalize (the MPI standard wants the thread
 * that initialised MPI to finalise it). */
typedef struct app_mpi_thread {
    pthread_t tid;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int ready;       /* MPI_Init_thread returned                     */
    int inited;      /* ... successfully                             */
    int finalize;    /* app_mpi_end: finalise and end                */
    int fin_rc;      /* MPI_Finalize's return code                   */
    int provided, size;
    double t_ready;  /* pl_wtime() when ready                        */
    int waited;      /* app_mpi_ready has returned                   */
    int env_overlap; /* PJDS_START_OVERLAP=1: no wait in app_mpi_wait_env */
} app_mpi_thread;

static void thr_check(int e, const char *what)
{
    if (e == 0) return;
    fprintf(stderr, "pjds-lanczos: error: %s of the MPI thread failed (%s)\n", what, strerror(e));
    abort();
}

static void *mpi_thread_main(void *arg)
{
    app_mpi_thread *m = arg;
    int provided = 0, size = 0;
    /* NULL arguments: the main thread parses argv meanwhile */
    const int inited = MPI_Init_thread(NULL, NULL, MPI_THREAD_MULTIPLE, &provided) == MPI_SUCCESS;
    if (inited && MPI_Comm_size(MPI_COMM_WORLD, &size) != MPI_SUCCESS) size = -1;
    thr_check(pthread_mutex_lock(&m->mu), "pthread_mutex_lock");
    m->t_ready = pl_wtime();
    m->inited = inited;
    m->provided = provided;
    m->size = size;
    m->ready = 1;
    thr_check(pthread_cond_broadcast(&m->cv), "pthread_cond_broadcast");
    while (!m->finalize) thr_check(pthread_cond_wait(&m->cv, &m->mu), "pthread_cond_wait");
    thr_check(pthread_mutex_unlock(&m->mu), "pthread_mutex_unlock");
    if (inited) m->fin_rc = MPI_Finalize(); /* read after pthread_join */
    return NULL;
}

int app_mpi_start_async(app_ctx *ctx, int *argc, char ***argv)
{
    if (!no_launcher()) return app_mpi_start(ctx, argc, argv, &ctx->mpi_provided);
    singleton_env();
    const char *ov = getenv("PJDS_START_OVERLAP"); /* before the thread: measurements only */
    app_mpi_thread *m = calloc(1, sizeof *m);
    int e = m ? pthread_mutex_init(&m->mu, NULL) : ENOMEM;
    if (m) m->env_overlap = ov && !strcmp(ov, "1");
    if (e == 0 && (e = pthread_cond_init(&m->cv, NULL)) != 0) (void)pthread_mutex_destroy(&m->mu);
    if (e == 0) {
        /* SIGUSR1/SIGTERM go to the main thread (checkpoint.c); the threads
         * MPI starts inherit the mask */
        sigset_t block, old;
        sigemptyset(&block);
        sigaddset(&block, SIGUSR1);
        sigaddset(&block, SIGTERM);
        const int se = pthread_sigmask(SIG_BLOCK, &block, &old);
        e = pthread_create(&m->tid, NULL, mpi_thread_main, m);
        if (se == 0) (void)pthread_sigmask(SIG_SETMASK, &old, NULL);
        if (e != 0) {
            (void)pthread_cond_destroy(&m->cv);
            (void)pthread_mutex_destroy(&m->mu);
        }
    }
    if (e != 0) { /* no thread: the synchronous start */
        free(m);
        return app_mpi_start(ctx, argc, argv, &ctx->mpi_provided);
    }
    ctx->mpi_thr = m;
    ctx->comm = MPI_COMM_WORLD; /* a handle: used only after app_mpi_ready */
    ctx->rank = 0;
    ctx->size = 1;
    ctx->local_rank = 0;
    ctx->local_size = 1;
    return 0;
}

int app_mpi_ready(app_ctx *ctx)
{
    app_mpi_thread *m = ctx->mpi_thr;
    if (!m) return 0;
    if (!m->waited) {
        const double t0 = pl_wtime();
        thr_check(pthread_mutex_lock(&m->mu), "pthread_mutex_lock");
        while (!m->ready) thr_check(pthread_cond_wait(&m->cv, &m->mu), "pthread_cond_wait");
        thr_check(pthread_mutex_unlock(&m->mu), "pthread_mutex_unlock");
        ctx->t_mpi_wait = pl_wtime() - t0;
        ctx->t_mpi_init = m->t_ready - ctx->t_start;
        ctx->mpi_provided = m->provided;
        m->waited = 1;
        if (!m->inited) fprintf(stderr, "pjds-lanczos: error: MPI_Init_thread failed\n");
        else if (m->size != 1)
            fprintf(stderr,
                    "pjds-lanczos: error: MPI started %d ranks, but none of the launcher variables OMPI_COMM_WORLD_SIZE, "
                    "PMIX_RANK, PMI_RANK, PMI_SIZE is set: start the ranks with mpirun or srun\n",
                    m->size);
    }
    return m->inited && m->size == 1 ? 0 : 1;
}

/* glibc before 2.40 frees the environment array that setenv replaces, so a
 * getenv in another thread may read freed memory; Open MPI's start calls
 * setenv (9 times, and unsetenv twice, in the first 5 ms of a singleton's
 * MPI_Init_thread, Open MPI 4.1.4). */
static int env_safe_during_mpi_init(void)
{
#ifdef __GLIBC__
    int major = 0, minor = 0;
    if (sscanf(gnu_get_libc_version(), "%d.%d", &major, &minor) != 2) return 0;
    return major > 2 || (major == 2 && minor >= 40);
#else
    return 0;
#endif
}

void app_mpi_wait_env(app_ctx *ctx)
{
    app_mpi_thread *m = ctx->mpi_thr;
    if (!m || m->env_overlap || env_safe_during_mpi_init()) return;
    thr_check(pthread_mutex_lock(&m->mu), "pthread_mutex_lock");
    while (!m->ready) thr_check(pthread_cond_wait(&m->cv, &m->mu), "pthread_cond_wait");
    thr_check(pthread_mutex_unlock(&m->mu), "pthread_mutex_unlock");
}

double app_wall_seconds(const app_ctx *ctx)
{
    const double since_main = pl_wtime() - ctx->t_start;
    /* /proc/self/stat: field 22, starttime in clock ticks since boot; the
     * name (field 2) may hold spaces and parentheses: count from its last ')' */
    char buf[2048];
    FILE *f = fopen("/proc/self/stat", "r");
    if (!f) return since_main;
    const size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    const char *p = strrchr(buf, ')');
    unsigned long long start = 0;
    int field = 2;
    for (; p && *p && field < 22; p++)
        if (*p == ' ') field++;
    if (!p || field != 22 || sscanf(p, "%llu", &start) != 1) return since_main;
    const long tck = sysconf(_SC_CLK_TCK);
    struct timespec now;
    if (tck <= 0 || clock_gettime(CLOCK_BOOTTIME, &now) != 0) return since_main;
    const double wall = (double)now.tv_sec + 1e-9 * (double)now.tv_nsec - (double)start / (double)tck;
    return wall > since_main ? wall : since_main;
}

int app_mpi_end(app_ctx *ctx, int status, int in_setup)
{
    app_backend_discard(ctx); /* a backend still being made: no CUDA work past the end */
    app_mpi_thread *m = ctx->mpi_thr;
    if (m) { /* a singleton: its MPI thread finalises */
        thr_check(pthread_mutex_lock(&m->mu), "pthread_mutex_lock");
        m->finalize = 1;
        thr_check(pthread_cond_broadcast(&m->cv), "pthread_cond_broadcast");
        thr_check(pthread_mutex_unlock(&m->mu), "pthread_mutex_unlock");
        thr_check(pthread_join(m->tid, NULL), "pthread_join");
        if (m->inited && m->fin_rc != MPI_SUCCESS) {
            fprintf(stderr, "pjds-lanczos: error: MPI_Finalize failed\n");
            if (status == 0) status = 1;
        }
        (void)pthread_cond_destroy(&m->cv);
        (void)pthread_mutex_destroy(&m->mu);
        free(m);
        ctx->mpi_thr = NULL;
        singleton_dir_remove();
    } else {
        /* a failure inside a command may leave other ranks in a collective */
        if (status != 0 && status != 3 && !in_setup && ctx->size > 1) MPI_Abort(MPI_COMM_WORLD, status);
        /* a failure every rank shares: rank 0 has said it; the launcher may stop this rank when
         * another one exits first, which must not add a "stopped by SIGTERM" line */
        if (status != 0) app_signal_ending(status);
        MPI_Finalize();
        singleton_dir_remove(); /* a singleton started without the thread */
    }
    if (pl_h5_unclean()) { /* HDF5 could not close a file: skip its exit handler, which would crash on it */
        fflush(stdout);
        fflush(stderr);
        _exit(status);
    }
    return status;
}

int app_config_load(app_ctx *ctx, char **sets, int nsets)
{
    pl_config_defaults(&ctx->cfg);
    PL_CALL(pl_config_read(&ctx->cfg, ctx->cfg_path));
    for (int i = 0; i < nsets; i++) PL_CALL(pl_config_set(&ctx->cfg, sets[i]));
    PL_CALL(pl_config_check(&ctx->cfg));
    return PL_OK;
}
