/* transport.cu — the halo transport slots (pl_halo_ops, spmv_impl.h) of
 * the cuda backend for the distributed operator: asynchronous device <->
 * pinned host copies ordered by events (MPI transport with host staging),
 * the NCCL transport (device to device,
 * [spmv] transport = nccl) and the CUDA IPC transport (copy engines write
 * straight into the peers' halo buffers, [spmv] transport = ipc).
 *
 * Streams: the backend's stream (pl_cuda_ctx.stream, cuda_impl.h) runs the
 * SpMV kernels and, in vector mode, the gather and the NCCL calls.  A
 * second non-blocking "comm" stream owned here runs the halo upload (MPI),
 * or the gather and the grouped ncclSend/ncclRecv or IPC copies (NCCL/IPC,
 * overlap/task modes) while the local kernel runs on the backend stream;
 * events order the two:
 *   backend: evX -> local kernel ......................... wait(evComm) -> remote
 *   comm:    wait(evX) -> gather -> NCCL group / copies -> evComm
 * NCCL (NVIDIA, "NCCL User Guide", point-to-point communication): one
 * communicator per operator, built from MPI (ncclGetUniqueId on rank 0,
 * MPI_Bcast of the id, ncclCommInitRank on the backend's device); sends and
 * receives of all neighbours in one ncclGroupStart/ncclGroupEnd, so they
 * progress concurrently without deadlock.  NVLink SHARP/multicast stays off:
 * NCCL_NVLS_ENABLE=0 is set (if unset) before the communicator is created.
 *
 * IPC (all halo neighbours on this node): NCCL moves the halo with kernels
 * that take SMs from the local SpMV running beside them; copy engines do
 * not.  At set-up every receiver exports its halo buffer
 * (cudaIpcGetMemHandle) and sends each sender the handle and the offset of
 * that sender's segment; the sender maps it once (cudaIpcOpenMemHandle).
 * Per apply, with zero-byte MPI messages as tokens on the operator's
 * private communicator:
 *   1. every rank tells its senders "my halo is free" (FREE: its previous
 *      apply ended with a stream synchronisation, so nothing reads it);
 *   2. for each receiver whose FREE has arrived, cudaMemcpyAsync of the
 *      segment into the receiver's halo on the comm stream, after the
 *      gather (event); the local kernel, queued on the backend stream in
 *      between, runs meanwhile;
 *   3. the host waits for its own copies (event), then tells each receiver
 *      "your segment is there" (DONE); a receiver launches its remote
 *      kernel once every DONE has arrived.
 * A rank blocks only on tokens that its peers send before they block
 * themselves, so the protocol cannot deadlock.
 *
 * Shared GPUs (PJDS_SHARE_GPUS=1, or a launcher that binds two ranks to one
 * device): NCCL refuses two ranks of a communicator on one device
 * (ncclCommInitRank: "invalid usage"), so op_build.c asks
 * the shared_device slot first; the ranks allgather their devices' UUIDs.
 * CUDA IPC between processes on one device works (the peer's buffer is
 * mapped into this process's context like one of another device).
 */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_impl.h"
#include "pl_build.h"
#include "spmv_impl.h"

#if PJDS_HAVE_NCCL
#include <nccl.h>
#endif

#define PL_IPC_TAG_SETUP 7411
#define PL_IPC_TAG_FREE 7412
#define PL_IPC_TAG_DONE 7413

/* CUDA IPC state (transport = ipc). */
typedef struct ipc_state {
    MPI_Comm comm;                /* the operator's private communicator */
    int n_rnb, n_snb;
    const int *rnb, *snb;         /* neighbour ranks, segment sizes and */
    const int *scnt, *soff;       /* offsets: the operator's arrays     */
    void **peer_base;             /* mapped halo buffers of the receivers */
    double **peer_dst;            /* where segment j goes */
    MPI_Request *free_in, *done_in, *out; /* n_snb, n_rnb, n_rnb + n_snb */
    int *ready;                   /* Testsome/Waitsome indices */
    int n_pushed;
} ipc_state;

