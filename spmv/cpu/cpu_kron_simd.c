/* cpu_kron_simd.c — the AVX2 (4 doubles) and AVX-512F (8 doubles) kernels
 * of the CPU backend's matrix-free operator (cpu_kron.c describes the two
 * steps and the order of the sums; cpu_kron_impl.h the tables).  The
 * project builds portable code (-std=c17, no -march), so these functions
 * carry target attributes and cpu_kron.c picks them once per operator
 * (cpu_kron_simd_kernels: __builtin_cpu_supports).
 *
 * Bit for bit the SSE2 kernels: every lane (a left row in step 1, a right
 * row in step 2) runs the same element-wise IEEE products and sums in the
 * same order; only the grouping of lanes into registers differs.  The
 * targets are "avx2" and "avx512f" without "fma", and -std=c17 contracts
 * nothing (objdump -d shows no vfmadd here).  Step 1's masked lanes: AVX2
 * adds t & mask | sign-of-zero-mask as SSE2 does; AVX-512 adds under the
 * mask register (a masked lane keeps s, which is s + -0.0 bit for bit).
 *
 * Step 1 reads x from the chunk's 8 slices transposed (xt[q KRON_LC +
 * lane] = x[l0 + lane, q], 8 n_right doubles, made per thread by
 * transpose_avx2 / _avx512 when a thread's work item enters a new chunk;
 * cpu_kron_apply owns the buffer): the 8 lanes' x[l, q] of a term are one
 * aligned 64-byte load, where the SSE2 kernel makes them of 8 scalar
 * loads.  The sums of 8 (AVX-512) or 4 (AVX2) consecutive r are
 * transposed in registers, so the buffer takes whole rows.  Step 2 (the
 * hopping) as SSE2's in 4 registers of 4 or 8, and prefetches x's rows
 * KS_PF doubles ahead.
 *
 * Tried on HMEp on the development VM (2 shared cores, AMD EPYC with
 * AVX-512, one thread, interleaved in one process or alternating
 * processes) and dropped: x[l, q] by vgatherqpd at the lane offsets
 * (0.82-0.95x sse2; the slices' transposition is 1.5-1.7x), by scalar
 * loads into wide registers (1.13-1.22x); the right tables packed as the
 * GPU's variant 6 (pl_kron_pack16: 16-bit columns, 8-bit value indices)
 * with the chunk's products c[l, m] v[d] made per chunk (no change within
 * the noise: avx512 / sse2 0.43-0.53 packed, 0.46-0.48 not); absent
 * columns as masked terms instead of branches (0.98x); prefetching xt's
 * far rows 16 or 64 right rows ahead (0.72-0.87x); the sums of 2 or 4
 * consecutive r interleaved in one loop over the terms (avx512 / sse2
 * 0.41-0.52 and 0.50-0.51 against 0.41-0.47 one at a time); non-temporal stores of
 * y (within the noise on 1 and 2 threads; they would also evict y from
 * the cache where it fits). */
#include <stdint.h>
#include <string.h>

#include "cpu_kron_impl.h"

/* No contraction of a * b + c into an FMA: AVX-512F has FMA instructions,
 * and clang contracts within an expression by default even in ISO C mode
 * (GCC does not), which changed the bits of the scalar tails and broke
 * the bitwise checks in the clang sanitizer build (the project's C flags
 * also pass -ffp-contract=off; this keeps the file right on its own). */
#ifdef __clang__
#pragma STDC FP_CONTRACT OFF
#endif

#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define KS_X86 1
#define TGT2 __attribute__((target("avx2")))
#define TGT5 __attribute__((target("avx512f")))
#ifndef KS_PF
#define KS_PF 256 /* doubles ahead that step 2 prefetches x's rows */
#endif

/* ---------------------------------------------------------------- AVX2 */

/* s + (t where the lane's c != 0, else -0.0): SSE2's masked add. */
TGT2 static inline __m256d madd2(__m256d s, __m256d t, const uint64_t *mk, const uint64_t *zk)
{
    const __m256d mv = _mm256_loadu_pd((const double *)(const void *)mk);
    const __m256d zv = _mm256_loadu_pd((const double *)(const void *)zk);
    return _mm256_add_pd(s, _mm256_or_pd(_mm256_and_pd(t, mv), zv));
}

