/* op.c — the distributed operator y = A x on pJDS, and the global vector
 * reductions.
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
 * Exchange modes (cfg->exchange):
 *  - vector:  gather, exchange, wait, then local and remote SpMV;
 *  - overlap: post non-blocking MPI, local SpMV, wait, remote SpMV ("naive
 *    overlap": on the CPU, MPI progresses only inside MPI calls, so little is
 *    hidden; a GPU runs the local kernel asynchronously and hides more);
 *  - task:    a dedicated communication thread (pthread) posts and waits for
 *    the messages while the calling thread runs the local SpMV (on the
 *    cuda backend the comm stream plays that part: apply_gpu).  Needs MPI
 *    initialised with at least MPI_THREAD_SERIALIZED (the two threads call
 *    MPI one after the other, never at once); otherwise the operator falls
 *    back to overlap with a warning.  On the CPU the OpenMP team and the
 *    communication thread share the cores.
 * With one rank (or no neighbours) apply makes no MPI call.
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

#define PL_HALO_TAG 7401

struct pl_op {
    MPI_Comm user_comm; /* as given (returned by pl_op_comm) */
    MPI_Comm comm;      /* private duplicate for the halo messages */
    int rank, size;
    pl_backend *be;
    int exchange;       /* mode in use */
    int detailed;       /* sync between phases for the timing split */
    int64_t n_global, row0;
    int32_t n, n_halo;
    int64_t nnz;
    int64_t *gidx;      /* permuted local row -> global original row */
    pjds loc, rem;      /* host matrices (the backend may reference them) */
    void *d_loc, *d_rem;
    double norm_est;
    size_t dev_bytes;
    /* halo plan */
    int n_rnb, n_snb;              /* receive / send neighbours */
    int *rnb, *rcnt, *roff;        /* rank, count, offset into the halo */
    int *snb, *scnt, *soff;        /* rank, count, offset into the send list */
    int32_t n_send;
    int32_t *d_send_idx;           /* backend memory */
    double *d_sendbuf, *d_halo;    /* backend memory */
    double *h_sendbuf, *h_halo;    /* host staging (== d_ on the cpu backend) */
    int host_shared;               /* cpu: staging buffers are the backend's */
    int host_pinned;               /* staging from be->host_alloc */
    MPI_Request *req;              /* n_rnb + n_snb */
    /* cuda backend, several ranks: asynchronous staging / NCCL */
    pl_gpu_xfer *gx;
    int nccl;                      /* transport = nccl in use */
    int ipc;                       /* transport = ipc in use */
    int stream_fill;               /* entries go to be->mat_create_fill */
    /* counters */
    int64_t n_apply;
    double t_total, t_local, t_remote, t_comm, bytes_sent;
    double *t_apply;               /* wall time of each apply since the reset */
    int64_t n_samples, cap_apply;  /* (samples stop if memory runs out)   */
};

/* ---- helpers ------------------------------------------------------------ */

/* Collective agreement on failure: every rank learns the largest error code;
 * a rank that did not fail itself reports "failed on another rank". */
static int agree(MPI_Comm comm, int rc, const char *phase)
{
    int g = 0;
    int e = MPI_Allreduce(&rc, &g, 1, MPI_INT, MPI_MAX, comm);
    if (rc != PL_OK) return rc;
    PL_CHECK(e == MPI_SUCCESS, PL_ERR_MPI, "MPI_Allreduce (error agreement) failed");
    PL_CHECK(g == PL_OK, g, "%s failed on another rank (%s)", phase, pl_error_name(g));
    return PL_OK;
}

/* ---- creation ----------------------------------------------------------- */

/* Temporaries of the local build. */
typedef struct build_tmp {
    int32_t *len_loc, *len_rem, *perm, *iperm;
    int64_t *rem_blk;  /* first remote entry of rows 0, B, 2B.. (halo_build) */
    int32_t *rem_h;    /* halo index of each remote entry, in row order   */
    uint64_t *key, *key_tmp, *pay, *pay_tmp; /* halo sort (halo_build)    */
    int64_t *hist;     /* radix sort counters                             */
    uint64_t **seg;    /* remote columns of each part (scan_rows)         */
    int64_t *seg_len;
    int n_seg;
    int64_t *halo_g;   /* sorted unique remote columns                    */
    int32_t *rr_row, *rr_len, *rr_perm;
    int64_t *bounds, *req_g;
    int *rcount, *scount, *rdispl, *sdispl;
    int32_t *send_idx;
} build_tmp;

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

