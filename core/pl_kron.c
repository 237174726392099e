/* pl_kron.c — checks, norm bound and size of a Kronecker-sum operator
 * (pl_kron.h).  Plain loops over the tables (core has no OpenMP): a few
 * MB at most, microseconds to milliseconds. */
#include "pl_kron.h"

#include <math.h>

#include "pl_error.h"

/* Sizes: n_left, n_right >= 1, N and every table's bytes within int64_t. */
static int check_sizes(const pl_kron *k)
{
    PL_CHECK(k->n_left >= 1 && k->n_right >= 1, PL_ERR_ARG, "Kronecker operator of %lld x %lld rows",
             (long long)k->n_left, (long long)k->n_right);
    PL_CHECK(k->n_left <= INT64_MAX / k->n_right, PL_ERR_ARG,
             "Kronecker operator: %lld x %lld rows overflow 64-bit indices", (long long)k->n_left,
             (long long)k->n_right);
    PL_CHECK(k->nterms >= 0, PL_ERR_ARG, "Kronecker operator with %d right factors", k->nterms);
    const int64_t big = INT64_MAX / 16; /* every table element is at most 8 bytes, plus room */
    const int64_t nl = k->n_left, nr = k->n_right, nt = k->nterms;
    PL_CHECK(nl < big && nr < big && (nt == 0 || (nl <= big / nt && nr <= big / nt)), PL_ERR_ARG,
             "Kronecker operator: tables of %lld x %d and %lld x %d entries overflow 64-bit sizes", (long long)nl,
             k->nterms, (long long)nr, k->nterms);
    return PL_OK;
}

/* A: a_ptr from 0, non-decreasing, columns in [0, n_left). */
static int check_left(const pl_kron *k)
{
    const int64_t nl = k->n_left;
    PL_CHECK(k->a_ptr && k->dl, PL_ERR_ARG, "Kronecker operator: NULL a_ptr or dl");
    PL_CHECK(k->a_ptr[0] == 0, PL_ERR_ARG, "Kronecker operator: a_ptr[0] = %lld, expected 0",
             (long long)k->a_ptr[0]);
    for (int64_t l = 0; l < nl; l++)
        PL_CHECK(k->a_ptr[l + 1] >= k->a_ptr[l], PL_ERR_ARG, "Kronecker operator: a_ptr decreases at row %lld",
                 (long long)l);
    const int64_t nnz = k->a_ptr[nl];
    PL_CHECK(nnz < INT64_MAX / 16, PL_ERR_ARG, "Kronecker operator: %lld entries of A overflow 64-bit sizes",
             (long long)nnz);
    PL_CHECK(nnz == 0 || (k->a_col && k->a_val), PL_ERR_ARG, "Kronecker operator: NULL a_col or a_val");
    for (int64_t l = 0; l < nl; l++)
        for (int64_t j = k->a_ptr[l]; j < k->a_ptr[l + 1]; j++)
            PL_CHECK(k->a_col[j] >= 0 && k->a_col[j] < nl, PL_ERR_ARG,
                     "Kronecker operator: column %d of A's row %lld outside [0, %lld)", (int)k->a_col[j],
                     (long long)l, (long long)nl);
    return PL_OK;
}

/* The right factors: lo and hi in [-1, n_right). */
static int check_right(const pl_kron *k)
{
    PL_CHECK(k->dr, PL_ERR_ARG, "Kronecker operator: NULL dr");
    if (k->nterms == 0) return PL_OK;
    PL_CHECK(k->c && k->lo && k->hi && k->lo_val && k->hi_val, PL_ERR_ARG,
             "Kronecker operator: %d right factors and a NULL c, lo, hi, lo_val or hi_val", k->nterms);
    const int64_t nr = k->n_right, nt = k->nterms;
    for (int64_t r = 0; r < nr; r++)
        for (int64_t m = 0; m < nt; m++) {
            const int32_t a = k->lo[r * nt + m], b = k->hi[r * nt + m];
            PL_CHECK(a >= -1 && a < nr, PL_ERR_ARG,
                     "Kronecker operator: column %d of right factor %lld's row %lld (lo) outside [0, %lld)",
                     (int)a, (long long)m, (long long)r, (long long)nr);
            PL_CHECK(b >= -1 && b < nr, PL_ERR_ARG,
                     "Kronecker operator: column %d of right factor %lld's row %lld (hi) outside [0, %lld)",
                     (int)b, (long long)m, (long long)r, (long long)nr);
        }
    return PL_OK;
}

int pl_kron_check(const pl_kron *k)
{
    PL_CHECK(k, PL_ERR_ARG, "pl_kron_check: NULL operator");
    PL_CALL(check_sizes(k));
    PL_CALL(check_left(k));
    PL_CALL(check_right(k));
    return PL_OK;
}

/* max_r (|lo_val| + |hi_val|) of right factor m, entries that exist (column >= 0). */
static double right_max(const pl_kron *k, int m)
{
    const int64_t nt = k->nterms;
    double b = 0.0;
    for (int64_t r = 0; r < k->n_right; r++) {
        const int64_t i = r * nt + m;
        const double s = (k->lo[i] >= 0 ? fabs(k->lo_val[i]) : 0.0) + (k->hi[i] >= 0 ? fabs(k->hi_val[i]) : 0.0);
        if (s > b) b = s;
    }
    return b;
}

#define KRON_NORM_TERMS 256 /* per-factor maxima on the stack; more factors: one shared maximum */

double pl_kron_norm_bound(const pl_kron *k)
{
    if (!k || !k->a_ptr || !k->dl || !k->dr || k->n_left < 1 || k->n_right < 1) return 0.0;
    double left = 0.0, right = 0.0, coup = 0.0;
    for (int64_t l = 0; l < k->n_left; l++) {
        double s = fabs(k->dl[l]);
        for (int64_t j = k->a_ptr[l]; j < k->a_ptr[l + 1]; j++) s += fabs(k->a_val[j]);
        if (s > left) left = s;
    }
    for (int64_t r = 0; r < k->n_right; r++)
        if (fabs(k->dr[r]) > right) right = fabs(k->dr[r]);
    if (k->nterms > 0 && k->c && k->lo && k->hi && k->lo_val && k->hi_val) {
        const int nt = k->nterms, per = nt <= KRON_NORM_TERMS;
        double bm[KRON_NORM_TERMS], ball = 0.0;
        for (int m = 0; m < nt; m++) {
            const double b = right_max(k, m);
            if (per) bm[m] = b;
            if (b > ball) ball = b;
        }
        for (int64_t l = 0; l < k->n_left; l++) {
            double s = 0.0;
            for (int m = 0; m < nt; m++) s += fabs(k->c[l * nt + m]) * (per ? bm[m] : ball);
            if (s > coup) coup = s;
        }
    }
    return left + right + fabs(k->shift) + coup;
}

size_t pl_kron_bytes(const pl_kron *k)
{
    if (!k || k->n_left < 0 || k->n_right < 0 || k->nterms < 0) return 0;
    const size_t nl = (size_t)k->n_left, nr = (size_t)k->n_right, nt = (size_t)k->nterms;
    const size_t nnz = k->a_ptr ? (size_t)k->a_ptr[k->n_left] : 0;
    return (nl + 1) * sizeof(int64_t) + nnz * (sizeof(int32_t) + sizeof(double)) + nl * sizeof(double) +
           nr * sizeof(double) + nl * nt * sizeof(double) + 2 * nr * nt * (sizeof(int32_t) + sizeof(double));
}
