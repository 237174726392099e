/* pjds.c — the pJDS (padded jagged diagonals storage) format: sort
 * permutation, construction from CSR rows, reference SpMV.
 *
 * Method (Kreutzer et al. 2012, generalised to a sorting window as in
 * SELL-C-sigma, Kreutzer et al. 2014): rows are sorted by descending length
 * (stable, so equal-length rows keep their order and x keeps its locality)
 * inside windows of sigma consecutive rows; the sorted rows are cut into
 * chunks of C rows, each chunk is padded to its longest row and stored
 * column-major, so that entry j of row r lives at
 *     chunk_start[r / C] + j * C + r % C
 * and C consecutive rows (a warp on a GPU, a SIMD vector on a CPU) read C
 * consecutive values.  The last chunk is padded to C rows with empty rows.
 * Padding entries have value 0 and a valid column (the row's last column, or
 * 0 for an empty row), so kernels read them without a branch.
 *
 * Sorting: a counting sort on lengths per window when the window is longer
 * than its length range (the usual case: O(window)), else qsort on
 * (length desc, index asc) which is stable by construction.
 */
#include <stdlib.h>
#include <string.h>

#include "pl_error.h"
#include "spmv.h"
#include "spmv_impl.h"

typedef struct {
    int32_t len, idx;
} len_idx;

static int cmp_len_idx(const void *a, const void *b)
{
    const len_idx *p = a, *q = b;
    if (p->len != q->len) return p->len > q->len ? -1 : 1; /* descending length */
    return (p->idx > q->idx) - (p->idx < q->idx);           /* stable */
}

/* Sort rows [a, b) into perm[a..b) (perm[new] = old).  Returns nonzero if a
 * temporary allocation failed (then perm[a..b) is the identity). */
static int sort_window(int32_t a, int32_t b, const int32_t *len, int32_t *perm)
{
    int32_t m = b - a, lmin = INT32_MAX, lmax = 0;
    for (int32_t i = a; i < b; i++) {
        perm[i] = i;
        if (len[i] < lmin) lmin = len[i];
        if (len[i] > lmax) lmax = len[i];
    }
    if (m <= 1 || lmin == lmax) return 0;
    int64_t range = (int64_t)lmax - lmin + 1;
    if (range <= 4 * (int64_t)m) {
        /* counting sort, descending: bucket k holds length lmax - k */
        int32_t *cnt = calloc((size_t)range + 1, sizeof *cnt);
        if (!cnt) return 1;
        for (int32_t i = a; i < b; i++) cnt[lmax - len[i] + 1]++;
        for (int64_t k = 1; k <= range; k++) cnt[k] += cnt[k - 1];
        for (int32_t i = a; i < b; i++) perm[a + cnt[lmax - len[i]]++] = i;
        free(cnt);
        return 0;
    }
    len_idx *t = malloc((size_t)m * sizeof *t);
    if (!t) return 1;
    for (int32_t i = 0; i < m; i++) {
        t[i].len = len[a + i];
        t[i].idx = a + i;
    }
    qsort(t, (size_t)m, sizeof *t, cmp_len_idx);
    for (int32_t i = 0; i < m; i++) perm[a + i] = t[i].idx;
    free(t);
    return 0;
}

void pjds_sort_perm(int32_t n, const int32_t *len, int64_t sigma, int32_t *perm)
{
    if (n <= 0) return;
    if (sigma <= 0 || sigma >= n) sigma = n;
    for (int64_t a = 0; a < n; a += sigma) {
        int32_t b = (int32_t)(a + sigma < n ? a + sigma : n);
        if (sort_window((int32_t)a, b, len, perm)) {
            /* Out of memory for the scratch: fall back to an O(m^2) stable
             * insertion sort, so this function keeps its "can't fail". */
            for (int32_t i = (int32_t)a + 1; i < b; i++) {
                int32_t v = perm[i], j = i;
                while (j > a && len[perm[j - 1]] < len[v]) {
                    perm[j] = perm[j - 1];
                    j--;
                }
                perm[j] = v;
            }
        }
    }
}

