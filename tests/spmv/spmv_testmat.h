/* spmv_testmat.h — random test matrices (global CSR, built identically on
 * every rank from a seed) and a plain serial CSR SpMV, the independent
 * reference of the spmv tests. */
#ifndef PL_SPMV_TESTMAT_H
#define PL_SPMV_TESTMAT_H
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct tm_csr {
    int64_t n, nnz;
    int64_t *ptr; /* n + 1 */
    int64_t *col; /* sorted, unique per row */
    double *val;
} tm_csr;

static inline uint64_t tm_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static inline double tm_unif(uint64_t *s) { return (double)(tm_next(s) >> 11) * 0x1.0p-53; }

static inline void tm_free(tm_csr *a)
{
    free(a->ptr);
    free(a->col);
    free(a->val);
    memset(a, 0, sizeof *a);
}

static int tm_cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Build CSR from a coordinate list (duplicates summed). */
static inline void tm_from_coo(int64_t n, int64_t m, int64_t *I, int64_t *J, double *V, tm_csr *a)
{
    /* sort by key I * n + J via index sort */
    int64_t *key = malloc((size_t)(m ? m : 1) * 2 * sizeof *key);
    for (int64_t k = 0; k < m; k++) {
        key[2 * k] = I[k] * n + J[k];
        key[2 * k + 1] = k;
    }
    qsort(key, (size_t)m, 2 * sizeof *key, tm_cmp_i64);
    a->n = n;
    a->ptr = calloc((size_t)n + 1, sizeof *a->ptr);
    a->col = malloc((size_t)(m ? m : 1) * sizeof *a->col);
    a->val = malloc((size_t)(m ? m : 1) * sizeof *a->val);
    int64_t nnz = 0;
    for (int64_t k = 0; k < m; k++) {
        int64_t i = key[2 * k] / n, j = key[2 * k] % n;
        double v = V[key[2 * k + 1]];
        if (nnz > 0 && k > 0 && key[2 * k] == key[2 * (k - 1)]) {
            a->val[nnz - 1] += v;
            continue;
        }
        a->col[nnz] = j;
        a->val[nnz] = v;
        a->ptr[i + 1]++;
        nnz++;
    }
    for (int64_t i = 0; i < n; i++) a->ptr[i + 1] += a->ptr[i];
    a->nnz = nnz;
    free(key);
}

/* Random matrix of n rows: row i gets a random length in [0, maxlen] (about
 * one row in 8 empty) with random columns; a band of half width `band` is
 * added when band >= 0; symmetric (A + A^T pattern and values) if sym. */
static inline void tm_random(int64_t n, int maxlen, int band, int sym, uint64_t seed, tm_csr *a)
{
    uint64_t s = seed;
    int64_t cap = n * (int64_t)(maxlen + 2 * (band > 0 ? band : 0) + 1) * (sym ? 2 : 1) + 1;
    int64_t *I = malloc((size_t)cap * sizeof *I), *J = malloc((size_t)cap * sizeof *J);
    double *V = malloc((size_t)cap * sizeof *V);
    int64_t m = 0;
    for (int64_t i = 0; i < n; i++) {
        int len = (tm_next(&s) % 8 == 0) ? 0 : (int)(tm_next(&s) % (uint64_t)(maxlen + 1));
        for (int k = 0; k < len; k++) {
            int64_t j = (int64_t)(tm_next(&s) % (uint64_t)n);
            double v = 2.0 * tm_unif(&s) - 1.0;
            I[m] = i, J[m] = j, V[m++] = v;
            if (sym && j != i) I[m] = j, J[m] = i, V[m++] = v;
        }
        if (band >= 0)
            for (int64_t j = i - band; j <= i + band; j++) {
                if (j < 0 || j >= n || (sym && j < i)) continue;
                double v = 2.0 * tm_unif(&s) - 1.0;
                I[m] = i, J[m] = j, V[m++] = v;
                if (sym && j != i) I[m] = j, J[m] = i, V[m++] = v;
            }
    }
    tm_from_coo(n, m, I, J, V, a);
    free(I);
    free(J);
    free(V);
}

/* y = A x, and ay = |A| |x| (the scale of rounding errors). */
static inline void tm_spmv(const tm_csr *a, const double *x, double *y, double *ay)
{
    for (int64_t i = 0; i < a->n; i++) {
        double s = 0.0, t = 0.0;
        for (int64_t e = a->ptr[i]; e < a->ptr[i + 1]; e++) {
            s += a->val[e] * x[a->col[e]];
            t += fabs(a->val[e] * x[a->col[e]]);
        }
        y[i] = s;
        if (ay) ay[i] = t;
    }
}

/* Row lengths of rows [r0, r1) of a (a pl_row_lengths_fn: arg = the tm_csr). */
static inline int tm_lengths_cb(void *arg, int64_t r0, int64_t r1, int32_t *len)
{
    const tm_csr *a = (const tm_csr *)arg;
    for (int64_t r = r0; r < r1; r++) len[r - r0] = (int32_t)(a->ptr[r + 1] - a->ptr[r]);
    return 0;
}

/* Rows [r0, r1) of a as the pieces of a pl_csr block: row_ptr (r1 - r0 + 1,
 * from 0), col and val (the block's nnz = ptr[r1] - ptr[r0] entries). */
static inline void tm_block_copy(const tm_csr *a, int64_t r0, int64_t r1, int64_t *row_ptr, int64_t *col, double *val)
{
    const int64_t nnz = a->ptr[r1] - a->ptr[r0];
    for (int64_t r = r0; r <= r1; r++) row_ptr[r - r0] = a->ptr[r] - a->ptr[r0];
    memcpy(col, a->col + a->ptr[r0], (size_t)nnz * sizeof *col);
    memcpy(val, a->val + a->ptr[r0], (size_t)nnz * sizeof *val);
}

#endif
