/* pl_h5layout.c — which sparse layout an HDF5 group holds, and the layouts
 * other programs write (docs/formats.md, "Other HDF5 layouts"):
 *  - pjds: this project's schema (pl_h5matrix.c, h5m_open_pjds);
 *  - petsc / matlab: jc (column pointer), ir (row index), data, attribute
 *    MATLAB_sparse = rows; compressed column, as MATLAB's save -v7.3 writes
 *    it and PETSc's MatLoad reads it with PETSC_VIEWER_HDF5_MAT;
 *  - csr / csc: SciPy's arrays data, indices, indptr with the shape from an
 *    attribute shape (anndata, with encoding-type csr_matrix|csc_matrix),
 *    h5sparse_shape (h5sparse, with h5sparse_format csr|csc) or a dataset
 *    shape; the format from those attributes or an attribute/dataset format;
 *  - coo: row, col, val (or data), 0- or 1-based (attribute index_base,
 *    the caller's option, else the index range), shape optional.
 * Detection goes by these names in that order; a group holding none of
 * them gets one line listing what it holds.  A file without the HDF5
 * signature is named by what it looks like (PETSc binary, MAT v5, Matrix
 * Market, gzip) with the command that converts it.  COO has its own scan:
 * each rank reads an equal share of the entries in blocks of at most B and
 * routes each entry to the owner of its row. */
#define _POSIX_C_SOURCE 200809L
#include <hdf5.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "pl_error.h"
#include "pl_h5m_impl.h"

static const char *const layout_names[PL_H5M_LAYOUT_COUNT] = {"auto", "pjds", "petsc", "matlab", "csr", "csc", "coo"};

const char *pl_h5m_layout_name(int layout)
{
    return layout >= 0 && layout < PL_H5M_LAYOUT_COUNT ? layout_names[layout] : "?";
}

#define KNOWN_LAYOUTS                                                                                            \
    "pjds (row_ptr, col_idx, values + pjds_matrix_schema), petsc/matlab (jc, ir, data + MATLAB_sparse), csr/csc " \
    "(indptr, indices, data + shape), coo (row, col, val)"

/* ---- a file that is not HDF5 ---- */
int h5m_not_hdf5(h5m_file *h)
{
    unsigned char b[32] = {0};
    FILE *f = fopen(h->fname, "rb");
    size_t n = f ? fread(b, 1, sizeof b, f) : 0;
    if (f) fclose(f);
    const unsigned classid = (unsigned)b[0] << 24 | (unsigned)b[1] << 16 | (unsigned)b[2] << 8 | b[3];
    if (n >= 16 && classid == 1211216u)
        return H5M_BAD(h, "not an HDF5 file: a PETSc binary matrix (class id 1211216); convert it with "
                          "/usr/bin/python3 tools/convert2h5.py %s OUT.h5",
                       h->fname);
    if (n >= 19 && !memcmp(b, "MATLAB 5.0 MAT-file", 19))
        return H5M_BAD(h, "not an HDF5 file: a MATLAB v5 MAT-file; save it with save -v7.3 in MATLAB, or convert "
                          "it with /usr/bin/python3 tools/convert2h5.py %s OUT.h5 --var NAME",
                       h->fname);
    if (n >= 14 && !memcmp(b, "%%MatrixMarket", 14))
        return H5M_BAD(h, "not an HDF5 file: a Matrix Market file; convert it with tools/mtx2h5.py %s OUT.h5",
                       h->fname);
    if (n >= 2 && b[0] == 0x1f && b[1] == 0x8b)
        return H5M_BAD(h, "not an HDF5 file: gzip-compressed (a .mtx.gz file converts with tools/mtx2h5.py %s OUT.h5)",
                       h->fname);
    return H5M_BAD(h, "not an HDF5 file (no HDF5 signature; convert .mtx files with tools/mtx2h5.py)");
}

