/* op_kron_right.c — the matrix-free operator (pl_kron.h) on several ranks
 * split by RIGHT rows (phonon configurations; issue 26, "Deliver 4";
 * spmv.h enum pl_kron_split, opt->kron_split).
 *
 * Method.  Rank q owns the right rows [R_q, R_q+1), R_q = floor(n_right q
 * / P), of every left row: the global rows l n_right + r, r in [R_q,
 * R_q+1), which are not one contiguous block.  Its local order is the
 * row-major n_left x w array (w = R_q+1 - R_q), local row i = l w + (r -
 * R_q); pl_op_global_index maps it (op_kron.c), and op_layout.c moves
 * vectors into contiguous blocks for whatever reads them by global row
 * (output, observables, checkpoints).  With x and y viewed as n_left x
 * n_right arrays,
 *   y[:, R] = (A (x) 1 + diag + sum_m diag(c_m) (x) B_m[R, R]) x[:, R]
 *           + sum_m diag(c_m) (x) B_m[R, rem] x[:, rem]:
 * the hopping A (x) 1 and the diagonal act inside an electron column and
 * are local; the right factors' entries whose column r' lies outside the
 * block need the whole electron column x[:, r'] (the halo).  The local part
 * is the pl_kron of the block: A, dl and c whole, dr and the right tables
 * restricted to the block's rows, their columns shifted and those outside
 * the block set to -1 (no entry), applied by be->kron_apply as on one rank.
 * The remote part is the list of the right factors' remote entries by
 * local right row (pl_kron_remote with split RIGHT: the factor m, the halo
 * column, the value), added by be->kron_rem_apply after the exchange:
 *   y[l w + r] += (c[l nterms + m] * v) x_halo[h n_left + l].
 * A row's sum is taken in another order than on one rank (the local terms
 * first): equal to about 1e-16, not bitwise.
 *
 * Halo plan (no message: every rank holds the whole tables): the halo
 * columns of rank p are the sorted unique columns lo/hi >= 0 of p's right
 * rows outside its block (pl_kron_halo's RIGHT count, the same scan); the
 * halo holds n_hrows whole electron columns, column h at x_halo[h n_left],
 * grouped by owner in ascending order; the send list is one int32 index
 * per value, column-major over the sent columns (l w + r - R_q), so the
 * exchange machinery of the LEFT split (op_apply.c, op_block.c: every
 * exchange mode and transport) moves it unchanged.  Memory per rank: 8 B
 * per halo value, 12 B per sent value, n_right int32 for the halo map, the
 * block's right tables (8 B per entry of lo and hi), the remote lists, and
 * the whole left tables.
 *
 * The block's rows, the halo and the send list must fit int32. */
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

/* The rank's tables: the local pl_kron (owned lo/hi) and the remote lists. */
typedef struct rtab {
    pl_kron kl;
    int32_t *lo, *hi;
    pl_kron_remote rem;
    int32_t *r_row, *r_hcol, *r_term;
    int64_t *r_ptr;
    double *r_val;
    int64_t rem_nnz; /* non-zeros of the rows the remote entries stand for */
} rtab;

static void rtab_free(rtab *t)
{
    free(t->lo);
    free(t->hi);
    free(t->r_row);
    free(t->r_hcol);
    free(t->r_term);
    free(t->r_ptr);
    free(t->r_val);
    memset(t, 0, sizeof *t);
}

/* Left rows with c[l, m] != 0, per factor m (cnt[nterms]). */
static void c_counts(const pl_kron *k, int64_t *cnt)
{
    const int64_t nt = k->nterms;
    for (int64_t m = 0; m < nt; m++) cnt[m] = 0;
    for (int64_t l = 0; l < k->n_left; l++)
        for (int64_t m = 0; m < nt; m++) cnt[m] += k->c[l * nt + m] != 0.0;
}

/* Count the remote entries of the block (n_ent) and its rows with one (n_rr);
 * PL_ERR_ARG for a remote column outside the halo map. */