typedef struct ipc_msg {
    cudaIpcMemHandle_t handle;
    int64_t offset, count;        /* doubles */
} ipc_msg;

struct pl_halo_xfer {
    pl_backend *be;
    int device;
    cudaStream_t main; /* the backend's stream (not owned) */
    cudaStream_t comm; /* owned */
    cudaEvent_t ev_d2h, ev_gather, ev_comm;
#if PJDS_HAVE_NCCL
    ncclComm_t nccl;
#endif
    int has_nccl;
    ipc_state *ipc;
};

#if PJDS_HAVE_NCCL
#define PL_NCCL(e)                                                                                       \
    do {                                                                                                 \
        ncclResult_t pl_nr_ = (e);                                                                       \
        if (pl_nr_ != ncclSuccess)                                                                       \
            return pl_error_set(PL_ERR_CUDA, __FILE__, __LINE__, __func__, "%s: %s", #e,                 \
                                ncclGetErrorString(pl_nr_));                                             \
    } while (0)

/* Communicator over comm on this rank's device.  Collective. */
static int nccl_init(pl_halo_xfer *x, MPI_Comm comm)
{
    int rank = 0, size = 1;
    PL_MPI(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
    PL_MPI(MPI_Comm_size(comm, &size), "MPI_Comm_size");
    /* never NVLink multicast (NVLS): keep a value the user set explicitly */
    setenv("NCCL_NVLS_ENABLE", "0", 0);
    ncclUniqueId id;
    int e = ncclSuccess;
    if (rank == 0) e = ncclGetUniqueId(&id);
    /* rank 0's failure must not leave the others waiting in the Bcast */
    int ok = e == ncclSuccess, all = 0;
    PL_MPI(MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, comm), "MPI_Allreduce");
    if (!all) {
        if (rank == 0) PL_NCCL((ncclResult_t)e);
        return PL_ERROR(PL_ERR_CUDA, "ncclGetUniqueId failed on rank 0");
    }
    PL_MPI(MPI_Bcast(&id, (int)sizeof id, MPI_BYTE, 0, comm), "MPI_Bcast of the NCCL id");
    PL_CUDA(cudaSetDevice(x->device));
    PL_NCCL(ncclCommInitRank(&x->nccl, size, id, rank));
    x->has_nccl = 1;
    return PL_OK;
}
#endif

static int halo_create(pl_backend *be, int nccl, MPI_Comm comm, pl_halo_xfer **out)
{
    *out = NULL;
    PL_CHECK(be && be->name && !strcmp(be->name, "cuda") && be->ctx, PL_ERR_ARG, "not a CUDA backend");
#if !PJDS_HAVE_NCCL
    PL_CHECK(!nccl, PL_ERR_INPUT,
             "transport = nccl, but this build has no NCCL (nccl.h/libnccl not found at configure "
             "time): use transport = mpi");
    (void)comm;
#endif
    pl_halo_xfer *x = (pl_halo_xfer *)calloc(1, sizeof *x);
    PL_CHECK(x, PL_ERR_MEM, "out of host memory");
    pl_cuda_ctx *cx = pl_cuda_ctx_of(be);
    x->be = be;
    x->device = cx->device;
    x->main = cx->stream;
    *out = x; /* from here on halo_destroy cleans up */
    PL_CUDA(cudaSetDevice(x->device));
    PL_CUDA(cudaStreamCreateWithFlags(&x->comm, cudaStreamNonBlocking));
    PL_CUDA(cudaEventCreateWithFlags(&x->ev_d2h, cudaEventDisableTiming));
    PL_CUDA(cudaEventCreateWithFlags(&x->ev_gather, cudaEventDisableTiming));
    PL_CUDA(cudaEventCreateWithFlags(&x->ev_comm, cudaEventDisableTiming));
#if PJDS_HAVE_NCCL
    if (nccl) PL_CALL(nccl_init(x, comm));
#endif
    return PL_OK;
}