/* ---- detection ---- */
static int has_link(h5m_file *h, const char *name, int *yes)
{
    htri_t e = H5Lexists(h->g, name, H5P_DEFAULT);
    if (e < 0) return H5M_BAD(h, "cannot look up '%s' (file damaged?)", name);
    *yes = e > 0;
    return PL_OK;
}

typedef struct list_ctx {
    char groups[320], dsets[320];
    int ng, nd;
} list_ctx;

static void list_add(char *buf, size_t cap, int *n, const char *name)
{
    size_t len = strlen(buf);
    if (*n == 12) snprintf(buf + len, cap - len, ", ...");
    else if (*n < 12 && len + strlen(name) + 4 < cap) snprintf(buf + len, cap - len, "%s%.60s", *n ? ", " : "", name);
    (*n)++;
}

static herr_t list_cb(hid_t g, const char *name, const H5L_info_t *li, void *arg)
{
    list_ctx *c = arg;
    (void)li;
    hid_t o = H5Oopen(g, name, H5P_DEFAULT);
    if (o < 0) return 0; /* a dangling link */
    H5I_type_t t = H5Iget_type(o);
    if (t == H5I_GROUP) list_add(c->groups, sizeof c->groups, &c->ng, name);
    else if (t == H5I_DATASET) list_add(c->dsets, sizeof c->dsets, &c->nd, name);
    H5Oclose(o);
    return 0;
}

static int unrecognised(h5m_file *h)
{
    list_ctx c;
    memset(&c, 0, sizeof c);
    if (H5Literate(h->g, H5_INDEX_NAME, H5_ITER_NATIVE, NULL, list_cb, &c) < 0)
        return H5M_BAD(h, "no matrix layout recognised (and the group cannot be listed); known layouts: " KNOWN_LAYOUTS);
    return H5M_BAD(h, "no matrix layout recognised: the group holds groups [%s] and datasets [%s]; known layouts: "
                      KNOWN_LAYOUTS "; set [matrix] group to the matrix's group",
                   c.groups, c.dsets);
}

/* A string attribute (or a scalar string dataset when dset_too) named name. */
static int str_key(h5m_file *h, const char *name, int dset_too, char *buf, size_t cap, int *present)
{
    PL_CALL(h5m_attr_str(h, name, 0, buf, cap, present));
    if (*present || !dset_too) return PL_OK;
    int yes = 0;
    PL_CALL(has_link(h, name, &yes));
    if (!yes) return PL_OK;
    hid_t d = H5Dopen2(h->g, name, H5P_DEFAULT), t = d >= 0 ? H5Dget_type(d) : -1;
    int rc = PL_OK;
    if (t < 0 || H5Tget_class(t) != H5T_STRING) {
        rc = H5M_BAD(h, "dataset '%s' must be a string", name);
    } else if (H5Tis_variable_str(t) > 0) {
        char *s = NULL;
        hid_t mt = H5Tcopy(H5T_C_S1);
        if (mt < 0 || H5Tset_size(mt, H5T_VARIABLE) < 0 || H5Tset_cset(mt, H5Tget_cset(t)) < 0 ||
            H5Dread(d, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, &s) < 0)
            rc = H5M_BAD(h, "cannot read dataset '%s'", name);
        else snprintf(buf, cap, "%s", s ? s : "");
        if (s) H5free_memory(s);
        if (mt >= 0) H5Tclose(mt);
    } else {
        char tmp[64] = {0};
        size_t sz = H5Tget_size(t);
        if (sz == 0 || sz >= sizeof tmp || H5Dread(d, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, tmp) < 0)
            rc = H5M_BAD(h, "cannot read dataset '%s' (a short string expected)", name);
        else snprintf(buf, cap, "%s", tmp);
    }
    *present = rc == PL_OK;
    if (t >= 0) H5Tclose(t);
    if (d >= 0) H5Dclose(d);
    return rc;
}

/* SciPy's format: CSR or CSC from anndata's encoding-type, h5sparse's
 * h5sparse_format or a format attribute/dataset; *which = 0 when none says. */
