/* cpjds.c — the compressed pJDS format (issue 16; spmv.h "compressed
 * pJDS"): tables of the distinct values and column offsets of a row block's
 * local part, the packed entry words, the reference SpMV.
 *
 * Why it pays: SpMV is bound by memory traffic, about 12 bytes per entry
 * (8 value + 4 column) in every standard format.  A Holstein-Hubbard matrix
 * is a sum of Kronecker products: HMEp's 83 million entries take only 1,673
 * distinct values and 6,583 distinct offsets col - row, so a 32-bit word
 * (value id, offset id) replaces the 12 bytes, and the two tables (tens of
 * kB) stay in the L1/L2 caches.  The traffic floor falls from 12 to 4 bytes
 * per entry.  A matrix whose values are all distinct (CFD) gains nothing:
 * pl_op_create then keeps pJDS (spmv/op_format.c decides).
 *
 * Method: distinct keys are collected per thread in open-addressing hash
 * sets (64-bit keys: the value's bit pattern, or the offset), merged,
 * sorted (so ids do not depend on the thread count), then looked up again
 * through a read-only hash map while the chunks are filled in parallel.
 * Rows keep their original order (sort window 1): sorting rows by length
 * would renumber columns and scatter the offsets.
 */
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "pl_error.h"
#include "spmv.h"
#include "spmv_impl.h"

/* ---- open-addressing hash set / map of 64-bit keys ------------------------ */
typedef struct hslot {
    uint64_t key;
    int32_t id;   /* map: the key's id */
    int32_t used;
} hslot;          /* one probe, one cache line */
typedef struct hset {
    hslot *s;
    int64_t cap, n; /* cap = 2^(64 - shift) */
    int shift;
} hset;

static void hset_free(hset *h)
{
    free(h->s);
    memset(h, 0, sizeof *h);
}

static int hset_init(hset *h, int64_t cap)
{
    memset(h, 0, sizeof *h);
    h->cap = 16;
    h->shift = 60;
    while (h->cap < cap) h->cap <<= 1, h->shift--;
    h->s = calloc((size_t)h->cap, sizeof *h->s);
    return h->s ? PL_OK : PL_ERR_MEM;
}

/* Slot of k: where it is, or the empty slot where it would go. */
static inline int64_t hset_slot(const hset *h, uint64_t k)
{
    /* Fibonacci hashing: the top bits of k times 2^64 / golden ratio */
    const int64_t m = h->cap - 1;
    int64_t s = (int64_t)((k * UINT64_C(0x9e3779b97f4a7c15)) >> h->shift);
    while (h->s[s].used && h->s[s].key != k) s = (s + 1) & m;
    return s;
}

static int hset_add(hset *h, uint64_t k);
static int hset_grow(hset *h)
{
    hset o = *h;
    if (hset_init(h, o.cap * 2) != PL_OK) {
        *h = o;
        return PL_ERR_MEM;
    }
    for (int64_t s = 0; s < o.cap; s++)
        if (o.s[s].used) hset_add(h, o.s[s].key);
    hset_free(&o);
    return PL_OK;
}

/* Insert k (a set: no ids).  PL_ERR_MEM. */
static int hset_add(hset *h, uint64_t k)
{
    int64_t s = hset_slot(h, k);
    if (h->s[s].used) return PL_OK;
    h->s[s].used = 1;
    h->s[s].key = k;
    if (++h->n * 2 > h->cap) return hset_grow(h);
    return PL_OK;
}

/* ---- counting ------------------------------------------------------------ */
/* Local entries of the block's row i: those with column in [row0, row0 + n). */
#define LOCAL(A, e) ((uint64_t)((A)->col[e] - (A)->row0) < (uint64_t)(A)->nrows)

/* The distinct values (bit patterns) and offsets of the local part, with the
 * padding's +0.0 and 0, into sets vs and os; stops early (*over = 1) once
 * either exceeds PL_CPJDS_COUNT_MAX. */
