/* cuda_bench.cu — the entry points of pl_cuda_bench.h for pjds-bench and the
 * GPU tests: kernel variants (pJDS and compressed), block mode, event
 * timing, device name, copy bandwidth.  The backend itself reads the default
 * variant from here.
 */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_impl.h"
#include "pl_cuda_bench.h"

/* Chosen from the first H100 sweep (notes/gpu-notes.md, HMEp): chunk-width
 * bound, 4 entries in flight, matrix loads L2 evict_first: fastest at every
 * sort window (0.4081 ms = 92 % of the floor at sort_window 65536, 0.4691 ms
 * at sigma = all vs 0.539 ms for the former default rl-u4-nc-b256).  The
 * others stay selectable with PJDS_CUDA_VARIANT. */
#define PL_CUDA_VARIANT_DEFAULT_NAME "cw-u4-ef-b256"

extern "C" int pl_cuda_spmv_nvariants(void) { return pl_cuda_nvariants_impl(); }

extern "C" const char *pl_cuda_spmv_variant_name(int v)
{
    const pl_cuda_variant *p = pl_cuda_variant_get(v);
    return p ? p->name : NULL;
}

extern "C" int pl_cuda_spmv_variant_default(void)
{
    int nv = pl_cuda_nvariants_impl();
    for (int v = 0; v < nv; v++)
        if (!strcmp(pl_cuda_variant_get(v)->name, PL_CUDA_VARIANT_DEFAULT_NAME)) return v;
    return 0;
}

extern "C" int pl_cuda_set_variant(pl_backend *be, int v)
{
    PL_CHECK_CUDA_BE(be);
    PL_CHECK(v >= 0 && v < pl_cuda_nvariants_impl(), PL_ERR_ARG, "kernel variant %d out of range", v);
    pl_cuda_ctx_of(be)->variant = v;
    return PL_OK;
}

extern "C" int pl_cuda_set_block_mode(pl_backend *be, int on)
{
    PL_CHECK_CUDA_BE(be);
    pl_cuda_ctx_of(be)->block_off = on ? 0 : 1;
    return PL_OK;
}

extern "C" int pl_cuda_set_ts_cublas(pl_backend *be, int on)
{
    PL_CHECK_CUDA_BE(be);
    pl_cuda_ctx_of(be)->ts_cublas = on ? 1 : 0;
    return PL_OK;
}

extern "C" int pl_cuda_get_variant(pl_backend *be, int *v)
{
    PL_CHECK_CUDA_BE(be);
    *v = pl_cuda_ctx_of(be)->variant;
    return PL_OK;
}

extern "C" int pl_cuda_device_name(pl_backend *be, char *buf, size_t len, int *device)
{
    PL_CHECK_CUDA_BE(be);
    cudaDeviceProp prop;
    pl_cuda_ctx *cx = pl_cuda_ctx_of(be);
    PL_CUDA(cudaGetDeviceProperties(&prop, cx->device));
    snprintf(buf, len, "%s", prop.name);
    *device = cx->device;
    return PL_OK;
}

extern "C" int pl_cuda_timer_start(pl_backend *be)
{
    PL_CHECK_CUDA_BE(be);
    pl_cuda_ctx *cx = pl_cuda_ctx_of(be);
    PL_CUDA(cudaEventRecord(cx->ev0, cx->stream));
    return PL_OK;
}

extern "C" int pl_cuda_timer_stop(pl_backend *be, double *ms)
{
    PL_CHECK_CUDA_BE(be);
    pl_cuda_ctx *cx = pl_cuda_ctx_of(be);
    float f = 0.0f;
    PL_CUDA(cudaEventRecord(cx->ev1, cx->stream));
    PL_CUDA(cudaEventSynchronize(cx->ev1));
    PL_CUDA(cudaEventElapsedTime(&f, cx->ev0, cx->ev1));
    *ms = (double)f;
    return PL_OK;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

extern "C" int pl_cuda_copy_bandwidth(pl_backend *be, size_t bytes, int repeats, double *gbs)
{
    PL_CHECK_CUDA_BE(be);
    PL_CHECK(repeats >= 1 && bytes >= 8, PL_ERR_ARG, "copy bandwidth: repeats %d, bytes %zu", repeats, bytes);
    pl_cuda_ctx *cx = pl_cuda_ctx_of(be);
    void *a = NULL, *b = NULL;
    double *t = (double *)malloc((size_t)repeats * sizeof(double));
    PL_CHECK(t, PL_ERR_MEM, "out of host memory");
    int r = PL_OK;
    PL_CUDA_GOTO(cudaMalloc(&a, bytes), out, r);
    PL_CUDA_GOTO(cudaMalloc(&b, bytes), out, r);
    PL_CUDA_GOTO(cudaMemsetAsync(a, 0, bytes, cx->stream), out, r);
    PL_CUDA_GOTO(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice, cx->stream), out, r); /* warm-up */
    for (int i = 0; i < repeats; i++) {
        PL_CALL_GOTO(pl_cuda_timer_start(be), out, r);
        PL_CUDA_GOTO(cudaMemcpyAsync((i & 1) ? a : b, (i & 1) ? b : a, bytes, cudaMemcpyDeviceToDevice, cx->stream),
                     out, r);
        PL_CALL_GOTO(pl_cuda_timer_stop(be, &t[i]), out, r);
    }
    qsort(t, (size_t)repeats, sizeof(double), cmp_double);
    *gbs = 2.0 * (double)bytes / (t[repeats / 2] * 1e-3) / 1e9;
out:
    if (a) (void)cudaFree(a);
    if (b) (void)cudaFree(b);
    free(t);
    return r;
}

extern "C" size_t pl_cuda_mat_bytes(const void *mat) { return mat ? ((const pl_cuda_mat *)mat)->bytes : 0; }


extern "C" int pl_cuda_set_cpjds_variant(pl_backend *be, int v)
{
    PL_CHECK_CUDA_BE(be);
    PL_CHECK(v >= -1 && v < pl_cuda_cpjds_nvariants(), PL_ERR_ARG, "compressed variant %d out of range", v);
    pl_cuda_ctx_of(be)->cvariant_bench = v; /* -1: each matrix its own again */
    return PL_OK;
}

extern "C" int pl_cuda_get_cpjds_variant(pl_backend *be, int *v)
{
    PL_CHECK_CUDA_BE(be);
    const pl_cuda_ctx *cx = pl_cuda_ctx_of(be);
    *v = cx->cvariant_bench >= 0 ? cx->cvariant_bench : cx->cvariant_last;
    return PL_OK;
}