/* The two halves' sums of one r for the 8 lanes, as in cpu_kron.c's couple. */
TGT2 static inline void row2(const cpu_kron *m, int64_t r, const double *xt, __m256d dl0, __m256d dl1,
                             const double *cc, const uint64_t *mk, const uint64_t *zk, const int8_t *use, __m256d *s0,
                             __m256d *s1)
{
    const int64_t nt = m->nterms;
    const __m256d d = _mm256_set1_pd(m->dr[r]);
    const __m256d sh = _mm256_set1_pd(m->shift);
    __m256d a0 = _mm256_mul_pd(_mm256_add_pd(_mm256_add_pd(dl0, d), sh), _mm256_load_pd(xt + r * KRON_LC));
    __m256d a1 = _mm256_mul_pd(_mm256_add_pd(_mm256_add_pd(dl1, d), sh), _mm256_load_pd(xt + r * KRON_LC + 4));
    const int32_t *lo = m->lo + r * nt, *hi = m->hi + r * nt;
    const double *lv = m->lo_val + r * nt, *hv = m->hi_val + r * nt;
    for (int64_t j = 0; j < nt; j++) {
        if (!use[j]) continue;
        const int64_t o = j * KRON_LC;
        const __m256d c0 = _mm256_loadu_pd(cc + o), c1 = _mm256_loadu_pd(cc + o + 4);
        for (int h = 0; h < 2; h++) {
            const int32_t q = h ? hi[j] : lo[j];
            if (q < 0) continue;
            const __m256d f = _mm256_set1_pd(h ? hv[j] : lv[j]);
            const __m256d t0 = _mm256_mul_pd(_mm256_mul_pd(c0, f), _mm256_load_pd(xt + q * KRON_LC));
            const __m256d t1 = _mm256_mul_pd(_mm256_mul_pd(c1, f), _mm256_load_pd(xt + q * KRON_LC + 4));
            if (use[j] == 2) {
                a0 = _mm256_add_pd(a0, t0);
                a1 = _mm256_add_pd(a1, t1);
            } else {
                a0 = madd2(a0, t0, mk + o, zk + o);
                a1 = madd2(a1, t1, mk + o + 4, zk + o + 4);
            }
        }
    }
    *s0 = a0;
    *s1 = a1;
}

/* Rows v[0..4) (4 r's, lanes i..i+4) to buf[(i + k) KRON_RB + rr, +4). */
TGT2 static inline void tr4_store(double *buf, int i, int64_t rr, __m256d v0, __m256d v1, __m256d v2, __m256d v3)
{
    const __m256d t0 = _mm256_unpacklo_pd(v0, v1), t1 = _mm256_unpackhi_pd(v0, v1);
    const __m256d t2 = _mm256_unpacklo_pd(v2, v3), t3 = _mm256_unpackhi_pd(v2, v3);
    _mm256_storeu_pd(buf + (int64_t)(i + 0) * KRON_RB + rr, _mm256_permute2f128_pd(t0, t2, 0x20));
    _mm256_storeu_pd(buf + (int64_t)(i + 1) * KRON_RB + rr, _mm256_permute2f128_pd(t1, t3, 0x20));
    _mm256_storeu_pd(buf + (int64_t)(i + 2) * KRON_RB + rr, _mm256_permute2f128_pd(t0, t2, 0x31));
    _mm256_storeu_pd(buf + (int64_t)(i + 3) * KRON_RB + rr, _mm256_permute2f128_pd(t1, t3, 0x31));
}

TGT2 static void couple_avx2(const cpu_kron *m, int64_t ch, int64_t r0, int64_t r1, const double *x, const double *xt,
                             double *buf)
{
    (void)x;
    const int64_t nt = m->nterms, l0 = ch * KRON_LC;
    const __m256d dl0 = _mm256_loadu_pd(m->ch_dl + l0), dl1 = _mm256_loadu_pd(m->ch_dl + l0 + 4);
    const double *cc = m->ch_c + ch * nt * KRON_LC;
    const uint64_t *mk = m->ch_mk + ch * nt * KRON_LC, *zk = m->ch_zk + ch * nt * KRON_LC;
    const int8_t *use = m->ch_use + ch * nt;
    int64_t r = r0;
    for (; r + 4 <= r1; r += 4) {
        __m256d s[4][2];
        for (int k = 0; k < 4; k++) row2(m, r + k, xt, dl0, dl1, cc, mk, zk, use, &s[k][0], &s[k][1]);
        tr4_store(buf, 0, r - r0, s[0][0], s[1][0], s[2][0], s[3][0]);
        tr4_store(buf, 4, r - r0, s[0][1], s[1][1], s[2][1], s[3][1]);
    }
    for (; r < r1; r++) {
        __m256d s0, s1;
        double t[KRON_LC];
        row2(m, r, xt, dl0, dl1, cc, mk, zk, use, &s0, &s1);
        _mm256_storeu_pd(t, s0);
        _mm256_storeu_pd(t + 4, s1);
        for (int i = 0; i < KRON_LC; i++) buf[(int64_t)i * KRON_RB + r - r0] = t[i];
    }
}

