/* test_h5m_corpus.c — every broken file of the corpus written by
 * make_corpus.py (OUTDIR/index.tsv: file<TAB>fragment) must fail the import
 * pipeline (open_info, row_lengths on equal shares, read_rows) with
 * PL_ERR_INPUT, on every rank, with a message containing the expected
 * fragment and the file name — never crash or hang.  The ok_*.h5 controls
 * must import and equal the 5 x 5 matrix the generator wrote.
 * Usage: test_h5m_corpus CORPUSDIR   (run with 1 and 2 ranks) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pl_error.h"
#include "pl_h5matrix.h"
#include "testutil.h"

static int rank, size;

/* The whole pipeline as the app runs it; returns the first error. */
static int pipeline(const char *file, pl_csr *out)
{
    pl_h5m_info info;
    int rc = pl_h5m_open_info_all(file, "/", &info, MPI_COMM_WORLD);
    if (rc) return rc;
    int64_t N = info.rows, a = N * rank / size, b = N * (rank + 1) / size;
    int32_t *len = malloc(sizeof(int32_t) * (size_t)(b - a + 1));
    rc = pl_h5m_row_lengths(file, "/", a, b, len, MPI_COMM_WORLD);
    free(len);
    if (rc) return rc;
    return pl_h5m_read_rows(file, "/", a, b, MPI_COMM_WORLD, out);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    pl_log_init(rank, PL_LOG_QUIET);
    if (argc < 2) TU_SKIP("usage: test_h5m_corpus DIR");
    char path[2048], line[2048];
    snprintf(path, sizeof path, "%s/index.tsv", argv[1]);
    FILE *f = fopen(path, "r");
    if (!f) TU_SKIP("%s missing", path);
    int n = 0;
    for (int small = 0; small < 2; small++) {
        pl_h5m_set_block_entries(small ? 3 : 0);
        rewind(f);
        while (fgets(line, sizeof line, f)) {
            char name[512], frag[512];
            if (sscanf(line, "%511[^\t]\t%511[^\n]", name, frag) != 2) continue;
            snprintf(path, sizeof path, "%s/%s", argv[1], name);
            pl_csr out;
            memset(&out, 0, sizeof out);
            pl_error_clear();
            int rc = pipeline(path, &out);
            const char *msg = pl_error_message();
            TU_CHECK_MSG(rc == PL_ERR_INPUT, "%s: rank %d: code %d (%s), expected PL_ERR_INPUT", name, rank, rc, msg);
            TU_CHECK_MSG(strstr(msg, frag) != NULL, "%s: rank %d: message '%s' lacks '%s'", name, rank, msg, frag);
            TU_CHECK_MSG(strstr(msg, name) != NULL, "%s: message '%s' does not name the file", name, msg);
            TU_CHECK_MSG(strchr(msg, '\n') == NULL, "%s: message is not one line", name);
            TU_CHECK(out.row_ptr == NULL);
            if (rank == 0 && !small) printf("%-28s %s\n", name, msg);
            pl_csr_destroy(&out);
            n++;
        }
    }
    fclose(f);
    TU_CHECK(n > 0);

    /* controls: the 5 x 5 matrix of make_corpus.py */
    static const double S[5][5] = {{4, 1, 0, 0, 2}, {1, 4, 1, 0, 0}, {0, 1, 4, 1, 0}, {0, 0, 1, 4, 1}, {2, 0, 0, 1, 4}};
    /* NONSYM: S with (0, 4) = 3 and (3, 1) = -1, in MATLAB, SciPy CSC and 1-based COO layouts, read
     * (with blocks of 2 entries: many scan rounds) as A, not A^T */
    static const double NS[5][5] = {{4, 1, 0, 0, 3}, {1, 4, 1, 0, 0}, {0, 1, 4, 1, 0}, {0, -1, 1, 4, 1}, {2, 0, 0, 1, 4}};
    const char *ok[] = {"ok_full.h5", "ok_lower.h5", "ok_unsorted.h5", "ok_vlen.h5", "ok_matlab_ns.h5", "ok_csc_ns.h5",
                        "ok_coo_ns.h5"};
    for (int c = 0; c < 7; c++)
        for (int small = 0; small < 2; small++) {
            const double(*A)[5] = c < 4 ? S : NS;
            pl_h5m_set_block_entries(small ? 2 : 0);
            snprintf(path, sizeof path, "%s/%s", argv[1], ok[c]);
            pl_csr out;
            memset(&out, 0, sizeof out);
            TU_OK(pipeline(path, &out));
            if (!out.row_ptr) continue;
            for (int64_t r = 0; r < out.nrows; r++) {
                int64_t i = out.row0 + r, k = out.row_ptr[r];
                for (int j = 0; j < 5; j++) {
                    if (A[i][j] == 0) continue;
                    TU_CHECK_MSG(k < out.row_ptr[r + 1] && out.col[k] == j && out.val[k] == A[i][j],
                                 "%s: row %lld column %d", ok[c], (long long)i, j);
                    k++;
                }
                TU_CHECK_MSG(k == out.row_ptr[r + 1], "%s: row %lld has extra entries", ok[c], (long long)i);
            }
            pl_csr_destroy(&out);
        }
    /* missing group and missing file */
    pl_h5m_info info;
    snprintf(path, sizeof path, "%s/ok_full.h5", argv[1]);
    int rc = pl_h5m_open_info(path, "/no/such/group", &info);
    TU_CHECK_MSG(rc == PL_ERR_INPUT && strstr(pl_error_message(), "group not found"), "%s", pl_error_message());
    snprintf(path, sizeof path, "%s/does_not_exist.h5", argv[1]);
    rc = pl_h5m_open_info(path, "/", &info);
    TU_CHECK_MSG(rc == PL_ERR_INPUT && strstr(pl_error_message(), "cannot open the file"), "%s", pl_error_message());

    int fails = 0;
    MPI_Allreduce(&tu_failures, &fails, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    tu_failures = fails;
    rc = tu_result("test_h5m_corpus");
    MPI_Finalize();
    return rc;
}
