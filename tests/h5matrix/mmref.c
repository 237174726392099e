/* mmref.c — see mmref.h. */
#define _POSIX_C_SOURCE 200809L
#include "mmref.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

typedef struct trip {
    int64_t i, j;
    double v;
} trip;

static int trip_cmp(const void *a, const void *b)
{
    const trip *x = a, *y = b;
    if (x->i != y->i) return x->i < y->i ? -1 : 1;
    if (x->j != y->j) return x->j < y->j ? -1 : 1;
    return 0;
}

int mm_read(const char *path, mm_csr *a)
{
    memset(a, 0, sizeof *a);
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "mm_read: cannot open %s\n", path);
        return -1;
    }
    char line[4096], obj[64], fmt[64], field[64], sym[64];
    if (!fgets(line, sizeof line, f) ||
        sscanf(line, "%%%%MatrixMarket %63s %63s %63s %63s", obj, fmt, field, sym) != 4 ||
        strcasecmp(fmt, "coordinate") != 0 || !strcasecmp(field, "complex")) {
        fprintf(stderr, "mm_read: %s: unsupported banner\n", path);
        fclose(f);
        return -1;
    }
    int pattern = !strcasecmp(field, "pattern");
    int symm = !strcasecmp(sym, "symmetric"), skew = !strcasecmp(sym, "skew-symmetric");
    long long m = 0, n = 0, nz = 0;
    while (fgets(line, sizeof line, f))
        if (line[0] != '%' && sscanf(line, "%lld %lld %lld", &m, &n, &nz) == 3) break;
    if (m <= 0 || m != n || nz < 0) {
        fprintf(stderr, "mm_read: %s: bad size line\n", path);
        fclose(f);
        return -1;
    }
    trip *t = malloc(sizeof(trip) * (size_t)(2 * nz + 1));
    int64_t nt = 0;
    for (long long k = 0; k < nz; k++) {
        long long i, j;
        double v = 1.0;
        if (!fgets(line, sizeof line, f)) break;
        char *p = line, *e;
        i = strtoll(p, &e, 10);
        p = e;
        j = strtoll(p, &e, 10);
        p = e;
        if (!pattern) v = strtod(p, &e);
        t[nt++] = (trip){i - 1, j - 1, v};
        if ((symm || skew) && i != j) t[nt++] = (trip){j - 1, i - 1, skew ? -v : v};
    }
    fclose(f);
    qsort(t, (size_t)nt, sizeof *t, trip_cmp);
    a->n = m;
    a->symmetric = symm;
    a->rp = calloc((size_t)m + 1, sizeof(int64_t));
    a->col = malloc(sizeof(int64_t) * (size_t)(nt + 1));
    a->val = malloc(sizeof(double) * (size_t)(nt + 1));
    int64_t q = 0;
    for (int64_t k = 0; k < nt; k++) {
        if (q > 0 && a->col[q - 1] == t[k].j && k > 0 && t[k - 1].i == t[k].i) {
            a->val[q - 1] += t[k].v; /* duplicate: sum, as scipy does */
            continue;
        }
        a->col[q] = t[k].j;
        a->val[q] = t[k].v;
        a->rp[t[k].i + 1]++;
        q++;
    }
    for (int64_t r = 0; r < m; r++) a->rp[r + 1] += a->rp[r];
    a->nnz = q;
    free(t);
    return 0;
}

void mm_free(mm_csr *a)
{
    free(a->rp);
    free(a->col);
    free(a->val);
    memset(a, 0, sizeof *a);
}

static double lookup(const mm_csr *a, int64_t i, int64_t j)
{
    for (int64_t k = a->rp[i]; k < a->rp[i + 1]; k++)
        if (a->col[k] == j) return a->val[k];
    return 0.0;
}

void mm_asymmetry(const mm_csr *a, double *rel, int64_t *bi, int64_t *bj)
{
    double amax = 0, d = 0;
    *bi = *bj = -1;
    for (int64_t k = 0; k < a->nnz; k++) amax = fmax(amax, fabs(a->val[k]));
    for (int64_t i = 0; i < a->n; i++)
        for (int64_t k = a->rp[i]; k < a->rp[i + 1]; k++) {
            int64_t j = a->col[k];
            if (j == i) continue;
            double x = fabs(a->val[k] - lookup(a, j, i));
            int64_t lo = i < j ? i : j, hi = i < j ? j : i;
            if (x > d || (x == d && x > 0 && (lo < *bi || (lo == *bi && hi < *bj)))) {
                d = x;
                *bi = lo;
                *bj = hi;
            }
        }
    *rel = (d > 0 && amax > 0) ? d / amax : 0.0;
}

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return x;
}

uint64_t mm_rows_digest(int64_t r0, int64_t nrows, const int64_t *rp, const int64_t *col, const double *val)
{
    uint64_t s = 0;
    for (int64_t r = 0; r < nrows; r++) {
        uint64_t h = mix((uint64_t)(r0 + r) + 0x9e37);
        for (int64_t k = rp[r]; k < rp[r + 1]; k++) {
            uint64_t vb;
            memcpy(&vb, &val[k], sizeof vb);
            h = mix(h ^ (uint64_t)col[k]) + mix(vb + (uint64_t)(k - rp[r]));
        }
        s += h;
    }
    return s;
}