static int count_remote(const pl_kron *k, const kron_dist *kd, int64_t *n_ent, int64_t *n_rr)
{
    const int64_t nt = k->nterms;
    *n_ent = *n_rr = 0;
    for (int64_t r = kd->l0; r < kd->l1; r++) {
        int has = 0;
        for (int64_t m = 0; m < nt; m++)
            for (int s = 0; s < 2; s++) {
                const int64_t c = (s ? k->hi : k->lo)[r * nt + m];
                if (c < 0 || (c >= kd->l0 && c < kd->l1)) continue;
                PL_CHECK(kd->hmap[c] >= 0, PL_ERR_ARG,
                         "the tables' phonon factor references phonon configuration %lld, outside the operator's "
                         "halo (the model's structure changed: build a new operator)",
                         (long long)c);
                (*n_ent)++;
                has = 1;
            }
        *n_rr += has;
    }
    return PL_OK;
}

/* The remote lists of the block into t (allocated by the caller). */
static void fill_remote(const pl_kron *k, const kron_dist *kd, const int64_t *cnt, rtab *t)
{
    const int64_t nt = k->nterms;
    int64_t e = 0, i = 0;
    t->r_ptr[0] = 0;
    for (int64_t r = kd->l0; r < kd->l1; r++) {
        const int64_t e0 = e;
        for (int64_t m = 0; m < nt; m++)
            for (int s = 0; s < 2; s++) {
                const int64_t j = r * nt + m, c = (s ? k->hi : k->lo)[j];
                if (c < 0 || (c >= kd->l0 && c < kd->l1)) continue;
                const double v = (s ? k->hi_val : k->lo_val)[j];
                t->r_hcol[e] = kd->hmap[c];
                t->r_term[e] = (int32_t)m;
                t->r_val[e++] = v;
                t->rem_nnz += v != 0.0 ? cnt[m] : 0;
            }
        if (e > e0) {
            t->r_row[i] = (int32_t)(r - kd->l0);
            t->r_ptr[++i] = e;
        }
    }
}

/* The rank's tables from k and the split kd. */
static int right_tables(const pl_kron *k, const kron_dist *kd, rtab *t)
{
    memset(t, 0, sizeof *t);
    const int64_t w = kd->l1 - kd->l0, nt = k->nterms, r0 = kd->l0;
    int64_t ne = 0, nrr = 0, *cnt = NULL;
    PL_CALL(count_remote(k, kd, &ne, &nrr));
    const int64_t nlh = w * nt > 0 ? w * nt : 1;
    PL_MALLOC(t->lo, nlh);
    PL_MALLOC(t->hi, nlh);
    PL_MALLOC(t->r_row, nrr ? nrr : 1);
    PL_MALLOC(t->r_ptr, nrr + 1);
    PL_MALLOC(t->r_hcol, ne ? ne : 1);
    PL_MALLOC(t->r_term, ne ? ne : 1);
    PL_MALLOC(t->r_val, ne ? ne : 1);
    PL_MALLOC(cnt, nt ? nt : 1);
    for (int64_t j = 0; j < w * nt; j++) {
        const int64_t lo = k->lo[r0 * nt + j], hi = k->hi[r0 * nt + j];
        t->lo[j] = lo >= r0 && lo < kd->l1 ? (int32_t)(lo - r0) : -1;
        t->hi[j] = hi >= r0 && hi < kd->l1 ? (int32_t)(hi - r0) : -1;
    }
    c_counts(k, cnt);
    fill_remote(k, kd, cnt, t);
    free(cnt);
    t->kl = *k;
    t->kl.n_right = w;
    t->kl.dr = k->dr + r0;
    t->kl.lo = t->lo;
    t->kl.hi = t->hi;
    if (nt > 0) {
        t->kl.lo_val = k->lo_val + r0 * nt;
        t->kl.hi_val = k->hi_val + r0 * nt;
    }
    t->rem = (pl_kron_remote){.n_right = w,
                              .n_rows = (int32_t)nrr,
                              .row = t->r_row,
                              .ptr = t->r_ptr,
                              .hrow = t->r_hcol,
                              .val = t->r_val,
                              .split = PL_KRON_SPLIT_RIGHT,
                              .n_left = k->n_left,
                              .nterms = k->nterms,
                              .term = t->r_term,
                              .c = k->c};
    PL_CALL(pl_kron_check(&t->kl));
    return PL_OK;
}

/* Mark the columns outside [r0, r1) that right rows [a, b) reference:
 * mark[c] = tag. */
static void mark_cols(const pl_kron *k, int64_t a, int64_t b, int64_t r0, int64_t r1, int32_t *mark, int32_t tag)
{
    const int64_t nt = k->nterms;
    for (int64_t r = a; r < b; r++)
        for (int64_t m = 0; m < nt; m++)
            for (int s = 0; s < 2; s++) {
                const int64_t c = (s ? k->hi : k->lo)[r * nt + m];
                if (c >= 0 && (c < r0 || c >= r1)) mark[c] = tag;
            }
}

