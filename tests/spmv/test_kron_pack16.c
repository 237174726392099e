/* test_kron_pack16.c — the host side of the CUDA matrix-free kernel
 * variant 6 (spmv/cuda/kron_row.cu), on any build:
 *  1. pl_kron_pack16 (spmv_impl.h): the packed tables of Holstein-Hubbard
 *     models (normal and site bases) and of random tables decode to the
 *     original columns and values bit for bit (every column >= 0 with its
 *     value, every -1 as PL_KRON_P16_NONE), the dictionary holds distinct
 *     values only (-0.0 and 0.0 apart); it refuses 257 distinct values and
 *     n_right = 65535, and takes n_right = 65534 with column 65533.
 *  2. kron_rowpart.h: the blocks' unit ranges cover every row (l, r) once
 *     for sizes below, at and above one unit and grids larger than the
 *     units, the ranges differ by at most one unit, and a block stages at
 *     most ceil(units per block / units per left row) + 1 left rows. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hh.h"
#include "hh_args.h"
#include "hh_mf.h"
#include "kron_rowpart.h"
#include "pl_error.h"
#include "pl_kron.h"
#include "spmv_impl.h"
#include "testutil.h"

static int same_bits(double a, double b) { return memcmp(&a, &b, sizeof a) == 0; }

/* Pack k and compare the decoded tables with k's (expected to pack). */
static void check_pack(const pl_kron *k, const char *d)
{
    const size_t n = (size_t)k->n_right * (size_t)k->nterms;
    uint32_t *col = malloc((n ? n : 1) * sizeof *col);
    uint16_t *val = malloc((n ? n : 1) * sizeof *val);
    double dict[PL_KRON_P16_DICT];
    int nd = -1;
    TU_CHECK(col && val);
    if (!col || !val) goto done;
    TU_CHECK_MSG(pl_kron_pack16(k, col, val, dict, &nd) == 1, "%s: does not pack", d);
    TU_CHECK_MSG(nd >= 0 && nd <= PL_KRON_P16_DICT, "%s: %d values", d, nd);
    for (int i = 0; i < nd; i++)
        for (int j = 0; j < i; j++) TU_CHECK_MSG(!same_bits(dict[i], dict[j]), "%s: value %d twice", d, i);
    int bad = 0;
    for (int64_t m = 0; m < k->nterms; m++)
        for (int64_t r = 0; r < k->n_right; r++) {
            const int64_t j = r * k->nterms + m, p = m * k->n_right + r;
            const int32_t c[2] = {k->lo[j], k->hi[j]};
            const double v[2] = {k->lo_val[j], k->hi_val[j]};
            for (int h = 0; h < 2; h++) {
                const uint32_t w = col[p] >> (16 * h) & 0xFFFFu, di = (uint32_t)val[p] >> (8 * h) & 0xFFu;
                if (c[h] < 0) bad += w != PL_KRON_P16_NONE;
                else bad += w != (uint32_t)c[h] || (int)di >= nd || !same_bits(dict[di], v[h]);
            }
        }
    TU_CHECK_MSG(bad == 0, "%s: %d entries decode wrong", d, bad);
done:
    free(col);
    free(val);
}

static void hh_case(int sites, int nu, int nd, int M, int b, const char *d)
{
    hh_params p = hh_args_model(sites, nu, nd, 1.0, 4.0, 1.0, 1.0, M, b, PL_BOUNDARY_PERIODIC);
    hh_model *m = NULL;
    hh_mf *mf = NULL;
    TU_OK(hh_model_create(&p, &m));
    if (m) TU_OK(hh_mf_create(m, &mf));
    if (mf) {
        pl_kron k;
        hh_mf_kron(mf, &k);
        check_pack(&k, d);
    }
    hh_mf_destroy(&mf);
    hh_model_destroy(&m);
}

static double rnd01(void) { return (double)rand() / ((double)RAND_MAX + 1.0); }

/* Random right tables: nr rows, nt terms, values from nv distinct ones
 * (nv <= 0: -0.0 and 0.0 only); returns pl_kron_pack16's answer. */
