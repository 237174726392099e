/* kron_variant.h — the kernels of the CUDA matrix-free operator (kron.cu,
 * kron_kernels.cu), for the timing tool and the tests.  Plain C header, no
 * CUDA include; the functions exist only when PJDS_HAVE_CUDA == 1.
 *
 * The environment variable PJDS_KRON_KERNEL (1 .. pl_cuda_kron_nvariants(),
 * read once by be->kron_create) picks the kernel of each operator made
 * afterwards; unset: pl_cuda_kron_variant_default() (5 where its 32-wide
 * tile fits, else 6 where a left row fits, else 2; PJDS_KRON_CHUNK then
 * applies to 2 only).  A kernel that can't
 * take the operator falls back (4 -> 3 -> 1: packed tables that do not fit,
 * a left row that does not fit shared memory; 5 -> 2: a tile of x over all
 * left rows that does not fit; 6 -> 5: a left row that does not fit shared
 * memory, values that do not pack; unasked, 6 is taken only where 5 does
 * not fit).  Knobs, also read at kron_create:
 * PJDS_KRON_CHUNK (variant 2: left rows per block, 1..64; variant 5: right
 * rows per tile, 8, 16 or 32),
 * PJDS_KRON_SPLIT (variants 3 and 4: blocks per left row, 1..64; variant 6:
 * blocks per multiprocessor, 1..64, default 2 where 6 is the default's
 * choice, else as many as fit one). */
#ifndef PL_KRON_VARIANT_H
#define PL_KRON_VARIANT_H

#ifdef __cplusplus
extern "C" {
#endif

#define PL_CUDA_KRON_NVARIANTS 6

int pl_cuda_kron_nvariants(void);
int pl_cuda_kron_variant_default(void);
/* "tile", "r-stationary", "row-smem", "row-smem-packed", "hop-smem",
 * "phonon-row"; NULL out of range. */
const char *pl_cuda_kron_variant_name(int v);
/* The kernel an operator made by the CUDA backend's kron_create runs
 * (after fall-backs); 0 for NULL.  *param: variant 2's chunk, variants 3
 * and 4's split, variant 6's blocks per multiprocessor, else 0 (param may
 * be NULL). */
int pl_cuda_kron_variant_of(const void *mat, int *param);

#ifdef __cplusplus
}
#endif

#endif
