/* op_repro.c — the global reductions of an operator made with
 * pl_op_options.reproducible (spmv.h; [solver] reproducible = true): every
 * sum of products x_i y_i over the rows of all ranks is exact and rounded
 * once (core/pl_exsum.h), so it is the same double on any number of ranks
 * and threads, whatever the rows' split.
 *
 * Each product is rounded to a double as in a plain dot product; the
 * products are then summed without error.  The result r of sum_i x_i y_i
 * satisfies |r - sum_i x_i y_i| <= u sum_i |x_i y_i| + u |r| (+ 2^-1075 per
 * product that underflows), u = 2^-53, against n u sum_i |x_i y_i| of a
 * plain recursive sum: no worse, and independent of the order.
 *
 * Work: the rows of this rank in one static range per OpenMP thread, a
 * thread's accumulators for a group of RP_GROUP sums at a time (rows in
 * blocks of RP_BLOCK so that x and y stay in cache across the group), the
 * threads' accumulators merged (integer additions), the ranks' by one
 * MPI_Allreduce(MPI_SUM) of the normalised int64 limbs (PL_EXSUM_WORDS per
 * sum; exact, so the reduction tree does not matter), and each sum rounded
 * on every rank.  Host memory only (the cpu backend): pl_op_create refuses
 * the option on a device backend. */
#include <omp.h>
#include <stdlib.h>

#include "pl_error.h"
#include "pl_exsum.h"
#include "spmv.h"
#include "op_impl.h"

#define RP_GROUP 16
#define RP_BLOCK 512
#define RP_OMP_MIN 4096
#define RP_WAYS 4
#define RP_WAYS_TERMS (RP_BLOCK / RP_WAYS + RP_WAYS) /* terms a way takes from one block */

/* acc[q] += sum over rows [i0, i1) of pr[q].x[i s] pr[q].y[i s], q < gn.
 * Row i goes to sub-accumulator i % RP_WAYS of its pair (acc[q RP_WAYS +
 * i % RP_WAYS]), so that consecutive additions touch different limbs and
 * do not wait for each other; the caller merges the ways (exact). */
static void rp_rows(int gn, const pl_repro_pair *pr, size_t s, size_t i0, size_t i1, pl_exsum *acc)
{
    for (size_t b = i0; b < i1; b += RP_BLOCK) {
        const size_t e = b + RP_BLOCK < i1 ? b + RP_BLOCK : i1;
        for (int q = 0; q < gn; q++) {
            const double *x = pr[q].x, *y = pr[q].y;
            pl_exsum *a = acc + (size_t)q * RP_WAYS;
            for (int w = 0; w < RP_WAYS; w++) { /* room for this block's terms: RP_WAYS_TERMS each at most */
                if (a[w].load + RP_WAYS_TERMS > PL_EXSUM_LOAD_MAX) pl_exsum_norm(a + w);
                a[w].load += RP_WAYS_TERMS;
            }
            size_t i = b;
            for (; i + RP_WAYS <= e; i += RP_WAYS)
                for (int w = 0; w < RP_WAYS; w++) pl_exsum_add_raw(a + w, x[(i + w) * s] * y[(i + w) * s]);
            for (; i < e; i++) pl_exsum_add_raw(a, x[i * s] * y[i * s]);
        }
    }
}

/* The exact local sums of np pairs into acc[np] (zeroed here). */
static int rp_local(const pl_op *op, int np, const pl_repro_pair *pr, size_t stride, pl_exsum *acc)
{
    const size_t n = (size_t)op->n;
    const int nt = n > RP_OMP_MIN ? omp_get_max_threads() : 1;
    const size_t per = (size_t)RP_GROUP * RP_WAYS; /* a thread's accumulators */
    pl_exsum *ta = malloc((size_t)nt * per * sizeof *ta);
    PL_CHECK(ta, PL_ERR_MEM, "out of host memory for %zu exact accumulators", (size_t)nt * per);
    for (int q = 0; q < np; q++) pl_exsum_zero(acc + q);
    for (int g0 = 0; g0 < np; g0 += RP_GROUP) {
        const int gn = np - g0 < RP_GROUP ? np - g0 : RP_GROUP;
        for (size_t q = 0; q < (size_t)nt * per; q++) pl_exsum_zero(ta + q);
#pragma omp parallel num_threads(nt)
        {
            const int t = omp_get_thread_num(), T = omp_get_num_threads();
            const size_t i0 = n * (size_t)t / (size_t)T, i1 = n * (size_t)(t + 1) / (size_t)T;
            rp_rows(gn, pr + g0, stride, i0, i1, ta + (size_t)t * per);
        }
        for (int t = 0; t < nt; t++)
            for (int q = 0; q < gn; q++)
                for (int w = 0; w < RP_WAYS; w++)
                    pl_exsum_merge(acc + g0 + q, ta + (size_t)t * per + (size_t)q * RP_WAYS + (size_t)w);
    }
    free(ta);
    return PL_OK;
}

