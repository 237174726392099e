/* pl_h5mwrite.c — the distributed symmetry check and the export of a
 * distributed matrix in the pjds schema (pl_h5matrix.h).
 *  - Asymmetry: each off-diagonal (i, j, v) goes as (j, i, v) to the owner of
 *    row j, which compares with its a_ji (binary search, rows are sorted) and
 *    marks it matched; entries never matched face an implicit zero.
 *  - Export: rank 0 writes contiguous datasets; ranks 1.. send row_ptr,
 *    col and val in pieces of at most B entries (blocking MPI_Send matched by
 *    rank 0's MPI_Recv in rank order); temporary name, moved into place at
 *    the end (pl_place_file: never over a file that appeared meanwhile
 *    unless overwrite). */
#define _POSIX_C_SOURCE 200809L
#include <hdf5.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pl_error.h"
#include "pl_h5m_impl.h"
#include "pl_place.h"

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
    PL_CALL(h5m_owners_build(a->row0, a->row0 + a->nrows, N, comm, &o));
    if (!o.cover) {
        h5m_owners_free(&o);
        return PL_ERROR(PL_ERR_ARG, "pl_h5m_asymmetry: the row blocks do not tile [0, %lld)", (long long)N);
    }
    double amax = 0, gmax = 0;
    for (int64_t k = 0; k < nnz; k++) amax = fmax(amax, fabs(a->val[k]));
    asym_best best = {0.0, -1, -1};
    unsigned char *matched = calloc((size_t)nnz + 1, 1);
    int *scnt = calloc((size_t)size, sizeof(int)), *sdsp = calloc((size_t)size, sizeof(int));
    int *rcnt = calloc((size_t)size, sizeof(int)), *rdsp = calloc((size_t)size, sizeof(int));
    int *fill = calloc((size_t)size, sizeof(int));
    int64_t B = h5m_g_block, nb = (nnz + B - 1) / B, nrounds = 0;
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
                int oj = h5m_owner_of(&o, j);
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
    h5m_owners_free(&o);
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
    const int64_t B = h5m_g_block;
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

/* Ranks 1..: send the block a to rank 0 in pieces (row_ptr, col, val). */
static int send_block(const pl_csr *a, MPI_Comm comm)
{
    const int64_t B = h5m_g_block;
    for (int part = 0; part < 3; part++) {
        int64_t n_all = part == 0 ? a->nrows : pl_csr_nnz(a);
        for (int64_t s = 0; s < n_all; s += B) {
            int64_t n = n_all - s < B ? n_all - s : B;
            const void *src = part == 0 ? (const void *)(a->row_ptr + s)
                              : part == 1 ? (const void *)(a->col + s) : (const void *)(a->val + s);
            if (MPI_Send(src, (int)n, part == 2 ? MPI_DOUBLE : MPI_INT64_T, 0, 100 + part, comm) != MPI_SUCCESS)
                return PL_ERROR(PL_ERR_MPI, "MPI_Send of a matrix piece failed");
        }
    }
    return PL_OK;
}

/* Rank 0: every rank's block (all: row0, nrows, nnz per rank) into w's
 * datasets, and the final pointer entry.  After an error the pieces are
 * still received (not written) so the senders finish. */
static int write_blocks(h5m_writer *w, const pl_csr *a, const int64_t *all, int size, MPI_Comm comm, void *buf,
                        int rc)
{
    int64_t off = 0;
    for (int p = 0; p < size; p++) {
        int r2 = writer_block(w, p, a, all[3 * p], all[3 * p + 1], all[3 * p + 2], off, comm, buf, rc);
        rc = r2;
        if (r2 == PL_ERR_MPI) break; /* cannot stay in step with the senders */
        off += all[3 * p + 2];
    }
    if (!rc) rc = w_range(w->d_rp, "row_ptr", H5T_NATIVE_INT64, a->nrows_global, 1, &off);
    return rc;
}

/* Row blocks (row0, nrows, nnz) of every rank, checked consecutive and
 * covering [0, N); *total = nnz of all. */
