/* pl_cuda_bench.h — extra entry points of the CUDA backend for `pjds-bench`
 * and the GPU tests: SpMV kernel variants, block mode, event timing, device
 * name, copy bandwidth.  Plain C header, no CUDA include; the functions exist only when PJDS_HAVE_CUDA == 1 (callers guard
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

/* Kernel variants of the compressed pJDS SpMV: the one named by
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

/* The Lanczos step's product with the update of its input fused (variant 5
 * of the matrix-free operator only, else PL_ERR_NOTSUP): x_out = (w -
 * alpha z) / b with alpha and b from the sums dd_in of the product that
 * made w = H v - beta_in u (lz_coef.h), then y = H x_out - b z and the 5
 * sums of kron_lz into d_dots; the same bits as be->lz_step followed by
 * be->kron_lz.  For kron_timing's measurement of one kernel per local
 * step (docs/performance.md); the solver does not use it. */
int pl_cuda_kron_lz_in(pl_backend *be, const void *mat, const double *w, const double *z, const double *dd_in,
                       double beta_in, double *x_out, double *y, double *d_dots);

/* Device-to-device copy bandwidth (bytes read + bytes written per second,
 * GB/s = 1e9 B/s): median of `repeats` cudaMemcpyAsync of `bytes` between
 * two buffers.  Allocates 2 x bytes of device memory for the duration. */
int pl_cuda_copy_bandwidth(pl_backend *be, size_t bytes, int repeats, double *gbs);

/* Device bytes of a matrix made by be->mat_create.  Can't fail. */
size_t pl_cuda_mat_bytes(const void *mat);

#endif
