/* bench_main.c — the pjds-bench program: `pjds-bench [options] CONFIG`, which
 * `pjds-lanczos bench [options] CONFIG` runs (app/cmd_bench.c).  It speaks as
 * that command: the same options, messages, exit status (0 success, 2 bad
 * input, 1 any other failure) and MPI set-up (one rank per GPU, node-local
 * rank for device selection) as the other subcommands of pjds-lanczos.
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <omp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "app.h"
#include "bench_impl.h"
#include "pl_error.h"
#include "pl_h5util.h"

static void help(void)
{
    printf("usage: pjds-lanczos bench [options] CONFIG\n"
           "       pjds-bench [options] CONFIG   (the program that `pjds-lanczos bench` runs)\n\n"
           "Times y = A x on the configured matrix for each storage format on the configured backend\n"
           "(median of [spmv] repeats runs) and reports GF/s, effective GB/s and %% of the memory floor.\n"
           "\noptions:\n"
           "  --set section.key=value  override a config key (repeatable), e.g. --set solver.nev=8\n"
           "  --quiet                  no progress or summary on stderr (warnings and errors still print)\n"
           "  --verbose                debug messages on stderr\n"
           "  --json FILE              also write the results as JSON\n"
           "  --help                   this text\n\n"
           "The config reference is in README.md; configs/ holds examples.\n");
}

/* The arguments: options and CONFIG.  Returns PL_OK, or PL_ERR_INPUT. */
static int parse_args(int argc, char **argv, app_ctx *ctx, char **sets, int *nsets, int *want_help, int *verbose)
{
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) *want_help = 1;
        else if (!strcmp(a, "--quiet") || !strcmp(a, "-q")) ctx->quiet = 1;
        else if (!strcmp(a, "--verbose") || !strcmp(a, "-v")) *verbose = 1;
        else if (!strcmp(a, "--json")) {
            PL_CHECK(i + 1 < argc, PL_ERR_INPUT, "--json needs a file name");
            setenv("PJDS_BENCH_JSON", argv[++i], 1); /* read by bench_run */
        } else if (!strcmp(a, "--set")) {
            PL_CHECK(i + 1 < argc, PL_ERR_INPUT, "--set needs an argument section.key=value");
            sets[(*nsets)++] = argv[++i];
        } else if (!strncmp(a, "--set=", 6)) sets[(*nsets)++] = argv[i] + 6;
        else if (a[0] == '-' && a[1]) return PL_ERROR(PL_ERR_INPUT, "bench: unknown option '%s' (see pjds-lanczos bench --help)", a);
        else if (!ctx->cfg_path) ctx->cfg_path = a;
        else ctx->nargs++;
    }
    if (*want_help) return PL_OK;
    PL_CHECK(ctx->cfg_path, PL_ERR_INPUT, "bench: missing CONFIG argument (see pjds-lanczos bench --help)");
    PL_CHECK(ctx->nargs == 0, PL_ERR_INPUT, "bench: expected a single CONFIG argument (see pjds-lanczos bench --help)");
    return PL_OK;
}

static int setup_config(app_ctx *ctx, char **sets, int nsets)
{
    pl_config_defaults(&ctx->cfg);
    PL_CALL(pl_config_read(&ctx->cfg, ctx->cfg_path));
    for (int i = 0; i < nsets; i++) PL_CALL(pl_config_set(&ctx->cfg, sets[i]));
    PL_CALL(pl_config_check(&ctx->cfg));
    return PL_OK;
}

/* MPI with every thread level bench's exchange modes need, the node-local rank. */
static int start_mpi(int *argc, char ***argv, app_ctx *ctx, int *provided)
{
    /* no launcher: an isolated singleton (no orted; README "Start-up"), unless the user says otherwise */
    if (!getenv("OMPI_COMM_WORLD_SIZE") && !getenv("PMIX_RANK") && !getenv("PMI_RANK") && !getenv("PMI_SIZE"))
        setenv("OMPI_MCA_ess_singleton_isolated", "1", 0);
    if (MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, provided) != MPI_SUCCESS) return 1;
    ctx->t_mpi_init = pl_wtime() - ctx->t_start;
    ctx->comm = MPI_COMM_WORLD;
    MPI_Comm_rank(ctx->comm, &ctx->rank);
    MPI_Comm_size(ctx->comm, &ctx->size);
    MPI_Comm node;
    ctx->local_rank = 0;
    ctx->local_size = 1;
    if (MPI_Comm_split_type(ctx->comm, MPI_COMM_TYPE_SHARED, ctx->rank, MPI_INFO_NULL, &node) == MPI_SUCCESS) {
        MPI_Comm_rank(node, &ctx->local_rank);
        MPI_Comm_size(node, &ctx->local_size);
        MPI_Comm_free(&node);
    }
    return 0;
}

int main(int argc, char **argv)
{
    app_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.t_start = pl_wtime();
    signal(SIGXFSZ, SIG_IGN); /* a file size limit fails the JSON write instead of killing the process */
    int provided = 0;
    if (start_mpi(&argc, &argv, &ctx, &provided) != 0) {
        fprintf(stderr, "pjds-lanczos: error: MPI_Init_thread failed\n");
        return 1;
    }
    char **sets = calloc((size_t)(argc > 1 ? argc : 1), sizeof *sets);
    int nsets = 0, want_help = 0, verbose = 0;
    int rc = sets ? parse_args(argc - 1, argv + 1, &ctx, sets, &nsets, &want_help, &verbose)
                  : PL_ERROR(PL_ERR_MEM, "out of host memory");
    pl_log_init(ctx.rank, ctx.quiet ? PL_LOG_QUIET : verbose ? PL_LOG_DEBUG : PL_LOG_INFO);
    int in_setup = 1; /* errors every rank found alike: rank 0 reports them */
    if (rc == PL_OK && want_help) {
        if (ctx.rank == 0) help();
    } else if (rc == PL_OK && (rc = setup_config(&ctx, sets, nsets)) == PL_OK) {
        pl_debug("bench: %d rank(s), %d OpenMP thread(s) per rank, MPI thread level %d", ctx.size,
                 omp_get_max_threads(), provided);
        in_setup = 0;
        rc = bench_run(&ctx);
        if (ctx.error_collective) in_setup = 1;
    }
    if (rc != PL_OK && (!in_setup || ctx.rank == 0)) pl_error_report_rank(ctx.size > 1 && !in_setup ? ctx.rank : -1);
    const int status = pl_error_exit_status(rc);
    pl_debug("bench: %.3f s from the start to the end of the command", pl_wtime() - ctx.t_start);
    free(sets);
    pl_config_destroy(&ctx.cfg);
    /* a failure inside bench may leave other ranks in a collective */
    if (status != 0 && !in_setup && ctx.size > 1) MPI_Abort(MPI_COMM_WORLD, status);
    MPI_Finalize();
    if (pl_h5_unclean()) { /* HDF5 could not close a file: skip its exit handler, which would crash on it */
        fflush(stdout);
        fflush(stderr);
        _exit(status);
    }
    return status;
}
