/* op_halo.c — the halo of the distributed operator (op_build.c step 2 and
 * step 4): the sorted unique remote columns of a rank and each remote
 * entry's halo index, from a parallel LSD radix sort of the rank's own
 * remote entries (no global-size array), and the halo plan (who sends which
 * x entries to whom: MPI_Alltoall of counts, MPI_Alltoallv of global
 * indices, point-to-point with neighbours only). */
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "pl_error.h"
#include "spmv.h"
#include "spmv_impl.h"
#include "op_impl.h"


/* Bits needed to write x (0 for x = 0). */
static int bit_width(uint64_t x) { return x ? 64 - __builtin_clzll(x) : 0; }


/* Exclusive prefix sum of cnt[0, nb) in place; returns the total. */
static int64_t excl_scan(int64_t *cnt, int nb)
{
    int64_t sum = 0;
    for (int q = 0; q < nb; q++) {
        int64_t c = cnt[q];
        cnt[q] = sum;
        sum += c;
    }
    return sum;
}

/* Stable parallel LSD radix sort of key[0, m) (with pay[] moved alongside
 * when pay is not NULL) by the key bits [shift, shift + bits); tmp and ptmp
 * are scratch of m entries (ptmp only with pay).  Digits of at most
 * PL_RADIX_BITS bits; a pass whose digit is the same in every key is
 * skipped.  The keys are cut into nb fixed parts (one per thread); cnt holds
 * nb << PL_RADIX_BITS counters.  Returns 1 when the sorted data ended in
 * tmp/ptmp, else 0. */
#define PL_RADIX_BITS 8
static int radix_sort(uint64_t *key, uint64_t *pay, uint64_t *tmp, uint64_t *ptmp, int64_t m, int shift, int bits,
                      int nb, int64_t *cnt)
{
    const int passes = (bits + PL_RADIX_BITS - 1) / PL_RADIX_BITS;
    int swapped = 0;
    for (int ps = 0; ps < passes; ps++) {
        const int d0 = shift + bits * ps / passes, db = shift + bits * (ps + 1) / passes - d0;
        const int64_t B = (int64_t)1 << db;
        const uint64_t mask = (uint64_t)B - 1;
#pragma omp parallel for schedule(static, 1)
        for (int q = 0; q < nb; q++) {
            int64_t *h = cnt + q * B;
            memset(h, 0, (size_t)B * sizeof *h);
            for (int64_t i = pl_op_part(m, q, nb); i < pl_op_part(m, q + 1, nb); i++) h[(key[i] >> d0) & mask]++;
        }
        /* exclusive offsets in (digit, part) order */
        int64_t s = 0, skip = 0;
        for (int64_t d = 0; d < B; d++) {
            int64_t s0 = s;
            for (int q = 0; q < nb; q++) {
                int64_t c = cnt[q * B + d];
                cnt[q * B + d] = s;
                s += c;
            }
            if (s - s0 == m) skip = 1; /* one digit value in all keys */
        }
        if (skip) continue;
#pragma omp parallel for schedule(static, 1)
        for (int q = 0; q < nb; q++) {
            int64_t *h = cnt + q * B, a = pl_op_part(m, q, nb), b = pl_op_part(m, q + 1, nb);
            if (pay) {
                for (int64_t i = a; i < b; i++) {
                    int64_t o = h[(key[i] >> d0) & mask]++;
                    tmp[o] = key[i];
                    ptmp[o] = pay[i];
                }
            } else {
                for (int64_t i = a; i < b; i++) tmp[h[(key[i] >> d0) & mask]++] = key[i];
            }
        }
        uint64_t *x = key;
        key = tmp;
        tmp = x;
        x = pay;
        pay = ptmp;
        ptmp = x;
        swapped ^= 1;
    }
    return swapped;
}

/* The halo from the remote entries that scan_rows collected (valid columns
 * outside the block, all in [lo, hi], in row order in the segments
 * seg[0..n_seg)): rem_blk[b] = first remote entry of row b * PL_REM_BLK;
 * a radix sort of (column - lo, entry ordinal) pairs, packed into one 64-bit
 * key when the bits fit (else key and ordinal arrays); one walk over the
 * sorted pairs gives halo_g (ascending unique columns) and rem_h[k] (halo
 * index of remote entry k).  No array of the global size: memory
 * O(remote entries + rows).
 * Peak extra memory: 16 bytes per remote entry (the segments joined into the
 * key array, then keys + sort scratch, then keys + rem_h in the scratch; 32
 * with separate ordinals, only when bits(hi - lo) + bits(entries - 1) > 64),
 * 8 / PL_REM_BLK bytes per row and threads x 2^PL_RADIX_BITS counters.
 * rem_h (4 bytes per remote entry) is kept until the remote pJDS is filled.
 * (A segment that grows by a copying realloc holds 24 bytes per entry for a
 * moment, before the keys exist; its unused capacity is never touched.) */