static void halo_destroy(pl_halo_xfer **px)
{
    if (!px || !*px) return;
    pl_halo_xfer *x = *px;
    (void)cudaSetDevice(x->device);
    if (x->comm) (void)cudaStreamSynchronize(x->comm);
    if (x->ipc) {
        ipc_state *p = x->ipc;
        for (int j = 0; j < p->n_snb; j++)
            if (p->peer_base && p->peer_base[j]) (void)cudaIpcCloseMemHandle(p->peer_base[j]);
        void *ptrs[] = {p->peer_base, p->peer_dst, p->free_in, p->done_in, p->out, p->ready};
        for (size_t i = 0; i < sizeof ptrs / sizeof ptrs[0]; i++) free(ptrs[i]);
        free(p);
    }
#if PJDS_HAVE_NCCL
    if (x->has_nccl) (void)ncclCommDestroy(x->nccl);
#endif
    if (x->ev_d2h) (void)cudaEventDestroy(x->ev_d2h);
    if (x->ev_gather) (void)cudaEventDestroy(x->ev_gather);
    if (x->ev_comm) (void)cudaEventDestroy(x->ev_comm);
    if (x->comm) (void)cudaStreamDestroy(x->comm);
    free(x);
    *px = NULL;
}

/* The comm stream waits for the backend stream's work so far (event). */
static int comm_after_main(pl_halo_xfer *x)
{
    PL_CUDA(cudaEventRecord(x->ev_gather, x->main));
    PL_CUDA(cudaStreamWaitEvent(x->comm, x->ev_gather, 0));
    return PL_OK;
}

static int halo_d2h_start(pl_halo_xfer *x, double *h_dst, const double *d_src, size_t n)
{
    if (n) PL_CUDA(cudaMemcpyAsync(h_dst, d_src, n * sizeof(double), cudaMemcpyDeviceToHost, x->main));
    PL_CUDA(cudaEventRecord(x->ev_d2h, x->main));
    x->be->bytes_d2h += (double)(n * sizeof(double));
    return PL_OK;
}

static int halo_d2h_wait(pl_halo_xfer *x)
{
    PL_CUDA(cudaEventSynchronize(x->ev_d2h));
    return PL_OK;
}

static int halo_h2d(pl_halo_xfer *x, double *d_dst, const double *h_src, size_t n)
{
    if (n == 0) return PL_OK;
    PL_CUDA(cudaMemcpyAsync(d_dst, h_src, n * sizeof(double), cudaMemcpyHostToDevice, x->comm));
    PL_CUDA(cudaEventRecord(x->ev_comm, x->comm));
    PL_CUDA(cudaStreamWaitEvent(x->main, x->ev_comm, 0));
    x->be->bytes_h2d += (double)(n * sizeof(double));
    return PL_OK;
}

static int halo_gather_side(pl_halo_xfer *x, size_t n, const int32_t *idx, const double *src, double *buf)
{
    PL_CALL(comm_after_main(x));
    PL_CALL(pl_cuda_gather_on(x->comm, n, idx, src, buf));
    return PL_OK;
}

static int halo_join(pl_halo_xfer *x)
{
    PL_CUDA(cudaStreamWaitEvent(x->main, x->ev_comm, 0));
    return PL_OK;
}

