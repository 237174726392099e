/* pl_exsum.c — the exact accumulator of pl_exsum.h: carries, merging,
 * packing for MPI and the one rounding to double. */
#include "pl_exsum.h"

#include <math.h>

#define DIG_MASK INT64_C(0xffffffff)

void pl_exsum_zero(pl_exsum *a) { memset(a, 0, sizeof *a); }

void pl_exsum_norm(pl_exsum *a)
{
    for (int i = 0; i + 1 < PL_EXSUM_DIGITS; i++) {
        /* floor division by 2^32 without a shift of a negative number */
        const int64_t lo = a->d[i] & DIG_MASK, c = (a->d[i] - lo) / (INT64_C(1) << 32);
        a->d[i] = lo;
        a->d[i + 1] += c;
    }
    a->load = 1;
}

void pl_exsum_merge(pl_exsum *a, const pl_exsum *b)
{
    if (a->load + b->load >= PL_EXSUM_LOAD_MAX) pl_exsum_norm(a);
    if (a->load + b->load >= PL_EXSUM_LOAD_MAX) { /* b itself is heavy: take it normalised */
        pl_exsum t = *b;
        pl_exsum_norm(&t);
        pl_exsum_merge(a, &t);
        return;
    }
    for (int i = 0; i < PL_EXSUM_DIGITS; i++) a->d[i] += b->d[i];
    a->nan += b->nan;
    a->pinf += b->pinf;
    a->ninf += b->ninf;
    a->load += b->load;
}

void pl_exsum_pack(pl_exsum *a, int64_t *w)
{
    pl_exsum_norm(a);
    memcpy(w, a->d, sizeof a->d);
    w[PL_EXSUM_DIGITS] = a->nan;
    w[PL_EXSUM_DIGITS + 1] = a->pinf;
    w[PL_EXSUM_DIGITS + 2] = a->ninf;
}

void pl_exsum_unpack(pl_exsum *a, const int64_t *w, int64_t terms)
{
    memcpy(a->d, w, sizeof a->d);
    a->nan = w[PL_EXSUM_DIGITS];
    a->pinf = w[PL_EXSUM_DIGITS + 1];
    a->ninf = w[PL_EXSUM_DIGITS + 2];
    a->load = 1 + terms / (INT64_C(1) << 20); /* terms normalised limbs of < 2^32 each */
}

/* Bits [q, q + cnt) of the magnitude digits g (cnt <= 60; bits below 0 are 0). */
static uint64_t bits_at(const uint32_t *g, int q, int cnt)
{
    uint64_t r = 0;
    for (int k = cnt - 1; k >= 0; k--) {
        const int b = q + k;
        r <<= 1;
        if (b >= 0) r |= (g[b >> 5] >> (b & 31)) & 1u;
    }
    return r;
}

/* Any bit of g below position q. */
static int any_below(const uint32_t *g, int q)
{
    if (q <= 0) return 0;
    const int i = q >> 5;
    for (int k = 0; k < i; k++)
        if (g[k]) return 1;
    return (q & 31) && (g[i] & ((UINT32_C(1) << (q & 31)) - 1));
}

double pl_exsum_round(const pl_exsum *a)
{
    if (a->nan || (a->pinf && a->ninf)) return NAN;
    if (a->pinf) return INFINITY;
    if (a->ninf) return -INFINITY;
    pl_exsum t = *a;
    pl_exsum_norm(&t);
    const int neg = t.d[PL_EXSUM_DIGITS - 1] < 0;
    if (neg) { /* the magnitude: negate every limb and carry again */
        for (int i = 0; i < PL_EXSUM_DIGITS; i++) t.d[i] = -t.d[i];
        pl_exsum_norm(&t);
    }
    uint32_t g[PL_EXSUM_DIGITS];
    int top = -1;
    for (int i = 0; i < PL_EXSUM_DIGITS; i++) {
        g[i] = (uint32_t)t.d[i]; /* the top limb is < 2^32 too: the value fits PL_EXSUM_DIGITS digits */
        if (g[i]) top = i;
    }
    if (top < 0) return 0.0;
    int B = 32 * top + 31;
    while (!((g[top] >> (B & 31)) & 1u)) B--;
    double r;
    if (B <= 52) { /* below 2^-1021: a multiple of 2^-1074 with at most 53 bits, exact */
        r = ldexp((double)bits_at(g, 0, B + 1), -1074);
    } else {
        int q = B - 52;
        uint64_t m = bits_at(g, q, 53);
        const int half = (int)bits_at(g, q - 1, 1), sticky = any_below(g, q - 1);
        if (half && (sticky || (m & 1))) m++;
        if (m >> 53) { /* rounded up to the next power of two */
            m >>= 1;
            q++;
        }
        r = ldexp((double)m, q - 1074); /* exact, or +inf beyond the range */
    }
    return neg ? -r : r;
}
