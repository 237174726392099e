/* gen_util.c — shared helpers of the row generators (gen_util.h). */
#define _DEFAULT_SOURCE
#include "gen_util.h"

#include <omp.h>
#include <stdlib.h>
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

int gen_csr_from_lengths(int rc, int64_t N, int64_t r0, int64_t nrows, int32_t *len, pl_csr *out)
{
    int64_t nnz = 0;
    for (int64_t i = 0; rc == PL_OK && i < nrows; i++) nnz += len[i];
    if (rc == PL_OK) rc = pl_csr_alloc(out, N, r0, nrows, nnz);
    if (rc != PL_OK) {
        free(len);
        pl_csr_destroy(out);
        return pl_error_trace(rc, __FILE__, __LINE__, __func__, "row lengths / pl_csr_alloc");
    }
    gen_advise_huge_pages(out->col, (size_t)nnz * sizeof *out->col);
    gen_advise_huge_pages(out->val, (size_t)nnz * sizeof *out->val);
    out->row_ptr[0] = 0;
    for (int64_t i = 0; i < nrows; i++) out->row_ptr[i + 1] = out->row_ptr[i] + len[i];
    free(len);
    return PL_OK;
}

int gen_csr_finish(const char *model, int64_t bad_row, int64_t r0, int64_t r1, double t0, pl_csr *out)
{
    if (bad_row >= 0) {
        pl_csr_destroy(out);
        return PL_ERROR(PL_ERR_INTERNAL, "row %lld: length of the fill differs from the counted length",
                        (long long)bad_row);
    }
    double dt = pl_wtime() - t0;
    if (dt > 2.0)
        pl_info("%s rows [%lld, %lld): %lld non-zeros in %.1f s", model, (long long)r0, (long long)r1,
                (long long)pl_csr_nnz(out), dt);
    return PL_OK;
}