static int collect(const pl_csr *A, hset *vs, hset *os, int *over)
{
    const int64_t n = A->nrows;
    int nt = omp_get_max_threads();
    hset *tv = calloc((size_t)nt, sizeof *tv), *to = calloc((size_t)nt, sizeof *to);
    int rc = (tv && to) ? PL_OK : PL_ERR_MEM;
    volatile int stop = 0;
    *over = 0;
    if (rc == PL_OK) rc = hset_init(vs, 1024);
    if (rc == PL_OK) rc = hset_init(os, 1024);
    if (rc == PL_OK)
#pragma omp parallel num_threads(nt)
    {
        int q = omp_get_thread_num(), T = omp_get_num_threads();
        hset *v = &tv[q], *o = &to[q];
        int e = hset_init(v, 1024);
        if (e == PL_OK) e = hset_init(o, 1024);
        int64_t a = n * q / T, b = n * (q + 1) / T;
        for (int64_t i = a; i < b && e == PL_OK && !stop; i++) {
            const int64_t grow = A->row0 + i;
            for (int64_t k = A->row_ptr[i]; k < A->row_ptr[i + 1] && e == PL_OK; k++) {
                if (!LOCAL(A, k)) continue;
                uint64_t bits;
                memcpy(&bits, &A->val[k], sizeof bits);
                e = hset_add(v, bits);
                if (e == PL_OK) e = hset_add(o, (uint64_t)(A->col[k] - grow));
            }
            if (v->n > PL_CPJDS_COUNT_MAX || o->n > PL_CPJDS_COUNT_MAX) stop = 1;
        }
#pragma omp critical(pl_cpjds_merge)
        {
            if (e != PL_OK) rc = e;
            for (int64_t s = 0; rc == PL_OK && !stop && s < v->cap; s++)
                if (v->s[s].used) rc = hset_add(vs, v->s[s].key);
            for (int64_t s = 0; rc == PL_OK && !stop && s < o->cap; s++)
                if (o->s[s].used) rc = hset_add(os, o->s[s].key);
            if (vs->n > PL_CPJDS_COUNT_MAX || os->n > PL_CPJDS_COUNT_MAX) stop = 1;
        }
        hset_free(v);
        hset_free(o);
    }
    free(tv);
    free(to);
    if (rc == PL_OK) rc = hset_add(vs, 0); /* +0.0: padding */
    if (rc == PL_OK) rc = hset_add(os, 0);
    if (stop) *over = 1;
    return rc;
}

int pl_cpjds_count(const pl_csr *A, int64_t *nval, int64_t *noff)
{
    hset vs, os;
    int over = 0;
    int rc = collect(A, &vs, &os, &over);
    if (rc == PL_OK) {
        *nval = over ? PL_CPJDS_COUNT_MAX + 1 : vs.n;
        *noff = over ? PL_CPJDS_COUNT_MAX + 1 : os.n;
    }
    hset_free(&vs);
    hset_free(&os);
    PL_CHECK(rc == PL_OK, rc, "out of host memory counting the distinct values of the matrix");
    return PL_OK;
}

int pl_cpjds_bits(int64_t n)
{
    int b = 0;
    while (b < 63 && ((int64_t)1 << b) < n) b++;
    return b;
}

/* ---- the tables ------------------------------------------------------------ */
static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}
static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Sorted keys of set s with key 0 first (values: +0.0 sorts first anyway;
 * offsets: 0 moved to the front), into a new map key -> id; keys[] out. */
static int make_table(const hset *s, int as_signed, uint64_t **keys_out, hset *map)
{
    uint64_t *k = malloc((size_t)(s->n ? s->n : 1) * sizeof *k);
    if (!k) return PL_ERR_MEM;
    int64_t m = 0;
    for (int64_t i = 0; i < s->cap; i++)
        if (s->s[i].used && s->s[i].key != 0) k[1 + m++] = s->s[i].key;
    k[0] = 0;
    qsort(k + 1, (size_t)m, sizeof *k, as_signed ? cmp_i64 : cmp_u64);
    if (hset_init(map, 4 * (m + 1)) != PL_OK) { /* load <= 1/4: short probes */
        free(k);
        return PL_ERR_MEM;
    }
    for (int64_t i = 0; i <= m; i++) {
        int64_t slot = hset_slot(map, k[i]);
        map->s[slot].used = 1;
        map->s[slot].key = k[i];
        map->s[slot].id = (int32_t)i;
    }
    map->n = m + 1;
    *keys_out = k;
    return PL_OK;
}

