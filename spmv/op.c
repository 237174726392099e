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
 * Exchange modes (cfg->exchange):
 *  - vector:  gather, exchange, wait, then local and remote SpMV;
 *  - overlap: post non-blocking MPI, local SpMV, wait, remote SpMV ("naive
 *    overlap": on the CPU, MPI progresses only inside MPI calls, so little is
 *    hidden; a GPU runs the local kernel asynchronously and hides more);
 *  - task:    a dedicated communication thread (pthread) posts and waits for
 *    the messages while the calling thread runs the local SpMV.  Needs MPI
 *    initialised with at least MPI_THREAD_SERIALIZED (the two threads call
 *    MPI one after the other, never at once); otherwise the operator falls
 *    back to overlap with a warning.  On the CPU the OpenMP team and the
 *    communication thread share the cores.
 * With one rank (or no neighbours) apply makes no MPI call.
 * Creation is collective and agrees on failure: if one rank fails, every
 * rank returns an error instead of hanging in the next collective.
 */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

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
    /* counters */
    int64_t n_apply;
    double t_total, t_local, t_remote, t_comm, bytes_sent;
};

/* ---- helpers ------------------------------------------------------------ */

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Index of g in the sorted array a[0..n) (must be present). */
static int32_t find_i64(const int64_t *a, int32_t n, int64_t g)
{
    int32_t lo = 0, hi = n - 1;
    while (lo < hi) {
        int32_t mid = lo + (hi - lo) / 2;
        if (a[mid] < g)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

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
    int64_t *loc_ptr, *rem_ptr, *rem_g, *halo_g;
    int32_t *loc_col, *rem_col;
    double *loc_val, *rem_val;
    int32_t *rr_row, *rr_len, *rr_perm, *rr_col;
    int64_t *rr_ptr;
    double *rr_val;
    int64_t *bounds, *req_g;
    int *rcount, *scount, *rdispl, *sdispl;
    int32_t *send_idx;
} build_tmp;

static void build_tmp_free(build_tmp *t)
{
    void *ptrs[] = {t->len_loc, t->len_rem, t->perm, t->iperm, t->loc_ptr, t->rem_ptr, t->rem_g, t->halo_g,
                    t->loc_col, t->rem_col, t->loc_val, t->rem_val, t->rr_row, t->rr_len, t->rr_perm, t->rr_col,
                    t->rr_ptr, t->rr_val, t->bounds, t->req_g, t->rcount, t->scount, t->rdispl, t->sdispl,
                    t->send_idx};
    for (size_t i = 0; i < sizeof ptrs / sizeof ptrs[0]; i++) free(ptrs[i]);
    memset(t, 0, sizeof *t);
}

/* Step 1 (local): validate the block. */
static int check_block(const pl_csr *A, const pl_spmv_cfg *cfg)
{
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
        for (int64_t i = 0; i < A->nrows; i++)
            PL_CHECK(A->row_ptr[i + 1] >= A->row_ptr[i] && A->row_ptr[i + 1] - A->row_ptr[i] <= INT32_MAX, PL_ERR_ARG,
                     "row_ptr of global row %lld is decreasing or too long", (long long)(A->row0 + i));
    }
    return PL_OK;
}