/* The halo map (kd->hmap over the right rows) and the receive plan. */
static int plan_recv(pl_op *op, const pl_kron *k, kron_dist *kd, const int64_t *rb)
{
    const int P = op->size;
    const int64_t nl = k->n_left;
    PL_MALLOC(kd->hmap, k->n_right);
    PL_MALLOC(op->rnb, P);
    PL_MALLOC(op->rcnt, P);
    PL_MALLOC(op->roff, P);
    for (int q = 0; q < P; q++) op->rcnt[q] = 0;
    for (int64_t r = 0; r < k->n_right; r++) kd->hmap[r] = -1;
    mark_cols(k, kd->l0, kd->l1, kd->l0, kd->l1, kd->hmap, 0);
    int32_t h = 0;
    for (int64_t r = 0; r < k->n_right; r++)
        if (kd->hmap[r] == 0) {
            kd->hmap[r] = h++;
            op->rcnt[kd_owner_of(rb, P, r)]++;
        }
    kd->n_hrows = h;
    PL_CHECK((int64_t)h * nl <= INT32_MAX, PL_ERR_INPUT,
             "format = matrix_free, kron_split = phonon: a halo of %lld x %lld values on rank %d exceeds 2^31-1: use "
             "more ranks or the electron split",
             (long long)h, (long long)nl, op->rank);
    op->n_halo = (int32_t)(h * nl);
    int nn = 0;
    int64_t off = 0;
    for (int q = 0; q < P; q++) {
        const int64_t c = op->rcnt[q];
        if (!c) continue;
        op->rnb[nn] = q;
        op->rcnt[nn] = (int)(c * nl);
        op->roff[nn++] = (int)off;
        off += c * nl;
    }
    op->n_rnb = nn;
    return PL_OK;
}

/* The send plan: for every other rank p, the columns of this block that
 * p's right rows reference (ascending: p's halo order), each expanded to
 * its n_left values l w + (c - R_q) into *send_idx. */
static int plan_send(pl_op *op, const pl_kron *k, const kron_dist *kd, const int64_t *rb, int32_t **send_idx)
{
    const int P = op->size;
    const int64_t nl = k->n_left, w = kd->l1 - kd->l0;
    int32_t *mark = NULL, *scol = NULL;
    int64_t ns = 0; /* columns sent so far */
    PL_MALLOC(op->snb, P);
    PL_MALLOC(op->scnt, P);
    PL_MALLOC(op->soff, P);
    PL_MALLOC(op->req, P + op->n_rnb);
    PL_MALLOC(mark, k->n_right);
    int rc = PL_OK;
    scol = malloc((size_t)(w ? w : 1) * (size_t)P * sizeof *scol);
    PL_CHECK_GOTO(scol, PL_ERR_MEM, done, rc, "out of host memory for the send plan");
    for (int64_t r = 0; r < k->n_right; r++) mark[r] = -1;
    int nn = 0;
    for (int p = 0; p < P; p++) {
        if (p == op->rank) continue;
        mark_cols(k, rb[p], rb[p + 1], rb[p], rb[p + 1], mark, p);
        const int64_t s0 = ns;
        for (int64_t c = kd->l0; c < kd->l1; c++)
            if (mark[c] == p) scol[ns++] = (int32_t)(c - kd->l0);
        if (ns == s0) continue;
        PL_CHECK_GOTO(ns * nl <= INT32_MAX, PL_ERR_INPUT, done, rc,
                      "format = matrix_free, kron_split = phonon: rank %d would send more than 2^31-1 values per "
                      "product: use more ranks or the electron split",
                      op->rank);
        op->snb[nn] = p;
        op->scnt[nn] = (int)((ns - s0) * nl);
        op->soff[nn++] = (int)(s0 * nl);
    }
    op->n_snb = nn;
    op->n_send = (int32_t)(ns * nl);
    int32_t *idx = malloc((size_t)(op->n_send ? op->n_send : 1) * sizeof *idx);
    PL_CHECK_GOTO(idx, PL_ERR_MEM, done, rc, "out of host memory for the send list (%lld values)",
                  (long long)op->n_send);
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < ns; i++)
        for (int64_t l = 0; l < nl; l++) idx[i * nl + l] = (int32_t)(l * w + scol[i]);
    *send_idx = idx;
