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
 * (length desc, index asc) which is stable by construction.  Large windows
 * (>= 65536 rows) use a parallel stable counting sort (per-thread histograms
 * of contiguous row blocks); many small windows are sorted in parallel.
 * Construction: pjds_layout computes the chunk widths and offsets in
 * parallel and allocates col/val once; the fill is chunk-parallel and writes
 * every entry exactly once (true entries, then padding), so the arrays are
 * first touched by the threads that fill them.
 */
#include <omp.h>
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
    if (m <= 1 || lmin >= lmax) return 0; /* (>=: tells the compiler range >= 2) */
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

/* Parallel stable counting sort of the window [a, b) (descending length),
 * for large windows with a small length range: each thread counts a
 * contiguous block of rows, bucket offsets are laid out bucket-major and
 * thread-minor (so rows of equal length keep their order), each thread then
 * scatters its block.  Returns nonzero (perm untouched) if the range is too
 * wide or the scratch cannot be allocated. */
static int sort_window_par(int32_t a, int32_t b, const int32_t *len, int32_t *perm)
{
    int32_t m = b - a, lmin = INT32_MAX, lmax = 0;
#pragma omp parallel for schedule(static) reduction(min : lmin) reduction(max : lmax)
    for (int32_t i = a; i < b; i++) {
        if (len[i] < lmin) lmin = len[i];
        if (len[i] > lmax) lmax = len[i];
    }
    int64_t range = (int64_t)lmax - lmin + 1;
    if (range > 4096 || range > (int64_t)m) return 1;
    int nt = omp_get_max_threads();
    int64_t *cnt = calloc((size_t)nt * (size_t)range, sizeof *cnt);
    if (!cnt) return 1;
    int used = nt;
#pragma omp parallel num_threads(nt)
    {
        int t = omp_get_thread_num(), T = omp_get_num_threads();
#pragma omp single
        used = T;
        /* implicit barrier of single: `used` is visible to all */
        int32_t r0 = a + (int32_t)((int64_t)m * t / T), r1 = a + (int32_t)((int64_t)m * (t + 1) / T);
        int64_t *c = cnt + (size_t)t * (size_t)range;
        for (int32_t i = r0; i < r1; i++) c[lmax - len[i]]++;
#pragma omp barrier
#pragma omp single
        {
            int64_t run = a;
            for (int64_t k = 0; k < range; k++)
                for (int q = 0; q < used; q++) {
                    int64_t v = cnt[(size_t)q * (size_t)range + (size_t)k];
                    cnt[(size_t)q * (size_t)range + (size_t)k] = run;
                    run += v;
                }
        }
        for (int32_t i = r0; i < r1; i++) perm[c[lmax - len[i]]++] = i;
    }
    free(cnt);
    return 0;
}

/* Serial sort of one window that can't fail: on out of memory for the
 * scratch, an O(m^2) stable insertion sort. */
static void sort_window_safe(int32_t a, int32_t b, const int32_t *len, int32_t *perm)
{
    if (!sort_window(a, b, len, perm)) return;
    for (int32_t i = a + 1; i < b; i++) {
        int32_t v = perm[i], j = i;
        while (j > a && len[perm[j - 1]] < len[v]) {
            perm[j] = perm[j - 1];
            j--;
        }
        perm[j] = v;
    }
}

/* Windows of at least this many rows are sorted with the parallel counting
 * sort (below it the serial sort per window, windows in parallel). */
#define PJDS_PAR_SORT_MIN 65536

void pjds_sort_perm(int32_t n, const int32_t *len, int64_t sigma, int32_t *perm)
{
    if (n <= 0) return;
    if (sigma <= 0 || sigma >= n) sigma = n;
    if (sigma == 1) { /* no sort: the identity (the compressed format's row order) */
#pragma omp parallel for schedule(static)
        for (int32_t i = 0; i < n; i++) perm[i] = i;
        return;
    }
    int64_t nwin = (n + sigma - 1) / sigma;
    int par = sigma >= PJDS_PAR_SORT_MIN && omp_get_max_threads() > 1;
    if (par) {
        /* few large windows: parallel inside each window */
        for (int64_t w = 0; w < nwin; w++) {
            int64_t a = w * sigma;
            int32_t b = (int32_t)(a + sigma < n ? a + sigma : n);
            if (sort_window_par((int32_t)a, b, len, perm)) sort_window_safe((int32_t)a, b, len, perm);
        }
        return;
    }
    /* small windows: several per scheduling step (one per step costs more than the sort) */
    const int step = sigma >= 4096 ? 1 : (int)(4096 / sigma);
#pragma omp parallel for schedule(dynamic, step) if (nwin > 1)
    for (int64_t w = 0; w < nwin; w++) {
        int64_t a = w * sigma;
        int32_t b = (int32_t)(a + sigma < n ? a + sigma : n);
        sort_window_safe((int32_t)a, b, len, perm);
    }
}

