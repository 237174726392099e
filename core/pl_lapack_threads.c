/* pl_lapack_threads.c — see pl_lapack_threads.h. */
#define _GNU_SOURCE
#include "pl_lapack_threads.h"

#include <dlfcn.h>
#include <stddef.h>

typedef int (*get_fn)(void);
typedef void (*set_fn)(int);

int pl_lapack_threads_serial(void)
{
    get_fn get = NULL;
    set_fn set = NULL;
    *(void **)&get = dlsym(RTLD_DEFAULT, "openblas_get_num_threads"); /* (POSIX's idiom for a function) */
    *(void **)&set = dlsym(RTLD_DEFAULT, "openblas_set_num_threads");
    if (!get || !set) return 0;
    int prev = get();
    if (prev > 1) set(1);
    return prev > 1 ? prev : 0;
}

void pl_lapack_threads_restore(int prev)
{
    if (prev <= 1) return;
    set_fn set = NULL;
    *(void **)&set = dlsym(RTLD_DEFAULT, "openblas_set_num_threads");
    if (set) set(prev);
}
