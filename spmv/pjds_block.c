/* pjds_block.c — blocked pJDS (pJDS-b): run-length detection, construction
 * from a local CSR, host SpMV.  Layout and permutation: pjds_block.h.
 *
 * Method.  A CFD Jacobian (and the block-stencil model) consists of dense
 * b x b blocks, so every row's columns form runs [q b, q b + b).  Storing
 * one column index per run (BCSR's idea, Im & Yelick's SPARSITY register
 * blocking 1 x b) in the pJDS layout (Kreutzer et al. 2012; SELL-C-sigma
 * 2014) cuts the bytes per entry from 12 to 8 + 4/b.  Runs are 1 x b (one
 * row, b columns), not b x b, so every row keeps its own thread on the GPU
 * and rows with different patterns inside a block row cost nothing extra.
 *
 * Detection counts, for each b, the distinct q = col / b of every row: the
 * fill (explicit zeros that complete partial runs) is b * runs - nnz.
 * Construction permutes whole block rows (so an input block's b columns
 * stay consecutive, though not aligned, in the permuted basis: run starts
 * are stored, not block numbers), sorts block rows by descending run count
 * inside windows (pjds_sort_perm), lays chunks of C rows out column-major
 * per scalar entry, and fills them chunk-parallel; a run whose start + b
 * would pass the last column (partial last block) is shifted left, with its
 * entries at correspondingly larger offsets.
 */
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "pjds_block.h"
#include "pl_error.h"
#include "spmv.h"

typedef struct {
    int32_t c;
    double v;
} col_val;

static int cmp_i32(const void *a, const void *b)
{
    int32_t p = *(const int32_t *)a, q = *(const int32_t *)b;
    return (p > q) - (p < q);
}

static int cmp_col_val(const void *a, const void *b)
{
    const col_val *p = a, *q = b;
    return (p->c > q->c) - (p->c < q->c);
}

/* Distinct c / b of l columns (all >= 0).  scratch: l entries, used only
 * when the row is not ordered by c / b. */
static int32_t row_runs(const int32_t *c, int64_t l, int b, int32_t *scratch)
{
    if (l <= 0) return 0;
    int64_t k;
    for (k = 1; k < l; k++)
        if (c[k] / b < c[k - 1] / b) break;
    int32_t n = 1;
    if (k == l) {
        for (k = 1; k < l; k++) n += c[k] / b != c[k - 1] / b;
        return n;
    }
    for (k = 0; k < l; k++) scratch[k] = c[k] / b;
    qsort(scratch, (size_t)l, sizeof *scratch, cmp_i32);
    for (k = 1; k < l; k++) n += scratch[k] != scratch[k - 1];
    return n;
}

/* Longest row; -1 if a row length is negative or exceeds int32. */
static int64_t max_row_len(int32_t n, const int64_t *row_ptr)
{
    int64_t m = 0;
    int bad = 0;
#pragma omp parallel for schedule(static) reduction(max : m) reduction(| : bad)
    for (int32_t i = 0; i < n; i++) {
        int64_t l = row_ptr[i + 1] - row_ptr[i];
        bad |= l < 0 || l > INT32_MAX;
        if (l > m) m = l;
    }
    return bad ? -1 : m;
}

/* runs[i] (if runs != NULL) and their sum for run length b; columns must be
 * >= 0 (PL_ERR_ARG otherwise). */
