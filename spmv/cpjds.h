/* cpjds.h — the compressed pJDS format (spmv/cpjds.c): 32-bit entry words
 * of a value id and a column-offset id into two small tables.  Included by
 * spmv.h, whose backends upload it (cmat_create). */
#ifndef PL_CPJDS_H
#define PL_CPJDS_H

#include <stddef.h>
#include <stdint.h>

#include "pl_csr.h"

/* The local part of a generated Hamiltonian holds few distinct values and
 * few distinct column offsets col - row (a sum of Kronecker products), so
 * each entry fits in 32 bits: a value id and an offset id into two small
 * tables that stay in cache.  4 bytes per entry instead of 12, exact (the
 * table holds the matrix's own doubles, bit for bit).  Layout as pJDS with
 * sort window 1 (rows in their original order, which keeps the offsets
 * few): chunks of C rows padded to the chunk's longest row, column-major
 * inside a chunk, entry j of row r at chunk_start[r / C] + j C + r % C.
 * Entry word u: value vtab[u >> obits], column r + otab[u & omask] with
 * omask = 2^obits - 1.  vtab[0] = +0.0 and otab[0] = 0, so padding is the
 * word 0 (value 0 at the row's own column).  Tables sorted (values by bit
 * pattern after the leading 0, offsets ascending after the leading 0):
 * the same matrix gives the same words on every run. */
typedef struct pl_cpjds {
    int32_t nrows, C, nchunks;
    int64_t nnz, nent;     /* true non-zeros, stored entries incl. padding  */
    int64_t *chunk_start;  /* nchunks + 1                                    */
    int32_t *chunk_width;  /* nchunks                                        */
    int32_t *row_len;      /* nchunks * C (0 for the padding rows)           */
    uint32_t *ent;         /* nent packed entries                            */
    int obits;             /* bits of the offset id, 0..31                   */
    int32_t nval, noff;    /* table sizes                                    */
    double *vtab;          /* nval values                                    */
    int32_t *otab;         /* noff column offsets                            */
} pl_cpjds;
/* Most distinct values (or offsets) of a compressed part, whatever their
 * bits: 2^22 values are a 32 MiB table, beyond the caches (the H100's L2 is
 * 50 MB) that the format relies on; the count stops there. */
#define PL_CPJDS_COUNT_MAX ((int64_t)1 << 22)
/* [spmv] format = auto compresses only with tables (8 B per value, 4 B per
 * offset) of at most 2 MiB, which stay in cache (the H100's L1 is 256 kB per
 * SM, its L2 50 MB; a CPU core's L2 1-2 MB). */
#define PL_CPJDS_AUTO_TABLE_BYTES ((double)(2 << 20))
/* Why the counting stopped (pl_cpjds_stats.over; larger = more basic, for
 * an MPI_MAX over ranks): the tables exceed the caller's byte limit, more
 * than PL_CPJDS_COUNT_MAX keys, or value bits + offset bits > 32. */
#define PL_CPJDS_OVER_TABLES 1
#define PL_CPJDS_OVER_COUNT 2
#define PL_CPJDS_OVER_BITS 3
/* What counting the distinct values and offsets of a local part found and
 * cost (the work stays linear in the entries). */
typedef struct pl_cpjds_stats {
    int64_t nval, noff; /* distinct values / offsets incl. the padding's +0.0 and 0: exact when over
                           is 0, else those of the shortest row prefix that crosses the limit (lower
                           bounds of the whole; the same on any thread count) */
    int over;           /* 0: complete and within the limits, else PL_CPJDS_OVER_*: it stopped there */
    int threads;        /* threads that counted */
    int64_t entries;    /* local entries read (all threads) */
    int64_t probes;     /* hash-table slots inspected: counting, growth, merge (the operation count) */
    int64_t merged;     /* keys inserted by the merge of the threads' sets */
    double seconds;
} pl_cpjds_stats;
/* Count the distinct values and offsets of the local part of a CSR row
 * block (entries whose global column lies in [row0, row0 + nrows); offset
 * = col - row) into *st.  Stops at the first entry (in row order) where
 * the counts exceed 32 bits of ids, PL_CPJDS_COUNT_MAX keys, or (when
 * max_table_bytes > 0) 8 nval + 4 noff > max_table_bytes; st->over says
 * which.  Parallel; O(entries read) expected work.  PL_ERR_MEM. */
int pl_cpjds_count(const pl_csr *A, double max_table_bytes, pl_cpjds_stats *st);
/* The stats of the last count of this process (pl_cpjds_count or create):
 * a debug accessor for tests.  Can't fail. */
void pl_cpjds_last_stats(pl_cpjds_stats *st);
/* Bits of a table of n ids: ceil(log2 n) (0 for n <= 1).  Pure. */
int pl_cpjds_bits(int64_t n);
/* Build the compressed local part of A (see pl_cpjds_count) with chunk
 * height C.  PL_ERR_INPUT "... cannot be compressed: N distinct values
 * (V bits) and M distinct column offsets (O bits) need more than 32 bits"
 * (or more than PL_CPJDS_COUNT_MAX) when the ids do not fit one word; the
 * counts are those where counting stopped.  Allocates; free with
 * pl_cpjds_destroy. */
int pl_cpjds_create(const pl_csr *A, int C, pl_cpjds *out);
/* The same, also refusing (PL_ERR_INPUT "... cannot be compressed into
 * tables of X MiB") tables over max_table_bytes (> 0; 0: no limit), and
 * the count's stats into *st (may be NULL; filled also on PL_ERR_INPUT). */
int pl_cpjds_create_ex(const pl_csr *A, int C, double max_table_bytes, pl_cpjds *out, pl_cpjds_stats *st);
/* The same without the entry words: tables and layout only, out->ent NULL
 * (a device backend's cmat_create_fill then writes the words chunk range by
 * chunk range into its staging buffers with pl_cpjds_fill_words). */
int pl_cpjds_create_layout(const pl_csr *A, int C, double max_table_bytes, pl_cpjds *out, pl_cpjds_stats *st);
/* The entry words of chunks [c0, c1) of p (tables and layout of A, as made
 * by pl_cpjds_create_layout), index 0 = entry chunk_start[c0]: into w as
 * 32-bit words, or (w NULL) into the planes lo (low 16 bits) and hi (bits
 * 16..23; the words must fit 24 bits).  The same words as pl_cpjds_create
 * on any thread count.  Parallel.  PL_ERR_MEM. */
int pl_cpjds_fill_words(const pl_cpjds *p, const pl_csr *A, int64_t c0, int64_t c1, uint32_t *w, uint16_t *lo,
                        uint8_t *hi);
/* The same from the host words p->ent (copy, or split into the planes). */
void pl_cpjds_copy_words(const pl_cpjds *p, int64_t c0, int64_t c1, uint32_t *w, uint16_t *lo, uint8_t *hi);
void pl_cpjds_destroy(pl_cpjds *p);
/* Bytes of the arrays (entries, layout, tables).  Can't fail. */
size_t pl_cpjds_bytes(const pl_cpjds *p);
/* Host reference y = A x, serial, row by row (the test oracle). */
void pl_cpjds_spmv_ref(const pl_cpjds *p, const double *x, double *y);

#endif
