/* app.h — shared state of the pjds-lanczos subcommands. */
#ifndef PL_APP_H
#define PL_APP_H

#include <mpi.h>

#include "pl_config.h"
#include "pl_csr.h"

/* The memory plan (mem_plan.c; docs/operations.md, "Memory plan"): per-rank estimates
 * of the peak host and device bytes. */
typedef struct app_mem_plan {
    int64_t rows_local;
    double nnz_local;        /* estimated from a sample of row lengths      */
    int ncv, gpu;            /* gpu: the cuda backend will be used          */
    double host_bytes, device_bytes;  /* per rank (host: incl. the resident) */
    double host_resident;             /* VmRSS when the plan was made       */
    double device_resident;           /* GPU memory in use then (context)   */
    double host_avail, device_avail;  /* per rank, < 0: unknown             */
} app_mem_plan;

typedef struct app_ctx {
    pl_config cfg;        /* resolved and checked configuration               */
    const char *cfg_path; /* CONFIG argument                                  */
    MPI_Comm comm;        /* MPI_COMM_WORLD                                   */
    int rank, size;       /* in comm                                          */
    int local_rank;       /* node-local rank (GPU selection)                  */
    int local_size;       /* ranks on this node                               */
    int quiet;            /* --quiet: no progress lines                       */
    int overwrite;        /* --overwrite: replace an existing output file     */
    int nargs;            /* positional arguments after CONFIG (export FILE)  */
    char **args;
    double t_start;       /* pl_wtime() at program start                      */
    double t_mpi_init;    /* seconds from t_start until MPI was ready         */
    double t_mpi_wait;    /* seconds the main thread waited for it            */
    int mpi_provided;     /* MPI thread level                                 */
    struct app_mpi_thread *mpi_thr; /* a singleton's MPI thread (app_start.c) */
    struct app_backend_job *be_job; /* the backend being made (app_backend.c) */
    int resume;           /* solve --resume                                   */
    const char *points;   /* solve --points A-B | auto (NULL: all)            */
    const char *export_group;  /* export --group PATH (NULL: "/")             */
    const char *export_format; /* export --format hdf5 | petsc (NULL: hdf5)   */
    int build_terms;      /* app_build_rows: value terms for a sweep: the bit */
                          /* mask of the swept Hamiltonian terms (hh.h)      */
    int error_collective; /* the command's error was found by every rank alike */
                          /* (broadcast checks): rank 0 reports it, no abort  */
    struct pl_backend *plan_be; /* the backend, when made before the build   */
                          /* (the plan reads its free device memory)          */
    app_mem_plan plan;    /* the memory plan of the last app_build_rows       */
    double plan_extra_host; /* host bytes the plan adds (spectral's N-sector rows) */
    int have_plan;
    const char *cmd_name; /* the command being run (main.c)                   */
    int free_ok;          /* the command runs [spmv] format = matrix_free     */
    int free_tile;        /* auto takes the tables only where the GPU block   */
                          /* product stages its tile (dos; app_free.c)       */
    struct pl_file_sum *msum; /* rank 0: the imported matrix file's checksum, in its thread (app_provenance.c) */
                          /* (solve and its sweeps, spectral; app_free.c)    */
    void *mf;             /* its tables (hh_mf) until the operator is made    */
} app_ctx;

/* What app_build_rows learned about the matrix. */
typedef struct app_matrix_info {
    int64_t rows;           /* N                                              */
    int64_t nnz;            /* global non-zeros                               */
    int symmetric_known;    /* the source guarantees symmetry (generator, or file attribute) */
    double build_seconds;   /* generation or import, wall clock, max over ranks */
    double partition_seconds;
    char name[256];         /* model or matrix name for output                */
} app_matrix_info;

/* Build (generate or import) this rank's contiguous row block, balanced by
 * non-zeros over the ranks of ctx->comm.  Collective.  PL_ERR_INPUT for bad
 * model parameters or a bad matrix file. */
/* The config translated for the layers below (app_options.c). */
void app_hh_params(const pl_model_cfg *m, hh_params *p);
/* The model's name for the output ("holstein-hubbard L=... g=..."). */
void app_hh_name(const pl_model_cfg *m, char *name, size_t n);
void app_bs_params(const pl_model_cfg *m, bs_params *p);
void app_op_options(const pl_spmv_cfg *s, pl_op_options *o);
/* [spmv] backend, except auto under [solver] reproducible = true: cpu. */
int app_backend_kind(const pl_config *cfg);
/* An input error of a lower layer given the config place of the parameter it
 * names (or of fallback_key); rc is returned. */
int app_param_error(const pl_config *cfg, const char *section, const char *fallback_key, int rc);

int app_build_rows(app_ctx *ctx, pl_csr *rows, app_matrix_info *mi);
/* [spmv] format = matrix_free (app_free.c): wanted by the configuration;
 * the one-line refusal of a command that needs a stored matrix; the
 * tables into ctx->mf (instead of rows: app_build_rows calls it when
 * ctx->free_ok; *stored: auto on a model beyond 32-bit indices, build the
 * rows instead); the operator from them (frees them; *nnz: the non-zeros
 * of the matrix it stands for); free the tables (accepts none). */
