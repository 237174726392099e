/* op_build.c — creation of the distributed operator (pl_op_create): the
 * permutation, the pJDS blocks, the halo plan and the upload.
 *
 * Method (Schubert et al., "Hybrid-parallel sparse matrix-vector
 * multiplication with explicit communication overlap on current multicore-
 * based systems", 2011; Kreutzer et al. 2012, Sect. 4):
 *  - each rank holds a contiguous block of rows [row0, row0 + n); its rows are
 *    sorted by the length of their *local* part (columns inside the block)
 *    within windows of sigma rows, and its local columns are renumbered into
 *    the same permuted basis (P A P^T), so x and y share one local basis;
 *  - columns owned by other ranks go to a halo: the sorted unique remote
 *    global columns (hence grouped by owner rank), indexed 0..n_halo-1;
 *  - the rows are split into a local pJDS (columns < n) and a remote pJDS
 *    holding only the rows with remote entries, whose result is added into
 *    y through row_map;
 *  - halo plan: every rank tells each owner which of its x entries it needs
 *    (MPI_Alltoall of counts, MPI_Alltoallv of global indices); the owner
 *    keeps the list as local permuted positions and gathers them into a send
 *    buffer before each exchange.  Point-to-point messages go to neighbours
 *    only.
 *  - memory: O(local rows + local non-zeros) per rank, no global-size
 *    array (the halo comes from a radix sort of the rank's remote entries);
 *    on a device backend with mat_create_fill the pJDS entries are written
 *    chunk range by chunk range into its staging buffers, so the host
 *    never holds them whole (PJDS_FILL_HOST=1: fill host arrays first).
 * Creation is collective and agrees on failure: if one rank fails, every
 * rank returns an error instead of hanging in the next collective.
 */
#include <math.h>
#include <omp.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "pl_build.h"
#include "pl_error.h"
#include "spmv.h"
#include "spmv_impl.h"
#include "op_impl.h"

/* ---- creation ----------------------------------------------------------- */


static void build_tmp_free(build_tmp *t)
{
    void *ptrs[] = {t->len_loc, t->len_rem, t->perm,    t->iperm,  t->rem_blk, t->rem_h,  t->key,
                    t->key_tmp, t->pay,     t->pay_tmp, t->hist,   t->halo_g, t->rr_row,  t->rr_len, t->rr_perm,
                    t->bounds,  t->req_g,   t->rcount,  t->scount, t->rdispl,  t->sdispl, t->send_idx};
    for (size_t i = 0; i < sizeof ptrs / sizeof ptrs[0]; i++) free(ptrs[i]);
    for (int q = 0; t->seg && q < t->n_seg; q++) free(t->seg[q]);
    free(t->seg);
    free(t->seg_len);
    memset(t, 0, sizeof *t);
}

/* Phase timer for --verbose (rank 0): "pl_op_create: <phase> <s>". */
static void phase(const char *what, double *t)
{
    double now = pl_wtime();
    pl_debug("pl_op_create: %-22s %.3f s", what, now - *t);
    *t = now;
}

/* The options every operator checks (op_impl.h): transport, exchange,
 * chunk height against the backend. */
int pl_op_check_options(const pl_op_options *cfg, const pl_backend *be)
{
    PL_CHECK(cfg->transport == PL_TRANSPORT_MPI || cfg->transport == PL_TRANSPORT_NCCL ||
                 cfg->transport == PL_TRANSPORT_AUTO || cfg->transport == PL_TRANSPORT_IPC,
             PL_ERR_INPUT, "transport = %d is not mpi, nccl, auto or ipc", cfg->transport);
    const int d2d = cfg->transport == PL_TRANSPORT_NCCL || cfg->transport == PL_TRANSPORT_IPC;
    PL_CHECK(!d2d || be->halo, PL_ERR_INPUT,
             "transport = %s needs backend = cuda (the %s backend has no device transport): use transport = mpi",
             cfg->transport == PL_TRANSPORT_IPC ? "ipc" : "nccl", be->name ? be->name : "?");
    if (cfg->transport == PL_TRANSPORT_NCCL) {
        PL_CHECK(PJDS_HAVE_NCCL, PL_ERR_INPUT,
                 "transport = nccl, but this build has no NCCL (nccl.h/libnccl were not found at "
                 "configure time): use transport = mpi");
    }
    PL_CHECK(cfg->chunk_height >= 1 && cfg->chunk_height <= 4096, PL_ERR_INPUT,
             "chunk_height = %d must be in [1, 4096]", cfg->chunk_height);
    PL_CHECK(cfg->exchange >= PL_EXCHANGE_VECTOR && cfg->exchange <= PL_EXCHANGE_TASK, PL_ERR_INPUT,
             "exchange = %d is not vector, overlap or task", cfg->exchange);
    PL_CHECK(!cfg->reproducible || be->host_memory, PL_ERR_INPUT,
             "reproducible results need backend = cpu (the %s backend's reductions are not exact)",
             be->name ? be->name : "?");
    return PL_OK;
}

