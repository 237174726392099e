/* pl_h5matrix.c — validated, distributed import of sparse matrices from
 * HDF5: the pjds schema 1 (see pl_h5matrix.h and docs/formats.md, "HDF5
 * matrix schema") and, through the layout of pl_h5layout.c, the foreign
 * layouts (CSR, compressed column, COO).
 *
 * Method.
 *  - Metadata (h5m_open): every object is probed with HDF5's automatic error
 *    printing switched off, every return code is checked, and each failure
 *    becomes one PL_ERR_INPUT line naming file, group and object.  Sizes come
 *    from attributes and must agree with the dataset extents, so every
 *    allocation is bounded by what the file really declares.
 *  - Row-compressed full storage (pjds full, CSR): a rank reads
 *    ptr[r0..r1] and then exactly the index/value hyperslab of its rows.
 *  - Lower storage (A = L + L^T - diag(L)) and compressed-column storage:
 *    the entries of rows [r0, r1) sit in other stored rows (columns).  Each
 *    rank scans a share of the stored pointer entries (its own range when
 *    the ranks' ranges tile [0, N), else an equal split from the first
 *    requested row on) in blocks of at most B entries; lower: for each
 *    stored (i, j, v) it sends (i, j, v) to the owner of row i and, if j < i,
 *    (j, i, v) to the owner of row j; compressed column: stored column c
 *    with row index t sends (t, c, v) to the owner of row t; one
 *    MPI_Alltoallv per round.  The number of rounds is the maximum over
 *    ranks, so every rank takes part in each.  Row lengths use the same
 *    scan with (row, count) items; the read runs the counting scan first,
 *    allocates the rows exactly, and a second scan puts each received
 *    entry in place.  Memory per rank: its share of the pointer, one block
 *    of the scan with the items it sends and receives (24 bytes each), and
 *    its own result.  COO: the same with shares of the entries
 *    (pl_h5layout.c).
 *  - Collective agreement: after each local phase, MPI_Allreduce(MIN) finds
 *    the lowest failing rank, whose code and message are broadcast, so no
 *    rank waits in a collective that another has left.
 * Duplicates are refused (not summed): a duplicate in a file is more often a
 * bug than an intended sum, and summing would hide it. */
#define _POSIX_C_SOURCE 200809L
#include "pl_h5matrix.h"

#include <errno.h>
#include <hdf5.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "pl_error.h"
#include "pl_h5m_impl.h"

#define H5M_DEFAULT_BLOCK ((int64_t)1 << 20)

