/* op_block.c — Y = A X for R vectors of the distributed operator
 * (pl_op_apply_block, spmv.h): the SpMMV counterpart of op_apply.c.
 *
 * The halo plan of the single vector serves the block: the send list and
 * the halo are the same rows, each now R contiguous values, so every count
 * and offset is multiplied by R and one exchange moves the whole block.
 * Modes as in op_apply.c:
 *  - vector:  gather, exchange, local and remote SpMMV;
 *  - overlap: gather, post the messages, local SpMMV, wait, remote SpMMV;
 *  - task:    the communication thread posts and waits while the calling
 *    thread runs the local SpMMV (cuda: the kernel is queued first and runs
 *    while the host does MPI).
 * Transports on the cuda backend: nccl moves the block device to device
 * (the comm stream under overlap/task, as for one vector); mpi stages it
 * through pinned host buffers; ipc also stages through MPI, because its
 * mapped peer buffers are sized for one vector (README "SpMMV").
 * A matrix-free operator (format = matrix_free) runs the backend's
 * kron_spmm on its tables for the local part and, on several ranks, the
 * same exchange and kron_rem_spmm for the remote part; its KPM step is
 * kron_spmm_aug on one rank, the composed path (W) on several. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "pl_error.h"
#include "spmv.h"
#include "spmv_impl.h"
#include "op_impl.h"

#define PL_BLOCK_TAG 7402

void pl_op_block_free(pl_op *op)
{
    pl_backend *be = op->be;
    if (be) {
        if (op->d_sendbuf_b) be->vec_free(be, op->d_sendbuf_b);
        if (op->d_halo_b) be->vec_free(be, op->d_halo_b);
        if (op->blk_pinned) {
            if (op->h_sendbuf_b) be->host_free(be, op->h_sendbuf_b);
            if (op->h_halo_b) be->host_free(be, op->h_halo_b);
        } else if (!op->host_shared) {
            free(op->h_sendbuf_b);
            free(op->h_halo_b);
        }
    }
    free(op->rcnt_b);
    free(op->roff_b);
    free(op->scnt_b);
    free(op->soff_b);
    op->d_sendbuf_b = op->d_halo_b = op->h_sendbuf_b = op->h_halo_b = NULL;
    op->rcnt_b = op->roff_b = op->scnt_b = op->soff_b = NULL;
    op->blk_R = 0;
    op->blk_pinned = 0;
}

/* Buffers and the scaled plan for R vectors (kept for later applies). */
static int block_setup(pl_op *op, int R)
{
    if (op->blk_R >= R) { /* scale the plan to this R (it may hold a smaller R's), keep the buffers */
        for (int i = 0; i < op->n_rnb; i++) op->rcnt_b[i] = op->rcnt[i] * R, op->roff_b[i] = op->roff[i] * R;
        for (int i = 0; i < op->n_snb; i++) op->scnt_b[i] = op->scnt[i] * R, op->soff_b[i] = op->soff[i] * R;
        return PL_OK;
    }
    pl_op_block_free(op);
    pl_backend *be = op->be;
    const size_t ns = (size_t)op->n_send * (size_t)R, nh = (size_t)op->n_halo * (size_t)R;
    PL_CHECK((int64_t)op->n_send * R < INT32_MAX && (int64_t)op->n_halo * R < INT32_MAX, PL_ERR_NOTSUP,
             "the halo of %d vectors (%lld values) is too large for one MPI message", R,
             (long long)((int64_t)op->n_halo * R));
    PL_CALL(be->vec_alloc(be, ns ? ns : 1, &op->d_sendbuf_b));
    PL_CALL(be->vec_alloc(be, nh ? nh : 1, &op->d_halo_b));
    if (op->host_shared) {
        op->h_sendbuf_b = op->d_sendbuf_b;
        op->h_halo_b = op->d_halo_b;
    } else if (be->host_alloc && be->host_alloc(be, ns ? ns : 1, &op->h_sendbuf_b) == PL_OK &&
               be->host_alloc(be, nh ? nh : 1, &op->h_halo_b) == PL_OK) {
        op->blk_pinned = 1;
    } else {
        if (op->h_sendbuf_b && be->host_free) be->host_free(be, op->h_sendbuf_b);
        op->h_sendbuf_b = malloc((ns ? ns : 1) * sizeof(double));
        op->h_halo_b = malloc((nh ? nh : 1) * sizeof(double));
        PL_CHECK(op->h_sendbuf_b && op->h_halo_b, PL_ERR_MEM, "out of host memory for the block halo");
    }
    op->rcnt_b = malloc(((size_t)op->n_rnb + 1) * sizeof(int));
    op->roff_b = malloc(((size_t)op->n_rnb + 1) * sizeof(int));
    op->scnt_b = malloc(((size_t)op->n_snb + 1) * sizeof(int));
    op->soff_b = malloc(((size_t)op->n_snb + 1) * sizeof(int));
    PL_CHECK(op->rcnt_b && op->roff_b && op->scnt_b && op->soff_b, PL_ERR_MEM, "out of host memory for the block halo");
    for (int i = 0; i < op->n_rnb; i++) op->rcnt_b[i] = op->rcnt[i] * R, op->roff_b[i] = op->roff[i] * R;
    for (int i = 0; i < op->n_snb; i++) op->scnt_b[i] = op->scnt[i] * R, op->soff_b[i] = op->soff[i] * R;
    op->blk_R = R;
    return PL_OK;
}