static int gather_blocks(const pl_csr *a, MPI_Comm comm, int size, int64_t **all_out, int64_t *total)
{
    int64_t mine[3] = {a->row0, a->nrows, pl_csr_nnz(a)}, *all = NULL, next = 0;
    PL_MALLOC(all, 3 * (size_t)size);
    if (MPI_Allgather(mine, 3, MPI_INT64_T, all, 3, MPI_INT64_T, comm) != MPI_SUCCESS) {
        free(all);
        return PL_ERROR(PL_ERR_MPI, "MPI_Allgather failed");
    }
    int rc = PL_OK;
    *total = 0;
    for (int p = 0; p < size && !rc; p++) {
        if (all[3 * p] != next || all[3 * p + 1] < 0)
            rc = PL_ERROR(PL_ERR_ARG, "pl_h5m_write: row blocks are not consecutive in rank order");
        next += all[3 * p + 1];
        *total += all[3 * p + 2];
    }
    if (!rc && next != a->nrows_global)
        rc = PL_ERROR(PL_ERR_ARG, "pl_h5m_write: row blocks cover %lld of %lld rows", (long long)next,
                      (long long)a->nrows_global);
    if (rc) free(all);
    else *all_out = all;
    return rc;
}

/* The PETSc/MATLAB names in the group: links to the arrays (symmetric) or
 * the datasets of the transpose's blocks (at, blocks all_t), and the
 * attribute MATLAB_sparse = N.  Rank 0. */
static int write_view(h5m_writer *w, const pl_csr *a, const pl_csr *at, const int64_t *all_t, int size,
                      MPI_Comm comm, void *buf, int rc)
{
    const int64_t N = a->nrows_global;
    if (!at) {
        if (!rc && (H5Lcreate_hard(w->g, "row_ptr", w->g, "jc", H5P_DEFAULT, H5P_DEFAULT) < 0 ||
                    H5Lcreate_hard(w->g, "col_idx", w->g, "ir", H5P_DEFAULT, H5P_DEFAULT) < 0 ||
                    H5Lcreate_hard(w->g, "values", w->g, "data", H5P_DEFAULT, H5P_DEFAULT) < 0))
            rc = PL_ERROR(PL_ERR_HDF5, "cannot create the links jc, ir, data");
    } else {
        int64_t total = 0;
        for (int p = 0; p < size; p++) total += all_t[3 * p + 2];
        h5m_writer v = {w->f, w->g, H5I_INVALID_HID, H5I_INVALID_HID, H5I_INVALID_HID};
        if (!rc) rc = w_dset(w->g, "jc", H5T_STD_I64LE, N + 1, &v.d_rp);
        if (!rc) rc = w_dset(w->g, "ir", N <= INT32_MAX ? H5T_STD_I32LE : H5T_STD_I64LE, total, &v.d_ci);
        if (!rc) rc = w_dset(w->g, "data", H5T_IEEE_F64LE, total, &v.d_val);
        rc = write_blocks(&v, at, all_t, size, comm, buf, rc);
        if (v.d_rp >= 0) H5Dclose(v.d_rp);
        if (v.d_ci >= 0) H5Dclose(v.d_ci);
        if (v.d_val >= 0) H5Dclose(v.d_val);
    }
    if (!rc) rc = w_attr_i64(w->g, "MATLAB_sparse", N);
    return rc;
}

int pl_h5m_write(const char *file, const char *group, const pl_csr *a, int symmetric, const char *name,
                 const char *source, MPI_Comm comm, int overwrite)
{
    return pl_h5m_write_ex(file, group, a, symmetric, name, source, comm, overwrite, PL_H5M_VIEW_NONE);
}

