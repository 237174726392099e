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
 * shifted to its exponent spans at most 84 bits from a digit boundary: its low 32
 * bits are added to one signed 64-bit limb and the rest (< 2^53) to the
 * next (the carries are deferred: the limbs take PL_EXSUM_LOAD_MAX
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
#define PL_EXSUM_LOAD_MAX 1024 /* additions of < 2^53 per limb between carries: 2^63 / 2^53 */
#define PL_EXSUM_WORDS (PL_EXSUM_DIGITS + 3) /* limbs + NaN, +inf, -inf counts: what an MPI_SUM combines */

typedef struct pl_exsum {
    int64_t d[PL_EXSUM_DIGITS]; /* limbs of 32-bit digits, carries deferred */
    int64_t nan, pinf, ninf;    /* special values seen */
    int64_t load;               /* bound on |d[i]| in units of 2^53 (additions since the carries) */
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
 * such terms to a->load and runs pl_exsum_norm before a->load would pass
 * PL_EXSUM_LOAD_MAX.  A few integer operations; no rounding. */
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
    /* m 2^o = lo + hi 2^32: lo the low 32 bits (those of the 64-bit shift, whatever it drops above), hi < 2^53 */
    const int64_t lo = (int64_t)(uint32_t)(m << o), hi = (int64_t)((m >> 1) >> (31 - o));
    const int64_t s = -(int64_t)(b >> 63); /* 0 or -1 */
    a->d[i] += (lo ^ s) - s;
    a->d[i + 1] += (hi ^ s) - s;
}

/* a += v, exactly. */
static inline void pl_exsum_add(pl_exsum *a, double v)
{
    pl_exsum_add_raw(a, v);
    if (++a->load >= PL_EXSUM_LOAD_MAX) pl_exsum_norm(a);
}

#endif
