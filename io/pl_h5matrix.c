/* pl_h5matrix.c — validated, distributed import of CSR matrices from HDF5
 * (schema 1, see pl_h5matrix.h and docs/formats.md, "HDF5 matrix schema"), the distributed
 * symmetry check, and export by rank 0.
 *
 * Method.
 *  - Metadata (h5m_open): every object is probed with HDF5's automatic error
 *    printing switched off, every return code is checked, and each failure
 *    becomes one PL_ERR_INPUT line naming file, group and object.  Sizes come
 *    from attributes and must agree with the dataset extents, so every
 *    allocation is bounded by what the file really declares.
 *  - Full storage: a rank reads row_ptr[r0..r1] and then exactly the
 *    col_idx/values hyperslab of its rows.
 *  - Lower storage (A = L + L^T - diag(L)): the upper entries of rows
 *    [r0, r1) are the entries (i, j), j < i, of OTHER rows' lower parts.
 *    Each rank scans a share of the stored rows (its own rows when the ranks'
 *    ranges tile [0, N), else an equal split of the rows from the first
 *    requested one on) in blocks of at most B entries; for each stored (i, j, v)
 *    it sends (i, j, v) to the owner of row i and, if j < i, (j, i, v) to the
 *    owner of row j, in one MPI_Alltoallv per round.  The number of rounds is
 *    the maximum over ranks, so every rank takes part in each.  Row lengths
 *    use the same scan with (row, count) items instead of entries; the read
 *    runs the counting scan first, allocates the rows exactly, and a second
 *    scan puts each received entry in place.  Memory per rank: its share of
 *    row_ptr, one block of the scan with the items it sends and receives
 *    (24 bytes each), and its own result.
 *  - Asymmetry: each off-diagonal (i, j, v) goes as (j, i, v) to the owner of
 *    row j, which compares with its a_ji (binary search, rows are sorted) and
 *    marks it matched; entries never matched face an implicit zero.
 *  - Export: rank 0 writes contiguous datasets; ranks 1.. send row_ptr,
 *    col and val in pieces of at most B entries (blocking MPI_Send matched by
 *    rank 0's MPI_Recv in rank order); temporary name, moved into place at
 *    the end (pl_place_file: never over a file that appeared meanwhile
 *    unless overwrite).
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
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pl_error.h"
#include "pl_place.h"

#define H5M_DEFAULT_BLOCK ((int64_t)1 << 20)
static int64_t g_block = H5M_DEFAULT_BLOCK;

void pl_h5m_set_block_entries(int64_t n) { g_block = n < 1 ? H5M_DEFAULT_BLOCK : n; }

/* ---- HDF5 error printing off/on -------------------------------------- */
typedef struct h5m_quiet {
    H5E_auto2_t fn;
    void *data;
    int saved;
} h5m_quiet;

static void quiet_on(h5m_quiet *q)
{
    q->saved = H5Eget_auto2(H5E_DEFAULT, &q->fn, &q->data) >= 0;
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
}
static void quiet_off(h5m_quiet *q)
{
    if (q->saved) H5Eset_auto2(H5E_DEFAULT, q->fn, q->data);
}

/* ---- an open matrix group --------------------------------------------- */
typedef struct h5m_file {
    const char *fname, *gname;
    hid_t f, g, d_rp, d_ci, d_val;
    pl_h5m_info info;
} h5m_file;

static void h5m_init(h5m_file *h, const char *file, const char *group)
{
    memset(h, 0, sizeof *h);
    h->fname = file ? file : "";
    h->gname = (group && group[0]) ? group : "/";
    h->f = h->g = h->d_rp = h->d_ci = h->d_val = H5I_INVALID_HID;
}

static void h5m_close(h5m_file *h)
{
    if (h->d_val >= 0) H5Dclose(h->d_val);
    if (h->d_ci >= 0) H5Dclose(h->d_ci);
    if (h->d_rp >= 0) H5Dclose(h->d_rp);
    if (h->g >= 0) H5Gclose(h->g);
    if (h->f >= 0) H5Fclose(h->f);
    h->f = h->g = h->d_rp = h->d_ci = h->d_val = H5I_INVALID_HID;
}

