/* pl_random.h — the reproducible random numbers of the solvers' start
 * vectors (lanczos.h lz_random_element; spmv.h rand_fill, rand_block) and
 * of the block-stencil model's blocks (hamiltonian/bs.c):
 * element g of the vector of seed s is
 *   x = splitmix64(splitmix64(s) ^ g),
 *   u = ((x >> 11) + 1/2) 2^-53 (53 bits, centred in their cell),
 *   2 u - 1 in (-1, 1), never exactly -1 or 1,
 * in 64-bit integers and one exact conversion, so that the host, every
 * backend and any number of ranks give the same bits.  splitmix64 is
 * Steele, Lea and Flood's finaliser (the increment 0x9E3779B97F4A7C15
 * added first: splitmix64(0) = 0xE220A8397B1DCDAF).  Plain C with CUDA
 * annotations where compiled by nvcc, as lz_coef.h. */
#ifndef PL_RANDOM_H
#define PL_RANDOM_H

#include <stdint.h>

#ifdef __CUDACC__
#define PL_RAND_FN static __host__ __device__ __forceinline__
#else
#define PL_RAND_FN static inline
#endif

PL_RAND_FN uint64_t pl_splitmix64(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

/* The element of global index g for hs = pl_splitmix64(seed) (the first
 * round depends on the seed only: computed once per vector). */
PL_RAND_FN double pl_random_from(uint64_t hs, int64_t g)
{
    const uint64_t x = pl_splitmix64(hs ^ (uint64_t)g);
    const double u = ((double)(x >> 11) + 0.5) * 0x1.0p-53;
    return 2.0 * u - 1.0;
}

#endif
