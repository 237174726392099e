/* cuda_stub.c — the CUDA entry points of spmv.h for a build without CUDA
 * (PJDS_HAVE_CUDA == 0): no devices, and creating the backend reports
 * PL_ERR_NOTSUP.  With CUDA, spmv/cuda/ defines them and this file is
 * empty. */
#include "pl_build.h"
#include "pl_error.h"
#include "spmv.h"

#if !PJDS_HAVE_CUDA
int pl_cuda_device_count(void) { return 0; }

int pl_cuda_kron_block_fits(int local_rank, int64_t n_left, int nterms)
{
    (void)local_rank;
    (void)n_left;
    (void)nterms;
    return 0;
}

int pl_backend_cuda_create(int device, pl_backend **be)
{
    (void)device;
    if (be) *be = NULL;
    return PL_ERROR(PL_ERR_NOTSUP, "built without CUDA");
}
#else
typedef int pl_cuda_stub_unused; /* ISO C forbids an empty translation unit */
#endif