static int block_post(pl_op *op)
{
    int e = MPI_SUCCESS;
    for (int i = 0; i < op->n_rnb && e == MPI_SUCCESS; i++)
        e = MPI_Irecv(op->h_halo_b + op->roff_b[i], op->rcnt_b[i], MPI_DOUBLE, op->rnb[i], PL_BLOCK_TAG, op->comm,
                      &op->req[i]);
    for (int i = 0; i < op->n_snb && e == MPI_SUCCESS; i++)
        e = MPI_Isend(op->h_sendbuf_b + op->soff_b[i], op->scnt_b[i], MPI_DOUBLE, op->snb[i], PL_BLOCK_TAG, op->comm,
                      &op->req[op->n_rnb + i]);
    return e;
}

static int block_wait(pl_op *op) { return MPI_Waitall(op->n_rnb + op->n_snb, op->req, MPI_STATUSES_IGNORE); }

typedef struct block_task {
    pl_op *op;
    int mpi_err;
} block_task;

static void *block_thread(void *arg)
{
    block_task *t = arg;
    t->mpi_err = block_post(t->op);
    if (t->mpi_err == MPI_SUCCESS) t->mpi_err = block_wait(t->op);
    return NULL;
}

static int mpi_ok(int e, const char *what)
{
    PL_MPI(e, what);
    return PL_OK;
}

/* The matrix-free operator's block products (op_kron.c, op_kron_dist.c):
 * the local part be->kron_spmm (one rank: kron_spmm_aug fuses the KPM
 * step), on several ranks the generic block halo exchange below and
 * be->kron_rem_spmm for the remote part.  The refusals are decided from
 * what every rank has alike (the backend's slots, the number of ranks),
 * never from this rank's neighbours, so that all ranks refuse together. */
static int kron_block_check(const pl_op *op, int aug)
{
    const pl_backend *be = op->be;
    const int fused = aug && op->size == 1;
    PL_CHECK(fused ? be->kron_spmm_aug != NULL : be->kron_spmm != NULL, PL_ERR_NOTSUP,
             "format = matrix_free: the %s backend has no matrix-free block product (%s); use format = pjds or "
             "compressed",
             be->name ? be->name : "?", aug ? "KPM step" : "SpMMV");
    PL_CHECK(op->size == 1 || (be->kron_rem_spmm && be->gather_block), PL_ERR_NOTSUP,
             "format = matrix_free: the %s backend has no matrix-free block product (%s) across ranks (no "
             "kron_rem_spmm); use format = pjds or compressed, or one rank",
             be->name ? be->name : "?", aug ? "KPM step" : "SpMMV");
    return PL_OK;
}

