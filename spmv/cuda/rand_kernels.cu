/* rand_kernels.cu — the reproducible random vectors of the Krylov solvers
 * and the KPM start blocks generated on the device (spmv.h rand_fill,
 * rand_block): element i of column c is lz_random_element(seed_c, g_i) of
 * lanczos/krylov.c, bit for bit (pl_random.h: two splitmix64 rounds in
 * 64-bit integers, then the top 53 bits mapped to the centre of their cell
 * in (-1, 1), which is exact in double).  Saves the host's generation, the
 * page-locked staging buffer (its allocation took 15 ms for HMEp's 6.2 M
 * rows on the H100 host, 2026-11-26) and the upload. */
#include <cuda_runtime.h>
#include <stdint.h>

#include "cuda_impl.h"
#include "pl_random.h"

#define RF_BS 256

/* the first hash round of each column's seed (pl_random_from's hs) */
struct rf_seeds {
    uint64_t hs[PL_SPMM_RMAX];
};

/* V[e] for e = i R + c < n R: consecutive elements to consecutive threads
 * (coalesced stores), g_i from idx where IDX. */
template <bool IDX>
__global__ void __launch_bounds__(RF_BS) k_rand_block(int64_t n, int R, rf_seeds s, int64_t g0,
                                                      const int32_t *__restrict__ idx, double *__restrict__ v)
{
    const int64_t nth = (int64_t)gridDim.x * RF_BS, ne = n * R;
    for (int64_t e = (int64_t)blockIdx.x * RF_BS + threadIdx.x; e < ne; e += nth) {
        const int64_t i = R == 1 ? e : e / R;
        const int c = R == 1 ? 0 : (int)(e - i * R);
        const int64_t g = IDX ? (int64_t)__ldg(idx + i) : g0 + i;
        v[e] = pl_random_from(s.hs[c], g);
    }
}

/* (cuda_impl.h) loaded before its first launch, the solve's start vector */
extern "C" int pl_cuda_rand_preload(void) { return pl_cuda_load(k_rand_block<false>); }

static int rf_launch(pl_backend *be, size_t n, int R, const uint64_t *seeds, int64_t g0, const int32_t *idx, double *v)
{
    pl_cuda_ctx *cx = pl_cuda_ctx_of(be);
    PL_CHECK(R >= 1 && R <= PL_SPMM_RMAX && seeds && v, PL_ERR_ARG, "rand_block: R = %d outside 1..%d or NULL argument", R,
             PL_SPMM_RMAX);
    if (n == 0) return PL_OK;
    rf_seeds s;
    for (int c = 0; c < R; c++) s.hs[c] = pl_splitmix64(seeds[c]);
    int64_t nb = ((int64_t)n * R + RF_BS - 1) / RF_BS, cap = (int64_t)cx->nsm * 16;
    if (nb > cap) nb = cap;
    if (idx) k_rand_block<true><<<(unsigned)nb, RF_BS, 0, cx->stream>>>((int64_t)n, R, s, g0, idx, v);
    else k_rand_block<false><<<(unsigned)nb, RF_BS, 0, cx->stream>>>((int64_t)n, R, s, g0, idx, v);
    PL_CUDA_LAUNCH();
    return PL_OK;
}

extern "C" int pl_cuda_rand_fill(pl_backend *be, size_t n, uint64_t seed, int64_t g0, double *v)
{
    return rf_launch(be, n, 1, &seed, g0, NULL, v);
}

extern "C" int pl_cuda_rand_block(pl_backend *be, size_t n, int R, const uint64_t *seeds, int64_t g0,
                                  const int32_t *idx, double *V)
{
    return rf_launch(be, n, R, seeds, g0, idx, V);
}