/* xt[q KRON_LC + lane] = x[l0 + lane, q]: 4 x 4 blocks transposed in registers. */
TGT2 static void transpose_avx2(const cpu_kron *m, int64_t ch, const double *x, double *xt)
{
    const int64_t nr = m->n_right, l0 = ch * KRON_LC;
    const double *xp[KRON_LC];
    for (int i = 0; i < KRON_LC; i++) xp[i] = x + l0 * nr + m->ch_off[l0 + i];
    int64_t q = 0;
    for (; q + 4 <= nr; q += 4)
        for (int h = 0; h < 2; h++) {
            const __m256d v0 = _mm256_loadu_pd(xp[4 * h] + q), v1 = _mm256_loadu_pd(xp[4 * h + 1] + q);
            const __m256d v2 = _mm256_loadu_pd(xp[4 * h + 2] + q), v3 = _mm256_loadu_pd(xp[4 * h + 3] + q);
            const __m256d t0 = _mm256_unpacklo_pd(v0, v1), t1 = _mm256_unpackhi_pd(v0, v1);
            const __m256d t2 = _mm256_unpacklo_pd(v2, v3), t3 = _mm256_unpackhi_pd(v2, v3);
            double *o = xt + q * KRON_LC + 4 * h;
            _mm256_store_pd(o, _mm256_permute2f128_pd(t0, t2, 0x20));
            _mm256_store_pd(o + KRON_LC, _mm256_permute2f128_pd(t1, t3, 0x20));
            _mm256_store_pd(o + 2 * KRON_LC, _mm256_permute2f128_pd(t0, t2, 0x31));
            _mm256_store_pd(o + 3 * KRON_LC, _mm256_permute2f128_pd(t1, t3, 0x31));
        }
    for (; q < nr; q++)
        for (int i = 0; i < KRON_LC; i++) xt[q * KRON_LC + i] = xp[i][q];
}

TGT2 static void hop_avx2(const double *b, double *yl, int64_t n, const double *const *xs, const double *v, int64_t nj)
{
    int64_t r = 0;
    for (; r + 16 <= n; r += 16) {
        __m256d a0 = _mm256_loadu_pd(b + r), a1 = _mm256_loadu_pd(b + r + 4);
        __m256d a2 = _mm256_loadu_pd(b + r + 8), a3 = _mm256_loadu_pd(b + r + 12);
        const int pf = r + KS_PF + 16 <= n;
        for (int64_t j = 0; j < nj; j++) {
            const double *xj = xs[j] + r;
            const __m256d vj = _mm256_set1_pd(v[j]);
            if (pf)
                for (int c = 0; c < 16; c += 8) _mm_prefetch((const char *)(xj + KS_PF + c), _MM_HINT_T0);
            a0 = _mm256_add_pd(a0, _mm256_mul_pd(vj, _mm256_loadu_pd(xj)));
            a1 = _mm256_add_pd(a1, _mm256_mul_pd(vj, _mm256_loadu_pd(xj + 4)));
            a2 = _mm256_add_pd(a2, _mm256_mul_pd(vj, _mm256_loadu_pd(xj + 8)));
            a3 = _mm256_add_pd(a3, _mm256_mul_pd(vj, _mm256_loadu_pd(xj + 12)));
        }
        _mm256_storeu_pd(yl + r, a0);
        _mm256_storeu_pd(yl + r + 4, a1);
        _mm256_storeu_pd(yl + r + 8, a2);
        _mm256_storeu_pd(yl + r + 12, a3);
    }
    for (; r + 4 <= n; r += 4) {
        __m256d a0 = _mm256_loadu_pd(b + r);
        for (int64_t j = 0; j < nj; j++)
            a0 = _mm256_add_pd(a0, _mm256_mul_pd(_mm256_set1_pd(v[j]), _mm256_loadu_pd(xs[j] + r)));
        _mm256_storeu_pd(yl + r, a0);
    }
    for (; r < n; r++) {
        double s = b[r];
        for (int64_t j = 0; j < nj; j++) s += v[j] * xs[j][r];
        yl[r] = s;
    }
}