int pl_h5m_write_ex(const char *file, const char *group, const pl_csr *a, int symmetric, const char *name,
                    const char *source, MPI_Comm comm, int overwrite, int view)
{
    int rank, size, rc = PL_OK;
    PL_CHECK(MPI_Comm_rank(comm, &rank) == MPI_SUCCESS, PL_ERR_MPI, "MPI_Comm_rank failed");
    PL_CHECK(MPI_Comm_size(comm, &size) == MPI_SUCCESS, PL_ERR_MPI, "MPI_Comm_size failed");
    const int64_t N = a->nrows_global;
    int64_t *all = NULL, *all_t = NULL, total = 0, total_t = 0;
    pl_csr at;
    memset(&at, 0, sizeof at);
    PL_CALL(gather_blocks(a, comm, size, &all, &total));
    if (view == PL_H5M_VIEW_CSC) {
        rc = h5m_agree(pl_h5m_transpose(a, comm, &at), comm);
        if (!rc) rc = gather_blocks(&at, comm, size, &all_t, &total_t);
        if (rc) {
            free(all);
            pl_csr_destroy(&at);
            return rc;
        }
    }

    h5m_quiet q;
    h5m_writer w = {H5I_INVALID_HID, H5I_INVALID_HID, H5I_INVALID_HID, H5I_INVALID_HID, H5I_INVALID_HID};
    char tmp[4200];
    void *buf = NULL;
    h5m_quiet_on(&q);
    if (rank == 0) {
        struct stat st;
        snprintf(tmp, sizeof tmp, "%s.part-%ld", file, (long)getpid());
        if (strlen(file) > 4000) rc = PL_ERROR(PL_ERR_INPUT, "output file name too long");
        else if (stat(file, &st) == 0 && !overwrite)
            rc = PL_ERROR(PL_ERR_INPUT, "output file '%s' exists (use --overwrite to replace it)", file);
        else if (!(buf = malloc(sizeof(int64_t) * (size_t)h5m_g_block)))
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
        rc = write_blocks(&w, a, all, size, comm, buf, rc);
        if (view != PL_H5M_VIEW_NONE && rc != PL_ERR_MPI)
            rc = write_view(&w, a, view == PL_H5M_VIEW_CSC ? &at : NULL, all_t, size, comm, buf, rc);
        writer_close(&w);
        if (!rc && H5Fis_hdf5(tmp) <= 0) rc = PL_ERROR(PL_ERR_HDF5, "written file '%s' is not readable", tmp);
        int kept = 0; /* refused (PL_ERR_INPUT, a file appeared meanwhile): keep the result */
        if (!rc) {
            rc = pl_place_file(tmp, file, overwrite);
            kept = rc == PL_ERR_INPUT;
        }
        if (rc && !kept) unlink(tmp);
    } else {
        rc = send_block(a, comm);
        if (!rc && view == PL_H5M_VIEW_CSC) rc = send_block(&at, comm);
    }
    rc = h5m_agree(rc, comm);
out:
    writer_close(&w);
    free(buf);
    free(all);
    free(all_t);
    pl_csr_destroy(&at);
    h5m_quiet_off(&q);
    return rc;
}

/* The transpose's rows of this rank's range: each entry (i, j, v) goes as
 * (j, i, v) to the owner of row j, in rounds of at most B entries; the
 * received items are gathered (24 bytes each) and sorted into CSR. */
