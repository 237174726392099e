/* pl_h5m_util.c — the HDF5 matrix reader's tools (pl_h5m_impl.h): HDF5
 * error printing off, one-line messages naming file and group, checked
 * attribute and dataset access, agreement of the ranks on an error, the
 * ranks' row ranges and the routing of (row, col, value) items. */
#define _POSIX_C_SOURCE 200809L
#include <hdf5.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pl_error.h"
#include "pl_h5m_impl.h"

int64_t h5m_g_block = (int64_t)1 << 20;

/* ---- HDF5 error printing off/on -------------------------------------- */


void h5m_quiet_on(h5m_quiet *q)
{
    q->saved = H5Eget_auto2(H5E_DEFAULT, &q->fn, &q->data) >= 0;
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
}
void h5m_quiet_off(h5m_quiet *q)
{
    if (q->saved) H5Eset_auto2(H5E_DEFAULT, q->fn, q->data);
}

/* ---- an open matrix group --------------------------------------------- */


void h5m_init(h5m_file *h, const char *file, const char *group, const pl_h5m_opts *opts)
{
    memset(h, 0, sizeof *h);
    h->fname = file ? file : "";
    h->gname = (group && group[0]) ? group : "/";
    h->f = h->g = h->d_rp = h->d_ci = h->d_val = H5I_INVALID_HID;
    h->n_rp = "row_ptr";
    h->n_ci = "col_idx";
    h->n_val = "values";
    h->opts.layout = opts ? opts->layout : PL_H5M_LAYOUT_AUTO;
    h->opts.index_base = opts ? opts->index_base : -1;
}

void h5m_close(h5m_file *h)
{
    if (h->d_val >= 0) H5Dclose(h->d_val);
    if (h->d_ci >= 0) H5Dclose(h->d_ci);
    if (h->d_rp >= 0) H5Dclose(h->d_rp);
    if (h->g >= 0) H5Gclose(h->g);
    if (h->f >= 0) H5Fclose(h->f);
    h->f = h->g = h->d_rp = h->d_ci = h->d_val = H5I_INVALID_HID;
}

/* Record "matrix file 'F' group 'G': <what>" as PL_ERR_INPUT. */
int h5m_bad_at(const h5m_file *h, int line, const char *func, const char *fmt, ...)
{
    char what[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return pl_error_set(PL_ERR_INPUT, __FILE__, line, func, "matrix file '%s' group '%s': %s", h->fname,
                        h->gname, what);
}

/* ---- attributes -------------------------------------------------------- */
int h5m_attr_exists(h5m_file *h, const char *name, int *present)
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

int h5m_attr_i64(h5m_file *h, const char *name, int required, int64_t *v, int *present)
{
    int p = 0;
    PL_CALL(h5m_attr_exists(h, name, &p));
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

int h5m_attr_i64_array(h5m_file *h, const char *name, int64_t *v, int cap, int *n, int *present)
{
    PL_CALL(h5m_attr_exists(h, name, present));
    if (!*present) return PL_OK;
    hid_t a = H5Aopen(h->g, name, H5P_DEFAULT);
    if (a < 0) return H5M_BAD(h, "cannot open attribute '%s'", name);
    hid_t t = H5Aget_type(a), s = H5Aget_space(a);
    H5T_class_t c = t >= 0 ? H5Tget_class(t) : H5T_NO_CLASS;
    hssize_t np = s >= 0 ? H5Sget_simple_extent_npoints(s) : -1;
    int rc = PL_OK;
    if (c != H5T_INTEGER) rc = H5M_BAD(h, "attribute '%s' has the wrong type: must be integers", name);
    else if (np < 1 || np > cap)
        rc = H5M_BAD(h, "attribute '%s' holds %lld values, expected 1 to %d", name, (long long)np, cap);
    else if (H5Aread(a, H5T_NATIVE_INT64, v) < 0) rc = H5M_BAD(h, "cannot read attribute '%s'", name);
    else *n = (int)np;
    if (s >= 0) H5Sclose(s);
    if (t >= 0) H5Tclose(t);
    H5Aclose(a);
    return rc;
}

/* String attribute (fixed or variable length) into buf[cap], truncated. */
int h5m_attr_str(h5m_file *h, const char *name, int required, char *buf, size_t cap, int *present)
{
    int p = 0;
    buf[0] = 0;
    PL_CALL(h5m_attr_exists(h, name, &p));
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
int h5m_dset_open(h5m_file *h, const char *name, H5T_class_t want, const char *want_text, int64_t want_len,
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
    if (want_len < 0) return PL_OK;
    if (dim != (hsize_t)want_len)
        return H5M_BAD(h, "dataset '%s' has %llu elements, expected %lld (%s)", name, (unsigned long long)dim,
                       (long long)want_len, len_text);
    return PL_OK;
}

int h5m_dset_len(h5m_file *h, hid_t d, const char *name, int64_t *len)
{
    hid_t s = H5Dget_space(d);
    hsize_t dim = 0;
    int ok = s >= 0 && H5Sget_simple_extent_ndims(s) == 1 && H5Sget_simple_extent_dims(s, &dim, NULL) == 1;
    if (s >= 0) H5Sclose(s);
    if (!ok) return H5M_BAD(h, "cannot read the length of dataset '%s'", name);
    *len = (int64_t)dim;
    return PL_OK;
}

/* Read n elements from offset off of a 1-D dataset. */
int h5m_dset_read(h5m_file *h, hid_t d, const char *name, hid_t memtype, int64_t off, int64_t n, void *buf)
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

/* ---- MPI helpers ---------------------------------------------------------- */
/* Agree on the outcome of a local phase (see file comment).  Collective. */
int h5m_agree(int rc, MPI_Comm comm)
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
    if (rank == first) return rc;
    /* every rank takes the lowest failing rank's code and message (its own
     * error, if any, was found later in the data or is the same) */
    return pl_error_set(m.code, __FILE__, __LINE__, __func__, "%s", m.msg);
}

/* The ranks' row ranges: nonempty ones sorted by start, checked disjoint. */


void h5m_owners_free(h5m_owners *o)
{
    free(o->r0);
    free(o->r1);
    free(o->rank);
    memset(o, 0, sizeof *o);
}

int h5m_owners_build(int64_t r0, int64_t r1, int64_t N, MPI_Comm comm, h5m_owners *o)
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
        h5m_owners_free(o);
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
        h5m_owners_free(o);
        return PL_ERROR(PL_ERR_ARG, "row ranges of the ranks are invalid or overlap (N = %lld)", (long long)N);
    }
    o->lo = o->n ? o->r0[0] : N;
    o->cover = o->n > 0 && o->r0[0] == 0 && o->r1[o->n - 1] == N;
    for (int k = 1; k < o->n && o->cover; k++)
        if (o->r0[k] != o->r1[k - 1]) o->cover = 0;
    return PL_OK;
}

/* Rank owning row r, -1 if none. */
int h5m_owner_of(const h5m_owners *o, int64_t r)
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

/* ---- the streamed scan of lower storage ------------------------------------------- */


/* One routing round of (row, col, value) items: agree on the local outcome
 * rc, exchange the per-rank counts, lay out and (re)allocate the receive
 * buffer *rbuf (rdsp = exclusive prefix of rcnt, *nrecv their sum), agree
 * again (the buffer is allocated before the exchange) and exchange the
 * items.  Collective; every rank returns the same code. */
int h5m_route(int rc, const h5m_item *sbuf, const int *scnt, const int *sdsp, int *rcnt, int *rdsp,
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