int app_free_wanted(const app_ctx *ctx);
/* ... and whether `solve` (and a sweep's point) would run it (info). */
int app_free_in_solve(const app_ctx *ctx);
/* auto, for commands whose work is block products (dos, chebfd): 1 where
 * the backend is the CPU's (app_free.c) */
int app_free_auto_blocks(app_ctx *ctx);
/* auto, for dos: the CPU backend's tables as app_free_auto_blocks; on one
 * GPU the tables where their block product stages its tile (decided by
 * app_build_free with the tables' sizes: ctx->free_tile), else pJDS */
int app_free_auto_dos(app_ctx *ctx);
int app_free_refuse(const app_ctx *ctx);
/* A sweep's check of format = matrix_free before any point (nothing to
 * refuse since it runs on several ranks). */
int app_free_sweep_check(const app_ctx *ctx);
int app_build_free(app_ctx *ctx, app_matrix_info *mi, int *stored);
struct pl_op_options;
struct pl_op;
int app_free_op(app_ctx *ctx, const struct pl_op_options *oo, struct pl_backend *be, struct pl_op **op, int64_t *nnz);
void app_free_release(app_ctx *ctx);
/* A sweep point of the same structure: the tables of ctx->cfg's model into
 * the matrix-free operator op (pl_op_kron_update). */
int app_free_refill(app_ctx *ctx, struct pl_op *op);
/* info, where solve would run matrix-free: `solve_format: matrix_free` and
 * the tables' sizes as key: value lines (rank 0). */
int app_free_info(app_ctx *ctx);
/* "electron", "phonon" (the split of a matrix-free operator on several
 * ranks: spmv.h PL_KRON_SPLIT_LEFT, _RIGHT) or "none" (any other value):
 * the result attribute spmv_kron_split. */
const char *app_kron_split_name(int split);

/* For solve: is the matrix symmetric?  *symmetric = 1 when its source
 * asserts it or the numerical check ([matrix] symmetry_tolerance) passes, 0
 * when the check fails or the generator is nonsymmetric (block-stencil), -1
 * when unknown (an hdf5 matrix with check_symmetry = false).  require = 1
 * (method = lanczos): a failed check is PL_ERR_INPUT.  Collective. */
int app_check_symmetric(app_ctx *ctx, const pl_csr *rows, const app_matrix_info *mi, int require, int *symmetric);
/* Rank 0, writing a result: the unit of its energies ("t" for a generated
 * Holstein-Hubbard model), its provenance (config path, an input matrix
 * file's absolute path and CRC-32) and whether it gets dimension scales
 * (scales = 0 for a sweep's point files: netCDF readers cannot follow the
 * sweep file's external links to scales in another file);
 * app_provenance.c. */
struct pl_spectrum;
int app_describe_output(const app_ctx *ctx, struct pl_spectrum *sp, int scales);
/* Rank 0, after the import has opened the matrix file: start its checksum
 * in a thread (it runs beside the solve); app_sums_end joins and frees it
 * (main, at the end).  Both can be called on any rank; only rank 0 sums. */
int app_matrix_sum_start(app_ctx *ctx, const char *path);
void app_sums_end(app_ctx *ctx);

/* The backend of [spmv] backend (app_backend.c); the GPU is picked by the
 * node-local rank, and more ranks on a node than GPUs is PL_ERR_INPUT
 * (unless backend = cpu).  app_backend_create: all of it now.  Collective.
 * In steps, so that the CUDA context is made while MPI starts and the rows
 * are generated: app_backend_start (not collective; MPI need not be ready)
 * starts a thread making it (the cpu kind: none, made at the check);
 * app_backend_check (collective) waits for the device count, checks the
 * ranks per GPU and reports a backend that cannot be made (no CUDA build or
 * device); app_backend_finish (after the check, or doing it) waits for the
 * backend: *be, the seconds the creation took and those this call waited
 * (either pointer may be NULL).  app_backend_discard: waits for a backend
 * being made and destroys it (app_mpi_end calls it).
 * app_backend_gpu_planned: 1 if the backend of the build is (or will be)
 * a GPU's (ctx->plan_be, the job's device count, else the config). */
struct pl_backend;
int app_backend_create(app_ctx *ctx, struct pl_backend **be);
int app_backend_start(app_ctx *ctx);
int app_backend_check(app_ctx *ctx);
int app_backend_finish(app_ctx *ctx, struct pl_backend **be, double *seconds, double *wait_seconds);
void app_backend_discard(app_ctx *ctx);
int app_backend_gpu_planned(app_ctx *ctx);
/* The memory plan of n rows (this rank) with ~nnz_local non-zeros of an N-row
 * matrix (mem_plan.c; symmetric: known symmetric, so method = auto plans
 * Lanczos's basis); check: collective, PL_ERR_INPUT with one line when
 * the worst rank's needs exceed 90 % of its host memory or 95 % of its
 * GPU's free memory (be may be NULL: no device check). */
void app_mem_plan_compute(const pl_config *cfg, int64_t N, int64_t rows_local, double nnz_local, int gpu,
                          int symmetric, app_mem_plan *p);
