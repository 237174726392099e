/* pl_lapack_threads.h — the projected problems of the solvers are a few
 * dozen rows: a threaded BLAS under LAPACK only adds its threads' wake-up
 * and spin to every call (measured: OpenBLAS with 2 threads, 0.11 s of a
 * 1.6 s solve on 80 dsyev calls of 24 x 24; 0.003 s on one thread).  These
 * two calls run LAPACK on one thread for the duration of a solve and put
 * the caller's setting back after. */
#pragma once

/* Limit the BLAS behind LAPACK to one thread where it offers a run-time
 * control (OpenBLAS: openblas_set_num_threads, looked up at run time, so no
 * link dependency).  Returns the previous thread count, or 0 where there is
 * no such control (nothing changed).  Not thread-safe against other threads
 * that change the BLAS thread count. */
int pl_lapack_threads_serial(void);
/* Restore the count returned by pl_lapack_threads_serial (0: nothing). */
void pl_lapack_threads_restore(int prev);
