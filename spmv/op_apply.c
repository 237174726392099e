/* op_apply.c — y = A x of the distributed operator (pl_op_apply) and the
 * halo exchange.
 *
 * Exchange modes (cfg->exchange):
 *  - vector:  gather, exchange, wait, then local and remote SpMV;
 *  - overlap: post non-blocking MPI, local SpMV, wait, remote SpMV ("naive
 *    overlap": on the CPU, MPI progresses only inside MPI calls, so little is
 *    hidden; a GPU runs the local kernel asynchronously and hides more);
 *  - task:    a dedicated communication thread (pthread) posts and waits for
 *    the messages while the calling thread runs the local SpMV (on the
 *    cuda backend the comm stream plays that part: apply_device).  Needs MPI
 *    initialised with at least MPI_THREAD_SERIALIZED (the two threads call
 *    MPI one after the other, never at once); otherwise the operator falls
 *    back to overlap with a warning.  On the CPU the OpenMP team and the
 *    communication thread share the cores.
 * With one rank (or no neighbours) apply makes no MPI call.
 * A matrix-free operator (op_kron.c) runs the same steps: its local part is
 * be->kron_apply, its remote part (several ranks) be->kron_rem_apply on the
 * halo of whole phonon rows (op_kron_dist.c).
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

/* Device-to-device halo exchange (ipc or nccl), after the gather.  side:
 * on the comm stream beside the backend stream (overlap/task); else on the
 * backend stream (nccl) or finished before anything else is queued (ipc).
 * start queues what it can; finish completes it, after which the backend
 * stream may read the halo. */
int pl_op_d2d_start(pl_op *op, int side)
{
    const pl_halo_ops *h = op->be->halo;
    if (op->ipc) return h->ipc_start(op->hx, op->d_sendbuf);
    return h->nccl_exchange(op->hx, side, op->n_rnb, op->rnb, op->rcnt, op->roff, op->d_halo, op->n_snb, op->snb,
                            op->scnt, op->soff, op->d_sendbuf);
}

int pl_op_d2d_finish(pl_op *op, int side)
{
    if (op->ipc) return op->be->halo->ipc_finish(op->hx, op->d_sendbuf);
    return side ? op->be->halo->join(op->hx) : PL_OK;
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
    if (op->unified) { /* reproducible stored (op_build.c): the product waits for the halo (spmv_remote) */
        PL_CALL(op->be->copy(op->be, (size_t)op->n, x, op->d_xext));
        op->t_local += pl_wtime() - t0;
        return PL_OK;
    }
    if (op->d_xext) /* reproducible matrix-free (op_kron_dist.c): x behind the halo for the hopping */
        PL_CALL(op->be->copy(op->be, (size_t)op->n, x, op->d_xext + op->n_halo));
    if (op->shell)
        PL_CALL(op->shell(op->shell_arg, x, y)); /* op_shell.c: the caller's product */
    else if (op->d_kron)
        PL_CALL(op->be->kron_apply(op->be, op->d_kron, x, y)); /* matrix-free: the whole product */
    else
        PL_CALL(op->be->spmv(op->be, op->d_loc, x, y));
    if (op->detailed) PL_CALL(op->be->sync(op->be));
    op->t_local += pl_wtime() - t0;
    return PL_OK;
}

