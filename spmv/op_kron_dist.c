/* op_kron_dist.c — the matrix-free operator (pl_kron.h) on several ranks
 * (issue 26, "Deliver 4"), and the halo of both splits from the tables
 * (pl_kron_halo, spmv.h).
 *
 * Method: the LEFT split (spmv.h, enum pl_kron_split).  Rank q owns the
 * left rows (electron configurations) [L_q, L_q+1), L_q = floor(n_left q /
 * P), with all n_right right rows: the contiguous global rows [L_q n_right,
 * L_q+1 n_right) in their original order, so pl_op_global_index is row0 + i
 * and every vector, start vector and output is the one-rank layout cut into
 * blocks.  With x and y viewed as n_left x n_right arrays,
 *   y_q = (A_qq (x) 1 + diag + sum_m diag(c_m)_q (x) B_m) x_q + (A_q,rem (x) 1) x_halo:
 * the diagonal and the phonon terms act inside a left row and are local;
 * the hopping A's entries whose column l' lies outside the block need the
 * whole phonon row x[l', :] of l' (the halo).  The local part is a pl_kron
 * of the rank's rows (A restricted to the block's columns, shifted; the
 * slices of dl and c; the right tables whole), applied by be->kron_apply as
 * on one rank; the remote part is the list of A's remote entries by local
 * left row (pl_kron_remote), added by be->kron_rem_apply after the
 * exchange.  The sums of a row are then taken in a different order than on
 * one rank (local entries of A first): equal to about 1e-16, not bitwise.
 * Reproducible (pl_op_options.reproducible, kd->repro): the local pl_kron
 * keeps no hopping, and the remote list holds every entry of A's local rows
 * in CSR order, local columns reading x itself behind the halo (the buffer
 * [halo; x], op->d_xext, filled by op_apply.c): each row is then the
 * diagonal and phonon terms plus the hopping in CSR order, one rounding per
 * product and addition, which is the one-rank kron_apply's sum bit for bit.
 *
 * Halo plan: every rank holds the whole tables, so the plan needs no
 * message: the halo rows of rank p are the sorted unique columns of A's
 * rows of p's block outside it, and what p needs from this rank follows
 * from the same scan (O(nnz(A)) per rank over all p).  The exchange is the
 * operator's own (op_apply.c: host MPI, or the CUDA transport's NCCL, IPC
 * or staged MPI, every exchange mode): the halo is n_hrows whole phonon
 * rows, n_halo = n_hrows n_right values in halo-row order, and the send
 * list is expanded to one int32 index per sent value.  Memory per rank:
 * 8 B per halo value (halo buffer), 12 B per sent value (send buffer and
 * its index list; a row-based gather would save the 4 B of the index),
 * doubled in pinned host staging on a device backend with transport mpi;
 * n_left int32 for the halo map; the local tables are the whole right
 * tables plus the block's share of the left ones.
 *
 * The block's rows must fit int32 (n_local, n_halo and n_send <= 2^31-1):
 * hh9 (15,876 x 12,870 rows) fits from 1 rank on. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pl_error.h"
#include "pl_kron.h"
#include "spmv.h"
#include "spmv_impl.h"
#include "op_impl.h"
#include "op_kron_dist.h"

/* The rank's tables: the local pl_kron (owned arrays of A) and the remote
 * part (owned lists). */
typedef struct dist_tab {
    pl_kron kl;
    int64_t *a_ptr;
    int32_t *a_col;
    double *a_val;
    pl_kron_remote rem;
    int32_t *r_row, *r_hrow;
    int64_t *r_ptr;
    double *r_val;
    int64_t rem_nnz; /* remote entries of A with a non-zero value */
} dist_tab;

static void dist_tab_free(dist_tab *t)
{
    free(t->a_ptr);
    free(t->a_col);
    free(t->a_val);
    free(t->r_row);
    free(t->r_hrow);
    free(t->r_ptr);
    free(t->r_val);
    memset(t, 0, sizeof *t);
}

/* Owner of index c among the parts bounds[0..P] (bounds[P] > c >= 0). */
int kd_owner_of(const int64_t *bounds, int P, int64_t c)
{
    int lo = 0, hi = P - 1;
    while (lo < hi) {
        const int mid = (lo + hi + 1) / 2;
        if (bounds[mid] <= c) lo = mid;
        else hi = mid - 1;
    }
    return lo;
}

