/* lz_coef.h — the coefficients of the fused Lanczos step (spmv.h kron_lz,
 * lz_step) from the product's five sums.  Plain C with CUDA annotations
 * where compiled by nvcc, so that the backend that applies them (the CPU
 * on the host, CUDA in the update kernel, with no host round trip between
 * the product and the update) and the unit test run the same arithmetic.
 *
 * With x = v_j, z = v_{j-1} and y = A x - beta z (the product's output),
 * d = x.x, y.x, y.y, z.y, z.x: alpha = y.x / x.x makes y - alpha x
 * orthogonal to x, and ||y - alpha x||^2 = y.y - 2 alpha y.x + alpha^2 x.x
 * follows exactly (the composed step's Gram matrix gives the same).  The
 * step is declined (the caller orthogonalises y in full) where x is not a
 * unit vector to a half, or where the three-term recurrence cancels more
 * than 1 - 1e-4 of ||A x||^2 = y.y + 2 beta z.y + beta^2 (||z|| = 1): what
 * is left is then mostly rounding. */
#ifndef PL_LZ_COEF_H
#define PL_LZ_COEF_H

#include <math.h>

#ifdef __CUDACC__
#define PL_LZ_FN static __host__ __device__ __forceinline__
#else
#define PL_LZ_FN static inline
#endif

/* Layout of lz_step's host output (spmv.h): the five sums, alpha, beta
 * (the new norm), declined (1.0 or 0.0), then the ka measured overlaps. */
#define PL_LZ_OUT_ALPHA 5
#define PL_LZ_OUT_NORM 6
#define PL_LZ_OUT_DECLINED 7
#define PL_LZ_OUT 8

/* 1: the local step stands, *alpha and *nrm (> 0) set; 0: declined. */
PL_LZ_FN int pl_lz_coef(const double *d, double beta, double *alpha, double *nrm)
{
    const double xx = d[0], xy = d[1], yy = d[2], zy = d[3];
    *alpha = 0.0;
    *nrm = 1.0;
    if (!(xx > 0.5)) return 0;
    const double al = xy / xx, b2 = yy - 2.0 * al * xy + al * al * xx;
    const double ax2 = yy + 2.0 * beta * zy + beta * beta;
    if (!(ax2 > 0.0) || !(b2 > 1e-4 * ax2)) return 0;
    *alpha = al;
    *nrm = sqrt(b2);
    return 1;
}

#endif