static int spmv_remote(pl_op *op, double *y)
{
    if (op->rem.nrows == 0 && !op->d_krem && !op->unified) return PL_OK;
    double t0 = pl_wtime();
    if (op->unified) { /* every row's entries in their order, reading [x; halo] */
        if (op->n_halo) PL_CALL(op->be->copy(op->be, (size_t)op->n_halo, op->d_halo, op->d_xext + op->n));
        PL_CALL(op->be->spmv(op->be, op->d_loc, op->d_xext, y));
    } else if (op->d_xext) { /* reproducible: all the hopping, reading [halo; x] */
        if (op->n_halo) PL_CALL(op->be->copy(op->be, (size_t)op->n_halo, op->d_halo, op->d_xext));
        PL_CALL(op->be->kron_rem_apply(op->be, op->d_krem, op->d_xext, y));
    } else if (op->d_krem) /* matrix-free on several ranks: (A_remote (x) 1) x_halo (op_kron_dist.c) */
        PL_CALL(op->be->kron_rem_apply(op->be, op->d_krem, op->d_halo, y));
    else
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

/* The exchange on a device backend with a halo transport (be->halo; the
 * cuda backend) with several ranks and some neighbours.
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
static int apply_device(pl_op *op, const double *x, double *y)
{
    pl_backend *be = op->be;
    const pl_halo_ops *h = be->halo;
    const int mode = op->exchange;
    double tc = pl_wtime();
    /* overlap/task with ipc/nccl: the gather goes on the comm stream too, so
     * the local kernel need not wait for it */
    const int side = (op->ipc || op->nccl) && mode != PL_EXCHANGE_VECTOR;
    if (op->n_send) {
        if (side)
            PL_CALL(h->gather_side(op->hx, (size_t)op->n_send, op->d_send_idx, x, op->d_sendbuf));
        else
            PL_CALL(be->gather(be, (size_t)op->n_send, op->d_send_idx, x, op->d_sendbuf));
        op->bytes_sent += (double)op->n_send * sizeof(double);
    }
    if (op->ipc || op->nccl) {
        /* overlap/task: the local kernel is queued between start and finish
         * and runs while the halo moves */
        PL_CALL(pl_op_d2d_start(op, side));
        if (!side) {
            PL_CALL(pl_op_d2d_finish(op, 0));
            PL_CALL(detail_sync(op));
        }
        op->t_comm += pl_wtime() - tc;
        PL_CALL(spmv_local(op, x, y));
        if (side) {
            tc = pl_wtime();
            PL_CALL(pl_op_d2d_finish(op, 1));
            PL_CALL(detail_sync(op));
            op->t_comm += pl_wtime() - tc;
        }
        PL_CALL(spmv_remote(op, y));
        return PL_OK;
    }
    /* MPI with host staging */
    PL_CALL(h->d2h_start(op->hx, op->h_sendbuf, op->d_sendbuf, (size_t)op->n_send));
    if (mode == PL_EXCHANGE_VECTOR) {
        PL_CALL(h->d2h_wait(op->hx));
        PL_CALL(check_mpi(halo_post(op), "MPI_Isend/Irecv of the halo"));
        PL_CALL(check_mpi(halo_wait(op), "MPI_Waitall of the halo"));
        PL_CALL(h->h2d(op->hx, op->d_halo, op->h_halo, (size_t)op->n_halo));
        PL_CALL(detail_sync(op));
        op->t_comm += pl_wtime() - tc;
        PL_CALL(spmv_local(op, x, y));
        PL_CALL(spmv_remote(op, y));
        return PL_OK;
    }
    if (op->detailed) { /* measure the staging apart from the local kernel */
        PL_CALL(h->d2h_wait(op->hx));
        op->t_comm += pl_wtime() - tc;
        PL_CALL(spmv_local(op, x, y));
        tc = pl_wtime();
    } else {
        PL_CALL(spmv_local(op, x, y)); /* queued behind the download: runs during MPI */
        PL_CALL(h->d2h_wait(op->hx));
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
    PL_CALL(h->h2d(op->hx, op->d_halo, op->h_halo, (size_t)op->n_halo));
    PL_CALL(detail_sync(op));
    op->t_comm += pl_wtime() - tc;
    PL_CALL(spmv_remote(op, y));
    return PL_OK;
}

int pl_op_apply_queued(pl_op *op, const double *x, double *y)
{
    if (op->n_rnb + op->n_snb > 0 || op->detailed) return pl_op_apply(op, x, y);
    /* one rank or no neighbours: queue the kernels, no synchronisation and
     * no timing sample (the caller's next reduction waits for them) */
    double t0 = pl_wtime();
    PL_CALL(spmv_local(op, x, y));
    PL_CALL(spmv_remote(op, y));
    op->n_apply++;
    op->n_queued++;
    op->t_total += pl_wtime() - t0;
    return PL_OK;
}

int pl_op_apply(pl_op *op, const double *x, double *y)
{
    double t0 = pl_wtime();
    pl_backend *be = op->be;
    if (op->n_rnb + op->n_snb > 0 && op->hx) {
        PL_CALL(apply_device(op, x, y));
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