static int halo_nccl_exchange(pl_halo_xfer *x, int on_comm_stream, int n_rnb, const int *rnb, const int *rcnt,
                                    const int *roff, double *d_halo, int n_snb, const int *snb, const int *scnt,
                                    const int *soff, const double *d_send)
{
#if PJDS_HAVE_NCCL
    PL_CHECK(x->has_nccl, PL_ERR_ARG, "halo_nccl_exchange: no NCCL communicator");
    cudaStream_t s = x->main;
    if (on_comm_stream) {
        PL_CALL(comm_after_main(x));
        s = x->comm;
    }
    PL_NCCL(ncclGroupStart());
    ncclResult_t e = ncclSuccess;
    for (int i = 0; i < n_rnb && e == ncclSuccess; i++)
        e = ncclRecv(d_halo + roff[i], (size_t)rcnt[i], ncclDouble, rnb[i], x->nccl, s);
    for (int i = 0; i < n_snb && e == ncclSuccess; i++)
        e = ncclSend(d_send + soff[i], (size_t)scnt[i], ncclDouble, snb[i], x->nccl, s);
    ncclResult_t e2 = ncclGroupEnd(); /* always close the group */
    PL_NCCL(e);
    PL_NCCL(e2);
    if (on_comm_stream) PL_CUDA(cudaEventRecord(x->ev_comm, x->comm));
    return PL_OK;
#else
    (void)x, (void)on_comm_stream, (void)n_rnb, (void)rnb, (void)rcnt, (void)roff, (void)d_halo, (void)n_snb,
        (void)snb, (void)scnt, (void)soff, (void)d_send;
    return PL_ERROR(PL_ERR_NOTSUP, "built without NCCL");
#endif
}

/* ---- CUDA IPC ------------------------------------------------------------ */

/* Node of this rank: the lowest rank of comm on its shared-memory node. */
static int node_leader(MPI_Comm comm, int *leader)
{
    MPI_Comm node = MPI_COMM_NULL;
    int rank = 0;
    PL_MPI(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
    PL_MPI(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node), "MPI_Comm_split_type");
    int e = MPI_Allreduce(&rank, leader, 1, MPI_INT, MPI_MIN, node);
    MPI_Comm_free(&node);
    PL_MPI(e, "MPI_Allreduce of the node leader");
    return PL_OK;
}

static int halo_ipc_possible(MPI_Comm comm, int n_rnb, const int *rnb, int n_snb, const int *snb, int *ok)
{
    int size = 1, leader = 0, mine = 1, all = 0;
    PL_MPI(MPI_Comm_size(comm, &size), "MPI_Comm_size");
    PL_CALL(node_leader(comm, &leader));
    int *leaders = (int *)malloc((size_t)size * sizeof *leaders); /* O(ranks) */
    PL_CHECK(leaders, PL_ERR_MEM, "out of host memory");
    int e = MPI_Allgather(&leader, 1, MPI_INT, leaders, 1, MPI_INT, comm);
    if (e == MPI_SUCCESS) {
        for (int i = 0; i < n_rnb; i++) mine &= leaders[rnb[i]] == leader;
        for (int j = 0; j < n_snb; j++) mine &= leaders[snb[j]] == leader;
        e = MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, comm);
    }
    free(leaders);
    PL_MPI(e, "MPI_Allgather/Allreduce of the nodes");
    *ok = all;
    return PL_OK;
}