int pl_op_halo_build(pl_op *op, build_tmp *t, int64_t lo, int64_t hi)
{
    const int32_t n = op->n;
    const int nb = t->n_seg;
    PL_MALLOC(t->hist, (size_t)nb << PL_RADIX_BITS);
    int64_t *cnt = t->hist;
    /* block offsets: part sums, then the prefix inside each part */
    PL_MALLOC(t->rem_blk, ((size_t)n >> PL_REM_BLK_LOG) + 1);
#pragma omp parallel for schedule(static, 1)
    for (int q = 0; q < nb; q++) {
        int64_t s = 0;
        for (int32_t i = (int32_t)pl_op_part(n, q, nb); i < (int32_t)pl_op_part(n, q + 1, nb); i++) s += t->len_rem[i];
        cnt[q] = s;
    }
    int64_t m = excl_scan(cnt, nb);
#pragma omp parallel for schedule(static, 1)
    for (int q = 0; q < nb; q++) {
        int64_t s = cnt[q];
        for (int32_t i = (int32_t)pl_op_part(n, q, nb); i < (int32_t)pl_op_part(n, q + 1, nb); i++) {
            if (!(i & (PL_REM_BLK - 1))) t->rem_blk[i >> PL_REM_BLK_LOG] = s;
            s += t->len_rem[i];
        }
    }
    if (!(n & (PL_REM_BLK - 1))) t->rem_blk[n >> PL_REM_BLK_LOG] = m;
    int64_t ms = 0;
    for (int q = 0; q < nb; q++) {
        cnt[q] = ms;
        ms += t->seg_len[q];
    }
    PL_CHECK(ms == m, PL_ERR_INTERNAL, "%lld remote entries collected, %lld counted", (long long)ms, (long long)m);
    if (m == 0) {
        op->n_halo = 0;
        PL_MALLOC(t->halo_g, 1);
        PL_MALLOC(t->rem_h, 1);
        return PL_OK;
    }
    /* keys in row order: the segments joined into seg[0], converted in place */
    uint64_t *key = realloc(t->seg[0], (size_t)m * sizeof *key);
    PL_CHECK(key, PL_ERR_MEM, "out of host memory for %lld remote entries", (long long)m);
    t->key = key;
    t->seg[0] = NULL;
#pragma omp parallel for schedule(static, 1)
    for (int q = 1; q < nb; q++) {
        if (t->seg_len[q]) memcpy(key + cnt[q], t->seg[q], (size_t)t->seg_len[q] * sizeof *key);
        free(t->seg[q]);
        t->seg[q] = NULL;
    }
    const int cb = bit_width((uint64_t)(hi - lo)), kb = bit_width((uint64_t)(m - 1)); /* kb <= 63 */
    const int packed = cb + kb <= 64, shift = packed ? kb : 0;
    if (!packed) PL_MALLOC(t->pay, m);
    uint64_t *pay = t->pay;
#pragma omp parallel for schedule(static, 1)
    for (int q = 0; q < nb; q++) {
        for (int64_t k = pl_op_part(m, q, nb); k < pl_op_part(m, q + 1, nb); k++) {
            uint64_t c = key[k] - (uint64_t)lo;
            if (packed) {
                key[k] = c << shift | (uint64_t)k;
            } else {
                key[k] = c;
                pay[k] = (uint64_t)k;
            }
        }
    }
    /* sort; the scratch then holds rem_h */
    PL_MALLOC(t->key_tmp, m);
    if (!packed) PL_MALLOC(t->pay_tmp, m);
    if (radix_sort(t->key, t->pay, t->key_tmp, t->pay_tmp, m, shift, cb, nb, cnt)) {
        uint64_t *x = t->key;
        t->key = t->key_tmp;
        t->key_tmp = x;
        x = t->pay;
        t->pay = t->pay_tmp;
        t->pay_tmp = x;
    }
    free(t->pay_tmp);
    t->pay_tmp = NULL;
    t->rem_h = (int32_t *)t->key_tmp;
    t->key_tmp = NULL;
    key = t->key;
    pay = t->pay;
    /* walk: new columns per part, then halo_g and rem_h */
#pragma omp parallel for schedule(static, 1)
    for (int q = 0; q < nb; q++) {
        int64_t s = 0;
        for (int64_t i = pl_op_part(m, q, nb); i < pl_op_part(m, q + 1, nb); i++)
            s += i == 0 || (key[i] >> shift) != (key[i - 1] >> shift);
        cnt[q] = s;
    }
    int64_t nh = excl_scan(cnt, nb);
    PL_CHECK(nh <= INT32_MAX, PL_ERR_OVERFLOW, "halo of %lld entries exceeds int32", (long long)nh);
    op->n_halo = (int32_t)nh;
    PL_MALLOC(t->halo_g, nh);
    const uint64_t kmask = ((uint64_t)1 << shift) - 1; /* shift <= 63 */
    int32_t *rem_h = t->rem_h;
#pragma omp parallel for schedule(static, 1)
    for (int q = 0; q < nb; q++) {
        int64_t h = cnt[q] - 1;
        for (int64_t i = pl_op_part(m, q, nb); i < pl_op_part(m, q + 1, nb); i++) {
            uint64_t c = key[i] >> shift;
            if (i == 0 || c != key[i - 1] >> shift) t->halo_g[++h] = lo + (int64_t)c;
            rem_h[packed ? (int64_t)(key[i] & kmask) : (int64_t)pay[i]] = (int32_t)h;
        }
    }
    free(t->key);
    free(t->pay);
    free(t->hist);
    t->key = t->pay = NULL;
    t->hist = NULL;
    int32_t *x = realloc(rem_h, (size_t)m * sizeof *rem_h); /* give the unused half back */
    if (x) t->rem_h = x;
    return PL_OK;
}

