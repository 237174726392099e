/* test_cpjds_linear.c — the [spmv] format decision does work linear in the
 * entries and stops as soon as the compressed tables cannot fit (a quadratic merge of the
 * threads' hash sets would make the import of a 490k-row matrix of distinct
 * values take tens of seconds).  Work is counted in
 * hash probes (pl_cpjds_stats.probes), not seconds, so the test is immune
 * to machine load.  For three kinds of matrix, each at n and 8n rows:
 *
 *  - few distinct values (7 values, random columns): compressible; the
 *    count is complete (8 values incl. the padding's 0), probes(8n) <= 9
 *    probes(n), format = auto chooses compressed, and the compressed
 *    reference SpMV equals a CSR SpMV bit for bit;
 *  - all values distinct, random columns (CFD-like): not compressible
 *    (over 32 bits of ids); the count stops early: on one thread (where
 *    the threads stop each other is timing) probes(8n) <= 2 probes(n),
 *    and at 8n rows it reads less than a quarter of the entries; on T
 *    threads at most 2 (T + 1) times the one thread's probes; auto keeps
 *    pJDS with the reason, format = compressed fails "cannot be
 *    compressed";
 *  - all values distinct, 7 diagonals: ids fit 32 bits but the tables
 *    exceed auto's 2 MiB: auto's count stops early (bounded as above),
 *    while the count without a table limit is complete and linear
 *    (probes(8n) <= 9 probes(n): a merge of large sets, where a merge into a
 *    small growing set would be quadratic).
 *
 * Few values: the compressed product is also checked, and 8n rows have 7
 * times the distinct offsets, where such a merge would be quadratic too.
 * The counts and the reason do not depend on the thread count (1, 2, 3
 * threads give the same nval, noff, over).  One rank (MPI_COMM_SELF). */
#include <mpi.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pl_error.h"
#include "spmv.h"
#include "spmv_testmat.h"
#include "testutil.h"

enum { FEW, DISTINCT, BANDED };
static const char *kind_name[] = {"few values", "distinct values", "distinct values, 7 diagonals"};

/* n rows, one block (row0 = 0): the diagonal plus 9 random columns per row
 * (FEW, DISTINCT; sorted, unique), or the diagonals -3..3 (BANDED); values
 * from 7 repeats (FEW) or all distinct */
static void make_matrix(int kind, int64_t n, uint64_t seed, pl_csr *A)
{
    const int k = kind == BANDED ? 7 : 10;
    TU_OK(pl_csr_alloc(A, n, 0, n, n * k));
    A->ncols_global = n;
    uint64_t s = seed;
    int64_t q = 0;
    A->row_ptr[0] = 0;
    for (int64_t i = 0; i < n; i++) {
        int64_t c[10];
        int m = 0;
        if (kind == BANDED) {
            for (int64_t d = -3; d <= 3; d++)
                if (i + d >= 0 && i + d < n) c[m++] = i + d;
        } else {
            c[m++] = i;
            while (m < k) { /* insert a new column, keep c sorted and unique */
                int64_t j = (int64_t)(tm_next(&s) % (uint64_t)n), p = m;
                int dup = 0;
                for (int t = 0; t < m; t++) dup |= c[t] == j;
                if (dup) continue;
                while (p > 0 && c[p - 1] > j) c[p] = c[p - 1], p--;
                c[p] = j;
                m++;
            }
        }
        for (int t = 0; t < m; t++, q++) {
            A->col[q] = c[t];
            /* all distinct: a random part plus a unique tiny ramp */
            A->val[q] = kind == FEW ? 0.25 * (double)(1 + tm_next(&s) % 7) : tm_unif(&s) - 0.5 + 1e-12 * (double)q;
        }
        A->row_ptr[i + 1] = q;
    }
}

/* plain CSR product, the same summation order as the compressed rows */
static void csr_spmv(const pl_csr *A, const double *x, double *y)
{
    for (int64_t i = 0; i < A->nrows; i++) {
        double s = 0.0;
        for (int64_t k = A->row_ptr[i]; k < A->row_ptr[i + 1]; k++) s += A->val[k] * x[A->col[k]];
        y[i] = s;
    }
}

/* The decision on one rank: the operator with format = auto, its format,
 * note and the stats of its count (pl_cpjds_last_stats). */
static int decide(const pl_csr *A, pl_backend *be, pl_cpjds_stats *st, char *note, size_t notelen)
{
    pl_op_options oo;
    pl_op_options_defaults(&oo);
    pl_op *op = NULL;
    memset(st, 0, sizeof *st);
    int fmt = -1;
    TU_OK(pl_op_create(A, &oo, be, MPI_COMM_SELF, &op));
    if (op) {
        pl_op_info info;
        pl_op_get_info(op, &info);
        fmt = info.format;
        snprintf(note, notelen, "%s", info.format_note);
        pl_cpjds_last_stats(st);
        pl_op_destroy(&op);
    }
    return fmt;
}

