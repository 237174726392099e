/* cublas_load.h — cuBLAS loaded at run time (dlopen), not linked.
 *
 * Why: linking libcublas pulls in libcublasLt (540 MB) before main; on the
 * development VM and the H100 host the dynamic loader then spends 0.06-0.07
 * s and 210 MB of resident memory relocating them (an empty program linked
 * with -lcublas: 0.07 s against 0.00 s), on every start, in series with
 * everything else.  Loaded from a thread started by the CUDA backend while
 * its context is being made (pl_cublas_prefetch), the same work runs beside
 * the context creation instead.
 *
 * pl_cublas_load() is idempotent and thread-safe (pthread_once): the first
 * call (or the prefetch thread) opens the library — first by its soname
 * (LD_LIBRARY_PATH, the loader cache), then from the CUDA toolkit's
 * library directory recorded at build time — and resolves every function
 * below; a later call returns the outcome of that one.  The functions are
 * then called through the table pl_cublas (pl_cublas.Dgemm_64(...)).
 * CUDA only; included from the backend's .cu files. */
#ifndef PL_CUBLAS_LOAD_H
#define PL_CUBLAS_LOAD_H

#include <cublas_v2.h>

typedef struct pl_cublas_fns {
    decltype(&cublasCreate) Create;
    decltype(&cublasDestroy) Destroy;
    decltype(&cublasSetStream) SetStream;
    decltype(&cublasSetPointerMode) SetPointerMode;
    decltype(&cublasGetStatusName) GetStatusName;
    decltype(&cublasGetStatusString) GetStatusString;
    decltype(&cublasDscal_64) Dscal_64;
    decltype(&cublasDaxpy_64) Daxpy_64;
    decltype(&cublasDdot_64) Ddot_64;
    decltype(&cublasDgemv_64) Dgemv_64;
    decltype(&cublasDgemm_64) Dgemm_64;
} pl_cublas_fns;

extern pl_cublas_fns pl_cublas;

/* Open cuBLAS and fill pl_cublas (once).  PL_ERR_CUDA with the loader's
 * message when the library or a function is missing. */
int pl_cublas_load(void);
/* Start pl_cublas_load in a detached thread (where a thread can't be made,
 * nothing: the first pl_cublas_load does the work).  Can't fail. */
void pl_cublas_prefetch(void);

#endif