static int scipy_format(h5m_file *h, int *which, char *said, size_t cap)
{
    static const char *keys[] = {"encoding-type", "h5sparse_format", "format"};
    char v[64];
    *which = 0;
    for (int k = 0; k < 3; k++) {
        int p = 0;
        PL_CALL(str_key(h, keys[k], k == 2, v, sizeof v, &p));
        if (!p) continue;
        if (!strcmp(v, "csr") || !strcmp(v, "csr_matrix")) *which = PL_H5M_LAYOUT_CSR;
        else if (!strcmp(v, "csc") || !strcmp(v, "csc_matrix")) *which = PL_H5M_LAYOUT_CSC;
        else return H5M_BAD(h, "'%s' = '%.40s' is not a sparse format this program reads (csr, csc)", keys[k], v);
        snprintf(said, cap, "'%s' = '%s'", keys[k], v);
        return PL_OK;
    }
    return PL_OK;
}

static int detect(h5m_file *h, int *layout)
{
    int p = 0, a = 0, b = 0, c = 0, d = 0;
    PL_CALL(h5m_attr_exists(h, "pjds_matrix_schema", &p));
    if (p) return *layout = PL_H5M_LAYOUT_PJDS, PL_OK;
    PL_CALL(has_link(h, "jc", &a));
    PL_CALL(has_link(h, "ir", &b));
    if (a && b) {
        PL_CALL(h5m_attr_exists(h, "MATLAB_class", &p));
        return *layout = p ? PL_H5M_LAYOUT_MATLAB : PL_H5M_LAYOUT_PETSC, PL_OK;
    }
    PL_CALL(has_link(h, "indptr", &a));
    PL_CALL(has_link(h, "indices", &b));
    if (a && b) {
        char said[128];
        PL_CALL(scipy_format(h, &p, said, sizeof said));
        return *layout = p ? p : PL_H5M_LAYOUT_CSR, PL_OK;
    }
    PL_CALL(has_link(h, "row", &a));
    PL_CALL(has_link(h, "col", &b));
    if (a && b) return *layout = PL_H5M_LAYOUT_COO, PL_OK;
    PL_CALL(has_link(h, "row_ptr", &a));
    PL_CALL(has_link(h, "col_idx", &b));
    PL_CALL(has_link(h, "values", &c));
    PL_CALL(h5m_attr_exists(h, "rows", &d));
    if (a || b || c || d) return *layout = PL_H5M_LAYOUT_PJDS, PL_OK; /* its messages say what is missing */
    return unrecognised(h);
}

/* The shape (rows, cols) from attribute shape / h5sparse_shape or a dataset shape. */
static int read_shape(h5m_file *h, int required, int64_t *rows, int64_t *cols, int *found)
{
    static const char *attrs[] = {"shape", "h5sparse_shape"};
    int64_t v[2];
    int n = 0, p = 0;
    *found = 0;
    for (int k = 0; k < 2 && !p; k++) {
        PL_CALL(h5m_attr_i64_array(h, attrs[k], v, 2, &n, &p));
        if (p && n != 2) return H5M_BAD(h, "attribute '%s' must hold 2 values (rows, cols)", attrs[k]);
    }
    if (!p) {
        PL_CALL(has_link(h, "shape", &p));
        if (p) {
            hid_t d = H5I_INVALID_HID;
            int rc = h5m_dset_open(h, "shape", H5T_INTEGER, "integers", 2, "rows, cols", &d, NULL);
            if (!rc) rc = h5m_dset_read(h, d, "shape", H5T_NATIVE_INT64, 0, 2, v);
            if (d >= 0) H5Dclose(d);
            PL_CALL(rc);
        }
    }
    if (!p) {
        if (required) return H5M_BAD(h, "missing the shape (attribute 'shape' or 'h5sparse_shape', or dataset 'shape')");
        return PL_OK;
    }
    const int64_t lim = (int64_t)1 << 62;
    if (v[0] < 1 || v[0] >= lim || v[1] < 1 || v[1] >= lim)
        return H5M_BAD(h, "shape (%lld, %lld) out of range", (long long)v[0], (long long)v[1]);
    *rows = v[0];
    *cols = v[1];
    *found = 1;
    return PL_OK;
}

