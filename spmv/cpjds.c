/* cpjds.c — the compressed pJDS format (spmv.h "compressed pJDS"): tables of the distinct values and column offsets of a row block's
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
 * Counting (linear in the entries, stops as soon as the tables
 * cannot fit).  Each thread counts the distinct keys (64-bit: the value's
 * bit pattern, or the offset) of a contiguous range of rows, balanced by
 * entries, in its own open-addressing set; after every new key it tests the
 * limit (count_over: ids of more than 32 bits, more than PL_CPJDS_COUNT_MAX
 * keys, or tables over the caller's byte limit).  Any thread's set is a
 * subset of the whole, so a thread over the limit proves the matrix over
 * it: it raises the stop flag and every thread quits at its next row.
 * Otherwise the sets are merged into one set pre-sized for the sum of their
 * counts (load <= 1/2, no growth) that hashes with another multiplier, so
 * the slot order of a thread's set (its hash order) does not pile keys into
 * one region of the target.  Over the limit, the reported counts are those
 * of the shortest prefix of rows (in matrix order) that crosses the limit:
 * thread 0's set, which holds a prefix, is continued serially up to that
 * entry.  So counts, reason and ids never depend on the thread count.  Work:
 * O(entries counted) expected probes; pl_cpjds_stats reports them.
 *
 * Building: the keys are sorted (ids independent of the thread count), then
 * looked up again through a read-only hash map while the chunks are filled
 * in parallel.  Rows keep their original order (sort window 1): sorting rows
 * by length would renumber columns and scatter the offsets.
 */
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "pl_error.h"
#include "spmv.h"
#include "spmv_impl.h"

