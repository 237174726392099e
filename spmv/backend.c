/* backend.c — the backend factory (pl_backend_create: cpu, cuda or auto)
 * and pl_backend_destroy.  Knows the backends only through their create
 * functions and pl_cuda_device_count (spmv/cuda, or cuda_stub.c). */
#include "pl_build.h"
#include "pl_error.h"
#include "spmv.h"

int pl_backend_create(int kind, int local_rank, pl_backend **be)
{
    *be = NULL;
    switch (kind) {
    case PL_BACKEND_CPU: PL_CALL(pl_backend_cpu_create(be)); return PL_OK;
    case PL_BACKEND_CUDA: {
        PL_CHECK(PJDS_HAVE_CUDA, PL_ERR_INPUT,
                 "backend = cuda, but this build has no CUDA backend (rebuild with -DPJDS_CUDA=ON or use backend = cpu)");
        int nd = pl_cuda_device_count();
        PL_CHECK(nd > 0, PL_ERR_INPUT, "backend = cuda, but no CUDA device is visible (use backend = cpu or auto)");
        PL_CALL(pl_backend_cuda_create(local_rank % nd, be));
        return PL_OK;
    }
    case PL_BACKEND_AUTO: {
        int nd = pl_cuda_device_count();
        if (nd > 0) {
            PL_CALL(pl_backend_cuda_create(local_rank % nd, be));
        } else {
            PL_CALL(pl_backend_cpu_create(be));
        }
        return PL_OK;
    }
    default: return PL_ERROR(PL_ERR_ARG, "unknown backend kind %d", kind);
    }
}

void pl_backend_destroy(pl_backend **be)
{
    if (!be || !*be) return;
    if ((*be)->destroy)
        (*be)->destroy(be);
    *be = NULL;
}
