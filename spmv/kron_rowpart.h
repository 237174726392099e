/* kron_rowpart.h — how kernel variant 6 of the CUDA matrix-free operator
 * (spmv/cuda/kron_row.cu) shares the rows among its blocks.  Plain C with
 * CUDA annotations where compiled by nvcc, so the kernel and the host unit
 * test (tests/spmv/test_kron_pack16.c) run the same arithmetic.
 *
 * The rows (l, r) of the Kronecker-sum operator (pl_kron.h) go in units of
 * PL_KP_UNIT consecutive right rows of one left row: cpr = ceil(n_right /
 * PL_KP_UNIT) units per left row, U = n_left cpr in all, left-major.
 * Block b of G takes the units [pl_kp_unit0(U, G, b), pl_kp_unit0(U, G,
 * b + 1)): contiguous, so it stages each left row of its range once; the
 * ranges differ by at most one unit, so no block waits for a last wave. */
#ifndef PL_KRON_ROWPART_H
#define PL_KRON_ROWPART_H

#include <stdint.h>

#ifdef __CUDACC__
#define PL_KP_FN static __host__ __device__ __forceinline__
#else
#define PL_KP_FN static inline
#endif

#define PL_KP_UNIT 32 /* right rows per unit (a warp's)                  */

/* Units per left row. */
PL_KP_FN int64_t pl_kp_cpr(int64_t n_right) { return (n_right + PL_KP_UNIT - 1) / PL_KP_UNIT; }

/* First unit of block b of G (b = G: U); U b must fit int64_t. */
PL_KP_FN int64_t pl_kp_unit0(int64_t U, int64_t G, int64_t b) { return U * b / G; }

/* The right rows [*ra, *rb) of left row l inside the units [u0, u1)
 * (l in [u0 / cpr, (u1 - 1) / cpr], u0 < u1). */
PL_KP_FN void pl_kp_rows(int64_t n_right, int64_t cpr, int64_t u0, int64_t u1, int64_t l, int64_t *ra, int64_t *rb)
{
    const int64_t a = u0 > l * cpr ? u0 : l * cpr, b = u1 < (l + 1) * cpr ? u1 : (l + 1) * cpr;
    const int64_t e = (b - l * cpr) * PL_KP_UNIT;
    *ra = (a - l * cpr) * PL_KP_UNIT;
    *rb = e < n_right ? e : n_right;
}

#undef PL_KP_FN

#endif