static int count_runs(int32_t n, const int64_t *row_ptr, const int32_t *col, int b, int32_t *runs, int64_t *total)
{
    int64_t maxlen = max_row_len(n, row_ptr);
    PL_CHECK(maxlen >= 0, PL_ERR_ARG, "pjds_block: a row has a negative length or more than 2^31 entries");
    int64_t sum = 0;
    int bad_mem = 0, bad_col = 0;
#pragma omp parallel reduction(+ : sum) reduction(| : bad_mem, bad_col)
    {
        int32_t *scratch = malloc((size_t)(maxlen ? maxlen : 1) * sizeof *scratch);
        if (!scratch) bad_mem = 1;
#pragma omp for schedule(dynamic, 1024)
        for (int32_t i = 0; i < n; i++) {
            if (!scratch) continue;
            const int32_t *c = col + row_ptr[i];
            int64_t l = row_ptr[i + 1] - row_ptr[i];
            int neg = 0;
            for (int64_t k = 0; k < l; k++) neg |= c[k] < 0;
            if (neg) {
                bad_col = 1;
                continue;
            }
            int32_t r = row_runs(c, l, b, scratch);
            if (runs) runs[i] = r;
            sum += r;
        }
        free(scratch);
    }
    PL_CHECK(!bad_mem, PL_ERR_MEM, "pjds_block: out of host memory for a row of %lld entries", (long long)maxlen);
    PL_CHECK(!bad_col, PL_ERR_ARG, "pjds_block: a column index is negative");
    *total = sum;
    return PL_OK;
}

int pjds_block_count_runs(int32_t n, const int64_t *row_ptr, const int32_t *col, int b, int64_t *nruns)
{
    PL_CHECK(n >= 0 && (n == 0 || (row_ptr && col)) && nruns, PL_ERR_ARG, "pjds_block_count_runs: bad arguments");
    PL_CHECK(b >= 1 && b <= PJDS_BLOCK_MAX_B, PL_ERR_ARG, "pjds_block: run length b = %d must be in [1, %d]", b,
             PJDS_BLOCK_MAX_B);
    PL_CALL(count_runs(n, row_ptr, col, b, NULL, nruns));
    return PL_OK;
}

int pjds_block_detect(int32_t n, int32_t ncols, const int64_t *row_ptr, const int32_t *col, double max_fill, int *b,
                      double *fill, double *fill_of_b)
{
    PL_CHECK(b && fill, PL_ERR_ARG, "pjds_block_detect: NULL output");
    PL_CHECK(n >= 0 && ncols >= 0 && (n == 0 || (row_ptr && col)), PL_ERR_ARG, "pjds_block_detect: bad arguments");
    *b = 1;
    *fill = 0.0;
    if (fill_of_b)
        for (int k = 0; k <= PJDS_BLOCK_MAX_B; k++) fill_of_b[k] = k <= 1 ? 0.0 : -1.0;
    const int64_t nnz = n ? row_ptr[n] - row_ptr[0] : 0;
    if (nnz <= 0) return PL_OK;
    double best = 12.0; /* bytes per true entry of plain pJDS */
    for (int k = 2; k <= PJDS_BLOCK_MAX_B; k++) {
        if (k > ncols) break;
        int64_t runs = 0;
        PL_CALL(count_runs(n, row_ptr, col, k, NULL, &runs));
        double f = ((double)runs * k - (double)nnz) / (double)nnz;
        if (fill_of_b) fill_of_b[k] = f;
        double bytes = (1.0 + f) * (8.0 + 4.0 / k);
        if (f <= max_fill && bytes <= best) { /* <=: ties go to the larger b */
            best = bytes;
            *b = k;
            *fill = f;
        }
    }
    return PL_OK;
}

void pjds_block_destroy(pjds_block *p)
{
    if (!p) return;
    free(p->run_off);
    free(p->chunk_start);
    free(p->chunk_width);
    free(p->row_runs);
    free(p->rcol);
    free(p->val);
    free(p->perm);
    memset(p, 0, sizeof *p);
}