void pl_h5m_set_block_entries(int64_t n) { h5m_g_block = n < 1 ? H5M_DEFAULT_BLOCK : n; }
/* The pjds schema: attributes and datasets (h->g open). */
int h5m_open_pjds(h5m_file *h)
{
    pl_h5m_info *in = &h->info;
    int64_t schema = 0, sym = 0;
    int p = 0;
    PL_CALL(h5m_attr_i64(h, "pjds_matrix_schema", 0, &schema, &p));
    if (!p)
        return H5M_BAD(h, "missing attribute 'pjds_matrix_schema' (not a pjds matrix group; "
                          "convert .mtx files with tools/mtx2h5.py)");
    if (schema != PL_H5M_SCHEMA)
        return H5M_BAD(h, "unsupported schema version pjds_matrix_schema = %lld (this program reads %d)",
                       (long long)schema, PL_H5M_SCHEMA);
    PL_CALL(h5m_attr_i64(h, "rows", 1, &in->rows, NULL));
    PL_CALL(h5m_attr_i64(h, "cols", 1, &in->cols, NULL));
    PL_CALL(h5m_attr_i64(h, "nnz", 1, &in->nnz_stored, NULL));
    PL_CALL(h5m_attr_i64(h, "symmetric", 1, &sym, NULL));
    const int64_t lim = (int64_t)1 << 62;
    if (in->rows < 1 || in->rows >= lim) return H5M_BAD(h, "attribute 'rows' = %lld out of range", (long long)in->rows);
    if (in->cols < 1 || in->cols >= lim) return H5M_BAD(h, "attribute 'cols' = %lld out of range", (long long)in->cols);
    if (in->nnz_stored < 0 || in->nnz_stored >= lim)
        return H5M_BAD(h, "attribute 'nnz' = %lld out of range", (long long)in->nnz_stored);
    if (in->rows != in->cols)
        return H5M_BAD(h, "matrix is not square (%lld x %lld)", (long long)in->rows, (long long)in->cols);
    if (sym != 0 && sym != 1) return H5M_BAD(h, "attribute 'symmetric' = %lld, must be 0 or 1", (long long)sym);
    in->symmetric = (int)sym;
    char storage[64];
    PL_CALL(h5m_attr_str(h, "storage", 0, storage, sizeof storage, &p));
    if (!p || !strcmp(storage, "full")) {
        in->lower = 0;
    } else if (!strcmp(storage, "lower")) {
        in->lower = 1;
        if (!in->symmetric) return H5M_BAD(h, "attribute storage = 'lower' requires symmetric = 1");
    } else {
        for (char *c = storage; *c; c++)
            if ((unsigned char)*c < 32 || (unsigned char)*c > 126) *c = '?';
        return H5M_BAD(h, "attribute storage = '%s', must be 'full' or 'lower'", storage);
    }
    PL_CALL(h5m_attr_str(h, "name", 0, in->name, sizeof in->name, NULL));
    PL_CALL(h5m_attr_str(h, "source", 0, in->source, sizeof in->source, NULL));

    h->kind = in->lower ? H5M_KIND_LOWER : H5M_KIND_CSR;
    in->layout = PL_H5M_LAYOUT_PJDS;
    PL_CALL(h5m_dset_open(h, "row_ptr", H5T_INTEGER, "an integer type", in->rows + 1, "rows + 1", &h->d_rp, NULL));
    PL_CALL(h5m_dset_open(h, "col_idx", H5T_INTEGER, "an integer type", in->nnz_stored, "attribute nnz", &h->d_ci,
                      &in->col_bytes));
    PL_CALL(h5m_dset_open(h, "values", H5T_FLOAT, "a floating-point type", in->nnz_stored, "attribute nnz", &h->d_val,
                      NULL));
    return PL_OK;
}

/* Open file and group, find the layout, read and validate the metadata
 * (see pl_h5m_open_info). */
