/* pl_h5coo.c — COO triples (row, col, val) in HDF5 (pl_h5layout.c finds
 * them): the index range, from which the index base and the size are
 * detected when the file does not state them, and the streamed scan that
 * gives each rank its rows.
 *  - Range: a pass over row and col in blocks of at most B entries (two
 *    int64 buffers of B); the result is kept per process for the file
 *    (path, group, inode, size, modification time), so the opens of one
 *    import scan once.
 *  - Scan: rank p reads entries [nnz p / P, nnz (p+1) / P) in blocks of at
 *    most B; each entry (r, c, v), less the base, is validated and sent to
 *    the owner of row r (counting mode: (r, 1)); one MPI_Alltoallv per
 *    block, as many rounds on every rank as on the busiest.  Memory per
 *    rank: one block (row, col, val: 24 bytes an entry), its send and
 *    receive items (24 bytes each) and its own rows.  Every rank reads
 *    nnz / P entries whatever rows it owns: the file is read once in all
 *    per scan, and an import runs two scans (count, then place). */
#define _POSIX_C_SOURCE 200809L
#include <hdf5.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "pl_error.h"
#include "pl_h5m_impl.h"

int h5m_coo_range(h5m_file *h, int64_t *lo, int64_t *hi);

static struct {
    char file[1024], group[256];
    dev_t dev;
    ino_t ino;
    off_t size;
    struct timespec mtime;
    int64_t lo, hi;
    int valid;
} g_range;

static int range_cached(const h5m_file *h, const struct stat *st)
{
    return g_range.valid && !strcmp(g_range.file, h->fname) && !strcmp(g_range.group, h->gname) &&
           g_range.dev == st->st_dev && g_range.ino == st->st_ino && g_range.size == st->st_size &&
           g_range.mtime.tv_sec == st->st_mtim.tv_sec && g_range.mtime.tv_nsec == st->st_mtim.tv_nsec;
}

int h5m_coo_range(h5m_file *h, int64_t *lo, int64_t *hi)
{
    struct stat st;
    int have_st = stat(h->fname, &st) == 0;
    if (have_st && range_cached(h, &st)) {
        *lo = g_range.lo;
        *hi = g_range.hi;
        return PL_OK;
    }
    const int64_t nnz = h->info.nnz_stored, B = h5m_g_block;
    int64_t *buf = malloc(sizeof(int64_t) * (size_t)(B < nnz ? B : nnz + 1));
    PL_CHECK(buf, PL_ERR_MEM, "out of host memory");
    int64_t a = INT64_MAX, b = INT64_MIN;
    int rc = PL_OK;
    for (int64_t e = 0; e < nnz && !rc; e += B) {
        const int64_t n = nnz - e < B ? nnz - e : B;
        for (int k = 0; k < 2 && !rc; k++) {
            rc = h5m_dset_read(h, k ? h->d_ci : h->d_rp, k ? h->n_ci : h->n_rp, H5T_NATIVE_INT64, e, n, buf);
            for (int64_t i = 0; i < n && !rc; i++) {
                if (buf[i] < a) a = buf[i];
                if (buf[i] > b) b = buf[i];
            }
        }
    }
    free(buf);
    PL_CALL(rc);
    if (nnz == 0) a = b = 0;
    if (a < 0) return H5M_BAD(h, "a row or column index is negative (%lld)", (long long)a);
    if (b >= ((int64_t)1 << 62)) return H5M_BAD(h, "a row or column index is too large (%lld)", (long long)b);
    *lo = a;
    *hi = b;
    if (have_st && strlen(h->fname) < sizeof g_range.file && strlen(h->gname) < sizeof g_range.group) {
        snprintf(g_range.file, sizeof g_range.file, "%s", h->fname);
        snprintf(g_range.group, sizeof g_range.group, "%s", h->gname);
        g_range.dev = st.st_dev;
        g_range.ino = st.st_ino;
        g_range.size = st.st_size;
        g_range.mtime = st.st_mtim;
        g_range.lo = a;
        g_range.hi = b;
        g_range.valid = 1;
    }
    return PL_OK;
}

/* Validate and lay out one block of n entries (first entry e0): pass 1
 * counts per owner, pass 2 fills sbuf. */
