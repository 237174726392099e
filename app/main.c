/* main.c — the pjds-lanczos command line: subcommands info, solve, bench,
 * export; configuration from an INI file with --set overrides; MPI set-up
 * (one rank per GPU, node-local rank for device selection); exit status
 * 0 = success, 2 = bad input, 3 = stopped by SIGUSR1/SIGTERM, not finished
 * (with a checkpoint when the solve had one to save), 1 = any other
 * failure. */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <omp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "app.h"
#include "cutoff.h"
#include "pl_build.h"
#include "pl_error.h"
#include "solve_impl.h"

typedef struct command {
    const char *name;
    int (*fn)(app_ctx *);
    const char *summary;
    const char *usage; /* extra positional arguments */
    const char *help;
} command;

static const command commands[] = {
    {"info", cmd_info, "build the matrix and print its statistics", "",
     "Builds (or imports) the configured matrix and prints `key: value` lines: rows, nnz,\n"
     "nnz_per_row, row lengths, storage of CSR, ELLPACK and pJDS (chunk height [spmv] chunk_height),\n"
     "the pJDS data reduction against ELLPACK, and the build time.\n"},
    {"solve", cmd_solve, "compute eigenvalues (and eigenvectors): one solve, or a [sweep] of them", "",
     "Builds the matrix, permutes it once into pJDS, runs thick-restart Lanczos (symmetric) or\n"
     "Krylov-Schur (nonsymmetric) in the permuted basis on the configured backend and writes the\n"
     "spectrum to the HDF5 file [output] file.  With a [sweep] section it solves every point of\n"
     "the sweep in one run (docs/operations.md, \"Sweeps\").  Progress goes to stderr; eigenvalues to stdout.\n"
     "On SIGUSR1 or SIGTERM it exits with status 3 within about a second: during the solve after\n"
     "writing a checkpoint, which `solve --resume` continues from, before it with nothing to save\n"
     "(docs/operations.md, \"Signals and exit status 3\").\n"},
    {"spectral", cmd_spectral, "a dynamical correlation function by a Lanczos continued fraction", "",
     "Solves for the ground state psi0 as `solve` does, applies the [spectral] operator O\n"
     "(phonon_displacement, density or current at the momentum index [spectral] momentum) and runs a\n"
     "Lanczos recursion on H from O psi0; the continued fraction gives\n"
     "A(w) = -(1/pi) Im <psi0|O+ (w + i eta + E0 - H)^-1 O|psi0> on the [spectral] omega grid.  The result\n"
     "file is solve's plus /spectral (docs/models.md, \"Spectral functions\").\n"},
    {"dos", cmd_dos, "the density of states by the kernel polynomial method", "",
     "Builds the matrix, estimates its spectral bounds with a short Lanczos run and computes the\n"
     "Chebyshev moments of [kpm] random_vectors random vectors, [kpm] block of them per SpMMV, two\n"
     "moments per product; writes the damped density (Jackson or Lorentz kernel), the raw moments and\n"
     "the bounds to [output] file (docs/models.md, \"Density of states\").  Symmetric matrices only.\n"},
    /* no fn: runs the program pjds-bench, which has its own help (app_bench_exec) */
    {"bench", NULL, "time SpMV of pJDS against ELLPACK-R, CSR and sliced ELLPACK", "", NULL},
    {"merge", cmd_merge, "combine partial sweep files (job arrays) into one", "",
     "usage: pjds-lanczos merge [--overwrite] OUT.h5 IN.h5...\n\n"
     "Combines sweep result files of the same sweep (root attribute sweep_hash), e.g. the shares of a\n"
     "Slurm job array run with --points, into OUT.h5.  A point finished in several inputs must agree.\n"},
    {"export", cmd_export, "write the configured matrix to an HDF5 matrix file", " FILE.h5",
     "Writes the configured matrix (generated or imported) in the pjds-lanczos HDF5 matrix schema\n"
     "(docs/formats.md, \"HDF5 matrix schema\"), so other tools can load exactly the matrix we solve.\n"
     "The group also holds PETSc's and MATLAB's names jc, ir, data and MATLAB_sparse (links to the\n"
     "same arrays for a symmetric matrix, a compressed-column copy otherwise), so PETSc's MatLoad\n"
     "reads it; --format petsc writes PETSc's binary format instead (docs/formats.md, \"Export\").\n"},
};
#define NCOMMANDS (int)(sizeof commands / sizeof commands[0])

