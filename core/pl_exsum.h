/* pl_exsum.h — an exact accumulator of doubles (a long fixed-point
 * integer over the whole double range): the sum of any doubles in any order
 * and any grouping gives the same bits, rounded once at the end (round to
 * nearest, ties to even).  [solver] reproducible = true sums every global
 * reduction with it (spmv/op_repro.c), so that the reductions do not depend
 * on how rows are split over ranks and threads.
 *
 * Representation: value = sum_i d[i] 2^(32 i - 1074), i < PL_EXSUM_DIGITS:
 * bit 0 is the smallest subnormal 2^-1074, so every finite double is an
 * integer multiple of it and adds without rounding: its 53-bit significand
 * shifted to its exponent lands in three 32-bit digits, which are added
 * into signed 64-bit limbs (the carries are deferred: a limb takes 2^30
 * additions before pl_exsum_norm must run; pl_exsum_add does that itself).
 * 68 digits hold 2176 bits: the 2099 bits of the double range with 77 bits
 * of headroom for the sum's growth.  Inf and NaN are counted apart and give
 * IEEE's answer (NaN if any NaN or both infinities, else the infinity).
 * Integer addition is associative, so thread and rank partials combine in
 * any order (pl_exsum_merge; across ranks an MPI_SUM over the normalised
 * limbs, spmv/op_repro.c).  Knows no MPI, threads or files. */
#ifndef PL_EXSUM_H
#define PL_EXSUM_H

#include <stdint.h>
#include <string.h>

#define PL_EXSUM_DIGITS 68
#define PL_EXSUM_WORDS (PL_EXSUM_DIGITS + 3) /* limbs + NaN, +inf, -inf counts: what an MPI_SUM combines */

typedef struct pl_exsum {
    int64_t d[PL_EXSUM_DIGITS]; /* limbs of 32-bit digits, carries deferred */
    int64_t nan, pinf, ninf;    /* special values seen */
    int64_t load;               /* bound on |d[i]| in units of 2^32 */
} pl_exsum;

void pl_exsum_zero(pl_exsum *a);
/* Propagate the carries: d[i] in [0, 2^32) for i < PL_EXSUM_DIGITS - 1,
 * the top limb signed (it carries the sign).  The value is unchanged. */
void pl_exsum_norm(pl_exsum *a);
/* a += b (exact).  b is not changed. */
void pl_exsum_merge(pl_exsum *a, const pl_exsum *b);
/* The value rounded to the nearest double (ties to even; beyond the double
 * range +-inf; the special values as IEEE addition would give them). */
double pl_exsum_round(const pl_exsum *a);
/* The words of a normalised accumulator (PL_EXSUM_WORDS int64) and back:
 * the sum of the words of several accumulators, limb by limb, is the words
 * of their sum (as long as fewer than 2^30 are added). */
void pl_exsum_pack(pl_exsum *a, int64_t *w);
void pl_exsum_unpack(pl_exsum *a, const int64_t *w, int64_t terms);

/* a += v without the carry bookkeeping: the caller adds the number of
 * such terms to a->load (and runs pl_exsum_norm when it reaches 2^30)
 * before a->load can pass 2^30.  A few integer operations; no rounding. */
static inline void pl_exsum_add_raw(pl_exsum *a, double v)
{
    uint64_t b;
    memcpy(&b, &v, sizeof b);
    const int e = (int)((b >> 52) & 0x7ff);
    if (e == 0x7ff) { /* inf or NaN */
        if (b & ((UINT64_C(1) << 52) - 1)) a->nan++;
        else if (b >> 63) a->ninf++;
        else a->pinf++;
        return;
    }
    uint64_t m = b & ((UINT64_C(1) << 52) - 1);
    int p = 0; /* the bit position of m's lowest bit: v = m 2^(p - 1074) */
    if (e) {
        m |= UINT64_C(1) << 52;
        p = e - 1;
    }
    const int i = p >> 5, o = p & 31;
    const unsigned __int128 w = (unsigned __int128)m << o; /* <= 84 bits */
    const int64_t s = -(int64_t)(b >> 63);                  /* 0 or -1 */
    const int64_t d0 = (int64_t)(uint32_t)w, d1 = (int64_t)(uint32_t)(w >> 32), d2 = (int64_t)(w >> 64);
    a->d[i] += (d0 ^ s) - s;
    a->d[i + 1] += (d1 ^ s) - s;
    a->d[i + 2] += (d2 ^ s) - s;
}

/* a += v, exactly. */
static inline void pl_exsum_add(pl_exsum *a, double v)
{
    pl_exsum_add_raw(a, v);
    if (++a->load >= (INT64_C(1) << 30)) pl_exsum_norm(a);
}

#endif
