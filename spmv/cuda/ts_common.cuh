/* ts_common.cuh — what the tall-skinny kernels of the CUDA backend share
 * (ts_kernels.cu, ts_restart.cu): the block size, the coefficient vector
 * passed in launch parameters, streaming and plain loads of VEC doubles,
 * the warp sum, the last block's deterministic sum of the per-block
 * partials, and the host's occupancy cache and grid size. */
#ifndef PL_TS_COMMON_CUH
#define PL_TS_COMMON_CUH

#include <cuda_runtime.h>
#include <stdint.h>

#include "cuda_impl.h"

#define TS_BS 256                /* threads per block                     */
#define TS_WARPS (TS_BS / 32)

typedef struct ts_hvec {
    double h[PL_TS_KMAX];
} ts_hvec;

/* ---- loads -------------------------------------------------------------------- */

/* streaming loads of VEC consecutive doubles (p 16-byte aligned for VEC = 2) */
template <int VEC>
static __device__ __forceinline__ void ld_cs(const double *p, double *v)
{
    if (VEC == 2) {
        double2 t = __ldcs((const double2 *)p);
        v[0] = t.x;
        v[1] = t.y;
    } else {
        v[0] = __ldcs(p);
    }
}

template <int VEC>
static __device__ __forceinline__ void ld_nc(const double *p, double *v)
{
    if (VEC == 2) {
        double2 t = __ldg((const double2 *)p);
        v[0] = t.x;
        v[1] = t.y;
    } else {
        v[0] = __ldg(p);
    }
}

template <int VEC>
static __device__ __forceinline__ void ld_plain(const double *p, double *v)
{
    if (VEC == 2) {
        double2 t = *(const double2 *)p;
        v[0] = t.x;
        v[1] = t.y;
    } else {
        v[0] = *p;
    }
}

template <int VEC>
static __device__ __forceinline__ void st_plain(double *p, const double *v)
{
    if (VEC == 2) {
        double2 t;
        t.x = v[0];
        t.y = v[1];
        *(double2 *)p = t;
    } else {
        *p = v[0];
    }
}

static __device__ __forceinline__ double warp_sum(double s)
{
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) s += __shfl_down_sync(0xffffffffu, s, off);
    return s; /* in lane 0 */
}

/* ---- gemv_t --------------------------------------------------------------------- */

/* Second stage of the two-stage column sums (gemv_t, cgs_step): after every
 * block has written its partials part[b * nc + c], the last block to finish
 * (threadfence + atomic ticket) adds them in block order, one warp per
 * column, into h[0:nc] and resets the ticket for the next launch. */
static __device__ __forceinline__ void last_block_sum(const double *part, int nc, unsigned int *ticket, double *h)
{
    __shared__ int is_last;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    __threadfence();
    __syncthreads();
    if (threadIdx.x == 0) is_last = atomicAdd(ticket, 1u) == gridDim.x - 1;
    __syncthreads();
    if (!is_last) return;
    __threadfence();
    for (int c = warp; c < nc; c += TS_WARPS) {
        double s = 0.0;
        for (unsigned b = lane; b < gridDim.x; b += 32) s += __ldcg(part + (int64_t)b * nc + c);
        s = warp_sum(s);
        if (lane == 0) h[c] = s;
    }
    if (threadIdx.x == 0) *ticket = 0u;
}

/* ---- the basis update's combination ----------------------------------------------- */

/* acc[c][u] = sum_{j < k} V[i0 + u, j] ys[j MT + c] for R rows from vp =
 * V + i0: the k old values read in batches of JB loads in flight, each
 * sum in ascending j with fma.  ys holds ceil(k / JB) JB rows of MT (zero
 * beyond the used ones).  k_basis_update and k_restart_step form their
 * kept values with it, so they are the same bits. */
template <int MT, int JB, int R>
static __device__ __forceinline__ void ts_combine(const double *vp, int64_t ld, const double *ys, int k,
                                                  double (&acc)[MT][R])
{
#pragma unroll
    for (int c = 0; c < MT; c++)
#pragma unroll
        for (int u = 0; u < R; u++) acc[c][u] = 0.0;
    for (int j0 = 0; j0 < k; j0 += JB) {
        double v[JB][R];
#pragma unroll
        for (int q = 0; q < JB; q++) {
            if (j0 + q < k) ld_cs<R>(vp + (int64_t)(j0 + q) * ld, v[q]);
            else
#pragma unroll
                for (int u = 0; u < R; u++) v[q][u] = 0.0;
        }
#pragma unroll
        for (int q = 0; q < JB; q++) {
            const double *yj = ys + (j0 + q) * MT;
#pragma unroll
            for (int c = 0; c < MT; c++) {
                const double y = yj[c];
#pragma unroll
                for (int u = 0; u < R; u++) acc[c][u] = fma(v[q][u], y, acc[c][u]);
            }
        }
    }
}

/* ---- host side ----------------------------------------------------------------- */

static inline int aligned16(const void *p) { return ((uintptr_t)p & 15u) == 0; }

/* Resident blocks per SM of a kernel with smem bytes of dynamic shared
 * memory (cached in cx->ts_occ[slot]). */
static inline int occupancy(pl_cuda_ctx *cx, int slot, const void *fn, size_t smem = 0)
{
    if (cx->ts_occ[slot] > 0) return cx->ts_occ[slot];
    int occ = 0;
    cudaError_t e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, fn, TS_BS, smem);
    if (e != cudaSuccess || occ < 1) {
        (void)cudaGetLastError();
        occ = 1;
    }
    if (occ > PL_TS_MAX_BLOCKS_PER_SM) occ = PL_TS_MAX_BLOCKS_PER_SM;
    cx->ts_occ[slot] = occ;
    return occ;
}

static inline unsigned grid_rows(const pl_cuda_ctx *cx, int64_t groups, int64_t cap)
{
    int64_t nb = (groups + TS_BS - 1) / TS_BS;
    if (nb > cap) nb = cap;
    if (nb < 1) nb = 1;
    (void)cx;
    return (unsigned)nb;
}

#endif
