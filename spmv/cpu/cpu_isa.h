/* cpu_isa.h — instruction-set versions of the CPU backend's kernels,
 * private to spmv/cpu (backend_cpu.c, cpu_cpjds.c). */
#pragma once

/* x86-64 builds with GCC carry AVX2 and AVX-512 versions of the kernels
 * (target attributes; the tune= part matters: GCC's generic tuning never
 * emits vector gathers), chosen once per backend with
 * __builtin_cpu_supports; PJDS_CPU_ISA=default|avx2|avx512 forces one (for
 * benchmarks).  A portable build thus still uses gathers where they exist. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define PL_HAVE_ISA_CLONES 1
#define PL_TGT_avx512 __attribute__((target("avx512f,avx512vl,avx512dq,avx2,fma,tune=icelake-server")))
#define PL_TGT_avx2 __attribute__((target("avx2,fma,tune=haswell")))
#else
#define PL_HAVE_ISA_CLONES 0
#endif
#define PL_TGT_default

enum { PL_ISA_DEFAULT = 0, PL_ISA_AVX2 = 1, PL_ISA_AVX512 = 2 };

/* In a function returning a kernel: return PICK(avx512), PICK(avx2) or
 * PICK(default) for isa, where PICK(ISA) is a switch that returns in every
 * case. */
#if PL_HAVE_ISA_CLONES
#define PL_ISA_DISPATCH(isa, PICK)                                                                   \
    do {                                                                                             \
        if ((isa) == PL_ISA_AVX512) PICK(avx512)                                                     \
        if ((isa) == PL_ISA_AVX2) PICK(avx2)                                                         \
        PICK(default)                                                                                \
    } while (0)
#else
#define PL_ISA_DISPATCH(isa, PICK)                                                                   \
    do {                                                                                             \
        (void)(isa);                                                                                 \
        PICK(default)                                                                                \
    } while (0)
#endif