static int random_case(int64_t nr, int nt, int nv, int check, const char *d)
{
    const size_t n = (size_t)nr * (size_t)nt;
    int32_t *lo = malloc(n * sizeof *lo), *hi = malloc(n * sizeof *hi);
    double *lv = malloc(n * sizeof *lv), *hv = malloc(n * sizeof *hv);
    uint32_t *col = malloc(n * sizeof *col);
    uint16_t *val = malloc(n * sizeof *val);
    double dict[PL_KRON_P16_DICT];
    int nd = 0, ok = -1;
    TU_CHECK(lo && hi && lv && hv && col && val);
    if (lo && hi && lv && hv && col && val) {
        for (size_t j = 0; j < n; j++) {
            lo[j] = rnd01() < 0.2 ? -1 : (int32_t)(rnd01() * (double)nr);
            hi[j] = rnd01() < 0.2 ? -1 : (int32_t)(rnd01() * (double)nr);
            lv[j] = nv > 0 ? 1.0 + (double)(j % (size_t)nv) / 7.0 : (j % 2 ? -0.0 : 0.0);
            hv[j] = nv > 0 ? 1.0 + (double)((j * 7 + 3) % (size_t)nv) / 7.0 : (j % 2 ? 0.0 : -0.0);
        }
        lo[0] = (int32_t)nr - 1; /* the largest column */
        const pl_kron k = {.n_left = 1, .n_right = nr, .nterms = nt, .lo = lo, .hi = hi, .lo_val = lv, .hi_val = hv};
        ok = pl_kron_pack16(&k, col, val, dict, &nd);
        if (check) check_pack(&k, d);
    }
    void *p[] = {lo, hi, lv, hv, col, val};
    for (size_t i = 0; i < sizeof p / sizeof p[0]; i++) free(p[i]);
    return ok;
}

/* kron_rowpart.h for nl x nr rows on G blocks. */
static void check_part(int64_t nl, int64_t nr, int64_t G)
{
    const int64_t cpr = pl_kp_cpr(nr), U = nl * cpr;
    unsigned char *hit = calloc((size_t)(nl * nr), 1);
    int bad = 0, over = 0;
    int64_t umin = INT64_MAX, umax = 0;
    TU_CHECK(hit);
    if (!hit) return;
    TU_CHECK(cpr * PL_KP_UNIT >= nr && (cpr - 1) * PL_KP_UNIT < nr);
    TU_CHECK(pl_kp_unit0(U, G, 0) == 0 && pl_kp_unit0(U, G, G) == U);
    for (int64_t b = 0; b < G; b++) {
        const int64_t u0 = pl_kp_unit0(U, G, b), u1 = pl_kp_unit0(U, G, b + 1);
        umin = u1 - u0 < umin ? u1 - u0 : umin;
        umax = u1 - u0 > umax ? u1 - u0 : umax;
        if (u0 >= u1) continue;
        const int64_t rows = (u1 - 1) / cpr - u0 / cpr + 1;
        over += rows > (u1 - u0 + cpr - 1) / cpr + 1;
        for (int64_t l = u0 / cpr; l <= (u1 - 1) / cpr; l++) {
            int64_t ra = -1, rb = -1;
            pl_kp_rows(nr, cpr, u0, u1, l, &ra, &rb);
            bad += ra < 0 || rb > nr || ra >= rb;
            for (int64_t r = ra; r < rb && r >= 0 && rb <= nr; r++) hit[l * nr + r]++;
        }
    }
    for (int64_t i = 0; i < nl * nr; i++) bad += hit[i] != 1;
    TU_CHECK_MSG(bad == 0, "%lld x %lld on %lld blocks: %d rows not covered once", (long long)nl, (long long)nr,
                 (long long)G, bad);
    TU_CHECK_MSG(umax - umin <= 1, "%lld x %lld on %lld blocks: ranges of %lld to %lld units", (long long)nl,
                 (long long)nr, (long long)G, (long long)umin, (long long)umax);
    TU_CHECK_MSG(over == 0, "%lld x %lld on %lld blocks: %d blocks stage too many rows", (long long)nl,
                 (long long)nr, (long long)G, over);
    free(hit);
}

int main(void)
{
    hh_case(4, 2, 2, 4, PL_PHONON_NORMAL, "hh L4 M4 normal");
    hh_case(4, 2, 1, 5, PL_PHONON_SITE, "hh L4 M5 site");
    hh_case(3, 1, 1, 2, PL_PHONON_NORMAL, "hh L3 M2 normal");
    srand(7);
    TU_CHECK(random_case(1000, 3, 256, 1, "random 256 values") == 1);
    TU_CHECK(random_case(1000, 3, 0, 1, "random +-0.0") == 1);
    TU_CHECK(random_case(300, 11, 17, 1, "random nterms 11") == 1);
    TU_CHECK(random_case(1000, 3, 257, 0, "") == 0);
    TU_CHECK(random_case(65535, 1, 4, 0, "") == 0);
    TU_CHECK(random_case(65534, 1, 4, 1, "random n_right 65534") == 1);
    const int64_t sizes[][3] = {{400, 15504, 132}, {7, 31, 3}, {7, 32, 3}, {7, 33, 132}, {1, 5000, 132},
                                {130, 700, 264}, {3, 1, 8},   {20, 300, 1}, {5, 64, 10},   {50, 2000, 132}};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) check_part(sizes[i][0], sizes[i][1], sizes[i][2]);
    return tu_result("kron_pack16");
}
