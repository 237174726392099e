/* staging.cu — the upload of a matrix's entries through page-locked
 * staging buffers (mat_create, mat_create_fill, cmat_create,
 * cmat_create_fill).
 *
 * A copy from pageable host memory runs through the driver's bounce buffer
 * at a few GB/s (HMEp's 280 MB compressed matrix: 73 ms on the H100, about
 * 3.8 GB/s); from page-locked memory it runs at the link's speed (25-55
 * GB/s).  Two sets of staging buffers of a bounded size are used in turn:
 * the host writes the entries of the next chunk range into one (fill: it
 * may compute them, so their production overlaps the transfer) while
 * cudaMemcpyAsync copies the other to the device on the backend's stream; an
 * event per set tells when it may be written again.  One
 * cudaStreamSynchronize at the end (it also covers the copies queued on the
 * stream before); the buffers are freed on every path.
 */
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdlib.h>

#include "cuda_impl.h"

/* (cuda_impl.h) */
extern "C" int pl_cuda_staged_upload(pl_cuda_ctx *cx, const int64_t *chunk_start, int64_t nchunks, int64_t stage,
                                     int np, const size_t *esize, void *const *dst, pl_cuda_stage_fill fill, void *arg)
{
    PL_CHECK(np >= 1 && np <= PL_STAGE_PLANES && stage >= 1 && nchunks >= 0, PL_ERR_ARG,
             "staged upload: bad arguments");
    const int64_t nent = nchunks ? chunk_start[nchunks] - chunk_start[0] : 0;
    if (nent == 0) return PL_OK;
    /* at least the widest chunk, at most the whole */
    for (int64_t c = 0; c < nchunks; c++)
        if (chunk_start[c + 1] - chunk_start[c] > stage) stage = chunk_start[c + 1] - chunk_start[c];
    if (stage > nent) stage = nent;
    const int64_t stride = (stage + 15) & ~(int64_t)15; /* planes 16-byte aligned */
    size_t per = 0;
    for (int q = 0; q < np; q++) per += esize[q] * (size_t)stride;
    char *buf[2] = {NULL, NULL};
    cudaEvent_t ev[2] = {NULL, NULL};
    int used[2] = {0, 0}, rc = PL_OK;
    for (int b = 0; b < 2 && rc == PL_OK; b++) {
        cudaError_t ce = cudaMallocHost((void **)&buf[b], per);
        if (ce != cudaSuccess) buf[b] = NULL;
        else ce = cudaEventCreateWithFlags(&ev[b], cudaEventDisableTiming);
        if (ce != cudaSuccess) {
            (void)cudaGetLastError();
            rc = PL_ERROR(PL_ERR_MEM, "cannot allocate %.1f MiB of page-locked staging for the matrix upload: %s",
                          (double)per / 1048576.0, cudaGetErrorString(ce));
        }
    }
    int64_t c = 0;
    for (int b = 0; rc == PL_OK && c < nchunks; b ^= 1) {
        int64_t c1 = c + 1;
        while (c1 < nchunks && chunk_start[c1 + 1] - chunk_start[c] <= stage) c1++;
        if (used[b]) {
            cudaError_t ce = cudaEventSynchronize(ev[b]); /* its last copy is done */
            if (ce != cudaSuccess) {
                rc = PL_ERROR(PL_ERR_CUDA, "waiting for a matrix upload: %s", cudaGetErrorString(ce));
                break;
            }
        }
        void *pl[PL_STAGE_PLANES];
        size_t at = 0;
        for (int q = 0; q < np; q++) {
            pl[q] = buf[b] + at;
            at += esize[q] * (size_t)stride;
        }
        rc = fill(arg, c, c1, pl);
        if (rc != PL_OK) break;
        const int64_t off = chunk_start[c] - chunk_start[0], cnt = chunk_start[c1] - chunk_start[c];
        cudaError_t ce = cudaSuccess;
        for (int q = 0; q < np && ce == cudaSuccess && cnt > 0; q++)
            ce = cudaMemcpyAsync((char *)dst[q] + (size_t)off * esize[q], pl[q], (size_t)cnt * esize[q],
                                 cudaMemcpyHostToDevice, cx->stream);
        if (ce == cudaSuccess && cnt > 0) ce = cudaEventRecord(ev[b], cx->stream);
        if (ce != cudaSuccess) {
            rc = PL_ERROR(PL_ERR_CUDA, "matrix upload (cudaMemcpyAsync): %s", cudaGetErrorString(ce));
            break;
        }
        used[b] = cnt > 0;
        c = c1;
    }
    /* the staging buffers may be freed only after the copies */
    cudaError_t se = cudaStreamSynchronize(cx->stream);
    for (int b = 0; b < 2; b++) {
        if (buf[b]) (void)cudaFreeHost(buf[b]);
        if (ev[b]) (void)cudaEventDestroy(ev[b]);
    }
    PL_CALL(rc);
    PL_CUDA(se);
    return PL_OK;
}
