/* sort_window.c — [spmv] sort_window = auto: the sort window of each
 * backend (pl_backend.sort_window_auto, pl_sort_window_resolve, spmv.h).
 * An explicit value always wins.
 *
 * cuda: PL_SORT_WINDOW_AUTO_CUDA = 65520 rows.  The H100 bench sweep on HMEp
 * (6,201,600 rows, cw-u4-ef-b256) is flat from 1024 to 262144 rows and best
 * at 8192-65536: 0.4075 ms = 92.0 % of the floor at 65536 against 0.4695 ms
 * (79.8 %) with one window over all rows and 0.4373 ms (85.7 %) unsorted
 * (README, "GPU results").  65520 = 78 lcm(1..8) is the largest multiple of
 * every run length b = 1..8 of the CUDA block mode (backend_cuda.cu
 * block_mode) not above 65536: windows that are multiples of b never cut a
 * block row of a b x b block matrix apart, so the stable sort keeps its rows
 * together and block mode (pJDS-b, 8 + 4/b bytes per entry) stays on.
 * 65536 itself cuts block rows for b = 3, 5, 6, 7, which turned block mode
 * off on uhbr_like (b = 5) and dlr1_like (b = 6).  Measured with 65520 on
 * the H100 (2026-11-24, bench, medians of 50): HMEp 0.4098 ms (91.3 % of the
 * floor; 65536: 0.4094 ms), solve's SpMV median 0.4247 ms; block mode kept:
 * dlr1_like b = 6 0.1437 ms (window 1: 0.1615 ms), uhbr_like b = 5 1.7005 ms
 * (window 1: 1.9162 ms).
 *
 * cpu: PL_SORT_WINDOW_AUTO_CPU = 8192 rows.  The OpenMP kernel cares little:
 * the windows of the sweep lie within 5-12 % of each other, near the noise
 * of the machines, but 8192 was the best or within 4 % of the best in every
 * sweep, and no sort (1) and one window over all rows (0) were 5-12 % slower:
 * HMEp on the 16 cores of the GPU machine 15.74 ms (1: 17.32, all: 16.70);
 * the 184,800-row hh_184800.ini on the development VM, one thread 1.65 ms
 * (best 1024: 1.59; 1: 1.74; all: 1.75), two threads within 2 % of the best
 * (1024: 0.767 ms; 1: 0.880 ms).  The CPU backend has no block mode.
 * Measured again on 2026-11-25 (pjds-bench, the omp kernel): on the 16
 * cores of the H100 host 8192 stays the best or within 2 % for HMEp
 * (13.56 ms; 1: 15.22, 1024: 13.90) and hmep_m18 (28.01 ms; 1: 27.46), but
 * hh_184800 is 7 % behind 1024 (0.172 against 0.161 ms); on the 2-core
 * development VM no sort (1) was 13-47 % faster than 8192 for hh_184800
 * (one thread 0.864 against 0.997 ms; two threads with max_phonons = 10,
 * 1.2 M rows, 4.01 against 5.88 ms).  The window stays 8192; a per-machine
 * choice would need a measurement at start-up.
 */
#include "spmv.h"

int64_t pl_sort_window_resolve(int64_t sort_window, const pl_backend *be)
{
    if (sort_window != PL_SORT_WINDOW_AUTO) return sort_window;
    return be && be->sort_window_auto > 0 ? be->sort_window_auto : PL_SORT_WINDOW_AUTO_CPU;
}