static int halo_ipc_setup(pl_halo_xfer *x, MPI_Comm comm, double *d_halo, int n_rnb, const int *rnb,
                                const int *rcnt, const int *roff, int n_snb, const int *snb, const int *scnt,
                                const int *soff)
{
    PL_CHECK(!x->ipc, PL_ERR_ARG, "halo_ipc_setup called twice");
    ipc_state *p = (ipc_state *)calloc(1, sizeof *p);
    PL_CHECK(p, PL_ERR_MEM, "out of host memory");
    x->ipc = p; /* halo_destroy frees it from here on */
    p->comm = comm;
    p->n_rnb = n_rnb;
    p->n_snb = n_snb;
    p->rnb = rnb;
    p->snb = snb;
    p->scnt = scnt;
    p->soff = soff;
    int nr = n_rnb ? n_rnb : 1, ns = n_snb ? n_snb : 1;
    p->peer_base = (void **)calloc((size_t)ns, sizeof *p->peer_base);
    p->peer_dst = (double **)calloc((size_t)ns, sizeof *p->peer_dst);
    p->free_in = (MPI_Request *)calloc((size_t)ns, sizeof *p->free_in);
    p->done_in = (MPI_Request *)calloc((size_t)nr, sizeof *p->done_in);
    p->out = (MPI_Request *)calloc((size_t)(nr + ns), sizeof *p->out);
    p->ready = (int *)calloc((size_t)ns, sizeof *p->ready);
    PL_CHECK(p->peer_base && p->peer_dst && p->free_in && p->done_in && p->out &&
                 p->ready,
             PL_ERR_MEM, "out of host memory");
    PL_CUDA(cudaSetDevice(x->device));
    /* receivers export their halo buffer (a cudaMalloc base: cu_vec_alloc) */
    ipc_msg *mine = (ipc_msg *)calloc((size_t)nr, sizeof *mine), *theirs = (ipc_msg *)calloc((size_t)ns, sizeof *theirs);
    MPI_Request *rq = (MPI_Request *)calloc((size_t)(nr + ns), sizeof *rq);
    if (!mine || !theirs || !rq) {
        free(mine), free(theirs), free(rq);
        return PL_ERROR(PL_ERR_MEM, "out of host memory");
    }
    int rc = PL_OK;
    cudaIpcMemHandle_t h;
    memset(&h, 0, sizeof h);
    if (n_rnb > 0) {
        cudaError_t ce = cudaIpcGetMemHandle(&h, d_halo);
        if (ce != cudaSuccess)
            rc = pl_error_set(PL_ERR_CUDA, __FILE__, __LINE__, __func__, "cudaIpcGetMemHandle of the halo: %s (%s)",
                              cudaGetErrorName(ce), cudaGetErrorString(ce));
    }
    /* a failed export still sends (count -1), so no peer waits forever */
    int e = MPI_SUCCESS;
    for (int j = 0; j < n_snb && e == MPI_SUCCESS; j++)
        e = MPI_Irecv(&theirs[j], (int)sizeof(ipc_msg), MPI_BYTE, snb[j], PL_IPC_TAG_SETUP, comm, &rq[j]);
    for (int i = 0; i < n_rnb && e == MPI_SUCCESS; i++) {
        mine[i].handle = h;
        mine[i].offset = roff[i];
        mine[i].count = rc == PL_OK ? rcnt[i] : -1;
        e = MPI_Isend(&mine[i], (int)sizeof(ipc_msg), MPI_BYTE, rnb[i], PL_IPC_TAG_SETUP, comm, &rq[n_snb + i]);
    }
    if (e == MPI_SUCCESS) e = MPI_Waitall(n_snb + n_rnb, rq, MPI_STATUSES_IGNORE);
    free(mine);
    free(rq);
    if (e != MPI_SUCCESS) {
        free(theirs);
        return PL_ERROR(PL_ERR_MPI, "MPI exchange of the IPC handles failed");
    }
    for (int j = 0; j < n_snb && rc == PL_OK; j++) {
        if (theirs[j].count < 0) {
            rc = PL_ERROR(PL_ERR_CUDA, "rank %d could not export its halo buffer", snb[j]);
            break;
        }
        if (theirs[j].count != scnt[j]) {
            rc = PL_ERROR(PL_ERR_INTERNAL, "rank %d expects %lld halo entries, this rank sends %d", snb[j],
                          (long long)theirs[j].count, scnt[j]);
            break;
        }
        cudaError_t ce = cudaIpcOpenMemHandle(&p->peer_base[j], theirs[j].handle, cudaIpcMemLazyEnablePeerAccess);
        if (ce != cudaSuccess) {
            p->peer_base[j] = NULL;
            rc = pl_error_set(PL_ERR_CUDA, __FILE__, __LINE__, __func__,
                              "cudaIpcOpenMemHandle of rank %d's halo: %s (%s): use transport = nccl or mpi", snb[j],
                              cudaGetErrorName(ce), cudaGetErrorString(ce));
            break;
        }
        p->peer_dst[j] = (double *)p->peer_base[j] + theirs[j].offset;
    }
    free(theirs);
    return rc;
}