static inline uint32_t map_id(const hset *m, uint64_t k) { return (uint32_t)m->s[hset_slot(m, k)].id; }

void pl_cpjds_destroy(pl_cpjds *p)
{
    if (!p) return;
    free(p->chunk_start);
    free(p->chunk_width);
    free(p->row_len);
    free(p->ent);
    free(p->vtab);
    free(p->otab);
    memset(p, 0, sizeof *p);
}

size_t pl_cpjds_bytes(const pl_cpjds *p)
{
    return (size_t)p->nent * sizeof(uint32_t) + (size_t)(p->nchunks + 1) * sizeof(int64_t) +
           (size_t)p->nchunks * sizeof(int32_t) * (size_t)(1 + p->C) + (size_t)p->nval * sizeof(double) +
           (size_t)p->noff * sizeof(int32_t);
}

/* Chunk layout of the local row lengths (rows in order). */
static int layout(const pl_csr *A, int C, pl_cpjds *p)
{
    const int32_t n = (int32_t)A->nrows;
    p->nrows = n;
    p->C = C;
    p->nchunks = (int32_t)((n + C - 1) / C);
    PL_MALLOC(p->chunk_start, (size_t)p->nchunks + 1);
    PL_MALLOC(p->chunk_width, p->nchunks ? (size_t)p->nchunks : 1);
    PL_MALLOC(p->row_len, p->nchunks ? (size_t)p->nchunks * C : 1);
    int64_t nnz = 0;
#pragma omp parallel for schedule(static) reduction(+ : nnz)
    for (int32_t c = 0; c < p->nchunks; c++) {
        int32_t w = 0;
        for (int r = 0; r < C; r++) {
            int64_t i = (int64_t)c * C + r;
            int32_t l = 0;
            if (i < n)
                for (int64_t k = A->row_ptr[i]; k < A->row_ptr[i + 1]; k++) l += LOCAL(A, k);
            p->row_len[i] = l;
            nnz += l;
            if (l > w) w = l;
        }
        p->chunk_width[c] = w;
    }
    p->chunk_start[0] = 0;
    for (int32_t c = 0; c < p->nchunks; c++) p->chunk_start[c + 1] = p->chunk_start[c] + (int64_t)p->chunk_width[c] * C;
    p->nnz = nnz;
    p->nent = p->chunk_start[p->nchunks];
    return PL_OK;
}