int pjds_layout(int32_t n, int32_t ncols, const int32_t *len, const int32_t *perm, int C, int64_t sigma, pjds *out)
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

    /* lengths and widths per chunk (parallel), then offsets (serial scan
     * over chunks; each chunk adds at most C * 2^31 < 2^43, so the sum of
     * fewer than 2^31 chunks cannot overflow int64) */
    int64_t nnz = 0;
    int32_t bad_perm = 0, bad_len = 0;
#pragma omp parallel for schedule(static) reduction(+ : nnz) reduction(| : bad_perm, bad_len)
    for (int64_t c = 0; c < nchunks; c++) {
        int32_t w = 0;
        for (int64_t s = c * C; s < (c + 1) * C; s++) {
            int32_t l = 0;
            if (s < n) {
                int32_t o = perm ? perm[s] : (int32_t)s;
                if (o < 0 || o >= n) {
                    bad_perm = 1;
                    o = 0;
                }
                l = len[o];
                bad_len |= l < 0;
            }
            p.row_len[s] = l;
            nnz += l;
            if (l > w) w = l;
        }
        p.chunk_width[c] = w;
        p.chunk_start[c + 1] = (int64_t)w * C;
    }
    PL_CHECK_GOTO(!bad_perm, PL_ERR_ARG, fail, rc, "pjds_create: perm is not a permutation of [0, %d)", n);
    PL_CHECK_GOTO(!bad_len, PL_ERR_ARG, fail, rc, "pjds_create: a row has a negative length");
    p.chunk_start[0] = 0;
    for (int64_t c = 0; c < nchunks; c++) p.chunk_start[c + 1] += p.chunk_start[c];
    p.nnz = nnz;
    p.nent = p.chunk_start[nchunks];
    size_t bc = 0, bv = 0;
    PL_CHECK_GOTO(!pl_mul_size((size_t)p.nent, sizeof *p.col, &bc) && !pl_mul_size((size_t)p.nent, sizeof *p.val, &bv),
                  PL_ERR_OVERFLOW, fail, rc, "pjds_create: %lld entries overflow size_t", (long long)p.nent);
    p.col = malloc(bc ? bc : 1);
    p.val = malloc(bv ? bv : 1);
    PL_CHECK_GOTO(p.col && p.val, PL_ERR_MEM, fail, rc, "pjds_create: out of host memory for %lld entries",
                  (long long)p.nent);
    *out = p;
    return PL_OK;
fail:
    pjds_destroy(&p);
    return rc;
}

int pjds_create(int32_t n, int32_t ncols, const int64_t *row_ptr, const int32_t *lcol, const double *val,
                const int32_t *perm, int C, int64_t sigma, pjds *out)
{
    memset(out, 0, sizeof *out);
    PL_CHECK(n >= 0 && ncols >= 0, PL_ERR_ARG, "pjds_create: negative size (n = %d, ncols = %d)", n, ncols);
    PL_CHECK(C >= 1, PL_ERR_ARG, "pjds_create: chunk height C = %d must be >= 1", C);
    /* row lengths of the unpermuted rows (checked) */
    int32_t *len = malloc((size_t)(n ? n : 1) * sizeof *len);
    PL_CHECK(len, PL_ERR_MEM, "pjds_create: out of host memory for %d rows", n);
    int64_t bad_row = -1;
#pragma omp parallel for schedule(static) reduction(max : bad_row)
    for (int32_t o = 0; o < n; o++) {
        int64_t l64 = row_ptr[o + 1] - row_ptr[o];
        if (l64 < 0 || l64 > INT32_MAX) {
            bad_row = o;
            l64 = 0;
        }
        len[o] = (int32_t)l64;
    }
    if (bad_row >= 0) {
        free(len);
        return PL_ERROR(PL_ERR_ARG, "pjds_create: row %lld has bad length %lld", (long long)bad_row,
                        (long long)(row_ptr[bad_row + 1] - row_ptr[bad_row]));
    }
    pjds p;
    int rc = pjds_layout(n, ncols, len, perm, C, sigma, &p);
    free(len);
    PL_CALL(rc);

    /* fill, chunk-parallel (chunks are disjoint): true entries, then padding */
    int bad = 0;
#pragma omp parallel for schedule(dynamic, 64) reduction(| : bad)
    for (int64_t c = 0; c < p.nchunks; c++) {
        int64_t off = p.chunk_start[c];
        int32_t w = p.chunk_width[c];
        for (int32_t r = 0; r < C; r++) {
            int64_t s = c * C + r;
            int32_t l = p.row_len[s], padcol = 0;
            int32_t *pc = p.col + off + r;
            double *pv = p.val + off + r;
            if (l > 0) {
                int32_t o = perm ? perm[s] : (int32_t)s;
                const int32_t *rc_ = lcol + row_ptr[o];
                const double *rv = val + row_ptr[o];
                for (int32_t j = 0; j < l; j++) {
                    int32_t cj = rc_[j];
                    bad |= (uint32_t)cj >= (uint32_t)ncols;
                    pc[(int64_t)j * C] = cj;
                    pv[(int64_t)j * C] = rv[j];
                }
                padcol = rc_[l - 1];
            }
            for (int32_t j = l; j < w; j++) {
                pc[(int64_t)j * C] = padcol;
                pv[(int64_t)j * C] = 0.0;
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