static int h5m_open(h5m_file *h)
{
    struct stat st;
    if (stat(h->fname, &st) != 0)
        return H5M_BAD(h, "cannot open the file (%s)", strerror(errno));
    if (S_ISDIR(st.st_mode)) return H5M_BAD(h, "is a directory, not an HDF5 file");
    if (st.st_size == 0) return H5M_BAD(h, "the file is empty (0 bytes), not an HDF5 file");
    htri_t is = H5Fis_hdf5(h->fname);
    if (is < 0) return H5M_BAD(h, "cannot read the file (permissions?)");
    if (is == 0) return h5m_not_hdf5(h);
    h->f = H5Fopen(h->fname, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (h->f < 0) return H5M_BAD(h, "cannot open the HDF5 file (truncated or damaged)");
    htri_t ge = strcmp(h->gname, "/") ? H5Lexists(h->f, h->gname, H5P_DEFAULT) : 1;
    if (ge > 0) h->g = H5Gopen2(h->f, h->gname, H5P_DEFAULT);
    if (h->g < 0) return H5M_BAD(h, "group not found (or not a group)");
    PL_CALL(h5m_open_layout(h));
    if (h->kind == H5M_KIND_COO) return PL_OK;
    /* a compressed layout: the pointer starts at 0 and ends at nnz */
    const int64_t np = h->kind == H5M_KIND_CSC ? h->info.cols : h->info.rows;
    int64_t first = -1, last = -1;
    PL_CALL(h5m_dset_read(h, h->d_rp, h->n_rp, H5T_NATIVE_INT64, 0, 1, &first));
    PL_CALL(h5m_dset_read(h, h->d_rp, h->n_rp, H5T_NATIVE_INT64, np, 1, &last));
    if (first != 0)
        return H5M_BAD(h, "dataset '%s' must start at 0 (%s[0] = %lld)", h->n_rp, h->n_rp, (long long)first);
    if (last != h->info.nnz_stored)
        return H5M_BAD(h, "dataset '%s' does not end at nnz (%s[%lld] = %lld, nnz = %lld)", h->n_rp, h->n_rp,
                       (long long)np, (long long)last, (long long)h->info.nnz_stored);
    return PL_OK;
}

/* ---- validation of row_ptr pieces ------------------------------------------- */
static int check_row_ptr(h5m_file *h, const int64_t *rp, int64_t r0, int64_t n)
{
    for (int64_t k = 0; k <= n; k++) {
        if (rp[k] < 0 || rp[k] > h->info.nnz_stored)
            return H5M_BAD(h, "dataset '%s' value %s[%lld] = %lld is outside [0, nnz = %lld]", h->n_rp, h->n_rp,
                           (long long)(r0 + k), (long long)rp[k], (long long)h->info.nnz_stored);
        if (k > 0 && rp[k] < rp[k - 1])
            return H5M_BAD(h, "dataset '%s' is not non-decreasing (%s[%lld] = %lld > %s[%lld] = %lld)", h->n_rp, h->n_rp,
                           (long long)(r0 + k - 1), (long long)rp[k - 1], h->n_rp, (long long)(r0 + k), (long long)rp[k]);
    }
    return PL_OK;
}

/* Entry (i, j) of the matrix, stored at position pos of the index dataset
 * (compressed column: the index is the row i). */
static int check_entry(h5m_file *h, int64_t i, int64_t j, int64_t pos)
{
    if (h->kind == H5M_KIND_CSC) {
        if (i < 0 || i >= h->info.rows)
            return H5M_BAD(h, "dataset '%s' has row index %lld out of range [0, %lld) at entry %lld (column %lld)",
                           h->n_ci, (long long)i, (long long)h->info.rows, (long long)pos, (long long)j);
        return PL_OK;
    }
    if (j < 0 || j >= h->info.cols)
        return H5M_BAD(h, "dataset '%s' has column index %lld out of range [0, %lld) at entry %lld (row %lld)",
                       h->n_ci, (long long)j, (long long)h->info.cols, (long long)pos, (long long)i);
    if (h->info.lower && j > i)
        return H5M_BAD(h, "dataset 'col_idx' has an entry above the diagonal at entry %lld (row %lld, column %lld) "
                          "but storage is 'lower'",
                       (long long)pos, (long long)i, (long long)j);
    return PL_OK;
}

static int check_value(h5m_file *h, double v, int64_t i, int64_t j, int64_t pos)
{
    if (!isfinite(v))
        return H5M_BAD(h, "dataset '%s' holds a value that is not finite (%s) at entry %lld (row %lld, column %lld)",
                       h->n_val, isnan(v) ? "NaN" : "Inf", (long long)pos, (long long)i, (long long)j);
    return PL_OK;
}

/* Sort all rows of a block and refuse duplicates.  Runs locally. */
static int sort_and_check(h5m_file *h, pl_csr *a)
{
    int64_t maxlen = 0;
    for (int64_t r = 0; r < a->nrows; r++)
        if (a->row_ptr[r + 1] - a->row_ptr[r] > maxlen) maxlen = a->row_ptr[r + 1] - a->row_ptr[r];
    pl_csr_pair *tmp = NULL;
    if (maxlen > 32) PL_MALLOC(tmp, maxlen);
    int rc = PL_OK;
    for (int64_t r = 0; r < a->nrows && !rc; r++) {
        int64_t b = a->row_ptr[r], n = a->row_ptr[r + 1] - b;
        pl_csr_sort_row(a->col + b, a->val + b, n, tmp);
        for (int64_t k = 1; k < n; k++)
            if (a->col[b + k] == a->col[b + k - 1]) {
                int64_t i = a->row0 + r, j = a->col[b + k];
                if (h->info.lower && j > i) { /* report the stored (lower) coordinates */
                    int64_t t = i;
                    i = j;
                    j = t;
                }
                rc = H5M_BAD(h, "duplicate entry (%lld, %lld) (duplicates are refused, not summed)", (long long)i,
                             (long long)j);
                break;
            }
    }
    free(tmp);
    return rc;
}


enum { SCAN_COUNT = 0, SCAN_ENTRIES = 1 };

/* Greedy row blocks of a scan share: ends of the blocks of at most h5m_g_block
 * entries and h5m_g_block rows (a longer row forms a block alone).  Returns the number of blocks. */
static int64_t scan_blocks(const int64_t *rp, int64_t nrows, int64_t *maxent, int64_t *ends)
{
    int64_t nb = 0, a = 0, mx = 0;
    while (a < nrows) {
        int64_t b = a + 1;
        while (b < nrows && b - a < h5m_g_block && rp[b + 1] - rp[a] <= h5m_g_block) b++;
        if (rp[b] - rp[a] > mx) mx = rp[b] - rp[a];
        if (ends) ends[nb] = b;
        nb++;
        a = b;
    }
    if (maxent) *maxent = mx;
    return nb;
}

/* One block of rows [a, b) of the share (local rows, first global row s0;
 * its entries from e0 = rp[a] in cols/vals): pass 1 validates and counts the
 * items per destination rank (scnt), pass 2 lays them out (sdsp, fill) and
 * fills sbuf. */
static int scan_block(h5m_file *h, const h5m_owners *o, int mode, int64_t s0, const int64_t *rp, int64_t a, int64_t b,
                      const int64_t *cols, const double *vals, int size, int *scnt, int *sdsp, int *fill, h5m_item *sbuf)
{
    int rc = PL_OK;
    const int64_t e0 = rp[a];
    /* pass 1: validate, count per destination; pass 2: fill */
    for (int pass = 0; pass < 2 && !rc; pass++) {
        if (pass == 1) {
            int64_t t = 0;
            for (int p = 0; p < size; p++) {
                sdsp[p] = (int)t;
                fill[p] = (int)t;
                t += scnt[p];
            }
        }
        for (int64_t r = a; r < b && !rc; r++) {
            int64_t i = s0 + r;
            if (h->kind == H5M_KIND_CSC) { /* stored column i: entries (cols[k], i) to the owners of their rows */
                for (int64_t k = rp[r] - e0; k < rp[r + 1] - e0; k++) {
                    int64_t t = cols[k];
                    if (pass == 0) {
                        if ((rc = check_entry(h, t, i, e0 + k))) break;
                        if (mode == SCAN_ENTRIES && (rc = check_value(h, vals[k], t, i, e0 + k))) break;
                    }
                    int ot = h5m_owner_of(o, t);
                    if (ot < 0) continue;
                    if (pass == 0) scnt[ot]++;
                    else sbuf[fill[ot]++] = mode == SCAN_ENTRIES ? (h5m_item){t, i, vals[k]} : (h5m_item){t, 1, 0.0};
                }
                continue;
            }
            int oi = h5m_owner_of(o, i);
            if (mode == SCAN_COUNT && oi >= 0) {
                if (pass == 0) scnt[oi]++;
                else sbuf[fill[oi]++] = (h5m_item){i, rp[r + 1] - rp[r], 0.0};
            }
            for (int64_t k = rp[r] - e0; k < rp[r + 1] - e0; k++) {
                int64_t j = cols[k];
                if (pass == 0) {
                    if ((rc = check_entry(h, i, j, e0 + k))) break;
                    if (mode == SCAN_ENTRIES && (rc = check_value(h, vals[k], i, j, e0 + k))) break;
                }
                if (mode == SCAN_ENTRIES && oi >= 0) {
                    if (pass == 0) scnt[oi]++;
                    else sbuf[fill[oi]++] = (h5m_item){i, j, vals[k]};
                }
                if (j < i) {
                    int oj = h5m_owner_of(o, j);
                    if (oj < 0) continue;
                    if (pass == 0) scnt[oj]++;
                    else if (mode == SCAN_ENTRIES) sbuf[fill[oj]++] = (h5m_item){j, i, vals[k]};
                    else sbuf[fill[oj]++] = (h5m_item){j, 1, 0.0};
                }
            }
        }
    }
    return rc;
}

/* Scan lower or compressed-column storage (see file comment).  COUNT: len64[r - r0] += counts.
 * ENTRIES: entries of row r go to out->col/val at pos[r - r0]++, within
 * out->row_ptr (sized by a COUNT scan before; overflow means the file
 * changed in between: PL_ERR_INPUT).  Collective; h is open on every rank
 * (agreed before). */
static int scan_ptr(h5m_file *h, int64_t r0, int64_t r1, int mode, MPI_Comm comm, int64_t *len64,
                      pl_csr *out, int64_t *pos)
{
    int rank, size, rc = PL_OK, late = PL_OK;
    const int64_t N = h->info.rows;
    PL_CHECK(MPI_Comm_rank(comm, &rank) == MPI_SUCCESS, PL_ERR_MPI, "MPI_Comm_rank failed");
    PL_CHECK(MPI_Comm_size(comm, &size) == MPI_SUCCESS, PL_ERR_MPI, "MPI_Comm_size failed");
    h5m_owners o;
    PL_CALL(h5m_owners_build(r0, r1, N, comm, &o));

    int64_t s0, s1;
    if (o.cover) {
        s0 = r0;
        s1 = r1;
    } else {
        s0 = o.lo + (int64_t)((__int128)(N - o.lo) * rank / size);
        s1 = o.lo + (int64_t)((__int128)(N - o.lo) * (rank + 1) / size);
    }
    int64_t ns = s1 - s0, *rp = NULL, *ends = NULL, *cols = NULL, nb = 0, maxent = 0, nrounds = 0;
    double *vals = NULL;
    h5m_item *sbuf = NULL, *rbuf = NULL;
    int *scnt = calloc((size_t)size, sizeof(int)), *sdsp = calloc((size_t)size, sizeof(int));
    int *rcnt = calloc((size_t)size, sizeof(int)), *rdsp = calloc((size_t)size, sizeof(int));
    int *fill = calloc((size_t)size, sizeof(int));
    MPI_Datatype itype = MPI_DATATYPE_NULL;
    if (!scnt || !sdsp || !rcnt || !rdsp || !fill) rc = PL_ERROR(PL_ERR_MEM, "out of host memory");
    if (!rc && !(rp = malloc(sizeof(int64_t) * (size_t)(ns + 1)))) rc = PL_ERROR(PL_ERR_MEM, "out of host memory");
    if (!rc) rc = h5m_dset_read(h, h->d_rp, h->n_rp, H5T_NATIVE_INT64, s0, ns + 1, rp);
    if (!rc) rc = check_row_ptr(h, rp, s0, ns);
    if (!rc) {
        nb = scan_blocks(rp, ns, &maxent, NULL);
        ends = malloc(sizeof(int64_t) * (size_t)(nb + 1));
        cols = malloc(sizeof(int64_t) * (size_t)(maxent + 1));
        vals = mode == SCAN_ENTRIES ? malloc(sizeof(double) * (size_t)(maxent + 1)) : NULL;
        /* items per block: <= 2 per entry (+1 per row in counting mode) */
        size_t ni = 2 * (size_t)maxent + (mode == SCAN_COUNT ? (size_t)h5m_g_block + 1 : 0) + 1;
        sbuf = malloc(sizeof(h5m_item) * ni);
        if (!ends || !cols || (mode == SCAN_ENTRIES && !vals) || !sbuf)
            rc = PL_ERROR(PL_ERR_MEM, "out of host memory for a scan block of %lld entries", (long long)maxent);
        else
            scan_blocks(rp, ns, NULL, ends);
    }
    rc = h5m_agree(rc, comm);
    if (rc) goto out;
    if (MPI_Allreduce(&nb, &nrounds, 1, MPI_INT64_T, MPI_MAX, comm) != MPI_SUCCESS ||
        MPI_Type_contiguous((int)sizeof(h5m_item), MPI_BYTE, &itype) != MPI_SUCCESS ||
        MPI_Type_commit(&itype) != MPI_SUCCESS) {
        rc = PL_ERROR(PL_ERR_MPI, "MPI setup of the lower-storage scan failed");
        goto out;
    }

    int64_t a = 0; /* next local row of the share */
    for (int64_t round = 0; round < nrounds; round++) {
        memset(scnt, 0, sizeof(int) * (size_t)size);
        if (round < nb) {
            int64_t b = ends[round], e0 = rp[a], ne = rp[b] - e0;
            rc = h5m_dset_read(h, h->d_ci, h->n_ci, H5T_NATIVE_INT64, e0, ne, cols);
            if (!rc && mode == SCAN_ENTRIES) rc = h5m_dset_read(h, h->d_val, h->n_val, H5T_NATIVE_DOUBLE, e0, ne, vals);
            if (!rc) rc = scan_block(h, &o, mode, s0, rp, a, b, cols, vals, size, scnt, sdsp, fill, sbuf);
            a = b;
        }
        int64_t nrecv = 0;
        rc = h5m_route(rc, sbuf, scnt, sdsp, rcnt, rdsp, &rbuf, &nrecv, itype, comm);
        if (rc) goto out;
        if (mode == SCAN_COUNT) {
            for (int64_t k = 0; k < nrecv; k++) len64[rbuf[k].r - r0] += rbuf[k].c;
            continue;
        }
        for (int64_t k = 0; k < nrecv; k++) {
            int64_t lr = rbuf[k].r - r0, p = pos[lr];
            if (p >= out->row_ptr[lr + 1]) { /* reported after the rounds; the caller agrees */
                if (!late) late = H5M_BAD(h, "the file changed while it was read (row %lld grew)", (long long)rbuf[k].r);
                continue;
            }
            pos[lr]++;
            out->col[p] = rbuf[k].c;
            out->val[p] = rbuf[k].v;
        }
    }
out:
    if (!rc) rc = late;
    if (itype != MPI_DATATYPE_NULL) MPI_Type_free(&itype);
    h5m_owners_free(&o);
    free(rp);
    free(ends);
    free(cols);
    free(vals);
    free(sbuf);
    free(rbuf);
    free(scnt);
    free(sdsp);
    free(rcnt);
    free(rdsp);
    free(fill);
    return rc;
}

/* ---- public: import ---------------------------------------------------------- */
/* The scans of the layouts that are not read by row hyperslabs. */
static int scan_any(h5m_file *h, int64_t r0, int64_t r1, int mode, MPI_Comm comm, int64_t *len64, pl_csr *out,
                    int64_t *pos)
{
    if (h->kind == H5M_KIND_COO) return h5m_scan_coo(h, r0, r1, mode, comm, len64, out, pos);
    return scan_ptr(h, r0, r1, mode, comm, len64, out, pos);
}

int pl_h5m_open_info_ex(const char *file, const char *group, const pl_h5m_opts *opts, pl_h5m_info *info)
{
    h5m_file h;
    h5m_quiet q;
    PL_CHECK(file && info, PL_ERR_ARG, "pl_h5m_open_info: NULL argument");
    h5m_init(&h, file, group, opts);
    h5m_quiet_on(&q);
    int rc = h5m_open(&h);
    if (!rc) *info = h.info;
    h5m_close(&h);
    h5m_quiet_off(&q);
    return rc;
}

int pl_h5m_open_info(const char *file, const char *group, pl_h5m_info *info)
{
    return pl_h5m_open_info_ex(file, group, NULL, info);
}

int pl_h5m_open_info_all(const char *file, const char *group, pl_h5m_info *info, MPI_Comm comm)
{
    return h5m_agree(pl_h5m_open_info(file, group, info), comm);
}

static int check_range(const h5m_file *h, int64_t r0, int64_t r1)
{
    PL_CHECK(r0 >= 0 && r0 <= r1 && r1 <= h->info.rows, PL_ERR_ARG, "row range [%lld, %lld) outside [0, %lld)",
             (long long)r0, (long long)r1, (long long)h->info.rows);
    return PL_OK;
}

int pl_h5m_row_lengths_ex(const char *file, const char *group, const pl_h5m_opts *opts, int64_t r0, int64_t r1,
                          int32_t *len, MPI_Comm comm)
{
    h5m_file h;
    h5m_quiet q;
    h5m_init(&h, file, group, opts);
    h5m_quiet_on(&q);
    int64_t n = r1 - r0, *buf = NULL;
    int rc = h5m_open(&h);
    if (!rc) rc = check_range(&h, r0, r1);
    if (!rc && !(buf = calloc((size_t)n + 1, sizeof(int64_t)))) rc = PL_ERROR(PL_ERR_MEM, "out of host memory");
    if (!rc && h.kind == H5M_KIND_CSR) {
        rc = h5m_dset_read(&h, h.d_rp, h.n_rp, H5T_NATIVE_INT64, r0, n + 1, buf);
        if (!rc) rc = check_row_ptr(&h, buf, r0, n);
        for (int64_t k = 0; k < n && !rc; k++) buf[k] = buf[k + 1] - buf[k];
    }
    rc = h5m_agree(rc, comm);
    if (!rc && h.kind != H5M_KIND_CSR) {
        memset(buf, 0, sizeof(int64_t) * (size_t)(n + 1));
        rc = scan_any(&h, r0, r1, SCAN_COUNT, comm, buf, NULL, NULL);
    }
    for (int64_t k = 0; k < n && !rc; k++) {
        if (buf[k] > INT32_MAX)
            rc = PL_ERROR(PL_ERR_OVERFLOW, "row %lld of matrix file '%s' has %lld entries (more than INT32_MAX)",
                          (long long)(r0 + k), h.fname, (long long)buf[k]);
        else len[k] = (int32_t)buf[k];
    }
    rc = h5m_agree(rc, comm);
    free(buf);
    h5m_close(&h);
    h5m_quiet_off(&q);
    return rc;
}

int pl_h5m_row_lengths(const char *file, const char *group, int64_t r0, int64_t r1, int32_t *len, MPI_Comm comm)
{
    return pl_h5m_row_lengths_ex(file, group, NULL, r0, r1, len, comm);
}

int pl_h5m_row_lengths_fn(void *arg, int64_t r0, int64_t r1, int32_t *len)
{
    const pl_h5m_source *s = arg;
    return pl_h5m_row_lengths_ex(s->file, s->group, s->opts, r0, r1, len, s->comm);
}

/* Full storage: read the hyperslab of rows [r0, r1) into out.  Local. */
static int read_full(h5m_file *h, int64_t r0, int64_t r1, pl_csr *out)
{
    int64_t n = r1 - r0, *rp = NULL;
    PL_MALLOC(rp, n + 1);
    int rc = h5m_dset_read(h, h->d_rp, h->n_rp, H5T_NATIVE_INT64, r0, n + 1, rp);
    if (!rc) rc = check_row_ptr(h, rp, r0, n);
    if (!rc) rc = pl_csr_alloc(out, h->info.rows, r0, n, rp[n] - rp[0]);
    if (rc) {
        free(rp);
        return rc;
    }
    int64_t e0 = rp[0], ne = rp[n] - rp[0];
    for (int64_t k = 0; k <= n; k++) out->row_ptr[k] = rp[k] - e0;
    free(rp);
    PL_CALL(h5m_dset_read(h, h->d_ci, h->n_ci, H5T_NATIVE_INT64, e0, ne, out->col));
    PL_CALL(h5m_dset_read(h, h->d_val, h->n_val, H5T_NATIVE_DOUBLE, e0, ne, out->val));
    for (int64_t r = 0; r < n; r++)
        for (int64_t k = out->row_ptr[r]; k < out->row_ptr[r + 1]; k++) {
            PL_CALL(check_entry(h, r0 + r, out->col[k], e0 + k));
            PL_CALL(check_value(h, out->val[k], r0 + r, out->col[k], e0 + k));
        }
    return sort_and_check(h, out);
}

/* Lower, compressed-column and COO storage: a counting scan sizes the rows exactly, a second scan
 * places each entry where it belongs (no intermediate copy of the block).
 * Collective. */
static int read_scan(h5m_file *h, int64_t r0, int64_t r1, MPI_Comm comm, pl_csr *out)
{
    int64_t n = r1 - r0, *len = calloc((size_t)n + 1, sizeof(int64_t));
    int rc = len ? PL_OK : PL_ERROR(PL_ERR_MEM, "out of host memory");
    rc = h5m_agree(rc, comm);
    if (!rc) rc = scan_any(h, r0, r1, SCAN_COUNT, comm, len, NULL, NULL);
    if (!rc) {
        int64_t nnz = 0;
        for (int64_t r = 0; r < n; r++) nnz += len[r];
        rc = pl_csr_alloc(out, h->info.rows, r0, n, nnz);
        if (!rc) {
            for (int64_t r = 0; r < n; r++) out->row_ptr[r + 1] = out->row_ptr[r] + len[r];
            memcpy(len, out->row_ptr, sizeof(int64_t) * (size_t)n); /* len becomes the fill position */
        }
        rc = h5m_agree(rc, comm);
    }
    if (!rc) rc = scan_any(h, r0, r1, SCAN_ENTRIES, comm, NULL, out, len);
    for (int64_t r = 0; r < n && !rc; r++)
        if (len[r] != out->row_ptr[r + 1])
            rc = H5M_BAD(h, "the file changed while it was read (row %lld shrank)", (long long)(r0 + r));
    free(len);
    if (!rc) rc = sort_and_check(h, out);
    return rc;
}

int pl_h5m_read_rows_ex(const char *file, const char *group, const pl_h5m_opts *opts, int64_t r0, int64_t r1,
                        MPI_Comm comm, pl_csr *out)
{
    h5m_file h;
    h5m_quiet q;
    memset(out, 0, sizeof *out);
    h5m_init(&h, file, group, opts);
    h5m_quiet_on(&q);
    int rc = h5m_open(&h);
    if (!rc) rc = check_range(&h, r0, r1);
    if (!rc && h.kind == H5M_KIND_CSR) rc = read_full(&h, r0, r1, out);
    rc = h5m_agree(rc, comm);
    if (!rc && h.kind != H5M_KIND_CSR) {
        rc = read_scan(&h, r0, r1, comm, out);
        rc = h5m_agree(rc, comm);
    }
    if (rc) pl_csr_destroy(out);
    h5m_close(&h);
    h5m_quiet_off(&q);
    return rc;
}

int pl_h5m_read_rows(const char *file, const char *group, int64_t r0, int64_t r1, MPI_Comm comm, pl_csr *out)
{
    return pl_h5m_read_rows_ex(file, group, NULL, r0, r1, comm, out);
}