/* Step 1 (local): validate the block. */
static int check_block(const pl_csr *A, const pl_spmv_cfg *cfg, const pl_backend *be)
{
    PL_CHECK(cfg->transport == PL_TRANSPORT_MPI || cfg->transport == PL_TRANSPORT_NCCL ||
                 cfg->transport == PL_TRANSPORT_AUTO || cfg->transport == PL_TRANSPORT_IPC,
             PL_ERR_INPUT, "[spmv] transport = %d is not mpi, nccl, auto or ipc", cfg->transport);
    const int d2d = cfg->transport == PL_TRANSPORT_NCCL || cfg->transport == PL_TRANSPORT_IPC;
    PL_CHECK(!d2d || (be->name && !strcmp(be->name, "cuda")), PL_ERR_INPUT,
             "[spmv] transport = %s needs backend = cuda (the backend is %s): use transport = mpi",
             cfg->transport == PL_TRANSPORT_IPC ? "ipc" : "nccl", be->name ? be->name : "?");
    if (cfg->transport == PL_TRANSPORT_NCCL) {
        PL_CHECK(PJDS_HAVE_NCCL, PL_ERR_INPUT,
                 "[spmv] transport = nccl, but this build has no NCCL (nccl.h/libnccl were not found at "
                 "configure time): use transport = mpi");
    }
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
    PL_CHECK(cfg->chunk_height >= 1 && cfg->chunk_height <= 4096, PL_ERR_INPUT,
             "[spmv] chunk_height = %d must be in [1, 4096]", cfg->chunk_height);
    PL_CHECK(cfg->exchange >= PL_EXCHANGE_VECTOR && cfg->exchange <= PL_EXCHANGE_TASK, PL_ERR_INPUT,
             "[spmv] exchange = %d is not vector, overlap or task", cfg->exchange);
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

#define PL_REM_BLK_LOG 5 /* rem_blk: one remote offset per PL_REM_BLK rows */
#define PL_REM_BLK (1 << PL_REM_BLK_LOG)

/* Bits needed to write x (0 for x = 0). */
static int bit_width(uint64_t x) { return x ? 64 - __builtin_clzll(x) : 0; }

/* Start of part q of [0, m) cut into nb parts: floor(m q / nb) without
 * overflow. */
static int64_t part(int64_t m, int q, int nb) { return m / nb * q + m % nb * q / nb; }

/* Exclusive prefix sum of cnt[0, nb) in place; returns the total. */
static int64_t excl_scan(int64_t *cnt, int nb)
{
    int64_t sum = 0;
    for (int q = 0; q < nb; q++) {
        int64_t c = cnt[q];
        cnt[q] = sum;
        sum += c;
    }
    return sum;
}

/* Stable parallel LSD radix sort of key[0, m) (with pay[] moved alongside
 * when pay is not NULL) by the key bits [shift, shift + bits); tmp and ptmp
 * are scratch of m entries (ptmp only with pay).  Digits of at most
 * PL_RADIX_BITS bits; a pass whose digit is the same in every key is
 * skipped.  The keys are cut into nb fixed parts (one per thread); cnt holds
 * nb << PL_RADIX_BITS counters.  Returns 1 when the sorted data ended in
 * tmp/ptmp, else 0. */
#define PL_RADIX_BITS 8
static int radix_sort(uint64_t *key, uint64_t *pay, uint64_t *tmp, uint64_t *ptmp, int64_t m, int shift, int bits,
                      int nb, int64_t *cnt)
{
    const int passes = (bits + PL_RADIX_BITS - 1) / PL_RADIX_BITS;
    int swapped = 0;
    for (int ps = 0; ps < passes; ps++) {
        const int d0 = shift + bits * ps / passes, db = shift + bits * (ps + 1) / passes - d0;
        const int64_t B = (int64_t)1 << db;
        const uint64_t mask = (uint64_t)B - 1;
#pragma omp parallel for schedule(static, 1)
        for (int q = 0; q < nb; q++) {
            int64_t *h = cnt + q * B;
            memset(h, 0, (size_t)B * sizeof *h);
            for (int64_t i = part(m, q, nb); i < part(m, q + 1, nb); i++) h[(key[i] >> d0) & mask]++;
        }
        /* exclusive offsets in (digit, part) order */
        int64_t s = 0, skip = 0;
        for (int64_t d = 0; d < B; d++) {
            int64_t s0 = s;
            for (int q = 0; q < nb; q++) {
                int64_t c = cnt[q * B + d];
                cnt[q * B + d] = s;
                s += c;
            }
            if (s - s0 == m) skip = 1; /* one digit value in all keys */
        }
        if (skip) continue;
#pragma omp parallel for schedule(static, 1)
        for (int q = 0; q < nb; q++) {
            int64_t *h = cnt + q * B, a = part(m, q, nb), b = part(m, q + 1, nb);
            if (pay) {
                for (int64_t i = a; i < b; i++) {
                    int64_t o = h[(key[i] >> d0) & mask]++;
                    tmp[o] = key[i];
                    ptmp[o] = pay[i];
                }
            } else {
                for (int64_t i = a; i < b; i++) tmp[h[(key[i] >> d0) & mask]++] = key[i];
            }
        }
        uint64_t *x = key;
        key = tmp;
        tmp = x;
        x = pay;
        pay = ptmp;
        ptmp = x;
        swapped ^= 1;
    }
    return swapped;
}

/* The halo from the remote entries that scan_rows collected (valid columns
 * outside the block, all in [lo, hi], in row order in the segments
 * seg[0..n_seg)): rem_blk[b] = first remote entry of row b * PL_REM_BLK;
 * a radix sort of (column - lo, entry ordinal) pairs, packed into one 64-bit
 * key when the bits fit (else key and ordinal arrays); one walk over the
 * sorted pairs gives halo_g (ascending unique columns) and rem_h[k] (halo
 * index of remote entry k).  No array of the global size: memory
 * O(remote entries + rows).
 * Peak extra memory: 16 bytes per remote entry (the segments joined into the
 * key array, then keys + sort scratch, then keys + rem_h in the scratch; 32
 * with separate ordinals, only when bits(hi - lo) + bits(entries - 1) > 64),
 * 8 / PL_REM_BLK bytes per row and threads x 2^PL_RADIX_BITS counters.
 * rem_h (4 bytes per remote entry) is kept until the remote pJDS is filled.
 * (A segment that grows by a copying realloc holds 24 bytes per entry for a
 * moment, before the keys exist; its unused capacity is never touched.) */
static int halo_build(pl_op *op, build_tmp *t, int64_t lo, int64_t hi)
{
    const int32_t n = op->n;
    const int nb = t->n_seg;
    PL_MALLOC(t->hist, (size_t)nb << PL_RADIX_BITS);
    int64_t *cnt = t->hist;
    /* block offsets: part sums, then the prefix inside each part */
    PL_MALLOC(t->rem_blk, ((size_t)n >> PL_REM_BLK_LOG) + 1);
#pragma omp parallel for schedule(static, 1)
    for (int q = 0; q < nb; q++) {
        int64_t s = 0;
        for (int32_t i = (int32_t)part(n, q, nb); i < (int32_t)part(n, q + 1, nb); i++) s += t->len_rem[i];
        cnt[q] = s;
    }
    int64_t m = excl_scan(cnt, nb);
#pragma omp parallel for schedule(static, 1)
    for (int q = 0; q < nb; q++) {
        int64_t s = cnt[q];
        for (int32_t i = (int32_t)part(n, q, nb); i < (int32_t)part(n, q + 1, nb); i++) {
            if (!(i & (PL_REM_BLK - 1))) t->rem_blk[i >> PL_REM_BLK_LOG] = s;
            s += t->len_rem[i];
        }
    }
    if (!(n & (PL_REM_BLK - 1))) t->rem_blk[n >> PL_REM_BLK_LOG] = m;
    int64_t ms = 0;
    for (int q = 0; q < nb; q++) {
        cnt[q] = ms;
        ms += t->seg_len[q];
    }
    PL_CHECK(ms == m, PL_ERR_INTERNAL, "%lld remote entries collected, %lld counted", (long long)ms, (long long)m);
    if (m == 0) {
        op->n_halo = 0;
        PL_MALLOC(t->halo_g, 1);
        PL_MALLOC(t->rem_h, 1);
        return PL_OK;
    }
    /* keys in row order: the segments joined into seg[0], converted in place */
    uint64_t *key = realloc(t->seg[0], (size_t)m * sizeof *key);
    PL_CHECK(key, PL_ERR_MEM, "out of host memory for %lld remote entries", (long long)m);
    t->key = key;
    t->seg[0] = NULL;
#pragma omp parallel for schedule(static, 1)
    for (int q = 1; q < nb; q++) {
        if (t->seg_len[q]) memcpy(key + cnt[q], t->seg[q], (size_t)t->seg_len[q] * sizeof *key);
        free(t->seg[q]);
        t->seg[q] = NULL;
    }
    const int cb = bit_width((uint64_t)(hi - lo)), kb = bit_width((uint64_t)(m - 1)); /* kb <= 63 */
    const int packed = cb + kb <= 64, shift = packed ? kb : 0;
    if (!packed) PL_MALLOC(t->pay, m);
    uint64_t *pay = t->pay;
#pragma omp parallel for schedule(static, 1)
    for (int q = 0; q < nb; q++) {
        for (int64_t k = part(m, q, nb); k < part(m, q + 1, nb); k++) {
            uint64_t c = key[k] - (uint64_t)lo;
            if (packed) {
                key[k] = c << shift | (uint64_t)k;
            } else {
                key[k] = c;
                pay[k] = (uint64_t)k;
            }
        }
    }
    /* sort; the scratch then holds rem_h */
    PL_MALLOC(t->key_tmp, m);
    if (!packed) PL_MALLOC(t->pay_tmp, m);
    if (radix_sort(t->key, t->pay, t->key_tmp, t->pay_tmp, m, shift, cb, nb, cnt)) {
        uint64_t *x = t->key;
        t->key = t->key_tmp;
        t->key_tmp = x;
        x = t->pay;
        t->pay = t->pay_tmp;
        t->pay_tmp = x;
    }
    free(t->pay_tmp);
    t->pay_tmp = NULL;
    t->rem_h = (int32_t *)t->key_tmp;
    t->key_tmp = NULL;
    key = t->key;
    pay = t->pay;
    /* walk: new columns per part, then halo_g and rem_h */
#pragma omp parallel for schedule(static, 1)
    for (int q = 0; q < nb; q++) {
        int64_t s = 0;
        for (int64_t i = part(m, q, nb); i < part(m, q + 1, nb); i++)
            s += i == 0 || (key[i] >> shift) != (key[i - 1] >> shift);
        cnt[q] = s;
    }
    int64_t nh = excl_scan(cnt, nb);
    PL_CHECK(nh <= INT32_MAX, PL_ERR_OVERFLOW, "halo of %lld entries exceeds int32", (long long)nh);
    op->n_halo = (int32_t)nh;
    PL_MALLOC(t->halo_g, nh);
    const uint64_t kmask = ((uint64_t)1 << shift) - 1; /* shift <= 63 */
    int32_t *rem_h = t->rem_h;
#pragma omp parallel for schedule(static, 1)
    for (int q = 0; q < nb; q++) {
        int64_t h = cnt[q] - 1;
        for (int64_t i = part(m, q, nb); i < part(m, q + 1, nb); i++) {
            uint64_t c = key[i] >> shift;
            if (i == 0 || c != key[i - 1] >> shift) t->halo_g[++h] = lo + (int64_t)c;
            rem_h[packed ? (int64_t)(key[i] & kmask) : (int64_t)pay[i]] = (int32_t)h;
        }
    }
    free(t->key);
    free(t->pay);
    free(t->hist);
    t->key = t->pay = NULL;
    t->hist = NULL;
    int32_t *x = realloc(rem_h, (size_t)m * sizeof *rem_h); /* give the unused half back */
    if (x) t->rem_h = x;
    return PL_OK;
}

/* First row of part q of the n rows cut into nb parts of about equal
 * non-zeros. */
static int32_t nnz_part(const int64_t *rp, int32_t n, int q, int nb)
{
    if (q >= nb || n == 0) return q >= nb ? n : 0;
    int64_t target = part(rp[n], q, nb);
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
    return halo_build(op, t, lo, hi);
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
                        int64_t c1, int32_t *pcol, double *pval)
{
    const int32_t n = op->n, C = p->C;
    const int64_t row0 = op->row0, base = p->chunk_start[c0];
    const int64_t *rp = A->row_ptr, *col = A->col;
    const double *val = A->val;
#pragma omp parallel for schedule(dynamic, 64)
    for (int64_t c = c0; c < c1; c++) {
        int64_t off = p->chunk_start[c] - base;
        int32_t w = p->chunk_width[c];
        for (int32_t r = 0; r < C; r++) {
            int64_t s = c * C + r;
            int32_t *pc = pcol + off + r, j = 0, last = 0;
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
                        pc[(int64_t)j * C] = last;
                        pv[(int64_t)j * C] = val[e];
                        j++;
                    }
                } else {
                    for (int64_t e = rp[o]; e < rp[o + 1]; e++) {
                        uint64_t u = (uint64_t)(col[e] - row0);
                        if (u >= (uint64_t)n) continue; /* remote entry */
                        last = t->iperm[u];
                        pc[(int64_t)j * C] = last;
                        pv[(int64_t)j * C] = val[e];
                        j++;
                    }
                }
            }
            for (; j < w; j++) {
                pc[(int64_t)j * C] = last;
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
    fill_chunks(f->p, f->remote, f->op, f->A, f->t, c0, c1, col, val);
    return PL_OK;
}

/* Step 3b (local): local pJDS straight from the CSR block: permuted row s
 * takes the local entries of row perm[s] in their order, columns renumbered
 * through iperm; padding repeats the row's last column. */
static int fill_local(pl_op *op, const pl_csr *A, const pl_spmv_cfg *cfg, build_tmp *t)
{
    const int32_t n = op->n;
    PL_CALL(pjds_layout(n, n, t->len_loc, t->perm, cfg->chunk_height, cfg->sort_window, &op->loc));
    if (op->stream_fill) { /* filled chunk range by chunk range in upload() */
        layout_only(&op->loc);
        return PL_OK;
    }
    fill_chunks(&op->loc, 0, op, A, t, 0, op->loc.nchunks, op->loc.col, op->loc.val);
    return PL_OK;
}

/* Step 3c (local): remote pJDS of the permuted rows with remote entries,
 * sorted by their remote length, columns = halo indices, row_map = the
 * permuted local row each adds into. */
static int fill_remote(pl_op *op, const pl_csr *A, const pl_spmv_cfg *cfg, build_tmp *t)
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
    fill_chunks(p, 1, op, A, t, 0, p->nchunks, p->col, p->val);
    free(t->rem_h); /* done with the remote entries' halo indices */
    free(t->rem_blk);
    t->rem_h = NULL;
    t->rem_blk = NULL;
    return PL_OK;
}