/* Halo of every rank under the LEFT split: stamp[n_left], rows of p. */
static void halo_left(const pl_kron *k, int P, const int64_t *lb, int32_t *stamp, char *from,
                      pl_kron_halo_info *out)
{
    const int64_t nr = k->n_right;
    for (int64_t l = 0; l < k->n_left; l++) stamp[l] = -1;
    for (int p = 0; p < P; p++) {
        memset(from, 0, (size_t)P);
        out[p].rows = (lb[p + 1] - lb[p]) * nr;
        for (int64_t l = lb[p]; l < lb[p + 1]; l++)
            for (int64_t j = k->a_ptr[l]; j < k->a_ptr[l + 1]; j++) {
                const int64_t c = k->a_col[j];
                if ((c >= lb[p] && c < lb[p + 1]) || stamp[c] == p) continue;
                stamp[c] = p;
                const int q = kd_owner_of(lb, P, c);
                out[p].halo_lines++;
                out[q].send_values += nr;
                from[q] = 1;
            }
        out[p].halo_values = out[p].halo_lines * nr;
        for (int q = 0; q < P; q++) out[p].neighbors += from[q];
    }
}

/* Halo of every rank under the RIGHT split: whole electron columns x[:, r']
 * of the right rows r' that the right factors reference outside the range. */
static void halo_right(const pl_kron *k, int P, const int64_t *rb, int32_t *stamp, char *from,
                       pl_kron_halo_info *out)
{
    const int64_t nl = k->n_left, nt = k->nterms;
    for (int64_t r = 0; r < k->n_right; r++) stamp[r] = -1;
    for (int p = 0; p < P; p++) {
        memset(from, 0, (size_t)P);
        out[p].rows = (rb[p + 1] - rb[p]) * nl;
        for (int64_t r = rb[p]; r < rb[p + 1]; r++)
            for (int64_t m = 0; m < nt; m++)
                for (int s = 0; s < 2; s++) {
                    const int64_t c = (s ? k->hi : k->lo)[r * nt + m];
                    if (c < 0 || (c >= rb[p] && c < rb[p + 1]) || stamp[c] == p) continue;
                    stamp[c] = p;
                    const int q = kd_owner_of(rb, P, c);
                    out[p].halo_lines++;
                    out[q].send_values += nl;
                    from[q] = 1;
                }
        out[p].halo_values = out[p].halo_lines * nl;
        for (int q = 0; q < P; q++) out[p].neighbors += from[q];
    }
}

int pl_kron_halo(const pl_kron *k, int nranks, int split, pl_kron_halo_info *out)
{
    PL_CHECK(out && nranks >= 1, PL_ERR_ARG, "pl_kron_halo: NULL output or %d ranks", nranks);
    PL_CHECK(split == PL_KRON_SPLIT_LEFT || split == PL_KRON_SPLIT_RIGHT, PL_ERR_ARG, "pl_kron_halo: split %d",
             split);
    PL_CALL(pl_kron_check(k));
    memset(out, 0, (size_t)nranks * sizeof *out);
    const int64_t n = split == PL_KRON_SPLIT_LEFT ? k->n_left : k->n_right;
    int64_t *b = malloc((size_t)(nranks + 1) * sizeof *b);
    int32_t *stamp = malloc((size_t)n * sizeof *stamp);
    char *from = malloc((size_t)nranks);
    int rc = PL_OK;
    PL_CHECK_GOTO(b && stamp && from, PL_ERR_MEM, done, rc, "out of host memory for the halo of %d ranks", nranks);
    for (int q = 0; q <= nranks; q++) b[q] = pl_op_part(n, q, nranks);
    if (split == PL_KRON_SPLIT_LEFT) halo_left(k, nranks, b, stamp, from, out);
    else halo_right(k, nranks, b, stamp, from, out);
done:
    free(b);
    free(stamp);
    free(from);
    return rc;
}

/* The rank's tables from k and the split kd: the local pl_kron and the
 * remote lists.  PL_ERR_ARG when A references a remote left row that is not
 * in the halo (an update whose structure changed). */
