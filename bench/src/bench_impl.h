/* bench_impl.h — internals of pjds-bench shared by the files of bench/src
 * (never included from another folder): the result table, the bench state,
 * the launchers and the helpers.  Not a public interface.
 */
#ifndef PL_BENCH_IMPL_H
#define PL_BENCH_IMPL_H

#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "app.h"
#include "pl_build.h"
#include "pl_error.h"
#include "spmv.h"
#include "pjds_block.h"
#if PJDS_HAVE_CUDA
#include "cuda/pl_cuda_bench.h"
#include "cusparse_ref.h"
#endif

#define BENCH_MAX_ROWS 64
#define BENCH_MAX_WINDOWS 8
#define BENCH_MAX_VARIANTS 32
#define BENCH_WARMUP 5
#define BENCH_TOL 1e-12 /* relative 2-norm error that counts as agreement */

typedef struct bench_row {
    char format[48];
    char variant[32];
    int64_t sigma;     /* -1: not applicable */
    double ms;         /* median, < 0: failed / not run */
    double bytes_dev;  /* device (or host) bytes of the matrix */
    double relerr;     /* vs the host CSR reference, < 0: not checked */
    char note[200];
    double bmin;       /* > 0: the row's own minimal bytes of one SpMV (GB/s and
                          %floor against it: pJDS blocked), 0: bench.bmin */
    double speedup;    /* > 0: time of the CSR reference row / this time */
} bench_row;

/* One row of the vector-ops table: a dense backend op at the matrix's n. */
#define BENCH_MAX_VOPS 16
#define BENCH_SPMM_MAX 8
#define BENCH_VOP_REPEATS 20
typedef struct bench_vop {
    char op[16];       /* gemv_t, gemv_n, gemm, dot, axpy */
    int k, m;          /* columns of V (and of W for gemm); 0: n/a */
    double bytes;      /* minimal bytes moved per call */
    double ms[2];      /* median GPU (event) time: ours, cuBLAS; < 0: n/a */
    double wall_ms[2]; /* median host wall time per call incl. sync */
    double diff;       /* gemv_t: max |ours - cuBLAS| / max |h|; < 0: n/a */
} bench_vop;

typedef struct bench {
    app_ctx *ctx;
    const pl_csr *A;
    int64_t n, nnz;
    int32_t *len;      /* row lengths */
    int32_t *lcol;     /* int32 columns, original order (one rank) */
    double *x, *yref;  /* original order */
    double copy_gbs;   /* measured floor bandwidth */
    double bmin;       /* minimal bytes of one SpMV */
    int repeats;
    int on_gpu;
    char device[128];
    pjds_stats st;
    bench_row rows[BENCH_MAX_ROWS];
    int nrows;
    /* sort-window sweep: ms[w][v] */
    int64_t windows[BENCH_MAX_WINDOWS];
    int nwin, nvar;
    char varname[BENCH_MAX_VARIANTS][32];
    double sweep[BENCH_MAX_WINDOWS][BENCH_MAX_VARIANTS];
    double sweep_err[BENCH_MAX_WINDOWS];
    pl_backend *be;
    pl_backend *cpu;   /* CPU backend for the cross-check on GPU runs */
    /* vector-ops table (GPU, one rank): [op][impl] with impl 0 = ours, 1 = cuBLAS */
    bench_vop vops[BENCH_MAX_VOPS];
    int nvops;
    /* SpMMV table (bench_spmm.c): R = 1, 2, 4, 8, 16, 32 */
    int nspmm;
    int spmm_R[BENCH_SPMM_MAX];
    double spmm_ms[BENCH_SPMM_MAX];     /* ours: pl_op_apply_block, median ms per block */
    double spmm_cus_ms[BENCH_SPMM_MAX]; /* cusparseSpMM (CSR, row-major), < 0: n/a */
    double spmm_err[BENCH_SPMM_MAX];    /* max relative error of ours against the reference */
    double spmm_aug_ms[BENCH_SPMM_MAX]; /* the KPM step pl_op_apply_block_aug, < 0: n/a */
    double spmm_single_ms;              /* one pl_op_apply (the SpMV of the same operator) */
    char spmm_alg[16];
} bench;