/* Step 3 (local): sort, split, build both pJDS and the halo column list. */
static int build_local(pl_op *op, const pl_csr *A, const pl_spmv_cfg *cfg, build_tmp *t)
{
    const int32_t n = op->n;
    double tp = pl_wtime();
    /* device backends with mat_create_fill: the host never holds the whole
     * entry arrays (PJDS_FILL_HOST=1: the old way, for comparisons) */
    const char *fh = getenv("PJDS_FILL_HOST");
    op->stream_fill = op->be->mat_create_fill && strcmp(op->be->name, "cpu") != 0 && !(fh && !strcmp(fh, "1"));
    PL_CALL(scan_rows(op, A, t));
    phase("scan rows, halo", &tp);

    /* permutation of the local rows */
    PL_MALLOC(t->perm, n ? n : 1);
    PL_MALLOC(t->iperm, n ? n : 1);
    PL_MALLOC(op->gidx, n ? n : 1);
    pjds_sort_perm(n, t->len_loc, cfg->sort_window, t->perm);
    const int64_t row0 = op->row0;
#pragma omp parallel for schedule(static)
    for (int32_t i = 0; i < n; i++) {
        t->iperm[t->perm[i]] = i;
        op->gidx[i] = row0 + t->perm[i];
    }
    phase("sort", &tp);
    PL_CALL(fill_local(op, A, cfg, t));
    phase("local pJDS", &tp);
    if (op->size > 1) {
        PL_CALL(fill_remote(op, A, cfg, t));
    } else {
        PL_CALL(pjds_layout(0, 0, NULL, NULL, cfg->chunk_height, cfg->sort_window, &op->rem));
        PL_MALLOC(op->rem.row_map, 1);
    }
    phase("remote pJDS", &tp);
    return PL_OK;
}