/* Y = A_local X: the stored local part or the matrix-free tables. */
static int block_local(pl_op *op, int R, const double *X, double *Y)
{
    pl_backend *be = op->be;
    if (op->fmt == PL_FORMAT_MATRIX_FREE) return be->kron_spmm(be, op->d_kron, R, X, Y);
    return be->spmm(be, op->d_loc, R, X, Y);
}

/* Y += A_remote X_halo (the block halo d_halo_b is there). */
static int block_remote(pl_op *op, int R, double *Y)
{
    pl_backend *be = op->be;
    if (op->fmt == PL_FORMAT_MATRIX_FREE) {
        if (op->d_krem) PL_CALL(be->kron_rem_spmm(be, op->d_krem, R, op->d_halo_b, Y));
    } else if (op->rem.nrows) {
        PL_CALL(be->spmm(be, op->d_rem, R, op->d_halo_b, Y));
    }
    return PL_OK;
}

/* Gather the send block, exchange it into the halo block (d_halo_b),
 * overlapped with the local product Y = A_local X by mode. */
static int block_exchange_local(pl_op *op, int R, const double *X, double *Y)
{
    pl_backend *be = op->be;
    const size_t ns = (size_t)op->n_send * (size_t)R, nh = (size_t)op->n_halo * (size_t)R;
    double tc = pl_wtime();
    if (op->n_send) PL_CALL(be->gather_block(be, (size_t)op->n_send, R, op->d_send_idx, X, op->d_sendbuf_b));
    op->bytes_sent += (double)ns * sizeof(double);
    if (op->nccl && op->hx) {
        const int side = op->exchange != PL_EXCHANGE_VECTOR;
        PL_CALL(be->halo->nccl_exchange(op->hx, side, op->n_rnb, op->rnb, op->rcnt_b, op->roff_b, op->d_halo_b,
                                        op->n_snb, op->snb, op->scnt_b, op->soff_b, op->d_sendbuf_b));
        op->t_comm += pl_wtime() - tc;
        PL_CALL(block_local(op, R, X, Y));
        if (side) PL_CALL(be->halo->join(op->hx));
        return PL_OK;
    }
    if (!op->host_shared && ns) PL_CALL(be->download(be, op->h_sendbuf_b, op->d_sendbuf_b, ns));
    if (op->exchange == PL_EXCHANGE_VECTOR) {
        PL_CALL(mpi_ok(block_post(op), "MPI_Isend/Irecv of the block halo"));
        PL_CALL(mpi_ok(block_wait(op), "MPI_Waitall of the block halo"));
        if (!op->host_shared && nh) PL_CALL(be->upload(be, op->d_halo_b, op->h_halo_b, nh));
        op->t_comm += pl_wtime() - tc;
        PL_CALL(block_local(op, R, X, Y));
    } else if (op->exchange == PL_EXCHANGE_OVERLAP || op->hx) {
        /* overlap; task on the GPU: the queued local kernel runs while the host does MPI */
        PL_CALL(mpi_ok(block_post(op), "MPI_Isend/Irecv of the block halo"));
        op->t_comm += pl_wtime() - tc;
        PL_CALL(block_local(op, R, X, Y));
        tc = pl_wtime();
        PL_CALL(mpi_ok(block_wait(op), "MPI_Waitall of the block halo"));
        if (!op->host_shared && nh) PL_CALL(be->upload(be, op->d_halo_b, op->h_halo_b, nh));
        op->t_comm += pl_wtime() - tc;
    } else { /* task on the CPU: a communication thread */
        block_task t = {op, MPI_SUCCESS};
        pthread_t th;
        PL_CHECK(pthread_create(&th, NULL, block_thread, &t) == 0, PL_ERR_INTERNAL,
                 "cannot start the communication thread");
        op->t_comm += pl_wtime() - tc;
        const int rc = block_local(op, R, X, Y);
        tc = pl_wtime();
        pthread_join(th, NULL); /* always join, even if the local part failed */
        PL_CALL(rc);
        PL_CALL(mpi_ok(t.mpi_err, "block halo exchange of the communication thread"));
        op->t_comm += pl_wtime() - tc;
    }
    return PL_OK;
}