/* ------------------------------------------------------------- AVX-512F */

/* The 8 lanes' sum of one r (lanes = the chunk's left rows). */
TGT5 static inline __m512d row5(const cpu_kron *m, int64_t r, const double *xt, __m512d dl, const double *cc,
                                const uint8_t *kb, const int8_t *use)
{
    const int64_t nt = m->nterms;
    const __m512d d = _mm512_set1_pd(m->dr[r]), sh = _mm512_set1_pd(m->shift);
    __m512d s = _mm512_mul_pd(_mm512_add_pd(_mm512_add_pd(dl, d), sh), _mm512_load_pd(xt + r * KRON_LC));
    const int32_t *lo = m->lo + r * nt, *hi = m->hi + r * nt;
    const double *lv = m->lo_val + r * nt, *hv = m->hi_val + r * nt;
    for (int64_t j = 0; j < nt; j++) {
        if (!use[j]) continue;
        const __m512d c = _mm512_loadu_pd(cc + j * KRON_LC);
        const __mmask8 k = use[j] == 2 ? (__mmask8)0xFF : (__mmask8)kb[j];
        if (lo[j] >= 0) {
            const __m512d x = _mm512_load_pd(xt + lo[j] * KRON_LC);
            s = _mm512_mask_add_pd(s, k, s, _mm512_mul_pd(_mm512_mul_pd(c, _mm512_set1_pd(lv[j])), x));
        }
        if (hi[j] >= 0) {
            const __m512d x = _mm512_load_pd(xt + hi[j] * KRON_LC);
            s = _mm512_mask_add_pd(s, k, s, _mm512_mul_pd(_mm512_mul_pd(c, _mm512_set1_pd(hv[j])), x));
        }
    }
    return s;
}

/* o[b][a] = v[a][b]: the 8 x 8 block transposed. */
TGT5 static inline void tr8(const __m512d *v, __m512d *o)
{
    __m512d t[8], u[8];
    for (int i = 0; i < 4; i++) {
        t[2 * i] = _mm512_unpacklo_pd(v[2 * i], v[2 * i + 1]);     /* lanes 0,2,4,6 of r 2i, 2i+1 */
        t[2 * i + 1] = _mm512_unpackhi_pd(v[2 * i], v[2 * i + 1]); /* lanes 1,3,5,7 */
    }
    /* t[2i], t[2i+1]: the pairs (r 2i, 2i+1) of lanes 0,2,4,6 and 1,3,5,7 in their 128-bit blocks;
     * u[4i+h], u[4i+2+h]: lanes {h, h+4} and {h+2, h+6} of r 4i..4i+3 (a lane's pairs in blocks
     * 0, 2 and 1, 3); the last shuffle joins a lane's r 0-3 and 4-7. */
    for (int i = 0; i < 2; i++)
        for (int h = 0; h < 2; h++) {
            u[4 * i + h] = _mm512_shuffle_f64x2(t[4 * i + h], t[4 * i + 2 + h], 0x88);
            u[4 * i + 2 + h] = _mm512_shuffle_f64x2(t[4 * i + h], t[4 * i + 2 + h], 0xDD);
        }
    for (int h = 0; h < 2; h++) {
        const __m512d lo = _mm512_shuffle_f64x2(u[h], u[4 + h], 0x88), hi = _mm512_shuffle_f64x2(u[h], u[4 + h], 0xDD);
        const __m512d lo2 = _mm512_shuffle_f64x2(u[2 + h], u[6 + h], 0x88);
        const __m512d hi2 = _mm512_shuffle_f64x2(u[2 + h], u[6 + h], 0xDD);
        o[h] = lo;
        o[h + 4] = hi;
        o[h + 2] = lo2;
        o[h + 6] = hi2;
    }
}

TGT5 static void couple_avx512(const cpu_kron *m, int64_t ch, int64_t r0, int64_t r1, const double *x,
                               const double *xt, double *buf)
{
    (void)x;
    const int64_t nt = m->nterms, l0 = ch * KRON_LC;
    const __m512d dl = _mm512_loadu_pd(m->ch_dl + l0);
    const double *cc = m->ch_c + ch * nt * KRON_LC;
    const uint8_t *kb = m->ch_kb + ch * nt;
    const int8_t *use = m->ch_use + ch * nt;
    int64_t r = r0;
    for (; r + 8 <= r1; r += 8) {
        __m512d s[8];
        for (int k = 0; k < 8; k++) s[k] = row5(m, r + k, xt, dl, cc, kb, use);
        __m512d o[8];
        tr8(s, o);
        for (int i = 0; i < 8; i++) _mm512_storeu_pd(buf + (int64_t)i * KRON_RB + r - r0, o[i]);
    }
    for (; r < r1; r++) {
        double t[KRON_LC];
        _mm512_storeu_pd(t, row5(m, r, xt, dl, cc, kb, use));
        for (int i = 0; i < KRON_LC; i++) buf[(int64_t)i * KRON_RB + r - r0] = t[i];
    }
}