/* Step 4 (collective): halo plan. bounds[size + 1] known to all. */
static int plan_halo(pl_op *op, build_tmp *t)
{
    const int P = op->size;
    PL_MALLOC(t->rcount, P);
    PL_MALLOC(t->scount, P);
    PL_MALLOC(t->rdispl, P);
    PL_MALLOC(t->sdispl, P);
    for (int p = 0; p < P; p++) t->rcount[p] = 0;
    int p = 0;
    for (int32_t h = 0; h < op->n_halo; h++) {
        while (t->halo_g[h] >= t->bounds[p + 1]) p++; /* halo sorted: owners ascend */
        PL_CHECK(p != op->rank && p < P, PL_ERR_INTERNAL, "halo column %lld has a bad owner",
                 (long long)t->halo_g[h]);
        t->rcount[p]++;
    }
    PL_MPI(MPI_Alltoall(t->rcount, 1, MPI_INT, t->scount, 1, MPI_INT, op->comm), "MPI_Alltoall of halo counts");
    int64_t rs = 0, ss = 0;
    for (int q = 0; q < P; q++) {
        t->rdispl[q] = (int)rs;
        t->sdispl[q] = (int)ss;
        rs += t->rcount[q];
        ss += t->scount[q];
    }
    PL_CHECK(ss <= INT32_MAX, PL_ERR_OVERFLOW, "rank %d must send %lld halo entries per SpMV (> 2^31)", op->rank,
             (long long)ss);
    op->n_send = (int32_t)ss;
    PL_MALLOC(t->req_g, ss);
    PL_MPI(MPI_Alltoallv(t->halo_g, t->rcount, t->rdispl, MPI_INT64_T, t->req_g, t->scount, t->sdispl, MPI_INT64_T,
                         op->comm),
           "MPI_Alltoallv of halo indices");
    PL_MALLOC(t->send_idx, ss ? ss : 1);
    int64_t bad = -1;
#pragma omp parallel for schedule(static) reduction(max : bad)
    for (int64_t e = 0; e < ss; e++) {
        int64_t l = t->req_g[e] - op->row0;
        if (l < 0 || l >= op->n) {
            bad = e;
            l = 0;
        }
        t->send_idx[e] = op->n ? t->iperm[l] : 0;
    }
    PL_CHECK(bad < 0, PL_ERR_INTERNAL, "rank %d was asked for row %lld it does not own", op->rank,
             (long long)t->req_g[bad]);
    /* neighbour lists */
    int nr = 0, ns = 0;
    for (int q = 0; q < P; q++) {
        nr += t->rcount[q] > 0;
        ns += t->scount[q] > 0;
    }
    op->n_rnb = nr;
    op->n_snb = ns;
    PL_MALLOC(op->rnb, nr);
    PL_MALLOC(op->rcnt, nr);
    PL_MALLOC(op->roff, nr);
    PL_MALLOC(op->snb, ns);
    PL_MALLOC(op->scnt, ns);
    PL_MALLOC(op->soff, ns);
    PL_MALLOC(op->req, nr + ns);
    nr = ns = 0;
    for (int q = 0; q < P; q++) {
        if (t->rcount[q]) {
            op->rnb[nr] = q;
            op->rcnt[nr] = t->rcount[q];
            op->roff[nr++] = t->rdispl[q];
        }
        if (t->scount[q]) {
            op->snb[ns] = q;
            op->scnt[ns] = t->scount[q];
            op->soff[ns++] = t->sdispl[q];
        }
    }
    return PL_OK;
}