/* The arguments of pjds_block_create; *maxlen = the longest row. */
static int block_args(int32_t n, const int64_t *row_ptr, const int32_t *col, const double *val, int b, int C,
                      int64_t *maxlen)
{
    PL_CHECK(n >= 0 && (n == 0 || (row_ptr && col && val)), PL_ERR_ARG, "pjds_block_create: bad arguments");
    PL_CHECK(b >= 1 && b <= PJDS_BLOCK_MAX_B, PL_ERR_ARG, "pjds_block: run length b = %d must be in [1, %d]", b,
             PJDS_BLOCK_MAX_B);
    PL_CHECK(n == 0 || b <= n, PL_ERR_ARG, "pjds_block_create: run length b = %d exceeds the %d columns", b, n);
    PL_CHECK(C >= 1, PL_ERR_ARG, "pjds_block_create: chunk height C = %d must be >= 1", C);
    const int64_t nslots = ((int64_t)n + C - 1) / C * (int64_t)C;
    PL_CHECK(nslots <= INT32_MAX, PL_ERR_OVERFLOW, "pjds_block_create: %d rows padded to chunks of %d exceed int32",
             n, C);
    *maxlen = max_row_len(n, row_ptr);
    PL_CHECK(*maxlen >= 0, PL_ERR_ARG, "pjds_block_create: a row has a negative length or more than 2^31 entries");
    int bad = 0;
    const int64_t e0 = n ? row_ptr[0] : 0, e1 = n ? row_ptr[n] : 0;
#pragma omp parallel for schedule(static) reduction(| : bad)
    for (int64_t k = e0; k < e1; k++) bad |= (uint32_t)col[k] >= (uint32_t)n;
    PL_CHECK(!bad, PL_ERR_ARG, "pjds_block_create: a column index is outside [0, %d)", n);
    return PL_OK;
}

/* The row order: block rows sorted by their most runs (key) within windows
 * of sigma rows, expanded to rows (block rows move as units); iperm its
 * inverse. */
static void block_order(pjds_block *p, const int32_t *runs, int64_t sigma, int32_t *key, int32_t *bperm,
                        int32_t *iperm)
{
    const int32_t n = p->nrows, b = p->b;
    const int64_t nblk = ((int64_t)n + b - 1) / b;
#pragma omp parallel for schedule(static)
    for (int64_t q = 0; q < nblk; q++) {
        int32_t m = 0;
        for (int64_t i = q * b; i < q * b + b && i < n; i++)
            if (runs[i] > m) m = runs[i];
        key[q] = m;
    }
    pjds_sort_perm((int32_t)nblk, key, sigma <= 0 ? 0 : (sigma + b - 1) / b, bperm);
    int32_t s = 0;
    for (int64_t i = 0; i < nblk; i++)
        for (int64_t o = (int64_t)bperm[i] * b; o < (int64_t)bperm[i] * b + b && o < n; o++) p->perm[s++] = (int32_t)o;
#pragma omp parallel for schedule(static)
    for (int32_t i = 0; i < n; i++) iperm[p->perm[i]] = i;
}

/* The layout: run counts per slot, chunk widths, run and value offsets, and
 * the run column and value arrays. */
static int block_layout(pjds_block *p, const int32_t *runs)
{
    const int32_t n = p->nrows, C = p->C, b = p->b;
    const int64_t nchunks = p->nchunks;
#pragma omp parallel for schedule(static)
    for (int64_t c = 0; c < nchunks; c++) {
        int32_t w = 0;
        for (int64_t s = c * C; s < (c + 1) * C; s++) {
            int32_t l = s < n ? runs[p->perm[s]] : 0;
            p->row_runs[s] = l;
            if (l > w) w = l;
        }
        p->chunk_width[c] = w;
        p->run_off[c + 1] = (int64_t)w * C;
    }
    p->run_off[0] = 0;
    for (int64_t c = 0; c < nchunks; c++) p->run_off[c + 1] += p->run_off[c];
    for (int64_t c = 0; c <= nchunks; c++) p->chunk_start[c] = p->run_off[c] * b;
    p->nruns = p->run_off[nchunks];
    size_t br = 0, bv = 0;
    PL_CHECK(!pl_mul_size((size_t)p->nruns, sizeof *p->rcol, &br) &&
                 !pl_mul_size((size_t)p->nruns * (size_t)b, sizeof *p->val, &bv),
             PL_ERR_OVERFLOW, "pjds_block_create: %lld runs overflow size_t", (long long)p->nruns);
    p->rcol = malloc(br ? br : 1);
    p->val = malloc(bv ? bv : 1);
    PL_CHECK(p->rcol && p->val, PL_ERR_MEM, "pjds_block_create: out of host memory for %lld runs", (long long)p->nruns);
    return PL_OK;
}