/* Step 1 (local): validate the block. */
static int check_block(const pl_csr *A, const pl_op_options *cfg, const pl_backend *be)
{
    PL_CALL(pl_op_check_options(cfg, be));
    PL_CHECK(A->nrows >= 0 && A->nrows <= INT32_MAX, PL_ERR_INPUT,
             "a rank's row block has %lld rows; at most 2^31-1 rows per rank are supported (use more ranks)",
             (long long)A->nrows);
    PL_CHECK(A->row0 >= 0 && A->row0 + A->nrows <= A->nrows_global, PL_ERR_ARG,
             "row block [%lld, %lld) outside the matrix of %lld rows", (long long)A->row0,
             (long long)(A->row0 + A->nrows), (long long)A->nrows_global);
    PL_CHECK(A->ncols_global == A->nrows_global || A->ncols_global == 0, PL_ERR_INPUT,
             "the matrix is %lld x %lld; the eigensolver needs a square matrix", (long long)A->nrows_global,
             (long long)A->ncols_global);
    PL_CHECK(A->nrows == 0 || A->row_ptr, PL_ERR_ARG, "row block has no row_ptr");
    if (A->nrows > 0) {
        PL_CHECK(A->row_ptr[0] == 0, PL_ERR_ARG, "row_ptr[0] = %lld, expected 0", (long long)A->row_ptr[0]);
        int64_t bad = INT64_MAX;
        const int64_t *rp = A->row_ptr;
#pragma omp parallel for schedule(static) reduction(min : bad)
        for (int64_t i = 0; i < A->nrows; i++)
            if (!(rp[i + 1] >= rp[i] && rp[i + 1] - rp[i] <= INT32_MAX) && i < bad) bad = i;
        PL_CHECK(bad == INT64_MAX, PL_ERR_ARG, "row_ptr of global row %lld is decreasing or too long",
                 (long long)(A->row0 + bad));
    }
    return PL_OK;
}

/* First row of part q of the n rows cut into nb parts of about equal
 * non-zeros. */
static int32_t nnz_part(const int64_t *rp, int32_t n, int q, int nb)
{
    if (q >= nb || n == 0) return q >= nb ? n : 0;
    int64_t target = pl_op_part(rp[n], q, nb);
    int32_t a = 0, b = n; /* first i with rp[i] >= target */
    while (a < b) {
        int32_t c = a + (b - a) / 2;
        if (rp[c] < target)
            a = c + 1;
        else
            b = c;
    }
    return a;
}

/* Step 3a (local): row lengths of the local/remote parts, column check,
 * norm estimate, one part of rows of about equal non-zeros per thread; with
 * several ranks each part also collects its remote columns in row order for
 * halo_build (sorted unique remote columns, halo index of each entry). */
static int scan_rows(pl_op *op, const pl_csr *A, build_tmp *t)
{
    const int32_t n = op->n;
    const int64_t row0 = op->row0, N = op->n_global;
    const int64_t *rp = A->row_ptr, *col = A->col;
    const double *val = A->val;
    const int nb = omp_get_max_threads(), collect = op->size > 1;
    PL_MALLOC(t->len_loc, n);
    PL_MALLOC(t->len_rem, n);
    t->seg = calloc((size_t)nb, sizeof *t->seg);
    t->seg_len = calloc((size_t)nb, sizeof *t->seg_len);
    PL_CHECK(t->seg && t->seg_len, PL_ERR_MEM, "out of host memory");
    t->n_seg = nb;
    int64_t bad_row = INT64_MAX, lo = INT64_MAX, hi = -1;
    double rowmax = 0.0;
    int nan_row = 0, no_mem = 0;
#pragma omp parallel for schedule(static, 1) reduction(min : bad_row, lo) reduction(max : rowmax, hi) \
    reduction(| : nan_row, no_mem)
    for (int q = 0; q < nb; q++) {
        const int32_t r0 = nnz_part(rp, n, q, nb), r1 = nnz_part(rp, n, q + 1, nb);
        uint64_t *buf = NULL;
        int64_t len = 0, cap = 0;
        int keep = collect;
        for (int32_t i = r0; i < r1; i++) {
            int32_t a = 0, b = 0;
            double s = 0.0;
            for (int64_t e = rp[i]; e < rp[i + 1]; e++) {
                int64_t g = col[e];
                s += fabs(val[e]);
                if ((uint64_t)(g - row0) < (uint64_t)n) {
                    a++;
                    continue;
                }
                b++;
                if ((uint64_t)g >= (uint64_t)N) {
                    if (i < bad_row) bad_row = i;
                    continue;
                }
                if (g < lo) lo = g;
                if (g > hi) hi = g;
                if (!keep) continue;
                if (len == cap) { /* grow: first guess 1/16 of the part's remaining entries */
                    int64_t nc = cap ? 2 * cap : (rp[r1] - e) / 16 + 1024;
                    uint64_t *x = realloc(buf, (size_t)nc * sizeof *buf);
                    if (!x) {
                        keep = 0;
                        no_mem = 1;
                        continue;
                    }
                    buf = x;
                    cap = nc;
                }
                buf[len++] = (uint64_t)g;
            }
            t->len_loc[i] = a;
            t->len_rem[i] = b;
            if (isnan(s)) nan_row = 1;
            if (s > rowmax) rowmax = s;
        }
        if (len < cap) { /* give the unused tail back */
            uint64_t *x = realloc(buf, (size_t)(len ? len : 1) * sizeof *buf);
            if (x) buf = x;
        }
        t->seg[q] = buf;
        t->seg_len[q] = len;
    }
    PL_CHECK(bad_row == INT64_MAX, PL_ERR_INPUT, "matrix row %lld has a column index outside [0, %lld)",
             (long long)(row0 + bad_row), (long long)N);
    PL_CHECK(!no_mem, PL_ERR_MEM, "out of host memory for the remote columns of the halo");
    op->norm_est = nan_row ? NAN : rowmax;
    op->nnz = n ? rp[n] : 0;
    if (!collect) {
        op->n_halo = 0;
        return PL_OK;
    }
    return pl_op_halo_build(op, t, lo, hi);
}

