/* test_h5m_roundtrip.c — pl_h5m_write then pl_h5m_read_rows gives the same
 * matrix: a random matrix generated row by row (independent of the rank
 * count) in uneven blocks, written in small pieces, read back under another
 * partition; refusal to overwrite without the flag; no temporary left over;
 * a bad output directory is PL_ERR_INPUT.  Also exports real matrices read
 * from the converted files (lund_a from lower storage, memplus) for
 * check_export.py, which compares them with scipy.
 * Usage: test_h5m_roundtrip OUTDIR REALDIR */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "pl_error.h"
#include "pl_h5matrix.h"
#include "testutil.h"

static int rank, size;

static uint64_t mix(uint64_t x)
{
    x ^= x >> 31;
    x *= 0x9e3779b97f4a7c15ULL;
    x ^= x >> 29;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 32;
    return x;
}

/* Row i of the random test matrix: length 0..24, sorted unique columns. */
static int64_t gen_row(int64_t N, int64_t i, int64_t *col, double *val)
{
    int64_t n = (int64_t)(mix((uint64_t)i * 7 + 1) % 25), m = 0;
    if (i % 17 == 3) n = 0; /* empty rows */
    for (int64_t k = 0; k < n; k++) {
        int64_t c = (int64_t)(mix((uint64_t)(i * 1000 + k)) % (uint64_t)N);
        int dup = 0;
        for (int64_t q = 0; q < m; q++) dup |= col[q] == c;
        if (dup) continue;
        int64_t q = m++;
        while (q > 0 && col[q - 1] > c) {
            col[q] = col[q - 1];
            q--;
        }
        col[q] = c;
    }
    for (int64_t k = 0; k < m; k++) {
        uint64_t h = mix((uint64_t)(i * 31 + col[k]));
        val[k] = ((double)(h >> 11) / 9007199254740992.0 - 0.5) * ((h & 3) == 0 ? 1e-300 : (h & 3) == 1 ? 1e300 : 3.0);
    }
    return m;
}

static void gen_block(int64_t N, int64_t r0, int64_t r1, pl_csr *a)
{
    int64_t col[32], nnz = 0;
    double val[32];
    for (int64_t i = r0; i < r1; i++) nnz += gen_row(N, i, col, val);
    TU_OK(pl_csr_alloc(a, N, r0, r1 - r0, nnz));
    int64_t p = 0;
    for (int64_t i = r0; i < r1; i++) {
        int64_t m = gen_row(N, i, a->col + p, a->val + p);
        p += m;
        a->row_ptr[i - r0 + 1] = p;
    }
}

static int no_part_files(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int bad = 0;
    if (!d) return 0;
    while ((e = readdir(d)))
        if (strstr(e->d_name, ".part-")) bad++;
    closedir(d);
    return bad == 0;
}

