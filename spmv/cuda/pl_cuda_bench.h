/* pl_cuda_bench.h — extra entry points of the CUDA backend for `bench` and
 * the GPU tests: SpMV kernel variants, event timing, copy bandwidth, and
 * cuSPARSE reference formats (CSR, sliced ELLPACK).  Plain C header, no CUDA
 * include; the functions exist only when PJDS_HAVE_CUDA == 1 (callers guard
 * with #if PJDS_HAVE_CUDA).  All functions taking a backend require one
 * made by pl_backend_cuda_create (PL_ERR_ARG otherwise).  Not collective.
 */
#ifndef PL_CUDA_BENCH_H
#define PL_CUDA_BENCH_H

#include <stddef.h>
#include <stdint.h>

#include "spmv.h"

/* Kernel variants of the pJDS SpMV (0 = naive one thread per row, plain
 * loads).  The default for be->spmv is pl_cuda_spmv_variant_default(),
 * overridden by the environment variable PJDS_CUDA_VARIANT (name or
 * number).  Can't fail (NULL for an index out of range). */
int pl_cuda_spmv_nvariants(void);
const char *pl_cuda_spmv_variant_name(int v);
int pl_cuda_spmv_variant_default(void);
/* Select the variant used by be->spmv from now on. */
int pl_cuda_set_variant(pl_backend *be, int v);
int pl_cuda_get_variant(pl_backend *be, int *v);

/* Kernel variants of the compressed pJDS SpMV (issue 16): the one named by
 * PJDS_CPJDS_VARIANT, else (pl_cuda_cpjds_variant_default() = -1) the best of
 * the matrix's device layout, set when a compressed matrix is uploaded. */
int pl_cuda_cpjds_nvariants(void);
const char *pl_cuda_cpjds_variant_name(int v);
int pl_cuda_cpjds_variant_default(void);
int pl_cuda_set_cpjds_variant(pl_backend *be, int v);
int pl_cuda_get_cpjds_variant(pl_backend *be, int *v);

/* Dense tall-skinny products of the table (gemv_t, gemv_n, gemm): 0 = our
 * kernels (ts_kernels.cu) for k, m <= 64 and cuBLAS above (default), 1 =
 * always cuBLAS (also with the environment variable PJDS_CUDA_TS=cublas).
 * For A/B timing in `bench` and the tests. */
int pl_cuda_set_ts_cublas(pl_backend *be, int on);

/* Block mode of be->mat_create (backend_cuda.cu: a matrix whose rows store
 * runs of b consecutive columns gets the pJDS-b kernel): 1 = on (default
 * unless PJDS_CUDA_BLOCKED=0), 0 = off, so that `bench` times plain pJDS in
 * its pJDS and ELLPACK-R rows.  Matrices already created keep their mode. */
int pl_cuda_set_block_mode(pl_backend *be, int on);

/* Device name and number ("NVIDIA H100 80GB HBM3"). */
int pl_cuda_device_name(pl_backend *be, char *buf, size_t len, int *device);

/* Event timer on the backend's stream: start, (work), stop; stop waits for
 * the stop event and returns the elapsed milliseconds. */
int pl_cuda_timer_start(pl_backend *be);
int pl_cuda_timer_stop(pl_backend *be, double *ms);

/* Device-to-device copy bandwidth (bytes read + bytes written per second,
 * GB/s = 1e9 B/s): median of `repeats` cudaMemcpyAsync of `bytes` between
 * two buffers.  Allocates 2 x bytes of device memory for the duration. */
int pl_cuda_copy_bandwidth(pl_backend *be, size_t bytes, int repeats, double *gbs);

/* Device bytes of a matrix made by be->mat_create.  Can't fail. */
size_t pl_cuda_mat_bytes(const void *mat);

/* cuSPARSE reference formats (bench, tests).  y = A x with cusparseSpMV. */
typedef struct pl_cusparse_mat pl_cusparse_mat;
/* CSR from a host CSR with int32 column indices (nrows + 1 row offsets). */
int pl_cusparse_csr_create(pl_backend *be, int64_t nrows, int64_t ncols, const int64_t *row_ptr, const int32_t *col,
                           const double *val, pl_cusparse_mat **m);
/* Sliced ELLPACK (CUSPARSE_FORMAT_SLICED_ELLPACK, slice = p->C) from the
 * arrays of a host pJDS (same layout; padding columns become -1).
 * PL_ERR_NOTSUP if cuSPARSE refuses the configuration (message says why);
 * p->row_map must be NULL. */
int pl_cusparse_sell_create(pl_backend *be, const pjds *p, pl_cusparse_mat **m);
int pl_cusparse_spmv(pl_backend *be, pl_cusparse_mat *m, const double *d_x, double *d_y);
size_t pl_cusparse_bytes(const pl_cusparse_mat *m);
void pl_cusparse_destroy(pl_backend *be, pl_cusparse_mat **m);


/* cuSPARSE SpMM of a CSR reference matrix with row-major dense blocks:
 * Y (nrows x R) = A X (ncols x R), ld = R; create binds the device blocks
 * and runs one trial product; run queues one product on the stream. */
typedef struct pl_cusparse_spmm pl_cusparse_spmm;
int pl_cusparse_spmm_create(pl_backend *be, pl_cusparse_mat *m, int R, const double *d_X, double *d_Y,
                            pl_cusparse_spmm **p);
int pl_cusparse_spmm_run(pl_backend *be, pl_cusparse_mat *m, pl_cusparse_spmm *p);
void pl_cusparse_spmm_destroy(pl_cusparse_spmm **p);
const char *pl_cusparse_spmm_alg(const pl_cusparse_spmm *p);

#endif
