/* spmv_tuning.h — the kernel-choice switches of spmv/ (A/B timings and
 * tests), read from the environment once per backend (pl_backend_create and
 * the backends' own create functions put them into pl_backend.tune); every
 * kernel-choice site reads that struct, never the environment.  Unset
 * switches keep the defaults below.  Plain C header (also included from
 * .cu files).
 *
 * The switches (environment variable: effect; who uses it):
 *   PJDS_CUDA_VARIANT=<name|number>  pJDS SpMV kernel variant of the cuda backend (bench)
 *   PJDS_CUDA_TS=cublas              dense tall-skinny products through cuBLAS (bench/gpu_run.sh)
 *   PJDS_CPJDS_VARIANT=<name>        compressed SpMV kernel variant, else each matrix's layout picks (gpu_run.sh)
 *   PJDS_CPJDS_WIDE=1                compressed matrices keep 32-bit words and lengths on the GPU (gpu_run.sh)
 *   PJDS_CPU_ISA=default|avx2|avx512 caps the instruction set of the cpu kernels (gpu_run.sh)
 *   PJDS_CPU_CPJDS=rows              cpu compressed kernel row by row, without gathers (gpu_run.sh)
 *   PJDS_SPMV_FORMAT=compressed|pjds replaces [spmv] format = auto (tests: PL_ALSO_COMPRESSED)
 *   PJDS_FILL_HOST=1                 a device backend gets whole host pJDS arrays instead of the streamed fill (tests/gpu)
 *   PJDS_FILL_STAGE_ENTRIES=N        staging entries of the streamed upload and of the value terms (tests/gpu)
 */
#ifndef PL_SPMV_TUNING_H
#define PL_SPMV_TUNING_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pl_spmv_tuning {
    char cuda_variant[32];      /* PJDS_CUDA_VARIANT, "" = the default variant          */
    char cpjds_variant[32];     /* PJDS_CPJDS_VARIANT, "" = by the matrix's layout       */
    int cpjds_wide;             /* PJDS_CPJDS_WIDE=1                                     */
    int cuda_ts_cublas;         /* PJDS_CUDA_TS=cublas                                   */
    int cuda_no_preload;        /* PJDS_CUDA_PRELOAD=0: kernels load at first launch     */
    int cpu_isa_cap;            /* PJDS_CPU_ISA: -1 none, else 0 default, 1 avx2, 2 avx512 */
    int cpu_cpjds_rows;         /* PJDS_CPU_CPJDS=rows                                   */
    int format;                 /* PJDS_SPMV_FORMAT: enum pl_format, auto = no override  */
    int fill_host;              /* PJDS_FILL_HOST=1                                      */
    int64_t fill_stage_entries; /* PJDS_FILL_STAGE_ENTRIES, 0 = the built-in size        */
} pl_spmv_tuning;

/* Read the switches above from the environment into *t (unset or
 * unrecognised values: the defaults).  Can't fail. */
void pl_spmv_tuning_from_env(pl_spmv_tuning *t);

#ifdef __cplusplus
}
#endif

#endif
