/* cuda_stub.c — the CUDA entry points of spmv.h for a build without CUDA
 * (PJDS_HAVE_CUDA == 0): no devices, and creating the backend reports
 * PL_ERR_NOTSUP; the GPU halo transfers of spmv_impl.h (never reached: op.c
 * calls them for the cuda backend only) report PL_ERR_NOTSUP too.  With
 * CUDA, spmv/cuda/ defines them and this file is empty. */
#include "pl_build.h"
#include "pl_error.h"
#include "spmv.h"
#include "spmv_impl.h"

#if !PJDS_HAVE_CUDA
int pl_cuda_device_count(void) { return 0; }

int pl_backend_cuda_create(int device, pl_backend **be)
{
    (void)device;
    if (be) *be = NULL;
    return PL_ERROR(PL_ERR_NOTSUP, "built without CUDA");
}

int pl_gpu_xfer_create(pl_backend *be, int nccl, MPI_Comm comm, pl_gpu_xfer **x)
{
    (void)be, (void)nccl, (void)comm;
    if (x) *x = NULL;
    return PL_ERROR(PL_ERR_NOTSUP, "built without CUDA");
}

void pl_gpu_xfer_destroy(pl_gpu_xfer **x)
{
    if (x) *x = NULL;
}

int pl_gpu_d2h_async(pl_gpu_xfer *x, double *h_dst, const double *d_src, size_t n)
{
    (void)x, (void)h_dst, (void)d_src, (void)n;
    return PL_ERROR(PL_ERR_NOTSUP, "built without CUDA");
}

int pl_gpu_d2h_wait(pl_gpu_xfer *x)
{
    (void)x;
    return PL_ERROR(PL_ERR_NOTSUP, "built without CUDA");
}

int pl_gpu_h2d_async(pl_gpu_xfer *x, double *d_dst, const double *h_src, size_t n)
{
    (void)x, (void)d_dst, (void)h_src, (void)n;
    return PL_ERROR(PL_ERR_NOTSUP, "built without CUDA");
}

int pl_gpu_nccl_exchange(pl_gpu_xfer *x, int on_comm_stream, int n_rnb, const int *rnb, const int *rcnt,
                         const int *roff, double *d_halo, int n_snb, const int *snb, const int *scnt,
                         const int *soff, const double *d_send)
{
    (void)x, (void)on_comm_stream, (void)n_rnb, (void)rnb, (void)rcnt, (void)roff, (void)d_halo, (void)n_snb,
        (void)snb, (void)scnt, (void)soff, (void)d_send;
    return PL_ERROR(PL_ERR_NOTSUP, "built without CUDA");
}

int pl_gpu_gather_side(pl_gpu_xfer *x, size_t n, const int32_t *idx, const double *src, double *buf)
{
    (void)x, (void)n, (void)idx, (void)src, (void)buf;
    return PL_ERROR(PL_ERR_NOTSUP, "built without CUDA");
}

int pl_gpu_join(pl_gpu_xfer *x)
{
    (void)x;
    return PL_ERROR(PL_ERR_NOTSUP, "built without CUDA");
}

int pl_gpu_ipc_possible(MPI_Comm comm, int n_rnb, const int *rnb, int n_snb, const int *snb, int *ok)
{
    (void)comm, (void)n_rnb, (void)rnb, (void)n_snb, (void)snb;
    if (ok) *ok = 0;
    return PL_ERROR(PL_ERR_NOTSUP, "built without CUDA");
}

int pl_gpu_ipc_setup(pl_gpu_xfer *x, MPI_Comm comm, double *d_halo, int n_rnb, const int *rnb, const int *rcnt,
                     const int *roff, int n_snb, const int *snb, const int *scnt, const int *soff)
{
    (void)x, (void)comm, (void)d_halo, (void)n_rnb, (void)rnb, (void)rcnt, (void)roff, (void)n_snb, (void)snb,
        (void)scnt, (void)soff;
    return PL_ERROR(PL_ERR_NOTSUP, "built without CUDA");
}

int pl_gpu_ipc_start(pl_gpu_xfer *x, const double *d_send)
{
    (void)x, (void)d_send;
    return PL_ERROR(PL_ERR_NOTSUP, "built without CUDA");
}

int pl_gpu_ipc_finish(pl_gpu_xfer *x, const double *d_send)
{
    (void)x, (void)d_send;
    return PL_ERROR(PL_ERR_NOTSUP, "built without CUDA");
}

int pl_gpu_shared_device(pl_backend *be, MPI_Comm comm, int *a, int *b, char *id, size_t idlen)
{
    (void)be, (void)comm;
    if (a) *a = -1;
    if (b) *b = -1;
    if (id && idlen) id[0] = 0;
    return PL_ERROR(PL_ERR_NOTSUP, "built without CUDA");
}
#else
typedef int pl_cuda_stub_unused; /* ISO C forbids an empty translation unit */
#endif
