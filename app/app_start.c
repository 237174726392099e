/* app_start.c — the start and end of a process shared by pjds-lanczos
 * (main.c) and pjds-bench (bench/src/bench_main.c): MPI with the node-local
 * rank, the configuration file with its --set overrides, and the exit. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "app.h"
#include "pl_error.h"
#include "pl_h5util.h"

int app_mpi_start(app_ctx *ctx, int *argc, char ***argv, int *provided)
{
    /* Started without a launcher (no mpirun/srun environment): an isolated
     * singleton, so that Open MPI does not fork an orted first (0.1 s here,
     * more on a many-core node).  A user's setting wins. */
    if (!getenv("OMPI_COMM_WORLD_SIZE") && !getenv("PMIX_RANK") && !getenv("PMI_RANK") && !getenv("PMI_SIZE"))
        setenv("OMPI_MCA_ess_singleton_isolated", "1", 0);
    if (MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, provided) != MPI_SUCCESS) {
        fprintf(stderr, "pjds-lanczos: error: MPI_Init_thread failed\n");
        return 1;
    }
    ctx->t_mpi_init = pl_wtime() - ctx->t_start;
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

int app_mpi_end(app_ctx *ctx, int status, int in_setup)
{
    /* a failure inside a command may leave other ranks in a collective */
    if (status != 0 && status != 3 && !in_setup && ctx->size > 1) MPI_Abort(MPI_COMM_WORLD, status);
    MPI_Finalize();
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