/* Fill the chunks of p (layout done) from the CSR block.  Local part
 * (remote = 0): permuted row s takes the local entries of row perm[s],
 * columns renumbered through iperm.  Remote part (remote = 1): row s adds
 * into local permuted row row_map[s] and takes the remote entries of row
 * perm[row_map[s]], columns = halo indices from rem_h.  Entries keep their
 * order; padding repeats the row's last column with value 0.  Chunks
 * [c0, c1) only, into pcol/pval, whose index 0 is entry chunk_start[c0]
 * (the whole matrix: 0, nchunks, p->col, p->val). */
static void fill_chunks(const pjds *p, int remote, const pl_op *op, const pl_csr *A, const build_tmp *t, int64_t c0,
                        int64_t c1, int32_t *pcol, double *pval, const double *src)
{
    const int32_t n = op->n, C = p->C;
    const int64_t row0 = op->row0, base = p->chunk_start[c0];
    const int64_t *rp = A->row_ptr, *col = A->col;
    const double *val = src; /* A->val, or a value term */
#pragma omp parallel for schedule(dynamic, 64)
    for (int64_t c = c0; c < c1; c++) {
        int64_t off = p->chunk_start[c] - base;
        int32_t w = p->chunk_width[c];
        for (int32_t r = 0; r < C; r++) {
            int64_t s = c * C + r;
            int32_t *pc = pcol ? pcol + off + r : NULL, j = 0, last = 0;
            double *pv = pval + off + r;
            if (s < p->nrows && p->row_len[s] > 0) {
                int32_t o = t->perm[remote ? p->row_map[s] : s];
                if (remote) {
                    int64_t ro = t->rem_blk[o >> PL_REM_BLK_LOG]; /* the row's first remote entry */
                    for (int32_t i = o & ~(PL_REM_BLK - 1); i < o; i++) ro += t->len_rem[i];
                    const int32_t *rh = t->rem_h + ro;
                    for (int64_t e = rp[o]; e < rp[o + 1]; e++) {
                        if ((uint64_t)(col[e] - row0) < (uint64_t)n) continue; /* local entry */
                        last = rh[j];
                        if (pcol) pc[(int64_t)j * C] = last;
                        pv[(int64_t)j * C] = val[e];
                        j++;
                    }
                } else if (op->unified) { /* every entry in its order: local, or n + halo index */
                    int64_t ro = t->rem_blk[o >> PL_REM_BLK_LOG];
                    for (int32_t i = o & ~(PL_REM_BLK - 1); i < o; i++) ro += t->len_rem[i];
                    const int32_t *rh = t->rem_h + ro;
                    int32_t h = 0;
                    for (int64_t e = rp[o]; e < rp[o + 1]; e++) {
                        uint64_t u = (uint64_t)(col[e] - row0);
                        last = u < (uint64_t)n ? t->iperm[u] : n + rh[h++];
                        if (pcol) pc[(int64_t)j * C] = last;
                        pv[(int64_t)j * C] = val[e];
                        j++;
                    }
                } else {
                    for (int64_t e = rp[o]; e < rp[o + 1]; e++) {
                        uint64_t u = (uint64_t)(col[e] - row0);
                        if (u >= (uint64_t)n) continue; /* remote entry */
                        last = t->iperm[u];
                        if (pcol) pc[(int64_t)j * C] = last;
                        pv[(int64_t)j * C] = val[e];
                        j++;
                    }
                }
            }
            for (; j < w; j++) {
                if (pcol) pc[(int64_t)j * C] = last;
                pv[(int64_t)j * C] = 0.0;
            }
        }
    }
}

/* Drop the (untouched) entry arrays of a layout: the backend's
 * mat_create_fill receives the entries chunk range by chunk range. */
static void layout_only(pjds *p)
{
    free(p->col);
    free(p->val);
    p->col = NULL;
    p->val = NULL;
}

typedef struct fill_arg {
    const pjds *p;
    int remote;
    const pl_op *op;
    const pl_csr *A;
    const build_tmp *t;
} fill_arg;