/* The plan of the matrix-free operator of N rows (no matrix; this rank's
 * rows_local and its halo: values received and sent per product), whatever
 * cfg's format: also where format = auto chose it (app_free.c). */
void app_mem_plan_compute_free(const pl_config *cfg, int64_t N, int64_t rows_local, double halo_values,
                               double send_values, int gpu, app_mem_plan *p);
int app_mem_plan_check(app_ctx *ctx, app_mem_plan *p, struct pl_backend *be);
/* The GPU part alone against be's free memory (after the build, when the
 * backend was made meanwhile); the same line.  Collective. */
int app_mem_plan_check_device(app_ctx *ctx, app_mem_plan *p, struct pl_backend *be);
/* "123", "4.5G", "800M" -> bytes (binary units); < 0 when malformed. */
double app_parse_bytes(const char *s);

/* Row lengths of this rank's block (into *len_out, malloc'ed, the caller
 * frees it; len_out NULL: not kept) and the global storage statistics with
 * [spmv] chunk_height.  Collective. */
struct pjds_stats;
int app_row_stats(app_ctx *ctx, const pl_csr *rows, int32_t **len_out, struct pjds_stats *st);

/* Subcommands: return an error code (main maps it to the exit status). */
int cmd_info(app_ctx *ctx);
int cmd_solve(app_ctx *ctx);
int cmd_export(app_ctx *ctx);
int cmd_merge(app_ctx *ctx);
int cmd_spectral(app_ctx *ctx);
int cmd_dos(app_ctx *ctx);
/* `bench`: executes pjds-bench from the directory of the running executable
 * with the command's arguments (argv after "bench"); returns only when that
 * fails: 2 after one line on stderr. */
int app_bench_exec(int argc, char **argv);

/* The start of a process (app_start.c).  app_mpi_start: MPI_Init_thread
 * (MPI_THREAD_MULTIPLE; an isolated singleton without a launcher), ctx->comm,
 * rank, size, node-local rank and t_mpi_init; returns 0, or 1 after one line
 * on stderr.  app_mpi_start_async: the same, but a singleton (no launcher
 * in the environment) starts MPI in a thread of its own and returns at once
 * with rank 0, size 1, local rank 0 of 1; ctx->comm may be used only after
 * app_mpi_ready (returns 0 when MPI is ready, t_mpi_wait: how long it
 * waited; 1 after one line on stderr when MPI_Init_thread failed).  With a
 * launcher app_mpi_start_async is app_mpi_start.  app_config_load:
 * ctx->cfg from the file ctx->cfg_path, the overrides "section.key=value"
 * applied in order, then checked; PL_ERR_INPUT with the file and key on a
 * bad one. */
int app_mpi_start(app_ctx *ctx, int *argc, char ***argv, int *provided);
int app_mpi_start_async(app_ctx *ctx, int *argc, char ***argv);
int app_mpi_ready(app_ctx *ctx);
/* For another thread about to read the environment (getenv; the CUDA
 * driver): waits until a singleton's MPI thread has passed MPI_Init_thread,
 * which calls setenv, unless the C library's getenv is safe against a
 * concurrent setenv (glibc >= 2.40); returns at once otherwise.  Does not
 * touch ctx but its MPI thread. */
void app_mpi_wait_env(app_ctx *ctx);
/* Seconds since the process started (/proc/self/stat starttime against
 * CLOCK_BOOTTIME), never less than those since ctx->t_start (the
 * fallback where /proc is not readable). */
double app_wall_seconds(const app_ctx *ctx);
/* The end: a backend still being made is waited for and destroyed; MPI_Abort
 * when the command failed (status other than 0 and 3) on one rank of several
 * (!in_setup: the others may wait in a collective), else MPI_Finalize (by
 * the singleton's MPI thread, which called MPI_Init_thread); returns status, or _exit(status) when HDF5 could not
 * close a file (its exit handler would crash on it). */
int app_mpi_end(app_ctx *ctx, int status, int in_setup);
int app_config_load(app_ctx *ctx, char **sets, int nsets);

/* 1 if ctx says the output file may be (over)written; PL_ERR_INPUT with a
 * clear message otherwise (exists without --overwrite, directory missing or
 * not writable).  Collective (rank 0 checks, result broadcast). */
int app_check_output_path(app_ctx *ctx, const char *path);
/* After rank 0 tried to place an output file (rc: its result there, any
 * value elsewhere): a refused placement (PL_ERR_INPUT, the file appeared
 * during the run; io/pl_place.h) becomes every rank's error alike
 * (ctx->error_collective: rank 0 reports its one line, no MPI_Abort).
 * Returns rank 0's rc on rank 0, PL_ERR_INPUT on the others in that case,
 * else PL_OK on the others.  Collective. */
int app_agree_placement(app_ctx *ctx, int rc);
/* After a collective failure rc (every rank failed, e.g. in pl_op_create):
 * when every rank holds the same code and message, mark it every rank's
 * alike (ctx->error_collective), so that it prints once and without
 * MPI_Abort.  Returns rc.  Collective. */
int app_error_alike(app_ctx *ctx, int rc);

#endif