static void usage(FILE *f)
{
    fprintf(f, "usage: pjds-lanczos [--version] [--help] COMMAND [options] CONFIG [args]\n\ncommands:\n");
    for (int i = 0; i < NCOMMANDS; i++) fprintf(f, "  %-8s %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "\n`pjds-lanczos COMMAND --help` describes a command and its options.\n");
}

static void command_help(const command *c)
{
    if (!strcmp(c->name, "merge")) {
        printf(c->help, 0);
        printf("\noptions:\n  --overwrite              replace an existing OUT.h5\n  --help                   this text\n");
        return;
    }
    printf("usage: pjds-lanczos %s [options] CONFIG%s\n\n", c->name, c->usage);
    printf(c->help, 0);
    printf("\noptions:\n"
           "  --set section.key=value  override a config key (repeatable), e.g. --set solver.nev=8\n"
           "  --quiet                  no progress or summary on stderr (warnings and errors still print)\n"
           "  --verbose                debug messages on stderr\n");
    if (!strcmp(c->name, "solve") || !strcmp(c->name, "export") || !strcmp(c->name, "spectral") ||
        !strcmp(c->name, "dos"))
        printf("  --overwrite              replace an existing output file\n");
    if (!strcmp(c->name, "export"))
        printf("  --group PATH             the group the matrix goes to in FILE.h5 (default /; created)\n"
               "  --format hdf5|petsc      hdf5 (default): the pjds schema plus PETSc's jc/ir/data view;\n"
               "                           petsc: PETSc's binary format, which MatLoad reads\n");
    if (!strcmp(c->name, "solve"))
        printf("  --resume                 continue from the checkpoint, or the points of a sweep not yet done\n"
               "  --points A-B|auto        solve only sweep points A..B (0-based, inclusive); auto: this task's\n"
               "                           share of a Slurm job array (SLURM_ARRAY_TASK_ID, _COUNT or _MIN/_MAX)\n");
    printf("  --help                   this text\n\nThe config reference is docs/config.md; configs/ holds examples.\n");
}

/* Parse the arguments after COMMAND.  Returns PL_OK, or PL_ERR_INPUT. */
static int parse_args(int argc, char **argv, const command *c, app_ctx *ctx, char ***sets, int *nsets, int *help, int *verbose)
{
    *sets = calloc((size_t)argc, sizeof **sets);
    ctx->args = calloc((size_t)argc, sizeof *ctx->args);
    PL_CHECK(*sets && ctx->args, PL_ERR_MEM, "out of host memory");
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) *help = 1;
        else if (!strcmp(a, "--quiet") || !strcmp(a, "-q")) ctx->quiet = 1;
        else if (!strcmp(a, "--verbose") || !strcmp(a, "-v")) *verbose = 1;
        else if (!strcmp(a, "--overwrite") && (!strcmp(c->name, "solve") || !strcmp(c->name, "export") ||
                                                 !strcmp(c->name, "spectral") || !strcmp(c->name, "dos") ||
                                                 !strcmp(c->name, "merge")))
            ctx->overwrite = 1;
        else if (!strcmp(a, "--resume") && !strcmp(c->name, "solve")) ctx->resume = 1;
        else if (!strcmp(a, "--points") && !strcmp(c->name, "solve")) {
            PL_CHECK(i + 1 < argc, PL_ERR_INPUT, "--points needs A-B (sweep point indices) or auto");
            ctx->points = argv[++i];
        }
        else if ((!strcmp(a, "--group") || !strcmp(a, "--format")) && !strcmp(c->name, "export")) {
            PL_CHECK(i + 1 < argc, PL_ERR_INPUT, "export: %s needs a value (see pjds-lanczos export --help)", a);
            if (a[2] == 'g') ctx->export_group = argv[++i];
            else ctx->export_format = argv[++i];
        }
        else if (!strcmp(a, "--set")) {
            PL_CHECK(i + 1 < argc, PL_ERR_INPUT, "--set needs an argument section.key=value");
            (*sets)[(*nsets)++] = argv[++i];
        } else if (!strncmp(a, "--set=", 6)) (*sets)[(*nsets)++] = argv[i] + 6;
        else if (a[0] == '-' && a[1]) return PL_ERROR(PL_ERR_INPUT, "%s: unknown option '%s' (see pjds-lanczos %s --help)", c->name, a, c->name);
        else if (!ctx->cfg_path) ctx->cfg_path = a;
        else ctx->args[ctx->nargs++] = argv[i];
    }
    if (*help) return PL_OK;
    if (!strcmp(c->name, "merge")) { /* no CONFIG: OUT.h5 IN.h5... */
        PL_CHECK(ctx->cfg_path && ctx->nargs >= 1, PL_ERR_INPUT, "merge: expected OUT.h5 IN.h5... (see pjds-lanczos merge --help)");
        return PL_OK;
    }
    PL_CHECK(ctx->cfg_path, PL_ERR_INPUT, "%s: missing CONFIG argument (see pjds-lanczos %s --help)", c->name, c->name);
    int want = strcmp(c->name, "export") ? 0 : 1;
    PL_CHECK(ctx->nargs == want, PL_ERR_INPUT, "%s: expected %s (see pjds-lanczos %s --help)", c->name,
             want ? "CONFIG FILE.h5" : "a single CONFIG argument", c->name);
    return PL_OK;
}

/* Report an error.  in_setup: found by every rank alike (arguments, config),
 * so rank 0 speaks; otherwise the rank that saw it speaks. */
static int finish(app_ctx *ctx, int rc, int in_setup)
{
    if (rc == APP_CHECKPOINTED) return 3; /* every rank alike: stopped by a signal, not finished */
    if (rc != PL_OK && (!in_setup || ctx->rank == 0)) {
        pl_error_report_rank(ctx->size > 1 && !in_setup ? ctx->rank : -1);
    }
    return pl_error_exit_status(rc);
}