static int coo_block(h5m_file *h, const h5m_owners *o, int mode, int64_t e0, int64_t n, const int64_t *rows,
                     const int64_t *cols, const double *vals, int size, int *scnt, int *sdsp, int *fill, h5m_item *sbuf)
{
    const int64_t N = h->info.rows, base = h->base;
    for (int64_t k = 0; k < n; k++) {
        const int64_t r = rows[k] - base, c = cols[k] - base;
        if (r < 0 || r >= N)
            return H5M_BAD(h, "dataset 'row' has index %lld out of range [%lld, %lld] at entry %lld (index base %lld)",
                           (long long)rows[k], (long long)base, (long long)(N - 1 + base), (long long)(e0 + k),
                           (long long)base);
        if (c < 0 || c >= N)
            return H5M_BAD(h, "dataset 'col' has index %lld out of range [%lld, %lld] at entry %lld (index base %lld)",
                           (long long)cols[k], (long long)base, (long long)(N - 1 + base), (long long)(e0 + k),
                           (long long)base);
        if (mode == 1 && !isfinite(vals[k]))
            return H5M_BAD(h, "dataset '%s' holds a value that is not finite (%s) at entry %lld (row %lld, column %lld)",
                           h->n_val, isnan(vals[k]) ? "NaN" : "Inf", (long long)(e0 + k), (long long)r, (long long)c);
        const int p = h5m_owner_of(o, r);
        if (p >= 0) scnt[p]++;
    }
    int64_t t = 0;
    for (int p = 0; p < size; p++) {
        sdsp[p] = fill[p] = (int)t;
        t += scnt[p];
    }
    for (int64_t k = 0; k < n; k++) {
        const int64_t r = rows[k] - base;
        const int p = h5m_owner_of(o, r);
        if (p >= 0) sbuf[fill[p]++] = mode == 1 ? (h5m_item){r, cols[k] - base, vals[k]} : (h5m_item){r, 1, 0.0};
    }
    return PL_OK;
}

int h5m_scan_coo(h5m_file *h, int64_t r0, int64_t r1, int mode, MPI_Comm comm, int64_t *len64, pl_csr *out,
                 int64_t *pos)
{
    int rank, size, rc = PL_OK, late = PL_OK;
    PL_CHECK(MPI_Comm_rank(comm, &rank) == MPI_SUCCESS, PL_ERR_MPI, "MPI_Comm_rank failed");
    PL_CHECK(MPI_Comm_size(comm, &size) == MPI_SUCCESS, PL_ERR_MPI, "MPI_Comm_size failed");
    h5m_owners o;
    PL_CALL(h5m_owners_build(r0, r1, h->info.rows, comm, &o));
    const int64_t nnz = h->info.nnz_stored, B = h5m_g_block;
    const int64_t s0 = (int64_t)((__int128)nnz * rank / size), s1 = (int64_t)((__int128)nnz * (rank + 1) / size);
    const int64_t nb = (s1 - s0 + B - 1) / B, cap = B < s1 - s0 ? B : s1 - s0;
    int64_t nrounds = 0, *rows = malloc(sizeof(int64_t) * (size_t)(cap + 1));
    int64_t *cols = malloc(sizeof(int64_t) * (size_t)(cap + 1));
    double *vals = malloc(sizeof(double) * (size_t)(cap + 1));
    h5m_item *sbuf = malloc(sizeof(h5m_item) * (size_t)(cap + 1)), *rbuf = NULL;
    int *scnt = calloc((size_t)size, sizeof(int)), *sdsp = calloc((size_t)size, sizeof(int));
    int *rcnt = calloc((size_t)size, sizeof(int)), *rdsp = calloc((size_t)size, sizeof(int));
    int *fill = calloc((size_t)size, sizeof(int));
    MPI_Datatype itype = MPI_DATATYPE_NULL;
    if (!rows || !cols || !vals || !sbuf || !scnt || !sdsp || !rcnt || !rdsp || !fill)
        rc = PL_ERROR(PL_ERR_MEM, "out of host memory for a COO block of %lld entries", (long long)cap);
    rc = h5m_agree(rc, comm);
    if (rc) goto out;
    if (MPI_Allreduce(&nb, &nrounds, 1, MPI_INT64_T, MPI_MAX, comm) != MPI_SUCCESS ||
        MPI_Type_contiguous((int)sizeof(h5m_item), MPI_BYTE, &itype) != MPI_SUCCESS ||
        MPI_Type_commit(&itype) != MPI_SUCCESS) {
        rc = PL_ERROR(PL_ERR_MPI, "MPI setup of the COO scan failed");
        goto out;
    }
    for (int64_t round = 0; round < nrounds; round++) {
        memset(scnt, 0, sizeof(int) * (size_t)size);
        if (round < nb) {
            const int64_t e0 = s0 + round * B, n = s1 - e0 < B ? s1 - e0 : B;
            rc = h5m_dset_read(h, h->d_rp, h->n_rp, H5T_NATIVE_INT64, e0, n, rows);
            if (!rc) rc = h5m_dset_read(h, h->d_ci, h->n_ci, H5T_NATIVE_INT64, e0, n, cols);
            if (!rc && mode == 1) rc = h5m_dset_read(h, h->d_val, h->n_val, H5T_NATIVE_DOUBLE, e0, n, vals);
            if (!rc) rc = coo_block(h, &o, mode, e0, n, rows, cols, vals, size, scnt, sdsp, fill, sbuf);
        }
        int64_t nrecv = 0;
        rc = h5m_route(rc, sbuf, scnt, sdsp, rcnt, rdsp, &rbuf, &nrecv, itype, comm);
        if (rc) goto out;
        for (int64_t k = 0; k < nrecv; k++) {
            const int64_t lr = rbuf[k].r - r0;
            if (mode == 0) {
                len64[lr] += rbuf[k].c;
                continue;
            }
            const int64_t p = pos[lr];
            if (p >= out->row_ptr[lr + 1]) {
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
    free(rows);
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