/* Measured (2026-11-29): ChebFD with the tables, hh_184800, interval
 * -12.6, -12.4 and target -11.3638 with nev 100: on 2 threads of the
 * development VM one column at a time 3.0 s against 6.6-6.8 s in blocks of
 * 32 (the window); on one H200 in blocks of 2 0.60 s and 6.0 s against
 * 0.19-0.22 s and 1.6-1.7 s in blocks of 32 (its step composed: the
 * block's conversions and vector kernels per launch), so only the CPU
 * backend asks for narrower blocks. */
int pl_op_block_width(const pl_op *op, int want)
{
    if (want < 1) want = 1;
    const int w = op && op->fmt == PL_FORMAT_MATRIX_FREE ? op->be->kron_block_width : 0;
    return w > 0 && w < want ? w : want;
}

int pl_op_apply_block(pl_op *op, int R, const double *X, double *Y)
{
    PL_CHECK(op && X && Y && R >= 1 && R <= PL_SPMM_RMAX, PL_ERR_ARG, "pl_op_apply_block: R = %d outside 1..%d", R,
             PL_SPMM_RMAX);
    pl_backend *be = op->be;
    PL_CHECK(!op->shell, PL_ERR_NOTSUP, "a spectral transformation has no block product");
    PL_CHECK(!op->d_xext, PL_ERR_NOTSUP,
             "block products with reproducible results on several ranks are not implemented (use one rank, or "
             "reproducible = false)");
    if (op->fmt == PL_FORMAT_MATRIX_FREE) PL_CALL(kron_block_check(op, 0));
    else PL_CHECK(be->spmm && be->gather_block, PL_ERR_NOTSUP, "the %s backend has no SpMMV", be->name);
    const double t0 = pl_wtime();
    if (op->n_rnb + op->n_snb == 0) {
        PL_CALL(block_local(op, R, X, Y)); /* no neighbours: no remote part */
    } else {
        PL_CALL(block_setup(op, R));
        PL_CALL(block_exchange_local(op, R, X, Y));
        PL_CALL(block_remote(op, R, Y));
    }
    PL_CALL(be->sync(be));
    op->n_apply += R;
    op->t_total += pl_wtime() - t0;
    return PL_OK;
}

