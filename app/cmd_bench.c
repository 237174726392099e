/* cmd_bench.c — `pjds-lanczos bench [options] CONFIG`: runs the benchmark
 * program pjds-bench (bench/src), installed beside pjds-lanczos, with the
 * command's arguments.  The benchmark code (its formats, the cuSPARSE peer)
 * is not part of pjds-lanczos. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "app.h"

int app_bench_exec(int argc, char **argv)
{
    char path[4096];
    ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
    char *slash = n > 0 ? memchr(path, '/', (size_t)n) : NULL;
    if (!slash || (size_t)n + sizeof "/pjds-bench" > sizeof path) {
        fprintf(stderr, "pjds-lanczos: error: bench: cannot locate pjds-lanczos itself (/proc/self/exe)\n");
        return 2;
    }
    path[n] = 0;
    strcpy(strrchr(path, '/') + 1, "pjds-bench");
    char **args = calloc((size_t)argc + 2, sizeof *args);
    if (!args) {
        fprintf(stderr, "pjds-lanczos: error: out of host memory\n");
        return 1;
    }
    args[0] = path;
    for (int i = 0; i < argc; i++) args[i + 1] = argv[i];
    execv(path, args); /* returns only on failure */
    fprintf(stderr, "pjds-lanczos: error: bench needs the program %s: %s (build the target pjds-bench)\n", path,
            strerror(errno));
    free(args);
    return 2;
}