int pjds_create(int32_t n, int32_t ncols, const int64_t *row_ptr, const int32_t *lcol, const double *val,
                const int32_t *perm, int C, int64_t sigma, pjds *out)
{
    memset(out, 0, sizeof *out);
    PL_CHECK(n >= 0 && ncols >= 0, PL_ERR_ARG, "pjds_create: negative size (n = %d, ncols = %d)", n, ncols);
    PL_CHECK(C >= 1, PL_ERR_ARG, "pjds_create: chunk height C = %d must be >= 1", C);
    int64_t nchunks = ((int64_t)n + C - 1) / C;
    int64_t nslots = nchunks * (int64_t)C; /* rows incl. padding rows, < 2^31 + C */
    PL_CHECK(nslots <= INT32_MAX, PL_ERR_OVERFLOW, "pjds_create: %d rows padded to chunks of %d exceed int32", n, C);

    pjds p = {0};
    p.nrows = n;
    p.ncols = ncols;
    p.C = C;
    p.nchunks = (int32_t)nchunks;
    p.sort_window = (sigma <= 0 || sigma >= n) ? (n > 0 ? n : 1) : sigma;
    int rc = PL_OK;
    p.chunk_start = malloc((size_t)(nchunks + 1) * sizeof *p.chunk_start);
    p.chunk_width = malloc((size_t)(nchunks ? nchunks : 1) * sizeof *p.chunk_width);
    p.row_len = malloc((size_t)(nslots ? nslots : 1) * sizeof *p.row_len);
    PL_CHECK_GOTO(p.chunk_start && p.chunk_width && p.row_len, PL_ERR_MEM, fail, rc,
                  "pjds_create: out of host memory for %d rows", n);

    /* lengths, widths, offsets (checked 64-bit) */
    int64_t nnz = 0, nent = 0;
    p.chunk_start[0] = 0;
    for (int64_t c = 0; c < nchunks; c++) {
        int32_t w = 0;
        for (int64_t s = c * C; s < (c + 1) * C; s++) {
            int32_t l = 0;
            if (s < n) {
                int32_t o = perm ? perm[s] : (int32_t)s;
                PL_CHECK_GOTO(o >= 0 && o < n, PL_ERR_ARG, fail, rc, "pjds_create: perm[%lld] = %d out of range",
                              (long long)s, o);
                int64_t l64 = row_ptr[o + 1] - row_ptr[o];
                PL_CHECK_GOTO(l64 >= 0 && l64 <= INT32_MAX, PL_ERR_ARG, fail, rc,
                              "pjds_create: row %d has bad length %lld", o, (long long)l64);
                l = (int32_t)l64;
            }
            p.row_len[s] = l;
            nnz += l;
            if (l > w) w = l;
        }
        p.chunk_width[c] = w;
        int64_t add;
        PL_CHECK_GOTO(!pl_mul_i64(w, C, &add) && !pl_add_i64(nent, add, &nent), PL_ERR_OVERFLOW, fail, rc,
                      "pjds_create: stored entries overflow int64");
        p.chunk_start[c + 1] = nent;
    }
    p.nnz = nnz;
    p.nent = nent;
    size_t bc = 0, bv = 0;
    PL_CHECK_GOTO(!pl_mul_size((size_t)nent, sizeof *p.col, &bc) && !pl_mul_size((size_t)nent, sizeof *p.val, &bv),
                  PL_ERR_OVERFLOW, fail, rc, "pjds_create: %lld entries overflow size_t", (long long)nent);
    p.col = malloc(bc ? bc : 1);
    p.val = malloc(bv ? bv : 1);
    PL_CHECK_GOTO(p.col && p.val, PL_ERR_MEM, fail, rc, "pjds_create: out of host memory for %lld entries",
                  (long long)nent);

    /* fill, chunk-parallel (chunks are disjoint) */
    int bad = 0;
#pragma omp parallel for schedule(dynamic, 64) reduction(| : bad)
    for (int64_t c = 0; c < nchunks; c++) {
        int64_t off = p.chunk_start[c];
        int32_t w = p.chunk_width[c];
        for (int32_t r = 0; r < C; r++) {
            int64_t s = c * C + r;
            int32_t l = p.row_len[s];
            const int32_t *rc_ = NULL;
            const double *rv = NULL;
            if (l > 0) {
                int32_t o = perm ? perm[s] : (int32_t)s;
                rc_ = lcol + row_ptr[o];
                rv = val + row_ptr[o];
            }
            int32_t padcol = l > 0 ? rc_[l - 1] : 0;
            for (int32_t j = 0; j < w; j++) {
                int64_t e = off + (int64_t)j * C + r;
                if (j < l) {
                    int32_t cj = rc_[j];
                    if (cj < 0 || cj >= ncols) bad = 1;
                    p.col[e] = cj;
                    p.val[e] = rv[j];
                } else {
                    p.col[e] = padcol;
                    p.val[e] = 0.0;
                }
            }
        }
    }
    PL_CHECK_GOTO(!bad, PL_ERR_ARG, fail, rc, "pjds_create: a column index is outside [0, %d)", ncols);
    *out = p;
    return PL_OK;
fail:
    pjds_destroy(&p);
    return rc;
}

void pjds_destroy(pjds *p)
{
    if (!p) return;
    free(p->chunk_start);
    free(p->chunk_width);
    free(p->row_len);
    free(p->col);
    free(p->val);
    free(p->row_map);
    memset(p, 0, sizeof *p);
}

void pjds_spmv_ref(const pjds *p, const double *x, double *y)
{
    for (int32_t r = 0; r < p->nrows; r++) {
        int32_t c = r / p->C;
        int64_t e = p->chunk_start[c] + r % p->C;
        double s = 0.0;
        for (int32_t j = 0; j < p->row_len[r]; j++, e += p->C) s += p->val[e] * x[p->col[e]];
        if (p->row_map)
            y[p->row_map[r]] += s;
        else
            y[r] = s;
    }
}

size_t pjds_bytes(const pjds *p)
{
    size_t nslots = (size_t)p->nchunks * (size_t)p->C;
    return (size_t)p->nent * (sizeof(int32_t) + sizeof(double)) + (size_t)(p->nchunks + 1) * sizeof(int64_t) +
           (size_t)p->nchunks * sizeof(int32_t) + nslots * sizeof(int32_t) +
           (p->row_map ? (size_t)p->nrows * sizeof(int32_t) : 0);
}