static int check_square(h5m_file *h)
{
    if (h->info.rows != h->info.cols)
        return H5M_BAD(h, "matrix is not square (%lld x %lld)", (long long)h->info.rows, (long long)h->info.cols);
    return PL_OK;
}

/* The values dataset: real floating point; a complex (compound) one is refused. */
static int open_values(h5m_file *h, const char *name, int64_t len, const char *len_text)
{
    int yes = 0;
    PL_CALL(has_link(h, name, &yes));
    if (yes) {
        hid_t d = H5Dopen2(h->g, name, H5P_DEFAULT), t = d >= 0 ? H5Dget_type(d) : -1;
        int cplx = t >= 0 && H5Tget_class(t) == H5T_COMPOUND;
        if (t >= 0) H5Tclose(t);
        if (d >= 0) H5Dclose(d);
        if (cplx)
            return H5M_BAD(h, "dataset '%s' is complex (a compound of real and imaginary parts): complex matrices "
                              "are not supported",
                           name);
    }
    h->n_val = name;
    return h5m_dset_open(h, name, H5T_FLOAT, "a floating-point type", len, len_text, &h->d_val, NULL);
}

/* jc, ir, data + MATLAB_sparse: compressed column. */
static int open_matlab(h5m_file *h)
{
    pl_h5m_info *in = &h->info;
    char cls[64];
    int p = 0;
    PL_CALL(h5m_attr_str(h, "MATLAB_class", 0, cls, sizeof cls, &p));
    if (p && strcmp(cls, "double"))
        return H5M_BAD(h, "MATLAB_class = '%.40s': only double sparse matrices are supported", cls);
    PL_CALL(h5m_attr_i64(h, "MATLAB_sparse", 1, &in->rows, NULL));
    h->kind = H5M_KIND_CSC;
    h->n_rp = "jc";
    h->n_ci = "ir";
    int64_t njc = 0;
    PL_CALL(h5m_dset_open(h, "jc", H5T_INTEGER, "an integer type", -1, NULL, &h->d_rp, NULL));
    PL_CALL(h5m_dset_len(h, h->d_rp, "jc", &njc));
    PL_CALL(h5m_dset_open(h, "ir", H5T_INTEGER, "an integer type", -1, NULL, &h->d_ci, &in->col_bytes));
    PL_CALL(h5m_dset_len(h, h->d_ci, "ir", &in->nnz_stored));
    PL_CALL(open_values(h, "data", in->nnz_stored, "the length of 'ir'"));
    in->cols = njc - 1;
    const int64_t lim = (int64_t)1 << 62;
    if (in->rows < 1 || in->rows >= lim)
        return H5M_BAD(h, "attribute 'MATLAB_sparse' = %lld out of range", (long long)in->rows);
    if (in->cols < 1) return H5M_BAD(h, "dataset 'jc' has %lld elements, expected columns + 1 >= 2", (long long)njc);
    return check_square(h);
}

/* data, indices, indptr + shape: CSR or CSC (want: the layout asked for, or
 * AUTO). */
static int open_scipy(h5m_file *h, int want)
{
    pl_h5m_info *in = &h->info;
    int fmt = 0, found = 0;
    char said[128] = "";
    PL_CALL(scipy_format(h, &fmt, said, sizeof said));
    if (want != PL_H5M_LAYOUT_AUTO && fmt && fmt != want)
        return H5M_BAD(h, "layout = %s was asked for, but %s", pl_h5m_layout_name(want), said);
    in->layout = want != PL_H5M_LAYOUT_AUTO ? want : fmt ? fmt : PL_H5M_LAYOUT_CSR;
    PL_CALL(read_shape(h, 1, &in->rows, &in->cols, &found));
    PL_CALL(check_square(h));
    h->kind = in->layout == PL_H5M_LAYOUT_CSC ? H5M_KIND_CSC : H5M_KIND_CSR;
    h->n_rp = "indptr";
    h->n_ci = "indices";
    const int64_t np = h->kind == H5M_KIND_CSC ? in->cols : in->rows;
    PL_CALL(h5m_dset_open(h, "indices", H5T_INTEGER, "an integer type", -1, NULL, &h->d_ci, &in->col_bytes));
    PL_CALL(h5m_dset_len(h, h->d_ci, "indices", &in->nnz_stored));
    PL_CALL(open_values(h, "data", in->nnz_stored, "the length of 'indices'"));
    return h5m_dset_open(h, "indptr", H5T_INTEGER, "an integer type", np + 1,
                         h->kind == H5M_KIND_CSC ? "columns + 1" : "rows + 1", &h->d_rp, NULL);
}

