/* cuda_impl.h — internals of the CUDA backend (spmv/cuda/ only; included
 * from .cu files, never from another folder).
 *
 * - PL_CUDA / PL_CUBLAS: call, and on failure record PL_ERR_CUDA with the
 *   library's error name and string (PETSc PetscCallCUDA style) and return.
 *   PL_CUDA_LAUNCH checks cudaGetLastError() after a kernel launch.
 * - pl_cuda_ctx: everything the backend owns (device, stream, cuBLAS
 *   handle, timing events, a small device workspace); it lives in
 *   pl_backend.ctx, never in a global.
 * - pl_cuda_mat: a pJDS matrix in device memory.
 */
#ifndef PL_CUDA_IMPL_H
#define PL_CUDA_IMPL_H

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <string.h>
#include <stdint.h>

#include <mpi.h> /* before the extern "C" block: mpi.h handles C++ itself */

#ifdef __cplusplus
extern "C" {
#endif
#include "pl_error.h"
#include "spmv.h"
#include "spmv_impl.h"
#include "pl_cuda_bench.h"
#ifdef __cplusplus
}
#endif
#include "cublas_load.h" /* pl_cublas: cuBLAS opened at run time (C++ linkage, .cu only) */

#define PL_CUDA(e)                                                                                       \
    do {                                                                                                 \
        cudaError_t pl_ce_ = (e);                                                                        \
        if (pl_ce_ != cudaSuccess)                                                                       \
            return pl_error_set(PL_ERR_CUDA, __FILE__, __LINE__, __func__, "%s: %s (%s)", #e,            \
                                cudaGetErrorName(pl_ce_), cudaGetErrorString(pl_ce_));                   \
    } while (0)

#define PL_CUDA_GOTO(e, label, r)                                                                        \
    do {                                                                                                 \
        cudaError_t pl_ce_ = (e);                                                                        \
        if (pl_ce_ != cudaSuccess) {                                                                     \
            (r) = pl_error_set(PL_ERR_CUDA, __FILE__, __LINE__, __func__, "%s: %s (%s)", #e,             \
                               cudaGetErrorName(pl_ce_), cudaGetErrorString(pl_ce_));                    \
            goto label;                                                                                  \
        }                                                                                                \
    } while (0)

/* After a kernel launch: launch-configuration errors and earlier
 * asynchronous faults surface here. */
#define PL_CUDA_LAUNCH() PL_CUDA(cudaGetLastError())

#define PL_CUBLAS(e)                                                                                     \
    do {                                                                                                 \
        cublasStatus_t pl_cbe_ = (e);                                                                    \
        if (pl_cbe_ != CUBLAS_STATUS_SUCCESS)                                                            \
            return pl_error_set(PL_ERR_CUDA, __FILE__, __LINE__, __func__, "%s: %s (%s)", #e,            \
                                pl_cublas.GetStatusName(pl_cbe_), pl_cublas.GetStatusString(pl_cbe_));           \
    } while (0)

/* The SpMV kernel family: thread mapping, loop bound, unrolling of the
 * entry loop, cache hints, block size.  Table in pjds_kernels.cu. */
typedef struct pl_cuda_variant {
    const char *name;
    int bound;   /* 0: row_len[r] (true entries only), 1: chunk_width[c] (reads padding) */
    int unroll;  /* 1, 2, 4 or 8: entries whose loads are issued together              */
    int hint;    /* 0: plain loads; 1: ld.global.nc (__ldg) for matrix and x;          */
                 /* 2: matrix ld.global.cs (streaming), x __ldg;                        */
                 /* 3: matrix L2 evict_first, x L2 evict_last (createpolicy)           */
    int block;   /* threads per block                                                 */
} pl_cuda_variant;

