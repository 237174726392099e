/* op_kron.c — the operator of a Kronecker sum (pl_op_create_kron, spmv.h;
 * [spmv] format = matrix_free, issue 26): no stored matrix; the backend
 * keeps a copy of the tables (be->kron_create) and applies the whole
 * product (be->kron_apply, called by op_apply.c's local step).
 *
 * Rows stay in their original order.  One rank: pl_op_global_index is the
 * identity, there is no halo and no remote part, so pl_op_apply and
 * pl_op_apply_queued take their no-neighbour path (same counters and timing
 * samples as a stored matrix).  Several ranks: each rank holds a block of
 * electron configurations with all their phonon rows, the local part by
 * be->kron_apply, the hopping's remote entries by be->kron_rem_apply after
 * the operator's halo exchange (op_kron_dist.c).  The value refill returns
 * PL_ERR_NOTSUP (op_refill.c): a sweep gives new tables (pl_op_kron_update).
 *
 * What pl_op_get_info reports: nnz_local = the non-zeros of the stored
 * matrix the operator replaces, counted from the tables (kron_nnz below:
 * exact when the terms put no two entries on one position and no product
 * rounds to zero, as for the Holstein-Hubbard Hamiltonian; otherwise an
 * upper bound), device_bytes = the tables (pl_kron_bytes),
 * norm_estimate = pl_kron_norm_bound. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pl_error.h"
#include "pl_kron.h"
#include "spmv.h"
#include "spmv_impl.h"
#include "op_impl.h"

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The distinct values of v[0:n) (sorted copy, runs) into u, their counts
 * into cnt; returns how many. */
static int64_t distinct(const double *v, int64_t n, double *u, int64_t *cnt)
{
    memcpy(u, v, (size_t)n * sizeof *u);
    qsort(u, (size_t)n, sizeof *u, cmp_double);
    int64_t k = 0;
    for (int64_t i = 0; i < n; i++) {
        if (k > 0 && u[i] == u[k - 1]) {
            cnt[k - 1]++;
            continue;
        }
        u[k] = u[i];
        cnt[k++] = 1;
    }
    return k;
}

/* Diagonal non-zeros: rows (l, r) with (dl[l] + dr[r]) + shift != 0, over
 * the distinct values of dl and dr (Holstein-Hubbard: a few each). */
static int diag_nnz(const pl_kron *k, int64_t *out)
{
    const int64_t nl = k->n_left, nr = k->n_right;
    double *ul = malloc((size_t)nl * sizeof *ul), *ur = malloc((size_t)nr * sizeof *ur);
    int64_t *cl = malloc((size_t)nl * sizeof *cl), *cr = malloc((size_t)nr * sizeof *cr);
    int rc = PL_OK;
    PL_CHECK_GOTO(ul && ur && cl && cr, PL_ERR_MEM, done, rc, "out of host memory counting the diagonal");
    const int64_t kl = distinct(k->dl, nl, ul, cl), kr = distinct(k->dr, nr, ur, cr);
    int64_t n = 0;
    for (int64_t i = 0; i < kl; i++)
        for (int64_t j = 0; j < kr; j++)
            if ((ul[i] + ur[j]) + k->shift != 0.0) n += cl[i] * cr[j];
    *out = n;
done:
    free(ul);
    free(ur);
    free(cl);
    free(cr);
    return rc;
}

/* Non-zeros of the matrix H of k: nnz(A) n_right + the diagonal + the
 * coupling entries (c[l,m] != 0 and a column with a non-zero value). */
int pl_op_kron_nnz(const pl_kron *k, int64_t *nnz)
{
    const int64_t nl = k->n_left, nr = k->n_right, nt = k->nterms;
    int64_t na = 0, nd = 0, nc = 0;
    for (int64_t j = 0; j < k->a_ptr[nl]; j++) na += k->a_val[j] != 0.0;
    PL_CALL(diag_nnz(k, &nd));
    if (nt > 0) {
        int64_t *per = calloc((size_t)nt, sizeof *per); /* entries of B_m */
        PL_CHECK(per, PL_ERR_MEM, "out of host memory counting the coupling entries");
        for (int64_t r = 0; r < nr; r++)
            for (int64_t m = 0; m < nt; m++) {
                const int64_t i = r * nt + m;
                per[m] += (k->lo[i] >= 0 && k->lo_val[i] != 0.0) + (k->hi[i] >= 0 && k->hi_val[i] != 0.0);
            }
        for (int64_t l = 0; l < nl; l++)
            for (int64_t m = 0; m < nt; m++)
                if (k->c[l * nt + m] != 0.0) nc += per[m];
        free(per);
    }
    *nnz = na * nr + nd + nc;
    return PL_OK;
}

/* The format note: the whole tables' bytes (what every rank holds), and
 * the rest. */
static void set_note(pl_op *op, const pl_kron *k, const char *more)
{
    const double b = (double)pl_kron_bytes(k);
    snprintf(op->fmt_note, sizeof op->fmt_note, "matrix-free Kronecker sum: %.*f %s of tables%s", b < 1e6 ? 1 : 2,
             b < 1e6 ? b / 1e3 : b / 1e6, b < 1e6 ? "kB" : "MB", more);
}

/* Several ranks (op_kron_dist.c): the split by electron configurations;
 * the global index row0 + i. */