int pl_h5m_transpose(const pl_csr *a, MPI_Comm comm, pl_csr *at)
{
    int size, rc = PL_OK;
    memset(at, 0, sizeof *at);
    PL_CHECK(MPI_Comm_size(comm, &size) == MPI_SUCCESS, PL_ERR_MPI, "MPI_Comm_size failed");
    const int64_t nnz = pl_csr_nnz(a), B = h5m_g_block;
    h5m_owners o;
    PL_CALL(h5m_owners_build(a->row0, a->row0 + a->nrows, a->nrows_global, comm, &o));
    int *scnt = calloc((size_t)size, sizeof(int)), *sdsp = calloc((size_t)size, sizeof(int));
    int *rcnt = calloc((size_t)size, sizeof(int)), *rdsp = calloc((size_t)size, sizeof(int));
    int *fill = calloc((size_t)size, sizeof(int));
    h5m_item *sbuf = malloc(sizeof(h5m_item) * (size_t)(B < nnz ? B : nnz + 1)), *rbuf = NULL, *got = NULL;
    int64_t nb = (nnz + B - 1) / B, nrounds = 0, ngot = 0, r = 0;
    MPI_Datatype itype = MPI_DATATYPE_NULL;
    if (!scnt || !sdsp || !rcnt || !rdsp || !fill || !sbuf) rc = PL_ERROR(PL_ERR_MEM, "out of host memory");
    if (!rc && !o.cover) rc = PL_ERROR(PL_ERR_ARG, "pl_h5m_transpose: the row blocks do not tile the rows");
    rc = h5m_agree(rc, comm);
    if (rc) goto out;
    if (MPI_Allreduce(&nb, &nrounds, 1, MPI_INT64_T, MPI_MAX, comm) != MPI_SUCCESS ||
        MPI_Type_contiguous((int)sizeof(h5m_item), MPI_BYTE, &itype) != MPI_SUCCESS ||
        MPI_Type_commit(&itype) != MPI_SUCCESS) {
        rc = PL_ERROR(PL_ERR_MPI, "MPI setup of the transpose failed");
        goto out;
    }
    for (int64_t round = 0; round < nrounds; round++) {
        const int64_t e0 = round * B < nnz ? round * B : nnz, e1 = e0 + B < nnz ? e0 + B : nnz;
        memset(scnt, 0, sizeof(int) * (size_t)size);
        int64_t rr = r;
        for (int64_t k = e0; k < e1; k++) scnt[h5m_owner_of(&o, a->col[k])]++;
        for (int p = 0, t = 0; p < size; p++) {
            sdsp[p] = fill[p] = t;
            t += scnt[p];
        }
        for (int64_t k = e0; k < e1; k++) {
            while (a->row_ptr[rr + 1] <= k) rr++;
            sbuf[fill[h5m_owner_of(&o, a->col[k])]++] = (h5m_item){a->col[k], a->row0 + rr, a->val[k]};
        }
        r = rr;
        int64_t nrecv = 0;
        rc = h5m_route(rc, sbuf, scnt, sdsp, rcnt, rdsp, &rbuf, &nrecv, itype, comm);
        if (rc) goto out;
        h5m_item *t = realloc(got, sizeof(h5m_item) * (size_t)(ngot + nrecv + 1));
        if (!t) {
            rc = PL_ERROR(PL_ERR_MEM, "out of host memory for the transpose");
            goto out;
        }
        got = t;
        memcpy(got + ngot, rbuf, sizeof(h5m_item) * (size_t)nrecv);
        ngot += nrecv;
    }
    rc = pl_csr_alloc(at, a->nrows_global, a->row0, a->nrows, ngot);
    if (rc) goto out;
    for (int64_t k = 0; k < ngot; k++) at->row_ptr[got[k].r - a->row0 + 1]++;
    for (int64_t i = 0; i < a->nrows; i++) at->row_ptr[i + 1] += at->row_ptr[i];
    for (int64_t k = 0; k < ngot; k++) {
        const int64_t i = got[k].r - a->row0, p = at->row_ptr[i]++;
        at->col[p] = got[k].c;
        at->val[p] = got[k].v;
    }
    for (int64_t i = a->nrows; i > 0; i--) at->row_ptr[i] = at->row_ptr[i - 1];
    at->row_ptr[0] = 0;
    int64_t maxlen = 0;
    for (int64_t i = 0; i < a->nrows; i++)
        if (at->row_ptr[i + 1] - at->row_ptr[i] > maxlen) maxlen = at->row_ptr[i + 1] - at->row_ptr[i];
    pl_csr_pair *tmp = malloc(sizeof(pl_csr_pair) * (size_t)(maxlen + 1));
    if (!tmp) {
        rc = PL_ERROR(PL_ERR_MEM, "out of host memory for the transpose");
        goto out;
    }
    for (int64_t i = 0; i < a->nrows; i++) /* the rounds interleave the sources: sort each row */
        pl_csr_sort_row(at->col + at->row_ptr[i], at->val + at->row_ptr[i], at->row_ptr[i + 1] - at->row_ptr[i], tmp);
    free(tmp);
out:
    if (rc) pl_csr_destroy(at);
    if (itype != MPI_DATATYPE_NULL) MPI_Type_free(&itype);
    h5m_owners_free(&o);
    free(scnt);
    free(sdsp);
    free(rcnt);
    free(rdsp);
    free(fill);
    free(sbuf);
    free(rbuf);
    free(got);
    return rc;
}