done:
    free(mark);
    free(scol);
    return rc;
}

int pl_op_kron_right_local(pl_op *op, const pl_kron *k)
{
    const int P = op->size;
    const int64_t nl = k->n_left;
    PL_CHECK(op->be->kron_rem_create && op->be->kron_rem_apply && op->be->kron_rem_destroy, PL_ERR_INPUT,
             "the %s backend runs format = matrix_free on one rank only (no remote kernels)", op->be->name);
    PL_CHECK(k->n_right >= P, PL_ERR_INPUT,
             "format = matrix_free, kron_split = phonon on %d ranks: the model has %lld phonon configurations, at "
             "least one per rank is needed (use at most %lld ranks or the electron split)",
             P, (long long)k->n_right, (long long)k->n_right);
    const int64_t wide = (k->n_right + P - 1) / P;
    PL_CHECK(wide * nl <= INT32_MAX, PL_ERR_INPUT,
             "format = matrix_free, kron_split = phonon: %lld rows on a rank of %d; at most 2^31-1 rows per rank are "
             "supported (use more ranks)",
             (long long)(wide * nl), P);
    kron_dist *kd = calloc(1, sizeof *kd);
    PL_CHECK(kd, PL_ERR_MEM, "out of host memory");
    op->kdist = kd;
    int64_t *rb = NULL;
    PL_MALLOC(rb, P + 1);
    for (int q = 0; q <= P; q++) rb[q] = pl_op_part(k->n_right, q, P);
    kd->split = PL_KRON_SPLIT_RIGHT;
    kd->n_left = nl;
    kd->n_right = k->n_right;
    kd->l0 = rb[op->rank];
    kd->l1 = rb[op->rank + 1];
    int32_t *send_idx = NULL;
    rtab t = {0};
    int rc = plan_recv(op, k, kd, rb);
    if (rc == PL_OK) rc = plan_send(op, k, kd, rb, &send_idx);
    free(rb);
    if (rc == PL_OK) rc = right_tables(k, kd, &t);
    if (rc == PL_OK) rc = kd_tables_create(op->be, &t.kl, &t.rem, &op->d_kron, &op->d_krem);
    if (rc == PL_OK) {
        op->n = (int32_t)((kd->l1 - kd->l0) * nl);
        op->row0 = kd->l0; /* the first global row (l = 0); the rows are strided */
        rc = pl_op_kron_nnz(&t.kl, &op->nnz);
        op->nnz += t.rem_nnz;
        op->dev_bytes = pl_kron_bytes(&t.kl) + kd_rem_bytes(&t.rem);
    }
    if (rc == PL_OK) rc = pl_op_halo_alloc(op, send_idx);
    free(send_idx);
    rtab_free(&t);
    PL_CALL(rc);
    return PL_OK;
}

int pl_op_kron_right_update(pl_op *op, const pl_kron *k)
{
    const kron_dist *kd = op->kdist;
    rtab t = {0};
    void *dk = NULL, *dr = NULL;
    int64_t nnz = 0;
    int rc = right_tables(k, kd, &t);
    if (rc == PL_OK) rc = pl_op_kron_nnz(&t.kl, &nnz);
    if (rc == PL_OK) rc = kd_tables_create(op->be, &t.kl, &t.rem, &dk, &dr);
    rc = pl_op_agree(op->comm, rc, "updating the matrix-free operator");
    if (rc != PL_OK) {
        if (dk) op->be->kron_destroy(op->be, dk);
        if (dr) op->be->kron_rem_destroy(op->be, dr);
        rtab_free(&t);
        PL_CALL(rc);
    }
    op->be->kron_destroy(op->be, op->d_kron);
    if (op->d_krem) op->be->kron_rem_destroy(op->be, op->d_krem);
    op->d_kron = dk;
    op->d_krem = dr;
    op->nnz = nnz + t.rem_nnz;
    op->dev_bytes = pl_kron_bytes(&t.kl) + kd_rem_bytes(&t.rem);
    if (op->n_rnb + op->n_snb > 0)
        op->dev_bytes += (size_t)op->n_send * (sizeof(int32_t) + sizeof(double)) + (size_t)op->n_halo * sizeof(double);
    rtab_free(&t);
    return PL_OK;
}
