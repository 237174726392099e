/* gen_util.c — shared helpers of the row generators (gen_util.h). */
#define _DEFAULT_SOURCE
#include "gen_util.h"

#include <omp.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include "pl_error.h"

void gen_progress_tick(gen_progress *p, int64_t rows)
{
#pragma omp atomic
    p->done += rows;
    if (omp_get_thread_num() != 0) return;
    double now = pl_wtime();
    if (now - p->t0 > 2.0 && now - p->last >= 1.0) {
        int64_t d;
#pragma omp atomic read
        d = p->done;
        pl_info("%s %s: %lld of %lld rows (%.0f %%), %.1f s", p->model, p->what, (long long)d, (long long)p->total,
                100.0 * (double)d / (double)(p->total ? p->total : 1), now - p->t0);
        p->last = now;
    }
}

void gen_advise_huge_pages(void *p, size_t bytes)
{
#ifdef MADV_HUGEPAGE
    const uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    if (!p || page == 0 || bytes < ((size_t)8 << 20)) return;
    uintptr_t a = ((uintptr_t)p + page - 1) / page * page, e = ((uintptr_t)p + bytes) / page * page;
    if (e > a) (void)madvise((void *)a, e - a, MADV_HUGEPAGE);
#else
    (void)p;
    (void)bytes;
#endif
}
