/* op.c — the distributed operator y = A x on pJDS (spmv.h): its lifetime,
 * info and counters, and the global vector reductions (backend op + one
 * MPI_Allreduce).  The parts: op_build.c (creation: the method of the
 * permutation, the local/remote split and the halo plan), op_apply.c (the
 * exchange modes of y = A x), op_refill.c (value refill for sweeps),
 * op_kron.c (the matrix-free operator of a Kronecker sum);
 * op_impl.h holds the state they share. */
#include <math.h>
#include <omp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pl_build.h"
#include "pl_error.h"
#include "spmv.h"
#include "spmv_impl.h"
#include "op_impl.h"

int pl_op_agree(MPI_Comm comm, int rc, const char *phase)
{
    int g = 0;
    int e = MPI_Allreduce(&rc, &g, 1, MPI_INT, MPI_MAX, comm);
    if (rc != PL_OK) return rc;
    PL_CHECK(e == MPI_SUCCESS, PL_ERR_MPI, "MPI_Allreduce (error agreement) failed");
    PL_CHECK(g == PL_OK, g, "%s failed on another rank (%s)", phase, pl_error_name(g));
    return PL_OK;
}

int pl_op_new(MPI_Comm comm, pl_backend *be, pl_op **out)
{
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
    if (op->hx) be->halo->destroy(&op->hx);
    pl_op_block_free(op);
    pl_op_kron_dist_free(op); /* op_kron_dist.c: the remote part, several ranks */
    if (be) {
        if (op->d_loc) be->mat_destroy(be, op->d_loc);
        if (op->d_rem) be->mat_destroy(be, op->d_rem);
        if (op->d_kron) be->kron_destroy(be, op->d_kron);
        if (op->d_send_idx) be->idx_destroy(be, op->d_send_idx);
        if (op->d_sendbuf) be->vec_free(be, op->d_sendbuf);
        if (op->d_halo) be->vec_free(be, op->d_halo);
        if (op->d_xext) be->vec_free(be, op->d_xext);
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
    pl_cpjds_destroy(&op->cloc);
    free(op->gidx);
    free(op->rnb);
    free(op->rcnt);
    free(op->roff);
    free(op->snb);
    free(op->scnt);
    free(op->soff);
    free(op->req);
    free(op->t_apply);
    for (int k = 0; k < op->nterms; k++) {
        if (be && op->d_term_loc && op->d_term_loc[k]) be->vec_free(be, op->d_term_loc[k]);
        if (be && op->d_term_rem && op->d_term_rem[k]) be->vec_free(be, op->d_term_rem[k]);
    }
    free(op->d_term_loc);
    free(op->d_term_rem);
    free(op->term_rowsum);
    if (op->comm != MPI_COMM_NULL) MPI_Comm_free(&op->comm);
    free(op);
    *pop = NULL;
}

void pl_op_get_info(const pl_op *op, pl_op_info *info)
{
    memset(info, 0, sizeof *info);
    info->n_global = op->n_global;
    info->row0 = op->row0;
    info->n_local = op->n;
    info->n_halo = op->n_halo;
    info->nnz_local = op->nnz;
    info->nent_local = op->loc.nent + op->rem.nent + op->cloc.nent;
    info->format = op->fmt;
    info->cmp_nval = op->cmp_nval;
    info->cmp_noff = op->cmp_noff;
    info->cmp_vbits = op->cmp_nval > 0 ? pl_cpjds_bits(op->cmp_nval) : 0;
    info->cmp_obits = op->cmp_noff > 0 ? pl_cpjds_bits(op->cmp_noff) : 0;
    if (op->fmt == PL_FORMAT_COMPRESSED) info->cmp_obits = op->cloc.obits;
    if (op->fmt == PL_FORMAT_MATRIX_FREE) {
        /* no stored entries: the entries it computes, the tables' bytes per entry */
        info->nent_local = op->nnz;
        info->bytes_per_entry = op->nnz > 0 ? (double)op->dev_bytes / (double)op->nnz : 0.0;
    } else {
        const double b = op->fmt == PL_FORMAT_COMPRESSED ? (double)pl_cpjds_bytes(&op->cloc) : (double)pjds_bytes(&op->loc);
        const double e = op->fmt == PL_FORMAT_COMPRESSED ? (double)op->cloc.nent : (double)op->loc.nent;
        info->bytes_per_entry = e > 0 ? b / e : 0.0;
    }
    snprintf(info->format_note, sizeof info->format_note, "%s", op->fmt_note);
    info->device_bytes = op->dev_bytes;
    info->norm_estimate = op->norm_est;
    info->exchange = op->exchange;
    info->sort_window = op->sort_window;
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
    op->n_apply = op->n_samples = op->n_queued = 0;
    op->t_total = op->t_local = op->t_remote = op->t_comm = op->bytes_sent = 0.0;
}

/* ---- global vector operations ------------------------------------------- */

int pl_vec_dot(pl_op *op, const double *x, const double *y, double *r)
{
    if (op->repro) return pl_op_repro_sums(op, 1, &(pl_repro_pair){x, y}, 1, r);
    double loc = 0.0;
    PL_CALL(op->be->dot(op->be, (size_t)op->n, x, y, &loc));
    if (op->size == 1) {
        *r = loc;
        return PL_OK;
    }
    PL_MPI(MPI_Allreduce(&loc, r, 1, MPI_DOUBLE, MPI_SUM, op->comm), "MPI_Allreduce of a dot product");
    return PL_OK;
}

int pl_vec_bdot(pl_op *op, int R, const double *X, const double *Y, double *r)
{
    PL_CHECK(R >= 1 && R <= PL_SPMM_RMAX && r, PL_ERR_ARG, "pl_vec_bdot: R = %d outside 1..%d", R, PL_SPMM_RMAX);
    PL_CHECK(op->be->bdot, PL_ERR_NOTSUP, "the %s backend has no block dot product", op->be->name);
    if (op->repro) {
        pl_repro_pair pr[PL_SPMM_RMAX];
        for (int c = 0; c < R; c++) pr[c] = (pl_repro_pair){X + c, Y + c};
        return pl_op_repro_sums(op, R, pr, (size_t)R, r);
    }
    double loc[PL_SPMM_RMAX];
    PL_CALL(op->be->bdot(op->be, (size_t)op->n, R, X, Y, loc));
    if (op->size == 1) {
        memcpy(r, loc, (size_t)R * sizeof *r);
        return PL_OK;
    }
    PL_MPI(MPI_Allreduce(loc, r, R, MPI_DOUBLE, MPI_SUM, op->comm), "MPI_Allreduce of block dot products");
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
    if (op->repro) return pl_op_repro_block(op, k, 1, V, ld, w, (size_t)op->n, h, 0);
    PL_CALL(op->be->gemv_t(op->be, (size_t)op->n, k, V, ld, w, h));
    if (op->size == 1 || k == 0) return PL_OK;
    PL_MPI(MPI_Allreduce(MPI_IN_PLACE, h, k, MPI_DOUBLE, MPI_SUM, op->comm), "MPI_Allreduce of V^T w");
    return PL_OK;
}

int pl_vec_gemm_t(pl_op *op, int k, int m, const double *V, size_t ld, const double *W, size_t ldw, double *C)
{
    PL_CHECK(k >= 0 && m >= 0 && (double)k * m < 2147483647.0, PL_ERR_ARG, "gemm_t of %d x %d", k, m);
    if (k == 0 || m == 0) return PL_OK;
    if (op->repro) return pl_op_repro_block(op, k, m, V, ld, W, ldw, C, 0);
    if (op->be->gemm_t) {
        PL_CALL(op->be->gemm_t(op->be, (size_t)op->n, k, m, V, ld, W, ldw, C));
    } else {
        for (int c = 0; c < m; c++)
            PL_CALL(op->be->gemv_t(op->be, (size_t)op->n, k, V, ld, W + (size_t)c * ldw, C + (size_t)c * k));
    }
    if (op->size == 1) return PL_OK;
    PL_MPI(MPI_Allreduce(MPI_IN_PLACE, C, k * m, MPI_DOUBLE, MPI_SUM, op->comm), "MPI_Allreduce of V^T W");
    return PL_OK;
}

int pl_vec_gram(pl_op *op, int k, const double *V, size_t ld, double *G)
{
    PL_CHECK(k >= 1 && k <= PL_GRAM_KMAX, PL_ERR_ARG, "gram of %d columns (1..%d)", k, PL_GRAM_KMAX);
    if (op->repro) return pl_op_repro_block(op, k, k, V, ld, V, ld, G, 1);
    if (op->be->gram) {
        PL_CALL(op->be->gram(op->be, (size_t)op->n, k, V, ld, G));
    } else {
        for (int c = 0; c < k; c++) PL_CALL(op->be->gemv_t(op->be, (size_t)op->n, k, V, ld, V + (size_t)c * ld, G + (size_t)c * k));
    }
    if (op->size == 1) return PL_OK;
    PL_MPI(MPI_Allreduce(MPI_IN_PLACE, G, k * k, MPI_DOUBLE, MPI_SUM, op->comm), "MPI_Allreduce of V^T V");
    return PL_OK;
}

int pl_vec_cgs_step(pl_op *op, int k, const double *V, size_t ld, double *w, const double *h_in, double *h_out)
{
    PL_CHECK(op->be->cgs_step, PL_ERR_NOTSUP, "backend %s has no fused Gram-Schmidt step", op->be->name);
    if (op->repro) { /* the update (row by row: the same bits on any split), then the exact sums */
        if (k > 0) PL_CALL(op->be->gemv_n(op->be, (size_t)op->n, k, -1.0, V, ld, h_in, 1.0, w));
        PL_CALL(pl_op_repro_block(op, k, 1, V, ld, w, (size_t)op->n, h_out, 0));
        return pl_vec_dot(op, w, w, h_out + k);
    }
    PL_CALL(op->be->cgs_step(op->be, (size_t)op->n, k, V, ld, w, h_in, h_out));
    if (op->size == 1) return PL_OK;
    PL_MPI(MPI_Allreduce(MPI_IN_PLACE, h_out, k + 1, MPI_DOUBLE, MPI_SUM, op->comm), "MPI_Allreduce of V^T w, w.w");
    return PL_OK;
}

int pl_vec_restart_step(pl_op *op, int off, int sz, int kk, double *V, size_t ld, const double *Y, int ldy,
                        const double *h_in, double *h_out)
{
    PL_CHECK(off >= 0 && kk >= 1 && sz > kk + 1 && ldy >= sz, PL_ERR_ARG,
             "restart_step: off = %d, sz = %d, kk = %d, ldy = %d", off, sz, kk, ldy);
    const size_t n = (size_t)op->n;
    const int k = off + kk;
    pl_backend *be = op->be;
    if (!op->repro && be->restart_step) {
        PL_CALL(be->restart_step(be, n, off, sz, kk, V, ld, Y, ldy, h_in, h_out));
        if (op->size == 1) return PL_OK;
        PL_MPI(MPI_Allreduce(MPI_IN_PLACE, h_out, k + 2, MPI_DOUBLE, MPI_SUM, op->comm),
               "MPI_Allreduce of V^T w, w.w (restart)");
        return PL_OK;
    }
    PL_CHECK(be->basis_update, PL_ERR_NOTSUP, "backend %s has no basis update", be->name);
    /* composed: the update, the restart vector and its product into
     * columns k and k + 1 (both read only from columns off + sz and
     * off + sz + 1, which the update does not touch), then one fused pass */
    PL_CALL(be->basis_update(be, n, sz, kk, V + (size_t)off * ld, ld, Y, ldy));
    PL_CALL(be->copy(be, n, V + (size_t)(off + sz) * ld, V + (size_t)k * ld));
    PL_CALL(be->copy(be, n, V + (size_t)(off + sz + 1) * ld, V + (size_t)(k + 1) * ld));
    if (be->cgs_step) return pl_vec_cgs_step(op, k + 1, V, ld, V + (size_t)(k + 1) * ld, h_in, h_out);
    double *w = V + (size_t)(k + 1) * ld;
    PL_CALL(be->gemv_n(be, n, k + 1, -1.0, V, ld, h_in, 1.0, w));
    PL_CALL(pl_vec_gemv_t(op, k + 1, V, ld, w, h_out));
    return pl_vec_dot(op, w, w, h_out + k + 1);
}

int pl_vec_sel_gram(pl_op *op, int ka, const double *A, const double *B, size_t ld, double *h)
{
    PL_CHECK(op->be->sel_gram, PL_ERR_NOTSUP, "backend %s has no fused selective Gram matrix", op->be->name);
    PL_CHECK(ka >= 1 && ka <= PL_SEL_KMAX, PL_ERR_ARG, "sel_gram of %d columns (1..%d)", ka, PL_SEL_KMAX);
    if (op->repro) { /* A^T x, then B^T B */
        PL_CALL(pl_op_repro_block(op, ka, 1, A, ld, B + 2 * ld, ld, h, 0));
        return pl_op_repro_block(op, 3, 3, B, ld, B, ld, h + ka, 1);
    }
    PL_CALL(op->be->sel_gram(op->be, (size_t)op->n, ka, A, B, ld, h));
    if (op->size == 1) return PL_OK;
    PL_MPI(MPI_Allreduce(MPI_IN_PLACE, h, ka + 9, MPI_DOUBLE, MPI_SUM, op->comm), "MPI_Allreduce of A^T x, B^T B");
    return PL_OK;
}

void pl_op_options_defaults(pl_op_options *o)
{
    *o = (pl_op_options){.chunk_height = 32,
                         .sort_window = PL_SORT_WINDOW_AUTO,
                         .exchange = PL_EXCHANGE_VECTOR,
                         .transport = PL_TRANSPORT_AUTO,
                         .precision = PL_PRECISION_DOUBLE,
                         .format = PL_FORMAT_AUTO,
                         .blocks = 0};
}