/* Push segment j into its receiver's halo on the comm stream. */
static int ipc_push(pl_halo_xfer *x, const double *d_send, int j)
{
    ipc_state *p = x->ipc;
    if (p->scnt[j])
        PL_CUDA(cudaMemcpyAsync(p->peer_dst[j], d_send + p->soff[j], (size_t)p->scnt[j] * sizeof(double),
                                cudaMemcpyDefault, x->comm));
    p->n_pushed++;
    return PL_OK;
}

/* Push every segment whose receiver said FREE; block = wait for one at least. */
static int ipc_push_ready(pl_halo_xfer *x, const double *d_send, int block)
{
    ipc_state *p = x->ipc;
    int cnt = 0;
    int e = block ? MPI_Waitsome(p->n_snb, p->free_in, &cnt, p->ready, MPI_STATUSES_IGNORE)
                  : MPI_Testsome(p->n_snb, p->free_in, &cnt, p->ready, MPI_STATUSES_IGNORE);
    PL_MPI(e, "MPI_Testsome/Waitsome of the IPC tokens");
    for (int k = 0; k < cnt && cnt != MPI_UNDEFINED; k++) PL_CALL(ipc_push(x, d_send, p->ready[k]));
    return PL_OK;
}

static int halo_ipc_start(pl_halo_xfer *x, const double *d_send)
{
    ipc_state *p = x->ipc;
    PL_CHECK(p, PL_ERR_ARG, "halo_ipc_start: no IPC set-up");
    /* the copies read the send buffer after the gather on the backend stream */
    PL_CALL(comm_after_main(x));
    int e = MPI_SUCCESS;
    for (int j = 0; j < p->n_snb && e == MPI_SUCCESS; j++)
        e = MPI_Irecv(NULL, 0, MPI_BYTE, p->snb[j], PL_IPC_TAG_FREE, p->comm, &p->free_in[j]);
    for (int i = 0; i < p->n_rnb && e == MPI_SUCCESS; i++)
        e = MPI_Irecv(NULL, 0, MPI_BYTE, p->rnb[i], PL_IPC_TAG_DONE, p->comm, &p->done_in[i]);
    for (int i = 0; i < p->n_rnb && e == MPI_SUCCESS; i++)
        e = MPI_Isend(NULL, 0, MPI_BYTE, p->rnb[i], PL_IPC_TAG_FREE, p->comm, &p->out[i]);
    PL_MPI(e, "posting the IPC tokens");
    p->n_pushed = 0;
    if (p->n_snb) PL_CALL(ipc_push_ready(x, d_send, 0));
    return PL_OK;
}

static int halo_ipc_finish(pl_halo_xfer *x, const double *d_send)
{
    ipc_state *p = x->ipc;
    PL_CHECK(p, PL_ERR_ARG, "halo_ipc_finish: no IPC set-up");
    while (p->n_pushed < p->n_snb) PL_CALL(ipc_push_ready(x, d_send, 1));
    /* own copies landed -> DONE to the receivers */
    PL_CUDA(cudaEventRecord(x->ev_comm, x->comm));
    PL_CUDA(cudaEventSynchronize(x->ev_comm));
    int e = MPI_SUCCESS;
    for (int j = 0; j < p->n_snb && e == MPI_SUCCESS; j++)
        e = MPI_Isend(NULL, 0, MPI_BYTE, p->snb[j], PL_IPC_TAG_DONE, p->comm, &p->out[p->n_rnb + j]);
    PL_MPI(e, "MPI_Isend of the IPC DONE tokens");
    /* every sender's copy into this rank's halo landed */
    PL_MPI(MPI_Waitall(p->n_rnb, p->done_in, MPI_STATUSES_IGNORE), "MPI_Waitall of the IPC DONE tokens");
    PL_MPI(MPI_Waitall(p->n_rnb + p->n_snb, p->out, MPI_STATUSES_IGNORE), "MPI_Waitall of the IPC token sends");
    return PL_OK;
}

/* ---- ranks sharing a GPU -------------------------------------------------- */

/* What each rank contributes: its device's UUID (unique across nodes) and
 * PCI bus id (for the message). */