typedef struct pl_cuda_ctx {
    int device;
    cudaStream_t stream;
    cublasHandle_t cublas;
    cudaEvent_t ev0, ev1;      /* timer                               */
    double *d_work;            /* small device workspace (h, Y)       */
    size_t work_n;             /* doubles in d_work                   */
    int variant;               /* SpMV kernel variant for be->spmv    */
    int blk_variant;           /* pJDS-b kernel variant (block mode)  */
    int block_off;             /* 1: mat_create never uses block mode */
    /* tall-skinny kernels (ts_kernels.cu) */
    int nsm;                   /* multiprocessors                      */
    int ts_cublas;             /* 1: gemv_t/gemv_n/gemm via cuBLAS     */
    int ts_occ[50];            /* cached occupancy of gemv_t (0..9), cgs_step (10..19), gram (20..23), sel_gram (24..26), */
                               /* lz_step (27..29), gemv_t2 (30..33), restart_step (34..49)                             */
    double *d_ts_part;         /* nsm * PL_TS_MAX_BLOCKS_PER_SM * PL_TS_KMAX partial sums */
    double *d_ts_h;            /* PL_TS_KMAX: gemv_t result            */
    unsigned int *d_ts_ticket; /* last-block ticket (0 between calls)  */
    double *h_ts_pin;          /* PL_TS_KMAX pinned: gemv_t download   */
    double *d_aug;             /* spmm_aug per-block column sums (grown) */
    size_t aug_n;              /* doubles in d_aug                     */
    double *h_aug_pin;         /* 128 pinned doubles: spmm_aug dots    */
    int cvariant_upload;       /* compressed variant given to each upload (tune.cpjds_variant), -1: by its layout */
    int cvariant_bench;        /* compressed variant of every SpMV (pl_cuda_set_cpjds_variant), -1: the matrix's */
    int cvariant_last;         /* variant of the last compressed upload (pl_cuda_get_cpjds_variant) */
} pl_cuda_ctx;

/* Largest k (and m) of the tall-skinny kernels; cuBLAS above. */
#define PL_TS_KMAX 64
#define PL_TS_MAX_BLOCKS_PER_SM 8

/* A pJDS matrix in device memory (what mat_create returns). */
typedef struct pl_cuda_mat {
    int32_t nrows, ncols, C, nchunks;
    int64_t nnz, nent;
    int64_t *d_chunk_start; /* nchunks + 1 */
    int32_t *d_chunk_width; /* nchunks     */
    int32_t *d_row_len;     /* nchunks * C */
    int32_t *d_col;         /* nent        */
    double *d_val;          /* nent        */
    int32_t *d_row_map;     /* nrows or NULL */
    size_t bytes;           /* device bytes of all arrays */
    struct pl_cuda_pjds_block *blk; /* block mode: a pJDS-b view of this matrix  */
    int blk_b;                      /* (shares d_val), used by be->spmv; or NULL */
    /* compressed pJDS (cpjds_kernels.cu): d_ent set, d_col/d_val NULL */
    uint32_t *d_ent;        /* nent packed entry words */
    double *d_vtab;         /* value table             */
    int32_t *d_otab;        /* offset table            */
    int c_obits;            /* offset id bits          */
    /* narrow layout where it fits (cpjds_kernels.cu): words of <= 24 bits as
     * a 16-bit and an 8-bit plane (then d_ent is NULL), lengths <= 255 as bytes
     * (then d_row_len is NULL) */
    uint16_t *d_ent16;
    uint8_t *d_ent8, *d_len8;
    int compressed;         /* 1: a compressed pJDS (d_col, d_val NULL) */
    int cvariant;           /* compressed: its SpMV kernel variant, chosen at upload */
} pl_cuda_mat;

static inline pl_cuda_ctx *pl_cuda_ctx_of(pl_backend *be) { return (pl_cuda_ctx *)be->ctx; }
static inline int is_cuda(const pl_backend *be) { return be && be->name && !strcmp(be->name, "cuda") && be->ctx; }
#define PL_CHECK_CUDA_BE(be) PL_CHECK(is_cuda(be), PL_ERR_ARG, "not a CUDA backend")