static int fill_range(void *arg, int64_t c0, int64_t c1, int32_t *col, double *val)
{
    const fill_arg *f = arg;
    fill_chunks(f->p, f->remote, f->op, f->A, f->t, c0, c1, col, val, f->A->val);
    return PL_OK;
}

/* The compressed words of chunks [c0, c1) (cmat_create_fill). */
static int cfill_range(void *arg, int64_t c0, int64_t c1, uint32_t *w, uint16_t *lo, uint8_t *hi)
{
    const fill_arg *f = arg;
    return pl_cpjds_fill_words(&f->op->cloc, f->A, c0, c1, w, lo, hi);
}

/* Step 3b (local): local pJDS straight from the CSR block: permuted row s
 * takes the local entries of row perm[s] in their order, columns renumbered
 * through iperm; padding repeats the row's last column. */
static int fill_local(pl_op *op, const pl_csr *A, const pl_op_options *cfg, build_tmp *t)
{
    const int32_t n = op->n;
    if (op->fmt == PL_FORMAT_COMPRESSED) return pl_op_format_build(op, A, cfg->chunk_height); /* loc stays empty */
    PL_CALL(pjds_layout(n, op->unified ? n + op->n_halo : n, t->len_loc, t->perm, cfg->chunk_height,
                        cfg->sort_window, &op->loc));
    if (op->stream_fill) { /* filled chunk range by chunk range in upload() */
        layout_only(&op->loc);
        return PL_OK;
    }
    fill_chunks(&op->loc, 0, op, A, t, 0, op->loc.nchunks, op->loc.col, op->loc.val, A->val);
    return PL_OK;
}

/* Step 3c (local): remote pJDS of the permuted rows with remote entries,
 * sorted by their remote length, columns = halo indices, row_map = the
 * permuted local row each adds into. */
static int fill_remote(pl_op *op, const pl_csr *A, const pl_op_options *cfg, build_tmp *t)
{
    const int32_t n = op->n;
    const int C = cfg->chunk_height;
    const int32_t *perm = t->perm;
    /* rows with remote entries, in permuted order (parallel compaction) */
    int nt = omp_get_max_threads();
    int64_t *cnt = calloc((size_t)nt + 1, sizeof *cnt);
    PL_CHECK(cnt, PL_ERR_MEM, "out of host memory");
    int32_t nr = 0;
    int rc = PL_OK;
#pragma omp parallel num_threads(nt)
    {
        int q = omp_get_thread_num(), T = omp_get_num_threads();
        int32_t a = (int32_t)((int64_t)n * q / T), b = (int32_t)((int64_t)n * (q + 1) / T);
        int64_t k = 0;
        for (int32_t i = a; i < b; i++) k += t->len_rem[perm[i]] > 0;
        cnt[q + 1] = k;
#pragma omp barrier
#pragma omp single
        {
            for (int u = 0; u < T; u++) cnt[u + 1] += cnt[u];
            nr = (int32_t)cnt[T];
            t->rr_row = malloc((size_t)(nr ? nr : 1) * sizeof *t->rr_row);
            t->rr_len = malloc((size_t)(nr ? nr : 1) * sizeof *t->rr_len);
            t->rr_perm = malloc((size_t)(nr ? nr : 1) * sizeof *t->rr_perm);
            if (!t->rr_row || !t->rr_len || !t->rr_perm) rc = PL_ERR_MEM;
        }
        if (rc == PL_OK) {
            k = cnt[q];
            for (int32_t i = a; i < b; i++) {
                int32_t l = t->len_rem[perm[i]];
                if (!l) continue;
                t->rr_row[k] = i;
                t->rr_len[k++] = l;
            }
        }
    }
    free(cnt);
    PL_CHECK(rc == PL_OK, PL_ERR_MEM, "out of host memory for %d remote rows", nr);
    pjds_sort_perm(nr, t->rr_len, cfg->sort_window, t->rr_perm);
    PL_CALL(pjds_layout(nr, op->n_halo, t->rr_len, t->rr_perm, C, cfg->sort_window, &op->rem));
    pjds *p = &op->rem;
    PL_MALLOC(p->row_map, nr ? nr : 1);
#pragma omp parallel for schedule(static)
    for (int32_t s = 0; s < nr; s++) p->row_map[s] = t->rr_row[t->rr_perm[s]];
    if (op->stream_fill) { /* filled in upload(), which still needs rem_h */
        layout_only(p);
        return PL_OK;
    }
    fill_chunks(p, 1, op, A, t, 0, p->nchunks, p->col, p->val, A->val);
    if (A->nterms > 0) return PL_OK; /* upload_terms still needs rem_h */
    free(t->rem_h); /* done with the remote entries' halo indices */
    free(t->rem_blk);
    t->rem_h = NULL;
    t->rem_blk = NULL;
    return PL_OK;
}

