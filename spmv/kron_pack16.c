/* kron_pack16.c — the right factors' tables of a Kronecker-sum operator
 * (pl_kron.h) in a compact form for the CUDA kernel variant 6
 * (spmv/cuda/kron_row.cu; spmv_impl.h describes the layout).  Host code,
 * C17, no CUDA: the unit test (tests/spmv/test_kron_pack16.c) decodes it
 * on any build. */
#include <string.h>

#include "pl_kron.h"
#include "spmv_impl.h"

/* Index of v in dict (bitwise), added if new; -1 when dict is full.  last:
 * the previous hit, tried first (the tables repeat values in runs). */
static int dict_index(double v, uint64_t *bits, double *dict, int *n, int *last)
{
    uint64_t b;
    memcpy(&b, &v, sizeof b);
    if (*last >= 0 && bits[*last] == b) return *last;
    for (int i = 0; i < *n; i++)
        if (bits[i] == b) return *last = i;
    if (*n == PL_KRON_P16_DICT) return -1;
    bits[*n] = b;
    dict[*n] = v;
    return *last = (*n)++;
}

int pl_kron_pack16(const pl_kron *k, uint32_t *col, uint16_t *val, double *dict, int *ndict)
{
    uint64_t bits[PL_KRON_P16_DICT];
    const int64_t nr = k->n_right, nt = k->nterms;
    int last = -1;
    *ndict = 0;
    if (nr >= (int64_t)PL_KRON_P16_NONE) return 0;
    for (int64_t m = 0; m < nt; m++)
        for (int64_t r = 0; r < nr; r++) {
            const int64_t j = r * nt + m;
            const int32_t c[2] = {k->lo[j], k->hi[j]};
            const double v[2] = {k->lo_val[j], k->hi_val[j]};
            uint32_t w = 0;
            uint16_t d = 0;
            for (int h = 0; h < 2; h++) {
                int di = 0;
                if (c[h] >= 0 && (di = dict_index(v[h], bits, dict, ndict, &last)) < 0) return 0;
                w |= (c[h] >= 0 ? (uint32_t)c[h] : PL_KRON_P16_NONE) << (16 * h);
                d |= (uint16_t)((unsigned)di << (8 * h));
            }
            col[m * nr + r] = w;
            val[m * nr + r] = d;
        }
    return 1;
}
