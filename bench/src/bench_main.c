/* bench_main.c — the pjds-bench program: `pjds-bench [options] CONFIG`, which
 * `pjds-lanczos bench [options] CONFIG` runs (app/cmd_bench.c).  It speaks as
 * that command: the same options, messages, exit status (0 success, 2 bad
 * input, 1 any other failure) and MPI set-up (one rank per GPU, node-local
 * rank for device selection) as the other subcommands of pjds-lanczos.
 */
#define _POSIX_C_SOURCE 200809L
#include <omp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "bench_impl.h"
#include "pl_error.h"

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
           "The config reference is docs/config.md; configs/ holds examples; the tables are explained in\n"
           "docs/performance.md.\n");
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

int main(int argc, char **argv)
{
    app_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.t_start = pl_wtime();
    signal(SIGXFSZ, SIG_IGN); /* a file size limit fails the JSON write instead of killing the process */
    int provided = 0;
    if (app_mpi_start(&ctx, &argc, &argv, &provided) != 0) return 1;
    char **sets = calloc((size_t)(argc > 1 ? argc : 1), sizeof *sets);
    int nsets = 0, want_help = 0, verbose = 0;
    int rc = sets ? parse_args(argc - 1, argv + 1, &ctx, sets, &nsets, &want_help, &verbose)
                  : PL_ERROR(PL_ERR_MEM, "out of host memory");
    pl_log_init(ctx.rank, ctx.quiet ? PL_LOG_QUIET : verbose ? PL_LOG_DEBUG : PL_LOG_INFO);
    int in_setup = 1; /* errors every rank found alike: rank 0 reports them */
    if (rc == PL_OK && want_help) {
        if (ctx.rank == 0) help();
    } else if (rc == PL_OK && (rc = app_config_load(&ctx, sets, nsets)) == PL_OK) {
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
    return app_mpi_end(&ctx, status, in_setup);
}