int pl_op_apply_block_aug(pl_op *op, int R, double alpha, double gamma, double beta, const double *X, double *Y,
                          double *W, double *dots)
{
    PL_CHECK(op && X && Y && R >= 1 && R <= PL_SPMM_RMAX, PL_ERR_ARG, "pl_op_apply_block_aug: R = %d outside 1..%d", R,
             PL_SPMM_RMAX);
    pl_backend *be = op->be;
    PL_CHECK(!op->shell, PL_ERR_NOTSUP, "a spectral transformation has no block product");
    const int kron = op->fmt == PL_FORMAT_MATRIX_FREE;
    if (kron) PL_CALL(kron_block_check(op, 1));
    const size_t nr = (size_t)op->n * (size_t)R;
    /* fused on one rank only (spmv.h): several ranks compose on every rank
     * alike, whatever this rank's neighbours, so that every rank makes the
     * same collectives (a rank without neighbours used to fuse and reduce
     * its 2 R dots in one call while the others reduced twice R) */
    const int fuse = op->size == 1 && (kron || (be->spmm_aug && !op->loc.row_map));
    if (fuse) {
        const double t0 = pl_wtime();
        double loc[2 * PL_SPMM_RMAX];
        const int e = kron ? be->kron_spmm_aug(be, op->d_kron, R, alpha, gamma, beta, X, Y, loc)
                           : be->spmm_aug(be, op->d_loc, R, alpha, gamma, beta, X, Y, loc);
        if (e == PL_ERR_NOTSUP) goto composed; /* the backend does not fuse this R */
        PL_CALL(e);
        op->n_apply += R;
        op->t_total += pl_wtime() - t0;
        if (dots && op->repro) { /* the fused sums depend on the threads: exact ones */
            PL_CALL(pl_vec_bdot(op, R, X, X, dots));
            PL_CALL(pl_vec_bdot(op, R, Y, X, dots + R));
        } else if (dots) {
            memcpy(dots, loc, 2 * (size_t)R * sizeof *dots); /* one rank: the local sums are global */
        }
        return PL_OK;
    }
composed:
    PL_CHECK(W, PL_ERR_ARG, "pl_op_apply_block_aug: the composed path needs the scratch block W");
    PL_CALL(pl_op_apply_block(op, R, X, W));
    if (beta != 1.0) PL_CALL(be->scal(be, nr, beta, Y));
    PL_CALL(be->axpy(be, nr, alpha, W, Y));
    if (gamma != 0.0) PL_CALL(be->axpy(be, nr, gamma, X, Y));
    if (dots) {
        PL_CALL(pl_vec_bdot(op, R, X, X, dots));
        PL_CALL(pl_vec_bdot(op, R, Y, X, dots + R));
    }
    return PL_OK;
}

int pl_op_apply_lz(pl_op *op, int ka, const double *A, size_t ld, const double *x, const double *z, double beta,
                   double *y, double *d_dots, double *out)
{
    PL_CHECK(op && x && z && y && d_dots && out && (ka == 0 || A), PL_ERR_ARG, "pl_op_apply_lz: NULL argument");
    PL_CHECK(ka >= 0 && ka <= PL_SEL_KMAX && ld >= (size_t)op->n, PL_ERR_ARG,
             "pl_op_apply_lz: %d selected columns (0..%d), ld %zu", ka, PL_SEL_KMAX, ld);
    pl_backend *be = op->be;
    if (op->shell || op->size != 1 || op->fmt != PL_FORMAT_MATRIX_FREE || op->repro || !be->kron_lz || !be->lz_step)
        return PL_ERR_NOTSUP;
    const double t0 = pl_wtime();
    const int e = be->kron_lz(be, op->d_kron, x, z, beta, y, d_dots); /* one rank: the local sums are global */
    if (e == PL_ERR_NOTSUP) return e;
    PL_CALL(e);
    op->n_apply++;
    PL_CALL(be->lz_step(be, (size_t)op->n, ka, A, x, ld, beta, d_dots, y, out));
    op->t_total += pl_wtime() - t0;
    return PL_OK;
}

int pl_op_apply_block_cheb(pl_op *op, int R, double alpha, double gamma, double beta, const double *X, double *Y,
                           double c1, double c2, double *Acc)
{
    PL_CHECK(op && X && Y && R >= 1 && R <= PL_SPMM_RMAX, PL_ERR_ARG, "pl_op_apply_block_cheb: R = %d outside 1..%d", R,
             PL_SPMM_RMAX);
    pl_backend *be = op->be;
    if (op->shell || op->size != 1 || op->fmt == PL_FORMAT_MATRIX_FREE || !be->spmm_cheb || op->loc.row_map)
        return PL_ERR_NOTSUP;
    const double t0 = pl_wtime();
    const int e = be->spmm_cheb(be, op->d_loc, R, alpha, gamma, beta, X, Y, c1, c2, Acc);
    if (e == PL_ERR_NOTSUP) return e;
    PL_CALL(e);
    op->n_apply += R;
    op->t_total += pl_wtime() - t0;
    return PL_OK;
}
