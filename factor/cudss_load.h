/* cudss_load.h — cuDSS opened at run time (dlopen), not linked.
 *
 * Why: libcudss.so.1 (cuDSS 1.0, 167 MB) needs libcublas and libnvrtc; an
 * empty program linked with it took 0.19-0.23 s and 255 MB of resident
 * memory to start on the development VM (0.00 s and 1 MB unlinked), on every
 * start of the app and of every program linked with libpjds, though only a
 * shift-and-invert run with factorization = cudss uses it.  Opened here only
 * when that back-end is created, a missing or broken library is also one
 * clear error of that run (PL_ERR_NOTSUP) instead of a loader failure of
 * every run.  Same scheme as spmv/cuda/cublas_load.h.
 *
 * pl_cudss_load() is idempotent and thread-safe (pthread_once): the first
 * call opens libcudss.so.1 — by its soname (LD_LIBRARY_PATH, the loader
 * cache), else from the directory found at configure time (PL_CUDSS_DIR,
 * factor/cudss.cmake) — and resolves every function below; later calls
 * return the outcome of that one.  Call through pl_cudss (pl_cudss.Execute).
 * Only compiled where PJDS_HAVE_CUDSS is defined (cudss.h is at hand). */
#ifndef PL_CUDSS_LOAD_H
#define PL_CUDSS_LOAD_H

#include <cudss.h>

typedef struct pl_cudss_fns {
    __typeof__(&cudssCreate) Create;
    __typeof__(&cudssDestroy) Destroy;
    __typeof__(&cudssSetStream) SetStream;
    __typeof__(&cudssGetProperty) GetProperty;
    __typeof__(&cudssConfigCreate) ConfigCreate;
    __typeof__(&cudssConfigDestroy) ConfigDestroy;
    __typeof__(&cudssConfigSet) ConfigSet;
    __typeof__(&cudssDataCreate) DataCreate;
    __typeof__(&cudssDataDestroy) DataDestroy;
    __typeof__(&cudssDataGet) DataGet;
    __typeof__(&cudssExecute) Execute;
    __typeof__(&cudssMatrixCreateCsr) MatrixCreateCsr;
    __typeof__(&cudssMatrixCreateDn) MatrixCreateDn;
    __typeof__(&cudssMatrixDestroy) MatrixDestroy;
} pl_cudss_fns;

extern pl_cudss_fns pl_cudss;

/* Open cuDSS and fill pl_cudss (once).  PL_ERR_NOTSUP with the loader's
 * message when the library or one of the functions is missing. */
int pl_cudss_load(void);
/* "CUDSS_STATUS_ALLOC_FAILED" etc. for messages. */
const char *pl_cudss_status_name(cudssStatus_t s);

#endif
