/* cpu_cpjds.c — the CPU backend's kernels of the compressed pJDS (spmv.h
 * "compressed pJDS").
 *
 * SpMV: as the pJDS kernel of backend_cpu.c, one thread per balanced range
 * of chunks, C row accumulators, the loop over the chunk's columns j
 * streams C entry words (4 bytes each instead of 12) and the inner loop over
 * the C rows gathers value, offset and x (three vector gathers per column:
 * the tables sit in L1/L2, so the memory traffic is the words plus x and y).
 * Rows keep their original order, so x[r + offset] of neighbouring rows
 * are neighbours too.  The last chunk, whose padding rows lie past the end
 * of x, runs row by row with the true row lengths.
 * SpMMV: row by row, each entry decoded once for all R vectors.
 */
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "pl_error.h"
#include "spmv.h"
#include "spmv_impl.h"
#include "cpu_isa.h"
#include "cpu_ts.h"

typedef void (*cchunk_fn)(const pl_cpjds *, int32_t, int32_t, const double *, double *);

/* Chunk c row by row with the true lengths (any C, the last chunk). */
static void crows(const pl_cpjds *p, int32_t c, const double *restrict x, double *restrict y)
{
    const int32_t C = p->C, n = p->nrows, r0 = c * C, rn = n - r0 < C ? n - r0 : C;
    const uint32_t om = (uint32_t)(((uint64_t)1 << p->obits) - 1);
    const uint32_t *restrict e = p->ent + p->chunk_start[c];
    for (int32_t r = 0; r < rn; r++) {
        double s = 0.0;
        const int32_t l = p->row_len[r0 + r];
        for (int32_t j = 0; j < l; j++) {
            const uint32_t u = e[(int64_t)j * C + r];
            s += p->vtab[u >> p->obits] * x[r0 + r + p->otab[u & om]];
        }
        y[r0 + r] = s;
    }
}

static void crange_generic(const pl_cpjds *p, int32_t c0, int32_t c1, const double *restrict x, double *restrict y)
{
    for (int32_t c = c0; c < c1; c++) crows(p, c, x, y);
}

/* Chunks [c0, c1), compile-time C; full chunks C rows at a time. */
#define PL_CCHUNK_KERNEL(CC, ISA)                                                                    \
    PL_TGT_##ISA static void crange_##CC##_##ISA(const pl_cpjds *p, int32_t c0, int32_t c1,          \
                                                 const double *restrict x, double *restrict y)      \
    {                                                                                                \
        const int32_t n = p->nrows;                                                                  \
        const int ob = p->obits;                                                                     \
        const uint32_t om = (uint32_t)(((uint64_t)1 << ob) - 1);                                     \
        const double *restrict vt = p->vtab;                                                         \
        const int32_t *restrict ot = p->otab;                                                        \
        for (int32_t c = c0; c < c1; c++) {                                                          \
            const int32_t r0 = c * CC;                                                               \
            if (r0 + CC > n) {                                                                       \
                crows(p, c, x, y);                                                                   \
                continue;                                                                            \
            }                                                                                        \
            double acc[CC];                                                                          \
            for (int r = 0; r < CC; r++) acc[r] = 0.0;                                               \
            const uint32_t *restrict e = p->ent + p->chunk_start[c];                                 \
            const double *restrict xr = x + r0;                                                      \
            const int32_t w = p->chunk_width[c];                                                     \
            for (int32_t j = 0; j < w; j++) {                                                        \
                _Pragma("omp simd") for (int r = 0; r < CC; r++)                                     \
                {                                                                                    \
                    const uint32_t u = e[r];                                                         \
                    acc[r] += vt[u >> ob] * xr[r + ot[u & om]];                                      \
                }                                                                                    \
                e += CC;                                                                             \
            }                                                                                        \
            for (int r = 0; r < CC; r++) y[r0 + r] = acc[r];                                         \
        }                                                                                            \
    }
#define PL_CCHUNK_KERNELS(ISA)                                                                       \
    PL_CCHUNK_KERNEL(32, ISA)                                                                        \
    PL_CCHUNK_KERNEL(16, ISA)                                                                        \
    PL_CCHUNK_KERNEL(8, ISA)
PL_CCHUNK_KERNELS(default)
#if PL_HAVE_ISA_CLONES
PL_CCHUNK_KERNELS(avx2)
#define crange_32_avx512 crange_32_avx2 /* AVX-512 hosts run the AVX2 kernels (cpu_cpjds_spmv) */
#define crange_16_avx512 crange_16_avx2
#define crange_8_avx512 crange_8_avx2
#endif

static cchunk_fn ckernel(int isa, int C)
{
#define PL_PICK(ISA)                                                                                 \
    switch (C) {                                                                                     \
    case 32: return crange_32_##ISA;                                                                 \
    case 16: return crange_16_##ISA;                                                                 \
    case 8: return crange_8_##ISA;                                                                   \
    default: return crange_generic;                                                                  \
    }
    PL_ISA_DISPATCH(isa, PL_PICK);
#undef PL_PICK
}

int cpu_cpjds_spmv(int isa, int rows, const pl_cpjds *p, int nparts, const int32_t *part, const double *x, double *y)
{
    if (p->nrows == 0) return PL_OK;
    /* AVX2 also where AVX-512 is there: three gathers per entry run faster
     * as 4-wide than as 8-wide gathers (16 cores of the H100 host, HMEp:
     * 14.5 ms AVX2, 18.7 ms AVX-512, 15.6 ms row by row, 17.3 ms SSE2) */
    const cchunk_fn kern = rows ? crange_generic : ckernel(isa, p->C);
    if (nparts == 1 || p->nent < 4096) {
        kern(p, 0, p->nchunks, x, y);
        return PL_OK;
    }
#pragma omp parallel num_threads(nparts)
    {
        const int t = omp_get_thread_num(), nt = omp_get_num_threads();
        for (int k = t; k < nparts; k += nt) kern(p, part[k], part[k + 1], x, y);
    }
    return PL_OK;
}

int cpu_cpjds_spmm(const pl_cpjds *p, int nparts, const int32_t *part, int R, const double *X, double *Y)
{
    PL_CHECK(R >= 1 && R <= PL_SPMM_RMAX, PL_ERR_ARG, "spmm: R = %d outside 1..%d", R, PL_SPMM_RMAX);
    if (p->nrows == 0) return PL_OK;
    const int32_t C = p->C, n = p->nrows;
    const int ob = p->obits;
    const uint32_t om = (uint32_t)(((uint64_t)1 << ob) - 1);
#pragma omp parallel num_threads(nparts)
    {
        const int t = omp_get_thread_num(), nt = omp_get_num_threads();
        double acc[PL_SPMM_RMAX];
        for (int k = t; k < nparts; k += nt)
            for (int32_t c = part[k]; c < part[k + 1]; c++) {
                const int32_t r0 = c * C, rn = n - r0 < C ? n - r0 : C;
                const uint32_t *restrict e = p->ent + p->chunk_start[c];
                for (int32_t r = 0; r < rn; r++) {
                    const int64_t i = r0 + r;
                    for (int q = 0; q < R; q++) acc[q] = 0.0;
                    for (int32_t j = 0; j < p->row_len[i]; j++) {
                        const uint32_t u = e[(int64_t)j * C + r];
                        const double v = p->vtab[u >> ob];
                        const double *restrict xr = X + (i + p->otab[u & om]) * R;
#pragma omp simd
                        for (int q = 0; q < R; q++) acc[q] += v * xr[q];
                    }
                    memcpy(Y + i * R, acc, (size_t)R * sizeof *acc);
                }
            }
    }
    return PL_OK;
}
