/* blockmat_test.h — random block-structured CSR matrices for the pJDS-b
 * tests (test_pjds_block.c, test_cuda_pjds_block.c): header-only.
 *
 * bm_make(n, bb, maxblk, drop, shuffle, dup, seed): block rows of bb rows;
 * each block row picks 0..maxblk distinct block columns (plus its diagonal
 * block), every row of the block row gets the bb columns of each (cut at
 * n), each entry dropped with probability `drop` (partial runs: fill);
 * `shuffle`: every third row's entries are in random order; `dup`: every
 * seventh non-empty row gets a duplicate of its first entry.  bb = 0: no
 * block structure (random single columns).  Columns in [0, n).
 */
#ifndef PL_BLOCKMAT_TEST_H
#define PL_BLOCKMAT_TEST_H
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct bm_csr {
    int32_t n;
    int64_t *ptr;
    int32_t *col;
    double *val;
} bm_csr;

static uint64_t bm_state;
static inline uint64_t bm_rnd(void)
{
    uint64_t z = (bm_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static inline double bm_unif(void) { return (double)(bm_rnd() >> 11) * 0x1.0p-53; }

static int bm_cmp_i32(const void *a, const void *b)
{
    int32_t p = *(const int32_t *)a, q = *(const int32_t *)b;
    return (p > q) - (p < q);
}

static inline void bm_free(bm_csr *a)
{
    free(a->ptr);
    free(a->col);
    free(a->val);
    memset(a, 0, sizeof *a);
}

static inline void bm_make(int32_t n, int bb, int maxblk, double drop, int shuffle, int dup, uint64_t seed, bm_csr *a)
{
    bm_state = seed;
    a->n = n;
    a->ptr = calloc((size_t)n + 1, sizeof *a->ptr);
    int64_t cap = (int64_t)n * ((bb ? bb : 1) * (maxblk + 1) + 2) + 1;
    a->col = malloc((size_t)cap * sizeof *a->col);
    a->val = malloc((size_t)cap * sizeof *a->val);
    int B = bb ? bb : 1;
    int32_t nbc = (n + B - 1) / B; /* block columns */
    int32_t *bc = malloc((size_t)(maxblk + 2) * sizeof *bc);
    int64_t e = 0;
    for (int32_t q0 = 0; q0 < n; q0 += B) {
        /* the block row's block columns: diagonal block + up to maxblk others, distinct, sorted */
        int nb = 0;
        bc[nb++] = q0 / B;
        int want = nbc > 1 ? (int)(bm_rnd() % (uint64_t)(maxblk + 1)) : 0;
        for (int t = 0; t < want; t++) {
            int32_t q = (int32_t)(bm_rnd() % (uint64_t)nbc);
            int seen = 0;
            for (int u = 0; u < nb; u++) seen |= bc[u] == q;
            if (!seen) bc[nb++] = q;
        }
        qsort(bc, (size_t)nb, sizeof *bc, bm_cmp_i32);
        for (int32_t i = q0; i < q0 + B && i < n; i++) {
            int64_t e0 = e;
            if (bb == 0) {
                /* no structure: random columns, some rows empty */
                int l = (int)(bm_rnd() % 12);
                for (int t = 0; t < l; t++) a->col[e++] = (int32_t)(bm_rnd() % (uint64_t)n);
                qsort(a->col + e0, (size_t)(e - e0), sizeof *a->col, bm_cmp_i32);
                int64_t w = e0; /* unique */
                for (int64_t k = e0; k < e; k++)
                    if (k == e0 || a->col[k] != a->col[w - 1]) a->col[w++] = a->col[k];
                e = w;
            } else {
                for (int u = 0; u < nb; u++)
                    for (int k = 0; k < B; k++) {
                        int64_t c = (int64_t)bc[u] * B + k;
                        if (c >= n || bm_unif() < drop) continue;
                        a->col[e++] = (int32_t)c;
                    }
            }
            for (int64_t k = e0; k < e; k++) a->val[k] = 2.0 * bm_unif() - 1.0;
            if (shuffle && i % 3 == 1)
                for (int64_t k = e - 1; k > e0; k--) {
                    int64_t t = e0 + (int64_t)(bm_rnd() % (uint64_t)(k - e0 + 1));
                    int32_t c = a->col[k];
                    double v = a->val[k];
                    a->col[k] = a->col[t], a->val[k] = a->val[t];
                    a->col[t] = c, a->val[t] = v;
                }
            if (dup && i % 7 == 3 && e > e0) {
                a->col[e] = a->col[e0];
                a->val[e] = 0.5;
                e++;
            }
            a->ptr[i + 1] = e;
        }
    }
    free(bc);
}

/* y = A x, serial CSR (the reference) */
static inline void bm_spmv(const bm_csr *a, const double *x, double *y)
{
    for (int32_t i = 0; i < a->n; i++) {
        double s = 0.0;
        for (int64_t k = a->ptr[i]; k < a->ptr[i + 1]; k++) s += a->val[k] * x[a->col[k]];
        y[i] = s;
    }
}

/* Runs of run length b, counted naively (distinct col / b per row). */
static inline int64_t bm_runs(const bm_csr *a, int b)
{
    int64_t runs = 0;
    for (int32_t i = 0; i < a->n; i++)
        for (int64_t k = a->ptr[i]; k < a->ptr[i + 1]; k++) {
            int first = 1;
            for (int64_t t = a->ptr[i]; t < k; t++) first &= a->col[t] / b != a->col[k] / b;
            runs += first;
        }
    return runs;
}
#endif