/* ---- open-addressing map of 64-bit keys to ids (the tables' lookup) ------ */
typedef struct hslot {
    uint64_t key;
    int32_t id;   /* the key's id */
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

/* ---- key sets for counting ---------------------------------------------- */
/* Open addressing, linear probing, 8-byte slots.  The key 0 (+0.0, offset
 * 0) is always a member (the padding), so 0 marks an empty slot and n
 * counts it.  Slot of k: the top bits of k * mul (multiplicative hashing;
 * the counting sets use the golden-ratio multiplier, the merge target
 * another one).  probes: slots inspected, the operation count. */
#define KMUL_COUNT UINT64_C(0x9e3779b97f4a7c15)
#define KMUL_MERGE UINT64_C(0xc2b2ae3d27d4eb4f)
typedef struct kset {
    uint64_t *k;
    int64_t cap, n; /* n: distinct keys incl. the implicit 0 */
    int shift;
    uint64_t mul;
} kset;

static void kset_free(kset *h)
{
    free(h->k);
    memset(h, 0, sizeof *h);
}

/* Empty set {0} of at least cap slots.  PL_ERR_MEM. */
static int kset_init(kset *h, int64_t cap, uint64_t mul)
{
    memset(h, 0, sizeof *h);
    h->cap = 16;
    h->shift = 60;
    while (h->cap < cap) h->cap <<= 1, h->shift--;
    h->n = 1;
    h->mul = mul;
    h->k = calloc((size_t)h->cap, sizeof *h->k);
    return h->k ? PL_OK : PL_ERR_MEM;
}

/* Slot of k != 0: where it is, or the empty slot where it would go. */
static inline int64_t kset_slot(const kset *h, uint64_t k, int64_t *probes)
{
    const int64_t m = h->cap - 1;
    int64_t s = (int64_t)((k * h->mul) >> h->shift), p = 1;
    while (h->k[s] && h->k[s] != k) s = (s + 1) & m, p++;
    *probes += p;
    return s;
}

/* Twice the slots, the keys re-inserted (larger table, same multiplier:
 * no clustering).  PL_ERR_MEM. */
static int kset_grow(kset *h, int64_t *probes)
{
    kset o = *h;
    if (kset_init(h, o.cap * 2, o.mul) != PL_OK) {
        *h = o;
        return PL_ERR_MEM;
    }
    for (int64_t s = 0; s < o.cap; s++)
        if (o.k[s]) h->k[kset_slot(h, o.k[s], probes)] = o.k[s];
    h->n = o.n;
    kset_free(&o);
    return PL_OK;
}

/* Insert k; *added = 1 if it was new.  Load stays <= 1/2.  PL_ERR_MEM. */
static inline int kset_add(kset *h, uint64_t k, int *added, int64_t *probes)
{
    *added = 0;
    if (k == 0) return PL_OK;
    int64_t s = kset_slot(h, k, probes);
    if (h->k[s]) return PL_OK;
    h->k[s] = k;
    *added = 1;
    if (++h->n * 2 > h->cap) return kset_grow(h, probes);
    return PL_OK;
}

/* ---- counting ------------------------------------------------------------ */
/* Local entries of the block's row i: those with column in [row0, row0 + n). */
#define LOCAL(A, e) ((uint64_t)((A)->col[e] - (A)->row0) < (uint64_t)(A)->nrows)

/* Why nv values and no offsets (each incl. the padding's 0) cannot be
 * compressed, 0 if they can: ids of more than 32 bits, more keys than
 * PL_CPJDS_COUNT_MAX, or (table_bytes > 0) tables of more than table_bytes.
 * Monotone in nv and no, so a subset over the limit proves the whole over. */
static int count_over(int64_t nv, int64_t no, double table_bytes)
{
    const int vb = pl_cpjds_bits(nv), ob = pl_cpjds_bits(no);
    if (vb + ob > 32 || ob > 31) return PL_CPJDS_OVER_BITS;
    if (nv > PL_CPJDS_COUNT_MAX || no > PL_CPJDS_COUNT_MAX) return PL_CPJDS_OVER_COUNT;
    if (table_bytes > 0 && 8.0 * (double)nv + 4.0 * (double)no > table_bytes) return PL_CPJDS_OVER_TABLES;
    return 0;
}

/* One counter: the sets of rows [first row, row) (a thread's range, or for
 * thread 0 a prefix of the matrix). */
typedef struct counter {
    kset v, o;
    int64_t row;     /* next row to count                                  */
    int64_t entries; /* local entries counted                              */
    int64_t probes;
    int over;        /* count_over's reason: stopped at the crossing entry */
} counter;

/* Count rows [c->row, end) into c until the counts cross the limit
 * (c->over set, at the entry that crossed) or, between rows, *stop is set
 * (stop may be NULL).  PL_ERR_MEM. */
static int count_rows(const pl_csr *A, int64_t end, double table_bytes, int *stop, counter *c)
{
    int64_t i = c->row, probes = 0, entries = 0;
    uint64_t lastv = 0; /* the last value counted (0: a member from the start) */
    int rc = PL_OK;
    for (; i < end && rc == PL_OK && !c->over; i++) {
        if (stop) {
            int s;
#pragma omp atomic read
            s = *stop;
            if (s) break;
        }
        const int64_t grow = A->row0 + i;
        for (int64_t k = A->row_ptr[i]; k < A->row_ptr[i + 1]; k++) {
            if (!LOCAL(A, k)) continue;
            uint64_t bits;
            memcpy(&bits, &A->val[k], sizeof bits);
            int av = 0, ao = 0;
            entries++;
            if (bits != lastv) rc = kset_add(&c->v, bits, &av, &probes); /* a repeat is a member already */
            lastv = bits;
            if (rc == PL_OK) rc = kset_add(&c->o, (uint64_t)(A->col[k] - grow), &ao, &probes);
            if (rc != PL_OK) break;
            if ((av | ao) && (c->over = count_over(c->v.n, c->o.n, table_bytes)) != 0) break;
        }
    }
    c->row = i;
    c->entries += entries;
    c->probes += probes;
    return rc;
}

/* First row whose entries start at or after `e` (row_ptr[0] = 0). */
static int64_t row_at_entry(const pl_csr *A, int64_t e)
{
    int64_t lo = 0, hi = A->nrows;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (A->row_ptr[mid] < e) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* The values (which = 0) or offsets (1) of the counters' sets into one set
 * (pre-sized, other multiplier) until the counts, with `other` keys of the
 * other kind, cross the limit (*over).  PL_ERR_MEM. */
static int merge_sets(const counter *t, int nt, int which, int64_t other, double table_bytes, kset *dst,
                      int *over, int64_t *probes, int64_t *merged)
{
    int64_t sum = 1;
    for (int q = 0; q < nt; q++) sum += (which ? t[q].o.n : t[q].v.n) - 1;
    if (kset_init(dst, 2 * sum, KMUL_MERGE) != PL_OK) return PL_ERR_MEM;
    for (int q = 0; q < nt && !*over; q++) {
        const kset *s = which ? &t[q].o : &t[q].v;
        for (int64_t i = 0; i < s->cap; i++) {
            const uint64_t k = s->k[i];
            if (!k) continue;
            int64_t slot = kset_slot(dst, k, probes);
            if (dst->k[slot]) continue;
            dst->k[slot] = k; /* no growth: load <= 1/2 by construction */
            dst->n++;
            ++*merged;
            if ((*over = count_over(which ? other : dst->n, which ? dst->n : other, table_bytes)) != 0) break;
        }
    }
    return PL_OK;
}

/* Stats of the last count (pl_cpjds_last_stats). */
static pl_cpjds_stats last_stats;

/* The distinct values (bit patterns) and offsets of the local part, with the
 * padding's +0.0 and 0, into sets vs and os (complete when st->over is 0;
 * else those of the shortest row prefix that crosses the limit of
 * count_over(.., table_bytes)).  PL_ERR_MEM. */
static int collect(const pl_csr *A, double table_bytes, kset *vs, kset *os, pl_cpjds_stats *st)
{
    const int64_t n = A->nrows, nnz = A->row_ptr[n];
    const double t0 = pl_wtime();
    int nt = omp_get_max_threads(), used = 1, stop = 0;
    if (nt < 1) nt = 1;
    counter *t = calloc((size_t)nt, sizeof *t);
    int *trc = calloc((size_t)nt, sizeof *trc);
    int rc = (t && trc) ? PL_OK : PL_ERR_MEM;
    memset(vs, 0, sizeof *vs);
    memset(os, 0, sizeof *os);
    memset(st, 0, sizeof *st);
    if (rc == PL_OK) {
#pragma omp parallel num_threads(nt)
        {
            const int q = omp_get_thread_num(), T = omp_get_num_threads();
            counter *c = &t[q];
            int e = kset_init(&c->v, 1024, KMUL_COUNT);
            if (e == PL_OK) e = kset_init(&c->o, 1024, KMUL_COUNT);
            /* rows balanced by entries; thread 0 starts at row 0 */
            c->row = q == 0 ? 0 : row_at_entry(A, (int64_t)((double)nnz * q / T));
            const int64_t end = q == T - 1 ? n : row_at_entry(A, (int64_t)((double)nnz * (q + 1) / T));
            if (c->row > end) c->row = end;
            if (e == PL_OK) e = count_rows(A, end, table_bytes, &stop, c);
            if (e != PL_OK || c->over) {
#pragma omp atomic write
                stop = 1;
            }
            trc[q] = e;
            if (q == 0) used = T;
        }
        for (int q = 0; q < used; q++)
            if (trc[q] != PL_OK) rc = trc[q];
    }
    int over = 0;
    for (int q = 0; rc == PL_OK && q < used; q++) over = over || t[q].over;
    if (rc == PL_OK && !over && used > 1) {
        /* every thread finished its range: the union */
        int64_t probes = 0, merged = 0, omax = 1;
        for (int q = 0; q < used; q++)
            if (t[q].o.n > omax) omax = t[q].o.n; /* a lower bound of the union's offsets */
        rc = merge_sets(t, used, 0, omax, table_bytes, vs, &over, &probes, &merged);
        if (rc == PL_OK && !over) rc = merge_sets(t, used, 1, vs->n, table_bytes, os, &over, &probes, &merged);
        if (rc == PL_OK && !over) over = count_over(vs->n, os->n, table_bytes);
        st->probes += probes;
        st->merged = merged;
        if (over) {
            kset_free(vs);
            kset_free(os);
        }
    }
    if (rc == PL_OK && (over || used == 1)) {
        /* thread 0 holds rows [0, t[0].row): continue it serially up to the
         * first entry that crosses the limit (or the end: then complete) */
        rc = count_rows(A, n, table_bytes, NULL, &t[0]);
        if (rc == PL_OK) {
            *vs = t[0].v;
            *os = t[0].o;
            memset(&t[0].v, 0, sizeof t[0].v);
            memset(&t[0].o, 0, sizeof t[0].o);
            st->over = t[0].over;
        }
    }
    for (int q = 0; t && q < used; q++) {
        st->entries += t[q].entries;
        st->probes += t[q].probes;
        kset_free(&t[q].v);
        kset_free(&t[q].o);
    }
    free(t);
    free(trc);
    if (rc != PL_OK) {
        kset_free(vs);
        kset_free(os);
        return rc;
    }
    st->nval = vs->n;
    st->noff = os->n;
    st->threads = used;
    st->seconds = pl_wtime() - t0;
    last_stats = *st;
    return PL_OK;
}

void pl_cpjds_last_stats(pl_cpjds_stats *st) { *st = last_stats; }

int pl_cpjds_count(const pl_csr *A, double max_table_bytes, pl_cpjds_stats *st)
{
    kset vs, os;
    pl_cpjds_stats s;
    int rc = collect(A, max_table_bytes, &vs, &os, &s);
    kset_free(&vs);
    kset_free(&os);
    PL_CHECK(rc == PL_OK, rc, "out of host memory counting the distinct values of the matrix");
    if (st) *st = s;
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
 * offsets: 0 moved to the front): the table, keys[] out. */
static int make_table(const kset *s, int as_signed, uint64_t **keys_out)
{
    uint64_t *k = malloc((size_t)(s->n ? s->n : 1) * sizeof *k);
    if (!k) return PL_ERR_MEM;
    int64_t m = 0;
    for (int64_t i = 0; i < s->cap; i++)
        if (s->k[i]) k[1 + m++] = s->k[i];
    k[0] = 0;
    qsort(k + 1, (size_t)m, sizeof *k, as_signed ? cmp_i64 : cmp_u64);
    *keys_out = k;
    return PL_OK;
}

static inline void map_put(hset *m, uint64_t k, int32_t id)
{
    int64_t slot = hset_slot(m, k);
    m->s[slot].used = 1;
    m->s[slot].key = k;
    m->s[slot].id = id;
    m->n++;
}

/* The maps key -> id of p's tables (load <= 1/4: short probes). */
static int tables_maps(const pl_cpjds *p, hset *vm, hset *om)
{
    if (hset_init(vm, 4 * (int64_t)p->nval) != PL_OK || hset_init(om, 4 * (int64_t)p->noff) != PL_OK)
        return PL_ERR_MEM;
    for (int32_t i = 0; i < p->nval; i++) {
        uint64_t k;
        memcpy(&k, &p->vtab[i], sizeof k);
        map_put(vm, k, i);
    }
    for (int32_t i = 0; i < p->noff; i++) map_put(om, (uint64_t)(int64_t)p->otab[i], i);
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
/* Word u at index x: into w, or the planes lo/hi. */
static inline void put_word(uint32_t *w, uint16_t *lo, uint8_t *hi, int64_t x, uint32_t u)
{
    if (w) {
        w[x] = u;
    } else {
        lo[x] = (uint16_t)(u & 0xFFFFu);
        hi[x] = (uint8_t)(u >> 16);
    }
}

/* Offset ids of the previous row's first OCACHE entries: rows of a
 * Kronecker-product matrix repeat their neighbours' offset pattern, so
 * most lookups end at one comparison. */
#define OCACHE 64

/* The words of chunks [c0, c1) (index 0 = entry chunk_start[c0]) through
 * the maps vm, om. */
static void words_chunks(const pl_cpjds *p, const pl_csr *A, const hset *vm, const hset *om, int64_t c0, int64_t c1,
                         uint32_t *w, uint16_t *lo, uint8_t *hi)
{
    const int C = p->C, ob = p->obits;
    const int32_t n = p->nrows;
    const int64_t base = p->chunk_start[c0];
#pragma omp parallel for schedule(dynamic, 64)
    for (int64_t c = c0; c < c1; c++) {
        const int64_t at = p->chunk_start[c] - base;
        const int32_t wd = p->chunk_width[c];
        uint64_t lastv = 0, ok[OCACHE] = {0}; /* key 0 has id 0 in both tables */
        uint32_t lastid = 0, oid[OCACHE] = {0};
        for (int r = 0; r < C; r++) {
            const int64_t i = c * C + r;
            int32_t j = 0;
            if (i < n) {
                const int64_t grow = A->row0 + i;
                for (int64_t k = A->row_ptr[i]; k < A->row_ptr[i + 1]; k++) {
                    if (!LOCAL(A, k)) continue;
                    uint64_t bits;
                    memcpy(&bits, &A->val[k], sizeof bits);
                    if (bits != lastv) lastid = map_id(vm, bits);
                    lastv = bits;
                    const uint64_t ko = (uint64_t)(A->col[k] - grow);
                    uint32_t o;
                    if (j < OCACHE && ok[j] == ko) {
                        o = oid[j];
                    } else {
                        o = map_id(om, ko);
                        if (j < OCACHE) ok[j] = ko, oid[j] = o;
                    }
                    put_word(w, lo, hi, at + (int64_t)j * C + r, (uint32_t)((uint64_t)lastid << ob) | o);
                    j++;
                }
            }
            for (; j < wd; j++) put_word(w, lo, hi, at + (int64_t)j * C + r, 0); /* +0.0 at the row's own column */
        }
    }
}

int pl_cpjds_fill_words(const pl_cpjds *p, const pl_csr *A, int64_t c0, int64_t c1, uint32_t *w, uint16_t *lo,
                        uint8_t *hi)
{
    PL_CHECK(p && A && c0 >= 0 && c0 <= c1 && c1 <= p->nchunks && (w || (lo && hi)), PL_ERR_ARG,
             "pl_cpjds_fill_words: bad arguments");
    if (c0 == c1) return PL_OK;
    hset vm = {0}, om = {0};
    int rc = tables_maps(p, &vm, &om);
    if (rc == PL_OK) words_chunks(p, A, &vm, &om, c0, c1, w, lo, hi);
    hset_free(&vm);
    hset_free(&om);
    PL_CHECK(rc == PL_OK, rc, "out of host memory for the compressed tables' maps");
    return PL_OK;
}

void pl_cpjds_copy_words(const pl_cpjds *p, int64_t c0, int64_t c1, uint32_t *w, uint16_t *lo, uint8_t *hi)
{
    const int64_t base = p->chunk_start[c0], cnt = p->chunk_start[c1] - base;
    const uint32_t *src = p->ent + base;
    if (w) {
        memcpy(w, src, (size_t)cnt * sizeof *w);
        return;
    }
#pragma omp parallel for schedule(static)
    for (int64_t x = 0; x < cnt; x++) put_word(NULL, lo, hi, x, src[x]);
}

/* The counts' error of a matrix whose tables cannot fit (cs.over or the bits). */
static int over_error(const pl_cpjds_stats *cs, double max_table_bytes, int64_t nv, int64_t no)
{
    const int vb = pl_cpjds_bits(nv), ob = pl_cpjds_bits(no);
    if (cs->over == PL_CPJDS_OVER_COUNT)
        return pl_error_set(PL_ERR_INPUT, __FILE__, __LINE__, __func__,
                            "the matrix cannot be compressed: more than %lld distinct values or column offsets "
                            "(use [spmv] format = auto or pjds)",
                            (long long)PL_CPJDS_COUNT_MAX);
    if (cs->over == PL_CPJDS_OVER_TABLES)
        return pl_error_set(PL_ERR_INPUT, __FILE__, __LINE__, __func__,
                            "the matrix cannot be compressed into tables of %.1f MiB: %lld distinct values and %lld "
                            "distinct column offsets exceed them (the count stops there)",
                            max_table_bytes / 1048576.0, (long long)nv, (long long)no);
    return pl_error_set(PL_ERR_INPUT, __FILE__, __LINE__, __func__,
                        "the matrix cannot be compressed: %lld distinct values (%d bits) and %lld distinct "
                        "column offsets (%d bits) need more than 32 bits per entry (the count stops there; "
                        "use [spmv] format = auto or pjds)",
                        (long long)nv, vb, (long long)no, ob);
}

/* pl_cpjds_create_ex (words = 1) or pl_cpjds_create_layout (words = 0). */
static int create(const pl_csr *A, int C, double max_table_bytes, int words, pl_cpjds *out, pl_cpjds_stats *st)
{
    memset(out, 0, sizeof *out);
    if (st) memset(st, 0, sizeof *st);
    PL_CHECK(A && C >= 1 && A->nrows >= 0 && A->nrows <= INT32_MAX, PL_ERR_ARG, "pl_cpjds_create: bad arguments");
    kset vs, os;
    uint64_t *vk = NULL, *ok = NULL;
    pl_cpjds_stats cs;
    double t0 = pl_wtime();
    int rc = collect(A, max_table_bytes, &vs, &os, &cs);
    if (rc == PL_OK && st) *st = cs;
    pl_debug("pl_cpjds_create: distinct values and offsets %.3f s (%lld entries, %lld probes%s)", pl_wtime() - t0,
             (long long)cs.entries, (long long)cs.probes, rc == PL_OK && cs.over ? ", stopped: cannot fit" : "");
    t0 = pl_wtime();
    const int64_t nv = vs.n, no = os.n;
    const int vb = pl_cpjds_bits(nv), ob = pl_cpjds_bits(no);
    if (rc == PL_OK && (cs.over || vb + ob > 32 || ob > 31)) {
        /* counts of the matrix's rows up to the entry that crossed the limit */
        rc = over_error(&cs, max_table_bytes, nv, no);
        goto out;
    }
    if (rc == PL_OK) rc = make_table(&vs, 0, &vk);
    if (rc == PL_OK) rc = make_table(&os, 1, &ok);
    if (rc == PL_OK) {
        out->obits = ob;
        out->nval = (int32_t)nv;
        out->noff = (int32_t)no;
        out->vtab = malloc((size_t)nv * sizeof *out->vtab);
        out->otab = malloc((size_t)no * sizeof *out->otab);
        if (!out->vtab || !out->otab) rc = PL_ERR_MEM;
    }
    if (rc == PL_OK) {
        memcpy(out->vtab, vk, (size_t)nv * sizeof *out->vtab); /* bit patterns */
        for (int64_t i = 0; i < no; i++) out->otab[i] = (int32_t)(int64_t)ok[i];
    }
    pl_debug("pl_cpjds_create: tables %.3f s", pl_wtime() - t0);
    t0 = pl_wtime();
    if (rc == PL_OK) rc = layout(A, C, out);
    pl_debug("pl_cpjds_create: layout %.3f s", pl_wtime() - t0);
    t0 = pl_wtime();
    if (rc == PL_OK && words) {
        out->ent = malloc((size_t)(out->nent ? out->nent : 1) * sizeof *out->ent);
        if (!out->ent) rc = PL_ERR_MEM;
        if (rc == PL_OK) rc = pl_cpjds_fill_words(out, A, 0, out->nchunks, out->ent, NULL, NULL);
        if (rc == PL_ERR_MEM) pl_error_clear();
        pl_debug("pl_cpjds_create: entry words %.3f s", pl_wtime() - t0);
    }
out:
    kset_free(&vs);
    kset_free(&os);
    free(vk);
    free(ok);
    if (rc != PL_OK) {
        pl_cpjds_destroy(out);
        if (rc == PL_ERR_MEM) return PL_ERROR(PL_ERR_MEM, "out of host memory building the compressed matrix");
        return pl_error_trace(rc, __FILE__, __LINE__, __func__, "compressing the local part");
    }
    return PL_OK;
}

int pl_cpjds_create_ex(const pl_csr *A, int C, double max_table_bytes, pl_cpjds *out, pl_cpjds_stats *st)
{
    return create(A, C, max_table_bytes, 1, out, st);
}

int pl_cpjds_create_layout(const pl_csr *A, int C, double max_table_bytes, pl_cpjds *out, pl_cpjds_stats *st)
{
    return create(A, C, max_table_bytes, 0, out, st);
}

int pl_cpjds_create(const pl_csr *A, int C, pl_cpjds *out) { return pl_cpjds_create_ex(A, C, 0.0, out, NULL); }

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