int main(int argc, char **argv)
{
    app_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.t_start = pl_wtime();
    /* a file size limit (ulimit -f, quotas) makes write() fail with EFBIG
     * instead of killing the process: the HDF5 writer then reports the file,
     * removes its temporary and the run exits with an error */
    signal(SIGXFSZ, SIG_IGN);

    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    if (!strcmp(argv[1], "--version")) {
        printf("pjds-lanczos %s (CUDA %s, NCCL %s)\n", PL_VERSION, PJDS_HAVE_CUDA ? "yes" : "no", PJDS_HAVE_NCCL ? "yes" : "no");
        return 0;
    }
    const command *cmd = NULL;
    for (int i = 0; i < NCOMMANDS; i++)
        if (!strcmp(argv[1], commands[i].name)) cmd = &commands[i];
    if (!cmd) {
        fprintf(stderr, "pjds-lanczos: error: unknown command '%s'\n", argv[1]);
        usage(stderr);
        return 2;
    }
    if (!cmd->fn) return app_bench_exec(argc - 2, argv + 2); /* before MPI: pjds-bench starts its own */

    /* SIGUSR1/SIGTERM from the first instant (a Slurm job can be signalled
     * during MPI start-up): exit 3 with one line; the rank is taken from the
     * launcher's environment until MPI knows it (installed again below) */
    const int sig_cmd = !strcmp(cmd->name, "solve") || !strcmp(cmd->name, "spectral") || !strcmp(cmd->name, "dos");
    if (sig_cmd) {
        const char *r = getenv("OMPI_COMM_WORLD_RANK");
        if (!r) r = getenv("PMIX_RANK");
        if (!r) r = getenv("PMI_RANK");
        if (!r) r = getenv("SLURM_PROCID");
        app_signals_install(r ? atoi(r) : 0);
    }
    /* a singleton starts MPI in a thread of its own (app_start.c): the
     * arguments, the configuration and the backend (app_backend.c) go on
     * meanwhile; app_mpi_ready before the first MPI call (the command) */
    if (app_mpi_start_async(&ctx, &argc, &argv) != 0) return 1;

    char **sets = NULL;
    int nsets = 0, help = 0, verbose = 0, mpi_failed = 0;
    int rc = parse_args(argc - 2, argv + 2, cmd, &ctx, &sets, &nsets, &help, &verbose);
    pl_log_init(ctx.rank, ctx.quiet ? PL_LOG_QUIET : verbose ? PL_LOG_DEBUG : PL_LOG_INFO);
    /* SIGUSR1/SIGTERM: exit 3 at once while there is nothing to save, a
     * checkpoint during a solve (checkpoint.c; docs/operations.md, "Signals and exit status 3") */
    if (rc == PL_OK && !help && sig_cmd) app_signals_install(ctx.rank);
    int in_setup = 1;
    if (rc == PL_OK && help) {
        if (ctx.rank == 0) command_help(cmd);
    } else {
        if (rc == PL_OK && !strcmp(cmd->name, "merge") && nsets > 0)
            rc = PL_ERROR(PL_ERR_INPUT, "merge takes no --set (it reads no configuration)");
        if (rc == PL_OK && strcmp(cmd->name, "merge")) rc = app_config_load(&ctx, sets, nsets);
        if (rc == PL_OK && strcmp(cmd->name, "merge")) rc = app_cutoff_command(&ctx, cmd->name); /* max_phonons = auto */
        /* the commands with a solve: the backend (the CUDA context) is made
         * in a thread while MPI starts and the rows are generated */
        if (rc == PL_OK && sig_cmd) rc = app_backend_start(&ctx);
        if (rc == PL_OK && app_mpi_ready(&ctx) != 0) mpi_failed = 1;
        else if (rc == PL_OK) {
            if (sig_cmd && ctx.mpi_thr) app_signals_install(ctx.rank); /* after MPI's start, as with a launcher */
            pl_debug("%s: %d rank(s), %d OpenMP thread(s) per rank, MPI thread level %d, MPI ready %.3f s after the "
                     "start (waited %.3f s)",
                     cmd->name, ctx.size, omp_get_max_threads(), ctx.mpi_provided, ctx.t_mpi_init, ctx.t_mpi_wait);
            in_setup = 0;
            ctx.cmd_name = cmd->name;
            rc = cmd->fn(&ctx);
            if (ctx.error_collective) in_setup = 1; /* every rank failed alike: rank 0 speaks, no abort */
        }
    }
    int status = mpi_failed ? 1 : finish(&ctx, rc, in_setup);
    app_sums_end(&ctx);
    pl_debug("%s: %.3f s from the start to the end of the command, %.3f s since the process start", cmd->name,
             pl_wtime() - ctx.t_start, app_wall_seconds(&ctx));
    free(sets);
    free(ctx.args);
    pl_config_destroy(&ctx.cfg);
    status = app_mpi_end(&ctx, status, in_setup);
    pl_debug("%s: MPI finalised, %.3f s since the process start; the exit follows", cmd->name,
             app_wall_seconds(&ctx));
    return status;
}
