/* cpu_kron_impl.h — the CPU backend's one-vector matrix-free operator
 * (cpu_kron.c: the tables, the dispatch, the SSE2 kernels) and its wider
 * SIMD kernels (cpu_kron_simd.c: AVX2, AVX-512F), private to spmv/cpu. */
#pragma once

#include <stdint.h>

#define KRON_LC 8    /* left rows per chunk: the lanes of step 1 (even) */
#define KRON_RB 2048 /* right rows per block (the buffer: 128 KB)        */
#define KRON_HMAX 64 /* entries of A's row in registers' loop; longer: by entry */

/* The SIMD levels of the kernels (PJDS_CPU_SIMD=sse2|avx2|avx512 forces
 * one at kron_create; default: the widest this CPU has). */
enum { KRON_SIMD_SSE2 = 0, KRON_SIMD_AVX2 = 1, KRON_SIMD_AVX512 = 2, KRON_SIMD_N = 3 };

struct cpu_kron;
/* Step 1: diagonal + couplings of rows (chunk ch, [r0, r1)) into
 * buf[lane * KRON_RB + r - r0]; xt: the chunk's slices transposed by
 * kron_tr_fn where the level has one (else unused). */
typedef void (*kron_couple_fn)(const struct cpu_kron *m, int64_t ch, int64_t r0, int64_t r1, const double *x,
                               const double *xt, double *buf);
/* xt[q KRON_LC + lane] = x[l0 + lane, q] (lanes past n_left: the last row's), q < n_right. */
typedef void (*kron_tr_fn)(const struct cpu_kron *m, int64_t ch, const double *x, double *xt);
/* Step 2: y[0, n) = b[0, n) + sum_j v[j] xs[j][0, n), j in order (nj <= KRON_HMAX). */
typedef void (*kron_hop_fn)(const double *b, double *yl, int64_t n, const double *const *xs, const double *v,
                            int64_t nj);

/* The copy of the tables (pl_kron's names) in one allocation mem, the
 * couplings per chunk of KRON_LC left rows: ch_c [ch][m][lane] (0 past
 * n_left), ch_mk all ones where c != 0, ch_zk the sign bit where c == 0,
 * ch_kb[ch][m] the same as bits (bit lane set where c != 0), ch_use[ch][m]
 * 0: no c != 0, 1: some, 2: all rows of the chunk; ch_dl [ch][lane];
 * ch_off[ch][lane] the offset of lane's slice from the chunk's first
 * (lanes past n_left read the last left row's). */
typedef struct cpu_kron {
    int64_t n_left, n_right, nchunk;
    int nterms;
    int simd; /* KRON_SIMD_* of couple and hop */
    double shift;
    int64_t *a_ptr;
    int32_t *a_col;
    double *a_val, *dr;
    int32_t *lo, *hi;
    double *lo_val, *hi_val;
    double *ch_c, *ch_dl;
    uint64_t *ch_mk, *ch_zk;
    int64_t *ch_off;
    uint8_t *ch_kb;
    int8_t *ch_use;
    kron_couple_fn couple;
    kron_hop_fn hop;
    kron_tr_fn transpose; /* NULL: couple reads x */
    void *mem;
} cpu_kron;

/* cpu_kron_simd.c: the kernels of level simd (KRON_SIMD_AVX2 or _AVX512)
 * into *couple, *hop, *transpose (NULL where couple reads x); returns 0 where this build has none (not x86-64
 * GCC/clang) or this CPU lacks the instructions, else 1. */
int cpu_kron_simd_kernels(int simd, kron_couple_fn *couple, kron_hop_fn *hop, kron_tr_fn *transpose);