/* Step 3 (local): sort, split, build both pJDS and the halo column list. */
static int build_local(pl_op *op, const pl_csr *A, const pl_op_options *cfg, build_tmp *t)
{
    const int32_t n = op->n;
    double tp = pl_wtime();
    /* device backends with mat_create_fill: the host never holds the whole
     * entry arrays (tune.fill_host: whole host arrays, for comparisons) */
    const pl_backend *be = op->be;
    op->stream_fill = be->mat_create_fill && !be->host_memory && !be->tune.fill_host;
    PL_CALL(scan_rows(op, A, t));
    phase("scan rows, halo", &tp);
    if (op->unified) /* the one part holds whole rows (len_rem stays: fill_chunks finds the halo indices by it) */
        for (int32_t i = 0; i < n; i++) t->len_loc[i] += t->len_rem[i];

    /* permutation of the local rows */
    PL_MALLOC(t->perm, n ? n : 1);
    PL_MALLOC(t->iperm, n ? n : 1);
    PL_MALLOC(op->gidx, n ? n : 1);
    /* compressed: rows in their original order (sort window 1) */
    pjds_sort_perm(n, t->len_loc, op->fmt == PL_FORMAT_COMPRESSED ? 1 : cfg->sort_window, t->perm);
    const int64_t row0 = op->row0;
#pragma omp parallel for schedule(static)
    for (int32_t i = 0; i < n; i++) {
        t->iperm[t->perm[i]] = i;
        op->gidx[i] = row0 + t->perm[i];
    }
    phase("sort", &tp);
    PL_CALL(fill_local(op, A, cfg, t));
    phase("local pJDS", &tp);
    if (op->size > 1 && !op->unified) {
        PL_CALL(fill_remote(op, A, cfg, t));
    } else {
        PL_CALL(pjds_layout(0, 0, NULL, NULL, cfg->chunk_height, cfg->sort_window, &op->rem));
        PL_MALLOC(op->rem.row_map, 1);
    }
    phase("remote pJDS", &tp);
    return PL_OK;
}

/* Step 5 (local): backend copies of the matrices, index list and buffers.
 * With stream_fill the entries are written here, straight into the
 * backend's staging buffers. */
static int upload(pl_op *op, const pl_csr *A, build_tmp *t)
{
    pl_backend *be = op->be;
    op->host_shared = be->host_memory;
    const int cmp = op->fmt == PL_FORMAT_COMPRESSED;
    if (cmp && !op->cloc.ent && op->cloc.nent > 0) { /* tables and layout only (op_format.c): stream the words */
        fill_arg fc = {NULL, 0, op, A, t};
        PL_CHECK(be->cmat_create_fill, PL_ERR_ARG, "the compressed matrix has no words and the backend cannot fill");
        PL_CALL(be->cmat_create_fill(be, &op->cloc, cfill_range, &fc, &op->d_loc));
    } else if (cmp) {
        PL_CALL(be->cmat_create(be, &op->cloc, &op->d_loc));
    }
    if (op->stream_fill) {
        fill_arg fl = {&op->loc, 0, op, A, t}, fr = {&op->rem, 1, op, A, t};
        if (!cmp) PL_CALL(be->mat_create_fill(be, &op->loc, fill_range, &fl, &op->d_loc));
        if (op->rem.nrows > 0) PL_CALL(be->mat_create_fill(be, &op->rem, fill_range, &fr, &op->d_rem));
    } else {
        if (!cmp) PL_CALL(be->mat_create(be, &op->loc, &op->d_loc));
        if (op->rem.nrows > 0) PL_CALL(be->mat_create(be, &op->rem, &op->d_rem));
    }
    op->dev_bytes = !cmp ? pjds_bytes(&op->loc)
                  : be->cmat_bytes ? be->cmat_bytes(be, op->d_loc) : pl_cpjds_bytes(&op->cloc);
    if (op->rem.nrows > 0) op->dev_bytes += pjds_bytes(&op->rem);
    if (!op->host_shared) {
        /* a device backend holds its own copy: drop the host entries (the
         * bulk of the host memory; sizes and row_len stay for the info) */
        free(op->loc.col);
        free(op->loc.val);
        free(op->cloc.ent); /* (layout and tables stay for the info) */
        op->cloc.ent = NULL;
        free(op->rem.col);
        free(op->rem.val);
        op->loc.col = op->rem.col = NULL;
        op->loc.val = op->rem.val = NULL;
    }
    PL_CALL(pl_op_halo_alloc(op, t->send_idx));
    if (op->unified) { /* [x; halo], the vector the one part reads (op_apply.c) */
        PL_CALL(be->vec_alloc(be, (size_t)op->n + (size_t)op->n_halo + 1, &op->d_xext));
        op->dev_bytes += ((size_t)op->n + (size_t)op->n_halo) * sizeof(double);
    }
    return PL_OK;
}

