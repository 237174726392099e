/* backend_each.h — run a backend slot test on the cpu backend, and on the
 * cuda backend as well when PJDS_TEST_BACKEND=cuda (the ctest gpu_* twin
 * of a unit test). */
#ifndef PL_BACKEND_EACH_H
#define PL_BACKEND_EACH_H
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spmv.h"
#include "testutil.h"

/* check(be) on each backend; 77 (skipped) when cuda was asked for and no
 * device is there, else 0.  name: the test's, for the skip line. */
static inline int tb_each_backend(const char *name, void (*check)(pl_backend *be))
{
    pl_backend *be = NULL;
    TU_OK(pl_backend_create(PL_BACKEND_CPU, 0, &be));
    if (be) check(be);
    pl_backend_destroy(&be);
    const char *want = getenv("PJDS_TEST_BACKEND");
    if (!want || strcmp(want, "cuda") != 0) return 0;
    if (pl_cuda_device_count() == 0) {
        printf("%s: no CUDA device (skipped)\n", name);
        return 77;
    }
    TU_OK(pl_backend_create(PL_BACKEND_CUDA, 0, &be));
    if (be) check(be);
    pl_backend_destroy(&be);
    return 0;
}
#endif
