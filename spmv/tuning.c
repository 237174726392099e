/* tuning.c — the kernel-choice switches of spmv_tuning.h from the
 * environment. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spmv.h"
#include "spmv_tuning.h"

static int env_is(const char *name, const char *value)
{
    const char *e = getenv(name);
    return e && !strcmp(e, value);
}

static void env_copy(const char *name, char *dst, size_t n)
{
    const char *e = getenv(name);
    snprintf(dst, n, "%s", e ? e : "");
}

void pl_spmv_tuning_from_env(pl_spmv_tuning *t)
{
    memset(t, 0, sizeof *t);
    env_copy("PJDS_CUDA_VARIANT", t->cuda_variant, sizeof t->cuda_variant);
    env_copy("PJDS_CPJDS_VARIANT", t->cpjds_variant, sizeof t->cpjds_variant);
    t->cpjds_wide = env_is("PJDS_CPJDS_WIDE", "1");
    t->cuda_ts_cublas = env_is("PJDS_CUDA_TS", "cublas");
    t->cuda_no_preload = env_is("PJDS_CUDA_PRELOAD", "0");
    const char *isa = getenv("PJDS_CPU_ISA");
    t->cpu_isa_cap = !isa ? -1 : !strcmp(isa, "avx512") ? 2 : !strcmp(isa, "avx2") ? 1 : 0;
    t->cpu_cpjds_rows = env_is("PJDS_CPU_CPJDS", "rows");
    t->format = env_is("PJDS_SPMV_FORMAT", "compressed") ? PL_FORMAT_COMPRESSED
              : env_is("PJDS_SPMV_FORMAT", "pjds")       ? PL_FORMAT_PJDS
                                                         : PL_FORMAT_AUTO;
    t->fill_host = env_is("PJDS_FILL_HOST", "1");
    const char *st = getenv("PJDS_FILL_STAGE_ENTRIES");
    t->fill_stage_entries = st && atoll(st) > 0 ? atoll(st) : 0;
}