static int dist_tables(const pl_kron *k, const kron_dist *kd, dist_tab *t)
{
    memset(t, 0, sizeof *t);
    const int64_t l0 = kd->l0, nl = kd->l1 - kd->l0, nt = k->nterms;
    int64_t nloc = 0, nrem = 0, nrr = 0;
    for (int64_t l = l0; l < kd->l1; l++) {
        int has = 0;
        for (int64_t j = k->a_ptr[l]; j < k->a_ptr[l + 1]; j++) {
            const int64_t c = k->a_col[j];
            if (kd->repro && c >= l0 && c < kd->l1) {
                nrem++;
                has = 1;
            } else if (c >= l0 && c < kd->l1) {
                nloc++;
            } else {
                PL_CHECK(kd->hmap[c] >= 0, PL_ERR_ARG,
                         "the tables' hopping references electron configuration %lld, outside the operator's halo "
                         "(the model's structure changed: build a new operator)",
                         (long long)c);
                nrem++;
                has = 1;
            }
        }
        nrr += has;
    }
    PL_MALLOC(t->a_ptr, nl + 1);
    PL_MALLOC(t->a_col, nloc ? nloc : 1);
    PL_MALLOC(t->a_val, nloc ? nloc : 1);
    PL_MALLOC(t->r_row, nrr ? nrr : 1);
    PL_MALLOC(t->r_ptr, nrr + 1);
    PL_MALLOC(t->r_hrow, nrem ? nrem : 1);
    PL_MALLOC(t->r_val, nrem ? nrem : 1);
    int64_t a = 0, e = 0, i = 0;
    t->a_ptr[0] = 0;
    t->r_ptr[0] = 0;
    for (int64_t l = l0; l < kd->l1; l++) {
        const int64_t e0 = e;
        for (int64_t j = k->a_ptr[l]; j < k->a_ptr[l + 1]; j++) {
            const int64_t c = k->a_col[j];
            if (kd->repro && c >= l0 && c < kd->l1) { /* x's own row, behind the halo in d_xext */
                t->r_hrow[e] = (int32_t)(kd->n_hrows + (c - l0));
                t->rem_nnz += k->a_val[j] != 0.0;
                t->r_val[e++] = k->a_val[j];
            } else if (c >= l0 && c < kd->l1) {
                t->a_col[a] = (int32_t)(c - l0);
                t->a_val[a++] = k->a_val[j];
            } else {
                t->r_hrow[e] = kd->hmap[c];
                t->rem_nnz += k->a_val[j] != 0.0;
                t->r_val[e++] = k->a_val[j];
            }
        }
        t->a_ptr[l - l0 + 1] = a;
        if (e > e0) {
            t->r_row[i] = (int32_t)(l - l0);
            t->r_ptr[++i] = e;
        }
    }
    t->kl = *k;
    t->kl.n_left = nl;
    t->kl.a_ptr = t->a_ptr;
    t->kl.a_col = t->a_col;
    t->kl.a_val = t->a_val;
    t->kl.dl = k->dl + l0;
    if (nt > 0) t->kl.c = k->c + l0 * nt;
    t->rem = (pl_kron_remote){.n_right = k->n_right, .n_rows = (int32_t)nrr, .row = t->r_row, .ptr = t->r_ptr,
                              .hrow = t->r_hrow, .val = t->r_val};
    PL_CALL(pl_kron_check(&t->kl));
    return PL_OK;
}

size_t kd_rem_bytes(const pl_kron_remote *r)
{
    const size_t n = (size_t)r->n_rows, e = n ? (size_t)r->ptr[n] : 0;
    if (!n) return 0;
    return n * sizeof(int32_t) + (n + 1) * sizeof(int64_t) + e * (sizeof(int32_t) + sizeof(double)) +
           (r->split == PL_KRON_SPLIT_RIGHT ? e * sizeof(int32_t) + (size_t)(r->n_left * r->nterms) * sizeof(double)
                                            : 0);
}

/* The halo map of this rank (kd->hmap, n_hrows) and the receive plan:
 * remote left rows in ascending order, grouped by owner (ascending). */