typedef struct gpu_ident {
    unsigned char uuid[16];
    char busid[32];
    int rank;
} gpu_ident;

static int ident_cmp(const void *x, const void *y)
{
    const gpu_ident *p = (const gpu_ident *)x, *q = (const gpu_ident *)y;
    int c = memcmp(p->uuid, q->uuid, sizeof p->uuid);
    return c ? c : (p->rank > q->rank) - (p->rank < q->rank);
}

static int halo_shared_device(pl_backend *be, MPI_Comm comm, int *a, int *b, char *id, size_t idlen)
{
    *a = *b = -1;
    if (id && idlen) id[0] = 0;
    PL_CHECK(be && be->name && !strcmp(be->name, "cuda") && be->ctx, PL_ERR_ARG, "not a CUDA backend");
    int rank = 0, size = 1;
    PL_MPI(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
    PL_MPI(MPI_Comm_size(comm, &size), "MPI_Comm_size");
    gpu_ident mine;
    memset(&mine, 0, sizeof mine);
    mine.rank = rank;
    int dev = pl_cuda_ctx_of(be)->device, ok = 0, all_ok = 0;
    cudaDeviceProp prop;
    cudaError_t ce = cudaGetDeviceProperties(&prop, dev);
    if (ce == cudaSuccess) ce = cudaDeviceGetPCIBusId(mine.busid, (int)sizeof mine.busid - 1, dev);
    if (ce == cudaSuccess) memcpy(mine.uuid, prop.uuid.bytes, sizeof mine.uuid);
    gpu_ident *all = (gpu_ident *)malloc((size_t)size * sizeof *all); /* O(ranks) */
    ok = ce == cudaSuccess && all;
    /* a local failure must not leave the others waiting in the Allgather */
    int e = MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, comm);
    if (e == MPI_SUCCESS && all_ok)
        e = MPI_Allgather(&mine, (int)sizeof mine, MPI_BYTE, all, (int)sizeof mine, MPI_BYTE, comm);
    if (e != MPI_SUCCESS || !all_ok) free(all);
    PL_MPI(e, "MPI_Allreduce/Allgather of the GPU ids");
    if (!all_ok) {
        if (ce != cudaSuccess) {
            (void)cudaGetLastError();
            return PL_ERROR(PL_ERR_CUDA, "identifying GPU %d: %s (%s)", dev, cudaGetErrorName(ce), cudaGetErrorString(ce));
        }
        PL_CHECK(ok, PL_ERR_MEM, "out of host memory");
        return PL_ERROR(PL_ERR_CUDA, "another rank could not identify its GPU");
    }
    /* the same data everywhere, so every rank finds the same pair: sorted
     * by (UUID, rank), each GPU's ranks are adjacent and its first two are
     * its lowest; report the GPU with the lowest first rank */
    qsort(all, (size_t)size, sizeof *all, ident_cmp);
    int at = -1;
    for (int i = 0; i + 1 < size; i++) {
        if (memcmp(all[i].uuid, all[i + 1].uuid, sizeof all[i].uuid)) continue;
        if (*a < 0 || all[i].rank < *a) {
            *a = all[i].rank;
            *b = all[i + 1].rank;
            at = i;
        }
        while (i + 1 < size && !memcmp(all[i].uuid, all[i + 1].uuid, sizeof all[i].uuid)) i++; /* rest of the group */
    }
    if (at >= 0 && id && idlen) {
        const unsigned char *u = all[at].uuid;
        snprintf(id, idlen, "%s (GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x)",
                 all[at].busid, u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12],
                 u[13], u[14], u[15]);
    }
    free(all);
    return PL_OK;
}

extern "C" const pl_halo_ops pl_cuda_halo_ops = {
    halo_shared_device, halo_ipc_possible, halo_create,    halo_destroy, halo_ipc_setup,
    halo_gather_side,   halo_d2h_start,    halo_d2h_wait,  halo_h2d,     halo_nccl_exchange,
    halo_join,          halo_ipc_start,    halo_ipc_finish,
};