/* xt[q KRON_LC + lane] = x[l0 + lane, q]: 8 x 8 blocks transposed in registers. */
TGT5 static void transpose_avx512(const cpu_kron *m, int64_t ch, const double *x, double *xt)
{
    const int64_t nr = m->n_right, l0 = ch * KRON_LC;
    const double *xp[KRON_LC];
    for (int i = 0; i < KRON_LC; i++) xp[i] = x + l0 * nr + m->ch_off[l0 + i];
    int64_t q = 0;
    for (; q + 8 <= nr; q += 8) {
        __m512d v[8], o[8];
        for (int i = 0; i < 8; i++) v[i] = _mm512_loadu_pd(xp[i] + q);
        tr8(v, o);
        for (int k = 0; k < 8; k++) _mm512_store_pd(xt + (q + k) * KRON_LC, o[k]);
    }
    for (; q < nr; q++)
        for (int i = 0; i < KRON_LC; i++) xt[q * KRON_LC + i] = xp[i][q];
}

TGT5 static void hop_avx512(const double *b, double *yl, int64_t n, const double *const *xs, const double *v,
                            int64_t nj)
{
    int64_t r = 0;
    for (; r + 32 <= n; r += 32) {
        __m512d a0 = _mm512_loadu_pd(b + r), a1 = _mm512_loadu_pd(b + r + 8);
        __m512d a2 = _mm512_loadu_pd(b + r + 16), a3 = _mm512_loadu_pd(b + r + 24);
        const int pf = r + KS_PF + 32 <= n;
        for (int64_t j = 0; j < nj; j++) {
            const double *xj = xs[j] + r;
            const __m512d vj = _mm512_set1_pd(v[j]);
            if (pf)
                for (int c = 0; c < 32; c += 8) _mm_prefetch((const char *)(xj + KS_PF + c), _MM_HINT_T0);
            a0 = _mm512_add_pd(a0, _mm512_mul_pd(vj, _mm512_loadu_pd(xj)));
            a1 = _mm512_add_pd(a1, _mm512_mul_pd(vj, _mm512_loadu_pd(xj + 8)));
            a2 = _mm512_add_pd(a2, _mm512_mul_pd(vj, _mm512_loadu_pd(xj + 16)));
            a3 = _mm512_add_pd(a3, _mm512_mul_pd(vj, _mm512_loadu_pd(xj + 24)));
        }
        _mm512_storeu_pd(yl + r, a0);
        _mm512_storeu_pd(yl + r + 8, a1);
        _mm512_storeu_pd(yl + r + 16, a2);
        _mm512_storeu_pd(yl + r + 24, a3);
    }
    for (; r + 8 <= n; r += 8) {
        __m512d a0 = _mm512_loadu_pd(b + r);
        for (int64_t j = 0; j < nj; j++)
            a0 = _mm512_add_pd(a0, _mm512_mul_pd(_mm512_set1_pd(v[j]), _mm512_loadu_pd(xs[j] + r)));
        _mm512_storeu_pd(yl + r, a0);
    }
    for (; r < n; r++) {
        double s = b[r];
        for (int64_t j = 0; j < nj; j++) s += v[j] * xs[j][r];
        yl[r] = s;
    }
}
#else
#define KS_X86 0
#endif

int cpu_kron_simd_kernels(int simd, kron_couple_fn *couple, kron_hop_fn *hop, kron_tr_fn *transpose)
{
#if KS_X86
    __builtin_cpu_init();
    if (simd == KRON_SIMD_AVX2 && __builtin_cpu_supports("avx2")) {
        *couple = couple_avx2;
        *hop = hop_avx2;
        *transpose = transpose_avx2;
        return 1;
    }
    if (simd == KRON_SIMD_AVX512 && __builtin_cpu_supports("avx512f")) {
        *couple = couple_avx512;
        *hop = hop_avx512;
        *transpose = transpose_avx512;
        return 1;
    }
#else
    (void)simd, (void)couple, (void)hop, (void)transpose;
#endif
    return 0;
}
