/* test_sort_window.c — [spmv] sort_window = auto (pl_sort_window_resolve).
 *
 *  - the resolver: auto gives PL_SORT_WINDOW_AUTO_CUDA (65520) for the
 *    backend named "cuda" and PL_SORT_WINDOW_AUTO_CPU (8192) for "cpu" (and for
 *    an unknown or NULL name); an explicit value (0 = all rows, 1, 7, 65536)
 *    is returned as given on both;
 *  - the operator on the CPU backend with sort_window = auto reports the
 *    rule's window in pl_op_info.sort_window, its local pJDS uses a window in
 *    [1, n], and y = A x is right; an explicit window wins (reported and
 *    used);
 *  - the CUDA window is a multiple of every run length b (1..8) of the CUDA
 *    block mode: for matrices of dense b x b blocks (b = 3, 5, 6, 7, 8) with
 *    more than two windows of rows, the operator built with it (CPU backend:
 *    the same host layout) keeps every row's entries in runs of b consecutive
 *    permuted columns, the condition block mode checks on the device
 *    (pjds_block_kernels.cu k_runs_check); a window of 65536 rows cuts block
 *    rows apart for b = 3, 5, 6, 7 (the reason the auto value is not 65536).
 * One rank (MPI_COMM_SELF). */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "op_impl.h"
#include "pjds_block.h"
#include "pl_error.h"
#include "spmv.h"
#include "spmv_testmat.h"
#include "testutil.h"

static void check_resolver(void)
{
    pl_backend cuda = {.name = "cuda", .sort_window_auto = PL_SORT_WINDOW_AUTO_CUDA},
               other = {.name = "other"};
    TU_CHECK(pl_sort_window_resolve(PL_SORT_WINDOW_AUTO, &cuda) == 65520);
    TU_CHECK(PL_SORT_WINDOW_AUTO_CUDA == 65520);
    TU_CHECK(PL_SORT_WINDOW_AUTO_CPU == 8192);
    TU_CHECK(pl_sort_window_resolve(PL_SORT_WINDOW_AUTO, NULL) == PL_SORT_WINDOW_AUTO_CPU);
    TU_CHECK(pl_sort_window_resolve(PL_SORT_WINDOW_AUTO, &other) == PL_SORT_WINDOW_AUTO_CPU);
    const int64_t explicit_w[] = {0, 1, 7, 65536};
    for (size_t i = 0; i < sizeof explicit_w / sizeof *explicit_w; i++) {
        TU_CHECK(pl_sort_window_resolve(explicit_w[i], &cuda) == explicit_w[i]);
        TU_CHECK(pl_sort_window_resolve(explicit_w[i], NULL) == explicit_w[i]);
    }
    /* a multiple of every run length the CUDA block mode tries */
    for (int b = 1; b <= PJDS_BLOCK_MAX_B; b++)
        TU_CHECK_MSG(PL_SORT_WINDOW_AUTO_CUDA % b == 0, "cuda auto window %d is not a multiple of b = %d",
                     PL_SORT_WINDOW_AUTO_CUDA, b);
}

/* one rank's CSR block of the whole matrix a */
static void csr_of(const tm_csr *a, pl_csr *b)
{
    TU_OK(pl_csr_alloc(b, a->n, 0, a->n, a->nnz));
    b->ncols_global = a->n;
    tm_block_copy(a, 0, a->n, b->row_ptr, b->col, b->val);
}

/* The operator with the configured window: reported window, the layout's
 * window, and y = A x against the CSR product. */
static void check_op(const tm_csr *a, int64_t cfg_window, int64_t want_reported, pl_backend *be)
{
    pl_csr blk;
    csr_of(a, &blk);
    pl_op_options cfg = {0};
    cfg.format = PL_FORMAT_PJDS; /* the pJDS sort windows under test */
    cfg.chunk_height = 4;
    cfg.sort_window = cfg_window;
    pl_op *op = NULL;
    TU_OK(pl_op_create(&blk, &cfg, be, MPI_COMM_SELF, &op));
    pl_csr_destroy(&blk);
    if (!op) return;
    pl_op_info info;
    pl_op_get_info(op, &info);
    const int64_t n = info.n_local;
    TU_CHECK_MSG(info.sort_window == want_reported, "configured %lld: reported %lld, expected %lld",
                 (long long)cfg_window, (long long)info.sort_window, (long long)want_reported);
    /* the window the layout used: >= 1, <= n; all rows for 0 or a window >= n */
    const int64_t used = op->loc.sort_window;
    const int64_t expect_used = (want_reported <= 0 || want_reported >= n) ? (n > 0 ? n : 1) : want_reported;
    TU_CHECK_MSG(used >= 1 && used <= (n > 0 ? n : 1) && used == expect_used,
                 "configured %lld: layout window %lld, expected %lld (n = %lld)", (long long)cfg_window, (long long)used,
                 (long long)expect_used, (long long)n);
    /* y = A x */
    double *xg = malloc((size_t)(a->n + 1) * sizeof *xg), *yg = malloc((size_t)(a->n + 1) * sizeof *yg),
           *ayg = malloc((size_t)(a->n + 1) * sizeof *ayg);
    for (int64_t g = 0; g < a->n; g++) xg[g] = cos(0.3 * (double)g) + 0.5;
    tm_spmv(a, xg, yg, ayg);
    const int64_t *gi = pl_op_global_index(op);
    double *x = NULL, *y = NULL;
    TU_OK(be->vec_alloc(be, (size_t)n, &x));
    TU_OK(be->vec_alloc(be, (size_t)n, &y));
    for (int64_t i = 0; i < n; i++) x[i] = xg[gi[i]];
    TU_OK(pl_op_apply(op, x, y));
    double err = 0.0;
    for (int64_t i = 0; i < n; i++) {
        double d = fabs(y[i] - yg[gi[i]]) / fmax(ayg[gi[i]], 1e-300);
        if (!(d <= err)) err = d;
    }
    TU_CHECK_MSG(err <= 1e-14, "configured %lld: rel err %g", (long long)cfg_window, err);
    be->vec_free(be, x);
    be->vec_free(be, y);
    free(xg);
    free(yg);
    free(ayg);
    pl_op_destroy(&op);
}

