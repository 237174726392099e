/* cudss_load.c — cuDSS opened with dlopen (cudss_load.h says why). */
#include "pl_error.h"

#if PJDS_HAVE_CUDSS
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "cudss_load.h"

#ifndef PL_CUDSS_DIR
#define PL_CUDSS_DIR ""
#endif
#ifndef PL_CUDA_LIBDIR
#define PL_CUDA_LIBDIR ""
#endif

pl_cudss_fns pl_cudss;

static pthread_once_t cs_once = PTHREAD_ONCE_INIT;
static int cs_status = PL_ERR_NOTSUP;
static char cs_msg[768] = "cuDSS was not loaded";

static void *cs_dlopen_in(const char *dir, const char *name)
{
    char path[1024];
    if (!dir[0]) return NULL;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return dlopen(path, RTLD_NOW | RTLD_LOCAL);
}

/* libcudss.so.1 by soname, else from the configure-time directory.  Its
 * RPATH finds libcublas/libnvrtc only next to a pip-installed CUDA; where the
 * loader's path lacks the toolkit's lib directory, they are opened from it
 * first (the loader then reuses them for libcudss's dependencies). */
static void *cs_open(void)
{
    static const char name[] = "libcudss.so.1";
    void *h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (!h) h = cs_dlopen_in(PL_CUDSS_DIR, name);
    if (h) return h;
    if (!dlopen("libcublas.so.13", RTLD_NOW | RTLD_LOCAL)) cs_dlopen_in(PL_CUDA_LIBDIR, "libcublas.so.13");
    if (!dlopen("libnvrtc.so.13", RTLD_NOW | RTLD_LOCAL)) cs_dlopen_in(PL_CUDA_LIBDIR, "libnvrtc.so.13");
    h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    return h ? h : cs_dlopen_in(PL_CUDSS_DIR, name);
}

static void cs_load_once(void)
{
    void *h = cs_open();
    if (!h) {
        const char *e = dlerror();
        snprintf(cs_msg, sizeof cs_msg,
                 "cannot open cuDSS (libcudss.so.1; built against %s): %s; reinstall the nvidia-cudss-cu13 "
                 "wheel (tools/setup-deps.sh) or put its lib directory on LD_LIBRARY_PATH, or use "
                 "factorization = mumps",
                 PL_CUDSS_DIR[0] ? PL_CUDSS_DIR : "an unknown directory", e ? e : "not found");
        return;
    }
    pl_cudss_fns f;
    struct {
        void **slot;
        const char *name;
    } tab[] = {
        {(void **)&f.Create, "cudssCreate"},
        {(void **)&f.Destroy, "cudssDestroy"},
        {(void **)&f.SetStream, "cudssSetStream"},
        {(void **)&f.GetProperty, "cudssGetProperty"},
        {(void **)&f.ConfigCreate, "cudssConfigCreate"},
        {(void **)&f.ConfigDestroy, "cudssConfigDestroy"},
        {(void **)&f.ConfigSet, "cudssConfigSet"},
        {(void **)&f.DataCreate, "cudssDataCreate"},
        {(void **)&f.DataDestroy, "cudssDataDestroy"},
        {(void **)&f.DataGet, "cudssDataGet"},
        {(void **)&f.Execute, "cudssExecute"},
        {(void **)&f.MatrixCreateCsr, "cudssMatrixCreateCsr"},
        {(void **)&f.MatrixCreateDn, "cudssMatrixCreateDn"},
        {(void **)&f.MatrixDestroy, "cudssMatrixDestroy"},
    };
    for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++) {
        *tab[i].slot = dlsym(h, tab[i].name);
        if (!*tab[i].slot) {
            snprintf(cs_msg, sizeof cs_msg, "cuDSS (libcudss.so.1) lacks %s: a version older than the "
                     "cudss.h of the build (%d.%d.%d)", tab[i].name, CUDSS_VERSION_MAJOR,
                     CUDSS_VERSION_MINOR, CUDSS_VERSION_PATCH);
            return;
        }
    }
    int major = 0;
    if (f.GetProperty(MAJOR_VERSION, &major) != CUDSS_STATUS_SUCCESS || major != CUDSS_VERSION_MAJOR) {
        snprintf(cs_msg, sizeof cs_msg, "cuDSS at run time is version %d, the build's cudss.h is %d.%d.%d",
                 major, CUDSS_VERSION_MAJOR, CUDSS_VERSION_MINOR, CUDSS_VERSION_PATCH);
        return;
    }
    pl_cudss = f;
    cs_status = PL_OK;
}

int pl_cudss_load(void)
{
    const int e = pthread_once(&cs_once, cs_load_once);
    PL_CHECK(e == 0, PL_ERR_INTERNAL, "pthread_once for loading cuDSS failed (%s)", strerror(e));
    PL_CHECK(cs_status == PL_OK, cs_status, "%s", cs_msg);
    return PL_OK;
}

const char *pl_cudss_status_name(cudssStatus_t s)
{
    switch (s) {
    case CUDSS_STATUS_SUCCESS: return "CUDSS_STATUS_SUCCESS";
    case CUDSS_STATUS_NOT_INITIALIZED: return "CUDSS_STATUS_NOT_INITIALIZED";
    case CUDSS_STATUS_ALLOC_FAILED: return "CUDSS_STATUS_ALLOC_FAILED";
    case CUDSS_STATUS_INVALID_VALUE: return "CUDSS_STATUS_INVALID_VALUE";
    case CUDSS_STATUS_NOT_SUPPORTED: return "CUDSS_STATUS_NOT_SUPPORTED";
    case CUDSS_STATUS_EXECUTION_FAILED: return "CUDSS_STATUS_EXECUTION_FAILED";
    case CUDSS_STATUS_INTERNAL_ERROR: return "CUDSS_STATUS_INTERNAL_ERROR";
    case CUDSS_STATUS_IR_FAILED: return "CUDSS_STATUS_IR_FAILED";
    }
    return "unknown cuDSS status";
}
#else
typedef int pl_cudss_load_unused; /* cuDSS not built in: an empty translation unit */
#endif