static void export_real(const char *outdir, const char *realdir, const char *in, const char *out, int sym,
                        const char *name)
{
    char src[2048], dst[2048];
    snprintf(src, sizeof src, "%s/%s", realdir, in);
    snprintf(dst, sizeof dst, "%s/%s", outdir, out);
    struct stat st;
    if (stat(src, &st) != 0) return; /* matrix not converted: check_export.py skips it */
    pl_h5m_info info;
    TU_OK(pl_h5m_open_info(src, "/", &info));
    int64_t N = info.rows, a = N * rank / size, b = N * (rank + 1) / size;
    pl_csr blk;
    TU_OK(pl_h5m_read_rows(src, "/", a, b, MPI_COMM_WORLD, &blk));
    TU_OK(pl_h5m_write(dst, "/", &blk, sym, name, in, MPI_COMM_WORLD, 1));
    pl_csr_destroy(&blk);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    pl_log_init(rank, PL_LOG_QUIET);
    if (argc < 3) TU_SKIP("usage: test_h5m_roundtrip OUTDIR REALDIR");
    const char *dir = argv[1];
    if (rank == 0) mkdir(dir, 0777);
    MPI_Barrier(MPI_COMM_WORLD);
    char file[2048];
    snprintf(file, sizeof file, "%s/random.h5", dir);
    if (rank == 0) remove(file);
    MPI_Barrier(MPI_COMM_WORLD);

    const int64_t N = 3001;
    /* uneven blocks: rank p gets weight p + 1 */
    int64_t W = (int64_t)size * (size + 1) / 2, acc = (int64_t)rank * (rank + 1) / 2;
    int64_t r0 = N * acc / W, r1 = N * (acc + rank + 1) / W;
    pl_csr a;
    gen_block(N, r0, r1, &a);
    pl_h5m_set_block_entries(53); /* many pieces */
    TU_OK(pl_h5m_write(file, "/sub/random", &a, 0, "random test matrix", "test_h5m_roundtrip", MPI_COMM_WORLD, 0));
    TU_CHECK(no_part_files(dir));
    int64_t nnz_local = pl_csr_nnz(&a), nnz = 0;
    MPI_Allreduce(&nnz_local, &nnz, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);

    pl_h5m_info info;
    TU_OK(pl_h5m_open_info(file, "/sub/random", &info));
    TU_CHECK(info.rows == N && info.cols == N && info.nnz_stored == nnz && !info.symmetric && !info.lower);
    TU_CHECK(info.col_bytes == 4 && !strcmp(info.name, "random test matrix") && !strcmp(info.source, "test_h5m_roundtrip"));

    /* read back under an equal-row partition, reversed over the ranks */
    int rr = size - 1 - rank;
    int64_t b0 = N * rr / size, b1 = N * (rr + 1) / size;
    pl_csr b, ref;
    TU_OK(pl_h5m_read_rows(file, "/sub/random", b0, b1, MPI_COMM_WORLD, &b));
    gen_block(N, b0, b1, &ref);
    if (b.row_ptr) {
        TU_CHECK(b.row0 == b0 && b.nrows == b1 - b0 && b.nrows_global == N);
        TU_CHECK(pl_csr_nnz(&b) == pl_csr_nnz(&ref));
        int64_t bad = 0;
        for (int64_t r = 0; r <= b.nrows; r++) bad += b.row_ptr[r] != ref.row_ptr[r];
        for (int64_t k = 0; k < pl_csr_nnz(&ref) && !bad; k++) bad += b.col[k] != ref.col[k] || b.val[k] != ref.val[k];
        TU_CHECK_MSG(bad == 0, "round trip differs (%lld)", (long long)bad);
    }
    /* asymmetry of this random matrix equals what the same data gives read back */
    double rel1, rel2;
    int64_t i1, j1, i2, j2;
    TU_OK(pl_h5m_asymmetry(&a, MPI_COMM_WORLD, &rel1, &i1, &j1));
    TU_OK(pl_h5m_asymmetry(&b, MPI_COMM_WORLD, &rel2, &i2, &j2));
    TU_CHECK(rel1 == rel2 && i1 == i2 && j1 == j2 && rel1 > 0);
    pl_csr_destroy(&b);
    pl_csr_destroy(&ref);

    /* existing file: refused without overwrite, replaced with it */
    int rc = pl_h5m_write(file, "/", &a, 0, NULL, NULL, MPI_COMM_WORLD, 0);
    TU_CHECK_MSG(rc == PL_ERR_INPUT && strstr(pl_error_message(), "exists"), "rc %d: %s", rc, pl_error_message());
    pl_error_clear();
    TU_OK(pl_h5m_write(file, "/", &a, 1, NULL, NULL, MPI_COMM_WORLD, 1));
    TU_OK(pl_h5m_open_info(file, "/", &info));
    TU_CHECK(info.symmetric == 1 && info.name[0] == 0 && info.nnz_stored == nnz);
    TU_CHECK(no_part_files(dir));
    /* output directory missing */
    char bad[2100];
    snprintf(bad, sizeof bad, "%s/no/such/dir/x.h5", dir);
    rc = pl_h5m_write(bad, "/", &a, 0, NULL, NULL, MPI_COMM_WORLD, 1);
    TU_CHECK_MSG(rc == PL_ERR_INPUT, "rc %d: %s", rc, pl_error_message());
    pl_error_clear();
    /* blocks that do not tile the rows */
    pl_csr c = a;
    c.nrows_global = N + 1;
    rc = pl_h5m_write(file, "/", &c, 0, NULL, NULL, MPI_COMM_WORLD, 1);
    TU_CHECK(rc == PL_ERR_ARG);
    pl_error_clear();
    pl_csr_destroy(&a);
    pl_h5m_set_block_entries(0);

    export_real(dir, argv[2], "lund_a_lower.h5", "lund_a_export.h5", 1, "lund_a");
    export_real(dir, argv[2], "memplus_full.h5", "memplus_export.h5", 0, "memplus");

    int fails = 0;
    MPI_Allreduce(&tu_failures, &fails, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    tu_failures = fails;
    rc = tu_result("test_h5m_roundtrip");
    MPI_Finalize();
    return rc;
}