static int plan_recv(pl_op *op, const pl_kron *k, kron_dist *kd, const int64_t *lb)
{
    const int P = op->size;
    const int64_t nr = k->n_right;
    PL_MALLOC(kd->hmap, k->n_left);
    PL_MALLOC(op->rnb, P);
    PL_MALLOC(op->rcnt, P); /* first the halo rows per owner */
    PL_MALLOC(op->roff, P);
    for (int q = 0; q < P; q++) op->rcnt[q] = 0;
    for (int64_t l = 0; l < k->n_left; l++) kd->hmap[l] = -1;
    for (int64_t l = kd->l0; l < kd->l1; l++)
        for (int64_t j = k->a_ptr[l]; j < k->a_ptr[l + 1]; j++) {
            const int64_t c = k->a_col[j];
            if (c < kd->l0 || c >= kd->l1) kd->hmap[c] = 0;
        }
    int32_t h = 0;
    for (int64_t l = 0; l < k->n_left; l++)
        if (kd->hmap[l] == 0) {
            kd->hmap[l] = h++;
            op->rcnt[kd_owner_of(lb, P, l)]++;
        }
    kd->n_hrows = h;
    PL_CHECK((int64_t)h * nr <= INT32_MAX, PL_ERR_INPUT,
             "format = matrix_free: a halo of %lld x %lld values on rank %d exceeds 2^31-1: use more ranks",
             (long long)h, (long long)nr, op->rank);
    op->n_halo = (int32_t)(h * nr);
    int nn = 0;
    int64_t off = 0;
    for (int q = 0; q < P; q++) { /* compact in place: nn <= q */
        const int64_t c = op->rcnt[q];
        if (!c) continue;
        op->rnb[nn] = q;
        op->rcnt[nn] = (int)(c * nr); /* <= n_halo */
        op->roff[nn++] = (int)off;
        off += c * nr;
    }
    op->n_rnb = nn;
    return PL_OK;
}

/* The send plan: for every other rank p, the rows of this block that p's
 * rows of A reference (ascending: p's halo order), expanded to one index
 * per value into *send_idx (n_send entries, local row l n_right + r). */
static int plan_send(pl_op *op, const pl_kron *k, const kron_dist *kd, const int64_t *lb, int32_t **send_idx)
{
    const int P = op->size;
    const int64_t nr = k->n_right, nl = kd->l1 - kd->l0;
    int32_t *mark = NULL, *srow = NULL;
    int64_t ns = 0; /* rows sent so far */
    PL_MALLOC(op->snb, P);
    PL_MALLOC(op->scnt, P);
    PL_MALLOC(op->soff, P);
    PL_MALLOC(op->req, P + op->n_rnb);
    PL_MALLOC(mark, nl ? nl : 1);
    int rc = PL_OK;
    srow = malloc((size_t)(nl ? nl : 1) * (size_t)P * sizeof *srow); /* at most every row to every rank */
    PL_CHECK_GOTO(srow, PL_ERR_MEM, done, rc, "out of host memory for the send plan");
    for (int64_t i = 0; i < nl; i++) mark[i] = -1;
    int nn = 0;
    for (int p = 0; p < P; p++) {
        if (p == op->rank) continue;
        for (int64_t l = lb[p]; l < lb[p + 1]; l++)
            for (int64_t j = k->a_ptr[l]; j < k->a_ptr[l + 1]; j++) {
                const int64_t c = k->a_col[j];
                if (c >= kd->l0 && c < kd->l1) mark[c - kd->l0] = p;
            }
        const int64_t s0 = ns;
        for (int64_t i = 0; i < nl; i++)
            if (mark[i] == p) srow[ns++] = (int32_t)i;
        if (ns == s0) continue;
        PL_CHECK_GOTO(ns * nr <= INT32_MAX, PL_ERR_INPUT, done, rc,
                      "format = matrix_free: rank %d would send more than 2^31-1 values per product: use more ranks",
                      op->rank);
        op->snb[nn] = p;
        op->scnt[nn] = (int)((ns - s0) * nr);
        op->soff[nn++] = (int)(s0 * nr);
    }
    op->n_snb = nn;
    op->n_send = (int32_t)(ns * nr);
    int32_t *idx = malloc((size_t)(op->n_send ? op->n_send : 1) * sizeof *idx);
    PL_CHECK_GOTO(idx, PL_ERR_MEM, done, rc, "out of host memory for the send list (%lld values)",
                  (long long)op->n_send);
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < ns; i++)
        for (int64_t r = 0; r < nr; r++) idx[i * nr + r] = (int32_t)(srow[i] * nr + r);
    *send_idx = idx;
done:
    free(mark);
    free(srow);
    return rc;
}

int kd_tables_create(pl_backend *be, const pl_kron *kl, const pl_kron_remote *rem, void **d_kron, void **d_krem)
{
    *d_kron = *d_krem = NULL;
    PL_CALL(be->kron_create(be, kl, d_kron));
    if (rem->n_rows == 0) return PL_OK;
    const int rc = be->kron_rem_create(be, rem, d_krem);
    if (rc != PL_OK) {
        be->kron_destroy(be, *d_kron);
        *d_kron = NULL;
        PL_CALL(rc);
    }
    return PL_OK;
}