/* Slot r of chunk c: its row's entries into runs of b columns (duplicates
 * summed), padding runs after; scratch sorts a row whose blocks are not in
 * order.  *bad_off = 1 if an entry falls outside its run. */
static void fill_slot(pjds_block *p, int64_t c, int32_t r, const int64_t *row_ptr, const int32_t *col,
                      const double *val, const int32_t *iperm, col_val *scratch, int *bad_off)
{
    const int32_t n = p->nrows, C = p->C, b = p->b, w = p->chunk_width[c];
    const int64_t s = c * C + r;
    int32_t *pr = p->rcol + p->run_off[c] + r;
    double *pv = p->val + p->chunk_start[c] + r;
    for (int64_t e = 0; e < (int64_t)w * b; e++) pv[e * C] = 0.0;
    int32_t j = -1, q = -1, start = 0;
    if (s < n) {
        const int32_t o = p->perm[s];
        const int64_t l = row_ptr[o + 1] - row_ptr[o];
        const int32_t *rc_ = col + row_ptr[o];
        const double *rv = val + row_ptr[o];
        int sorted = 1;
        for (int64_t k = 1; k < l && sorted; k++) sorted = rc_[k] / b >= rc_[k - 1] / b;
        for (int64_t k = 0; k < l; k++) {
            int32_t ck;
            double vk;
            if (sorted) {
                ck = rc_[k];
                vk = rv[k];
            } else {
                if (k == 0) {
                    for (int64_t t = 0; t < l; t++) scratch[t] = (col_val){rc_[t], rv[t]};
                    qsort(scratch, (size_t)l, sizeof *scratch, cmp_col_val);
                }
                ck = scratch[k].c;
                vk = scratch[k].v;
            }
            if (ck / b != q) {
                q = ck / b;
                j++;
                start = iperm[(int64_t)q * b];
                if (start > n - b) start = n - b; /* partial last block: shift left */
                pr[(int64_t)j * C] = start;
            }
            int32_t off = iperm[ck] - start;
            if (off < 0 || off >= b || j >= w) {
                *bad_off = 1;
                continue;
            }
            pv[((int64_t)j * b + off) * C] += vk; /* duplicates are summed */
        }
    }
    for (int32_t jj = j + 1; jj < w; jj++) pr[(int64_t)jj * C] = start; /* padding runs */
}