int pl_op_repro_sums(pl_op *op, int np, const pl_repro_pair *pr, size_t stride, double *out)
{
    if (np <= 0) return PL_OK;
    PL_CHECK(op->be->host_memory, PL_ERR_NOTSUP, "reproducible reductions need a host-memory backend, not %s",
             op->be->name);
    pl_exsum *acc = malloc((size_t)np * sizeof *acc);
    int rc = PL_OK;
    PL_CHECK_GOTO(acc, PL_ERR_MEM, out, rc, "out of host memory for %d exact accumulators", np);
    PL_CALL_GOTO(rp_local(op, np, pr, stride, acc), out, rc);
    PL_CALL_GOTO(pl_exsum_allreduce(op->comm, (size_t)np, acc, out), out, rc);
out:
    free(acc);
    return rc;
}

/* The sums of the pairs (V_r, W_c), r < k, c < m, into C[c k + r]
 * (sym: W = V, the pairs r <= c only, mirrored). */
int pl_op_repro_block(pl_op *op, int k, int m, const double *V, size_t ld, const double *W, size_t ldw, double *C,
                      int sym)
{
    const size_t np = (size_t)k * (size_t)m;
    pl_repro_pair *pr = malloc((np ? np : 1) * sizeof *pr);
    int *at = malloc((np ? np : 1) * sizeof *at);
    int rc = PL_OK, q = 0;
    PL_CHECK_GOTO(pr && at, PL_ERR_MEM, out, rc, "out of host memory");
    for (int c = 0; c < m; c++)
        for (int r = 0; r < k && (!sym || r <= c); r++) {
            pr[q] = (pl_repro_pair){V + (size_t)r * ld, W + (size_t)c * ldw};
            at[q++] = c * k + r;
        }
    double *v = malloc((size_t)(q ? q : 1) * sizeof *v);
    PL_CHECK_GOTO(v, PL_ERR_MEM, out, rc, "out of host memory");
    rc = pl_op_repro_sums(op, q, pr, 1, v);
    for (int i = 0; rc == PL_OK && i < q; i++) {
        C[at[i]] = v[i];
        if (sym) C[(at[i] % k) * k + at[i] / k] = v[i];
    }
    free(v);
out:
    free(pr);
    free(at);
    return rc;
}

int pl_exsum_allreduce(MPI_Comm comm, size_t n, pl_exsum *acc, double *out)
{
    int size = 1;
    PL_MPI(MPI_Comm_size(comm, &size), "MPI_Comm_size");
    int64_t *w = NULL;
    if (size > 1 && n > 0) {
        const size_t nw = n * PL_EXSUM_WORDS;
        PL_CHECK(nw <= (size_t)INT32_MAX, PL_ERR_ARG, "%zu exact sums at once are too many", n);
        w = malloc(nw * sizeof *w);
        PL_CHECK(w, PL_ERR_MEM, "out of host memory for %zu exact accumulators", n);
        for (size_t q = 0; q < n; q++) pl_exsum_pack(acc + q, w + q * PL_EXSUM_WORDS);
        const int e = MPI_Allreduce(MPI_IN_PLACE, w, (int)nw, MPI_INT64_T, MPI_SUM, comm);
        if (e != MPI_SUCCESS) free(w);
        PL_MPI(e, "MPI_Allreduce of exact sums");
        for (size_t q = 0; q < n; q++) pl_exsum_unpack(acc + q, w + q * PL_EXSUM_WORDS, size);
        free(w);
    }
    for (size_t q = 0; q < n; q++) out[q] = pl_exsum_round(acc + q);
    return PL_OK;
}

int pl_op_reproducible(const pl_op *op) { return op && op->repro; }
