/* rand_kernels.cu — the reproducible random vectors of the Krylov solvers
 * generated on the device (spmv.h rand_fill): element i is
 * lz_random_element(seed, g0 + i) of lanczos/krylov.c, bit for bit: two
 * splitmix64 rounds in 64-bit integers, then the top 53 bits mapped to the
 * centre of their cell in (-1, 1), which is exact in double.  Saves the
 * host's generation, the page-locked staging buffer (its allocation took
 * 15 ms for HMEp's 6.2 M rows on the H100 host, 2026-11-26) and the
 * upload. */
#include <cuda_runtime.h>
#include <stdint.h>

#include "cuda_impl.h"

#define RF_BS 256

static __host__ __device__ __forceinline__ uint64_t rf_splitmix64(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

__global__ void __launch_bounds__(RF_BS) k_rand_fill(int64_t n, uint64_t hs, int64_t g0, double *__restrict__ v)
{
    const int64_t nth = (int64_t)gridDim.x * RF_BS;
    for (int64_t i = (int64_t)blockIdx.x * RF_BS + threadIdx.x; i < n; i += nth) {
        const uint64_t x = rf_splitmix64(hs ^ (uint64_t)(g0 + i));
        const double u = ((double)(x >> 11) + 0.5) * 0x1.0p-53;
        v[i] = 2.0 * u - 1.0;
    }
}

/* (cuda_impl.h) loaded before its first launch, the solve's start vector */
extern "C" int pl_cuda_rand_preload(void) { return pl_cuda_load(k_rand_fill); }

extern "C" int pl_cuda_rand_fill(pl_backend *be, size_t n, uint64_t seed, int64_t g0, double *v)
{
    pl_cuda_ctx *cx = pl_cuda_ctx_of(be);
    if (n == 0) return PL_OK;
    int64_t nb = ((int64_t)n + RF_BS - 1) / RF_BS, cap = (int64_t)cx->nsm * 16;
    if (nb > cap) nb = cap;
    /* the first round of the hash depends on the seed only: on the host */
    k_rand_fill<<<(unsigned)nb, RF_BS, 0, cx->stream>>>((int64_t)n, rf_splitmix64(seed), g0, v);
    PL_CUDA_LAUNCH();
    return PL_OK;
}