/* Everything of the build that needs no other rank. */
static int dist_local(pl_op *op, const pl_kron *k)
{
    const int P = op->size;
    const int64_t nr = k->n_right;
    PL_CHECK(op->be->kron_rem_create && op->be->kron_rem_apply && op->be->kron_rem_destroy, PL_ERR_INPUT,
             "the %s backend runs format = matrix_free on one rank only (no remote kernels)", op->be->name);
    PL_CHECK(k->n_left >= P, PL_ERR_INPUT,
             "format = matrix_free on %d ranks: the model has %lld electron configurations, at least one per rank "
             "is needed (use at most %lld ranks or a stored format)",
             P, (long long)k->n_left, (long long)k->n_left);
    /* every rank's block fits int32 (the same answer everywhere) */
    const int64_t wide = (k->n_left + P - 1) / P;
    PL_CHECK(wide * nr <= INT32_MAX, PL_ERR_INPUT,
             "format = matrix_free: %lld rows on a rank of %d; at most 2^31-1 rows per rank are supported (use "
             "more ranks)",
             (long long)(wide * nr), P);
    kron_dist *kd = calloc(1, sizeof *kd);
    PL_CHECK(kd, PL_ERR_MEM, "out of host memory");
    op->kdist = kd;
    int64_t *lb = NULL;
    PL_MALLOC(lb, P + 1);
    for (int q = 0; q <= P; q++) lb[q] = pl_op_part(k->n_left, q, P);
    kd->split = PL_KRON_SPLIT_LEFT;
    kd->repro = op->repro;
    kd->n_left = k->n_left;
    kd->n_right = k->n_right;
    kd->l0 = lb[op->rank];
    kd->l1 = lb[op->rank + 1];
    int32_t *send_idx = NULL;
    dist_tab t = {0};
    int rc = plan_recv(op, k, kd, lb);
    if (rc == PL_OK) rc = plan_send(op, k, kd, lb, &send_idx);
    free(lb);
    if (rc == PL_OK) rc = dist_tables(k, kd, &t);
    if (rc == PL_OK) rc = kd_tables_create(op->be, &t.kl, &t.rem, &op->d_kron, &op->d_krem);
    if (rc == PL_OK) {
        op->n = (int32_t)((kd->l1 - kd->l0) * nr);
        op->row0 = kd->l0 * nr;
        rc = pl_op_kron_nnz(&t.kl, &op->nnz);
        op->nnz += t.rem_nnz * nr;
        op->dev_bytes = pl_kron_bytes(&t.kl) + kd_rem_bytes(&t.rem);
    }
    if (rc == PL_OK) rc = pl_op_halo_alloc(op, send_idx);
    if (rc == PL_OK && kd->repro) {
        rc = op->be->vec_alloc(op->be, (size_t)op->n_halo + (size_t)op->n + 1, &op->d_xext);
        op->dev_bytes += ((size_t)op->n_halo + (size_t)op->n) * sizeof(double);
    }
    free(send_idx);
    dist_tab_free(&t);
    PL_CALL(rc);
    return PL_OK;
}

int pl_kron_split_choose(const pl_kron *k, int nranks, int *split, int64_t *left_max, int64_t *right_max)
{
    PL_CHECK(split && nranks >= 1, PL_ERR_ARG, "pl_kron_split_choose: NULL output or %d ranks", nranks);
    *split = PL_KRON_SPLIT_LEFT;
    pl_kron_halo_info *h = calloc((size_t)nranks, sizeof *h);
    PL_CHECK(h, PL_ERR_MEM, "out of host memory for the halo of %d ranks", nranks);
    int64_t lm = 0, rm = 0;
    int rc = pl_kron_halo(k, nranks, PL_KRON_SPLIT_LEFT, h);
    for (int q = 0; rc == PL_OK && q < nranks; q++) lm = h[q].halo_values > lm ? h[q].halo_values : lm;
    if (rc == PL_OK) rc = pl_kron_halo(k, nranks, PL_KRON_SPLIT_RIGHT, h);
    for (int q = 0; rc == PL_OK && q < nranks; q++) rm = h[q].halo_values > rm ? h[q].halo_values : rm;
    free(h);
    PL_CALL(rc);
    if (left_max) *left_max = lm;
    if (right_max) *right_max = rm;
    const int64_t wide = (k->n_right + nranks - 1) / nranks;
    if (nranks > 1 && rm < lm && k->n_right >= nranks && wide * k->n_left <= INT32_MAX &&
        rm <= INT32_MAX)
        *split = PL_KRON_SPLIT_RIGHT;
    return PL_OK;
}