int pl_op_halo_alloc(pl_op *op, const int32_t *send_idx)
{
    pl_backend *be = op->be;
    op->host_shared = be->host_memory;
    if (op->n_snb + op->n_rnb == 0) return PL_OK;
    PL_CALL(be->idx_create(be, send_idx, (size_t)op->n_send, &op->d_send_idx));
    PL_CALL(be->vec_alloc(be, (size_t)op->n_send, &op->d_sendbuf));
    PL_CALL(be->vec_alloc(be, (size_t)op->n_halo, &op->d_halo));
    op->dev_bytes += (size_t)op->n_send * (sizeof(int32_t) + sizeof(double)) + (size_t)op->n_halo * sizeof(double);
    if (op->host_shared) {
        op->h_sendbuf = op->d_sendbuf;
        op->h_halo = op->d_halo;
    } else if (be->host_alloc && be->host_free) {
        PL_CALL(be->host_alloc(be, (size_t)op->n_send, &op->h_sendbuf));
        op->host_pinned = 1;
        PL_CALL(be->host_alloc(be, (size_t)op->n_halo, &op->h_halo));
    } else {
        PL_MALLOC(op->h_sendbuf, (size_t)op->n_send);
        PL_MALLOC(op->h_halo, (size_t)op->n_halo);
    }
    return PL_OK;
}

/* Step 5b (local, sweeps): the value terms of A (A->nterms > 0) in the
 * layout of the local and of the remote values (fill_chunks with the term
 * in place of the values, so padding is 0 and the order is the matrix's),
 * in backend memory, and each term's absolute row sums for the norm
 * estimate of pl_op_refill.  cpu: filled in place (vec_alloc is host
 * memory); device backends: chunk range by chunk range through one host
 * buffer of PL_TERM_STAGE entries (or the widest chunk, if larger), so the
 * host never holds a whole term in the pJDS layout. */
#define PL_TERM_STAGE ((int64_t)1 << 22) /* 32 MiB of doubles */
static int upload_terms(pl_op *op, const pl_csr *A, build_tmp *t)
{
    pl_backend *be = op->be;
    const int K = A->nterms;
    const int64_t nnz = pl_csr_nnz(A), n = op->n;
    const pjds *parts[2] = {&op->loc, &op->rem};
    PL_CHECK(A->terms || nnz == 0, PL_ERR_ARG, "the row block has nterms = %d but no terms array", K);
    double bytes = 8.0 * K * (double)(op->loc.nent + (op->rem.nrows > 0 ? op->rem.nent : 0));
    PL_CALL(pl_backend_mem_check(be, bytes));
    op->nterms = K;
    op->d_term_loc = calloc((size_t)K, sizeof *op->d_term_loc);
    op->d_term_rem = calloc((size_t)K, sizeof *op->d_term_rem);
    PL_CHECK(op->d_term_loc && op->d_term_rem, PL_ERR_MEM, "out of host memory");
    PL_MALLOC(op->term_rowsum, (size_t)K * (size_t)(n ? n : 1));
    /* host buffer: PL_TERM_STAGE entries (tune.fill_stage_entries: tests),
     * at least the widest chunk, at most the larger part */
    int64_t stage = 0;
    double *buf = NULL;
    if (!op->host_shared) {
        int64_t widest = 0, most = op->loc.nent > op->rem.nent ? op->loc.nent : op->rem.nent;
        stage = be->tune.fill_stage_entries > 0 ? be->tune.fill_stage_entries : PL_TERM_STAGE;
        for (int q = 0; q < 2; q++)
            for (int32_t c = 0; c < parts[q]->nchunks; c++) {
                int64_t w = parts[q]->chunk_start[c + 1] - parts[q]->chunk_start[c];
                widest = w > widest ? w : widest;
            }
        stage = widest > stage ? widest : stage;
        stage = most < stage ? most : stage;
        /* page-locked where the backend offers it: the copies then run at
         * the link's speed instead of through a driver bounce buffer */
        if (be->host_alloc && be->host_free) PL_CALL(be->host_alloc(be, (size_t)(stage ? stage : 1), &buf));
        else PL_MALLOC(buf, stage ? stage : 1);
    }
    int rc = PL_OK;
    for (int k = 0; k < K && rc == PL_OK; k++) {
        const double *src = A->terms + (size_t)k * (size_t)nnz;
        for (int q = 0; q < 2 && rc == PL_OK; q++) {
            const pjds *p = parts[q];
            if (q == 1 && p->nrows == 0) continue;
            double **d = q ? &op->d_term_rem[k] : &op->d_term_loc[k];
            rc = be->vec_alloc(be, (size_t)(p->nent ? p->nent : 1), d);
            if (rc != PL_OK) break;
            if (op->host_shared) {
                fill_chunks(p, q, op, A, t, 0, p->nchunks, NULL, *d, src);
                continue;
            }
            for (int64_t c = 0, c1; c < p->nchunks && rc == PL_OK; c = c1) {
                for (c1 = c + 1; c1 < p->nchunks && p->chunk_start[c1 + 1] - p->chunk_start[c] <= stage;) c1++;
                int64_t off = p->chunk_start[c];
                fill_chunks(p, q, op, A, t, c, c1, NULL, buf, src);
                rc = be->upload(be, *d + off, buf, (size_t)(p->chunk_start[c1] - off));
            }
        }
        double *rs = op->term_rowsum + (size_t)k * (size_t)n;
        const int64_t *rp = A->row_ptr;
#pragma omp parallel for schedule(static)
        for (int64_t i = 0; i < n; i++) {
            double a = 0.0;
            for (int64_t e = rp[i]; e < rp[i + 1]; e++) a += fabs(src[e]);
            rs[i] = a;
        }
    }
    if (buf && be->host_alloc && be->host_free) be->host_free(be, buf);
    else free(buf);
    PL_CALL(rc);
    op->dev_bytes += (size_t)bytes;
    pl_debug("pl_op_create: %d value terms, %.1f MiB in backend memory, host staging %.1f MiB", K,
             bytes / 1048576.0, 8.0 * (double)stage / 1048576.0);
    if (!op->stream_fill) { /* fill_remote kept them for us */
        free(t->rem_h);
        free(t->rem_blk);
        t->rem_h = NULL;
        t->rem_blk = NULL;
    }
    return PL_OK;
}