#ifdef __cplusplus
extern "C" {
#endif
/* backend_cuda.cu: cudaMalloc of bytes (at least 8) and, unless h is NULL,
 * an asynchronous copy of h on cx->stream; *total += the bytes allocated.
 * PL_ERR_MEM "out of device memory ..." when cudaMalloc fails for size. */
int pl_cuda_upload_array(pl_cuda_ctx *cx, void **d, const void *h, size_t bytes, size_t *total);
/* staging.cu: the entries of chunks [0, nchunks) (entry e of plane q at
 * dst[q] + e esize[q], e from chunk_start[0]) through two page-locked
 * staging sets of at least `stage` entries (at least the widest chunk),
 * fill writing the planes of consecutive chunk ranges [c0, c1) while the
 * previous range is copied on cx->stream; returns after every copy (one
 * cudaStreamSynchronize, also of the copies queued before). */
#define PL_STAGE_PLANES 2
typedef int (*pl_cuda_stage_fill)(void *arg, int64_t c0, int64_t c1, void *const *planes);
int pl_cuda_staged_upload(pl_cuda_ctx *cx, const int64_t *chunk_start, int64_t nchunks, int64_t stage, int np,
                          const size_t *esize, void *const *dst, pl_cuda_stage_fill fill, void *arg);
/* cpjds_kernels.cu: be->cmat_create, the compressed SpMV (variant <
 * pl_cuda_cpjds_nvariants(), pl_cuda_bench.h) and SpMMV; the variant of a
 * name (-1: none). */
int pl_cuda_cpjds_variant_by_name(const char *name);
int pl_cuda_cmat_create(pl_backend *be, const pl_cpjds *p, void **mat);
int pl_cuda_cmat_create_fill(pl_backend *be, const pl_cpjds *p, pl_cpjds_fill_fn fill, void *arg, void **mat);
int pl_cuda_cpjds_spmv(pl_cuda_ctx *cx, const pl_cuda_mat *m, int variant, const double *x, double *y);
int pl_cuda_cpjds_spmm(pl_cuda_ctx *cx, const pl_cuda_mat *m, int R, const double *X, double *Y);
/* pjds_kernels.cu */
int pl_cuda_spmv_launch(pl_cuda_ctx *cx, const pl_cuda_mat *m, int variant, const double *d_x, double *d_y);
int pl_cuda_nvariants_impl(void);
const pl_cuda_variant *pl_cuda_variant_get(int v);
int pl_cuda_fill(pl_cuda_ctx *cx, size_t n, double a, double *d_x);
int pl_cuda_gather(pl_cuda_ctx *cx, size_t n, const int32_t *d_idx, const double *d_x, double *d_buf);
/* spmm_kernels.cu: SpMMV (R <= 64), block gather, block dot products
 * (be->spmm, gather_block, bdot), on cx->stream; bdot waits for the result */
int pl_cuda_spmm(pl_cuda_ctx *cx, const pl_cuda_mat *m, int R, const double *X, double *Y);
int pl_cuda_gather_block(pl_cuda_ctx *cx, size_t n, int R, const int32_t *idx, const double *X, double *buf);
int pl_cuda_bdot(pl_cuda_ctx *cx, size_t n, int R, const double *X, const double *Y, double *h_out);
/* The fused KPM step for R in {2, 4, 8, 16, 32} on a local matrix (no
 * row_map) with 16-byte aligned blocks; *done = 0 (and nothing happened)
 * otherwise, then the caller composes it. */
int pl_cuda_spmm_aug(pl_cuda_ctx *cx, const pl_cuda_mat *m, int R, double alpha, double gamma, double beta,
                     const double *X, double *Y, double *h_dots, int *done);
/* The Chebyshev filter step (be->spmm_cheb; spmv.h), asynchronous on
 * cx->stream, for the same R and layouts as pl_cuda_spmm_aug (Acc, when
 * not NULL, 16-byte aligned too); *done = 0 otherwise. */
int pl_cuda_spmm_cheb(pl_cuda_ctx *cx, const pl_cuda_mat *m, int R, double alpha, double gamma, double beta,
                      const double *X, double *Y, double c1, double c2, double *Acc, int *done);
/* The same on stream s (transport.cu: the comm stream). */
int pl_cuda_gather_on(cudaStream_t s, size_t n, const int32_t *d_idx, const double *d_x, double *d_buf);
/* kron.cu: the matrix-free operator of a Kronecker sum (be->kron_create,
 * kron_apply, kron_destroy; spmv.h), on cx->stream */
int pl_cuda_kron_create(pl_backend *be, const pl_kron *k, void **mat);
int pl_cuda_kron_apply(pl_backend *be, const void *mat, const double *x, double *y);
void pl_cuda_kron_destroy(pl_backend *be, void *mat);
/* kron_remote.cu: the remote part of a matrix-free operator on several
 * ranks (be->kron_rem_create, kron_rem_apply, kron_rem_spmm,
 * kron_rem_destroy), on cx->stream */
int pl_cuda_kron_rem_create(pl_backend *be, const pl_kron_remote *r, void **mat);
int pl_cuda_kron_rem_apply(pl_backend *be, const void *mat, const double *x_halo, double *y);
int pl_cuda_kron_rem_spmm(pl_backend *be, const void *mat, int R, const double *X_halo, double *Y);
void pl_cuda_kron_rem_destroy(pl_backend *be, void *mat);
/* spmm_kernels.cu: the fused products' sums, cx->d_aug of at least need
 * doubles (grown when needed) and the page-locked cx->h_aug_pin of
 * 2 PL_SPMM_RMAX doubles (spmm_aug, kron_spmm_aug, kron_lz) */
int pl_cuda_aug_buffers(pl_cuda_ctx *cx, size_t need);
/* kron_block.cu: its block products (be->kron_spmm, kron_spmm_aug) */
int pl_cuda_kron_spmm(pl_backend *be, const void *mat, int R, const double *X, double *Y);
int pl_cuda_kron_spmm_aug(pl_backend *be, const void *mat, int R, double alpha, double gamma, double beta,
                          const double *X, double *Y, double *h_dots);
int pl_cuda_kron_lz(pl_backend *be, const void *mat, const double *x, const double *z, double beta, double *y,
                    double *d_dots);
/* backend_cuda_dense.cu: the basis slots of be (gemv_t ... lz_step), and
 * d_work grown to hold n doubles (cudaFree waits for the device). */
void pl_cuda_dense_slots(pl_backend *be);
int pl_cuda_work_reserve(pl_cuda_ctx *cx, size_t n);
/* transport.cu: the halo transport slots of the cuda backend (pl_backend.halo). */
extern const pl_halo_ops pl_cuda_halo_ops;
/* ts_kernels.cu: workspace (called by ctx_init / cu_destroy) and the
 * tall-skinny kernels, asynchronous on cx->stream; 1 <= k, m <= PL_TS_KMAX,
 * n >= 1 (PL_ERR_ARG otherwise).  gemv_t leaves h in cx->d_ts_h (k doubles);
 * gemv_n copies h_h (host) into the launch parameters, so h_h may change as
 * soon as the call returns; gemm reads Y (k x m, ldy) from device memory. */
int pl_cuda_ts_init(pl_cuda_ctx *cx);
void pl_cuda_ts_free(pl_cuda_ctx *cx);
/* The kernels of ts_kernels.cu, ts_restart.cu, ts_lanczos.cu,
 * rand_kernels.cu (k_rand_fill) and pjds_kernels.cu (k_fill, k_gather, SpMV
 * variant v) loaded before their first launch: under lazy loading, CUDA's
 * default, a first launch inside a solve pays for it (backend_cuda.cu
 * ctx_init calls these unless PJDS_CUDA_PRELOAD=0). */
int pl_cuda_ts_preload(void);
int pl_cuda_ts_restart_preload(void);
int pl_cuda_ts_lanczos_preload(void);
int pl_cuda_rand_preload(void);
int pl_cuda_pjds_preload(int v);
int pl_cuda_ts_gemv_t(pl_cuda_ctx *cx, size_t n, int k, const double *V, size_t ld, const double *w);
/* gram (1 <= k <= 4): the upper triangle of V^T V, packed by columns
 * ((0,0), (0,1), (1,1), (0,2) ...: k (k + 1) / 2 doubles), into d_ts_h. */
int pl_cuda_ts_gram(pl_cuda_ctx *cx, size_t n, int k, const double *V, size_t ld);
int pl_cuda_ts_gemv_n(pl_cuda_ctx *cx, size_t n, int k, double alpha, const double *V, size_t ld, const double *h_h,
                      double beta, double *w);
int pl_cuda_ts_gemm(pl_cuda_ctx *cx, size_t n, int k, int m, const double *V, size_t ld, const double *d_Y, int ldy,
                    double *W, size_t ldw);
/* gemv_t2 (1 <= k, 2 k <= PL_TS_KMAX): d_ts_h[0:k] = V^T w0, d_ts_h[k:2k] =
 * V^T w1, one pass over V (gemm_t with two columns). */
int pl_cuda_ts_gemv_t2(pl_cuda_ctx *cx, size_t n, int k, const double *V, size_t ld, const double *w0,
                       const double *w1);
/* cgs_step (1 <= k < PL_TS_KMAX): w -= V h_in (h_in copied into the launch
 * parameters), then d_ts_h[0:k] = V^T w and d_ts_h[k] = w.w (k + 1 doubles).
 * basis_update (1 <= m <= k <= PL_TS_KMAX): V[:, 0:m] = V[:, 0:k] Y in place,
 * Y in device memory. */
int pl_cuda_ts_cgs_step(pl_cuda_ctx *cx, size_t n, int k, const double *V, size_t ld, double *w, const double *h_in);
/* ts_restart.cu, restart_step (spmv.h; pl_cuda_ts_restart_fits: off <= 16,
 * 1 <= kk <= 16, kk + 1 < sz <= 48): the update, the restart vector and the
 * corrected product in one pass, Y (sz x kk, ldy) in device memory, h_in
 * (k + 1 = off + kk + 1 doubles) copied into the launch parameters;
 * d_ts_h[0:k+2] the sums. */
int pl_cuda_ts_restart_fits(int off, int sz, int kk);
int pl_cuda_ts_restart_step(pl_cuda_ctx *cx, size_t n, int off, int sz, int kk, double *V, size_t ld, const double *d_Y,
                            int ldy, const double *h_in);
/* ts_lanczos.cu, sel_gram (1 <= ka <= 16): d_ts_h[0:ka] = A^T x, then the upper triangle
 * of [b0 b1 x]^T [b0 b1 x] packed as gram (6 doubles), B = [b0 b1 x]
 * adjacent columns.  sel_update: x = s (x - A ca - b0 cb[0] - b1 cb[1]),
 * coefficients copied into the launch parameters. */
int pl_cuda_ts_sel_gram(pl_cuda_ctx *cx, size_t n, int ka, const double *A, const double *B, size_t ld);
int pl_cuda_ts_sel_update(pl_cuda_ctx *cx, size_t n, int ka, const double *A, const double *h_ca, const double *B,
                          const double *h_cb, size_t ld, double s, double *x);
/* lz_step: alpha, b from kron_lz's sums d_dots (lz_coef.h); unless
 * declined y = (y - alpha x) / b; d_ts_h[0:PL_LZ_OUT] = the sums, alpha, b,
 * declined, d_ts_h[PL_LZ_OUT:PL_LZ_OUT+ka] = A^T y (0 <= ka <= 16) */
int pl_cuda_ts_lz_step(pl_cuda_ctx *cx, size_t n, int ka, const double *A, const double *x, size_t ld, double beta,
                       const double *d_dots, double *y);
int pl_cuda_ts_basis_update(pl_cuda_ctx *cx, size_t n, int k, int m, double *V, size_t ld, const double *d_Y,
                            int ldy);
/* spmv.h rand_fill: v[i] = lz_random_element(seed, g0 + i) on the device
 * (rand_kernels.cu). */
int pl_cuda_rand_fill(pl_backend *be, size_t n, uint64_t seed, int64_t g0, double *v);
/* spmv.h rand_block: the KPM start blocks on the device (rand_kernels.cu) */
int pl_cuda_rand_block(pl_backend *be, size_t n, int R, const uint64_t *seeds, int64_t g0, const int32_t *idx,
                       double *V);
#ifdef __cplusplus
}
#endif

#ifdef __cplusplus
/* Load kernels now, not at their first launch (lazy loading, CUDA's
 * default): cudaFuncGetAttributes needs the loaded function.  The files'
 * *_preload functions above list their kernels through it. */
template <typename... F>
static inline int pl_cuda_load(F *...fn)
{
    const void *f[] = {(const void *)fn...};
    cudaFuncAttributes fa;
    for (const void *g : f) PL_CUDA(cudaFuncGetAttributes(&fa, g));
    return PL_OK;
}
#endif

#endif