/* Step 4 (collective): halo plan. bounds[size + 1] known to all. */
int pl_op_plan_halo(pl_op *op, build_tmp *t)
{
    const int P = op->size;
    PL_MALLOC(t->rcount, P);
    PL_MALLOC(t->scount, P);
    PL_MALLOC(t->rdispl, P);
    PL_MALLOC(t->sdispl, P);
    for (int p = 0; p < P; p++) t->rcount[p] = 0;
    int p = 0;
    for (int32_t h = 0; h < op->n_halo; h++) {
        while (t->halo_g[h] >= t->bounds[p + 1]) p++; /* halo sorted: owners ascend */
        PL_CHECK(p != op->rank && p < P, PL_ERR_INTERNAL, "halo column %lld has a bad owner",
                 (long long)t->halo_g[h]);
        t->rcount[p]++;
    }
    PL_MPI(MPI_Alltoall(t->rcount, 1, MPI_INT, t->scount, 1, MPI_INT, op->comm), "MPI_Alltoall of halo counts");
    int64_t rs = 0, ss = 0;
    for (int q = 0; q < P; q++) {
        t->rdispl[q] = (int)rs;
        t->sdispl[q] = (int)ss;
        rs += t->rcount[q];
        ss += t->scount[q];
    }
    PL_CHECK(ss <= INT32_MAX, PL_ERR_OVERFLOW, "rank %d must send %lld halo entries per SpMV (> 2^31)", op->rank,
             (long long)ss);
    op->n_send = (int32_t)ss;
    PL_MALLOC(t->req_g, ss);
    PL_MPI(MPI_Alltoallv(t->halo_g, t->rcount, t->rdispl, MPI_INT64_T, t->req_g, t->scount, t->sdispl, MPI_INT64_T,
                         op->comm),
           "MPI_Alltoallv of halo indices");
    PL_MALLOC(t->send_idx, ss ? ss : 1);
    int64_t bad = -1;
#pragma omp parallel for schedule(static) reduction(max : bad)
    for (int64_t e = 0; e < ss; e++) {
        int64_t l = t->req_g[e] - op->row0;
        if (l < 0 || l >= op->n) {
            bad = e;
            l = 0;
        }
        t->send_idx[e] = op->n ? t->iperm[l] : 0;
    }
    PL_CHECK(bad < 0, PL_ERR_INTERNAL, "rank %d was asked for row %lld it does not own", op->rank,
             (long long)t->req_g[bad]);
    /* neighbour lists */
    int nr = 0, ns = 0;
    for (int q = 0; q < P; q++) {
        nr += t->rcount[q] > 0;
        ns += t->scount[q] > 0;
    }
    op->n_rnb = nr;
    op->n_snb = ns;
    PL_MALLOC(op->rnb, nr);
    PL_MALLOC(op->rcnt, nr);
    PL_MALLOC(op->roff, nr);
    PL_MALLOC(op->snb, ns);
    PL_MALLOC(op->scnt, ns);
    PL_MALLOC(op->soff, ns);
    PL_MALLOC(op->req, nr + ns);
    nr = ns = 0;
    for (int q = 0; q < P; q++) {
        if (t->rcount[q]) {
            op->rnb[nr] = q;
            op->rcnt[nr] = t->rcount[q];
            op->roff[nr++] = t->rdispl[q];
        }
        if (t->scount[q]) {
            op->snb[ns] = q;
            op->scnt[ns] = t->scount[q];
            op->soff[ns++] = t->sdispl[q];
        }
    }
    return PL_OK;
}