/* Step 5 (local): backend copies of the matrices, index list and buffers.
 * With stream_fill the entries are written here, straight into the
 * backend's staging buffers. */
static int upload(pl_op *op, const pl_csr *A, build_tmp *t)
{
    pl_backend *be = op->be;
    op->host_shared = strcmp(be->name, "cpu") == 0;
    if (op->stream_fill) {
        fill_arg fl = {&op->loc, 0, op, A, t}, fr = {&op->rem, 1, op, A, t};
        PL_CALL(be->mat_create_fill(be, &op->loc, fill_range, &fl, &op->d_loc));
        if (op->rem.nrows > 0) PL_CALL(be->mat_create_fill(be, &op->rem, fill_range, &fr, &op->d_rem));
    } else {
        PL_CALL(be->mat_create(be, &op->loc, &op->d_loc));
        if (op->rem.nrows > 0) PL_CALL(be->mat_create(be, &op->rem, &op->d_rem));
    }
    op->dev_bytes = pjds_bytes(&op->loc);
    if (op->rem.nrows > 0) op->dev_bytes += pjds_bytes(&op->rem);
    if (!op->host_shared) {
        /* a device backend holds its own copy: drop the host entries (the
         * bulk of the host memory; sizes and row_len stay for the info) */
        free(op->loc.col);
        free(op->loc.val);
        free(op->rem.col);
        free(op->rem.val);
        op->loc.col = op->rem.col = NULL;
        op->loc.val = op->rem.val = NULL;
    }
    if (op->n_snb + op->n_rnb == 0) return PL_OK;
    PL_CALL(be->idx_create(be, t->send_idx, (size_t)op->n_send, &op->d_send_idx));
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

/* Device-to-device halo exchange (ipc or nccl), after the gather.  side:
 * on the comm stream beside the backend stream (overlap/task); else on the
 * backend stream (nccl) or finished before anything else is queued (ipc).
 * start queues what it can; finish completes it, after which the backend
 * stream may read the halo. */
static int d2d_start(pl_op *op, int side)
{
    if (op->ipc) return pl_gpu_ipc_start(op->gx, op->d_sendbuf);
    return pl_gpu_nccl_exchange(op->gx, side, op->n_rnb, op->rnb, op->rcnt, op->roff, op->d_halo, op->n_snb, op->snb,
                                op->scnt, op->soff, op->d_sendbuf);
}

static int d2d_finish(pl_op *op, int side)
{
    if (op->ipc) return pl_gpu_ipc_finish(op->gx, op->d_sendbuf);
    return side ? pl_gpu_join(op->gx) : PL_OK;
}

/* Step 7 (neighbours, cuda backend): one exchange of a zeroed send buffer
 * through the transport in use. */
static int warm_up(pl_op *op)
{
    pl_backend *be = op->be;
    if (op->n_send) PL_CALL(be->set(be, (size_t)op->n_send, 0.0, op->d_sendbuf));
    if (op->ipc || op->nccl) {
        PL_CALL(d2d_start(op, 0));
        PL_CALL(d2d_finish(op, 0));
    }
    PL_CALL(be->sync(be));
    return PL_OK;
}

static int op_build(pl_op *op, const pl_csr *A, const pl_spmv_cfg *cfg, build_tmp *t)
{
    MPI_Comm comm = op->comm;
    /* 1: validate, agree */
    PL_CALL(agree(comm, check_block(A, cfg, op->be), "checking the row block"));
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

    /* 3: local build, agree */
    PL_CALL(agree(comm, build_local(op, A, cfg, t), "building the pJDS blocks"));
    double tp = pl_wtime();
    /* 4: halo plan (collective; its failures are MPI failures everywhere) */
    if (op->size > 1) PL_CALL(agree(comm, plan_halo(op, t), "planning the halo exchange"));
    phase("halo plan", &tp);
    /* 5: backend */
    PL_CALL(agree(comm, upload(op, A, t), "uploading the operator"));
    phase("upload", &tp);

    double gmax = 0.0;
    PL_MPI(MPI_Allreduce(&op->norm_est, &gmax, 1, MPI_DOUBLE, MPI_MAX, comm), "MPI_Allreduce of the norm estimate");
    op->norm_est = gmax;

    /* 6: GPU halo transport (several ranks, cuda backend): comm stream,
     * events and, for transport = nccl, the NCCL communicator (collective) */
    if (op->size > 1 && !strcmp(op->be->name, "cuda")) {
        /* auto: NCCL where built (device to device over NVLink/PCIe; staging
         * through host memory with a non-CUDA-aware MPI is 10-20x slower) */
        op->nccl = cfg->transport == PL_TRANSPORT_NCCL || (cfg->transport == PL_TRANSPORT_AUTO && PJDS_HAVE_NCCL);
        if (cfg->transport == PL_TRANSPORT_IPC) {
            /* copy engines into the peers' halo buffers: one node only */
            int ok = 0;
            PL_CALL(pl_gpu_ipc_possible(comm, op->n_rnb, op->rnb, op->n_snb, op->snb, &ok));
            PL_CHECK(ok, PL_ERR_INPUT,
                     "[spmv] transport = ipc needs every halo neighbour on the same node (these ranks span "
                     "several): use transport = nccl or mpi");
            op->ipc = 1;
        }
        PL_CALL(agree(comm, pl_gpu_xfer_create(op->be, op->nccl, comm, &op->gx), "setting up the GPU halo transport"));
        if (op->ipc)
            PL_CALL(agree(comm,
                          pl_gpu_ipc_setup(op->gx, comm, op->d_halo, op->n_rnb, op->rnb, op->rcnt, op->roff, op->n_snb,
                                           op->snb, op->scnt, op->soff),
                          "mapping the peers' halo buffers (CUDA IPC)"));
        phase(op->nccl ? "NCCL communicator" : op->ipc ? "CUDA IPC mappings" : "GPU transfer streams", &tp);
    }
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
    if (op->gx && op->n_rnb + op->n_snb > 0) {
        PL_CALL(agree(comm, warm_up(op), "the first halo exchange"));
        phase("first halo exchange", &tp);
    }
    return PL_OK;
}

int pl_op_create(const pl_csr *rows, const pl_spmv_cfg *cfg, pl_backend *be, MPI_Comm comm, pl_op **out)
{
    PL_CHECK(rows && cfg && be && out, PL_ERR_ARG, "pl_op_create: NULL argument");
    *out = NULL;
    pl_op *op = calloc(1, sizeof *op);
    PL_CHECK(op, PL_ERR_MEM, "out of host memory");
    op->user_comm = comm;
    op->comm = MPI_COMM_NULL;
    op->be = be;
    int rc = PL_OK;
    PL_CHECK_GOTO(MPI_Comm_dup(comm, &op->comm) == MPI_SUCCESS, PL_ERR_MPI, fail, rc, "MPI_Comm_dup failed");
    PL_CHECK_GOTO(MPI_Comm_rank(op->comm, &op->rank) == MPI_SUCCESS && MPI_Comm_size(op->comm, &op->size) == MPI_SUCCESS,
                  PL_ERR_MPI, fail, rc, "MPI_Comm_rank/size failed");
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

void pl_op_destroy(pl_op **pop)
{
    if (!pop || !*pop) return;
    pl_op *op = *pop;
    pl_backend *be = op->be;
    pl_gpu_xfer_destroy(&op->gx);
    if (be) {
        if (op->d_loc) be->mat_destroy(be, op->d_loc);
        if (op->d_rem) be->mat_destroy(be, op->d_rem);
        if (op->d_send_idx) be->idx_destroy(be, op->d_send_idx);
        if (op->d_sendbuf) be->vec_free(be, op->d_sendbuf);
        if (op->d_halo) be->vec_free(be, op->d_halo);
    }
    if (op->host_pinned) {
        if (op->h_sendbuf) be->host_free(be, op->h_sendbuf);
        if (op->h_halo) be->host_free(be, op->h_halo);
    } else if (!op->host_shared) {
        free(op->h_sendbuf);
        free(op->h_halo);
    }
    pjds_destroy(&op->loc);
    pjds_destroy(&op->rem);
    free(op->gidx);
    free(op->rnb);
    free(op->rcnt);
    free(op->roff);
    free(op->snb);
    free(op->scnt);
    free(op->soff);
    free(op->req);
    free(op->t_apply);
    if (op->comm != MPI_COMM_NULL) MPI_Comm_free(&op->comm);
    free(op);
    *pop = NULL;
}

/* ---- apply ---------------------------------------------------------------- */

/* Post receives and sends; returns an MPI error code (thread-safe: no
 * pl_error calls, so the communication thread may run it). */
static int halo_post(pl_op *op)
{
    int e = MPI_SUCCESS;
    for (int i = 0; i < op->n_rnb && e == MPI_SUCCESS; i++)
        e = MPI_Irecv(op->h_halo + op->roff[i], op->rcnt[i], MPI_DOUBLE, op->rnb[i], PL_HALO_TAG, op->comm,
                      &op->req[i]);
    for (int i = 0; i < op->n_snb && e == MPI_SUCCESS; i++)
        e = MPI_Isend(op->h_sendbuf + op->soff[i], op->scnt[i], MPI_DOUBLE, op->snb[i], PL_HALO_TAG, op->comm,
                      &op->req[op->n_rnb + i]);
    return e;
}

static int halo_wait(pl_op *op) { return MPI_Waitall(op->n_rnb + op->n_snb, op->req, MPI_STATUSES_IGNORE); }

/* Gather the send buffer and stage it on the host. */
static int halo_pack(pl_op *op, const double *x)
{
    pl_backend *be = op->be;
    if (op->n_send == 0) return PL_OK;
    PL_CALL(be->gather(be, (size_t)op->n_send, op->d_send_idx, x, op->d_sendbuf));
    if (!op->host_shared) PL_CALL(be->download(be, op->h_sendbuf, op->d_sendbuf, (size_t)op->n_send));
    op->bytes_sent += (double)op->n_send * sizeof(double);
    return PL_OK;
}

static int halo_unpack(pl_op *op)
{
    if (op->n_halo && !op->host_shared)
        PL_CALL(op->be->upload(op->be, op->d_halo, op->h_halo, (size_t)op->n_halo));
    return PL_OK;
}

typedef struct comm_task {
    pl_op *op;
    int mpi_err;
} comm_task;

static void *comm_thread_main(void *arg)
{
    comm_task *ct = arg;
    ct->mpi_err = halo_post(ct->op);
    if (ct->mpi_err == MPI_SUCCESS) ct->mpi_err = halo_wait(ct->op);
    return NULL;
}

static int check_mpi(int e, const char *what)
{
    PL_MPI(e, what);
    return PL_OK;
}

static int spmv_local(pl_op *op, const double *x, double *y)
{
    double t0 = pl_wtime();
    PL_CALL(op->be->spmv(op->be, op->d_loc, x, y));
    if (op->detailed) PL_CALL(op->be->sync(op->be));
    op->t_local += pl_wtime() - t0;
    return PL_OK;
}

static int spmv_remote(pl_op *op, double *y)
{
    if (op->rem.nrows == 0) return PL_OK;
    double t0 = pl_wtime();
    PL_CALL(op->be->spmv(op->be, op->d_rem, op->d_halo, y));
    if (op->detailed) PL_CALL(op->be->sync(op->be));
    op->t_remote += pl_wtime() - t0;
    return PL_OK;
}

/* Detailed timing: wait for the backend so that the phase is measured. */
static int detail_sync(pl_op *op)
{
    if (op->detailed) PL_CALL(op->be->sync(op->be));
    return PL_OK;
}

/* The exchange on the cuda backend (several ranks, some neighbours).
 * Everything is enqueued on the backend's stream; the host blocks only
 * where it must:
 *  - NCCL: never (the final sync of pl_op_apply).  vector: gather, NCCL
 *    group, local, remote on one stream.  overlap/task: the gather and the
 *    NCCL group run on the comm stream, concurrently with the local kernel;
 *    the remote kernel waits for them (event).
 *  - IPC: copy engines write the segments into the peers' halo buffers
 *    (comm stream, after the gather, which overlap/task also put there); the
 *    host waits for its own copies and
 *    for the peers' tokens (transport.cu).  vector: all that, then local and
 *    remote.  overlap/task: the local kernel is queued first and runs
 *    during the copies and the waits; no SM goes to communication.
 *  - MPI (pinned host staging): one event wait until the send buffer is on
 *    the host.  vector: gather, download, wait, MPI, upload, local, remote.
 *    overlap: the local kernel is queued right after the download, so it
 *    runs while the host waits and does MPI; the halo upload goes on the
 *    comm stream.  task: as overlap, MPI in the communication thread while
 *    the calling thread only joins (the GPU does the local part). */
static int apply_gpu(pl_op *op, const double *x, double *y)
{
    pl_backend *be = op->be;
    const int mode = op->exchange;
    double tc = pl_wtime();
    /* overlap/task with ipc/nccl: the gather goes on the comm stream too, so
     * the local kernel need not wait for it */
    const int side = (op->ipc || op->nccl) && mode != PL_EXCHANGE_VECTOR;
    if (op->n_send) {
        if (side)
            PL_CALL(pl_gpu_gather_side(op->gx, (size_t)op->n_send, op->d_send_idx, x, op->d_sendbuf));
        else
            PL_CALL(be->gather(be, (size_t)op->n_send, op->d_send_idx, x, op->d_sendbuf));
        op->bytes_sent += (double)op->n_send * sizeof(double);
    }
    if (op->ipc || op->nccl) {
        /* overlap/task: the local kernel is queued between start and finish
         * and runs while the halo moves */
        PL_CALL(d2d_start(op, side));
        if (!side) {
            PL_CALL(d2d_finish(op, 0));
            PL_CALL(detail_sync(op));
        }
        op->t_comm += pl_wtime() - tc;
        PL_CALL(spmv_local(op, x, y));
        if (side) {
            tc = pl_wtime();
            PL_CALL(d2d_finish(op, 1));
            PL_CALL(detail_sync(op));
            op->t_comm += pl_wtime() - tc;
        }
        PL_CALL(spmv_remote(op, y));
        return PL_OK;
    }
    /* MPI with host staging */
    PL_CALL(pl_gpu_d2h_async(op->gx, op->h_sendbuf, op->d_sendbuf, (size_t)op->n_send));
    if (mode == PL_EXCHANGE_VECTOR) {
        PL_CALL(pl_gpu_d2h_wait(op->gx));
        PL_CALL(check_mpi(halo_post(op), "MPI_Isend/Irecv of the halo"));
        PL_CALL(check_mpi(halo_wait(op), "MPI_Waitall of the halo"));
        PL_CALL(pl_gpu_h2d_async(op->gx, op->d_halo, op->h_halo, (size_t)op->n_halo));
        PL_CALL(detail_sync(op));
        op->t_comm += pl_wtime() - tc;
        PL_CALL(spmv_local(op, x, y));
        PL_CALL(spmv_remote(op, y));
        return PL_OK;
    }
    if (op->detailed) { /* measure the staging apart from the local kernel */
        PL_CALL(pl_gpu_d2h_wait(op->gx));
        op->t_comm += pl_wtime() - tc;
        PL_CALL(spmv_local(op, x, y));
        tc = pl_wtime();
    } else {
        PL_CALL(spmv_local(op, x, y)); /* queued behind the download: runs during MPI */
        PL_CALL(pl_gpu_d2h_wait(op->gx));
    }
    if (mode == PL_EXCHANGE_OVERLAP) {
        PL_CALL(check_mpi(halo_post(op), "MPI_Isend/Irecv of the halo"));
        PL_CALL(check_mpi(halo_wait(op), "MPI_Waitall of the halo"));
    } else {
        comm_task ct = {op, MPI_SUCCESS};
        pthread_t th;
        PL_CHECK(pthread_create(&th, NULL, comm_thread_main, &ct) == 0, PL_ERR_INTERNAL,
                 "cannot start the communication thread");
        pthread_join(th, NULL);
        PL_CALL(check_mpi(ct.mpi_err, "halo exchange of the communication thread"));
    }
    PL_CALL(pl_gpu_h2d_async(op->gx, op->d_halo, op->h_halo, (size_t)op->n_halo));
    PL_CALL(detail_sync(op));
    op->t_comm += pl_wtime() - tc;
    PL_CALL(spmv_remote(op, y));
    return PL_OK;
}

int pl_op_apply(pl_op *op, const double *x, double *y)
{
    double t0 = pl_wtime();
    pl_backend *be = op->be;
    if (op->n_rnb + op->n_snb > 0 && op->gx) {
        PL_CALL(apply_gpu(op, x, y));
    } else if (op->n_rnb + op->n_snb == 0) {
        /* one rank, or no neighbours: no MPI */
        PL_CALL(spmv_local(op, x, y));
        PL_CALL(spmv_remote(op, y));
    } else if (op->exchange == PL_EXCHANGE_VECTOR) {
        double tc = pl_wtime();
        PL_CALL(halo_pack(op, x));
        PL_CALL(check_mpi(halo_post(op), "MPI_Isend/Irecv of the halo"));
        PL_CALL(check_mpi(halo_wait(op), "MPI_Waitall of the halo"));
        PL_CALL(halo_unpack(op));
        op->t_comm += pl_wtime() - tc;
        PL_CALL(spmv_local(op, x, y));
        PL_CALL(spmv_remote(op, y));
    } else if (op->exchange == PL_EXCHANGE_OVERLAP) {
        double tc = pl_wtime();
        PL_CALL(halo_pack(op, x));
        PL_CALL(check_mpi(halo_post(op), "MPI_Isend/Irecv of the halo"));
        op->t_comm += pl_wtime() - tc;
        PL_CALL(spmv_local(op, x, y));
        tc = pl_wtime();
        PL_CALL(check_mpi(halo_wait(op), "MPI_Waitall of the halo"));
        PL_CALL(halo_unpack(op));
        op->t_comm += pl_wtime() - tc;
        PL_CALL(spmv_remote(op, y));
    } else { /* task */
        double tc = pl_wtime();
        PL_CALL(halo_pack(op, x));
        comm_task ct = {op, MPI_SUCCESS};
        pthread_t th;
        PL_CHECK(pthread_create(&th, NULL, comm_thread_main, &ct) == 0, PL_ERR_INTERNAL,
                 "cannot start the communication thread");
        op->t_comm += pl_wtime() - tc;
        int rc = spmv_local(op, x, y);
        tc = pl_wtime();
        pthread_join(th, NULL); /* always join, even if the local part failed */
        PL_CALL(rc);
        PL_CALL(check_mpi(ct.mpi_err, "halo exchange of the communication thread"));
        PL_CALL(halo_unpack(op));
        op->t_comm += pl_wtime() - tc;
        PL_CALL(spmv_remote(op, y));
    }
    PL_CALL(be->sync(be));
    double dt = pl_wtime() - t0;
    if (op->n_samples == op->cap_apply) { /* samples for the median; doubling */
        int64_t cap = op->cap_apply ? 2 * op->cap_apply : 256;
        double *p = realloc(op->t_apply, (size_t)cap * sizeof *p);
        if (p) {
            op->t_apply = p;
            op->cap_apply = cap;
        }
    }
    if (op->n_samples < op->cap_apply) op->t_apply[op->n_samples++] = dt;
    op->n_apply++;
    op->t_total += dt;
    return PL_OK;
}

/* ---- queries -------------------------------------------------------------- */

void pl_op_get_info(const pl_op *op, pl_op_info *info)
{
    memset(info, 0, sizeof *info);
    info->n_global = op->n_global;
    info->row0 = op->row0;
    info->n_local = op->n;
    info->n_halo = op->n_halo;
    info->nnz_local = op->nnz;
    info->nent_local = op->loc.nent + op->rem.nent;
    info->device_bytes = op->dev_bytes;
    info->norm_estimate = op->norm_est;
    info->exchange = op->exchange;
    info->transport = op->ipc ? PL_TRANSPORT_IPC : op->nccl ? PL_TRANSPORT_NCCL : PL_TRANSPORT_MPI;
    info->n_neighbors = 0;
    /* union of send and receive neighbours (both lists are sorted) */
    for (int i = 0, j = 0; i < op->n_rnb || j < op->n_snb;) {
        if (j >= op->n_snb || (i < op->n_rnb && op->rnb[i] < op->snb[j]))
            i++;
        else if (i >= op->n_rnb || op->snb[j] < op->rnb[i])
            j++;
        else
            i++, j++;
        info->n_neighbors++;
    }
    info->n_send = op->n_send;
}

MPI_Comm pl_op_comm(const pl_op *op) { return op->user_comm; }
pl_backend *pl_op_backend(const pl_op *op) { return op->be; }
const int64_t *pl_op_global_index(const pl_op *op) { return op->gidx; }

void pl_op_counters(const pl_op *op, int64_t *n_apply, double *seconds)
{
    if (n_apply) *n_apply = op->n_apply;
    if (seconds) *seconds = op->t_total;
}

void pl_op_timings_get(const pl_op *op, pl_op_timings *t)
{
    t->t_first = t->t_median = t->t_max = 0.0;
    int64_t n = op->n_samples;
    double *s = n > 0 ? malloc((size_t)n * sizeof *s) : NULL;
    if (s) {
        memcpy(s, op->t_apply, (size_t)n * sizeof *s);
        t->t_first = op->t_apply[0];
        t->t_median = pl_median(s, n); /* sorts s */
        t->t_max = s[n - 1];
        free(s);
    }
    t->n_apply = op->n_apply;
    t->t_total = op->t_total;
    t->t_local = op->t_local;
    t->t_remote = op->t_remote;
    t->t_comm = op->t_comm;
    t->bytes_sent = op->bytes_sent;
}

void pl_op_set_detailed_timing(pl_op *op, int on) { op->detailed = on != 0; }

void pl_op_reset_counters(pl_op *op)
{
    op->n_apply = op->n_samples = 0;
    op->t_total = op->t_local = op->t_remote = op->t_comm = op->bytes_sent = 0.0;
}

/* ---- global vector operations ------------------------------------------- */

int pl_vec_dot(pl_op *op, const double *x, const double *y, double *r)
{
    double loc = 0.0;
    PL_CALL(op->be->dot(op->be, (size_t)op->n, x, y, &loc));
    if (op->size == 1) {
        *r = loc;
        return PL_OK;
    }
    PL_MPI(MPI_Allreduce(&loc, r, 1, MPI_DOUBLE, MPI_SUM, op->comm), "MPI_Allreduce of a dot product");
    return PL_OK;
}

int pl_vec_nrm2(pl_op *op, const double *x, double *r)
{
    double s = 0.0;
    PL_CALL(pl_vec_dot(op, x, x, &s));
    *r = sqrt(s);
    return PL_OK;
}

int pl_vec_gemv_t(pl_op *op, int k, const double *V, size_t ld, const double *w, double *h)
{
    PL_CALL(op->be->gemv_t(op->be, (size_t)op->n, k, V, ld, w, h));
    if (op->size == 1 || k == 0) return PL_OK;
    PL_MPI(MPI_Allreduce(MPI_IN_PLACE, h, k, MPI_DOUBLE, MPI_SUM, op->comm), "MPI_Allreduce of V^T w");
    return PL_OK;
}

int pl_vec_cgs_step(pl_op *op, int k, const double *V, size_t ld, double *w, const double *h_in, double *h_out)
{
    PL_CHECK(op->be->cgs_step, PL_ERR_NOTSUP, "backend %s has no fused Gram-Schmidt step", op->be->name);
    PL_CALL(op->be->cgs_step(op->be, (size_t)op->n, k, V, ld, w, h_in, h_out));
    if (op->size == 1) return PL_OK;
    PL_MPI(MPI_Allreduce(MPI_IN_PLACE, h_out, k + 1, MPI_DOUBLE, MPI_SUM, op->comm), "MPI_Allreduce of V^T w, w.w");
    return PL_OK;
}