typedef int (*launch_fn)(void *arg);

typedef struct spmv_arg {
    pl_backend *be;
    const void *mat;
    const double *x;
    double *y;
} spmv_arg;

#if PJDS_HAVE_CUDA
typedef struct cusparse_arg {
    pl_backend *be;
    pl_cusparse_mat *m;
    const double *x;
    double *y;
} cusparse_arg;
#endif

typedef struct op_arg {
    pl_op *op;
    const double *x;
    double *y;
} op_arg;

/* Host CSR y = A x (OpenMP), int32 columns. */
typedef struct csr_arg {
    const bench *b;
    const double *x;
    double *y;
} csr_arg;

/* ---- bench_util.c ---- */
/* x of global row g: deterministic, in [-1, 1). */
double bench_xval(int64_t g);
/* Append a row (NULL when the table is full). */
bench_row *bench_add_row(bench *b, const char *format, const char *variant, int64_t sigma);
/* Record a failure in the row's note and clear the error: bench goes on. */
void bench_row_fail(bench_row *r, int rc);
int bench_is_gpu(const pl_backend *be);
/* Median ms of `repeats` timed launches after BENCH_WARMUP untimed ones. */
int bench_time_launch(pl_backend *be, launch_fn fn, void *arg, int repeats, double *ms);
/* Relative 2-norm error of y (y[i] is row perm[i]; perm NULL: original order) against b->yref. */
double bench_rel_error(const bench *b, const double *y, const int32_t *perm);
/* Download a backend vector and compare (bench_rel_error). */
int bench_check_y(bench *b, pl_backend *be, const double *d_y, const int32_t *perm, double *err);
int bench_launch_be_spmv(void *p);  /* spmv_arg */
int bench_launch_op(void *p);       /* op_arg */
int bench_launch_host_csr(void *p); /* csr_arg */
#if PJDS_HAVE_CUDA
int bench_launch_cusparse(void *p); /* cusparse_arg */
#endif
const char *bench_variant_name(const bench *b, int v);
int bench_set_variant(bench *b, int v);
/* Host copy bandwidth (GB/s, read + write): parallel memcpy of 256 MiB. */
double bench_host_copy_gbs(void);

/* ---- bench_formats.c ---- */
int bench_run_window(bench *b, int w, int is_cfg, double *d_x, double *d_y, int32_t *perm, int32_t *iperm,
                     int32_t *lcolp, double *hx);
void bench_run_ellpack_r(bench *b, double *d_x, double *d_y, int best_rl_variant);
#if PJDS_HAVE_CUDA
void bench_run_cusparse_csr(bench *b, double *d_x, double *d_y);
void bench_run_cusparse_sell(bench *b, double *d_x, double *d_y);
#endif
void bench_run_op(bench *b);

/* ---- bench_blocked.c ---- */
/* Blocked pJDS (pJDS-b): detection, then rows "pJDS blocked (b = B)" for the
 * configured sort window and sigma = 1, on the GPU or the CPU backend. */
void bench_run_blocked(bench *b, double *d_x, double *d_y);

/* ---- bench_vecops.c ---- */
#if PJDS_HAVE_CUDA
void bench_run_vecops(bench *b);
#endif

/* ---- bench_report.c ---- */
/* ---- bench_spmm.c ---- */
/* The SpMMV table: pl_op_apply_block for R = 1..32 against R single
 * SpMVs of the operator and (GPU) cusparseSpMM; one rank. */
void bench_run_spmm(bench *b);
void bench_print_spmm(const bench *b, FILE *f);
void bench_print_report(bench *b, FILE *f);
int bench_write_json(bench *b, const char *path);

/* ---- bench_mpi.c ---- */
int bench_mpi(bench *b);

/* ---- bench_run.c ---- */
/* The whole benchmark of the configured matrix (`pjds-lanczos bench`):
 * builds it, times every format (or, with several ranks, the distributed
 * operator per exchange mode), prints the table on rank 0 and writes the
 * JSON named by PJDS_BENCH_JSON.  Collective. */
int bench_run(app_ctx *ctx);

#endif
