/* transport_nccl.cu — halo transfers of the distributed operator (op.c) on
 * the cuda backend: asynchronous device <-> pinned host copies ordered by
 * events (MPI transport with host staging), and the NCCL transport (device
 * to device, [spmv] transport = nccl).
 *
 * Streams: the backend's stream (pl_cuda_ctx.stream, cuda_impl.h) runs the
 * gather, the SpMV kernels and, in vector mode, the NCCL calls.  A second
 * non-blocking "comm" stream owned here runs the halo upload (MPI) or the
 * grouped ncclSend/ncclRecv (NCCL, overlap/task modes) while the local
 * kernel runs on the backend stream; events order the two:
 *   backend: gather -> evGather -> local kernel ........ wait(evComm) -> remote
 *   comm:             wait(evGather) -> NCCL group -> evComm
 * NCCL (NVIDIA, "NCCL User Guide", point-to-point communication): one
 * communicator per operator, built from MPI (ncclGetUniqueId on rank 0,
 * MPI_Bcast of the id, ncclCommInitRank on the backend's device); sends and
 * receives of all neighbours in one ncclGroupStart/ncclGroupEnd, so they
 * progress concurrently without deadlock.  NVLink SHARP/multicast stays off:
 * NCCL_NVLS_ENABLE=0 is set (if unset) before the communicator is created.
 */
#include <cuda_runtime.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_impl.h"
#include "pl_build.h"
#include "spmv_impl.h"

#if PJDS_HAVE_NCCL
#include <nccl.h>
#endif

struct pl_gpu_xfer {
    pl_backend *be;
    int device;
    cudaStream_t main; /* the backend's stream (not owned) */
    cudaStream_t comm; /* owned */
    cudaEvent_t ev_d2h, ev_gather, ev_comm;
#if PJDS_HAVE_NCCL
    ncclComm_t nccl;
#endif
    int has_nccl;
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
static int nccl_init(pl_gpu_xfer *x, MPI_Comm comm)
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

extern "C" int pl_gpu_xfer_create(pl_backend *be, int nccl, MPI_Comm comm, pl_gpu_xfer **out)
{
    *out = NULL;
    PL_CHECK(be && be->name && !strcmp(be->name, "cuda") && be->ctx, PL_ERR_ARG, "not a CUDA backend");
#if !PJDS_HAVE_NCCL
    PL_CHECK(!nccl, PL_ERR_INPUT,
             "[spmv] transport = nccl, but this build has no NCCL (nccl.h/libnccl not found at configure "
             "time): use transport = mpi");
    (void)comm;
#endif
    pl_gpu_xfer *x = (pl_gpu_xfer *)calloc(1, sizeof *x);
    PL_CHECK(x, PL_ERR_MEM, "out of host memory");
    pl_cuda_ctx *cx = pl_cuda_ctx_of(be);
    x->be = be;
    x->device = cx->device;
    x->main = cx->stream;
    *out = x; /* from here on pl_gpu_xfer_destroy cleans up */
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

extern "C" void pl_gpu_xfer_destroy(pl_gpu_xfer **px)
{
    if (!px || !*px) return;
    pl_gpu_xfer *x = *px;
    (void)cudaSetDevice(x->device);
    if (x->comm) (void)cudaStreamSynchronize(x->comm);
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

extern "C" int pl_gpu_d2h_async(pl_gpu_xfer *x, double *h_dst, const double *d_src, size_t n)
{
    if (n) PL_CUDA(cudaMemcpyAsync(h_dst, d_src, n * sizeof(double), cudaMemcpyDeviceToHost, x->main));
    PL_CUDA(cudaEventRecord(x->ev_d2h, x->main));
    x->be->bytes_d2h += (double)(n * sizeof(double));
    return PL_OK;
}

extern "C" int pl_gpu_d2h_wait(pl_gpu_xfer *x)
{
    PL_CUDA(cudaEventSynchronize(x->ev_d2h));
    return PL_OK;
}

extern "C" int pl_gpu_h2d_async(pl_gpu_xfer *x, double *d_dst, const double *h_src, size_t n)
{
    if (n == 0) return PL_OK;
    PL_CUDA(cudaMemcpyAsync(d_dst, h_src, n * sizeof(double), cudaMemcpyHostToDevice, x->comm));
    PL_CUDA(cudaEventRecord(x->ev_comm, x->comm));
    PL_CUDA(cudaStreamWaitEvent(x->main, x->ev_comm, 0));
    x->be->bytes_h2d += (double)(n * sizeof(double));
    return PL_OK;
}

extern "C" int pl_gpu_join(pl_gpu_xfer *x)
{
    PL_CUDA(cudaStreamWaitEvent(x->main, x->ev_comm, 0));
    return PL_OK;
}

extern "C" int pl_gpu_nccl_exchange(pl_gpu_xfer *x, int on_comm_stream, int n_rnb, const int *rnb, const int *rcnt,
                                    const int *roff, double *d_halo, int n_snb, const int *snb, const int *scnt,
                                    const int *soff, const double *d_send)
{
#if PJDS_HAVE_NCCL
    PL_CHECK(x->has_nccl, PL_ERR_ARG, "pl_gpu_nccl_exchange: no NCCL communicator");
    cudaStream_t s = x->main;
    if (on_comm_stream) {
        PL_CUDA(cudaEventRecord(x->ev_gather, x->main));
        PL_CUDA(cudaStreamWaitEvent(x->comm, x->ev_gather, 0));
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