int pl_op_kron_split(const pl_op *op)
{
    const kron_dist *kd = op ? op->kdist : NULL;
    return kd ? kd->split : -1;
}

int pl_op_kron_dist_build(pl_op *op, const pl_kron *k, const pl_op_options *opt)
{
    int split = opt->kron_split;
    PL_CHECK(split == PL_KRON_SPLIT_LEFT || split == PL_KRON_SPLIT_RIGHT || split == PL_KRON_SPLIT_AUTO,
             PL_ERR_ARG, "pl_op_create_kron: kron_split %d", split);
    if (op->repro) { /* the split whose row sums keep the one-rank order (dist_tables) */
        PL_CHECK(split != PL_KRON_SPLIT_RIGHT, PL_ERR_INPUT,
                 "kron_split = phonon with reproducible results: the phonon split sums its rows in another "
                 "order than one rank does (use kron_split = auto or electron)");
        split = PL_KRON_SPLIT_LEFT;
    }
    if (split == PL_KRON_SPLIT_AUTO) /* the same tables on every rank: the same answer */
        PL_CALL(pl_kron_split_choose(k, op->size, &split, NULL, NULL));
    const int rc = split == PL_KRON_SPLIT_RIGHT ? pl_op_kron_right_local(op, k) : dist_local(op, k);
    PL_CALL(pl_op_agree(op->comm, rc, "building the matrix-free operator"));
    double tp = pl_wtime();
    PL_CALL(pl_op_halo_finish(op, opt, &tp));
    const kron_dist *kd = op->kdist;
    pl_debug("pl_op_create_kron: rank %d: %s configurations [%lld, %lld) of %lld, halo %d lines (%.3g MB), "
             "sends %.3g MB to %d ranks",
             op->rank, kd->split == PL_KRON_SPLIT_RIGHT ? "phonon" : "electron", (long long)kd->l0,
             (long long)kd->l1, (long long)(kd->split == PL_KRON_SPLIT_RIGHT ? kd->n_right : kd->n_left),
             kd->n_hrows, 8e-6 * (double)op->n_halo, 8e-6 * (double)op->n_send, op->n_snb);
    return PL_OK;
}

int pl_op_kron_dist_update(pl_op *op, const pl_kron *k)
{
    const kron_dist *kd = op->kdist;
    PL_CHECK(kd && k->n_left == kd->n_left && k->n_right == kd->n_right, PL_ERR_ARG,
             "pl_op_kron_update: %lld x %lld configurations, the operator was split for %lld x %lld",
             (long long)k->n_left, (long long)k->n_right, kd ? (long long)kd->n_left : -1LL,
             kd ? (long long)kd->n_right : -1LL);
    if (kd->split == PL_KRON_SPLIT_RIGHT) return pl_op_kron_right_update(op, k);
    dist_tab t = {0};
    void *dk = NULL, *dr = NULL;
    int64_t nnz = 0;
    int rc = dist_tables(k, kd, &t);
    if (rc == PL_OK) rc = pl_op_kron_nnz(&t.kl, &nnz);
    if (rc == PL_OK) rc = kd_tables_create(op->be, &t.kl, &t.rem, &dk, &dr); /* the old ones stay until the new exist */
    rc = pl_op_agree(op->comm, rc, "updating the matrix-free operator");
    if (rc != PL_OK) {
        if (dk) op->be->kron_destroy(op->be, dk);
        if (dr) op->be->kron_rem_destroy(op->be, dr);
        dist_tab_free(&t);
        PL_CALL(rc);
    }
    op->be->kron_destroy(op->be, op->d_kron);
    if (op->d_krem) op->be->kron_rem_destroy(op->be, op->d_krem);
    op->d_kron = dk;
    op->d_krem = dr;
    op->nnz = nnz + t.rem_nnz * k->n_right;
    op->dev_bytes = pl_kron_bytes(&t.kl) + kd_rem_bytes(&t.rem);
    if (op->n_rnb + op->n_snb > 0)
        op->dev_bytes += (size_t)op->n_send * (sizeof(int32_t) + sizeof(double)) + (size_t)op->n_halo * sizeof(double);
    dist_tab_free(&t);
    return PL_OK;
}

void pl_op_kron_dist_free(pl_op *op)
{
    if (op->d_krem && op->be) op->be->kron_rem_destroy(op->be, op->d_krem);
    op->d_krem = NULL;
    kron_dist *kd = op->kdist;
    if (kd) free(kd->hmap);
    free(kd);
    op->kdist = NULL;
}
