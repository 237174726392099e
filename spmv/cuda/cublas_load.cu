/* cublas_load.cu — cuBLAS opened with dlopen (cublas_load.h says why).
 *
 * The outcome of the one load (a status and a message) is kept, so every
 * pl_cublas_load reports the same error in its own thread's error record. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "cublas_load.h"
extern "C" {
#include "pl_error.h"
}

#define PL_CB_STR2(x) #x
#define PL_CB_STR(x) PL_CB_STR2(x) /* the name after cublas_v2.h's macros (cublasCreate_v2) */

#ifndef PL_CUBLAS_DIR
#define PL_CUBLAS_DIR ""
#endif

pl_cublas_fns pl_cublas;

static pthread_once_t cb_once = PTHREAD_ONCE_INIT;
static int cb_status = PL_ERR_CUDA;
static char cb_msg[512] = "cuBLAS was not loaded";

static void *cb_open(void)
{
    char name[64], path[1024];
    snprintf(name, sizeof name, "libcublas.so.%d", CUBLAS_VER_MAJOR);
    void *h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (h || !PL_CUBLAS_DIR[0]) return h;
    snprintf(path, sizeof path, "%s/%s", PL_CUBLAS_DIR, name);
    return dlopen(path, RTLD_NOW | RTLD_LOCAL);
}

static void cb_load_once(void)
{
    void *h = cb_open();
    if (!h) {
        const char *e = dlerror();
        snprintf(cb_msg, sizeof cb_msg, "cannot open cuBLAS (libcublas.so.%d): %s", CUBLAS_VER_MAJOR,
                 e ? e : "not found");
        return;
    }
    pl_cublas_fns f;
    struct {
        void **slot;
        const char *name;
    } tab[] = {
        {(void **)&f.Create, PL_CB_STR(cublasCreate)},
        {(void **)&f.Destroy, PL_CB_STR(cublasDestroy)},
        {(void **)&f.SetStream, PL_CB_STR(cublasSetStream)},
        {(void **)&f.SetPointerMode, PL_CB_STR(cublasSetPointerMode)},
        {(void **)&f.GetStatusName, PL_CB_STR(cublasGetStatusName)},
        {(void **)&f.GetStatusString, PL_CB_STR(cublasGetStatusString)},
        {(void **)&f.Dscal_64, PL_CB_STR(cublasDscal_64)},
        {(void **)&f.Daxpy_64, PL_CB_STR(cublasDaxpy_64)},
        {(void **)&f.Ddot_64, PL_CB_STR(cublasDdot_64)},
        {(void **)&f.Dgemv_64, PL_CB_STR(cublasDgemv_64)},
        {(void **)&f.Dgemm_64, PL_CB_STR(cublasDgemm_64)},
    };
    for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++) {
        *tab[i].slot = dlsym(h, tab[i].name);
        if (!*tab[i].slot) {
            snprintf(cb_msg, sizeof cb_msg, "cuBLAS (libcublas.so.%d) lacks %s", CUBLAS_VER_MAJOR, tab[i].name);
            return; /* the library stays open: other handles may share it */
        }
    }
    pl_cublas = f;
    cb_status = PL_OK;
}

int pl_cublas_load(void)
{
    const int e = pthread_once(&cb_once, cb_load_once);
    PL_CHECK(e == 0, PL_ERR_INTERNAL, "pthread_once for loading cuBLAS failed (%s)", strerror(e));
    PL_CHECK(cb_status == PL_OK, cb_status, "%s", cb_msg);
    return PL_OK;
}

static void *cb_thread(void *arg)
{
    (void)arg;
    (void)pthread_once(&cb_once, cb_load_once);
    return NULL;
}

void pl_cublas_prefetch(void)
{
    pthread_attr_t at;
    pthread_t th;
    if (pthread_attr_init(&at) != 0) return;
    if (pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED) == 0) (void)pthread_create(&th, &at, cb_thread, NULL);
    (void)pthread_attr_destroy(&at);
}