/* A matrix of dense b x b blocks: block row q has its diagonal block and,
 * depending on a hash of q, the blocks q - 1, q + 1, q - 37, q + 37 (so the
 * row lengths vary, in multiples of b, and the sort moves rows). */
static void block_matrix(int b, int64_t nb, tm_csr *a)
{
    const int64_t offs[] = {-37, -1, 0, 1, 37};
    a->n = nb * b;
    a->ptr = calloc((size_t)a->n + 1, sizeof *a->ptr);
    a->col = malloc((size_t)a->n * 5 * b * sizeof *a->col);
    a->val = malloc((size_t)a->n * 5 * b * sizeof *a->val);
    uint64_t s = 12345;
    int64_t e = 0;
    for (int64_t q = 0; q < nb; q++) {
        uint64_t h = tm_next(&s);
        for (int k = 0; k < b; k++) {
            for (int o = 0; o < 5; o++) {
                int64_t Q = q + offs[o];
                if (Q < 0 || Q >= nb || (offs[o] != 0 && !((h >> o) & 1))) continue;
                for (int c = 0; c < b; c++) {
                    a->col[e] = Q * b + c;
                    a->val[e] = 1.0 + 0.01 * (double)((q + 3 * k + 7 * c + o) % 13);
                    e++;
                }
            }
            a->ptr[q * b + k + 1] = e;
        }
    }
    a->nnz = e;
}

/* Every row of the local pJDS stores its entries in runs of b consecutive
 * columns (the device check of block mode, on the host arrays). */
static int runs_of_b(const pjds *p, int b)
{
    for (int64_t r = 0; r < p->nrows; r++) {
        const int64_t c = r / p->C, lane = r % p->C;
        const int32_t len = p->row_len[r];
        if (len % b) return 0;
        const int32_t *col = p->col + p->chunk_start[c] + lane;
        for (int32_t j = 0; j < len; j += b)
            for (int k = 1; k < b; k++)
                if (col[(int64_t)(j + k) * p->C] != col[(int64_t)j * p->C] + k) return 0;
    }
    return 1;
}

static int blocks_kept(const tm_csr *a, int b, int64_t window, pl_backend *be)
{
    pl_csr blk;
    csr_of(a, &blk);
    pl_op_options cfg = {0};
    cfg.format = PL_FORMAT_PJDS; /* the pJDS sort windows under test */
    cfg.chunk_height = 32;
    cfg.sort_window = window;
    pl_op *op = NULL;
    TU_OK(pl_op_create(&blk, &cfg, be, MPI_COMM_SELF, &op));
    pl_csr_destroy(&blk);
    if (!op) return -1;
    int ok = runs_of_b(&op->loc, b);
    pl_op_destroy(&op);
    return ok;
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    pl_log_init(0, PL_LOG_QUIET);
    check_resolver();

    pl_backend *be = NULL;
    TU_OK(pl_backend_cpu_create(&be));
    if (be) {
        tm_csr a;
        tm_random(3000, 12, 2, 1, 42, &a);
        const int64_t cpu = pl_sort_window_resolve(PL_SORT_WINDOW_AUTO, be);
        TU_CHECK(be->sort_window_auto == 8192);
        TU_CHECK(cpu == PL_SORT_WINDOW_AUTO_CPU);
        check_op(&a, PL_SORT_WINDOW_AUTO, cpu, be); /* auto: the cpu rule */
        check_op(&a, 0, 0, be);                     /* explicit values win */
        check_op(&a, 64, 64, be);
        check_op(&a, 1, 1, be);
        check_op(&a, 100000, 100000, be);           /* > n: all rows */
        tm_free(&a);

        /* block rows stay whole with the cuda window */
        const int bs[] = {3, 5, 6, 7, 8};
        for (size_t i = 0; i < sizeof bs / sizeof *bs; i++) {
            const int b = bs[i];
            block_matrix(b, (140000 + b - 1) / b, &a); /* > 2 windows of 65520 rows */
            TU_CHECK_MSG(blocks_kept(&a, b, 0, be) == 1, "b = %d: a full sort splits block rows", b);
            TU_CHECK_MSG(blocks_kept(&a, b, PL_SORT_WINDOW_AUTO_CUDA, be) == 1,
                         "b = %d: the cuda auto window %d splits block rows", b, PL_SORT_WINDOW_AUTO_CUDA);
            if (65536 % b) /* the check sees a split block row */
                TU_CHECK_MSG(blocks_kept(&a, b, 65536, be) == 0, "b = %d: windows of 65536 rows keep block rows", b);
            tm_free(&a);
        }
        pl_backend_destroy(&be);
    }
    int rc = tu_result("test_sort_window");
    MPI_Finalize();
    return rc;
}