/* Step 7 (neighbours, device halo transport): one exchange of a zeroed send buffer
 * through the transport in use. */
static int warm_up(pl_op *op)
{
    pl_backend *be = op->be;
    if (op->n_send) PL_CALL(be->set(be, (size_t)op->n_send, 0.0, op->d_sendbuf));
    if (op->ipc || op->nccl) {
        PL_CALL(pl_op_d2d_start(op, 0));
        PL_CALL(pl_op_d2d_finish(op, 0));
    }
    PL_CALL(be->sync(be));
    return PL_OK;
}

/* Step 6 (collective; several ranks, a backend with a device halo
 * transport): the comm stream, events and, for transport = nccl, the NCCL
 * communicator, or the CUDA IPC mappings.  auto: NCCL where built (device
 * to device over NVLink/PCIe; staging through host memory with a
 * non-CUDA-aware MPI is 10-20x slower), unless ranks share a GPU
 * (PJDS_SHARE_GPUS=1): NCCL refuses two ranks on one device
 * (ncclCommInitRank: invalid usage), so then ipc where every halo neighbour
 * is on this node (CUDA IPC works on one device), else mpi.  The same
 * answer on every rank (allgathered). */
static int setup_device_transport(pl_op *op, int tr, double *tp)
{
    MPI_Comm comm = op->comm;
    const pl_halo_ops *h = op->be->halo;
    int ipc_ok = -1;
    if (tr == PL_TRANSPORT_NCCL || (tr == PL_TRANSPORT_AUTO && PJDS_HAVE_NCCL)) {
        int a = -1, b = -1;
        char gpu[160] = "";
        PL_CALL(pl_op_agree(comm, h->shared_device(op->be, comm, &a, &b, gpu, sizeof gpu), "comparing the ranks' GPUs"));
        PL_CHECK(a < 0 || tr != PL_TRANSPORT_NCCL, PL_ERR_INPUT,
                 "transport = nccl: ranks %d and %d share GPU %s; NCCL needs one GPU per rank (use transport = auto, "
                 "ipc or mpi)",
                 a, b, gpu);
        if (a >= 0) {
            PL_CALL(h->ipc_possible(comm, op->n_rnb, op->rnb, op->n_snb, op->snb, &ipc_ok));
            tr = ipc_ok ? PL_TRANSPORT_IPC : PL_TRANSPORT_MPI;
            pl_info("[spmv] transport = auto: ranks %d and %d share GPU %s and NCCL needs one GPU per rank: using %s",
                    a, b, gpu, ipc_ok ? "ipc" : "mpi (not every halo neighbour is on the same node)");
        } else
            tr = PL_TRANSPORT_NCCL;
    }
    op->nccl = tr == PL_TRANSPORT_NCCL;
    if (tr == PL_TRANSPORT_IPC) {
        /* copy engines into the peers' halo buffers: one node only */
        if (ipc_ok < 0) PL_CALL(h->ipc_possible(comm, op->n_rnb, op->rnb, op->n_snb, op->snb, &ipc_ok));
        PL_CHECK(ipc_ok, PL_ERR_INPUT,
                 "transport = ipc needs every halo neighbour on the same node (these ranks span several): use "
                 "transport = nccl or mpi");
        op->ipc = 1;
    }
    PL_CALL(pl_op_agree(comm, h->create(op->be, op->nccl, comm, &op->hx), "setting up the GPU halo transport"));
    if (op->ipc)
        PL_CALL(pl_op_agree(comm,
                            h->ipc_setup(op->hx, comm, op->d_halo, op->n_rnb, op->rnb, op->rcnt, op->roff, op->n_snb,
                                         op->snb, op->scnt, op->soff),
                            "mapping the peers' halo buffers (CUDA IPC)"));
    phase(op->nccl ? "NCCL communicator" : op->ipc ? "CUDA IPC mappings" : "GPU transfer streams", tp);
    return PL_OK;
}

