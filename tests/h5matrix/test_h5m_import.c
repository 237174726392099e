/* test_h5m_import.c — import of real SuiteSparse matrices converted by
 * tools/mtx2h5.py (convert.py fixture), full and lower storage, compared
 * entry by entry with an independent Matrix Market reader (mmref.c).
 * Run with 1, 2, 3 ranks: row lengths on equal shares are checked, rows
 * are partitioned by non-zeros with pl_partition_by_nnz calling
 * pl_h5m_row_lengths_fn (as the app does), then read with pl_h5m_read_rows; also a partial, non-tiling read, and
 * everything again with tiny scan blocks (many exchange rounds).  The
 * asymmetry is compared with the serial reference.  Rank 0 prints a
 * digest per matrix, identical for every rank count.
 * Usage: test_h5m_import MATRICES.tsv */
#include <inttypes.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mmref.h"
#include "pl_error.h"
#include "pl_h5matrix.h"
#include "spmv.h"
#include "testutil.h"

static int rank, size;

/* compare a read block with the reference rows */
static void compare_rows(const char *tag, const pl_csr *b, const mm_csr *ref)
{
    int64_t bad = 0;
    for (int64_t r = 0; r < b->nrows; r++) {
        int64_t g = b->row0 + r, n = b->row_ptr[r + 1] - b->row_ptr[r];
        if (n != ref->rp[g + 1] - ref->rp[g]) {
            if (!bad++) fprintf(stderr, "%s: row %lld has %lld entries, reference %lld\n", tag, (long long)g,
                                (long long)n, (long long)(ref->rp[g + 1] - ref->rp[g]));
            continue;
        }
        for (int64_t k = 0; k < n; k++) {
            int64_t p = b->row_ptr[r] + k, q = ref->rp[g] + k;
            if (b->col[p] != ref->col[q] || b->val[p] != ref->val[q]) {
                if (!bad++) fprintf(stderr, "%s: row %lld entry %lld: (%lld, %.17g) vs reference (%lld, %.17g)\n",
                                    tag, (long long)g, (long long)k, (long long)b->col[p], b->val[p],
                                    (long long)ref->col[q], ref->val[q]);
            }
        }
    }
    TU_CHECK_MSG(bad == 0, "%s: %lld mismatching rows", tag, (long long)bad);
}