int pjds_block_create(int32_t n, const int64_t *row_ptr, const int32_t *col, const double *val, int b, int C,
                      int64_t sigma, pjds_block *out)
{
    PL_CHECK(out, PL_ERR_ARG, "pjds_block_create: NULL output");
    memset(out, 0, sizeof *out);
    int64_t maxlen = 0;
    PL_CALL(block_args(n, row_ptr, col, val, b, C, &maxlen));
    const int64_t nchunks = ((int64_t)n + C - 1) / C;
    const int64_t nslots = nchunks * (int64_t)C;

    pjds_block p = {0};
    int rc = PL_OK;
    const int64_t nblk = ((int64_t)n + b - 1) / b;
    int32_t *runs = NULL, *key = NULL, *bperm = NULL, *iperm = NULL;
    p.nrows = p.ncols = n;
    p.b = b;
    p.C = C;
    p.nchunks = (int32_t)nchunks;
    p.sort_window = (sigma <= 0 || sigma >= n) ? (n > 0 ? n : 1) : sigma;
    runs = malloc((size_t)(n ? n : 1) * sizeof *runs);
    key = malloc((size_t)(nblk ? nblk : 1) * sizeof *key);
    bperm = malloc((size_t)(nblk ? nblk : 1) * sizeof *bperm);
    iperm = malloc((size_t)(n ? n : 1) * sizeof *iperm);
    p.perm = malloc((size_t)(n ? n : 1) * sizeof *p.perm);
    p.run_off = malloc((size_t)(nchunks + 1) * sizeof *p.run_off);
    p.chunk_start = malloc((size_t)(nchunks + 1) * sizeof *p.chunk_start);
    p.chunk_width = malloc((size_t)(nchunks ? nchunks : 1) * sizeof *p.chunk_width);
    p.row_runs = malloc((size_t)(nslots ? nslots : 1) * sizeof *p.row_runs);
    PL_CHECK_GOTO(runs && key && bperm && iperm && p.perm && p.run_off && p.chunk_start && p.chunk_width && p.row_runs,
                  PL_ERR_MEM, fail, rc, "pjds_block_create: out of host memory for %d rows", n);

    PL_CALL_GOTO(count_runs(n, row_ptr, col, b, runs, &p.nruns_true), fail, rc);
    p.nnz = n ? row_ptr[n] - row_ptr[0] : 0;
    block_order(&p, runs, sigma, key, bperm, iperm);
    PL_CALL_GOTO(block_layout(&p, runs), fail, rc);

    /* fill, chunk-parallel (chunks are disjoint) */
    int bad_mem = 0, bad_off = 0;
#pragma omp parallel reduction(| : bad_mem, bad_off)
    {
        col_val *scratch = malloc((size_t)(maxlen ? maxlen : 1) * sizeof *scratch);
        if (!scratch) bad_mem = 1;
#pragma omp for schedule(dynamic, 16)
        for (int64_t c = 0; c < nchunks; c++) {
            if (!scratch) continue;
            for (int32_t r = 0; r < C; r++) fill_slot(&p, c, r, row_ptr, col, val, iperm, scratch, &bad_off);
        }
        free(scratch);
    }
    PL_CHECK_GOTO(!bad_mem, PL_ERR_MEM, fail, rc, "pjds_block_create: out of host memory for a row of %lld entries",
                  (long long)maxlen);
    PL_CHECK_GOTO(!bad_off, PL_ERR_ARG, fail, rc, "pjds_block_create: internal error: an entry falls outside its run");
    free(runs);
    free(key);
    free(bperm);
    free(iperm);
    *out = p;
    return PL_OK;
fail:
    free(runs);
    free(key);
    free(bperm);
    free(iperm);
    pjds_block_destroy(&p);
    return rc;
}

/* One chunk; B is a literal at every call site, so the k loop unrolls. */
static inline void spmv_chunk(const pjds_block *p, int64_t c, const double *x, double *y, const int B)
{
    const int64_t C = p->C;
    for (int64_t r = 0; r < C; r++) {
        const int64_t s = c * C + r;
        if (s >= p->nrows) break;
        const int32_t *pr = p->rcol + p->run_off[c] + r;
        const double *pv = p->val + p->chunk_start[c] + r;
        const int32_t len = p->row_runs[s];
        double acc = 0.0;
        for (int32_t j = 0; j < len; j++) {
            const double *xs = x + pr[(int64_t)j * C];
            const double *vj = pv + (int64_t)j * B * C;
            for (int k = 0; k < B; k++) acc += vj[k * C] * xs[k];
        }
        y[s] = acc;
    }
}

void pjds_block_spmv(const pjds_block *p, const double *x, double *y)
{
    const int64_t nc = p->nchunks;
#pragma omp parallel for schedule(static)
    for (int64_t c = 0; c < nc; c++) {
        switch (p->b) {
        case 1: spmv_chunk(p, c, x, y, 1); break;
        case 2: spmv_chunk(p, c, x, y, 2); break;
        case 3: spmv_chunk(p, c, x, y, 3); break;
        case 4: spmv_chunk(p, c, x, y, 4); break;
        case 5: spmv_chunk(p, c, x, y, 5); break;
        case 6: spmv_chunk(p, c, x, y, 6); break;
        case 7: spmv_chunk(p, c, x, y, 7); break;
        default: spmv_chunk(p, c, x, y, 8); break;
        }
    }
}

size_t pjds_block_bytes(const pjds_block *p)
{
    return (size_t)p->nruns * (sizeof(int32_t) + (size_t)p->b * sizeof(double)) +
           (size_t)(p->nchunks + 1) * sizeof(int64_t) + (size_t)p->nchunks * sizeof(int32_t) +
           (size_t)p->nchunks * (size_t)p->C * sizeof(int32_t);
}