/* Record "matrix file 'F' group 'G': <what>" as PL_ERR_INPUT. */
__attribute__((format(printf, 4, 5))) static int h5m_bad_at(const h5m_file *h, int line, const char *func,
                                                              const char *fmt, ...)
{
    char what[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return pl_error_set(PL_ERR_INPUT, __FILE__, line, func, "matrix file '%s' group '%s': %s", h->fname,
                        h->gname, what);
}
#define H5M_BAD(h, ...) h5m_bad_at((h), __LINE__, __func__, __VA_ARGS__)

/* ---- attributes -------------------------------------------------------- */
static int attr_exists(h5m_file *h, const char *name, int *present)
{
    htri_t e = H5Aexists(h->g, name);
    if (e < 0) return H5M_BAD(h, "cannot read attribute '%s' (file damaged?)", name);
    *present = e > 0;
    return PL_OK;
}

/* Open attribute `name`, check class and that it holds one element. */
static int attr_open(h5m_file *h, const char *name, H5T_class_t want, const char *want_text, hid_t *a,
                     hid_t *t)
{
    *a = H5Aopen(h->g, name, H5P_DEFAULT);
    if (*a < 0) return H5M_BAD(h, "cannot open attribute '%s'", name);
    *t = H5Aget_type(*a);
    hid_t s = H5Aget_space(*a);
    H5T_class_t c = *t >= 0 ? H5Tget_class(*t) : H5T_NO_CLASS;
    hssize_t np = s >= 0 ? H5Sget_simple_extent_npoints(s) : -1;
    if (s >= 0) H5Sclose(s);
    if (c != want || np != 1) {
        if (*t >= 0) H5Tclose(*t);
        H5Aclose(*a);
        *a = *t = H5I_INVALID_HID;
        if (c != want) return H5M_BAD(h, "attribute '%s' has the wrong type: must be %s", name, want_text);
        return H5M_BAD(h, "attribute '%s' must hold exactly one value (holds %lld)", name, (long long)np);
    }
    return PL_OK;
}

static int attr_i64(h5m_file *h, const char *name, int required, int64_t *v, int *present)
{
    int p = 0;
    PL_CALL(attr_exists(h, name, &p));
    if (present) *present = p;
    if (!p) {
        if (required) return H5M_BAD(h, "missing attribute '%s'", name);
        return PL_OK;
    }
    hid_t a, t;
    PL_CALL(attr_open(h, name, H5T_INTEGER, "an integer", &a, &t));
    herr_t e = H5Aread(a, H5T_NATIVE_INT64, v);
    H5Tclose(t);
    H5Aclose(a);
    if (e < 0) return H5M_BAD(h, "cannot read attribute '%s'", name);
    return PL_OK;
}

/* String attribute (fixed or variable length) into buf[cap], truncated. */
static int attr_str(h5m_file *h, const char *name, int required, char *buf, size_t cap, int *present)
{
    int p = 0;
    buf[0] = 0;
    PL_CALL(attr_exists(h, name, &p));
    if (present) *present = p;
    if (!p) {
        if (required) return H5M_BAD(h, "missing attribute '%s'", name);
        return PL_OK;
    }
    hid_t a, t;
    PL_CALL(attr_open(h, name, H5T_STRING, "a string", &a, &t));
    int rc = PL_OK;
    htri_t var = H5Tis_variable_str(t);
    if (var > 0) {
        hid_t mt = H5Tcopy(H5T_C_S1);
        char *s = NULL;
        if (mt < 0 || H5Tset_size(mt, H5T_VARIABLE) < 0 || H5Tset_cset(mt, H5Tget_cset(t)) < 0 ||
            H5Aread(a, mt, &s) < 0) {
            rc = H5M_BAD(h, "cannot read attribute '%s'", name);
        } else {
            snprintf(buf, cap, "%s", s ? s : "");
            hid_t sp = H5Screate(H5S_SCALAR);
            if (sp >= 0) {
                H5Dvlen_reclaim(mt, sp, H5P_DEFAULT, &s);
                H5Sclose(sp);
            }
        }
        if (mt >= 0) H5Tclose(mt);
    } else if (var == 0) {
        size_t n = H5Tget_size(t);
        if (n == 0 || n > 65536) {
            rc = H5M_BAD(h, "attribute '%s' has an unreasonable string size %zu", name, n);
        } else {
            char *tmp = calloc(n + 1, 1);
            hid_t mt = H5Tcopy(t);
            if (!tmp) {
                rc = PL_ERROR(PL_ERR_MEM, "out of host memory");
            } else if (mt < 0 || H5Aread(a, mt, tmp) < 0) {
                rc = H5M_BAD(h, "cannot read attribute '%s'", name);
            } else {
                snprintf(buf, cap, "%s", tmp);
            }
            if (mt >= 0) H5Tclose(mt);
            free(tmp);
        }
    } else {
        rc = H5M_BAD(h, "cannot read attribute '%s'", name);
    }
    H5Tclose(t);
    H5Aclose(a);
    return rc;
}

/* ---- datasets ----------------------------------------------------------- */
static int dset_open(h5m_file *h, const char *name, H5T_class_t want, const char *want_text, int64_t want_len,
                     const char *len_text, hid_t *d, int *bytes)
{
    htri_t e = H5Lexists(h->g, name, H5P_DEFAULT);
    if (e < 0) return H5M_BAD(h, "cannot look up dataset '%s' (file damaged?)", name);
    if (e == 0) return H5M_BAD(h, "missing dataset '%s'", name);
    *d = H5Dopen2(h->g, name, H5P_DEFAULT);
    if (*d < 0) return H5M_BAD(h, "'%s' is not a dataset (or cannot be opened)", name);
    hid_t t = H5Dget_type(*d);
    H5T_class_t c = t >= 0 ? H5Tget_class(t) : H5T_NO_CLASS;
    size_t sz = t >= 0 ? H5Tget_size(t) : 0;
    if (t >= 0) H5Tclose(t);
    if (c != want) return H5M_BAD(h, "dataset '%s' has the wrong type: must be %s", name, want_text);
    if (bytes) *bytes = (int)sz;
    hid_t s = H5Dget_space(*d);
    if (s < 0) return H5M_BAD(h, "cannot read the shape of dataset '%s'", name);
    int nd = H5Sget_simple_extent_ndims(s);
    hsize_t dim = 0;
    int ok = nd == 1 && H5Sget_simple_extent_type(s) == H5S_SIMPLE && H5Sget_simple_extent_dims(s, &dim, NULL) == 1;
    H5Sclose(s);
    if (!ok) return H5M_BAD(h, "dataset '%s' must be 1-D (has rank %d)", name, nd);
    if (dim != (hsize_t)want_len)
        return H5M_BAD(h, "dataset '%s' has %llu elements, expected %lld (%s)", name, (unsigned long long)dim,
                       (long long)want_len, len_text);
    return PL_OK;
}

/* Read n elements from offset off of a 1-D dataset. */
static int dset_read(h5m_file *h, hid_t d, const char *name, hid_t memtype, int64_t off, int64_t n, void *buf)
{
    if (n <= 0) return PL_OK;
    hsize_t start = (hsize_t)off, count = (hsize_t)n;
    hid_t fs = H5Dget_space(d);
    hid_t ms = H5Screate_simple(1, &count, NULL);
    herr_t e = -1;
    if (fs >= 0 && ms >= 0 && H5Sselect_hyperslab(fs, H5S_SELECT_SET, &start, NULL, &count, NULL) >= 0)
        e = H5Dread(d, memtype, ms, fs, H5P_DEFAULT, buf);
    if (ms >= 0) H5Sclose(ms);
    if (fs >= 0) H5Sclose(fs);
    if (e < 0)
        return H5M_BAD(h, "cannot read dataset '%s' elements [%lld, %lld) (file truncated or damaged?)", name,
                       (long long)off, (long long)(off + n));
    return PL_OK;
}

/* Open file and group, read and validate the metadata (see pl_h5m_open_info). */
static int h5m_open(h5m_file *h)
{
    struct stat st;
    if (stat(h->fname, &st) != 0)
        return H5M_BAD(h, "cannot open the file (%s)", strerror(errno));
    if (S_ISDIR(st.st_mode)) return H5M_BAD(h, "is a directory, not an HDF5 file");
    if (st.st_size == 0) return H5M_BAD(h, "the file is empty (0 bytes), not an HDF5 file");
    htri_t is = H5Fis_hdf5(h->fname);
    if (is < 0) return H5M_BAD(h, "cannot read the file (permissions?)");
    if (is == 0) return H5M_BAD(h, "not an HDF5 file (no HDF5 signature; convert .mtx files with tools/mtx2h5.py)");
    h->f = H5Fopen(h->fname, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (h->f < 0) return H5M_BAD(h, "cannot open the HDF5 file (truncated or damaged)");
    htri_t ge = strcmp(h->gname, "/") ? H5Lexists(h->f, h->gname, H5P_DEFAULT) : 1;
    if (ge > 0) h->g = H5Gopen2(h->f, h->gname, H5P_DEFAULT);
    if (h->g < 0) return H5M_BAD(h, "group not found (or not a group)");

    pl_h5m_info *in = &h->info;
    int64_t schema = 0, sym = 0;
    int p = 0;
    PL_CALL(attr_i64(h, "pjds_matrix_schema", 0, &schema, &p));
    if (!p)
        return H5M_BAD(h, "missing attribute 'pjds_matrix_schema' (not a pjds matrix group; "
                          "convert .mtx files with tools/mtx2h5.py)");
    if (schema != PL_H5M_SCHEMA)
        return H5M_BAD(h, "unsupported schema version pjds_matrix_schema = %lld (this program reads %d)",
                       (long long)schema, PL_H5M_SCHEMA);
    PL_CALL(attr_i64(h, "rows", 1, &in->rows, NULL));
    PL_CALL(attr_i64(h, "cols", 1, &in->cols, NULL));
    PL_CALL(attr_i64(h, "nnz", 1, &in->nnz_stored, NULL));
    PL_CALL(attr_i64(h, "symmetric", 1, &sym, NULL));
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
    PL_CALL(attr_str(h, "storage", 0, storage, sizeof storage, &p));
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
    PL_CALL(attr_str(h, "name", 0, in->name, sizeof in->name, NULL));
    PL_CALL(attr_str(h, "source", 0, in->source, sizeof in->source, NULL));

    PL_CALL(dset_open(h, "row_ptr", H5T_INTEGER, "an integer type", in->rows + 1, "rows + 1", &h->d_rp, NULL));
    PL_CALL(dset_open(h, "col_idx", H5T_INTEGER, "an integer type", in->nnz_stored, "attribute nnz", &h->d_ci,
                      &in->col_bytes));
    PL_CALL(dset_open(h, "values", H5T_FLOAT, "a floating-point type", in->nnz_stored, "attribute nnz", &h->d_val,
                      NULL));
    int64_t first = -1, last = -1;
    PL_CALL(dset_read(h, h->d_rp, "row_ptr", H5T_NATIVE_INT64, 0, 1, &first));
    PL_CALL(dset_read(h, h->d_rp, "row_ptr", H5T_NATIVE_INT64, in->rows, 1, &last));
    if (first != 0) return H5M_BAD(h, "dataset 'row_ptr' must start at 0 (row_ptr[0] = %lld)", (long long)first);
    if (last != in->nnz_stored)
        return H5M_BAD(h, "dataset 'row_ptr' does not end at nnz (row_ptr[%lld] = %lld, nnz = %lld)",
                       (long long)in->rows, (long long)last, (long long)in->nnz_stored);
    return PL_OK;
}

/* ---- MPI helpers ---------------------------------------------------------- */
/* Agree on the outcome of a local phase (see file comment).  Collective. */
static int h5m_agree(int rc, MPI_Comm comm)
{
    int rank, size;
    if (MPI_Comm_rank(comm, &rank) != MPI_SUCCESS || MPI_Comm_size(comm, &size) != MPI_SUCCESS)
        return PL_ERROR(PL_ERR_MPI, "MPI_Comm_rank/size failed");
    int me = rc ? rank : INT_MAX, first = INT_MAX;
    if (MPI_Allreduce(&me, &first, 1, MPI_INT, MPI_MIN, comm) != MPI_SUCCESS)
        return PL_ERROR(PL_ERR_MPI, "MPI_Allreduce failed");
    if (first == INT_MAX) return PL_OK;
    struct {
        int code;
        char msg[1024];
    } m;
    memset(&m, 0, sizeof m);
    if (rank == first) {
        m.code = rc;
        snprintf(m.msg, sizeof m.msg, "%s", pl_error_message());
    }
    if (MPI_Bcast(&m, (int)sizeof m, MPI_BYTE, first, comm) != MPI_SUCCESS)
        return PL_ERROR(PL_ERR_MPI, "MPI_Bcast failed");
    if (rc) return rc;
    return pl_error_set(m.code, __FILE__, __LINE__, __func__, "%s", m.msg);
}

/* The ranks' row ranges: nonempty ones sorted by start, checked disjoint. */
typedef struct h5m_owners {
    int n;           /* nonempty ranges */
    int64_t *r0, *r1;
    int *rank;
    int cover;       /* the ranges tile [0, N) exactly */
    int64_t lo;      /* first requested row (N if none) */
} h5m_owners;

static void owners_free(h5m_owners *o)
{
    free(o->r0);
    free(o->r1);
    free(o->rank);
    memset(o, 0, sizeof *o);
}

static int owners_build(int64_t r0, int64_t r1, int64_t N, MPI_Comm comm, h5m_owners *o)
{
    int size;
    memset(o, 0, sizeof *o);
    PL_CHECK(MPI_Comm_size(comm, &size) == MPI_SUCCESS, PL_ERR_MPI, "MPI_Comm_size failed");
    int64_t mine[2] = {r0, r1}, *all = NULL;
    PL_MALLOC(all, 2 * (size_t)size);
    if (MPI_Allgather(mine, 2, MPI_INT64_T, all, 2, MPI_INT64_T, comm) != MPI_SUCCESS) {
        free(all);
        return PL_ERROR(PL_ERR_MPI, "MPI_Allgather of row ranges failed");
    }
    o->r0 = malloc(sizeof(int64_t) * (size_t)size);
    o->r1 = malloc(sizeof(int64_t) * (size_t)size);
    o->rank = malloc(sizeof(int) * (size_t)size);
    if (!o->r0 || !o->r1 || !o->rank) {
        free(all);
        owners_free(o);
        return PL_ERROR(PL_ERR_MEM, "out of host memory");
    }
    int bad = 0;
    for (int p = 0; p < size; p++) {
        int64_t a = all[2 * p], b = all[2 * p + 1];
        if (a < 0 || b < a || b > N) bad = 1;
        if (a >= b) continue;
        int k = o->n++; /* insertion by start */
        while (k > 0 && o->r0[k - 1] > a) {
            o->r0[k] = o->r0[k - 1];
            o->r1[k] = o->r1[k - 1];
            o->rank[k] = o->rank[k - 1];
            k--;
        }
        o->r0[k] = a;
        o->r1[k] = b;
        o->rank[k] = p;
    }
    free(all);
    for (int k = 1; k < o->n; k++)
        if (o->r0[k] < o->r1[k - 1]) bad = 1;
    if (bad) {
        owners_free(o);
        return PL_ERROR(PL_ERR_ARG, "row ranges of the ranks are invalid or overlap (N = %lld)", (long long)N);
    }
    o->lo = o->n ? o->r0[0] : N;
    o->cover = o->n > 0 && o->r0[0] == 0 && o->r1[o->n - 1] == N;
    for (int k = 1; k < o->n && o->cover; k++)
        if (o->r0[k] != o->r1[k - 1]) o->cover = 0;
    return PL_OK;
}

/* Rank owning row r, -1 if none. */
static int owner_of(const h5m_owners *o, int64_t r)
{
    int a = 0, b = o->n; /* find last k with r0[k] <= r */
    while (b - a > 1) {
        int m = (a + b) / 2;
        if (o->r0[m] <= r) a = m;
        else b = m;
    }
    if (o->n && o->r0[a] <= r && r < o->r1[a]) return o->rank[a];
    return -1;
}

/* ---- validation of row_ptr pieces ------------------------------------------- */
static int check_row_ptr(h5m_file *h, const int64_t *rp, int64_t r0, int64_t n)
{
    for (int64_t k = 0; k <= n; k++) {
        if (rp[k] < 0 || rp[k] > h->info.nnz_stored)
            return H5M_BAD(h, "dataset 'row_ptr' value row_ptr[%lld] = %lld is outside [0, nnz = %lld]",
                           (long long)(r0 + k), (long long)rp[k], (long long)h->info.nnz_stored);
        if (k > 0 && rp[k] < rp[k - 1])
            return H5M_BAD(h, "dataset 'row_ptr' is not non-decreasing (row_ptr[%lld] = %lld > row_ptr[%lld] = %lld)",
                           (long long)(r0 + k - 1), (long long)rp[k - 1], (long long)(r0 + k), (long long)rp[k]);
    }
    return PL_OK;
}

static int check_entry(h5m_file *h, int64_t i, int64_t j, int64_t pos)
{
    if (j < 0 || j >= h->info.cols)
        return H5M_BAD(h, "dataset 'col_idx' has column index %lld out of range [0, %lld) at entry %lld (row %lld)",
                       (long long)j, (long long)h->info.cols, (long long)pos, (long long)i);
    if (h->info.lower && j > i)
        return H5M_BAD(h, "dataset 'col_idx' has an entry above the diagonal at entry %lld (row %lld, column %lld) "
                          "but storage is 'lower'",
                       (long long)pos, (long long)i, (long long)j);
    return PL_OK;
}

static int check_value(h5m_file *h, double v, int64_t i, int64_t j, int64_t pos)
{
    if (!isfinite(v))
        return H5M_BAD(h, "dataset 'values' holds a value that is not finite (%s) at entry %lld (row %lld, column %lld)",
                       isnan(v) ? "NaN" : "Inf", (long long)pos, (long long)i, (long long)j);
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

/* ---- the streamed scan of lower storage ------------------------------------------- */
typedef struct h5m_item {
    int64_t r, c; /* row, column (or count in counting mode) */
    double v;
} h5m_item;

/* One routing round of (row, col, value) items: agree on the local outcome
 * rc, exchange the per-rank counts, lay out and (re)allocate the receive
 * buffer *rbuf (rdsp = exclusive prefix of rcnt, *nrecv their sum), agree
 * again (the buffer is allocated before the exchange) and exchange the
 * items.  Collective; every rank returns the same code. */
static int h5m_route(int rc, const h5m_item *sbuf, const int *scnt, const int *sdsp, int *rcnt, int *rdsp,
                     h5m_item **rbuf, int64_t *nrecv, MPI_Datatype itype, MPI_Comm comm)
{
    int size;
    rc = h5m_agree(rc, comm);
    if (rc) return rc;
    if (MPI_Comm_size(comm, &size) != MPI_SUCCESS || MPI_Alltoall(scnt, 1, MPI_INT, rcnt, 1, MPI_INT, comm) != MPI_SUCCESS)
        return PL_ERROR(PL_ERR_MPI, "MPI_Alltoall of routing counts failed");
    int64_t n = 0;
    for (int p = 0; p < size; p++) {
        rdsp[p] = (int)(n < INT_MAX ? n : INT_MAX);
        n += rcnt[p];
    }
    if (n > INT_MAX) {
        rc = PL_ERROR(PL_ERR_OVERFLOW, "a routing round receives too many items (%lld)", (long long)n);
    } else {
        h5m_item *t = realloc(*rbuf, sizeof(h5m_item) * (size_t)(n + 1));
        if (!t) rc = PL_ERROR(PL_ERR_MEM, "out of host memory");
        else *rbuf = t;
    }
    rc = h5m_agree(rc, comm);
    if (rc) return rc;
    if (MPI_Alltoallv(sbuf, scnt, sdsp, itype, *rbuf, rcnt, rdsp, itype, comm) != MPI_SUCCESS)
        return PL_ERROR(PL_ERR_MPI, "MPI_Alltoallv of matrix entries failed");
    *nrecv = n;
    return PL_OK;
}


enum { SCAN_COUNT = 0, SCAN_ENTRIES = 1 };

/* Greedy row blocks of a scan share: ends of the blocks of at most g_block
 * entries and g_block rows (a longer row forms a block alone).  Returns the number of blocks. */
static int64_t scan_blocks(const int64_t *rp, int64_t nrows, int64_t *maxent, int64_t *ends)
{
    int64_t nb = 0, a = 0, mx = 0;
    while (a < nrows) {
        int64_t b = a + 1;
        while (b < nrows && b - a < g_block && rp[b + 1] - rp[a] <= g_block) b++;
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
            int oi = owner_of(o, i);
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
                    int oj = owner_of(o, j);
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

/* Scan lower storage (see file comment).  COUNT: len64[r - r0] += counts.
 * ENTRIES: entries of row r go to out->col/val at pos[r - r0]++, within
 * out->row_ptr (sized by a COUNT scan before; overflow means the file
 * changed in between: PL_ERR_INPUT).  Collective; h is open on every rank
 * (agreed before). */
static int scan_lower(h5m_file *h, int64_t r0, int64_t r1, int mode, MPI_Comm comm, int64_t *len64,
                      pl_csr *out, int64_t *pos)
{
    int rank, size, rc = PL_OK, late = PL_OK;
    const int64_t N = h->info.rows;
    PL_CHECK(MPI_Comm_rank(comm, &rank) == MPI_SUCCESS, PL_ERR_MPI, "MPI_Comm_rank failed");
    PL_CHECK(MPI_Comm_size(comm, &size) == MPI_SUCCESS, PL_ERR_MPI, "MPI_Comm_size failed");
    h5m_owners o;
    PL_CALL(owners_build(r0, r1, N, comm, &o));

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
    if (!rc) rc = dset_read(h, h->d_rp, "row_ptr", H5T_NATIVE_INT64, s0, ns + 1, rp);
    if (!rc) rc = check_row_ptr(h, rp, s0, ns);
    if (!rc) {
        nb = scan_blocks(rp, ns, &maxent, NULL);
        ends = malloc(sizeof(int64_t) * (size_t)(nb + 1));
        cols = malloc(sizeof(int64_t) * (size_t)(maxent + 1));
        vals = mode == SCAN_ENTRIES ? malloc(sizeof(double) * (size_t)(maxent + 1)) : NULL;
        /* items per block: <= 2 per entry (+1 per row in counting mode) */
        size_t ni = 2 * (size_t)maxent + (mode == SCAN_COUNT ? (size_t)g_block + 1 : 0) + 1;
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
            rc = dset_read(h, h->d_ci, "col_idx", H5T_NATIVE_INT64, e0, ne, cols);
            if (!rc && mode == SCAN_ENTRIES) rc = dset_read(h, h->d_val, "values", H5T_NATIVE_DOUBLE, e0, ne, vals);
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
    owners_free(&o);
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
int pl_h5m_open_info(const char *file, const char *group, pl_h5m_info *info)
{
    h5m_file h;
    h5m_quiet q;
    PL_CHECK(file && info, PL_ERR_ARG, "pl_h5m_open_info: NULL argument");
    h5m_init(&h, file, group);
    quiet_on(&q);
    int rc = h5m_open(&h);
    if (!rc) *info = h.info;
    h5m_close(&h);
    quiet_off(&q);
    return rc;
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

int pl_h5m_row_lengths(const char *file, const char *group, int64_t r0, int64_t r1, int32_t *len, MPI_Comm comm)
{
    h5m_file h;
    h5m_quiet q;
    h5m_init(&h, file, group);
    quiet_on(&q);
    int64_t n = r1 - r0, *buf = NULL;
    int rc = h5m_open(&h);
    if (!rc) rc = check_range(&h, r0, r1);
    if (!rc && !(buf = calloc((size_t)n + 1, sizeof(int64_t)))) rc = PL_ERROR(PL_ERR_MEM, "out of host memory");
    if (!rc && !h.info.lower) {
        rc = dset_read(&h, h.d_rp, "row_ptr", H5T_NATIVE_INT64, r0, n + 1, buf);
        if (!rc) rc = check_row_ptr(&h, buf, r0, n);
        for (int64_t k = 0; k < n && !rc; k++) buf[k] = buf[k + 1] - buf[k];
    }
    rc = h5m_agree(rc, comm);
    if (!rc && h.info.lower) {
        memset(buf, 0, sizeof(int64_t) * (size_t)(n + 1));
        rc = scan_lower(&h, r0, r1, SCAN_COUNT, comm, buf, NULL, NULL);
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
    quiet_off(&q);
    return rc;
}

int pl_h5m_row_lengths_fn(void *arg, int64_t r0, int64_t r1, int32_t *len)
{
    const pl_h5m_source *s = arg;
    return pl_h5m_row_lengths(s->file, s->group, r0, r1, len, s->comm);
}

/* Full storage: read the hyperslab of rows [r0, r1) into out.  Local. */
static int read_full(h5m_file *h, int64_t r0, int64_t r1, pl_csr *out)
{
    int64_t n = r1 - r0, *rp = NULL;
    PL_MALLOC(rp, n + 1);
    int rc = dset_read(h, h->d_rp, "row_ptr", H5T_NATIVE_INT64, r0, n + 1, rp);
    if (!rc) rc = check_row_ptr(h, rp, r0, n);
    if (!rc) rc = pl_csr_alloc(out, h->info.rows, r0, n, rp[n] - rp[0]);
    if (rc) {
        free(rp);
        return rc;
    }
    int64_t e0 = rp[0], ne = rp[n] - rp[0];
    for (int64_t k = 0; k <= n; k++) out->row_ptr[k] = rp[k] - e0;
    free(rp);
    PL_CALL(dset_read(h, h->d_ci, "col_idx", H5T_NATIVE_INT64, e0, ne, out->col));
    PL_CALL(dset_read(h, h->d_val, "values", H5T_NATIVE_DOUBLE, e0, ne, out->val));
    for (int64_t r = 0; r < n; r++)
        for (int64_t k = out->row_ptr[r]; k < out->row_ptr[r + 1]; k++) {
            PL_CALL(check_entry(h, r0 + r, out->col[k], e0 + k));
            PL_CALL(check_value(h, out->val[k], r0 + r, out->col[k], e0 + k));
        }
    return sort_and_check(h, out);
}

/* Lower storage: a counting scan sizes the rows exactly, a second scan
 * places each entry where it belongs (no intermediate copy of the block).
 * Collective. */
static int read_lower(h5m_file *h, int64_t r0, int64_t r1, MPI_Comm comm, pl_csr *out)
{
    int64_t n = r1 - r0, *len = calloc((size_t)n + 1, sizeof(int64_t));
    int rc = len ? PL_OK : PL_ERROR(PL_ERR_MEM, "out of host memory");
    rc = h5m_agree(rc, comm);
    if (!rc) rc = scan_lower(h, r0, r1, SCAN_COUNT, comm, len, NULL, NULL);
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
    if (!rc) rc = scan_lower(h, r0, r1, SCAN_ENTRIES, comm, NULL, out, len);
    for (int64_t r = 0; r < n && !rc; r++)
        if (len[r] != out->row_ptr[r + 1])
            rc = H5M_BAD(h, "the file changed while it was read (row %lld shrank)", (long long)(r0 + r));
    free(len);
    if (!rc) rc = sort_and_check(h, out);
    return rc;
}

int pl_h5m_read_rows(const char *file, const char *group, int64_t r0, int64_t r1, MPI_Comm comm, pl_csr *out)
{
    h5m_file h;
    h5m_quiet q;
    memset(out, 0, sizeof *out);
    h5m_init(&h, file, group);
    quiet_on(&q);
    int rc = h5m_open(&h);
    if (!rc) rc = check_range(&h, r0, r1);
    if (!rc && !h.info.lower) rc = read_full(&h, r0, r1, out);
    rc = h5m_agree(rc, comm);
    if (!rc && h.info.lower) {
        rc = read_lower(&h, r0, r1, comm, out);
        rc = h5m_agree(rc, comm);
    }
    if (rc) pl_csr_destroy(out);
    h5m_close(&h);
    quiet_off(&q);
    return rc;
}

/* ---- public: asymmetry ----------------------------------------------------------- */
/* Position of column c in row r (local) of a, -1 if absent. */
static int64_t find_col(const pl_csr *a, int64_t r, int64_t c)
{
    int64_t lo = a->row_ptr[r], hi = a->row_ptr[r + 1];
    while (lo < hi) {
        int64_t m = lo + (hi - lo) / 2;
        if (a->col[m] < c) lo = m + 1;
        else hi = m;
    }
    return (lo < a->row_ptr[r + 1] && a->col[lo] == c) ? lo : -1;
}

typedef struct asym_best {
    double d;
    int64_t i, j;
} asym_best;

static void best_update(asym_best *b, double d, int64_t r, int64_t c)
{
    int64_t i = r < c ? r : c, j = r < c ? c : r;
    if (d > b->d || (d == b->d && d > 0 && (i < b->i || (i == b->i && j < b->j)))) {
        b->d = d;
        b->i = i;
        b->j = j;
    }
}

int pl_h5m_asymmetry(const pl_csr *a, MPI_Comm comm, double *max_rel, int64_t *wi, int64_t *wj)
{
    int rank, size, rc = PL_OK;
    PL_CHECK(MPI_Comm_rank(comm, &rank) == MPI_SUCCESS, PL_ERR_MPI, "MPI_Comm_rank failed");
    PL_CHECK(MPI_Comm_size(comm, &size) == MPI_SUCCESS, PL_ERR_MPI, "MPI_Comm_size failed");
    const int64_t N = a->nrows_global, nnz = pl_csr_nnz(a);
    h5m_owners o;
    PL_CALL(owners_build(a->row0, a->row0 + a->nrows, N, comm, &o));
    if (!o.cover) {
        owners_free(&o);
        return PL_ERROR(PL_ERR_ARG, "pl_h5m_asymmetry: the row blocks do not tile [0, %lld)", (long long)N);
    }
    double amax = 0, gmax = 0;
    for (int64_t k = 0; k < nnz; k++) amax = fmax(amax, fabs(a->val[k]));
    asym_best best = {0.0, -1, -1};
    unsigned char *matched = calloc((size_t)nnz + 1, 1);
    int *scnt = calloc((size_t)size, sizeof(int)), *sdsp = calloc((size_t)size, sizeof(int));
    int *rcnt = calloc((size_t)size, sizeof(int)), *rdsp = calloc((size_t)size, sizeof(int));
    int *fill = calloc((size_t)size, sizeof(int));
    int64_t B = g_block, nb = (nnz + B - 1) / B, nrounds = 0;
    h5m_item *sbuf = malloc(sizeof(h5m_item) * (size_t)(B < nnz ? B : nnz + 1)), *rbuf = NULL;
    MPI_Datatype itype = MPI_DATATYPE_NULL;
    if (!matched || !scnt || !sdsp || !rcnt || !rdsp || !fill || !sbuf)
        rc = PL_ERROR(PL_ERR_MEM, "out of host memory");
    rc = h5m_agree(rc, comm);
    if (rc) goto out;
    if (MPI_Allreduce(&amax, &gmax, 1, MPI_DOUBLE, MPI_MAX, comm) != MPI_SUCCESS ||
        MPI_Allreduce(&nb, &nrounds, 1, MPI_INT64_T, MPI_MAX, comm) != MPI_SUCCESS ||
        MPI_Type_contiguous((int)sizeof(h5m_item), MPI_BYTE, &itype) != MPI_SUCCESS ||
        MPI_Type_commit(&itype) != MPI_SUCCESS) {
        rc = PL_ERROR(PL_ERR_MPI, "MPI setup of the symmetry check failed");
        goto out;
    }
    /* local row of each entry: walk rows alongside the entry range */
    int64_t r = 0;
    for (int64_t round = 0; round < nrounds; round++) {
        int64_t e0 = round * B < nnz ? round * B : nnz, e1 = e0 + B < nnz ? e0 + B : nnz;
        memset(scnt, 0, sizeof(int) * (size_t)size);
        for (int pass = 0; pass < 2; pass++) {
            int64_t rr = r;
            if (pass == 1) {
                int t = 0;
                for (int p = 0; p < size; p++) {
                    sdsp[p] = fill[p] = t;
                    t += scnt[p];
                }
            }
            for (int64_t k = e0; k < e1; k++) {
                while (a->row_ptr[rr + 1] <= k) rr++;
                int64_t i = a->row0 + rr, j = a->col[k];
                if (j == i) continue;
                int oj = owner_of(&o, j);
                if (oj < 0) { /* column outside [0, N): not a valid block */
                    if (!rc) rc = PL_ERROR(PL_ERR_ARG, "pl_h5m_asymmetry: column %lld out of range", (long long)j);
                    continue;
                }
                if (pass == 0) scnt[oj]++;
                else sbuf[fill[oj]++] = (h5m_item){j, i, a->val[k]};
            }
            if (pass == 1) r = rr;
        }
        int64_t nrecv = 0;
        rc = h5m_route(rc, sbuf, scnt, sdsp, rcnt, rdsp, &rbuf, &nrecv, itype, comm);
        if (rc) goto out;
        for (int64_t k = 0; k < nrecv; k++) {
            /* rbuf[k]: a_{c r} = v, compared with local a_{r c} */
            int64_t lr = rbuf[k].r - a->row0, p = find_col(a, lr, rbuf[k].c);
            double mine = 0.0;
            if (p >= 0) {
                mine = a->val[p];
                matched[p] = 1;
            }
            best_update(&best, fabs(mine - rbuf[k].v), rbuf[k].r, rbuf[k].c);
        }
    }
    for (int64_t lr = 0; lr < a->nrows; lr++)
        for (int64_t k = a->row_ptr[lr]; k < a->row_ptr[lr + 1]; k++)
            if (!matched[k] && a->col[k] != a->row0 + lr) best_update(&best, fabs(a->val[k]), a->row0 + lr, a->col[k]);
    double gd = 0;
    int64_t cand[2], gc[2];
    if (MPI_Allreduce(&best.d, &gd, 1, MPI_DOUBLE, MPI_MAX, comm) != MPI_SUCCESS) {
        rc = PL_ERROR(PL_ERR_MPI, "MPI_Allreduce failed");
        goto out;
    }
    cand[0] = best.d == gd && gd > 0 ? best.i : INT64_MAX;
    if (MPI_Allreduce(&cand[0], &gc[0], 1, MPI_INT64_T, MPI_MIN, comm) != MPI_SUCCESS) {
        rc = PL_ERROR(PL_ERR_MPI, "MPI_Allreduce failed");
        goto out;
    }
    cand[1] = best.d == gd && gd > 0 && best.i == gc[0] ? best.j : INT64_MAX;
    if (MPI_Allreduce(&cand[1], &gc[1], 1, MPI_INT64_T, MPI_MIN, comm) != MPI_SUCCESS) {
        rc = PL_ERROR(PL_ERR_MPI, "MPI_Allreduce failed");
        goto out;
    }
    *max_rel = (gd > 0 && gmax > 0) ? gd / gmax : 0.0;
    *wi = gd > 0 ? gc[0] : -1;
    *wj = gd > 0 ? gc[1] : -1;
out:
    if (itype != MPI_DATATYPE_NULL) MPI_Type_free(&itype);
    owners_free(&o);
    free(matched);
    free(scnt);
    free(sdsp);
    free(rcnt);
    free(rdsp);
    free(fill);
    free(sbuf);
    free(rbuf);
    return rc;
}

/* ---- public: export -------------------------------------------------------------- */
static int w_attr_i64(hid_t g, const char *name, int64_t v)
{
    hid_t s = H5Screate(H5S_SCALAR), a = -1;
    herr_t e = -1;
    if (s >= 0) a = H5Acreate2(g, name, H5T_STD_I64LE, s, H5P_DEFAULT, H5P_DEFAULT);
    if (a >= 0) e = H5Awrite(a, H5T_NATIVE_INT64, &v);
    if (a >= 0) H5Aclose(a);
    if (s >= 0) H5Sclose(s);
    PL_CHECK(e >= 0, PL_ERR_HDF5, "cannot write attribute '%s'", name);
    return PL_OK;
}

/* Fixed-length string attribute: readers need not follow a variable-length
 * string into the global heap (HDF5 1.10 can crash there on a damaged file). */
static int w_attr_str(hid_t g, const char *name, const char *v)
{
    hid_t s = H5Screate(H5S_SCALAR), t = H5Tcopy(H5T_C_S1), a = -1;
    herr_t e = -1;
    if (s >= 0 && t >= 0 && H5Tset_size(t, strlen(v) + 1) >= 0 && H5Tset_strpad(t, H5T_STR_NULLTERM) >= 0 &&
        H5Tset_cset(t, H5T_CSET_UTF8) >= 0)
        a = H5Acreate2(g, name, t, s, H5P_DEFAULT, H5P_DEFAULT);
    if (a >= 0) e = H5Awrite(a, t, v);
    if (a >= 0) H5Aclose(a);
    if (t >= 0) H5Tclose(t);
    if (s >= 0) H5Sclose(s);
    PL_CHECK(e >= 0, PL_ERR_HDF5, "cannot write attribute '%s'", name);
    return PL_OK;
}

static int w_dset(hid_t g, const char *name, hid_t ftype, int64_t n, hid_t *d)
{
    hsize_t dim = (hsize_t)n;
    hid_t s = H5Screate_simple(1, &dim, NULL);
    *d = s >= 0 ? H5Dcreate2(g, name, ftype, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT) : -1;
    if (s >= 0) H5Sclose(s);
    PL_CHECK(*d >= 0, PL_ERR_HDF5, "cannot create dataset '%s'", name);
    return PL_OK;
}

static int w_range(hid_t d, const char *name, hid_t memtype, int64_t off, int64_t n, const void *buf)
{
    if (n <= 0) return PL_OK;
    hsize_t start = (hsize_t)off, count = (hsize_t)n;
    hid_t fs = H5Dget_space(d), ms = H5Screate_simple(1, &count, NULL);
    herr_t e = -1;
    if (fs >= 0 && ms >= 0 && H5Sselect_hyperslab(fs, H5S_SELECT_SET, &start, NULL, &count, NULL) >= 0)
        e = H5Dwrite(d, memtype, ms, fs, H5P_DEFAULT, buf);
    if (ms >= 0) H5Sclose(ms);
    if (fs >= 0) H5Sclose(fs);
    PL_CHECK(e >= 0, PL_ERR_HDF5, "cannot write dataset '%s' elements [%lld, %lld) (disk full?)", name,
             (long long)off, (long long)(off + n));
    return PL_OK;
}

typedef struct h5m_writer {
    hid_t f, g, d_rp, d_ci, d_val;
} h5m_writer;

static void writer_close(h5m_writer *w)
{
    if (w->d_val >= 0) H5Dclose(w->d_val);
    if (w->d_ci >= 0) H5Dclose(w->d_ci);
    if (w->d_rp >= 0) H5Dclose(w->d_rp);
    if (w->g >= 0 && w->g != w->f) H5Gclose(w->g);
    if (w->f >= 0) H5Fclose(w->f);
    w->f = w->g = w->d_rp = w->d_ci = w->d_val = H5I_INVALID_HID;
}

static int writer_create(h5m_writer *w, const char *tmp, const char *group, int64_t N, int64_t nnz, int symmetric,
                         const char *name, const char *source)
{
    w->f = H5Fcreate(tmp, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    PL_CHECK(w->f >= 0, PL_ERR_IO, "cannot create HDF5 file '%s'", tmp);
    if (!group || !group[0] || !strcmp(group, "/")) {
        w->g = H5Gopen2(w->f, "/", H5P_DEFAULT);
    } else {
        hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
        if (lcpl >= 0 && H5Pset_create_intermediate_group(lcpl, 1) >= 0)
            w->g = H5Gcreate2(w->f, group, lcpl, H5P_DEFAULT, H5P_DEFAULT);
        if (lcpl >= 0) H5Pclose(lcpl);
    }
    PL_CHECK(w->g >= 0, PL_ERR_INPUT, "cannot create group '%s' in '%s' (bad group path?)", group, tmp);
    PL_CALL(w_attr_i64(w->g, "pjds_matrix_schema", PL_H5M_SCHEMA));
    PL_CALL(w_attr_i64(w->g, "rows", N));
    PL_CALL(w_attr_i64(w->g, "cols", N));
    PL_CALL(w_attr_i64(w->g, "nnz", nnz));
    PL_CALL(w_attr_i64(w->g, "symmetric", symmetric ? 1 : 0));
    PL_CALL(w_attr_str(w->g, "storage", "full"));
    if (name) PL_CALL(w_attr_str(w->g, "name", name));
    if (source) PL_CALL(w_attr_str(w->g, "source", source));
    PL_CALL(w_dset(w->g, "row_ptr", H5T_STD_I64LE, N + 1, &w->d_rp));
    PL_CALL(w_dset(w->g, "col_idx", N <= INT32_MAX ? H5T_STD_I32LE : H5T_STD_I64LE, nnz, &w->d_ci));
    PL_CALL(w_dset(w->g, "values", H5T_IEEE_F64LE, nnz, &w->d_val));
    return PL_OK;
}

/* Rank 0: write block p (its own: a; else received in pieces).  On an
 * earlier error (*rc != 0) the pieces are still received, not written. */
static int writer_block(h5m_writer *w, int p, const pl_csr *a, int64_t row0, int64_t nrows, int64_t nnz,
                        int64_t off, MPI_Comm comm, void *buf, int rc)
{
    const int64_t B = g_block;
    for (int part = 0; part < 3; part++) {
        int64_t total = part == 0 ? nrows : nnz;
        for (int64_t s = 0; s < total; s += B) {
            int64_t n = total - s < B ? total - s : B;
            const void *src;
            if (p == 0) {
                src = part == 0 ? (const void *)(a->row_ptr + s) : part == 1 ? (const void *)(a->col + s)
                                                                             : (const void *)(a->val + s);
                if (part == 0) {
                    memcpy(buf, src, sizeof(int64_t) * (size_t)n);
                    src = buf;
                }
            } else {
                if (MPI_Recv(buf, (int)n, part == 2 ? MPI_DOUBLE : MPI_INT64_T, p, 100 + part, comm,
                             MPI_STATUS_IGNORE) != MPI_SUCCESS)
                    return PL_ERROR(PL_ERR_MPI, "MPI_Recv of a matrix piece from rank %d failed", p);
                src = buf;
            }
            if (rc) continue;
            if (part == 0) {
                int64_t *q = buf;
                for (int64_t k = 0; k < n; k++) q[k] += off;
                rc = w_range(w->d_rp, "row_ptr", H5T_NATIVE_INT64, row0 + s, n, q);
            } else if (part == 1) {
                rc = w_range(w->d_ci, "col_idx", H5T_NATIVE_INT64, off + s, n, src);
            } else {
                rc = w_range(w->d_val, "values", H5T_NATIVE_DOUBLE, off + s, n, src);
            }
        }
    }
    return rc;
}

int pl_h5m_write(const char *file, const char *group, const pl_csr *a, int symmetric, const char *name,
                 const char *source, MPI_Comm comm, int overwrite)
{
    int rank, size, rc = PL_OK;
    PL_CHECK(MPI_Comm_rank(comm, &rank) == MPI_SUCCESS, PL_ERR_MPI, "MPI_Comm_rank failed");
    PL_CHECK(MPI_Comm_size(comm, &size) == MPI_SUCCESS, PL_ERR_MPI, "MPI_Comm_size failed");
    const int64_t N = a->nrows_global;
    int64_t mine[3] = {a->row0, a->nrows, pl_csr_nnz(a)}, *all = NULL;
    PL_MALLOC(all, 3 * (size_t)size);
    if (MPI_Allgather(mine, 3, MPI_INT64_T, all, 3, MPI_INT64_T, comm) != MPI_SUCCESS) {
        free(all);
        return PL_ERROR(PL_ERR_MPI, "MPI_Allgather failed");
    }
    int64_t next = 0, total = 0;
    for (int p = 0; p < size && !rc; p++) {
        if (all[3 * p] != next || all[3 * p + 1] < 0)
            rc = PL_ERROR(PL_ERR_ARG, "pl_h5m_write: row blocks are not consecutive in rank order");
        next += all[3 * p + 1];
        total += all[3 * p + 2];
    }
    if (!rc && next != N) rc = PL_ERROR(PL_ERR_ARG, "pl_h5m_write: row blocks cover %lld of %lld rows", (long long)next, (long long)N);
    if (rc) {
        free(all);
        return rc;
    }

    h5m_quiet q;
    h5m_writer w = {H5I_INVALID_HID, H5I_INVALID_HID, H5I_INVALID_HID, H5I_INVALID_HID, H5I_INVALID_HID};
    char tmp[4200];
    void *buf = NULL;
    quiet_on(&q);
    if (rank == 0) {
        struct stat st;
        snprintf(tmp, sizeof tmp, "%s.part-%ld", file, (long)getpid());
        if (strlen(file) > 4000) rc = PL_ERROR(PL_ERR_INPUT, "output file name too long");
        else if (stat(file, &st) == 0 && !overwrite)
            rc = PL_ERROR(PL_ERR_INPUT, "output file '%s' exists (use --overwrite to replace it)", file);
        else if (!(buf = malloc(sizeof(int64_t) * (size_t)g_block)))
            rc = PL_ERROR(PL_ERR_MEM, "out of host memory");
        else {
            rc = writer_create(&w, tmp, group, N, total, symmetric, name, source);
            if (rc == PL_ERR_IO)
                rc = PL_ERROR(PL_ERR_INPUT, "cannot create output file '%s' (directory missing or not writable?)", tmp);
        }
    }
    rc = h5m_agree(rc, comm);
    if (rc) goto out;
    if (rank == 0) {
        int64_t off = 0;
        for (int p = 0; p < size; p++) {
            int r2 = writer_block(&w, p, a, all[3 * p], all[3 * p + 1], all[3 * p + 2], off, comm, buf, rc);
            if (r2 == PL_ERR_MPI) { /* cannot stay in step with the senders */
                rc = r2;
                break;
            }
            rc = r2;
            off += all[3 * p + 2];
        }
        if (!rc) rc = w_range(w.d_rp, "row_ptr", H5T_NATIVE_INT64, N, 1, &total);
        writer_close(&w);
        if (!rc && H5Fis_hdf5(tmp) <= 0) rc = PL_ERROR(PL_ERR_HDF5, "written file '%s' is not readable", tmp);
        int kept = 0; /* refused (PL_ERR_INPUT, a file appeared meanwhile): keep the result */
        if (!rc) {
            rc = pl_place_file(tmp, file, overwrite);
            kept = rc == PL_ERR_INPUT;
        }
        if (rc && !kept) unlink(tmp);
    } else {
        const int64_t B = g_block;
        for (int part = 0; part < 3 && !rc; part++) {
            int64_t n_all = part == 0 ? a->nrows : pl_csr_nnz(a);
            for (int64_t s = 0; s < n_all; s += B) {
                int64_t n = n_all - s < B ? n_all - s : B;
                const void *src = part == 0 ? (const void *)(a->row_ptr + s)
                                  : part == 1 ? (const void *)(a->col + s) : (const void *)(a->val + s);
                if (MPI_Send(src, (int)n, part == 2 ? MPI_DOUBLE : MPI_INT64_T, 0, 100 + part, comm) != MPI_SUCCESS) {
                    rc = PL_ERROR(PL_ERR_MPI, "MPI_Send of a matrix piece failed");
                    break;
                }
            }
        }
    }
    rc = h5m_agree(rc, comm);
out:
    writer_close(&w);
    free(buf);
    free(all);
    quiet_off(&q);
    return rc;
}