static int kron_build_dist(pl_op *op, const pl_kron *k, const pl_op_options *opt)
{
    PL_CALL(pl_op_kron_dist_build(op, k, opt));
    PL_MALLOC(op->gidx, op->n > 0 ? op->n : 1);
    const int right = pl_op_kron_split(op) == PL_KRON_SPLIT_RIGHT;
    if (right) { /* op_kron_right.c: local row l w + (r - R_q) is global l n_right + r */
        const int64_t w = op->n / k->n_left, nr = k->n_right, r0 = op->row0;
#pragma omp parallel for schedule(static)
        for (int32_t i = 0; i < op->n; i++) op->gidx[i] = (i / w) * nr + r0 + i % w;
    } else {
#pragma omp parallel for schedule(static)
        for (int32_t i = 0; i < op->n; i++) op->gidx[i] = op->row0 + i;
    }
    char more[96];
    snprintf(more, sizeof more, ", split by %s configurations over %d ranks", right ? "phonon" : "electron",
             op->size);
    set_note(op, k, more);
    pl_debug("pl_op_create_kron: %lld rows (%lld x %lld, %d right factors) over %d ranks, %lld non-zeros on rank "
             "%d, %zu bytes of tables and buffers",
             (long long)op->n_global, (long long)k->n_left, (long long)k->n_right, k->nterms, op->size,
             (long long)op->nnz, op->rank, op->dev_bytes);
    return PL_OK;
}

/* Everything after the communicator: checks, backend copy, the fields. */
static int kron_build(pl_op *op, const pl_kron *k, const pl_op_options *opt)
{
    pl_backend *be = op->be;
    /* the same answer on every rank (the same tables): no agreement needed */
    PL_CHECK(be->kron_create && be->kron_apply && be->kron_destroy, PL_ERR_INPUT,
             "the %s backend has no matrix-free kernels", be->name ? be->name : "?");
    PL_CALL(pl_op_check_options(opt, be));
    PL_CALL(pl_kron_check(k));
    const int64_t N = k->n_left * k->n_right;
    op->fmt = PL_FORMAT_MATRIX_FREE;
    op->cmp_nval = op->cmp_noff = -1;
    op->sort_window = 1; /* rows in their original order */
    op->n_global = N;
    op->norm_est = pl_kron_norm_bound(k);
    if (op->size > 1) return kron_build_dist(op, k, opt);
    PL_CHECK(N <= INT32_MAX, PL_ERR_INPUT,
             "format = matrix_free: %lld rows on one rank; at most 2^31-1 rows per rank are supported",
             (long long)N);
    op->n = (int32_t)N;
    op->row0 = 0;
    op->exchange = opt->exchange;
    PL_MALLOC(op->gidx, N > 0 ? N : 1);
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < N; i++) op->gidx[i] = i;
    PL_CALL(pl_op_kron_nnz(k, &op->nnz));
    op->dev_bytes = pl_kron_bytes(k);
    set_note(op, k, "");
    PL_CALL(be->kron_create(be, k, &op->d_kron));
    pl_debug("pl_op_create_kron: %lld rows (%lld x %lld, %d right factors), %lld non-zeros replaced, %zu bytes "
             "of tables",
             (long long)N, (long long)k->n_left, (long long)k->n_right, k->nterms, (long long)op->nnz,
             op->dev_bytes);
    return PL_OK;
}

int pl_op_create_kron(const pl_kron *k, const pl_op_options *opt, pl_backend *be, MPI_Comm comm, pl_op **out)
{
    PL_CHECK(out, PL_ERR_ARG, "pl_op_create_kron: NULL output");
    *out = NULL;
    PL_CHECK(k && opt && be, PL_ERR_ARG, "pl_op_create_kron: NULL argument");
    pl_op *op = NULL;
    PL_CALL(pl_op_new(comm, be, &op));
    op->repro = opt->reproducible != 0;
    int rc = kron_build(op, k, opt);
    if (rc) {
        pl_error_trace(rc, __FILE__, __LINE__, __func__, "kron_build(op, k, opt)");
        goto fail;
    }
    *out = op;
    return PL_OK;
fail:
    pl_op_destroy(&op);
    return rc;
}

int pl_op_kron_update(pl_op *op, const pl_kron *k)
{
    PL_CHECK(op && k, PL_ERR_ARG, "pl_op_kron_update: NULL argument");
    PL_CHECK(op->fmt == PL_FORMAT_MATRIX_FREE && op->d_kron, PL_ERR_ARG,
             "pl_op_kron_update: the operator is not matrix-free");
    PL_CALL(pl_kron_check(k));
    PL_CHECK(k->n_left * k->n_right == op->n_global, PL_ERR_ARG,
             "pl_op_kron_update: %lld x %lld rows, the operator has %lld", (long long)k->n_left,
             (long long)k->n_right, (long long)op->n_global);
    pl_backend *be = op->be;
    if (op->kdist) { /* several ranks: the rank's tables, collective */
        PL_CALL(pl_op_kron_dist_update(op, k));
        op->norm_est = pl_kron_norm_bound(k);
        return PL_OK;
    }
    int64_t nnz = 0;
    PL_CALL(pl_op_kron_nnz(k, &nnz));
    void *fresh = NULL;
    PL_CALL(be->kron_create(be, k, &fresh)); /* the old tables stay until the new ones exist */
    be->kron_destroy(be, op->d_kron);
    op->d_kron = fresh;
    op->nnz = nnz;
    op->norm_est = pl_kron_norm_bound(k);
    op->dev_bytes = pl_kron_bytes(k);
    return PL_OK;
}