static void one_matrix(const char *file, const char *group, const char *mtx, int sym, int lower, int asym,
                       int64_t block)
{
    char tag[1200];
    snprintf(tag, sizeof tag, "%s:%s block %lld", file, group, (long long)block);
    pl_h5m_set_block_entries(block);
    mm_csr ref;
    if (mm_read(mtx, &ref)) {
        tu_failures++;
        return;
    }
    pl_h5m_info info;
    TU_OK(pl_h5m_open_info(file, group, &info));
    TU_CHECK(info.rows == ref.n && info.cols == ref.n);
    TU_CHECK(info.symmetric == sym && info.lower == lower);
    int64_t N = ref.n;

    /* row lengths on equal shares, as pl_partition_by_nnz calls them */
    int64_t a = N * rank / size, b = N * (rank + 1) / size;
    int32_t *len = malloc(sizeof(int32_t) * (size_t)(b - a + 1));
    pl_h5m_source src = {file, group, MPI_COMM_WORLD, NULL};
    TU_OK(pl_h5m_row_lengths_fn(&src, a, b, len));
    int64_t lsum = 0, bad = 0;
    for (int64_t r = a; r < b; r++) {
        lsum += len[r - a];
        if (len[r - a] != ref.rp[r + 1] - ref.rp[r]) bad++;
    }
    TU_CHECK_MSG(bad == 0, "%s: %lld wrong row lengths", tag, (long long)bad);
    int64_t tot = 0;
    MPI_Allreduce(&lsum, &tot, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    TU_CHECK(tot == ref.nnz);
    free(len);
    /* the app's way: pl_partition_by_nnz calling pl_h5m_row_lengths_fn */
    int64_t *bounds = calloc((size_t)size + 1, sizeof(int64_t));
    TU_OK(pl_partition_by_nnz(N, pl_h5m_row_lengths_fn, &src, MPI_COMM_WORLD, bounds));
    int64_t r0 = bounds[rank], r1 = bounds[rank + 1];
    free(bounds);
    TU_CHECK(0 <= r0 && r0 <= r1 && r1 <= N);
    pl_csr blk;
    TU_OK(pl_h5m_read_rows(file, group, r0, r1, MPI_COMM_WORLD, &blk));
    if (blk.row_ptr) {
        compare_rows(tag, &blk, &ref);
        uint64_t d = mm_rows_digest(blk.row0, blk.nrows, blk.row_ptr, blk.col, blk.val), dg = 0;
        MPI_Reduce(&d, &dg, 1, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
        uint64_t dref = mm_rows_digest(0, ref.n, ref.rp, ref.col, ref.val);
        if (rank == 0) {
            TU_CHECK(dg == dref);
            if (block == 0) printf("digest %s:%s %016" PRIx64 "\n", file, group, dg);
        }
        /* asymmetry against the serial reference */
        double rel = -1, rrel = -2;
        int64_t i = -2, j = -2, ri, rj;
        TU_OK(pl_h5m_asymmetry(&blk, MPI_COMM_WORLD, &rel, &i, &j));
        mm_asymmetry(&ref, &rrel, &ri, &rj);
        TU_CHECK_MSG(rel == rrel && i == ri && j == rj, "%s: asymmetry %.17g at (%lld, %lld), reference %.17g at (%lld, %lld)",
                     tag, rel, (long long)i, (long long)j, rrel, (long long)ri, (long long)rj);
        if (!asym) TU_CHECK_MSG(rel == 0.0, "%s: symmetric matrix has asymmetry %g", tag, rel);
        else TU_CHECK_MSG(rel > 1e-12, "%s: nonsymmetric matrix not detected (%g)", tag, rel);
        if (rank == 0 && block == 0)
            printf("  asymmetry %.3e at (%lld, %lld)\n", rel, (long long)i, (long long)j);
    }
    pl_csr_destroy(&blk);

    /* a partial read that does not tile [0, N): only the last rank reads a
     * middle range, the others nothing (exercises the generic scan share) */
    int64_t p0 = rank == size - 1 ? N / 3 : 0, p1 = rank == size - 1 ? N / 2 + 1 : 0;
    TU_OK(pl_h5m_read_rows(file, group, p0, p1, MPI_COMM_WORLD, &blk));
    if (blk.row_ptr) compare_rows(tag, &blk, &ref);
    pl_csr_destroy(&blk);
    mm_free(&ref);
    pl_h5m_set_block_entries(0);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    pl_log_init(rank, PL_LOG_QUIET);
    if (argc < 2) TU_SKIP("usage: test_h5m_import MATRICES.tsv");
    FILE *f = fopen(argv[1], "r");
    if (!f) {
        if (rank == 0) fprintf(stderr, "skipped: %s missing (no converted matrices)\n", argv[1]);
        MPI_Finalize();
        return 77;
    }
    char line[4096];
    int n = 0;
    while (fgets(line, sizeof line, f)) {
        char file[1024], group[256], mtx[1024];
        int sym, lower, asym;
        if (sscanf(line, "%1023[^\t]\t%255[^\t]\t%1023[^\t]\t%d\t%d\t%d", file, group, mtx, &sym, &lower, &asym) != 6)
            continue;
        one_matrix(file, group, mtx, sym, lower, asym, 0);
        one_matrix(file, group, mtx, sym, lower, asym, 97); /* many small rounds */
        n++;
    }
    fclose(f);
    TU_CHECK(n > 0);
    int fails = 0;
    MPI_Allreduce(&tu_failures, &fails, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    tu_failures = fails;
    int rc = tu_result("test_h5m_import");
    MPI_Finalize();
    return rc;
}