static int op_build(pl_op *op, const pl_csr *A, const pl_op_options *cfg, build_tmp *t)
{
    MPI_Comm comm = op->comm;
    /* 1: validate, agree */
    PL_CALL(pl_op_agree(comm, check_block(A, cfg, op->be), "checking the row block"));
    op->n = (int32_t)A->nrows;
    op->row0 = A->row0;
    op->n_global = A->nrows_global;

    /* 2: everybody's block -> bounds */
    int64_t mine[3] = {A->row0, A->nrows, A->nrows_global}, *all = NULL;
    PL_MALLOC(all, (size_t)3 * op->size);
    int e = MPI_Allgather(mine, 3, MPI_INT64_T, all, 3, MPI_INT64_T, comm);
    if (e != MPI_SUCCESS) {
        free(all);
        return PL_ERROR(PL_ERR_MPI, "MPI_Allgather of the row blocks failed");
    }
    t->bounds = malloc((size_t)(op->size + 1) * sizeof(int64_t));
    if (!t->bounds) {
        free(all);
        return PL_ERROR(PL_ERR_MEM, "out of host memory");
    }
    int ok = 1;
    for (int p = 0; p < op->size; p++) {
        t->bounds[p] = all[3 * p];
        if (all[3 * p + 2] != op->n_global) ok = 0;
        if (all[3 * p] != (p ? all[3 * (p - 1)] + all[3 * (p - 1) + 1] : 0)) ok = 0;
    }
    t->bounds[op->size] = all[3 * (op->size - 1)] + all[3 * (op->size - 1) + 1];
    if (t->bounds[op->size] != op->n_global) ok = 0;
    free(all);
    /* same data on every rank, so every rank takes this branch */
    PL_CHECK(ok, PL_ERR_ARG,
             "the row blocks of the ranks must be contiguous, in rank order, and cover all %lld rows",
             (long long)op->n_global);

    /* 2b: the local format (collective) */
    PL_CALL(pl_op_format_decide(op, A, cfg));
    /* 3: local build, agree */
    PL_CALL(pl_op_agree(comm, build_local(op, A, cfg, t), "building the pJDS blocks"));
    double tp = pl_wtime();
    /* 4: halo plan (collective; its failures are MPI failures everywhere) */
    if (op->size > 1) PL_CALL(pl_op_agree(comm, pl_op_plan_halo(op, t), "planning the halo exchange"));
    phase("halo plan", &tp);
    /* 5: backend */
    PL_CALL(pl_op_agree(comm, upload(op, A, t), "uploading the operator"));
    if (A->nterms > 0) PL_CALL(pl_op_agree(comm, upload_terms(op, A, t), "uploading the value terms"));
    phase("upload", &tp);

    double gmax = 0.0;
    PL_MPI(MPI_Allreduce(&op->norm_est, &gmax, 1, MPI_DOUBLE, MPI_MAX, comm), "MPI_Allreduce of the norm estimate");
    op->norm_est = gmax;

    PL_CALL(pl_op_halo_finish(op, cfg, &tp));
    return PL_OK;
}

int pl_op_halo_finish(pl_op *op, const pl_op_options *cfg, double *tp)
{
    MPI_Comm comm = op->comm;
    /* 6: device halo transport (several ranks, a backend with one) */
    if (op->size > 1 && op->be->halo) PL_CALL(setup_device_transport(op, cfg->transport, tp));
    op->exchange = cfg->exchange;
    if (op->exchange == PL_EXCHANGE_TASK && op->size > 1) {
        int provided = MPI_THREAD_SINGLE;
        PL_MPI(MPI_Query_thread(&provided), "MPI_Query_thread");
        if (provided < MPI_THREAD_SERIALIZED) {
            pl_warn("[spmv] exchange = task needs MPI_THREAD_SERIALIZED or better (MPI provides level %d); "
                    "using overlap",
                    provided);
            op->exchange = PL_EXCHANGE_OVERLAP;
        }
    }
    /* 7: one exchange now, so that lazy set-up (NCCL connects its peers at
     * the first send/receive, CUDA maps peer memory at the first copy)
     * counts in the creation, not in the first product */
    if (op->hx && op->n_rnb + op->n_snb > 0) {
        PL_CALL(pl_op_agree(comm, warm_up(op), "the first halo exchange"));
        phase("first halo exchange", tp);
    }
    return PL_OK;
}

int pl_op_create(const pl_csr *rows, const pl_op_options *cfg_in, pl_backend *be, MPI_Comm comm, pl_op **out)
{
    PL_CHECK(rows && cfg_in && be && out, PL_ERR_ARG, "pl_op_create: NULL argument");
    /* [spmv] sort_window = auto: the backend's window (sort_window.c); the
     * build and pl_op_info see only the resolved value */
    pl_op_options cfg_r = *cfg_in;
    cfg_r.sort_window = pl_sort_window_resolve(cfg_in->sort_window, be);
    const pl_op_options *cfg = &cfg_r;
    *out = NULL;
    pl_op *op = NULL;
    PL_CALL(pl_op_new(comm, be, &op));
    op->sort_window = cfg->sort_window;
    op->repro = cfg->reproducible != 0;
    op->unified = op->repro && op->size > 1; /* every row in one pass, in its CSR order (fill_chunks) */
    int rc = PL_OK;
    build_tmp t = {0};
    rc = op_build(op, rows, cfg, &t);
    build_tmp_free(&t);
    if (rc) {
        pl_error_trace(rc, __FILE__, __LINE__, __func__, "op_build(op, rows, cfg, &t)");
        goto fail;
    }
    *out = op;
    return PL_OK;
fail:
    pl_op_destroy(&op);
    return rc;
}