static void print_stats(const char *what, int64_t n, const pl_csr *A, const pl_cpjds_stats *s)
{
    printf("%-32s n %7lld nnz %8lld: values %8lld offsets %7lld over %d, %8lld entries read, %9lld probes "
           "(%.2f per entry read), %lld merged, %d threads, %.3f s\n",
           what, (long long)n, (long long)A->row_ptr[A->nrows], (long long)s->nval, (long long)s->noff, s->over,
           (long long)s->entries, (long long)s->probes, s->entries ? (double)s->probes / (double)s->entries : 0.0,
           (long long)s->merged, s->threads, s->seconds);
}

/* the count's result on 1, 2 and 3 threads: the same */
static void check_threads(const pl_csr *A, double tb, const char *name)
{
    const int t0 = omp_get_max_threads();
    pl_cpjds_stats ref = {0};
    for (int nt = 1; nt <= 3; nt++) {
        omp_set_num_threads(nt);
        pl_cpjds_stats s;
        TU_OK(pl_cpjds_count(A, tb, &s));
        if (nt == 1) ref = s;
        TU_CHECK_MSG(s.nval == ref.nval && s.noff == ref.noff && s.over == ref.over,
                     "%s, table limit %.0f: %d threads count %lld values, %lld offsets, over %d; 1 thread %lld, "
                     "%lld, %d",
                     name, tb, nt, (long long)s.nval, (long long)s.noff, s.over, (long long)ref.nval,
                     (long long)ref.noff, ref.over);
    }
    omp_set_num_threads(t0);
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    pl_log_init(0, PL_LOG_QUIET);
    pl_backend *be = NULL;
    TU_OK(pl_backend_create(PL_BACKEND_CPU, 0, &be));
    be->compressed_auto = 1; /* the rule of format = auto as on the GPU (the CPU backend keeps pJDS under auto) */
    if (!be) return tu_result("test_cpjds_linear");
    printf("threads: %d\n", omp_get_max_threads());

    for (int kind = FEW; kind <= BANDED; kind++) {
        const int64_t n0 = kind == FEW ? 20000 : 50000, ns[2] = {n0, 8 * n0};
        const int T = omp_get_max_threads();
        pl_cpjds_stats dec[2], unl[2], ser[2];
        for (int r = 0; r < 2; r++) {
            pl_csr A;
            make_matrix(kind, ns[r], 1000 + 17 * (uint64_t)kind + (uint64_t)r, &A);
            const int64_t nnz = A.row_ptr[A.nrows];
            char note[200] = "", name[96];
            snprintf(name, sizeof name, "%s, n %lld", kind_name[kind], (long long)ns[r]);

            /* the decision itself (pl_op_create, format = auto) */
            const int fmt = decide(&A, be, &dec[r], note, sizeof note);
            print_stats(kind == FEW ? "auto: compressed" : "auto: pjds", ns[r], &A, &dec[r]);
            if (note[0]) printf("  note: %s\n", note);
            /* the count without auto's table limit (info, format = compressed) */
            TU_OK(pl_cpjds_count(&A, 0.0, &unl[r]));
            print_stats("count, no table limit", ns[r], &A, &unl[r]);
            /* the decision's count on one thread: where threads stop each
             * other is timing, one thread's work is not */
            omp_set_num_threads(1);
            TU_OK(pl_cpjds_count(&A, PL_CPJDS_AUTO_TABLE_BYTES, &ser[r]));
            omp_set_num_threads(T);
            print_stats("auto's count, one thread", ns[r], &A, &ser[r]);

            if (kind == FEW) {
                TU_CHECK_MSG(fmt == PL_FORMAT_COMPRESSED, "%s: auto chose %d", name, fmt);
                TU_CHECK_MSG(dec[r].over == 0 && dec[r].nval == 8, "%s: over %d, %lld values (8 expected)", name,
                             dec[r].over, (long long)dec[r].nval);
                TU_CHECK(dec[r].entries == nnz); /* complete */
                /* correctness: the compressed reference product = the CSR product, bitwise */
                pl_cpjds p;
                TU_OK(pl_cpjds_create(&A, 32, &p));
                TU_CHECK(p.nval == 8 && p.noff == unl[r].noff);
                double *x = malloc(sizeof(double) * (size_t)ns[r]), *y = malloc(sizeof(double) * (size_t)ns[r]),
                       *yr = malloc(sizeof(double) * (size_t)ns[r]);
                for (int64_t i = 0; i < ns[r]; i++) x[i] = 0.5 + 0.001 * (double)(i % 1013) - 0.3 * (double)(i % 3);
                pl_cpjds_spmv_ref(&p, x, y);
                csr_spmv(&A, x, yr);
                int64_t bad = 0;
                for (int64_t i = 0; i < ns[r]; i++) bad += y[i] != yr[i];
                TU_CHECK_MSG(bad == 0, "%s: %lld rows of the compressed product differ from the CSR product", name,
                             (long long)bad);
                free(x);
                free(y);
                free(yr);
                pl_cpjds_destroy(&p);
            } else {
                TU_CHECK_MSG(fmt == PL_FORMAT_PJDS, "%s: auto chose %d", name, fmt);
                TU_CHECK_MSG(dec[r].over != 0 && ser[r].over == dec[r].over, "%s: the count did not stop", name);
                /* stopped early: one thread reads about the limit's keys (less than nnz / 4 at 8n rows); T
                 * threads each about as much, plus the serial end of thread 0's prefix */
                if (r == 1)
                    TU_CHECK_MSG(ser[r].entries < nnz / 4, "%s: the count read %lld of %lld entries", name,
                                 (long long)ser[r].entries, (long long)nnz);
                TU_CHECK_MSG(dec[r].probes <= 2 * (T + 1) * ser[r].probes,
                             "%s: %lld probes on %d threads, %lld on one thread", name, (long long)dec[r].probes, T,
                             (long long)ser[r].probes);
                if (kind == DISTINCT) {
                    TU_CHECK_MSG(dec[r].over == PL_CPJDS_OVER_BITS && strstr(note, "exceed 32 bits"),
                                 "%s: over %d, note '%s'", name, dec[r].over, note);
                    TU_CHECK(unl[r].over == PL_CPJDS_OVER_BITS);
                    TU_CHECK(unl[r].probes <= 2 * (T + 1) * ser[r].probes);
                    /* forced: refused, with the counts */
                    pl_cpjds p;
                    pl_error_clear();
                    TU_CHECK(pl_cpjds_create(&A, 32, &p) == PL_ERR_INPUT);
                    TU_CHECK_MSG(strstr(pl_error_message(), "cannot be compressed") != NULL, "message '%s'",
                                 pl_error_message());
                    if (r == 0) printf("  forced: %s\n", pl_error_message());
                    pl_error_clear();
                } else {
                    TU_CHECK_MSG(dec[r].over == PL_CPJDS_OVER_TABLES && strstr(note, "exceed 2 MiB"),
                                 "%s: over %d, note '%s'", name, dec[r].over, note);
                    /* 7 offsets, 3 bits: the ids fit, the count is complete */
                    TU_CHECK_MSG(unl[r].over == 0 && unl[r].noff == 7 && unl[r].nval == nnz + 1,
                                 "%s: over %d, %lld values, %lld offsets", name, unl[r].over,
                                 (long long)unl[r].nval, (long long)unl[r].noff);
                }
            }
            if (r == 0) {
                check_threads(&A, PL_CPJDS_AUTO_TABLE_BYTES, name);
                check_threads(&A, 0.0, name);
            }
            pl_csr_destroy(&A);
        }
        /* linear: 8x the rows, at most ~8x the probes; stopped: bounded */
        const double rd = (double)dec[1].probes / (double)(dec[0].probes ? dec[0].probes : 1),
                     ru = (double)unl[1].probes / (double)(unl[0].probes ? unl[0].probes : 1),
                     rs = (double)ser[1].probes / (double)(ser[0].probes ? ser[0].probes : 1);
        printf("%s: probes(8n) / probes(n) = %.2f (auto's decision), %.2f (no table limit), %.2f (auto's count, "
               "one thread)\n",
               kind_name[kind], rd, ru, rs);
        if (kind == FEW) { /* complete counts: the same work on every run */
            TU_CHECK_MSG(rd <= 9.0, "%s: the decision's probes grow %.2fx for 8x the rows", kind_name[kind], rd);
            TU_CHECK_MSG(ru <= 9.0, "%s: the count's probes grow %.2fx for 8x the rows", kind_name[kind], ru);
        } else {
            TU_CHECK_MSG(rs <= 2.0, "%s: the count's probes grow %.2fx for 8x the rows (it should stop early)",
                         kind_name[kind], rs);
            if (kind == BANDED) /* complete without the table limit: a merge of large sets */
                TU_CHECK_MSG(ru <= 9.0, "%s: the count's probes grow %.2fx for 8x the rows", kind_name[kind], ru);
        }
        /* a few probes per entry read (two lookups, growth, merge) */
        for (int r = 0; r < 2; r++)
            TU_CHECK_MSG(dec[r].probes <= 10 * dec[r].entries + 4096 && ser[r].probes <= 10 * ser[r].entries + 4096,
                         "%s: %lld probes for %lld entries (one thread: %lld for %lld)", kind_name[kind],
                         (long long)dec[r].probes, (long long)dec[r].entries, (long long)ser[r].probes,
                         (long long)ser[r].entries);
    }
    pl_backend_destroy(&be);
    int rc = tu_result("test_cpjds_linear");
    MPI_Finalize();
    return rc;
}