int pl_cpjds_create(const pl_csr *A, int C, pl_cpjds *out)
{
    memset(out, 0, sizeof *out);
    PL_CHECK(A && C >= 1 && A->nrows >= 0 && A->nrows <= INT32_MAX, PL_ERR_ARG, "pl_cpjds_create: bad arguments");
    hset vs, os, vm = {0}, om = {0};
    uint64_t *vk = NULL, *ok = NULL;
    int over = 0;
    double t0 = pl_wtime();
    int rc = collect(A, &vs, &os, &over);
    pl_debug("pl_cpjds_create: distinct values and offsets %.3f s", pl_wtime() - t0);
    t0 = pl_wtime();
    const int64_t nv = vs.n, no = os.n;
    const int vb = pl_cpjds_bits(nv), ob = pl_cpjds_bits(no);
    if (rc == PL_OK && (over || vb + ob > 32 || ob > 31)) {
        if (over)
            rc = pl_error_set(PL_ERR_INPUT, __FILE__, __LINE__, __func__,
                              "the matrix cannot be compressed: more than %lld distinct values or column offsets "
                              "(use [spmv] format = auto or pjds)",
                              (long long)PL_CPJDS_COUNT_MAX);
        else
            rc = pl_error_set(PL_ERR_INPUT, __FILE__, __LINE__, __func__,
                              "the matrix cannot be compressed: %lld distinct values (%d bits) and %lld distinct "
                              "column offsets (%d bits) need more than 32 bits per entry (use [spmv] format = auto "
                              "or pjds)",
                              (long long)nv, vb, (long long)no, ob);
        goto out;
    }
    if (rc == PL_OK) rc = make_table(&vs, 0, &vk, &vm);
    if (rc == PL_OK) rc = make_table(&os, 1, &ok, &om);
    pl_debug("pl_cpjds_create: tables %.3f s", pl_wtime() - t0);
    t0 = pl_wtime();
    if (rc == PL_OK) rc = layout(A, C, out);
    pl_debug("pl_cpjds_create: layout %.3f s", pl_wtime() - t0);
    t0 = pl_wtime();
    if (rc == PL_OK) {
        out->obits = ob;
        out->nval = (int32_t)nv;
        out->noff = (int32_t)no;
        out->vtab = malloc((size_t)nv * sizeof *out->vtab);
        out->otab = malloc((size_t)no * sizeof *out->otab);
        out->ent = malloc((size_t)(out->nent ? out->nent : 1) * sizeof *out->ent);
        if (!out->vtab || !out->otab || !out->ent) rc = PL_ERR_MEM;
    }
    if (rc == PL_OK) {
        memcpy(out->vtab, vk, (size_t)nv * sizeof *out->vtab); /* bit patterns */
        for (int64_t i = 0; i < no; i++) out->otab[i] = (int32_t)(int64_t)ok[i];
        pl_cpjds *p = out;
        const int32_t n = p->nrows;
#pragma omp parallel for schedule(dynamic, 64)
        for (int32_t c = 0; c < p->nchunks; c++) {
            uint32_t *e = p->ent + p->chunk_start[c];
            const int32_t w = p->chunk_width[c];
            for (int r = 0; r < C; r++) {
                int64_t i = (int64_t)c * C + r;
                int32_t j = 0;
                if (i < n) {
                    const int64_t grow = A->row0 + i;
                    for (int64_t k = A->row_ptr[i]; k < A->row_ptr[i + 1]; k++) {
                        if (!LOCAL(A, k)) continue;
                        uint64_t bits;
                        memcpy(&bits, &A->val[k], sizeof bits);
                        uint32_t v = map_id(&vm, bits), o = map_id(&om, (uint64_t)(A->col[k] - grow));
                        e[(int64_t)j * C + r] = (uint32_t)((uint64_t)v << ob) | o;
                        j++;
                    }
                }
                for (; j < w; j++) e[(int64_t)j * C + r] = 0; /* +0.0 at the row's own column */
            }
        }
    }
    pl_debug("pl_cpjds_create: entry words %.3f s", pl_wtime() - t0);
out:
    hset_free(&vs);
    hset_free(&os);
    hset_free(&vm);
    hset_free(&om);
    free(vk);
    free(ok);
    if (rc != PL_OK) {
        pl_cpjds_destroy(out);
        if (rc == PL_ERR_MEM) return PL_ERROR(PL_ERR_MEM, "out of host memory building the compressed matrix");
        return pl_error_trace(rc, __FILE__, __LINE__, __func__, "compressing the local part");
    }
    return PL_OK;
}

void pl_cpjds_spmv_ref(const pl_cpjds *p, const double *x, double *y)
{
    const uint32_t om = (uint32_t)(((uint64_t)1 << p->obits) - 1);
    for (int32_t i = 0; i < p->nrows; i++) {
        const uint32_t *e = p->ent + p->chunk_start[i / p->C] + i % p->C;
        double s = 0.0;
        for (int32_t j = 0; j < p->row_len[i]; j++) {
            uint32_t u = e[(int64_t)j * p->C];
            s += p->vtab[u >> p->obits] * x[i + p->otab[u & om]];
        }
        y[i] = s;
    }
}