int h5m_coo_range(h5m_file *h, int64_t *lo, int64_t *hi);

/* row, col, val|data (+ shape, index_base): COO. */
static int open_coo(h5m_file *h)
{
    pl_h5m_info *in = &h->info;
    int p = 0, found = 0;
    h->kind = H5M_KIND_COO;
    h->n_rp = "row";
    h->n_ci = "col";
    PL_CALL(h5m_dset_open(h, "row", H5T_INTEGER, "an integer type", -1, NULL, &h->d_rp, NULL));
    PL_CALL(h5m_dset_len(h, h->d_rp, "row", &in->nnz_stored));
    PL_CALL(h5m_dset_open(h, "col", H5T_INTEGER, "an integer type", in->nnz_stored, "the length of 'row'", &h->d_ci,
                          &in->col_bytes));
    PL_CALL(has_link(h, "val", &p));
    PL_CALL(open_values(h, p ? "val" : "data", in->nnz_stored, "the length of 'row'"));
    PL_CALL(read_shape(h, 0, &in->rows, &in->cols, &found));
    int64_t base = h->opts.index_base;
    if (base < 0) {
        PL_CALL(h5m_attr_i64(h, "index_base", 0, &base, &p));
        if (p && base != 0 && base != 1)
            return H5M_BAD(h, "attribute 'index_base' = %lld, must be 0 or 1", (long long)base);
        if (!p) base = -1;
    }
    if (base < 0 || !found) { /* the index range decides */
        int64_t lo = 0, hi = -1;
        PL_CALL(h5m_coo_range(h, &lo, &hi));
        if (base < 0) {
            if (lo == 0) base = 0;
            else if (found && hi == (in->rows > in->cols ? in->rows : in->cols)) base = 1;
            else if (!found && lo == 1) base = 1;
            else
                return H5M_BAD(h, "cannot tell whether the indices are 0- or 1-based (they span [%lld, %lld]); state "
                                  "it with attribute 'index_base' or [matrix] index_base",
                               (long long)lo, (long long)hi);
        }
        if (!found) in->rows = in->cols = hi + 1 - base;
    }
    h->base = (int)base;
    in->index_base = (int)base;
    if (in->rows < 1) return H5M_BAD(h, "the matrix has no entries and no shape");
    return check_square(h);
}

int h5m_open_layout(h5m_file *h)
{
    int layout = h->opts.layout;
    h->info.symmetric = 0;
    if (layout < PL_H5M_LAYOUT_AUTO || layout >= PL_H5M_LAYOUT_COUNT)
        return PL_ERROR(PL_ERR_ARG, "unknown matrix layout %d", layout);
    if (layout == PL_H5M_LAYOUT_AUTO) PL_CALL(detect(h, &layout));
    h->info.layout = layout;
    switch (layout) {
    case PL_H5M_LAYOUT_PJDS: return h5m_open_pjds(h);
    case PL_H5M_LAYOUT_PETSC:
    case PL_H5M_LAYOUT_MATLAB: return open_matlab(h);
    case PL_H5M_LAYOUT_CSR:
    case PL_H5M_LAYOUT_CSC: return open_scipy(h, h->opts.layout == PL_H5M_LAYOUT_AUTO ? PL_H5M_LAYOUT_AUTO : layout);
    default: return open_coo(h);
    }
}