/* Step 3 (local): sort, split, build both pJDS and the halo column list. */
static int build_local(pl_op *op, const pl_csr *A, const pl_spmv_cfg *cfg, build_tmp *t)
{
    const int32_t n = op->n;
    const int64_t row0 = op->row0, N = op->n_global;
    const int C = cfg->chunk_height;
    const int64_t sigma = cfg->sort_window;
    const int64_t *rp = A->row_ptr;

    PL_MALLOC(t->len_loc, n);
    PL_MALLOC(t->len_rem, n);
    int64_t bad_row = -1;
    double rowmax = 0.0;
    for (int32_t i = 0; i < n; i++) {
        int32_t a = 0, b = 0;
        double s = 0.0;
        for (int64_t e = rp[i]; e < rp[i + 1]; e++) {
            int64_t g = A->col[e];
            if (g < 0 || g >= N) bad_row = bad_row < 0 ? i : bad_row;
            if (g >= row0 && g < row0 + n)
                a++;
            else
                b++;
            s += fabs(A->val[e]);
        }
        t->len_loc[i] = a;
        t->len_rem[i] = b;
        if (s > rowmax || isnan(s)) rowmax = s;
    }
    PL_CHECK(bad_row < 0, PL_ERR_INPUT, "matrix row %lld has a column index outside [0, %lld)",
             (long long)(row0 + bad_row), (long long)N);
    op->norm_est = rowmax;
    op->nnz = n ? rp[n] : 0;

    /* permutation of the local rows */
    PL_MALLOC(t->perm, n);
    PL_MALLOC(t->iperm, n);
    pjds_sort_perm(n, t->len_loc, sigma, t->perm);
    for (int32_t i = 0; i < n; i++) t->iperm[t->perm[i]] = i;
    PL_MALLOC(op->gidx, n);
    for (int32_t i = 0; i < n; i++) op->gidx[i] = row0 + t->perm[i];

    /* split into local (renumbered) and remote (global) CSR */
    PL_MALLOC(t->loc_ptr, (size_t)n + 1);
    PL_MALLOC(t->rem_ptr, (size_t)n + 1);
    t->loc_ptr[0] = t->rem_ptr[0] = 0;
    for (int32_t i = 0; i < n; i++) {
        t->loc_ptr[i + 1] = t->loc_ptr[i] + t->len_loc[i];
        t->rem_ptr[i + 1] = t->rem_ptr[i] + t->len_rem[i];
    }
    int64_t nloc = t->loc_ptr[n], nrem = t->rem_ptr[n];
    PL_MALLOC(t->loc_col, nloc);
    PL_MALLOC(t->loc_val, nloc);
    PL_MALLOC(t->rem_g, nrem);
    PL_MALLOC(t->rem_val, nrem);
#pragma omp parallel for schedule(dynamic, 1024)
    for (int32_t i = 0; i < n; i++) {
        int64_t pl = t->loc_ptr[i], pr = t->rem_ptr[i];
        for (int64_t e = rp[i]; e < rp[i + 1]; e++) {
            int64_t g = A->col[e];
            if (g >= row0 && g < row0 + n) {
                t->loc_col[pl] = t->iperm[g - row0];
                t->loc_val[pl++] = A->val[e];
            } else {
                t->rem_g[pr] = g;
                t->rem_val[pr++] = A->val[e];
            }
        }
    }
    PL_CALL(pjds_create(n, n, t->loc_ptr, t->loc_col, t->loc_val, t->perm, C, sigma, &op->loc));
    free(t->loc_col);
    free(t->loc_val);
    t->loc_col = NULL;
    t->loc_val = NULL;

    /* halo: sorted unique remote columns */
    PL_MALLOC(t->halo_g, nrem);
    if (nrem) memcpy(t->halo_g, t->rem_g, (size_t)nrem * sizeof(int64_t));
    qsort(t->halo_g, (size_t)nrem, sizeof(int64_t), cmp_i64);
    int64_t nh = 0;
    for (int64_t k = 0; k < nrem; k++)
        if (nh == 0 || t->halo_g[k] != t->halo_g[nh - 1]) t->halo_g[nh++] = t->halo_g[k];
    PL_CHECK(nh <= INT32_MAX, PL_ERR_OVERFLOW, "halo of %lld entries exceeds int32", (long long)nh);
    op->n_halo = (int32_t)nh;
    PL_MALLOC(t->rem_col, nrem);
#pragma omp parallel for schedule(static)
    for (int64_t k = 0; k < nrem; k++) t->rem_col[k] = find_i64(t->halo_g, (int32_t)nh, t->rem_g[k]);

    /* remote rows, in permuted order, as a CSR; then its own pJDS */
    int32_t nr = 0;
    for (int32_t i = 0; i < n; i++)
        if (t->len_rem[i] > 0) nr++;
    PL_MALLOC(t->rr_row, nr);
    PL_MALLOC(t->rr_len, nr);
    PL_MALLOC(t->rr_perm, nr);
    PL_MALLOC(t->rr_ptr, (size_t)nr + 1);
    PL_MALLOC(t->rr_col, nrem);
    PL_MALLOC(t->rr_val, nrem);
    int32_t k = 0;
    t->rr_ptr[0] = 0;
    for (int32_t i = 0; i < n; i++) {
        int32_t o = t->perm[i];
        int32_t l = t->len_rem[o];
        if (!l) continue;
        t->rr_row[k] = i;
        t->rr_len[k] = l;
        int64_t dst = t->rr_ptr[k], src = t->rem_ptr[o];
        memcpy(t->rr_col + dst, t->rem_col + src, (size_t)l * sizeof(int32_t));
        memcpy(t->rr_val + dst, t->rem_val + src, (size_t)l * sizeof(double));
        t->rr_ptr[k + 1] = dst + l;
        k++;
    }
    pjds_sort_perm(nr, t->rr_len, sigma, t->rr_perm);
    PL_CALL(pjds_create(nr, op->n_halo, t->rr_ptr, t->rr_col, t->rr_val, t->rr_perm, C, sigma, &op->rem));
    PL_MALLOC(op->rem.row_map, nr);
    for (int32_t i = 0; i < nr; i++) op->rem.row_map[i] = t->rr_row[t->rr_perm[i]];
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
    PL_MALLOC(t->send_idx, ss);
    for (int64_t e = 0; e < ss; e++) {
        int64_t l = t->req_g[e] - op->row0;
        PL_CHECK(l >= 0 && l < op->n, PL_ERR_INTERNAL, "rank %d was asked for row %lld it does not own", op->rank,
                 (long long)t->req_g[e]);
        t->send_idx[e] = t->iperm[l];
    }
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

/* Step 5 (local): backend copies of the matrices, index list and buffers. */
static int upload(pl_op *op, build_tmp *t)
{
    pl_backend *be = op->be;
    PL_CALL(be->mat_create(be, &op->loc, &op->d_loc));
    op->dev_bytes = pjds_bytes(&op->loc);
    if (op->rem.nrows > 0) {
        PL_CALL(be->mat_create(be, &op->rem, &op->d_rem));
        op->dev_bytes += pjds_bytes(&op->rem);
    }
    op->host_shared = strcmp(be->name, "cpu") == 0;
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

static int op_build(pl_op *op, const pl_csr *A, const pl_spmv_cfg *cfg, build_tmp *t)
{
    MPI_Comm comm = op->comm;
    /* 1: validate, agree */
    PL_CALL(agree(comm, check_block(A, cfg), "checking the row block"));
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
    /* 4: halo plan (collective; its failures are MPI failures everywhere) */
    if (op->size > 1) PL_CALL(agree(comm, plan_halo(op, t), "planning the halo exchange"));
    /* 5: backend */
    PL_CALL(agree(comm, upload(op, t), "uploading the operator"));

    double gmax = 0.0;
    PL_MPI(MPI_Allreduce(&op->norm_est, &gmax, 1, MPI_DOUBLE, MPI_MAX, comm), "MPI_Allreduce of the norm estimate");
    op->norm_est = gmax;

    if (cfg->transport == PL_TRANSPORT_NCCL)
        pl_warn("[spmv] transport = nccl is not implemented by the operator; halos go through MPI");
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

int pl_op_apply(pl_op *op, const double *x, double *y)
{
    double t0 = pl_wtime();
    pl_backend *be = op->be;
    if (op->n_rnb + op->n_snb == 0) {
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
    op->n_apply++;
    op->t_total += pl_wtime() - t0;
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
    op->n_apply = 0;
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
